/* Frames and located grids; see grid.h. */
#include "common/grid.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* no lattice is this large: guards garbage frames */
#define S_FRAME_MAGIC_CELLS ((int64_t)1 << 40)

const int tb_nb_dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
const int tb_nb_dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
const double tb_nb_dist[8] = {1.4142135623730951, 1, 1.4142135623730951, 1, 1,
                              1.4142135623730951, 1, 1.4142135623730951};

struct tb_grid_t {
    tb_frame_t frame;
    tb_dtype_t type;
    size_t cells;
    void *data;
};

int tb_frame_make(tb_frame_t *out, int64_t lattice_w, int64_t lattice_h, double cell_m, int64_t x0,
                  int64_t y0, int64_t w, int64_t h, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (lattice_w <= 0 || lattice_h <= 0 || lattice_w >= S_FRAME_MAGIC_CELLS ||
        lattice_h >= S_FRAME_MAGIC_CELLS)
        return tb_err_set(err, TB_E_INVALID, "frame: lattice %lld x %lld cells is not a planet",
                          (long long)lattice_w, (long long)lattice_h);
    if (!(cell_m > 0) || !isfinite(cell_m))
        return tb_err_set(err, TB_E_INVALID, "frame: cell size %g m, expected a positive number",
                          cell_m);
    if (w <= 0 || h <= 0 || w > lattice_w)
        return tb_err_set(err, TB_E_INVALID,
                          "frame: window %lld x %lld does not fit a lattice %lld cells around",
                          (long long)w, (long long)h, (long long)lattice_w);
    if (y0 < 0 || y0 + h > lattice_h)
        return tb_err_set(
            err, TB_E_INVALID,
            "frame: rows %lld..%lld lie outside the planet's 0..%lld (Y does not wrap)",
            (long long)y0, (long long)(y0 + h - 1), (long long)(lattice_h - 1));
    out->lattice_w = lattice_w;
    out->lattice_h = lattice_h;
    out->cell_m = cell_m;
    out->x0 = tb_wrap(x0, lattice_w);
    out->y0 = y0;
    out->w = w;
    out->h = h;
    return 0;
}

bool tb_frame_valid(const tb_frame_t *f)
{
    return f && f->lattice_w > 0 && f->lattice_h > 0 && f->lattice_w < S_FRAME_MAGIC_CELLS &&
           f->cell_m > 0 && f->w > 0 && f->h > 0 && f->w <= f->lattice_w && f->x0 >= 0 &&
           f->x0 < f->lattice_w && f->y0 >= 0 && f->y0 + f->h <= f->lattice_h;
}

int64_t tb_frame_local_x(const tb_frame_t *f, int64_t lx)
{
    int64_t i = tb_wrap(lx - f->x0, f->lattice_w);
    return i < f->w ? i : -1;
}

bool tb_frame_same_lattice(const tb_frame_t *a, const tb_frame_t *b)
{
    return a->lattice_w == b->lattice_w && a->lattice_h == b->lattice_h && a->cell_m == b->cell_m;
}

size_t tb_dtype_size(tb_dtype_t type)
{
    switch (type) {
    case TB_U8:
        return 1;
    case TB_U16:
        return 2;
    case TB_I32:
    case TB_U32:
    case TB_F32:
        return 4;
    case TB_F64:
        return 8;
    }
    return 0;
}

tb_grid_t *tb_grid_new(const tb_frame_t *frame, tb_dtype_t type, tb_err_t *err)
{
    if (!tb_frame_valid(frame)) {
        tb_err_set(err, TB_E_INTERNAL,
                   "grid: frame has no place on the planet (origin never set); make it with "
                   "tb_frame_make");
        return NULL;
    }
    tb_grid_t *self = tb_calloc(1, sizeof *self, "grid header", err);
    if (!self)
        return NULL;
    self->frame = *frame;
    self->type = type;
    self->cells = (size_t)frame->w * (size_t)frame->h;
    self->data = tb_calloc(self->cells, tb_dtype_size(type), "grid cells", err);
    if (!self->data) {
        free(self);
        return NULL;
    }
    return self;
}

void tb_grid_destroy(tb_grid_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free((*self_p)->data);
    free(*self_p);
    *self_p = NULL;
}

const tb_frame_t *tb_grid_frame(const tb_grid_t *self)
{
    return &self->frame;
}
tb_dtype_t tb_grid_type(const tb_grid_t *self)
{
    return self->type;
}
size_t tb_grid_cells(const tb_grid_t *self)
{
    return self->cells;
}
void *tb_grid_data(tb_grid_t *self)
{
    return self->data;
}
const void *tb_grid_cdata(const tb_grid_t *self)
{
    return self->data;
}

static void *s_typed(const tb_grid_t *self, tb_dtype_t want)
{
    if (self->type != want) {
        fprintf(stderr, "grid: typed access as %d to a grid of type %d\n", (int)want,
                (int)self->type);
        abort();
    }
    return self->data;
}

float *tb_grid_f32(tb_grid_t *self)
{
    return s_typed(self, TB_F32);
}
const float *tb_grid_cf32(const tb_grid_t *self)
{
    return s_typed(self, TB_F32);
}
uint8_t *tb_grid_u8(tb_grid_t *self)
{
    return s_typed(self, TB_U8);
}
const uint8_t *tb_grid_cu8(const tb_grid_t *self)
{
    return s_typed(self, TB_U8);
}
int32_t *tb_grid_i32(tb_grid_t *self)
{
    return s_typed(self, TB_I32);
}
const int32_t *tb_grid_ci32(const tb_grid_t *self)
{
    return s_typed(self, TB_I32);
}
uint16_t *tb_grid_u16(tb_grid_t *self)
{
    return s_typed(self, TB_U16);
}
double *tb_grid_f64(tb_grid_t *self)
{
    return s_typed(self, TB_F64);
}

size_t tb_grid_blit(tb_grid_t *dst, const tb_grid_t *src)
{
    const tb_frame_t *d = &dst->frame, *s = &src->frame;
    assert(tb_frame_same_lattice(d, s) && dst->type == src->type);
    size_t es = tb_dtype_size(dst->type), copied = 0;
    int64_t ylo = d->y0 > s->y0 ? d->y0 : s->y0;
    int64_t yhi = (d->y0 + d->h < s->y0 + s->h) ? d->y0 + d->h : s->y0 + s->h;
    for (int64_t si = 0; si < s->w; si++) {
        int64_t di = tb_frame_local_x(d, tb_frame_lattice_x(s, si));
        if (di < 0)
            continue;
        for (int64_t y = ylo; y < yhi; y++) {
            memcpy((char *)dst->data + tb_idx(d->w, di, y - d->y0) * es,
                   (const char *)src->data + tb_idx(s->w, si, y - s->y0) * es, es);
            copied++;
        }
    }
    return copied;
}
