/* The report page generator shared by the live and the finished writers (report.h): a document in
 * meta.json's shape in, one self-contained HTML page out (docs/report.md). */
#ifndef TB_REPORT_PAGE_H
#define TB_REPORT_PAGE_H

#include <stddef.h>

#include <cJSON.h>

#include "common/error.h"
#include "jobs/detail/lattice.h"

typedef struct {
    const char *state;       /* "finished", "running", "failed", "interrupted" */
    const char *phase;       /* running: the bake's phase ("solve", ...) */
    const char *trail;       /* running: the phases so far, comma-separated, the current last */
    const char *error;       /* failed, interrupted: the bake's error; NULL otherwise */
    const char *eta;         /* running: the ETA sentence; NULL when there is none */
    double written_unix;     /* when the page is written, seconds since 1970 */
    double started_unix;     /* when the bake started (0: unknown) */
    double interval_s;       /* running: the page reloads after this long */
    const char *out_dir;     /* images not found here are left out */
    const cJSON *gate;       /* this bake's seed entry of gate.json, or NULL */
    const char *gate_source; /* where it came from ("../gate.json") */
    const tb_tile_lattice_t *lattice; /* the tile lattice for the map of tile states, or NULL */
    const cJSON *terrain; /* finished: the 3D view's index (terrain.h), or NULL: no 3D view */
} tb_report_page_t;

/* The page of `doc` (meta.json, or the live document: "live" fields, "plan", "dispatch", "bake").
 * NULL when memory runs out; the caller frees the text. */
char *tb_report_page(const cJSON *doc, const tb_report_page_t *pg, size_t *len);

/* Writes the page text to out_dir/report.html atomically. 0, or -1 with *err. */
int tb_report_page_save(const char *out_dir, const char *text, size_t n, tb_err_t *err);

/* The page's stylesheet and script (page_assets.c). */
extern const char tb_report_css[];
extern const char tb_report_js[];

#endif
