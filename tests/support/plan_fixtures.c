/* Fixtures for the plan's suites; see plan_fixtures.h. */
#include "support/plan_fixtures.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grid.h"

static void s_class(tb_class_t *c, const char *name, uint32_t rgb, tb_class_kind_t kind)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->rgb[0] = (uint8_t)(rgb >> 16);
    c->rgb[1] = (uint8_t)(rgb >> 8);
    c->rgb[2] = (uint8_t)rgb;
    c->kind = kind;
    c->k_mult = 1;
}

void fix_manifest(tb_manifest_t *m, int64_t w, double cell_m, double margin_cells)
{
    tb_manifest_defaults(m);
    snprintf(m->source, sizeof m->source, "fixture");
    snprintf(m->painting_path, sizeof m->painting_path, "fixture.png");
    m->cell_m = cell_m;
    m->circumference_km = (double)w * cell_m / 1000.0;
    m->tiles.size_km = m->circumference_km;
    m->tiles.cell_m = cell_m / 4;
    /* a fixture planet is a few dozen columns: the coast's kernels shrink to a cell or two */
    m->coast.drift_km = fmax(0.01, cell_m / 1000.0);
    m->coast.surf_reach_m = m->coast.deposit_reach_m = cell_m;
    m->coast.carry_m = 2 * cell_m;
    m->regions.min_landmass_km2 = 0;
    m->regions.ocean_margin_km = margin_cells * cell_m / 1000.0;
    m->faults.width_km = 4 * cell_m / 1000.0;
    tb_legend_t *l = &m->legend;
    l->n_classes = 4;
    l->tolerance = 24;
    l->max_unmatched_fraction = 0.01;
    s_class(&l->classes[FIX_LOW], "lowland", 0x40a040, TB_CLASS_LAND);
    l->classes[FIX_LOW].uplift_mm_yr = l->classes[FIX_LOW].massif_floor_mm_yr = 0.05;
    l->classes[FIX_LOW].massif_fraction = 1;
    s_class(&l->classes[FIX_HIGH], "highland", 0xc0a060, TB_CLASS_LAND);
    l->classes[FIX_HIGH].uplift_mm_yr = l->classes[FIX_HIGH].massif_floor_mm_yr = 0.5;
    l->classes[FIX_HIGH].massif_fraction = 1;
    s_class(&l->classes[FIX_SHELF], "shelf", 0x80b0e0, TB_CLASS_OCEAN);
    l->classes[FIX_SHELF].depth_m = 50;
    s_class(&l->classes[FIX_DEEP], "deep", 0x203060, TB_CLASS_OCEAN);
    l->classes[FIX_DEEP].depth_m = 800;
    tb_err_t err;
    ck_assert_msg(tb_manifest_finish(m, &err) == 0, "fixture manifest: %s", err.msg);
}

void fix_painting(const tb_manifest_t *m, const uint8_t *classes, int64_t w, int64_t h,
                  tb_image_t *out)
{
    ck_assert_int_eq(tb_image_alloc(out, (uint32_t)w, (uint32_t)h, TB_PNG_RGB8, NULL), 0);
    uint8_t *px = out->pixels;
    for (int64_t k = 0; k < w * h; k++)
        memcpy(px + 3 * k, m->legend.classes[classes[k]].rgb, 3);
}

uint8_t *fix_ascii(const char *const *rows, int64_t *w, int64_t *h)
{
    int64_t n = 0;
    while (rows[n])
        n++;
    *h = n;
    *w = (int64_t)strlen(rows[0]);
    uint8_t *c = malloc((size_t)(*w * *h));
    for (int64_t j = 0; j < n; j++) {
        ck_assert_int_eq((int64_t)strlen(rows[j]), *w);
        for (int64_t i = 0; i < *w; i++) {
            char ch = rows[j][i];
            c[j * *w + i] = ch == '#'   ? FIX_LOW
                            : ch == '^' ? FIX_HIGH
                            : ch == ',' ? FIX_SHELF
                                        : FIX_DEEP;
        }
    }
    return c;
}

void fix_rect(uint8_t *classes, int64_t w, int64_t x0, int64_t y0, int64_t rw, int64_t rh,
              uint8_t v)
{
    for (int64_t j = y0; j < y0 + rh; j++)
        for (int64_t i = x0; i < x0 + rw; i++)
            classes[tb_idx(w, tb_wrap(i, w), j)] = v;
}
