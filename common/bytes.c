/* Little-endian byte buffers; see bytes.h. */
#include "common/bytes.h"

#include <stdlib.h>
#include <string.h>

void tb_bytes_init(tb_bytes_t *b)
{
    memset(b, 0, sizeof *b);
}

void tb_bytes_free(tb_bytes_t *b)
{
    if (!b)
        return;
    free(b->data);
    memset(b, 0, sizeof *b);
}

uint8_t *tb_bytes_take(tb_bytes_t *b, size_t *len)
{
    uint8_t *out = b->failed ? NULL : b->data;
    *len = b->failed ? 0 : b->len;
    if (b->failed)
        free(b->data);
    memset(b, 0, sizeof *b);
    return out;
}

static bool s_reserve(tb_bytes_t *b, size_t n)
{
    if (b->failed)
        return false;
    if (n <= b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

void tb_bytes_put(tb_bytes_t *b, const void *src, size_t n)
{
    if (n == 0 || !s_reserve(b, n))
        return;
    memcpy(b->data + b->len, src, n);
    b->len += n;
}

static void s_put_le(tb_bytes_t *b, uint64_t v, int n)
{
    uint8_t tmp[8];
    for (int i = 0; i < n; i++)
        tmp[i] = (uint8_t)(v >> (8 * i));
    tb_bytes_put(b, tmp, (size_t)n);
}

void tb_bytes_put_u8(tb_bytes_t *b, uint8_t v)
{
    s_put_le(b, v, 1);
}
void tb_bytes_put_u16(tb_bytes_t *b, uint16_t v)
{
    s_put_le(b, v, 2);
}
void tb_bytes_put_u32(tb_bytes_t *b, uint32_t v)
{
    s_put_le(b, v, 4);
}
void tb_bytes_put_u64(tb_bytes_t *b, uint64_t v)
{
    s_put_le(b, v, 8);
}
void tb_bytes_put_i64(tb_bytes_t *b, int64_t v)
{
    s_put_le(b, (uint64_t)v, 8);
}

void tb_bytes_put_f64(tb_bytes_t *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    s_put_le(b, bits, 8);
}

void tb_bytes_put_varint(tb_bytes_t *b, uint64_t v)
{
    uint8_t tmp[10];
    int n = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        tmp[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    tb_bytes_put(b, tmp, (size_t)n);
}

void tb_reader_init(tb_reader_t *r, const void *data, size_t len)
{
    r->data = data;
    r->len = data ? len : 0;
    r->pos = 0;
    r->failed = false;
}

size_t tb_reader_left(const tb_reader_t *r)
{
    return r->failed ? 0 : r->len - r->pos;
}

bool tb_reader_get(tb_reader_t *r, void *dst, size_t n)
{
    if (r->failed || n > r->len - r->pos) {
        r->failed = true;
        memset(dst, 0, n);
        return false;
    }
    memcpy(dst, r->data + r->pos, n);
    r->pos += n;
    return true;
}

static uint64_t s_get_le(tb_reader_t *r, int n)
{
    uint8_t tmp[8];
    if (!tb_reader_get(r, tmp, (size_t)n))
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)tmp[i] << (8 * i);
    return v;
}

uint8_t tb_reader_u8(tb_reader_t *r)
{
    return (uint8_t)s_get_le(r, 1);
}
uint16_t tb_reader_u16(tb_reader_t *r)
{
    return (uint16_t)s_get_le(r, 2);
}
uint32_t tb_reader_u32(tb_reader_t *r)
{
    return (uint32_t)s_get_le(r, 4);
}
uint64_t tb_reader_u64(tb_reader_t *r)
{
    return s_get_le(r, 8);
}
int64_t tb_reader_i64(tb_reader_t *r)
{
    return (int64_t)s_get_le(r, 8);
}

double tb_reader_f64(tb_reader_t *r)
{
    uint64_t bits = s_get_le(r, 8);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

uint64_t tb_reader_varint(tb_reader_t *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t byte = tb_reader_u8(r);
        if (r->failed)
            return 0;
        /* The tenth byte may carry only the top bit of a 64-bit value. */
        if (shift == 63 && byte > 1)
            break;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    r->failed = true;
    return 0;
}

int tb_reader_magic(tb_reader_t *r, uint32_t magic, uint32_t version, const char *what,
                    tb_err_t *err)
{
    uint32_t m = tb_reader_u32(r), v = tb_reader_u32(r);
    if (r->failed || m != magic) {
        r->failed = true;
        return tb_err_set(err, TB_E_FORMAT, "%s: not a %s (bad magic)", what, what);
    }
    if (v != version) {
        r->failed = true;
        return tb_err_set(err, TB_E_FORMAT, "%s: version %u, this build reads %u", what, v,
                          version);
    }
    return 0;
}

char *tb_reader_preamble(tb_reader_t *r, uint32_t magic, uint32_t version, uint32_t max_bytes,
                         const char *what, tb_err_t *err)
{
    if (tb_reader_magic(r, magic, version, what, err) != 0)
        return NULL;
    uint32_t n = tb_reader_u32(r);
    if (r->failed || n > max_bytes || n > tb_reader_left(r)) {
        tb_err_set(err, TB_E_FORMAT, "%s: header of %u bytes, %zu left", what, n,
                   tb_reader_left(r));
        r->failed = true;
        return NULL;
    }
    char *text = tb_malloc((size_t)n + 1, what, err);
    if (!text) {
        r->failed = true;
        return NULL;
    }
    tb_reader_get(r, text, n);
    text[n] = '\0';
    return text;
}
