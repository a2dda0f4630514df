/* The detail phase (docs/tiles.md, "Previews" and "The detail block"), after the tiles phase and
 * only when it ran: reads out_dir/tiles back through the mosaic module (index.json and the tile
 * files, each checked against its XXH3; coordinator/maps/tile_mosaic.h), never the tiles phase's
 * memory, and writes
 *  - preview_detail.png: a hillshade of the bounding box of the largest landmass's tiles, each
 *    pixel the mean of the 2 m hillshade over its s x s samples, s the smallest whole scale that
 *    keeps both sides within S_PREVIEW_MAX_PX; unbaked (ocean) tiles in the box are flat blue;
 *  - preview_detail_crop.png: S_CROP_PX x S_CROP_PX samples at full resolution (one pixel a
 *    sample, 2 m by default) round the centre of the steepest land tile (tb_tile_steepest), the
 *    hillshade tinted towards sand by the tile's deposit map;
 *  - summary.txt again, whole, with the detail block (coordinator/bake/summary.c).
 * Reads: classes, height_m (the steepest tile). Writes no planet array. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "coordinator/bake/phase.h"
#include "coordinator/maps/tile_mosaic.h"
#include "jobs/detail/lattice.h"
#include "jobs/detail/margin.h"
#include "jobs/detail/planet_inputs.h"
#include "jobs/plan/landmasses.h"

#define S_PREVIEW_MAX_PX 4096 /* the preview's longer side at most */
#define S_CROP_PX 1024        /* the crop's side (smaller when the tile is) */
#define S_Z_EXAG 5.0          /* heights times 5 in both pictures, so centimetre rills show */
#define S_STRIP_SAMPLES ((int64_t)1 << 24) /* full-resolution samples stitched at a time */

static const uint8_t s_ocean_rgb[3] = {38, 64, 96};

/* The 2 m hillshade of rect r into shade[r.w * r.h] and, when baked is not NULL, whether each
 * sample's tile is baked. Rows just outside r are stitched too (clamped at the planet's edges), so
 * a strip's edge shades like its interior; columns just outside are the edge columns repeated,
 * which touches only the picture's own left and right borders. */
static int s_shade(const tb_mosaic_t *mo, tb_mosaic_rect_t r, double z_exag, float *shade,
                   uint8_t *baked, tb_err_t *err)
{
    tb_mosaic_info_t I;
    tb_mosaic_info(mo, &I);
    int64_t ya = r.y0 > 0 ? r.y0 - 1 : 0;
    int64_t yb = r.y0 + r.h < I.planet_h ? r.y0 + r.h + 1 : I.planet_h;
    tb_mosaic_rect_t s = {r.x0, ya, r.w, yb - ya};
    uint16_t fill = tb_mosaic_encode_m(&I, 0.0);
    uint16_t *raw = tb_malloc((size_t)(s.w * s.h) * 2, "detail heights", err);
    uint16_t *pad = tb_malloc((size_t)((r.w + 2) * (r.h + 2)) * 2, "detail heights", err);
    int rc = -1;
    if (!raw || !pad || tb_mosaic_stitch(mo, TB_MOSAIC_HEIGHT, s, fill, raw, NULL, err) != 0)
        goto done;
    for (int64_t j = -1; j <= r.h; j++) {
        int64_t sy = r.y0 + j;
        sy = sy < ya ? ya : sy >= yb ? yb - 1 : sy;
        const uint16_t *src = raw + (sy - ya) * s.w;
        uint16_t *dst = pad + (j + 1) * (r.w + 2);
        memcpy(dst + 1, src, (size_t)r.w * 2);
        dst[0] = src[0];
        dst[r.w + 1] = src[r.w - 1];
    }
    tb_mosaic_hillshade(&I, pad, r.w, r.h, z_exag, shade);
    if (baked)
        for (int64_t j = 0; j < r.h; j++) {
            int64_t row = (r.y0 + j) / I.tile_samples, last_col = -1;
            bool has = false;
            for (int64_t i = 0; i < r.w; i++) {
                int64_t col = (r.x0 + i) % I.planet_w / I.tile_samples;
                if (col != last_col) {
                    has = tb_mosaic_has_tile(mo, col, row);
                    last_col = col;
                }
                baked[j * r.w + i] = has;
            }
        }
    rc = 0;
done:
    free(raw);
    free(pad);
    return rc;
}

/* The largest landmass's baked tiles, as a rectangle of samples: its columns' shortest arc round
 * the planet (tb_arc_cover) by its rows' span. 0 with *out; 1 when no landmass has a baked tile. */
static int s_landmass_box(const tb_bake_ctx_t *ctx, const tb_mosaic_t *mo, tb_mosaic_rect_t *out,
                          int *landmass_id, tb_err_t *err)
{
    tb_mosaic_info_t I;
    tb_mosaic_info(mo, &I);
    int n = tb_plan_landmass_count(ctx->plan.plan), best = 0;
    int64_t best_cells = 0;
    for (int i = 0; i < n; i++) {
        const tb_landmass_t *l = tb_plan_landmass(ctx->plan.plan, i);
        if (l->cells > best_cells) {
            best_cells = l->cells;
            best = i + 1;
        }
    }
    if (best == 0)
        return 1;
    const tb_raster_t *labels = tb_plan_label_raster(ctx->plan.plan);
    const int32_t *lab = labels->data;
    int64_t gw = labels->w, gh = labels->h;
    /* geology cells a tile edge: the lattice makes it a whole number */
    int64_t tg = (int64_t)llround((double)I.tile_samples * I.cell_m / ctx->plan.manifest->cell_m);
    if (gw * ctx->plan.manifest->cell_m != (double)I.planet_w * I.cell_m || tg < 1)
        return tb_err_set(err, TB_E_INTERNAL,
                          "detail: the landmass raster (%lld cells of %g m) is not the tiles' "
                          "planet (%lld samples of %g m)",
                          (long long)gw, ctx->plan.manifest->cell_m, (long long)I.planet_w,
                          I.cell_m);
    tb_arc_t *arcs = tb_calloc((size_t)I.cols, sizeof *arcs, "tile arcs", err);
    bool *any = tb_calloc((size_t)I.cols, sizeof *any, "tile columns", err);
    if (!arcs || !any) {
        free(arcs);
        return -1;
    }
    /* a row of tiles at a time, its rows of the landmass raster let go after it */
    int64_t n_arcs = 0, rmin = -1, rmax = -1;
    for (int64_t r = 0; r < I.rows; r++) {
        for (int64_t c = 0; c < I.cols; c++) {
            if (!tb_mosaic_has_tile(mo, c, r))
                continue;
            bool hit = false;
            for (int64_t y = r * tg; y < (r + 1) * tg && y < gh && !hit; y++)
                for (int64_t x = c * tg; x < (c + 1) * tg && !hit; x++)
                    hit = lab[y * gw + x] == best;
            if (hit) {
                any[c] = true;
                rmin = rmin < 0 || r < rmin ? r : rmin;
                rmax = r > rmax ? r : rmax;
            }
        }
        tb_raster_release(labels, r * tg, (r + 1) * tg < gh ? (r + 1) * tg : gh);
    }
    for (int64_t c = 0; c < I.cols; c++)
        if (any[c])
            arcs[n_arcs++] = (tb_arc_t){c, 1};
    free(any);
    tb_arc_t cover = tb_arc_cover(arcs, n_arcs, I.cols);
    free(arcs);
    if (n_arcs == 0)
        return 1;
    int64_t y0 = rmin * I.tile_samples, y1 = (rmax + 1) * I.tile_samples;
    *out = (tb_mosaic_rect_t){cover.x0 * I.tile_samples, y0, cover.w * I.tile_samples,
                              (y1 < I.planet_h ? y1 : I.planet_h) - y0};
    *landmass_id = best;
    return 0;
}

/* preview_detail.png: box means of the 2 m hillshade, strip by strip. */
static int s_preview(tb_bake_ctx_t *ctx, const tb_mosaic_t *mo, tb_err_t *err)
{
    tb_mosaic_info_t I;
    tb_mosaic_info(mo, &I);
    tb_mosaic_rect_t box = {0, 0, 1, 1};
    int lm = 0;
    int brc = s_landmass_box(ctx, mo, &box, &lm, err);
    if (brc != 0) {
        if (brc > 0 && !ctx->opts->quiet)
            tb_log_info("no landmass has a baked tile: no preview_detail.png");
        return brc < 0 ? -1 : 0;
    }
    int64_t big = box.w > box.h ? box.w : box.h;
    int64_t s = (big + S_PREVIEW_MAX_PX - 1) / S_PREVIEW_MAX_PX;
    int64_t ow = (box.w + s - 1) / s, oh = (box.h + s - 1) / s;
    tb_image_t img = {0};
    double *sum = tb_calloc((size_t)ow, sizeof *sum, "preview row", err);
    int64_t *cnt = tb_calloc((size_t)ow, sizeof *cnt, "preview row", err);
    int64_t strip = (S_STRIP_SAMPLES / box.w) / s * s;
    if (strip < s)
        strip = s;
    float *shade = tb_malloc((size_t)(box.w * strip) * sizeof *shade, "preview shade", err);
    uint8_t *baked = tb_malloc((size_t)(box.w * strip), "preview mask", err);
    int rc = -1;
    if (!sum || !cnt || !shade || !baked ||
        tb_image_alloc(&img, (uint32_t)ow, (uint32_t)oh, TB_PNG_RGB8, err) != 0)
        goto done;
    for (int64_t y = 0; y < box.h; y += strip) {
        tb_mosaic_rect_t r = {box.x0, box.y0 + y, box.w, box.h - y < strip ? box.h - y : strip};
        if (tb_bake_check_interrupted(ctx, err) != 0 ||
            s_shade(mo, r, S_Z_EXAG, shade, baked, err) != 0)
            goto done;
        for (int64_t oj = 0; oj * s < r.h; oj++) {
            memset(sum, 0, (size_t)ow * sizeof *sum);
            memset(cnt, 0, (size_t)ow * sizeof *cnt);
            for (int64_t j = oj * s; j < (oj + 1) * s && j < r.h; j++)
                for (int64_t i = 0; i < r.w; i++)
                    if (baked[j * r.w + i]) {
                        sum[i / s] += shade[j * r.w + i];
                        cnt[i / s]++;
                    }
            uint8_t *px = (uint8_t *)img.pixels + (size_t)((y / s + oj) * ow) * 3;
            for (int64_t oi = 0; oi < ow; oi++) {
                if (cnt[oi] == 0) {
                    memcpy(px + 3 * oi, s_ocean_rgb, 3);
                    continue;
                }
                uint8_t g = (uint8_t)lround(255.0 * sum[oi] / (double)cnt[oi]);
                px[3 * oi] = px[3 * oi + 1] = px[3 * oi + 2] = g;
            }
        }
    }
    if (tb_bake_write_png(ctx, "preview_detail.png", &img, err) != 0)
        goto done;
    if (!ctx->opts->quiet)
        tb_log_info(
            "preview_detail.png: landmass %d's tiles, %lld x %lld samples from (%lld, %lld) "
            "at 1:%lld (%g m a pixel), %lld x %lld px",
            lm, (long long)box.w, (long long)box.h, (long long)box.x0, (long long)box.y0,
            (long long)s, (double)s * I.cell_m, (long long)ow, (long long)oh);
    rc = 0;
done:
    tb_image_free(&img);
    free(sum);
    free(cnt);
    free(shade);
    free(baked);
    return rc;
}

/* preview_detail_crop.png: full resolution round the centre of the steepest land tile. */
static int s_crop(tb_bake_ctx_t *ctx, const tb_mosaic_t *mo, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    const tb_planet_t *p = ctx->planet;
    tb_mosaic_info_t I;
    tb_mosaic_info(mo, &I);
    tb_tile_lattice_t L;
    if (tb_tile_lattice_make(&L, tb_planet_w(p), tb_planet_h(p), m->cell_m, m->tiles.size_km,
                             m->tiles.cell_m, err) != 0)
        return -1;
    if (L.tile_cells != I.tile_samples || L.cols != I.cols || L.rows != I.rows)
        return tb_err_set(err, TB_E_INTERNAL,
                          "detail: tiles/index.json is not this bake's lattice");
    tb_tile_class_t cls[TB_TILE_MAX_CLASSES];
    int n_cls = tb_tile_classes_from_legend(&m->legend, cls);
    size_t cells = tb_planet_cells(p);
    const uint8_t *classes = tb_planet_cclasses(p);
    uint8_t *land = tb_malloc(cells, "land mask", err);
    if (!land)
        return -1;
    for (size_t i = 0; i < cells; i++)
        land[i] = classes[i] < n_cls && !cls[classes[i]].ocean;
    tb_tile_id_t id;
    double slope;
    int src = tb_tile_steepest(&L, tb_planet_cheight_m(p), land, &id, &slope);
    free(land);
    if (src != 0 || !tb_mosaic_has_tile(mo, id.col, id.row)) {
        if (!ctx->opts->quiet)
            tb_log_info("no baked land tile: no preview_detail_crop.png");
        return 0;
    }
    int64_t T = I.tile_samples, th = I.planet_h - id.row * T;
    th = th > T ? T : th;
    int64_t cw = T < S_CROP_PX ? T : S_CROP_PX, ch = th < S_CROP_PX ? th : S_CROP_PX;
    tb_mosaic_rect_t r = {id.col * T + (T - cw) / 2, id.row * T + (th - ch) / 2, cw, ch};
    float *shade = tb_malloc((size_t)(cw * ch) * sizeof *shade, "crop shade", err);
    uint8_t *dep = tb_malloc((size_t)(cw * ch), "crop deposit", err);
    tb_image_t img = {0};
    int rc = -1;
    if (!shade || !dep || s_shade(mo, r, S_Z_EXAG, shade, NULL, err) != 0 ||
        tb_mosaic_stitch(mo, TB_MOSAIC_DEPOSIT, r, 0, dep, NULL, err) != 0 ||
        tb_image_alloc(&img, (uint32_t)cw, (uint32_t)ch, TB_PNG_RGB8, err) != 0)
        goto done;
    /* grey hillshade, tinted towards sand (255, 170, 60) by the deposit map: full tint from a
     * deposit byte of 64, (64 / 255)^2 m = 6.3 cm (the map is 255 sqrt(depth / 1 m), docs/tiles.md)
     */
    static const double sand[3] = {1.0, 170.0 / 255.0, 60.0 / 255.0};
    for (int64_t i = 0; i < cw * ch; i++) {
        double d = dep[i] >= 64 ? 1.0 : dep[i] / 64.0;
        for (int c = 0; c < 3; c++) {
            double v = 255.0 * shade[i] * (1.0 - d + d * sand[c]);
            ((uint8_t *)img.pixels)[3 * i + c] = (uint8_t)lround(v > 255 ? 255 : v);
        }
    }
    if (tb_bake_write_png(ctx, "preview_detail_crop.png", &img, err) != 0)
        goto done;
    char name[TB_TILE_ID_MAX];
    tb_tile_id_format(id, name);
    if (!ctx->opts->quiet)
        tb_log_info("preview_detail_crop.png: %lld x %lld samples of %g m from (%lld, %lld), the "
                    "centre of %s, the steepest land tile (%.1f degrees at the geology cell)",
                    (long long)cw, (long long)ch, I.cell_m, (long long)r.x0, (long long)r.y0, name,
                    slope);
    rc = 0;
done:
    tb_image_free(&img);
    free(shade);
    free(dep);
    return rc;
}

static int s_run(tb_bake_ctx_t *ctx, tb_err_t *err)
{
    tb_mosaic_t *mo = NULL;
    if (tb_mosaic_open(ctx->opts->out_dir, &mo, err) != 0)
        return -1;
    int rc = s_preview(ctx, mo, err) == 0 && s_crop(ctx, mo, err) == 0 &&
                     tb_bake_summary_write(ctx, true, err) == 0
                 ? 0
                 : -1;
    tb_mosaic_close(&mo);
    return rc;
}

const tb_phase_t tb_phase_detail = {
    .name = "detail",
    .reads = TB_ART_BIT(PLAN) | TB_ART_BIT(TILES) | TB_ART_BIT(CLASSES) | TB_ART_BIT(LABELS) |
             TB_ART_BIT(HEIGHT_M),
    .writes_files = true,
    .reusable = true,
    /* a re-run of chosen tiles keeps the previews and summary.txt: its pooled statistics hold the
     * re-run tiles only (docs/tiles.md, "Re-running chosen tiles") */
    .kept_on_reuse = true,
    .run = s_run,
};
