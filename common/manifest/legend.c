/* The legend: what each painted colour means (docs/manifest.md); see common/manifest.h. */
#include "common/manifest.h"
#include "common/manifest/section.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tb_colour_parse(const cJSON *c, uint8_t rgb[3])
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
            if (!cJSON_IsNumber(v) || !tb_manifest_is_integer(v->valuedouble) ||
                v->valuedouble < 0 || v->valuedouble > 255)
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
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi)
        return tb_manifest_bad(err, name, path, expected, v);
    *out = v->valuedouble;
    return 0;
}

static int s_parse_class(const cJSON *cls, int index, const char *name, tb_class_t *c,
                         tb_err_t *err)
{
    char where[128];
    snprintf(where, sizeof where, "classes[%d]", index);
    if (!cJSON_IsObject(cls))
        return tb_manifest_bad(err, name, where, "an object", cls);
    static const char *allowed[] = {"name",         "colour", "color",  "kind",
                                    "uplift_mm_yr", "k_mult", "massif", "depth_m"};
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
        return tb_manifest_bad(err, name, where, "a \"name\" string of 1..63 characters",
                               nm ? nm : cls);
    for (const unsigned char *q = (const unsigned char *)nm->valuestring; *q; q++)
        if (*q < 0x20 || *q == 0x7f)
            return tb_manifest_bad(err, name, where,
                                   "a \"name\" without control characters (it is printed in "
                                   "maps, logs and plan.json)",
                                   nm);
    snprintf(c->name, sizeof c->name, "%s", nm->valuestring);
    snprintf(where, sizeof where, "classes[%d] (%s)", index, c->name);
    const cJSON *col = cJSON_GetObjectItemCaseSensitive(cls, "colour");
    if (!col)
        col = cJSON_GetObjectItemCaseSensitive(cls, "color");
    if (!col || tb_colour_parse(col, c->rgb) != 0) {
        char path[256];
        snprintf(path, sizeof path, "%s.colour", where);
        return tb_manifest_bad(err, name, path, "\"#rrggbb\" or [r, g, b] with 0..255",
                               col ? col : cls);
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(cls, "kind");
    if (cJSON_IsString(kind) && strcmp(kind->valuestring, "land") == 0)
        c->kind = TB_CLASS_LAND;
    else if (cJSON_IsString(kind) && strcmp(kind->valuestring, "ocean") == 0)
        c->kind = TB_CLASS_OCEAN;
    else {
        char path[256];
        snprintf(path, sizeof path, "%s.kind", where);
        return tb_manifest_bad(err, name, path, "\"land\" or \"ocean\"", kind ? kind : cls);
    }
    bool has_uplift, has_k, has_depth;
    c->k_mult = 1;
    if (s_class_number(cls, "uplift_mm_yr", name, where, 0, TB_LEGEND_UPLIFT_MAX_MM_YR,
                       &c->uplift_mm_yr, &has_uplift, err) ||
        s_class_number(cls, "k_mult", name, where, TB_LEGEND_K_MULT_MIN, TB_LEGEND_K_MULT_MAX,
                       &c->k_mult, &has_k, err) ||
        s_class_number(cls, "depth_m", name, where, 0, TB_LEGEND_DEPTH_MAX_M, &c->depth_m,
                       &has_depth, err))
        return -1;
    const cJSON *massif = cJSON_GetObjectItemCaseSensitive(cls, "massif");
    if (c->kind == TB_CLASS_OCEAN) {
        if (has_uplift || has_k || massif)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: %s: an ocean class takes depth_m only, not uplift_mm_yr, k_mult "
                              "or massif",
                              name, where);
        if (!has_depth)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: %s.depth_m: missing; an ocean class needs "
                              "its depth below sea level in metres",
                              name, where);
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
            return tb_manifest_bad(err, name, mwhere, "an object {floor_mm_yr, fraction}", massif);
        for (const cJSON *it = massif->child; it; it = it->next)
            if (strcmp(it->string, "floor_mm_yr") != 0 && strcmp(it->string, "fraction") != 0)
                return tb_err_set(err, TB_E_UNKNOWN_KEY, "%s: %s.%s: unknown key", name, mwhere,
                                  it->string);
        bool has_floor, has_frac;
        if (s_class_number(massif, "floor_mm_yr", name, mwhere, 0, TB_LEGEND_UPLIFT_MAX_MM_YR,
                           &c->massif_floor_mm_yr, &has_floor, err) ||
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
    if (tb_manifest_parse_json(json, name, &root, err) != 0)
        return -1;
    int rc = -1;
    for (const cJSON *it = root->child; it; it = it->next) {
        if (strcmp(it->string, "classes") == 0)
            continue;
        bool present;
        if (strcmp(it->string, "tolerance") == 0) {
            if (s_class_number(root, "tolerance", name, "legend", 0, TB_LEGEND_TOLERANCE_MAX,
                               &legend->tolerance, &present, err))
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
        tb_manifest_bad(err, name, "classes", "a non-empty array of classes",
                        classes ? classes : root);
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
        tb_err_set(err, TB_E_INVALID, "%s: classes: no ocean class; the sea is the base level",
                   name);
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
