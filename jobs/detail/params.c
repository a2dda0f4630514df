/* The `tiles` section; see params.h. One table (its pass keys made from common/detail_keys.h's
 * list, which the manifest's key table shares) drives defaults, parsing, range checks, printing and
 * the key listing, so a key cannot be documented and not read (or read and not documented). */
#include "jobs/detail/params.h"

#include <cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef enum { K_DOUBLE, K_INT } s_kind_t; /* K_##kind of TB_DETAIL_PASS_KEYS */

typedef struct {
    const char *group; /* sub-object, or NULL for a key of the section itself */
    const char *key;
    s_kind_t kind;
    size_t off;
    double lo, hi, def;
    const char *meaning;
} s_key_t;

#define OFF(f) offsetof(tb_detail_params_t, f)

static const s_key_t s_keys[] = {
    {NULL, "size_km", K_DOUBLE, OFF(size_km), 0.1, 1000, 5,
     "Detail tile edge; the circumference must be a whole number of tiles."},
    {NULL, "cell_m", K_DOUBLE, OFF(cell_m), 0.1, 1000, 2, "Detail cell edge."},
    {NULL, "margin_cells", K_INT, OFF(margin_cells), 0, 100000, TB_DETAIL_MEASURED_MARGIN_CELLS,
     "Cells computed round each tile and thrown away; the default is the measured one."},
#define S_ROW(group, key, kind, field, lo, hi, def, margin, doc)                                   \
    {#group, #key, K_##kind, OFF(field), lo, hi, def, doc},
    TB_DETAIL_PASS_KEYS(S_ROW)
#undef S_ROW
};

#define S_NKEYS ((int)(sizeof s_keys / sizeof s_keys[0]))

static double *s_d(tb_detail_params_t *p, const s_key_t *k)
{
    return (double *)((char *)p + k->off);
}
static int *s_i(tb_detail_params_t *p, const s_key_t *k)
{
    return (int *)((char *)p + k->off);
}

void tb_detail_params_defaults(tb_detail_params_t *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < S_NKEYS; i++) {
        if (s_keys[i].kind == K_DOUBLE)
            *s_d(p, &s_keys[i]) = s_keys[i].def;
        else
            *s_i(p, &s_keys[i]) = (int)s_keys[i].def;
    }
}

static void s_path(const s_key_t *k, char *out, size_t n)
{
    if (k->group)
        snprintf(out, n, "tiles.%s.%s", k->group, k->key);
    else
        snprintf(out, n, "tiles.%s", k->key);
}

static const s_key_t *s_find(const char *group, const char *key)
{
    for (int i = 0; i < S_NKEYS; i++) {
        bool same_group = (group == NULL) == (s_keys[i].group == NULL) &&
                          (!group || strcmp(group, s_keys[i].group) == 0);
        if (same_group && strcmp(key, s_keys[i].key) == 0)
            return &s_keys[i];
    }
    return NULL;
}

static bool s_is_group(const char *name)
{
    for (int i = 0; i < S_NKEYS; i++)
        if (s_keys[i].group && strcmp(s_keys[i].group, name) == 0)
            return true;
    return false;
}

static int s_read(const s_key_t *k, const cJSON *v, const char *where, tb_detail_params_t *p,
                  tb_err_t *err)
{
    char path[96];
    s_path(k, path, sizeof path);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    bool ok = isfinite(x) && x >= k->lo && x <= k->hi && (k->kind == K_DOUBLE || x == floor(x));
    if (!ok)
        return tb_err_set(err, TB_E_INVALID, "%s: %s: expected %s in %g..%g", where, path,
                          k->kind == K_INT ? "an integer" : "a number", k->lo, k->hi);
    if (k->kind == K_DOUBLE)
        *s_d(p, k) = x;
    else
        *s_i(p, k) = (int)x;
    return 0;
}

int tb_detail_params_parse(const cJSON *section, const char *where, tb_detail_params_t *p,
                           tb_err_t *err)
{
    tb_detail_params_defaults(p);
    where = where ? where : "manifest";
    if (!section)
        return 0;
    if (!cJSON_IsObject(section))
        return tb_err_set(err, TB_E_INVALID, "%s: tiles: expected an object", where);
    for (const cJSON *it = section->child; it; it = it->next) {
        const char *name = it->string ? it->string : "";
        if (s_is_group(name)) {
            if (!cJSON_IsObject(it))
                return tb_err_set(err, TB_E_INVALID, "%s: tiles.%s: expected an object", where,
                                  name);
            for (const cJSON *jt = it->child; jt; jt = jt->next) {
                const s_key_t *k = s_find(name, jt->string ? jt->string : "");
                if (!k)
                    return tb_err_set(err, TB_E_UNKNOWN_KEY, "%s: tiles.%s.%s: unknown key", where,
                                      name, jt->string ? jt->string : "");
                if (s_read(k, jt, where, p, err) != 0)
                    return -1;
            }
            continue;
        }
        const s_key_t *k = s_find(NULL, name);
        if (!k)
            return tb_err_set(err, TB_E_UNKNOWN_KEY, "%s: tiles.%s: unknown key", where, name);
        if (s_read(k, it, where, p, err) != 0)
            return -1;
    }
    return tb_detail_params_check(p, where, err);
}

int tb_detail_params_check(const tb_detail_params_t *p, const char *where, tb_err_t *err)
{
    return tb_detail_keys_check(p->size_km, p->cell_m, p->droplet_spawn_block, p->splat_scree_deg,
                                p->splat_rock_deg, where, err);
}

cJSON *tb_detail_params_to_json(const tb_detail_params_t *p)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    tb_detail_params_t *q = (tb_detail_params_t *)p; /* read only, through the shared accessors */
    for (int i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        cJSON *parent = root;
        if (k->group) {
            parent = cJSON_GetObjectItemCaseSensitive(root, k->group);
            if (!parent)
                parent = cJSON_AddObjectToObject(root, k->group);
        }
        double v = k->kind == K_DOUBLE ? *s_d(q, k) : (double)*s_i(q, k);
        if (!parent || !cJSON_AddNumberToObject(parent, k->key, v)) {
            cJSON_Delete(root);
            return NULL;
        }
    }
    return root;
}

int64_t tb_detail_margin_bound(const tb_detail_params_t *p)
{
    return tb_detail_margin_bound_of(p->droplet_rounds, p->droplet_lifetime, p->droplet_carry_steps,
                                     p->droplet_brush_radius, p->droplet_settle_cells,
                                     p->thermal_iterations);
}

double tb_detail_tile_seconds(const tb_detail_params_t *p)
{
    /* ns a window cell per pass at the defaults (bench_tile --coast, one thread, load 12): resample
     * 15, relief 34 at 4 octaves, droplets 252 at the defaults' 3 rounds x (20 + 12 carried) steps
     * / 25 cells with a brush of 3 (276 at 4 rounds with a brush of 2, measured there; the new
     * defaults' droplets cost 0.913 of those, three quiet pairs of bench_tile: the brush is not in
     * this model), thermal 60 at 6 iterations, the shore 75 (coast tiles), outputs 42 (over the
     * interior, counted per window cell here) */
    double steps = (double)p->droplet_rounds * (p->droplet_lifetime + p->droplet_carry_steps) /
                   ((double)p->droplet_spawn_block * p->droplet_spawn_block);
    double ns = 15.0 + 34.0 * p->relief_octaves / 4.0 + 252.0 * steps / (3.0 * 32.0 / 25.0) +
                60.0 * p->thermal_iterations / 6.0 + 75.0 + 42.0;
    double side = p->size_km * 1000.0 / p->cell_m + 2.0 * p->margin_cells;
    return ns * 1e-9 * side * side;
}

int tb_detail_params_key_count(void)
{
    return S_NKEYS;
}

void tb_detail_params_key(int i, const char **group, const char **key, double *def,
                          const char **meaning)
{
    bool ok = i >= 0 && i < S_NKEYS;
    *group = ok ? s_keys[i].group : NULL;
    *key = ok ? s_keys[i].key : NULL;
    *def = ok ? s_keys[i].def : 0;
    *meaning = ok ? s_keys[i].meaning : NULL;
}
