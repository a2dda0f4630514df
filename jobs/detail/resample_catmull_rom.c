/* Catmull-Rom resampling; see resample_catmull_rom.h. Separable: a horizontal pass over the geology
 * rows the window reads into a double scratch, then a vertical pass, each a fixed-order sum. */
#include "jobs/detail/resample_catmull_rom.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* Geology coordinate of detail lattice cell I: ((2I + 1) cell - geo_cell) / (2 geo_cell). */
static double s_geo_coord(int64_t I, double cell_m, double geo_cell_m)
{
    return ((double)(2 * I + 1) * cell_m - geo_cell_m) / (2.0 * geo_cell_m);
}

static void s_weights(double t, double w[4])
{
    double t2 = t * t, t3 = t2 * t;
    w[0] = 0.5 * (-t3 + 2.0 * t2 - t);
    w[1] = 0.5 * (3.0 * t3 - 5.0 * t2 + 2.0);
    w[2] = 0.5 * (-3.0 * t3 + 4.0 * t2 + t);
    w[3] = 0.5 * (t3 - t2);
}

static int s_check(const tb_frame_t *geo, const tb_frame_t *det, tb_err_t *err)
{
    if (!tb_frame_valid(geo) || !tb_frame_valid(det))
        return tb_err_set(err, TB_E_INVALID, "resample: a frame without a lattice");
    double circ_g = (double)geo->lattice_w * geo->cell_m,
           circ_d = (double)det->lattice_w * det->cell_m;
    if (fabs(circ_g - circ_d) > 1e-6 * circ_g)
        return tb_err_set(err, TB_E_INVALID,
                          "resample: geology circumference %g m, detail %g m: not one planet",
                          circ_g, circ_d);
    return 0;
}

/* Local geology columns and weights of every detail column; -1 when a column is not covered. */
static int s_columns(const tb_frame_t *geo, const tb_frame_t *det, int64_t *col, double *w,
                     tb_err_t *err)
{
    for (int64_t i = 0; i < det->w; i++) {
        double u = s_geo_coord(tb_frame_lattice_x(det, i), det->cell_m, geo->cell_m);
        double f = floor(u);
        s_weights(u - f, &w[4 * i]);
        for (int k = 0; k < 4; k++) {
            int64_t lx = tb_wrap((int64_t)f - 1 + k, geo->lattice_w);
            col[4 * i + k] = tb_frame_local_x(geo, lx);
            if (col[4 * i + k] < 0)
                return tb_err_set(err, TB_E_INVALID,
                                  "resample: geology column %" PRId64 " (for detail column %" PRId64
                                  ") is not in the window",
                                  lx, tb_frame_lattice_x(det, i));
        }
    }
    return 0;
}

static int s_rows(const tb_frame_t *geo, const tb_frame_t *det, int64_t *row, double *w,
                  tb_err_t *err)
{
    for (int64_t j = 0; j < det->h; j++) {
        double v = s_geo_coord(tb_frame_lattice_y(det, j), det->cell_m, geo->cell_m);
        double f = floor(v);
        s_weights(v - f, &w[4 * j]);
        for (int k = 0; k < 4; k++) {
            int64_t ly = (int64_t)f - 1 + k;
            ly = ly < 0 ? 0 : (ly >= geo->lattice_h ? geo->lattice_h - 1 : ly);
            row[4 * j + k] = ly - geo->y0;
            if (row[4 * j + k] < 0 || row[4 * j + k] >= geo->h)
                return tb_err_set(err, TB_E_INVALID,
                                  "resample: geology row %" PRId64 " is not in the window", ly);
        }
    }
    return 0;
}

int tb_resample_catmull_rom(const tb_frame_t *geo, const float *src, const tb_frame_t *det,
                            double *out, tb_err_t *err)
{
    if (s_check(geo, det, err) != 0)
        return -1;
    int64_t *col = malloc((size_t)det->w * 4 * sizeof *col);
    int64_t *row = malloc((size_t)det->h * 4 * sizeof *row);
    double *wc = malloc((size_t)det->w * 4 * sizeof *wc);
    double *wr = malloc((size_t)det->h * 4 * sizeof *wr);
    double *tmp = malloc((size_t)det->w * (size_t)geo->h * sizeof *tmp);
    unsigned char *need = calloc((size_t)geo->h, 1);
    int rc = -1;
    if (!col || !row || !wc || !wr || !tmp || !need) {
        tb_err_set(err, TB_E_NOMEM,
                   "resample: out of memory for a %" PRId64 " x %" PRId64 " window", det->w,
                   det->h);
        goto done;
    }
    if (s_columns(geo, det, col, wc, err) != 0 || s_rows(geo, det, row, wr, err) != 0)
        goto done;
    for (int64_t j = 0; j < det->h; j++)
        for (int k = 0; k < 4; k++)
            need[row[4 * j + k]] = 1;
    for (int64_t r = 0; r < geo->h; r++) {
        if (!need[r])
            continue;
        const float *s = src + tb_idx(geo->w, 0, r);
        double *t = tmp + tb_idx(det->w, 0, r);
        for (int64_t i = 0; i < det->w; i++) {
            const int64_t *c = &col[4 * i];
            const double *w = &wc[4 * i];
            t[i] = w[0] * (double)s[c[0]] + w[1] * (double)s[c[1]] + w[2] * (double)s[c[2]] +
                   w[3] * (double)s[c[3]];
        }
    }
    for (int64_t j = 0; j < det->h; j++) {
        const int64_t *r = &row[4 * j];
        const double *w = &wr[4 * j];
        const double *t0 = tmp + tb_idx(det->w, 0, r[0]), *t1 = tmp + tb_idx(det->w, 0, r[1]);
        const double *t2 = tmp + tb_idx(det->w, 0, r[2]), *t3 = tmp + tb_idx(det->w, 0, r[3]);
        double *o = out + tb_idx(det->w, 0, j);
        for (int64_t i = 0; i < det->w; i++)
            o[i] = w[0] * t0[i] + w[1] * t1[i] + w[2] * t2[i] + w[3] * t3[i];
    }
    rc = 0;
done:
    free(col);
    free(row);
    free(wc);
    free(wr);
    free(tmp);
    free(need);
    return rc;
}

int tb_resample_nearest_u8(const tb_frame_t *geo, const uint8_t *src, const tb_frame_t *det,
                           uint8_t *out, tb_err_t *err)
{
    if (s_check(geo, det, err) != 0)
        return -1;
    int64_t *col = malloc((size_t)det->w * sizeof *col);
    if (!col)
        return tb_err_set(err, TB_E_NOMEM, "resample: out of memory");
    for (int64_t i = 0; i < det->w; i++) {
        /* the geology cell holding the detail centre: floor(u + 0.5) */
        double u = s_geo_coord(tb_frame_lattice_x(det, i), det->cell_m, geo->cell_m);
        col[i] = tb_frame_local_x(geo, tb_wrap((int64_t)floor(u + 0.5), geo->lattice_w));
        if (col[i] < 0) {
            free(col);
            return tb_err_set(err, TB_E_INVALID, "resample: a detail column outside the window");
        }
    }
    for (int64_t j = 0; j < det->h; j++) {
        double v = s_geo_coord(tb_frame_lattice_y(det, j), det->cell_m, geo->cell_m);
        int64_t r = (int64_t)floor(v + 0.5);
        r = (r < 0 ? 0 : (r >= geo->lattice_h ? geo->lattice_h - 1 : r)) - geo->y0;
        if (r < 0 || r >= geo->h) {
            free(col);
            return tb_err_set(err, TB_E_INVALID, "resample: a detail row outside the window");
        }
        for (int64_t i = 0; i < det->w; i++)
            out[tb_idx(det->w, i, j)] = src[tb_idx(geo->w, col[i], r)];
    }
    free(col);
    return 0;
}
