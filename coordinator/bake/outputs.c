/* The output writers every phase that writes into out_dir uses; see phase.h. Each file is written
 * to a temporary name and renamed (common/fs.h), and its XXH3 goes into meta.json's "outputs". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/png_io.h"
#include "coordinator/bake/phase.h"

static void s_record_hash(tb_bake_ctx_t *ctx, const char *name, uint64_t h)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    /* the running phase's record lists the files it wrote (a rerun keeps them when unchanged) */
    if (ctx->n_records > 0) {
        tb_phase_record_t *rec = &ctx->records[ctx->n_records - 1];
        if (!rec->files)
            rec->files = cJSON_CreateArray();
        bool listed = false;
        const cJSON *f;
        cJSON_ArrayForEach(f, rec->files) listed = listed || strcmp(f->valuestring, name) == 0;
        if (rec->files && !listed)
            cJSON_AddItemToArray(rec->files, cJSON_CreateString(name));
    }
    /* a file written again (summary.txt, once the tiles are in) keeps one entry: the last one */
    if (cJSON_GetObjectItemCaseSensitive(ctx->hashes, name))
        cJSON_ReplaceItemInObjectCaseSensitive(ctx->hashes, name, cJSON_CreateString(hex));
    else
        cJSON_AddStringToObject(ctx->hashes, name, hex);
}

static void s_record(tb_bake_ctx_t *ctx, const char *name, const void *bytes, size_t n)
{
    s_record_hash(ctx, name, tb_xxh3(bytes, n));
}

const char *const tb_bake_output_names[] = {
    "planet_height.png", "map_flow.png",       "map_basins.png",
    "preview.png",       "map_class.png",      "map_regions.png",
    "overlay.json",      "map_overlay.png",    "map_uplift.png",
    "summary.txt",       "plan.json",          "meta.json",
    "report.html",       "preview_detail.png", "preview_detail_crop.png",
};
const size_t tb_bake_n_output_names = sizeof tb_bake_output_names / sizeof *tb_bake_output_names;

int tb_bake_check_inputs(const tb_bake_ctx_t *ctx, const char *const *names, size_t n_names,
                         tb_err_t *err)
{
    const tb_manifest_t *m = &ctx->plan.input.manifest;
    const char *inputs[] = {ctx->opts->manifest_path, m->legend_path, m->painting_path,
                            m->overlay_path, m->overlay_legend_path};
    return tb_fs_check_outputs(ctx->opts->out_dir, names, n_names, inputs, 5, err);
}

/* Writes bytes to path atomically, unless the file there already holds exactly these bytes: a rerun
 * rewrites nothing that matches (docs/bake.md, "Resume"). */
static int s_write(const char *path, const void *bytes, size_t n, tb_err_t *err)
{
    struct stat st;
    uint64_t have;
    tb_err_t e;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == n &&
        tb_fs_hash_file(path, &have, &e) == 0 && have == tb_xxh3(bytes, n))
        return 0;
    return tb_fs_write_atomic(path, bytes, n, err);
}

int tb_bake_write_png(tb_bake_ctx_t *ctx, const char *name, const tb_image_t *img, tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, name, err) != 0 ||
        tb_bake_check_inputs(ctx, &name, 1, err) != 0)
        return -1;
    unsigned char *bytes;
    size_t n;
    if (tb_png_encode(img, 6, &bytes, &n, err) != 0)
        return tb_err_prefix(err, "%s", path);
    int rc = s_write(path, bytes, n, err);
    if (rc == 0)
        s_record(ctx, name, bytes, n);
    free(bytes);
    return rc;
}

int tb_bake_write_bytes(tb_bake_ctx_t *ctx, const char *name, const void *bytes, size_t n,
                        uint64_t *xxh3, tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, name, err) != 0 ||
        s_write(path, bytes, n, err) != 0)
        return -1;
    s_record(ctx, name, bytes, n);
    if (xxh3)
        *xxh3 = tb_xxh3(bytes, n);
    return 0;
}

int tb_bake_write_text(tb_bake_ctx_t *ctx, const char *name, const char *text, tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, name, err) != 0 ||
        tb_bake_check_inputs(ctx, &name, 1, err) != 0)
        return -1;
    size_t n = strlen(text);
    if (s_write(path, text, n, err) != 0)
        return -1;
    s_record(ctx, name, text, n);
    return 0;
}

int tb_bake_hash_file(tb_bake_ctx_t *ctx, const char *name, tb_err_t *err)
{
    char path[4200];
    char *bytes;
    size_t n;
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, name, err) != 0 ||
        tb_fs_read_all(path, (size_t)1 << 34, &bytes, &n, err) != 0)
        return -1;
    s_record(ctx, name, bytes, n);
    free(bytes);
    return 0;
}

tb_png_writer_t *tb_bake_png_open(tb_bake_ctx_t *ctx, const char *name, uint32_t w, uint32_t h,
                                  tb_png_format_t format, tb_err_t *err)
{
    char path[4200];
    if (tb_fs_join(path, sizeof path, ctx->opts->out_dir, name, err) != 0 ||
        tb_bake_check_inputs(ctx, &name, 1, err) != 0)
        return NULL;
    return tb_png_writer_open(path, w, h, format, 6, err);
}

int tb_bake_png_close(tb_bake_ctx_t *ctx, const char *name, tb_png_writer_t **wr, tb_err_t *err)
{
    uint64_t h;
    if (tb_png_writer_close(wr, &h, err) != 0)
        return -1;
    s_record_hash(ctx, name, h);
    return 0;
}

void tb_bake_record_file(tb_bake_ctx_t *ctx, const char *name, const char *hex)
{
    s_record_hash(ctx, name, strtoull(hex, NULL, 16));
}
