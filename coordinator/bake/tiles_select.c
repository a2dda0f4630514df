/* Choosing a bake's detail tiles; see tiles_select.h. */
#include "coordinator/bake/tiles_select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/detail/planet_inputs.h"
#include "jobs/detail/tile.h"

int tb_bake_tile_params(const tb_manifest_t *m, int64_t pw, int64_t ph, tb_detail_params_t *p,
                        tb_tile_lattice_t *L, tb_err_t *err)
{
    tb_detail_params_defaults(p);
    tb_manifest_detail_params(m, p); /* every pass key of the `tiles` section (docs/manifest.md) */
    if (tb_detail_params_check(p, m->source, err) != 0 ||
        tb_tile_lattice_make(L, pw, ph, m->cell_m, p->size_km, p->cell_m, err) != 0)
        return -1;
    /* a window wraps round X: it must not meet itself (docs/tiles.md, "The lattice") */
    int64_t window = L->tile_cells + 2 * (int64_t)p->margin_cells;
    if (window > L->lattice_w)
        return tb_err_set(
            err, TB_E_INVALID,
            "%s: the detail tiles need a circumference of at least %lld detail cells (a %g km "
            "tile of %lld cells plus its margin of %d on both sides); this planet's is %lld "
            "cells (%g km, %lld tile column%s): make the planet at least %g km round, or bake "
            "with --no-tiles",
            m->source, (long long)window, p->size_km, (long long)L->tile_cells, p->margin_cells,
            (long long)L->lattice_w, (double)L->lattice_w * L->cell_m / 1000.0, (long long)L->cols,
            L->cols == 1 ? "" : "s",
            p->size_km * (double)((window + L->tile_cells - 1) / L->tile_cells));
    return 0;
}

int tb_bake_tile_classes(const tb_manifest_t *m, tb_tile_class_t cls[TB_TILE_MAX_CLASSES])
{
    int n = tb_tile_classes_from_legend(&m->legend, cls);
    if (n < TB_TILE_MAX_CLASSES) {
        cls[n].ocean = 1;
        cls[n].relief_mult = 1;
        n++;
    }
    return n;
}

void tb_bake_tile_land(const tb_manifest_t *m, const uint8_t *classes, size_t cells, uint8_t *land)
{
    tb_tile_class_t cls[TB_TILE_MAX_CLASSES];
    int n = tb_bake_tile_classes(m, cls);
    for (size_t i = 0; i < cells; i++) {
        uint8_t c = classes[i] < n - 1 ? classes[i] : (uint8_t)(n - 1);
        land[i] = !cls[c].ocean;
    }
}

/* "c000r000..c002r001 (3 columns x 2 rows; land and coast: c000r000, c001r000)" */
static void s_valid(const tb_tile_lattice_t *L, const uint8_t *land, char *out, size_t n)
{
    char a[TB_TILE_ID_MAX], b[TB_TILE_ID_MAX];
    tb_tile_id_format((tb_tile_id_t){0, 0}, a);
    tb_tile_id_format((tb_tile_id_t){L->cols - 1, L->rows - 1}, b);
    size_t k = (size_t)snprintf(out, n, "%s..%s (%lld column%s x %lld row%s; land and coast:", a, b,
                                (long long)L->cols, L->cols == 1 ? "" : "s", (long long)L->rows,
                                L->rows == 1 ? "" : "s");
    int shown = 0, total = 0;
    for (int64_t r = 0; r < L->rows; r++)
        for (int64_t c = 0; c < L->cols; c++) {
            tb_tile_id_t id = {c, r};
            if (tb_tile_content(L, id, land) == TB_TILE_OCEAN)
                continue;
            total++;
            if (shown < 12 && k < n) {
                tb_tile_id_format(id, a);
                k += (size_t)snprintf(out + k, n - k, "%s %s", shown ? "," : "", a);
                shown++;
            }
        }
    if (k < n)
        snprintf(out + k, n - k, "%s%s)", total > shown ? ", ..." : "", total ? "" : " none");
}

static int s_bad(const char *option, const char *id, const char *why, const tb_tile_lattice_t *L,
                 const uint8_t *land, tb_err_t *err)
{
    char valid[1024];
    s_valid(L, land, valid, sizeof valid);
    return tb_err_set(err, TB_E_INVALID, "%s %s: %s; this planet's tiles are %s", option, id, why,
                      valid);
}

/* One id of the list, checked against the lattice. */
static int s_id(const char *text, const char *option, const tb_tile_lattice_t *L,
                const uint8_t *land, tb_tile_id_t *out, tb_err_t *err)
{
    tb_err_t perr;
    if (tb_tile_id_parse(text, NULL, out, &perr) != 0)
        return s_bad(option, text, "not a tile id (c<column>r<row>, as `terrain plan` prints)", L,
                     land, err);
    if (out->col >= L->cols || out->row >= L->rows)
        return s_bad(option, text, "no such tile", L, land, err);
    return 0;
}

int tb_bake_tile_parse_list(const char *text, const char *option, const tb_tile_lattice_t *L,
                            const uint8_t *land, uint8_t *sel, tb_err_t *err)
{
    memset(sel, 0, (size_t)tb_tile_count(L));
    int chosen = 0;
    const char *p = text ? text : "";
    if (!*p)
        return s_bad(option, "\"\"", "an empty list", L, land, err);
    if (strcmp(p, "all") == 0) {
        for (int64_t k = 0; k < tb_tile_count(L); k++) {
            sel[k] =
                tb_tile_content(L, (tb_tile_id_t){k % L->cols, k / L->cols}, land) != TB_TILE_OCEAN;
            chosen += sel[k];
        }
        return chosen ? chosen : s_bad(option, p, "the planet has no land", L, land, err);
    }
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[2 * TB_TILE_ID_MAX + 2];
        if (len == 0 || len >= sizeof item)
            return s_bad(option, len ? "(a long item)" : "(an empty item)", "not a tile id", L,
                         land, err);
        memcpy(item, p, len);
        item[len] = '\0';
        char *dash = strchr(item, '-');
        tb_tile_id_t a, b;
        if (dash) {
            *dash = '\0';
            if (s_id(item, option, L, land, &a, err) != 0 ||
                s_id(dash + 1, option, L, land, &b, err) != 0)
                return -1;
            *dash = '-';
            if (b.col < a.col || b.row < a.row)
                return s_bad(option, item,
                             "a range runs from its north-west tile to its south-east one", L, land,
                             err);
        } else {
            if (s_id(item, option, L, land, &a, err) != 0)
                return -1;
            if (tb_tile_content(L, a, land) == TB_TILE_OCEAN)
                return s_bad(option, item, "an ocean tile (only land and coast tiles are baked)", L,
                             land, err);
            b = a;
        }
        int in_range = 0;
        for (int64_t r = a.row; r <= b.row; r++)
            for (int64_t c = a.col; c <= b.col; c++) {
                tb_tile_id_t id = {c, r};
                if (tb_tile_content(L, id, land) == TB_TILE_OCEAN)
                    continue;
                size_t k = (size_t)(r * L->cols + c);
                chosen += !sel[k];
                sel[k] = 1;
                in_range++;
            }
        if (in_range == 0)
            return s_bad(option, item, "holds only ocean tiles (none is baked)", L, land, err);
        p += len;
        if (*p == ',')
            p++;
    }
    return chosen;
}

int tb_bake_tile_covered(const tb_tile_lattice_t *L, tb_tile_id_t id, int margin,
                         const uint8_t *land, const uint8_t *solved, tb_err_t *err)
{
    tb_frame_t win, geo;
    if (tb_tile_window(L, id, margin, &win, err) != 0 ||
        tb_tile_geo_window(L, &win, &geo, err) != 0)
        return -1;
    for (int64_t j = 0; j < geo.h; j++)
        for (int64_t i = 0; i < geo.w; i++) {
            size_t at = tb_idx(L->geo_w, tb_frame_lattice_x(&geo, i), geo.y0 + j);
            if (land[at] && !solved[at])
                return 0;
        }
    return 1;
}

int tb_bake_check_tile_memory(const tb_tile_lattice_t *L, const tb_detail_params_t *p,
                              double job_memory_bytes, tb_err_t *err)
{
    int64_t win = L->tile_cells + 2 * (int64_t)p->margin_cells; /* an unclipped window's side */
    double need = tb_tile_peak_bytes(win * win);
    if (job_memory_bytes <= 0 || need <= job_memory_bytes)
        return 0;
    return tb_err_set(
        err, TB_E_INVALID,
        "a tile job needs about %.2f GB on its worker (tiles of %lld detail cells "
        "with a margin of %d: a window of %lld x %lld, %.0f bytes a cell and the "
        "process) and a job may take %.2f GB: give the workers more memory and say so "
        "with --job-memory-gb, make smaller tiles (tiles.size_km), or bake with "
        "--no-tiles",
        need / 1e9, (long long)L->tile_cells, p->margin_cells, (long long)win, (long long)win,
        TB_TILE_PEAK_BYTES_A_CELL, job_memory_bytes / 1e9);
}
