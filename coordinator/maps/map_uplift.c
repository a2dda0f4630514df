/* map_uplift.png; see map_uplift.h. */
#include "coordinator/maps/map_uplift.h"

#include <math.h>
#include <stdint.h>

#include "common/png_io.h"
#include <stdlib.h>

static const uint8_t S_OCEAN[3] = {18, 22, 30};
static const uint8_t S_CYAN[3] = {0, 255, 255};
/* viridis: luminance rises monotonically, so no band of rates reads as a rim or a ridge. */
#define S_STOPS 5
static const uint8_t S_RAMP[S_STOPS][3] = {
    {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};

/* The largest rate of n cells, mm/yr (0 when none is above 0). */
static double s_max_mm_yr(const float *uplift_m_yr, size_t n)
{
    double hi = 0;
    for (size_t q = 0; q < n; q++)
        hi = fmax(hi, (double)uplift_m_yr[q] * 1e3);
    return hi;
}

/* The ramp's round ceiling at or above a largest rate of hi mm/yr. */
static double s_ceiling(double hi)
{
    if (!(hi > 0))
        return 0.01;
    double p = pow(10, floor(log10(hi)));
    const double steps[4] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (steps[i] * p >= hi * (1 - 1e-6)) /* float rates: 1e-3f is 1.00000005 mm/yr */
            return steps[i] * p;
    return 10 * p;
}

double tb_map_uplift_top_mm_yr(const float *uplift_m_yr, size_t n)
{
    return s_ceiling(s_max_mm_yr(uplift_m_yr, n));
}

static void s_ramp(double t, uint8_t *rgb)
{
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    double x = t * (S_STOPS - 1);
    int i = (int)x;
    if (i >= S_STOPS - 1)
        i = S_STOPS - 2;
    double f = x - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround(S_RAMP[i][c] + (S_RAMP[i + 1][c] - S_RAMP[i][c]) * f);
}

/* Paints a square of `thick` pixels at box cell (i, j) (image row j) when it falls in the band of
 * image rows [y0, y1) held in `rows` (w pixels a row), wrapping in x when the box covers the whole
 * circumference. */
static void s_plot(uint8_t *rows, int64_t y0, int64_t y1, const tb_frame_t *box, double x, double y,
                   int thick)
{
    for (int dy = 0; dy < thick; dy++)
        for (int dx = 0; dx < thick; dx++) {
            int64_t i = (int64_t)floor(x) + dx, j = (int64_t)floor(y) + dy;
            if (tb_frame_wraps(box))
                i = tb_wrap(i, box->w);
            if (i < 0 || i >= box->w || j < y0 || j >= y1 || j >= box->h)
                continue;
            uint8_t *px = rows + 3 * ((size_t)(j - y0) * (size_t)box->w + (size_t)i);
            px[0] = S_CYAN[0];
            px[1] = S_CYAN[1];
            px[2] = S_CYAN[2];
        }
}

/* Image rows [y0, y1) into `rows`: the ramp, then every trace's points that fall in them (the
 * same points as one pass over the whole image would draw, so the same pixels). */
static void s_band(uint8_t *rows, int64_t y0, int64_t y1, const tb_frame_t *box,
                   const float *uplift_m_yr, double top, const tb_polyline_t *traces, size_t n)
{
    for (int64_t j = y0; j < y1; j++)
        for (int64_t i = 0; i < box->w; i++) {
            double u = (double)uplift_m_yr[(size_t)j * (size_t)box->w + (size_t)i] * 1e3;
            uint8_t *px = rows + 3 * ((size_t)(j - y0) * (size_t)box->w + (size_t)i);
            if (u > 0)
                s_ramp(sqrt(u / top), px);
            else {
                px[0] = S_OCEAN[0];
                px[1] = S_OCEAN[1];
                px[2] = S_OCEAN[2];
            }
        }
    int thick = (box->w > 1600 || box->h > 1600) ? 2 : 1;
    for (size_t t = 0; t < n; t++)
        for (size_t v = 0; v + 1 < traces[t].n; v++) {
            const double *a = traces[t].xy + 2 * v, *b = a + 2;
            double ax = a[0] - (double)box->x0, ay = a[1] - (double)box->y0;
            double dx = b[0] - a[0], dy = b[1] - a[1];
            /* a segment whose squares miss the band draws nothing in it */
            if (fmax(ay, ay + dy) + thick < (double)y0 || fmin(ay, ay + dy) - 1 >= (double)y1)
                continue;
            int steps = (int)ceil(4 * fmax(fabs(dx), fabs(dy))) + 1;
            for (int s = 0; s <= steps; s++)
                s_plot(rows, y0, y1, box, ax + dx * s / steps, ay + dy * s / steps, thick);
        }
}

#define S_BAND_CELLS ((size_t)4 << 20) /* pixels painted and encoded at a time */

int tb_map_uplift_write_rows(const char *path, const tb_frame_t *box, const float *uplift_m_yr,
                             const tb_polyline_t *traces, size_t n, int64_t band_rows,
                             const tb_rows_hook_t *done, tb_err_t *err)
{
    if (!tb_frame_valid(box) || !uplift_m_yr || box->w > UINT32_MAX || box->h > UINT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "%s: map_uplift: no valid box or no uplift field",
                          path);
    int64_t band = band_rows > 0 ? band_rows : (int64_t)(S_BAND_CELLS / (size_t)box->w) + 1;
    /* the ramp's top, a band at a time */
    double hi = 0;
    for (int64_t y = 0; y < box->h; y += band) {
        int64_t y1 = y + band < box->h ? y + band : box->h;
        hi = fmax(
            hi, s_max_mm_yr(uplift_m_yr + (size_t)y * (size_t)box->w, (size_t)((y1 - y) * box->w)));
        tb_rows_done(done, y, y1);
    }
    double top = s_ceiling(hi);
    uint8_t *rows = tb_malloc((size_t)band * (size_t)box->w * 3, "map_uplift rows", err);
    tb_png_writer_t *wr =
        rows ? tb_png_writer_open(path, (uint32_t)box->w, (uint32_t)box->h, TB_PNG_RGB8, 6, err)
             : NULL;
    int rc = wr ? 0 : -1;
    for (int64_t y = 0; y < box->h && rc == 0; y += band) {
        int64_t y1 = y + band < box->h ? y + band : box->h;
        s_band(rows, y, y1, box, uplift_m_yr, top, traces, n);
        tb_rows_done(done, y, y1);
        rc = tb_png_writer_rows(wr, rows, (uint32_t)(y1 - y), err);
    }
    if (rc == 0)
        rc = tb_png_writer_close(&wr, NULL, err);
    tb_png_writer_abort(&wr);
    free(rows);
    return rc;
}

int tb_map_uplift_write(const char *path, const tb_frame_t *box, const float *uplift_m_yr,
                        const tb_polyline_t *traces, size_t n, tb_err_t *err)
{
    return tb_map_uplift_write_rows(path, box, uplift_m_yr, traces, n, 0, NULL, err);
}
