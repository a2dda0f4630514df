/* The result store: keys name exactly what produced a result, stored results round-trip, and any
 * damage to a stored file is reported as unusable - never returned as a result. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "coordinator/farm/cache.h"
#include "support/tb_test.h"

static tb_cache_key_t s_key(const char *build, const char *kind, const char *spec,
                            const uint64_t *inputs, size_t n)
{
    tb_cache_key_t k;
    tb_cache_key_make(&k, build, kind, spec, strlen(spec), inputs, n);
    return k;
}

START_TEST(test_key_depends_on_every_part)
{
    uint64_t in1[] = {1, 2}, in2[] = {1, 3};
    tb_cache_key_t base = s_key("b1", "region", "spec", in1, 2);
    tb_cache_key_t same = s_key("b1", "region", "spec", in1, 2);
    ck_assert(memcmp(base.bytes, same.bytes, 16) == 0);
    tb_cache_key_t others[] = {
        s_key("b2", "region", "spec", in1, 2),
        s_key("b1", "tile", "spec", in1, 2),
        s_key("b1", "region", "spex", in1, 2),
        s_key("b1", "region", "spec", in2, 2),
        s_key("b1", "region", "spec", in1, 1),
        s_key("b1", "region", "spec", NULL, 0),
        /* length prefixes: moving a byte between fields changes the key */
        s_key("b1r", "egion", "spec", in1, 2),
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        ck_assert_msg(memcmp(base.bytes, others[i].bytes, 16) != 0, "variant %zu", i);
    char hex[33];
    tb_cache_key_hex(&base, hex);
    ck_assert_uint_eq(strlen(hex), 32);
    ck_assert_uint_eq(strspn(hex, "0123456789abcdef"), 32);
}
END_TEST

static char *s_file_path(tb_cache_t *c, const tb_cache_key_t *k)
{
    static char path[4300];
    tb_cache_path(c, k, path, sizeof path);
    return path;
}

START_TEST(test_round_trip_and_missing)
{
    const char *dir = tb_test_tmpdir("cache");
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/a/b/.cache", dir);
    tb_err_t err;
    tb_cache_t *c = tb_cache_open(sub, &err);
    ck_assert_ptr_nonnull(c);
    tb_cache_key_t k = s_key("b", "k", "s", NULL, 0), other = s_key("b", "k", "t", NULL, 0);
    void *data;
    size_t bytes;
    ck_assert_int_eq(tb_cache_get(c, &k, 1 << 20, &data, &bytes, &err), 0);
    char payload[5000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (char)(i * 7);
    ck_assert_int_eq(tb_cache_put(c, &k, payload, sizeof payload, &err), 0);
    ck_assert_int_eq(tb_cache_get(c, &k, 1 << 20, &data, &bytes, &err), 1);
    ck_assert_uint_eq(bytes, sizeof payload);
    ck_assert(memcmp(data, payload, bytes) == 0);
    free(data);
    ck_assert_int_eq(tb_cache_get(c, &other, 1 << 20, &data, &bytes, &err), 0);
    /* Over the caller's limit: unusable, not truncated. */
    ck_assert_int_eq(tb_cache_get(c, &k, 100, &data, &bytes, &err), -1);
    /* Written atomically: exactly one file, no temporaries. */
    DIR *d = opendir(sub);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            files++;
    closedir(d);
    ck_assert_int_eq(files, 1);
    tb_cache_destroy(&c);
    ck_assert_ptr_null(c);
}
END_TEST

START_TEST(test_damage_is_detected_never_returned)
{
    const char *dir = tb_test_tmpdir("cache-damage");
    tb_err_t err;
    tb_cache_t *c = tb_cache_open(dir, &err);
    tb_cache_key_t k = s_key("b", "k", "s", NULL, 0);
    char payload[3000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (char)(i % 13);
    ck_assert_int_eq(tb_cache_put(c, &k, payload, sizeof payload, &err), 0);
    char *file;
    size_t n;
    ck_assert_int_eq(tb_fs_read_all(s_file_path(c, &k), 1 << 20, &file, &n, &err), 0);
    void *data;
    size_t bytes;
    int detected = 0, checksum = 0;
    /* Every single-byte change anywhere in the file. */
    for (size_t at = 0; at < n; at++) {
        char *bad = malloc(n);
        memcpy(bad, file, n);
        bad[at] ^= 0x5a;
        ck_assert_int_eq(tb_fs_write_atomic(s_file_path(c, &k), bad, n, &err), 0);
        int r = tb_cache_get(c, &k, 1 << 20, &data, &bytes, &err);
        if (r == 1) { /* zstd may ignore a byte; the bytes returned must then be the right ones */
            ck_assert_uint_eq(bytes, sizeof payload);
            ck_assert(memcmp(data, payload, bytes) == 0);
            free(data);
        } else {
            ck_assert_int_eq(r, -1);
            ck_assert(err.code == TB_E_FORMAT || err.code == TB_E_CHECKSUM ||
                      err.code == TB_E_INVALID); /* a size over the limit */
            ck_assert_ptr_nonnull(strstr(err.msg, ".tbr"));
            detected++;
            checksum += err.code == TB_E_CHECKSUM;
        }
        free(bad);
    }
    ck_assert_int_gt(detected, (int)n / 2);
    ck_assert_int_gt(checksum, 0);
    /* Truncated. */
    ck_assert_int_eq(tb_fs_write_atomic(s_file_path(c, &k), file, n - 1, &err), 0);
    ck_assert_int_eq(tb_cache_get(c, &k, 1 << 20, &data, &bytes, &err), -1);
    /* Another key's file under this key's name. */
    tb_cache_key_t other = s_key("b", "k", "other", NULL, 0);
    ck_assert_int_eq(tb_cache_put(c, &other, payload, sizeof payload, &err), 0);
    char *other_file;
    size_t other_n;
    ck_assert_int_eq(tb_fs_read_all(s_file_path(c, &other), 1 << 20, &other_file, &other_n, &err),
                     0);
    ck_assert_int_eq(tb_fs_write_atomic(s_file_path(c, &k), other_file, other_n, &err), 0);
    ck_assert_int_eq(tb_cache_get(c, &k, 1 << 20, &data, &bytes, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "another key"));
    /* Negative control: the original bytes read back fine. */
    ck_assert_int_eq(tb_fs_write_atomic(s_file_path(c, &k), file, n, &err), 0);
    ck_assert_int_eq(tb_cache_get(c, &k, 1 << 20, &data, &bytes, &err), 1);
    free(data);
    free(file);
    free(other_file);
    tb_cache_destroy(&c);
}
END_TEST

Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_key_depends_on_every_part);
    tcase_add_test(tc, test_round_trip_and_missing);
    tcase_add_test(tc, test_damage_is_detected_never_returned);
    suite_add_tcase(s, tc);
    return s;
}
