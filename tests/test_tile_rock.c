/* The tile job makes the rock erodibility multiplier under its window itself, from the rock's
 * inputs its spec carries (tb_tile_rock_t, jobs/detail/tile.h), instead of the coordinator cutting
 * it (0.5 s a default tile): the result is the same bytes as a spec carrying the window's
 * multipliers cut by tb_tile_rock_k, the spec is 9 bytes a cell instead of 13, and it survives its
 * codec. The negative controls: probes of another seed are refused by the job, and a spec whose
 * rock says another seed gives other bytes. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/detail/params.h"
#include "jobs/detail/planet_inputs.h"
#include "jobs/detail/synthetic.h"
#include "jobs/detail/tile.h"

static const tb_tile_class_t S_CLASSES[2] = {{0, 1.0}, {1, 1.0}};

typedef struct {
    tb_manifest_t m;
    tb_uplift_probes_t probes;
    tb_detail_synthetic_t syn;
    tb_detail_params_t p;
    float *rock; /* the whole planet's multiplier, by tb_tile_rock_k */
} s_fixture_t;

static void s_fixture(s_fixture_t *f)
{
    static const char *legend =
        "{\"classes\": ["
        "{\"name\": \"lowland\", \"colour\": \"#6f9a4a\", \"kind\": \"land\", \"uplift_mm_yr\": "
        "0.06},"
        "{\"name\": \"shelf\", \"colour\": \"#7fb2d9\", \"kind\": \"ocean\", \"depth_m\": 60}]}";
    tb_err_t err;
    tb_manifest_defaults(&f->m);
    f->m.circumference_km = 4; /* the synthetic planet: 500 cells of 8 m */
    f->m.tiles.size_km = 0.4;
    ck_assert_msg(tb_legend_parse(legend, "test legend", &f->m.legend, &err) == 0, "%s", err.msg);
    ck_assert_msg(tb_manifest_finish(&f->m, &err) == 0, "%s", err.msg);
    ck_assert_msg(tb_uplift_probes_compute(&f->m, &f->probes, &err) == 0, "%s", err.msg);
    ck_assert_msg(tb_detail_synthetic_make(&f->syn, 500, 250, 8, 11, 150, 600, 1000, &err) == 0,
                  "%s", err.msg);
    tb_detail_params_defaults(&f->p);
    f->p.size_km = 0.4;
    f->p.droplet_rounds = 2;
    f->p.droplet_lifetime = 12;
    f->p.droplet_brush_radius = 1;
    f->p.droplet_spawn_block = 4;
    f->p.thermal_iterations = 4;
    f->p.margin_cells = (int)tb_detail_margin_bound(&f->p);
    tb_frame_t all;
    ck_assert_int_eq(tb_frame_make(&all, 500, 250, 8, 0, 0, 500, 250, &err), 0);
    f->rock = malloc(500 * 250 * sizeof *f->rock);
    ck_assert_msg(tb_tile_rock_k(&f->m, &f->probes, &all, f->rock, &err) == 0, "%s", err.msg);
}

static void s_fixture_free(s_fixture_t *f)
{
    free(f->rock);
    tb_detail_synthetic_free(&f->syn);
}

/* The result bytes of tile `id` of `planet`, through the spec's codec as a worker sees it; *spec_n
 * gets the spec's size. */
static void *s_result(const s_fixture_t *f, const tb_tile_planet_t *planet, tb_tile_id_t id,
                      size_t *bytes, size_t *spec_n, size_t *cells)
{
    tb_err_t err;
    tb_tile_spec_owned_t cut, back;
    void *spec, *out;
    ck_assert_msg(tb_tile_spec_cut(planet, id, 5, &f->p, -512, 1536, S_CLASSES, 2, &cut, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(tb_tile_spec_encode(&cut.spec, &spec, spec_n, &err), 0);
    tb_tile_spec_free(&cut);
    ck_assert_msg(tb_tile_spec_decode(spec, *spec_n, &back, &err) == 0, "%s", err.msg);
    free(spec);
    *cells = (size_t)back.spec.geo.w * (size_t)back.spec.geo.h;
    tb_tile_result_t r;
    ck_assert_msg(tb_tile_compute(&back.spec, NULL, &r, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(tb_tile_result_encode(&r, &out, bytes, &err), 0);
    tb_tile_result_free(&r);
    tb_tile_spec_free(&back);
    return out;
}

START_TEST(test_the_job_makes_the_rock_the_coordinator_cut)
{
    s_fixture_t f;
    s_fixture(&f);
    tb_tile_rock_t rock;
    tb_tile_rock_of(&f.m, &f.probes, &rock);
    tb_tile_planet_t cut = f.syn.planet, carried = f.syn.planet;
    cut.rock_k = f.rock;
    carried.rock_k = NULL;
    carried.rock = &rock;
    tb_tile_id_t ids[] = {{0, 0}, {9, 2}, {4, 4}}; /* across the seam, inland, the south edge */
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        size_t na, nb, sa, sb, cells;
        void *a = s_result(&f, &cut, ids[k], &na, &sa, &cells);
        void *b = s_result(&f, &carried, ids[k], &nb, &sb, &cells);
        ck_assert_uint_eq(na, nb);
        ck_assert_msg(memcmp(a, b, na) == 0, "tile %d: the job's rock gives other bytes", (int)k);
        /* 13 bytes a cell against 9, the rock's inputs in the header (about 22 KB: the probes) */
        ck_assert_uint_ge(sa, 13 * cells);
        ck_assert_uint_lt(sb, 9 * cells + 32768);
        free(a);
        free(b);
    }
    /* the negative control: another seed's rock is another tile */
    tb_tile_rock_t other = rock;
    tb_uplift_probes_t probes = f.probes;
    other.seed++;
    tb_manifest_t m2 = f.m;
    m2.seed = other.seed;
    tb_err_t err;
    ck_assert_int_eq(tb_uplift_probes_compute(&m2, &probes, &err), 0);
    other.probes = probes;
    carried.rock = &other;
    size_t na, nb, sa, sb, cells;
    void *a = s_result(&f, &cut, ids[1], &na, &sa, &cells);
    void *b = s_result(&f, &carried, ids[1], &nb, &sb, &cells);
    ck_assert(na != nb || memcmp(a, b, na) != 0);
    free(a);
    free(b);
    s_fixture_free(&f);
}
END_TEST

START_TEST(test_rock_of_another_planet_is_refused)
{
    s_fixture_t f;
    s_fixture(&f);
    tb_tile_rock_t rock;
    tb_tile_rock_of(&f.m, &f.probes, &rock);
    rock.probes.seed++; /* probes taken for another seed */
    tb_tile_planet_t carried = f.syn.planet;
    carried.rock_k = NULL;
    carried.rock = &rock;
    tb_err_t err;
    tb_tile_spec_owned_t cut;
    ck_assert_int_eq(tb_tile_spec_cut(&carried, (tb_tile_id_t){1, 1}, 5, &f.p, -512, 1536,
                                      S_CLASSES, 2, &cut, &err),
                     0);
    tb_tile_result_t r;
    ck_assert_int_eq(tb_tile_compute(&cut.spec, NULL, &r, &err), -1);
    ck_assert_msg(strstr(err.msg, "probes") != NULL, "%s", err.msg);
    tb_tile_spec_free(&cut);
    s_fixture_free(&f);
}
END_TEST

Suite *tile_rock_suite(void)
{
    Suite *s = suite_create("tile_rock");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_the_job_makes_the_rock_the_coordinator_cut);
    tcase_add_test(tc, test_rock_of_another_planet_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
