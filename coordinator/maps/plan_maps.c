/* The plan's maps; see plan_maps.h. */
#include "coordinator/maps/plan_maps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "coordinator/maps/font.h"

static const uint8_t s_deep_rgb[3] = {14, 20, 32}, s_shelf_rgb[3] = {26, 38, 56};
static const uint8_t s_label_rgb[3] = {255, 255, 255}, s_outline_rgb[3] = {0, 0, 0};

static void s_hsv(double h_deg, double s, double v, uint8_t rgb[3])
{
    double h = fmod(h_deg, 360.0) / 60.0, c = v * s, x = c * (1 - fabs(fmod(h, 2.0) - 1));
    double r = 0, g = 0, b = 0;
    switch ((int)h) {
    case 0:
        r = c, g = x;
        break;
    case 1:
        r = x, g = c;
        break;
    case 2:
        g = c, b = x;
        break;
    case 3:
        g = x, b = c;
        break;
    case 4:
        r = x, b = c;
        break;
    default:
        r = c, b = x;
        break;
    }
    double m = v - c;
    rgb[0] = (uint8_t)lround((r + m) * 255);
    rgb[1] = (uint8_t)lround((g + m) * 255);
    rgb[2] = (uint8_t)lround((b + m) * 255);
}

void tb_region_colour(int id, uint8_t rgb[3])
{
    /* Levels and start hue chosen by search: the closest pair of the first 40 ids is 51 apart in
     * RGB (the predecessor's walk: 37.7), of the first 20 also 51 (44.0). */
    static const double sat[3] = {0.9, 0.65, 0.4}, val[2] = {1.0, 0.8};
    int k = id > 0 ? id - 1 : 0;
    s_hsv(40.0 + 137.50776405003785 * k, sat[k % 3], val[k % 2], rgb);
}

int64_t tb_plan_map_factor(int64_t planet_w, int64_t max_width)
{
    if (max_width < 1)
        max_width = 1;
    return (planet_w + max_width - 1) / max_width;
}

/* Allocates the map of a plan and returns the factor through *f. */
static int s_alloc(const tb_plan_t *plan, int64_t max_width, tb_image_t *out, int64_t *f,
                   tb_err_t *err)
{
    const tb_plan_summary_t *s = tb_plan_summary(plan);
    *f = tb_plan_map_factor(s->planet_w, max_width);
    return tb_image_alloc(out, (uint32_t)((s->planet_w + *f - 1) / *f),
                          (uint32_t)((s->planet_h + *f - 1) / *f), TB_PNG_RGB8, err);
}

/* The planet row a map row samples: the middle of its f x f square, inside the planet. */
static int64_t s_sample_y(const tb_plan_summary_t *s, int64_t f, int64_t py)
{
    int64_t y = py * f + f / 2;
    return y < s->planet_h ? y : s->planet_h - 1;
}

/* The planet column a map column samples. */
static int64_t s_sample_x(const tb_plan_summary_t *s, int64_t f, int64_t px)
{
    int64_t x = px * f + f / 2;
    return x < s->planet_w ? x : s->planet_w - 1;
}

/* Reads map row py's planet row from a raster: the row, released by the caller once drawn. */
static const void *s_row(const tb_raster_t *r, const tb_plan_summary_t *s, int64_t f, int64_t py)
{
    return tb_raster_row(r, s_sample_y(s, f, py));
}

static void s_done_row(const tb_raster_t *r, const tb_plan_summary_t *s, int64_t f, int64_t py)
{
    int64_t y = s_sample_y(s, f, py);
    tb_raster_release(r, y, y + 1);
}

int tb_plan_map_class(const tb_plan_t *plan, int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    int64_t f;
    if (s_alloc(plan, max_width, out, &f, err) != 0)
        return -1;
    const tb_plan_summary_t *s = tb_plan_summary(plan);
    const tb_legend_t *legend = &tb_plan_manifest(plan)->legend;
    const tb_raster_t *classes = tb_plan_class_raster(plan);
    uint8_t *px = out->pixels;
    for (int64_t y = 0; y < out->h; y++) {
        const uint8_t *c = s_row(classes, s, f, y);
        for (int64_t x = 0; x < out->w; x++, px += 3) {
            uint8_t v = c[s_sample_x(s, f, x)];
            if (v < legend->n_classes)
                memcpy(px, legend->classes[v].rgb, 3);
        }
        s_done_row(classes, s, f, y);
    }
    return 0;
}

int tb_plan_map_overlay(const tb_plan_t *plan, const tb_overlay_legend_t *legend,
                        const uint8_t *marks, int64_t mw, int64_t mh, int64_t max_width,
                        tb_image_t *out, tb_err_t *err)
{
    if (tb_plan_map_class(plan, max_width, out, err) != 0)
        return -1;
    if ((int64_t)out->w != mw || (int64_t)out->h != mh) {
        tb_image_free(out);
        return tb_err_set(err, TB_E_INTERNAL,
                          "map_overlay: marks kept at %lld x %lld for a %u x %u map", (long long)mw,
                          (long long)mh, out->w, out->h);
    }
    static const uint8_t unmatched[3] = {255, 0, 255};
    uint8_t *px = out->pixels;
    for (int64_t k = 0; k < mw * mh; k++, px += 3) {
        uint8_t v = marks[k];
        if (v == TB_OVERLAY_BLANK)
            for (int c = 0; c < 3; c++)
                px[c] = (uint8_t)(px[c] / 3);
        else
            memcpy(px, v == TB_OVERLAY_UNMATCHED ? unmatched : legend->marks[v - 1].rgb, 3);
    }
    return 0;
}

static void s_put(tb_image_t *img, int64_t x, int64_t y, const uint8_t rgb[3])
{
    if (y < 0 || y >= (int64_t)img->h)
        return;
    x = tb_wrap(x, img->w);
    memcpy((uint8_t *)img->pixels + 3 * ((size_t)y * img->w + (size_t)x), rgb, 3);
}

/* A region's box as a one-pixel outline in a dimmed region colour, across the seam if need be. */
static void s_box(tb_image_t *img, const tb_frame_t *box, int64_t f, const uint8_t rgb[3])
{
    uint8_t dim[3] = {(uint8_t)(rgb[0] / 2), (uint8_t)(rgb[1] / 2), (uint8_t)(rgb[2] / 2)};
    int64_t x0 = box->x0 / f, x1 = (box->x0 + box->w - 1) / f;
    int64_t y0 = box->y0 / f, y1 = (box->y0 + box->h - 1) / f;
    bool ring = tb_frame_wraps(box);
    for (int64_t x = x0; x <= x1; x++) {
        s_put(img, x, y0, dim);
        s_put(img, x, y1, dim);
    }
    for (int64_t y = y0; y <= y1 && !ring; y++) {
        s_put(img, x0, y, dim);
        s_put(img, x1, y, dim);
    }
}

int tb_plan_map_regions(const tb_plan_t *plan, int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    int64_t f;
    if (s_alloc(plan, max_width, out, &f, err) != 0)
        return -1;
    const tb_plan_summary_t *s = tb_plan_summary(plan);
    const tb_legend_t *legend = &tb_plan_manifest(plan)->legend;
    const tb_raster_t *classes = tb_plan_class_raster(plan), *labels = tb_plan_label_raster(plan);
    int n_regions = tb_plan_region_count(plan);
    /* Ocean: deep, and the shallowest ocean class a shade lighter so coasts read. */
    int shallow = -1;
    for (int k = 0; k < legend->n_classes; k++)
        if (legend->classes[k].kind == TB_CLASS_OCEAN &&
            (shallow < 0 || legend->classes[k].depth_m < legend->classes[shallow].depth_m))
            shallow = k;
    uint8_t *px = out->pixels;
    for (int64_t y = 0; y < out->h; y++) {
        const uint8_t *c = s_row(classes, s, f, y);
        for (int64_t x = 0; x < out->w; x++, px += 3)
            memcpy(px, c[s_sample_x(s, f, x)] == shallow ? s_shelf_rgb : s_deep_rgb, 3);
        s_done_row(classes, s, f, y);
    }
    for (int r = 0; r < n_regions; r++) {
        uint8_t rgb[3];
        tb_region_colour(r + 1, rgb);
        s_box(out, &tb_plan_region(plan, r)->box, f, rgb);
    }
    /* Colour per landmass, looked up once. */
    int n_lm = tb_plan_landmass_count(plan);
    uint8_t *lm_rgb = tb_malloc(3 * (size_t)(n_lm + 1), "landmass colours", err);
    if (!lm_rgb) {
        tb_image_free(out);
        return -1;
    }
    for (int id = 1; id <= n_lm; id++)
        tb_region_colour(tb_plan_landmass_region(plan, id), lm_rgb + 3 * id);
    px = out->pixels;
    for (int64_t y = 0; y < out->h; y++) {
        const int32_t *lab = s_row(labels, s, f, y);
        for (int64_t x = 0; x < out->w; x++, px += 3) {
            int32_t id = lab[s_sample_x(s, f, x)];
            if (id > 0 && id <= n_lm)
                memcpy(px, lm_rgb + 3 * id, 3);
        }
        s_done_row(labels, s, f, y);
    }
    free(lm_rgb);
    /* Ids about 1/20 of the map's height tall, at least twice the font's size. */
    int scale = (int)(out->h / 140);
    scale = scale < 2 ? 2 : scale;
    for (int r = 0; r < n_regions; r++) {
        const tb_plan_region_t *reg = tb_plan_region(plan, r);
        char text[16];
        snprintf(text, sizeof text, "%d", reg->id);
        tb_font_draw_centred(out, text, (int64_t)floor(reg->centroid_x / (double)f),
                             (int64_t)floor(reg->centroid_y / (double)f), scale, s_label_rgb,
                             s_outline_rgb, true);
    }
    return 0;
}

int tb_plan_tile_census(const tb_plan_t *plan, const tb_tile_lattice_t *L, uint8_t *content)
{
    const tb_plan_summary_t *s = tb_plan_summary(plan);
    const tb_legend_t *legend = &tb_plan_manifest(plan)->legend;
    const tb_raster_t *classes = tb_plan_class_raster(plan);
    if (L->geo_w != s->planet_w || L->geo_h != s->planet_h)
        return -1;
    bool land[256] = {false};
    for (int c = 0; c < legend->n_classes; c++)
        land[c] = legend->classes[c].kind == TB_CLASS_LAND;
    /* A row of tiles at a time, row by row of cells: what tb_tile_content finds in each. */
    const int64_t T = L->tile_geo_cells;
    uint8_t *seen = malloc((size_t)L->cols); /* bit 0: land, bit 1: sea */
    if (!seen)
        return -1;
    int count = 0;
    for (int64_t r = 0; r < L->rows; r++) {
        memset(seen, 0, (size_t)L->cols);
        int64_t y0 = r * T, y1 = y0 + T < s->planet_h ? y0 + T : s->planet_h;
        for (int64_t y = y0; y < y1; y++) {
            const uint8_t *c = tb_raster_row(classes, y);
            for (int64_t col = 0; col < L->cols; col++) {
                const uint8_t *cell = c + col * T;
                uint8_t bits = seen[col];
                for (int64_t x = 0; x < T && bits != 3; x++)
                    bits |= land[cell[x]] ? 1 : 2;
                seen[col] = bits;
            }
            tb_raster_release(classes, y, y + 1);
        }
        for (int64_t col = 0; col < L->cols; col++) {
            uint8_t bits = seen[col];
            content[r * L->cols + col] =
                (uint8_t)(bits & 1 ? (bits & 2 ? TB_TILE_COAST : TB_TILE_LAND) : TB_TILE_OCEAN);
            count += content[r * L->cols + col] != TB_TILE_OCEAN;
        }
    }
    free(seen);
    return count;
}

int tb_plan_map_tiles(const tb_plan_t *plan, const tb_tile_lattice_t *L, const uint8_t *content,
                      int64_t max_width, tb_image_t *out, tb_err_t *err)
{
    if (tb_plan_map_class(plan, max_width, out, err) != 0)
        return -1;
    const tb_plan_summary_t *s = tb_plan_summary(plan);
    int64_t f = tb_plan_map_factor(s->planet_w, max_width);
    static const uint8_t line[3] = {20, 20, 20}, fill[3] = {255, 255, 255}, dark[3] = {0, 0, 0};
    static const uint8_t dim[3] = {150, 150, 150};
    /* the lattice: a dark line on every tile edge */
    for (int64_t c = 0; c < L->cols; c++) {
        int64_t x = c * L->tile_geo_cells / f;
        for (int64_t y = 0; y < (int64_t)out->h; y++)
            s_put(out, x, y, line);
    }
    for (int64_t r = 0; r < L->rows; r++) {
        int64_t y = r * L->tile_geo_cells / f;
        for (int64_t x = 0; x < (int64_t)out->w; x++)
            s_put(out, x, y, line);
    }
    /* ids of the land and coast tiles, as large as fits a tile; ocean tiles get none */
    int64_t tile_px = L->tile_geo_cells / f;
    int scale = (int)(tile_px / (tb_font_text_width("c000r000", 1) + 8));
    scale = scale < 1 ? 1 : (scale > 6 ? 6 : scale);
    for (int64_t k = 0; k < tb_tile_count(L); k++) {
        if (content[k] == TB_TILE_OCEAN)
            continue;
        tb_tile_id_t id = {k % L->cols, k / L->cols};
        char text[TB_TILE_ID_MAX];
        tb_tile_id_format(id, text);
        int64_t y0 = id.row * L->tile_geo_cells, y1 = y0 + L->tile_geo_cells;
        y1 = y1 > s->planet_h ? s->planet_h : y1;
        int64_t cx = (id.col * L->tile_geo_cells + L->tile_geo_cells / 2) / f;
        int64_t cy = (y0 + y1) / 2 / f;
        tb_font_draw_centred(out, text, cx, cy, scale, content[k] == TB_TILE_COAST ? dim : fill,
                             dark, true);
    }
    return 0;
}
