/* Region grouping through the whole plan: islands within the margin share a region and islands
 * beyond it do not; a long thin landmass does not swallow what lies inside its box; boxes grow by
 * the margin, clip in Y, wrap across the seam and become the full ring; region grids hold only
 * their own land. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "jobs/plan/plan.h"
#include "jobs/region.h"
#include "support/plan_fixtures.h"

/* Plans a class raster with the fixture legend and a margin in cells. */
static tb_plan_t *s_plan(const uint8_t *classes, int64_t w, int64_t h, double margin_cells,
                         int threads)
{
    tb_manifest_t m;
    fix_manifest(&m, w, 8, margin_cells);
    tb_image_t img;
    fix_painting(&m, classes, w, h, &img);
    tb_err_t err;
    tb_plan_t *p = tb_plan_new_image(&m, &img, threads, &err);
    ck_assert_msg(p != NULL, "plan: %s", err.msg);
    tb_image_free(&img);
    return p;
}

static uint8_t *s_ocean(int64_t w, int64_t h)
{
    uint8_t *c = malloc((size_t)(w * h));
    memset(c, FIX_DEEP, (size_t)(w * h));
    return c;
}

/* Two 10 x 10 islands in one row, `gap` columns of water apart, margin 20 cells. */
static int s_regions_for_gap(int64_t gap)
{
    const int64_t w = 200, h = 60;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 20, 25, 10, 10, FIX_LOW);
    fix_rect(c, w, 30 + gap, 25, 10, 10, FIX_LOW);
    tb_plan_t *p = s_plan(c, w, h, 20, 1);
    ck_assert_int_eq(tb_plan_landmass_count(p), 2);
    int n = tb_plan_region_count(p);
    tb_plan_destroy(&p);
    free(c);
    return n;
}

START_TEST(test_islands_within_the_margin_share_a_region)
{
    ck_assert_int_eq(s_regions_for_gap(5), 1);
    ck_assert_int_eq(s_regions_for_gap(19), 1);
    /* Negative control: beyond the margin they are two. */
    ck_assert_int_eq(s_regions_for_gap(22), 2);
    ck_assert_int_eq(s_regions_for_gap(60), 2);
}
END_TEST

START_TEST(test_shared_region_lists_both_landmasses)
{
    const int64_t w = 200, h = 60;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 20, 25, 10, 10, FIX_LOW);
    fix_rect(c, w, 40, 20, 10, 10, FIX_HIGH);
    tb_plan_t *p = s_plan(c, w, h, 20, 1);
    ck_assert_int_eq(tb_plan_region_count(p), 1);
    const tb_plan_region_t *r = tb_plan_region(p, 0);
    ck_assert_int_eq(r->n_landmasses, 2);
    ck_assert_int_eq(r->landmass_ids[0], 1);
    ck_assert_int_eq(r->landmass_ids[1], 2);
    ck_assert_int_eq(r->land_cells, 200);
    ck_assert_int_eq(r->class_cells[FIX_LOW], 100);
    ck_assert_int_eq(r->class_cells[FIX_HIGH], 100);
    /* Land columns 20..49 and rows 20..34, grown by 20 and clipped at row 59. */
    ck_assert_int_eq(r->box.x0, 0);
    ck_assert_int_eq(r->box.w, 70);
    ck_assert_int_eq(r->box.y0, 0);
    ck_assert_int_eq(r->box.h, 55);
    ck_assert(!r->straddles_seam);
    ck_assert(!r->box_wraps);
    ck_assert_int_eq(tb_plan_landmass_region(p, 1), 1);
    ck_assert_int_eq(tb_plan_landmass_region(p, 2), 1);
    tb_plan_destroy(&p);
    free(c);
}
END_TEST

START_TEST(test_long_thin_landmass_does_not_swallow_the_planet)
{
    /* A band 3 rows high spanning 70 % of a 400-cell circumference, and islands that lie inside the
     * band's box (or in the gap) but more than a margin from its land. Grouping by overlapping
     * boxes would make one region of all of them. */
    const int64_t w = 400, h = 120;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 0, 60, 280, 3, FIX_LOW);
    fix_rect(c, w, 50, 20, 8, 8, FIX_LOW);   /* above the band, 32 rows clear */
    fix_rect(c, w, 150, 95, 8, 8, FIX_LOW);  /* below it */
    fix_rect(c, w, 330, 58, 8, 8, FIX_HIGH); /* in the 30 % gap, 50 columns from either end */
    tb_plan_t *p = s_plan(c, w, h, 20, 2);
    ck_assert_int_eq(tb_plan_landmass_count(p), 4);
    ck_assert_int_eq(tb_plan_region_count(p), 4);
    int band = -1;
    for (int k = 0; k < 4; k++)
        if (tb_plan_region(p, k)->land_cells == 840)
            band = k;
    ck_assert_int_ge(band, 0);
    const tb_plan_region_t *r = tb_plan_region(p, band);
    ck_assert_int_eq(r->n_landmasses, 1);
    ck_assert_int_eq(r->land_arc.w, 280);
    ck_assert_int_eq(r->box.w, 320); /* not the full ring */
    ck_assert_int_eq(r->box.x0, 380);
    ck_assert(r->box_wraps);
    ck_assert(!r->straddles_seam);
    ck_assert_int_eq(tb_plan_summary(p)->region_cells, 320 * 43 + 48 * 48 + 48 * 45 + 48 * 48);
    tb_plan_destroy(&p);
    free(c);
}
END_TEST

START_TEST(test_box_becomes_the_full_ring)
{
    /* 370 of 400 columns of land plus a 20-cell margin each side reaches round: x0 0, w W. */
    const int64_t w = 400, h = 60;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 10, 30, 370, 2, FIX_LOW);
    tb_plan_t *p = s_plan(c, w, h, 20, 1);
    ck_assert_int_eq(tb_plan_region_count(p), 1);
    const tb_plan_region_t *r = tb_plan_region(p, 0);
    ck_assert_int_eq(r->box.x0, 0);
    ck_assert_int_eq(r->box.w, w);
    ck_assert(tb_frame_wraps(&r->box));
    ck_assert(r->box_wraps);
    ck_assert(!r->straddles_seam);
    tb_plan_destroy(&p);
    free(c);
}
END_TEST

START_TEST(test_seam_regions)
{
    const int64_t w = 300, h = 80;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, -10, 30, 20, 10, FIX_LOW); /* across the seam */
    fix_rect(c, w, 120, 30, 10, 10, FIX_LOW); /* in the middle */
    fix_rect(c, w, 285, 66, 8, 8, FIX_LOW);   /* land short of the seam, margin across it */
    tb_plan_t *p = s_plan(c, w, h, 20, 1);
    ck_assert_int_eq(tb_plan_region_count(p), 3);
    int seen = 0;
    for (int k = 0; k < 3; k++) {
        const tb_plan_region_t *r = tb_plan_region(p, k);
        if (r->land_cells == 200) {
            ck_assert(r->straddles_seam);
            ck_assert(r->box_wraps);
            ck_assert_int_eq(r->box.x0, 270);
            ck_assert_int_eq(r->box.w, 60);
            /* the circular centroid sits on the seam, not halfway round */
            ck_assert(r->centroid_x < 1e-6 || r->centroid_x > w - 1e-6);
            seen |= 1;
        } else if (r->land_cells == 64) {
            ck_assert(!r->straddles_seam);
            ck_assert(r->box_wraps);
            ck_assert_int_eq(r->box.x0, 265);
            ck_assert_int_eq(r->box.w, 48);
            seen |= 2;
        } else {
            ck_assert(!r->straddles_seam && !r->box_wraps);
            seen |= 4;
        }
    }
    ck_assert_int_eq(seen, 7);
    tb_plan_destroy(&p);
    free(c);
}
END_TEST

START_TEST(test_region_grids_hold_only_their_own_land)
{
    /* An L-shaped landmass whose box holds a separate island more than a margin away. */
    const int64_t w = 300, h = 100;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, -20, 10, 120, 4, FIX_LOW); /* the L's foot, across the seam */
    fix_rect(c, w, 96, 10, 4, 80, FIX_HIGH);  /* its stem */
    fix_rect(c, w, 40, 60, 6, 6, FIX_LOW);    /* the island, inside the L's box */
    fix_rect(c, w, 30, 40, 3, 3, FIX_SHELF);  /* some shelf, to see classes come through */
    tb_plan_t *p = s_plan(c, w, h, 16, 1);
    ck_assert_int_eq(tb_plan_region_count(p), 2);
    int big = tb_plan_region(p, 0)->land_cells > 100 ? 0 : 1;
    const tb_plan_region_t *r = tb_plan_region(p, big);
    tb_grid_t *classes, *mask;
    tb_err_t err;
    ck_assert_msg(tb_plan_region_grids(p, big, &classes, &mask, &err) == 0, "%s", err.msg);
    const tb_frame_t *f = tb_grid_frame(classes);
    ck_assert_int_eq(f->x0, r->box.x0);
    ck_assert_int_eq(f->w, r->box.w);
    ck_assert(f->x0 + f->w > w); /* the box crosses the seam */
    const uint8_t *pc = (const uint8_t *)tb_plan_class_raster(p)->data;
    const uint8_t *gc = tb_grid_cu8(classes), *gm = tb_grid_cu8(mask);
    int64_t own = 0, island_cells_in_box = 0, mismatched = 0;
    for (int64_t j = 0; j < f->h; j++)
        for (int64_t i = 0; i < f->w; i++) {
            int64_t lx = tb_frame_lattice_x(f, i), ly = tb_frame_lattice_y(f, j);
            uint8_t want = pc[tb_idx(w, lx, ly)];
            mismatched += gc[tb_idx(f->w, i, j)] != want;
            bool island = lx >= 40 && lx < 46 && ly >= 60 && ly < 66;
            island_cells_in_box += island;
            if (gm[tb_idx(f->w, i, j)]) {
                own++;
                ck_assert(!island);
                ck_assert(want == FIX_LOW || want == FIX_HIGH);
            }
        }
    ck_assert_int_eq(mismatched, 0);
    ck_assert_int_eq(island_cells_in_box, 36);
    ck_assert_int_eq(own, r->land_cells);
    ck_assert_int_eq(own, 120 * 4 + 4 * 76);
    tb_grid_destroy(&classes);
    tb_grid_destroy(&mask);
    ck_assert_int_eq(tb_plan_region_grids(p, 7, &classes, NULL, &err), -1);
    tb_plan_destroy(&p);
    free(c);
}
END_TEST

typedef struct {
    const tb_plan_t *plan;
    int ri;
    bool flip; /* the negative control: one mask cell changed */
} s_rows_t;

static void s_rows(void *user, int64_t j, uint8_t *classes, uint8_t *solve_mask)
{
    const s_rows_t *r = user;
    tb_plan_region_row(r->plan, r->ri, j, classes, solve_mask);
    if (r->flip && j == 3)
        solve_mask[2] ^= 1;
}

START_TEST(test_spec_from_rows_is_the_spec_from_grids)
{
    /* The bake cuts a region's spec from the plan's rows into the spec itself
     * (tb_region_spec_encode_rows); it must give the bytes of the spec encoded from the grids. */
    const int64_t w = 300, h = 100;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, -20, 10, 120, 4, FIX_LOW); /* across the seam */
    fix_rect(c, w, 96, 10, 4, 80, FIX_HIGH);
    fix_rect(c, w, 30, 40, 3, 3, FIX_SHELF);
    tb_plan_t *p = s_plan(c, w, h, 16, 1);
    tb_err_t err;
    tb_uplift_probes_t probes = {0}; /* printed into the header alike; not what is compared */
    for (int ri = 0; ri < tb_plan_region_count(p); ri++) {
        const tb_plan_region_t *r = tb_plan_region(p, ri);
        tb_grid_t *classes, *mask;
        ck_assert_msg(tb_plan_region_grids(p, ri, &classes, &mask, &err) == 0, "%s", err.msg);
        tb_region_spec_t spec = {.region_id = r->id,
                                 .box = r->box,
                                 .steps = 5,
                                 .manifest = tb_plan_manifest(p),
                                 .probes = &probes,
                                 .classes = tb_grid_cu8(classes),
                                 .solve_mask = tb_grid_cu8(mask)};
        void *a = NULL, *b = NULL, *x = NULL;
        size_t na = 0, nb = 0, nx = 0;
        ck_assert_msg(tb_region_spec_encode(&spec, &a, &na, &err) == 0, "%s", err.msg);
        s_rows_t rows = {p, ri, false}, flipped = {p, ri, true};
        spec.classes = spec.solve_mask = NULL; /* the rows' encoder must not read them */
        ck_assert_msg(tb_region_spec_encode_rows(&spec, s_rows, &rows, &b, &nb, &err) == 0, "%s",
                      err.msg);
        ck_assert_uint_eq(na, nb);
        ck_assert(memcmp(a, b, na) == 0);
        if (r->box.h > 3 && r->box.w > 2) { /* the control: the comparison sees one cell */
            ck_assert(tb_region_spec_encode_rows(&spec, s_rows, &flipped, &x, &nx, &err) == 0);
            ck_assert_uint_eq(nx, na);
            ck_assert(memcmp(a, x, na) != 0);
        }
        free(a);
        free(b);
        free(x);
        tb_grid_destroy(&classes);
        tb_grid_destroy(&mask);
    }
    tb_plan_destroy(&p);
    free(c);
}
END_TEST

START_TEST(test_threads_do_not_change_the_plan)
{
    const int64_t w = 256, h = 90;
    uint8_t *c = s_ocean(w, h);
    for (int k = 0; k < 12; k++)
        fix_rect(c, w, k * 23 + (k % 3) * 5, 10 + (k * 37) % 60, 6 + k % 4, 5 + k % 3,
                 k % 2 ? FIX_LOW : FIX_HIGH);
    tb_plan_t *a = s_plan(c, w, h, 12, 1), *b = s_plan(c, w, h, 12, 2);
    char *ja = tb_plan_to_json(a), *jb = tb_plan_to_json(b);
    ck_assert_str_eq(ja, jb);
    ck_assert_int_eq(
        memcmp(tb_plan_label_raster(a)->data, tb_plan_label_raster(b)->data, (size_t)(w * h * 4)),
        0);
    free(ja);
    free(jb);
    tb_plan_destroy(&a);
    tb_plan_destroy(&b);
    free(c);
}
END_TEST

START_TEST(test_region_ids_survive_a_small_edit)
{
    /* Three islands in a row; growing one coast by a few cells keeps every id where it was. */
    const int64_t w = 300, h = 80;
    uint8_t *c = s_ocean(w, h);
    fix_rect(c, w, 20, 30, 20, 20, FIX_LOW);
    fix_rect(c, w, 120, 32, 20, 20, FIX_LOW);
    fix_rect(c, w, 220, 28, 20, 20, FIX_LOW);
    tb_plan_t *a = s_plan(c, w, h, 20, 1);
    fix_rect(c, w, 140, 40, 3, 4, FIX_LOW);
    tb_plan_t *b = s_plan(c, w, h, 20, 1);
    ck_assert_int_eq(tb_plan_region_count(a), 3);
    ck_assert_int_eq(tb_plan_region_count(b), 3);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq((int)(tb_plan_region(a, k)->centroid_x / 100),
                         (int)(tb_plan_region(b, k)->centroid_x / 100));
    /* Ids go by row first: the island whose land sits highest is region 1. */
    ck_assert_int_eq((int)(tb_plan_region(a, 0)->centroid_x / 100), 2);
    tb_plan_destroy(&a);
    tb_plan_destroy(&b);
    free(c);
}
END_TEST

START_TEST(test_coarse_painting_covers_whole_cells)
{
    /* A 100 x 30 painting of a 200-cell planet: every pixel is a 2 x 2 square of cells. */
    const int64_t pw = 100, ph = 30;
    uint8_t *c = s_ocean(pw, ph);
    fix_rect(c, pw, 10, 10, 7, 5, FIX_LOW);
    fix_rect(c, pw, 95, 20, 10, 3, FIX_HIGH); /* across the seam */
    tb_manifest_t m;
    fix_manifest(&m, 200, 8, 10);
    tb_image_t img;
    fix_painting(&m, c, pw, ph, &img);
    tb_err_t err;
    tb_plan_t *p = tb_plan_new_image(&m, &img, 1, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    const tb_plan_summary_t *s = tb_plan_summary(p);
    ck_assert_int_eq(s->cells_per_pixel, 2);
    ck_assert_int_eq(s->planet_w, 200);
    ck_assert_int_eq(s->planet_h, 60);
    const uint8_t *cells = (const uint8_t *)tb_plan_class_raster(p)->data;
    int64_t bad = 0;
    for (int64_t j = 0; j < 60; j++)
        for (int64_t i = 0; i < 200; i++)
            bad += cells[j * 200 + i] != c[(j / 2) * pw + i / 2];
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(tb_plan_landmass_count(p), 2);
    ck_assert_int_eq(s->land_cells, 4 * (35 + 30));
    int seam = 0;
    for (int k = 0; k < tb_plan_region_count(p); k++)
        seam += tb_plan_region(p, k)->straddles_seam;
    ck_assert_int_eq(seam, 1);
    tb_plan_destroy(&p);
    /* A width that does not divide the planet is refused with the numbers. */
    fix_manifest(&m, 150, 8, 10);
    ck_assert_ptr_null(tb_plan_new_image(&m, &img, 1, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "100 pixels wide"));
    ck_assert_ptr_nonnull(strstr(err.msg, "150 cells"));
    tb_image_free(&img);
    free(c);
}
END_TEST

START_TEST(test_empty_and_full_planets)
{
    const int64_t w = 64, h = 20;
    uint8_t *c = s_ocean(w, h);
    tb_plan_t *p = s_plan(c, w, h, 4, 2);
    ck_assert_int_eq(tb_plan_region_count(p), 0);
    ck_assert_int_eq(tb_plan_landmass_count(p), 0);
    ck_assert_double_eq(tb_plan_estimate_floor_s(p, 2), 0);
    char *json = tb_plan_to_json(p);
    ck_assert_ptr_nonnull(json);
    free(json);
    tb_plan_destroy(&p);
    /* All land: one landmass round the whole planet, its box the full ring and the full height. */
    memset(c, FIX_LOW, (size_t)(w * h));
    p = s_plan(c, w, h, 4, 2);
    ck_assert_int_eq(tb_plan_region_count(p), 1);
    const tb_plan_region_t *r = tb_plan_region(p, 0);
    ck_assert(tb_frame_wraps(&r->box));
    ck_assert_int_eq(r->box.h, h);
    ck_assert_int_eq(r->land_arc.w, w);
    ck_assert(r->straddles_seam);
    tb_plan_destroy(&p);
    free(c);
}
END_TEST

Suite *regions_suite(void)
{
    Suite *s = suite_create("regions");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_islands_within_the_margin_share_a_region);
    tcase_add_test(tc, test_shared_region_lists_both_landmasses);
    tcase_add_test(tc, test_long_thin_landmass_does_not_swallow_the_planet);
    tcase_add_test(tc, test_box_becomes_the_full_ring);
    tcase_add_test(tc, test_seam_regions);
    tcase_add_test(tc, test_region_grids_hold_only_their_own_land);
    tcase_add_test(tc, test_spec_from_rows_is_the_spec_from_grids);
    tcase_add_test(tc, test_threads_do_not_change_the_plan);
    tcase_add_test(tc, test_region_ids_survive_a_small_edit);
    tcase_add_test(tc, test_coarse_painting_covers_whole_cells);
    tcase_add_test(tc, test_empty_and_full_planets);
    suite_add_tcase(s, tc);
    return s;
}
