/* The planet manifest and legend: a schema table, a strict JSON walker over it, cross-key checks and
 * serialisation; see manifest.h. Adding a key is one row in s_keys and a field in the struct. */
#include "common/manifest.h"

#include <cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/noise.h"

typedef enum { K_INT, K_DOUBLE, K_SEED, K_PATH, K_RANGE } s_kind_t;

typedef struct {
    const char *path;   /* dotted key path */
    s_kind_t kind;
    size_t off, off2;   /* field offsets; off2 is the upper value of a K_RANGE */
    double lo, hi;      /* allowed range, inclusive */
    double def, def2;   /* defaults */
    const char *doc;
} s_key_t;

#define OFF(f) offsetof(tb_manifest_t, f)
#define SEED_MAX 9007199254740992.0 /* 2^53: a JSON number holds integers exactly up to here */

static const s_key_t s_keys[] = {
    {"seed", K_SEED, OFF(seed), 0, 0, SEED_MAX, 7, 0,
     "Seed of every hash: massifs, rock, faults, router jitter."},
    {"circumference_km", K_DOUBLE, OFF(circumference_km), 0, 0.1, 1e5, 25, 0,
     "Length of the equator; X wraps after it. Must be a whole number of cells and of tiles."},
    {"cell_m", K_DOUBLE, OFF(cell_m), 0, 0.5, 1000, 8, 0,
     "Geology cell edge. The solve always runs at this size; never coarsen it to save time."},
    {"template.painting", K_PATH, OFF(painting_path), 0, 0, 0, 0, 0,
     "Painted class image (PNG), relative to the manifest. Its width must divide the planet's cells."},
    {"template.legend", K_PATH, OFF(legend_path), 0, 0, 0, 0, 0,
     "Legend JSON saying what each colour means, relative to the manifest."},
    {"elevation_m", K_RANGE, OFF(elevation_min_m), OFF(elevation_max_m), -11000, 9000, -512, 1536,
     "[min, max] metres mapped to 0 and 65535 in planet_height.png; heights outside are clipped."},
    {"regions.ocean_margin_km", K_DOUBLE, OFF(regions.ocean_margin_km), 0, 0.016, 100, 0.4, 0,
     "Ocean kept round each region's land; landmasses closer than this share a region."},
    {"regions.min_landmass_km2", K_DOUBLE, OFF(regions.min_landmass_km2), 0, 0, 1e6, 0.05, 0,
     "Landmasses smaller than this are dropped to the surrounding ocean, and counted."},
    {"solve.steps", K_INT, OFF(solve.steps), 0, 1, 1e6, 1000, 0, "Number of solve steps."},
    {"solve.dt_yr", K_DOUBLE, OFF(solve.dt_yr), 0, 1, 1e7, 1000, 0, "Years per step."},
    {"solve.k", K_DOUBLE, OFF(solve.k), 0, 1e-12, 1, 5e-5, 0,
     "Stream-power erodibility K (per class multiplied by k_mult and the rock field)."},
    {"solve.m", K_DOUBLE, OFF(solve.m), 0, 0.05, 2, 0.5, 0, "Stream-power exponent on drainage area."},
    {"solve.n", K_DOUBLE, OFF(solve.n), 0, 0.5, 4, 1, 0,
     "Stream-power exponent on slope; n other than 1 is solved by Newton iterations."},
    {"solve.diffusion_m2_yr", K_DOUBLE, OFF(solve.diffusion_m2_yr), 0, 0, 10, 0.02, 0,
     "Nonlinear hillslope diffusivity D; 0 turns hillslope diffusion off."},
    {"solve.talus_deg", K_DOUBLE, OFF(solve.talus_deg), 0, 1, 89, 35, 0,
     "Angle of repose: the critical slope of the diffusion and the repose clamp."},
    {"solve.max_hillslope_substeps", K_INT, OFF(solve.max_hillslope_substeps), 0, 1, 1024, 24, 0,
     "Cap on explicit hillslope sub-steps in one step."},
    {"solve.mfd_exponent", K_DOUBLE, OFF(solve.mfd_exponent), 0, 0, 100, 1, 0,
     "Multiple-flow-direction partition exponent for drainage area; 0 means D8."},
    {"massif.wavelength_km", K_DOUBLE, OFF(massif.wavelength_km), 0, 0.05, 1e5, 2.5, 0,
     "Wavelength of the planet-wide massif fabric, cut per class at a planet quantile; snapped to "
     "divide the circumference. Keep it well under a landmass."},
    {"rock.wavelength_km", K_DOUBLE, OFF(rock.wavelength_km), 0, 0.05, 1e5, 3, 0,
     "Wavelength of the lithology field; snapped to divide the circumference."},
    {"rock.k_range", K_RANGE, OFF(rock.k_min_mult), OFF(rock.k_max_mult), 0.01, 100, 0.6, 1.6,
     "[hardest, softest] erodibility multiplier of the rock field's four rock types."},
    {"rock.softness", K_DOUBLE, OFF(rock.softness), 0, 0, 0.5, 0.15, 0,
     "Rank-space width over which one rock grades into the next, pointwise (0 is a hard boundary; "
     "capped at one band, 0.25)."},
    {"faults.per_1000_km2", K_DOUBLE, OFF(faults.per_1000_km2), 0, 0, 1e4, 40, 0,
     "Fault traces per 1000 km2 of planet surface, seeded over land and sea alike (only land takes "
     "the throw); 0 turns faults off."},
    {"faults.length_km", K_RANGE, OFF(faults.length_min_km), OFF(faults.length_max_km), 0.1, 1e4, 2,
     12, "[shortest, longest] trace length; traces past 12 km break into en-echelon segments."},
    {"faults.uplift_mm_yr", K_DOUBLE, OFF(faults.uplift_mm_yr), 0, -100, 100, 0.05, 0,
     "Peak uplift rate added on land along a trace, tapered over the last sixth at each tip; U is "
     "never below 0."},
    {"faults.width_km", K_DOUBLE, OFF(faults.width_km), 0, 0.05, 1e3, 1.0, 0,
     "Across-fault half-width: the envelope (1 - (d/w)^2)^2 reaches zero with zero gradient at this "
     "distance from the trace."},
    {"faults.grain_wavelength_km", K_DOUBLE, OFF(faults.grain_wavelength_km), 0, 0.1, 1e5, 12.5, 0,
     "Wavelength of the grain field that sets fault strike; snapped to divide the circumference."},
    {"tiles.size_km", K_DOUBLE, OFF(tiles.size_km), 0, 0.1, 1e3, 5, 0,
     "Detail tile edge; must divide the circumference."},
    {"tiles.cell_m", K_DOUBLE, OFF(tiles.cell_m), 0, 0.1, 1e3, 2, 0, "Detail cell edge."},
};
#define S_NKEYS (sizeof s_keys / sizeof s_keys[0])

/* Objects that may appear in a manifest; anything else that is not a key is unknown. */
static const char *s_sections[] = {"template", "regions", "solve", "massif", "rock", "faults",
                                   "tiles"};

static const s_key_t *s_find_key(const char *path)
{
    for (size_t i = 0; i < S_NKEYS; i++)
        if (strcmp(s_keys[i].path, path) == 0)
            return &s_keys[i];
    return NULL;
}

static bool s_is_section(const char *path)
{
    for (size_t i = 0; i < sizeof s_sections / sizeof s_sections[0]; i++)
        if (strcmp(s_sections[i], path) == 0)
            return true;
    return false;
}

void tb_manifest_defaults(tb_manifest_t *m)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        char *base = (char *)m;
        switch (k->kind) {
        case K_INT: *(int *)(base + k->off) = (int)k->def; break;
        case K_DOUBLE: *(double *)(base + k->off) = k->def; break;
        case K_SEED: *(uint64_t *)(base + k->off) = (uint64_t)k->def; break;
        case K_PATH: ((char *)(base + k->off))[0] = '\0'; break;
        case K_RANGE:
            *(double *)(base + k->off) = k->def;
            *(double *)(base + k->off2) = k->def2;
            break;
        }
    }
    m->legend.tolerance = 24;
    m->legend.max_unmatched_fraction = 0.001;
    snprintf(m->base_dir, sizeof m->base_dir, ".");
}

static int s_bad(tb_err_t *err, const char *name, const char *path, const char *expected,
                 const cJSON *got)
{
    char *shown = cJSON_PrintUnformatted(got);
    tb_err_set(err, TB_E_INVALID, "%s: %s: expected %s, got %s", name, path, expected,
               shown ? shown : "?");
    free(shown);
    return -1;
}

static bool s_is_integer(double v) { return isfinite(v) && v == floor(v); }

static int s_set_key(const s_key_t *k, const cJSON *item, const char *name, const char *base_dir,
                     tb_manifest_t *m, tb_err_t *err)
{
    char expected[256];
    char *base = (char *)m;
    switch (k->kind) {
    case K_INT:
    case K_SEED:
        snprintf(expected, sizeof expected, "an integer in %.17g..%.17g", k->lo, k->hi);
        if (!cJSON_IsNumber(item) || !s_is_integer(item->valuedouble) ||
            item->valuedouble < k->lo || item->valuedouble > k->hi)
            return s_bad(err, name, k->path, expected, item);
        if (k->kind == K_INT)
            *(int *)(base + k->off) = (int)item->valuedouble;
        else
            *(uint64_t *)(base + k->off) = (uint64_t)item->valuedouble;
        return 0;
    case K_DOUBLE:
        snprintf(expected, sizeof expected, "a number in %g..%g", k->lo, k->hi);
        if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < k->lo ||
            item->valuedouble > k->hi)
            return s_bad(err, name, k->path, expected, item);
        *(double *)(base + k->off) = item->valuedouble;
        return 0;
    case K_PATH:
        if (!cJSON_IsString(item) || !item->valuestring[0])
            return s_bad(err, name, k->path, "a non-empty file path string", item);
        if (item->valuestring[0] == '/')
            snprintf(base + k->off, TB_PATH_MAX, "%s", item->valuestring);
        else if (snprintf(base + k->off, TB_PATH_MAX, "%s/%s", base_dir, item->valuestring) >=
                 TB_PATH_MAX)
            return tb_err_set(err, TB_E_INVALID, "%s: %s: path too long", name, k->path);
        return 0;
    case K_RANGE: {
        snprintf(expected, sizeof expected, "[low, high] with %g <= low < high <= %g", k->lo, k->hi);
        if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2)
            return s_bad(err, name, k->path, expected, item);
        const cJSON *a = cJSON_GetArrayItem(item, 0), *b = cJSON_GetArrayItem(item, 1);
        if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b) || !isfinite(a->valuedouble) ||
            !isfinite(b->valuedouble) || a->valuedouble < k->lo || b->valuedouble > k->hi ||
            !(a->valuedouble < b->valuedouble))
            return s_bad(err, name, k->path, expected, item);
        *(double *)(base + k->off) = a->valuedouble;
        *(double *)(base + k->off2) = b->valuedouble;
        return 0;
    }
    }
    return tb_err_set(err, TB_E_INTERNAL, "%s: %s: unhandled key kind", name, k->path);
}

static int s_walk(const cJSON *obj, const char *prefix, const char *name, const char *base_dir,
                  tb_manifest_t *m, tb_err_t *err)
{
    for (const cJSON *item = obj->child; item; item = item->next) {
        char path[256];
        if (!item->string)
            return tb_err_set(err, TB_E_FORMAT, "%s: %s: object member without a name", name,
                              prefix[0] ? prefix : "(top level)");
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", item->string);
        for (const cJSON *dup = obj->child; dup != item; dup = dup->next)
            if (dup->string && strcmp(dup->string, item->string) == 0)
                return tb_err_set(err, TB_E_INVALID, "%s: %s: key given twice", name, path);
        const s_key_t *k = s_find_key(path);
        if (k) {
            if (s_set_key(k, item, name, base_dir, m, err) != 0)
                return -1;
        } else if (s_is_section(path)) {
            if (!cJSON_IsObject(item))
                return s_bad(err, name, path, "an object", item);
            if (s_walk(item, path, name, base_dir, m, err) != 0)
                return -1;
        } else {
            return tb_err_set(err, TB_E_UNKNOWN_KEY,
                              "%s: %s: unknown key (nothing reads it; see docs/manifest.md)", name,
                              path);
        }
    }
    return 0;
}

static int s_parse_json(const char *json, const char *name, cJSON **out, tb_err_t *err)
{
    const char *end = NULL;
    *out = cJSON_ParseWithOpts(json, &end, 1);
    if (!*out) {
        size_t off = end ? (size_t)(end - json) : 0;
        int line = 1;
        for (size_t i = 0; i < off && json[i]; i++)
            line += json[i] == '\n';
        return tb_err_set(err, TB_E_FORMAT, "%s: not valid JSON near line %d (byte %zu)", name, line,
                          off);
    }
    if (!cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        return tb_err_set(err, TB_E_FORMAT, "%s: expected a JSON object at the top level", name);
    }
    return 0;
}

int tb_manifest_parse(const char *json, const char *name, const char *base_dir, tb_manifest_t *m,
                      tb_err_t *err)
{
    tb_manifest_defaults(m);
    snprintf(m->source, sizeof m->source, "%s", name);
    snprintf(m->base_dir, sizeof m->base_dir, "%s", base_dir);
    cJSON *root;
    if (s_parse_json(json, name, &root, err) != 0)
        return -1;
    int rc = s_walk(root, "", name, base_dir, m, err);
    cJSON_Delete(root);
    if (rc != 0)
        return -1;
    if (!m->painting_path[0])
        return tb_err_set(err, TB_E_INVALID,
                          "%s: template.painting: missing; a manifest names its painted image", name);
    if (!m->legend_path[0])
        return tb_err_set(err, TB_E_INVALID,
                          "%s: template.legend: missing; a manifest names its legend", name);
    return 0;
}

/* ---- legend ---- */

static int s_parse_colour(const cJSON *c, uint8_t rgb[3])
{
    if (cJSON_IsString(c)) {
        const char *s = c->valuestring;
        if (s[0] == '#')
            s++;
        if (strlen(s) != 6)
            return -1;
        for (int i = 0; i < 6; i++) {
            char ch = s[i];
            if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')))
                return -1;
        }
        unsigned v = (unsigned)strtoul(s, NULL, 16);
        rgb[0] = (uint8_t)(v >> 16);
        rgb[1] = (uint8_t)(v >> 8);
        rgb[2] = (uint8_t)v;
        return 0;
    }
    if (cJSON_IsArray(c) && cJSON_GetArraySize(c) == 3) {
        for (int i = 0; i < 3; i++) {
            const cJSON *v = cJSON_GetArrayItem(c, i);
            if (!cJSON_IsNumber(v) || !s_is_integer(v->valuedouble) || v->valuedouble < 0 ||
                v->valuedouble > 255)
                return -1;
            rgb[i] = (uint8_t)v->valuedouble;
        }
        return 0;
    }
    return -1;
}

static int s_class_number(const cJSON *cls, const char *key, const char *name, const char *where,
                          double lo, double hi, double *out, bool *present, tb_err_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cls, key);
    *present = v != NULL;
    if (!v)
        return 0;
    char path[256], expected[128];
    snprintf(path, sizeof path, "%s.%s", where, key);
    snprintf(expected, sizeof expected, "a number in %g..%g", lo, hi);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return s_bad(err, name, path, expected, v);
    *out = v->valuedouble;
    return 0;
}

static int s_parse_class(const cJSON *cls, int index, const char *name, tb_class_t *c,
                         tb_err_t *err)
{
    char where[128];
    snprintf(where, sizeof where, "classes[%d]", index);
    if (!cJSON_IsObject(cls))
        return s_bad(err, name, where, "an object", cls);
    static const char *allowed[] = {"name", "colour", "color", "kind", "uplift_mm_yr", "k_mult",
                                    "massif", "depth_m"};
    for (const cJSON *it = cls->child; it; it = it->next) {
        bool ok = false;
        for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
            ok |= strcmp(it->string, allowed[i]) == 0;
        if (!ok)
            return tb_err_set(err, TB_E_UNKNOWN_KEY, "%s: %s.%s: unknown key", name, where,
                              it->string);
    }
    memset(c, 0, sizeof *c);
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(cls, "name");
    if (!cJSON_IsString(nm) || !nm->valuestring[0] || strlen(nm->valuestring) >= TB_NAME_MAX)
        return s_bad(err, name, where, "a \"name\" string of 1..63 characters", nm ? nm : cls);
    snprintf(c->name, sizeof c->name, "%s", nm->valuestring);
    snprintf(where, sizeof where, "classes[%d] (%s)", index, c->name);
    const cJSON *col = cJSON_GetObjectItemCaseSensitive(cls, "colour");
    if (!col)
        col = cJSON_GetObjectItemCaseSensitive(cls, "color");
    if (!col || s_parse_colour(col, c->rgb) != 0) {
        char path[256];
        snprintf(path, sizeof path, "%s.colour", where);
        return s_bad(err, name, path, "\"#rrggbb\" or [r, g, b] with 0..255", col ? col : cls);
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(cls, "kind");
    if (cJSON_IsString(kind) && strcmp(kind->valuestring, "land") == 0)
        c->kind = TB_CLASS_LAND;
    else if (cJSON_IsString(kind) && strcmp(kind->valuestring, "ocean") == 0)
        c->kind = TB_CLASS_OCEAN;
    else {
        char path[256];
        snprintf(path, sizeof path, "%s.kind", where);
        return s_bad(err, name, path, "\"land\" or \"ocean\"", kind ? kind : cls);
    }
    bool has_uplift, has_k, has_depth;
    c->k_mult = 1;
    if (s_class_number(cls, "uplift_mm_yr", name, where, 0, 100, &c->uplift_mm_yr, &has_uplift, err) ||
        s_class_number(cls, "k_mult", name, where, 1e-3, 1e3, &c->k_mult, &has_k, err) ||
        s_class_number(cls, "depth_m", name, where, 0, 11000, &c->depth_m, &has_depth, err))
        return -1;
    const cJSON *massif = cJSON_GetObjectItemCaseSensitive(cls, "massif");
    if (c->kind == TB_CLASS_OCEAN) {
        if (has_uplift || has_k || massif)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: %s: an ocean class takes depth_m only, not uplift_mm_yr, k_mult "
                              "or massif",
                              name, where);
        if (!has_depth)
            return tb_err_set(err, TB_E_INVALID, "%s: %s.depth_m: missing; an ocean class needs "
                              "its depth below sea level in metres", name, where);
        return 0;
    }
    if (has_depth)
        return tb_err_set(err, TB_E_INVALID, "%s: %s.depth_m: a land class has no depth", name,
                          where);
    if (!has_uplift)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %s.uplift_mm_yr: missing; a land class needs its uplift rate", name,
                          where);
    c->massif_floor_mm_yr = c->uplift_mm_yr;
    c->massif_fraction = 1;
    if (massif) {
        char mwhere[160];
        snprintf(mwhere, sizeof mwhere, "%s.massif", where);
        if (!cJSON_IsObject(massif))
            return s_bad(err, name, mwhere, "an object {floor_mm_yr, fraction}", massif);
        for (const cJSON *it = massif->child; it; it = it->next)
            if (strcmp(it->string, "floor_mm_yr") != 0 && strcmp(it->string, "fraction") != 0)
                return tb_err_set(err, TB_E_UNKNOWN_KEY, "%s: %s.%s: unknown key", name, mwhere,
                                  it->string);
        bool has_floor, has_frac;
        if (s_class_number(massif, "floor_mm_yr", name, mwhere, 0, 100, &c->massif_floor_mm_yr,
                           &has_floor, err) ||
            s_class_number(massif, "fraction", name, mwhere, 0, 1, &c->massif_fraction, &has_frac,
                           err))
            return -1;
        if (!has_floor || !has_frac)
            return tb_err_set(err, TB_E_INVALID, "%s: %s: needs both floor_mm_yr and fraction",
                              name, mwhere);
        if (c->massif_floor_mm_yr > c->uplift_mm_yr)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: %s.floor_mm_yr: %g is above the class's uplift_mm_yr %g; the "
                              "floor is the rate between the massifs",
                              name, mwhere, c->massif_floor_mm_yr, c->uplift_mm_yr);
    }
    return 0;
}

int tb_legend_parse(const char *json, const char *name, tb_legend_t *legend, tb_err_t *err)
{
    memset(legend, 0, sizeof *legend);
    legend->tolerance = 24;
    legend->max_unmatched_fraction = 0.001;
    cJSON *root;
    if (s_parse_json(json, name, &root, err) != 0)
        return -1;
    int rc = -1;
    for (const cJSON *it = root->child; it; it = it->next) {
        if (strcmp(it->string, "classes") == 0)
            continue;
        bool present;
        if (strcmp(it->string, "tolerance") == 0) {
            if (s_class_number(root, "tolerance", name, "legend", 0, 255, &legend->tolerance,
                               &present, err))
                goto done;
        } else if (strcmp(it->string, "max_unmatched_fraction") == 0) {
            if (s_class_number(root, "max_unmatched_fraction", name, "legend", 0, 1,
                               &legend->max_unmatched_fraction, &present, err))
                goto done;
        } else {
            tb_err_set(err, TB_E_UNKNOWN_KEY, "%s: %s: unknown key", name, it->string);
            goto done;
        }
    }
    const cJSON *classes = cJSON_GetObjectItemCaseSensitive(root, "classes");
    if (!cJSON_IsArray(classes) || cJSON_GetArraySize(classes) == 0) {
        s_bad(err, name, "classes", "a non-empty array of classes", classes ? classes : root);
        goto done;
    }
    int n = cJSON_GetArraySize(classes);
    if (n > TB_MAX_CLASSES) {
        tb_err_set(err, TB_E_INVALID, "%s: classes: %d classes, at most %d are supported", name, n,
                   TB_MAX_CLASSES);
        goto done;
    }
    int ocean = 0;
    for (int i = 0; i < n; i++) {
        tb_class_t *c = &legend->classes[i];
        if (s_parse_class(cJSON_GetArrayItem(classes, i), i, name, c, err) != 0)
            goto done;
        for (int j = 0; j < i; j++) {
            const tb_class_t *o = &legend->classes[j];
            if (memcmp(o->rgb, c->rgb, 3) == 0) {
                tb_err_set(err, TB_E_INVALID,
                           "%s: classes[%d] (%s) and classes[%d] (%s) share the colour "
                           "#%02x%02x%02x; each colour must mean one class",
                           name, j, o->name, i, c->name, c->rgb[0], c->rgb[1], c->rgb[2]);
                goto done;
            }
            if (strcmp(o->name, c->name) == 0) {
                tb_err_set(err, TB_E_INVALID, "%s: classes[%d] and classes[%d] are both named %s",
                           name, j, i, c->name);
                goto done;
            }
        }
        ocean += c->kind == TB_CLASS_OCEAN;
    }
    if (!ocean) {
        tb_err_set(err, TB_E_INVALID, "%s: classes: no ocean class; the sea is the base level", name);
        goto done;
    }
    legend->n_classes = n;
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

int tb_legend_find(const tb_legend_t *legend, const char *name)
{
    for (int i = 0; i < legend->n_classes; i++)
        if (strcmp(legend->classes[i].name, name) == 0)
            return i;
    return -1;
}

/* ---- whole manifest ---- */

/* Whether x is within a relative 1e-9 of a whole number; *whole gets the nearest one. */
static bool s_whole(double x, double *whole)
{
    *whole = round(x);
    return fabs(x - *whole) <= 1e-9 * fmax(1.0, fabs(x));
}

int tb_manifest_finish(tb_manifest_t *m, tb_err_t *err)
{
    const char *name = m->source;
    double circ_m = m->circumference_km * 1000.0, cells, tiles, tile_cells, tile_detail;
    if (!s_whole(circ_m / m->cell_m, &cells) || cells < 1)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: circumference_km %g is %.6f cells of cell_m %g m, not a whole "
                          "number; choose a circumference that is a multiple of %g m",
                          name, m->circumference_km, circ_m / m->cell_m, m->cell_m, m->cell_m);
    if (!s_whole(m->circumference_km / m->tiles.size_km, &tiles) || tiles < 1)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: circumference_km %g is %.6f tiles of tiles.size_km %g, not a whole "
                          "number",
                          name, m->circumference_km, m->circumference_km / m->tiles.size_km,
                          m->tiles.size_km);
    if (!s_whole(m->tiles.size_km * 1000.0 / m->cell_m, &tile_cells))
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.size_km %g is %.6f geology cells of %g m, not a whole number",
                          name, m->tiles.size_km, m->tiles.size_km * 1000.0 / m->cell_m, m->cell_m);
    if (!s_whole(m->tiles.size_km * 1000.0 / m->tiles.cell_m, &tile_detail))
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.size_km %g is %.6f detail cells of tiles.cell_m %g m, not a "
                          "whole number",
                          name, m->tiles.size_km, m->tiles.size_km * 1000.0 / m->tiles.cell_m,
                          m->tiles.cell_m);
    if (m->tiles.cell_m > m->cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: tiles.cell_m %g is coarser than the geology cell_m %g", name,
                          m->tiles.cell_m, m->cell_m);
    if (m->faults.per_1000_km2 > 0 && m->faults.width_km * 1000.0 < 2 * m->cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: faults.width_km %g is under two cells; a fault narrower than that "
                          "is a scarp the solve cannot undo",
                          name, m->faults.width_km);
    if (m->regions.ocean_margin_km * 1000.0 < 2 * m->cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: regions.ocean_margin_km %g is under two cells of %g m", name,
                          m->regions.ocean_margin_km, m->cell_m);
    m->planet_w = (int64_t)cells;
    m->tiles_around = (int64_t)tiles;
    m->massif.wavelength_snapped_km = tb_snap_wavelength(m->circumference_km, m->massif.wavelength_km);
    m->rock.wavelength_snapped_km = tb_snap_wavelength(m->circumference_km, m->rock.wavelength_km);
    m->faults.grain_wavelength_snapped_km =
        tb_snap_wavelength(m->circumference_km, m->faults.grain_wavelength_km);
    return 0;
}

int tb_manifest_load(const char *path, tb_manifest_t *m, tb_err_t *err)
{
    char *text;
    size_t bytes;
    if (tb_fs_read_all(path, 16u << 20, &text, &bytes, err) != 0)
        return -1;
    char dir[TB_PATH_MAX];
    tb_fs_dirname(dir, sizeof dir, path);
    int rc = tb_manifest_parse(text, path, dir, m, err);
    free(text);
    if (rc != 0)
        return -1;
    if (tb_fs_read_all(m->legend_path, 16u << 20, &text, &bytes, err) != 0)
        return tb_err_prefix(err, "%s: template.legend", path);
    rc = tb_legend_parse(text, m->legend_path, &m->legend, err);
    free(text);
    if (rc != 0)
        return -1;
    return tb_manifest_finish(m, err);
}

/* ---- serialisation ---- */

static cJSON *s_object_at(cJSON *root, const char *path, char *leaf, size_t leaf_n)
{
    cJSON *obj = root;
    const char *dot;
    while ((dot = strchr(path, '.')) != NULL) {
        char part[64];
        snprintf(part, sizeof part, "%.*s", (int)(dot - path), path);
        cJSON *next = cJSON_GetObjectItemCaseSensitive(obj, part);
        if (!next)
            next = cJSON_AddObjectToObject(obj, part);
        obj = next;
        path = dot + 1;
    }
    snprintf(leaf, leaf_n, "%s", path);
    return obj;
}

static void s_add_keys(cJSON *root, const tb_manifest_t *m, bool resolved_paths,
                       const char *painting_rel, const char *legend_rel)
{
    const char *base = (const char *)m;
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        char leaf[64];
        cJSON *obj = s_object_at(root, k->path, leaf, sizeof leaf);
        switch (k->kind) {
        case K_INT: cJSON_AddNumberToObject(obj, leaf, *(const int *)(base + k->off)); break;
        case K_DOUBLE: cJSON_AddNumberToObject(obj, leaf, *(const double *)(base + k->off)); break;
        case K_SEED:
            cJSON_AddNumberToObject(obj, leaf, (double)*(const uint64_t *)(base + k->off));
            break;
        case K_PATH: {
            const char *v = base + k->off;
            if (!resolved_paths)
                v = k->off == OFF(painting_path) ? painting_rel : legend_rel;
            if (v && v[0])
                cJSON_AddStringToObject(obj, leaf, v);
            break;
        }
        case K_RANGE: {
            double pair[2] = {*(const double *)(base + k->off), *(const double *)(base + k->off2)};
            cJSON_AddItemToObject(obj, leaf, cJSON_CreateDoubleArray(pair, 2));
            break;
        }
        }
    }
}

static cJSON *s_legend_json(const tb_legend_t *legend)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "tolerance", legend->tolerance);
    cJSON_AddNumberToObject(root, "max_unmatched_fraction", legend->max_unmatched_fraction);
    cJSON *arr = cJSON_AddArrayToObject(root, "classes");
    for (int i = 0; i < legend->n_classes; i++) {
        const tb_class_t *c = &legend->classes[i];
        cJSON *o = cJSON_CreateObject();
        char hex[8];
        snprintf(hex, sizeof hex, "#%02x%02x%02x", c->rgb[0], c->rgb[1], c->rgb[2]);
        cJSON_AddStringToObject(o, "name", c->name);
        cJSON_AddStringToObject(o, "colour", hex);
        cJSON_AddStringToObject(o, "kind", c->kind == TB_CLASS_LAND ? "land" : "ocean");
        if (c->kind == TB_CLASS_LAND) {
            cJSON_AddNumberToObject(o, "uplift_mm_yr", c->uplift_mm_yr);
            cJSON_AddNumberToObject(o, "k_mult", c->k_mult);
            if (c->massif_fraction < 1 || c->massif_floor_mm_yr != c->uplift_mm_yr) {
                cJSON *mo = cJSON_AddObjectToObject(o, "massif");
                cJSON_AddNumberToObject(mo, "floor_mm_yr", c->massif_floor_mm_yr);
                cJSON_AddNumberToObject(mo, "fraction", c->massif_fraction);
            }
        } else {
            cJSON_AddNumberToObject(o, "depth_m", c->depth_m);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return root;
}

char *tb_legend_to_json(const tb_legend_t *legend)
{
    cJSON *root = s_legend_json(legend);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

char *tb_manifest_to_json(const tb_manifest_t *m)
{
    cJSON *root = cJSON_CreateObject();
    s_add_keys(root, m, true, NULL, NULL);
    cJSON_AddStringToObject(root, "source", m->source);
    cJSON *derived = cJSON_AddObjectToObject(root, "derived");
    cJSON_AddNumberToObject(derived, "planet_w", (double)m->planet_w);
    cJSON_AddNumberToObject(derived, "tiles_around", (double)m->tiles_around);
    cJSON_AddNumberToObject(derived, "massif_wavelength_km", m->massif.wavelength_snapped_km);
    cJSON_AddNumberToObject(derived, "rock_wavelength_km", m->rock.wavelength_snapped_km);
    cJSON_AddNumberToObject(derived, "grain_wavelength_km", m->faults.grain_wavelength_snapped_km);
    cJSON_AddItemToObject(root, "legend", s_legend_json(&m->legend));
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

char *tb_manifest_to_file_json(const tb_manifest_t *m, const char *painting_rel,
                               const char *legend_rel)
{
    cJSON *root = cJSON_CreateObject();
    s_add_keys(root, m, false, painting_rel, legend_rel);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

char *tb_manifest_schema_markdown(void)
{
    size_t cap = 16384, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (size_t i = 0; i < S_NKEYS + 2; i++) {
        char line[1024];
        if (i == 0)
            snprintf(line, sizeof line, "| key | type | range | default | meaning |\n");
        else if (i == 1)
            snprintf(line, sizeof line, "|---|---|---|---|---|\n");
        else {
            const s_key_t *k = &s_keys[i - 2];
            char range[96], def[96];
            const char *type = "number";
            switch (k->kind) {
            case K_INT: type = "integer"; break;
            case K_SEED: type = "integer"; break;
            case K_DOUBLE: type = "number"; break;
            case K_PATH: type = "path"; break;
            case K_RANGE: type = "[low, high]"; break;
            }
            if (k->kind == K_PATH) {
                snprintf(range, sizeof range, "-");
                snprintf(def, sizeof def, "required");
            } else {
                if (k->kind == K_SEED)
                    snprintf(range, sizeof range, "0 .. 2^53");
                else
                    snprintf(range, sizeof range, "%g .. %g", k->lo, k->hi);
                if (k->kind == K_RANGE)
                    snprintf(def, sizeof def, "[%g, %g]", k->def, k->def2);
                else
                    snprintf(def, sizeof def, "%g", k->def);
            }
            snprintf(line, sizeof line, "| `%s` | %s | %s | %s | %s |\n", k->path, type, range, def,
                     k->doc);
        }
        size_t n = strlen(line);
        if (len + n + 1 > cap) {
            cap *= 2;
            char *p = realloc(out, cap);
            if (!p) {
                free(out);
                return NULL;
            }
            out = p;
        }
        memcpy(out + len, line, n + 1);
        len += n;
    }
    return out;
}
