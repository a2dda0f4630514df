/* Planet probes: the quantile tables that turn the massif and rock fields into planet ranks.
 *
 * No decision reads a statistic of a job's grid (docs/determinism.md). The massif cut and the
 * rock bands are quantiles of the PLANET, taken here from a fixed lattice of TB_UPLIFT_PROBE_NX x
 * TB_UPLIFT_PROBE_NY jittered world points over x in [0, C) and y in [0, C / 2) - a function of
 * (manifest, seed) only, identical in every region by construction (docs/traps.md, "The
 * massif threshold as a percentile of the region"). The manifest does not know the painting's
 * height, so the band is fixed at half the circumference (a 2:1 cylinder); the fields are
 * stationary, so the band only sets the sampling error, not the answer. The coordinator computes
 * the probes once per planet and ships them as JSON in every region's job spec.
 */
#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/noise.h"
#include "jobs/uplift/uplift.h"
#include "jobs/uplift/uplift_internal.h"

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile table of sorted values: entry k is the value at rank k / (LEVELS - 1), interpolated
 * linearly between order statistics. */
static void s_quantiles(const double *sorted, size_t n, double *q)
{
    for (int k = 0; k < TB_UPLIFT_PROBE_LEVELS; k++) {
        double pos = (double)k / (TB_UPLIFT_PROBE_LEVELS - 1) * (double)(n - 1);
        size_t i = (size_t)pos;
        if (i >= n - 1) {
            q[k] = sorted[n - 1];
            continue;
        }
        double frac = pos - (double)i;
        q[k] = sorted[i] + (sorted[i + 1] - sorted[i]) * frac;
    }
}

int tb_uplift_probes_compute(const tb_manifest_t *m, tb_uplift_probes_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (tb_uplift_check_manifest(m, err) != 0)
        return -1;
    tb_noise_t massif, rock;
    if (tb_uplift_noise(m, TB_SALT_MASSIF, m->massif.wavelength_snapped_km, &massif, err) != 0 ||
        tb_uplift_noise(m, TB_SALT_ROCK, m->rock.wavelength_snapped_km, &rock, err) != 0)
        return -1;
    const size_t n = (size_t)TB_UPLIFT_PROBE_NX * TB_UPLIFT_PROBE_NY;
    double *mv = tb_malloc(n * sizeof *mv, "massif probe", err);
    double *rv = tb_malloc(n * sizeof *rv, "rock probe", err);
    if (!mv || !rv) {
        free(mv);
        free(rv);
        return -1;
    }
    const double circ_m = m->circumference_km * 1000.0;
    const double dx = circ_m / TB_UPLIFT_PROBE_NX, dy = 0.5 * circ_m / TB_UPLIFT_PROBE_NY;
    const uint64_t key = tb_hash_key(m->seed, TB_SALT_PROBE, 0);
    size_t s = 0;
    for (int64_t py = 0; py < TB_UPLIFT_PROBE_NY; py++)
        for (int64_t px = 0; px < TB_UPLIFT_PROBE_NX; px++, s++) {
            /* Jittered, so no probe point sits on a noise node (where gradient noise is 0). */
            uint64_t h = tb_hash_cell(key, px, py);
            double jx = (double)(h & 0xffffffffu) * 0x1.0p-32;
            double jy = (double)(h >> 32) * 0x1.0p-32;
            double x = ((double)px + jx) * dx, y = ((double)py + jy) * dy;
            mv[s] = tb_noise_fbm(&massif, x, y, TB_UPLIFT_MASSIF_OCTAVES, TB_UPLIFT_FBM_GAIN);
            rv[s] = tb_noise_fbm(&rock, x, y, TB_UPLIFT_ROCK_OCTAVES, TB_UPLIFT_FBM_GAIN);
        }
    qsort(mv, n, sizeof *mv, s_cmp_double);
    qsort(rv, n, sizeof *rv, s_cmp_double);
    s_quantiles(mv, n, out->massif_q);
    s_quantiles(rv, n, out->rock_q);
    free(mv);
    free(rv);
    out->seed = m->seed;
    out->massif_wavelength_m = massif.spacing_m;
    out->rock_wavelength_m = rock.spacing_m;
    return 0;
}

/* ---- JSON ---- */

typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} s_sbuf_t;

static void s_put(s_sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void s_put(s_sbuf_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)n;
        char *p = realloc(b->buf, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->buf = p;
        b->cap = cap;
    }
}

static void s_put_table(s_sbuf_t *b, const char *name, const double *q)
{
    s_put(b, ",\n  \"%s\": [", name);
    for (int k = 0; k < TB_UPLIFT_PROBE_LEVELS; k++)
        s_put(b, "%s%.17g", k ? (k % 8 ? ", " : ",\n    ") : "", q[k]);
    s_put(b, "]");
}

char *tb_uplift_probes_to_json(const tb_uplift_probes_t *p)
{
    s_sbuf_t b = {malloc(32768), 0, 32768, 0};
    if (!b.buf)
        return NULL;
    b.buf[0] = '\0';
    s_put(&b, "{\n  \"version\": 1,\n  \"seed\": %llu,\n  \"levels\": %d",
          (unsigned long long)p->seed, TB_UPLIFT_PROBE_LEVELS);
    s_put(&b, ",\n  \"massif_wavelength_m\": %.17g,\n  \"rock_wavelength_m\": %.17g",
          p->massif_wavelength_m, p->rock_wavelength_m);
    s_put_table(&b, "massif_quantiles", p->massif_q);
    s_put_table(&b, "rock_quantiles", p->rock_q);
    s_put(&b, "\n}\n");
    if (b.failed) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}

static int s_number(const cJSON *root, const char *key, double *out, tb_err_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return tb_err_set(err, TB_E_FORMAT, "uplift probes: %s: expected a finite number", key);
    *out = v->valuedouble;
    return 0;
}

static int s_table(const cJSON *root, const char *key, double *q, tb_err_t *err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != TB_UPLIFT_PROBE_LEVELS)
        return tb_err_set(err, TB_E_FORMAT, "uplift probes: %s: expected an array of %d numbers",
                          key, TB_UPLIFT_PROBE_LEVELS);
    int k = 0;
    for (const cJSON *v = arr->child; v; v = v->next, k++) {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
            return tb_err_set(err, TB_E_FORMAT, "uplift probes: %s[%d]: expected a finite number",
                              key, k);
        q[k] = v->valuedouble;
        if (k > 0 && q[k] < q[k - 1])
            return tb_err_set(err, TB_E_FORMAT,
                              "uplift probes: %s[%d]: %.17g is below the entry before it; "
                              "quantiles never decrease",
                              key, k, q[k]);
    }
    return 0;
}

int tb_uplift_probes_from_json(const char *json, tb_uplift_probes_t *p, tb_err_t *err)
{
    memset(p, 0, sizeof *p);
    if (!json)
        return tb_err_set(err, TB_E_FORMAT, "uplift probes: no JSON text");
    cJSON *root = cJSON_Parse(json);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return tb_err_set(err, TB_E_FORMAT, "uplift probes: not a JSON object");
    }
    int rc = -1;
    double version = 0, seed = 0, levels = 0;
    if (s_number(root, "version", &version, err) || s_number(root, "seed", &seed, err) ||
        s_number(root, "levels", &levels, err))
        goto done;
    if (version != 1) {
        tb_err_set(err, TB_E_FORMAT, "uplift probes: version %g, this build reads version 1",
                   version);
        goto done;
    }
    if (levels != TB_UPLIFT_PROBE_LEVELS) {
        tb_err_set(err, TB_E_FORMAT, "uplift probes: levels %g, expected %d", levels,
                   TB_UPLIFT_PROBE_LEVELS);
        goto done;
    }
    if (seed < 0 || seed > 9007199254740992.0 || seed != floor(seed)) {
        tb_err_set(err, TB_E_FORMAT, "uplift probes: seed %g is not an integer in 0..2^53", seed);
        goto done;
    }
    p->seed = (uint64_t)seed;
    if (s_number(root, "massif_wavelength_m", &p->massif_wavelength_m, err) ||
        s_number(root, "rock_wavelength_m", &p->rock_wavelength_m, err) ||
        s_table(root, "massif_quantiles", p->massif_q, err) ||
        s_table(root, "rock_quantiles", p->rock_q, err))
        goto done;
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}
