/* The project's error values and their messages; see error.h. */
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tb_err_set(tb_err_t *err, tb_errcode_t code, const char *fmt, ...)
{
    if (!err)
        return -1;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int tb_err_prefix(tb_err_t *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[TB_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char joined[TB_ERR_MSG_MAX];
    snprintf(joined, sizeof joined, "%s: %s", prefix, err->msg);
    memcpy(err->msg, joined, sizeof joined);
    return -1;
}

void tb_err_clear(tb_err_t *err)
{
    if (!err)
        return;
    err->code = TB_OK;
    err->msg[0] = '\0';
}

const char *tb_err_name(tb_errcode_t code)
{
    static const char *names[] = {"ok",      "io",       "format",  "invalid",  "unknown-key",
                                  "nomem",   "protocol", "checksum", "refused", "interrupted",
                                  "job",     "internal"};
    if ((size_t)code < sizeof names / sizeof names[0])
        return names[code];
    return "unknown";
}

void *tb_malloc(size_t bytes, const char *what, tb_err_t *err)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        tb_err_set(err, TB_E_NOMEM, "out of memory allocating %zu bytes for %s", bytes, what);
    return p;
}

void *tb_calloc(size_t count, size_t size, const char *what, tb_err_t *err)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        tb_err_set(err, TB_E_NOMEM, "out of memory allocating %zu x %zu bytes for %s", count, size,
                   what);
    return p;
}
