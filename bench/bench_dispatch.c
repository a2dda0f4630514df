/* bench_dispatch: the cost of distribution on the checksum-grind job (docs/distribution.md: a bake
 * through 1 local worker within 5 % of the in-process bake). Runs the same jobs in-process, through
 * 1 local worker and through 2, and prints wall time, the ratio to in-process and the time each job
 * took on which worker. One run each; the machine is shared, so read ratios, not absolutes.
 *
 *   scripts/bench dispatch [JOBS [WORK_K [RESULT_KIB]]]     (default 8 jobs, 4000, 4096 KiB)
 */
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "common/pool.h"
#include "coordinator/farm/dispatch.h"
#include "jobs/checksum_grind.h"

static double s_run(int workers, int threads, int jobs, long work_k, long result_kib, bool show)
{
    tb_dispatch_opts_t o = {.workers = workers, .workers_given = true, .threads = threads};
    tb_err_t err;
    tb_dispatch_t *d = tb_dispatch_new(&o, &err);
    for (int i = 0; i < jobs; i++) {
        tb_grind_spec_t spec = {.seed = 7000 + (uint64_t)i,
                                .lanes = 16,
                                .work = (uint64_t)work_k * 1000,
                                .out_bytes = (uint64_t)result_kib * 1024};
        unsigned char buf[TB_GRIND_SPEC_BYTES];
        tb_grind_spec_encode(&spec, buf);
        tb_job_desc_t desc = {.kind = TB_GRIND_KIND,
                              .spec = buf,
                              .spec_bytes = sizeof buf,
                              .weight = (double)spec.work};
        tb_dispatch_add(d, &desc, &err);
    }
    double t0 = tb_now_s();
    if (tb_dispatch_run(d, &err) != 0) {
        fprintf(stderr, "bench_dispatch: %s\n", err.msg);
        exit(1);
    }
    double dt = tb_now_s() - t0;
    if (show)
        for (int i = 0; i < jobs; i++) {
            tb_job_record_t r;
            tb_dispatch_record(d, (size_t)i, &r);
            printf("    job %d: %.3f s on %s\n", i, r.seconds, r.worker);
        }
    tb_dispatch_destroy(&d);
    return dt;
}

int main(int argc, char **argv)
{
    int jobs = argc > 1 ? atoi(argv[1]) : 8;
    long work_k = argc > 2 ? atol(argv[2]) : 4000;
    long result_kib = argc > 3 ? atol(argv[3]) : 4096;
    zsys_handler_set(NULL);
    tb_log_set_level(TB_LOG_WARN);
    int cores = tb_pool_default_threads();
    double squarings = (double)jobs * 16 * work_k * 1000;
    printf("bench dispatch: %d checksum-grind jobs, %.0f M squarings and %ld KiB of result each, "
           "%d cores\n",
           jobs, squarings / jobs / 1e6, result_kib, cores);
    double inproc = s_run(0, cores, jobs, work_k, result_kib, false);
    printf("  in-process (%d threads):       %7.3f s  %6.2f ns per squaring\n", cores, inproc,
           inproc / squarings * 1e9);
    double one = s_run(1, cores, jobs, work_k, result_kib, true);
    printf("  1 local worker (%d threads):   %7.3f s  ratio %.3f to in-process\n", cores, one,
           one / inproc);
    double two = s_run(2, cores > 1 ? cores / 2 : 1, jobs, work_k, result_kib, true);
    printf("  2 local workers (%d threads):  %7.3f s  ratio %.3f to in-process\n",
           cores > 1 ? cores / 2 : 1, two, two / inproc);
    return 0;
}
