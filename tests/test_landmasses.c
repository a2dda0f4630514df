/* Landmasses on the cylinder: run labelling against a flood fill, components across the seam, the
 * minimum-size drop, id order, and the shortest covering arc. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "common/hash.h"
#include "jobs/plan/landmasses.h"
#include "support/plan_fixtures.h"

/* Reference labelling: a flood fill from every unlabelled land cell, 8-connected, X wraps. */
static int s_flood(const uint8_t *mask, int64_t w, int64_t h, bool wrap, int32_t *label)
{
    int n = 0;
    int64_t *stack = malloc(sizeof *stack * (size_t)(w * h));
    for (int64_t k = 0; k < w * h; k++)
        label[k] = -1;
    for (int64_t k = 0; k < w * h; k++) {
        if (!mask[k] || label[k] >= 0)
            continue;
        int64_t top = 0;
        stack[top++] = k;
        label[k] = n;
        while (top) {
            int64_t c = stack[--top], x = c % w, y = c / w;
            for (int d = 0; d < 8; d++) {
                int64_t nx = x + tb_nb_dx[d], ny = y + tb_nb_dy[d];
                if (ny < 0 || ny >= h || ((nx < 0 || nx >= w) && !wrap))
                    continue;
                int64_t q = tb_idx(w, tb_wrap(nx, w), ny);
                if (mask[q] && label[q] < 0) {
                    label[q] = n;
                    stack[top++] = q;
                }
            }
        }
        n++;
    }
    free(stack);
    return n;
}

START_TEST(test_runs_match_flood_fill)
{
    static const uint8_t select[256] = {[1] = 1};
    static const int sizes[][2] = {{1, 1}, {2, 5}, {17, 9}, {64, 40}, {5, 50}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int density = 200; density <= 700; density += 250)
            for (int wrap = 0; wrap <= 1; wrap++) {
                int64_t w = sizes[s][0], h = sizes[s][1];
                uint8_t *mask = malloc((size_t)(w * h));
                for (int64_t k = 0; k < w * h; k++)
                    mask[k] = tb_hash(s + 1, TB_SALT_TEST, k % w, k / w, density) % 1000 <
                              (uint64_t)density;
                int32_t *ref = malloc(sizeof *ref * (size_t)(w * h));
                int n_ref = s_flood(mask, w, h, wrap, ref);
                tb_ccl_t ccl;
                ck_assert_int_eq(tb_ccl_label(mask, w, h, wrap, select, &ccl, NULL), 0);
                ck_assert_int_eq(ccl.n_components, n_ref);
                /* Same partition: components map one to one, and are numbered in raster order of
                 * first appearance, which is the flood fill's numbering too. */
                int bad = 0;
                for (int64_t r = 0; r < ccl.n_runs; r++)
                    for (int64_t x = ccl.runs[r].x0; x <= ccl.runs[r].x1; x++)
                        bad += ref[tb_idx(w, x, ccl.runs[r].y)] != ccl.runs[r].comp;
                ck_assert_msg(bad == 0, "%lldx%lld density %d wrap %d: %d cells disagree",
                              (long long)w, (long long)h, density, wrap, bad);
                for (int64_t k = 0; k < w * h; k++) {
                    int64_t run = tb_ccl_find(&ccl, k % w, k / w);
                    bad += (run >= 0) != (mask[k] != 0);
                }
                ck_assert_int_eq(bad, 0);
                tb_ccl_free(&ccl);
                free(mask);
                free(ref);
            }
}
END_TEST

START_TEST(test_runs_match_flood_fill_on_blocks)
{
    /* Long runs of equal values (the run scanner steps over eight at a time) and several values
     * selected, as land classes are. */
    static const uint8_t select[256] = {[1] = 1, [2] = 1};
    const int64_t w = 301, h = 60;
    uint8_t *v = malloc((size_t)(w * h)), *mask = malloc((size_t)(w * h));
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            uint64_t cell = tb_hash(9, TB_SALT_TEST, i / 11, j / 7, 2);
            v[j * w + i] = (uint8_t)(cell % 5);
            mask[j * w + i] = select[v[j * w + i]];
        }
    int32_t *ref = malloc(sizeof *ref * (size_t)(w * h));
    for (int wrap = 0; wrap <= 1; wrap++) {
        int n_ref = s_flood(mask, w, h, wrap, ref);
        tb_ccl_t ccl;
        ck_assert_int_eq(tb_ccl_label(v, w, h, wrap, select, &ccl, NULL), 0);
        ck_assert_int_eq(ccl.n_components, n_ref);
        int64_t bad = 0, cells = 0;
        for (int64_t r = 0; r < ccl.n_runs; r++)
            for (int64_t x = ccl.runs[r].x0; x <= ccl.runs[r].x1; x++, cells++)
                bad += ref[tb_idx(w, x, ccl.runs[r].y)] != ccl.runs[r].comp;
        ck_assert_int_eq(bad, 0);
        int64_t land = 0;
        for (int64_t k = 0; k < w * h; k++)
            land += mask[k];
        ck_assert_int_eq(cells, land);
        tb_ccl_free(&ccl);
    }
    free(v);
    free(mask);
    free(ref);
}
END_TEST

START_TEST(test_landmass_across_the_seam_is_one)
{
    /* Land at both ends of the rows, joined only across the seam, plus a diagonal contact across
     * the seam (row 5: x = 11; row 6: x = 0). */
    static const char *const rows[] = {"............", "###.......##", "##.........#",
                                       "............", "............", "...........#",
                                       "#...........", "............", NULL};
    int64_t w, h;
    uint8_t *c = fix_ascii(rows, &w, &h);
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 4);
    tb_landmasses_t lm;
    tb_err_t err;
    ck_assert_int_eq(tb_landmasses_find(c, w, h, &m.legend, 8, 0, &lm, &err), 0);
    ck_assert_int_eq(lm.found, 2);
    ck_assert_int_eq(lm.n, 2);
    const tb_landmass_t *a = &lm.kept[0], *b = &lm.kept[1];
    ck_assert_int_eq(a->cells, 8);
    ck_assert_int_eq(a->arc.x0, 10); /* columns 10, 11, 0, 1, 2 */
    ck_assert_int_eq(a->arc.w, 5);
    ck_assert(tb_arc_crosses_seam(a->arc, w));
    /* Its circular centroid lies at the seam, not in the middle of the planet. */
    ck_assert_msg(a->centroid_x > 11 || a->centroid_x < 1.5, "centroid x %g", a->centroid_x);
    ck_assert_int_eq(b->cells, 2);
    ck_assert_int_eq(b->arc.x0, 11);
    ck_assert_int_eq(b->arc.w, 2);
    tb_landmasses_free(&lm);
    free(c);
}
END_TEST

START_TEST(test_small_landmasses_are_dropped_to_the_edge_ocean)
{
    /* A 2-cell islet in shelf water and a 30-cell island; at 8 m cells 0.001 km2 is 15.6 cells. */
    static const char *const rows[] = {
        "....................", "..,,,,..............", "..,##,....######....",
        "..,,,,....######....", "..........######....", "..........######....",
        "..........######....", "....................", NULL};
    int64_t w, h;
    uint8_t *c = fix_ascii(rows, &w, &h);
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 4);
    tb_landmasses_t lm;
    ck_assert_int_eq(tb_landmasses_find(c, w, h, &m.legend, 8, 0.001, &lm, NULL), 0);
    ck_assert_int_eq(lm.found, 2);
    ck_assert_int_eq(lm.dropped, 1);
    ck_assert_int_eq(lm.dropped_cells, 2);
    ck_assert_double_eq_tol(lm.dropped_area_km2, 2 * 64e-6, 1e-12);
    ck_assert_int_eq(lm.n, 1);
    ck_assert_int_eq(lm.kept[0].cells, 30);
    /* The islet took the shelf round it, not the deep ocean beyond. */
    ck_assert_int_eq(c[2 * w + 3], FIX_SHELF);
    ck_assert_int_eq(c[2 * w + 4], FIX_SHELF);
    ck_assert_int_eq(c[3 * w + 12], FIX_LOW);
    ck_assert_int_eq(lm.comp_id[lm.kept[0].comp], 1);
    tb_landmasses_free(&lm);
    free(c);
}
END_TEST

START_TEST(test_ids_follow_the_centroid_row_then_column)
{
    static const char *const rows[] = {
        "..........##..", "..........##..", "..............", "..##......^^..",
        "..##......^^..", "..............", "##............", NULL};
    int64_t w, h;
    uint8_t *c = fix_ascii(rows, &w, &h);
    tb_manifest_t m;
    fix_manifest(&m, w, 8, 4);
    tb_landmasses_t lm;
    ck_assert_int_eq(tb_landmasses_find(c, w, h, &m.legend, 8, 0, &lm, NULL), 0);
    ck_assert_int_eq(lm.n, 4);
    ck_assert_int_lt((int)lm.kept[0].centroid_y, 2); /* top right */
    ck_assert_int_eq((int)lm.kept[1].centroid_x, 3); /* row 4, column 3 before column 11 */
    ck_assert_int_eq((int)lm.kept[2].centroid_x, 11);
    ck_assert_int_eq((int)lm.kept[3].centroid_y, 6);
    tb_landmasses_free(&lm);
    free(c);
}
END_TEST

START_TEST(test_arc_cover)
{
    const int64_t W = 100;
    tb_arc_t a1[] = {{10, 5}};
    tb_arc_t r = tb_arc_cover(a1, 1, W);
    ck_assert_int_eq(r.x0, 10);
    ck_assert_int_eq(r.w, 5);
    /* Two arcs: the short way round is across the seam. */
    tb_arc_t a2[] = {{5, 10}, {90, 5}};
    r = tb_arc_cover(a2, 2, W);
    ck_assert_int_eq(r.x0, 90);
    ck_assert_int_eq(r.w, 25);
    /* A wrapping arc and one inside it, one beyond. */
    tb_arc_t a3[] = {{95, 10}, {2, 1}, {40, 3}};
    r = tb_arc_cover(a3, 3, W);
    ck_assert_int_eq(r.x0, 95);
    ck_assert_int_eq(r.w, 48);
    /* Three arcs spread round the circle: the largest gap is left out. */
    tb_arc_t a4[] = {{0, 10}, {30, 10}, {70, 10}};
    r = tb_arc_cover(a4, 3, W);
    ck_assert_int_eq(r.x0, 70);
    ck_assert_int_eq(r.w, 70);
    /* No gap at all: the full ring; nothing: empty. */
    tb_arc_t a5[] = {{0, 50}, {50, 50}};
    r = tb_arc_cover(a5, 2, W);
    ck_assert_int_eq(r.w, W);
    tb_arc_t a6[] = {{60, 50}, {10, 50}};
    r = tb_arc_cover(a6, 2, W);
    ck_assert_int_eq(r.w, W);
    r = tb_arc_cover(NULL, 0, W);
    ck_assert_int_eq(r.w, 0);
    ck_assert(!tb_arc_crosses_seam((tb_arc_t){90, 10}, W));
    ck_assert(tb_arc_crosses_seam((tb_arc_t){90, 11}, W));
    ck_assert(tb_arc_crosses_seam((tb_arc_t){0, W}, W));
}
END_TEST

START_TEST(test_arc_cover_matches_brute_force)
{
    /* Random arcs on a 37-column circle against "largest run of uncovered columns". */
    const int64_t W = 37;
    for (int trial = 0; trial < 500; trial++) {
        int n = 1 + trial % 5;
        tb_arc_t arcs[5];
        bool cov[37] = {false};
        for (int k = 0; k < n; k++) {
            uint64_t hsh = tb_hash(trial, TB_SALT_TEST, k, 0, 1);
            arcs[k] = (tb_arc_t){(int64_t)(hsh % W), 1 + (int64_t)((hsh >> 20) % 12)};
            for (int64_t x = 0; x < arcs[k].w; x++)
                cov[(arcs[k].x0 + x) % W] = true;
        }
        int64_t best = 0;
        for (int64_t s = 0; s < W; s++) {
            int64_t len = 0;
            while (len < W && !cov[(s + len) % W])
                len++;
            best = len > best ? len : best;
        }
        tb_arc_t r = tb_arc_cover(arcs, n, W);
        ck_assert_int_eq(r.w, W - best);
        for (int64_t x = 0; x < W; x++) /* every covered column lies in the result */
            if (cov[x])
                ck_assert_int_lt(tb_wrap(x - r.x0, W), r.w);
    }
}
END_TEST

Suite *landmasses_suite(void)
{
    Suite *s = suite_create("landmasses");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_runs_match_flood_fill);
    tcase_add_test(tc, test_runs_match_flood_fill_on_blocks);
    tcase_add_test(tc, test_landmass_across_the_seam_is_one);
    tcase_add_test(tc, test_small_landmasses_are_dropped_to_the_edge_ocean);
    tcase_add_test(tc, test_ids_follow_the_centroid_row_then_column);
    tcase_add_test(tc, test_arc_cover);
    tcase_add_test(tc, test_arc_cover_matches_brute_force);
    suite_add_tcase(s, tc);
    return s;
}
