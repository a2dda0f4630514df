/* The report page's text buffer; see html.h. */
#include "coordinator/report/html.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool s_grow(tb_html_t *h, size_t need)
{
    if (h->failed)
        return false;
    if (h->len + need + 1 <= h->cap)
        return true;
    size_t cap = h->cap ? h->cap : 4096;
    while (cap < h->len + need + 1)
        cap *= 2;
    char *b = realloc(h->buf, cap);
    if (!b) {
        h->failed = true;
        return false;
    }
    h->buf = b;
    h->cap = cap;
    return true;
}

void tb_html_printf(tb_html_t *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !s_grow(h, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(h->buf + h->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    h->len += (size_t)n;
}

void tb_html_text(tb_html_t *h, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            break;
        }
        if (rep) {
            tb_html_printf(h, "%s", rep);
        } else if (s_grow(h, 1)) {
            h->buf[h->len++] = *s;
            h->buf[h->len] = '\0';
        }
    }
}

char *tb_html_take(tb_html_t *h, size_t *len)
{
    if (h->failed || !s_grow(h, 0)) {
        tb_html_free(h);
        return NULL;
    }
    h->buf[h->len] = '\0';
    char *out = h->buf;
    if (len)
        *len = h->len;
    memset(h, 0, sizeof *h);
    return out;
}

void tb_html_free(tb_html_t *h)
{
    free(h->buf);
    memset(h, 0, sizeof *h);
}

const cJSON *tb_json_path(const cJSON *root, const char *path)
{
    const cJSON *node = root;
    char key[128];
    while (node && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        path += n + (path[n] == '.');
        if (cJSON_IsArray(node)) {
            char *end;
            long i = strtol(key, &end, 10);
            node = *end || i < 0 ? NULL : cJSON_GetArrayItem(node, (int)i);
        } else {
            node = cJSON_GetObjectItemCaseSensitive(node, key);
        }
    }
    return node;
}

double tb_json_num(const cJSON *root, const char *path)
{
    const cJSON *n = tb_json_path(root, path);
    return cJSON_IsNumber(n) ? n->valuedouble : NAN;
}

const char *tb_json_str(const cJSON *root, const char *path, const char *fallback)
{
    const cJSON *n = tb_json_path(root, path);
    return cJSON_IsString(n) && n->valuestring ? n->valuestring : fallback;
}

void tb_html_meta_num(tb_html_t *h, const cJSON *root, const char *path, double scale, int decimals,
                      const char *unit)
{
    double v = tb_json_num(root, path);
    tb_html_printf(h, "<span class=\"num\" data-meta=\"");
    tb_html_text(h, path);
    tb_html_printf(h, "\"");
    if (scale != 1)
        tb_html_printf(h, " data-scale=\"%g\"", scale);
    if (!isfinite(v))
        tb_html_printf(h, ">n/a</span>");
    else if (decimals < 0)
        tb_html_printf(h, ">%.3g</span>", v * scale);
    else
        tb_html_printf(h, ">%.*f</span>", decimals, v * scale);
    if (unit && unit[0]) {
        tb_html_printf(h, "%s", unit[0] == '%' ? "" : "&nbsp;");
        tb_html_text(h, unit);
    }
}
