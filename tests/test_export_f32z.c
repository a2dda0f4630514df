/* The float heights file of a tile, "<id>.f32z" (jobs/detail/tile_files.h; docs/export.md, "The
 * float heights of a tile"): lossless for every float bit (a smooth surface, noise, signed zeros,
 * infinities, NaN payloads, one row, one column), refused when damaged (flipped byte, truncated,
 * wrong size, wrong magic or version), and smaller than the raw floats on a smooth surface. The
 * negative control: the residuals of a surface with no structure compress no better than raw. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "jobs/detail/tile_files.h"
#include "support/tb_test.h"

/* Round trip of w x h floats; returns the encoded size. */
static size_t s_round_trip(const float *v, int64_t w, int64_t h)
{
    tb_err_t err;
    void *z = NULL;
    size_t n = 0;
    ck_assert_msg(tb_tile_f32z_encode(v, w, h, &z, &n, &err) == 0, "%s", err.msg);
    int64_t pw, ph;
    ck_assert_int_eq(tb_tile_f32z_peek(z, n, "t", &pw, &ph, &err), 0);
    ck_assert(pw == w && ph == h);
    float *back = malloc(sizeof *back * (size_t)(w * h));
    ck_assert_msg(tb_tile_f32z_decode(z, n, "t", w, h, back, &err) == 0, "%s", err.msg);
    ck_assert_msg(memcmp(back, v, sizeof *v * (size_t)(w * h)) == 0, "not bit for bit");
    free(back);
    free(z);
    return n;
}

/* A smooth terrain-like surface in metres: hills of 300 m on a 2 m lattice. */
static float *s_surface(int64_t w, int64_t h)
{
    float *v = malloc(sizeof *v * (size_t)(w * h));
    for (int64_t j = 0; j < h; j++)
        for (int64_t i = 0; i < w; i++)
            v[j * w + i] = (float)(150.0 * sin(i * 0.004) * cos(j * 0.003) - 20.0 + 0.01 * i);
    return v;
}

START_TEST(test_lossless_and_smaller_on_a_surface)
{
    int64_t w = 300, h = 200;
    float *v = s_surface(w, h);
    size_t n = s_round_trip(v, w, h);
    ck_assert_msg(n < (size_t)(w * h) * 4 * 6 / 10, "%zu bytes: not under 60 %% of the raw", n);
    free(v);
}
END_TEST

START_TEST(test_lossless_on_special_floats_and_thin_shapes)
{
    float v[12] = {0.0f,    -0.0f,   INFINITY, -INFINITY, NAN,   1e-45f,
                   -1e-45f, 3.4e38f, -3.4e38f, 1.0f,      -1.0f, 0.5f};
    uint32_t payload = 0x7fc12345u; /* a NaN with a payload */
    memcpy(&v[4], &payload, 4);
    s_round_trip(v, 12, 1);
    s_round_trip(v, 1, 12);
    s_round_trip(v, 4, 3);
    s_round_trip(v, 1, 1);
}
END_TEST

START_TEST(test_noise_does_not_compress)
{
    /* the negative control of the size test: residuals of noise are noise */
    int64_t w = 300, h = 200;
    float *v = malloc(sizeof *v * (size_t)(w * h));
    for (int64_t k = 0; k < w * h; k++) {
        uint32_t b = (uint32_t)tb_xxh3(&k, sizeof k);
        memcpy(&v[k], &b, 4);
    }
    size_t n = s_round_trip(v, w, h);
    ck_assert_msg(n > (size_t)(w * h) * 4 * 9 / 10, "%zu bytes: noise compressed", n);
    free(v);
}
END_TEST

START_TEST(test_damaged_files_are_refused)
{
    tb_err_t err;
    int64_t w = 64, h = 48;
    float *v = s_surface(w, h), *back = malloc(sizeof *back * (size_t)(w * h));
    void *z;
    size_t n;
    ck_assert_int_eq(tb_tile_f32z_encode(v, w, h, &z, &n, &err), 0);
    unsigned char *b = z;
    /* every single flipped byte past the header is caught (zstd frame or XXH3), never a crash */
    for (size_t k = TB_TILE_F32Z_HEADER_BYTES; k < n; k += 7) {
        b[k] ^= 0x5a;
        ck_assert_int_eq(tb_tile_f32z_decode(z, n, "x.f32z", w, h, back, &err), -1);
        ck_assert(err.code == TB_E_FORMAT || err.code == TB_E_CHECKSUM);
        ck_assert_msg(strstr(err.msg, "x.f32z") != NULL, "%s", err.msg);
        b[k] ^= 0x5a;
    }
    ck_assert_int_eq(tb_tile_f32z_decode(z, n - 1, "x.f32z", w, h, back, &err), -1);
    ck_assert_int_eq(tb_tile_f32z_decode(z, 10, "x.f32z", w, h, back, &err), -1);
    ck_assert_int_eq(err.code, TB_E_FORMAT);
    ck_assert_int_eq(tb_tile_f32z_decode(z, n, "x.f32z", w + 1, h, back, &err), -1);
    ck_assert_msg(strstr(err.msg, "64 x 48 samples, expected 65 x 48") != NULL, "%s", err.msg);
    b[0] = 'X';
    ck_assert_int_eq(tb_tile_f32z_decode(z, n, "x.f32z", w, h, back, &err), -1);
    ck_assert_msg(strstr(err.msg, "not a float heights file") != NULL, "%s", err.msg);
    b[0] = 'T';
    b[4] = 9;
    ck_assert_int_eq(tb_tile_f32z_decode(z, n, "x.f32z", w, h, back, &err), -1);
    ck_assert_msg(strstr(err.msg, "version 9") != NULL, "%s", err.msg);
    free(z);
    free(v);
    free(back);
}
END_TEST

Suite *export_f32z_suite(void)
{
    Suite *s = suite_create("export_f32z");
    TCase *t = tcase_create("export_f32z");
    tcase_add_test(t, test_lossless_and_smaller_on_a_surface);
    tcase_add_test(t, test_lossless_on_special_floats_and_thin_shapes);
    tcase_add_test(t, test_noise_does_not_compress);
    tcase_add_test(t, test_damaged_files_are_refused);
    suite_add_tcase(s, t);
    return s;
}
