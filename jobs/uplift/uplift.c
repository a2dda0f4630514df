/* tb_uplift_build: class rates with massifs, blended across painted edges, plus faults; K with the
 * rock field. See uplift.h for the model and docs/uplift.md for the numbers.
 *
 * The class blend is the one neighbourhood operation. A painted edge is a step in the class raster,
 * and a step in U is a straight scarp the solve cannot undo (docs/traps.md), so the class
 * NUMBERS (not the fabric) are blended: at a land cell p,
 *     U(p) = sum_c N_c(p) U_c(p) / sum_c N_c(p),   kmult(p) = sum_c N_c(p) k_mult_c / sum_c N_c(p),
 * where N_c counts the land cells of class c under a separable kernel made of three box sums of
 * 2r + 1 cells in x and three in y (a quadratic B-spline, C1, half-width R = 3r), and U_c(p) is
 * class c's rate with its massif cut evaluated at p itself. Ocean cells count for nothing, so where
 * the land ends does not decide how fast it rises (docs/uplift.md). The counts are integers summed
 * with running sums, exact in any order, so they are the same in every box whose cells cover p's
 * R-neighbourhood - which a region box does when R <= margin - 1 cell (checked). The kernel's
 * centre weight is positive, so a land cell always counts itself and the sum is never zero.
 *
 * Work is done in strips of TB_STRIP columns over the box's full height: the x sums read a halo of
 * R columns either side (looked up by lattice column, so a full-width frame wraps), the y sums run
 * down the strip. Scratch is about 60 bytes per strip cell, nothing per box cell.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/noise.h"
#include "jobs/uplift/fbm_window.h"
#include "jobs/uplift/uplift.h"
#include "jobs/uplift/uplift_internal.h"

#define TB_STRIP 128

int tb_uplift_noise(const tb_manifest_t *m, uint32_t salt, double wavelength_km, tb_noise_t *out,
                    tb_err_t *err)
{
    return tb_noise_init(out, m->seed, salt, m->circumference_km * 1000.0, wavelength_km * 1000.0,
                         err);
}

int tb_uplift_check_manifest(const tb_manifest_t *m, tb_err_t *err)
{
    if (!m || m->planet_w <= 0 || !(m->massif.wavelength_snapped_km > 0))
        return tb_err_set(err, TB_E_INTERNAL, "uplift: manifest not finished (tb_manifest_finish)");
    int64_t r_cells = tb_uplift_blend_radius_cells(m->cell_m);
    double margin_cells = floor(m->regions.ocean_margin_km * 1000.0 / m->cell_m + 1e-9);
    if ((double)r_cells > margin_cells - 1)
        return tb_err_set(
            err, TB_E_INVALID,
            "%s: regions.ocean_margin_km %g is %.0f cells of %g m; the uplift blend "
            "reads %lld cells round each land cell and needs a margin of at least %lld "
            "cells (%g km)",
            m->source, m->regions.ocean_margin_km, margin_cells, m->cell_m, (long long)r_cells,
            (long long)(r_cells + 1), (double)(r_cells + 1) * m->cell_m / 1000.0);
    return 0;
}

int tb_uplift_check_frame(const tb_manifest_t *m, const tb_frame_t *box, tb_err_t *err)
{
    if (!tb_frame_valid(box))
        return tb_err_set(err, TB_E_INTERNAL, "uplift: box has no place on the planet");
    if (box->lattice_w != m->planet_w || box->cell_m != m->cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "uplift: box lies on a lattice %lld cells around at %g m, the planet is "
                          "%lld cells at %g m",
                          (long long)box->lattice_w, box->cell_m, (long long)m->planet_w,
                          m->cell_m);
    return 0;
}

int tb_uplift_probes_check(const tb_manifest_t *m, const tb_uplift_probes_t *p, tb_err_t *err)
{
    tb_noise_t massif, rock;
    if (tb_uplift_noise(m, TB_SALT_MASSIF, m->massif.wavelength_snapped_km, &massif, err) != 0 ||
        tb_uplift_noise(m, TB_SALT_ROCK, m->rock.wavelength_snapped_km, &rock, err) != 0)
        return -1;
    if (p->seed != m->seed || p->massif_wavelength_m != massif.spacing_m ||
        p->rock_wavelength_m != rock.spacing_m)
        return tb_err_set(err, TB_E_INVALID,
                          "uplift: probes were taken for seed %llu, massif %.17g m, rock %.17g m; "
                          "this planet is seed %llu, massif %.17g m, rock %.17g m",
                          (unsigned long long)p->seed, p->massif_wavelength_m, p->rock_wavelength_m,
                          (unsigned long long)m->seed, massif.spacing_m, rock.spacing_m);
    return 0;
}

/* Per class, the numbers the blend needs, in m/yr. */
typedef struct {
    bool land, present;
    double floor_m_yr, peak_m_yr, fraction, k_mult;
} s_class_t;

/* Everything one strip needs; buffers sized for TB_STRIP columns by the box height. */
typedef struct {
    const tb_manifest_t *m;
    const tb_uplift_probes_t *p;
    const tb_frame_t *box;
    const uint8_t *classes;
    s_class_t cls[TB_MAX_CLASSES];
    tb_noise_t massif, rock;
    bool need_massif;
    double rock_mult[TB_UPLIFT_ROCK_TYPES];
    tb_uplift_ranker_t rank_massif, rank_rock;
    int64_t r, R;           /* box radius, blend half-width (3r) */
    int64_t *colmap;        /* box column of halo column k - R, or -1: w + 2R entries */
    int32_t *line, *line2;  /* one row of x sums, TB_STRIP + 2R */
    int32_t *tx;            /* x-summed indicator, h x sw */
    int64_t *ya, *yb, *acc; /* y sums, h x sw; acc is one row */
    double *num_u, *num_k, *rank_m, *mult_r;
    int64_t *den;
} s_blend_t;

/* One box sum of 2r+1 along a line: out[i] = in[i] + ... + in[i + 2r], i < n - 2r. */
static void s_box_line(const int32_t *in, int32_t *out, int64_t n, int64_t r)
{
    int64_t span = 2 * r + 1, m = n - 2 * r;
    int32_t s = 0;
    for (int64_t i = 0; i < span; i++)
        s += in[i];
    out[0] = s;
    for (int64_t i = 1; i < m; i++) {
        s += in[i + span - 1] - in[i - 1];
        out[i] = s;
    }
}

/* One box sum of 2r+1 down the columns of an h x sw block (zero outside rows 0..h-1). */
static void s_box_down(const int64_t *in, int64_t *out, int64_t *acc, int64_t h, int64_t sw,
                       int64_t r)
{
    memset(acc, 0, (size_t)sw * sizeof *acc);
    for (int64_t j = 0; j < r && j < h; j++)
        for (int64_t i = 0; i < sw; i++)
            acc[i] += in[j * sw + i];
    for (int64_t j = 0; j < h; j++) {
        if (j + r < h)
            for (int64_t i = 0; i < sw; i++)
                acc[i] += in[(j + r) * sw + i];
        memcpy(out + j * sw, acc, (size_t)sw * sizeof *acc);
        if (j - r >= 0)
            for (int64_t i = 0; i < sw; i++)
                acc[i] -= in[(j - r) * sw + i];
    }
}

/* N_c over one strip (columns c0..c0+sw-1) into b->ya; returns false when class c is nowhere
 * within the strip's neighbourhood. */
static bool s_class_counts(s_blend_t *b, int c, int64_t c0, int64_t sw)
{
    const int64_t w = b->box->w, h = b->box->h, r = b->r, R = b->R, n = sw + 2 * R;
    bool any = false;
    for (int64_t j = 0; j < h; j++) {
        const uint8_t *row = b->classes + (size_t)j * (size_t)w;
        for (int64_t k = 0; k < n; k++) {
            int64_t col = b->colmap[c0 + k];
            b->line[k] = col >= 0 && row[col] == c;
        }
        s_box_line(b->line, b->line2, n, r);
        s_box_line(b->line2, b->line, n - 2 * r, r);
        s_box_line(b->line, b->line2, n - 4 * r, r);
        int32_t *dst = b->tx + j * sw;
        for (int64_t i = 0; i < sw; i++) {
            dst[i] = b->line2[i];
            any |= dst[i] != 0;
        }
    }
    if (!any)
        return false;
    for (int64_t q = 0; q < h * sw; q++)
        b->yb[q] = b->tx[q];
    s_box_down(b->yb, b->ya, b->acc, h, sw, r);
    s_box_down(b->ya, b->yb, b->acc, h, sw, r);
    s_box_down(b->yb, b->ya, b->acc, h, sw, r);
    return true;
}

static int s_strip(s_blend_t *b, int64_t c0, int64_t sw, float *uplift, float *k_out, tb_err_t *err)
{
    const int64_t w = b->box->w, h = b->box->h;
    const double k0 = b->m->solve.k;
    bool any_land = false;
    for (int64_t j = 0; j < h && !any_land; j++)
        for (int64_t i = 0; i < sw && !any_land; i++)
            any_land = b->cls[b->classes[(size_t)j * (size_t)w + (size_t)(c0 + i)]].land;
    if (!any_land) {
        for (int64_t j = 0; j < h; j++)
            for (int64_t i = 0; i < sw; i++) {
                size_t q = (size_t)j * (size_t)w + (size_t)(c0 + i);
                uplift[q] = 0;
                k_out[q] = (float)k0;
            }
        return 0;
    }
    /* Pointwise fields at land cells: massif rank and rock multiplier. */
    tb_fbm_window_t wm = {0}, wr = {0};
    if ((b->need_massif &&
         tb_fbm_window_init(&wm, &b->massif, TB_UPLIFT_MASSIF_OCTAVES, TB_UPLIFT_FBM_GAIN, b->box,
                            c0, c0 + sw, 0, h, err)) ||
        tb_fbm_window_init(&wr, &b->rock, TB_UPLIFT_ROCK_OCTAVES, TB_UPLIFT_FBM_GAIN, b->box, c0,
                           c0 + sw, 0, h, err)) {
        tb_fbm_window_free(&wm);
        return -1;
    }
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < sw; i++) {
            size_t q = (size_t)j * (size_t)w + (size_t)(c0 + i), s = (size_t)(j * sw + i);
            if (!b->cls[b->classes[q]].land)
                continue;
            b->rank_m[s] = b->need_massif ? tb_uplift_ranker_rank(&b->rank_massif,
                                                                  tb_fbm_window_eval(&wm, i, j))
                                          : 0;
            b->mult_r[s] = tb_uplift_rock_mult_of(
                b->rock_mult, b->m->rock.softness,
                tb_uplift_ranker_rank(&b->rank_rock, tb_fbm_window_eval(&wr, i, j)));
        }
    tb_fbm_window_free(&wm);
    tb_fbm_window_free(&wr);
    /* The blend, class by class in legend order (the float sums' fixed order). */
    size_t cells = (size_t)(h * sw);
    memset(b->num_u, 0, cells * sizeof *b->num_u);
    memset(b->num_k, 0, cells * sizeof *b->num_k);
    memset(b->den, 0, cells * sizeof *b->den);
    for (int c = 0; c < b->m->legend.n_classes; c++) {
        const s_class_t *sc = &b->cls[c];
        if (!sc->land || !sc->present || !s_class_counts(b, c, c0, sw))
            continue;
        for (int64_t j = 0; j < h; j++)
            for (int64_t i = 0; i < sw; i++) {
                size_t s = (size_t)(j * sw + i);
                int64_t nc = b->ya[s];
                if (nc == 0 || !b->cls[b->classes[(size_t)j * (size_t)w + (size_t)(c0 + i)]].land)
                    continue;
                double u_c =
                    sc->floor_m_yr + (sc->peak_m_yr - sc->floor_m_yr) *
                                         tb_uplift_massif_weight(b->rank_m[s], sc->fraction);
                b->num_u[s] += (double)nc * u_c;
                b->num_k[s] += (double)nc * sc->k_mult;
                b->den[s] += nc;
            }
    }
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < sw; i++) {
            size_t q = (size_t)j * (size_t)w + (size_t)(c0 + i), s = (size_t)(j * sw + i);
            if (!b->cls[b->classes[q]].land) {
                uplift[q] = 0;
                k_out[q] = (float)k0;
                continue;
            }
            if (b->den[s] <= 0)
                return tb_err_set(err, TB_E_INTERNAL,
                                  "uplift: land cell (%lld, %lld) counts no land",
                                  (long long)tb_frame_lattice_x(b->box, c0 + i),
                                  (long long)tb_frame_lattice_y(b->box, j));
            double den = (double)b->den[s];
            double u = b->num_u[s] / den + (double)uplift[q]; /* uplift holds the fault throw */
            uplift[q] = (float)(u > 0 ? u : 0);
            k_out[q] = (float)(k0 * (b->num_k[s] / den) * b->mult_r[s]);
        }
    return 0;
}

static void s_blend_free(s_blend_t *b)
{
    free(b->colmap);
    free(b->line);
    free(b->line2);
    free(b->tx);
    free(b->ya);
    free(b->yb);
    free(b->acc);
    free(b->num_u);
    free(b->num_k);
    free(b->rank_m);
    free(b->mult_r);
    free(b->den);
}

static int s_blend_init(s_blend_t *b, const tb_manifest_t *m, const tb_uplift_probes_t *p,
                        const tb_frame_t *box, const uint8_t *classes, tb_err_t *err)
{
    memset(b, 0, sizeof *b);
    b->m = m;
    b->p = p;
    b->box = box;
    b->classes = classes;
    for (int c = 0; c < m->legend.n_classes; c++) {
        const tb_class_t *lc = &m->legend.classes[c];
        s_class_t *sc = &b->cls[c];
        sc->land = lc->kind == TB_CLASS_LAND;
        sc->peak_m_yr = lc->uplift_mm_yr * 1e-3;
        sc->floor_m_yr = lc->massif_floor_mm_yr * 1e-3;
        sc->fraction = lc->massif_fraction;
        sc->k_mult = lc->k_mult;
        b->need_massif |=
            sc->land && sc->fraction > 0 && sc->fraction < 1 && sc->floor_m_yr != sc->peak_m_yr;
    }
    const size_t cells = (size_t)box->w * (size_t)box->h;
    for (size_t q = 0; q < cells; q++) {
        uint8_t c = classes[q];
        if (c >= m->legend.n_classes) {
            int64_t i = (int64_t)(q % (size_t)box->w), j = (int64_t)(q / (size_t)box->w);
            return tb_err_set(err, TB_E_INVALID,
                              "uplift: class raster cell (%lld, %lld) (lattice %lld, %lld) holds "
                              "class %d; the legend has %d classes",
                              (long long)i, (long long)j, (long long)tb_frame_lattice_x(box, i),
                              (long long)tb_frame_lattice_y(box, j), c, m->legend.n_classes);
        }
        b->cls[c].present = true;
    }
    if (tb_uplift_noise(m, TB_SALT_MASSIF, m->massif.wavelength_snapped_km, &b->massif, err) != 0 ||
        tb_uplift_noise(m, TB_SALT_ROCK, m->rock.wavelength_snapped_km, &b->rock, err) != 0)
        return -1;
    tb_uplift_rock_bands(m, b->rock_mult);
    tb_uplift_ranker_init(&b->rank_massif, p->massif_q);
    tb_uplift_ranker_init(&b->rank_rock, p->rock_q);
    b->R = tb_uplift_blend_radius_cells(box->cell_m);
    b->r = b->R / 3;
    const int64_t w = box->w, h = box->h, R = b->R, sw = w < TB_STRIP ? w : TB_STRIP;
    b->colmap = tb_malloc((size_t)(w + 2 * R) * sizeof *b->colmap, "uplift column map", err);
    b->line = tb_malloc((size_t)(sw + 2 * R) * sizeof *b->line, "uplift line", err);
    b->line2 = tb_malloc((size_t)(sw + 2 * R) * sizeof *b->line2, "uplift line", err);
    b->acc = tb_malloc((size_t)sw * sizeof *b->acc, "uplift row", err);
    const size_t sc = (size_t)sw * (size_t)h;
    b->tx = tb_malloc(sc * sizeof *b->tx, "uplift strip", err);
    b->ya = tb_malloc(sc * sizeof *b->ya, "uplift strip", err);
    b->yb = tb_malloc(sc * sizeof *b->yb, "uplift strip", err);
    b->num_u = tb_malloc(sc * sizeof *b->num_u, "uplift strip", err);
    b->num_k = tb_malloc(sc * sizeof *b->num_k, "uplift strip", err);
    b->rank_m = tb_malloc(sc * sizeof *b->rank_m, "uplift strip", err);
    b->mult_r = tb_malloc(sc * sizeof *b->mult_r, "uplift strip", err);
    b->den = tb_malloc(sc * sizeof *b->den, "uplift strip", err);
    if (!b->colmap || !b->line || !b->line2 || !b->acc || !b->tx || !b->ya || !b->yb || !b->num_u ||
        !b->num_k || !b->rank_m || !b->mult_r || !b->den)
        return -1;
    /* Halo columns by lattice position: inside the frame wherever the planet's column is. */
    for (int64_t k = -R; k < w + R; k++)
        b->colmap[k + R] =
            (k >= 0 && k < w) ? k : tb_frame_local_x(box, tb_frame_lattice_x(box, k));
    return 0;
}

int tb_uplift_build(const tb_manifest_t *m, const tb_uplift_probes_t *p, const tb_frame_t *box,
                    const uint8_t *classes, float *uplift_m_yr, float *k, tb_err_t *err)
{
    if (!p || !classes || !uplift_m_yr || !k)
        return tb_err_set(err, TB_E_INTERNAL, "uplift: NULL probes, class raster or output");
    if (tb_uplift_check_manifest(m, err) != 0 || tb_uplift_check_frame(m, box, err) != 0 ||
        tb_uplift_probes_check(m, p, err) != 0)
        return -1;
    s_blend_t b;
    int rc = s_blend_init(&b, m, p, box, classes, err);
    if (rc == 0)
        rc = tb_uplift_fault_rate(m, box, uplift_m_yr, err);
    for (int64_t c0 = 0; c0 < box->w && rc == 0; c0 += TB_STRIP) {
        int64_t sw = box->w - c0 < TB_STRIP ? box->w - c0 : TB_STRIP;
        rc = s_strip(&b, c0, sw, uplift_m_yr, k, err);
    }
    s_blend_free(&b);
    return rc;
}
