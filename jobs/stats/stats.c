/* The statistics of a heightmap region; see stats.h.
 *
 * One pass over the box, in blocks of k = 2r + 1 rows (the relief window): blocks with no counted
 * land are skipped whole; for a row with land, the relief row comes from the streaming van Herk
 * pass (relief.c), and each counted land cell reads its 3x3 neighbourhood from three padded copies
 * of the rows around it (wrapped or sea level at the box's sides) and bins directly into the raw
 * counters of its bucket's histograms. Every bin is decided by exact comparisons (a power-of-two
 * bin width, a float table of tangents, the float bits of a log2 bin), so a cell lands in the same
 * bin whichever box it is seen through, and the pooled statistics equal the whole to the last bit.
 */
#include "jobs/stats/stats.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "jobs/stats/relief.h"

#define S_MAGIC 0x54534254u /* "TBST" little-endian */
#define S_VERSION 3
#define S_ELEV_QUANTUM (1.0 / 1024) /* the elevation sum's quantum, metres; a power of two */
#define S_DEG_PER_RAD (180.0 / 3.14159265358979323846)

/* Area bins (m2) and squared-gradient bins of the slope-area table: fixed, because the fit and the
 * encoding depend on them. Area 1 m2 .. 2^44 m2 (1.8e7 km2) at 4 per octave; the table holds g2 =
 * S^2 from 2^-40 to 2^10 at 4 per octave of g2, which is 8 per octave of the gradient S from 2^-20
 * to 2^5 (about 1e-6 .. 88 degrees). A median commutes with the square root, so the median
 * gradient of a bin is the square root of its median g2, and no square root is taken per cell. */
#define S_AREA_LO_EXP2 0
#define S_AREA_PER_OCTAVE 4
#define S_AREA_NBINS (44 * S_AREA_PER_OCTAVE)
#define S_GRAD_LO_EXP2 (-40)
#define S_GRAD_PER_OCTAVE 4
#define S_GRAD_NBINS (50 * S_GRAD_PER_OCTAVE)

/* The float-bit slots of the slope guess table, over the SQUARED gradient g2 = |grad h|^2 in
 * [2^-32, 2^16), 2^8 slots an octave of g2 (2^9 an octave of the gradient): at 0.1 degree bins a
 * slot never spans more than one edge, so the lookup is the guess plus one branch-free step (a
 * while loop catches finer bins). Binning g2 against exact thresholds keeps the square root off the
 * per-cell critical path. */
#define S_SLOT_BITS 8
#define S_SLOT_EXP_LO (127 - 32)
#define S_SLOT_EXP_HI (127 + 16)
#define S_SLOT0 (S_SLOT_EXP_LO << S_SLOT_BITS)
#define S_NSLOTS ((S_SLOT_EXP_HI - S_SLOT_EXP_LO) << S_SLOT_BITS)

/* The counters kept beside the histograms; land, area and near-repose counts are read off the
 * histograms themselves (tb_stats_counts), so the hot loop does not keep them twice. */
typedef struct {
    int64_t channel, cardinal, diagonal, no_descent;
} s_chan_t;
#define S_NCOUNTS 4

typedef struct {
    s_chan_t ch;
    tb_hist_t *slope, *relief, *elev, *area;
    tb_hist_t *sa[S_AREA_NBINS]; /* squared-gradient histogram per area bin */
    tb_hist_t *sd[S_AREA_NBINS]; /* squared steepest-descent slope per area bin (channel fit) */
} s_bucket_t;

struct tb_stats_t {
    tb_stats_params_t p;
    int64_t edge_cells; /* counted land within the halo of an inner box edge */
    int64_t radius;
    int32_t slope_nbins, relief_nbins, elev_nbins;
    float inv_relief_bin, inv_elev_bin, inv_8dx, inv_dx;
    int32_t near_lo, near_hi; /* slope bins [near_lo, near_hi) make the repose band */
    float channel_area;       /* as a float, compared with the float areas */
    float uplift_edge_m_yr[2];
    float *g2_edge;          /* slope_nbins + 2: the least g2 whose sqrtf reaches the tan of
                                each edge, then +inf and a NaN sentinel */
    uint16_t *slope_guess;   /* S_NSLOTS: the bin of the start of each float-bit slot */
    int32_t slope_guess_top; /* the bin of 2^8 */
    bool slope_one_step;     /* no slot spans more than one edge: guess + 1 step is exact */
    tb_hist_log2_lut_t area_lut, grad_lut;
    s_bucket_t b[TB_STATS_NBUCKETS];
    int32_t n_classes; /* painted classes seen, sorted by name */
    char class_name[TB_STATS_MAX_CLASSES][TB_STATS_CLASS_NAME_MAX];
    s_bucket_t cls[TB_STATS_MAX_CLASSES];
    /* workspace, reused across calls */
    tb_relief_t *relief;
    float *rows;  /* 3 padded rows of w + 2 */
    float *row_t; /* w: the squared gradient of each cell of the current row */
    int32_t *row_slot, *row_kr, *row_ke; /* w: its slope slot, relief bin and elevation bin */
    int32_t *row_q, *row_ka, *row_kg;    /* w: its quantised height, area bin and g2 bin */
    int32_t *row_land_idx;               /* w: the columns of the row's counted land */
    int32_t *row_ks;                     /* w: the slope bin of each of them */
    int32_t *row_bk;                     /* w: the bucket of each of them (-1: none) */
    float *row_sd;   /* w: the squared steepest-descent gradient of each cell of the row */
    int32_t *row_kd; /* w: its bin */
    int64_t row_tag[3];
    uint8_t *ones, *row_land;
    size_t rows_cap, ones_cap, land_cap;
};

void tb_stats_params_default(tb_stats_params_t *p, double cell_m)
{
    memset(p, 0, sizeof *p);
    p->cell_m = cell_m;
    p->talus_deg = 35;
    p->repose_band_deg = 2;
    p->m = 0.5;
    p->n = 1;
    p->uplift_edges_mm_yr[0] = 0.1;
    p->uplift_edges_mm_yr[1] = 0.5;
    p->relief_window_m = 500;
    p->channel_area_m2 = 1e6;
    p->fit_min_area_m2 = 1e4;
    p->channel_fit_min_area_m2 = 1e3;
    p->fit_min_bin_cells = 16;
    p->slope_bin_deg = 0.1;
    p->relief_bin_m = 0.25;
    p->relief_max_m = 4096;
    p->elev_bin_m = 1;
    p->elev_max_m = 9216;
}

int64_t tb_stats_halo_cells(const tb_stats_params_t *p)
{
    return tb_relief_radius_cells(p->relief_window_m, p->cell_m);
}

static bool s_pow2(double v)
{
    int e;
    return v > 0 && isfinite(v) && frexp(v, &e) == 0.5;
}

static bool s_whole(double v, int32_t lo, int32_t hi, int32_t *out)
{
    double r = nearbyint(v);
    if (!(fabs(v - r) <= 1e-9 * fmax(1, fabs(v))) || r < lo || r > hi)
        return false;
    *out = (int32_t)r;
    return true;
}

static int s_check_params(const tb_stats_params_t *p, int32_t nb[3], tb_err_t *err)
{
#define S_BAD(...) tb_err_set(err, TB_E_INVALID, "stats: " __VA_ARGS__)
    if (!(p->cell_m > 0) || !isfinite(p->cell_m))
        return S_BAD("cell_m %g, expected a positive number of metres", p->cell_m);
    if (!(p->talus_deg > 0 && p->talus_deg < 90))
        return S_BAD("talus_deg %g, expected 0 < talus < 90", p->talus_deg);
    if (!(p->repose_band_deg >= 0 && p->repose_band_deg < 90))
        return S_BAD("repose_band_deg %g, expected 0 .. 90", p->repose_band_deg);
    if (!isfinite(p->m) || !(p->n > 0) || !isfinite(p->n))
        return S_BAD("stream-power m %g, n %g: expected finite m and n > 0", p->m, p->n);
    if (!(p->uplift_edges_mm_yr[0] < p->uplift_edges_mm_yr[1]) ||
        !isfinite(p->uplift_edges_mm_yr[0]) || !isfinite(p->uplift_edges_mm_yr[1]))
        return S_BAD("uplift class edges %g, %g mm/yr: expected two finite rising edges",
                     p->uplift_edges_mm_yr[0], p->uplift_edges_mm_yr[1]);
    if (!(p->relief_window_m > 0) || !isfinite(p->relief_window_m) ||
        p->relief_window_m > 1e5 * p->cell_m)
        return S_BAD("relief_window_m %g, expected a positive width under 1e5 cells",
                     p->relief_window_m);
    if (!(p->channel_area_m2 > 0) || !isfinite(p->channel_area_m2) || !(p->fit_min_area_m2 > 0) ||
        !isfinite(p->fit_min_area_m2))
        return S_BAD("channel_area_m2 %g, fit_min_area_m2 %g: expected positive areas",
                     p->channel_area_m2, p->fit_min_area_m2);
    if (!(p->channel_fit_min_area_m2 > 0) || !isfinite(p->channel_fit_min_area_m2))
        return S_BAD("channel_fit_min_area_m2 %g: expected a positive area",
                     p->channel_fit_min_area_m2);
    if (p->fit_min_bin_cells < 1)
        return S_BAD("fit_min_bin_cells %d, expected at least 1", (int)p->fit_min_bin_cells);
    if (!s_whole(90 / p->slope_bin_deg, 1, 90000, &nb[0]))
        return S_BAD("slope_bin_deg %g does not divide 90 degrees (1 .. 90000 bins)",
                     p->slope_bin_deg);
    if (!s_pow2(p->relief_bin_m) || !s_whole(p->relief_max_m / p->relief_bin_m, 1, 1 << 22, &nb[1]))
        return S_BAD("relief bins %g m up to %g m: expected a power-of-two width and a whole "
                     "number of bins (at most 2^22)",
                     p->relief_bin_m, p->relief_max_m);
    if (!s_pow2(p->elev_bin_m) || !s_whole(p->elev_max_m / p->elev_bin_m, 1, 1 << 22, &nb[2]))
        return S_BAD("elevation bins %g m up to %g m: expected a power-of-two width and a whole "
                     "number of bins (at most 2^22)",
                     p->elev_bin_m, p->elev_max_m);
    return 0;
#undef S_BAD
}

static void s_bucket_free(s_bucket_t *b)
{
    tb_hist_destroy(&b->slope);
    tb_hist_destroy(&b->relief);
    tb_hist_destroy(&b->elev);
    tb_hist_destroy(&b->area);
    for (int k = 0; k < S_AREA_NBINS; k++) {
        tb_hist_destroy(&b->sa[k]);
        tb_hist_destroy(&b->sd[k]);
    }
}

static int s_bucket_init(const tb_stats_t *s, s_bucket_t *b, tb_err_t *err)
{
    memset(b, 0, sizeof *b);
    b->slope = tb_hist_new_linear(0, 90, s->slope_nbins, 0, err);
    b->relief = b->slope ? tb_hist_new_linear(0, s->p.relief_max_m, s->relief_nbins, 0, err) : NULL;
    b->elev = b->relief ? tb_hist_new_linear(0, s->p.elev_max_m, s->elev_nbins, S_ELEV_QUANTUM, err)
                        : NULL;
    b->area =
        b->elev ? tb_hist_new_log2(S_AREA_LO_EXP2, S_AREA_PER_OCTAVE, S_AREA_NBINS, 0, err) : NULL;
    for (int k = 0; b->area && k < S_AREA_NBINS; k++) {
        b->sa[k] = tb_hist_new_log2(S_GRAD_LO_EXP2, S_GRAD_PER_OCTAVE, S_GRAD_NBINS, 0, err);
        b->sd[k] = b->sa[k]
                       ? tb_hist_new_log2(S_GRAD_LO_EXP2, S_GRAD_PER_OCTAVE, S_GRAD_NBINS, 0, err)
                       : NULL;
        if (!b->sd[k])
            break;
    }
    if (!b->area || !b->sd[S_AREA_NBINS - 1]) {
        s_bucket_free(b);
        return -1;
    }
    return 0;
}

static int s_slope_tables(tb_stats_t *s, tb_err_t *err)
{
    int32_t nb = s->slope_nbins;
    s->g2_edge = tb_malloc(((size_t)nb + 2) * sizeof(float), "slope edges", err);
    s->slope_guess = tb_malloc(S_NSLOTS * sizeof(uint16_t), "slope guess table", err);
    if (!s->g2_edge || !s->slope_guess)
        return -1;
    /* A cell is in bin k when its gradient sqrtf(g2) is at least tan(k bin) (as a float); since
     * sqrtf is correctly rounded and monotone, that is g2 >= the least float g2 with sqrtf(g2) >=
     * the edge, found here exactly. */
    for (int32_t k = 0; k < nb; k++) {
        float te = (float)tan(k * s->p.slope_bin_deg / S_DEG_PER_RAD);
        float g = (float)((double)te * (double)te);
        while (sqrtf(g) < te)
            g = nextafterf(g, INFINITY);
        while (g > 0 && sqrtf(nextafterf(g, 0)) >= te)
            g = nextafterf(g, 0);
        s->g2_edge[k] = g;
    }
    s->g2_edge[nb] = INFINITY;
    s->g2_edge[nb + 1] = NAN; /* stops the forward scan: g2 >= NaN is false */
    int32_t k = 0;
    for (uint32_t slot = 0; slot <= S_NSLOTS; slot++) {
        uint32_t bits = (S_SLOT0 + slot) << (23 - S_SLOT_BITS);
        float start;
        memcpy(&start, &bits, sizeof start);
        while (k + 1 < nb && start >= s->g2_edge[k + 1])
            k++;
        if (slot < S_NSLOTS)
            s->slope_guess[slot] = (uint16_t)(k > 65535 ? 65535 : k);
        else
            s->slope_guess_top = k;
    }
    /* Whether every slot holds at most one edge: then the bin of the slot's end is at most one
     * more than its guess. */
    s->slope_one_step = nb <= 65535;
    for (uint32_t slot = 0; s->slope_one_step && slot < S_NSLOTS; slot++) {
        uint32_t bits =
            ((S_SLOT0 + slot + 1) << (23 - S_SLOT_BITS)) - 1; /* last float of the slot */
        float end;
        memcpy(&end, &bits, sizeof end);
        int32_t g = s->slope_guess[slot];
        s->slope_one_step = !(g + 2 <= nb && end >= s->g2_edge[g + 2]);
    }
    return 0;
}

/* The slope bin of squared gradient g2 >= 0 whose float-bit slot is `slot` (-1 below the table,
 * S_NSLOTS above): the last k with g2_edge[k] <= g2 (nbins when g2 is +inf). */
static inline int32_t s_slope_bin_slot(const tb_stats_t *s, float t, int32_t slot)
{
    int32_t k = slot < 0 ? 0 : slot >= S_NSLOTS ? s->slope_guess_top : s->slope_guess[slot];
    k += t >= s->g2_edge[k + 1];
    if (!s->slope_one_step || slot < 0 || slot >= S_NSLOTS)
        while (t >= s->g2_edge[k + 1])
            k++;
    return k;
}

tb_stats_t *tb_stats_new(const tb_stats_params_t *p, tb_err_t *err)
{
    int32_t nb[3];
    if (s_check_params(p, nb, err) != 0)
        return NULL;
    tb_stats_t *s = tb_calloc(1, sizeof *s, "statistics", err);
    if (!s)
        return NULL;
    s->p = *p;
    s->radius = tb_relief_radius_cells(p->relief_window_m, p->cell_m);
    s->slope_nbins = nb[0];
    s->relief_nbins = nb[1];
    s->elev_nbins = nb[2];
    s->inv_relief_bin = (float)(1 / p->relief_bin_m);
    s->inv_elev_bin = (float)(1 / p->elev_bin_m);
    s->inv_8dx = (float)(1 / (8 * p->cell_m));
    s->inv_dx = (float)(1 / p->cell_m);
    s->channel_area = (float)p->channel_area_m2;
    s->uplift_edge_m_yr[0] = (float)(p->uplift_edges_mm_yr[0] * 1e-3);
    s->uplift_edge_m_yr[1] = (float)(p->uplift_edges_mm_yr[1] * 1e-3);
    for (int i = 0; i < 3; i++)
        s->row_tag[i] = INT64_MIN;
    int rc = s_slope_tables(s, err);
    for (int c = 0; rc == 0 && c < TB_STATS_NBUCKETS; c++)
        rc = s_bucket_init(s, &s->b[c], err);
    if (rc == 0) {
        /* The repose band to the slope bins' resolution: [talus - band, talus + band) exactly when
         * both ends are bin edges (33 and 37 degrees at the defaults). */
        s->near_lo = tb_hist_bin_of(s->b[0].slope, p->talus_deg - p->repose_band_deg);
        s->near_hi = tb_hist_bin_of(s->b[0].slope, p->talus_deg + p->repose_band_deg);
        s->near_lo = s->near_lo < 0 ? 0 : s->near_lo;
        rc = tb_hist_log2_lut(s->b[0].area, &s->area_lut, err);
    }
    if (rc == 0)
        rc = tb_hist_log2_lut(s->b[0].sa[0], &s->grad_lut, err);
    if (rc == 0 && (S_AREA_PER_OCTAVE != 4 || S_GRAD_PER_OCTAVE != 4))
        rc = tb_err_set(err, TB_E_INTERNAL, "stats: tb_hist_log2_bins4_f32 needs 4 bins an octave");
    if (rc != 0) {
        tb_stats_destroy(&s);
        return NULL;
    }
    return s;
}

void tb_stats_destroy(tb_stats_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_stats_t *s = *self_p;
    for (int c = 0; c < TB_STATS_NBUCKETS; c++)
        s_bucket_free(&s->b[c]);
    for (int c = 0; c < s->n_classes; c++)
        s_bucket_free(&s->cls[c]);
    free(s->g2_edge);
    free(s->slope_guess);
    tb_relief_destroy(&s->relief);
    free(s->rows);
    free(s->ones);
    free(s->row_land);
    free(s);
    *self_p = NULL;
}

const tb_stats_params_t *tb_stats_params(const tb_stats_t *self)
{
    return &self->p;
}

int64_t tb_stats_relief_window_cells(const tb_stats_t *self)
{
    return 2 * self->radius + 1;
}

int64_t tb_stats_edge_cells(const tb_stats_t *self)
{
    return self->edge_cells;
}

/* The square of Horn's gradient (m/m) at the centre of a 3x3 block read from three padded rows (n
 * is the row above, c the centre, s below; column i of the box is index i + 1); the gradient is its
 * sqrtf. The fixed evaluation order and -ffp-contract=off make it the same bits in every box. */
static inline float s_horn_g2(const float *n, const float *c, const float *s, int64_t i,
                              float inv_8dx)
{
    float z1 = n[i], z2 = n[i + 1], z3 = n[i + 2];
    float z4 = c[i], z6 = c[i + 2];
    float z7 = s[i], z8 = s[i + 1], z9 = s[i + 2];
    float gx = ((z3 + 2.0f * z6 + z9) - (z1 + 2.0f * z4 + z7)) * inv_8dx;
    float gy = ((z1 + 2.0f * z2 + z3) - (z7 + 2.0f * z8 + z9)) * inv_8dx;
    return gx * gx + gy * gy;
}

/* Row j of the box padded to w + 2 with its wrapped or sea-level neighbours, in one of three slots
 * (rows j-1, j, j+1 always occupy different slots). */
static const float *s_padded_row(tb_stats_t *s, const tb_frame_t *box, const float *height,
                                 int64_t j)
{
    int64_t w = box->w, slot = ((j % 3) + 3) % 3;
    float *row = s->rows + (size_t)slot * (size_t)(w + 2);
    if (s->row_tag[slot] == j)
        return row;
    s->row_tag[slot] = j;
    if (j < 0 || j >= box->h) {
        memset(row, 0, (size_t)(w + 2) * sizeof(float));
        return row;
    }
    const float *src = height + (size_t)j * (size_t)w;
    memcpy(row + 1, src, (size_t)w * sizeof(float));
    bool wraps = tb_frame_wraps(box);
    row[0] = wraps ? src[w - 1] : 0.0f;
    row[w + 1] = wraps ? src[0] : 0.0f;
    return row;
}

static int s_workspace(tb_stats_t *s, const tb_frame_t *box, tb_err_t *err)
{
    size_t rows = 3 * ((size_t)box->w + 2) + (size_t)box->w * 12, w = (size_t)box->w,
           h = (size_t)box->h;
    if (!s->relief && !(s->relief = tb_relief_new(err)))
        return -1;
    if (rows > s->rows_cap) {
        free(s->rows);
        if (!(s->rows = tb_malloc(rows * sizeof(float), "stats rows", err))) {
            s->rows_cap = 0;
            return -1;
        }
        s->rows_cap = rows;
    }
    s->row_t = s->rows + 3 * (w + 2);
    s->row_slot = (int32_t *)(s->row_t + w);
    s->row_kr = s->row_slot + w;
    s->row_ke = s->row_kr + w;
    s->row_q = s->row_ke + w;
    s->row_ka = s->row_q + w;
    s->row_kg = s->row_ka + w;
    s->row_land_idx = s->row_kg + w;
    s->row_ks = s->row_land_idx + w;
    s->row_bk = s->row_ks + w;
    s->row_sd = (float *)(s->row_bk + w);
    s->row_kd = (int32_t *)(s->row_sd + w);
    if (w > s->ones_cap) {
        free(s->ones);
        if (!(s->ones = tb_malloc(w, "stats mask row", err))) {
            s->ones_cap = 0;
            return -1;
        }
        memset(s->ones, 1, w);
        s->ones_cap = w;
    }
    if (h > s->land_cap) {
        free(s->row_land);
        if (!(s->row_land = tb_malloc(h, "stats row flags", err))) {
            s->land_cap = 0;
            return -1;
        }
        s->land_cap = h;
    }
    for (int i = 0; i < 3; i++)
        s->row_tag[i] = INT64_MIN;
    return 0;
}

/* Checks the inputs before anything is counted (so a failure leaves the statistics unchanged) and
 * flags the rows that hold counted land. */
static int s_validate(tb_stats_t *s, const tb_frame_t *box, const float *height, const float *area,
                      const float *uplift, const uint8_t *mask, int64_t *edge_cells, tb_err_t *err)
{
    int64_t w = box->w, r = s->radius;
    /* A box side is "inner" when the planet goes on beyond it: either X side of a box that does not
     * wrap, the south side unless the box starts at row 0, the north unless it ends at the top. */
    bool inner_x = !tb_frame_wraps(box), inner_s = box->y0 > 0,
         inner_n = box->y0 + box->h < box->lattice_h;
    int64_t edge = 0;
    for (int64_t j = 0; j < box->h; j++) {
        const float *restrict hr = height + (size_t)j * (size_t)w;
        const uint8_t *restrict mr = mask ? mask + (size_t)j * (size_t)w : s->ones;
        const float *restrict ar = area ? area + (size_t)j * (size_t)w : NULL;
        const float *restrict ur = uplift ? uplift + (size_t)j * (size_t)w : NULL;
        /* One branch-free pass the compiler vectorises; the slow walk below only names a culprit.
         * Absent area or uplift read as a valid stand-in (the row of heights itself is finite). */
        const float *restrict av = ar ? ar : hr, *restrict uv = ur ? ur : hr;
        const float amin = ar ? 0.0f : -FLT_MAX;
        int bad = 0, land = 0;
        for (int64_t i = 0; i < w; i++) {
            int is_land = (mr[i] != 0) & (hr[i] > 0.0f);
            land |= is_land;
            int ok_a = (av[i] >= amin) & (av[i] <= FLT_MAX);
            int ok_u = fabsf(uv[i]) <= FLT_MAX;
            int ok_h = fabsf(hr[i]) <= TB_STATS_HEIGHT_LIMIT_M;
            bad |= (!ok_h) | (is_land & !(ok_a & ok_u));
        }
        s->row_land[j] = (uint8_t)land;
        if (land) {
            /* Only the cells that can be near an inner edge are looked at: the whole row near an
             * inner Y side, else the r columns at each inner X side (none when the box wraps). */
            bool near_y = (inner_s && j < r) || (inner_n && j >= box->h - r);
            int64_t west = near_y ? w : inner_x ? (r < w ? r : w) : 0;
            int64_t east = near_y || !inner_x ? w : (w - r > west ? w - r : west);
            for (int64_t i = 0; i < west; i++)
                edge += (mr[i] != 0) & (hr[i] > 0.0f);
            for (int64_t i = east; i < w; i++)
                edge += (mr[i] != 0) & (hr[i] > 0.0f);
        }
        if (!bad)
            continue;
        for (int64_t i = 0; i < w; i++) {
            size_t at = (size_t)j * (size_t)w + (size_t)i;
            const char *what = NULL;
            float v = 0;
            if (!(fabsf(hr[i]) <= TB_STATS_HEIGHT_LIMIT_M)) {
                what = "height_m";
                v = hr[i];
            } else if (mr[i] && hr[i] > 0 && area && !(area[at] >= 0 && area[at] < INFINITY)) {
                what = "area_m2";
                v = area[at];
            } else if (mr[i] && hr[i] > 0 && uplift && !isfinite(uplift[at])) {
                what = "uplift_m_yr";
                v = uplift[at];
            }
            if (what)
                return tb_err_set(err, TB_E_INVALID,
                                  "stats: %s is %g at cell (%lld, %lld) of the box at lattice "
                                  "(%lld, %lld): expected %s",
                                  what, (double)v, (long long)i, (long long)j,
                                  (long long)tb_frame_lattice_x(box, i),
                                  (long long)tb_frame_lattice_y(box, j),
                                  what[0] == 'h'   ? "a finite height within +-1e6 m"
                                  : what[0] == 'a' ? "a finite area >= 0"
                                                   : "a finite rate");
        }
    }
    *edge_cells = edge;
    return 0;
}

/* The exact extremes and the elevation sum one call gathers per bucket (the bins are counted in
 * place). Kept in registers while a run of cells stays in one bucket. */
typedef struct {
    float g2min, g2max, rmin, rmax, hmin, hmax, amin, amax;
    uint64_t hsum;
} s_ext_t;

typedef struct {
    int64_t *slope, *relief, *elev, *area;
    int64_t *sa[S_AREA_NBINS];
    int64_t *sd[S_AREA_NBINS];
} s_raw_t;

static const float s_inv_dist[8] = {0.70710678f, 1.0f,        0.70710678f, 1.0f,
                                    1.0f,        0.70710678f, 1.0f,        0.70710678f};

/* The steepest-descent step of a channel cell: 1 cardinal, 2 diagonal, 0 no lower neighbour. */
static inline int s_descent(const float *const rows[3], int64_t i, float z)
{
    float best = 0;
    int kind = 0;
    for (int k = 0; k < 8; k++) {
        float zk = rows[tb_nb_dy[k] + 1][i + 1 + tb_nb_dx[k]];
        float drop = (z - zk) * s_inv_dist[k];
        bool steeper = drop > best; /* the first of equal drops wins, in table order */
        best = steeper ? drop : best;
        kind = steeper ? (tb_nb_is_diagonal(k) ? 2 : 1) : kind;
    }
    return kind;
}

/* What pass 2 of a row reads: the per-cell arrays pass 1 filled. */
typedef struct {
    const float *rows[3];
    const float *relief, *area;
    int64_t n;           /* counted land cells of the row */
    const int32_t *land; /* their columns */
} s_rowdata_t;

/* Pass 2 of a row: the increments of the land cells into the buckets bk[k] names (-1: none). The
 * exact extremes are scalars held while a run of cells stays in one bucket. */
static void s_bin(const tb_stats_t *s, const s_rowdata_t *d, const int32_t *restrict bk,
                  const s_raw_t *raw, s_ext_t *ext, s_chan_t *chan)
{
    const float *cr = d->rows[1], *restrict relief = d->relief, *restrict area = d->area;
    const int32_t *restrict land = d->land, *restrict ks = s->row_ks;
    const float *restrict tr = s->row_t;
    const int32_t *restrict kr = s->row_kr, *restrict ke = s->row_ke, *restrict q = s->row_q;
    const int32_t *restrict ka = s->row_ka, *restrict kg = s->row_kg;
    const float channel_area = s->channel_area;
    const int32_t *restrict kd = s->row_kd;
    int cur = -1;
    float g2min = 0, g2max = 0, rmin = 0, rmax = 0, hmin = 0, hmax = 0, amin = 0, amax = 0;
    uint64_t hsum = 0;
    const s_raw_t *r = raw;
    for (int64_t k = 0; k < d->n; k++) {
        const int64_t i = land[k];
        int c = bk[k];
        if (c < 0)
            continue;
        float z = cr[i + 1];
        if (c != cur) {
            if (cur >= 0)
                ext[cur] = (s_ext_t){g2min, g2max, rmin, rmax, hmin, hmax, amin, amax, hsum};
            cur = c;
            g2min = ext[c].g2min, g2max = ext[c].g2max, rmin = ext[c].rmin, rmax = ext[c].rmax;
            hmin = ext[c].hmin, hmax = ext[c].hmax, amin = ext[c].amin, amax = ext[c].amax;
            hsum = ext[c].hsum;
            r = &raw[c];
        }
        float g2 = tr[i];
        r->slope[1 + ks[k]]++;
        g2min = g2 < g2min ? g2 : g2min;
        g2max = g2 > g2max ? g2 : g2max;
        float rel = relief[i];
        r->relief[1 + kr[i]]++;
        rmin = rel < rmin ? rel : rmin;
        rmax = rel > rmax ? rel : rmax;
        r->elev[1 + ke[i]]++;
        hmin = z < hmin ? z : hmin;
        hmax = z > hmax ? z : hmax;
        hsum += (uint64_t)(int64_t)q[i];
        if (!area)
            continue;
        float ar = area[i];
        int32_t kai = ka[i];
        r->area[1 + kai]++;
        amin = ar < amin ? ar : amin;
        amax = ar > amax ? ar : amax;
        if ((uint32_t)kai < S_AREA_NBINS) {
            r->sa[kai][1 + kg[i]]++;
            r->sd[kai][1 + kd[i]]++;
        }
        if (ar >= channel_area) {
            int kind = s_descent(d->rows, i, z);
            chan[c].channel++;
            chan[c].cardinal += kind == 1;
            chan[c].diagonal += kind == 2;
            chan[c].no_descent += kind == 0;
        }
    }
    if (cur >= 0)
        ext[cur] = (s_ext_t){g2min, g2max, rmin, rmax, hmin, hmax, amin, amax, hsum};
}

/* The painted-class side of a row: raw, ext and chan per class, and the map from a raster value to
 * a class (-1: none). NULL when the call has no class raster. */
typedef struct {
    const uint8_t *classes; /* this row's raster */
    const int32_t *map;     /* 256 entries */
    s_raw_t *raw;
    s_ext_t *ext;
    s_chan_t *chan;
} s_classrow_t;

/* Bins the counted land of row j. rows[0] is row j-1, rows[1] row j, rows[2] row j+1, padded.
 *
 * The row's counted land is listed first (a branch-free compaction), so pass 1 - everything that
 * vectorises: gradient, slope slot, relief, elevation, area and g2 bins, the quantised height -
 * runs over the span from its first to its last land cell only, and pass 2 (s_bin) - the
 * increments, which do not vectorise - visits land cells only, once for the uplift buckets and
 * once more for the painted classes when there are any. */
static void s_row(const tb_stats_t *s, int64_t w, const float *rows[3],
                  const float *restrict relief, const float *restrict area,
                  const float *restrict uplift, const uint8_t *restrict mask, const s_raw_t *raw,
                  s_ext_t *ext, s_chan_t *chan, const s_classrow_t *cls)
{
    const float *sr = rows[0], *cr = rows[1], *nr = rows[2];
    const float inv_8dx = s->inv_8dx, inv_rbin = s->inv_relief_bin, inv_ebin = s->inv_elev_bin;
    const float rnb = (float)s->relief_nbins, enb = (float)s->elev_nbins;
    const float e0 = s->uplift_edge_m_yr[0], e1 = s->uplift_edge_m_yr[1];
    int32_t *restrict land = s->row_land_idx;
    int64_t n = 0;
    for (int64_t i = 0; i < w; i++) {
        land[n] = (int32_t)i;
        n += (mask[i] != 0) & (cr[i + 1] > 0.0f);
    }
    if (n == 0)
        return;
    const int64_t i0 = land[0], i1 = (int64_t)land[n - 1] + 1;
    float *restrict tr = s->row_t;
    int32_t *restrict slot = s->row_slot, *restrict kr = s->row_kr, *restrict ke = s->row_ke;
    int32_t *restrict q = s->row_q, *restrict ka = s->row_ka, *restrict kg = s->row_kg;
    for (int64_t i = i0; i < i1; i++) {
        float g2 = s_horn_g2(nr, cr, sr, i, inv_8dx);
        tr[i] = g2;
        uint32_t bits;
        memcpy(&bits, &g2, sizeof bits);
        int32_t sl = (int32_t)(bits >> (23 - S_SLOT_BITS)) - S_SLOT0;
        slot[i] = sl < 0 ? -1 : sl >= S_NSLOTS ? S_NSLOTS : sl;
        float fr = relief[i] * inv_rbin; /* >= 0; compared in float so no cast overflows */
        kr[i] = fr < rnb ? (int32_t)fr : (int32_t)rnb;
        float fe = cr[i + 1] * inv_ebin;
        ke[i] = fe < enb ? (fe > 0 ? (int32_t)fe : 0) : (int32_t)enb;
    }
    /* The quantised height, round(z / 2^-10) to nearest with ties to even, by exact IEEE arithmetic
     * (no libm call, and the same as nearbyint in the default rounding mode); |height| <= 1e6 m, so
     * it is under 2^31. */
    for (int64_t i = i0; i < i1; i++)
        q[i] = (int32_t)(((double)cr[i + 1] * (1 / S_ELEV_QUANTUM) + 0x1.8p52) - 0x1.8p52);
    tb_hist_log2_bins4_f32(&s->grad_lut, tr + i0, (size_t)(i1 - i0), kg + i0);
    if (area) {
        tb_hist_log2_bins4_f32(&s->area_lut, area + i0, (size_t)(i1 - i0), ka + i0);
        /* The squared steepest-descent gradient for the channel fit (docs/statistics.md): the
         * largest drop over distance to one of the 8 neighbours, 0 when none is lower; neighbour
         * by neighbour over the span, so the loops vectorise. */
        float *restrict sd = s->row_sd;
        for (int64_t i = i0; i < i1; i++)
            sd[i] = 0;
        for (int k = 0; k < 8; k++) {
            const float *nb = rows[tb_nb_dy[k] + 1] + 1 + tb_nb_dx[k];
            const float f = s_inv_dist[k];
            for (int64_t i = i0; i < i1; i++) {
                float drop = (cr[i + 1] - nb[i]) * f;
                sd[i] = drop > sd[i] ? drop : sd[i];
            }
        }
        const float inv_dx = s->inv_dx;
        for (int64_t i = i0; i < i1; i++) {
            float g = sd[i] * inv_dx;
            sd[i] = g * g;
        }
        tb_hist_log2_bins4_f32(&s->grad_lut, sd + i0, (size_t)(i1 - i0), s->row_kd + i0);
    }
    /* The slope bins of the land, in a loop of their own: each is a chain of dependent loads
     * (slot, guess, edge), and with no counter to update between them the chains overlap. */
    int32_t *restrict ks = s->row_ks;
    for (int64_t k = 0; k < n; k++)
        ks[k] = s_slope_bin_slot(s, tr[land[k]], slot[land[k]]);
    int32_t *restrict bk = s->row_bk;
    for (int64_t k = 0; k < n; k++) {
        const int64_t i = land[k];
        bk[k] = uplift ? (uplift[i] >= e0) + (uplift[i] >= e1) : TB_STATS_UNCLASSIFIED;
    }
    s_rowdata_t d = {{rows[0], rows[1], rows[2]}, relief, area, n, land};
    s_bin(s, &d, bk, raw, ext, chan);
    if (!cls)
        return;
    for (int64_t k = 0; k < n; k++)
        bk[k] = cls->map[cls->classes[land[k]]];
    s_bin(s, &d, bk, cls->raw, cls->ext, cls->chan);
}

/* The gradient histograms of the slope-area table keep bin-edge extremes rather than exact ones:
 * the lower edge of the lowest occupied bin and the upper edge of the highest (0 and +inf for the
 * underflow and overflow). They bound the data, which is all a quantile's clamp needs, and being a
 * function of the counts alone they pool exactly. */
static void s_sa_extremes(tb_hist_t *h)
{
    const int64_t *c = tb_hist_counts_raw(h);
    int32_t nb = tb_hist_spec(h)->nbins, lo = nb + 1, hi = -2;
    for (int32_t k = -1; k <= nb; k++)
        if (c[1 + k] > 0) {
            lo = k < lo ? k : lo;
            hi = k;
        }
    if (hi < -1)
        return;
    double min = lo < 0 ? 0 : tb_hist_edge(h, lo);
    double max = hi >= nb ? INFINITY : tb_hist_edge(h, hi + 1);
    tb_hist_add_raw_extras(h, 0, 0, min, max);
}

static double s_deg(float t)
{
    return atan((double)t) * S_DEG_PER_RAD;
}

/* Index of the class named `name`, or -(insertion point) - 1 when there is none. */
static int s_class_search(const tb_stats_t *s, const char *name)
{
    int lo = 0, hi = s->n_classes;
    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(s->class_name[mid], name);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -lo - 1;
}

int tb_stats_class_find(const tb_stats_t *self, const char *name)
{
    int at = name ? s_class_search(self, name) : -1;
    return at >= 0 ? at : -1;
}

/* Inserts an empty class at its sorted place; -1 with *err set when memory runs out or the table
 * is full. */
static int s_class_insert(tb_stats_t *s, const char *name, tb_err_t *err)
{
    int at = s_class_search(s, name);
    if (at >= 0)
        return 0;
    at = -at - 1;
    if (s->n_classes >= TB_STATS_MAX_CLASSES)
        return tb_err_set(err, TB_E_INVALID, "stats: more than %d painted classes",
                          TB_STATS_MAX_CLASSES);
    s_bucket_t b;
    if (s_bucket_init(s, &b, err) != 0)
        return -1;
    memmove(&s->cls[at + 1], &s->cls[at], (size_t)(s->n_classes - at) * sizeof s->cls[0]);
    memmove(&s->class_name[at + 1], &s->class_name[at],
            (size_t)(s->n_classes - at) * sizeof s->class_name[0]);
    s->cls[at] = b;
    snprintf(s->class_name[at], sizeof s->class_name[at], "%s", name);
    s->n_classes++;
    return 0;
}

/* Removes the classes named in `names` that hold no land (undoing inserts after a failure). */
static void s_class_drop_empty(tb_stats_t *s)
{
    int keep = 0;
    for (int c = 0; c < s->n_classes; c++) {
        if (tb_hist_count(s->cls[c].slope) == 0) {
            s_bucket_free(&s->cls[c]);
            continue;
        }
        if (keep != c) {
            s->cls[keep] = s->cls[c];
            memcpy(s->class_name[keep], s->class_name[c], sizeof s->class_name[c]);
        }
        keep++;
    }
    s->n_classes = keep;
}

/* Makes sure every class some counted land of `classes` names exists, and fills map (256 entries:
 * raster value to class index, -1 for none). Unchanged on failure. */
static int s_class_prepare(tb_stats_t *s, const tb_frame_t *box, const float *height,
                           const uint8_t *mask, const uint8_t *classes, int n_names,
                           const char *const *names, int32_t map[256], tb_err_t *err)
{
    uint8_t used[256] = {0};
    size_t cells = (size_t)box->w * (size_t)box->h;
    for (size_t i = 0; i < cells; i++)
        if ((!mask || mask[i]) && height[i] > 0.0f)
            used[classes[i]] = 1;
    for (int v = 0; v < 256; v++) {
        map[v] = -1;
        if (!used[v] || v >= n_names || !names || !names[v] || !names[v][0])
            continue;
        if (strlen(names[v]) >= TB_STATS_CLASS_NAME_MAX)
            return tb_err_set(err, TB_E_INVALID,
                              "stats: class name \"%.32s...\" is longer than %d bytes", names[v],
                              TB_STATS_CLASS_NAME_MAX - 1);
    }
    for (int v = 0; v < 256; v++) {
        if (!used[v] || v >= n_names || !names || !names[v] || !names[v][0])
            continue;
        if (s_class_insert(s, names[v], err) != 0) {
            s_class_drop_empty(s);
            return -1;
        }
    }
    for (int v = 0; v < 256; v++)
        if (used[v] && v < n_names && names && names[v] && names[v][0])
            map[v] = s_class_search(s, names[v]);
    return 0;
}

/* Folds one call's exact extremes and channel counters into a bucket. */
static void s_bucket_finish(s_bucket_t *b, const s_ext_t *e, const s_chan_t *chan)
{
    if (!(e->g2min <= e->g2max))
        return; /* no land in this bucket */
    b->ch.channel += chan->channel;
    b->ch.cardinal += chan->cardinal;
    b->ch.diagonal += chan->diagonal;
    b->ch.no_descent += chan->no_descent;
    tb_hist_add_raw_extras(b->slope, 0, 0, s_deg(sqrtf(e->g2min)), s_deg(sqrtf(e->g2max)));
    tb_hist_add_raw_extras(b->relief, 0, 0, e->rmin, e->rmax);
    tb_hist_add_raw_extras(b->elev, e->hsum, 0, e->hmin, e->hmax);
    tb_hist_add_raw_extras(b->area, 0, 0, e->amin, e->amax);
    for (int ka = 0; ka < S_AREA_NBINS; ka++) {
        s_sa_extremes(b->sa[ka]);
        s_sa_extremes(b->sd[ka]);
    }
}

static void s_raw_init(s_bucket_t *b, s_raw_t *raw, s_ext_t *ext, s_chan_t *chan)
{
    raw->slope = tb_hist_counts_raw(b->slope);
    raw->relief = tb_hist_counts_raw(b->relief);
    raw->elev = tb_hist_counts_raw(b->elev);
    raw->area = tb_hist_counts_raw(b->area);
    for (int k = 0; k < S_AREA_NBINS; k++) {
        raw->sa[k] = tb_hist_counts_raw(b->sa[k]);
        raw->sd[k] = tb_hist_counts_raw(b->sd[k]);
    }
    *ext = (s_ext_t){INFINITY,  -INFINITY, INFINITY,  -INFINITY, INFINITY,
                     -INFINITY, INFINITY,  -INFINITY, 0};
    memset(chan, 0, sizeof *chan);
}

int tb_stats_accumulate(tb_stats_t *self, const tb_frame_t *box, const float *height_m,
                        const float *area_m2, const float *uplift_m_yr, const uint8_t *count_mask,
                        tb_err_t *err)
{
    return tb_stats_accumulate_classes(self, box, height_m, area_m2, uplift_m_yr, count_mask, NULL,
                                       0, NULL, err);
}

int tb_stats_accumulate_classes(tb_stats_t *self, const tb_frame_t *box, const float *height_m,
                                const float *area_m2, const float *uplift_m_yr,
                                const uint8_t *count_mask, const uint8_t *classes, int n_names,
                                const char *const *class_names, tb_err_t *err)
{
    if (!tb_frame_valid(box))
        return tb_err_set(err, TB_E_INVALID, "stats: the box is not a valid frame (no origin?)");
    if (!height_m)
        return tb_err_set(err, TB_E_INVALID, "stats: no height_m grid");
    if (!(fabs(box->cell_m - self->p.cell_m) <= 1e-9 * self->p.cell_m))
        return tb_err_set(err, TB_E_INVALID,
                          "stats: the box has %g m cells, the statistics were made for %g m",
                          box->cell_m, self->p.cell_m);
    int64_t edge_cells = 0;
    if (s_workspace(self, box, err) != 0 ||
        s_validate(self, box, height_m, area_m2, uplift_m_yr, count_mask, &edge_cells, err) != 0)
        return -1;
    /* The class side's workspace before any class is made, so a failure changes nothing. */
    int32_t map[256];
    s_raw_t *craw = NULL;
    s_ext_t *cext = NULL;
    s_chan_t *cchan = NULL;
    if (classes) {
        craw = tb_malloc(TB_STATS_MAX_CLASSES * sizeof *craw, "stats class counters", err);
        cext = craw ? tb_malloc(TB_STATS_MAX_CLASSES * sizeof *cext, "stats class extremes", err)
                    : NULL;
        cchan = cext ? tb_malloc(TB_STATS_MAX_CLASSES * sizeof *cchan, "stats class channels", err)
                     : NULL;
        if (!cchan || s_class_prepare(self, box, height_m, count_mask, classes, n_names,
                                      class_names, map, err) != 0) {
            free(craw);
            free(cext);
            free(cchan);
            return -1;
        }
        for (int c = 0; c < self->n_classes; c++)
            s_raw_init(&self->cls[c], &craw[c], &cext[c], &cchan[c]);
    }
    if (tb_relief_begin(self->relief, box, height_m, self->radius, err) != 0) {
        if (classes)
            s_class_drop_empty(self);
        free(craw);
        free(cext);
        free(cchan);
        return -1;
    }

    s_raw_t raw[TB_STATS_NBUCKETS];
    s_ext_t ext[TB_STATS_NBUCKETS];
    s_chan_t chan[TB_STATS_NBUCKETS];
    for (int c = 0; c < TB_STATS_NBUCKETS; c++)
        s_raw_init(&self->b[c], &raw[c], &ext[c], &chan[c]);

    const int64_t w = box->w, h = box->h, k = 2 * self->radius + 1;
    for (int64_t b = 0; b * k < h; b++) {
        int64_t j1 = (b + 1) * k < h ? (b + 1) * k : h;
        bool any = false;
        for (int64_t j = b * k; j < j1; j++)
            any |= self->row_land[j] != 0;
        if (!any)
            continue;
        tb_relief_block(self->relief, b);
        for (int64_t j = b * k; j < j1; j++) {
            if (!self->row_land[j])
                continue;
            const float *rel = tb_relief_row(self->relief, j);
            const float *rows[3] = {s_padded_row(self, box, height_m, j - 1),
                                    s_padded_row(self, box, height_m, j),
                                    s_padded_row(self, box, height_m, j + 1)};
            size_t at = (size_t)j * (size_t)w;
            s_classrow_t cr = {classes ? classes + at : NULL, map, craw, cext, cchan};
            s_row(self, w, rows, rel, area_m2 ? area_m2 + at : NULL,
                  uplift_m_yr ? uplift_m_yr + at : NULL, count_mask ? count_mask + at : self->ones,
                  raw, ext, chan, classes ? &cr : NULL);
        }
    }

    for (int c = 0; c < TB_STATS_NBUCKETS; c++)
        s_bucket_finish(&self->b[c], &ext[c], &chan[c]);
    if (classes)
        for (int c = 0; c < self->n_classes; c++)
            s_bucket_finish(&self->cls[c], &cext[c], &cchan[c]);
    free(craw);
    free(cext);
    free(cchan);
    self->edge_cells += edge_cells;
    return 0;
}

/* --- merging, equality, encoding ------------------------------------------------------------- */

static bool s_params_equal(const tb_stats_params_t *a, const tb_stats_params_t *b)
{
    return a->cell_m == b->cell_m && a->talus_deg == b->talus_deg &&
           a->repose_band_deg == b->repose_band_deg && a->m == b->m && a->n == b->n &&
           a->uplift_edges_mm_yr[0] == b->uplift_edges_mm_yr[0] &&
           a->uplift_edges_mm_yr[1] == b->uplift_edges_mm_yr[1] &&
           a->relief_window_m == b->relief_window_m && a->channel_area_m2 == b->channel_area_m2 &&
           a->fit_min_area_m2 == b->fit_min_area_m2 &&
           a->channel_fit_min_area_m2 == b->channel_fit_min_area_m2 &&
           a->fit_min_bin_cells == b->fit_min_bin_cells && a->slope_bin_deg == b->slope_bin_deg &&
           a->relief_bin_m == b->relief_bin_m && a->relief_max_m == b->relief_max_m &&
           a->elev_bin_m == b->elev_bin_m && a->elev_max_m == b->elev_max_m;
}

static int64_t *s_counter(s_chan_t *c, int i)
{
    int64_t *f[S_NCOUNTS] = {&c->channel, &c->cardinal, &c->diagonal, &c->no_descent};
    return f[i];
}

/* Every histogram of a bucket in a fixed order: slope, relief, elevation, area, the gradient
 * histograms of the area bins, the steepest-descent histograms of the area bins. */
#define S_NHISTS (4 + 2 * S_AREA_NBINS)
static tb_hist_t **s_hist_slot(s_bucket_t *b, int i)
{
    switch (i) {
    case 0:
        return &b->slope;
    case 1:
        return &b->relief;
    case 2:
        return &b->elev;
    case 3:
        return &b->area;
    default:
        return i - 4 < S_AREA_NBINS ? &b->sa[i - 4] : &b->sd[i - 4 - S_AREA_NBINS];
    }
}

static tb_hist_t *s_hist(const s_bucket_t *b, int i)
{
    return *s_hist_slot((s_bucket_t *)b, i);
}

static int s_bucket_merge(s_bucket_t *dst, const s_bucket_t *src, tb_err_t *err)
{
    s_chan_t s = src->ch;
    for (int i = 0; i < S_NCOUNTS; i++)
        *s_counter(&dst->ch, i) += *s_counter(&s, i);
    for (int i = 0; i < S_NHISTS; i++)
        if (tb_hist_merge(s_hist(dst, i), s_hist(src, i), err) != 0)
            return tb_err_prefix(err, "stats merge (an invariant broke)");
    return 0;
}

int tb_stats_merge(tb_stats_t *dst, const tb_stats_t *src, tb_err_t *err)
{
    if (!s_params_equal(&dst->p, &src->p))
        return tb_err_set(err, TB_E_INVALID,
                          "stats merge: the two statistics were made with different parameters");
    /* Every bin count is at most its bucket's land count, so when no land count overflows no bin
     * can: check first, and the merge below cannot fail half-way. */
    int64_t edge;
    if (__builtin_add_overflow(dst->edge_cells, src->edge_cells, &edge))
        return tb_err_set(err, TB_E_INVALID, "stats merge: edge cells overflow int64");
    for (int c = 0; c < TB_STATS_NBUCKETS; c++) {
        s_chan_t d = dst->b[c].ch, s = src->b[c].ch;
        int64_t sum;
        if (__builtin_add_overflow(tb_hist_count(dst->b[c].slope), tb_hist_count(src->b[c].slope),
                                   &sum))
            return tb_err_set(err, TB_E_INVALID, "stats merge: bucket %d overflows int64", c);
        for (int i = 0; i < S_NCOUNTS; i++)
            if (__builtin_add_overflow(*s_counter(&d, i), *s_counter(&s, i), &sum))
                return tb_err_set(err, TB_E_INVALID, "stats merge: bucket %d overflows int64", c);
    }
    int missing = 0;
    for (int c = 0; c < src->n_classes; c++) {
        int at = s_class_search(dst, src->class_name[c]);
        missing += at < 0;
        if (at < 0)
            continue;
        int64_t sum;
        if (__builtin_add_overflow(tb_hist_count(dst->cls[at].slope),
                                   tb_hist_count(src->cls[c].slope), &sum))
            return tb_err_set(err, TB_E_INVALID, "stats merge: class %s overflows int64",
                              src->class_name[c]);
    }
    if (dst->n_classes + missing > TB_STATS_MAX_CLASSES)
        return tb_err_set(err, TB_E_INVALID, "stats merge: more than %d painted classes",
                          TB_STATS_MAX_CLASSES);
    for (int c = 0; c < src->n_classes; c++)
        if (s_class_insert(dst, src->class_name[c], err) != 0) {
            s_class_drop_empty(dst);
            return -1;
        }
    dst->edge_cells = edge;
    for (int c = 0; c < TB_STATS_NBUCKETS; c++)
        if (s_bucket_merge(&dst->b[c], &src->b[c], err) != 0)
            return -1;
    for (int c = 0; c < src->n_classes; c++)
        if (s_bucket_merge(&dst->cls[s_class_search(dst, src->class_name[c])], &src->cls[c], err) !=
            0)
            return -1;
    return 0;
}

static bool s_bucket_equal(const s_bucket_t *a, const s_bucket_t *b)
{
    if (memcmp(&a->ch, &b->ch, sizeof a->ch) != 0)
        return false;
    for (int i = 0; i < S_NHISTS; i++)
        if (!tb_hist_equal(s_hist(a, i), s_hist(b, i)))
            return false;
    return true;
}

bool tb_stats_equal(const tb_stats_t *a, const tb_stats_t *b)
{
    if (!s_params_equal(&a->p, &b->p) || a->edge_cells != b->edge_cells)
        return false;
    for (int c = 0; c < TB_STATS_NBUCKETS; c++)
        if (!s_bucket_equal(&a->b[c], &b->b[c]))
            return false;
    if (a->n_classes != b->n_classes)
        return false;
    for (int c = 0; c < a->n_classes; c++)
        if (strcmp(a->class_name[c], b->class_name[c]) != 0 ||
            !s_bucket_equal(&a->cls[c], &b->cls[c]))
            return false;
    return true;
}

/* Layout, version 2, little-endian:
 *   u32 magic "TBST", u16 version, u16 buckets (4),
 *   the parameters: 16 f64 in struct order with fit_min_bin_cells as u32 after
 *   channel_fit_min_area_m2,
 *   the fixed table shape: u32 area_lo_exp2, area_per_octave, area_nbins, grad_lo_exp2,
 *   grad_per_octave, grad_nbins, i64 edge cells,
 *   per bucket: 4 i64 channel counters (cells, cardinal, diagonal, no descent), then its histograms
 * (tb_hist_encode) slope, relief, elevation, area, and per area bin a u8 (0 empty, 1 present)
 * followed by the gradient histogram if present; then u16 painted classes, each a u8 name length,
 * the name's bytes and a bucket as above, in ascending name order. */
static void s_bucket_put(const s_bucket_t *b, tb_bytes_t *out)
{
    s_chan_t ch = b->ch;
    for (int i = 0; i < S_NCOUNTS; i++)
        tb_bytes_put_i64(out, *s_counter(&ch, i));
    for (int i = 0; i < 4; i++)
        tb_hist_encode(s_hist(b, i), out);
    for (int i = 4; i < S_NHISTS; i++) {
        bool present = tb_hist_count(s_hist(b, i)) > 0;
        tb_bytes_put_u8(out, present);
        if (present)
            tb_hist_encode(s_hist(b, i), out);
    }
}

uint8_t *tb_stats_encode(const tb_stats_t *self, size_t *len, tb_err_t *err)
{
    const tb_stats_params_t *p = &self->p;
    tb_bytes_t out;
    tb_bytes_init(&out);
    tb_bytes_put_u32(&out, S_MAGIC);
    tb_bytes_put_u16(&out, S_VERSION);
    tb_bytes_put_u16(&out, TB_STATS_NBUCKETS);
    const double f[] = {p->cell_m,
                        p->talus_deg,
                        p->repose_band_deg,
                        p->m,
                        p->n,
                        p->uplift_edges_mm_yr[0],
                        p->uplift_edges_mm_yr[1],
                        p->relief_window_m,
                        p->channel_area_m2,
                        p->fit_min_area_m2,
                        p->channel_fit_min_area_m2};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        tb_bytes_put_f64(&out, f[i]);
    tb_bytes_put_u32(&out, (uint32_t)p->fit_min_bin_cells);
    const double g[] = {p->slope_bin_deg, p->relief_bin_m, p->relief_max_m, p->elev_bin_m,
                        p->elev_max_m};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        tb_bytes_put_f64(&out, g[i]);
    const int32_t shape[] = {S_AREA_LO_EXP2, S_AREA_PER_OCTAVE, S_AREA_NBINS,
                             S_GRAD_LO_EXP2, S_GRAD_PER_OCTAVE, S_GRAD_NBINS};
    for (size_t i = 0; i < 6; i++)
        tb_bytes_put_u32(&out, (uint32_t)shape[i]);
    tb_bytes_put_i64(&out, self->edge_cells);
    for (int c = 0; c < TB_STATS_NBUCKETS; c++)
        s_bucket_put(&self->b[c], &out);
    tb_bytes_put_u16(&out, (uint16_t)self->n_classes);
    for (int c = 0; c < self->n_classes; c++) {
        size_t nlen = strlen(self->class_name[c]);
        tb_bytes_put_u8(&out, (uint8_t)nlen);
        tb_bytes_put(&out, self->class_name[c], nlen);
        s_bucket_put(&self->cls[c], &out);
    }
    uint8_t *bytes = tb_bytes_take(&out, len);
    if (!bytes)
        tb_err_set(err, TB_E_NOMEM, "stats: out of memory encoding the statistics");
    return bytes;
}

/* Whether a decoded bucket is self-consistent: every land cell was binned once in each of slope,
 * relief and elevation, every cell with an area once in the area histogram and, when its area bin
 * exists, once in that bin's gradient histogram; channel cells have areas and one step each. */
static bool s_bucket_consistent(const s_bucket_t *b)
{
    s_chan_t ch = b->ch;
    for (int i = 0; i < S_NCOUNTS; i++)
        if (*s_counter(&ch, i) < 0)
            return false;
    int64_t land = tb_hist_count(b->slope), area = tb_hist_count(b->area), steps;
    if (tb_hist_count(b->relief) != land || tb_hist_count(b->elev) != land || area > land ||
        ch.channel > area)
        return false;
    if (__builtin_add_overflow(ch.cardinal, ch.diagonal, &steps) ||
        __builtin_add_overflow(steps, ch.no_descent, &steps) || steps != ch.channel)
        return false;
    for (int k = 0; k < S_AREA_NBINS; k++)
        if (tb_hist_count(b->sa[k]) != tb_hist_bin_count(b->area, k) ||
            tb_hist_count(b->sd[k]) != tb_hist_bin_count(b->area, k))
            return false;
    return true;
}

/* Decodes one bucket's counters and histograms into b (initialised, empty). 0, -2 when the bytes
 * are malformed, -1 with *err set for another failure. */
static int s_bucket_get(tb_reader_t *r, s_bucket_t *b, int c, tb_err_t *err)
{
    for (int i = 0; i < S_NCOUNTS; i++)
        *s_counter(&b->ch, i) = tb_reader_i64(r);
    for (int i = 0; i < S_NHISTS; i++) {
        tb_hist_t **slot = s_hist_slot(b, i);
        if (i >= 4) {
            uint8_t present = tb_reader_u8(r);
            if (r->failed || present > 1)
                return -2;
            if (!present)
                continue;
        }
        tb_err_t herr;
        tb_hist_t *h = tb_hist_decode(r, &herr);
        if (!h) {
            tb_err_set(err, herr.code, "stats: bucket %d: %s", c, herr.msg);
            return -1;
        }
        if (!tb_hist_spec_equal(tb_hist_spec(h), tb_hist_spec(*slot))) {
            tb_hist_destroy(&h);
            return -2;
        }
        tb_hist_destroy(slot);
        *slot = h;
    }
    if (r->failed || !s_bucket_consistent(b))
        return -2;
    return 0;
}

tb_stats_t *tb_stats_decode(const void *data, size_t len, tb_err_t *err)
{
    tb_reader_t r;
    tb_reader_init(&r, data, len);
    if (tb_reader_u32(&r) != S_MAGIC) {
        tb_err_set(err, TB_E_FORMAT, "stats: not a statistics encoding (no TBST magic)");
        return NULL;
    }
    uint16_t version = tb_reader_u16(&r), nbuckets = tb_reader_u16(&r);
    if (r.failed || version != S_VERSION || nbuckets != TB_STATS_NBUCKETS) {
        tb_err_set(err, TB_E_FORMAT,
                   "stats: version %u with %u buckets, this build reads %d with %d", version,
                   nbuckets, S_VERSION, TB_STATS_NBUCKETS);
        return NULL;
    }
    tb_stats_params_t p;
    memset(&p, 0, sizeof p);
    double *f[] = {&p.cell_m,
                   &p.talus_deg,
                   &p.repose_band_deg,
                   &p.m,
                   &p.n,
                   &p.uplift_edges_mm_yr[0],
                   &p.uplift_edges_mm_yr[1],
                   &p.relief_window_m,
                   &p.channel_area_m2,
                   &p.fit_min_area_m2,
                   &p.channel_fit_min_area_m2};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        *f[i] = tb_reader_f64(&r);
    p.fit_min_bin_cells = (int32_t)tb_reader_u32(&r);
    double *g[] = {&p.slope_bin_deg, &p.relief_bin_m, &p.relief_max_m, &p.elev_bin_m,
                   &p.elev_max_m};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        *g[i] = tb_reader_f64(&r);
    const int32_t shape[] = {S_AREA_LO_EXP2, S_AREA_PER_OCTAVE, S_AREA_NBINS,
                             S_GRAD_LO_EXP2, S_GRAD_PER_OCTAVE, S_GRAD_NBINS};
    bool shape_ok = true;
    for (size_t i = 0; i < 6; i++)
        shape_ok &= (int32_t)tb_reader_u32(&r) == shape[i];
    int64_t edge_cells = tb_reader_i64(&r);
    if (r.failed) {
        tb_err_set(err, TB_E_FORMAT, "stats: truncated header (%zu bytes)", len);
        return NULL;
    }
    if (!shape_ok) {
        tb_err_set(err, TB_E_FORMAT, "stats: slope-area table of another shape (another build?)");
        return NULL;
    }
    if (edge_cells < 0) {
        tb_err_set(err, TB_E_FORMAT, "stats: negative edge cell count");
        return NULL;
    }
    tb_err_t perr;
    tb_stats_t *s = tb_stats_new(&p, &perr);
    if (!s) {
        tb_err_set(err, perr.code == TB_E_NOMEM ? TB_E_NOMEM : TB_E_FORMAT, "stats: encoded %s",
                   perr.msg);
        return NULL;
    }
    for (int c = 0; c < TB_STATS_NBUCKETS; c++) {
        int rc = s_bucket_get(&r, &s->b[c], c, err);
        if (rc == -2)
            goto malformed;
        if (rc != 0) {
            tb_stats_destroy(&s);
            return NULL;
        }
    }
    uint16_t nclasses = tb_reader_u16(&r);
    if (r.failed || nclasses > TB_STATS_MAX_CLASSES)
        goto malformed;
    for (int c = 0; c < nclasses; c++) {
        char name[TB_STATS_CLASS_NAME_MAX];
        uint8_t nlen = tb_reader_u8(&r);
        if (r.failed || nlen == 0 || nlen >= TB_STATS_CLASS_NAME_MAX)
            goto malformed;
        tb_reader_get(&r, name, nlen);
        name[nlen] = 0;
        if (r.failed || strlen(name) != nlen || (c > 0 && strcmp(s->class_name[c - 1], name) >= 0))
            goto malformed; /* a NUL inside, or not in ascending order */
        if (s_class_insert(s, name, err) != 0) {
            tb_stats_destroy(&s);
            return NULL;
        }
        int rc = s_bucket_get(&r, &s->cls[c], TB_STATS_NBUCKETS + c, err);
        if (rc == -2 || (rc == 0 && tb_hist_count(s->cls[c].slope) == 0))
            goto malformed; /* a class exists only with land */
        if (rc != 0) {
            tb_stats_destroy(&s);
            return NULL;
        }
    }
    if (r.failed || tb_reader_left(&r) != 0)
        goto malformed;
    return s;
malformed:
    tb_err_set(err, TB_E_FORMAT,
               "stats: malformed encoding near byte %zu of %zu (truncated, trailing or corrupt)",
               r.pos, len);
    tb_stats_destroy(&s);
    return NULL;
}

/* --- queries ---------------------------------------------------------------------------------- */

/* The counters of one bucket, read off its histograms where they can be. */
static void s_bucket_counts(const tb_stats_t *self, const s_bucket_t *b, tb_stats_counts_t *out)
{
    out->land_cells = tb_hist_count(b->slope);
    out->area_cells = tb_hist_count(b->area);
    out->near_repose_cells = 0;
    for (int32_t k = self->near_lo; k < self->near_hi; k++)
        out->near_repose_cells += tb_hist_bin_count(b->slope, k);
    out->channel_cells = b->ch.channel;
    out->channel_cardinal = b->ch.cardinal;
    out->channel_diagonal = b->ch.diagonal;
    out->channel_no_descent = b->ch.no_descent;
}

void tb_stats_counts(const tb_stats_t *self, int bucket, tb_stats_counts_t *out)
{
    memset(out, 0, sizeof *out);
    for (int c = 0; c < TB_STATS_NBUCKETS; c++) {
        if (bucket != TB_STATS_ALL && bucket != c)
            continue;
        tb_stats_counts_t one;
        s_bucket_counts(self, &self->b[c], &one);
        out->land_cells += one.land_cells;
        out->near_repose_cells += one.near_repose_cells;
        out->area_cells += one.area_cells;
        out->channel_cells += one.channel_cells;
        out->channel_cardinal += one.channel_cardinal;
        out->channel_diagonal += one.channel_diagonal;
        out->channel_no_descent += one.channel_no_descent;
    }
}

static const s_bucket_t *s_bucket(const tb_stats_t *self, int bucket)
{
    return bucket >= 0 && bucket < TB_STATS_NBUCKETS ? &self->b[bucket] : NULL;
}

const tb_hist_t *tb_stats_slope_hist(const tb_stats_t *self, int bucket)
{
    const s_bucket_t *b = s_bucket(self, bucket);
    return b ? b->slope : NULL;
}

const tb_hist_t *tb_stats_relief_hist(const tb_stats_t *self, int bucket)
{
    const s_bucket_t *b = s_bucket(self, bucket);
    return b ? b->relief : NULL;
}

const tb_hist_t *tb_stats_elev_hist(const tb_stats_t *self, int bucket)
{
    const s_bucket_t *b = s_bucket(self, bucket);
    return b ? b->elev : NULL;
}

const tb_hist_t *tb_stats_area_hist(const tb_stats_t *self, int bucket)
{
    const s_bucket_t *b = s_bucket(self, bucket);
    return b ? b->area : NULL;
}

const tb_hist_t *tb_stats_slope_area_hist(const tb_stats_t *self, int bucket, int32_t area_bin)
{
    const s_bucket_t *b = s_bucket(self, bucket);
    return b && area_bin >= 0 && area_bin < S_AREA_NBINS ? b->sa[area_bin] : NULL;
}

/* A bucket that sums the requested ones (all four for TB_STATS_ALL); false when memory runs out. */
static bool s_bucket_sum(const tb_stats_t *self, int bucket, s_bucket_t *out)
{
    memset(out, 0, sizeof *out);
    for (int c = 0; c < TB_STATS_NBUCKETS; c++) {
        if (bucket != TB_STATS_ALL && bucket != c)
            continue;
        for (int i = 0; i < S_NCOUNTS; i++)
            *s_counter(&out->ch, i) += *s_counter((s_chan_t *)&self->b[c].ch, i);
    }
    for (int i = 0; i < S_NHISTS; i++) {
        tb_hist_t *sum = NULL;
        for (int c = 0; c < TB_STATS_NBUCKETS; c++) {
            if (bucket != TB_STATS_ALL && bucket != c)
                continue;
            if (!sum)
                sum = tb_hist_dup(s_hist(&self->b[c], i));
            else
                (void)tb_hist_merge(sum, s_hist(&self->b[c], i), NULL);
            if (!sum)
                break;
        }
        tb_hist_t **slot = s_hist_slot(out, i);
        *slot = sum;
        if (!sum) {
            s_bucket_free(out);
            return false;
        }
    }
    return true;
}

/* The fit over the area bins of table tab (b->sa: Horn's gradient; b->sd: the steepest descent)
 * whose lower edge is at or above min_area_m2. */
static void s_fit(const tb_stats_t *self, const s_bucket_t *b, tb_hist_t *const *tab,
                  double min_area_m2, tb_stats_fit_t *out)
{
    memset(out, 0, sizeof *out);
    out->exponent = out->intercept = out->r2 = NAN;
    out->expect = -self->p.m / self->p.n;
    out->min_area_m2 = min_area_m2;
    out->turn_area_m2 = NAN;
    double xs[TB_STATS_MAX_FIT_BINS], ys[TB_STATS_MAX_FIT_BINS];
    int32_t n = 0;
    for (int32_t k = 0; k < S_AREA_NBINS && n < TB_STATS_MAX_FIT_BINS; k++) {
        double lo = tb_hist_edge(b->area, k), hi = tb_hist_edge(b->area, k + 1);
        int64_t cells = tb_hist_count(tab[k]);
        if (lo < min_area_m2 || cells < self->p.fit_min_bin_cells)
            continue;
        double med = sqrt(tb_hist_quantile(tab[k], 0.5)); /* the table holds S^2 */
        if (!(med > 0) || !isfinite(med))
            continue;
        out->area_m2[n] = sqrt(lo * hi);
        out->median_slope[n] = med;
        out->cells[n] = cells;
        xs[n] = log10(out->area_m2[n]);
        ys[n] = log10(med);
        n++;
    }
    out->bins = n;
    if (n < 2)
        return;
    double mx = 0, my = 0;
    for (int32_t i = 0; i < n; i++) {
        mx += xs[i];
        my += ys[i];
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0, syy = 0;
    for (int32_t i = 0; i < n; i++) {
        sxx += (xs[i] - mx) * (xs[i] - mx);
        sxy += (xs[i] - mx) * (ys[i] - my);
        syy += (ys[i] - my) * (ys[i] - my);
    }
    if (!(sxx > 0))
        return;
    out->exponent = sxy / sxx;
    out->intercept = my - out->exponent * mx;
    double ssres = 0;
    for (int32_t i = 0; i < n; i++) {
        double e = ys[i] - (out->intercept + out->exponent * xs[i]);
        ssres += e * e;
    }
    out->r2 = syy > 0 ? 1 - ssres / syy : (ssres == 0 ? 1 : NAN);
}

/* The residual sum of squares of the least-squares line through points [i0, i1). */
static double s_line_ssr(const double *xs, const double *ys, int32_t i0, int32_t i1)
{
    int32_t n = i1 - i0;
    double mx = 0, my = 0;
    for (int32_t i = i0; i < i1; i++) {
        mx += xs[i];
        my += ys[i];
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0, syy = 0;
    for (int32_t i = i0; i < i1; i++) {
        sxx += (xs[i] - mx) * (xs[i] - mx);
        sxy += (xs[i] - mx) * (ys[i] - my);
        syy += (ys[i] - my) * (ys[i] - my);
    }
    double ssr = sxx > 0 ? syy - sxy * sxy / sxx : syy;
    return ssr > 0 ? ssr : 0;
}

/* The hillslope-channel break of a bucket's steepest-descent curve (docs/statistics.md, "Where the
 * channels start"): a two-segment (broken-stick) regression of log10 median slope on log10 area
 * over every area bin holding fit_min_bin_cells, two independent least-squares lines, the break
 * put at the bin edge that minimises their summed squared residuals, with at least
 * TB_STATS_BREAK_MIN_HILL bins below it and TB_STATS_BREAK_MIN_CHANNEL above. Returns the lower
 * area edge of the first channel-side bin, NaN when there are too few bins. The first of equal
 * sums wins (the smaller area), so the answer is a pure function of the histograms. */
static double s_channel_break(const tb_stats_t *self, const s_bucket_t *b)
{
    double xs[S_AREA_NBINS], ys[S_AREA_NBINS], lo[S_AREA_NBINS];
    int32_t n = 0;
    for (int32_t k = 0; k < S_AREA_NBINS; k++) {
        if (tb_hist_count(b->sd[k]) < self->p.fit_min_bin_cells)
            continue;
        double med = sqrt(tb_hist_quantile(b->sd[k], 0.5)); /* the table holds S^2 */
        if (!(med > 0) || !isfinite(med))
            continue;
        double a0 = tb_hist_edge(b->area, k), a1 = tb_hist_edge(b->area, k + 1);
        lo[n] = a0;
        xs[n] = log10(sqrt(a0 * a1));
        ys[n] = log10(med);
        n++;
    }
    double brk = NAN, best = INFINITY;
    for (int32_t j = TB_STATS_BREAK_MIN_HILL; j + TB_STATS_BREAK_MIN_CHANNEL <= n; j++) {
        double ssr = s_line_ssr(xs, ys, 0, j) + s_line_ssr(xs, ys, j, n);
        if (ssr < best) {
            best = ssr;
            brk = lo[j];
        }
    }
    return brk;
}

/* The channel-cell fit (docs/statistics.md): over the steepest-descent table, from the
 * hillslope-channel break found in the bucket's own curve (s_channel_break), and never below
 * channel_fit_min_area_m2. */
static void s_fit_channels(const tb_stats_t *self, const s_bucket_t *b, tb_stats_fit_t *out)
{
    double brk = s_channel_break(self, b);
    double from = self->p.channel_fit_min_area_m2;
    if (brk > from)
        from = brk;
    s_fit(self, b, b->sd, from, out);
    out->turn_area_m2 = brk;
}

static void s_fit_bucket(const tb_stats_t *self, int bucket, bool channels, tb_stats_fit_t *out)
{
    s_bucket_t sum;
    if (!s_bucket_sum(self, bucket, &sum)) {
        memset(out, 0, sizeof *out);
        out->exponent = out->intercept = out->r2 = NAN;
        out->expect = -self->p.m / self->p.n;
        return;
    }
    if (channels)
        s_fit_channels(self, &sum, out);
    else
        s_fit(self, &sum, sum.sa, self->p.fit_min_area_m2, out);
    s_bucket_free(&sum);
}

void tb_stats_fit_slope_area(const tb_stats_t *self, int bucket, tb_stats_fit_t *out)
{
    s_fit_bucket(self, bucket, false, out);
}

void tb_stats_fit_slope_area_channels(const tb_stats_t *self, int bucket, tb_stats_fit_t *out)
{
    s_fit_bucket(self, bucket, true, out);
}

static void s_summarise_bucket(const tb_stats_t *self, const s_bucket_t *b, int64_t all_land,
                               tb_stats_bucket_summary_t *o)
{
    tb_stats_counts_t counts;
    s_bucket_counts(self, b, &counts);
    const tb_stats_counts_t *c = &counts;
    double land = (double)c->land_cells;
    o->land_cells = c->land_cells;
    o->land_share = all_land > 0 ? land / (double)all_land : NAN;
    o->slope_under15 = tb_hist_fraction_below(b->slope, 15);
    o->slope_under30 = tb_hist_fraction_below(b->slope, 30);
    o->slope_over50 = 1 - tb_hist_fraction_below(b->slope, 50);
    o->slope_median_deg = tb_hist_quantile(b->slope, 0.5);
    o->slope_p90_deg = tb_hist_quantile(b->slope, 0.9);
    o->relief_median_m = tb_hist_quantile(b->relief, 0.5);
    o->relief_p90_m = tb_hist_quantile(b->relief, 0.9);
    o->near_repose_share = land > 0 ? (double)c->near_repose_cells / land : NAN;
    o->elev_min_m = land > 0 ? tb_hist_min(b->elev) : NAN;
    o->elev_max_m = land > 0 ? tb_hist_max(b->elev) : NAN;
    o->elev_mean_m = tb_hist_mean(b->elev);
    o->elev_median_m = tb_hist_quantile(b->elev, 0.5);
    double range = o->elev_max_m - o->elev_min_m;
    o->hypsometric_integral = range > 0 ? (o->elev_mean_m - o->elev_min_m) / range : NAN;
    if (c->area_cells > 0) {
        double steps = (double)(c->channel_cardinal + c->channel_no_descent) +
                       (double)c->channel_diagonal * sqrt(2.0);
        double length_m = steps * self->p.cell_m;
        double area_m2 = (double)c->area_cells * self->p.cell_m * self->p.cell_m;
        o->drainage_density_per_km = length_m / area_m2 * 1000;
    } else {
        o->drainage_density_per_km = NAN;
    }
    s_fit(self, b, b->sa, self->p.fit_min_area_m2, &o->fit);
    s_fit_channels(self, b, &o->channel_fit);
}

void tb_stats_summarise(const tb_stats_t *self, tb_stats_summary_t *out)
{
    memset(out, 0, sizeof *out);
    tb_stats_counts_t all;
    tb_stats_counts(self, TB_STATS_ALL, &all);
    out->relief_window_m = (double)tb_stats_relief_window_cells(self) * self->p.cell_m;
    out->area_cells = all.area_cells;
    out->edge_cells = self->edge_cells;
    out->classified_cells = all.land_cells - tb_hist_count(self->b[TB_STATS_UNCLASSIFIED].slope);
    for (int c = 0; c <= TB_STATS_NBUCKETS; c++) {
        s_bucket_t sum;
        const s_bucket_t *b = c < TB_STATS_NBUCKETS ? &self->b[c] : NULL;
        if (!b) {
            if (!s_bucket_sum(self, TB_STATS_ALL, &sum)) {
                /* Out of memory: leave the all-land summary empty rather than wrong. */
                memset(&out->bucket[c], 0, sizeof out->bucket[c]);
                continue;
            }
            b = &sum;
        }
        s_summarise_bucket(self, b, all.land_cells, &out->bucket[c]);
        if (b == &sum)
            s_bucket_free(&sum);
    }
}

int tb_stats_extent_measure(const float *height_m, size_t cells, double range_lo_m,
                            double range_hi_m, tb_stats_extent_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!isfinite(range_lo_m) || !isfinite(range_hi_m) || !(range_lo_m < range_hi_m))
        return tb_err_set(err, TB_E_INVALID,
                          "stats extent: elevation range [%g, %g], expected finite lo < hi",
                          range_lo_m, range_hi_m);
    if (!height_m || cells == 0)
        return tb_err_set(err, TB_E_INVALID, "stats extent: no cells");
    float lo = INFINITY, hi = -INFINITY;
    int64_t clipped = 0;
    for (size_t i = 0; i < cells; i++) {
        float v = height_m[i];
        lo = v < lo ? v : lo; /* NaN compares false and changes nothing */
        hi = v > hi ? v : hi;
        clipped += !((double)v >= range_lo_m && (double)v <= range_hi_m);
    }
    out->min_m = lo <= hi ? lo : NAN;
    out->max_m = lo <= hi ? hi : NAN;
    out->cells = (int64_t)cells;
    out->clipped = clipped;
    out->range_lo_m = range_lo_m;
    out->range_hi_m = range_hi_m;
    return 0;
}

int tb_stats_slope_grid(const tb_frame_t *box, const float *height_m, float *slope_deg,
                        tb_err_t *err)
{
    if (!tb_frame_valid(box))
        return tb_err_set(err, TB_E_INVALID, "stats slope: the box is not a valid frame");
    tb_stats_params_t p;
    tb_stats_params_default(&p, box->cell_m);
    tb_stats_t *s = tb_stats_new(&p, err);
    if (!s || s_workspace(s, box, err) != 0) {
        tb_stats_destroy(&s);
        return -1;
    }
    for (int64_t j = 0; j < box->h; j++) {
        const float *sr = s_padded_row(s, box, height_m, j - 1);
        const float *cr = s_padded_row(s, box, height_m, j);
        const float *nr = s_padded_row(s, box, height_m, j + 1);
        float *out = slope_deg + (size_t)j * (size_t)box->w;
        for (int64_t i = 0; i < box->w; i++)
            out[i] = (float)s_deg(sqrtf(s_horn_g2(nr, cr, sr, i, s->inv_8dx)));
    }
    tb_stats_destroy(&s);
    return 0;
}

int tb_stats_class_count(const tb_stats_t *self)
{
    return self->n_classes;
}

const char *tb_stats_class_name(const tb_stats_t *self, int i)
{
    return i >= 0 && i < self->n_classes ? self->class_name[i] : NULL;
}

void tb_stats_summarise_class(const tb_stats_t *self, int i, tb_stats_bucket_summary_t *out)
{
    memset(out, 0, sizeof *out);
    if (i < 0 || i >= self->n_classes)
        return;
    tb_stats_counts_t all;
    tb_stats_counts(self, TB_STATS_ALL, &all);
    s_summarise_bucket(self, &self->cls[i], all.land_cells, out);
}

const tb_hist_t *tb_stats_class_slope_hist(const tb_stats_t *self, int i)
{
    return i >= 0 && i < self->n_classes ? self->cls[i].slope : NULL;
}

const tb_hist_t *tb_stats_class_relief_hist(const tb_stats_t *self, int i)
{
    return i >= 0 && i < self->n_classes ? self->cls[i].relief : NULL;
}
