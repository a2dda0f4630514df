/* The job registry and checksum-grind: the result is a function of the spec alone (not of the
 * thread count), the trapdoor check agrees with the real squarings and catches a wrong answer,
 * progress and cancellation work. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "jobs/checksum_grind.h"
#include "jobs/job.h"
#include "jobs/region.h"
#include "jobs/stats/stats.h"

static tb_grind_spec_t s_spec(uint64_t seed, uint64_t work, uint64_t out_bytes)
{
    tb_grind_spec_t s = {.seed = seed, .lanes = 16, .work = work, .out_bytes = out_bytes};
    return s;
}

static int s_run(const tb_grind_spec_t *spec, int threads, tb_job_ctx_t *ctx_in,
                 tb_job_output_t *out, tb_err_t *err)
{
    unsigned char buf[TB_GRIND_SPEC_BYTES];
    tb_grind_spec_encode(spec, buf);
    tb_job_ctx_t ctx = {0};
    if (ctx_in)
        ctx = *ctx_in;
    ctx.pool = tb_pool_new(threads, err);
    ctx.threads = threads;
    int r = tb_job_run(TB_GRIND_KIND, buf, sizeof buf, &ctx, out, err);
    tb_pool_destroy(&ctx.pool);
    return r;
}

START_TEST(test_registry)
{
    ck_assert_ptr_nonnull(tb_job_find("checksum-grind"));
    ck_assert_ptr_null(tb_job_find("no-such-kind"));
    ck_assert_ptr_null(tb_job_find(NULL));
    ck_assert_uint_ge(tb_job_kind_count(), 1);
    tb_job_output_t out;
    tb_err_t err;
    tb_job_ctx_t ctx = {0};
    ck_assert_int_eq(tb_job_run("no-such-kind", "", 0, &ctx, &out, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INVALID);
    ck_assert_ptr_null(out.data);
    /* A spec over the kind's limit is refused before the job sees it. */
    char big[100] = {0};
    ck_assert_int_eq(tb_job_run("checksum-grind", big, sizeof big, &ctx, &out, &err), -1);
}
END_TEST

START_TEST(test_same_bytes_on_any_thread_count)
{
    tb_grind_spec_t spec = s_spec(11, 20000, 3 << 20);
    tb_job_output_t a, b;
    tb_err_t err;
    ck_assert_int_eq(s_run(&spec, 1, NULL, &a, &err), 0);
    ck_assert_int_eq(s_run(&spec, 3, NULL, &b, &err), 0);
    ck_assert_uint_eq(a.bytes, tb_grind_result_bytes(&spec));
    ck_assert_uint_eq(a.bytes, b.bytes);
    ck_assert(memcmp(a.data, b.data, a.bytes) == 0);
    ck_assert_int_eq(tb_grind_verify(&spec, a.data, a.bytes, &err), 0);
    /* Another seed gives other bytes. */
    tb_grind_spec_t other = s_spec(12, 20000, 3 << 20);
    tb_job_output_t c;
    ck_assert_int_eq(s_run(&other, 2, NULL, &c, &err), 0);
    ck_assert(memcmp(a.data, c.data, 64) != 0);
    tb_job_output_free(&a);
    tb_job_output_free(&b);
    tb_job_output_free(&c);
}
END_TEST

/* A result is accepted only for the spec it answers, and never above its spec's bound
 * (docs/distribution.md, "Verifying results"). */
START_TEST(test_results_are_checked_against_their_spec)
{
    const tb_job_kind_t *grind = tb_job_find(TB_GRIND_KIND);
    tb_grind_spec_t spec = s_spec(21, 2000, 1000), other = s_spec(22, 2000, 1000);
    unsigned char buf[TB_GRIND_SPEC_BYTES], obuf[TB_GRIND_SPEC_BYTES];
    tb_grind_spec_encode(&spec, buf);
    tb_grind_spec_encode(&other, obuf);
    tb_job_output_t a;
    tb_err_t err;
    ck_assert_int_eq(s_run(&spec, 1, NULL, &a, &err), 0);
    ck_assert_uint_eq(tb_job_result_bound(grind, buf, sizeof buf), a.bytes);
    ck_assert_int_eq(tb_job_check_result(grind, buf, sizeof buf, a.data, a.bytes, &err), 0);
    /* another job's result, and one byte too many */
    ck_assert_int_eq(tb_job_check_result(grind, obuf, sizeof obuf, a.data, a.bytes, &err), -1);
    unsigned char *longer = calloc(1, a.bytes + 1);
    memcpy(longer, a.data, a.bytes);
    ck_assert_int_eq(tb_job_check_result(grind, buf, sizeof buf, longer, a.bytes + 1, &err), -1);
    ck_assert(strstr(err.msg, "more than the") != NULL);
    free(longer);
    tb_job_output_free(&a);

    /* A region result echoes the XXH3 of its spec, and holds its spec's box and steps and what
     * every honest answer holds. Spec bytes laid out as a region spec: magic, version, header
     * length, a header with the box and steps, then 2 bytes a cell (4 cells: classes, then the
     * solve mask, one cell of land). */
    const tb_job_kind_t *region = tb_job_find("region");
    const char hdr[] = "{\"steps\":5,\"box\":[0,0,2,2,10,10,8]}";
    unsigned char rspec[12 + sizeof hdr - 1 + 8] = {'T', 'B', 'R', 'S', 1, 0, 0, 0, sizeof hdr - 1,
                                                    0,   0,   0};
    memcpy(rspec + 12, hdr, sizeof hdr - 1);
    rspec[sizeof rspec - 1] = 1; /* the last cell is the region's land */
    ck_assert_uint_ge(tb_job_result_bound(region, rspec, sizeof rspec), 4 * 16);
    ck_assert_uint_lt(tb_job_result_bound(region, rspec, sizeof rspec), 17u << 20);
    tb_region_result_t r = {0};
    ck_assert_int_eq(tb_frame_make(&r.box, 10, 10, 8, 0, 0, 2, 2, &err), 0);
    r.steps = 5;
    float zeros[4] = {0}, heights[4] = {0, 0, 0, 12.5f};
    int32_t basin[4] = {-1, -1, -1, 3};
    r.height_m = heights;
    r.area_m2 = r.uplift_m_yr = zeros;
    r.basin = basin;
    tb_stats_params_t sp;
    tb_stats_params_default(&sp, 8);
    tb_stats_t *st = tb_stats_new(&sp, &err);
    ck_assert_ptr_nonnull(st);
    r.stats = tb_stats_encode(st, &r.stats_bytes, &err);
    tb_stats_destroy(&st);
    ck_assert_ptr_nonnull(r.stats);
    void *bytes;
    size_t n;
    r.spec_xxh3 = XXH3_64bits(rspec, sizeof rspec);
    ck_assert_int_eq(tb_region_result_encode(&r, &bytes, &n, &err), 0);
    ck_assert_msg(tb_job_check_result(region, rspec, sizeof rspec, bytes, n, &err) == 0, "%s",
                  err.msg);
    free(bytes);
    /* Negative controls, each echoing the spec: another box, other steps, a height that is not a
     * number, a cell off the region's land that is not at sea level, statistics that do not
     * decode. */
    struct {
        int what;
        const char *says;
    } bad[] = {{0, "not the spec's"},
               {1, "steps, the spec asks 5"},
               {2, "has height nan"},
               {3, "off the region's land"},
               {4, "region result: statistics"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tb_region_result_t b = r;
        float hb[4];
        memcpy(hb, heights, sizeof hb);
        b.height_m = hb;
        if (bad[k].what == 0)
            ck_assert_int_eq(tb_frame_make(&b.box, 10, 10, 8, 1, 0, 2, 2, &err), 0);
        if (bad[k].what == 1)
            b.steps = 6;
        if (bad[k].what == 2)
            hb[3] = NAN;
        if (bad[k].what == 3)
            hb[0] = 1;
        if (bad[k].what == 4) {
            b.stats = (void *)"s";
            b.stats_bytes = 1;
        }
        ck_assert_int_eq(tb_region_result_encode(&b, &bytes, &n, &err), 0);
        ck_assert_int_eq(tb_job_check_result(region, rspec, sizeof rspec, bytes, n, &err), -1);
        ck_assert_msg(strstr(err.msg, bad[k].says) != NULL, "%s", err.msg);
        free(bytes);
    }
    r.spec_xxh3 ^= 1; /* a result made for another spec */
    ck_assert_int_eq(tb_region_result_encode(&r, &bytes, &n, &err), 0);
    ck_assert_int_eq(tb_job_check_result(region, rspec, sizeof rspec, bytes, n, &err), -1);
    ck_assert(strstr(err.msg, "(5 steps), not this job's") != NULL);
    free(r.stats);
    free(bytes);
}
END_TEST

START_TEST(test_trapdoor_matches_the_squarings_and_catches_errors)
{
    /* The fast check against the slow work for several lengths, including 0 and 1 squarings. */
    uint64_t works[] = {0, 1, 2, 61, 1000, 65537};
    for (size_t k = 0; k < sizeof works / sizeof works[0]; k++) {
        tb_grind_spec_t spec = s_spec(5 + k, works[k], 100);
        tb_job_output_t out;
        tb_err_t err;
        ck_assert_int_eq(s_run(&spec, 2, NULL, &out, &err), 0);
        ck_assert_msg(tb_grind_verify(&spec, out.data, out.bytes, &err) == 0, "%s", err.msg);
        /* Negative controls: one flipped bit in a lane, in the stream, or a claim of other work. */
        unsigned char *r = out.data;
        r[32 + 8 * 3] ^= 1;
        ck_assert_int_eq(tb_grind_verify(&spec, out.data, out.bytes, &err), -1);
        ck_assert_int_eq(err.code, TB_E_CHECKSUM);
        r[32 + 8 * 3] ^= 1;
        r[out.bytes - 1] ^= 0x80;
        ck_assert_int_eq(tb_grind_verify(&spec, out.data, out.bytes, &err), -1);
        r[out.bytes - 1] ^= 0x80;
        tb_grind_spec_t more = spec;
        more.work++;
        ck_assert_int_eq(tb_grind_verify(&more, out.data, out.bytes, &err), -1);
        ck_assert_int_eq(tb_grind_verify(&spec, out.data, out.bytes - 1, &err), -1);
        tb_job_output_free(&out);
    }
}
END_TEST

START_TEST(test_spec_decoding_refuses_bad_specs)
{
    unsigned char buf[TB_GRIND_SPEC_BYTES];
    tb_grind_spec_t spec = s_spec(1, 10, 10), back;
    tb_err_t err;
    tb_grind_spec_encode(&spec, buf);
    ck_assert_int_eq(tb_grind_spec_decode(buf, sizeof buf, &back, &err), 0);
    ck_assert_uint_eq(back.seed, 1);
    ck_assert_int_eq(tb_grind_spec_decode(buf, sizeof buf - 1, &back, &err), -1);
    spec.lanes = 0;
    tb_grind_spec_encode(&spec, buf);
    ck_assert_int_eq(tb_grind_spec_decode(buf, sizeof buf, &back, &err), -1);
    spec.lanes = 4;
    spec.out_bytes = TB_GRIND_MAX_OUT_BYTES + 1;
    tb_grind_spec_encode(&spec, buf);
    ck_assert_int_eq(tb_grind_spec_decode(buf, sizeof buf, &back, &err), -1);
    spec.out_bytes = 0;
    spec.flags = 0x80;
    tb_grind_spec_encode(&spec, buf);
    ck_assert_int_eq(tb_grind_spec_decode(buf, sizeof buf, &back, &err), -1);
    /* The fail flag makes a job fail with its own error. */
    spec.flags = TB_GRIND_FLAG_FAIL;
    tb_job_output_t out;
    ck_assert_int_eq(s_run(&spec, 1, NULL, &out, &err), -1);
    ck_assert_int_eq(err.code, TB_E_JOB);
    ck_assert_ptr_null(out.data);
}
END_TEST

typedef struct {
    int calls;
    double last;
    int cancel_after;
} s_progress_t;

static bool s_on_progress(void *user, double fraction, const char *note)
{
    s_progress_t *p = user;
    __atomic_add_fetch(&p->calls, 1, __ATOMIC_SEQ_CST);
    p->last = fraction;
    (void)note;
    return p->cancel_after && p->calls >= p->cancel_after;
}

/* The preamble reader the job codecs share (common/bytes.h): the header back on good bytes, one
 * clear error and a failed reader on bad ones, never a read past the end. */
START_TEST(test_preamble_reader_is_bounded)
{
    tb_bytes_t w;
    tb_bytes_init(&w);
    tb_bytes_put_u32(&w, 0x31424254u);
    tb_bytes_put_u32(&w, 2);
    tb_bytes_put_u32(&w, 5);
    tb_bytes_put(&w, "{\"a\"}x", 6); /* a 5-byte header, then one byte of body */
    size_t n;
    uint8_t *b = tb_bytes_take(&w, &n);
    tb_reader_t r;
    tb_err_t err;
    tb_reader_init(&r, b, n);
    char *text = tb_reader_preamble(&r, 0x31424254u, 2, 16, "test thing", &err);
    ck_assert_str_eq(text, "{\"a\"}");
    ck_assert_uint_eq(tb_reader_left(&r), 1);
    free(text);
    tb_reader_init(&r, b, n);
    ck_assert_ptr_null(tb_reader_preamble(&r, 0x32424254u, 2, 16, "test thing", &err));
    ck_assert_str_eq(err.msg, "test thing: not a test thing (bad magic)");
    ck_assert(r.failed);
    tb_reader_init(&r, b, n);
    ck_assert_ptr_null(tb_reader_preamble(&r, 0x31424254u, 3, 16, "test thing", &err));
    ck_assert_str_eq(err.msg, "test thing: version 2, this build reads 3");
    tb_reader_init(&r, b, n);
    ck_assert_ptr_null(tb_reader_preamble(&r, 0x31424254u, 2, 4, "test thing", &err));
    ck_assert_str_eq(err.msg, "test thing: header of 5 bytes, 6 left");
    /* every truncation before the end of the header fails, and reading on gives zeros */
    for (size_t cut = 0; cut < 17; cut++) {
        tb_reader_init(&r, b, cut);
        ck_assert_ptr_null(tb_reader_preamble(&r, 0x31424254u, 2, 16, "test thing", &err));
        ck_assert(r.failed);
        ck_assert_uint_eq(tb_reader_u32(&r), 0);
    }
    free(b);
    /* the echoed hashes: 16 hex digits exactly */
    char hex[17];
    uint64_t h;
    tb_hash_hex(0x0123456789abcdefull, hex);
    ck_assert_str_eq(hex, "0123456789abcdef");
    ck_assert_int_eq(tb_hash_from_hex(hex, &h), 0);
    ck_assert(h == 0x0123456789abcdefull);
    ck_assert_int_eq(tb_hash_from_hex("0123456789ABCDEF", &h), 0);
    const char *bad[] = {"",
                         "0123456789abcde",
                         "0123456789abcdef0",
                         "+123456789abcdef",
                         "0123456789abcdeg",
                         " 123456789abcdef"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        ck_assert_int_eq(tb_hash_from_hex(bad[k], &h), -1);
}
END_TEST

START_TEST(test_progress_and_cancel)
{
    tb_grind_spec_t spec = s_spec(3, 1 << 18, 0);
    s_progress_t p = {0};
    tb_job_ctx_t ctx = {.progress = s_on_progress, .user = &p};
    tb_job_output_t out;
    tb_err_t err;
    ck_assert_int_eq(s_run(&spec, 2, &ctx, &out, &err), 0);
    ck_assert_int_ge(p.calls, 16 * 4);
    ck_assert_double_eq(p.last, 1.0);
    tb_job_output_free(&out);
    s_progress_t c = {.cancel_after = 3};
    ctx.user = &c;
    ck_assert_int_eq(s_run(&spec, 2, &ctx, &out, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INTERRUPTED);
    ck_assert_int_lt(c.calls, 16 * 4);
}
END_TEST

Suite *job_suite(void)
{
    Suite *s = suite_create("job");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_same_bytes_on_any_thread_count);
    tcase_add_test(tc, test_trapdoor_matches_the_squarings_and_catches_errors);
    tcase_add_test(tc, test_results_are_checked_against_their_spec);
    tcase_add_test(tc, test_spec_decoding_refuses_bad_specs);
    tcase_add_test(tc, test_progress_and_cancel);
    tcase_add_test(tc, test_preamble_reader_is_bounded);
    suite_add_tcase(s, tc);
    return s;
}
