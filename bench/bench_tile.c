/* scripts/bench tile: one detail tile and the margin measurement (docs/tiles.md; target 4 s for a
 * 2500 x 2500 tile with its margin on one thread, the predecessor 12 s).
 *
 * On a synthetic planet (jobs/detail/synthetic.h: fBm mountains at 8 m, slopes to 50 degrees and
 * more, D8 drainage area, sea below 0 m) of --km x --km, it
 * - runs the steepest 5 km tile at the default parameters on ONE thread, split by pass, with ns per
 *   interior cell and per window cell, and the peak memory (getrusage maxrss of this process);
 * - unless --no-margin: measures the margin. The steepest tile and two more land tiles, cut at a
 *   smaller tile size (--sample-km, default 0.4 km = 200 cells: a margin's effect at the edge does
 *   not depend on the interior's size), are computed at increasing margins against a reference at
 *   twice the provable bound, and for each margin it prints the largest height difference and the
 *   share of interior cells whose 16-bit sample differs. The smallest margin from which every
 *   sample's 16-bit interior is identical, and the smallest from which its float heights are, are
 *   printed with the provable bound; it fails (exit 1) when the margin in use is below the second.
 * Wall seconds on a shared machine: read them with its load (uptime is printed).
 *
 * --coast: the coastal pass (jobs/coast, defaults, a 400 m sea) runs over the synthetic planet
 * first, so the specs carry its exposure and moved_m like a bake's, and the one tile is the coast
 * tile nearest half land (the shore pass's cost; the margin then measures it too).
 * --tiles JSON overrides the `tiles` section (e.g. '{"droplets": {"rounds": 6}}').
 * --png PREFIX writes a hillshade, the wear and the splat of a 768-sample crop of the tile, to
 * judge by eye.
 *
 * --phase: instead, the tile phase end to end - `terrain bake` of the demo planet
 * (--circumference-km K, default 25; --steps N, default 20; without the coastal pass unless
 * --coast) with its tiles, through --workers N local workers (default 2; 0 in-process) of --threads
 * N threads (default: the cores), from an empty result store in a temporary directory (or --out
 * DIR, kept), printing the tiles baked, the tile phase's seconds, seconds a tile, and the bake's
 * other phases.
 *
 * Usage: bench_tile [--km N] [--seed N] [--no-margin] [--no-tile] [--sample-km X] [--threads N]
 *                   [--png PREFIX] [--tiles JSON]
 *        bench_tile --phase [--circumference-km K] [--steps N] [--coast] [--workers N]
 *                   [--threads N] [--out DIR]
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cJSON.h>

#include "common/blob.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/png_io.h"
#include "coordinator/bake/bake.h"
#include "jobs/detail/ground_stats.h"
#include "jobs/detail/margin.h"
#include "jobs/detail/synthetic.h"

/* The ground statistics of the tile (jobs/detail/ground_stats.h): the deposit map's mounds per
 * km2, where the deposit lies, and what the carried loads did. */
static void s_ground(const tb_tile_result_t *r, const tb_detail_params_t *p)
{
    int64_t w = r->interior.w, h = r->interior.h;
    size_t n = (size_t)w * (size_t)h;
    uint8_t *land = malloc(n), *channel = malloc(n);
    double *dep = malloc(n * sizeof *dep);
    if (!land || !channel || !dep) {
        free(land);
        free(channel);
        free(dep);
        return;
    }
    /* a channel: the droplets' water reached splat.flow_full, the flow byte 32 log2(1 + water) */
    double flow_full = 32.0 * log2(1.0 + p->splat_flow_full);
    for (size_t i = 0; i < n; i++) {
        land[i] = r->height_m[i] > 0;
        channel[i] = r->flow[i] >= flow_full;
        dep[i] = (r->deposit[i] / 255.0) * (r->deposit[i] / 255.0);
    }
    double km2 = (double)n * p->cell_m * p->cell_m / 1e6, hollow = 0, convex = 0;
    int64_t maxima = tb_ground_deposit_maxima_u8(r->deposit, w, h, land);
    tb_ground_deposit_where(r->height_m, dep, channel, w, h, p->cell_m, 0.002, &hollow, &convex);
    const tb_droplet_budget_t *b = &r->budget;
    printf("  ground: %.0f deposit mounds a km2 (strict local maxima of the deposit map on land); "
           "%.1f %% of the deposit in hollows (Laplacian over 4 m above 0.002 /m) or channels, "
           "%.1f %% on convex ground; %.1f %% of the eroded load laid where a carry ended; %.2f "
           "carry steps a droplet\n",
           (double)maxima / km2, 100 * hollow, 100 * convex,
           100.0 * (double)b->deposited_end_q / (double)(b->eroded_q ? b->eroded_q : 1),
           (double)b->carry_steps / (double)(b->droplets ? b->droplets : 1));
    free(land);
    free(channel);
    free(dep);
}

/* The coast tile whose own geology cells are nearest half land (ties to the lower row, then
 * column): the most shore a tile holds, for --coast. */
static int s_coast_tile(const tb_tile_lattice_t *L, const uint8_t *land, tb_tile_id_t *out)
{
    double best = 2;
    int found = -1;
    int64_t T = L->tile_geo_cells;
    for (int64_t r = 0; r < L->rows; r++)
        for (int64_t c = 0; c < L->cols; c++) {
            int64_t n = 0, on = 0;
            for (int64_t j = r * T; j < (r + 1) * T && j < L->geo_h; j++)
                for (int64_t i = c * T; i < (c + 1) * T; i++, n++)
                    on += land[j * L->geo_w + i] != 0;
            double d = fabs((double)on / (double)(n ? n : 1) - 0.5);
            if (on > 0 && on < n && d < best) {
                best = d;
                *out = (tb_tile_id_t){c, r};
                found = 0;
            }
        }
    return found;
}

static double s_maxrss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* A hillshade (light from the north-west, 45 degrees up) of a crop of w x h heights, 8-bit grey,
 * for judging by eye; and the wear and the splat of the same crop. */
static void s_pictures(const char *prefix, const tb_tile_result_t *r, int64_t x0, int64_t y0,
                       int64_t n, double cell_m)
{
    int64_t W = r->interior.w;
    tb_image_t img;
    tb_err_t err;
    char path[512];
    if (tb_image_alloc(&img, (uint32_t)n, (uint32_t)n, TB_PNG_GRAY8, &err) != 0)
        return;
    uint8_t *px = img.pixels;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            int64_t x = x0 + i, y = y0 + j, xl = x > 0 ? x - 1 : x, xr = x < W - 1 ? x + 1 : x;
            int64_t yd = y > 0 ? y - 1 : y, yu = y < r->interior.h - 1 ? y + 1 : y;
            double gx = (r->height_m[y * W + xr] - r->height_m[y * W + xl]) / ((xr - xl) * cell_m);
            double gy = (r->height_m[yu * W + x] - r->height_m[yd * W + x]) / ((yu - yd) * cell_m);
            /* normal (-gx, -gy, 1); light (-1, 1, 1.41) normalised (north is +y, drawn at the top)
             */
            double nl = (gx - (-gy) * -1.0 + 1.41) / (sqrt(gx * gx + gy * gy + 1) * 2.0);
            nl = nl < 0 ? 0 : (nl > 1 ? 1 : nl);
            px[j * n + i] = (uint8_t)(255 * nl);
        }
    snprintf(path, sizeof path, "%s_hillshade.png", prefix);
    tb_png_write(path, &img, 6, &err);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
            px[j * n + i] = r->wear[(y0 + j) * W + x0 + i];
    snprintf(path, sizeof path, "%s_wear.png", prefix);
    tb_png_write(path, &img, 6, &err);
    tb_image_free(&img);
    if (tb_image_alloc(&img, (uint32_t)n, (uint32_t)n, TB_PNG_RGBA8, &err) != 0)
        return;
    px = img.pixels;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            const uint8_t *w = &r->splat[4 * ((y0 + j) * W + x0 + i)];
            uint8_t *o = &px[4 * (j * n + i)];
            /* rock grey, grass green, sediment tan, scree/snow white */
            double rr = w[0] * 0.5 + w[1] * 0.25 + w[2] * 0.8 + w[3] * 0.95;
            double gg = w[0] * 0.5 + w[1] * 0.55 + w[2] * 0.7 + w[3] * 0.95;
            double bb = w[0] * 0.5 + w[1] * 0.2 + w[2] * 0.5 + w[3] * 0.95;
            o[0] = (uint8_t)rr;
            o[1] = (uint8_t)gg;
            o[2] = (uint8_t)bb;
            o[3] = 255;
        }
    snprintf(path, sizeof path, "%s_splat.png", prefix);
    tb_png_write(path, &img, 6, &err);
    tb_image_free(&img);
    printf("pictures: %s_{hillshade,wear,splat}.png (a %lld-sample crop at 1:1)\n", prefix,
           (long long)n);
}

static void s_load(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char buf[128] = "?";
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = '\0';
        fclose(f);
    }
    printf("load average: %s", buf);
}

static int s_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* --phase: the demo's tile phase end to end (a whole bake with its tiles, fresh store). */
static int s_phase(double circ_km, int steps, bool coast, int workers, int threads,
                   const char *out_dir)
{
    char tmpl[] = "/tmp/bench_tile_phase-XXXXXX";
    const char *dir = out_dir;
    if (!dir) {
        if (!mkdtemp(tmpl)) {
            perror("bench tile: mkdtemp");
            return 1;
        }
        dir = tmpl;
    }
    s_load();
    tb_bake_opts_t o = {0};
    o.out_dir = dir;
    o.steps = steps;
    o.quiet = true;
    o.tiles = true;
    o.no_coast = !coast;
    o.input.has_circumference = true;
    o.input.circumference_km = circ_km;
    o.dispatch.workers = workers;
    o.dispatch.workers_given = true;
    o.dispatch.threads = threads;
    o.dispatch.fresh = true;
    tb_bake_outcome_t out;
    tb_err_t err;
    double t0 = tb_now_s();
    int rc = tb_bake_run(&o, &out, &err);
    double dt = tb_now_s() - t0;
    if (rc != 0) {
        fprintf(stderr, "bench tile: --phase: %s\n", err.msg);
    } else {
        int n = out.tiles_baked;
        printf("tile phase of the %g km demo planet (seed 7, %d steps, %s): %d tiles in %.1f s "
               "wall, %.2f s a tile; %d %s of %d thread%s (%s); whole bake %.1f s, peak memory of "
               "this process %.0f MB\n",
               circ_km, steps, coast ? "with the coastal pass" : "no coastal pass", n,
               out.tiles_seconds, n ? out.tiles_seconds / n : 0, workers,
               workers == 0   ? "(in-process)"
               : workers == 1 ? "local worker"
                              : "local workers",
               threads > 0 ? threads : tb_pool_default_threads(),
               (threads > 0 ? threads : tb_pool_default_threads()) == 1 ? "" : "s",
               workers == 0 ? "one pool" : "each", dt, s_maxrss_mb());
        printf("  (wall seconds on a shared machine: read them with the load above; the one-tile "
               "figure without --phase is the CPU seconds of one thread)%s%s\n",
               out_dir ? "; the bake is in " : "", out_dir ? out_dir : "");
    }
    tb_bake_outcome_free(&out);
    s_load();
    if (!out_dir)
        nftw(tmpl, s_rm, 16, FTW_DEPTH | FTW_PHYS);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    double km = 10, sample_km = 0.4;
    uint64_t seed = 7;
    int do_margin = 1, do_tile = 1, threads = 1;
    const char *png = NULL, *tiles_json = NULL;
    bool phase = false, coast = false, threads_given = false;
    double circ_km = 25;
    int steps = 20, workers = 2;
    const char *out_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--km") && i + 1 < argc)
            km = atof(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--sample-km") && i + 1 < argc)
            sample_km = atof(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]), threads_given = true;
        else if (!strcmp(argv[i], "--phase"))
            phase = true;
        else if (!strcmp(argv[i], "--coast"))
            coast = true;
        else if (!strcmp(argv[i], "--circumference-km") && i + 1 < argc)
            circ_km = atof(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
            workers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out_dir = argv[++i];
        else if (!strcmp(argv[i], "--tiles") && i + 1 < argc)
            tiles_json = argv[++i];
        else if (!strcmp(argv[i], "--png") && i + 1 < argc)
            png = argv[++i];
        else if (!strcmp(argv[i], "--no-margin"))
            do_margin = 0;
        else if (!strcmp(argv[i], "--no-tile"))
            do_tile = 0;
        else {
            fprintf(stderr,
                    "usage: bench_tile [--km N] [--seed N] [--no-margin] [--no-tile] "
                    "[--sample-km X] [--threads N] [--png PREFIX] [--tiles JSON] [--coast]\n"
                    "       bench_tile --phase [--circumference-km K] [--steps N] "
                    "[--coast] [--workers N] [--threads N] [--out DIR]\n");
            return 2;
        }
    }
    if (phase) {
        if (!(circ_km > 0) || steps < 1 || workers < 0 || threads < 0) {
            fprintf(stderr, "bench tile: --phase: --circumference-km, --steps, --workers and "
                            "--threads must be positive (workers and threads may be 0)\n");
            return 2;
        }
        return s_phase(circ_km, steps, coast, workers, threads_given ? threads : 0, out_dir);
    }
    tb_err_t err;
    const double cell = 8;
    int64_t gw = (int64_t)(km * 1000 / cell), gh = gw;
    double t0 = tb_now_s();
    tb_detail_synthetic_t syn;
    if (tb_detail_synthetic_make(&syn, gw, gh, cell, seed, 150, 900, 3000, &err) != 0) {
        fprintf(stderr, "bench tile: %s\n", err.msg);
        return 1;
    }
    printf("synthetic planet: %lld x %lld cells of %g m (%.1f s)\n", (long long)gw, (long long)gh,
           cell, tb_now_s() - t0);
    if (coast) { /* the coastal pass over it, as a bake's tiles read the planet */
        double tc = tb_now_s();
        if (tb_detail_synthetic_coast(&syn, 400, 0.5, threads, &err) != 0) {
            fprintf(stderr, "bench tile: %s\n", err.msg);
            return 1;
        }
        printf("coastal pass over it: %.1f s\n", tb_now_s() - tc);
    }
    s_load();
    tb_pool_t *pool = tb_pool_new(threads, &err);
    if (!pool) {
        fprintf(stderr, "bench tile: %s\n", err.msg);
        return 1;
    }
    const tb_tile_class_t classes[2] = {{0, 1.0}, {1, 1.0}};
    const double lo = -512, hi = 1536;
    tb_detail_params_t p;
    tb_detail_params_defaults(&p);
    if (tiles_json) {
        cJSON *j = cJSON_Parse(tiles_json);
        if (!j || tb_detail_params_parse(j, "--tiles", &p, &err) != 0) {
            fprintf(stderr, "bench tile: %s\n", j ? err.msg : "--tiles: not JSON");
            return 2;
        }
        cJSON_Delete(j);
    }
    tb_detail_params_t defaults;
    tb_detail_params_defaults(&defaults);
    int rc = 0;
    if (do_tile) {
        tb_tile_lattice_t L;
        tb_tile_id_t id;
        double deg = 0;
        if (tb_tile_lattice_make(&L, gw, gh, cell, p.size_km, p.cell_m, &err) != 0 ||
            tb_tile_steepest(&L, syn.height_m, syn.land, &id, &deg) != 0) {
            fprintf(stderr, "bench tile: %s\n", err.msg);
            return 1;
        }
        if (coast && s_coast_tile(&L, syn.land, &id) != 0) {
            fprintf(stderr, "bench tile: --coast: no coast tile\n");
            return 1;
        }
        tb_tile_spec_owned_t spec;
        if (tb_tile_spec_cut(&syn.planet, id, seed, &p, lo, hi, classes, 2, &spec, &err) != 0) {
            fprintf(stderr, "bench tile: %s\n", err.msg);
            return 1;
        }
        char name[TB_TILE_ID_MAX];
        tb_tile_id_format(id, name);
        tb_frame_t win;
        tb_tile_window(&L, id, p.margin_cells, &win, NULL);
        void *sb = NULL, *blob = NULL;
        size_t sn = 0, bn = 0;
        if (tb_tile_spec_encode(&spec.spec, &sb, &sn, &err) != 0 ||
            tb_blob_encode(sb, sn, 0, &blob, &bn, &err) != 0) {
            fprintf(stderr, "bench tile: %s\n", err.msg);
            return 1;
        }
        printf("spec: %lld x %lld geology cells, %.2f MB raw, %.2f MB as a blob (zstd %d)\n",
               (long long)spec.spec.geo.w, (long long)spec.spec.geo.h, sn / 1048576.0,
               bn / 1048576.0, TB_BLOB_DEFAULT_LEVEL);
        free(sb);
        free(blob);
        double rss0 = s_maxrss_mb();
        tb_tile_result_t r;
        double t1 = tb_now_s();
        if (tb_tile_compute(&spec.spec, pool, &r, &err) != 0) {
            fprintf(stderr, "bench tile: %s\n", err.msg);
            return 1;
        }
        double total = tb_now_s() - t1;
        double in_cells = (double)r.interior.w * (double)r.interior.h;
        double win_cells = (double)win.w * (double)win.h;
        printf("tile %s (steepest geology slope %.1f deg): %lld x %lld samples at %g m, margin %d, "
               "window %lld x %lld, %d thread(s)\n",
               name, deg, (long long)r.interior.w, (long long)r.interior.h, p.cell_m,
               p.margin_cells, (long long)win.w, (long long)win.h, threads);
        const char *names[6] = {"resample", "relief", "droplets", "thermal", "shore", "outputs"};
        double cpu = 0;
        printf("  pass      CPU s    wall s   CPU ns/window cell\n");
        for (int k = 0; k < 6; k++) {
            printf("  %-9s %6.3f  %7.3f  %6.1f\n", names[k], r.pass_cpu_s[k], r.pass_s[k],
                   1e9 * r.pass_cpu_s[k] / win_cells);
            cpu += r.pass_cpu_s[k];
        }
        printf("  total     %6.3f  %7.3f  %6.1f (CPU ns/interior cell %.1f; target 4 s, "
               "predecessor 12 s)\n",
               cpu, total, 1e9 * cpu / win_cells, 1e9 * cpu / in_cells);
        printf("  (CPU seconds of the one thread are the figure on a shared machine; wall seconds "
               "include the time other processes held the core)\n");
        printf(
            "  droplets: %lld, steps %lld (%.1f CPU ns a step); eroded %.3g m3, deposited %.3g m3, "
            "carried off the window %.3g m3 (%.3g m3 of the deposit laid where droplets died)\n",
            (long long)r.budget.droplets, (long long)r.budget.steps,
            1e9 * r.pass_cpu_s[2] / (double)(r.budget.steps ? r.budget.steps : 1),
            r.budget.eroded_q * TB_DROPLET_QUANTUM_M * p.cell_m * p.cell_m,
            r.budget.deposited_q * TB_DROPLET_QUANTUM_M * p.cell_m * p.cell_m,
            r.budget.carried_edge_q * TB_DROPLET_QUANTUM_M * p.cell_m * p.cell_m,
            r.budget.deposited_end_q * TB_DROPLET_QUANTUM_M * p.cell_m * p.cell_m);
        printf("  interior: mean wear %.4f m, land cells with channel flow %.2f %%\n",
               r.stats.eroded_q * TB_DROPLET_QUANTUM_M / in_cells,
               100.0 * (double)r.stats.channel_cells /
                   (double)(r.stats.land_cells ? r.stats.land_cells : 1));
        s_ground(&r, &p);
        printf(
            "peak memory: %.0f MB (getrusage maxrss; %.0f MB before the tile, planet included)\n",
            s_maxrss_mb(), rss0);
        if (png)
            s_pictures(png, &r, 800, 800, 768, p.cell_m);
        void *rb = NULL;
        size_t rn = 0;
        if (tb_tile_result_encode(&r, &rb, &rn, &err) == 0 &&
            tb_blob_encode(rb, rn, 0, &blob, &bn, &err) == 0)
            printf("result: %.1f MB raw, %.1f MB as a blob\n", rn / 1048576.0, bn / 1048576.0);
        free(rb);
        free(blob);
        tb_tile_result_free(&r);
        tb_tile_spec_free(&spec);
    }
    if (do_margin) {
        tb_detail_params_t q = p;
        q.size_km = sample_km;
        tb_tile_lattice_t L;
        if (tb_tile_lattice_make(&L, gw, gh, cell, q.size_km, q.cell_m, &err) != 0) {
            fprintf(stderr, "bench tile: %s\n", err.msg);
            return 1;
        }
        tb_tile_id_t ids[3];
        double deg;
        if (tb_tile_steepest(&L, syn.height_m, syn.land, &ids[0], &deg) != 0) {
            fprintf(stderr, "bench tile: no land\n");
            return 1;
        }
        /* two more land tiles at fixed places of the lattice (the first land tile from a third and
         * from two thirds of the way round) */
        for (int s = 1; s < 3; s++) {
            int64_t k0 = tb_tile_count(&L) * s / 3;
            for (int64_t k = k0; k < tb_tile_count(&L); k++) {
                tb_tile_id_t t = {k % L.cols, k / L.cols};
                if (tb_tile_content(&L, t, syn.land) == TB_TILE_LAND) {
                    ids[s] = t;
                    break;
                }
                ids[s] = ids[0];
            }
        }
        int64_t bound = tb_detail_margin_bound(&q);
        int64_t margins[32];
        int n = 0;
        for (int64_t m = 0; m <= bound && n < 32; m += m < 32 ? 4 : 8)
            margins[n++] = m;
        printf(
            "margin: provable bound %lld cells (%d rounds x (%d steps + %d carried + 1 + brush %d "
            "+ 1) + 4 x settle %d + %d thermal + 2, at least the shore's %d); reference at "
            "%lld\n",
            (long long)bound, q.droplet_rounds, q.droplet_lifetime, q.droplet_carry_steps,
            q.droplet_brush_radius, q.droplet_settle_cells, q.thermal_iterations,
            TB_DETAIL_SHORE_REACH_CELLS, (long long)(2 * bound));
        int64_t measured = 0, measured_f = 0;
        for (int s = 0; s < 3; s++) {
            char name[TB_TILE_ID_MAX];
            tb_tile_id_format(ids[s], name);
            tb_margin_row_t rows[32];
            if (tb_tile_margin_measure(&syn.planet, ids[s], seed, &q, lo, hi, classes, 2, margins,
                                       n, 2 * bound, rows, pool, &err) != 0) {
                fprintf(stderr, "bench tile: %s\n", err.msg);
                return 1;
            }
            printf("sample %s%s (%g km tile):\n  margin  max |dh| m  16-bit cells differing\n",
                   name, s == 0 ? " (steepest)" : "", sample_km);
            int64_t first_clean = -1, first_exact = -1;
            for (int k = 0; k < n; k++) {
                printf("  %6lld  %10.6f  %8lld  %8.4f %%\n", (long long)rows[k].margin,
                       rows[k].max_abs_diff_m, (long long)rows[k].cells_differ,
                       100.0 * rows[k].share_differ);
                if (rows[k].cells_differ != 0)
                    first_clean = -1;
                else if (first_clean < 0)
                    first_clean = rows[k].margin;
                if (rows[k].max_abs_diff_m != 0)
                    first_exact = -1;
                else if (first_exact < 0)
                    first_exact = rows[k].margin;
            }
            if (first_clean < 0)
                first_clean = bound;
            if (first_exact < 0)
                first_exact = bound;
            measured = first_clean > measured ? first_clean : measured;
            measured_f = first_exact > measured_f ? first_exact : measured_f;
        }
        printf("measured margin: %lld cells for identical 16-bit interiors on every sample from "
               "there on, %lld cells for identical float heights; provable bound %lld; margin "
               "used %d (default %d)\n",
               (long long)measured, (long long)measured_f, (long long)bound, p.margin_cells,
               defaults.margin_cells);
        if (measured_f > p.margin_cells) {
            printf("WARNING: the default margin is below the measured one\n");
            rc = 1;
        }
    }
    tb_pool_destroy(&pool);
    tb_detail_synthetic_free(&syn);
    return rc;
}
