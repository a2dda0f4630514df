/* The engines' rules and the grid of exported tiles (export.h; docs/export.md cites the engine
 * documentation each number comes from). Pure: no files. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/export/export.h"

/* Unreal: the Landscape Technical Guide's recommended sizes (components of 2^n - 1 quads);
 * Unity: heightmap resolutions 2^n + 1 (33 .. 4097); Godot: Terrain3D's region sizes 2^n
 * (64 .. 2048), which do not share edges; raw: 2^n + 1 like most tools that tile. */
static const tb_export_preset_t s_presets[TB_EXPORT_ENGINES] = {
    [TB_EXPORT_UNREAL] = {.name = "unreal",
                          .n_sizes = 7,
                          .sizes = {127, 253, 505, 1009, 2017, 4033, 8129},
                          .default_size = 2017,
                          .shared_edge = true,
                          .height_ext = ".png",
                          .layer_per_file = true},
    [TB_EXPORT_UNITY] = {.name = "unity",
                         .n_sizes = 8,
                         .sizes = {33, 65, 129, 257, 513, 1025, 2049, 4097},
                         .default_size = 2049,
                         .shared_edge = true,
                         .south_first = true,
                         .height_ext = ".raw",
                         .splat_resampled = true},
    [TB_EXPORT_GODOT] = {.name = "godot",
                         .n_sizes = 6,
                         .sizes = {64, 128, 256, 512, 1024, 2048},
                         .default_size = 1024,
                         .shared_edge = false,
                         .height_ext = ".r16"},
    [TB_EXPORT_RAW] = {.name = "raw",
                       .n_sizes = 7,
                       .sizes = {129, 257, 513, 1025, 2049, 4097, 8193},
                       .default_size = 2049,
                       .shared_edge = true,
                       .height_ext = ".r16",
                       .layer_per_file = true},
};

const tb_export_preset_t *tb_export_preset(tb_export_engine_t e)
{
    return e >= 0 && e < TB_EXPORT_ENGINES ? &s_presets[e] : NULL;
}

int tb_export_engine_parse(const char *name, tb_export_engine_t *out, tb_err_t *err)
{
    for (int e = 0; e < TB_EXPORT_ENGINES; e++)
        if (name && strcmp(name, s_presets[e].name) == 0) {
            *out = (tb_export_engine_t)e;
            return 0;
        }
    return tb_err_set(err, TB_E_INVALID, "--engine \"%s\": expected unreal, unity, godot or raw",
                      name ? name : "");
}

bool tb_export_size_valid(const tb_export_preset_t *p, int64_t n)
{
    for (int k = 0; k < p->n_sizes; k++)
        if (p->sizes[k] == n)
            return true;
    return false;
}

/* The valid sizes as text ("127, 253, ..."). */
static void s_sizes_text(const tb_export_preset_t *p, char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (int k = 0; k < p->n_sizes && o < n; k++)
        o += (size_t)snprintf(out + o, n - o, "%s%lld", k ? ", " : "", (long long)p->sizes[k]);
}

/* Tiles of `size` with `stride` that cover `want` samples. */
static int64_t s_tiles_for(int64_t want, int64_t size, int64_t stride)
{
    return want <= size ? 1 : 1 + (want - size + stride - 1) / stride;
}

int tb_export_grid_make(const tb_mosaic_info_t *info, const tb_export_preset_t *p,
                        tb_mosaic_rect_t r, int64_t size, tb_export_grid_t *out, tb_err_t *err)
{
    char sizes[160];
    s_sizes_text(p, sizes, sizeof sizes);
    if (size == 0) {
        size = p->default_size;
        for (int k = p->n_sizes - 1; k >= 0 && size > info->planet_h; k--)
            size = p->sizes[k]; /* the largest valid size the planet's height holds */
    }
    if (!tb_export_size_valid(p, size))
        return tb_err_set(err, TB_E_INVALID,
                          "--tile-samples %lld: %s takes tiles of %s samples a side",
                          (long long)size, p->name, sizes);
    if (r.w < 1 || r.h < 1 || r.x0 < 0 || r.x0 >= info->planet_w || r.y0 < 0 ||
        r.y0 + r.h > info->planet_h)
        return tb_err_set(err, TB_E_INVALID,
                          "area of %lld x %lld samples from (%lld, %lld) is not on the %lld x %lld "
                          "lattice",
                          (long long)r.w, (long long)r.h, (long long)r.x0, (long long)r.y0,
                          (long long)info->planet_w, (long long)info->planet_h);
    tb_export_grid_t g = {.x0 = r.x0, .y0 = r.y0, .size = size};
    g.stride = p->shared_edge ? size - 1 : size;
    g.nx = s_tiles_for(r.w, size, g.stride);
    g.ny = s_tiles_for(r.h, size, g.stride);
    g.covered_w = (g.nx - 1) * g.stride + size;
    g.covered_h = (g.ny - 1) * g.stride + size;
    if (g.covered_h > info->planet_h && size <= info->planet_h) {
        /* no whole number of tiles ends on both edges: as many rows as the planet holds */
        g.ny = (info->planet_h - size) / g.stride + 1;
        g.covered_h = (g.ny - 1) * g.stride + size;
        g.rows_left_out = r.h - g.covered_h;
    }
    if (g.y0 + g.covered_h > info->planet_h) {
        /* Y does not wrap and nothing is sampled beyond the planet: end on its south edge */
        g.shifted_north = g.y0 + g.covered_h - info->planet_h;
        g.y0 -= g.shifted_north;
    }
    if (g.y0 < 0) {
        int64_t fit = 0;
        for (int k = 0; k < p->n_sizes; k++)
            if (p->sizes[k] <= info->planet_h)
                fit = p->sizes[k];
        return tb_err_set(err, TB_E_INVALID,
                          "%lld row(s) of %s tiles of %lld samples cover %lld samples north to "
                          "south, more than the planet's %lld (%g m): %s",
                          (long long)g.ny, p->name, (long long)size, (long long)g.covered_h,
                          (long long)info->planet_h, (double)info->planet_h * info->cell_m,
                          fit ? "choose a smaller --tile-samples or a shorter area"
                              : "no tile size of this engine fits the planet");
    }
    *out = g;
    return 0;
}

void tb_export_tile_name(const tb_export_preset_t *p, const tb_export_grid_t *g, const char *base,
                         const char *layer, int64_t i, int64_t j, const char *ext, char *out,
                         size_t n)
{
    if (p == &s_presets[TB_EXPORT_UNREAL])
        snprintf(out, n, "%s%s_x%lld_y%lld%s", base, layer, (long long)i, (long long)j, ext);
    else if (p == &s_presets[TB_EXPORT_UNITY]) /* Unity's Z axis points north */
        snprintf(out, n, "%s%s_%lld_%lld%s", base, layer, (long long)i, (long long)(g->ny - 1 - j),
                 ext);
    else
        snprintf(out, n, "%s%s_%lld_%lld%s", base, layer, (long long)i, (long long)j, ext);
}

tb_export_scale_t tb_export_scale_of(double min_m, double max_m)
{
    /* whole centimetres outward: numbers an artist can type, and still the tightest range that
     * holds the area to within a centimetre */
    double lo = floor(min_m * 100.0) / 100.0, hi = ceil(max_m * 100.0) / 100.0;
    if (hi - lo < 0.01)
        hi = lo + 0.01; /* a flat area: one centimetre, so that the step is not zero */
    return (tb_export_scale_t){lo, hi, (hi - lo) / 65535.0};
}

uint16_t tb_export_encode(const tb_export_scale_t *s, float h)
{
    double v = round(((double)h - s->lo_m) * 65535.0 / (s->hi_m - s->lo_m));
    return v <= 0 ? 0 : v >= 65535 ? 65535 : (uint16_t)v;
}
