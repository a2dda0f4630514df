/* summary.txt (docs/bake.md, docs/statistics.md): a head line naming the build, the planet and the
 * bake, the statistics' verdict, the coast block, and - once the tiles are in - the detail block
 * (docs/tiles.md, "The detail block"). The outputs phase writes it first; the detail phase, which
 * runs after the tiles, writes it again whole with the detail block: each time to a temporary name
 * renamed over the old one, so the file is never half-written. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/version.h"
#include "coordinator/bake/phase.h"
#include "jobs/detail/tile.h"

/* A growing string. */
typedef struct {
    char *s;
    size_t n, cap;
    bool failed;
} s_buf_t;

static void s_add(s_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void s_add(s_buf_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || b->n + (size_t)k + 1 > b->cap) {
        size_t cap = (b->cap + (size_t)(k < 0 ? 0 : k) + 1) * 2;
        char *s = k < 0 ? NULL : realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

static double s_get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

/* The detail block, from meta.json's "tiles" (docs/tiles.md, "The detail block"): every number is
 * computed from the JSON values meta.json holds, so a reader can recompute each from meta.json. */
static void s_detail_block(const tb_bake_ctx_t *ctx, s_buf_t *b)
{
    const cJSON *t = ctx->tiles.meta;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(t, "detail_statistics");
    double cell_m = ctx->plan.manifest->tiles.cell_m;
    s_add(b, "detail: %.0f tiles of %g km at %g m (%.0f land, %.0f coast), %.0f cells, %.0f land\n",
          s_get(t, "tiles"), ctx->plan.manifest->tiles.size_km, cell_m, s_get(t, "land"),
          s_get(t, "coast"), s_get(d, "cells"), s_get(d, "land_cells"));
    s_add(b, "detail: slope at %g m by class (degrees; p50, p90: upper edge of the 1-degree bin)\n",
          cell_m);
    s_add(b, "detail:   %-16s %7s %5s %5s %8s %12s\n", "class", "mean", "p50", "p90", ">30deg",
          "cells");
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(d, "slope_deg_histogram");
    for (const cJSON *c = hist ? hist->child : NULL; c; c = c->next) {
        int n = cJSON_GetArraySize(c);
        double total = 0, sum = 0, steep = 0;
        for (int k = 0; k < n; k++) {
            double v = cJSON_GetArrayItem(c, k)->valuedouble;
            total += v;
            sum += v * (k + 0.5);
            if (k >= 30)
                steep += v;
        }
        if (total <= 0)
            continue;
        int p50 = n, p90 = n;
        double run = 0;
        for (int k = 0; k < n; k++) {
            run += cJSON_GetArrayItem(c, k)->valuedouble;
            if (p50 == n && run >= 0.5 * total)
                p50 = k + 1;
            if (p90 == n && run >= 0.9 * total)
                p90 = k + 1;
        }
        s_add(b, "detail:   %-16s %7.2f %5d %5d %7.2f%% %12.0f\n", c->string, sum / total, p50, p90,
              100.0 * steep / total, total);
    }
    double share = s_get(d, "channel_share_of_land");
    s_add(b,
          "detail: drainage density at %g m: %.3f km/km2 (channel cells x %g m per land area; "
          "%.3f%% of land cells are channels)\n",
          cell_m, share / cell_m * 1000.0, cell_m, 100.0 * share);
    double er = s_get(d, "eroded_m3"), de = s_get(d, "deposited_m3");
    s_add(b, "detail: eroded %.3f m3, deposited %.3f m3 (the rest carried off or suspended)\n", er,
          de);
    /* a partial bake's tiles are the whole bake's: say what they borrowed (docs/tiles.md) */
    if (ctx->plan.partial)
        s_add(b,
              "detail: PARTIAL bake (%s): the tiles read the land of %.0f stored region(s)%s; "
              "%d tile(s) not baked (meta.json \"tiles\".\"skipped\")\n",
              ctx->plan.partial, s_get(t, "regions_from_store"),
              cJSON_GetObjectItemCaseSensitive(t, "whole_coast")
                  ? " and the coastal pass over the whole composite"
                  : "",
              cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "skipped")));
}

int tb_bake_summary_write(tb_bake_ctx_t *ctx, bool print_detail_only, tb_err_t *err)
{
    const tb_manifest_t *m = ctx->plan.manifest;
    const tb_bake_outcome_t *out = ctx->out;
    s_buf_t b = {0};
    s_add(&b,
          "terrain bake %s: %s, %lld x %lld cells of %g m, %d steps of %g yr, %d of %d "
          "regions%s\n",
          tb_build_id(), m->source, (long long)tb_planet_w(ctx->planet),
          (long long)tb_planet_h(ctx->planet), m->cell_m, ctx->plan.steps, m->solve.dt_yr,
          out->regions_solved, out->regions_total, ctx->plan.partial ? " (PARTIAL)" : "");
    char *stats_text = tb_stats_report_text(ctx->regions.stats, &out->extent, ctx->plan.partial);
    if (!stats_text)
        return tb_err_set(err, TB_E_NOMEM, "out of memory printing the summary");
    s_add(&b, "%s", stats_text);
    free(stats_text);
    /* the coast block after the statistics (docs/coast.md, "Reading the block"); a partial bake
     * says PARTIAL on each of its lines, as on every line of the statistics */
    char block[1024];
    if ((ctx->made & TB_ART_BIT(COAST)))
        tb_coast_stats_format(&ctx->coast.stats, block, sizeof block);
    else
        snprintf(block, sizeof block, "coast: skipped (--no-coast): every coast is a step\n");
    for (const char *line = block; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        s_add(&b, "%s%.*s", ctx->plan.partial ? "PARTIAL " : "", (int)len, line);
        line += len;
    }
    size_t detail_at = b.n;
    if (ctx->tiles.meta)
        s_detail_block(ctx, &b);
    if (b.failed || !b.s) {
        free(b.s);
        return tb_err_set(err, TB_E_NOMEM, "out of memory printing the summary");
    }
    int rc = tb_bake_write_text(ctx, "summary.txt", b.s, err);
    if (rc == 0) {
        tb_fs_join(ctx->out->summary_path, sizeof ctx->out->summary_path, ctx->opts->out_dir,
                   "summary.txt", NULL);
        if (!ctx->opts->quiet)
            fputs(print_detail_only ? b.s + detail_at : b.s, stdout);
    }
    free(b.s);
    return rc;
}
