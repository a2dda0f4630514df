/* tb_ground: the ground statistics of a height grid, to put a bake's 2 m tiles beside real DEMs
 * (docs/tiles.md, "Ground at 2 m"). Reads raw float32 (.f32, e.g. `gdal_translate -of ENVI -ot
 * Float32` of a lidar DEM), raw little-endian u16 (.r16, `terrain stitch --format r16`) or a 16- or
 * 8-bit grey PNG, with --size W,H for the raw ones and --range LO,HI for the 16-bit ones (the
 * planet's elevation encoding). The statistics themselves are jobs/detail/ground_stats.h's.
 *
 *   tb_ground stats FILE --cell-m C [--size W,H] [--range LO,HI] [--to-cell-m 2] [--land]
 *       slope distribution (mean, p50, p90, share >= 30 and >= 33 degrees), curvature (mean and
 *       p99 of |hxx| + |hyy| + 2|hxy|), drainage density (D8, channels from 2000 m2), roughness
 *       spectrum (height variance per octave band of wavelength, 4 .. 256 m) over the largest
 *       centred square crop of a power of two (at most 1024); --to-cell-m averages blocks down to
 *       that cell first (a 1 m DEM to 2 m); --land keeps cells above 0 m only
 *   tb_ground mounds DEPOSIT.png HEIGHTS --cell-m C [--size W,H] [--range LO,HI]
 *       the deposit map's mounds (regional maxima) per km2 of land (heights above 0 m)
 *   tb_ground transects HEIGHTS --cell-m C [--size W,H] [--range LO,HI] [--n 20]
 *       N shore-normal transects (waterline cells spread evenly along the shore, the normal from
 *       the land mask's gradient over 40 m), each -60 .. +160 m: what each shows, the steepest step
 * between neighbouring samples and whether it is on a cliff face (a run of steps above 45 degrees
 *       rising 2 m or more; where the samples show none but a step over 38 degrees, the same rule
 *       on the grid's own neighbours within 2 cells of it, tb_ground_face_rise); a beach: no step
 *       over 10 degrees in the first 40 m inland
 *   tb_ground seafloor HEIGHTS --cell-m C [--size W,H] [--range LO,HI] [--below M] [--above M2]
 *                      [--to-cell-m C2] [--step N]
 *       the curvature statistic over sea cells deeper than M metres (default 10) and shallower than
 *       M2, on blocks averaged to C2 and a stencil N cells wide (to rise above the 16-bit steps and
 *       the detail relief: a facet's edge or a ray is a line of large curvature at the 8 m scale)
 *   tb_ground hillshade HEIGHTS --cell-m C [--size W,H] [--range LO,HI] --crop X0,Y0,N --out PNG
 *       the hillshade of an N x N crop (heights x 5, light from the north-west), to look at
 * Exit 0, 1 on a bad file, 2 on bad usage. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/png_io.h"
#include "jobs/detail/ground_stats.h"

typedef struct {
    int64_t w, h;
    double cell_m;
    float *z; /* NAN where no data */
} s_grid_t;

static int s_usage(void)
{
    fprintf(stderr,
            "usage: tb_ground stats|mounds|transects|seafloor|hillshade FILE [DEPOSIT] --cell-m C "
            "[--size W,H] [--range LO,HI] [--to-cell-m C2] [--land] [--n N] [--below M]\n");
    return 2;
}

static bool s_ends(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int s_read(const char *path, int64_t w, int64_t h, double lo, double hi, s_grid_t *g)
{
    tb_err_t err;
    char *data;
    size_t n;
    if (tb_fs_read_all(path, (size_t)1 << 31, &data, &n, &err) != 0) {
        fprintf(stderr, "tb_ground: %s\n", err.msg);
        return 1;
    }
    if (s_ends(path, ".png")) {
        int bits = n > 24 ? (unsigned char)data[24] : 0;
        tb_image_t img;
        if (tb_png_read_mem(data, n, path, bits == 16 ? TB_PNG_GRAY16 : TB_PNG_GRAY8,
                            (uint64_t)1 << 28, &img, &err) != 0) {
            fprintf(stderr, "tb_ground: %s\n", err.msg);
            free(data);
            return 1;
        }
        g->w = img.w;
        g->h = img.h;
        g->z = malloc((size_t)g->w * (size_t)g->h * sizeof *g->z);
        for (size_t i = 0; i < (size_t)g->w * (size_t)g->h; i++)
            g->z[i] = bits == 16
                          ? (float)(lo + ((const uint16_t *)img.pixels)[i] * (hi - lo) / 65535)
                          : (float)((const uint8_t *)img.pixels)[i];
        tb_image_free(&img);
    } else {
        bool f32 = s_ends(path, ".f32") || s_ends(path, ".bil") || s_ends(path, ".flt");
        size_t want = (size_t)w * (size_t)h * (f32 ? 4 : 2);
        if (w < 1 || h < 1 || n != want) {
            fprintf(stderr, "tb_ground: %s: %zu bytes, expected %zu (--size %lld,%lld)\n", path, n,
                    want, (long long)w, (long long)h);
            free(data);
            return 1;
        }
        g->w = w;
        g->h = h;
        g->z = malloc((size_t)w * (size_t)h * sizeof *g->z);
        for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
            if (f32) {
                float v;
                memcpy(&v, data + 4 * i, 4);
                g->z[i] = v < -9000 || !isfinite(v) ? NAN : v;
            } else {
                uint16_t v;
                memcpy(&v, data + 2 * i, 2);
                g->z[i] = (float)(lo + v * (hi - lo) / 65535);
            }
        }
    }
    free(data);
    return 0;
}

/* Block means of f x f cells (a block with no data is no data). */
static void s_coarsen(s_grid_t *g, int f)
{
    if (f <= 1)
        return;
    int64_t w = g->w / f, h = g->h / f;
    float *z = malloc((size_t)w * (size_t)h * sizeof *z);
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++) {
            double s = 0;
            int n = 0;
            for (int b = 0; b < f; b++)
                for (int a = 0; a < f; a++) {
                    float v = g->z[(j * f + b) * g->w + i * f + a];
                    if (!isnan(v)) {
                        s += v;
                        n++;
                    }
                }
            z[j * w + i] = n == f * f ? (float)(s / n) : NAN;
        }
    free(g->z);
    g->z = z;
    g->w = w;
    g->h = h;
    g->cell_m *= f;
}

static int s_cmp_desc(const void *a, const void *b, void *z)
{
    float x = ((const float *)z)[*(const int64_t *)a], y = ((const float *)z)[*(const int64_t *)b];
    return x < y ? 1 : (x > y ? -1 : 0);
}

static const float *s_sort_z;
static int s_cmp(const void *a, const void *b)
{
    return s_cmp_desc(a, b, (void *)s_sort_z);
}

static void s_stats(const s_grid_t *g, bool land_only)
{
    int64_t w = g->w, h = g->h;
    size_t n = (size_t)w * (size_t)h;
    uint8_t *ok = calloc(n, 1);
    int64_t hist[90] = {0}, cells = 0;
    double sum = 0;
    for (int64_t j = 1; j + 1 < h; j++)
        for (int64_t i = 1; i + 1 < w; i++) {
            size_t at = (size_t)(j * w + i);
            float c = g->z[at], e = g->z[at + 1], ww = g->z[at - 1], s = g->z[at + w],
                  nn = g->z[at - w];
            if (isnan(c) || isnan(e) || isnan(ww) || isnan(s) || isnan(nn) ||
                isnan(g->z[at - w - 1]) || isnan(g->z[at - w + 1]) || isnan(g->z[at + w - 1]) ||
                isnan(g->z[at + w + 1]) || (land_only && c <= 0))
                continue;
            ok[at] = 1;
            double gx = (e - ww) / (2 * g->cell_m), gy = (s - nn) / (2 * g->cell_m);
            double deg = atan(sqrt(gx * gx + gy * gy)) * 180 / M_PI;
            int b = (int)deg;
            hist[b < 0 ? 0 : (b > 89 ? 89 : b)]++;
            sum += deg;
            cells++;
        }
    double p50 = 0, p90 = 0, over30 = 0, over33 = 0;
    int64_t acc = 0;
    for (int b = 0; b < 90; b++) {
        acc += hist[b];
        if (!p50 && acc >= cells / 2)
            p50 = b + 1;
        if (!p90 && acc >= (cells * 9) / 10)
            p90 = b + 1;
        if (b >= 30)
            over30 += (double)hist[b];
        if (b >= 33)
            over33 += (double)hist[b];
    }
    printf("cells %lld at %g m (%.3f km2)\n", (long long)cells, g->cell_m,
           (double)cells * g->cell_m * g->cell_m / 1e6);
    printf("slope: mean %.2f deg, p50 %.0f, p90 %.0f, >= 30 deg %.2f %%, >= 33 deg (within 5 of "
           "the 38-degree talus) %.2f %%\n",
           cells ? sum / (double)cells : 0, p50, p90, 100 * over30 / (double)(cells ? cells : 1),
           100 * over33 / (double)(cells ? cells : 1));
    double cm, c99;
    int64_t cc;
    tb_ground_curvature(g->z, w, h, g->cell_m, ok, &cm, &c99, &cc);
    printf("curvature: mean %.4f /m, p99 %.4f /m (|hxx| + |hyy| + 2|hxy|)\n", cm, c99);
    /* drainage density: D8 over the valid cells, from the highest down */
    double *area = calloc(n, sizeof *area);
    int64_t *order = malloc(n * sizeof *order), m = 0;
    for (size_t i = 0; i < n; i++)
        if (ok[i]) {
            order[m++] = (int64_t)i;
            area[i] = g->cell_m * g->cell_m;
        }
    s_sort_z = g->z;
    qsort(order, (size_t)m, sizeof *order, s_cmp);
    int64_t channel = 0;
    for (int64_t k = 0; k < m; k++) {
        int64_t at = order[k], i = at % w, j = at / w, to = -1;
        double best = 0;
        for (int dj = -1; dj <= 1; dj++)
            for (int di = -1; di <= 1; di++) {
                if (!di && !dj)
                    continue;
                int64_t t = at + dj * w + di;
                if (i + di < 0 || i + di >= w || j + dj < 0 || j + dj >= h || !ok[t])
                    continue;
                double s = (g->z[at] - g->z[t]) / ((di && dj) ? M_SQRT2 : 1.0);
                if (s > best) {
                    best = s;
                    to = t;
                }
            }
        channel += area[at] >= 2000.0;
        if (to >= 0)
            area[to] += area[at];
    }
    double km2 = (double)m * g->cell_m * g->cell_m / 1e6;
    printf("drainage density: %.2f km/km2 (D8 channels from 2000 m2: %lld cells x %g m)\n",
           km2 > 0 ? (double)channel * g->cell_m / 1000.0 / km2 : 0, (long long)channel, g->cell_m);
    free(area);
    free(order);
    /* the spectrum over the largest centred power-of-two square of valid cells */
    int64_t s = 1024;
    while (s > w || s > h)
        s /= 2;
    int64_t x0 = (w - s) / 2, y0 = (h - s) / 2;
    bool full = true;
    for (int64_t j = 0; j < s && full; j++)
        for (int64_t i = 0; i < s; i++)
            if (isnan(g->z[(y0 + j) * w + x0 + i])) {
                full = false;
                break;
            }
    double var[TB_GROUND_BANDS];
    tb_err_t err;
    if (s >= 16 && full &&
        tb_ground_spectrum(g->z + y0 * w + x0, w, s, g->cell_m, var, &err) == 0) {
        printf("spectrum (%lld x %lld crop): band lambda_m variance_m2\n", (long long)s,
               (long long)s);
        for (int b = 0; b < TB_GROUND_BANDS; b++)
            printf("  %6.1f  %.6g\n", 4.0 * pow(2, b), var[b]);
    } else {
        printf("spectrum: no %lld-cell square crop without gaps at the centre\n", (long long)s);
    }
    free(ok);
}

static void s_mounds(const s_grid_t *dep, const s_grid_t *z)
{
    size_t n = (size_t)dep->w * (size_t)dep->h;
    uint8_t *d8 = malloc(n), *land = malloc(n);
    int64_t land_cells = 0;
    for (size_t i = 0; i < n; i++) {
        d8[i] = (uint8_t)dep->z[i];
        land[i] = z->z[i] > 0;
        land_cells += land[i];
    }
    int64_t m = tb_ground_deposit_maxima_u8(d8, dep->w, dep->h, land);
    double km2 = (double)land_cells * z->cell_m * z->cell_m / 1e6;
    printf("deposit mounds: %lld regional maxima over %.3f km2 of land: %.1f a km2\n", (long long)m,
           km2, km2 > 0 ? (double)m / km2 : 0);
    free(d8);
    free(land);
}

static double s_at(const s_grid_t *g, double x, double y)
{
    int64_t i = (int64_t)floor(x), j = (int64_t)floor(y);
    if (i < 0 || j < 0 || i + 1 >= g->w || j + 1 >= g->h)
        return NAN;
    double fx = x - (double)i, fy = y - (double)j;
    const float *p = g->z + j * g->w + i;
    return p[0] * (1 - fx) * (1 - fy) + p[1] * fx * (1 - fy) + p[g->w] * (1 - fx) * fy +
           p[g->w + 1] * fx * fy;
}

static void s_transects(const s_grid_t *g, int want)
{
    int64_t w = g->w, h = g->h;
    /* waterline cells: land with a sea 4-neighbour, 60 cells inside the grid */
    int64_t *wl = malloc((size_t)w * (size_t)h * sizeof *wl), nw = 0;
    int64_t edge = (int64_t)ceil(170.0 / g->cell_m) + (int64_t)ceil(40.0 / g->cell_m);
    for (int64_t j = edge; j < h - edge; j++)
        for (int64_t i = edge; i < w - edge; i++) {
            size_t at = (size_t)(j * w + i);
            if (g->z[at] > 0 &&
                (g->z[at - 1] <= 0 || g->z[at + 1] <= 0 || g->z[at - w] <= 0 || g->z[at + w] <= 0))
                wl[nw++] = (int64_t)at;
        }
    printf("transects: %lld waterline cells; %d transects, -60 .. +160 m at %g m\n", (long long)nw,
           want, g->cell_m);
    int beaches = 0, cliffs = 0, steep_off = 0, grid_faces = 0;
    for (int t = 0; t < want && nw > 0; t++) {
        int64_t at = wl[(int64_t)((double)nw * (t + 0.5) / want)], ci = at % w, cj = at / w;
        /* the normal: the gradient of the land mask (height above 0) over a 40 m box, pointing
         * inland (the heights' own gradient turns seaward behind a berm higher than its land) */
        double gx = 0, gy = 0;
        int64_t r = (int64_t)ceil(40.0 / g->cell_m);
        for (int64_t dj = -r; dj <= r; dj++)
            for (int64_t di = -r; di <= r; di++) {
                double v = g->z[(cj + dj) * w + ci + di] > 0 ? 1.0 : 0.0;
                gx += v * (double)di;
                gy += v * (double)dj;
            }
        double len = sqrt(gx * gx + gy * gy);
        if (len == 0)
            continue;
        gx /= len;
        gy /= len;
        int ns = (int)(220.0 / g->cell_m) + 1;
        double prof[1200], steep = 0, steep_at = 0;
        ns = ns > 1200 ? 1200 : ns;
        for (int k = 0; k < ns; k++) {
            double d = -60.0 + k * g->cell_m;
            prof[k] = s_at(g, (double)ci + 0.5 + gx * d / g->cell_m,
                           (double)cj + 0.5 + gy * d / g->cell_m);
        }
        /* the steepest step, and whether it sits in a cliff face (a run of steps over 45
         * degrees rising at least 5 m) */
        bool on_cliff = false;
        double face_rise = 0, top_rise = 0;
        for (int k = 0; k + 1 < ns; k++) {
            double deg = atan(fabs(prof[k + 1] - prof[k]) / g->cell_m) * 180 / M_PI;
            if (deg > 45)
                face_rise += fabs(prof[k + 1] - prof[k]);
            else {
                top_rise = face_rise > top_rise ? face_rise : top_rise;
                face_rise = 0;
            }
            if (deg > steep) {
                steep = deg;
                steep_at = -60.0 + (k + 0.5) * g->cell_m;
            }
        }
        top_rise = face_rise > top_rise ? face_rise : top_rise;
        on_cliff = top_rise >= 2;
        /* a steep step off a face the samples show: is it a face on the grid's own neighbours,
         * which the samples cross obliquely? */
        double grid_rise = 0;
        if (!on_cliff && steep > 38)
            grid_rise = tb_ground_face_rise(
                g->z, w, h, g->cell_m, (int64_t)floor((double)ci + 0.5 + gx * steep_at / g->cell_m),
                (int64_t)floor((double)cj + 0.5 + gy * steep_at / g->cell_m), 2);
        bool grid_face = grid_rise >= 2;
        /* what it shows: the height 20 m and 100 m inland, the depth 40 m out, the steepest step
         * of the first 40 m inland and the highest point there (a beach's berm) */
        int k0 = (int)(60.0 / g->cell_m), k20 = (int)(80.0 / g->cell_m),
            k100 = (int)(160.0 / g->cell_m), k40 = (int)(20.0 / g->cell_m);
        double z20 = prof[k20], z100 = prof[k100], d40 = prof[k40], near = 0, berm = -1e9;
        for (int k = k0; k < k0 + (int)(40.0 / g->cell_m) && k + 1 < ns; k++) {
            double deg = atan(fabs(prof[k + 1] - prof[k]) / g->cell_m) * 180 / M_PI;
            near = deg > near ? deg : near;
            berm = prof[k + 1] > berm ? prof[k + 1] : berm;
        }
        const char *what = on_cliff ? "platform and cliff" : (near < 10 ? "beach" : "slope");
        beaches += !on_cliff && near < 10;
        cliffs += on_cliff;
        steep_off += steep > 38 && !on_cliff && !grid_face;
        grid_faces += grid_face;
        printf("  %2d at (%lld, %lld): %s; z at +20 m %.1f, +100 m %.1f, -40 m %.1f; first 40 m: "
               "steepest %.1f deg, top %.1f m; steepest step %.1f deg at %+.0f m%s\n",
               t, (long long)ci, (long long)cj, what, z20, z100, d40, near, berm, steep, steep_at,
               on_cliff ? " (cliff face)"
                        : (grid_face ? " (a cliff face on the grid)"
                                     : (steep > 38 ? " (NOT a cliff face)" : "")));
        if (on_cliff)
            printf("      cliff face: %.1f m of steps over 45 degrees\n", top_rise);
        if (grid_face)
            printf("      cliff face on the grid: %.1f m of neighbour steps over 45 degrees (rows, "
                   "columns, "
                   "diagonals) within 2 "
                   "cells (the samples cross it obliquely)\n",
                   grid_rise);
    }
    printf("transects: %d beach, %d platform and cliff, %d with a step over the "
           "talus off a cliff face, %d more on a cliff face only the grid's neighbours show\n",
           beaches, cliffs, steep_off, grid_faces);
    free(wl);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return s_usage();
    const char *cmd = argv[1], *file = argv[2], *dep_file = NULL;
    int first = 3;
    if (!strcmp(cmd, "mounds")) {
        if (argc < 4)
            return s_usage();
        dep_file = argv[2];
        file = argv[3];
        first = 4;
    }
    int64_t w = 0, h = 0;
    double cell = 0, lo = 0, hi = 1, to_cell = 0, below = 10, above = 1e9;
    int step = 1;
    int64_t crop[3] = {0, 0, 0};
    const char *out = NULL;
    bool land = false;
    int n = 20;
    for (int i = first; i < argc; i++) {
        long long a, b, c3;
        if (!strcmp(argv[i], "--size") && i + 1 < argc &&
            sscanf(argv[i + 1], "%lld,%lld", &a, &b) == 2) {
            w = a;
            h = b;
            i++;
        } else if (!strcmp(argv[i], "--range") && i + 1 < argc &&
                   sscanf(argv[i + 1], "%lf,%lf", &lo, &hi) == 2)
            i++;
        else if (!strcmp(argv[i], "--cell-m") && i + 1 < argc)
            cell = atof(argv[++i]);
        else if (!strcmp(argv[i], "--to-cell-m") && i + 1 < argc)
            to_cell = atof(argv[++i]);
        else if (!strcmp(argv[i], "--below") && i + 1 < argc)
            below = atof(argv[++i]);
        else if (!strcmp(argv[i], "--above") && i + 1 < argc)
            above = atof(argv[++i]);
        else if (!strcmp(argv[i], "--step") && i + 1 < argc)
            step = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--land"))
            land = true;
        else if (!strcmp(argv[i], "--crop") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%lld,%lld,%lld", &a, &b, &c3) == 3) {
            crop[0] = a;
            crop[1] = b;
            crop[2] = c3;
            i++;
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else
            return s_usage();
    }
    if (!(cell > 0) || n < 1 || n > 1000)
        return s_usage();
    s_grid_t g = {.cell_m = cell};
    if (s_read(file, w, h, lo, hi, &g) != 0)
        return 1;
    if (!strcmp(cmd, "stats")) {
        s_coarsen(&g, to_cell > cell ? (int)lround(to_cell / cell) : 1);
        s_stats(&g, land);
    } else if (!strcmp(cmd, "mounds")) {
        s_grid_t d = {.cell_m = cell};
        if (s_read(dep_file, w, h, 0, 1, &d) != 0)
            return 1;
        if (d.w != g.w || d.h != g.h) {
            fprintf(stderr, "tb_ground: %s and %s differ in size\n", dep_file, file);
            return 1;
        }
        s_mounds(&d, &g);
    } else if (!strcmp(cmd, "transects")) {
        for (size_t i = 0; i < (size_t)g.w * (size_t)g.h; i++) /* a DEM's no-data is the sea */
            g.z[i] = isnan(g.z[i]) ? -1.0f : g.z[i];
        s_transects(&g, n);
    } else if (!strcmp(cmd, "hillshade")) {
        /* a crop's hillshade, heights x 5, light from the north-west 45 degrees up, into --out */
        int64_t n0 = crop[2] > 0 ? crop[2] : g.w, x0 = crop[0], y0 = crop[1];
        tb_image_t img;
        tb_err_t err;
        if (!out || x0 < 0 || y0 < 0 || x0 + n0 > g.w || y0 + n0 > g.h ||
            tb_image_alloc(&img, (uint32_t)n0, (uint32_t)n0, TB_PNG_GRAY8, &err) != 0)
            return s_usage();
        for (int64_t j = 0; j < n0; j++)
            for (int64_t i = 0; i < n0; i++) {
                int64_t x = x0 + i, y = y0 + j;
                int64_t xl = x > 0 ? x - 1 : x, xr = x + 1 < g.w ? x + 1 : x;
                int64_t yu = y > 0 ? y - 1 : y, yd = y + 1 < g.h ? y + 1 : y;
                double gx =
                    5 * (g.z[y * g.w + xr] - g.z[y * g.w + xl]) / ((double)(xr - xl) * g.cell_m);
                double gy =
                    5 * (g.z[yd * g.w + x] - g.z[yu * g.w + x]) / ((double)(yd - yu) * g.cell_m);
                double nl = (gx - gy + 1.41) / (sqrt(gx * gx + gy * gy + 1) * 2.0);
                nl = nl < 0 ? 0 : (nl > 1 ? 1 : nl);
                ((uint8_t *)img.pixels)[j * n0 + i] = (uint8_t)(255 * nl);
            }
        int rc = tb_png_write(out, &img, 6, &err);
        tb_image_free(&img);
        if (rc != 0) {
            fprintf(stderr, "tb_ground: %s\n", err.msg);
            return 1;
        }
    } else if (!strcmp(cmd, "seafloor")) {
        s_coarsen(&g, to_cell > cell ? (int)lround(to_cell / cell) : 1);
        if (step > 1) { /* every step-th sample: the stencil spans step cells */
            int64_t w2 = g.w / step, h2 = g.h / step;
            for (int64_t j = 0; j < h2; j++)
                for (int64_t i = 0; i < w2; i++)
                    g.z[j * w2 + i] = g.z[j * step * g.w + i * step];
            g.w = w2;
            g.h = h2;
            g.cell_m *= step;
        }
        size_t cells = (size_t)g.w * (size_t)g.h;
        uint8_t *mask = malloc(cells);
        for (size_t i = 0; i < cells; i++)
            mask[i] = g.z[i] < -below && g.z[i] > -above;
        double m, p99;
        int64_t c;
        tb_ground_curvature(g.z, g.w, g.h, g.cell_m, mask, &m, &p99, &c);
        printf(
            "sea floor %g .. %g m deep, at %g m: %lld cells, curvature mean %.3g /m, p99 %.3g /m\n",
            below, above, g.cell_m, (long long)c, m, p99);
        free(mask);
    } else {
        return s_usage();
    }
    free(g.z);
    return 0;
}
