/* The body of `terrain studio`'s POST /api/save, decoded and checked before anything is written
 * (docs/studio.md, "What is written"): JSON {"painting_png_base64": the painting as PNG in base64,
 * "legend": the legend object, "painting_stamp" and "legend_stamp": the stamps the page loaded,
 * "force": overwrite files changed since (optional)}, and for a manifest with an overlay
 * (docs/plan.md, "The overlay") optionally all four of "overlay_png_base64" (RGBA, the painting's
 * size), "overlay_legend" (the marks), "overlay_stamp" and "overlay_legend_stamp". The painting is
 * read by the plan's own PNG reader at exactly the manifest's painting size, the legend by the
 * manifest's legend parser; a body that passes holds nothing the plan would refuse to read. Hostile
 * until checked: fuzzed by tests/fuzz/fuzz_studio_save.c.
 */
#ifndef TB_STUDIO_SAVE_H
#define TB_STUDIO_SAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/image.h"
#include "common/manifest.h"

#define TB_STUDIO_STAMP_MAX 64                /* "SIZE:XXH3" of a file, with room */
#define TB_STUDIO_LEGEND_MAX_BYTES (1u << 20) /* a legend of 64 classes is a few KiB */

typedef struct {
    tb_image_t img;     /* the painting, RGB8, painting_w x painting_h */
    tb_legend_t legend; /* as tb_legend_parse read it */
    char painting_stamp[TB_STUDIO_STAMP_MAX], legend_stamp[TB_STUDIO_STAMP_MAX];
    bool force;
    /* the overlay, when the body carries one */
    bool has_overlay;
    tb_image_t overlay; /* RGBA8, painting_w x painting_h */
    char *
        overlay_legend_json; /* the marks as sent, read by tb_overlay_legend_parse: written as is */
    char overlay_stamp[TB_STUDIO_STAMP_MAX], overlay_legend_stamp[TB_STUDIO_STAMP_MAX];
} tb_studio_save_t;

/* Decodes body[0..len) into *out (zeroed by the caller), checking the painting against
 * painting_w x painting_h (painting_name names the file in the message). Returns 0, or the HTTP
 * status to refuse it with - 400 malformed (not JSON, a field missing or of the wrong type, not
 * base64), 422 refused (a PNG of another size or broken, a legend the parser refuses) - with *err
 * naming what was wrong. Free *out with tb_studio_save_free either way. */
int tb_studio_save_parse(const char *body, size_t len, int64_t painting_w, int64_t painting_h,
                         const char *painting_name, tb_studio_save_t *out, tb_err_t *err);

/* Frees the painting of a parsed save; accepts a zeroed one. */
void tb_studio_save_free(tb_studio_save_t *sv);

/* Decodes RFC 4648 base64 (the alphabet of btoa and readAsDataURL; '=' padding optional) of
 * text[0..n) into a new buffer the caller frees. 0, or -1 with *err naming the first bad character
 * and its offset. */
int tb_studio_base64_decode(const char *text, size_t n, unsigned char **out, size_t *out_n,
                            tb_err_t *err);

#endif
