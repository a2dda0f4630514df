/* The planet manifest: a strict JSON walker over the keys of the sections (common/manifest/), the
 * defaults, and the sections' checks; see manifest.h. The legend is common/manifest/legend.c, the
 * JSON the program writes common/manifest/json.c. Adding a key is one row in its section's table
 * and a field in the struct; adding a section is common/manifest/section.h's recipe. */
#include "common/json.h"
#include "common/manifest.h"

#include <cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/manifest/section.h"

typedef tb_mkey_t s_key_t;

const tb_mkey_t *tb_manifest_find_key(const char *path)
{
    for (size_t s = 0; s < tb_manifest_n_sections; s++) {
        const tb_manifest_section_t *sec = tb_manifest_sections[s];
        for (size_t i = 0; i < sec->n_keys; i++)
            if (strcmp(sec->keys[i].path, path) == 0)
                return &sec->keys[i];
    }
    return NULL;
}

/* Whether `path` is an object some section owns ("solve"). */
static bool s_is_section(const char *path)
{
    for (size_t s = 0; s < tb_manifest_n_sections; s++)
        for (const char *const *o = tb_manifest_sections[s]->objects; o && *o; o++)
            if (strcmp(*o, path) == 0)
                return true;
    return false;
}

void tb_manifest_defaults(tb_manifest_t *m)
{
    memset(m, 0, sizeof *m);
    for (size_t s = 0; s < tb_manifest_n_sections; s++)
        for (size_t i = 0; i < tb_manifest_sections[s]->n_keys; i++) {
            const s_key_t *k = &tb_manifest_sections[s]->keys[i];
            char *base = (char *)m;
            switch (k->kind) {
            case TB_MKEY_INT:
                *(int *)(base + k->off) = (int)k->def;
                break;
            case TB_MKEY_DOUBLE:
                *(double *)(base + k->off) = k->def;
                break;
            case TB_MKEY_SEED:
                *(uint64_t *)(base + k->off) = (uint64_t)k->def;
                break;
            case TB_MKEY_PATH:
                ((char *)(base + k->off))[0] = '\0';
                break;
            case TB_MKEY_RANGE:
                *(double *)(base + k->off) = k->def;
                *(double *)(base + k->off2) = k->def2;
                break;
            }
        }
    m->legend.tolerance = 24;
    m->legend.max_unmatched_fraction = 0.001;
    snprintf(m->base_dir, sizeof m->base_dir, ".");
}

int tb_manifest_bad(tb_err_t *err, const char *name, const char *path, const char *expected,
                    const cJSON *got)
{
    char *shown = tb_json_print(got, false);
    tb_err_set(err, TB_E_INVALID, "%s: %s: expected %s, got %s", name, path, expected,
               shown ? shown : "?");
    free(shown);
    return -1;
}

bool tb_manifest_is_integer(double v)
{
    return isfinite(v) && v == floor(v);
}

int tb_manifest_set_key(const tb_mkey_t *k, const cJSON *item, const char *name,
                        const char *base_dir, tb_manifest_t *m, tb_err_t *err)
{
    char expected[256];
    char *base = (char *)m;
    switch (k->kind) {
    case TB_MKEY_INT:
    case TB_MKEY_SEED:
        snprintf(expected, sizeof expected, "an integer in %.17g..%.17g", k->lo, k->hi);
        if (!cJSON_IsNumber(item) || !tb_manifest_is_integer(item->valuedouble) ||
            item->valuedouble < k->lo || item->valuedouble > k->hi)
            return tb_manifest_bad(err, name, k->path, expected, item);
        if (k->kind == TB_MKEY_INT)
            *(int *)(base + k->off) = (int)item->valuedouble;
        else
            *(uint64_t *)(base + k->off) = (uint64_t)item->valuedouble;
        return 0;
    case TB_MKEY_DOUBLE:
        snprintf(expected, sizeof expected, "a number in %g..%g", k->lo, k->hi);
        if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < k->lo ||
            item->valuedouble > k->hi)
            return tb_manifest_bad(err, name, k->path, expected, item);
        *(double *)(base + k->off) = item->valuedouble;
        return 0;
    case TB_MKEY_PATH:
        if (!cJSON_IsString(item) || !item->valuestring[0])
            return tb_manifest_bad(err, name, k->path, "a non-empty file path string", item);
        if (item->valuestring[0] == '/')
            snprintf(base + k->off, TB_PATH_MAX, "%s", item->valuestring);
        else if (snprintf(base + k->off, TB_PATH_MAX, "%s/%s", base_dir, item->valuestring) >=
                 TB_PATH_MAX)
            return tb_err_set(err, TB_E_INVALID, "%s: %s: path too long", name, k->path);
        return 0;
    case TB_MKEY_RANGE: {
        snprintf(expected, sizeof expected, "[low, high] with %g <= low < high <= %g", k->lo,
                 k->hi);
        if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2)
            return tb_manifest_bad(err, name, k->path, expected, item);
        const cJSON *a = cJSON_GetArrayItem(item, 0), *b = cJSON_GetArrayItem(item, 1);
        if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b) || !isfinite(a->valuedouble) ||
            !isfinite(b->valuedouble) || a->valuedouble < k->lo || b->valuedouble > k->hi ||
            !(a->valuedouble < b->valuedouble))
            return tb_manifest_bad(err, name, k->path, expected, item);
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
        const s_key_t *k = tb_manifest_find_key(path);
        if (k) {
            if (tb_manifest_set_key(k, item, name, base_dir, m, err) != 0)
                return -1;
        } else if (s_is_section(path)) {
            if (!cJSON_IsObject(item))
                return tb_manifest_bad(err, name, path, "an object", item);
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

int tb_manifest_parse_json(const char *json, const char *name, cJSON **out, tb_err_t *err)
{
    const char *end = NULL;
    *out = cJSON_ParseWithOpts(json, &end, 1);
    if (!*out) {
        size_t off = end ? (size_t)(end - json) : 0;
        int line = 1;
        for (size_t i = 0; i < off && json[i]; i++)
            line += json[i] == '\n';
        return tb_err_set(err, TB_E_FORMAT, "%s: not valid JSON near line %d (byte %zu)", name,
                          line, off);
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
    if (tb_manifest_parse_json(json, name, &root, err) != 0)
        return -1;
    int rc = s_walk(root, "", name, base_dir, m, err);
    cJSON_Delete(root);
    if (rc != 0)
        return -1;
    if (!m->painting_path[0])
        return tb_err_set(err, TB_E_INVALID,
                          "%s: template.painting: missing; a manifest names its painted image",
                          name);
    if (!m->legend_path[0])
        return tb_err_set(err, TB_E_INVALID,
                          "%s: template.legend: missing; a manifest names its legend", name);
    return 0;
}

/* ---- whole manifest ---- */

bool tb_manifest_whole(double x, double *whole)
{
    *whole = round(x);
    return fabs(x - *whole) <= 1e-9 * fmax(1.0, fabs(x));
}

int tb_manifest_finish(tb_manifest_t *m, tb_err_t *err)
{
    for (size_t s = 0; s < tb_manifest_n_sections; s++)
        if (tb_manifest_sections[s]->check && tb_manifest_sections[s]->check(m, err) != 0)
            return -1;
    return 0;
}

int tb_manifest_load(const char *path, tb_manifest_t *m, tb_err_t *err)
{
    return tb_manifest_load_overridden(path, NULL, m, err);
}

int tb_manifest_load_overridden(const char *path, const tb_overrides_t *overrides, tb_manifest_t *m,
                                tb_err_t *err)
{
    char *text;
    size_t bytes;
    if (tb_fs_read_all(path, 16u << 20, &text, &bytes, err) != 0)
        return -1;
    char dir[TB_PATH_MAX];
    tb_fs_dirname(dir, sizeof dir, path);
    int rc = tb_manifest_parse(text, path, dir, m, err);
    free(text);
    if (rc != 0 || tb_overrides_apply_keys(overrides, m, err) != 0)
        return -1;
    const char *legend_arg = tb_overrides_arg(overrides, "template.legend");
    if (tb_fs_read_all(m->legend_path, 16u << 20, &text, &bytes, err) != 0)
        return legend_arg ? tb_err_prefix(err, "--set %s", legend_arg)
                          : tb_err_prefix(err, "%s: template.legend", path);
    rc = tb_legend_parse(text, m->legend_path, &m->legend, err);
    free(text);
    if (rc != 0 && legend_arg)
        return tb_err_prefix(err, "--set %s", legend_arg);
    if (rc != 0 || tb_overrides_apply_legend(overrides, &m->legend, err) != 0)
        return -1;
    return tb_overrides_finish(overrides, m, err);
}
