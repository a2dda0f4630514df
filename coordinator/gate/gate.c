/* The gates file, the statistics a gate names, and the check; see gate.h. */
#include "coordinator/gate/gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"

#define S_MAX_GATES_BYTES ((size_t)1 << 20)

/* A statistic: where it sits in the statistics JSON. cls NULL: top level; "all_land": the all_land
 * object; otherwise the element of "classes" with that name. key2 NULL: key is the value. */
typedef struct {
    const char *name, *cls, *key, *key2, *what;
} s_metric_t;

#define S_CLASS_METRICS(c, label)                                                                  \
    {c "_land_share", c, "land_share", NULL, "share of all land in " label},                       \
        {c "_slope_median_deg", c, "slope_median_deg", NULL,                                       \
         "median slope of " label ", degrees"},                                                    \
        {c "_slope_p90_deg", c, "slope_p90_deg", NULL,                                             \
         "90th percentile slope of " label ", degrees"},                                           \
        {c "_slope_over50_share", c, "slope_over_50_share", NULL,                                  \
         "share of " label " steeper than 50 degrees"},                                            \
        {c "_relief_median_m", c, "relief_median_m", NULL, "median local relief of " label ", m"}, \
        {c "_relief_p90_m", c, "relief_p90_m", NULL, "90th percentile relief of " label ", m"},    \
        {c "_near_repose_share", c, "near_repose_share", NULL,                                     \
         "share of " label " within 2 degrees of the repose angle"},                               \
        {c "_hypsometric_integral", c, "hypsometric_integral", NULL,                               \
         "hypsometric integral of " label},                                                        \
    {                                                                                              \
        c "_drainage_density_per_km", c, "drainage_density_per_km", NULL,                          \
            "drainage density of " label ", /km"                                                   \
    }

static const s_metric_t s_metrics[] = {
    {"slope_area_exponent", NULL, "slope_area", "exponent",
     "exponent of the slope-area fit over all land (expect -m/n)"},
    {"slope_area_r2", NULL, "slope_area", "r2", "R2 of the slope-area fit"},
    {"slope_area_bins", NULL, "slope_area", "bins", "area bins the slope-area fit used"},
    {"slope_area_channels_exponent", NULL, "slope_area_channels", "exponent",
     "exponent of the slope-area fit over channel cells (expect -m/n)"},
    {"slope_area_channels_r2", NULL, "slope_area_channels", "r2",
     "R2 of the channel-cell slope-area fit"},
    {"slope_area_channels_bins", NULL, "slope_area_channels", "bins",
     "area bins the channel-cell fit used"},
    {"drainage_density_per_km", NULL, "drainage_density_per_km", NULL,
     "channel length per land area at a 1 km2 channel threshold, /km"},
    {"hypsometric_integral", NULL, "hypsometric_integral", NULL,
     "(mean - min) / (max - min) of land elevation"},
    {"slope_median_deg", NULL, "slopes", "median_deg", "median slope of all land, degrees"},
    {"slope_p90_deg", NULL, "slopes", "p90_deg", "90th percentile slope of all land, degrees"},
    {"slope_under15_share", NULL, "slopes", "under_15_share", "share of land under 15 degrees"},
    {"slope_under30_share", NULL, "slopes", "under_30_share", "share of land under 30 degrees"},
    {"slope_over50_share", NULL, "slopes", "over_50_share", "share of land over 50 degrees"},
    {"clip_fraction", NULL, "elevation", "clip_fraction",
     "share of the planet's cells outside elevation_m (clipped in the 16-bit heightmap)"},
    {"elevation_min_m", NULL, "elevation", "min_m", "lowest cell of the planet, m"},
    {"elevation_max_m", NULL, "elevation", "max_m", "highest cell of the planet, m"},
    {"land_cells", NULL, "land_cells", NULL, "land cells counted"},
    {"land_area_km2", NULL, "land_area_km2", NULL, "land area counted, km2"},
    {"edge_cells", NULL, "edge_cells", NULL,
     "land cells whose statistics window crossed an inner box edge (0 in a sound bake)"},
    S_CLASS_METRICS("plain", "the plain class"),
    S_CLASS_METRICS("rolling", "the rolling class"),
    S_CLASS_METRICS("mountain", "the mountain class"),
    S_CLASS_METRICS("all_land", "all land"),
};
#define S_NMETRICS ((int)(sizeof s_metrics / sizeof s_metrics[0]))

/* The statistics of a painted legend class, named "painted.CLASS.STAT" (the class's name as the
 * legend spells it; the element of "painted_classes" with that name). name is the template listed
 * by --list-metrics; the gate's own name carries the class. */
#define S_PAINTED_PREFIX "painted."
static const s_metric_t s_painted[] = {
    {"painted.CLASS.land_share", NULL, "land_share", NULL, "share of all land painted CLASS"},
    {"painted.CLASS.slope_median_deg", NULL, "slope_median_deg", NULL,
     "median slope of the land painted CLASS, degrees"},
    {"painted.CLASS.slope_p90_deg", NULL, "slope_p90_deg", NULL,
     "90th percentile slope of the land painted CLASS, degrees"},
    {"painted.CLASS.slope_under15_share", NULL, "slope_under_15_share", NULL,
     "share of the land painted CLASS under 15 degrees"},
    {"painted.CLASS.slope_over50_share", NULL, "slope_over_50_share", NULL,
     "share of the land painted CLASS over 50 degrees"},
    {"painted.CLASS.near_repose_share", NULL, "near_repose_share", NULL,
     "share of the land painted CLASS within 2 degrees of the repose angle"},
    {"painted.CLASS.relief_median_m", NULL, "relief_median_m", NULL,
     "median local relief of the land painted CLASS, m"},
    {"painted.CLASS.relief_p90_m", NULL, "relief_p90_m", NULL,
     "90th percentile relief of the land painted CLASS, m"},
    {"painted.CLASS.slope_area_exponent", NULL, "slope_area", "exponent",
     "slope-area exponent of the land painted CLASS (area bins from fit_min_area_m2)"},
    {"painted.CLASS.slope_area_r2", NULL, "slope_area", "r2",
     "R2 of the slope-area fit of the land painted CLASS"},
    {"painted.CLASS.slope_area_channels_exponent", NULL, "slope_area_channels", "exponent",
     "channel-cell slope-area exponent of the land painted CLASS"},
    {"painted.CLASS.slope_area_channels_r2", NULL, "slope_area_channels", "r2",
     "R2 of the channel-cell slope-area fit of the land painted CLASS"},
};
#define S_NPAINTED ((int)(sizeof s_painted / sizeof s_painted[0]))

int tb_gate_metric_count(void)
{
    return S_NMETRICS + S_NPAINTED;
}

static const s_metric_t *s_metric(int i)
{
    return i >= 0 && i < S_NMETRICS                         ? &s_metrics[i]
           : i >= S_NMETRICS && i < S_NMETRICS + S_NPAINTED ? &s_painted[i - S_NMETRICS]
                                                            : NULL;
}

const char *tb_gate_metric_name(int i)
{
    return s_metric(i) ? s_metric(i)->name : NULL;
}

const char *tb_gate_metric_what(int i)
{
    return s_metric(i) ? s_metric(i)->what : NULL;
}

/* Splits "painted.CLASS.STAT" into the class (into cls) and the index of STAT; -1 when name is not
 * of that form. */
static int s_painted_find(const char *name, char *cls, size_t n)
{
    size_t plen = strlen(S_PAINTED_PREFIX);
    if (strncmp(name, S_PAINTED_PREFIX, plen) != 0)
        return -1;
    const char *c = name + plen, *dot = strrchr(c, '.');
    if (!dot || dot == c || (size_t)(dot - c) >= n)
        return -1;
    for (int k = 0; k < S_NPAINTED; k++)
        if (strcmp(strrchr(s_painted[k].name, '.') + 1, dot + 1) == 0) {
            memcpy(cls, c, (size_t)(dot - c));
            cls[dot - c] = '\0';
            return S_NMETRICS + k;
        }
    return -1;
}

int tb_gate_metric_find(const char *name)
{
    for (int i = 0; i < S_NMETRICS; i++)
        if (strcmp(s_metrics[i].name, name) == 0)
            return i;
    char cls[TB_GATE_NAME_MAX];
    return s_painted_find(name, cls, sizeof cls);
}

/* The defaults: measured on the demo planet (docs/gate.md, "The defaults and why"). */
static const char s_defaults[] =
    "{\n"
    "  \"description\": \"terrain gate built-in gates: the 25 km demo planet, seeds 7, 9342, "
    "67914, "
    "measured at 50 to 400 steps (docs/gate.md)\",\n"
    "  \"gates\": {\n"
    "    \"slope_area_exponent\": {\"min\": -0.65, \"max\": -0.15,\n"
    "      \"why\": \"stream power predicts -m/n = -0.5; measured -0.22 .. -0.39, without incision "
    "-0.36 .. -1.29\"},\n"
    "    \"slope_area_r2\": {\"min\": 0.65,\n"
    "      \"why\": \"a river network, not scatter; measured 0.75 .. 0.97, without incision 0.12 "
    ".. "
    "0.68\"},\n"
    "    \"slope_area_bins\": {\"min\": 10,\n"
    "      \"why\": \"fewer bins cannot judge a fit (docs/statistics.md); measured 37 .. "
    "40\"},\n"
    "    \"drainage_density_per_km\": {\"min\": 0.4,\n"
    "      \"why\": \"the rivers that drain 1 km2 are there; measured 0.46 .. 0.52, without "
    "incision 0.21 .. 0.36\"},\n"
    "    \"plain_slope_median_deg\": {\"max\": 1.5,\n"
    "      \"why\": \"the plains are plains (a degree or less, docs/gate.md); measured 0.4 .. "
    "1.0\"},\n"
    "    \"plain_slope_p90_deg\": {\"max\": 5,\n"
    "      \"why\": \"and stay plains at their steep end; measured 1.5 .. 3.6, without incision "
    "up to 6.4\"},\n"
    "    \"slope_over50_share\": {\"max\": 0.005,\n"
    "      \"why\": \"no loose ground stands over 50 degrees; measured 0\"},\n"
    "    \"clip_fraction\": {\"max\": 0.001,\n"
    "      \"why\": \"a clip over 0.1 % is a failed bake (docs/traps.md); measured "
    "0\"},\n"
    "    \"edge_cells\": {\"max\": 0,\n"
    "      \"why\": \"every region box held its statistics halo\"},\n"
    "    \"mountain_land_share\": {\"min\": 0.03,\n"
    "      \"why\": \"the verdict has a mountain line (0.5 mm/yr and up); measured 0.072 .. "
    "0.098\"},\n"
    "    \"painted.range.slope_median_deg\": {\"min\": 12, \"max\": 32,\n"
    "      \"why\": \"the steep class is mountain ground (real ranges 20 .. 25); measured 16.9 .. "
    "19.6 at 100 steps, 21 .. 24 at 400, without incision 8.2\"},\n"
    "    \"painted.range.slope_under15_share\": {\"min\": 0.15, \"max\": 0.55,\n"
    "      \"why\": \"valley floors and saddles, not a uniform mass (real: about a quarter); "
    "measured 0.20 .. 0.42, without incision 0.71\"},\n"
    "    \"painted.range.near_repose_share\": {\"max\": 0.1,\n"
    "      \"why\": \"a shoulder at the repose angle, not a spike (real: under 0.07); measured 0 "
    ".. "
    "0.05, the clamp-shaped trial 0.17\"},\n"
    "    \"painted.range.relief_median_m\": {\"min\": 100,\n"
    "      \"why\": \"a range has relief over 500 m (real: about 200 m); measured 121 .. 157\"},\n"
    "    \"painted.range.slope_area_exponent\": {\"min\": -0.8, \"max\": -0.3,\n"
    "      \"why\": \"the range's rivers obey stream power (-m/n = -0.5); measured -0.34 .. -0.63, "
    "without incision -1.11\"},\n"
    "    \"painted.range.slope_area_r2\": {\"min\": 0.75,\n"
    "      \"why\": \"a river network, not scatter; measured 0.87 .. 0.99, without incision "
    "0.63\"},\n"
    "    \"painted.range.slope_area_channels_exponent\": {\"min\": -0.65, \"max\": -0.35,\n"
    "      \"why\": \"the range's channels obey stream power (-m/n = -0.5; docs/statistics.md, "
    "the broken-stick break); measured -0.44 .. -0.57 at 400 steps, -0.40 .. -0.60 at 100, "
    "without incision -0.68\"},\n"
    "    \"painted.range.slope_area_channels_r2\": {\"min\": 0.9,\n"
    "      \"why\": \"the channel curve is a power law; measured 0.94 .. 0.99, without incision "
    "0.64\"}\n"
    "  }\n"
    "}\n";

const char *tb_gate_defaults_json(void)
{
    return s_defaults;
}

static int s_number(const cJSON *v, const char *src, const char *path, double *out, tb_err_t *err)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return tb_err_set(err, TB_E_INVALID, "%s: %s: expected a finite number", src, path);
    *out = v->valuedouble;
    return 0;
}

/* Refuses a key that appears twice in one object (cJSON keeps both; which one wins is an accident).
 */
static int s_no_duplicates(const cJSON *obj, const char *src, const char *where, tb_err_t *err)
{
    for (const cJSON *a = obj->child; a; a = a->next)
        for (const cJSON *b = a->next; b; b = b->next)
            if (strcmp(a->string, b->string) == 0)
                return tb_err_set(err, TB_E_INVALID, "%s: %s%s%s: given twice", src, where,
                                  where[0] ? "." : "", a->string);
    return 0;
}

static int s_parse_gate(const cJSON *item, const char *src, tb_gate_t *g, tb_err_t *err)
{
    char path[160];
    snprintf(path, sizeof path, "gates.%s", item->string);
    if (!cJSON_IsObject(item))
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %s: expected an object such as {\"min\": 0.3} or {\"max\": 0.001}",
                          src, path);
    if (s_no_duplicates(item, src, path, err) != 0)
        return -1;
    for (const cJSON *k = item->child; k; k = k->next) {
        char kp[240];
        snprintf(kp, sizeof kp, "%s.%s", path, k->string);
        if (strcmp(k->string, "min") == 0) {
            if (s_number(k, src, kp, &g->min, err) != 0)
                return -1;
            g->has_min = true;
        } else if (strcmp(k->string, "max") == 0) {
            if (s_number(k, src, kp, &g->max, err) != 0)
                return -1;
            g->has_max = true;
        } else if (strcmp(k->string, "max_change") == 0) {
            if (s_number(k, src, kp, &g->max_change, err) != 0)
                return -1;
            if (!(g->max_change >= 0))
                return tb_err_set(err, TB_E_INVALID, "%s: %s: %g, expected a change >= 0", src, kp,
                                  g->max_change);
            g->has_max_change = true;
        } else if (strcmp(k->string, "why") == 0) {
            if (!cJSON_IsString(k))
                return tb_err_set(err, TB_E_INVALID, "%s: %s: expected a string", src, kp);
        } else {
            return tb_err_set(err, TB_E_UNKNOWN_KEY,
                              "%s: %s: unknown key (a gate has min, max, max_change and why)", src,
                              kp);
        }
    }
    if (!g->has_min && !g->has_max)
        return tb_err_set(err, TB_E_INVALID, "%s: %s: a gate needs \"min\", \"max\" or both", src,
                          path);
    if (g->has_min && g->has_max && !(g->min <= g->max))
        return tb_err_set(err, TB_E_INVALID, "%s: %s: min %g is above max %g", src, path, g->min,
                          g->max);
    return 0;
}

int tb_gates_parse(const char *text, const char *name, tb_gates_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->source, sizeof out->source, "%s", name);
    cJSON *root = cJSON_Parse(text);
    int rc = -1;
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= text ? (size_t)(at - text) : 0;
        return tb_err_set(err, TB_E_FORMAT, "%s: not valid JSON (near byte %zu)", name, off);
    }
    if (!cJSON_IsObject(root)) {
        tb_err_set(err, TB_E_INVALID, "%s: expected a JSON object {\"gates\": {...}}", name);
        goto done;
    }
    if (s_no_duplicates(root, name, "", err) != 0)
        goto done;
    const cJSON *gates = NULL;
    for (const cJSON *k = root->child; k; k = k->next) {
        if (strcmp(k->string, "gates") == 0) {
            gates = k;
        } else if (strcmp(k->string, "description") == 0) {
            if (!cJSON_IsString(k)) {
                tb_err_set(err, TB_E_INVALID, "%s: description: expected a string", name);
                goto done;
            }
        } else {
            tb_err_set(err, TB_E_UNKNOWN_KEY,
                       "%s: %s: unknown key (a gates file has \"gates\" and \"description\")", name,
                       k->string);
            goto done;
        }
    }
    if (!cJSON_IsObject(gates) || !gates->child) {
        tb_err_set(err, TB_E_INVALID, "%s: gates: expected a non-empty object of gates", name);
        goto done;
    }
    if (s_no_duplicates(gates, name, "gates", err) != 0)
        goto done;
    for (const cJSON *item = gates->child; item; item = item->next) {
        int metric = tb_gate_metric_find(item->string);
        if (metric < 0) {
            tb_err_set(err, TB_E_UNKNOWN_KEY,
                       "%s: gates.%s: unknown statistic (`terrain gate --list-metrics` lists them)",
                       name, item->string);
            goto done;
        }
        if (out->n >= TB_GATE_MAX) {
            tb_err_set(err, TB_E_INVALID, "%s: gates: more than %d gates", name, TB_GATE_MAX);
            goto done;
        }
        tb_gate_t *g = &out->gate[out->n];
        memset(g, 0, sizeof *g);
        snprintf(g->name, sizeof g->name, "%s", item->string);
        g->metric = metric;
        if (s_parse_gate(item, name, g, err) != 0)
            goto done;
        out->n++;
    }
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

int tb_gates_load(const char *path, tb_gates_t *out, tb_err_t *err)
{
    if (!path)
        return tb_gates_parse(s_defaults, "(built-in defaults)", out, err);
    char *text;
    size_t bytes;
    if (tb_fs_read_all(path, S_MAX_GATES_BYTES, &text, &bytes, err) != 0)
        return -1;
    int rc = tb_gates_parse(text, path, out, err);
    free(text);
    return rc;
}

/* A key (and key2) of object o, NaN when absent or null; a class with no land has nothing to
 * measure, so its shares are not 0. */
static double s_class_value(const cJSON *o, const s_metric_t *m)
{
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, m->key) : NULL;
    if (m->key2)
        v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, m->key2) : NULL;
    if (strcmp(m->key, "land_share") != 0) {
        const cJSON *lc =
            cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "land_cells") : NULL;
        if (!cJSON_IsNumber(lc) || lc->valuedouble <= 0)
            return NAN;
    }
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

double tb_gate_value(const cJSON *st, const tb_gate_t *g)
{
    if (g->metric < S_NMETRICS)
        return tb_gate_metric_value(st, g->metric);
    char cls[TB_GATE_NAME_MAX];
    int metric = s_painted_find(g->name, cls, sizeof cls);
    if (metric < 0 || !cJSON_IsObject(st))
        return NAN;
    const cJSON *classes = cJSON_GetObjectItemCaseSensitive(st, "painted_classes"), *c, *o = NULL;
    cJSON_ArrayForEach(c, classes)
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
        if (cJSON_IsString(nm) && strcmp(nm->valuestring, cls) == 0)
            o = c;
    }
    return o ? s_class_value(o, &s_painted[metric - S_NMETRICS]) : NAN;
}

double tb_gate_metric_value(const cJSON *st, int metric)
{
    if (metric < 0 || metric >= S_NMETRICS || !cJSON_IsObject(st))
        return NAN;
    const s_metric_t *m = &s_metrics[metric];
    const cJSON *o = st;
    if (m->cls && strcmp(m->cls, "all_land") == 0) {
        o = cJSON_GetObjectItemCaseSensitive(st, "all_land");
    } else if (m->cls) {
        const cJSON *classes = cJSON_GetObjectItemCaseSensitive(st, "classes"), *c;
        o = NULL;
        cJSON_ArrayForEach(c, classes)
        {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
            if (cJSON_IsString(nm) && strcmp(nm->valuestring, m->cls) == 0)
                o = c;
        }
    }
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, m->key) : NULL;
    if (m->key2)
        v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, m->key2) : NULL;
    /* A class with no land has nothing to measure; its shares are not 0. */
    if (m->cls && strcmp(m->key, "land_share") != 0) {
        const cJSON *lc =
            cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "land_cells") : NULL;
        if (!cJSON_IsNumber(lc) || lc->valuedouble <= 0)
            return NAN;
    }
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

void tb_gate_value_text(const tb_gate_t *g, double v, char *out, size_t n)
{
    (void)g;
    if (!isfinite(v))
        snprintf(out, n, "none");
    else if (v == floor(v) && fabs(v) < 1e9)
        snprintf(out, n, "%.0f", v);
    else
        snprintf(out, n, "%.4g", v);
}

void tb_gate_bound_text(const tb_gate_t *g, char *out, size_t n)
{
    char lo[32], hi[32];
    tb_gate_value_text(g, g->min, lo, sizeof lo);
    tb_gate_value_text(g, g->max, hi, sizeof hi);
    if (g->has_min && g->has_max)
        snprintf(out, n, "%s .. %s", lo, hi);
    else if (g->has_min)
        snprintf(out, n, ">= %s", lo);
    else
        snprintf(out, n, "<= %s", hi);
}

void tb_gate_check(const tb_gate_t *g, double value, double baseline, tb_gate_check_t *out)
{
    memset(out, 0, sizeof *out);
    out->value = value;
    out->baseline = baseline;
    char bound[80], v[32];
    tb_gate_bound_text(g, bound, sizeof bound);
    tb_gate_value_text(g, value, v, sizeof v);
    if (!isfinite(value)) {
        out->status = TB_GATE_FAIL;
        snprintf(out->message, sizeof out->message,
                 "%s has no value (nothing to measure: too few fit bins, or no land in the class); "
                 "bound %s",
                 g->name, bound);
        return;
    }
    if ((g->has_min && !(value >= g->min)) || (g->has_max && !(value <= g->max))) {
        out->status = TB_GATE_FAIL;
        snprintf(out->message, sizeof out->message, "%s = %s, outside the bound %s", g->name, v,
                 bound);
        return;
    }
    if (g->has_max_change && isfinite(baseline) && fabs(value - baseline) > g->max_change) {
        char b[32], c[32];
        tb_gate_value_text(g, baseline, b, sizeof b);
        snprintf(c, sizeof c, "%+.4g", value - baseline);
        out->status = TB_GATE_FAIL;
        snprintf(out->message, sizeof out->message,
                 "%s = %s changed by %s from the baseline %s; at most %g allowed", g->name, v, c, b,
                 g->max_change);
        return;
    }
    out->status = TB_GATE_PASS;
}

void tb_gate_xml_escape(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&apos;", out);
            break;
        default:
            if (*p >= 0x20 || *p == '\t' || *p == '\n' || *p == '\r')
                fputc(*p, out);
        }
    }
}
