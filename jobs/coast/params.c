/* The `coast` manifest section: defaults, a strict parser of its JSON object, the checks across
 * keys, and its canonical JSON (docs/coast.md, "Parameters"; docs/manifest.md). Adding a key is one
 * row in s_keys and a field in tb_coast_params_t. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/coast.h"

#define S_ALL_DIRECTIONS ((1u << TB_COAST_DIRECTIONS) - 1)

typedef struct {
    tb_coast_key_t key;
    size_t off; /* offset of the double in tb_coast_params_t; wave_from is special */
} s_key_t;

#define OFF(f) offsetof(tb_coast_params_t, f)

static const s_key_t s_keys[] = {
    {{"shelf_km", "number", 0.01, 1000, 3.0,
      "Width of the continental shelf, from the waterline to the shelf break."},
     OFF(shelf_km)},
    {{"slope_km", "number", 0.01, 1000, 1.6,
      "Width of the continental slope, from the break down to each ocean class's painted depth."},
     OFF(slope_km)},
    {{"break_depth_m", "number", 1, 11000, 130, "Depth of the shelf break."}, OFF(break_depth_m)},
    {{"surf_reach_m", "number", 1, 10000, 110,
      "How far inland the surf planes a platform on a fully exposed coast (exposure scales it)."},
     OFF(surf_reach_m)},
    {{"cut_fraction", "number", 0, 1, 0.9,
      "Share of the land above the platform the surf removes inside its reach."},
     OFF(cut_fraction)},
    {{"platform_m", "number", -50, 50, 0.5,
      "Height of the planed shore platform at the waterline."},
     OFF(platform_m)},
    {{"platform_slope", "number", 0, 1, 0.01, "Rise of the platform inland, metres per metre."},
     OFF(platform_slope)},
    {{"ref_fetch_km", "number", 0.01, 100000, 5,
      "Fetch of open water that reads as fully exposed (exposure = fetch / this, at most 1)."},
     OFF(ref_fetch_km)},
    {{"shoal_depth_m", "number", 0, 11000, 5,
      "Offshore water shallower than this blocks the fetch, like land."},
     OFF(shoal_depth_m)},
    {{"wave_from", "array of compass points", 0, 0, 0,
      "Directions the waves come from, among N NE E SE S SW W NW; default all eight."},
     0},
    {{"carry_m", "number", 1, 1000, 300,
      "Radius over which the exposure of the waterline is carried to the cells near it; covers "
      "surf_reach_m and deposit_reach_m. The exposure map ends there."},
     OFF(carry_m)},
    {{"drift_km", "number", 0.01, 1000, 0.5,
      "Radius of the alongshore drift kernel that spreads cut and river sediment."},
     OFF(drift_km)},
    {{"deposit_reach_m", "number", 1, 10000, 300,
      "How far out from the waterline sediment may be laid."},
     OFF(deposit_reach_m)},
    {{"berm_m", "number", 0, 50, 1.5, "Height of the beach profile at the waterline."},
     OFF(berm_m)},
    {{"beach_slope", "number", 0, 1, 0.02,
      "Fall of the beach profile seaward, metres per metre; sediment fills up to the profile."},
     OFF(beach_slope)},
    {{"shelter_floor", "number", 0, 1, 0.15,
      "Least deposition weight of an exposed shallow (a sheltered one weighs 1 - exposure)."},
     OFF(shelter_floor)},
    {{"river_share", "number", 0, 1, 0.002,
      "Share of the volume a basin's solve eroded that its river mouth delivers to the coast."},
     OFF(river_share)},
};
#define S_NKEYS (sizeof s_keys / sizeof s_keys[0])

size_t tb_coast_key_count(void)
{
    return S_NKEYS;
}

const tb_coast_key_t *tb_coast_key_at(size_t i)
{
    return i < S_NKEYS ? &s_keys[i].key : NULL;
}

static bool s_is_wave_from(const s_key_t *k)
{
    return strcmp(k->key.key, "wave_from") == 0;
}

void tb_coast_params_defaults(tb_coast_params_t *p)
{
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < S_NKEYS; i++)
        if (!s_is_wave_from(&s_keys[i]))
            *(double *)((char *)p + s_keys[i].off) = s_keys[i].key.def;
    p->wave_from = S_ALL_DIRECTIONS;
}

static int s_bad(tb_err_t *err, const char *name, const char *key, const char *expected,
                 const cJSON *got)
{
    char *shown = cJSON_PrintUnformatted(got);
    tb_err_set(err, TB_E_INVALID, "%s: coast.%s: expected %s, got %s", name, key, expected,
               shown ? shown : "?");
    free(shown);
    return -1;
}

static int s_parse_wave_from(const cJSON *item, const char *name, unsigned *mask, tb_err_t *err)
{
    const char *expected = "a non-empty array of distinct compass points among "
                           "\"N\" \"NE\" \"E\" \"SE\" \"S\" \"SW\" \"W\" \"NW\"";
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) == 0)
        return s_bad(err, name, "wave_from", expected, item);
    unsigned m = 0;
    for (const cJSON *e = item->child; e; e = e->next) {
        int found = -1;
        for (int d = 0; cJSON_IsString(e) && d < TB_COAST_DIRECTIONS; d++)
            if (strcmp(e->valuestring, tb_coast_direction_names[d]) == 0)
                found = d;
        if (found < 0 || (m & (1u << found)))
            return s_bad(err, name, "wave_from", expected, item);
        m |= 1u << found;
    }
    *mask = m;
    return 0;
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
        const s_key_t *k = NULL;
        for (size_t i = 0; item->string && i < S_NKEYS; i++)
            if (strcmp(s_keys[i].key.key, item->string) == 0)
                k = &s_keys[i];
        if (!k)
            return tb_err_set(err, TB_E_UNKNOWN_KEY,
                              "%s: coast.%s: unknown key (docs/coast.md "
                              "lists the keys)",
                              name, item->string ? item->string : "?");
        if (s_is_wave_from(k)) {
            if (s_parse_wave_from(item, name, &p->wave_from, err) != 0)
                return -1;
            continue;
        }
        char expected[96];
        snprintf(expected, sizeof expected, "a number in %g..%g", k->key.lo, k->key.hi);
        if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) ||
            item->valuedouble < k->key.lo || item->valuedouble > k->key.hi)
            return s_bad(err, name, k->key.key, expected, item);
        *(double *)((char *)p + k->off) = item->valuedouble;
    }
    if (tb_coast_params_check(p, 0, 0, err) != 0)
        return tb_err_prefix(err, "%s", name);
    return 0;
}

int tb_coast_params_check(const tb_coast_params_t *p, double cell_m, int64_t w, tb_err_t *err)
{
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        if (s_is_wave_from(k))
            continue;
        double v = *(const double *)((const char *)p + k->off);
        if (!isfinite(v) || v < k->key.lo || v > k->key.hi)
            return tb_err_set(err, TB_E_INVALID, "coast.%s: %g is outside %g..%g", k->key.key, v,
                              k->key.lo, k->key.hi);
    }
    if (p->wave_from == 0 || (p->wave_from & ~S_ALL_DIRECTIONS))
        return tb_err_set(err, TB_E_INVALID, "coast.wave_from: no wave direction is set");
    if (p->carry_m < p->surf_reach_m || p->carry_m < p->deposit_reach_m)
        return tb_err_set(err, TB_E_INVALID,
                          "coast.carry_m: %g m must cover coast.surf_reach_m "
                          "(%g m) and coast.deposit_reach_m (%g m): the surf and the deposition "
                          "read the exposure carried that far",
                          p->carry_m, p->surf_reach_m, p->deposit_reach_m);
    if (cell_m > 0) {
        /* the second drift reaches three times as far (jobs/coast/sediment.c) */
        double r = 3 * floor(p->drift_km * 1000.0 / cell_m + 0.5);
        double c = floor(p->carry_m / cell_m + 0.5);
        if (r > 2000 || 2 * r + 1 > (double)w || 2 * c + 1 > (double)w)
            return tb_err_set(err, TB_E_INVALID,
                              "coast.drift_km %g and coast.carry_m %g are %g "
                              "and %g cells of %g m: the drift (three times "
                              "drift_km at its second pass) must be at most 2000 cells and each "
                              "kernel narrower than the planet's %lld columns",
                              p->drift_km, p->carry_m, r, c, cell_m, (long long)w);
    }
    return 0;
}

cJSON *tb_coast_params_to_json(const tb_coast_params_t *p)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        if (s_is_wave_from(k)) {
            cJSON *a = cJSON_AddArrayToObject(o, "wave_from");
            for (int d = 0; a && d < TB_COAST_DIRECTIONS; d++)
                if (p->wave_from & (1u << d))
                    cJSON_AddItemToArray(a, cJSON_CreateString(tb_coast_direction_names[d]));
            continue;
        }
        cJSON_AddNumberToObject(o, k->key.key, *(const double *)((const char *)p + k->off));
    }
    return o;
}
