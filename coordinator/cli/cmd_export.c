/* `terrain export OUT --engine unreal|unity|godot|raw --out DIR [--area X0,Y0,W,H | --landmass N
 * | --tiles IDS] [--tile-samples N] [--name NAME] [--float] [--geotiff] [--fill-unbaked M]`: a
 * bake's detail tiles as an engine imports them, with an import sheet (coordinator/export/export.h,
 * docs/export.md). Never re-bakes. Exit 0; 1 when the bake is damaged (a listed file missing,
 * unreadable or not its XXH3); 2 for bad usage or an area the bake cannot give (tiles it did not
 * make, tiles without float heights, a grid the planet or the engine cannot hold). */
#include <cJSON.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"
#include "coordinator/export/export.h"

/* "X0,Y0,W,H": four numbers, or -1. */
static int s_parse_area(const char *text, double v[4])
{
    const char *p = text;
    for (int i = 0; i < 4; i++) {
        char *end;
        errno = 0;
        v[i] = strtod(p, &end);
        if (end == p || errno != 0)
            return -1;
        p = end;
        if (i < 3 && *p++ != ',')
            return -1;
    }
    return *p == '\0' ? 0 : -1;
}

/* One id "c<col>r<row>" at *p, advancing it; -1 when it is not one. */
static int s_parse_id(const char **p, int64_t *col, int64_t *row)
{
    long long c, r;
    int used = 0;
    if (sscanf(*p, "c%lldr%lld%n", &c, &r, &used) != 2 || used == 0)
        return -1;
    *p += used;
    *col = c;
    *row = r;
    return 0;
}

/* --tiles: ids and rectangles A-B of bake tiles, as `terrain tiles --only` takes them; the area is
 * the smallest rectangle holding them, its columns the shortest arc round the planet. */
static int s_tiles_area(const char *text, const tb_mosaic_info_t *I, tb_mosaic_rect_t *out,
                        tb_err_t *err)
{
    uint8_t *cols = calloc((size_t)I->cols, 1);
    int64_t r0 = INT64_MAX, r1 = -1;
    const char *p = text;
    if (!cols)
        return tb_err_set(err, TB_E_NOMEM, "--tiles: out of memory");
    while (*p) {
        int64_t c0, q0, c1, q1;
        const char *item = p;
        if (s_parse_id(&p, &c0, &q0) != 0)
            goto bad;
        c1 = c0;
        q1 = q0;
        if (*p == '-') {
            p++;
            if (s_parse_id(&p, &c1, &q1) != 0)
                goto bad;
        }
        if (c0 < 0 || c1 >= I->cols || c0 > c1 || q0 < 0 || q1 >= I->rows || q0 > q1) {
            free(cols);
            return tb_err_set(err, TB_E_INVALID,
                              "--tiles %.*s: no such tile (or rectangle); this planet's tiles are "
                              "c000r000..c%03lldr%03lld",
                              (int)(p - item), item, (long long)I->cols - 1,
                              (long long)I->rows - 1);
        }
        for (int64_t c = c0; c <= c1; c++)
            cols[c] = 1;
        r0 = q0 < r0 ? q0 : r0;
        r1 = q1 > r1 ? q1 : r1;
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (r1 < 0)
        goto bad;
    /* the shortest arc holding the chosen columns: it starts after the longest run of others */
    int64_t best_gap = -1, best_end = 0;
    for (int64_t c = 0; c < I->cols; c++) {
        if (!cols[c])
            continue;
        int64_t gap = 0;
        while (gap < I->cols && !cols[(c + I->cols - 1 - gap) % I->cols])
            gap++;
        if (gap > best_gap) {
            best_gap = gap;
            best_end = c;
        }
    }
    free(cols);
    int64_t T = I->tile_samples, h_end = (r1 + 1) * T < I->planet_h ? (r1 + 1) * T : I->planet_h;
    *out = (tb_mosaic_rect_t){best_end * T, r0 * T, (I->cols - best_gap) * T, h_end - r0 * T};
    return 0;
bad:
    free(cols);
    return tb_err_set(err, TB_E_INVALID,
                      "--tiles \"%s\": expected ids like c001r000 and rectangles "
                      "c000r000-c002r001, comma separated",
                      text);
}

/* --landmass N: the box of the region that holds landmass N, from OUT/plan.json (geology cells:
 * the landmass with its ocean margin, which holds its shelf). */
static int s_landmass_area(const char *out_dir, int64_t id, double a[4], tb_err_t *err)
{
    char path[4200], *text = NULL;
    size_t n;
    if (tb_fs_join(path, sizeof path, out_dir, "plan.json", err) != 0 ||
        tb_fs_read_all(path, (size_t)1 << 28, &text, &n, err) != 0)
        return -1;
    cJSON *plan = cJSON_ParseWithLength(text, n);
    free(text);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(plan, "manifest");
    const cJSON *cell = cJSON_GetObjectItemCaseSensitive(m, "cell_m");
    const cJSON *regions = cJSON_GetObjectItemCaseSensitive(plan, "regions");
    int rc = tb_err_set(err, TB_E_INVALID, "--landmass %lld: %s lists no such landmass",
                        (long long)id, path);
    if (!cJSON_IsNumber(cell) || !cJSON_IsArray(regions)) {
        rc = tb_err_set(err, TB_E_FORMAT, "%s: no manifest.cell_m or regions", path);
        goto done;
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, regions)
    {
        const cJSON *l, *box = cJSON_GetObjectItemCaseSensitive(r, "box");
        cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(r, "landmasses"))
        {
            if (!cJSON_IsNumber(l) || (int64_t)l->valuedouble != id)
                continue;
            const char *k[4] = {"x0", "y0", "w", "h"};
            for (int q = 0; q < 4; q++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(box, k[q]);
                if (!cJSON_IsNumber(v)) {
                    rc = tb_err_set(err, TB_E_FORMAT, "%s: region box without \"%s\"", path, k[q]);
                    goto done;
                }
                a[q] = v->valuedouble * cell->valuedouble;
            }
            *err = (tb_err_t){0};
            rc = 0;
            goto done;
        }
    }
done:
    cJSON_Delete(plan);
    return rc;
}

int tb_cmd_export(int argc, char **argv)
{
    const char *engine_name = NULL, *out_dir = NULL, *area = NULL, *tiles = NULL, *name = NULL;
    int64_t landmass = -1, tile_samples = 0;
    double fill_m = 0;
    bool want_float = false, want_geotiff = false, fill_given = false, quiet = false;
    const tb_opt_t opts[] = {
        {"engine", TB_OPT_STRING, &engine_name, NULL, "unreal|unity|godot|raw",
         "the engine whose layout, naming and sheet to write (required)"},
        {"out", TB_OPT_STRING, &out_dir, NULL, "DIR", "the directory to write into (required)"},
        {"area", TB_OPT_STRING, &area, NULL, "X0,Y0,W,H",
         "world metres: x east from x = 0 (modulo the circumference: an area may cross the X "
         "seam), y south from the north edge, width, height"},
        {"landmass", TB_OPT_INT, &landmass, NULL, "N",
         "the box of the region holding landmass N (OUT/plan.json; ids from `terrain plan`)",
         TB_OPT_IRANGE(1, 1000000000), .range_text = "1.."},
        {"tiles", TB_OPT_STRING, &tiles, NULL, "IDS",
         "bake tiles, as `terrain tiles --only` takes them (c001r000, c000r000-c002r001)"},
        {"tile-samples", TB_OPT_INT, &tile_samples, NULL, "N",
         "samples a side of every exported tile, from the engine's valid set (default: unreal "
         "2017, unity 2049, godot 1024, raw 2049, or the largest the planet holds)",
         TB_OPT_IRANGE(2, 1 << 20), .range_text = "the engine's sizes"},
        {"name", TB_OPT_STRING, &name, NULL, "NAME", "the base of every file name (terrain)"},
        {"float", TB_OPT_FLAG, &want_float, NULL, NULL,
         "also write float32 heights (<name>_<i>_<j>.f32 with an ENVI .hdr; raw always does)"},
        {"geotiff", TB_OPT_FLAG, &want_geotiff, NULL, NULL,
         "also write float32 GeoTIFF heights, one <tile name>.tif a tile, placed in the planet's "
         "local metric frame (docs/export.md, \"GeoTIFF\")"},
        {"fill-unbaked", TB_OPT_DOUBLE, &fill_m, &fill_given, "METRES",
         "fill tiles the bake did not make (ocean) with this height instead of refusing"},
        {"quiet", TB_OPT_FLAG, &quiet, NULL, NULL, "no progress lines"},
    };
    tb_verb_t v = {.name = "export",
                   .usage = "terrain export OUT --engine unreal|unity|godot|raw --out DIR [--area "
                            "X0,Y0,W,H | --landmass N | --tiles IDS] [--tile-samples N] [--name "
                            "NAME] [--float] [--geotiff] [--fill-unbaked METRES]",
                   TB_VERB_OPTS(opts),
                   .min_positional = 1,
                   .max_positional = 1,
                   .positional_what = "the bake's output directory"};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    tb_err_t err;
    tb_export_opts_t o = {.out_dir = out_dir,
                          .name = name,
                          .tile_samples = tile_samples,
                          .float_heights = want_float,
                          .geotiff = want_geotiff,
                          .fill_unbaked = fill_given,
                          .fill_m = (float)fill_m,
                          .quiet = quiet};
    if (!engine_name)
        return tb_verb_usage(&v, "--engine unreal|unity|godot|raw is required");
    if (tb_export_engine_parse(engine_name, &o.engine, &err) != 0)
        return tb_verb_usage(&v, "%s", err.msg);
    if (!out_dir)
        return tb_verb_usage(&v, "--out DIR is required");
    if ((area != NULL) + (tiles != NULL) + (landmass >= 0) > 1)
        return tb_verb_usage(&v, "--area, --landmass and --tiles choose the area: give one");
    if (name && (!*name || strchr(name, '/')))
        return tb_verb_usage(&v, "--name \"%s\": expected a file name without '/'", name);
    double a[4];
    if (area && s_parse_area(area, a) != 0)
        return tb_verb_usage(&v, "--area \"%s\": expected four numbers X0,Y0,W,H in metres", area);
    tb_mosaic_t *m = NULL;
    if (tb_mosaic_open(v.positional[0], &m, &err) != 0)
        return tb_verb_error(&v, err.code == TB_E_IO ? TB_EXIT_USAGE : TB_EXIT_FAILED, &err);
    tb_mosaic_info_t info;
    tb_mosaic_info(m, &info);
    tb_mosaic_close(&m);
    int rc;
    if (landmass >= 0 && s_landmass_area(v.positional[0], landmass, a, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    if (tiles)
        rc = s_tiles_area(tiles, &info, &o.area, &err);
    else if (area || landmass >= 0)
        rc = tb_mosaic_area_samples(&info, a[0], a[1], a[2], a[3], INT64_MAX, &o.area, &err);
    else
        rc = (o.area = (tb_mosaic_rect_t){0, 0, info.planet_w, info.planet_h}, 0);
    if (rc != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    /* the export frees and allocates tile-sized buffers (25 MB) all along: keep them mmapped so
     * a free returns them, or glibc's growing threshold moves them onto a heap that fragments
     * (measured: 670 MB peak for 39 Terrain3D regions of the demo) */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    tb_export_report_t rep;
    if (tb_export_run(v.positional[0], &o, &rep, &err) != 0)
        return tb_verb_error(&v, err.code == TB_E_INVALID ? TB_EXIT_USAGE : TB_EXIT_FAILED, &err);
    double share =
        rep.land_samples ? 100.0 * (double)rep.terraced_u16 / (double)rep.land_samples : 0;
    printf("export: %d tiles (%d files) in %s in %.1f s; 16-bit step %.3f mm over %.2f .. %.2f m; "
           "terraces: %.3f %% of %lld land samples equal all four neighbours (16-bit), %.3f %% "
           "(float)\n",
           rep.tiles_written, rep.files_written, out_dir, rep.seconds, rep.scale.step_m * 1000,
           rep.scale.lo_m, rep.scale.hi_m, share, (long long)rep.land_samples,
           rep.land_samples ? 100.0 * (double)rep.terraced_float / (double)rep.land_samples : 0);
    if (share > 1.0)
        printf("export: the range %.2f .. %.2f m is too wide for 16 bits here: %.3f %% of the "
               "land lies on flat treads of %.1f mm; %s\n",
               rep.scale.lo_m, rep.scale.hi_m, share, rep.scale.step_m * 1000,
               o.engine == TB_EXPORT_RAW || o.float_heights
                   ? "the float32 .f32 files beside have no steps"
                   : "--float writes float32 heights beside (or export a smaller area)");
    if (rep.filled_samples)
        printf("export: %lld samples of unbaked tiles filled with %g m\n",
               (long long)rep.filled_samples, fill_m);
    return TB_EXIT_OK;
}
