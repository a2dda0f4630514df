/* The world-position hash; see hash.h. Integers are packed little-endian explicitly so the value is
 * the same on every host a farm may mix. */
#include <stddef.h>
#include <string.h>

#include "common/hash.h"

/* The hash is taken inline (the header carries the whole of XXH3): a cell's hash is 16 bytes, for
 * which the call into the shared library and its dispatch cost more than the hash. XXH3's output
 * has been frozen since xxHash 0.8.0, so the bits are those of the library's function. */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* Little-endian bytes of v; on a little-endian host that is v's own representation (GCC rebuilt
 * the byte loop with some eighty shifts and ors). */
static void s_put64(unsigned char *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, sizeof v);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
#endif
}

uint64_t tb_hash_key(uint64_t seed, uint32_t salt, int64_t step)
{
    unsigned char buf[24];
    s_put64(buf, seed);
    s_put64(buf + 8, (uint64_t)salt);
    s_put64(buf + 16, (uint64_t)step);
    return XXH3_64bits(buf, sizeof buf);
}

uint64_t tb_hash_cell(uint64_t key, int64_t x, int64_t y)
{
    unsigned char buf[16];
    s_put64(buf, (uint64_t)x);
    s_put64(buf + 8, (uint64_t)y);
    return XXH3_64bits_withSeed(buf, sizeof buf, key);
}

uint64_t tb_hash(uint64_t seed, uint32_t salt, int64_t x, int64_t y, int64_t step)
{
    return tb_hash_cell(tb_hash_key(seed, salt, step), x, y);
}

/* Never called: a duplicated salt value is a duplicate case label, so it fails to compile. Every
 * salt in hash.h is listed here. */
int tb_hash_salt_is_known(int salt);
int tb_hash_salt_is_known(int salt)
{
    switch (salt) {
    case TB_SALT_DEMO_PAINTING:
    case TB_SALT_ROUTER_JITTER:
    case TB_SALT_CLAMP_ORDER:
    case TB_SALT_CLAMP_ALLOWANCE:
    case TB_SALT_MASSIF:
    case TB_SALT_ROCK:
    case TB_SALT_GRAIN:
    case TB_SALT_FAULT:
    case TB_SALT_FAULT_WALK:
    case TB_SALT_PROBE:
    case TB_SALT_FLOOD:
    case TB_SALT_GRAIN_Y:
    case TB_SALT_ROCK_TYPES:
    case TB_SALT_DEMO_CLASSES:
    case TB_SALT_DEMO_SHELF:
    case TB_SALT_DEMO_LAYOUT:
    case TB_SALT_DEMO_BAYS:
    case TB_SALT_CHECKSUM_GRIND:
    case TB_SALT_MAP_BASINS:
    case TB_SALT_TILE_SPAWN:
    case TB_SALT_TILE_JITTER:
    case TB_SALT_TILE_RELIEF:
    case TB_SALT_TEST:
    case TB_SALT_TEST_NOISE:
        return 1;
    }
    return 0;
}

uint64_t tb_xxh3(const void *data, size_t bytes)
{
    return XXH3_64bits(data, bytes);
}

void tb_hash_hex(uint64_t h, char out[17])
{
    static const char digits[] = "0123456789abcdef";
    for (int k = 15; k >= 0; k--, h >>= 4)
        out[k] = digits[h & 15];
    out[16] = '\0';
}

int tb_hash_from_hex(const char *text, uint64_t *out)
{
    uint64_t v = 0;
    for (int k = 0; k < 16; k++) {
        char c = text ? text[k] : '\0';
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (text[16] != '\0')
        return -1;
    *out = v;
    return 0;
}
