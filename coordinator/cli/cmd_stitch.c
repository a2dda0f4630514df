/* `terrain stitch OUT --area X0,Y0,W,H [--out FILE] [--format png|r16] [--layer L] [--max-samples
 * N]`: one seamless mosaic of the baked detail heights of any area of the planet, in world metres
 * (x east from the planet's x = 0, y south from its north edge), across the X seam, from
 * OUT/tiles/index.json and the tile files (coordinator/maps/tile_mosaic.h, docs/tiles.md
 * "Stitching"); --layer flow, wear or deposit stitches one of the 8-bit maps instead, --layer splat
 * the RGBA splat weightmap (PNG only).
 * Every file is checked against the index's XXH3 before use. Unbaked (ocean) tiles
 * are filled with 0 m encoded and their share is reported. Exit 0; 1 when the bake is damaged (a
 * listed file missing, unreadable or not matching its XXH3; an index that does not hold together);
 * 2 for bad usage (the area, the format, a directory without tiles, an area over the budget). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/image.h"
#include "common/png_io.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"
#include "coordinator/maps/tile_mosaic.h"

/* "X0,Y0,W,H": four numbers, or -1. */
static int s_parse_area(const char *text, double v[4])
{
    const char *p = text;
    for (int i = 0; i < 4; i++) {
        char *end;
        errno = 0;
        v[i] = strtod(p, &end);
        if (end == p || errno != 0)
            return -1;
        p = end;
        if (i < 3) {
            if (*p != ',')
                return -1;
            p++;
        }
    }
    return *p == '\0' ? 0 : -1;
}

static int s_write(const char *path, bool png, size_t bps, const void *samples,
                   const tb_mosaic_rect_t *r, tb_err_t *err)
{
    size_t n = (size_t)(r->w * r->h);
    const uint16_t *v = samples;
    if (png) {
        tb_image_t img = {.w = (uint32_t)r->w,
                          .h = (uint32_t)r->h,
                          .format = bps == 2   ? TB_PNG_GRAY16
                                    : bps == 4 ? TB_PNG_RGBA8
                                               : TB_PNG_GRAY8,
                          .pixels = (void *)samples};
        return tb_png_write(path, &img, 6, err);
    }
    unsigned char *b = tb_malloc(2 * n, "the .r16 bytes", err);
    if (!b)
        return -1;
    for (size_t i = 0; i < n; i++) {
        b[2 * i] = (unsigned char)(v[i] & 0xff);
        b[2 * i + 1] = (unsigned char)(v[i] >> 8);
    }
    int rc = tb_fs_write_atomic(path, b, 2 * n, err);
    free(b);
    return rc;
}

int tb_cmd_stitch(int argc, char **argv)
{
    const char *area = NULL, *out_path = NULL, *format = NULL, *layer_name = "height";
    int64_t max_samples = TB_MOSAIC_MAX_SAMPLES;
    const tb_opt_t opts[] = {
        {"area", TB_OPT_STRING, &area, NULL, "X0,Y0,W,H",
         "the area in world metres: x east from x = 0 (taken modulo the circumference, so an area "
         "may cross the X seam), y south from the north edge, width, height (required)"},
        {"out", TB_OPT_STRING, &out_path, NULL, "FILE",
         "where to write the mosaic (default: stitch.png or stitch.r16 here)"},
        {"format", TB_OPT_STRING, &format, NULL, "png|r16",
         "16-bit grey PNG or little-endian u16 .r16, in the planet's elevation encoding (default: "
         "from --out's extension, else png)"},
        {"layer", TB_OPT_STRING, &layer_name, NULL, "height|flow|wear|deposit|splat",
         "what to stitch: the heights (default), one of the 8-bit maps, or the RGBA splat "
         "weightmap (the maps PNG only; docs/tiles.md)"},
        {"max-samples", TB_OPT_INT, &max_samples, NULL, "N",
         "refuse an area of more than N samples (default and most: 2^26 = 67108864, 8192 x 8192, "
         "128 MiB of heights)",
         TB_OPT_IRANGE(1, TB_MOSAIC_MAX_SAMPLES), .range_text = "1..2^26"},
    };
    tb_verb_t v = {.name = "stitch",
                   .usage = "terrain stitch OUT --area X0,Y0,W,H [--out FILE] [--format png|r16] "
                            "[--layer height|flow|wear|deposit|splat] [--max-samples N]",
                   TB_VERB_OPTS(opts),
                   .min_positional = 1,
                   .max_positional = 1,
                   .positional_what = "the bake's output directory"};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    double a[4];
    if (!area)
        return tb_verb_usage(&v, "--area X0,Y0,W,H is required");
    if (s_parse_area(area, a) != 0)
        return tb_verb_usage(&v, "--area \"%s\": expected four numbers X0,Y0,W,H in metres", area);
    if (!format) {
        size_t n = out_path ? strlen(out_path) : 0;
        format = n > 4 && strcmp(out_path + n - 4, ".r16") == 0 ? "r16" : "png";
    }
    bool png = strcmp(format, "png") == 0;
    if (!png && strcmp(format, "r16") != 0)
        return tb_verb_usage(&v, "--format \"%s\": expected png or r16", format);
    static const char *const layers[] = {"height", "flow", "wear", "deposit", "splat"};
    int layer = -1;
    for (int k = 0; k < 5; k++)
        if (strcmp(layer_name, layers[k]) == 0)
            layer = k;
    if (layer < 0)
        return tb_verb_usage(&v, "--layer \"%s\": expected height, flow, wear, deposit or splat",
                             layer_name);
    bool wide = layer == TB_MOSAIC_HEIGHT;
    size_t bps = tb_mosaic_layer_bytes((tb_mosaic_layer_t)layer);
    if (!wide && !png)
        return tb_verb_usage(&v, "--layer %s is a map: --format png only (.r16 is for heights)",
                             layer_name);
    if (!out_path)
        out_path = png ? "stitch.png" : "stitch.r16";

    tb_err_t err;
    tb_mosaic_t *m = NULL;
    if (tb_mosaic_open(v.positional[0], &m, &err) != 0)
        /* no index: not a bake with tiles (usage); an index that does not parse: damaged */
        return tb_verb_error(&v, err.code == TB_E_IO ? TB_EXIT_USAGE : TB_EXIT_FAILED, &err);
    tb_mosaic_info_t info;
    tb_mosaic_info(m, &info);
    tb_mosaic_rect_t r;
    if (tb_mosaic_area_samples(&info, a[0], a[1], a[2], a[3], max_samples, &r, &err) != 0) {
        tb_mosaic_close(&m);
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    }
    void *h = tb_malloc((size_t)(r.w * r.h) * bps, "the mosaic", &err);
    int64_t filled = 0;
    int rc = TB_EXIT_FAILED;
    if (!h ||
        tb_mosaic_stitch(m, (tb_mosaic_layer_t)layer, r, wide ? tb_mosaic_encode_m(&info, 0.0) : 0,
                         h, &filled, &err) != 0 ||
        s_write(out_path, png, bps, h, &r, &err) != 0) {
        rc = tb_verb_error(&v, TB_EXIT_FAILED, &err);
    } else {
        printf(
            "stitch: %s, %lld x %lld samples of %g m from sample (%lld, %lld) (world %g, %g m), "
            "%.2f %% filled with %s (tiles the index does not list: ocean tiles are not baked)\n",
            out_path, (long long)r.w, (long long)r.h, info.cell_m, (long long)r.x0, (long long)r.y0,
            (double)r.x0 * info.cell_m, (double)r.y0 * info.cell_m,
            100.0 * (double)filled / (double)(r.w * r.h), wide ? "0 m" : "0");
        rc = TB_EXIT_OK;
    }
    free(h);
    tb_mosaic_close(&m);
    return rc;
}
