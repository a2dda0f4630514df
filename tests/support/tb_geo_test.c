/* Geology test helpers; see tb_geo_test.h. */
#include "support/tb_geo_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/hash.h"

tb_frame_t tb_geo_box(int64_t lattice_w, int64_t lattice_h, int64_t x0, int64_t y0, int64_t w,
                      int64_t h)
{
    tb_frame_t f;
    tb_err_t err;
    if (tb_frame_make(&f, lattice_w, lattice_h, 8, x0, y0, w, h, &err) != 0) {
        fprintf(stderr, "tb_geo_box: %s\n", err.msg);
        abort();
    }
    return f;
}

float *tb_geo_floats(const tb_frame_t *box)
{
    float *p = calloc((size_t)(box->w * box->h), sizeof(float));
    if (!p)
        abort();
    return p;
}

uint8_t *tb_geo_bytes(const tb_frame_t *box)
{
    uint8_t *p = calloc((size_t)(box->w * box->h), 1);
    if (!p)
        abort();
    return p;
}

void tb_geo_noise(const tb_frame_t *box, uint64_t seed, double amplitude, float *out)
{
    uint64_t key = tb_hash_key(seed, TB_SALT_TEST, 0);
    for (int64_t j = 0; j < box->h; j++)
        for (int64_t i = 0; i < box->w; i++)
            out[tb_idx(box->w, i, j)] =
                (float)(amplitude * tb_hash_unit(tb_hash_cell(key, tb_frame_lattice_x(box, i),
                                                              tb_frame_lattice_y(box, j))));
}

static int s_inside(const tb_frame_t *box, int64_t i, int64_t j, double cx, double cy, double rx,
                    double ry)
{
    double x = (double)tb_frame_lattice_x(box, i), y = (double)tb_frame_lattice_y(box, j);
    double dx = fabs(x - cx), lw = (double)box->lattice_w;
    if (dx > lw / 2)
        dx = lw - dx;
    double dy = y - cy;
    return (dx * dx) / (rx * rx) + (dy * dy) / (ry * ry) <= 1.0;
}

void tb_geo_ellipse(const tb_frame_t *box, double cx, double cy, double rx, double ry, float value,
                    float *out)
{
    for (int64_t j = 0; j < box->h; j++)
        for (int64_t i = 0; i < box->w; i++)
            if (s_inside(box, i, j, cx, cy, rx, ry))
                out[tb_idx(box->w, i, j)] = value;
}

void tb_geo_ellipse_u8(const tb_frame_t *box, double cx, double cy, double rx, double ry,
                       uint8_t value, uint8_t *out)
{
    for (int64_t j = 0; j < box->h; j++)
        for (int64_t i = 0; i < box->w; i++)
            if (s_inside(box, i, j, cx, cy, rx, ry))
                out[tb_idx(box->w, i, j)] = value;
}

tb_solve_params_t tb_geo_default_params(void)
{
    tb_manifest_t m;
    tb_manifest_defaults(&m);
    return m.solve;
}

int64_t tb_geo_map(const tb_frame_t *a, int64_t i, int64_t j, const tb_frame_t *b)
{
    int64_t bi = tb_frame_local_x(b, tb_frame_lattice_x(a, i));
    int64_t bj = tb_frame_lattice_y(a, j) - b->y0;
    if (bi < 0 || bj < 0 || bj >= b->h)
        return -1;
    return (int64_t)tb_idx(b->w, bi, bj);
}
