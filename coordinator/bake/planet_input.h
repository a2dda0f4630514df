/* What every command starts from: the finished manifest and the painting of the planet.
 *
 * With a manifest path, the manifest and its legend are read and checked (common/manifest.h) and
 * the painting is decoded as 8-bit RGB; with none, the built-in demo planet (jobs/plan/demo.h) is
 * made from the seed and circumference. A painting whose width does not divide the planet's cells
 * is refused with the numbers; otherwise each painted pixel covers a square of whole cells and the
 * planet is planet_w x planet_h cells, planet_h = painting_h * (planet_w / painting_w).
 */
#ifndef TB_PLANET_INPUT_H
#define TB_PLANET_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/manifest.h"
#include "common/png_io.h"

/* Largest painting decoded, in pixels (2^31: 6 GB of RGB). */
#define TB_INPUT_MAX_PIXELS ((uint64_t)1 << 31)

typedef struct {
    bool has_seed; /* --seed given: overrides the manifest's seed, or seeds the demo */
    uint64_t seed;
    bool has_circumference; /* --circumference-km given: the demo planet only */
    double circumference_km;
} tb_input_options_t;

typedef struct {
    tb_manifest_t manifest; /* finished */
    tb_image_t painting;    /* RGB8, painting.w divides planet_w */
    int64_t planet_w, planet_h;
} tb_planet_input_t;

/* Loads the planet of manifest_path (NULL: the demo planet of opt's seed, default 7, and
 * circumference, default 25 km). opt may be NULL. Fills *out, which the caller frees with
 * tb_planet_input_free. Returns 0, or -1 with *err naming the file, key or value (TB_E_IO for a
 * missing file, TB_E_FORMAT for a broken PNG or JSON, TB_E_INVALID for a value or a combination
 * that is refused: --circumference-km with a manifest, a painting width that does not divide the
 * planet).
 */
int tb_planet_input_load(const char *manifest_path, const tb_input_options_t *opt,
                         tb_planet_input_t *out, tb_err_t *err);

/* Frees the painting and clears *in; accepts a zeroed or freed struct. */
void tb_planet_input_free(tb_planet_input_t *in);

#endif
