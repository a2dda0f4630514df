/* The studio's server (studio.h): routes, the token, body limits, saving the painting and legend,
 * and the plan and bake children. Typical sizes: a painting of 1250 x 400 to 12500 x 4000 pixels
 * (a few hundred KiB to a few MiB as PNG), a legend of a few KiB; a save body is the PNG in base64
 * inside JSON. The invariant: nothing reaches the painting or the legend on disk that the plan's
 * own readers (tb_png_read_mem at the manifest's painting size, tb_legend_parse) have not read
 * back first, and nothing overwrites a file that changed since the page loaded it unless the page
 * says so (force). */
#include "coordinator/studio/studio.h"

#include <arpa/inet.h>
#include <cJSON.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/manifest.h"
#include "common/png_io.h"
#include "coordinator/bake/planet_input.h"
#include "coordinator/studio/child.h"
#include "coordinator/studio/save.h"
#include "jobs/plan/overlay.h"

extern const unsigned char tb_report_asset_studio_page[];
extern const size_t tb_report_asset_studio_page_len;

#define S_SMALL_BODY 0 /* routes that take no body */
#define S_STAMP_MAX TB_STUDIO_STAMP_MAX
#define S_TAIL_MAX 65536

struct tb_studio_t {
    tb_studio_config_t cfg;
    char manifest_path[TB_PATH_MAX];
    char out_dir[TB_PATH_MAX];
    char painting_path[TB_PATH_MAX];
    char legend_path[TB_PATH_MAX];
    /* the overlay sheet and its marks (docs/plan.md, "The overlay"); empty without one */
    char overlay_path[TB_PATH_MAX];
    char overlay_legend_path[TB_PATH_MAX];
    int64_t painting_w, painting_h, planet_w, planet_h;
    double cell_m;
    size_t save_limit; /* the largest save body: the painting's PNG in base64 and a legend */
    char token[TB_STUDIO_TOKEN_HEX + 1];
    struct MHD_Daemon *daemon;
    int port;
    tb_studio_child_t *child;
};

/* One request's body as it arrives, kept only up to the route's limit. */
typedef struct {
    int route;
    char *body;
    size_t len, limit;
    bool too_big;
    bool refused; /* answered on the first call: nothing more to do */
} s_req_t;

typedef enum MHD_Result (*s_handler_t)(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r);

/* ---- replies ---- */

static enum MHD_Result s_reply(struct MHD_Connection *c, unsigned code, const char *type,
                               const void *data, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", type);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer"); /* the token is in the URL */
    enum MHD_Result rc = MHD_queue_response(c, code, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* Replies with the JSON of *o and deletes it. */
static enum MHD_Result s_reply_json(struct MHD_Connection *c, unsigned code, cJSON *o)
{
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        return s_reply(c, 500, "application/json", "{\"error\":\"out of memory\"}", 25);
    enum MHD_Result rc = s_reply(c, code, "application/json", text, strlen(text));
    free(text);
    return rc;
}

static enum MHD_Result s_fail(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result s_fail(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tb_log_info("refused (%u): %s", code, msg);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    return s_reply_json(c, code, o);
}

/* ---- files ---- */

/* "SIZE:XXH3" of a file, or "missing": what the page loaded, compared again at save. */
static void s_stamp(const char *path, char out[S_STAMP_MAX])
{
    tb_err_t err;
    uint64_t h;
    int fd;
    uint64_t bytes;
    if (tb_fs_open_regular(path, &fd, &bytes, &err) != 0) {
        snprintf(out, S_STAMP_MAX, "missing");
        return;
    }
    close(fd);
    if (tb_fs_hash_file(path, &h, &err) != 0)
        snprintf(out, S_STAMP_MAX, "unreadable");
    else
        snprintf(out, S_STAMP_MAX, "%llu:%016llx", (unsigned long long)bytes,
                 (unsigned long long)h);
}

/* The last S_TAIL_MAX bytes of a file as a JSON string item ("" when missing). */
static cJSON *s_tail(const char *path)
{
    static char buf[S_TAIL_MAX + 1];
    size_t got = 0;
    FILE *fp = fopen(path, "rb");
    if (fp) {
        long size = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : 0;
        if (fseek(fp, size > S_TAIL_MAX ? size - S_TAIL_MAX : 0, SEEK_SET) == 0)
            got = fread(buf, 1, S_TAIL_MAX, fp);
        fclose(fp);
    }
    buf[got] = '\0';
    for (size_t k = 0; k < got; k++) /* JSON strings hold text: bytes below space become '?' */
        if ((unsigned char)buf[k] < 0x20 && buf[k] != '\n' && buf[k] != '\t')
            buf[k] = buf[k] == '\r' ? '\n' : '?';
    return cJSON_CreateString(buf);
}

static int s_path(char *out, const char *dir, const char *name, tb_err_t *err)
{
    return tb_fs_join(out, TB_PATH_MAX, dir, name, err);
}

/* ---- the routes ---- */

static enum MHD_Result s_page(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r)
{
    return s_reply(c, 200, "text/html; charset=utf-8", tb_report_asset_studio_page,
                   tb_report_asset_studio_page_len);
}

/* The legend on disk as the page edits it: parsed by the manifest's parser and written back as
 * JSON, or the parser's message. */
static void s_add_legend(cJSON *o, const char *path)
{
    tb_err_t err;
    char *text = NULL;
    size_t n;
    tb_legend_t *L = calloc(1, sizeof *L);
    if (L && tb_fs_read_all(path, TB_STUDIO_LEGEND_MAX_BYTES, &text, &n, &err) == 0 &&
        tb_legend_parse(text, path, L, &err) == 0) {
        char *json = tb_legend_to_json(L);
        cJSON_AddItemToObject(o, "value", json ? cJSON_Parse(json) : cJSON_CreateNull());
        free(json);
    } else
        cJSON_AddStringToObject(o, "error", L ? err.msg : "out of memory");
    free(text);
    free(L);
}

/* The overlay's marks on disk as the page edits them: the file's JSON once the plan's parser has
 * read it, or the parser's message. */
static void s_add_overlay_legend(cJSON *o, const char *path)
{
    tb_err_t err;
    char *text = NULL;
    size_t n;
    tb_overlay_legend_t *L = calloc(1, sizeof *L);
    if (L && tb_fs_read_all(path, TB_STUDIO_LEGEND_MAX_BYTES, &text, &n, &err) == 0 &&
        tb_overlay_legend_parse(text, path, L, &err) == 0)
        cJSON_AddItemToObject(o, "value", cJSON_Parse(text));
    else
        cJSON_AddStringToObject(o, "error", L ? err.msg : "out of memory");
    free(text);
    free(L);
}

static cJSON *s_job_json(tb_studio_t *s)
{
    cJSON *o = cJSON_CreateObject();
    tb_studio_child_t *ch = s->child;
    bool running = tb_studio_child_running(ch);
    const char *kind = tb_studio_child_kind(ch);
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddBoolToObject(o, "running", running);
    cJSON_AddNumberToObject(o, "pid", tb_studio_child_pid(ch));
    if (!running && *kind)
        cJSON_AddNumberToObject(o, "exit_status", tb_studio_child_status(ch));
    cJSON_AddNumberToObject(o, "seconds", tb_studio_child_seconds(ch));
    cJSON_AddStringToObject(o, "command", tb_studio_child_command(ch));
    if (*kind) {
        char out_path[TB_PATH_MAX], err_path[TB_PATH_MAX], name[64], line[1024];
        tb_err_t err;
        snprintf(name, sizeof name, "studio-%s.out", kind);
        s_path(out_path, s->out_dir, name, &err);
        snprintf(name, sizeof name, "studio-%s.err", kind);
        s_path(err_path, s->out_dir, name, &err);
        tb_studio_last_line(err_path, "progress: ", line, sizeof line);
        cJSON_AddStringToObject(o, "progress", line);
        cJSON_AddItemToObject(o, "stdout", s_tail(out_path));
        cJSON_AddItemToObject(o, "stderr", s_tail(err_path));
    }
    return o;
}

static enum MHD_Result s_state(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r)
{
    cJSON *o = cJSON_CreateObject();
    char stamp[S_STAMP_MAX];
    cJSON_AddStringToObject(o, "manifest", s->manifest_path);
    cJSON_AddStringToObject(o, "out_dir", s->out_dir);
    cJSON *p = cJSON_AddObjectToObject(o, "painting");
    cJSON_AddStringToObject(p, "path", s->painting_path);
    cJSON_AddNumberToObject(p, "w", (double)s->painting_w);
    cJSON_AddNumberToObject(p, "h", (double)s->painting_h);
    s_stamp(s->painting_path, stamp);
    cJSON_AddStringToObject(p, "stamp", stamp);
    cJSON *l = cJSON_AddObjectToObject(o, "legend");
    cJSON_AddStringToObject(l, "path", s->legend_path);
    s_stamp(s->legend_path, stamp);
    cJSON_AddStringToObject(l, "stamp", stamp);
    s_add_legend(l, s->legend_path);
    if (s->overlay_path[0]) {
        cJSON *ov = cJSON_AddObjectToObject(o, "overlay");
        cJSON_AddStringToObject(ov, "path", s->overlay_path);
        s_stamp(s->overlay_path, stamp);
        cJSON_AddStringToObject(ov, "stamp", stamp);
        cJSON *ol = cJSON_AddObjectToObject(ov, "legend");
        cJSON_AddStringToObject(ol, "path", s->overlay_legend_path);
        s_stamp(s->overlay_legend_path, stamp);
        cJSON_AddStringToObject(ol, "stamp", stamp);
        s_add_overlay_legend(ol, s->overlay_legend_path);
    } else {
        cJSON_AddNullToObject(o, "overlay");
    }
    cJSON *pl = cJSON_AddObjectToObject(o, "planet");
    cJSON_AddNumberToObject(pl, "w", (double)s->planet_w);
    cJSON_AddNumberToObject(pl, "h", (double)s->planet_h);
    cJSON_AddNumberToObject(pl, "cell_m", s->cell_m);
    cJSON_AddNumberToObject(o, "save_limit_bytes", (double)s->save_limit);
    cJSON_AddItemToObject(o, "job", s_job_json(s));
    return s_reply_json(c, 200, o);
}

static enum MHD_Result s_job(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r)
{
    return s_reply_json(c, 200, s_job_json(s));
}

static enum MHD_Result s_serve_png(tb_studio_t *s, struct MHD_Connection *c, const char *path)
{
    tb_err_t err;
    char *data;
    size_t n;
    if (!path[0])
        return s_fail(c, 404, "this manifest has no overlay (template.overlay)");
    if (tb_fs_read_all(path, s->save_limit, &data, &n, &err) != 0)
        return s_fail(c, 500, "%s", err.msg);
    enum MHD_Result rc = s_reply(c, 200, "image/png", data, n);
    free(data);
    return rc;
}

static enum MHD_Result s_painting(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r)
{
    return s_serve_png(s, c, s->painting_path);
}

static enum MHD_Result s_overlay_png(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r)
{
    return s_serve_png(s, c, s->overlay_path);
}

/* Writes every file (painting and legend, and the overlay's sheet and marks when sent) to
 * temporary names, then renames them all: a failure before the renames leaves each file as it was.
 */
static int s_save_write(tb_studio_t *s, const tb_studio_save_t *sv, tb_err_t *err)
{
    unsigned char *png = NULL, *opng = NULL;
    size_t png_n = 0, opng_n = 0;
    char *legend = tb_legend_to_json(&sv->legend);
    int rc = 0;
    if (!legend)
        rc = tb_err_set(err, TB_E_NOMEM, "out of memory writing the legend");
    else if (tb_png_encode(&sv->img, 6, &png, &png_n, err) != 0 ||
             (sv->has_overlay && tb_png_encode(&sv->overlay, 6, &opng, &opng_n, err) != 0))
        rc = -1;
    const void *data[4] = {png, legend, opng, sv->overlay_legend_json};
    size_t bytes[4] = {png_n, legend ? strlen(legend) : 0, opng_n,
                       sv->overlay_legend_json ? strlen(sv->overlay_legend_json) : 0};
    const char *paths[4] = {s->painting_path, s->legend_path, s->overlay_path,
                            s->overlay_legend_path};
    const int n = sv->has_overlay ? 4 : 2;
    tb_fs_tmp_t tmp[4];
    int opened = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        if (tb_fs_tmp_open(&tmp[k], paths[k], err) != 0) {
            rc = -1;
            break;
        }
        opened++;
        if (fwrite(data[k], 1, bytes[k], tmp[k].fp) != bytes[k] || fflush(tmp[k].fp) != 0)
            rc = tb_err_set(err, TB_E_IO, "%s: write failed", tmp[k].tmp_path);
    }
    if (rc != 0) {
        for (int k = 0; k < opened; k++)
            tb_fs_tmp_abort(&tmp[k]);
    } else {
        for (int k = 0; k < opened; k++)
            if (tb_fs_tmp_commit(&tmp[k], err) != 0) { /* a failed commit removes its own */
                for (int j = k + 1; j < opened; j++)
                    tb_fs_tmp_abort(&tmp[j]);
                rc = -1;
                break;
            }
    }
    free(png);
    free(opng);
    free(legend);
    return rc;
}

static enum MHD_Result s_save(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r)
{
    tb_err_t err;
    tb_studio_save_t *sv = calloc(1, sizeof *sv);
    if (!sv)
        return s_fail(c, 500, "out of memory");
    int code = tb_studio_save_parse(r->body ? r->body : "", r->len, s->painting_w, s->painting_h,
                                    s->painting_path, sv, &err);
    if (code == 0 && sv->has_overlay && !s->overlay_path[0])
        code = (tb_err_set(&err, TB_E_INVALID,
                           "an overlay was sent, but %s has no template.overlay to save it to",
                           s->manifest_path),
                422);
    enum MHD_Result rc;
    /* the files a save writes, their stamps as the page loaded them and as they are now */
    static const char *const names[4] = {"painting", "legend", "overlay", "overlay_legend"};
    const char *paths[4] = {s->painting_path, s->legend_path, s->overlay_path,
                            s->overlay_legend_path};
    const char *loaded[4] = {sv->painting_stamp, sv->legend_stamp, sv->overlay_stamp,
                             sv->overlay_legend_stamp};
    const int n = sv->has_overlay ? 4 : 2;
    char now[4][S_STAMP_MAX];
    bool changed[4] = {false}, any = false;
    for (int k = 0; k < n; k++) {
        s_stamp(paths[k], now[k]);
        changed[k] = strcmp(now[k], loaded[k]) != 0;
        any |= changed[k];
    }
    if (code != 0)
        rc = s_fail(c, code, "save: %s", err.msg);
    else if (any && !sv->force) {
        cJSON *o = cJSON_CreateObject();
        char msg[TB_PATH_MAX * 4 + 200];
        size_t len = (size_t)snprintf(msg, sizeof msg, "save:");
        for (int k = 0, m = 0; k < n; k++)
            if (changed[k] && len < sizeof msg)
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s %s", m++ ? " and" : "",
                                        paths[k]);
        if (len < sizeof msg)
            snprintf(msg + len, sizeof msg - len,
                     " changed on disk since the page loaded it: reload it, or save again to "
                     "overwrite it");
        cJSON_AddStringToObject(o, "error", msg);
        cJSON *which = cJSON_AddArrayToObject(o, "changed");
        for (int k = 0; k < n; k++)
            if (changed[k])
                cJSON_AddItemToArray(which, cJSON_CreateString(names[k]));
        tb_log_info("refused (409): %s", msg);
        rc = s_reply_json(c, 409, o);
    } else if (s_save_write(s, sv, &err) != 0)
        rc = s_fail(c, 500, "save: %s", err.msg);
    else {
        cJSON *o = cJSON_CreateObject();
        char key[64];
        for (int k = 0; k < n; k++) {
            s_stamp(paths[k], now[k]);
            snprintf(key, sizeof key, "%s_stamp", names[k]);
            cJSON_AddStringToObject(o, key, now[k]);
        }
        tb_log_info("saved %s (%u x %u) and %s%s%s", s->painting_path, sv->img.w, sv->img.h,
                    s->legend_path, sv->has_overlay ? ", the overlay and its marks" : "",
                    sv->force && any ? " (overwriting)" : "");
        rc = s_reply_json(c, 200, o);
    }
    tb_studio_save_free(sv);
    free(sv);
    return rc;
}

/* Starts a child of `kind` with argv; 202 with the job, 409 when one is running. */
static enum MHD_Result s_run(tb_studio_t *s, struct MHD_Connection *c, const char *kind,
                             char *const argv[])
{
    tb_err_t err;
    char out_path[TB_PATH_MAX], err_path[TB_PATH_MAX], name[64];
    snprintf(name, sizeof name, "studio-%s.out", kind);
    if (s_path(out_path, s->out_dir, name, &err) != 0)
        return s_fail(c, 500, "%s", err.msg);
    snprintf(name, sizeof name, "studio-%s.err", kind);
    if (s_path(err_path, s->out_dir, name, &err) != 0)
        return s_fail(c, 500, "%s", err.msg);
    if (tb_studio_child_start(s->child, kind, argv, out_path, err_path, &err) != 0)
        return s_fail(c, err.code == TB_E_REFUSED ? 409 : 500, "%s: %s", kind, err.msg);
    return s_reply_json(c, 202, s_job_json(s));
}

static enum MHD_Result s_plan(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r)
{
    char out[TB_PATH_MAX];
    tb_err_t err;
    if (s_path(out, s->out_dir, "plan", &err) != 0)
        return s_fail(c, 500, "%s", err.msg);
    char *argv[] = {"terrain", "plan", s->manifest_path, "--out", out, NULL};
    return s_run(s, c, "plan", argv);
}

/* A query argument as an integer in lo..hi; -1 after replying with the error. */
static int s_query_int(struct MHD_Connection *c, const char *key, int64_t lo, int64_t hi,
                       int64_t def, int64_t *out, enum MHD_Result *reply)
{
    const char *text = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
    if (!text) {
        if (def >= lo) {
            *out = def;
            return 0;
        }
        *reply = s_fail(c, 400, "%s: missing (expected an integer in %lld..%lld)", key,
                        (long long)lo, (long long)hi);
        return -1;
    }
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < lo || v > hi) {
        *reply = s_fail(c, 400, "%s=%.40s: expected an integer in %lld..%lld", key, text,
                        (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

static enum MHD_Result s_bake(tb_studio_t *s, struct MHD_Connection *c, s_req_t *r)
{
    int64_t region, steps;
    enum MHD_Result reply = MHD_NO;
    if (s_query_int(c, "region", 1, 1000000, -1, &region, &reply) != 0 ||
        s_query_int(c, "steps", 1, 1000000, 50, &steps, &reply) != 0)
        return reply;
    char out[TB_PATH_MAX], only[24], steps_text[24];
    tb_err_t err;
    if (s_path(out, s->out_dir, "bake", &err) != 0)
        return s_fail(c, 500, "%s", err.msg);
    snprintf(only, sizeof only, "%lld", (long long)region);
    snprintf(steps_text, sizeof steps_text, "%lld", (long long)steps);
    char *argv[] = {
        "terrain", "bake", s->manifest_path, "--only",           only, "--steps", steps_text,
        "--out",   out,    "--no-tiles",     "--progress-every", "1",  NULL};
    return s_run(s, c, "bake", argv);
}

/* The files a plan and a bake write that the page shows: nothing else under OUT is served. */
static const char *const s_plan_files[] = {"plan.json", "map_class.png", "map_regions.png",
                                           "map_tiles.png"};
static const char *const s_bake_files[] = {"preview.png", "summary.txt", "meta.json",
                                           "map_uplift.png", "planet_height.png"};

static const char *s_type(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".png") == 0    ? "image/png"
           : n > 5 && strcmp(name + n - 5, ".json") == 0 ? "application/json"
                                                         : "text/plain; charset=utf-8";
}

static enum MHD_Result s_file(tb_studio_t *s, struct MHD_Connection *c, const char *url)
{
    const char *sub = strncmp(url, "/files/plan/", 12) == 0   ? "plan"
                      : strncmp(url, "/files/bake/", 12) == 0 ? "bake"
                                                              : NULL;
    const char *name = url + 12;
    const char *const *list = sub && sub[0] == 'p' ? s_plan_files : s_bake_files;
    size_t n = sub && sub[0] == 'p' ? sizeof s_plan_files / sizeof *s_plan_files
                                    : sizeof s_bake_files / sizeof *s_bake_files;
    bool known = false;
    for (size_t k = 0; sub && k < n; k++)
        known |= strcmp(name, list[k]) == 0;
    if (!known)
        return s_fail(c, 404,
                      "%.200s: not a file the studio serves (plan: plan.json, "
                      "map_class.png, map_regions.png, map_tiles.png; bake: preview.png, "
                      "summary.txt, meta.json, map_uplift.png, planet_height.png)",
                      url);
    char dir[TB_PATH_MAX], path[TB_PATH_MAX];
    tb_err_t err;
    char *data;
    size_t bytes;
    if (s_path(dir, s->out_dir, sub, &err) != 0 || s_path(path, dir, name, &err) != 0)
        return s_fail(c, 500, "%s", err.msg);
    if (tb_fs_read_all(path, (size_t)1 << 31, &data, &bytes, &err) != 0)
        return s_fail(c, 404, "%s", err.msg);
    enum MHD_Result rc = s_reply(c, 200, s_type(name), data, bytes);
    free(data);
    return rc;
}

typedef struct {
    const char *method, *path;
    s_handler_t run;
    bool body; /* takes a body (up to the save limit) */
} s_route_t;

static const s_route_t s_routes[] = {
    {"GET", "/", s_page, false},
    {"GET", "/api/state", s_state, false},
    {"GET", "/api/job", s_job, false},
    {"GET", "/api/painting.png", s_painting, false},
    {"GET", "/api/overlay.png", s_overlay_png, false},
    {"POST", "/api/save", s_save, true},
    {"POST", "/api/plan", s_plan, false},
    {"POST", "/api/bake", s_bake, false},
};
#define S_N_ROUTES ((int)(sizeof s_routes / sizeof s_routes[0]))
#define S_ROUTE_FILE S_N_ROUTES /* GET /files/{plan,bake}/NAME */

/* ---- the request handler ---- */

static bool s_token_ok(const tb_studio_t *s, struct MHD_Connection *c)
{
    const char *t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (!t || strlen(t) != TB_STUDIO_TOKEN_HEX)
        return false;
    unsigned diff = 0; /* the same time whichever character differs */
    for (int k = 0; k < TB_STUDIO_TOKEN_HEX; k++)
        diff |= (unsigned)(t[k] ^ s->token[k]);
    return diff == 0;
}

/* The first call of a request: token, path, method and declared body size, before any body. -1
 * after queueing the refusal. */
static int s_admit(tb_studio_t *s, struct MHD_Connection *c, const char *url, const char *method,
                   s_req_t *r, enum MHD_Result *reply)
{
    r->route = -1;
    if (!s_token_ok(s, c)) {
        *reply = s_fail(c, 403,
                        "%s %.200s: no or a wrong token (every request carries ?token= from the "
                        "URL terrain studio printed)",
                        method, url);
        return -1;
    }
    bool path_known = false;
    for (int k = 0; k < S_N_ROUTES; k++)
        if (strcmp(url, s_routes[k].path) == 0) {
            path_known = true;
            if (strcmp(method, s_routes[k].method) == 0)
                r->route = k;
        }
    if (strncmp(url, "/files/", 7) == 0) {
        path_known = true;
        if (strcmp(method, "GET") == 0)
            r->route = S_ROUTE_FILE;
    }
    if (!path_known) {
        *reply =
            s_fail(c, 404, "%.200s: no such page or endpoint (docs/studio.md lists them)", url);
        return -1;
    }
    if (r->route < 0) {
        *reply = s_fail(c, 405, "%s %.200s: method not allowed", method, url);
        return -1;
    }
    r->limit = r->route < S_N_ROUTES && s_routes[r->route].body ? s->save_limit : S_SMALL_BODY;
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(cl, &end, 10);
        if (!*cl || *end || errno || n > r->limit) {
            if (r->limit == 0)
                *reply =
                    s_fail(c, 413, "%s %.200s: a body of %.30s bytes; this endpoint takes none",
                           method, url, cl);
            else
                *reply = s_fail(c, 413,
                                "%s %.200s: a body of %.30s bytes; this endpoint takes at most %zu "
                                "(the painting's PNG in base64 and its legend)",
                                method, url, cl, r->limit);
            return -1;
        }
    }
    return 0;
}

static enum MHD_Result s_handle(void *cls, struct MHD_Connection *c, const char *url,
                                const char *method, const char *version, const char *upload,
                                size_t *upload_size, void **con_cls)
{
    tb_studio_t *s = cls;
    s_req_t *r = *con_cls;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        *con_cls = r;
        enum MHD_Result reply = MHD_NO;
        if (s_admit(s, c, url, method, r, &reply) != 0) {
            r->refused = r->too_big = true; /* the rest of the body is dropped unread */
            return reply;
        }
        return MHD_YES;
    }
    if (*upload_size > 0) { /* a chunk of the body */
        if (!r->too_big && r->len + *upload_size <= r->limit) {
            char *grown = realloc(r->body, r->len + *upload_size + 1);
            if (!grown)
                return MHD_NO;
            r->body = grown;
            memcpy(r->body + r->len, upload, *upload_size);
            r->len += *upload_size;
            r->body[r->len] = '\0';
        } else if (!r->too_big) {
            r->too_big = true;
            free(r->body);
            r->body = NULL;
            r->len = 0;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->refused) /* refused on the first call, reply queued already */
        return MHD_YES;
    if (r->too_big) /* a chunked body past the limit: no Content-Length to refuse up front */
        return s_fail(c, 413,
                      "%s %.200s: the body is larger than the %zu bytes this endpoint takes",
                      method, url, r->limit);
    if (r->route == S_ROUTE_FILE)
        return s_file(s, c, url);
    return s_routes[r->route].run(s, c, r);
}

static void s_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                        enum MHD_RequestTerminationCode toe)
{
    s_req_t *r = *con_cls;
    if (r) {
        free(r->body);
        free(r);
        *con_cls = NULL;
    }
}

/* ---- the studio ---- */

bool tb_studio_is_loopback(const char *addr)
{
    struct in_addr a;
    return inet_pton(AF_INET, addr, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

static int s_make_token(char out[TB_STUDIO_TOKEN_HEX + 1], tb_err_t *err)
{
    unsigned char raw[TB_STUDIO_TOKEN_HEX / 2];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, raw, sizeof raw) : -1;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof raw)
        return tb_err_set(err, TB_E_IO, "/dev/urandom: cannot read %zu bytes for the token",
                          sizeof raw);
    for (size_t k = 0; k < sizeof raw; k++)
        snprintf(out + 2 * k, 3, "%02x", raw[k]);
    return 0;
}

tb_studio_t *tb_studio_new(const tb_studio_config_t *cfg, tb_err_t *err)
{
    tb_studio_t *s = calloc(1, sizeof *s);
    if (!s) {
        tb_err_set(err, TB_E_NOMEM, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    struct in_addr bind_check;
    if (inet_pton(AF_INET, cfg->bind_addr, &bind_check) != 1) {
        tb_err_set(err, TB_E_INVALID, "--bind %s: expected a dotted IPv4 address (127.0.0.1)",
                   cfg->bind_addr);
        free(s);
        return NULL;
    }
    snprintf(s->manifest_path, sizeof s->manifest_path, "%s", cfg->manifest_path);
    snprintf(s->out_dir, sizeof s->out_dir, "%s", cfg->out_dir);
    tb_planet_input_t in;
    if (tb_planet_input_load(s->manifest_path, NULL, &in, err) != 0) {
        free(s);
        return NULL;
    }
    snprintf(s->painting_path, sizeof s->painting_path, "%s", in.manifest.painting_path);
    snprintf(s->legend_path, sizeof s->legend_path, "%s", in.manifest.legend_path);
    snprintf(s->overlay_path, sizeof s->overlay_path, "%s", in.manifest.overlay_path);
    snprintf(s->overlay_legend_path, sizeof s->overlay_legend_path, "%s",
             in.manifest.overlay_legend_path);
    s->painting_w = in.painting_w;
    s->painting_h = in.painting_h;
    s->planet_w = in.planet_w;
    s->planet_h = in.planet_h;
    s->cell_m = in.manifest.cell_m;
    tb_planet_input_free(&in);
    /* an RGBA PNG stored uncompressed (each row a filter byte), zlib's blocks, base64's 4/3 */
    double png = (double)s->painting_w * (double)s->painting_h * 4.0 + (double)s->painting_h;
    s->save_limit = (size_t)((png * 1.01 + 65536) * 4.0 / 3.0) + TB_STUDIO_LEGEND_MAX_BYTES;
    if (s->overlay_path[0]) /* and the overlay's sheet and marks beside them */
        s->save_limit *= 2;
    s->child = tb_studio_child_new();
    if (!s->child || s_make_token(s->token, err) != 0 || tb_fs_mkdir_p(s->out_dir, err) != 0) {
        if (!s->child)
            tb_err_set(err, TB_E_NOMEM, "out of memory");
        tb_studio_destroy(&s);
        return NULL;
    }
    return s;
}

int tb_studio_start(tb_studio_t *s, tb_err_t *err)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->cfg.port)};
    if (inet_pton(AF_INET, s->cfg.bind_addr, &addr.sin_addr) != 1)
        return tb_err_set(err, TB_E_INVALID, "--bind %s: expected a dotted IPv4 address",
                          s->cfg.bind_addr);
    s->daemon =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, (uint16_t)s->cfg.port,
                         NULL, NULL, s_handle, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                         MHD_OPTION_NOTIFY_COMPLETED, s_completed, s, MHD_OPTION_CONNECTION_LIMIT,
                         (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60, MHD_OPTION_END);
    if (!s->daemon)
        return tb_err_set(err, TB_E_IO, "cannot serve on %s:%d (in use, or not this machine's)",
                          s->cfg.bind_addr, s->cfg.port);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : s->cfg.port;
    return 0;
}

int tb_studio_port(const tb_studio_t *s)
{
    return s->port;
}
const char *tb_studio_token(const tb_studio_t *s)
{
    return s->token;
}

void tb_studio_destroy(tb_studio_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_studio_t *s = *self_p;
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    tb_studio_child_destroy(&s->child);
    free(s);
    *self_p = NULL;
}
