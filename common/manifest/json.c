/* The manifest and legend as JSON, and the schema as Markdown; see common/manifest.h. Keys are
 * written in section order (common/manifest/sections.c). */
#include "common/json.h"
#include "common/manifest.h"
#include "common/manifest/section.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    for (size_t s = 0; s < tb_manifest_n_sections; s++)
        for (size_t i = 0; i < tb_manifest_sections[s]->n_keys; i++) {
            const tb_mkey_t *k = &tb_manifest_sections[s]->keys[i];
            char leaf[64];
            cJSON *obj = s_object_at(root, k->path, leaf, sizeof leaf);
            switch (k->kind) {
            case TB_MKEY_INT:
                cJSON_AddNumberToObject(obj, leaf, *(const int *)(base + k->off));
                break;
            case TB_MKEY_DOUBLE:
                cJSON_AddNumberToObject(obj, leaf, *(const double *)(base + k->off));
                break;
            case TB_MKEY_SEED:
                cJSON_AddNumberToObject(obj, leaf, (double)*(const uint64_t *)(base + k->off));
                break;
            case TB_MKEY_PATH: {
                const char *v = base + k->off;
                if (!resolved_paths && k->off == TB_MKEY_OFF(painting_path))
                    v = painting_rel;
                else if (!resolved_paths && k->off == TB_MKEY_OFF(legend_path))
                    v = legend_rel;
                if (v && v[0])
                    cJSON_AddStringToObject(obj, leaf, v);
                break;
            }
            case TB_MKEY_RANGE: {
                double pair[2] = {*(const double *)(base + k->off),
                                  *(const double *)(base + k->off2)};
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
    char *s = tb_json_print(root, true);
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
    char *s = tb_json_print(root, true);
    cJSON_Delete(root);
    return s;
}

char *tb_manifest_to_file_json(const tb_manifest_t *m, const char *painting_rel,
                               const char *legend_rel)
{
    cJSON *root = cJSON_CreateObject();
    s_add_keys(root, m, false, painting_rel, legend_rel);
    char *s = tb_json_print(root, true);
    cJSON_Delete(root);
    return s;
}

/* Appends `line` to the buffer *out of *cap bytes holding *len; -1 when out of memory. */
static int s_append(char **out, size_t *cap, size_t *len, const char *line)
{
    size_t n = strlen(line);
    if (*len + n + 1 > *cap) {
        size_t cap2 = (*cap + n + 1) * 2;
        char *p = realloc(*out, cap2);
        if (!p)
            return -1;
        *out = p;
        *cap = cap2;
    }
    memcpy(*out + *len, line, n + 1);
    *len += n;
    return 0;
}

/* One row of the schema table. */
static void s_schema_row(const tb_mkey_t *k, char *line, size_t n)
{
    char range[96], def[96];
    const char *type = "number";
    switch (k->kind) {
    case TB_MKEY_INT:
        type = "integer";
        break;
    case TB_MKEY_SEED:
        type = "integer";
        break;
    case TB_MKEY_DOUBLE:
        type = "number";
        break;
    case TB_MKEY_PATH:
        type = "path";
        break;
    case TB_MKEY_RANGE:
        type = "[low, high]";
        break;
    }
    if (k->kind == TB_MKEY_PATH) {
        snprintf(range, sizeof range, "-");
        snprintf(def, sizeof def, k->def != 0 ? "none" : "required");
    } else {
        if (k->kind == TB_MKEY_SEED)
            snprintf(range, sizeof range, "0 .. 2^53");
        else
            snprintf(range, sizeof range, "%g .. %g", k->lo, k->hi);
        if (k->kind == TB_MKEY_RANGE)
            snprintf(def, sizeof def, "[%g, %g]", k->def, k->def2);
        else
            snprintf(def, sizeof def, "%g", k->def);
    }
    snprintf(line, n, "| `%s` | %s | %s | %s | %s |\n", k->path, type, range, def, k->doc);
}

char *tb_manifest_schema_markdown(void)
{
    size_t cap = 16384, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    int rc = s_append(&out, &cap, &len, "| key | type | range | default | meaning |\n");
    rc |= s_append(&out, &cap, &len, "|---|---|---|---|---|\n");
    for (size_t s = 0; s < tb_manifest_n_sections && rc == 0; s++)
        for (size_t i = 0; i < tb_manifest_sections[s]->n_keys && rc == 0; i++) {
            char line[1024];
            s_schema_row(&tb_manifest_sections[s]->keys[i], line, sizeof line);
            rc |= s_append(&out, &cap, &len, line);
        }
    if (rc != 0) {
        free(out);
        return NULL;
    }
    return out;
}
