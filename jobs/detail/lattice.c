/* The detail tile lattice; see lattice.h. */
#include "jobs/detail/lattice.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Whether v is within a millionth of a whole number >= 1; the whole number in *n. */
static bool s_whole(double v, int64_t *n)
{
    double r = nearbyint(v);
    if (!isfinite(v) || r < 1 || fabs(v - r) > 1e-6 * fmax(1.0, r))
        return false;
    *n = (int64_t)r;
    return true;
}

int tb_tile_lattice_make(tb_tile_lattice_t *out, int64_t geo_w, int64_t geo_h, double geo_cell_m,
                         double size_km, double cell_m, tb_err_t *err)
{
    if (geo_w < 1 || geo_h < 1 || !(geo_cell_m > 0) || !(size_km > 0) || !(cell_m > 0))
        return tb_err_set(err, TB_E_INVALID,
                          "tile lattice: geology %" PRId64 " x %" PRId64 " cells of %g m, tiles of "
                          "%g km at %g m: every size must be positive",
                          geo_w, geo_h, geo_cell_m, size_km, cell_m);
    if (cell_m > geo_cell_m)
        return tb_err_set(err, TB_E_INVALID,
                          "tile lattice: tiles.cell_m %g is coarser than the geology cell_m %g",
                          cell_m, geo_cell_m);
    double size_m = size_km * 1000.0, circ_m = (double)geo_w * geo_cell_m;
    int64_t tc, tg, cols;
    if (!s_whole(size_m / cell_m, &tc))
        return tb_err_set(
            err, TB_E_INVALID,
            "tile lattice: tiles.size_km %g is %.6f detail cells of %g m, not a whole "
            "number",
            size_km, size_m / cell_m, cell_m);
    if (!s_whole(size_m / geo_cell_m, &tg))
        return tb_err_set(
            err, TB_E_INVALID,
            "tile lattice: tiles.size_km %g is %.6f geology cells of %g m, not a whole "
            "number",
            size_km, size_m / geo_cell_m, geo_cell_m);
    if (!s_whole(circ_m / size_m, &cols) || cols * tg != geo_w)
        return tb_err_set(
            err, TB_E_INVALID,
            "tile lattice: the circumference %g m is %.6f tiles of %g km, not a whole "
            "number",
            circ_m, circ_m / size_m, size_km);
    out->geo_w = geo_w;
    out->geo_h = geo_h;
    out->geo_cell_m = geo_cell_m;
    out->cell_m = cell_m;
    out->tile_cells = tc;
    out->tile_geo_cells = tg;
    out->lattice_w = cols * tc;
    /* the planet's height in detail cells: a whole number when the tile is whole in both cells */
    out->lattice_h = (int64_t)llround((double)geo_h * geo_cell_m / cell_m);
    out->cols = cols;
    out->rows = (out->lattice_h + tc - 1) / tc;
    return 0;
}

int64_t tb_tile_count(const tb_tile_lattice_t *L)
{
    return L->cols * L->rows;
}

void tb_tile_id_format(tb_tile_id_t id, char out[TB_TILE_ID_MAX])
{
    snprintf(out, TB_TILE_ID_MAX, "c%03" PRId64 "r%03" PRId64, id.col, id.row);
}

static int s_digits(const char **p, int64_t *v)
{
    const char *s = *p;
    int64_t n = 0;
    int k = 0;
    while (isdigit((unsigned char)*s) && k < 12) {
        n = n * 10 + (*s - '0');
        s++;
        k++;
    }
    if (k == 0 || isdigit((unsigned char)*s))
        return -1;
    *v = n;
    *p = s;
    return 0;
}

int tb_tile_id_parse(const char *text, const tb_tile_lattice_t *L, tb_tile_id_t *out, tb_err_t *err)
{
    const char *p = text ? text : "";
    tb_tile_id_t id;
    if (*p++ != 'c' || s_digits(&p, &id.col) != 0 || *p++ != 'r' || s_digits(&p, &id.row) != 0 ||
        *p != '\0')
        return tb_err_set(err, TB_E_INVALID,
                          "tile id \"%s\": expected c<column>r<row>, e.g. c012r003",
                          text ? text : "(null)");
    if (L && (id.col >= L->cols || id.row >= L->rows))
        return tb_err_set(err, TB_E_INVALID,
                          "tile id \"%s\": outside the lattice of %" PRId64 " columns x %" PRId64
                          " rows",
                          text, L->cols, L->rows);
    *out = id;
    return 0;
}

static int s_check_id(const tb_tile_lattice_t *L, tb_tile_id_t id, tb_err_t *err)
{
    if (id.col < 0 || id.row < 0 || id.col >= L->cols || id.row >= L->rows)
        return tb_err_set(err, TB_E_INVALID,
                          "tile (%" PRId64 ", %" PRId64 ") is outside the lattice of %" PRId64
                          " x %" PRId64 " tiles",
                          id.col, id.row, L->cols, L->rows);
    return 0;
}

int tb_tile_interior(const tb_tile_lattice_t *L, tb_tile_id_t id, tb_frame_t *out, tb_err_t *err)
{
    if (s_check_id(L, id, err) != 0)
        return -1;
    int64_t y0 = id.row * L->tile_cells;
    int64_t h = L->lattice_h - y0 < L->tile_cells ? L->lattice_h - y0 : L->tile_cells;
    return tb_frame_make(out, L->lattice_w, L->lattice_h, L->cell_m, id.col * L->tile_cells, y0,
                         L->tile_cells, h, err);
}

int tb_tile_window(const tb_tile_lattice_t *L, tb_tile_id_t id, int64_t margin, tb_frame_t *out,
                   tb_err_t *err)
{
    tb_frame_t in;
    if (tb_tile_interior(L, id, &in, err) != 0)
        return -1;
    if (margin < 0 || in.w + 2 * margin > L->lattice_w)
        return tb_err_set(err, TB_E_INVALID,
                          "tile margin %" PRId64 ": negative, or the window is wider than the "
                          "circumference of %" PRId64 " cells",
                          margin, L->lattice_w);
    int64_t y0 = in.y0 - margin < 0 ? 0 : in.y0 - margin;
    int64_t y1 = in.y0 + in.h + margin > L->lattice_h ? L->lattice_h : in.y0 + in.h + margin;
    return tb_frame_make(out, L->lattice_w, L->lattice_h, L->cell_m, in.x0 - margin, y0,
                         in.w + 2 * margin, y1 - y0, err);
}

void tb_tile_origin_m(const tb_tile_lattice_t *L, tb_tile_id_t id, double *x_m, double *y_m)
{
    *x_m = (double)(id.col * L->tile_cells) * L->cell_m;
    *y_m = (double)(id.row * L->tile_cells) * L->cell_m;
}

/* The geology cell left of (below) the centre of detail cell I: floor(u) with
 * u = (I + 0.5) cell / geo_cell - 0.5, the resampler's own arithmetic. */
static int64_t s_geo_floor(int64_t i, double cell_m, double geo_cell_m)
{
    return (int64_t)floor(((double)(2 * i + 1) * cell_m - geo_cell_m) / (2.0 * geo_cell_m));
}

int tb_tile_geo_window(const tb_tile_lattice_t *L, const tb_frame_t *detail, tb_frame_t *out,
                       tb_err_t *err)
{
    /* unwrapped detail columns; x0 may be anywhere in [0, lattice_w) */
    int64_t gx0 = s_geo_floor(detail->x0, L->cell_m, L->geo_cell_m) - 1;
    int64_t gx1 = s_geo_floor(detail->x0 + detail->w - 1, L->cell_m, L->geo_cell_m) + 2;
    int64_t gy0 = s_geo_floor(detail->y0, L->cell_m, L->geo_cell_m) - 1;
    int64_t gy1 = s_geo_floor(detail->y0 + detail->h - 1, L->cell_m, L->geo_cell_m) + 2;
    gy0 = gy0 < 0 ? 0 : gy0;
    gy1 = gy1 > L->geo_h - 1 ? L->geo_h - 1 : gy1;
    int64_t w = gx1 - gx0 + 1;
    if (w > L->geo_w)
        w = L->geo_w;
    return tb_frame_make(out, L->geo_w, L->geo_h, L->geo_cell_m, gx0, gy0, w, gy1 - gy0 + 1, err);
}

tb_tile_content_t tb_tile_content(const tb_tile_lattice_t *L, tb_tile_id_t id, const uint8_t *land)
{
    if (id.col < 0 || id.row < 0 || id.col >= L->cols || id.row >= L->rows)
        return TB_TILE_OCEAN;
    int64_t T = L->tile_geo_cells, x0 = id.col * T, y0 = id.row * T;
    int64_t y1 = y0 + T > L->geo_h ? L->geo_h : y0 + T;
    bool any_land = false, any_sea = false;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t x = x0; x < x0 + T; x++) {
            if (land[tb_idx(L->geo_w, x, y)])
                any_land = true;
            else
                any_sea = true;
        }
    return any_land ? (any_sea ? TB_TILE_COAST : TB_TILE_LAND) : TB_TILE_OCEAN;
}
