/* Loading the planet a command works on; see planet_input.h. */
#include "coordinator/bake/planet_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/pool.h"

/* Opens the painting and checks the size its header declares against the planet (its width
 * divides the planet's) and the planet it makes against TB_INPUT_MAX_PIXELS, before a pixel is
 * decoded. */
static int s_open_painting(const tb_manifest_t *m, tb_png_rows_t **out, tb_err_t *err)
{
    uint32_t pw, ph;
    if (tb_png_rows_peek(m->painting_path, &pw, &ph, err) != 0)
        return -1;
    int64_t w = pw, h = ph;
    int rc = 0;
    if (w > m->planet_w || m->planet_w % w != 0)
        rc = tb_err_set(err, TB_E_INVALID,
                        "%s: %lld pixels wide, which does not divide the planet's %lld cells "
                        "(circumference_km %g / cell_m %g); paint it %lld pixels wide, or a "
                        "divisor of that",
                        m->painting_path, (long long)w, (long long)m->planet_w, m->circumference_km,
                        m->cell_m, (long long)m->planet_w);
    else if ((uint64_t)h >
             TB_INPUT_MAX_PIXELS / (uint64_t)(m->planet_w / w) / (uint64_t)m->planet_w)
        /* (divided, not multiplied: a 1-pixel-wide painting of a wide planet would wrap) */
        rc = tb_err_set(err, TB_E_INVALID,
                        "%s: %lld x %lld pixels make a planet of %lld x %llu cells, more than the "
                        "%llu allowed",
                        m->painting_path, (long long)w, (long long)h, (long long)m->planet_w,
                        (unsigned long long)h * (uint64_t)(m->planet_w / w),
                        (unsigned long long)TB_INPUT_MAX_PIXELS);
    if (rc != 0)
        return -1;
    tb_png_rows_t *r = tb_png_rows_open(m->painting_path, TB_PNG_RGB8, TB_INPUT_MAX_PIXELS, err);
    if (!r)
        return -1;
    const tb_row_source_t *src = tb_png_rows_source(r);
    if (src->w != w || src->h != h) {
        tb_png_rows_destroy(&r);
        return tb_err_set(err, TB_E_INVALID,
                          "%s: changed while it was read (%lld x %lld, then "
                          "%lld x %lld)",
                          m->painting_path, (long long)w, (long long)h, (long long)src->w,
                          (long long)src->h);
    }
    *out = r;
    return 0;
}

/* Opens the overlay of a manifest that names one: its legend, the PNG (RGBA, the painting's size),
 * the features and the jittered rows. */
static int s_open_overlay(tb_planet_input_t *in, tb_err_t *err)
{
    const tb_manifest_t *m = &in->manifest;
    if (!m->overlay_path[0])
        return 0;
    in->overlay_legend = tb_calloc(1, sizeof *in->overlay_legend, "overlay legend", err);
    if (!in->overlay_legend)
        return -1;
    if (tb_overlay_legend_load(m->overlay_legend_path, in->overlay_legend, err) != 0)
        return tb_err_prefix(err, "%s: template.overlay_legend", m->source);
    const tb_row_source_t *paint = tb_png_rows_source(in->png);
    uint32_t ow, oh;
    if (tb_png_rows_peek(m->overlay_path, &ow, &oh, err) != 0)
        return tb_err_prefix(err, "%s: template.overlay", m->source);
    if ((int64_t)ow != paint->w || (int64_t)oh != paint->h)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: %u x %u pixels; expected the painting's size, %lld x %lld (%s): "
                          "an overlay is a second sheet over the same pixels",
                          m->overlay_path, ow, oh, (long long)paint->w, (long long)paint->h,
                          m->painting_path);
    in->overlay_png = tb_png_rows_open(m->overlay_path, TB_PNG_RGBA8, TB_INPUT_MAX_PIXELS, err);
    if (!in->overlay_png)
        return tb_err_prefix(err, "%s: template.overlay", m->source);
    int64_t k = m->planet_w / paint->w;
    in->overlay =
        tb_overlay_features_new(in->overlay_legend, paint->w, paint->h, m->cell_m * (double)k, err);
    if (!in->overlay)
        return -1;
    in->jitter = tb_coast_jitter_new(m, k, in->overlay_legend, paint,
                                     tb_png_rows_source(in->overlay_png), in->overlay, err);
    return in->jitter ? 0 : -1;
}

int tb_planet_input_overlay_map(tb_planet_input_t *in, int64_t map_factor, tb_err_t *err)
{
    if (!in->overlay)
        return 0;
    return tb_overlay_features_keep_map(in->overlay, map_factor,
                                        in->manifest.planet_w / in->painting_w, in->planet_w,
                                        in->planet_h, err);
}

int tb_planet_input_take_overlay(tb_planet_input_t *in, tb_overlay_features_t **out, int64_t *moved,
                                 tb_err_t *err)
{
    *out = NULL;
    *moved = 0;
    if (!in->overlay)
        return 0;
    if (tb_coast_jitter_drain(in->jitter, err) != 0 ||
        tb_overlay_features_finish(in->overlay, err) != 0)
        return tb_err_prefix(err, "%s", in->manifest.overlay_path);
    *moved = tb_coast_jitter_moved(in->jitter);
    *out = in->overlay;
    in->overlay = NULL;
    return 0;
}

int tb_planet_input_load(const char *manifest_path, const tb_input_options_t *opt,
                         tb_planet_input_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_input_options_t none = {0};
    if (!opt)
        opt = &none;
    tb_manifest_t *m = &out->manifest;
    if (opt->has_seed && tb_overrides_has(opt->overrides, "seed"))
        return tb_err_set(err, TB_E_INVALID,
                          "--seed %llu and --set %s: both set the seed; give one",
                          (unsigned long long)opt->seed, tb_overrides_arg(opt->overrides, "seed"));
    if (opt->has_circumference && tb_overrides_has(opt->overrides, "circumference_km"))
        return tb_err_set(
            err, TB_E_INVALID,
            "--circumference-km %g and --set %s: both set the circumference; give one",
            opt->circumference_km, tb_overrides_arg(opt->overrides, "circumference_km"));
    if (!manifest_path) {
        uint64_t seed = opt->has_seed ? opt->seed : TB_DEMO_SEED;
        double km = opt->has_circumference ? opt->circumference_km : TB_DEMO_CIRCUMFERENCE_KM;
        if (tb_demo_manifest(seed, km, m, err) != 0)
            return -1; /* the message names "(demo planet, seed N)" and the numbers */
        if (tb_overrides_count(opt->overrides) > 0) {
            /* the demo's manifest is finished; its one value that finishing replaces, the tile
             * margin, goes back to the demo's own (automatic) before the overrides and checks */
            m->tiles.margin_cells = TB_TILES_MARGIN_AUTO;
            if (tb_overrides_apply_keys(opt->overrides, m, err) != 0)
                return -1;
            snprintf(m->source, sizeof m->source, "(demo planet, seed %llu)",
                     (unsigned long long)m->seed); /* --set seed=N names it as --seed N does */
            if (tb_overrides_apply_legend(opt->overrides, &m->legend, err) != 0 ||
                tb_overrides_finish(opt->overrides, m, err) != 0)
                return -1;
        }
        out->demo =
            tb_demo_painter_new(m->seed, m, m->planet_w, tb_demo_painting_h(m->planet_w), 0,
                                tb_pool_default_threads(), err); /* the pixels are the same */
        if (!out->demo)
            return -1;
    } else {
        if (opt->has_circumference)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: --circumference-km applies to the demo planet only; a "
                              "manifest sets circumference_km itself",
                              manifest_path);
        if (tb_manifest_load_overridden(manifest_path, opt->overrides, m, err) != 0)
            return -1;
        if (opt->has_seed)
            m->seed = opt->seed;
        const char *painting_arg = tb_overrides_arg(opt->overrides, "template.painting");
        if (s_open_painting(m, &out->png, err) != 0)
            return painting_arg ? tb_err_prefix(err, "--set %s", painting_arg)
                                : tb_err_prefix(err, "%s: template.painting", manifest_path);
        if (s_open_overlay(out, err) != 0) {
            tb_planet_input_free(out);
            return -1;
        }
    }
    const tb_row_source_t *src = tb_planet_input_rows(out);
    out->planet_w = m->planet_w;
    out->painting_w = src->w;
    out->painting_h = src->h;
    out->planet_h = src->h * (m->planet_w / src->w);
    return 0;
}

const tb_row_source_t *tb_planet_input_rows(tb_planet_input_t *in)
{
    if (in->jitter)
        return tb_coast_jitter_rows(in->jitter);
    return in->png ? tb_png_rows_source(in->png) : tb_demo_painter_rows(in->demo);
}

void tb_planet_input_free(tb_planet_input_t *in)
{
    if (!in)
        return;
    tb_coast_jitter_destroy(&in->jitter);
    tb_overlay_features_destroy(&in->overlay);
    free(in->overlay_legend);
    tb_png_rows_destroy(&in->overlay_png);
    tb_png_rows_destroy(&in->png);
    tb_demo_painter_destroy(&in->demo);
    memset(in, 0, sizeof *in);
}

/* ---- rasters in files ---- */

typedef struct {
    void *base;
    size_t bytes, row_bytes;
} s_mapping_t;

/* Drops the whole pages of rows [y0, y1) from the process; the file keeps their bytes. */
static void s_release(void *user, int64_t y0, int64_t y1)
{
    const s_mapping_t *m = user;
    tb_fs_map_release(m->base, m->bytes, (size_t)y0 * m->row_bytes, (size_t)y1 * m->row_bytes);
}

int tb_raster_map_temp(tb_raster_t *r, const char *dir, const char *prefix, int64_t w, int64_t h,
                       size_t elem_bytes, tb_err_t *err)
{
    memset(r, 0, sizeof *r);
    static unsigned s_serial;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.tmp.%ld.%u", dir, prefix, (long)getpid(), s_serial++);
    size_t bytes = (size_t)w * (size_t)h * elem_bytes;
    s_mapping_t *m = tb_calloc(1, sizeof *m, "raster mapping", err);
    if (!m)
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        free(m);
        return tb_err_set(err, TB_E_IO, "%s: cannot create: %s", path, strerror(errno));
    }
    unlink(path); /* the mapping keeps the file; nothing is left when it goes */
    if (ftruncate(fd, (off_t)bytes) != 0) {
        int saved = errno;
        close(fd);
        free(m);
        return tb_err_set(err, TB_E_IO, "%s: cannot size to %zu bytes: %s", path, bytes,
                          strerror(saved));
    }
    void *base = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int saved = errno;
    close(fd);
    if (base == MAP_FAILED) {
        free(m);
        return tb_err_set(err, TB_E_NOMEM, "%s: cannot map %zu bytes: %s", path, bytes,
                          strerror(saved));
    }
    /* No readahead: the file starts as a hole, and a fault that reads ahead zero-fills pages the
     * plan may never touch (the label raster's ocean) - measured at 300 km, the kernel's memset
     * was half of the plan's time. */
    madvise(base, bytes ? bytes : 1, MADV_RANDOM);
    *m = (s_mapping_t){base, bytes, (size_t)w * elem_bytes};
    *r = (tb_raster_t){
        .data = base, .w = w, .h = h, .elem_bytes = elem_bytes, .release = s_release, .user = m};
    return 0;
}

void tb_raster_unmap(tb_raster_t *r)
{
    if (!r || !r->user)
        return;
    s_mapping_t *m = r->user;
    munmap(m->base, m->bytes ? m->bytes : 1);
    free(m);
    memset(r, 0, sizeof *r);
}
