/* The coastal detail pass; see shore.h. Typical load: a coast tile's window of 2700 x 2700 cells,
 * of which the cells within 160 m of the waterline (a tenth to a third) are reshaped. */
#include "jobs/detail/shore.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/detail_keys.h"
#include "common/edt.h"
#include "common/hash.h"
#include "common/noise.h"
#include "jobs/detail/line_scratch.h"
#include "jobs/uplift/fbm_window.h"

#define S_SMOOTH 3 /* the distance's box radius, applied twice along each axis */
#define S_CAP (TB_DETAIL_SHORE_REACH_CELLS - 2 * S_SMOOTH) /* the transform's cap, cells */
#define S_OUTLINE_WAVELENGTH_M 24.0 /* the shoreline's wander: first octave, 3 octaves */
/* The beach's equilibrium profile joins the shelf over this run past the closure depth: the sand
 * wedge's toe (at 12 m it drew a ring round every islet in the hillshade, 11 degrees steep) */
#define S_JOIN_M 40.0
/* The least angle of a cliff face: well over the 45 degrees a face is told by, so that the 2 m
 * grid's steps read it as over 45 along a row, column or diagonal whatever its direction (55 x
 * cos 22.5: 52.8 degrees at the worst; a face at 46 read 44 along a row 18 degrees off it) */
#define S_FACE_MIN_DEG 55.0

double tb_shore_dean_a(double grain_mm)
{
    return 0.21 * pow(grain_mm, 0.48);
}

/* 0 at a, 1 at b, smooth between (a > b gives the falling step). */
static double s_step(double a, double b, double x)
{
    double t = (x - a) / (b - a);
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    return t * t * (3 - 2 * t);
}

static double s_clamp(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* One pass of the box of radius S_SMOOTH along rows or columns over the distance in fixed point
 * (1/256 cell): integer sums are exact, so a running sum gives the same value wherever the window
 * starts. Cells within S_SMOOTH of the window's edge keep their value. */
typedef struct {
    const int32_t *in;
    int32_t *out;
    int64_t w, h;
    bool rows;
    tb_line_scratch_fail_t *fail; /* a task's failed allocation, reported after the run */
} s_box_t;

/* The box mean along one line of n values (in and out contiguous). */
static void s_box_run(const int32_t *in, int32_t *out, int64_t n)
{
    const int64_t N = 2 * S_SMOOTH + 1;
    int64_t run = 0;
    for (int64_t x = 0; x < n && x < N; x++)
        run += in[x];
    for (int64_t x = 0; x < n; x++) {
        if (x < S_SMOOTH || x >= n - S_SMOOTH) {
            out[x] = in[x];
            continue;
        }
        /* run holds [x - S_SMOOTH, x + S_SMOOTH]; rounded to nearest, ties up (exact integers) */
        out[x] = (int32_t)((run + N / 2 + N * (1 << 24)) / N - (1 << 24));
        if (x + S_SMOOTH + 1 < n)
            run += in[x + S_SMOOTH + 1] - in[x - S_SMOOTH];
    }
}

#define S_COLS 32 /* columns a task gathers into a contiguous block */

static void s_box_line(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_box_t *c = ctx;
    if (c->rows) {
        s_box_run(c->in + (int64_t)task * c->w, c->out + (int64_t)task * c->w, c->w);
        return;
    }
    int64_t x0 = (int64_t)task * S_COLS, h = c->h, nc = c->w - x0 < S_COLS ? c->w - x0 : S_COLS;
    int32_t *block = tb_line_scratch_alloc((size_t)(2 * nc * h) * sizeof *block, c->fail);
    if (!block) /* recorded in c->fail: the pass fails with TB_E_NOMEM */
        return;
    for (int64_t y = 0; y < h; y++)
        for (int64_t k = 0; k < nc; k++)
            block[k * h + y] = c->in[y * c->w + x0 + k];
    for (int64_t k = 0; k < nc; k++)
        s_box_run(block + k * h, block + (nc + k) * h, h);
    for (int64_t y = 0; y < h; y++)
        for (int64_t k = 0; k < nc; k++)
            c->out[y * c->w + x0 + k] = block[(nc + k) * h + y];
    free(block);
}

typedef struct {
    const tb_shore_in_t *in;
    const int32_t *sd; /* smoothed signed distance, 1/256 cells, positive inland */
    double *h;
    uint8_t *sand;
    tb_fbm_window_t noise; /* tb_noise_fbm's bits at table lookups */
    double dean_a, closure_x, fade0, fade1, foot_b, berm_end, tan_cliff, tan_scree, tan_face;
    tb_shore_stats_t *per_row;
} s_shore_t;

/* The beach's target height at y (m, positive inland) over ground at h. */
static double s_beach(const s_shore_t *c, double y, double h)
{
    const tb_detail_params_t *p = c->in->p;
    if (y < 0) {
        double cb = cbrt(-y), dean = -c->dean_a * cb * cb, x = -y;
        double join = s_step(c->closure_x, c->closure_x + S_JOIN_M, x); /* into the shelf */
        return dean * (1 - join) + h * join;
    }
    if (y <= c->foot_b)
        return p->shore_foreshore_slope * y;
    if (y <= c->berm_end)
        return p->shore_berm_m;
    double run = y - c->berm_end; /* behind the berm: lower land rises to it, higher meets it */
    return s_clamp(h, p->shore_berm_m - 0.268 * run, p->shore_berm_m + 0.577 * run);
}

/* The cliff coast's target at y >= 0: the platform P, the face up to the backshore B, a notch or
 * an apron at the foot. nu is the notch's weight (the apron's is 1 - nu). */
static double s_cliff(const s_shore_t *c, double y, double e, double P, double H, double nu)
{
    const tb_detail_params_t *p = c->in->p;
    /* a bank under 3 m stands at the scree's angle; from 3 m a face at S_FACE_MIN_DEG (55),
     * steepening to the cliff's angle by 5 m. Nothing but a cliff face is steeper than the talus,
     * and a face is one where it rises 2 m or more above its apron (0.7 of H at the most sheltered)
     * at over 45 degrees: a ramp from the scree's angle would cross the talus on banks of 2 m (38.3
     * degrees on a 2.3 m bank of the demo), so the angle steps from the scree's to the face's */
    double u_h = H >= 5 ? 1 : (H - 3) / 2;
    double tf = c->tan_face < c->tan_cliff ? c->tan_face : c->tan_cliff;
    double tc = H < 3 ? c->tan_scree : tf + (c->tan_cliff - tf) * u_h * u_h * (3 - 2 * u_h),
           ts = c->tan_scree;
    double top = e * p->shore_surf_reach_m; /* where the surf's reach ended */
    double t = P + s_clamp(H + tc * (y - top), 0.1 * H, H);
    double foot = top - 0.9 * H / tc;
    double u = (y - (foot - 1.25)) / 1.25;
    if (u > -1 && u < 1) /* a notch is cut into a cliff: none into a bank a metre high */
        t -= nu * p->shore_notch_m * (H < 4 ? H / 4 : 1) * (1 - u * u);
    double reach = p->shore_apron_share * H / ts;
    if (y >= foot - reach) {
        double apron = P + (1 - nu) * fmin(p->shore_apron_share * H, ts * (y - foot + reach));
        t = t > apron ? t : apron;
    }
    return t;
}

static void s_shore_row(void *ctx, size_t task, int thread)
{
    (void)thread;
    const s_shore_t *c = ctx;
    const tb_shore_in_t *in = c->in;
    const tb_detail_params_t *p = in->p;
    const tb_frame_t *win = in->win;
    tb_shore_stats_t *st = &c->per_row[task];
    memset(st, 0, sizeof *st);
    int64_t j = (int64_t)task, w = win->w;
    for (int64_t i = 0; i < w; i++) {
        size_t at = tb_idx(w, i, j);
        double y = c->sd[at] * (win->cell_m / 256.0);
        if (fabs(y) >= c->fade1 + p->shore_outline_m) {
            if (c->sand)
                c->sand[at] = 0;
            continue;
        }
        if (p->shore_outline_m > 0)
            y += p->shore_outline_m * tb_fbm_window_eval(&c->noise, i, j);
        double fade = 1 - s_step(c->fade0, c->fade1, fabs(y));
        double h = c->h[at], e = s_clamp(in->exposure[at], 0, 1);
        double C = in->cut_m[at] > 0 ? in->cut_m[at] : 0,
               L = in->laid_m[at] > 0 ? in->laid_m[at] : 0;
        double P = p->shore_platform_m + p->shore_platform_slope * (y > 0 ? y : 0);
        double H = h + C - P; /* the land before the surf cut it, above the platform */
        double kap = y >= 0 ? s_step(0.30, 0.55, e) * s_step(0.3, 1.5, H) : 0;
        double beta = fmax(s_step(0.75, 0.45, e), s_step(0.02, 0.30, L)) * (1 - kap);
        /* behind a beach the land as it stood before the 8 m surf cut it (h + C): the cut's edge
         * is a staircase of 8 m cells, which the beach's land would otherwise carry */
        double tb = s_beach(c, y, y > 0 ? h + C : h);
        /* on land, what is not beach is the coastal pass's platform drawn at 2 m, whatever the
         * cliff's height (the 8 m cut's edge is a staircase of cells, which h carries); at sea, the
         * waterline onto y = 0 (the sea within 20 m falling at least 5 cm a metre) */
        double t;
        if (y >= 0) {
            double tc = s_cliff(c, y, e, P, H > 0 ? H : 0, s_step(0.7, 0.9, e));
            tc = tc < h + C ? tc : h + C; /* never above the land before the cut: land lower than
                                           * the platform is no platform (it drew a bank inland) */
            t = beta * tb + (1 - beta) * tc;
        } else {
            double near = s_step(20, 10, -y), tr = h > 0.05 * y ? h + near * (0.05 * y - h) : h;
            t = beta * tb + (1 - beta) * tr;
        }
        c->h[at] = h + fade * (t - h);
        double sand =
            beta * fade * s_step(-10, -6, y) * s_step(c->berm_end + 6, c->berm_end + 2, y);
        if (c->sand)
            c->sand[at] = (uint8_t)(255 * sand + 0.5);
        st->shore_cells += fade > 0.5;
        st->beach_cells += beta * fade > 0.5 && y >= 0 && y <= c->berm_end;
        st->cliff_cells += kap * fade > 0.5 && y >= 0 && y <= e * p->shore_surf_reach_m;
    }
}

int tb_shore_dean_sunamura(const tb_shore_in_t *in, double *h, uint8_t *sand,
                           tb_shore_stats_t *stats, tb_pool_t *pool, tb_err_t *err)
{
    memset(stats, 0, sizeof *stats);
    const tb_frame_t *win = in->win;
    const tb_detail_params_t *p = in->p;
    size_t n = (size_t)win->w * (size_t)win->h;
    if (sand)
        memset(sand, 0, n);
    size_t n_land = 0;
    for (size_t i = 0; i < n; i++)
        n_land += in->land8[i] != 0;
    if (n_land == 0 || n_land == n)
        return 0;
    uint32_t *d2 = malloc(n * sizeof *d2);
    int32_t *sd = malloc(n * sizeof *sd), *tmp = malloc(n * sizeof *tmp);
    tb_shore_stats_t *per = calloc((size_t)win->h, sizeof *per);
    int rc = -1;
    if (!d2 || !sd || !tmp || !per) {
        tb_err_set(err, TB_E_NOMEM, "shore: out of memory for %zu cells", n);
        goto done;
    }
    const uint32_t cap2[2] = {(uint32_t)(S_CAP * S_CAP), (uint32_t)(S_CAP * S_CAP)};
    if (tb_edt_squared_both(in->land8, win->w, win->h, false, cap2, pool, d2, NULL, NULL, err) != 0)
        goto done;
    for (size_t i = 0; i < n; i++) {
        double d = d2[i] == TB_EDT_FAR ? S_CAP : sqrt((double)d2[i]) - 0.5;
        d = d > S_CAP ? S_CAP : d;
        int32_t q = (int32_t)(d * 256.0 + 0.5);
        sd[i] = in->land8[i] ? q : -q;
    }
    tb_line_scratch_fail_t fail = {.filter = TB_LINE_SHORE};
    s_box_t bx = {sd, tmp, win->w, win->h, true, &fail};
    for (int k = 0; k < 4; k++) { /* rows twice, then columns twice: a tent each way */
        bx.rows = k < 2;
        bx.in = k % 2 == 0 ? sd : tmp;
        bx.out = k % 2 == 0 ? tmp : sd;
        tb_pool_run(pool, (size_t)(bx.rows ? win->h : (win->w + S_COLS - 1) / S_COLS), s_box_line,
                    &bx);
    }
    if (tb_line_scratch_check(&fail, "shore: the waterline's smoothing", err) != 0)
        goto done;
    s_shore_t c = {.in = in, .sd = sd, .h = h, .sand = sand, .per_row = per};
    double reach_m = S_CAP * win->cell_m;
    c.fade1 = reach_m - p->shore_outline_m - 4;
    c.fade0 = c.fade1 - 24;
    c.dean_a = tb_shore_dean_a(p->shore_grain_mm);
    c.closure_x = pow(p->shore_closure_m / c.dean_a, 1.5);
    c.closure_x = c.closure_x < c.fade0 - S_JOIN_M ? c.closure_x : c.fade0 - S_JOIN_M;
    c.foot_b = p->shore_berm_m / p->shore_foreshore_slope;
    c.berm_end = c.foot_b + p->shore_berm_width_m;
    c.tan_cliff = tan(p->shore_cliff_deg * M_PI / 180.0);
    c.tan_scree = tan(p->shore_scree_deg * M_PI / 180.0);
    c.tan_face = tan(S_FACE_MIN_DEG * M_PI / 180.0);
    double circ = (double)win->lattice_w * win->cell_m;
    tb_noise_t noise;
    if (tb_noise_init(&noise, in->seed, TB_SALT_TILE_SHORE, circ, S_OUTLINE_WAVELENGTH_M, err) !=
            0 ||
        tb_fbm_window_init(&c.noise, &noise, 3, 0.5, win, 0, win->w, 0, win->h, err) != 0)
        goto done;
    tb_pool_run(pool, (size_t)win->h, s_shore_row, &c);
    tb_fbm_window_free(&c.noise);
    for (int64_t j = 0; j < win->h; j++) {
        stats->beach_cells += per[j].beach_cells;
        stats->cliff_cells += per[j].cliff_cells;
        stats->shore_cells += per[j].shore_cells;
    }
    rc = 0;
done:
    free(d2);
    free(sd);
    free(tmp);
    free(per);
    return rc;
}
