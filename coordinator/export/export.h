/* `terrain export`: a bake's detail tiles as an engine imports them (docs/export.md).
 *
 * Reads OUT/tiles/index.json and the tiles' float heights (<id>.f32z) and splat maps, each file
 * checked against the index's XXH3 before use (coordinator/maps/tile_mosaic.h), and writes the
 * engine's own layout into a directory: tiles of a size from the engine's valid set covering the
 * chosen area (X wraps: an area across x = 0 goes on at the west edge), the engine's naming and
 * row order, heights in 16 bits over the tightest range that holds the exported samples (and
 * float32 where asked), the weightmaps as the engine takes them, and an import sheet (JSON and
 * text) with the numbers to type. Never re-bakes.
 *
 * Memory is bounded whatever the area: the export streams row by row through a small cache of
 * decoded bake tiles (a few of 25 MB each: the bake tiles one exported tile spans, plus one), so
 * it holds neither an exported tile nor the area. Two passes: the first reads every bake tile the
 * area touches once for the range, the second writes tile by tile.
 *
 * Typical sizes: bake tiles of 2500 x 2500 samples at 2 m; exported tiles of 127 to 8193 samples.
 */
#ifndef TB_EXPORT_EXPORT_H
#define TB_EXPORT_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "coordinator/maps/tile_mosaic.h"

typedef enum {
    TB_EXPORT_UNREAL = 0, /* Landscape: 16-bit PNG <name>_x<i>_y<j>, a weightmap PNG per layer */
    TB_EXPORT_UNITY,      /* Terrain: 16-bit RAW <name>_<X>_<Z> (south row first), RGBA splat */
    TB_EXPORT_GODOT,      /* Terrain3D regions: R16 <name>_<X>_<Z>, RGBA splat on the same grid */
    TB_EXPORT_RAW,        /* any tool: .r16 and float32 .f32 with an ENVI .hdr, a PNG per layer */
    TB_EXPORT_ENGINES
} tb_export_engine_t;

#define TB_EXPORT_MAX_SIZES 16

/* An engine's rules (docs/export.md cites where each comes from). */
typedef struct {
    const char *name; /* "unreal", ... as --engine takes it */
    int n_sizes;      /* the valid tile sizes, samples a side, ascending */
    int64_t sizes[TB_EXPORT_MAX_SIZES];
    int64_t default_size;   /* the one used unless --tile-samples says otherwise */
    bool shared_edge;       /* neighbours share their edge samples (stride size - 1) */
    bool south_first;       /* the height file's first row is the south (Unity RAW) */
    const char *height_ext; /* ".png", ".raw", ".r16" */
    bool layer_per_file;    /* weightmaps: one 8-bit PNG per layer, else RGBA */
    bool splat_resampled;   /* the RGBA splat is texel-aligned (Unity): resampled */
} tb_export_preset_t;

/* The preset of an engine, or NULL. */
const tb_export_preset_t *tb_export_preset(tb_export_engine_t e);
/* Parses "unreal", "unity", "godot" or "raw"; TB_E_INVALID naming the value otherwise. */
int tb_export_engine_parse(const char *name, tb_export_engine_t *out, tb_err_t *err);
/* Whether n is in the preset's valid set. */
bool tb_export_size_valid(const tb_export_preset_t *p, int64_t n);

/* The exported tiles over the detail lattice: tile (i, j), i east and j south, covers samples
 * x0 + i stride .. + size - 1 (modulo planet_w) and y0 + j stride .. + size - 1. */
typedef struct {
    int64_t x0, y0;    /* the first sample: x0 in 0..planet_w - 1 */
    int64_t size;      /* samples a side of every tile */
    int64_t stride;    /* size - 1 with shared edges, else size */
    int64_t nx, ny;    /* tiles east and south */
    int64_t covered_w; /* samples covered: (nx - 1) stride + size */
    int64_t covered_h;
    int64_t shifted_north; /* rows the grid was moved north so as to end on the planet's edge */
    int64_t rows_left_out; /* rows of the area no whole tile row could cover inside the planet */
} tb_export_grid_t;

/* The grid of `size`-sample tiles of preset p (size 0: the preset's default, lowered to the
 * largest valid size the planet's height holds) that covers area r (samples) of the lattice in
 * info. Y does not wrap: a grid that would run past the south edge is moved north by the rows it
 * overruns (recorded); when the area is taller than any whole number of tile rows the planet holds
 * (the planet's height is rarely k stride + 1), it gets as many rows as fit and the rows left out
 * are recorded; a tile taller than the planet is refused. TB_E_INVALID naming the numbers for a
 * size not in the engine's set, or a grid that cannot fit. */
int tb_export_grid_make(const tb_mosaic_info_t *info, const tb_export_preset_t *p,
                        tb_mosaic_rect_t r, int64_t size, tb_export_grid_t *out, tb_err_t *err);

/* The file name of tile (i, j) of grid g under preset p: base, the layer ("" for heights,
 * "_rock" ...), the engine's index suffix, then ext. Unreal: <base><layer>_x<i>_y<j>; Unity:
 * <base><layer>_<X>_<Z> with Z counted from the south; Godot and raw: <base><layer>_<i>_<j>. */
void tb_export_tile_name(const tb_export_preset_t *p, const tb_export_grid_t *g, const char *base,
                         const char *layer, int64_t i, int64_t j, const char *ext, char *out,
                         size_t n);

/* The 16-bit encoding over [lo_m, hi_m]: v = round((h - lo) 65535 / (hi - lo)), h = lo + v step. */
typedef struct {
    double lo_m, hi_m, step_m;
} tb_export_scale_t;

/* The tightest scale that holds heights min_m..max_m, rounded outward to whole centimetres (a
 * flat area gets 1 cm, so that the step is not zero). */
tb_export_scale_t tb_export_scale_of(double min_m, double max_m);
/* The 16-bit value of h under s (rounded half away from zero, clipped to 0..65535). Pure. */
uint16_t tb_export_encode(const tb_export_scale_t *s, float h);

typedef struct {
    tb_export_engine_t engine;
    const char *out_dir;   /* created when missing */
    const char *name;      /* base of every file name ("terrain" when NULL) */
    tb_mosaic_rect_t area; /* samples (tb_mosaic_area_samples) */
    int64_t tile_samples;  /* 0: the preset's default */
    bool float_heights;    /* also write float32 .f32 (+ .hdr) heights (raw: always) */
    bool geotiff;          /* also write float32 GeoTIFF heights (<tile name>.tif) in the local
                            * metric frame of coordinator/export/geotiff.h */
    bool fill_unbaked;     /* fill tiles the bake did not make (ocean) instead of refusing */
    float fill_m;          /* their height */
    bool quiet;            /* no progress lines */
} tb_export_opts_t;

/* What an export did, for the verb's summary and the tests. */
typedef struct {
    tb_export_grid_t grid;
    tb_export_scale_t scale;
    double min_m, max_m;                  /* of the exported samples */
    int64_t land_samples;                 /* interior samples above 0 m */
    int64_t terraced_u16, terraced_float; /* of those, equal to all four neighbours */
    int64_t filled_samples;               /* samples of unbaked tiles filled with fill_m */
    int tiles_written;
    int files_written;
    char citation[400]; /* the GeoTIFFs' citation (the planet, its seed and build); "" without */
    double seconds;
} tb_export_report_t;

/* Runs the export of bake_dir (with o->geotiff it also reads bake_dir/meta.json for the planet's
 * seed, circumference and build: TB_E_IO / TB_E_FORMAT naming the file and key when it cannot).
 * Refused before anything is written (TB_E_INVALID: exit 2): a
 * grid that does not fit, a tile the area needs that the bake did not make (naming up to eight and
 * the count; --fill-unbaked accepts them), a tile without float heights (a bake made before them:
 * naming the tile and how to rewrite them). A listed file missing or damaged is TB_E_IO /
 * TB_E_CHECKSUM naming it (exit 1). Every file is written to a temporary name and renamed. */
int tb_export_run(const char *bake_dir, const tb_export_opts_t *o, tb_export_report_t *rep,
                  tb_err_t *err);

#endif
