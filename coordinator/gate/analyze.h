/* `terrain analyze` as a function: the verdict block (docs/statistics.md) of any heightmap - a real
 * DEM, or a bake's own planet_height.png - so the gates can be set against real ground.
 *
 * Input is a 16-bit grey PNG (8-bit is read as v * 257) over a given elevation range, or raw
 * float32 little-endian W x H, row 0 first (the PNG's top row, as the bake writes them). Heights at
 * or below the sea level, and raw values that are not finite, are sea; the statistics see land as
 * metres above the sea level and the sea at 0 m, as a bake's do. Drainage area comes from routing
 * the map itself (jobs/stats/route.h: sinks, then MFD, or D8 at exponent 0).
 *
 * A meta.json beside the heightmap (a bake's own) supplies what the map does not say: the cell
 * size, the elevation range of its 16 bits, the talus angle, m, n and MFD exponent, and that X
 * wraps (the map is the whole circumference). Options override it, except a cell size that
 * disagrees with it, which is refused.
 *
 * The map edge: X does not wrap for a DEM, so land at the edge would read a cliff into the sea
 * beyond it (slope and relief) and basins are cut off there. A border as wide as the statistics
 * halo (tb_stats_halo_cells: the relief window's half-width, 31 cells at 8 m) is routed but left
 * out of the count, on all four sides; on a map that wraps, only the first and last rows are.
 * The routing's ring is open by default (TB_ROUTE_BORDER_OPEN: flow leaves through the edge at
 * the edge's own height); border_sea holds it at 0 m as the solve holds a region's ring
 * (docs/gate.md says which to use when).
 */
#ifndef TB_ANALYZE_H
#define TB_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "jobs/stats/route.h"
#include "jobs/stats/stats.h"

typedef struct {
    const char *path; /* the heightmap */
    double cell_m;    /* > 0, or 0 to take it from meta.json */
    bool has_sea_level;
    double sea_level_m;   /* default 0 */
    int64_t raw_w, raw_h; /* > 0: the file is raw float32 LE of this size, not a PNG */
    bool has_elevation;
    double elevation_lo_m, elevation_hi_m; /* the 16-bit range; for raw, the clip range */
    bool has_mfd_exponent;
    double mfd_exponent; /* default meta.json's solve.mfd_exponent, else 1 */
    bool has_fit_min_area;
    double fit_min_area_m2; /* the slope-area fit's area floor; default the statistics' */
    bool has_channel_min_area;
    double channel_min_area_m2; /* the channel-cell fit's area floor; default the statistics' */
    bool border_sea;            /* the map's edge held at 0 m (a cliff) rather than open */
    const char *out_dir;        /* NULL: nothing written */
    bool ignore_meta;           /* do not read a meta.json beside the map */
} tb_analyze_opts_t;

typedef struct {
    int64_t w, h;
    double cell_m, sea_level_m, mfd_exponent;
    bool wraps;           /* X wraps (a bake's whole planet) */
    int64_t border_cells; /* width of the uncounted border round a map that does not wrap */
    bool from_png;
    char meta_path[4200];     /* the meta.json read, or "" */
    int64_t sea_cells;        /* at or below the sea level (or not finite) */
    int64_t not_finite_cells; /* raw values that were NaN or infinite (counted as sea) */
    int64_t saturated_cells;  /* PNG samples at 0 or 65535: may be clipped */
    tb_route_info_t route;
    tb_stats_extent_t extent; /* of the map's own heights */
    tb_stats_t *stats;        /* owned; free with tb_analyze_result_free */
    char *text;               /* header line and the block, as printed; owned */
} tb_analyze_result_t;

/* Reads, routes and measures the heightmap; writes summary.txt and analyze.json (the block as
 * meta.json's "statistics", plus the input) into out_dir when given. Returns 0, or -1 with *err
 * naming the file, option or value (TB_E_IO, TB_E_FORMAT, TB_E_INVALID). *out is filled as far as
 * it got; free it with tb_analyze_result_free. */
int tb_analyze_run(const tb_analyze_opts_t *opts, tb_analyze_result_t *out, tb_err_t *err);

void tb_analyze_result_free(tb_analyze_result_t *r);

#endif
