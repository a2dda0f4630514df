/* A synthetic planet for tests and benchmarks; see synthetic.h. */
#include "jobs/stats/synthetic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/noise.h"

void tb_synth_free(tb_synth_t *s)
{
    if (!s)
        return;
    free(s->height_m);
    free(s->area_m2);
    free(s->uplift_m_yr);
    memset(s, 0, sizeof *s);
}

typedef struct {
    float h;
    uint32_t i;
} s_key_t;

/* Lower first; ties by index, so the order is total and the result deterministic. */
static inline bool s_less(s_key_t a, s_key_t b)
{
    return a.h < b.h || (a.h == b.h && a.i < b.i);
}

static void s_push(s_key_t *heap, size_t *n, s_key_t k)
{
    size_t c = (*n)++;
    while (c > 0 && s_less(k, heap[(c - 1) / 2])) {
        heap[c] = heap[(c - 1) / 2];
        c = (c - 1) / 2;
    }
    heap[c] = k;
}

static s_key_t s_pop(s_key_t *heap, size_t *n)
{
    s_key_t top = heap[0], last = heap[--*n];
    size_t c = 0;
    for (;;) {
        size_t l = 2 * c + 1;
        if (l >= *n)
            break;
        if (l + 1 < *n && s_less(heap[l + 1], heap[l]))
            l++;
        if (!s_less(heap[l], last))
            break;
        heap[c] = heap[l];
        c = l;
    }
    heap[c] = last;
    return top;
}

/* The neighbour k of cell (i, j) of a w x h grid, or -1 off it (X wraps when `wraps`). */
static int64_t s_nb(int64_t w, int64_t h, bool wraps, int64_t i, int64_t j, int k)
{
    int64_t ni = i + tb_nb_dx[k], nj = j + tb_nb_dy[k];
    if (nj < 0 || nj >= h)
        return -1;
    if (ni < 0 || ni >= w) {
        if (!wraps)
            return -1;
        ni = tb_wrap(ni, w);
    }
    return (int64_t)tb_idx(w, ni, nj);
}

int tb_synth_fill(float *height_m, int64_t w, int64_t h, bool wraps, float sea_max_m,
                  uint32_t *order, tb_err_t *err)
{
    size_t n = (size_t)w * (size_t)h;
    if (n > UINT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "synthetic planet: %zu cells is too many", n);
    uint8_t *seen = tb_calloc(n, 1, "synthetic flags", err);
    s_key_t *heap = tb_malloc((n ? n : 1) * sizeof *heap, "synthetic heap", err);
    if (!seen || !heap) {
        free(seen);
        free(heap);
        return -1;
    }
    size_t nheap = 0, npop = 0;
    for (size_t at = 0; at < n; at++) {
        int64_t j = (int64_t)(at / (size_t)w);
        if (height_m[at] <= sea_max_m || j == 0 || j == h - 1) {
            seen[at] = 1;
            s_push(heap, &nheap, (s_key_t){height_m[at], (uint32_t)at});
        }
    }
    while (nheap > 0) {
        s_key_t c = s_pop(heap, &nheap);
        if (order)
            order[npop++] = c.i;
        int64_t i = (int64_t)(c.i % (size_t)w), j = (int64_t)(c.i / (size_t)w);
        for (int k = 0; k < 8; k++) {
            int64_t nat = s_nb(w, h, wraps, i, j, k);
            if (nat < 0 || seen[nat])
                continue;
            seen[nat] = 1;
            float *z = &height_m[nat];
            if (*z <= c.h)
                *z = nextafterf(c.h, INFINITY);
            s_push(heap, &nheap, (s_key_t){*z, (uint32_t)nat});
        }
    }
    free(seen);
    free(heap);
    return 0;
}

int tb_synth_planet(const tb_frame_t *f, uint64_t seed, double relief_m, tb_synth_t *out,
                    tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!tb_frame_valid(f))
        return tb_err_set(err, TB_E_INVALID, "synthetic planet: invalid frame");
    size_t n = (size_t)f->w * (size_t)f->h;
    if (n > UINT32_MAX)
        return tb_err_set(err, TB_E_INVALID, "synthetic planet: %zu cells is too many", n);
    double circ = (double)f->lattice_w * f->cell_m;
    tb_noise_t land, rate;
    if (tb_noise_init(&land, seed, TB_SALT_TEST_NOISE, circ, circ / 2, err) != 0 ||
        tb_noise_init(&rate, seed + 1, TB_SALT_TEST_NOISE, circ, circ / 2, err) != 0)
        return -1;
    out->height_m = tb_malloc(n * sizeof(float), "synthetic heights", err);
    out->area_m2 = tb_malloc(n * sizeof(float), "synthetic area", err);
    out->uplift_m_yr = tb_malloc(n * sizeof(float), "synthetic uplift", err);
    uint32_t *order = tb_malloc(n * sizeof *order, "synthetic order", err);
    if (!out->height_m || !out->area_m2 || !out->uplift_m_yr || !order) {
        free(order);
        tb_synth_free(out);
        return -1;
    }
    out->cells = n;
    float cell_area = (float)(f->cell_m * f->cell_m);
    /* Octaves down to a wavelength of about 16 cells: finer is noise, not terrain. */
    int octaves = 1;
    while (octaves < 10 && land.spacing_m / (double)(1 << octaves) >= 16 * f->cell_m)
        octaves++;
    /* The noise is sampled at even rows and columns and averaged between them (4x fewer samples;
     * the finest octave spans 16 cells, so nothing is lost that the fixture needs). */
    for (int64_t j = 0; j < f->h; j += 2) {
        double y = tb_frame_world_y_m(f, j);
        for (int64_t i = 0; i < f->w; i += 2) {
            size_t at = tb_idx(f->w, i, j);
            double x = tb_frame_world_x_m(f, i);
            out->height_m[at] = (float)tb_noise_fbm(&land, x, y, octaves, 0.55);
            out->uplift_m_yr[at] = (float)tb_noise_fbm(&rate, x, y, 3, 0.5);
        }
    }
    float *fields[2] = {out->height_m, out->uplift_m_yr};
    for (int fi = 0; fi < 2; fi++) {
        float *v = fields[fi];
        for (int64_t j = 0; j < f->h; j += 2)
            for (int64_t i = 1; i < f->w; i += 2) {
                int64_t right = i + 1 < f->w ? i + 1 : (tb_frame_wraps(f) ? 0 : i - 1);
                v[tb_idx(f->w, i, j)] =
                    0.5f * (v[tb_idx(f->w, i - 1, j)] + v[tb_idx(f->w, right, j)]);
            }
        for (int64_t j = 1; j < f->h; j += 2)
            for (int64_t i = 0; i < f->w; i++) {
                int64_t up = j + 1 < f->h ? j + 1 : j - 1;
                v[tb_idx(f->w, i, j)] = 0.5f * (v[tb_idx(f->w, i, j - 1)] + v[tb_idx(f->w, i, up)]);
            }
    }
    for (size_t at = 0; at < n; at++) {
        /* Sea below 0.05; land rises as the square of the excess, so coasts are gentle and the
         * interior steep. */
        double v = out->height_m[at] - 0.05;
        double h = v > 0 ? relief_m * (4 * v * v + 0.5 * v) : 0;
        out->height_m[at] = (float)h;
        double u = 0.35 + 1.3 * out->uplift_m_yr[at];
        out->uplift_m_yr[at] = (float)(1e-3 * (u < 0 ? 0 : u > 1 ? 1 : u));
        out->area_m2[at] = cell_area;
    }
    /* Priority-flood from the sea, so every land cell drains to the sea; the pop order, reversed,
     * is a valid order for the accumulation. */
    if (tb_synth_fill(out->height_m, f->w, f->h, tb_frame_wraps(f), 0.0f, order, err) != 0) {
        free(order);
        tb_synth_free(out);
        return -1;
    }
    /* D8 accumulation, highest cell first (the flood reaches every cell: the edge rows seed it). */
    for (size_t o = n; o-- > 0;) {
        size_t at = order[o];
        float z = out->height_m[at];
        if (!(z > 0))
            continue;
        int64_t i = (int64_t)(at % (size_t)f->w), j = (int64_t)(at / (size_t)f->w);
        float best = 0;
        int64_t to = -1;
        for (int k = 0; k < 8; k++) {
            int64_t nat = s_nb(f->w, f->h, tb_frame_wraps(f), i, j, k);
            if (nat < 0)
                continue;
            float drop = (z - out->height_m[nat]) / (float)tb_nb_dist[k];
            if (drop > best) {
                best = drop;
                to = nat;
            }
        }
        if (to >= 0)
            out->area_m2[to] += out->area_m2[at];
    }
    free(order);
    return 0;
}
