/* The statistics of a heightmap, pooled from regions (docs/statistics.md).
 *
 * A region job fills a tb_stats_t while its grid is alive (tb_stats_accumulate), encodes it, and
 * the coordinator decodes and merges the regions in region-id order (tb_stats_merge). Every
 * quantity is a fixed-bin histogram (common/hist.h) or an integer counter, so the merge is exact in
 * any order and the pooled statistics of a planet equal those of one pass over the composite to the
 * last bit.
 *
 * What is kept, per uplift class bucket (plain below 0.1 mm/yr, rolling 0.1 to 0.5, mountain at or
 * above 0.5, by the cell's own U; "unclassified" when no uplift field is given) - "all land" is the
 * sum of the buckets:
 *   - slope in degrees, Horn's 3x3 gradient (Horn 1981, Proc. IEEE 69), 0.1 degree bins;
 *   - local relief, max - min over a (2r+1)^2 window of about 500 m (jobs/stats/relief.h), 0.25 m
 * bins;
 *   - land elevation, 1 m bins, with an exact sum (quantum 2^-10 m) for the hypsometric integral;
 *   - slope against drainage area: per area bin (log2, 4 per octave from 1 m2) a histogram of the
 *     squared gradient S^2 (log2, 4 per octave from 2^-40: 8 per octave of S from 2^-20), for the
 *     slope-area fit of median slope per bin; and beside it the same table of the squared
 *     steepest-descent slope (largest drop over distance to one of the 8 neighbours), for the
 *     channel-cell fit (docs/statistics.md);
 *   - channel cells (area at or above 1 km2) and their length, one or sqrt(2) cells to the steepest
 *     lower of the 8 neighbours, for the drainage density;
 *   - cells within 2 degrees of the repose angle, read off the slope bins: slopes in [talus - 2,
 *     talus + 2), exact when both ends are bin edges (33 and 37 degrees by default).
 * The elevation extent and clip fraction are NOT here: regions carry overlapping ocean margins, so
 * they are measured once on the composited planet (tb_stats_extent_measure) and handed to the
 * report.
 *
 * Land is a counted cell (count_mask 1, or every cell when the mask is NULL) whose height is above
 * sea level (0 m). Neighbourhoods read the heights as given, whatever the mask says; outside the
 * box is sea level, except across the seam of a box that wraps (tb_frame_wraps). The caller
 * guarantees a region box holds every cell within tb_stats_halo_cells of its counted land, and
 * tb_stats_edge_cells says when it did not.
 *
 * A tb_stats_t is not thread-safe: give each thread its own over its own rows (their boxes carry
 * the halo like regions) and merge them; the result is the same bits.
 *
 * Typical sizes: 3 MB per tb_stats_t; the encoding is sparse, tens of kilobytes for a region.
 * `terrain analyze` computes the same block for any heightmap through the same calls (one box, no
 * uplift field, area from its own routing).
 */
#ifndef TB_STATS_H
#define TB_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/hist.h"

typedef struct {
    double cell_m;                /* must equal the box's cell_m */
    double talus_deg;             /* angle of repose (the solve's talus_deg) */
    double repose_band_deg;       /* "at talus": |slope - talus| <= this; 2 */
    double m, n;                  /* stream-power exponents; the slope-area fit expects -m/n */
    double uplift_edges_mm_yr[2]; /* class edges: plain < [0] <= rolling < [1] <= mountain */
    double relief_window_m;       /* width of the relief window; 500 (nearest odd cell count) */
    double channel_area_m2;       /* channel threshold for the drainage density; 1e6 */
    double fit_min_area_m2; /* the slope-area fit uses area bins whose lower edge is >= this */
    double channel_fit_min_area_m2; /* the channel-cell fit starts at 4 x the data's
                                       hillslope-channel turn, never below this; 1e3 */
    int32_t fit_min_bin_cells;      /* ... and that hold at least this many cells; 16 */
    double slope_bin_deg;           /* slope bin width; 90 / it a whole number; 0.1 */
    double relief_bin_m;            /* relief bin width, a power of two; 0.25 */
    double relief_max_m;            /* relief range 0 .. this, a whole number of bins; 4096 */
    double elev_bin_m;              /* land elevation bin width, a power of two; 1 */
    double elev_max_m; /* land elevation range 0 .. this, a whole number of bins; 9216 */
} tb_stats_params_t;

/* Fills *p with the defaults above for cells of cell_m metres (talus 35, m 0.5, n 1). */
void tb_stats_params_default(tb_stats_params_t *p, double cell_m);

/* Cells of margin a box needs around its counted land so its statistics equal the whole planet's:
 * the relief window's half-width r (>= 1, which also covers the 3x3 slope stencil). */
int64_t tb_stats_halo_cells(const tb_stats_params_t *p);

typedef enum {
    TB_STATS_PLAIN = 0,
    TB_STATS_ROLLING = 1,
    TB_STATS_MOUNTAIN = 2,
    TB_STATS_UNCLASSIFIED = 3, /* land with no uplift field (analyze of a DEM) */
    TB_STATS_NBUCKETS = 4,
    TB_STATS_ALL = 4 /* pseudo-bucket: the sum of the four, for the queries below */
} tb_stats_bucket_t;

typedef struct tb_stats_t tb_stats_t;

/* Empty statistics with parameters *p (copied). Returns NULL with *err naming the bad parameter.
 * The caller owns the result. */
tb_stats_t *tb_stats_new(const tb_stats_params_t *p, tb_err_t *err);
/* Frees the statistics; sets *self_p to NULL; accepts NULL. */
void tb_stats_destroy(tb_stats_t **self_p);
/* The parameters, owned by the statistics. */
const tb_stats_params_t *tb_stats_params(const tb_stats_t *self);

/* Adds the counted land of one box. All arrays are box->w x box->h, row-major:
 *   height_m     required; every cell finite (the neighbourhood of land reads any of them)
 *   area_m2      drainage area of each cell, including itself, or NULL (no slope-area, no density)
 *   uplift_m_yr  rock uplift rate, metres per year, or NULL (land goes to TB_STATS_UNCLASSIFIED)
 *   count_mask   1 for cells this call counts (a region's own land), or NULL for every cell
 * Area and uplift are read only at counted land, where they must be finite (area >= 0). Returns 0,
 * or -1 with *err naming the first bad cell or argument; the statistics are unchanged on failure.
 */
int tb_stats_accumulate(tb_stats_t *self, const tb_frame_t *box, const float *height_m,
                        const float *area_m2, const float *uplift_m_yr, const uint8_t *count_mask,
                        tb_err_t *err);

/* Adds src into dst: exact, and the same in any order (merge in region-id order by convention).
 * Returns 0, or -1 with *err set when the parameters differ or a count would overflow (dst is then
 * unchanged). */
int tb_stats_merge(tb_stats_t *dst, const tb_stats_t *src, tb_err_t *err);
/* Whether two statistics hold the same parameters, counters and histograms, bit for bit. */
bool tb_stats_equal(const tb_stats_t *a, const tb_stats_t *b);

/* The versioned little-endian encoding (parameters, counters, sparse histograms); the caller frees
 * the bytes. NULL with *err set when memory runs out. */
uint8_t *tb_stats_encode(const tb_stats_t *self, size_t *len, tb_err_t *err);
/* Decodes an encoding, checking every field and that nothing trails; NULL with *err naming what was
 * malformed (never crashes on truncated or random bytes). The caller owns the result. */
tb_stats_t *tb_stats_decode(const void *data, size_t len, tb_err_t *err);

/* Per-bucket counters (bucket may be TB_STATS_ALL). */
typedef struct {
    int64_t land_cells;         /* counted land cells */
    int64_t near_repose_cells;  /* slope in [talus - band, talus + band), to the slope bins */
    int64_t area_cells;         /* land cells that had a drainage area */
    int64_t channel_cells;      /* area >= channel_area_m2 */
    int64_t channel_cardinal;   /* channel cells whose steepest descent is a cardinal step */
    int64_t channel_diagonal;   /* ... a diagonal step */
    int64_t channel_no_descent; /* ... with no lower neighbour (counted as one cell of length) */
} tb_stats_counts_t;

void tb_stats_counts(const tb_stats_t *self, int bucket, tb_stats_counts_t *out);
/* The histograms of a bucket (not TB_STATS_ALL; sum them with tb_hist_merge), owned by self:
 * slope in degrees, relief in metres, land elevation in metres, drainage area in m2, and the
 * histogram of the SQUARED gradient S^2 (m2/m2) of the cells in area bin k (the bins of the area
 * histogram's spec). */
const tb_hist_t *tb_stats_slope_hist(const tb_stats_t *self, int bucket);
const tb_hist_t *tb_stats_relief_hist(const tb_stats_t *self, int bucket);
const tb_hist_t *tb_stats_elev_hist(const tb_stats_t *self, int bucket);
const tb_hist_t *tb_stats_area_hist(const tb_stats_t *self, int bucket);
const tb_hist_t *tb_stats_slope_area_hist(const tb_stats_t *self, int bucket, int32_t area_bin);
/* Counted land cells that lay within the halo (tb_stats_halo_cells) of an inner edge of their box -
 * an X side of a box that does not wrap, or a Y side short of the planet's own edge - so their
 * relief read sea level where the planet has ground. A region job whose box holds its halo has 0
 * (the lead's check that the ocean margin is wide enough); analyze of a DEM masks its border. */
int64_t tb_stats_edge_cells(const tb_stats_t *self);

/* The relief window actually used, in cells (2r + 1) and metres. */
int64_t tb_stats_relief_window_cells(const tb_stats_t *self);

/* The slope-area fit: log10 S = a + b log10 A by least squares over the area bins that qualify
 * (lower edge >= fit_min_area_m2, at least fit_min_bin_cells cells, a positive median), one point
 * per bin at (geometric centre of the bin, median gradient of its cells). */
/* A height whose magnitude exceeds this is refused (metres): not a planet, and the gradient of
 * such cells could overflow a float. */
#define TB_STATS_HEIGHT_LIMIT_M 1e6f
#define TB_STATS_MAX_FIT_BINS 256
typedef struct {
    int32_t bins;        /* points in the fit */
    double exponent;     /* b; NaN when fewer than 2 points */
    double intercept;    /* a */
    double r2;           /* coefficient of determination of the fit over its points */
    double expect;       /* -m/n */
    double min_area_m2;  /* the lower edge of the first area bin the fit may use */
    double turn_area_m2; /* channel fit: the hillslope-channel break (a bin's lower edge) */
    double area_m2[TB_STATS_MAX_FIT_BINS], median_slope[TB_STATS_MAX_FIT_BINS];
    int64_t cells[TB_STATS_MAX_FIT_BINS];
} tb_stats_fit_t;

void tb_stats_fit_slope_area(const tb_stats_t *self, int bucket, tb_stats_fit_t *out);
/* The fit over the channel cells only (docs/statistics.md): the slope is each cell's steepest
 * descent (the largest drop over distance to one of its 8 neighbours), not Horn's gradient, and the
 * area bins are those whose lower edge is at or above max(channel_fit_min_area_m2, the break), the
 * break being the hillslope-channel transition of the data: the bin edge that best splits the
 * bucket's curve of log median steepest descent against log area into two least-squares lines
 * (a broken-stick regression), with at least TB_STATS_BREAK_MIN_HILL bins below it and
 * TB_STATS_BREAK_MIN_CHANNEL above. turn_area_m2 carries the break (NaN: too few bins). */
#define TB_STATS_BREAK_MIN_HILL 3
#define TB_STATS_BREAK_MIN_CHANNEL 5
void tb_stats_fit_slope_area_channels(const tb_stats_t *self, int bucket, tb_stats_fit_t *out);

/* The statistics a report prints, for one bucket. NaN where there is nothing to measure. */
typedef struct {
    int64_t land_cells;
    double land_share;                                 /* of all counted land */
    double slope_under15, slope_under30, slope_over50; /* shares of the bucket's land */
    double slope_median_deg, slope_p90_deg;
    double relief_median_m, relief_p90_m;
    double near_repose_share;
    double elev_min_m, elev_max_m, elev_mean_m, elev_median_m;
    double hypsometric_integral;    /* (mean - min) / (max - min) of land elevation */
    double drainage_density_per_km; /* channel length / land area, 1/km; NaN without area */
    tb_stats_fit_t fit;             /* over area bins from fit_min_area_m2 */
    tb_stats_fit_t channel_fit;     /* steepest descent, from 4 x the turn (channel cells) */
} tb_stats_bucket_summary_t;

typedef struct {
    tb_stats_bucket_summary_t bucket[TB_STATS_NBUCKETS + 1]; /* [TB_STATS_ALL] is all land */
    double relief_window_m;
    int64_t area_cells;       /* land cells with a drainage area (0: no slope-area, no density) */
    int64_t classified_cells; /* land cells with an uplift rate */
    int64_t edge_cells;       /* see tb_stats_edge_cells */
} tb_stats_summary_t;

void tb_stats_summarise(const tb_stats_t *self, tb_stats_summary_t *out);

/* --- painted classes -------------------------------------------------------------------------
 * Beside the uplift buckets, the land can be split by the painted legend class of each cell: one
 * full bucket (every histogram above) per class, keyed by the class's NAME, so regions whose jobs
 * hold different (reduced) legends pool exactly. Classes are kept sorted by name (byte order) and
 * a class exists only once some counted land of it was seen, so the class list, like everything
 * else, is the same whole or pooled, in any merge order. At most TB_STATS_MAX_CLASSES classes. */
#define TB_STATS_MAX_CLASSES 64
#define TB_STATS_CLASS_NAME_MAX 64 /* bytes including the terminating NUL */

/* tb_stats_accumulate, plus a class raster: classes[i] (box-sized, row-major) is an index into
 * class_names[0 .. n_names); a counted land cell whose index is >= n_names, or whose name is NULL
 * or empty, goes to no class bucket (it still counts in the uplift buckets). classes NULL: no class
 * buckets are touched (exactly tb_stats_accumulate). Returns 0, or -1 with *err naming the bad
 * argument (a name too long, more than TB_STATS_MAX_CLASSES classes); unchanged on failure. */
int tb_stats_accumulate_classes(tb_stats_t *self, const tb_frame_t *box, const float *height_m,
                                const float *area_m2, const float *uplift_m_yr,
                                const uint8_t *count_mask, const uint8_t *classes, int n_names,
                                const char *const *class_names, tb_err_t *err);
/* The painted classes seen so far, sorted by name, and their summaries (land_share is of all
 * counted land). */
int tb_stats_class_count(const tb_stats_t *self);
const char *tb_stats_class_name(const tb_stats_t *self, int i);
/* -1 when no class of that name was seen. */
int tb_stats_class_find(const tb_stats_t *self, const char *name);
void tb_stats_summarise_class(const tb_stats_t *self, int i, tb_stats_bucket_summary_t *out);
/* The histograms of class i (like the bucket ones), owned by self. */
const tb_hist_t *tb_stats_class_slope_hist(const tb_stats_t *self, int i);
const tb_hist_t *tb_stats_class_relief_hist(const tb_stats_t *self, int i);

/* The elevation extent of a composited planet, measured once (regions overlap in their margins). */
typedef struct {
    double min_m, max_m;           /* over finite cells */
    int64_t cells;                 /* all cells */
    int64_t clipped;               /* outside [range_lo_m, range_hi_m], or not finite */
    double range_lo_m, range_hi_m; /* the manifest's elevation_m */
} tb_stats_extent_t;

/* Measures the extent of `cells` heights against [range_lo_m, range_hi_m]. Returns 0, or -1 with
 * *err set when the range is empty or not finite or there are no cells. */
int tb_stats_extent_measure(const float *height_m, size_t cells, double range_lo_m,
                            double range_hi_m, tb_stats_extent_t *out, tb_err_t *err);

/* The printed verdict block (docs/statistics.md), newline-terminated lines; the caller frees
 * it. extent may be NULL (no elevation line). partial is NULL for a whole bake, or a short note
 * such as "regions 2,3 of 14" for a partial one: every line then starts "PARTIAL". NULL only when
 * memory runs out. */
char *tb_stats_report_text(const tb_stats_t *self, const tb_stats_extent_t *extent,
                           const char *partial);
/* The same block as JSON for meta.json (numbers, with null for NaN; the slope-area points). The
 * caller owns it; NULL when memory runs out. */
cJSON *tb_stats_report_json(const tb_stats_t *self, const tb_stats_extent_t *extent,
                            const char *partial);

/* Slope in degrees of every cell by Horn's stencil, same conventions as the statistics (outside
 * the box is sea level; X wraps when the box does), e.g. for map_slope.png. Returns 0, or -1. */
int tb_stats_slope_grid(const tb_frame_t *box, const float *height_m, float *slope_deg,
                        tb_err_t *err);

#endif
