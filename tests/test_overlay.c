/* The overlay (jobs/plan/overlay.h): its legend's refusals; features in world metres against what
 * was painted - a disc's centre, area and extent (also across the seam), a polyline's vertices -
 * each with a control that a displaced painting is measured displaced; unmatched pixels dropped
 * and counted, never a mark; the coast jitter moving only the waterline, only where a mark says
 * (on either side of it), deterministic, with a zero-reach mark as the control. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/image.h"
#include "common/manifest.h"
#include "common/png_rows.h"
#include "jobs/plan/demo.h"
#include "jobs/plan/overlay.h"

static const char *S_MARKS = "{\"marks\": ["
                             "{\"name\": \"town\", \"colour\": \"#ff0000\", \"kind\": \"blob\"},"
                             "{\"name\": \"road\", \"colour\": [0, 0, 0], \"kind\": \"path\"},"
                             "{\"name\": \"rugged\", \"colour\": \"#ffff00\", \"kind\": "
                             "\"coast_jitter\", \"coast_jitter_px\": 5}]}";

static const uint8_t S_RED[3] = {255, 0, 0}, S_BLACK[3] = {0, 0, 0}, S_YELLOW[3] = {255, 255, 0};

static tb_overlay_legend_t s_legend(void)
{
    tb_overlay_legend_t lg;
    tb_err_t err;
    ck_assert_msg(tb_overlay_legend_parse(S_MARKS, "marks.json", &lg, &err) == 0, "%s", err.msg);
    return lg;
}

START_TEST(test_legend_refusals)
{
    tb_overlay_legend_t lg = s_legend();
    ck_assert_int_eq(lg.n_marks, 3);
    ck_assert_int_eq(lg.marks[2].kind, TB_MARK_COAST_JITTER);
    ck_assert_int_eq(tb_overlay_jitter_reach(&lg), 5);
    static const struct {
        const char *json, *says;
    } bad[] = {
        {"{\"marks\": []}", "marks: expected an array of 1..253 marks"},
        {"{\"marks\": [{\"name\": \"a\", \"colour\": \"#ff0000\", \"kind\": \"tree\"}]}",
         "marks[0] (a).kind: expected \"blob\", \"path\" or \"coast_jitter\""},
        {"{\"marks\": [{\"name\": \"a\", \"colour\": \"#ff0000\", \"kind\": \"coast_jitter\"}]}",
         "coast_jitter_px: missing"},
        {"{\"marks\": [{\"name\": \"a\", \"colour\": \"#ff0000\", \"kind\": \"coast_jitter\", "
         "\"coast_jitter_px\": 33}]}",
         "expected a number of pixels in 0..32, got 33"},
        {"{\"marks\": [{\"name\": \"a\", \"colour\": \"#ff0000\", \"kind\": \"blob\", "
         "\"coast_jitter_px\": 3}]}",
         "only a coast_jitter mark takes coast_jitter_px"},
        {"{\"marks\": [{\"name\": \"a\", \"colour\": \"#ff0000\", \"kind\": \"blob\"}, "
         "{\"name\": \"b\", \"colour\": \"#ff0000\", \"kind\": \"path\"}]}",
         "share the colour #ff0000"},
        {"{\"marks\": [{\"name\": \"a\", \"colour\": \"#ff0000\", \"kind\": \"blob\", \"size\": "
         "1}]}",
         "marks[0].size: unknown key"},
        {"{\"marks\": [{\"name\": \"a\", \"colour\": \"red\", \"kind\": \"blob\"}]}",
         "marks[0] (a).colour"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tb_err_t err;
        ck_assert_msg(tb_overlay_legend_parse(bad[i].json, "marks.json", &lg, &err) != 0,
                      "accepted %s", bad[i].json);
        ck_assert_msg(strstr(err.msg, bad[i].says) && strstr(err.msg, "marks.json"),
                      "%s: said '%s', expected '%s'", bad[i].json, err.msg, bad[i].says);
    }
}
END_TEST

/* ---- an overlay painted in memory ---- */

typedef struct {
    int64_t w, h;
    uint8_t *rgba;
} s_sheet_t;

static s_sheet_t s_sheet(int64_t w, int64_t h)
{
    s_sheet_t s = {w, h, calloc((size_t)(w * h * 4), 1)};
    ck_assert_ptr_nonnull(s.rgba);
    return s;
}

static void s_put(s_sheet_t *s, int64_t x, int64_t y, const uint8_t rgb[3])
{
    x = ((x % s->w) + s->w) % s->w;
    if (y < 0 || y >= s->h)
        return;
    uint8_t *p = s->rgba + 4 * (y * s->w + x);
    memcpy(p, rgb, 3);
    p[3] = 255;
}

/* A disc of pixels whose centres lie within r of (cx, cy), in pixel units. */
static int64_t s_disc(s_sheet_t *s, double cx, double cy, double r, const uint8_t rgb[3])
{
    int64_t n = 0;
    for (int64_t y = (int64_t)floor(cy - r) - 1; y <= (int64_t)ceil(cy + r) + 1; y++)
        for (int64_t x = (int64_t)floor(cx - r) - 1; x <= (int64_t)ceil(cx + r) + 1; x++)
            if (pow((double)x + 0.5 - cx, 2) + pow((double)y + 0.5 - cy, 2) <= r * r) {
                s_put(s, x, y, rgb);
                n++;
            }
    return n;
}

/* A polyline through pts (pixel units) drawn with a square brush of half-width `half`. */
static void s_line(s_sheet_t *s, const double (*pts)[2], int n, int half, const uint8_t rgb[3])
{
    for (int k = 0; k + 1 < n; k++) {
        double dx = pts[k + 1][0] - pts[k][0], dy = pts[k + 1][1] - pts[k][1];
        int steps = (int)(2 * fmax(fabs(dx), fabs(dy))) + 1;
        for (int i = 0; i <= steps; i++) {
            double t = (double)i / steps;
            int64_t x = (int64_t)floor(pts[k][0] + dx * t), y = (int64_t)floor(pts[k][1] + dy * t);
            for (int oy = -half; oy <= half; oy++)
                for (int ox = -half; ox <= half; ox++)
                    s_put(s, x + ox, y + oy, rgb);
        }
    }
}

/* overlay.json of a sheet, parsed. */
static cJSON *s_features(const s_sheet_t *s, double pixel_m, tb_overlay_counts_t *counts)
{
    tb_overlay_legend_t lg = s_legend();
    tb_err_t err;
    tb_overlay_features_t *f = tb_overlay_features_new(&lg, s->w, s->h, pixel_m, &err);
    ck_assert_ptr_nonnull(f);
    uint8_t *row = malloc((size_t)s->w);
    for (int64_t y = 0; y < s->h; y++) {
        int64_t u = tb_overlay_match_row(&lg, s->rgba + 4 * y * s->w, s->w, row);
        for (int64_t x = 0; u && x < s->w; x++)
            if (row[x] == TB_OVERLAY_UNMATCHED) {
                tb_overlay_features_unmatched(f, y, x, u);
                break;
            }
        ck_assert_msg(tb_overlay_features_row(f, row, &err) == 0, "%s", err.msg);
    }
    free(row);
    ck_assert_msg(tb_overlay_features_finish(f, &err) == 0, "%s", err.msg);
    if (counts)
        *counts = tb_overlay_features_counts(f);
    char *text = tb_overlay_features_json(f, "sheet.png");
    tb_overlay_features_destroy(&f);
    cJSON *j = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(j);
    return j;
}

static double s_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsNumber(v), "no number %s", key);
    return v->valuedouble;
}

/* The k-th feature of mark `name`. */
static const cJSON *s_feature(const cJSON *j, const char *name, int k)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(j, "features"))
    {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(f, "mark");
        if (cJSON_IsString(m) && strcmp(m->valuestring, name) == 0 && k-- == 0)
            return f;
    }
    return NULL;
}

/* The centre of a disc painted at (cx, cy) pixels, as measured, in pixels. */
static void s_disc_centre(double cx, double cy, double *mx, double *my, double *area_px)
{
    s_sheet_t s = s_sheet(400, 120);
    s_disc(&s, cx, cy, 9.0, S_RED);
    cJSON *j = s_features(&s, 8.0, NULL);
    const cJSON *f = s_feature(j, "town", 0);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_null(s_feature(j, "town", 1));
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(f, "centre_m");
    *mx = cJSON_GetArrayItem(c, 0)->valuedouble / 8.0;
    *my = cJSON_GetArrayItem(c, 1)->valuedouble / 8.0;
    *area_px = s_num(f, "area_m2") / 64.0;
    cJSON_Delete(j);
    free(s.rgba);
}

START_TEST(test_a_disc_is_measured_where_it_was_painted)
{
    static const double at[][2] = {{100.0, 60.0}, {237.3, 31.8}, {2.0, 70.5}, {399.0, 50.0}};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        double mx, my, area;
        s_disc_centre(at[i][0], at[i][1], &mx, &my, &area);
        double dx = fabs(mx - at[i][0]);
        dx = fmin(dx, 400 - dx); /* across the seam, x = 0 is x = 400 */
        ck_assert_msg(dx < 0.25 && fabs(my - at[i][1]) < 0.25,
                      "disc painted at (%g, %g) measured at (%g, %g)", at[i][0], at[i][1], mx, my);
        ck_assert_msg(fabs(area - M_PI * 81) < 0.05 * M_PI * 81, "area %g px", area);
        /* the control: the same disc 3 pixels east is measured 3 pixels east */
        double mx3, my3, area3;
        s_disc_centre(at[i][0] + 3, at[i][1], &mx3, &my3, &area3);
        double d3 = fmod(mx3 - mx + 400, 400);
        ck_assert_msg(fabs(d3 - 3) < 0.25, "moved 3 px, measured %g", d3);
    }
    /* one across the seam is one piece that says so, its extent unwrapped past the circumference */
    s_sheet_t s = s_sheet(400, 120);
    s_disc(&s, 1.0, 60.0, 9.0, S_RED);
    cJSON *j = s_features(&s, 8.0, NULL);
    const cJSON *f = s_feature(j, "town", 0);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "crosses_seam")));
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(f, "extent_m");
    ck_assert_double_eq_tol(s_num(e, "x0"), (400 - 8) * 8.0, 1e-9);
    ck_assert_double_eq_tol(s_num(e, "x1"), (400 + 10) * 8.0, 1e-9);
    ck_assert_double_eq_tol(s_num(e, "y0"), 51 * 8.0, 1e-9);
    ck_assert_double_eq_tol(s_num(e, "y1"), 69 * 8.0, 1e-9);
    ck_assert_ptr_null(s_feature(j, "town", 1));
    cJSON_Delete(j);
    free(s.rgba);
}
END_TEST

/* The polyline of a path painted through pts, with its vertex count. */
static cJSON *s_path_json(const double (*pts)[2], int n, int half)
{
    s_sheet_t s = s_sheet(400, 120);
    s_line(&s, pts, n, half, S_BLACK);
    cJSON *j = s_features(&s, 8.0, NULL);
    free(s.rgba);
    return j;
}

/* The largest distance, in pixels, from a painted vertex to the nearest measured one (pts in
 * pixels, x unwrapped like the polyline's), and the measured vertex count. */
static double s_vertex_error(const cJSON *j, const double (*pts)[2], int n, int *count)
{
    const cJSON *f = s_feature(j, "road", 0);
    ck_assert_ptr_nonnull(f);
    const cJSON *line = cJSON_GetObjectItemCaseSensitive(f, "polyline_m");
    *count = cJSON_GetArraySize(line);
    double worst = 0;
    for (int k = 0; k < n; k++) {
        double best = 1e30;
        const cJSON *v;
        cJSON_ArrayForEach(v, line)
        {
            double x = cJSON_GetArrayItem(v, 0)->valuedouble / 8.0,
                   y = cJSON_GetArrayItem(v, 1)->valuedouble / 8.0;
            best = fmin(best, hypot(x - pts[k][0], y - pts[k][1]));
        }
        worst = fmax(worst, best);
    }
    return worst;
}

START_TEST(test_a_path_is_its_painted_polyline)
{
    /* a bend in the middle, and one crossing the seam (x unwrapped from 380 to 440) */
    static const double bend[][2] = {{40.5, 20.5}, {140.5, 90.5}, {260.5, 30.5}};
    static const double seam[][2] = {{380.5, 40.5}, {410.5, 70.5}, {440.5, 60.5}};
    static const double moved[][2] = {{40.5, 20.5}, {180.5, 90.5}, {260.5, 30.5}};
    for (int half = 0; half <= 1; half++) {
        int count;
        cJSON *j = s_path_json(bend, 3, half);
        double e = s_vertex_error(j, bend, 3, &count);
        /* within the stroke's width and a pixel: the centre line of a stroke is known to that */
        ck_assert_msg(e <= 2 * half + 2 && count == 3, "width %d: %d vertices, worst %.2f px off",
                      2 * half + 1, count, e);
        const cJSON *f = s_feature(j, "road", 0);
        double len = hypot(100, 70) + hypot(120, 60);
        /* each end is pulled in by about half the brush (its square end lies beyond the vertex) */
        ck_assert_msg(fabs(s_num(f, "length_m") / 8.0 - len) < 0.04 * len, "length %g px of %g",
                      s_num(f, "length_m") / 8.0, len);
        /* the control: the path painted with its bend 40 px east is not measured as this one */
        cJSON *jm = s_path_json(moved, 3, half);
        ck_assert_msg(s_vertex_error(jm, bend, 3, &count) > 30, "a moved bend matched");
        cJSON_Delete(jm);
        cJSON_Delete(j);
        j = s_path_json(seam, 3, half);
        e = s_vertex_error(j, seam, 3, &count);
        ck_assert_msg(e <= 2 * half + 2 && count == 3, "seam, width %d: %d vertices, worst %.2f px",
                      2 * half + 1, count, e);
        ck_assert(cJSON_IsTrue(
            cJSON_GetObjectItemCaseSensitive(s_feature(j, "road", 0), "crosses_seam")));
        cJSON_Delete(j);
    }
}
END_TEST

START_TEST(test_unmatched_pixels_are_dropped_and_counted)
{
    s_sheet_t s = s_sheet(400, 120);
    int64_t disc = s_disc(&s, 100, 60, 6, S_RED);
    /* a JPEG-like halo pixel next to the disc, far from every mark's colour, and one within the
     * tolerance of red (which is red) */
    static const uint8_t halo[3] = {128, 128, 0}, near_red[3] = {240, 10, 10};
    s_put(&s, 107, 60, halo);
    s_put(&s, 300, 10, halo);
    s_put(&s, 200, 100, near_red);
    tb_overlay_counts_t c;
    cJSON *j = s_features(&s, 8.0, &c);
    ck_assert_int_eq(c.unmatched_pixels, 2);
    ck_assert_int_eq(c.unmatched_x, 300);
    ck_assert_int_eq(c.unmatched_y, 10);
    ck_assert_int_eq(c.marked_pixels, disc + 1);
    ck_assert_double_eq(s_num(j, "unmatched_pixels"), 2);
    /* the halo pixel touching the disc did not become town: the disc keeps its own area */
    ck_assert_double_eq(s_num(s_feature(j, "town", 0), "pixels"), (double)disc);
    ck_assert_double_eq(s_num(s_feature(j, "town", 1), "pixels"), 1);
    cJSON_Delete(j);
    /* a pixel with alpha 0 is blank whatever its colour */
    uint8_t rgba[8] = {255, 0, 0, 0, 255, 0, 0, 1}, out[2];
    tb_overlay_legend_t lg = s_legend();
    ck_assert_int_eq(tb_overlay_match_row(&lg, rgba, 2, out), 0);
    ck_assert_int_eq(out[0], TB_OVERLAY_BLANK);
    ck_assert_int_eq(out[1], 1);
    free(s.rgba);
}
END_TEST

/* ---- the coast jitter ---- */

typedef struct {
    int64_t w, h;
    uint8_t *rgb;
} s_paint_t;

/* A painting of the demo legend: land west of column coast (per row), ocean east; y wraps not. */
static s_paint_t s_painting(const tb_manifest_t *m, int64_t w, int64_t h, int64_t coast)
{
    int land = -1, ocean = -1;
    for (int c = 0; c < m->legend.n_classes; c++) {
        if (m->legend.classes[c].kind == TB_CLASS_LAND && land < 0)
            land = c;
        if (m->legend.classes[c].kind == TB_CLASS_OCEAN && ocean < 0)
            ocean = c;
    }
    s_paint_t p = {w, h, malloc((size_t)(w * h * 3))};
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++)
            memcpy(p.rgb + 3 * (y * w + x), m->legend.classes[x < coast ? land : ocean].rgb, 3);
    return p;
}

/* The painting's rows through the coast jitter of `sheet` with marks `json`; *moved gets the count.
 */
static uint8_t *s_jitter(const tb_manifest_t *m, const s_paint_t *p, const s_sheet_t *sheet,
                         const char *json, int64_t *moved)
{
    tb_overlay_legend_t lg;
    tb_err_t err;
    ck_assert_msg(tb_overlay_legend_parse(json, "marks.json", &lg, &err) == 0, "%s", err.msg);
    tb_image_t pi = {
        .w = (uint32_t)p->w, .h = (uint32_t)p->h, .format = TB_PNG_RGB8, .pixels = p->rgb};
    tb_image_t oi = {.w = (uint32_t)sheet->w,
                     .h = (uint32_t)sheet->h,
                     .format = TB_PNG_RGBA8,
                     .pixels = sheet->rgba};
    tb_image_rows_t pr, orows;
    tb_overlay_features_t *f = tb_overlay_features_new(&lg, p->w, p->h, m->cell_m, &err);
    tb_coast_jitter_t *j = tb_coast_jitter_new(m, 1, &lg, tb_image_rows(&pr, &pi, "painting"),
                                               tb_image_rows(&orows, &oi, "overlay"), f, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    uint8_t *out = malloc((size_t)(p->w * p->h * 3));
    const tb_row_source_t *src = tb_coast_jitter_rows(j);
    for (int64_t y = 0; y < p->h; y++)
        ck_assert_msg(tb_row_source_read(src, 1, out + 3 * y * p->w, &err) == 0, "%s", err.msg);
    ck_assert(tb_coast_jitter_drain(j, &err) == 0);
    *moved = tb_coast_jitter_moved(j);
    tb_coast_jitter_destroy(&j);
    tb_overlay_features_destroy(&f);
    return out;
}

START_TEST(test_the_coast_jitter_moves_the_waterline_where_marked)
{
    tb_manifest_t m;
    tb_err_t err;
    ck_assert(tb_demo_manifest(7, 10, &m, &err) == 0);
    const int64_t w = 1250, h = 300, coast = 600;
    s_paint_t p = s_painting(&m, w, h, coast);
    /* marks: rows 20..139 on the land side of the coast only; rows 160..279 on the water side
     * only (six wavelengths of the jitter each) */
    s_sheet_t sheet = s_sheet(w, h);
    for (int64_t y = 20; y < 140; y++)
        for (int64_t x = coast - 12; x < coast; x++)
            s_put(&sheet, x, y, S_YELLOW);
    for (int64_t y = 160; y < 280; y++)
        for (int64_t x = coast; x < coast + 12; x++)
            s_put(&sheet, x, y, S_YELLOW);
    int64_t moved;
    uint8_t *out = s_jitter(&m, &p, &sheet, S_MARKS, &moved);
    ck_assert_int_gt(moved, 0);
    int64_t changed_land_side = 0, changed_water_side = 0, per_band[2][2] = {{0, 0}, {0, 0}};
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            const uint8_t *a = p.rgb + 3 * (y * w + x), *b = out + 3 * (y * w + x);
            if (memcmp(a, b, 3) == 0)
                continue;
            /* only within the reach (5 px) of the coast, and of a marked row */
            ck_assert_msg(llabs(x - coast) <= 5, "pixel (%lld, %lld) moved, %lld px from the coast",
                          (long long)x, (long long)y, (long long)llabs(x - coast));
            ck_assert_msg((y >= 15 && y < 145) || (y >= 155 && y < 285),
                          "pixel (%lld, %lld) moved outside the marks' reach", (long long)x,
                          (long long)y);
            changed_land_side += x < coast;
            changed_water_side += x >= coast;
            per_band[y < 150 ? 0 : 1][x < coast ? 0 : 1]++;
        }
    ck_assert_int_eq(changed_land_side + changed_water_side, moved);
    /* the waterline moved both ways in both bands: a mark on one side instructs the other (the
     * unmarked side's pixels moved too) */
    ck_assert_int_gt(changed_land_side, 0);
    ck_assert_int_gt(changed_water_side, 0);
    for (int b = 0; b < 2; b++)
        ck_assert_msg(per_band[b][0] > 10 && per_band[b][1] > 10,
                      "band %d (marked on the %s side): %lld land and %lld water pixels moved", b,
                      b == 0 ? "land" : "water", (long long)per_band[b][0],
                      (long long)per_band[b][1]);
    /* a pure function: the same inputs, the same pixels */
    int64_t moved2;
    uint8_t *again = s_jitter(&m, &p, &sheet, S_MARKS, &moved2);
    ck_assert_int_eq(moved2, moved);
    ck_assert(memcmp(out, again, (size_t)(w * h * 3)) == 0);
    /* the control: the same marks with a reach of 0 move nothing */
    static const char *still = "{\"marks\": [{\"name\": \"rugged\", \"colour\": \"#ffff00\", "
                               "\"kind\": \"coast_jitter\", \"coast_jitter_px\": 0}]}";
    uint8_t *none = s_jitter(&m, &p, &sheet, still, &moved2);
    ck_assert_int_eq(moved2, 0);
    ck_assert(memcmp(none, p.rgb, (size_t)(w * h * 3)) == 0);
    free(none);
    free(again);
    free(out);
    free(sheet.rgba);
    free(p.rgb);
}
END_TEST

START_TEST(test_an_overlay_of_another_size_is_refused)
{
    tb_manifest_t m;
    tb_err_t err;
    ck_assert(tb_demo_manifest(7, 10, &m, &err) == 0);
    s_paint_t p = s_painting(&m, 1250, 40, 600);
    s_sheet_t sheet = s_sheet(1250, 41);
    tb_overlay_legend_t lg = s_legend();
    tb_image_t pi = {.w = 1250, .h = 40, .format = TB_PNG_RGB8, .pixels = p.rgb};
    tb_image_t oi = {.w = 1250, .h = 41, .format = TB_PNG_RGBA8, .pixels = sheet.rgba};
    tb_image_rows_t pr, orows;
    ck_assert_ptr_null(tb_coast_jitter_new(&m, 1, &lg, tb_image_rows(&pr, &pi, "painting.png"),
                                           tb_image_rows(&orows, &oi, "overlay.png"), NULL, &err));
    ck_assert_msg(strstr(err.msg, "overlay.png: 1250 x 41 pixels; expected the painting's size, "
                                  "1250 x 40 (painting.png)"),
                  "%s", err.msg);
    free(sheet.rgba);
    free(p.rgb);
}
END_TEST

Suite *overlay_suite(void)
{
    Suite *s = suite_create("overlay");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_legend_refusals);
    tcase_add_test(tc, test_a_disc_is_measured_where_it_was_painted);
    tcase_add_test(tc, test_a_path_is_its_painted_polyline);
    tcase_add_test(tc, test_unmatched_pixels_are_dropped_and_counted);
    tcase_add_test(tc, test_the_coast_jitter_moves_the_waterline_where_marked);
    tcase_add_test(tc, test_an_overlay_of_another_size_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
