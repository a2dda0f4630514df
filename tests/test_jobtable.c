/* The dispatch engine's job table (coordinator/farm/jobtable.h) on its own: the dispatch order, job
 * order and completion order of delivery with the bound's exception, the failure rules, lazy specs
 * and their hash check, and the memory and record size a job costs. */
#include <check.h>
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/farm/jobtable.h"
#include "jobs/checksum_grind.h"

static tb_jobtable_t *s_table(bool unordered, int n, const double *weights)
{
    tb_jobtable_opts_t o = {.max_failures = 3, .max_lost = 8, .unordered = unordered};
    tb_err_t err;
    tb_jobtable_t *t = tb_jobtable_new(&o, &err);
    ck_assert_ptr_nonnull(t);
    for (int i = 0; i < n; i++) {
        tb_grind_spec_t g = {.seed = (uint64_t)i, .lanes = 1, .work = 10, .out_bytes = 16};
        unsigned char buf[TB_GRIND_SPEC_BYTES];
        tb_grind_spec_encode(&g, buf);
        ck_assert_int_eq(tb_jobtable_add(t, TB_GRIND_KIND, buf, sizeof buf, NULL, NULL, NULL,
                                         weights[i], 0, 0, NULL, 0, &err),
                         i);
    }
    ck_assert_int_eq(tb_jobtable_seal(t, &err), 0);
    return t;
}

static void s_done(tb_jobtable_t *t, size_t i)
{
    tb_err_t err;
    void *data = malloc(4);
    memcpy(data, "abcd", 4);
    tb_result_t *r = tb_result_from_memory(&data, 4, &err);
    tb_jobtable_done(t, i, &r, 7, 0, 1.0, false);
    ck_assert_ptr_null(r);
}

START_TEST(test_order_is_largest_first_ties_in_job_order)
{
    double w[] = {1, 5, 3, 5, 2};
    tb_jobtable_t *t = s_table(false, 5, w);
    size_t want[] = {1, 3, 2, 4, 0};
    for (size_t k = 0; k < 5; k++)
        ck_assert_uint_eq(tb_jobtable_order(t, k), want[k]);
    tb_jobtable_destroy(&t);
    ck_assert_ptr_null(t);
}
END_TEST

START_TEST(test_job_order_delivery_holds_until_the_prefix_is_done)
{
    double w[] = {1, 1, 1, 1};
    tb_jobtable_t *t = s_table(false, 4, w);
    tb_result_t *r;
    s_done(t, 2);
    s_done(t, 1);
    ck_assert_int_eq(tb_jobtable_next_delivery(t, false, &r), -1); /* job 0 is not done */
    ck_assert_uint_eq(tb_jobtable_held(t), 2);
    ck_assert_uint_eq(tb_jobtable_held_bytes(t), 8);
    /* at the bound only the job the caller waits for may start */
    ck_assert(tb_jobtable_may_start(t, 0, true));
    ck_assert(!tb_jobtable_may_start(t, 3, true));
    ck_assert(tb_jobtable_may_start(t, 3, false));
    ck_assert_int_eq(tb_jobtable_next_wanted(t), 0);
    s_done(t, 0);
    for (int want = 0; want < 3; want++) {
        ck_assert_int_eq(tb_jobtable_next_delivery(t, false, &r), want);
        ck_assert_ptr_nonnull(r);
        ck_assert_uint_eq(tb_result_bytes(r), 4);
        tb_result_destroy(&r);
    }
    ck_assert_int_eq(tb_jobtable_next_delivery(t, false, &r), -1);
    ck_assert_uint_eq(tb_jobtable_held(t), 0);
    ck_assert_int_eq(tb_jobtable_next_wanted(t), 3);
    tb_jobtable_destroy(&t);
}
END_TEST

START_TEST(test_unordered_delivery_is_completion_order)
{
    double w[] = {1, 1, 1, 1};
    tb_jobtable_t *t = s_table(true, 4, w);
    tb_result_t *r;
    size_t finish[] = {2, 0, 3, 1};
    for (size_t k = 0; k < 4; k++) {
        s_done(t, finish[k]);
        ck_assert_int_eq(tb_jobtable_next_delivery(t, false, &r), (int64_t)finish[k]);
        tb_result_destroy(&r);
    }
    /* unordered: at the bound nothing starts, there is nobody to wait for */
    ck_assert(!tb_jobtable_may_start(t, 0, true));
    ck_assert_int_eq(tb_jobtable_next_wanted(t), -1);
    /* keep: the result stays in the table for tb_dispatch_result */
    tb_jobtable_destroy(&t);
    t = s_table(true, 1, w);
    s_done(t, 0);
    ck_assert_int_eq(tb_jobtable_next_delivery(t, true, &r), 0);
    ck_assert_ptr_null(r);
    ck_assert_ptr_nonnull(tb_jobtable_at(t, 0)->result);
    tb_jobtable_destroy(&t);
}
END_TEST

START_TEST(test_failure_rule_needs_every_live_worker)
{
    double w[] = {1};
    tb_jobtable_t *t = s_table(false, 1, w);
    tb_err_t e;
    tb_err_set(&e, TB_E_JOB, "the job's own error");
    uint32_t live[] = {1, 2, 9};
    for (uint32_t c = 1; c <= 3; c++) {
        tb_jobtable_at(t, 0)->state = TB_JOB_LEASED;
        tb_jobtable_count_failure(t, 0, c, false, &e, "failed: x");
        ck_assert_int_eq(tb_jobtable_at(t, 0)->state, TB_JOB_READY);
    }
    /* 3 failures, but connection 9 is live and has not tried it */
    ck_assert(!tb_jobtable_check_failed(t, 0, live, 3));
    ck_assert(tb_jobtable_failed_on(t, 0, 2));
    ck_assert(!tb_jobtable_failed_on(t, 0, 9));
    ck_assert_int_eq(tb_jobtable_failed_job(t), -1);
    /* now every live one has */
    ck_assert(tb_jobtable_check_failed(t, 0, live, 2));
    ck_assert_int_eq(tb_jobtable_failed_job(t), 0);
    tb_err_t err;
    tb_jobtable_failure(t, &err);
    ck_assert_int_eq(err.code, TB_E_JOB);
    ck_assert_str_eq(err.msg, "job 0 failed 3 times (on 3 different workers): the job's own error");
    tb_jobtable_destroy(&t);
    /* lost workers count against max_lost, with their own message */
    t = s_table(false, 1, w);
    for (uint32_t c = 0; c < 8; c++) {
        uint32_t a = tb_jobtable_attempt_begin(t, 0, 0);
        tb_jobtable_attempt_end(t, 0, a, TB_OUT_LOST, "lost: silent for 3.1 s", 1);
        tb_jobtable_count_failure(t, 0, c, true, NULL, "lost: silent for 3.1 s");
    }
    ck_assert(tb_jobtable_check_failed(t, 0, NULL, 0));
    tb_jobtable_failure(t, &err);
    ck_assert_str_eq(err.msg, "job 0: lost its worker 8 times (last: lost: silent for 3.1 s)");
    tb_jobtable_destroy(&t);
}
END_TEST

static int s_calls;

static int s_make(void *user, size_t index, void **spec, size_t *bytes, tb_err_t *err)
{
    (void)user;
    (void)err;
    s_calls++;
    tb_grind_spec_t g = {.seed = index, .lanes = 1, .work = 10, .out_bytes = 16};
    *spec = malloc(TB_GRIND_SPEC_BYTES);
    tb_grind_spec_encode(&g, *spec);
    *bytes = TB_GRIND_SPEC_BYTES;
    return 0;
}

START_TEST(test_lazy_spec_is_made_keyed_and_checked)
{
    tb_jobtable_opts_t o = {0};
    tb_err_t err;
    tb_jobtable_t *t = tb_jobtable_new(&o, &err);
    uint64_t inputs[] = {42};
    ck_assert_int_eq(
        tb_jobtable_add(t, TB_GRIND_KIND, NULL, 0, s_make, NULL, "lazy", 1, 0, 0, inputs, 1, &err),
        0);
    ck_assert_int_eq(
        tb_jobtable_add(t, TB_GRIND_KIND, NULL, 0, NULL, NULL, "none", 1, 0, 0, NULL, 0, &err),
        -1); /* neither bytes nor maker */
    tb_jobrec_t *job = tb_jobtable_at(t, 0);
    ck_assert(job->lazy && !job->has_key && job->n_inputs == 1);
    ck_assert_uint_eq(tb_jobtable_specs_held(t), 0);
    void *spec;
    size_t n;
    s_make(NULL, 0, &spec, &n, &err);
    tb_cache_key_t key;
    tb_cache_key_make(&key, "b", TB_GRIND_KIND, spec, n, inputs, 1);
    uint64_t h = 0x1234;
    ck_assert_int_eq(tb_jobtable_install_spec(t, 0, &spec, n, h, &key, 99, &err), 0);
    ck_assert_ptr_null(spec);
    ck_assert(job->has_key && job->max_result_bytes == 99 && job->inputs == NULL);
    ck_assert_uint_eq(tb_jobtable_specs_held(t), 1);
    tb_jobtable_drop_spec(t, 0);
    ck_assert_uint_eq(tb_jobtable_specs_held(t), 0);
    ck_assert(job->has_key); /* the key stays */
    /* a remake with other bytes is refused */
    s_make(NULL, 1, &spec, &n, &err);
    ck_assert_int_eq(tb_jobtable_install_spec(t, 0, &spec, n, h + 1, &key, 99, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INTERNAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "make_spec must give the same bytes"));
    tb_jobtable_destroy(&t);
}
END_TEST

/* Peaks against stated bounds (docs/distribution.md, "Peak memory"): a bound packed up never falls
 * below what was stated; a peak at the bound is within it, one code above is over; a job with no
 * bound is measured but not bounded; the closest attempt is the largest ratio, not the largest
 * peak. */
START_TEST(test_peaks_are_held_to_their_jobs_bounds)
{
    for (uint64_t b = 1; b < ((uint64_t)1 << 51); b = b * 3 / 2 + 777) {
        uint64_t up = tb_peak_unpack(tb_peak_pack_up(b));
        ck_assert_uint_ge(up, b);
        ck_assert_msg((double)(up - b) <= 5e-4 * (double)b + 1024, "%llu -> %llu",
                      (unsigned long long)b, (unsigned long long)up);
    }
    double w[] = {3, 2, 1};
    tb_jobtable_t *t = s_table(false, 3, w);
    tb_jobtable_peaks_t pk;
    tb_jobtable_peaks(t, &pk);
    ck_assert_uint_eq(pk.measured, 0);
    ck_assert_ptr_null(pk.peak_job);
    tb_jobtable_at(t, 0)->memory_bound = tb_peak_pack_up(600u << 20); /* 600 MiB */
    tb_jobtable_at(t, 1)->memory_bound = tb_peak_pack_up(100u << 20); /* 100 MiB */
    uint32_t a0 = tb_jobtable_attempt_begin(t, 0, 0), a1 = tb_jobtable_attempt_begin(t, 1, 1),
             a2 = tb_jobtable_attempt_begin(t, 2, 0);
    tb_jobtable_attempt(t, 0, a0)->peak = tb_jobtable_at(t, 0)->memory_bound; /* at: within */
    tb_jobtable_attempt(t, 1, a1)->peak = tb_peak_pack(90u << 20);            /* 0.9 of it */
    tb_jobtable_attempt(t, 2, a2)->peak = tb_peak_pack(900u << 20);           /* no bound */
    tb_jobtable_peaks(t, &pk);
    ck_assert_uint_eq(pk.measured, 3);
    ck_assert_uint_eq(pk.bounded, 2);
    ck_assert_uint_eq(pk.over, 0);
    ck_assert_ptr_eq(pk.peak_job, tb_jobtable_at(t, 2));
    ck_assert_ptr_eq(pk.worst_job, tb_jobtable_at(t, 0));
    ck_assert_double_eq_tol(pk.worst_ratio, 1.0, 1e-12);
    /* the control: one code above the bound is over, and becomes the closest */
    tb_jobtable_attempt(t, 1, a1)->peak = (uint16_t)(tb_jobtable_at(t, 1)->memory_bound + 1);
    tb_jobtable_peaks(t, &pk);
    ck_assert_uint_eq(pk.over, 1);
    ck_assert_ptr_eq(pk.worst_job, tb_jobtable_at(t, 1));
    ck_assert_double_gt(pk.worst_ratio, 1.0);
    cJSON *j = tb_jobtable_job_json(t, 1, NULL, NULL, 0);
    const cJSON *mb = cJSON_GetObjectItemCaseSensitive(j, "memory_bound_bytes");
    ck_assert(cJSON_IsNumber(mb) && mb->valuedouble >= (double)(100u << 20));
    cJSON_Delete(j);
    j = tb_jobtable_job_json(t, 2, NULL, NULL, 0);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "memory_bound_bytes")));
    cJSON_Delete(j);
    tb_jobtable_destroy(&t);
}
END_TEST

/* A planet-scale batch of thousands of jobs: the table's own bytes a job, and a job's record for
 * meta.json stays a few hundred bytes however many attempts it had. */
START_TEST(test_a_job_costs_little)
{
    ck_assert_uint_le(sizeof(tb_jobrec_t), 256);
    ck_assert_uint_le(sizeof(tb_attempt_rec_t), 40);
    /* the attempt's peak memory in 16 bits: exact below 2 MiB, rounded down within 0.05 % above,
     * rising with the value (so the largest stays the largest) */
    ck_assert_uint_eq(tb_peak_unpack(tb_peak_pack(0)), 0);
    ck_assert_uint_eq(tb_peak_unpack(tb_peak_pack(1536 << 10)), 1536 << 10);
    uint64_t last = 0;
    for (uint64_t b = 1 << 20; b < ((uint64_t)1 << 51); b = b * 3 / 2 + 12345) {
        uint64_t back = tb_peak_unpack(tb_peak_pack(b));
        ck_assert_uint_le(back, b);
        ck_assert_msg((double)(b - back) <= 5e-4 * (double)b + 1024, "%llu -> %llu",
                      (unsigned long long)b, (unsigned long long)back);
        ck_assert_uint_ge(back, last);
        last = back;
    }
    double w[] = {1};
    tb_jobtable_t *t = s_table(false, 1, w);
    char longtext[600];
    memset(longtext, 'x', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    memcpy(longtext, "failed: ", 8);
    for (int k = 0; k < 40; k++) {
        uint32_t a = tb_jobtable_attempt_begin(t, 0, k % 3);
        tb_jobtable_attempt_end(t, 0, a, TB_OUT_FAILED, longtext, 0.5);
    }
    cJSON *j = tb_jobtable_job_json(t, 0, NULL, NULL, 0);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "attempts")),
                     TB_JOBTABLE_RECORD_ATTEMPTS);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "attempts_omitted")->valueint,
                     40 - TB_JOBTABLE_RECORD_ATTEMPTS);
    char *text = cJSON_PrintUnformatted(j);
    /* 8 attempts with outcomes cut at 160 characters, plus the job's own fields */
    ck_assert_msg(strlen(text) < 2300, "a job's record is %zu bytes", strlen(text));
    free(text);
    cJSON_Delete(j);
    /* the common case: one ok attempt */
    tb_jobtable_destroy(&t);
    t = s_table(false, 1, w);
    uint32_t a = tb_jobtable_attempt_begin(t, 0, -1);
    tb_jobtable_attempt_end(t, 0, a, TB_OUT_OK, NULL, 0.5);
    s_done(t, 0);
    j = tb_jobtable_job_json(t, 0, NULL, NULL, 0);
    text = cJSON_PrintUnformatted(j);
    ck_assert_msg(strlen(text) < 450, "a job's record is %zu bytes: %s", strlen(text), text);
    free(text);
    cJSON_Delete(j);
    tb_jobtable_destroy(&t);
}
END_TEST

/* The rule of tests/test_jobtable.c's probation case, for its negative control: what a worker on
 * probation took before tb_jobtable_probation_job (the smallest READY job, whatever was still
 * being prepared). */
static int64_t s_smallest_ready(const tb_jobtable_t *t)
{
    for (size_t k = tb_jobtable_count(t); k-- > 0;)
        if (tb_jobtable_at(t, tb_jobtable_order(t, k))->state == TB_JOB_READY)
            return (int64_t)tb_jobtable_order(t, k);
    return -1;
}

/* may_run for the probation case: every job but `refused` (-1: none) */
static int64_t s_refused;
static bool s_may_run(void *user, size_t index)
{
    (void)user;
    return (int64_t)index != s_refused;
}

/* The 25 km demo's regions (box cells as weights: region 1, 2, 3, 4; the order is 2, 3, 1, 4): a
 * worker on probation runs the smallest job, joins it while it runs with room for another run,
 * waits while it is being prepared, and never takes region 2 (84 % of the phase) for it. */
START_TEST(test_probation_takes_the_smallest_job_together)
{
    double w[] = {57900, 1245000, 160650, 24964};
    tb_jobtable_t *t = s_table(false, 4, w);
    s_refused = -1;
    /* nothing prepared: nothing to take; the smallest job is the one to prepare first */
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), -1);
    ck_assert_int_eq(tb_jobtable_probation_prep(t), 3);
    /* the dispatch order prepared region 2 first; region 4 is still being prepared: wait */
    tb_jobtable_at(t, 1)->state = TB_JOB_READY;
    tb_jobtable_at(t, 3)->state = TB_JOB_PREPPING;
    ck_assert_int_eq(tb_jobtable_probation_prep(t), -1);
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), -1);
    /* negative control: the former rule, the smallest READY job, runs region 2 on probation
     * (twice): the case above tells the two apart */
    ck_assert_int_eq(s_smallest_ready(t), 1);
    /* region 4 ready: the first new worker takes it */
    tb_jobtable_at(t, 3)->state = TB_JOB_READY;
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), 3);
    /* under way on one and on two new workers: the next new worker joins it */
    tb_jobrec_t *r4 = tb_jobtable_at(t, 3);
    r4->state = TB_JOB_LEASED;
    r4->runs = 1;
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), 3);
    r4->runs = 2;
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), 3);
    /* one result in hand and two runs: TB_MAX_VOTES opinions coming, no room; the next smallest
     * job is to be prepared (the loop prepares it before it dispatches), and nothing is taken
     * while it is (region 2 is ready, and passed) */
    r4->runs = 2;
    r4->votes = calloc(1, sizeof *r4->votes);
    ck_assert_ptr_nonnull(r4->votes);
    r4->votes->n = 1;
    ck_assert_int_eq(tb_jobtable_probation_prep(t), 0);
    tb_jobtable_at(t, 0)->state = TB_JOB_PREPPING;
    ck_assert_int_eq(tb_jobtable_probation_prep(t), -1);
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), -1);
    tb_jobtable_at(t, 0)->state = TB_JOB_READY;
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), 0);
    /* the caller's rule refuses region 1 (the worker failed it, or gave a result in hand): the
     * next smallest ready one */
    s_refused = 0;
    tb_jobtable_at(t, 2)->state = TB_JOB_READY;
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), 2);
    /* at the bound on held results only the job the caller waits for next (region 1) may
     * start, and it is refused here */
    ck_assert_int_eq(tb_jobtable_probation_job(t, true, s_may_run, NULL), -1);
    s_refused = -1;
    ck_assert_int_eq(tb_jobtable_probation_job(t, true, s_may_run, NULL), 0);
    /* a job under way with no run of its own counted (not a shared probation) is never joined */
    r4->runs = 0;
    free(r4->votes);
    r4->votes = NULL;
    tb_jobtable_at(t, 0)->state = TB_JOB_DONE;
    tb_jobtable_at(t, 2)->state = TB_JOB_DONE;
    ck_assert_int_eq(tb_jobtable_probation_job(t, false, s_may_run, NULL), 1);
    tb_jobtable_destroy(&t);
}
END_TEST

Suite *jobtable_suite(void)
{
    Suite *s = suite_create("jobtable");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_order_is_largest_first_ties_in_job_order);
    tcase_add_test(tc, test_job_order_delivery_holds_until_the_prefix_is_done);
    tcase_add_test(tc, test_unordered_delivery_is_completion_order);
    tcase_add_test(tc, test_failure_rule_needs_every_live_worker);
    tcase_add_test(tc, test_lazy_spec_is_made_keyed_and_checked);
    tcase_add_test(tc, test_a_job_costs_little);
    tcase_add_test(tc, test_peaks_are_held_to_their_jobs_bounds);
    tcase_add_test(tc, test_probation_takes_the_smallest_job_together);
    suite_add_tcase(s, tc);
    return s;
}
