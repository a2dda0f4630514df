/* The gates of `terrain gate`: bounds on the statistics of a bake, checked seed by seed
 * (docs/gate.md).
 *
 * A gates file is JSON, checked as strictly as the manifest (an unknown key is refused by its
 * path):
 *
 *   {"description": "optional text",
 *    "gates": {"slope_area_exponent": {"min": -0.8, "max": -0.15, "why": "optional text"},
 *              "clip_fraction": {"max": 0.001},
 *              "drainage_density_per_km": {"min": 0.35, "max_change": 0.05}}}
 *
 * Each key of "gates" names a statistic (tb_gate_metric_count lists them: the printed block's
 * lines, and "painted.CLASS.STAT" for a painted legend class of that name, read from the same JSON
 * that meta.json holds under "statistics"); each gate has a "min", a "max" or both (inclusive), and
 * optionally "max_change", the largest |change| against a baseline bake of the same seed (checked
 * only with --baseline). The gates file lists every gate that is checked; the built-in defaults
 * (tb_gate_defaults_json) are a gates file like any other.
 *
 * Values come from a statistics JSON object (tb_stats_report_json, or a meta.json's "statistics"),
 * so a baseline is read back from an earlier bake's meta.json by the same code that reads a fresh
 * one. A statistic that is null there (a fit with too few bins, a class with no land) has no value
 * and fails every gate on it.
 */
#ifndef TB_GATE_H
#define TB_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

#include "common/error.h"

#define TB_GATE_MAX 64
#define TB_GATE_NAME_MAX 64

typedef struct {
    char name[TB_GATE_NAME_MAX]; /* a statistic's name (tb_gate_metric_name) */
    int metric;                  /* its index */
    bool has_min, has_max, has_max_change;
    double min, max, max_change;
} tb_gate_t;

typedef struct {
    tb_gate_t gate[TB_GATE_MAX];
    int n;
    char source[4200]; /* the file, or "(built-in defaults)" */
} tb_gates_t;

/* The statistics a gate may name. */
int tb_gate_metric_count(void);
const char *tb_gate_metric_name(int i);
/* What it measures, one line (for --list-metrics and the docs). */
const char *tb_gate_metric_what(int i);
/* Its index, or -1. */
int tb_gate_metric_find(const char *name);

/* The built-in gates as a gates file (a static string). */
const char *tb_gate_defaults_json(void);

/* Parses a gates file's text; name is the file for messages. Returns 0, or -1 with *err naming the
 * key by its path ("gates.slope_area_exponent.maxx: unknown key ...", TB_E_UNKNOWN_KEY) or the bad
 * value (TB_E_INVALID, TB_E_FORMAT for text that is not JSON). */
int tb_gates_parse(const char *text, const char *name, tb_gates_t *out, tb_err_t *err);
/* Reads and parses a gates file; path NULL gives the built-in defaults. */
int tb_gates_load(const char *path, tb_gates_t *out, tb_err_t *err);

/* The value of statistic `metric` in a statistics JSON object; NaN when it is absent or null (and
 * for a painted-class statistic, whose class is in the gate's name: use tb_gate_value). */
double tb_gate_metric_value(const cJSON *statistics, int metric);
/* The value gate g reads: tb_gate_metric_value, or for "painted.CLASS.STAT" the element of
 * "painted_classes" named CLASS. NaN when absent, null or the class has no land. */
double tb_gate_value(const cJSON *statistics, const tb_gate_t *g);

typedef enum { TB_GATE_PASS = 0, TB_GATE_FAIL = 1, TB_GATE_ERROR = 2 } tb_gate_status_t;

/* One gate on one seed. */
typedef struct {
    tb_gate_status_t status;
    double value;      /* NaN: no value */
    double baseline;   /* NaN: no baseline */
    char message[256]; /* why it failed, or "" */
} tb_gate_check_t;

/* Checks value (and, when baseline is finite, the change) against gate g. */
void tb_gate_check(const tb_gate_t *g, double value, double baseline, tb_gate_check_t *out);

/* The bound as text: "-0.80 .. -0.15", ">= 0.35", "<= 0.001"; and a value in the gate's format. */
void tb_gate_bound_text(const tb_gate_t *g, char *out, size_t n);
void tb_gate_value_text(const tb_gate_t *g, double v, char *out, size_t n);

/* Writes s with the five XML special characters escaped (and control characters other than tab,
 * newline and carriage return dropped, which XML 1.0 cannot hold). */
void tb_gate_xml_escape(FILE *out, const char *s);

#endif
