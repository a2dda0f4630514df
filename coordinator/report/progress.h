/* How far a phase's dispatch is and when it ends: the cost model behind the live page's ETA, the
 * progress lines of a farm log and the terminal bar (docs/report.md, "Progress and the ETA").
 *
 * The input is a dispatch record as tb_dispatch_record_json gives it while the run goes on (jobs
 * with weight, state, progress and attempts; workers with alive). The cost of a job is its weight
 * times a cost per weight unit measured in this dispatch: box cells x steps for a region, the
 * window's cells for a tile, the planet's cells for the coast. The measured cost is the seconds of
 * the attempts that succeeded plus the seconds so far of running jobs that report progress, over
 * the weight they did. The ETA is the end of a list schedule of the remaining work on the workers
 * alive: each running job's remaining seconds (by its own progress when it reports some, else the
 * measured cost less its elapsed time), then the queued jobs largest first, each on the worker
 * that is free first - the engine's own order (dispatch.h) - and then the last result's handling
 * on the coordinator. The coordinator is a limit of its own, measured the same way: each result's
 * take-in (the job's "take_in_s": from arrival to checked and stored) plus the caller's time with
 * it (the record's "coordinator" block: a tile's files written, one at a time), so the results it
 * has not finished with take at least their count times that. A job whose result has arrived
 * ("received") holds no worker. Nothing here reads a clock: the
 * caller passes how old the record is. Pure functions, tested in tests/test_report.c.
 */
#ifndef TB_REPORT_PROGRESS_H
#define TB_REPORT_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

typedef struct {
    int jobs, done, from_store, running, queued, failed;
    int workers;            /* alive, at least 1 while jobs are left */
    double fraction;        /* of the work to run here (store results left out) done, [0, 1] */
    double elapsed_s;       /* since the dispatch started */
    double cost_s_per_unit; /* measured seconds per weight unit; NaN before any measurement */
    double job_s;           /* measured seconds of a job of the median weight; NaN as above */
    double units_per_s;     /* work done per second of the dispatch; NaN before 1 s */
    double eta_s;           /* seconds to the end of the dispatch; NaN when not known yet */
    bool measured;          /* the ETA rests on a measurement of this dispatch */
    double coordinator_s;   /* the coordinator's measured seconds a result (take-in + writing) */
    bool coordinator_bound; /* the ETA is the coordinator's work on the results left */
} tb_report_progress_t;

/* The progress of `record` (a dispatch record) `age_s` seconds after it was taken. Returns 0, or -1
 * when record has no "jobs" array (*out zeroed, eta NaN). */
int tb_report_progress_of(const cJSON *record, double age_s, tb_report_progress_t *out);

/* A one-line summary for logs and the page, e.g. "tiles: 3 of 8 done (2 running), 0.41 tiles/s,
 * ETA 12 s from 4.9 s a tile on 2 workers". `unit` names the jobs ("regions", "tiles"). */
void tb_report_progress_text(const tb_report_progress_t *p, const char *phase, const char *unit,
                             char *out, size_t n);

#endif
