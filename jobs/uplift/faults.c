/* Fault traces; see faults.h. Typical counts: 40 traces per 1000 km2 of planet, 2-12 km long, about
 * a hundred vertices each; a 3 M cell box meets a few dozen of them.
 *
 * The walk (docs/uplift.md, "Faults"): from the seed, both ways for half the length, the heading
 * relaxes towards the grain strike plus a smooth perturbation along the arc (value noise with knots
 * every TB_FAULT_PERTURB_M), turning at most ds / (2 w) per step of ds, so the radius of curvature
 * never drops below twice the half-width and each cell within w of the trace has one nearest point.
 * The grain is sampled as a VECTOR (two fBm) and turned into an axis by 0.5 atan2, never as an
 * angle from one noise, which would jump a whole turn where the value lattice wraps.
 *
 * Rasterising: each polyline segment covers its slab (along [-reach, l + reach], across (-w, w));
 * a cell keeps the nearest point over the slabs that cover it. The slab test and distances use the
 * cell's lattice position only, so the covered set and the values are the same in every box.
 */
#include "jobs/uplift/faults.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/noise.h"
#include "jobs/uplift/uplift.h"
#include "jobs/uplift/uplift_internal.h"

double tb_fault_envelope(double d_m, double half_width_m)
{
    double q = d_m / half_width_m;
    if (!(q < 1) || q <= -1)
        return 0;
    double a = 1 - q * q;
    return a * a;
}

double tb_fault_taper(double s_m, double length_m)
{
    double tip = fmin(s_m, length_m - s_m);
    return tb_uplift_smoothstep(tip / (length_m / 6.0));
}

double tb_faults_lattice_m(const tb_manifest_t *m, int64_t *cells_around)
{
    double circ_m = m->circumference_km * 1000.0;
    double around = round(circ_m / TB_FAULT_LATTICE_M);
    if (around < 1)
        around = 1;
    if (cells_around)
        *cells_around = (int64_t)around;
    return circ_m / around;
}

typedef struct {
    tb_noise_t gx, gy;
} s_grain_t;

static int s_grain_init(const tb_manifest_t *m, s_grain_t *g, tb_err_t *err)
{
    if (tb_uplift_noise(m, TB_SALT_GRAIN, m->faults.grain_wavelength_snapped_km, &g->gx, err) !=
            0 ||
        tb_uplift_noise(m, TB_SALT_GRAIN_Y, m->faults.grain_wavelength_snapped_km, &g->gy, err) !=
            0)
        return -1;
    return 0;
}

static double s_strike(const s_grain_t *g, double x_m, double y_m)
{
    double vx = tb_noise_fbm(&g->gx, x_m, y_m, TB_UPLIFT_GRAIN_OCTAVES, TB_UPLIFT_FBM_GAIN);
    double vy = tb_noise_fbm(&g->gy, x_m, y_m, TB_UPLIFT_GRAIN_OCTAVES, TB_UPLIFT_FBM_GAIN);
    return 0.5 * atan2(vy, vx);
}

double tb_uplift_grain_strike(const tb_manifest_t *m, double x_m, double y_m)
{
    s_grain_t g;
    if (s_grain_init(m, &g, NULL) != 0)
        return 0;
    return s_strike(&g, x_m, y_m);
}

/* The heading perturbation at signed arc length t from the seed: quintic value noise whose knots
 * are hashed from (seed, cell, index, knot), continuous through the seed. */
static double s_perturb(uint64_t seed, int64_t cx, int64_t cy, int index, double t_m)
{
    double u = t_m / TB_FAULT_PERTURB_M, fu = floor(u), f = u - fu;
    int64_t i = (int64_t)fu, base = (int64_t)index << 32;
    double a = tb_hash_unit(tb_hash(seed, TB_SALT_FAULT_WALK, cx, cy, base + i)) * 2 - 1;
    double b = tb_hash_unit(tb_hash(seed, TB_SALT_FAULT_WALK, cx, cy, base + i + 1)) * 2 - 1;
    double sf = f * f * f * (f * (f * 6 - 15) + 10);
    return TB_FAULT_PERTURB_RAD * (a + (b - a) * sf);
}

/* The signed difference target - h reduced modulo pi into [-pi/2, pi/2]: a strike is an axis. */
static double s_axial_diff(double target, double h)
{
    double d = target - h;
    return d - M_PI * round(d / M_PI);
}

/* Walks one trace of length L from (x, y): vertex k of 2 steps + 1 is at arc length k ds from tip
 * A, the seed in the middle. */
static void s_walk(const tb_manifest_t *m, const s_grain_t *g, int64_t cx, int64_t cy, int index,
                   double x0, double y0, double steps, double ds, double w_m, double *x, double *y)
{
    const int64_t n = (int64_t)steps;
    const double turn_max = ds / (2 * w_m);
    double h0 = s_strike(g, x0, y0) + s_perturb(m->seed, cx, cy, index, 0);
    x[n] = x0;
    y[n] = y0;
    for (int dir = 1; dir >= -1; dir -= 2) {
        double h = dir > 0 ? h0 : h0 + M_PI, px = x0, py = y0;
        for (int64_t k = 1; k <= n; k++) {
            px += ds * cos(h);
            py += ds * sin(h);
            x[n + dir * k] = px;
            y[n + dir * k] = py;
            double target = s_strike(g, px, py) + s_perturb(m->seed, cx, cy, index, dir * k * ds);
            double dh = s_axial_diff(target, h);
            h += dh > turn_max ? turn_max : (dh < -turn_max ? -turn_max : dh);
        }
    }
}

static int s_append(tb_fault_t **faults, size_t *n, tb_err_t *err)
{
    tb_fault_t *p = realloc(*faults, (*n + 1) * sizeof **faults);
    if (!p)
        return tb_err_set(err, TB_E_NOMEM, "faults: out of memory for %zu traces", *n + 1);
    *faults = p;
    memset(&p[*n], 0, sizeof p[*n]);
    (*n)++;
    return 0;
}

/* The piece of the walked polyline (x, y, arc s) between arcs a0 and a1, translated by (tx, ty),
 * into f with its own arc length from 0. */
static int s_cut(tb_fault_t *f, const double *x, const double *y, size_t nv, double ds, double a0,
                 double a1, double tx, double ty, tb_err_t *err)
{
    size_t k0 = (size_t)floor(a0 / ds), k1 = (size_t)ceil(a1 / ds);
    if (k1 > nv - 1)
        k1 = nv - 1;
    if (k0 >= k1)
        k0 = k1 - 1;
    size_t n = k1 - k0 + 1;
    f->x = malloc(n * sizeof *f->x);
    f->y = malloc(n * sizeof *f->y);
    f->s = malloc(n * sizeof *f->s);
    if (!f->x || !f->y || !f->s)
        return tb_err_set(err, TB_E_NOMEM, "faults: out of memory for a trace of %zu vertices", n);
    for (size_t k = k0; k <= k1; k++) {
        double arc = (double)k * ds, px = x[k], py = y[k];
        if (k == k0 && arc < a0) { /* interpolate the cut ends onto the walked segment */
            double t = (a0 - arc) / ds;
            px += (x[k + 1] - x[k]) * t;
            py += (y[k + 1] - y[k]) * t;
            arc = a0;
        } else if (k == k1 && arc > a1) {
            double t = (arc - a1) / ds;
            px += (x[k - 1] - x[k]) * t;
            py += (y[k - 1] - y[k]) * t;
            arc = a1;
        }
        size_t i = k - k0;
        f->x[i] = px + tx;
        f->y[i] = py + ty;
        f->s[i] = arc - a0;
    }
    f->n = n;
    f->length_m = a1 - a0;
    f->xmin = f->xmax = f->x[0];
    f->ymin = f->ymax = f->y[0];
    for (size_t i = 1; i < n; i++) {
        f->xmin = fmin(f->xmin, f->x[i]);
        f->xmax = fmax(f->xmax, f->x[i]);
        f->ymin = fmin(f->ymin, f->y[i]);
        f->ymax = fmax(f->ymax, f->y[i]);
    }
    return 0;
}

int tb_faults_seed_cell(const tb_manifest_t *m, int64_t cell_x, int64_t cell_y, tb_fault_t **faults,
                        size_t *n, tb_err_t *err)
{
    const tb_fault_params_t *fp = &m->faults;
    if (!(fp->per_1000_km2 > 0))
        return 0;
    int64_t around;
    const double lat_m = tb_faults_lattice_m(m, &around);
    const int64_t cx = tb_wrap(cell_x, around), cy = cell_y;
    const double expected = fp->per_1000_km2 * 1e-9 * lat_m * lat_m; /* seeds in this cell */
    double whole = floor(expected);
    int count =
        (int)whole + (tb_hash_unit(tb_hash(m->seed, TB_SALT_FAULT, cx, cy, 0)) < expected - whole);
    if (count == 0)
        return 0;
    s_grain_t g;
    if (s_grain_init(m, &g, err) != 0)
        return -1;
    const double w_m = fp->width_km * 1000.0;
    for (int k = 0; k < count; k++) {
        double ux = tb_hash_unit(tb_hash(m->seed, TB_SALT_FAULT, cx, cy, 1 + 4 * (int64_t)k));
        double uy = tb_hash_unit(tb_hash(m->seed, TB_SALT_FAULT, cx, cy, 2 + 4 * (int64_t)k));
        double ul = tb_hash_unit(tb_hash(m->seed, TB_SALT_FAULT, cx, cy, 3 + 4 * (int64_t)k));
        double uside = tb_hash_unit(tb_hash(m->seed, TB_SALT_FAULT, cx, cy, 4 + 4 * (int64_t)k));
        double len_m = 1000.0 * (fp->length_min_km + ul * (fp->length_max_km - fp->length_min_km));
        double steps = ceil(0.5 * len_m / fmax(w_m / 8, len_m / 2048));
        double ds = 0.5 * len_m / steps;
        size_t nv = 2 * (size_t)steps + 1;
        double *x = malloc(nv * sizeof *x), *y = malloc(nv * sizeof *y);
        if (!x || !y) {
            free(x);
            free(y);
            return tb_err_set(err, TB_E_NOMEM, "faults: out of memory walking a %g m trace", len_m);
        }
        s_walk(m, &g, cx, cy, k, ((double)cx + ux) * lat_m, ((double)cy + uy) * lat_m, steps, ds,
               w_m, x, y);
        int segs = (int)ceil(len_m / TB_FAULT_SEGMENT_MAX_M - 1e-9);
        segs = segs < 1 ? 1 : segs;
        double spacing = len_m / segs, overlap = segs > 1 ? TB_FAULT_OVERLAP * spacing : 0;
        double side = uside < 0.5 ? -1 : 1;
        int rc = 0;
        for (int i = 0; i < segs && rc == 0; i++) {
            double a0 = fmax(0, i * spacing - overlap),
                   a1 = fmin(len_m, (i + 1) * spacing + overlap);
            /* En-echelon: each segment steps sideways by one half-width, all to the same side,
             * translated (not offset along its normal, which would tighten its bends). */
            double tx = 0, ty = 0;
            if (segs > 1) {
                size_t k0 = (size_t)(a0 / ds), k1 = (size_t)(a1 / ds);
                k1 = k1 > nv - 1 ? nv - 1 : k1;
                double cx_ = x[k1] - x[k0], cy_ = y[k1] - y[k0], cl = hypot(cx_, cy_);
                double off = side * (i - 0.5 * (segs - 1)) * w_m;
                if (cl > 0) {
                    tx = -cy_ / cl * off;
                    ty = cx_ / cl * off;
                }
            }
            rc = s_append(faults, n, err);
            if (rc == 0) {
                tb_fault_t *f = &(*faults)[*n - 1];
                f->cell_x = cx;
                f->cell_y = cy;
                f->index = k;
                f->segment = i;
                f->segments = segs;
                f->trace_length_m = len_m;
                f->peak_m_yr = fp->uplift_mm_yr * 1e-3;
                f->half_width_m = w_m;
                rc = s_cut(f, x, y, nv, ds, a0, a1, tx, ty, err);
            }
        }
        free(x);
        free(y);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int64_t s_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* The whole-circumference shifts k (in cells, k * lattice_w) that put columns lo..hi of a trace
 * over the box's columns x0..x0+w-1. */
static void s_images(const tb_frame_t *box, int64_t lo, int64_t hi, int64_t *k_lo, int64_t *k_hi)
{
    int64_t W = box->lattice_w;
    *k_lo = -s_floor_div(hi - box->x0, W); /* ceil((x0 - hi) / W) */
    *k_hi = s_floor_div(box->x0 + box->w - 1 - lo, W);
}

/* A fault's padded cell bounding box (trace columns and rows). */
static void s_cell_bounds(const tb_fault_t *f, double cell_m, int64_t *x_lo, int64_t *x_hi,
                          int64_t *y_lo, int64_t *y_hi)
{
    double w = f->half_width_m;
    *x_lo = (int64_t)floor((f->xmin - w) / cell_m) - 1;
    *x_hi = (int64_t)ceil((f->xmax + w) / cell_m) + 1;
    *y_lo = (int64_t)floor((f->ymin - w) / cell_m) - 1;
    *y_hi = (int64_t)ceil((f->ymax + w) / cell_m) + 1;
}

int tb_faults_collect(const tb_manifest_t *m, const tb_frame_t *box, tb_fault_t **faults, size_t *n,
                      tb_err_t *err)
{
    *faults = NULL;
    *n = 0;
    if (!(m->faults.per_1000_km2 > 0))
        return 0;
    int64_t around;
    const double lat_m = tb_faults_lattice_m(m, &around), cell = box->cell_m;
    /* How far a trace can reach from its seed: half its length walked, the en-echelon sidesteps,
     * the envelope; never less than length_max + width. */
    const double l_max = 1000.0 * m->faults.length_max_km, w_m = 1000.0 * m->faults.width_km;
    const double segs_max = fmax(1, ceil(l_max / TB_FAULT_SEGMENT_MAX_M - 1e-9));
    const double reach =
        fmax(l_max + w_m, 0.5 * l_max + 0.5 * (segs_max - 1) * w_m + w_m) + 2 * cell;
    const double bx0 = (double)box->x0 * cell, bx1 = (double)(box->x0 + box->w) * cell;
    const double by0 = (double)box->y0 * cell, by1 = (double)(box->y0 + box->h) * cell;
    int64_t cx_lo = (int64_t)floor((bx0 - reach) / lat_m),
            cx_hi = (int64_t)floor((bx1 + reach) / lat_m);
    int64_t cy_lo = (int64_t)floor((by0 - reach) / lat_m),
            cy_hi = (int64_t)floor((by1 + reach) / lat_m);
    /* The wrapped columns to visit, ascending (the canonical order): one run, or two when the
     * range crosses the seam. */
    int64_t ncols = cx_hi - cx_lo + 1 < around ? cx_hi - cx_lo + 1 : around;
    int64_t start = ncols == around ? 0 : tb_wrap(cx_lo, around);
    int64_t runs[2][2] = {{start, start + ncols - 1}, {1, 0}};
    if (start + ncols > around) {
        runs[0][0] = 0;
        runs[0][1] = start + ncols - 1 - around;
        runs[1][0] = start;
        runs[1][1] = around - 1;
    }
    int rc = 0;
    for (int64_t cy = cy_lo; cy <= cy_hi && rc == 0; cy++)
        for (int run = 0; run < 2; run++)
            for (int64_t cx = runs[run][0]; cx <= runs[run][1] && rc == 0; cx++) {
                size_t before = *n;
                rc = tb_faults_seed_cell(m, cx, cy, faults, n, err);
                /* Keep only the segments whose padded box meets the region box in some image. */
                size_t keep = before;
                for (size_t i = before; i < *n && rc == 0; i++) {
                    tb_fault_t *f = &(*faults)[i];
                    int64_t x_lo, x_hi, y_lo, y_hi, k_lo, k_hi;
                    s_cell_bounds(f, cell, &x_lo, &x_hi, &y_lo, &y_hi);
                    s_images(box, x_lo, x_hi, &k_lo, &k_hi);
                    bool meets = k_lo <= k_hi && y_hi >= box->y0 && y_lo <= box->y0 + box->h - 1;
                    if (meets)
                        (*faults)[keep++] = *f;
                    else {
                        free(f->x);
                        free(f->y);
                        free(f->s);
                    }
                }
                if (rc == 0)
                    *n = keep;
            }
    if (rc != 0) {
        tb_faults_free(faults, *n);
        *n = 0;
    }
    return rc;
}

void tb_faults_free(tb_fault_t **faults_p, size_t n)
{
    if (!faults_p || !*faults_p)
        return;
    for (size_t i = 0; i < n; i++) {
        free((*faults_p)[i].x);
        free((*faults_p)[i].y);
        free((*faults_p)[i].s);
    }
    free(*faults_p);
    *faults_p = NULL;
}

/* ---- rasterising ---- */

/* Scratch for one trace image: nearest squared distance and its arc per cell of a sub-rectangle,
 * initialised lazily per row span so a long diagonal trace does not pay for its whole box. */
typedef struct {
    int64_t x0, y0, w, h; /* sub-rectangle in trace cells */
    double *d2, *arc;
    int64_t *lo, *hi; /* per row: touched columns (lo > hi: none) */
    size_t cap_cells, cap_rows;
} s_scratch_t;

static int s_scratch_reserve(s_scratch_t *sc, int64_t w, int64_t h, tb_err_t *err)
{
    size_t cells = (size_t)w * (size_t)h;
    if (cells > sc->cap_cells) {
        free(sc->d2);
        free(sc->arc);
        sc->d2 = malloc(cells * sizeof *sc->d2);
        sc->arc = malloc(cells * sizeof *sc->arc);
        sc->cap_cells = cells;
        if (!sc->d2 || !sc->arc) {
            sc->cap_cells = 0;
            return tb_err_set(err, TB_E_NOMEM, "faults: out of memory for a %lld x %lld scratch",
                              (long long)w, (long long)h);
        }
    }
    if ((size_t)h > sc->cap_rows) {
        free(sc->lo);
        free(sc->hi);
        sc->lo = malloc((size_t)h * sizeof *sc->lo);
        sc->hi = malloc((size_t)h * sizeof *sc->hi);
        sc->cap_rows = (size_t)h;
        if (!sc->lo || !sc->hi) {
            sc->cap_rows = 0;
            return tb_err_set(err, TB_E_NOMEM, "faults: out of memory for scratch rows");
        }
    }
    sc->w = w;
    sc->h = h;
    for (int64_t r = 0; r < h; r++) {
        sc->lo[r] = 1;
        sc->hi[r] = 0;
    }
    return 0;
}

/* Makes columns c_lo..c_hi of scratch row r valid (+inf where new). */
static void s_scratch_span(s_scratch_t *sc, int64_t r, int64_t c_lo, int64_t c_hi)
{
    double *d2 = sc->d2 + (size_t)r * (size_t)sc->w;
    if (sc->lo[r] > sc->hi[r]) {
        for (int64_t c = c_lo; c <= c_hi; c++)
            d2[c] = INFINITY;
        sc->lo[r] = c_lo;
        sc->hi[r] = c_hi;
        return;
    }
    for (int64_t c = c_lo; c < sc->lo[r]; c++)
        d2[c] = INFINITY;
    for (int64_t c = sc->hi[r] + 1; c <= c_hi; c++)
        d2[c] = INFINITY;
    sc->lo[r] = c_lo < sc->lo[r] ? c_lo : sc->lo[r];
    sc->hi[r] = c_hi > sc->hi[r] ? c_hi : sc->hi[r];
}

static double s_clampd(double v, double lo, double hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The nearest point of each covered cell of the sub-rectangle over the slabs of f's segments. */
static void s_trace_slabs(const tb_fault_t *f, double cell, s_scratch_t *sc)
{
    const double w = f->half_width_m;
    double pux = 0, puy = 0; /* previous segment's direction; none before the first */
    for (size_t i = 0; i + 1 < f->n; i++) {
        double ax = f->x[i], ay = f->y[i], dx = f->x[i + 1] - ax, dy = f->y[i + 1] - ay;
        double l = hypot(dx, dy);
        if (!(l > 0))
            continue;
        double ux = dx / l, uy = dy / l;
        /* Extend the slab past each end by w sin(turn there): a cell in the wedge on the convex
         * side of a turn of angle d lies within w sin d of the slab's end (plus a millimetre). */
        double ext_lo = w * fabs(pux * uy - puy * ux) + 1e-3, ext_hi = 1e-3;
        if (i + 2 < f->n) {
            double nx = f->x[i + 2] - f->x[i + 1], ny = f->y[i + 2] - f->y[i + 1],
                   nl = hypot(nx, ny);
            if (nl > 0)
                ext_hi += w * fabs(ux * ny - uy * nx) / nl;
        }
        pux = ux;
        puy = uy;
        double a_lo = -ext_lo, a_hi = l + ext_hi;
        /* Row range from the slab's corners, padded a cell. */
        double ys[4] = {ay + a_lo * uy + w * ux, ay + a_lo * uy - w * ux, ay + a_hi * uy + w * ux,
                        ay + a_hi * uy - w * ux};
        double ry_lo = fmin(fmin(ys[0], ys[1]), fmin(ys[2], ys[3]));
        double ry_hi = fmax(fmax(ys[0], ys[1]), fmax(ys[2], ys[3]));
        double r_lo =
            s_clampd(floor(ry_lo / cell - 0.5) - 1, (double)sc->y0, (double)(sc->y0 + sc->h - 1));
        double r_hi =
            s_clampd(ceil(ry_hi / cell - 0.5) + 1, (double)sc->y0, (double)(sc->y0 + sc->h - 1));
        for (int64_t yt = (int64_t)r_lo; yt <= (int64_t)r_hi; yt++) {
            double ey = ((double)yt + 0.5) * cell - ay;
            double x_lo = -INFINITY, x_hi = INFINITY;
            if (fabs(ux) > 1e-12) { /* along: a = ex ux + ey uy in [a_lo, a_hi] */
                double p = (a_lo - ey * uy) / ux, q = (a_hi - ey * uy) / ux;
                x_lo = fmax(x_lo, fmin(p, q));
                x_hi = fmin(x_hi, fmax(p, q));
            }
            if (fabs(uy) > 1e-12) { /* across: b = ey ux - ex uy in (-w, w) */
                double p = (ey * ux - w) / uy, q = (ey * ux + w) / uy;
                x_lo = fmax(x_lo, fmin(p, q));
                x_hi = fmin(x_hi, fmax(p, q));
            }
            double c_lo = s_clampd(floor((ax + x_lo) / cell - 0.5) - 1, (double)sc->x0,
                                   (double)(sc->x0 + sc->w - 1));
            double c_hi = s_clampd(ceil((ax + x_hi) / cell - 0.5) + 1, (double)sc->x0,
                                   (double)(sc->x0 + sc->w - 1));
            if (c_lo > c_hi)
                continue;
            int64_t r = yt - sc->y0, k_lo = (int64_t)c_lo - sc->x0, k_hi = (int64_t)c_hi - sc->x0;
            s_scratch_span(sc, r, k_lo, k_hi);
            double *d2 = sc->d2 + (size_t)r * (size_t)sc->w,
                   *arc = sc->arc + (size_t)r * (size_t)sc->w;
            for (int64_t k = k_lo; k <= k_hi; k++) {
                double ex = ((double)(k + sc->x0) + 0.5) * cell - ax;
                double a = ex * ux + ey * uy;
                if (a < a_lo || a > a_hi)
                    continue;
                double b = ey * ux - ex * uy;
                if (!(b > -w && b < w))
                    continue;
                double t = a < 0 ? 0 : (a > l ? l : a), da = a - t, dd = da * da + b * b;
                if (dd < d2[k]) {
                    d2[k] = dd;
                    arc[k] = f->s[i] + t;
                }
            }
        }
    }
}

int tb_faults_rasterise(const tb_fault_t *faults, size_t n, const tb_frame_t *box, float *out,
                        tb_err_t *err)
{
    const double cell = box->cell_m;
    const int64_t W = box->lattice_w;
    s_scratch_t sc = {0};
    int rc = 0;
    for (size_t fi = 0; fi < n && rc == 0; fi++) {
        const tb_fault_t *f = &faults[fi];
        int64_t x_lo, x_hi, y_lo, y_hi, k_lo, k_hi;
        s_cell_bounds(f, cell, &x_lo, &x_hi, &y_lo, &y_hi);
        int64_t ys = y_lo > box->y0 ? y_lo : box->y0;
        int64_t ye = y_hi < box->y0 + box->h - 1 ? y_hi : box->y0 + box->h - 1;
        if (ys > ye)
            continue;
        s_images(box, x_lo, x_hi, &k_lo, &k_hi);
        for (int64_t k = k_lo; k <= k_hi && rc == 0; k++) {
            int64_t xs = x_lo + k * W > box->x0 ? x_lo + k * W : box->x0;
            int64_t xe = x_hi + k * W < box->x0 + box->w - 1 ? x_hi + k * W : box->x0 + box->w - 1;
            if (xs > xe)
                continue;
            sc.x0 = xs - k * W; /* in trace columns */
            sc.y0 = ys;
            if ((rc = s_scratch_reserve(&sc, xe - xs + 1, ye - ys + 1, err)) != 0)
                break;
            s_trace_slabs(f, cell, &sc);
            const double w2 = f->half_width_m * f->half_width_m;
            for (int64_t r = 0; r < sc.h; r++) {
                const double *d2 = sc.d2 + (size_t)r * (size_t)sc.w;
                const double *arc = sc.arc + (size_t)r * (size_t)sc.w;
                float *row = out + (size_t)(sc.y0 + r - box->y0) * (size_t)box->w;
                for (int64_t c = sc.lo[r]; c <= sc.hi[r]; c++) {
                    if (!(d2[c] < w2))
                        continue;
                    double v = f->peak_m_yr * tb_fault_taper(arc[c], f->length_m) *
                               tb_fault_envelope(sqrt(d2[c]), f->half_width_m);
                    row[sc.x0 + c + k * W - box->x0] += (float)v;
                }
            }
        }
    }
    free(sc.d2);
    free(sc.arc);
    free(sc.lo);
    free(sc.hi);
    return rc;
}

/* ---- public entry points (uplift.h) ---- */

int tb_uplift_fault_rate(const tb_manifest_t *m, const tb_frame_t *box, float *out, tb_err_t *err)
{
    if (!out)
        return tb_err_set(err, TB_E_INTERNAL, "uplift: NULL fault output");
    if (tb_uplift_check_manifest(m, err) != 0 || tb_uplift_check_frame(m, box, err) != 0)
        return -1;
    memset(out, 0, (size_t)box->w * (size_t)box->h * sizeof *out);
    tb_fault_t *faults;
    size_t n;
    if (tb_faults_collect(m, box, &faults, &n, err) != 0)
        return -1;
    int rc = tb_faults_rasterise(faults, n, box, out, err);
    tb_faults_free(&faults, n);
    return rc;
}

int tb_uplift_fault_traces(const tb_manifest_t *m, const tb_frame_t *box, tb_polyline_t **out,
                           size_t *n_out, tb_err_t *err)
{
    *out = NULL;
    *n_out = 0;
    if (tb_uplift_check_manifest(m, err) != 0 || tb_uplift_check_frame(m, box, err) != 0)
        return -1;
    tb_fault_t *faults;
    size_t n;
    if (tb_faults_collect(m, box, &faults, &n, err) != 0)
        return -1;
    const double cell = box->cell_m;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const tb_fault_t *f = &faults[i];
        int64_t x_lo, x_hi, y_lo, y_hi, k_lo, k_hi;
        s_cell_bounds(f, cell, &x_lo, &x_hi, &y_lo, &y_hi);
        s_images(box, x_lo, x_hi, &k_lo, &k_hi);
        for (int64_t k = k_lo; k <= k_hi && rc == 0; k++) {
            tb_polyline_t *p = realloc(*out, (*n_out + 1) * sizeof **out);
            double *xy = malloc(2 * f->n * sizeof *xy);
            if (!p || !xy) {
                if (p)
                    *out = p;
                free(xy);
                rc = tb_err_set(err, TB_E_NOMEM, "fault traces: out of memory");
                break;
            }
            *out = p;
            for (size_t v = 0; v < f->n; v++) {
                xy[2 * v] = f->x[v] / cell + (double)(k * box->lattice_w);
                xy[2 * v + 1] = f->y[v] / cell;
            }
            p[*n_out].n = f->n;
            p[*n_out].xy = xy;
            (*n_out)++;
        }
    }
    tb_faults_free(&faults, n);
    if (rc != 0) {
        tb_uplift_traces_destroy(out, *n_out);
        *n_out = 0;
    }
    return rc;
}

void tb_uplift_traces_destroy(tb_polyline_t **traces_p, size_t n)
{
    if (!traces_p || !*traces_p)
        return;
    for (size_t i = 0; i < n; i++)
        free((*traces_p)[i].xy);
    free(*traces_p);
    *traces_p = NULL;
}
