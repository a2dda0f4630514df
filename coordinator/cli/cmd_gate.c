/* `terrain gate [MANIFEST] [--seeds 7,9342,67914] [--steps N] [--gates FILE] [--baseline DIR]
 * [--out DIR] [--junit FILE] [--circumference-km K] [--test-no-incision] + the dispatch options`:
 * bakes the planet on each seed (tb_bake_run, each into OUT/seed-N so the result store makes a
 * rerun fast), checks the statistics against the gates (coordinator/gate/gate.h), prints a table
 * seed by gate, writes OUT/gate.json, OUT/gate.txt and JUnit XML, and with --baseline reports each
 * statistic's change against an earlier gate run's bake of the same seed. Exit status 0 when every
 * gate passed, 1 when one failed or a bake failed, 2 for bad usage or input, 128 + signal when
 * interrupted. docs/gate.md. */
#include <cJSON.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/args.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/version.h"
#include "coordinator/bake/bake.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/dispatch_cli.h"
#include "coordinator/cli/verb.h"
#include "coordinator/gate/gate.h"
#include "coordinator/report/report.h"
#include "coordinator/farm/signals.h"

#define S_MAX_SEEDS 64
#define S_DEFAULT_SEEDS "7,9342,67914"
#define S_MAX_META_BYTES ((size_t)256 << 20)

typedef struct {
    int64_t seed;
    char dir[4200];
    bool baked;                 /* the bake ran to its outputs (a clip failure still counts) */
    char error[TB_ERR_MSG_MAX]; /* why the bake failed, or "" */
    double seconds;
    int regions;
    cJSON *stats;          /* the statistics JSON, as meta.json holds it */
    cJSON *base_stats;     /* the baseline's, or NULL */
    int base_steps, steps; /* the step counts of the baseline and of this bake */
    char base_path[4200];
    tb_gate_check_t check[TB_GATE_MAX];
} s_seed_t;

typedef struct {
    const tb_gates_t *gates;
    s_seed_t *seed;
    int n_seeds;
    const char *out_dir, *baseline_dir;
    int steps; /* 0: the manifest's */
    bool no_incision;
    int failed, checks;
} s_run_t;

/* Reads BASE/seed-N/meta.json: its statistics and step count. A seed with no baseline keeps NULL.
 */
static void s_read_baseline(const char *base, s_seed_t *s)
{
    char sub[64];
    snprintf(sub, sizeof sub, "seed-%lld", (long long)s->seed);
    char dir[4200];
    if (tb_fs_join(dir, sizeof dir, base, sub, NULL) != 0 ||
        tb_fs_join(s->base_path, sizeof s->base_path, dir, "meta.json", NULL) != 0)
        return;
    char *text;
    size_t bytes;
    tb_err_t err;
    if (tb_fs_read_all(s->base_path, S_MAX_META_BYTES, &text, &bytes, &err) != 0) {
        tb_log_warn("baseline for seed %lld: %s", (long long)s->seed, err.msg);
        return;
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(root, "statistics");
    const cJSON *bake = cJSON_GetObjectItemCaseSensitive(root, "bake");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(bake, "steps");
    if (!cJSON_IsObject(st))
        tb_log_warn("baseline for seed %lld: %s has no statistics", (long long)s->seed,
                    s->base_path);
    else
        s->base_stats = st, st = NULL;
    s->base_steps = cJSON_IsNumber(steps) ? steps->valueint : 0;
    cJSON_Delete(st);
    cJSON_Delete(root);
}

static const char *s_status_name(tb_gate_status_t s)
{
    return s == TB_GATE_PASS ? "PASS" : s == TB_GATE_FAIL ? "FAIL" : "ERROR";
}

/* The table seed by gate: rows are gates, each seed a column of value and verdict. */
static void s_table(FILE *out, const s_run_t *r)
{
    const tb_gates_t *g = r->gates;
    fprintf(out, "%-34s %-16s", "gate", "bound");
    for (int s = 0; s < r->n_seeds; s++) {
        char h[32];
        snprintf(h, sizeof h, "seed %lld", (long long)r->seed[s].seed);
        fprintf(out, " %-17s", h);
    }
    fputc('\n', out);
    for (int i = 0; i < g->n; i++) {
        char bound[80];
        tb_gate_bound_text(&g->gate[i], bound, sizeof bound);
        fprintf(out, "%-34s %-16s", g->gate[i].name, bound);
        for (int s = 0; s < r->n_seeds; s++) {
            const tb_gate_check_t *c = &r->seed[s].check[i];
            char v[32];
            if (!r->seed[s].baked)
                snprintf(v, sizeof v, "-");
            else
                tb_gate_value_text(&g->gate[i], c->value, v, sizeof v);
            fprintf(out, " %-11s %-5s", v, s_status_name(c->status));
        }
        fputc('\n', out);
    }
    fprintf(out, "%-34s %-16s", "bake seconds", "");
    for (int s = 0; s < r->n_seeds; s++)
        fprintf(out, " %-17.1f", r->seed[s].seconds);
    fputc('\n', out);
}

/* now - before; 0 within a few ulps, the rounding of meta.json's 15 printed digits (cJSON keeps a
 * double to 15 digits when that is within DBL_EPSILON of it). */
static double s_change(const tb_gate_check_t *c)
{
    double d = c->value - c->baseline, scale = fmax(fabs(c->value), fabs(c->baseline));
    return fabs(d) <= 8 * DBL_EPSILON * scale ? 0.0 : d;
}

/* The change of each gated statistic against the baseline, per seed and as a mean over seeds. */
static void s_baseline_table(FILE *out, const s_run_t *r)
{
    const tb_gates_t *g = r->gates;
    fprintf(out,
            "\nchange against the baseline %s (each seed paired with its own earlier bake; "
            "one seed alone cannot judge a change):\n",
            r->baseline_dir);
    for (int s = 0; s < r->n_seeds; s++) {
        const s_seed_t *sd = &r->seed[s];
        if (!sd->base_stats)
            fprintf(out, "  seed %lld: no baseline (%s)\n", (long long)sd->seed, sd->base_path);
        else if (sd->base_steps && sd->steps && sd->base_steps != sd->steps)
            fprintf(out,
                    "  seed %lld: NOTE the baseline baked %d steps, this run %d: the change "
                    "mixes two configurations\n",
                    (long long)sd->seed, sd->base_steps, sd->steps);
    }
    fprintf(out, "%-34s", "statistic");
    for (int s = 0; s < r->n_seeds; s++) {
        char h[48];
        snprintf(h, sizeof h, "seed %lld: before -> now", (long long)r->seed[s].seed);
        fprintf(out, " %-30s", h);
    }
    fprintf(out, " %s\n", "mean change");
    for (int i = 0; i < g->n; i++) {
        fprintf(out, "%-34s", g->gate[i].name);
        double sum = 0;
        int n = 0;
        for (int s = 0; s < r->n_seeds; s++) {
            const tb_gate_check_t *c = &r->seed[s].check[i];
            char cell[64], b[32], v[32];
            tb_gate_value_text(&g->gate[i], c->baseline, b, sizeof b);
            tb_gate_value_text(&g->gate[i], c->value, v, sizeof v);
            if (isfinite(c->baseline) && isfinite(c->value)) {
                snprintf(cell, sizeof cell, "%s -> %s (%+.4g)", b, v, s_change(c));
                sum += s_change(c);
                n++;
            } else {
                snprintf(cell, sizeof cell, "%s -> %s", b, v);
            }
            fprintf(out, " %-30s", cell);
        }
        if (n > 0)
            fprintf(out, " %+.4g over %d seed%s\n", sum / n, n, n > 1 ? "s" : "");
        else
            fprintf(out, " -\n");
    }
}

/* JUnit XML (the Ant schema every CI reads): a testsuite per seed, a testcase per gate. */
static int s_junit(const char *path, const s_run_t *r, tb_err_t *err)
{
    tb_fs_tmp_t tmp;
    if (tb_fs_tmp_open(&tmp, path, err) != 0)
        return -1;
    FILE *f = tmp.fp;
    const tb_gates_t *g = r->gates;
    int failures = 0, errors = 0;
    for (int s = 0; s < r->n_seeds; s++)
        for (int i = 0; i < g->n; i++) {
            failures += r->seed[s].check[i].status == TB_GATE_FAIL;
            errors += r->seed[s].check[i].status == TB_GATE_ERROR;
        }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"terrain gate\" tests=\"%d\" failures=\"%d\" errors=\"%d\">\n",
            r->n_seeds * g->n, failures, errors);
    for (int s = 0; s < r->n_seeds; s++) {
        const s_seed_t *sd = &r->seed[s];
        int sf = 0, se = 0;
        for (int i = 0; i < g->n; i++) {
            sf += sd->check[i].status == TB_GATE_FAIL;
            se += sd->check[i].status == TB_GATE_ERROR;
        }
        fprintf(f,
                "  <testsuite name=\"terrain gate seed %lld\" tests=\"%d\" failures=\"%d\" "
                "errors=\"%d\" time=\"%.3f\">\n",
                (long long)sd->seed, g->n, sf, se, sd->seconds);
        for (int i = 0; i < g->n; i++) {
            const tb_gate_check_t *c = &sd->check[i];
            char bound[80], v[32];
            tb_gate_bound_text(&g->gate[i], bound, sizeof bound);
            tb_gate_value_text(&g->gate[i], c->value, v, sizeof v);
            fprintf(f, "    <testcase classname=\"terrain.gate.seed-%lld\" name=\"",
                    (long long)sd->seed);
            tb_gate_xml_escape(f, g->gate[i].name);
            fprintf(f, "\" time=\"0\">");
            if (c->status == TB_GATE_PASS) {
                fprintf(f, "<system-out>");
                tb_gate_xml_escape(f, v);
                fprintf(f, " within ");
                tb_gate_xml_escape(f, bound);
                fprintf(f, "</system-out></testcase>\n");
                continue;
            }
            const char *tag = c->status == TB_GATE_FAIL ? "failure" : "error";
            fprintf(f, "\n      <%s type=\"%s\" message=\"", tag,
                    c->status == TB_GATE_FAIL ? "gate" : "bake");
            tb_gate_xml_escape(f, c->message);
            fprintf(f, "\">value ");
            tb_gate_xml_escape(f, v);
            fprintf(f, ", bound ");
            tb_gate_xml_escape(f, bound);
            if (isfinite(c->baseline)) {
                char b[32];
                tb_gate_value_text(&g->gate[i], c->baseline, b, sizeof b);
                fprintf(f, ", baseline ");
                tb_gate_xml_escape(f, b);
            }
            fprintf(f, "</%s>\n    </testcase>\n", tag);
        }
        fprintf(f, "    <system-out>");
        char line[4400];
        snprintf(line, sizeof line, "bake of seed %lld in %s", (long long)sd->seed, sd->dir);
        tb_gate_xml_escape(f, line);
        if (sd->error[0]) {
            fprintf(f, ": ");
            tb_gate_xml_escape(f, sd->error);
        }
        fprintf(f, "</system-out>\n  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    return tb_fs_tmp_commit(&tmp, err);
}

static int s_gate_json(const char *path, const s_run_t *r, tb_err_t *err)
{
    const tb_gates_t *g = r->gates;
    cJSON *root = cJSON_CreateObject();
    cJSON *tool = cJSON_AddObjectToObject(root, "tool");
    cJSON_AddStringToObject(tool, "version", tb_version());
    cJSON_AddStringToObject(tool, "build_id", tb_build_id());
    cJSON_AddStringToObject(root, "gates_file", g->source);
    cJSON_AddBoolToObject(root, "passed", r->failed == 0);
    cJSON_AddNumberToObject(root, "checks", r->checks);
    cJSON_AddNumberToObject(root, "failed", r->failed);
    if (r->steps)
        cJSON_AddNumberToObject(root, "steps", r->steps);
    if (r->no_incision)
        cJSON_AddBoolToObject(root, "test_no_incision", true);
    if (r->baseline_dir)
        cJSON_AddStringToObject(root, "baseline", r->baseline_dir);
    cJSON *seeds = cJSON_AddArrayToObject(root, "seeds");
    for (int s = 0; s < r->n_seeds; s++) {
        const s_seed_t *sd = &r->seed[s];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "seed", (double)sd->seed);
        cJSON_AddStringToObject(o, "dir", sd->dir);
        cJSON_AddBoolToObject(o, "baked", sd->baked);
        if (sd->error[0])
            cJSON_AddStringToObject(o, "error", sd->error);
        cJSON_AddNumberToObject(o, "seconds", sd->seconds);
        if (sd->steps)
            cJSON_AddNumberToObject(o, "steps", sd->steps);
        cJSON *checks = cJSON_AddArrayToObject(o, "checks");
        for (int i = 0; i < g->n; i++) {
            const tb_gate_check_t *c = &sd->check[i];
            cJSON *k = cJSON_CreateObject();
            char bound[80];
            tb_gate_bound_text(&g->gate[i], bound, sizeof bound);
            cJSON_AddStringToObject(k, "gate", g->gate[i].name);
            cJSON_AddStringToObject(k, "bound", bound);
            if (isfinite(c->value))
                cJSON_AddNumberToObject(k, "value", c->value);
            else
                cJSON_AddNullToObject(k, "value");
            if (isfinite(c->baseline)) {
                cJSON_AddNumberToObject(k, "baseline", c->baseline);
                if (isfinite(c->value))
                    cJSON_AddNumberToObject(k, "change", s_change(c));
            }
            cJSON_AddStringToObject(k, "status", s_status_name(c->status));
            if (c->message[0])
                cJSON_AddStringToObject(k, "message", c->message);
            cJSON_AddItemToArray(checks, k);
        }
        cJSON_AddItemToArray(seeds, o);
    }
    char *text = tb_json_print(root, true);
    cJSON_Delete(root);
    if (!text)
        return tb_err_set(err, TB_E_NOMEM, "gate: out of memory printing gate.json");
    int rc = tb_fs_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}

static void s_on_listening(void *user, const char *endpoint)
{
    (void)user;
    printf("gate: listening for workers on %s\n", endpoint);
    fflush(stdout);
}

/* The step count a bake recorded in its meta.json (0 when it cannot be read). */
static int s_meta_steps(const char *meta_path)
{
    char *text;
    size_t bytes;
    if (!meta_path[0] || tb_fs_read_all(meta_path, S_MAX_META_BYTES, &text, &bytes, NULL) != 0)
        return 0;
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *steps =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "bake"), "steps");
    int n = cJSON_IsNumber(steps) ? steps->valueint : 0;
    cJSON_Delete(root);
    return n;
}

static void s_print_metrics(void)
{
    for (int i = 0; i < tb_gate_metric_count(); i++)
        printf("%-34s %s\n", tb_gate_metric_name(i), tb_gate_metric_what(i));
}

int tb_cmd_gate(int argc, char **argv)
{
    const char *out_dir = "out/gate", *seeds_text = S_DEFAULT_SEEDS, *gates_path = NULL,
               *baseline = NULL, *junit = NULL;
    int64_t steps = 0;
    double circumference_km = 0;
    bool circ_given = false, no_incision = false, print_gates = false, list_metrics = false;
    tb_dispatch_cli_t cli;
    tb_dispatch_cli_init(&cli);
    const tb_opt_t opts[] = {
        {"seeds", TB_OPT_STRING, &seeds_text, NULL, "LIST", "seeds to bake (" S_DEFAULT_SEEDS ")"},
        TB_VERB_OPT_STEPS(&steps),
        {"gates", TB_OPT_STRING, &gates_path, NULL, "FILE",
         "the gates file (default: the built-in gates; --print-gates shows them)"},
        {"baseline", TB_OPT_STRING, &baseline, NULL, "DIR",
         "an earlier gate run's --out: report each statistic's change, seed by seed"},
        {"out", TB_OPT_STRING, &out_dir, NULL, "DIR",
         "output directory (out/gate): seed-N/ bakes, gate.json, gate.txt, junit.xml"},
        {"junit", TB_OPT_STRING, &junit, NULL, "FILE", "JUnit XML report (default OUT/junit.xml)"},
        TB_VERB_OPT_CIRCUMFERENCE(&circumference_km, &circ_given,
                                  "demo planet only: its circumference (25)"),
        {"test-no-incision", TB_OPT_FLAG, &no_incision, NULL, NULL,
         "TEST ONLY: turn stream-power incision off (the gates' negative control)"},
        {"print-gates", TB_OPT_FLAG, &print_gates, NULL, NULL,
         "print the gates file in use (the defaults without --gates) and exit"},
        {"list-metrics", TB_OPT_FLAG, &list_metrics, NULL, NULL,
         "list the statistics a gate can name and exit"},
    };
    tb_verb_t v = {.name = "gate",
                   .usage = "terrain gate [MANIFEST] [--seeds 7,9342,67914] [--steps N] "
                            "[--gates FILE] [--baseline DIR] [--out DIR] [--junit FILE] "
                            "[--workers N] [--threads N] ...",
                   TB_VERB_SHARED(opts, cli.opts),
                   .max_positional = 1};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    tb_err_t err;
    if (list_metrics) {
        s_print_metrics();
        return TB_EXIT_OK;
    }
    tb_gates_t gates;
    if (tb_gates_load(gates_path, &gates, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    if (print_gates) {
        if (!gates_path) {
            fputs(tb_gate_defaults_json(), stdout);
        } else {
            char *text;
            size_t bytes;
            if (tb_fs_read_all(gates_path, (size_t)1 << 20, &text, &bytes, &err) != 0)
                return tb_verb_error(&v, TB_EXIT_USAGE, &err);
            fputs(text, stdout);
            free(text);
        }
        return TB_EXIT_OK;
    }
    tb_bake_opts_t o = {0};
    if (tb_dispatch_cli_apply(&cli, &o.dispatch, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    int64_t seed_list[S_MAX_SEEDS];
    int n_seeds = tb_verb_seed_list(&v, seeds_text, "seeds", seed_list, S_MAX_SEEDS);
    if (n_seeds < 0)
        return TB_EXIT_USAGE;
    if (baseline && !tb_fs_exists(baseline))
        return tb_verb_usage(&v, "--baseline %s: no such directory (an earlier gate run's --out)",
                             baseline);
    if (cli.verbose)
        tb_log_set_level(TB_LOG_DEBUG);
    s_seed_t *seeds = calloc((size_t)n_seeds, sizeof *seeds);
    if (!seeds) {
        tb_err_set(&err, TB_E_NOMEM, "out of memory");
        return tb_verb_error(&v, TB_EXIT_FAILED, &err);
    }
    s_run_t run = {.gates = &gates,
                   .seed = seeds,
                   .n_seeds = n_seeds,
                   .out_dir = out_dir,
                   .baseline_dir = baseline,
                   .steps = (int)steps,
                   .no_incision = no_incision};
    status = TB_EXIT_OK;
    /* Baselines are read before anything is baked: --baseline may be this run's own --out. */
    for (int s = 0; s < n_seeds; s++) {
        seeds[s].seed = seed_list[s];
        if (baseline)
            s_read_baseline(baseline, &seeds[s]);
    }
    o.manifest_path = v.n_positional ? v.positional[0] : NULL;
    o.input.has_circumference = circ_given;
    o.input.circumference_km = circumference_km;
    o.steps = (int)steps;
    o.no_incision = no_incision;
    o.quiet = true;
    o.dispatch.interrupted = tb_signals_catch();
    o.dispatch.on_listening = s_on_listening;
    for (int s = 0; s < n_seeds; s++) {
        s_seed_t *sd = &seeds[s];
        char sub[64];
        snprintf(sub, sizeof sub, "seed-%lld", (long long)sd->seed);
        if (tb_fs_join(sd->dir, sizeof sd->dir, out_dir, sub, &err) != 0) {
            status = tb_verb_error(&v, TB_EXIT_USAGE, &err);
            goto done;
        }
        o.input.has_seed = true;
        o.input.seed = (uint64_t)sd->seed;
        o.out_dir = sd->dir;
        tb_log_info("seed %lld (%d of %d) into %s", (long long)sd->seed, s + 1, n_seeds, sd->dir);
        tb_bake_outcome_t oc;
        int rc = tb_bake_run(&o, &oc, &err);
        sd->seconds = oc.seconds;
        sd->regions = oc.regions_solved;
        if (rc != 0 && (err.code == TB_E_INTERRUPTED || oc.bad_input)) {
            tb_bake_outcome_free(&oc);
            tb_err_prefix(&err, "seed %lld", (long long)sd->seed);
            status = tb_verb_error(&v, TB_EXIT_USAGE, &err);
            goto done;
        }
        /* A bake that clipped wrote its outputs and its statistics: the clip gate judges it. */
        sd->baked = oc.stats && oc.meta_path[0];
        if (rc != 0)
            snprintf(sd->error, sizeof sd->error, "%s", err.msg);
        if (sd->baked) {
            sd->stats = tb_stats_report_json(oc.stats, &oc.extent, NULL);
            sd->steps = s_meta_steps(oc.meta_path);
        }
        tb_bake_outcome_free(&oc);
        if (sd->baked && !sd->stats) {
            snprintf(sd->error, sizeof sd->error, "out of memory reading the statistics");
            sd->baked = false;
        }
        if (!sd->baked)
            tb_log_error("seed %lld: the bake failed: %s", (long long)sd->seed, sd->error);
        else
            tb_log_info("seed %lld baked in %.1f s (%d regions)%s%s", (long long)sd->seed,
                        sd->seconds, sd->regions, sd->error[0] ? ": " : "", sd->error);
    }
    for (int s = 0; s < n_seeds; s++) {
        s_seed_t *sd = &seeds[s];
        for (int i = 0; i < gates.n; i++) {
            tb_gate_check_t *c = &sd->check[i];
            double base = sd->base_stats ? tb_gate_value(sd->base_stats, &gates.gate[i]) : NAN;
            run.checks++;
            if (!sd->baked) {
                memset(c, 0, sizeof *c);
                c->status = TB_GATE_ERROR;
                c->value = NAN;
                c->baseline = base;
                snprintf(c->message, sizeof c->message, "the bake of seed %lld failed: %s",
                         (long long)sd->seed, sd->error);
                run.failed++;
                continue;
            }
            tb_gate_check(&gates.gate[i], tb_gate_value(sd->stats, &gates.gate[i]), base, c);
            run.failed += c->status != TB_GATE_PASS;
        }
    }
    printf("terrain gate: %d seed%s x %d gates from %s%s, bakes in %s/seed-N\n", n_seeds,
           n_seeds > 1 ? "s" : "", gates.n, gates.source,
           no_incision ? ", TEST ONLY: stream-power incision off" : "", out_dir);
    s_table(stdout, &run);
    if (baseline)
        s_baseline_table(stdout, &run);
    for (int s = 0; s < n_seeds; s++)
        for (int i = 0; i < gates.n; i++)
            if (seeds[s].check[i].status != TB_GATE_PASS)
                printf("%s seed %lld: %s\n", s_status_name(seeds[s].check[i].status),
                       (long long)seeds[s].seed, seeds[s].check[i].message);
    char path[4200], jpath[4200];
    if (tb_fs_mkdir_p(out_dir, &err) != 0 ||
        tb_fs_join(path, sizeof path, out_dir, "gate.json", &err) != 0 ||
        s_gate_json(path, &run, &err) != 0) {
        status = tb_verb_error(&v, TB_EXIT_FAILED, &err);
        goto done;
    }
    /* each seed's report.html gains this run's gate table (docs/report.md) */
    for (int s = 0; s < n_seeds; s++)
        if (seeds[s].baked && tb_report_write(seeds[s].dir, &err) != 0)
            tb_log_warn("%s", err.msg);
    if (tb_fs_join(path, sizeof path, out_dir, "gate.txt", &err) == 0) {
        tb_fs_tmp_t tmp;
        if (tb_fs_tmp_open(&tmp, path, &err) == 0) {
            s_table(tmp.fp, &run);
            if (baseline)
                s_baseline_table(tmp.fp, &run);
            if (tb_fs_tmp_commit(&tmp, &err) != 0)
                tb_log_warn("%s", err.msg);
        }
    }
    if (!junit) {
        if (tb_fs_join(jpath, sizeof jpath, out_dir, "junit.xml", &err) != 0) {
            status = tb_verb_error(&v, TB_EXIT_FAILED, &err);
            goto done;
        }
        junit = jpath;
    }
    if (s_junit(junit, &run, &err) != 0) {
        status = tb_verb_error(&v, TB_EXIT_FAILED, &err);
        goto done;
    }
    if (run.failed == 0)
        printf("gate: PASS, %d of %d checks; JUnit in %s\n", run.checks, run.checks, junit);
    else
        printf("gate: FAIL, %d of %d checks failed; JUnit in %s\n", run.failed, run.checks, junit);
    status = run.failed ? TB_EXIT_FAILED : TB_EXIT_OK;
done:
    for (int s = 0; s < n_seeds; s++) {
        cJSON_Delete(seeds[s].stats);
        cJSON_Delete(seeds[s].base_stats);
    }
    free(seeds);
    return status;
}
