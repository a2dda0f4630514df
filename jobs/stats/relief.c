/* Local relief by van Herk / Gil-Werman running max and min; see relief.h.
 *
 * Indexing: "virtual" rows v = 0 .. hv-1 are data rows v - r, with rows outside 0..h-1 reading as
 * sea level; they are cut into blocks of k = 2r + 1. Output row j needs virtual rows j .. j + k -
 * 1, i.e. the suffix of block b = j / k from offset j - b k and the prefix of block b + 1 up to
 * offset j - b k - 1. The same holds along a row with "virtual" columns x = data column x - r.
 */
#include "jobs/stats/relief.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tb_relief_t {
    tb_frame_t box;
    const float *height;
    int64_t r, k, w, h;
    size_t cap_rows, cap_line; /* allocated sizes of the buffers below */
    float *smax, *smin;        /* k rows x w: suffix max/min of block b */
    float *pmax, *pmin;        /* w: running prefix max/min of block b + 1 */
    int64_t p_rows;            /* rows of block b + 1 folded into the running prefix */
    float *zero;               /* a row of sea level */
    float *line;               /* 6 lines of the padded row length: e, s, p for max/min */
    float *out;                /* w: the relief row */
    size_t line_len;           /* padded row length, a multiple of k */
    int64_t block;             /* block last prepared, -1 for none */
};

int64_t tb_relief_radius_cells(double window_m, double cell_m)
{
    if (!(cell_m > 0) || !(window_m > 0))
        return 1;
    double r = nearbyint((window_m / cell_m - 1) / 2);
    if (!(r >= 1))
        return 1;
    return r > 1e6 ? 1000000 : (int64_t)r;
}

tb_relief_t *tb_relief_new(tb_err_t *err)
{
    tb_relief_t *self = tb_calloc(1, sizeof *self, "relief workspace", err);
    if (self)
        self->block = -1;
    return self;
}

void tb_relief_destroy(tb_relief_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_relief_t *self = *self_p;
    free(self->smax);
    free(self->zero);
    free(self->line);
    free(self);
    *self_p = NULL;
}

/* The data row of virtual row v (sea level outside the box). */
static const float *s_vrow(const tb_relief_t *self, int64_t v)
{
    int64_t j = v - self->r;
    if (j < 0 || j >= self->h)
        return self->zero;
    return self->height + (size_t)j * (size_t)self->w;
}

int tb_relief_begin(tb_relief_t *self, const tb_frame_t *box, const float *height_m, int64_t radius,
                    tb_err_t *err)
{
    if (!tb_frame_valid(box))
        return tb_err_set(err, TB_E_INVALID, "relief: the box is not a valid frame");
    if (radius < 1 || radius > 1000000)
        return tb_err_set(err, TB_E_INVALID, "relief: window radius %lld cells, expected 1..1e6",
                          (long long)radius);
    int64_t k = 2 * radius + 1, w = box->w;
    size_t rows = (size_t)k * (size_t)w;
    size_t line_len = (size_t)((w + 2 * radius + k - 1) / k * k);
    if (rows > self->cap_rows) {
        free(self->smax);
        self->smax =
            tb_malloc((2 * rows + 2 * (size_t)w) * sizeof(float), "relief block buffers", err);
        if (!self->smax) {
            self->cap_rows = 0;
            return -1;
        }
        self->cap_rows = rows;
    }
    self->smin = self->smax + rows;
    self->pmax = self->smin + rows;
    self->pmin = self->pmax + w;
    if (line_len + (size_t)w > self->cap_line) {
        free(self->zero);
        free(self->line);
        self->zero = tb_calloc((size_t)w + line_len, sizeof(float), "relief zero row", err);
        self->line = tb_malloc((6 * line_len + (size_t)w) * sizeof(float), "relief lines", err);
        if (!self->zero || !self->line) {
            free(self->zero);
            free(self->line);
            self->zero = self->line = NULL;
            self->cap_line = 0;
            return -1;
        }
        self->cap_line = line_len + (size_t)w;
    }
    self->out = self->line + 6 * line_len;
    self->box = *box;
    self->height = height_m;
    self->r = radius;
    self->k = k;
    self->w = w;
    self->h = box->h;
    self->line_len = line_len;
    self->block = -1;
    return 0;
}

static inline float s_max(float a, float b)
{
    return a > b ? a : b;
}
static inline float s_min(float a, float b)
{
    return a < b ? a : b;
}

void tb_relief_block(tb_relief_t *self, int64_t b)
{
    const int64_t k = self->k;
    const size_t w = (size_t)self->w;
    /* Suffix max/min of virtual block b, walking up from its last row. */
    int64_t v0 = b * k;
    const float *src = s_vrow(self, v0 + k - 1);
    memcpy(self->smax + (size_t)(k - 1) * w, src, w * sizeof(float));
    memcpy(self->smin + (size_t)(k - 1) * w, src, w * sizeof(float));
    for (int64_t o = k - 2; o >= 0; o--) {
        src = s_vrow(self, v0 + o);
        float *restrict xm = self->smax + (size_t)o * w, *restrict nm = self->smin + (size_t)o * w;
        const float *restrict xp = xm + w, *restrict np = nm + w;
        for (size_t i = 0; i < w; i++) {
            xm[i] = s_max(xp[i], src[i]);
            nm[i] = s_min(np[i], src[i]);
        }
    }
    /* The prefix of block b + 1 is folded in row by row as output rows ask for it. */
    self->p_rows = 0;
    self->block = b;
}

/* The 1-D running max and min over k along one padded line e (length n, a multiple of k), written
 * to out[0 .. w) as max - min: out[i] = max(S[i], P[i + k - 1]) - min(...). */
static void s_line_relief(const float *restrict emax, const float *restrict emin,
                          float *restrict sx, float *restrict sn, float *restrict px,
                          float *restrict pn, size_t n, int64_t k, float *restrict out, size_t w)
{
    for (size_t b0 = 0; b0 < n; b0 += (size_t)k) {
        size_t b1 = b0 + (size_t)k - 1;
        px[b0] = emax[b0];
        pn[b0] = emin[b0];
        for (size_t x = b0 + 1; x <= b1; x++) {
            px[x] = s_max(px[x - 1], emax[x]);
            pn[x] = s_min(pn[x - 1], emin[x]);
        }
        sx[b1] = emax[b1];
        sn[b1] = emin[b1];
        for (size_t x = b1; x > b0; x--) {
            sx[x - 1] = s_max(sx[x], emax[x - 1]);
            sn[x - 1] = s_min(sn[x], emin[x - 1]);
        }
    }
    size_t km1 = (size_t)k - 1;
    for (size_t i = 0; i < w; i++)
        out[i] = s_max(sx[i], px[i + km1]) - s_min(sn[i], pn[i + km1]);
}

const float *tb_relief_row(tb_relief_t *self, int64_t j)
{
    const int64_t k = self->k, r = self->r;
    const size_t w = (size_t)self->w, n = self->line_len;
    int64_t o = j - self->block * k; /* offset of the row in its block, 0 .. k-1 */
    const float *sxr = self->smax + (size_t)o * w, *snr = self->smin + (size_t)o * w;
    /* Row j needs the prefix of block b + 1 over its rows 0 .. o - 1. */
    if (self->p_rows > o)
        self->p_rows = 0; /* asked out of order: fold again from the block's start */
    for (; self->p_rows < o; self->p_rows++) {
        const float *restrict src = s_vrow(self, (self->block + 1) * k + self->p_rows);
        float *restrict xm = self->pmax, *restrict nm = self->pmin;
        if (self->p_rows == 0) {
            memcpy(xm, src, w * sizeof(float));
            memcpy(nm, src, w * sizeof(float));
            continue;
        }
        for (size_t i = 0; i < w; i++) {
            xm[i] = s_max(xm[i], src[i]);
            nm[i] = s_min(nm[i], src[i]);
        }
    }
    const float *pxr = o > 0 ? self->pmax : sxr;
    const float *pnr = o > 0 ? self->pmin : snr;
    float *emax = self->line, *emin = emax + n, *sx = emin + n, *sn = sx + n, *px = sn + n,
          *pn = px + n;
    /* The column max/min of this row at x = r .. r + w - 1, then the padding on each side: the
     * row's own far end when the box wraps, else sea level. */
    float *restrict cmax = emax + r, *restrict cmin = emin + r;
    for (size_t i = 0; i < w; i++) {
        cmax[i] = s_max(sxr[i], pxr[i]);
        cmin[i] = s_min(snr[i], pnr[i]);
    }
    bool wraps = tb_frame_wraps(&self->box);
    for (int64_t x = 0; x < r; x++) {
        int64_t i = tb_wrap(x - r, (int64_t)w);
        emax[x] = wraps ? cmax[i] : 0.0f;
        emin[x] = wraps ? cmin[i] : 0.0f;
    }
    for (size_t x = (size_t)r + w; x < n; x++) {
        int64_t i = (int64_t)x - r;
        bool in = wraps && i < (int64_t)w + r;
        emax[x] = in ? cmax[tb_wrap(i, (int64_t)w)] : 0.0f;
        emin[x] = in ? cmin[tb_wrap(i, (int64_t)w)] : 0.0f;
    }
    s_line_relief(emax, emin, sx, sn, px, pn, n, k, self->out, w);
    return self->out;
}

int tb_relief_grid(const tb_frame_t *box, const float *height_m, int64_t radius, float *relief_m,
                   tb_err_t *err)
{
    tb_relief_t *ws = tb_relief_new(err);
    if (!ws || tb_relief_begin(ws, box, height_m, radius, err) != 0) {
        tb_relief_destroy(&ws);
        return -1;
    }
    int64_t k = 2 * radius + 1;
    for (int64_t b = 0; b * k < box->h; b++) {
        tb_relief_block(ws, b);
        for (int64_t j = b * k; j < (b + 1) * k && j < box->h; j++)
            memcpy(relief_m + (size_t)j * (size_t)box->w, tb_relief_row(ws, j),
                   (size_t)box->w * sizeof(float));
    }
    tb_relief_destroy(&ws);
    return 0;
}
