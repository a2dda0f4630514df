/* A growing text buffer for the report page: printf, HTML escaping, and numbers tagged with the
 * meta.json path they come from (docs/report.md, "Checking the page").
 *
 * Memory failures are sticky: every later call is a no-op and tb_html_take returns NULL, so a page
 * generator checks once at the end.
 */
#ifndef TB_REPORT_HTML_H
#define TB_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} tb_html_t;

/* Appends formatted text as is (the caller escapes what needs it). */
void tb_html_printf(tb_html_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s with & < > " ' escaped. */
void tb_html_text(tb_html_t *h, const char *s);
/* The text (NUL-terminated, owned by the caller) or NULL after a memory failure; empties *h. */
char *tb_html_take(tb_html_t *h, size_t *len);
void tb_html_free(tb_html_t *h);

/* The JSON node at a dotted path ("statistics.classes.0.slope_median_deg"; array items by index),
 * or NULL. */
const cJSON *tb_json_path(const cJSON *root, const char *path);
/* The number at a path, or NaN when it is absent, null or not a number. */
double tb_json_num(const cJSON *root, const char *path);
/* The string at a path, or `fallback`. */
const char *tb_json_str(const cJSON *root, const char *path, const char *fallback);

/* Appends the number at `path` of `root`, times `scale`, with `decimals` decimals, as
 * <span class="num" data-meta="path" data-scale="scale">text</span> followed by `unit` (escaped;
 * may be NULL). A null or absent value prints "n/a" (still tagged, so the check can see it is
 * null). decimals < 0 prints in %.3g style. */
void tb_html_meta_num(tb_html_t *h, const cJSON *root, const char *path, double scale, int decimals,
                      const char *unit);

#endif
