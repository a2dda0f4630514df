/* Overrides of manifest keys from the command line: `--set KEY=VALUE` on plan, bake and
 * solve-region (docs/manifest.md, "Overrides"); see common/manifest.h.
 *
 * An override is checked twice: when it is added (the key exists, the value has the key's type and
 * range, the same words as a file's value) and when it is applied to a loaded manifest, after which
 * the sections' cross-key checks run as they do for a file. Keys are the section tables' (every key
 * `terrain schema` lists) and the legend's: legend.tolerance, legend.max_unmatched_fraction and
 * legend.classes.NAME.FIELD for a class's numbers. A few dozen overrides at most; nothing here is
 * on a hot path.
 */
#include "common/json.h"
#include "common/manifest.h"
#include "common/manifest/section.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_KEY_MAX 160

typedef struct {
    char *arg;             /* KEY=VALUE as given, named in every message */
    char key[S_KEY_MAX];   /* the dotted key */
    cJSON *value;          /* the value, parsed */
    const tb_mkey_t *mkey; /* a section key, or NULL for a legend key */
} s_item_t;

struct tb_overrides_t {
    int n;
    s_item_t items[TB_OVERRIDES_MAX];
};

/* A legend number: legend.FIELD (top level) or legend.classes.NAME.FIELD (class != 0). */
typedef struct {
    const char *field;
    bool of_class;
    tb_class_kind_t kind; /* the class kind the field belongs to */
    double lo, hi;
} s_legend_key_t;

static const s_legend_key_t s_legend_keys[] = {
    {"tolerance", false, TB_CLASS_LAND, 0, TB_LEGEND_TOLERANCE_MAX},
    {"max_unmatched_fraction", false, TB_CLASS_LAND, 0, 1},
    {"uplift_mm_yr", true, TB_CLASS_LAND, 0, TB_LEGEND_UPLIFT_MAX_MM_YR},
    {"k_mult", true, TB_CLASS_LAND, TB_LEGEND_K_MULT_MIN, TB_LEGEND_K_MULT_MAX},
    {"massif.floor_mm_yr", true, TB_CLASS_LAND, 0, TB_LEGEND_UPLIFT_MAX_MM_YR},
    {"massif.fraction", true, TB_CLASS_LAND, 0, 1},
    {"depth_m", true, TB_CLASS_OCEAN, 0, TB_LEGEND_DEPTH_MAX_M},
};
#define S_N_LEGEND_KEYS (sizeof s_legend_keys / sizeof s_legend_keys[0])
#define S_CLASSES_PREFIX "legend.classes."

/* The legend key `key` names, with its class name in class_name (empty for a top-level one), or
 * NULL. */
static const s_legend_key_t *s_legend_key(const char *key, char *class_name, size_t n)
{
    class_name[0] = '\0';
    if (strncmp(key, "legend.", 7) != 0)
        return NULL;
    const size_t plen = strlen(S_CLASSES_PREFIX);
    for (size_t i = 0; i < S_N_LEGEND_KEYS; i++) {
        const s_legend_key_t *l = &s_legend_keys[i];
        if (!l->of_class) {
            if (strcmp(key + 7, l->field) == 0)
                return l;
            continue;
        }
        size_t klen = strlen(key), flen = strlen(l->field);
        if (strncmp(key, S_CLASSES_PREFIX, plen) != 0 || klen < plen + flen + 2)
            continue;
        const char *tail = key + klen - flen;
        if (tail[-1] != '.' || strcmp(tail, l->field) != 0)
            continue;
        size_t name_len = (size_t)(tail - 1 - (key + plen));
        if (name_len == 0 || name_len >= n)
            continue;
        memcpy(class_name, key + plen, name_len);
        class_name[name_len] = '\0';
        return l;
    }
    return NULL;
}

/* Levenshtein distance of a and b (keys are short: under S_KEY_MAX characters). */
static size_t s_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= S_KEY_MAX || lb >= S_KEY_MAX)
        return (size_t)-1;
    size_t row[S_KEY_MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Writes into out the known key nearest to `key` (within a third of its length, at least 2
 * edits), or an empty string. A legend class key is suggested with the class name given. */
static void s_nearest(const char *key, char *out, size_t n)
{
    size_t best = (size_t)-1;
    out[0] = '\0';
    size_t limit = strlen(key) / 3 > 2 ? strlen(key) / 3 : 2;
    for (size_t s = 0; s < tb_manifest_n_sections; s++)
        for (size_t i = 0; i < tb_manifest_sections[s]->n_keys; i++) {
            const char *cand = tb_manifest_sections[s]->keys[i].path;
            size_t d = s_distance(key, cand);
            if (d < best && d <= limit) {
                best = d;
                snprintf(out, n, "%s", cand);
            }
        }
    /* legend keys: the class name as typed, then each field */
    const char *name = key + strlen(S_CLASSES_PREFIX);
    const char *dot =
        strncmp(key, S_CLASSES_PREFIX, strlen(S_CLASSES_PREFIX)) == 0 ? strchr(name, '.') : NULL;
    for (size_t i = 0; i < S_N_LEGEND_KEYS; i++) {
        char cand[S_KEY_MAX + 64];
        if (!s_legend_keys[i].of_class)
            snprintf(cand, sizeof cand, "legend.%s", s_legend_keys[i].field);
        else if (dot)
            snprintf(cand, sizeof cand, "%.*s.%s", (int)(dot - key), key, s_legend_keys[i].field);
        else
            continue;
        size_t d = s_distance(key, cand);
        if (d < best && d <= limit) {
            best = d;
            snprintf(out, n, "%s", cand);
        }
    }
}

tb_overrides_t *tb_overrides_new(void)
{
    return calloc(1, sizeof(tb_overrides_t));
}

void tb_overrides_destroy(tb_overrides_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_overrides_t *self = *self_p;
    for (int i = 0; i < self->n; i++) {
        free(self->items[i].arg);
        cJSON_Delete(self->items[i].value);
    }
    free(self);
    *self_p = NULL;
}

int tb_overrides_count(const tb_overrides_t *self)
{
    return self ? self->n : 0;
}

const char *tb_overrides_arg(const tb_overrides_t *self, const char *key)
{
    for (int i = 0; self && i < self->n; i++)
        if (strcmp(self->items[i].key, key) == 0)
            return self->items[i].arg;
    return NULL;
}

bool tb_overrides_has(const tb_overrides_t *self, const char *key)
{
    return tb_overrides_arg(self, key) != NULL;
}

/* The value text as the key takes it: JSON, or for a path key a bare word as the string itself. */
static cJSON *s_parse_value(const char *text, bool is_path)
{
    if (is_path && text[0] != '"')
        return cJSON_CreateString(text);
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(text, &end, 1);
    return v ? v : cJSON_CreateString(text); /* not JSON: a string, which a number key refuses */
}

/* Checks a legend value's type and range ("NAME: KEY: expected ..., got VALUE"). */
static int s_check_legend_value(const s_legend_key_t *l, const cJSON *v, const char *name,
                                const char *key, tb_err_t *err)
{
    char expected[96];
    snprintf(expected, sizeof expected, "a number in %g..%g", l->lo, l->hi);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < l->lo ||
        v->valuedouble > l->hi)
        return tb_manifest_bad(err, name, key, expected, v);
    return 0;
}

int tb_overrides_add(tb_overrides_t *self, const char *arg, tb_err_t *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq)
        return tb_err_set(err, TB_E_INVALID,
                          "--set %s: expected KEY=VALUE (a dotted manifest key such as solve.k, "
                          "`terrain schema` lists them)",
                          arg);
    if (eq == arg)
        return tb_err_set(err, TB_E_INVALID, "--set %s: the key before '=' is empty", arg);
    if ((size_t)(eq - arg) >= S_KEY_MAX)
        return tb_err_set(err, TB_E_INVALID, "--set %.40s...: the key is over %d characters", arg,
                          S_KEY_MAX - 1);
    if (self->n >= TB_OVERRIDES_MAX)
        return tb_err_set(err, TB_E_INVALID, "--set %s: more than %d overrides", arg,
                          TB_OVERRIDES_MAX);
    s_item_t it = {0};
    memcpy(it.key, arg, (size_t)(eq - arg));
    it.key[eq - arg] = '\0';
    char name[S_KEY_MAX + 16], class_name[TB_NAME_MAX];
    int n = snprintf(name, sizeof name, "--set %s", arg);
    if (n < 0 || (size_t)n >= sizeof name)
        snprintf(name + sizeof name - 4, 4, "...");
    for (int i = 0; i < self->n; i++)
        if (strcmp(self->items[i].key, it.key) == 0)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: %s is set twice (first by --set %s); give each key once", name,
                              it.key, self->items[i].arg);
    it.mkey = tb_manifest_find_key(it.key);
    const s_legend_key_t *l = it.mkey ? NULL : s_legend_key(it.key, class_name, sizeof class_name);
    if (!it.mkey && !l) {
        char near[S_KEY_MAX + 64];
        s_nearest(it.key, near, sizeof near);
        if (near[0])
            return tb_err_set(err, TB_E_UNKNOWN_KEY,
                              "%s: %s: unknown key; did you mean %s? (`terrain schema` lists "
                              "them)",
                              name, it.key, near);
        return tb_err_set(err, TB_E_UNKNOWN_KEY,
                          "%s: %s: unknown key (`terrain schema` lists the keys; a class's "
                          "are legend.classes.NAME.uplift_mm_yr, k_mult, massif.floor_mm_yr, "
                          "massif.fraction, depth_m)",
                          name, it.key);
    }
    it.value = s_parse_value(eq + 1, it.mkey && it.mkey->kind == TB_MKEY_PATH);
    if (!it.value)
        return tb_err_set(err, TB_E_NOMEM, "%s: out of memory", name);
    /* the value's type and range, checked on a scratch manifest with the file's words */
    int rc;
    if (it.mkey) {
        tb_manifest_t *scratch = malloc(sizeof *scratch);
        if (!scratch) {
            cJSON_Delete(it.value);
            return tb_err_set(err, TB_E_NOMEM, "%s: out of memory", name);
        }
        rc = tb_manifest_set_key(it.mkey, it.value, name, ".", scratch, err);
        free(scratch);
    } else {
        rc = s_check_legend_value(l, it.value, name, it.key, err);
    }
    it.arg = rc == 0 ? strdup(arg) : NULL;
    if (rc != 0 || !it.arg) {
        cJSON_Delete(it.value);
        return rc != 0 ? -1 : tb_err_set(err, TB_E_NOMEM, "%s: out of memory", name);
    }
    self->items[self->n++] = it;
    return 0;
}

int tb_overrides_add_opt(void *self, const char *arg, tb_err_t *err)
{
    return tb_overrides_add(self, arg, err);
}

static int s_prefix_given(const tb_overrides_t *self, tb_err_t *err);

/* "--set ARG" of item i, for messages. */
static void s_name(const s_item_t *it, char *name, size_t n)
{
    snprintf(name, n, "--set %s", it->arg);
}

int tb_overrides_apply_keys(const tb_overrides_t *self, tb_manifest_t *m, tb_err_t *err)
{
    for (int i = 0; self && i < self->n; i++) {
        const s_item_t *it = &self->items[i];
        if (!it->mkey)
            continue;
        char name[S_KEY_MAX + 16];
        s_name(it, name, sizeof name);
        if (m->is_demo && it->mkey->kind == TB_MKEY_PATH)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: the demo planet has no template; write it out with `terrain "
                              "init DIR` and give DIR/planet.json",
                              name);
        /* a path from the command line is the shell's: relative to the current directory */
        if (tb_manifest_set_key(it->mkey, it->value, name, ".", m, err) != 0)
            return -1;
    }
    return 0;
}

/* Applies legend item `it` (key l, class class_name or none) to *legend. */
static int s_apply_legend(const s_item_t *it, const s_legend_key_t *l, const char *class_name,
                          tb_legend_t *legend, tb_err_t *err)
{
    char name[S_KEY_MAX + 16];
    s_name(it, name, sizeof name);
    double v = it->value->valuedouble;
    if (!l->of_class) {
        if (strcmp(l->field, "tolerance") == 0)
            legend->tolerance = v;
        else
            legend->max_unmatched_fraction = v;
        return 0;
    }
    int ci = tb_legend_find(legend, class_name);
    if (ci < 0) {
        char names[512] = "";
        size_t len = 0;
        for (int c = 0; c < legend->n_classes && len < sizeof names - 1; c++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", c ? ", " : "",
                                    legend->classes[c].name);
        return tb_err_set(err, TB_E_INVALID, "%s: the legend has no class \"%s\" (it has %s)", name,
                          class_name, names);
    }
    tb_class_t *c = &legend->classes[ci];
    if (c->kind != l->kind)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %s is %s class, which takes %s; %s belongs to %s class", name,
                          c->name, c->kind == TB_CLASS_LAND ? "a land" : "an ocean",
                          c->kind == TB_CLASS_LAND
                              ? "uplift_mm_yr, k_mult, massif.floor_mm_yr and massif.fraction"
                              : "depth_m only",
                          l->field, l->kind == TB_CLASS_LAND ? "a land" : "an ocean");
    if (strcmp(l->field, "uplift_mm_yr") == 0) {
        /* a class without a massif (floor at its rate, all of it massif) keeps none, as the file
         * would say it with the new rate */
        if (c->massif_fraction == 1 && c->massif_floor_mm_yr == c->uplift_mm_yr)
            c->massif_floor_mm_yr = v;
        c->uplift_mm_yr = v;
    } else if (strcmp(l->field, "k_mult") == 0) {
        c->k_mult = v;
    } else if (strcmp(l->field, "massif.floor_mm_yr") == 0) {
        c->massif_floor_mm_yr = v;
    } else if (strcmp(l->field, "massif.fraction") == 0) {
        c->massif_fraction = v;
    } else {
        c->depth_m = v;
    }
    return 0;
}

int tb_overrides_apply_legend(const tb_overrides_t *self, tb_legend_t *legend, tb_err_t *err)
{
    for (int i = 0; self && i < self->n; i++) {
        const s_item_t *it = &self->items[i];
        char class_name[TB_NAME_MAX];
        const s_legend_key_t *l =
            it->mkey ? NULL : s_legend_key(it->key, class_name, sizeof class_name);
        if (l && s_apply_legend(it, l, class_name, legend, err) != 0)
            return -1;
    }
    /* the file's cross-key check of a class, after every override */
    for (int c = 0; c < legend->n_classes; c++) {
        const tb_class_t *k = &legend->classes[c];
        if (k->kind == TB_CLASS_LAND && k->massif_floor_mm_yr > k->uplift_mm_yr) {
            tb_err_set(err, TB_E_INVALID,
                       "legend.classes.%s.massif.floor_mm_yr: %g is above the class's "
                       "uplift_mm_yr %g; the floor is the rate between the massifs",
                       k->name, k->massif_floor_mm_yr, k->uplift_mm_yr);
            return s_prefix_given(self, err);
        }
    }
    return 0;
}

void tb_overrides_describe(const tb_overrides_t *self, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; self && i < self->n && len < n - 1; i++) {
        int w = snprintf(out + len, n - len, "%s--set %s", i ? " " : "", self->items[i].arg);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

/* Prefixes *err with "with --set A --set B" (every override: a cross-key check may involve any);
 * returns -1. */
static int s_prefix_given(const tb_overrides_t *self, tb_err_t *err)
{
    if (tb_overrides_count(self) == 0)
        return -1;
    char given[1024];
    tb_overrides_describe(self, given, sizeof given);
    return tb_err_prefix(err, "with %s", given);
}

int tb_overrides_finish(const tb_overrides_t *self, tb_manifest_t *m, tb_err_t *err)
{
    if (tb_manifest_finish(m, err) == 0)
        return 0;
    return s_prefix_given(self, err);
}

char *tb_overrides_to_json(const tb_overrides_t *self)
{
    cJSON *root = cJSON_CreateObject();
    for (int i = 0; self && i < self->n; i++)
        cJSON_AddItemToObject(root, self->items[i].key, cJSON_Duplicate(self->items[i].value, 1));
    char *s = tb_json_print(root, false);
    cJSON_Delete(root);
    return s;
}
