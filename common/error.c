/* The project's error values and their messages; see error.h. */
#include "common/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* A message a little too long for its buffer is first made shorter where it does not matter: the
 * longest word (a path, as a rule) loses its middle, so the reason at the end still prints. */
#define S_WIDE (4 * TB_ERR_MSG_MAX + 8192)

void tb_text_fit(char *dst, size_t n, const char *src)
{
    if (n == 0)
        return;
    static _Thread_local char esc[4 * S_WIDE];
    /* control characters as \xNN */
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p && k + 5 < sizeof esc; p++) {
        if (*p < 0x20 || *p == 0x7f)
            k += (size_t)snprintf(esc + k, sizeof esc - k, "\\x%02x", *p);
        else
            esc[k++] = (char)*p;
    }
    esc[k] = '\0';
    while (k + 1 > n) {
        /* the longest run without a space */
        size_t best = 0, best_len = 0, i = 0;
        while (i < k) {
            size_t j = i;
            while (j < k && esc[j] != ' ')
                j++;
            if (j - i > best_len) {
                best = i;
                best_len = j - i;
            }
            i = j + 1;
        }
        size_t excess = k + 1 - n, keep = 24;
        if (best_len < 2 * keep + 3 + 1)
            break; /* nothing long enough to shorten: plain truncation below */
        size_t cut = excess + 3 < best_len - 2 * keep ? excess + 3 : best_len - 2 * keep;
        size_t head = (best_len - cut) / 2;
        char *from = esc + best + head;
        memcpy(from, "...", 3);
        memmove(from + 3, from + cut, k - (size_t)(from - esc) - cut + 1);
        k -= cut - 3;
    }
    snprintf(dst, n, "%s", esc);
}

int tb_err_set(tb_err_t *err, tb_errcode_t code, const char *fmt, ...)
{
    if (!err)
        return -1;
    err->code = code;
    static _Thread_local char wide[S_WIDE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wide, sizeof wide, fmt, ap);
    va_end(ap);
    tb_text_fit(err->msg, sizeof err->msg, wide);
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
    size_t plen = strlen(prefix);
    /* one prefix per message: "region 2: region 2: ..." says it twice */
    if (strncmp(err->msg, prefix, plen) == 0 && err->msg[plen] == ':')
        return -1;
    static _Thread_local char joined[2 * TB_ERR_MSG_MAX + 8];
    snprintf(joined, sizeof joined, "%s: %s", prefix, err->msg);
    tb_text_fit(err->msg, sizeof err->msg, joined);
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
    static const char *names[] = {"ok",          "io",          "format",   "invalid",
                                  "unknown-key", "nomem",       "protocol", "checksum",
                                  "refused",     "interrupted", "job",      "internal"};
    if ((size_t)code < sizeof names / sizeof names[0])
        return names[code];
    return "unknown";
}

/* Large arrays (a planet's grids: tens to thousands of MB) are aligned to 2 MiB and offered to the
 * kernel's transparent huge pages (madvise, which Debian enables by default: THP "madvise" mode).
 * On the VMs this project runs on a 4 KiB page fault costs about 10 us, so a 76 M cell coast pass
 * spent 40 % of its time faulting pages in (docs/architecture.md, "Large arrays: huge pages"); with
 * 2 MiB pages that is 512 times fewer faults. The memory is an ordinary malloc block: free() and
 * realloc() take it as any other. Where the kernel has THP off the advice is ignored and nothing
 * changes. */
#define S_HUGE_MIN ((size_t)8 << 20)
#define S_HUGE_ALIGN ((size_t)2 << 20)

static void *s_alloc_large(size_t bytes)
{
    size_t rounded = (bytes + S_HUGE_ALIGN - 1) & ~(S_HUGE_ALIGN - 1);
    void *p = NULL;
    if (rounded < bytes || posix_memalign(&p, S_HUGE_ALIGN, rounded) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

void *tb_malloc(size_t bytes, const char *what, tb_err_t *err)
{
    void *p = bytes >= S_HUGE_MIN ? s_alloc_large(bytes) : malloc(bytes ? bytes : 1);
    if (!p)
        tb_err_set(err, TB_E_NOMEM, "out of memory allocating %zu bytes for %s", bytes, what);
    return p;
}

void *tb_calloc(size_t count, size_t size, const char *what, tb_err_t *err)
{
    void *p = NULL;
    if (count && size && count <= SIZE_MAX / size && count * size >= S_HUGE_MIN) {
        p = s_alloc_large(count * size);
        if (p)
            memset(p, 0, count * size);
    } else {
        p = calloc(count ? count : 1, size ? size : 1);
    }
    if (!p)
        tb_err_set(err, TB_E_NOMEM, "out of memory allocating %zu x %zu bytes for %s", count, size,
                   what);
    return p;
}
