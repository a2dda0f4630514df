/* The dispatch engine through its API: results in job order and the same bytes in-process and
 * through local worker processes, the result store reused and a corrupt entry recomputed, a failing
 * job's own error, an interrupted run, the record. The multi-process edge cases (killed workers and
 * coordinators, misbehaving peers, CURVE) are in tests/test_farm_*.sh. */
#include <check.h>
#include <cJSON.h>
#include <czmq.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/hash.h"
#include "coordinator/farm/cache.h"
#include "coordinator/farm/dispatch.h"
#include "jobs/checksum_grind.h"
#include "support/tb_test.h"

#define S_JOBS 5

typedef struct {
    size_t calls;
    size_t order[S_JOBS];
    uint64_t sums[S_JOBS];
} s_seen_t;

static void s_on_result(void *user, size_t index, const void *data, size_t bytes)
{
    s_seen_t *seen = user;
    seen->order[seen->calls++] = index;
    seen->sums[index] = tb_xxh3(data, bytes);
}

static tb_grind_spec_t s_spec(size_t i, bool fail)
{
    tb_grind_spec_t s = {.seed = 100 + i,
                         .lanes = 8,
                         .work = 20000 * (1 + i % 3),
                         .out_bytes = 50000,
                         .flags = fail ? TB_GRIND_FLAG_FAIL : 0};
    return s;
}

/* Runs S_JOBS jobs; returns the dispatcher (the caller destroys it) or NULL when the run failed. */
static tb_dispatch_t *s_run(tb_dispatch_opts_t *o, int fail_job, s_seen_t *seen, tb_err_t *err)
{
    if (seen) {
        o->on_result = s_on_result;
        o->user = seen;
    }
    tb_dispatch_t *d = tb_dispatch_new(o, err);
    ck_assert_ptr_nonnull(d);
    for (size_t i = 0; i < S_JOBS; i++) {
        tb_grind_spec_t spec = s_spec(i, (int)i == fail_job);
        unsigned char buf[TB_GRIND_SPEC_BYTES];
        tb_grind_spec_encode(&spec, buf);
        tb_job_desc_t desc = {.kind = TB_GRIND_KIND,
                              .spec = buf,
                              .spec_bytes = sizeof buf,
                              .weight = (double)spec.work};
        ck_assert_int_eq(tb_dispatch_add(d, &desc, err), (int64_t)i);
    }
    return d;
}

static void s_opts(tb_dispatch_opts_t *o, int workers)
{
    memset(o, 0, sizeof *o);
    o->workers = workers;
    o->workers_given = true;
    o->threads = 1;
    o->heartbeat_ms = 200;
    o->worker_program = strdup(tb_test_build_path("terrain-worker"));
}

START_TEST(test_in_process_and_local_agree_in_job_order)
{
    zsys_handler_set(NULL);
    uint64_t sums[2][S_JOBS];
    for (int mode = 0; mode < 2; mode++) {
        tb_dispatch_opts_t o;
        s_opts(&o, mode == 0 ? 0 : 2);
        s_seen_t seen = {0};
        tb_err_t err;
        tb_dispatch_t *d = s_run(&o, -1, &seen, &err);
        ck_assert_msg(tb_dispatch_run(d, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(seen.calls, S_JOBS);
        for (size_t i = 0; i < S_JOBS; i++) {
            ck_assert_uint_eq(seen.order[i], i); /* job order, whatever order they finished in */
            sums[mode][i] = seen.sums[i];
            tb_job_record_t r;
            tb_dispatch_record(d, i, &r);
            ck_assert(r.done);
            ck_assert_uint_eq(r.result_xxh3, seen.sums[i]);
            ck_assert_uint_eq(r.n_attempts, 1);
            ck_assert_str_eq(r.attempts[0].outcome, "ok");
            ck_assert_str_eq(r.worker, mode == 0 ? "in-process" : r.attempts[0].worker);
            size_t bytes;
            ck_assert_ptr_null(tb_dispatch_result(d, i, &bytes)); /* taken by the callback */
        }
        tb_dispatch_stats_t st;
        tb_dispatch_stats(d, &st);
        ck_assert_str_eq(st.mode, mode == 0 ? "in-process" : "local");
        ck_assert_uint_eq(st.ran, S_JOBS);
        if (mode == 1) /* the second may join after the first has done everything */
            ck_assert(st.workers_seen >= 1 && st.workers_seen <= 2);
        tb_dispatch_destroy(&d);
        free((char *)o.worker_program);
    }
    ck_assert(memcmp(sums[0], sums[1], sizeof sums[0]) == 0);
}
END_TEST

/* Two batches on one engine (docs/distribution.md, "One engine across the phases"): the second
 * batch's jobs are indexed from 0 and give the in-process bytes, and the workers of the first serve
 * it - kept alive between the runs (the pause is longer than liveness x heartbeat), none lost,
 * none started again. */
START_TEST(test_batches_keep_their_workers)
{
    zsys_handler_set(NULL);
    uint64_t want[S_JOBS];
    {
        tb_dispatch_opts_t o;
        s_opts(&o, 0);
        s_seen_t seen = {0};
        tb_err_t err;
        tb_dispatch_t *d = s_run(&o, -1, &seen, &err);
        ck_assert_msg(tb_dispatch_run(d, &err) == 0, "%s", err.msg);
        memcpy(want, seen.sums, sizeof want);
        tb_dispatch_destroy(&d);
        free((char *)o.worker_program);
    }
    tb_dispatch_opts_t o;
    s_opts(&o, 2);
    o.batches = true;
    s_seen_t seen = {0};
    tb_err_t err;
    tb_dispatch_t *d = s_run(&o, -1, &seen, &err);
    ck_assert_int_eq(tb_dispatch_next_batch(d, NULL, &err), -1); /* the first has not run */
    ck_assert_msg(tb_dispatch_run(d, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(tb_dispatch_run(d, &err), -1); /* once a batch */
    ck_assert_uint_eq(seen.calls, S_JOBS);
    usleep(1500 * 1000); /* 7 heartbeats: the idle thread must keep the workers */
    s_seen_t seen2 = {0};
    tb_dispatch_batch_t b = {.label = "second", .on_result = s_on_result, .user = &seen2};
    ck_assert_msg(tb_dispatch_next_batch(d, &b, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(tb_dispatch_count(d), 0);
    for (size_t i = 0; i < S_JOBS; i++) {
        tb_grind_spec_t spec = s_spec(i, false);
        unsigned char buf[TB_GRIND_SPEC_BYTES];
        tb_grind_spec_encode(&spec, buf);
        tb_job_desc_t desc = {.kind = TB_GRIND_KIND,
                              .spec = buf,
                              .spec_bytes = sizeof buf,
                              .weight = (double)spec.work};
        ck_assert_int_eq(tb_dispatch_add(d, &desc, &err), (int64_t)i);
    }
    ck_assert_msg(tb_dispatch_run(d, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(seen2.calls, S_JOBS);
    ck_assert(memcmp(seen2.sums, want, sizeof want) == 0);
    tb_dispatch_stats_t st;
    tb_dispatch_stats(d, &st);
    ck_assert_uint_eq(st.jobs, S_JOBS);
    ck_assert_uint_eq(st.ran, S_JOBS);
    ck_assert_uint_eq(st.lost, 0);
    cJSON *rec = tb_dispatch_record_json(d);
    cJSON *workers = cJSON_GetObjectItem(rec, "workers");
    int n = cJSON_GetArraySize(workers);
    ck_assert_msg(n >= 1 && n <= 2, "%d worker entries: a worker was lost or started again", n);
    for (int i = 0; i < n; i++) {
        cJSON *w = cJSON_GetArrayItem(workers, i);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(w, "alive")));
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(w, "local")));
    }
    cJSON_Delete(rec);
    tb_dispatch_finish(d, false);
    tb_dispatch_finish(d, false); /* idempotent */
    tb_dispatch_destroy(&d);
    free((char *)o.worker_program);
}
END_TEST

START_TEST(test_store_reused_fresh_and_corrupt)
{
    zsys_handler_set(NULL);
    const char *tmp = tb_test_tmpdir("dispatch-store");
    char store[4200];
    snprintf(store, sizeof store, "%s/.cache", tmp);
    tb_err_t err;
    tb_dispatch_opts_t o;
    s_opts(&o, 0);
    o.store_dir = store;
    tb_dispatch_t *d = s_run(&o, -1, NULL, &err);
    ck_assert_int_eq(tb_dispatch_run(d, &err), 0);
    uint64_t first[S_JOBS];
    tb_job_record_t r;
    for (size_t i = 0; i < S_JOBS; i++) {
        tb_dispatch_record(d, i, &r);
        first[i] = r.result_xxh3;
    }
    /* Damage job 2's stored result in its checksum field. */
    tb_dispatch_record(d, 2, &r);
    char path[4300];
    snprintf(path, sizeof path, "%s/%s.tbr", store, r.key_hex);
    tb_dispatch_destroy(&d);
    char *file;
    size_t n;
    ck_assert_int_eq(tb_fs_read_all(path, 1 << 24, &file, &n, &err), 0);
    file[20 + 16] ^= 1; /* "TBR1" + key, then the blob header's XXH3 */
    ck_assert_int_eq(tb_fs_write_atomic(path, file, n, &err), 0);
    free(file);

    d = s_run(&o, -1, NULL, &err);
    ck_assert_int_eq(tb_dispatch_run(d, &err), 0);
    tb_dispatch_stats_t st;
    tb_dispatch_stats(d, &st);
    ck_assert_uint_eq(st.from_store, S_JOBS - 1);
    ck_assert_uint_eq(st.ran, 1);
    ck_assert_uint_eq(st.corrupt_store, 1);
    for (size_t i = 0; i < S_JOBS; i++) {
        tb_dispatch_record(d, i, &r);
        ck_assert_uint_eq(r.result_xxh3, first[i]);
        ck_assert(r.from_store == (i != 2));
        ck_assert_str_eq(r.worker, i == 2 ? "in-process" : "store");
    }
    tb_dispatch_destroy(&d);
    /* The recomputed result was stored again: a third run reuses everything. */
    d = s_run(&o, -1, NULL, &err);
    ck_assert_int_eq(tb_dispatch_run(d, &err), 0);
    tb_dispatch_stats(d, &st);
    ck_assert_uint_eq(st.from_store, S_JOBS);
    tb_dispatch_destroy(&d);
    /* --fresh ignores the store. */
    o.fresh = true;
    d = s_run(&o, -1, NULL, &err);
    ck_assert_int_eq(tb_dispatch_run(d, &err), 0);
    tb_dispatch_stats(d, &st);
    ck_assert_uint_eq(st.from_store, 0);
    ck_assert_uint_eq(st.ran, S_JOBS);
    tb_dispatch_destroy(&d);
    free((char *)o.worker_program);
}
END_TEST

START_TEST(test_failing_job_carries_its_error)
{
    zsys_handler_set(NULL);
    for (int workers = 0; workers <= 2; workers += 2) {
        tb_dispatch_opts_t o;
        s_opts(&o, workers);
        tb_err_t err;
        tb_dispatch_t *d = s_run(&o, 3, NULL, &err);
        ck_assert_int_eq(tb_dispatch_run(d, &err), -1);
        ck_assert_int_eq(err.code, TB_E_JOB);
        ck_assert_ptr_nonnull(strstr(err.msg, "job 3"));
        ck_assert_ptr_nonnull(strstr(err.msg, "the spec asks this job to fail"));
        tb_job_record_t r;
        tb_dispatch_record(d, 3, &r);
        ck_assert(!r.done);
        /* In-process fails at once (same code, same process); workers retry up to 3 times. */
        ck_assert_uint_eq(r.n_attempts, workers ? 3 : 1);
        ck_assert_ptr_nonnull(strstr(r.attempts[0].outcome, "failed: "));
        cJSON *json = tb_dispatch_record_json(d);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(json, "jobs")), S_JOBS);
        cJSON_Delete(json);
        tb_dispatch_destroy(&d);
        free((char *)o.worker_program);
    }
}
END_TEST

START_TEST(test_interrupted_and_bad_input)
{
    zsys_handler_set(NULL);
    static volatile sig_atomic_t flag = SIGINT;
    for (int workers = 0; workers <= 1; workers++) {
        tb_dispatch_opts_t o;
        s_opts(&o, workers);
        o.interrupted = &flag;
        tb_err_t err;
        tb_dispatch_t *d = s_run(&o, -1, NULL, &err);
        ck_assert_int_eq(tb_dispatch_run(d, &err), -1);
        ck_assert_int_eq(err.code, TB_E_INTERRUPTED);
        ck_assert_int_eq(tb_dispatch_run(d, &err), -1); /* once only */
        tb_dispatch_destroy(&d);
        free((char *)o.worker_program);
    }
    tb_dispatch_opts_t o;
    s_opts(&o, 0);
    tb_err_t err;
    tb_dispatch_t *d = tb_dispatch_new(&o, &err);
    tb_job_desc_t desc = {.kind = "no-such-kind", .spec = "x", .spec_bytes = 1};
    ck_assert_int_eq(tb_dispatch_add(d, &desc, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INVALID);
    desc.kind = TB_GRIND_KIND;
    desc.spec_bytes = 1000; /* over the kind's spec limit */
    ck_assert_int_eq(tb_dispatch_add(d, &desc, &err), -1);
    ck_assert_uint_eq(tb_dispatch_count(d), 0);
    tb_dispatch_destroy(&d);
    free((char *)o.worker_program);
}
END_TEST

Suite *dispatch_suite(void)
{
    Suite *s = suite_create("dispatch");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_in_process_and_local_agree_in_job_order);
    tcase_add_test(tc, test_batches_keep_their_workers);
    tcase_add_test(tc, test_store_reused_fresh_and_corrupt);
    tcase_add_test(tc, test_failing_job_carries_its_error);
    tcase_add_test(tc, test_interrupted_and_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
