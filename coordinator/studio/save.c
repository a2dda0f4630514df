/* The save body's decoder (save.h). Sizes: the body is the painting's PNG in base64 (4/3 of the
 * PNG) and a legend of a few KiB; the server has refused any body over its limit before this runs,
 * so the decoded PNG is smaller than the body. Invariant: on 0, out->img is exactly the painting's
 * size and out->legend parsed. */
#include "coordinator/studio/save.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/png_io.h"
#include "jobs/plan/overlay.h"

/* ---- base64 (RFC 4648, the alphabet of FileReader.readAsDataURL and btoa) ---- */

static int s_b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

int tb_studio_base64_decode(const char *text, size_t n, unsigned char **out, size_t *out_n,
                            tb_err_t *err)
{
    while (n > 0 && text[n - 1] == '=')
        n--;
    if (n % 4 == 1)
        return tb_err_set(err, TB_E_FORMAT, "painting_png_base64: %zu characters is no base64", n);
    unsigned char *d = malloc(n / 4 * 3 + 3);
    if (!d)
        return tb_err_set(err, TB_E_NOMEM, "out of memory for a %zu byte painting", n);
    size_t len = 0;
    uint32_t acc = 0;
    for (size_t k = 0; k < n; k++) {
        int v = s_b64_value((unsigned char)text[k]);
        if (v < 0) {
            free(d);
            return tb_err_set(err, TB_E_FORMAT,
                              "painting_png_base64: character %zu (0x%02x) is not base64", k,
                              (unsigned char)text[k]);
        }
        acc = acc << 6 | (uint32_t)v;
        if (k % 4 == 3) {
            d[len++] = (unsigned char)(acc >> 16);
            d[len++] = (unsigned char)(acc >> 8);
            d[len++] = (unsigned char)acc;
        }
    }
    if (n % 4 == 2)
        d[len++] = (unsigned char)(acc >> 4);
    else if (n % 4 == 3) {
        d[len++] = (unsigned char)(acc >> 10);
        d[len++] = (unsigned char)(acc >> 2);
    }
    *out = d;
    *out_n = len;
    return 0;
}

/* Two stamps (strings already) into a and b; -1 with *err for one longer than ours are. */
static int s_stamps(const cJSON *sa, const cJSON *sb, char a[TB_STUDIO_STAMP_MAX],
                    char b[TB_STUDIO_STAMP_MAX], tb_err_t *err)
{
    if (strlen(sa->valuestring) >= TB_STUDIO_STAMP_MAX ||
        strlen(sb->valuestring) >= TB_STUDIO_STAMP_MAX)
        return tb_err_set(err, TB_E_FORMAT, "a stamp longer than %d characters is none of ours",
                          TB_STUDIO_STAMP_MAX - 1);
    snprintf(a, TB_STUDIO_STAMP_MAX, "%s", sa->valuestring);
    snprintf(b, TB_STUDIO_STAMP_MAX, "%s", sb->valuestring);
    return 0;
}

/* The object's fields, each of its type; 400 with the shape expected otherwise. */
static int s_fields(const cJSON *body, const cJSON **png, const cJSON **legend,
                    tb_studio_save_t *out, tb_err_t *err)
{
    if (!cJSON_IsObject(body))
        return tb_err_set(err, TB_E_FORMAT, "the body is not a JSON object"), 400;
    *png = cJSON_GetObjectItemCaseSensitive(body, "painting_png_base64");
    *legend = cJSON_GetObjectItemCaseSensitive(body, "legend");
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(body, "painting_stamp");
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(body, "legend_stamp");
    const cJSON *force = cJSON_GetObjectItemCaseSensitive(body, "force");
    if (!cJSON_IsString(*png) || !cJSON_IsObject(*legend) || !cJSON_IsString(ps) ||
        !cJSON_IsString(ls) || (force && !cJSON_IsBool(force)))
        return tb_err_set(err, TB_E_FORMAT,
                          "expected {\"painting_png_base64\": string, \"legend\": object, "
                          "\"painting_stamp\": string, \"legend_stamp\": string, \"force\": "
                          "bool (optional)}"),
               400;
    if (s_stamps(ps, ls, out->painting_stamp, out->legend_stamp, err) != 0)
        return 400;
    out->force = cJSON_IsTrue(force);
    return 0;
}

/* The painting (RGB8) or the overlay (RGBA8): base64, then a PNG of exactly w x h. */
static int s_sheet(const char *b64, int64_t w, int64_t h, const char *name, tb_png_format_t fmt,
                   const char *what, tb_image_t *img, tb_err_t *err)
{
    unsigned char *bytes = NULL;
    size_t n = 0;
    if (tb_studio_base64_decode(b64, strlen(b64), &bytes, &n, err) != 0)
        return 400;
    uint32_t pw, ph;
    int rc = tb_png_peek(bytes, n, what, &pw, &ph, err);
    if (rc == 0 && ((int64_t)pw != w || (int64_t)ph != h))
        rc = tb_err_set(err, TB_E_INVALID,
                        "%s is %u x %u pixels; %s is %lld x %lld (the manifest's painting size)",
                        what, pw, ph, name, (long long)w, (long long)h);
    if (rc == 0)
        rc = tb_png_read_mem(bytes, n, what, fmt, (uint64_t)w * (uint64_t)h, img, err);
    free(bytes);
    return rc == 0 ? 0 : 422;
}

/* The overlay's four fields, all or none; its sheet at the painting's size and its marks as the
 * plan reads them. */
static int s_overlay(const cJSON *body, int64_t w, int64_t h, const char *painting_name,
                     tb_studio_save_t *out, tb_err_t *err)
{
    const cJSON *png = cJSON_GetObjectItemCaseSensitive(body, "overlay_png_base64");
    const cJSON *lg = cJSON_GetObjectItemCaseSensitive(body, "overlay_legend");
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(body, "overlay_stamp");
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(body, "overlay_legend_stamp");
    if (!png && !lg && !ps && !ls)
        return 0;
    if (!cJSON_IsString(png) || !cJSON_IsObject(lg) || !cJSON_IsString(ps) || !cJSON_IsString(ls))
        return tb_err_set(err, TB_E_FORMAT,
                          "expected all four of \"overlay_png_base64\": string, "
                          "\"overlay_legend\": object, \"overlay_stamp\": string, "
                          "\"overlay_legend_stamp\": string, or none"),
               400;
    if (s_stamps(ps, ls, out->overlay_stamp, out->overlay_legend_stamp, err) != 0)
        return 400;
    int code = s_sheet(png->valuestring, w, h, painting_name, TB_PNG_RGBA8, "the overlay sent",
                       &out->overlay, err);
    if (code != 0)
        return code;
    char *text = cJSON_PrintUnformatted(lg);
    tb_overlay_legend_t *L = calloc(1, sizeof *L);
    if (!text || !L)
        code = (tb_err_set(err, TB_E_NOMEM, "out of memory reading the overlay legend"), 422);
    else if (strlen(text) > TB_STUDIO_LEGEND_MAX_BYTES)
        code = (tb_err_set(err, TB_E_INVALID, "the overlay legend sent is %zu bytes, over %u",
                           strlen(text), TB_STUDIO_LEGEND_MAX_BYTES),
                422);
    else if (tb_overlay_legend_parse(text, "the overlay legend sent", L, err) != 0)
        code = 422;
    else if (!(out->overlay_legend_json = cJSON_Print(lg)))
        code = (tb_err_set(err, TB_E_NOMEM, "out of memory writing the overlay legend"), 422);
    free(L);
    free(text);
    if (code == 0)
        out->has_overlay = true;
    return code;
}

int tb_studio_save_parse(const char *body, size_t len, int64_t painting_w, int64_t painting_h,
                         const char *painting_name, tb_studio_save_t *out, tb_err_t *err)
{
    cJSON *json = cJSON_ParseWithLength(body, len);
    if (!json)
        return tb_err_set(err, TB_E_FORMAT, "the body is not JSON"), 400;
    const cJSON *png = NULL, *legend = NULL;
    int code = s_fields(json, &png, &legend, out, err);
    if (code == 0)
        code = s_sheet(png->valuestring, painting_w, painting_h, painting_name, TB_PNG_RGB8,
                       "the painting sent", &out->img, err);
    if (code == 0) {
        char *text = cJSON_PrintUnformatted(legend);
        if (!text)
            code = (tb_err_set(err, TB_E_NOMEM, "out of memory reading the legend"), 422);
        else if (strlen(text) > TB_STUDIO_LEGEND_MAX_BYTES)
            code = (tb_err_set(err, TB_E_INVALID, "the legend sent is %zu bytes, over %u",
                               strlen(text), TB_STUDIO_LEGEND_MAX_BYTES),
                    422);
        else if (tb_legend_parse(text, "the legend sent", &out->legend, err) != 0)
            code = 422;
        free(text);
    }
    if (code == 0)
        code = s_overlay(json, painting_w, painting_h, painting_name, out, err);
    cJSON_Delete(json);
    return code;
}

void tb_studio_save_free(tb_studio_save_t *sv)
{
    if (!sv)
        return;
    tb_image_free(&sv->img);
    tb_image_free(&sv->overlay);
    free(sv->overlay_legend_json);
    sv->overlay_legend_json = NULL;
}
