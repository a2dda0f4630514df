/* report.html: the page a farm operator watches while a bake runs and an author reads when it ends
 * (docs/report.md).
 *
 * Two writers share one page generator:
 *   - the live writer (tb_report_live_*), driven by the bake: the phase, the jobs (queued, running
 *     with worker, attempt, progress and elapsed, done, failed with their errors), the workers and
 * an ETA, rewritten at most every `interval_s` seconds from the dispatch engine's on_tick, and the
 *     page reloads itself; when the bake fails or is interrupted, a last page says so;
 *   - tb_report_write, which rebuilds the finished page from OUT/meta.json (and OUT/../gate.json
 * when `terrain gate` ran the bake): the verdict, histograms as inline SVG, the plan, every map,
 * the job timeline per worker, the hashes and links to every output. `terrain report OUT` and the
 * end of a bake both call it. Every write goes to a temporary name and is renamed, so the page is
 * always whole. Nothing here reads a file the page links to, except to leave out images that are
 * not there and to read the 3D view's index of the reduced tiles (terrain.h).
 */
#ifndef TB_REPORT_H
#define TB_REPORT_H

#include <cJSON.h>

#include "common/error.h"
#include "common/manifest.h"
#include "coordinator/farm/dispatch.h"
#include "jobs/detail/tile.h"
#include "jobs/plan/plan.h"
#include "jobs/stats/stats.h"

#define TB_REPORT_FILE "report.html"
/* Seconds between live rewrites: "every few seconds, never on every event". */
#define TB_REPORT_LIVE_INTERVAL_S 2.0

/* ---- what meta.json gains for the page ---- */

/* The statistics' histograms, compactly, for meta.json's "histograms": slope in 1-degree bins
 * (0..90), relief and land elevation re-binned to at most 48 bars of a round width over the
 * bake's range, per uplift class and for all land. NULL when memory runs out. */
cJSON *tb_report_histograms_json(const tb_stats_t *stats);

/* The inputs' hashes for meta.json's "inputs": the resolved manifest's XXH3, the manifest,
 * painting and legend files' XXH3 (files read when this is called), and the class raster's. NULL
 * when memory runs out. */
cJSON *tb_report_inputs_json(const tb_manifest_t *m, const tb_plan_t *plan);

/* ---- the finished page ---- */

/* Rewrites OUT/report.html from OUT/meta.json and what lies beside it. Returns 0, or -1 with *err
 * naming the file (TB_E_IO when meta.json is missing: the bake did not finish). */
int tb_report_write(const char *out_dir, tb_err_t *err);

/* ---- the live page ---- */

typedef struct tb_report_live_t tb_report_live_t;

/* A live writer for a bake into out_dir of `plan` at `steps` (plan borrowed: it must outlive the
 * writer); writes the first page (phase "starting") at once and starts the writer thread, which
 * rewrites the page every TB_REPORT_LIVE_INTERVAL_S while anything runs, moves the terminal bar or
 * prints a progress line every tb_log_progress_every() seconds (common/log.h) with the current
 * phase's done/total, rate and ETA (coordinator/report/progress.h). Failures to write are logged
 * once and never fail the bake. NULL when memory runs out (the bake goes on without a live page).
 */
tb_report_live_t *tb_report_live_new(const char *out_dir, const tb_plan_t *plan, int steps,
                                     int regions_solved);
/* A new phase begins ("solve", "tiles"): the page is rewritten now. d is unused (each phase's
 * engine reports through tb_report_live_tick). */
void tb_report_live_phase(tb_report_live_t *self, const char *phase, const tb_dispatch_t *d);
/* The hook of every dispatching phase: call it from the engine's on_tick (dispatch.h) with the
 * engine. It snapshots d's record as the current phase's dispatch (at most every half second, and
 * whenever a job's state changed) and returns; the writer thread draws it. Cheap; NULL accepted. */
void tb_report_live_tick(tb_report_live_t *self, const tb_dispatch_t *d);
/* The hook of the tiles phase: call it for every tile result as its files are written, in any
 * order, from any thread: writes the tile's reduced copy for the 3D view
 * (coordinator/report/terrain.h). A failure is logged once and never fails the bake. */
void tb_report_live_tile(tb_report_live_t *self, const tb_tile_result_t *r);
/* meta.json's "timeline" (the driver adds it): every phase's start and seconds and every
 * dispatch's start, in seconds from the bake's start, with the meta.json path of its record
 * ("dispatch" for the solve, "<phase>.dispatch" otherwise), so the finished page draws every job on
 * one clock. Caller owns it; NULL for a NULL writer. */
cJSON *tb_report_live_timeline_json(tb_report_live_t *self);
/* The end of the bake (d unused): stops the writer thread. With meta_written, the finished page
 * is written from meta.json (tb_report_write); otherwise a last live page says the bake failed (or
 * was interrupted, when err->code is TB_E_INTERRUPTED) with err's message, and stops reloading. */
void tb_report_live_finish(tb_report_live_t *self, const tb_dispatch_t *d, bool meta_written,
                           const tb_err_t *err);
void tb_report_live_destroy(tb_report_live_t **self_p);

#endif
