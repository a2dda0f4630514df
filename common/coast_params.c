/* The `coast` section's parameters; see coast_params.h. */
#include "common/json.h"
#include "common/coast_params.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *key;
    double lo, hi, def;
    size_t off;
} s_key_t;

static const s_key_t s_keys[] = {
#define S_ROW(name, lo, hi, def, doc) {#name, lo, hi, def, offsetof(tb_coast_params_t, name)},
    TB_COAST_KEYS(S_ROW)
#undef S_ROW
};
#define S_NKEYS (sizeof s_keys / sizeof s_keys[0])

const char *const tb_coast_direction_names[TB_COAST_DIRECTIONS] = {"N", "NE", "E", "SE",
                                                                   "S", "SW", "W", "NW"};

static double *s_field(tb_coast_params_t *p, const s_key_t *k)
{
    return (double *)((char *)p + k->off);
}

void tb_coast_params_defaults(tb_coast_params_t *p)
{
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < S_NKEYS; i++)
        *s_field(p, &s_keys[i]) = s_keys[i].def;
    p->wave_from_deg = TB_COAST_SECTOR_DEF_FROM;
    p->wave_to_deg = TB_COAST_SECTOR_DEF_TO;
}

unsigned tb_coast_wave_mask(const tb_coast_params_t *p)
{
    unsigned mask = 0;
    for (int k = 0; k < TB_COAST_DIRECTIONS; k++)
        for (int n = -2; n <= 2; n++) {
            double b = 45.0 * k + 360.0 * n;
            if (b >= p->wave_from_deg && b <= p->wave_to_deg)
                mask |= 1u << k;
        }
    return mask;
}

static int s_bad(tb_err_t *err, const char *name, const char *key, const char *expected,
                 const cJSON *got)
{
    char *shown = tb_json_print(got, false);
    tb_err_set(err, TB_E_INVALID, "%s: coast.%s: expected %s, got %s", name, key, expected,
               shown ? shown : "?");
    free(shown);
    return -1;
}

static bool s_number_in(const cJSON *v, double lo, double hi)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= lo &&
           v->valuedouble <= hi;
}

int tb_coast_params_from_json(const cJSON *obj, const char *name, tb_coast_params_t *p,
                              tb_err_t *err)
{
    tb_coast_params_defaults(p);
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return tb_err_set(err, TB_E_INVALID, "%s: coast: expected an object of coast parameters",
                          name);
    for (const cJSON *item = obj->child; item; item = item->next) {
        const char *key = item->string ? item->string : "?";
        if (strcmp(key, TB_COAST_SECTOR_KEY) == 0) {
            char expected[128];
            snprintf(expected, sizeof expected, "[from, to] with %g <= from < to <= %g",
                     TB_COAST_SECTOR_LO, TB_COAST_SECTOR_HI);
            const cJSON *a = cJSON_GetArrayItem(item, 0), *b = cJSON_GetArrayItem(item, 1);
            if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 ||
                !s_number_in(a, TB_COAST_SECTOR_LO, TB_COAST_SECTOR_HI) ||
                !s_number_in(b, TB_COAST_SECTOR_LO, TB_COAST_SECTOR_HI) ||
                !(a->valuedouble < b->valuedouble))
                return s_bad(err, name, key, expected, item);
            p->wave_from_deg = a->valuedouble;
            p->wave_to_deg = b->valuedouble;
            continue;
        }
        const s_key_t *k = NULL;
        for (size_t i = 0; i < S_NKEYS && !k; i++)
            if (strcmp(s_keys[i].key, key) == 0)
                k = &s_keys[i];
        if (!k)
            return tb_err_set(err, TB_E_UNKNOWN_KEY,
                              "%s: coast.%s: unknown key (docs/coast.md lists the keys)", name,
                              key);
        char expected[96];
        snprintf(expected, sizeof expected, "a number in %g..%g", k->lo, k->hi);
        if (!s_number_in(item, k->lo, k->hi))
            return s_bad(err, name, k->key, expected, item);
        *s_field(p, k) = item->valuedouble;
    }
    if (tb_coast_params_check(p, 0, 0, err) != 0)
        return tb_err_prefix(err, "%s", name);
    return 0;
}

int tb_coast_params_check(const tb_coast_params_t *p, double cell_m, int64_t w, tb_err_t *err)
{
    for (size_t i = 0; i < S_NKEYS; i++) {
        double v = *s_field((tb_coast_params_t *)p, &s_keys[i]);
        if (!isfinite(v) || v < s_keys[i].lo || v > s_keys[i].hi)
            return tb_err_set(err, TB_E_INVALID, "coast.%s: %g is outside %g..%g", s_keys[i].key, v,
                              s_keys[i].lo, s_keys[i].hi);
    }
    if (!(p->wave_from_deg < p->wave_to_deg) || p->wave_from_deg < TB_COAST_SECTOR_LO ||
        p->wave_to_deg > TB_COAST_SECTOR_HI || tb_coast_wave_mask(p) == 0)
        return tb_err_set(err, TB_E_INVALID,
                          "coast.%s: [%g, %g] holds no compass point (N 0, NE 45, ... NW 315)",
                          TB_COAST_SECTOR_KEY, p->wave_from_deg, p->wave_to_deg);
    if (p->carry_m < p->surf_reach_m || p->carry_m < p->deposit_reach_m)
        return tb_err_set(err, TB_E_INVALID,
                          "coast.carry_m: %g m must cover coast.surf_reach_m (%g m) and "
                          "coast.deposit_reach_m (%g m): the surf and the deposition read the "
                          "exposure carried that far",
                          p->carry_m, p->surf_reach_m, p->deposit_reach_m);
    if (cell_m > 0) {
        /* the second drift reaches three times as far (jobs/coast/sediment.c) */
        double r = 3 * floor(p->drift_km * 1000.0 / cell_m + 0.5);
        double c = floor(p->carry_m / cell_m + 0.5);
        if (r > 2000 || c > 2000 || 2 * r + 1 > (double)w || 2 * c + 1 > (double)w)
            return tb_err_set(err, TB_E_INVALID,
                              "coast.drift_km %g and coast.carry_m %g are %g and %g cells of %g m: "
                              "the drift (three times drift_km at its second pass) and the carry "
                              "must each be at most 2000 cells and narrower than the planet's "
                              "%lld columns",
                              p->drift_km, p->carry_m, r, c, cell_m, (long long)w);
    }
    return 0;
}

cJSON *tb_coast_params_to_json(const tb_coast_params_t *p)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < S_NKEYS; i++)
        cJSON_AddNumberToObject(o, s_keys[i].key, *s_field((tb_coast_params_t *)p, &s_keys[i]));
    double sector[2] = {p->wave_from_deg, p->wave_to_deg};
    if (o)
        cJSON_AddItemToObject(o, TB_COAST_SECTOR_KEY, cJSON_CreateDoubleArray(sector, 2));
    return o;
}
