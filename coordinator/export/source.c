/* The bake's tiles as rows, through a small cache; see source.h. */
#include "coordinator/export/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/png_io.h"
#include "jobs/detail/tile_files.h"

typedef struct {
    int64_t col, row; /* -1: empty */
    bool splat;       /* what it holds: RGBA weights, else float heights */
    void *data;       /* w x h floats or 4 w x h bytes */
    int64_t w;        /* samples a row */
    uint64_t used;    /* the clock when it was last read */
} s_entry_t;

struct tb_export_source {
    const tb_mosaic_t *m;
    tb_mosaic_info_t info;
    float fill_m;
    int capacity;
    s_entry_t *entries;
    uint64_t clock;
    int64_t filled, loads;
};

tb_export_source_t *tb_export_source_new(const tb_mosaic_t *m, int capacity, float fill_m,
                                         tb_err_t *err)
{
    tb_export_source_t *s = tb_calloc(1, sizeof *s, "export source", err);
    if (!s)
        return NULL;
    s->m = m;
    tb_mosaic_info(m, &s->info);
    s->fill_m = fill_m;
    s->capacity = capacity < 2 ? 2 : capacity;
    s->entries = tb_calloc((size_t)s->capacity, sizeof *s->entries, "export source cache", err);
    if (!s->entries) {
        free(s);
        return NULL;
    }
    for (int k = 0; k < s->capacity; k++)
        s->entries[k].col = -1;
    return s;
}

void tb_export_source_destroy(tb_export_source_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tb_export_source_t *s = *self_p;
    for (int k = 0; k < s->capacity; k++)
        free(s->entries[k].data);
    free(s->entries);
    free(s);
    *self_p = NULL;
}

/* Decodes tile (col, row) of the kind asked into e (whose old data is freed). */
static int s_load(tb_export_source_t *s, s_entry_t *e, int64_t col, int64_t row, bool splat,
                  tb_err_t *err)
{
    free(e->data);
    *e = (s_entry_t){.col = -1};
    int64_t T = s->info.tile_samples, h = s->info.planet_h - row * T;
    if (h > T)
        h = T;
    char *bytes = NULL, name[TB_TILE_ID_MAX + 16];
    size_t n = 0;
    const char *suffix = splat ? tb_tile_file_suffix(TB_TILE_FILE_SPLAT) : TB_TILE_F32Z_SUFFIX;
    tb_tile_id_format((tb_tile_id_t){col, row}, name);
    strncat(name, suffix, sizeof name - strlen(name) - 1);
    if (tb_mosaic_read_file(s->m, col, row, suffix, &bytes, &n, err) != 0)
        return -1;
    int rc = -1;
    if (splat) {
        tb_image_t img;
        if (tb_png_read_mem(bytes, n, name, TB_PNG_RGBA8, (uint64_t)(T * h), &img, err) == 0) {
            if (img.w != (uint32_t)T || img.h != (uint32_t)h) {
                tb_err_set(err, TB_E_FORMAT, "%s: %u x %u pixels, expected %lld x %lld", name,
                           img.w, img.h, (long long)T, (long long)h);
                tb_image_free(&img);
            } else {
                e->data = img.pixels;
                rc = 0;
            }
        }
    } else {
        float *v = tb_malloc(sizeof *v * (size_t)(T * h), "tile heights", err);
        if (v && tb_tile_f32z_decode(bytes, n, name, T, h, v, err) == 0) {
            e->data = v;
            rc = 0;
        } else {
            free(v);
        }
    }
    free(bytes);
    if (rc == 0) {
        e->col = col;
        e->row = row;
        e->splat = splat;
        e->w = T;
        s->loads++;
    }
    return rc;
}

/* The decoded tile (col, row) of the kind asked, loading it into the least recently used entry. */
static const s_entry_t *s_get(tb_export_source_t *s, int64_t col, int64_t row, bool splat,
                              tb_err_t *err)
{
    s_entry_t *lru = &s->entries[0];
    for (int k = 0; k < s->capacity; k++) {
        s_entry_t *e = &s->entries[k];
        if (e->col == col && e->row == row && e->splat == splat) {
            e->used = ++s->clock;
            return e;
        }
        if (e->used < lru->used)
            lru = e;
    }
    if (s_load(s, lru, col, row, splat, err) != 0)
        return NULL;
    lru->used = ++s->clock;
    return lru;
}

/* Runs of row y from column x, tile by tile; bps bytes a sample. */
static int s_row(tb_export_source_t *s, int64_t x, int64_t y, int64_t n, bool splat, void *out,
                 tb_err_t *err)
{
    const int64_t T = s->info.tile_samples, P = s->info.planet_w;
    const size_t bps = splat ? 4 : sizeof(float);
    if (y < 0 || y >= s->info.planet_h)
        return tb_err_set(err, TB_E_INTERNAL, "export: row %lld is off the planet", (long long)y);
    int64_t row = y / T, ty = y - row * T;
    x %= P;
    if (x < 0)
        x += P;
    for (int64_t o = 0; o < n;) {
        int64_t gx = (x + o) % P, col = gx / T, tx = gx - col * T, run = T - tx;
        if (run > n - o)
            run = n - o;
        unsigned char *dst = (unsigned char *)out + (size_t)o * bps;
        if (!tb_mosaic_has_tile(s->m, col, row)) {
            for (int64_t k = 0; k < run; k++) {
                if (splat)
                    memcpy(dst + 4 * k, (const uint8_t[4]){0, 0, 255, 0}, 4);
                else
                    ((float *)(void *)dst)[k] = s->fill_m;
            }
            s->filled += run;
        } else {
            const s_entry_t *e = s_get(s, col, row, splat, err);
            if (!e)
                return -1;
            memcpy(dst, (const unsigned char *)e->data + ((size_t)(ty * e->w + tx)) * bps,
                   (size_t)run * bps);
        }
        o += run;
    }
    return 0;
}

int tb_export_source_heights(tb_export_source_t *s, int64_t x, int64_t y, int64_t n, float *out,
                             tb_err_t *err)
{
    return s_row(s, x, y, n, false, out, err);
}

int tb_export_source_splat(tb_export_source_t *s, int64_t x, int64_t y, int64_t n, uint8_t *out,
                           tb_err_t *err)
{
    return s_row(s, x, y, n, true, out, err);
}

int64_t tb_export_source_filled(const tb_export_source_t *s)
{
    return s->filled;
}

int64_t tb_export_source_loads(const tb_export_source_t *s)
{
    return s->loads;
}
