/* GeoTIFF heights for the export (internal to coordinator/export/; docs/export.md, "GeoTIFF"): one
 * float32 band of metres a file, written a row at a time through libtiff (deflate with the
 * floating-point predictor, strips of 16 rows), with libgeotiff's keys for a user-defined projected
 * frame in metres. Like writers.h, each file goes to a temporary name beside its final one and is
 * renamed on close, and the XXH3 of the finished file is kept for the import sheet.
 *
 * The frame (export.h's callers fill it): model X = world x (metres east of the planet's x = 0, the
 * seam, unwrapped past the circumference), model Y = - world y (north up: 0 at the planet's north
 * edge, negative to the south), PixelIsArea: pixel (c, r) is the 2 m square whose centre is the
 * sample, so the tie point is the north-west corner of the first sample's square. */
#ifndef TB_EXPORT_GEOTIFF_H
#define TB_EXPORT_GEOTIFF_H

#include <stdint.h>

#include "common/error.h"

typedef struct {
    double west_m;        /* model X of the raster's west edge (the first sample's square) */
    double north_m;       /* model Y of its north edge */
    double cell_m;        /* pixel size, both axes */
    const char *citation; /* GTCitationGeoKey and PCSCitationGeoKey: the planet and its seed */
} tb_export_geo_t;

typedef struct tb_export_geotiff tb_export_geotiff_t;

/* Opens path for a w x h float32 raster in frame geo (copied). NULL with *err naming the path. */
tb_export_geotiff_t *tb_export_geotiff_open(const char *path, int64_t w, int64_t h,
                                            const tb_export_geo_t *geo, tb_err_t *err);
/* Writes the next row, north first: w floats in metres. */
int tb_export_geotiff_row(tb_export_geotiff_t *f, const float *row, tb_err_t *err);
/* Checks every row came, writes the keys and the directory, renames into place; *xxh3 (may be
 * NULL) gets the XXH3-64 of the file. Frees f and sets *f_p to NULL, also on failure (then nothing
 * is left under either name). */
int tb_export_geotiff_close(tb_export_geotiff_t **f_p, uint64_t *xxh3, tb_err_t *err);
/* Removes the temporary and frees f (after a failure elsewhere); accepts NULL. */
void tb_export_geotiff_abort(tb_export_geotiff_t **f_p);

#endif
