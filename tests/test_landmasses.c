/* Landmasses on the cylinder: the row-at-a-time labelling against a flood fill (its partition, its
 * numbering, its records and their arcs, a replay giving the same labels), components across the
 * seam, the minimum-size drop, id order, and arcs: the shortest cover and the join of two. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"
#include "common/hash.h"
#include "jobs/plan/ccl.h"
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

/* A record of cells and columns per label (ccl.h): what the finder keeps, checked here. */
typedef struct {
    int64_t cells;
    tb_arc_t arc;
} s_rec_t;

static void s_add(void *ctx, void *rec, int64_t y, int32_t x0, int32_t x1)
{
    s_rec_t *r = rec;
    tb_arc_t run = {x0, (int64_t)x1 - x0 + 1};
    r->arc = r->cells ? tb_arc_join(r->arc, run, *(const int64_t *)ctx) : run;
    r->cells += run.w;
    (void)y;
}

static void s_merge(void *ctx, void *into, const void *from)
{
    s_rec_t *a = into;
    const s_rec_t *b = from;
    a->cells += b->cells;
    a->arc = tb_arc_join(a->arc, b->arc, *(const int64_t *)ctx);
}

/* Streams values through the labelling twice (the second a replay, as the plan's later passes
 * are) and checks both against the flood fill of mask: every cell's component, the numbering,
 * the cells and arc of every component. */
static void s_check_stream(const uint8_t *values, const uint8_t *mask, int64_t w, int64_t h,
                           bool wrap, const uint8_t select[256], const char *what)
{
    int32_t *ref = malloc(sizeof *ref * (size_t)(w * h));
    int n_ref = s_flood(mask, w, h, wrap, ref);
    tb_ccl_records_t rec = {sizeof(s_rec_t), s_add, s_merge, &w};
    tb_ccl_stream_t *s = tb_ccl_stream_new(w, wrap, select, &rec, NULL);
    int64_t *label = malloc(sizeof *label * (size_t)(w * h));
    for (int64_t k = 0; k < w * h; k++)
        label[k] = -1;
    for (int64_t y = 0; y < h; y++) {
        ck_assert_int_eq(tb_ccl_stream_row(s, values + y * w, NULL), 0);
        int64_t n;
        const tb_ccl_run_t *runs = tb_ccl_stream_runs(s, &n);
        for (int64_t r = 0; r < n; r++)
            for (int64_t x = runs[r].x0; x <= runs[r].x1; x++)
                label[y * w + x] = runs[r].label;
    }
    int32_t *comp;
    int64_t n_comps;
    ck_assert_int_eq(tb_ccl_stream_resolve(s, &comp, &n_comps, NULL), 0);
    ck_assert_msg(n_comps == n_ref, "%s: %lld components, flood fill %d", what, (long long)n_comps,
                  n_ref);
    int64_t bad = 0, *cells = calloc((size_t)n_ref + 1, sizeof *cells);
    bool *cov = calloc((size_t)(n_ref + 1) * (size_t)w, 1);
    for (int64_t k = 0; k < w * h; k++) {
        bad += (label[k] >= 0) != (mask[k] != 0);
        if (label[k] < 0)
            continue;
        bad += comp[label[k]] != ref[k];
        cells[ref[k]]++;
        cov[(size_t)ref[k] * (size_t)w + (size_t)(k % w)] = true;
    }
    ck_assert_msg(bad == 0, "%s: %lld cells disagree", what, (long long)bad);
    /* the record of each root: its cells, and its columns as one arc (the short way round when
     * X wraps; the full ring when nothing is left out) */
    for (int64_t l = 0; l < tb_ccl_stream_labels(s); l++) {
        if (tb_ccl_stream_find(s, l) != l)
            continue;
        const s_rec_t *r = tb_ccl_stream_record(s, l);
        int c = comp[l];
        ck_assert_int_eq(r->cells, cells[c]);
        int64_t covered = 0;
        for (int64_t x = 0; x < w; x++)
            if (cov[(size_t)c * (size_t)w + (size_t)x]) {
                covered++;
                ck_assert_int_lt(tb_wrap(x - r->arc.x0, w), r->arc.w);
            }
        ck_assert_int_eq(r->arc.w, covered);
    }
    /* a replay labels every run the same */
    tb_ccl_stream_t *again = tb_ccl_stream_new(w, wrap, select, NULL, NULL);
    for (int64_t y = 0; y < h; y++) {
        ck_assert_int_eq(tb_ccl_stream_row(again, values + y * w, NULL), 0);
        int64_t n;
        const tb_ccl_run_t *runs = tb_ccl_stream_runs(again, &n);
        for (int64_t r = 0; r < n; r++)
            ck_assert_int_eq(runs[r].label, label[y * w + runs[r].x0]);
    }
    tb_ccl_stream_destroy(&again);
    tb_ccl_stream_destroy(&s);
    free(comp);
    free(cells);
    free(cov);
    free(label);
    free(ref);
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
                char what[64];
                snprintf(what, sizeof what, "%lldx%lld density %d wrap %d", (long long)w,
                         (long long)h, density, wrap);
                s_check_stream(mask, mask, w, h, wrap, select, what);
                free(mask);
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
    for (int wrap = 0; wrap <= 1; wrap++)
        s_check_stream(v, mask, w, h, wrap, select, wrap ? "blocks, wrap" : "blocks");
    free(v);
    free(mask);
}
END_TEST

START_TEST(test_run_lookup)
{
    tb_ccl_run_t runs[] = {{2, 4, 0}, {7, 7, 1}, {10, 20, 2}};
    static const int64_t want[] = {-1, -1, 0, 0, 0, -1, -1, 1, -1, -1, 2, 2, 2};
    for (int64_t x = 0; x < 13; x++)
        ck_assert_int_eq(tb_ccl_run_at(runs, 3, x), want[x]);
    ck_assert_int_eq(tb_ccl_run_at(runs, 3, 21), -1);
    ck_assert_int_eq(tb_ccl_run_at(runs, 0, 3), -1);
}
END_TEST

/* The finder's three passes over a class raster (the drop written into it); the caller
 * destroys the finder. labels may be NULL. */
static tb_landmass_finder_t *s_find(uint8_t *c, int64_t w, int64_t h, const tb_legend_t *legend,
                                    double min_km2, int32_t *labels)
{
    tb_err_t err;
    tb_landmass_finder_t *f = tb_landmass_finder_new(w, h, legend, 8, min_km2, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    for (int64_t y = 0; y < h; y++)
        ck_assert_int_eq(tb_landmass_finder_scan(f, c + y * w, &err), 0);
    ck_assert_int_eq(tb_landmass_finder_resolve(f, &err), 0);
    for (int64_t y = 0; y < h; y++)
        ck_assert_int_eq(tb_landmass_finder_measure(f, c + y * w, NULL, &err), 0);
    ck_assert_int_eq(tb_landmass_finder_number(f, &err), 0);
    for (int64_t y = 0; y < h; y++)
        ck_assert_int_eq(
            tb_landmass_finder_label(f, c + y * w, labels ? labels + y * w : NULL, &err), 0);
    return f;
}

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
    tb_landmass_finder_t *f = s_find(c, w, h, &m.legend, 0, NULL);
    const tb_landmasses_t *lm = tb_landmass_finder_result(f);
    ck_assert_int_eq(lm->found, 2);
    ck_assert_int_eq(lm->n, 2);
    const tb_landmass_t *a = &lm->kept[0], *b = &lm->kept[1];
    ck_assert_int_eq(a->cells, 8);
    ck_assert_int_eq(a->arc.x0, 10); /* columns 10, 11, 0, 1, 2 */
    ck_assert_int_eq(a->arc.w, 5);
    ck_assert(tb_arc_crosses_seam(a->arc, w));
    /* Its circular centroid lies at the seam, not in the middle of the planet. */
    ck_assert_msg(a->centroid_x > 11 || a->centroid_x < 1.5, "centroid x %g", a->centroid_x);
    ck_assert_int_eq(b->cells, 2);
    ck_assert_int_eq(b->arc.x0, 11);
    ck_assert_int_eq(b->arc.w, 2);
    tb_landmass_finder_destroy(&f);
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
    int32_t *labels = calloc((size_t)(w * h), sizeof *labels); /* the finder writes land only */
    tb_landmass_finder_t *f = s_find(c, w, h, &m.legend, 0.001, labels);
    const tb_landmasses_t *lm = tb_landmass_finder_result(f);
    ck_assert_int_eq(lm->found, 2);
    ck_assert_int_eq(lm->dropped, 1);
    ck_assert_int_eq(lm->dropped_cells, 2);
    ck_assert_double_eq_tol(lm->dropped_area_km2, 2 * 64e-6, 1e-12);
    ck_assert_int_eq(lm->n, 1);
    ck_assert_int_eq(lm->kept[0].cells, 30);
    ck_assert_int_eq(lm->kept[0].class_cells[FIX_LOW], 30);
    /* The islet took the shelf round it, not the deep ocean beyond. */
    ck_assert_int_eq(c[2 * w + 3], FIX_SHELF);
    ck_assert_int_eq(c[2 * w + 4], FIX_SHELF);
    ck_assert_int_eq(c[3 * w + 12], FIX_LOW);
    /* the labels: the island's id on its cells, 0 on the islet's */
    ck_assert_int_eq(labels[3 * w + 12], 1);
    ck_assert_int_eq(labels[2 * w + 3], 0);
    ck_assert_int_eq(labels[0], 0);
    tb_landmass_finder_destroy(&f);
    free(labels);
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
    tb_landmass_finder_t *f = s_find(c, w, h, &m.legend, 0, NULL);
    const tb_landmasses_t *lm = tb_landmass_finder_result(f);
    ck_assert_int_eq(lm->n, 4);
    ck_assert_int_lt((int)lm->kept[0].centroid_y, 2); /* top right */
    ck_assert_int_eq((int)lm->kept[1].centroid_x, 3); /* row 4, column 3 before column 11 */
    ck_assert_int_eq((int)lm->kept[2].centroid_x, 11);
    ck_assert_int_eq((int)lm->kept[3].centroid_y, 6);
    /* the finder knows each kept landmass's id from its place in raster order */
    int n;
    const int64_t *firsts = tb_landmass_finder_firsts(f, &n);
    ck_assert_int_eq(n, 4);
    for (int k = 0; k < n; k++)
        ck_assert_int_eq(lm->kept[tb_landmass_finder_id(f, k) - 1].first_index, firsts[k]);
    tb_landmass_finder_destroy(&f);
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

START_TEST(test_arc_join_is_the_union)
{
    /* Touching arcs (sharing or neighbouring a column) on a 23-column circle: the join covers
     * exactly their columns; arcs apart: the join is their cover. */
    const int64_t W = 23;
    for (int trial = 0; trial < 2000; trial++) {
        uint64_t hsh = tb_hash(trial, TB_SALT_TEST, 0, 0, 2);
        tb_arc_t a = {(int64_t)(hsh % W), 1 + (int64_t)((hsh >> 8) % W)};
        tb_arc_t b = {(int64_t)((hsh >> 16) % W), 1 + (int64_t)((hsh >> 24) % W)};
        bool cov[23] = {false}, touch = false;
        for (int64_t x = 0; x < a.w; x++)
            cov[(a.x0 + x) % W] = true;
        for (int64_t x = -1; x <= b.w; x++)
            touch |= cov[tb_wrap(b.x0 + x, W)];
        for (int64_t x = 0; x < b.w; x++)
            cov[(b.x0 + x) % W] = true;
        tb_arc_t j = tb_arc_join(a, b, W);
        if (!touch) {
            tb_arc_t both[2] = {a, b};
            tb_arc_t c = tb_arc_cover(both, 2, W);
            ck_assert(j.x0 == c.x0 && j.w == c.w);
            continue;
        }
        int64_t n = 0;
        for (int64_t x = 0; x < W; x++)
            n += cov[x];
        ck_assert_msg(j.w == n, "trial %d: %lld+%lld and %lld+%lld joined to %lld+%lld", trial,
                      (long long)a.x0, (long long)a.w, (long long)b.x0, (long long)b.w,
                      (long long)j.x0, (long long)j.w);
        if (n == W)
            ck_assert_int_eq(j.x0, 0);
        for (int64_t x = 0; x < j.w; x++)
            ck_assert(cov[(j.x0 + x) % W]);
    }
}
END_TEST

Suite *landmasses_suite(void)
{
    Suite *s = suite_create("landmasses");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_runs_match_flood_fill);
    tcase_add_test(tc, test_runs_match_flood_fill_on_blocks);
    tcase_add_test(tc, test_run_lookup);
    tcase_add_test(tc, test_landmass_across_the_seam_is_one);
    tcase_add_test(tc, test_small_landmasses_are_dropped_to_the_edge_ocean);
    tcase_add_test(tc, test_ids_follow_the_centroid_row_then_column);
    tcase_add_test(tc, test_arc_cover);
    tcase_add_test(tc, test_arc_cover_matches_brute_force);
    tcase_add_test(tc, test_arc_join_is_the_union);
    suite_add_tcase(s, tc);
    return s;
}
