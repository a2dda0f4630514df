/* The cost model of a dispatch's progress; see progress.h. At most a few thousand jobs a record:
 * the schedule is a sort and a scan over the workers per job. */
#include "coordinator/report/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/report/html.h"

#define S_MAX_WORKERS 1024
#define S_MIN_PROGRESS 0.05 /* a running job's progress below this says little of its speed */
#define S_MIN_RATE_S 1.0    /* a rate over less time than this says little */

static int s_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The last attempt of a job, or NULL. */
static const cJSON *s_last_attempt(const cJSON *job)
{
    const cJSON *as = cJSON_GetObjectItemCaseSensitive(job, "attempts");
    int n = cJSON_GetArraySize(as);
    return n > 0 ? cJSON_GetArrayItem(as, n - 1) : NULL;
}

/* Whether a running job's result is already in the coordinator's hands (being checked, stored):
 * it holds no worker any more. */
static bool s_received(const cJSON *job)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(job, "received"));
}

/* The measured cost per weight unit: successful attempts' seconds plus running jobs' seconds so far
 * (those reporting progress), over the weight they did. NaN when nothing was measured. */
static double s_cost(const cJSON *jobs, double age_s)
{
    double s = 0, w = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        double wt = tb_json_num(j, "weight");
        if (!(wt > 0) || cJSON_IsTrue(cJSON_GetObjectItem(j, "from_store")))
            continue;
        const char *st = tb_json_str(j, "state", "");
        const cJSON *a = s_last_attempt(j);
        if (strcmp(st, "done") == 0 && a && strcmp(tb_json_str(a, "outcome", ""), "ok") == 0) {
            s += tb_json_num(a, "seconds");
            w += wt;
        } else if (strcmp(st, "running") == 0 && a && !s_received(j)) {
            double p = tb_json_num(j, "progress"), el = tb_json_num(a, "seconds") + age_s;
            if (p >= S_MIN_PROGRESS && p < 1 && el > 0) {
                s += el;
                w += p * wt;
            }
        }
    }
    return w > 0 && s > 0 ? s / w : NAN;
}

/* The coordinator's work on each result: the median take-in of the results done here (from
 * arrival to checked and stored: seconds a result, returned) and the caller's time with them (a
 * tile's files written: the record's "coordinator" block), per weight unit, as its results are
 * (a partial row's tile writes fewer bytes): *out_s_per_w, and the mean weight of a result done,
 * *mean_w. 0 while not measured. */
static double s_take_in(const cJSON *record, const cJSON *jobs, int n, double *out_s_per_w,
                        double *mean_w)
{
    double *t = malloc(((size_t)n + 1) * sizeof *t);
    int k = 0, done = 0;
    double done_w = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        if (strcmp(tb_json_str(j, "state", ""), "done") != 0 ||
            cJSON_IsTrue(cJSON_GetObjectItem(j, "from_store")))
            continue;
        double v = tb_json_num(j, "take_in_s"), wt = tb_json_num(j, "weight");
        done++;
        done_w += wt > 0 ? wt : 0;
        if (t && v > 0 && isfinite(v))
            t[k++] = v;
    }
    double in = 0;
    if (k > 0) {
        qsort(t, (size_t)k, sizeof *t, s_desc);
        in = t[k / 2];
    }
    free(t);
    double results = tb_json_num(record, "coordinator.results");
    double secs = tb_json_num(record, "coordinator.seconds");
    *mean_w = done > 0 ? done_w / done : 0;
    /* the results it finished with are (nearly) the done ones: all but those still queued to it */
    double finished_w = results >= 1 ? fmin(results, done) * *mean_w : 0;
    *out_s_per_w = finished_w > 0 && secs >= 0 ? secs / finished_w : 0;
    return in;
}

int tb_report_progress_of(const cJSON *record, double age_s, tb_report_progress_t *out)
{
    memset(out, 0, sizeof *out);
    out->eta_s = out->cost_s_per_unit = out->job_s = out->units_per_s = NAN;
    const cJSON *jobs = tb_json_path(record, "jobs");
    if (!cJSON_IsArray(jobs))
        return -1;
    int n = cJSON_GetArraySize(jobs);
    double *queued = malloc(((size_t)n + 1) * sizeof *queued);
    double *free_at = malloc(((size_t)n + S_MAX_WORKERS + 1) * sizeof *free_at);
    double *weights = malloc(((size_t)n + 1) * sizeof *weights);
    if (!queued || !free_at || !weights) {
        free(queued);
        free(free_at);
        free(weights);
        return -1;
    }
    double c = s_cost(jobs, age_s);
    double todo_w = 0, done_w = 0;
    int nq = 0, nr = 0, nw_all = 0, n_received = 0;
    double left_w = 0; /* of the jobs not done: the coordinator has their results still to take */
    double last_w = INFINITY; /* the lightest job on a worker or queued: the last to come in */
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        double wt = tb_json_num(j, "weight");
        wt = wt > 0 ? wt : 0;
        const char *st = tb_json_str(j, "state", "");
        bool store = cJSON_IsTrue(cJSON_GetObjectItem(j, "from_store"));
        out->jobs++;
        if (store) {
            out->from_store++;
            continue;
        }
        weights[nw_all++] = wt;
        todo_w += wt;
        if (strcmp(st, "done") == 0) {
            out->done++;
            done_w += wt;
        } else if (strcmp(st, "failed") == 0) {
            out->failed++;
        } else if (strcmp(st, "running") == 0 && s_received(j)) {
            left_w += wt;
            out->running++; /* on the coordinator: its worker's part is done */
            n_received++;
            done_w += wt;
        } else if (strcmp(st, "running") == 0) {
            out->running++;
            left_w += wt;
            const cJSON *a = s_last_attempt(j);
            double p = fmin(1, fmax(0, tb_json_num(j, "progress")));
            double el = (a ? tb_json_num(a, "seconds") : 0) + age_s;
            done_w += isfinite(p) ? p * wt : 0;
            /* its remaining seconds: by its own latest rate when it reports progress (the record's
             * "progress_rate": the last few seconds, from its first report on, so the spec's
             * transfer and the job's setup are not its speed, nor a slower start beside other
             * jobs), else by its progress since the attempt began, else the measured cost */
            double p0 = tb_json_num(j, "progress_rate.from"),
                   since = tb_json_num(j, "progress_rate.since_s"),
                   stale = tb_json_num(j, "progress_rate.age_s");
            /* the rate runs to its latest report, `stale` seconds before the record (a record of
             * an older coordinator measured it to the record: 0), and the record is age_s old */
            stale = (isfinite(stale) && stale > 0 ? stale : 0) + age_s;
            double rem = p > p0 && since >= S_MIN_RATE_S ? since * (1 - p) / (p - p0) - stale
                         : p >= S_MIN_PROGRESS && el > 0 ? el * (1 - p) / p
                                                         : wt * c - el;
            last_w = fmin(last_w, wt);
            free_at[nr++] = isfinite(rem) ? fmax(0, rem) : NAN;
        } else {
            out->queued++;
            left_w += wt;
            last_w = fmin(last_w, wt);
            queued[nq++] = wt;
        }
    }
    int alive = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, tb_json_path(record, "workers")) alive +=
        cJSON_IsTrue(cJSON_GetObjectItem(w, "alive"));
    if (!tb_json_path(record, "workers") ||
        cJSON_GetArraySize(tb_json_path(record, "workers")) == 0)
        alive = 1; /* in-process: one job at a time */
    if (alive > S_MAX_WORKERS)
        alive = S_MAX_WORKERS;
    /* the workers alive; more only while a lost worker's lease runs out */
    out->workers = alive > nr ? alive : (nr > 0 ? nr : 1);
    out->fraction = todo_w > 0 ? fmin(1, done_w / todo_w) : 1;
    out->elapsed_s = tb_json_num(record, "seconds") + age_s;
    if (out->elapsed_s >= 1)
        out->units_per_s = done_w / out->elapsed_s;
    out->cost_s_per_unit = c;
    if (nw_all > 0 && isfinite(c)) {
        qsort(weights, (size_t)nw_all, sizeof *weights, s_desc);
        out->job_s = c * weights[nw_all / 2];
    }
    double out_per_w = 0, mean_w = 0, take_in_s = s_take_in(record, jobs, n, &out_per_w, &mean_w);
    double outstanding = tb_json_num(record, "coordinator.outstanding");
    outstanding = outstanding > 0 && isfinite(outstanding) ? outstanding : 0;
    out->coordinator_s = take_in_s + out_per_w * mean_w;
    if (out->queued + out->running == 0 && outstanding == 0) {
        out->eta_s = 0;
        out->measured = true;
    } else if (isfinite(c) || (nr == 0 && out->queued == 0)) {
        /* the list schedule: the workers free now, then as their running jobs end */
        int nf = out->workers;
        for (int k = nr; k < nf; k++)
            free_at[k] = 0;
        for (int k = 0; k < nr; k++)
            if (!isfinite(free_at[k]))
                free_at[k] = 0;
        qsort(queued, (size_t)nq, sizeof *queued, s_desc);
        for (int q = 0; q < nq; q++) {
            int best = 0;
            for (int k = 1; k < nf; k++)
                if (free_at[k] < free_at[best])
                    best = k;
            free_at[best] += queued[q] * c;
        }
        double end = 0;
        for (int k = 0; k < nf; k++)
            end = fmax(end, free_at[k]);
        /* then the last result's handling (the lightest job's: the engine runs the largest
         * first); and the coordinator is a limit of its own: it writes the results one at a time
         * (a tile's files), so those not yet finished with - queued to it, being checked,
         * running, queued - take at least their weight times its measured seconds a unit */
        double workers_end = nr + nq > 0 ? end + take_in_s + out_per_w * last_w : 0;
        double coord_end = (outstanding * mean_w + left_w) * out_per_w +
                           (n_received + nr + nq > 0 ? take_in_s : 0);
        out->coordinator_bound = coord_end > workers_end;
        out->eta_s = fmax(workers_end, coord_end);
        out->measured = true;
    }
    free(queued);
    free(free_at);
    free(weights);
    return 0;
}

static void s_secs(double s, char *out, size_t n)
{
    if (!isfinite(s))
        snprintf(out, n, "?");
    else if (s < 100)
        snprintf(out, n, "%.1f s", s);
    else if (s < 6000)
        snprintf(out, n, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
    else
        snprintf(out, n, "%.0f h %02.0f min", floor(s / 3600), fmod(floor(s / 60), 60));
}

void tb_report_progress_text(const tb_report_progress_t *p, const char *phase, const char *unit,
                             char *out, size_t n)
{
    char eta[48], job[48];
    s_secs(p->eta_s, eta, sizeof eta);
    s_secs(p->job_s, job, sizeof job);
    int k = snprintf(out, n, "%s: %d of %d %s done", phase, p->done + p->from_store, p->jobs, unit);
    if (k < 0 || (size_t)k >= n)
        return;
    if (p->from_store)
        k += snprintf(out + k, n - (size_t)k, " (%d from the store)", p->from_store);
    if ((size_t)k < n)
        k += snprintf(out + k, n - (size_t)k, ", %d running, %d queued%s", p->running, p->queued,
                      p->failed ? ", some failed" : "");
    if ((size_t)k < n && isfinite(p->job_s) && p->done + p->running > 0)
        k += snprintf(out + k, n - (size_t)k, ", %.1f%% of the work, %s a median job",
                      100 * p->fraction, job);
    if ((size_t)k >= n)
        return;
    if (p->measured && p->queued + p->running > 0 && p->coordinator_bound)
        snprintf(out + k, n - (size_t)k,
                 "; ETA %s (the coordinator's %.2f s a result for the results left)", eta,
                 p->coordinator_s);
    else if (p->measured && p->queued + p->running > 0)
        snprintf(out + k, n - (size_t)k,
                 "; ETA %s (the remaining jobs at the measured cost on %d "
                 "worker%s)",
                 eta, p->workers, p->workers == 1 ? "" : "s");
    else if (p->queued + p->running > 0)
        snprintf(out + k, n - (size_t)k, "; ETA not known yet (no %s measured)", unit);
}
