/* GeoTIFF heights; see geotiff.h. libtiff reports errors through a handler given at open
 * (TIFFOpenExt), which keeps the last message on the file's own struct: nothing process-wide. */
#include "coordinator/export/geotiff.h"

#include <errno.h>
#include <geotiff/geo_normalize.h>
#include <geotiff/geotiff.h>
#include <geotiff/geovalues.h>
#include <geotiff/xtiffio.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

#include "common/fs.h"

#define S_ROWS_PER_STRIP 16 /* a strip is compressed when full: 16 rows of 8193 floats, 0.5 MB */

struct tb_export_geotiff {
    TIFF *tif;
    char final_path[4096];
    char tmp_path[4200];
    int64_t w, h, rows;
    tb_export_geo_t geo;
    char citation[512];
    float *copy;   /* the row handed to libtiff, whose predictor differences it in place */
    char msg[512]; /* libtiff's last error */
};

static int s_tiff_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    tb_export_geotiff_t *f = user;
    int k = snprintf(f->msg, sizeof f->msg, "%s: ", module ? module : "libtiff");
    if (k > 0 && (size_t)k < sizeof f->msg)
        vsnprintf(f->msg + k, sizeof f->msg - (size_t)k, fmt, ap);
    return 1; /* handled: libtiff prints nothing */
}

static int s_tiff_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
    return 1;
}

static int s_fail(tb_export_geotiff_t *f, tb_err_t *err, const char *what)
{
    return tb_err_set(err, TB_E_IO, "%s: %s%s%s", f->final_path, what, f->msg[0] ? ": " : "",
                      f->msg);
}

/* The baseline tags of one float32 band, and the frame: tie point and pixel scale. */
static int s_tags(tb_export_geotiff_t *f)
{
    const tb_export_geo_t *g = &f->geo;
    double tie[6] = {0, 0, 0, g->west_m, g->north_m, 0}; /* raster (0, 0) -> model (X, Y, 0) */
    double scale[3] = {g->cell_m, g->cell_m, 0};
    return TIFFSetField(f->tif, TIFFTAG_IMAGEWIDTH, (uint32_t)f->w) &&
                   TIFFSetField(f->tif, TIFFTAG_IMAGELENGTH, (uint32_t)f->h) &&
                   TIFFSetField(f->tif, TIFFTAG_SAMPLESPERPIXEL, 1) &&
                   TIFFSetField(f->tif, TIFFTAG_BITSPERSAMPLE, 32) &&
                   TIFFSetField(f->tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP) &&
                   TIFFSetField(f->tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK) &&
                   TIFFSetField(f->tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
                   TIFFSetField(f->tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE) &&
                   TIFFSetField(f->tif, TIFFTAG_PREDICTOR, PREDICTOR_FLOATINGPOINT) &&
                   TIFFSetField(f->tif, TIFFTAG_ROWSPERSTRIP, S_ROWS_PER_STRIP) &&
                   TIFFSetField(f->tif, TIFFTAG_GEOTIEPOINTS, 6, tie) &&
                   TIFFSetField(f->tif, TIFFTAG_GEOPIXELSCALE, 3, scale)
               ? 0
               : -1;
}

/* The GeoKeys: a projected frame, user-defined, in metres, pixels as areas, with the citation. */
static int s_keys(tb_export_geotiff_t *f)
{
    GTIF *gt = GTIFNew(f->tif);
    if (!gt)
        return -1;
    int ok = GTIFKeySet(gt, GTModelTypeGeoKey, TYPE_SHORT, 1, ModelTypeProjected) &&
             GTIFKeySet(gt, GTRasterTypeGeoKey, TYPE_SHORT, 1, RasterPixelIsArea) &&
             GTIFKeySet(gt, GTCitationGeoKey, TYPE_ASCII, 0, f->citation) &&
             GTIFKeySet(gt, ProjectedCSTypeGeoKey, TYPE_SHORT, 1, KvUserDefined) &&
             GTIFKeySet(gt, PCSCitationGeoKey, TYPE_ASCII, 0, f->citation) &&
             GTIFKeySet(gt, ProjLinearUnitsGeoKey, TYPE_SHORT, 1, Linear_Meter) &&
             GTIFKeySet(gt, VerticalUnitsGeoKey, TYPE_SHORT, 1, Linear_Meter) && GTIFWriteKeys(gt);
    GTIFFree(gt);
    return ok ? 0 : -1;
}

tb_export_geotiff_t *tb_export_geotiff_open(const char *path, int64_t w, int64_t h,
                                            const tb_export_geo_t *geo, tb_err_t *err)
{
    if (w < 1 || h < 1 || w > UINT32_MAX || h > UINT32_MAX) {
        tb_err_set(err, TB_E_INVALID, "%s: a raster of %lld x %lld", path, (long long)w,
                   (long long)h);
        return NULL;
    }
    tb_export_geotiff_t *f = tb_calloc(1, sizeof *f, "GeoTIFF writer", err);
    if (!f)
        return NULL;
    if (strlen(path) >= sizeof f->final_path) {
        free(f);
        tb_err_set(err, TB_E_INVALID, "%s: path too long", path);
        return NULL;
    }
    snprintf(f->final_path, sizeof f->final_path, "%s", path);
    snprintf(f->tmp_path, sizeof f->tmp_path, "%s.tmp.%ld", path, (long)getpid());
    snprintf(f->citation, sizeof f->citation, "%s", geo->citation ? geo->citation : "");
    f->geo = *geo;
    f->geo.citation = f->citation;
    f->w = w;
    f->h = h;
    f->copy = malloc(sizeof(float) * (size_t)w);
    if (!f->copy) {
        free(f);
        tb_err_set(err, TB_E_NOMEM, "%s: out of memory for a row", path);
        return NULL;
    }
    XTIFFInitialize(); /* registers the GeoTIFF tags with libtiff (idempotent) */
    TIFFOpenOptions *op = TIFFOpenOptionsAlloc();
    if (!op) {
        free(f->copy);
        free(f);
        tb_err_set(err, TB_E_NOMEM, "%s: out of memory for libtiff's options", path);
        return NULL;
    }
    TIFFOpenOptionsSetErrorHandlerExtR(op, s_tiff_error, f);
    TIFFOpenOptionsSetWarningHandlerExtR(op, s_tiff_warning, f);
    f->tif = TIFFOpenExt(f->tmp_path, "w", op);
    TIFFOpenOptionsFree(op);
    if (!f->tif) {
        tb_err_set(err, TB_E_IO, "%s: cannot create: %s", f->tmp_path,
                   f->msg[0] ? f->msg : strerror(errno));
        unlink(f->tmp_path);
        free(f->copy);
        free(f);
        return NULL;
    }
    if (s_tags(f) != 0 || s_keys(f) != 0) {
        s_fail(f, err, "libtiff could not set the GeoTIFF tags");
        tb_export_geotiff_abort(&f);
        return NULL;
    }
    return f;
}

int tb_export_geotiff_row(tb_export_geotiff_t *f, const float *row, tb_err_t *err)
{
    if (f->rows >= f->h)
        return tb_err_set(err, TB_E_INTERNAL, "%s: more than %lld rows", f->final_path,
                          (long long)f->h);
    /* libtiff's predictor differences the row it is given in place (predictor.c: "alters user's
     * data"): it gets a copy, so the caller's row is still the heights */
    memcpy(f->copy, row, sizeof(float) * (size_t)f->w);
    if (TIFFWriteScanline(f->tif, f->copy, (uint32_t)f->rows, 0) != 1)
        return s_fail(f, err, "libtiff could not write a row (disk full?)");
    f->rows++;
    return 0;
}

int tb_export_geotiff_close(tb_export_geotiff_t **f_p, uint64_t *xxh3, tb_err_t *err)
{
    tb_export_geotiff_t *f = *f_p;
    *f_p = NULL;
    int rc = -1;
    if (f->rows != f->h) {
        tb_err_set(err, TB_E_INTERNAL, "%s: %lld of %lld rows written", f->final_path,
                   (long long)f->rows, (long long)f->h);
        goto fail;
    }
    /* TIFFClose writes the last strip and the directory but cannot report a failure: flush first */
    if (TIFFFlush(f->tif) != 1) {
        s_fail(f, err, "libtiff could not finish the file (disk full?)");
        goto fail;
    }
    XTIFFClose(f->tif);
    f->tif = NULL;
    if (f->msg[0]) {
        s_fail(f, err, "libtiff could not close the file");
        goto fail;
    }
    if (xxh3 && tb_fs_hash_file(f->tmp_path, xxh3, err) != 0)
        goto fail;
    if (rename(f->tmp_path, f->final_path) != 0) {
        tb_err_set(err, TB_E_IO, "%s: cannot rename into place: %s", f->final_path,
                   strerror(errno));
        goto fail;
    }
    free(f->copy);
    free(f);
    return 0;
fail:
    tb_export_geotiff_abort(&f);
    return rc;
}

void tb_export_geotiff_abort(tb_export_geotiff_t **f_p)
{
    if (!f_p || !*f_p)
        return;
    tb_export_geotiff_t *f = *f_p;
    if (f->tif)
        XTIFFClose(f->tif);
    unlink(f->tmp_path);
    free(f->copy);
    free(f);
    *f_p = NULL;
}
