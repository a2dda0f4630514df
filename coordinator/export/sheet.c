/* The import sheet; see sheet.h. Coordinates: world metres of the planet, x east from x = 0
 * (unwrapped: an export across the seam goes on past the circumference), y south from the north
 * edge; a sample's position is its centre ((I + 0.5) cell_m). */
#include "coordinator/export/sheet.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"

#define S_TERRAIN3D_REGIONS 32 /* Terrain3D's region map is 32 x 32 regions (REGION_MAP_SIZE) */

int tb_export_sheet_check(tb_export_engine_t engine, const tb_export_grid_t *g, tb_err_t *err)
{
    if (engine == TB_EXPORT_GODOT && (g->nx > S_TERRAIN3D_REGIONS || g->ny > S_TERRAIN3D_REGIONS))
        return tb_err_set(err, TB_E_INVALID,
                          "the area needs %lld x %lld Terrain3D regions of %lld samples, and "
                          "Terrain3D holds at most %d x %d: choose a larger --tile-samples",
                          (long long)g->nx, (long long)g->ny, (long long)g->size,
                          S_TERRAIN3D_REGIONS, S_TERRAIN3D_REGIONS);
    return 0;
}

/* Unreal's component layout of an overall size, from the Landscape Technical Guide's table of
 * recommended sizes: quads a section, sections a component (per side), components a side. */
static void s_unreal_layout(int64_t n, int *quads, int *sections, int *components)
{
    *quads = n == 8129 ? 127 : 63;
    *sections = 2;
    *components = (int)((n - 1) / (*quads * *sections));
}

static cJSON *s_pair(double a, double b)
{
    double v[2] = {a, b};
    return cJSON_CreateDoubleArray(v, 2);
}

static cJSON *s_triple(double a, double b, double c)
{
    double v[3] = {a, b, c};
    return cJSON_CreateDoubleArray(v, 3);
}

/* Appends printf text to a growing buffer. */
static void s_cat(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void s_cat(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
        va_end(ap);
        if (k < 0)
            return;
        if (*buf && *len + (size_t)k < *cap) {
            *len += (size_t)k;
            return;
        }
        size_t ncap = (*cap ? *cap * 2 : 4096) + (size_t)k;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return;
        *buf = nb;
        *cap = ncap;
    }
}

int tb_export_sheet_write(const char *bake_dir, const tb_export_opts_t *o,
                          const tb_mosaic_info_t *info, const tb_export_preset_t *p,
                          const tb_export_report_t *rep, cJSON *files, tb_err_t *err)
{
    const tb_export_grid_t *g = &rep->grid;
    const tb_export_scale_t *s = &rep->scale;
    const double c = info->cell_m;
    const char *base = o->name ? o->name : "terrain";
    double share = rep->land_samples ? (double)rep->terraced_u16 / (double)rep->land_samples : 0;
    char *txt = NULL;
    size_t len = 0, cap = 0;
    cJSON *sh = cJSON_CreateObject();
    cJSON_AddStringToObject(sh, "engine", p->name);
    cJSON_AddStringToObject(sh, "bake", bake_dir);
    cJSON_AddNumberToObject(sh, "tile_samples", (double)g->size);
    cJSON_AddItemToObject(sh, "tiles", s_pair((double)g->nx, (double)g->ny));
    cJSON_AddBoolToObject(sh, "shared_edges", p->shared_edge);
    cJSON_AddNumberToObject(sh, "cell_m", c);
    cJSON *area = cJSON_AddObjectToObject(sh, "area");
    cJSON_AddItemToObject(area, "asked_samples",
                          cJSON_CreateDoubleArray((double[]){(double)o->area.x0, (double)o->area.y0,
                                                             (double)o->area.w, (double)o->area.h},
                                                  4));
    cJSON_AddItemToObject(area, "first_sample", s_pair((double)g->x0, (double)g->y0));
    cJSON_AddItemToObject(area, "first_sample_centre_m",
                          s_pair(((double)g->x0 + 0.5) * c, ((double)g->y0 + 0.5) * c));
    cJSON_AddItemToObject(area, "covered_samples",
                          s_pair((double)g->covered_w, (double)g->covered_h));
    cJSON_AddItemToObject(area, "covered_m",
                          s_pair((double)(g->covered_w - 1) * c, (double)(g->covered_h - 1) * c));
    cJSON_AddNumberToObject(area, "moved_north_samples", (double)g->shifted_north);
    cJSON_AddNumberToObject(area, "rows_left_out", (double)g->rows_left_out);
    cJSON_AddNumberToObject(area, "filled_samples", (double)rep->filled_samples);
    cJSON *hj = cJSON_AddObjectToObject(sh, "heights");
    cJSON_AddNumberToObject(hj, "min_m", rep->min_m);
    cJSON_AddNumberToObject(hj, "max_m", rep->max_m);
    cJSON_AddNumberToObject(hj, "lo_m", s->lo_m);
    cJSON_AddNumberToObject(hj, "hi_m", s->hi_m);
    cJSON_AddNumberToObject(hj, "step_m", s->step_m);
    cJSON_AddStringToObject(hj, "decode",
                            "h = lo_m + v * (hi_m - lo_m) / 65535, v the 16-bit "
                            "sample; |h - baked| <= step_m / 2 at every sample");
    cJSON_AddNumberToObject(hj, "land_samples", (double)rep->land_samples);
    cJSON_AddNumberToObject(hj, "terraced_share_16bit", share);
    cJSON_AddNumberToObject(
        hj, "terraced_share_float",
        rep->land_samples ? (double)rep->terraced_float / (double)rep->land_samples : 0);
    cJSON_AddBoolToObject(hj, "float32_files", o->float_heights || o->engine == TB_EXPORT_RAW);
    cJSON_AddBoolToObject(hj, "geotiff_files", o->geotiff);
    if (o->geotiff) {
        /* the frame of coordinator/export/geotiff.h, as the files carry it */
        cJSON *gj = cJSON_AddObjectToObject(sh, "geotiff");
        cJSON_AddStringToObject(gj, "format", "GeoTIFF, one float32 band of metres, deflate");
        cJSON_AddStringToObject(gj, "names", "<tile name>.tif, beside the engine's height file");
        cJSON_AddStringToObject(gj, "crs",
                                "user-defined projected (ProjectedCSTypeGeoKey 32767), linear "
                                "and vertical units metre");
        cJSON_AddStringToObject(gj, "citation", rep->citation);
        cJSON_AddStringToObject(gj, "raster_type", "PixelIsArea");
        cJSON_AddStringToObject(
            gj, "frame",
            "model X = world x (metres east of the seam, unwrapped past the circumference), "
            "model Y = - world y (north up, 0 at the planet's north edge); pixel (c, r) is the "
            "cell_m square centred on its sample, so tile (i, j)'s tie point is its first "
            "sample's north-west corner");
        cJSON_AddItemToObject(gj, "tile_0_0_origin_m",
                              s_pair((double)g->x0 * c, -(double)g->y0 * c));
        cJSON_AddNumberToObject(gj, "tile_step_m", (double)g->stride * c);
        cJSON_AddNumberToObject(gj, "pixel_m", c);
        cJSON *tl = cJSON_AddArrayToObject(gj, "tiles");
        for (int64_t j = 0; j < g->ny; j++)
            for (int64_t i = 0; i < g->nx; i++) {
                char name[512];
                tb_export_tile_name(p, g, base, "", i, j, ".tif", name, sizeof name);
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "file", name);
                cJSON_AddItemToObject(e, "north_west_m",
                                      s_pair((double)(g->x0 + i * g->stride) * c,
                                             -(double)(g->y0 + j * g->stride) * c));
                cJSON_AddItemToArray(tl, e);
            }
    }

    s_cat(&txt, &len, &cap,
          "terrain export: %s, %lld x %lld tiles of %lld x %lld samples at %g m%s, from %s\n"
          "heights %.3f .. %.3f m, 16-bit over %.2f .. %.2f m (%.3f mm a step): "
          "%.3f %% of %lld land samples equal all four neighbours\n\n",
          p->name, (long long)g->nx, (long long)g->ny, (long long)g->size, (long long)g->size, c,
          p->shared_edge ? ", neighbours sharing their edge samples" : "", bake_dir, rep->min_m,
          rep->max_m, s->lo_m, s->hi_m, s->step_m * 1000, 100 * share,
          (long long)rep->land_samples);
    if (o->geotiff)
        s_cat(
            &txt, &len, &cap,
            "GeoTIFF (QGIS: Layer > Add Raster Layer; Blender: import as a displacement image): "
            "<tile name>.tif, float32 metres; the tile i-th east and j-th south has its north-west "
            "corner at (%.1f + %g i, %.1f - %g j) m (geotiff.tiles in the JSON), %g m pixels (x "
            "east of the seam, y north, 0 at the north edge)\n\n",
            (double)g->x0 * c, (double)g->stride * c, -(double)g->y0 * c, (double)g->stride * c, c);
    cJSON *ej = cJSON_AddObjectToObject(sh, p->name);
    if (o->engine == TB_EXPORT_UNREAL) {
        int quads, sections, comps;
        s_unreal_layout(g->size, &quads, &sections, &comps);
        double sz = 12800.0 * s->step_m, lz = (s->lo_m + 32768.0 * s->step_m) * 100.0;
        double lx = ((double)g->x0 + 0.5) * c * 100.0, ly = ((double)g->y0 + 0.5) * c * 100.0;
        cJSON_AddItemToObject(ej, "location_cm", s_triple(lx, ly, lz));
        cJSON_AddItemToObject(ej, "scale", s_triple(c * 100.0, c * 100.0, sz));
        cJSON_AddNumberToObject(ej, "section_size_quads", quads);
        cJSON_AddNumberToObject(ej, "sections_per_component", sections * sections);
        cJSON_AddItemToObject(ej, "components_per_tile", s_pair(comps, comps));
        cJSON_AddItemToObject(ej, "components",
                              s_pair((double)comps * (double)g->nx, (double)comps * (double)g->ny));
        cJSON_AddItemToObject(ej, "overall_resolution",
                              s_pair((double)g->covered_w, (double)g->covered_h));
        s_cat(&txt, &len, &cap,
              "Unreal Engine (Landscape mode > Manage > New > Import from File):\n"
              "  Heightmap File      %s_x0_y0.png (the editor finds the other _x<i>_y<j> tiles)\n"
              "  Location            X %.1f  Y %.1f  Z %.4f  (cm)\n"
              "  Scale               X %.1f  Y %.1f  Z %.6f\n"
              "  Section Size        %dx%d Quads\n"
              "  Sections Per Comp.  %dx%d Sections\n"
              "  Number of Comp.     %d x %d per tile, %lld x %lld in all\n"
              "  Overall Resolution  %lld x %lld\n"
              "  Layers              %s_<layer>_x0_y0.png for rock, grass, sediment, scree_snow "
              "(8-bit, weight-blended: they sum to 255)\n",
              base, lx, ly, lz, c * 100.0, c * 100.0, sz, quads, quads, sections, sections, comps,
              comps, (long long)comps * g->nx, (long long)comps * g->ny, (long long)g->covered_w,
              (long long)g->covered_h, base);
    } else if (o->engine == TB_EXPORT_UNITY) {
        double side = (double)(g->size - 1) * c;
        cJSON_AddNumberToObject(ej, "heightmap_resolution", (double)g->size);
        cJSON_AddNumberToObject(ej, "terrain_width_m", side);
        cJSON_AddNumberToObject(ej, "terrain_length_m", side);
        cJSON_AddNumberToObject(ej, "terrain_height_m", s->hi_m - s->lo_m);
        cJSON_AddStringToObject(ej, "depth", "Bit 16");
        cJSON_AddStringToObject(ej, "byte_order", "Windows (little-endian)");
        cJSON_AddBoolToObject(ej, "flip_vertically", false);
        cJSON_AddNumberToObject(ej, "alphamap_resolution", (double)(g->size - 1));
        cJSON *pos = cJSON_AddArrayToObject(ej, "positions");
        s_cat(
            &txt, &len, &cap,
            "Unity (Terrain Settings > Import Raw, one terrain a tile; or Terrain Toolbox > "
            "Create New Terrain > Import Heightmap > Batch):\n"
            "  Depth Bit 16, Byte Order Windows, Flip Vertically off\n"
            "  Heightmap Resolution %lld, Terrain Width %.1f, Length %.1f, Height %.4f (m)\n"
            "  Alphamap Resolution %lld: %s_splat_<X>_<Z>.png (RGBA: rock, grass, sediment, "
            "scree_snow; they sum to 255)\n  Positions (x, y, z in m; Z counts from the south):\n",
            (long long)g->size, side, side, s->hi_m - s->lo_m, (long long)(g->size - 1), base);
        for (int64_t j = 0; j < g->ny; j++)
            for (int64_t i = 0; i < g->nx; i++) {
                double x = ((double)(g->x0 + i * g->stride) + 0.5) * c;
                double z = -(((double)(g->y0 + j * g->stride + g->size - 1)) + 0.5) * c;
                cJSON *e = cJSON_CreateObject();
                char name[512];
                tb_export_tile_name(p, g, base, "", i, j, ".raw", name, sizeof name);
                cJSON_AddStringToObject(e, "file", name);
                cJSON_AddItemToObject(e, "position_m", s_triple(x, s->lo_m, z));
                cJSON_AddItemToArray(pos, e);
                s_cat(&txt, &len, &cap, "    %-28s %.1f, %.2f, %.1f\n", name, x, s->lo_m, z);
            }
    } else if (o->engine == TB_EXPORT_GODOT) {
        cJSON_AddStringToObject(ej, "plugin", "Terrain3D");
        cJSON_AddNumberToObject(ej, "region_size", (double)g->size);
        cJSON_AddNumberToObject(ej, "vertex_spacing", c);
        cJSON_AddItemToObject(ej, "r16_range", s_pair(s->lo_m, s->hi_m));
        cJSON_AddItemToObject(ej, "r16_size", s_pair((double)g->size, (double)g->size));
        cJSON_AddNumberToObject(ej, "vertical_scale_m", s->hi_m - s->lo_m);
        cJSON_AddNumberToObject(ej, "import_scale", 1);
        cJSON_AddNumberToObject(ej, "height_offset", 0);
        cJSON *pos = cJSON_AddArrayToObject(ej, "import_positions");
        s_cat(&txt, &len, &cap,
              "Godot, Terrain3D (Region Size %lld, Mesh > Vertex Spacing %g; then "
              "addons/terrain_3d/tools/importer.tscn once a region):\n"
              "  r16_range %.2f, %.2f  r16_size %lld, %lld  import_scale 1  height_offset 0\n"
              "  (vertical scale %.4f m over the 16 bits; regions do not share edges)\n"
              "  import_position (x, z in m) of each region:\n",
              (long long)g->size, c, s->lo_m, s->hi_m, (long long)g->size, (long long)g->size,
              s->hi_m - s->lo_m);
        for (int64_t j = 0; j < g->ny; j++)
            for (int64_t i = 0; i < g->nx; i++) {
                /* centred on the origin: Terrain3D's region map runs -16 .. 15 regions */
                double x = (double)((i - g->nx / 2) * g->size) * c;
                double z = (double)((j - g->ny / 2) * g->size) * c;
                cJSON *e = cJSON_CreateObject();
                char name[512];
                tb_export_tile_name(p, g, base, "", i, j, ".r16", name, sizeof name);
                cJSON_AddStringToObject(e, "file", name);
                cJSON_AddItemToObject(e, "import_position_m", s_pair(x, z));
                cJSON_AddItemToArray(pos, e);
                s_cat(&txt, &len, &cap, "    %-28s %.1f, %.1f\n", name, x, z);
            }
        s_cat(&txt, &len, &cap,
              "  weights: %s_splat_<i>_<j>.png, RGBA on the region's grid (HTerrain's classic4 "
              "splatmap; Terrain3D's control map is its own format and imports no weights)\n",
              base);
    } else {
        cJSON_AddStringToObject(ej, "r16",
                                "<name>_<i>_<j>.r16: 16-bit little-endian, north row "
                                "first, decoded as in heights.decode");
        cJSON_AddStringToObject(ej, "f32",
                                "<name>_<i>_<j>.f32: float32 little-endian metres, "
                                "north row first, with an ENVI .hdr beside it");
        s_cat(&txt, &len, &cap,
              "raw: <name>_<i>_<j>.r16 (16-bit LE, north row first) and .f32 (float32 LE "
              "metres, ENVI .hdr beside: gdalinfo reads it); weights <name>_<layer>_<i>_<j>.png "
              "(8-bit, summing to 255); tile (i, j) starts at world (%.1f + %lld i, %.1f + %lld j) "
              "m\n",
              ((double)g->x0 + 0.5) * c, (long long)((double)g->stride * c),
              ((double)g->y0 + 0.5) * c, (long long)((double)g->stride * c));
    }
    cJSON_AddItemToObject(sh, "files", cJSON_Duplicate(files, true));
    char path[4200], name[512];
    char *json = cJSON_Print(sh);
    int rc = -1;
    snprintf(name, sizeof name, "%s_import.json", base);
    if (json && tb_fs_join(path, sizeof path, o->out_dir, name, err) == 0 &&
        tb_fs_write_atomic(path, json, strlen(json), err) == 0) {
        snprintf(name, sizeof name, "%s_import.txt", base);
        if (txt && tb_fs_join(path, sizeof path, o->out_dir, name, err) == 0)
            rc = tb_fs_write_atomic(path, txt, len, err);
    }
    if (rc != 0 && err->code == TB_OK)
        tb_err_set(err, TB_E_NOMEM, "export: out of memory for the import sheet");
    free(json);
    free(txt);
    cJSON_Delete(sh);
    return rc;
}
