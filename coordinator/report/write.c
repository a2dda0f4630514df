/* The finished page of report.html, from meta.json; see report.h (the live page is live.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/version.h"
#include "coordinator/report/html.h"
#include "coordinator/report/page.h"
#include "coordinator/report/report.h"
#include "coordinator/report/terrain.h"

#define S_MAX_META_BYTES ((size_t)256 << 20)

static double s_unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tb_report_page_save(const char *out_dir, const char *text, size_t n, tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, out_dir, TB_REPORT_FILE, err) != 0)
        return -1;
    return tb_fs_write_atomic(path, text, n, err);
}

static int s_write_page(const char *out_dir, const cJSON *doc, const tb_report_page_t *pg,
                        tb_err_t *err)
{
    size_t n;
    char *text = tb_report_page(doc, pg, &n);
    if (!text)
        return tb_err_set(err, TB_E_NOMEM, "%s/%s: out of memory writing the page", out_dir,
                          TB_REPORT_FILE);
    int rc = tb_report_page_save(out_dir, text, n, err);
    free(text);
    return rc;
}

/* ---- the 3D view's scripts (docs/report.md, "The 3D view") ---- */

extern const unsigned char tb_report_asset_three[], tb_report_asset_view3d[];
extern const size_t tb_report_asset_three_len, tb_report_asset_view3d_len;

/* three.js as npm ships it is an ES module, and a page opened from file:// may not import modules
 * (Chromium refuses them across the null origin), but it may run classic scripts: the module's body
 * goes into a function and its final `export{a as B,...}` becomes window.THREE = {B: a, ...}. */
static char *s_three_classic(size_t *len, tb_err_t *err)
{
    const char *src = (const char *)tb_report_asset_three;
    const char *ex = NULL;
    for (const char *p = strstr(src, "export{"); p; p = strstr(p + 1, "export{"))
        ex = p;
    const char *end = ex ? strchr(ex, '}') : NULL;
    if (!ex || !end) {
        tb_err_set(err, TB_E_INTERNAL, "the vendored three.js has no export list");
        return NULL;
    }
    tb_html_t h = {0};
    tb_html_printf(&h, "(function(){\"use strict\";\n%.*s\nwindow.THREE={", (int)(ex - src), src);
    const char *p = ex + 7;
    bool first = true;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *item_end = comma ? comma : end;
        const char *as = NULL;
        for (const char *q = p; q + 4 <= item_end; q++)
            if (memcmp(q, " as ", 4) == 0)
                as = q;
        if (as)
            tb_html_printf(&h, "%s%.*s:%.*s", first ? "" : ",", (int)(item_end - as - 4), as + 4,
                           (int)(as - p), p);
        else
            tb_html_printf(&h, "%s%.*s:%.*s", first ? "" : ",", (int)(item_end - p), p,
                           (int)(item_end - p), p);
        first = false;
        p = item_end + 1;
    }
    tb_html_printf(&h, "};\n})();\n");
    char *text = tb_html_take(&h, len);
    if (!text)
        tb_err_set(err, TB_E_NOMEM, "out of memory for three.js");
    return text;
}

/* Writes OUT/report_assets/three.js and view3d.js (rewritten only when they differ). */
static int s_write_assets(const char *out_dir, tb_err_t *err)
{
    char dir[4200], path[4400];
    if (tb_fs_join(dir, sizeof dir, out_dir, "report_assets", err) != 0 ||
        tb_fs_mkdir_inside(dir, err) != 0)
        return -1;
    size_t n;
    char *three = s_three_classic(&n, err);
    if (!three)
        return -1;
    const struct {
        const char *name;
        const void *data;
        size_t n;
    } files[] = {{"three.js", three, n},
                 {"view3d.js", tb_report_asset_view3d, tb_report_asset_view3d_len}};
    int rc = 0;
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        char *old = NULL;
        size_t on = 0;
        tb_err_t e;
        bool same = tb_fs_exists(path) &&
                    tb_fs_read_all(path, (size_t)64 << 20, &old, &on, &e) == 0 &&
                    on == files[i].n && memcmp(old, files[i].data, on) == 0;
        free(old);
        if (!same)
            rc = tb_fs_write_atomic(path, files[i].data, files[i].n, err);
    }
    free(three);
    return rc;
}

/* The tile lattice's columns and rows from OUT/tiles/index.json (for the map of tile states). */
static bool s_lattice(const char *out_dir, tb_tile_lattice_t *L)
{
    char path[4400], *text = NULL;
    size_t n = 0;
    tb_err_t e;
    snprintf(path, sizeof path, "%s/tiles/index.json", out_dir);
    if (!tb_fs_exists(path) || tb_fs_read_all(path, (size_t)64 << 20, &text, &n, &e) != 0)
        return false;
    cJSON *idx = cJSON_ParseWithLength(text, n);
    free(text);
    memset(L, 0, sizeof *L);
    L->cols = (int64_t)tb_json_num(idx, "lattice.columns");
    L->rows = (int64_t)tb_json_num(idx, "lattice.rows");
    L->tile_cells = (int64_t)tb_json_num(idx, "lattice.tile_samples");
    L->cell_m = tb_json_num(idx, "lattice.cell_m");
    cJSON_Delete(idx);
    return L->cols > 0 && L->rows > 0;
}

static cJSON *s_read_json(const char *path, tb_err_t *err)
{
    char *text;
    size_t n;
    if (tb_fs_read_all(path, S_MAX_META_BYTES, &text, &n, err) != 0)
        return NULL;
    cJSON *doc = cJSON_ParseWithLength(text, n);
    free(text);
    if (!doc)
        tb_err_set(err, TB_E_FORMAT, "%s: not JSON", path);
    return doc;
}

/* The last path component of dir, without trailing slashes. */
static void s_basename(const char *dir, char *out, size_t n)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    snprintf(out, n, "%.*s", (int)(len - start), dir + start);
}

/* gate.json one level up, when `terrain gate` baked this directory: its entry for this seed. */
static const cJSON *s_gate_entry(const cJSON *gate, const char *out_dir, double seed)
{
    char mine[256], theirs[256];
    s_basename(out_dir, mine, sizeof mine);
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(gate, "seeds"))
    {
        s_basename(tb_json_str(s, "dir", ""), theirs, sizeof theirs);
        if (strcmp(mine, theirs) == 0 && tb_json_num(s, "seed") == seed)
            return s;
    }
    return NULL;
}

int tb_report_write(const char *out_dir, tb_err_t *err)
{
    char path[4200], gpath[4200];
    if (tb_fs_join(path, sizeof path, out_dir, "meta.json", err) != 0)
        return -1;
    if (!tb_fs_exists(path))
        return tb_err_set(err, TB_E_IO,
                          "%s: not found: %s holds no finished bake (a bake that did "
                          "not finish leaves only its last live %s)",
                          path, out_dir, TB_REPORT_FILE);
    cJSON *doc = s_read_json(path, err);
    if (!doc)
        return -1;
    if (!cJSON_IsObject(cJSON_GetObjectItem(doc, "bake")) ||
        !cJSON_IsObject(cJSON_GetObjectItem(doc, "dispatch"))) {
        cJSON_Delete(doc);
        return tb_err_set(err, TB_E_FORMAT,
                          "%s: not a bake's meta.json (no \"bake\" or "
                          "\"dispatch\" object)",
                          path);
    }
    cJSON *gate = NULL;
    tb_report_page_t pg = {.state = "finished", .written_unix = s_unix_now(), .out_dir = out_dir};
    if (tb_fs_join(gpath, sizeof gpath, out_dir, "../gate.json", NULL) == 0 &&
        tb_fs_exists(gpath)) {
        tb_err_t gerr;
        gate = s_read_json(gpath, &gerr);
        pg.gate = s_gate_entry(gate, out_dir, tb_json_num(doc, "manifest.seed"));
        pg.gate_source = "../gate.json";
    }
    tb_tile_lattice_t L;
    if (s_lattice(out_dir, &L))
        pg.lattice = &L;
    cJSON *terrain = tb_terrain_index(out_dir);
    tb_err_t aerr;
    if (terrain && s_write_assets(out_dir, &aerr) != 0) {
        tb_log_warn("report.html: no 3D view: %s", aerr.msg);
        cJSON_Delete(terrain);
        terrain = NULL;
    }
    pg.terrain = terrain;
    int rc = s_write_page(out_dir, doc, &pg, err);
    cJSON_Delete(terrain);
    cJSON_Delete(gate);
    cJSON_Delete(doc);
    return rc;
}
