/* Blobs: round trips, limits, and the checksum that turns corruption into TB_E_CHECKSUM. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#include "common/blob.h"
#include "common/hash.h"

static unsigned char *s_pattern(size_t n, uint64_t seed)
{
    unsigned char *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) /* compressible but not trivial */
        p[i] = (unsigned char)(tb_hash(seed, TB_SALT_TEST, (int64_t)(i / 64), 0, 0) & 0x0f);
    return p;
}

START_TEST(test_round_trip_sizes)
{
    size_t sizes[] = {0, 1, 7, 4096, 1000003};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        unsigned char *data = s_pattern(n, k);
        void *blob, *back;
        size_t blob_bytes, back_bytes;
        tb_err_t err;
        ck_assert_int_eq(tb_blob_encode(data, n, 0, &blob, &blob_bytes, &err), 0);
        tb_blob_info_t info;
        ck_assert_int_eq(tb_blob_peek(blob, blob_bytes, &info, &err), 0);
        ck_assert_uint_eq(info.raw_bytes, n);
        ck_assert_uint_eq(info.raw_xxh3, XXH3_64bits(data, n));
        ck_assert_uint_eq(info.packed_bytes + TB_BLOB_HEADER_BYTES, blob_bytes);
        ck_assert_int_eq(tb_blob_decode(blob, blob_bytes, n, &back, &back_bytes, &err), 0);
        ck_assert_ptr_nonnull(back);
        ck_assert_uint_eq(back_bytes, n);
        ck_assert(memcmp(back, data, n) == 0);
        free(back);
        free(blob);
        free(data);
    }
}
END_TEST

START_TEST(test_checksum_mismatch_is_an_error_not_an_answer)
{
    unsigned char *data = s_pattern(10000, 3);
    void *blob, *back = (void *)1;
    size_t blob_bytes, back_bytes;
    tb_err_t err;
    ck_assert_int_eq(tb_blob_encode(data, 10000, 1, &blob, &blob_bytes, &err), 0);
    /* A valid zstd frame of other bytes under this header: decompresses fine, checksum differs. */
    unsigned char *other = s_pattern(10000, 4);
    void *other_blob;
    size_t other_bytes;
    ck_assert_int_eq(tb_blob_encode(other, 10000, 1, &other_blob, &other_bytes, &err), 0);
    unsigned char *forged = malloc(other_bytes);
    memcpy(forged, other_blob, other_bytes);
    memcpy(forged + 16, (unsigned char *)blob + 16, 8); /* the first blob's XXH3 */
    ck_assert_int_eq(tb_blob_decode(forged, other_bytes, 10000, &back, &back_bytes, &err), -1);
    ck_assert_int_eq(err.code, TB_E_CHECKSUM);
    ck_assert_ptr_null(back);
    ck_assert_ptr_nonnull(strstr(err.msg, "XXH3"));
    /* Negative control: the untouched blob decodes. */
    ck_assert_int_eq(tb_blob_decode(other_blob, other_bytes, 10000, &back, &back_bytes, &err), 0);
    free(back);
    /* A flipped checksum bit alone is also caught. */
    ((unsigned char *)blob)[20] ^= 0x40;
    ck_assert_int_eq(tb_blob_decode(blob, blob_bytes, 10000, &back, &back_bytes, &err), -1);
    ck_assert_int_eq(err.code, TB_E_CHECKSUM);
    free(forged);
    free(other_blob);
    free(other);
    free(blob);
    free(data);
}
END_TEST

START_TEST(test_limits_and_lies_are_refused_before_allocation)
{
    unsigned char *data = s_pattern(5000, 5);
    void *blob, *back;
    size_t blob_bytes, back_bytes;
    tb_err_t err;
    ck_assert_int_eq(tb_blob_encode(data, 5000, 0, &blob, &blob_bytes, &err), 0);
    /* Over the caller's maximum. */
    ck_assert_int_eq(tb_blob_decode(blob, blob_bytes, 4999, &back, &back_bytes, &err), -1);
    ck_assert_int_eq(err.code, TB_E_INVALID);
    /* A header that claims an enormous size: refused by the limit, nothing allocated. */
    unsigned char *lie = malloc(blob_bytes);
    memcpy(lie, blob, blob_bytes);
    memset(lie + 8, 0xff, 8);
    ck_assert_int_eq(tb_blob_decode(lie, blob_bytes, (size_t)1 << 30, &back, &back_bytes, &err),
                     -1);
    ck_assert_int_eq(err.code, TB_E_INVALID);
    /* A header size that disagrees with the zstd frame, within the limit. */
    memcpy(lie, blob, blob_bytes);
    lie[8] ^= 1;
    ck_assert_int_eq(tb_blob_decode(lie, blob_bytes, 1 << 20, &back, &back_bytes, &err), -1);
    ck_assert_int_eq(err.code, TB_E_FORMAT);
    /* Every truncation is a format error. */
    for (size_t n = 0; n < blob_bytes; n++) {
        ck_assert_int_eq(tb_blob_decode(blob, n, 1 << 20, &back, &back_bytes, &err), -1);
        ck_assert_int_eq(err.code, TB_E_FORMAT);
    }
    /* Bad magic, version, codec. */
    for (int at = 0; at < 8; at++) {
        memcpy(lie, blob, blob_bytes);
        lie[at] ^= 0x11;
        ck_assert_int_eq(tb_blob_decode(lie, blob_bytes, 1 << 20, &back, &back_bytes, &err), -1);
        ck_assert_int_eq(err.code, TB_E_FORMAT);
    }
    free(lie);
    free(blob);
    free(data);
}
END_TEST

START_TEST(test_corrupt_frame_bytes_never_decode_wrongly)
{
    /* Flip every byte of the zstd frame in turn: each decode fails (format or checksum) or, when
     * the flip hits bytes zstd ignores, returns exactly the original data - never other bytes. */
    unsigned char *data = s_pattern(3000, 6);
    void *blob, *back;
    size_t blob_bytes, back_bytes;
    tb_err_t err;
    ck_assert_int_eq(tb_blob_encode(data, 3000, 0, &blob, &blob_bytes, &err), 0);
    unsigned char *bad = malloc(blob_bytes);
    int failures = 0;
    for (size_t at = TB_BLOB_HEADER_BYTES; at < blob_bytes; at++) {
        memcpy(bad, blob, blob_bytes);
        bad[at] ^= 0xA5;
        if (tb_blob_decode(bad, blob_bytes, 1 << 20, &back, &back_bytes, &err) == 0) {
            ck_assert_uint_eq(back_bytes, 3000);
            ck_assert(memcmp(back, data, 3000) == 0);
            free(back);
        } else {
            ck_assert(err.code == TB_E_FORMAT || err.code == TB_E_CHECKSUM);
            failures++;
        }
    }
    ck_assert_int_gt(failures, 0);
    free(bad);
    free(blob);
    free(data);
}
END_TEST

Suite *blob_suite(void)
{
    Suite *s = suite_create("blob");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_round_trip_sizes);
    tcase_add_test(tc, test_checksum_mismatch_is_an_error_not_an_answer);
    tcase_add_test(tc, test_limits_and_lies_are_refused_before_allocation);
    tcase_add_test(tc, test_corrupt_frame_bytes_never_decode_wrongly);
    suite_add_tcase(s, tc);
    return s;
}
