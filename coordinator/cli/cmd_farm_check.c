/* `terrain farm-check`: proves a deployment end to end with the checksum-grind job - dispatch,
 * leases, retries, chunked results, the result store - and verifies every result by the job's
 * trapdoor.
 *
 *   terrain farm-check [--jobs N] [--work N] [--result-kib N] [--workers N] [--threads N]
 *                      [--bind ENDPOINT] [--out DIR] [--fresh] ...
 *
 * Writes DIR/farm-check.out (every result in job order: byte-identical whichever way the jobs ran)
 * and DIR/farm-check.json (the dispatch record: per job the worker, attempts with their outcomes,
 * seconds), keeps results in DIR/.cache, and prints a per-job table. Exit status 0 when every job
 * ran and verified, 1 when the run failed or a result did not verify, 2 for bad usage, 128 + signal
 * when interrupted.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/args.h"
#include "common/fs.h"
#include "common/log.h"
#include "coordinator/cli/commands.h"
#include "coordinator/farm/dispatch.h"
#include "coordinator/cli/dispatch_cli.h"
#include "coordinator/cli/verb.h"
#include "coordinator/farm/signals.h"
#include "jobs/checksum_grind.h"

#define S_MAX_JOBS 100000

typedef struct {
    const char *out_dir;
} s_ctx_t;

static void s_on_listening(void *user, const char *endpoint)
{
    (void)user;
    /* On stdout, so scripts (and the tests) can read the port a wildcard bind chose. */
    printf("farm-check: listening on %s\n", endpoint);
    fflush(stdout);
}

/* The spec of job i: sizes vary (1x to 1.75x) so largest-first scheduling has something to do. */
static tb_grind_spec_t s_spec(int64_t seed, int64_t i, int64_t work_k, int64_t result_kib,
                              bool fail)
{
    tb_grind_spec_t spec = {.seed = (uint64_t)seed * 1000003u + (uint64_t)i,
                            .lanes = 16,
                            .work = (uint64_t)work_k * 1000u * (uint64_t)(4 + i % 4) / 4,
                            .out_bytes = (uint64_t)result_kib * 1024u,
                            .flags = fail ? TB_GRIND_FLAG_FAIL : 0};
    return spec;
}

static void s_attempts_text(const tb_job_record_t *r, char *out, size_t n)
{
    if (r->from_store) {
        snprintf(out, n, "0 (stored)");
        return;
    }
    size_t k = (size_t)snprintf(out, n, "%zu", r->n_attempts);
    if (r->n_attempts <= 1)
        return;
    for (size_t a = 0; a < r->n_attempts && k < n; a++) {
        char word[32];
        snprintf(word, sizeof word, "%.*s", (int)strcspn(r->attempts[a].outcome, ":"),
                 r->attempts[a].outcome);
        k += (size_t)snprintf(out + k, n - k, "%s%s", a == 0 ? " (" : ", ", word);
    }
    if (k < n)
        snprintf(out + k, n - k, ")");
}

static int s_write_outputs(tb_dispatch_t *d, const char *dir, const tb_grind_spec_t *specs,
                           int64_t n_jobs, bool *all_ok, tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, dir, "farm-check.out", err) != 0)
        return -1;
    tb_fs_tmp_t tmp;
    if (tb_fs_tmp_open(&tmp, path, err) != 0)
        return -1;
    *all_ok = true;
    cJSON *record = tb_dispatch_record_json(d);
    cJSON *jobs = cJSON_GetObjectItem(record, "jobs");
    printf("%-5s %-16s %-26s %8s %10s  %s\n", "job", "worker", "attempts", "seconds", "bytes",
           "verified");
    for (int64_t i = 0; i < n_jobs; i++) {
        size_t bytes;
        const void *data = tb_dispatch_result(d, (size_t)i, &bytes);
        tb_err_t verr;
        bool ok = data && tb_grind_verify(&specs[i], data, bytes, &verr) == 0;
        if (!ok) {
            *all_ok = false;
            tb_log_error("job %lld: %s", (long long)i, data ? verr.msg : "no result");
        }
        if (data && fwrite(data, 1, bytes, tmp.fp) != bytes) {
            tb_fs_tmp_abort(&tmp);
            cJSON_Delete(record);
            return tb_err_set(err, TB_E_IO, "%s: write failed", path);
        }
        tb_job_record_t r;
        tb_dispatch_record(d, (size_t)i, &r);
        char attempts[160];
        s_attempts_text(&r, attempts, sizeof attempts);
        printf("%-5lld %-16s %-26s %8.2f %10zu  %s\n", (long long)i, r.worker, attempts, r.seconds,
               r.result_bytes, ok ? "yes" : "NO");
        cJSON_AddBoolToObject(cJSON_GetArrayItem(jobs, (int)i), "verified", ok);
    }
    if (tb_fs_tmp_commit(&tmp, err) != 0) {
        cJSON_Delete(record);
        return -1;
    }
    char *text = tb_json_print(record, true);
    cJSON_Delete(record);
    if (!text)
        return tb_err_set(err, TB_E_NOMEM, "out of memory printing the record");
    if (tb_fs_join(path, sizeof path, dir, "farm-check.json", err) != 0) {
        free(text);
        return -1;
    }
    int r = tb_fs_write_atomic(path, text, strlen(text), err);
    free(text);
    return r;
}

/* Exit 2 for bad input (a bad option value, an --out that is a file), 1 for anything else. */
static int s_usage_or_failed(const tb_err_t *err)
{
    return err->code == TB_E_INVALID || err->code == TB_E_UNKNOWN_KEY ? TB_EXIT_USAGE
                                                                      : TB_EXIT_FAILED;
}

int tb_cmd_farm_check(int argc, char **argv)
{
    int64_t n_jobs = 8, work_k = 2000, result_kib = 64, seed = 1;
    const char *out_dir = "out/farm-check", *fail_list = NULL;
    tb_dispatch_cli_t cli;
    tb_dispatch_cli_init(&cli);
    const tb_opt_t opts[] = {
        {"jobs", TB_OPT_INT, &n_jobs, NULL, "N", "jobs to dispatch (8)",
         TB_OPT_IRANGE(1, S_MAX_JOBS)},
        {"work", TB_OPT_INT, &work_k, NULL, "N",
         "thousands of squarings per lane and job, x1 to x1.75 (2000: ~0.1 s a job)",
         TB_OPT_IRANGE(0, 100000000)},
        {"result-kib", TB_OPT_INT, &result_kib, NULL, "KIB", "extra result bytes per job (64)",
         TB_OPT_IRANGE(0, (int64_t)(TB_GRIND_MAX_OUT_BYTES / 1024))},
        TB_VERB_OPT_SEED(&seed, NULL, "seed of the job specs (1)"),
        {"out", TB_OPT_STRING, &out_dir, NULL, "DIR", "output directory (out/farm-check)"},
        {"fail-jobs", TB_OPT_STRING, &fail_list, NULL, "LIST",
         "make these jobs (e.g. 1,3) fail on every worker: tests the failure rules"},
    };
    tb_verb_t v = {.name = "farm-check",
                   .usage = "terrain farm-check [--jobs N] [--work N] [--workers N] [--threads N] "
                            "[--bind ENDPOINT] [--out DIR] [--fresh]",
                   TB_VERB_SHARED(opts, cli.opts)};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    tb_err_t err;
    tb_dispatch_opts_t dopts = {0};
    if (tb_dispatch_cli_apply(&cli, &dopts, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    int64_t fail[64];
    int n_fail = 0;
    if (fail_list && (n_fail = tb_args_int_list(fail_list, "fail-jobs", fail, 64, &err)) < 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    for (int k = 0; k < n_fail; k++)
        if (fail[k] < 0 || fail[k] >= n_jobs)
            return tb_verb_usage(&v, "--fail-jobs: job %lld: expected a job index in 0..%lld",
                                 (long long)fail[k], (long long)n_jobs - 1);
    if (cli.verbose)
        tb_log_set_level(TB_LOG_DEBUG);
    char store[4200];
    if (tb_fs_mkdir_p(out_dir, &err) != 0 ||
        tb_fs_join(store, sizeof store, out_dir, ".cache", &err) != 0)
        return tb_verb_error(&v, s_usage_or_failed(&err), &err);
    dopts.store_dir = store;
    dopts.label = "jobs";
    dopts.on_listening = s_on_listening;
    dopts.interrupted = tb_signals_catch();
    tb_grind_spec_t *specs = calloc((size_t)n_jobs, sizeof *specs);
    tb_dispatch_t *d = specs ? tb_dispatch_new(&dopts, &err) : NULL;
    if (!d) {
        if (!specs)
            tb_err_set(&err, TB_E_NOMEM, "out of memory");
        free(specs);
        return tb_verb_error(&v, s_usage_or_failed(&err), &err);
    }
    for (int64_t i = 0; i < n_jobs; i++) {
        bool fails = false;
        for (int k = 0; k < n_fail; k++)
            fails |= fail[k] == i;
        specs[i] = s_spec(seed, i, work_k, result_kib, fails);
        unsigned char buf[TB_GRIND_SPEC_BYTES];
        tb_grind_spec_encode(&specs[i], buf);
        char label[32];
        snprintf(label, sizeof label, "job %lld", (long long)i);
        tb_job_desc_t desc = {.kind = TB_GRIND_KIND,
                              .spec = buf,
                              .spec_bytes = sizeof buf,
                              .weight = (double)specs[i].work,
                              .cells = (double)specs[i].work * specs[i].lanes,
                              .label = label,
                              /* a minute plus 20 x the squarings at 10 ns each, on one core */
                              .deadline_s =
                                  60 + 20 * 10e-9 * (double)specs[i].work * specs[i].lanes};
        if (tb_dispatch_add(d, &desc, &err) < 0) {
            tb_dispatch_destroy(&d);
            free(specs);
            return tb_verb_error(&v, TB_EXIT_FAILED, &err);
        }
    }
    status = TB_EXIT_OK;
    if (tb_dispatch_run(d, &err) != 0) {
        tb_dispatch_stats_t st;
        tb_dispatch_stats(d, &st);
        /* refused before any job went out (a bad --bind, bad keys): bad usage */
        bool refused = err.code == TB_E_INVALID && st.attempts == 0;
        status = tb_verb_error(&v, refused ? TB_EXIT_USAGE : TB_EXIT_FAILED, &err);
    } else {
        bool all_ok;
        if (s_write_outputs(d, out_dir, specs, n_jobs, &all_ok, &err) != 0) {
            status = tb_verb_error(&v, TB_EXIT_FAILED, &err);
        } else {
            tb_dispatch_stats_t st;
            tb_dispatch_stats(d, &st);
            printf("farm-check: %zu jobs %s (%zu ran, %zu from the store, %zu attempts, %zu lost, "
                   "%zu failed, %zu stored results rejected), %s mode, %zu workers, %.2f s\n",
                   st.jobs, all_ok ? "verified" : "NOT verified", st.ran, st.from_store,
                   st.attempts, st.lost, st.failed, st.corrupt_store, st.mode, st.workers_seen,
                   st.seconds);
            printf("farm-check: results in %s/farm-check.out, record in %s/farm-check.json\n",
                   out_dir, out_dir);
            status = all_ok ? TB_EXIT_OK : TB_EXIT_FAILED;
        }
    }
    /* Even a failed run leaves its record, so the attempts that failed can be read; a run refused
     * before anything ran (exit 2) writes nothing. */
    if (status == TB_EXIT_FAILED) {
        cJSON *record = tb_dispatch_record_json(d);
        char *text = tb_json_print(record, true);
        char path[4200];
        if (text && tb_fs_join(path, sizeof path, out_dir, "farm-check.json", &err) == 0)
            tb_fs_write_atomic(path, text, strlen(text), &err);
        free(text);
        cJSON_Delete(record);
    }
    tb_dispatch_destroy(&d);
    free(specs);
    return status;
}
