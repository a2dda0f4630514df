/* coordinator/studio/'s parts that need no server or browser (the server and the page are
 * tests/test_studio_browser.sh's): which --bind addresses count as loopback; the last line of a
 * child's log that the page shows as the bake's progress - found among progress bars redrawn with
 * \r, in the file's last 64 KiB only; base64 against RFC 4648's vectors; and the save bodies of the
 * fuzz seeds, each with its status and message. Controls: addresses just outside 127.0.0.0/8 and
 * text that is no address are not loopback; a log with no progress line gives ""; base64 with a
 * foreign character or a lone trailing one is refused; a painting of the transposed size is 422. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fs.h"
#include "coordinator/studio/child.h"
#include "coordinator/studio/save.h"
#include "coordinator/studio/studio.h"

START_TEST(test_loopback)
{
    ck_assert(tb_studio_is_loopback("127.0.0.1"));
    ck_assert(tb_studio_is_loopback("127.255.3.9"));
    ck_assert(!tb_studio_is_loopback("128.0.0.1"));
    ck_assert(!tb_studio_is_loopback("126.255.255.255"));
    ck_assert(!tb_studio_is_loopback("0.0.0.0"));
    ck_assert(!tb_studio_is_loopback("10.0.0.1"));
    ck_assert(!tb_studio_is_loopback("localhost"));
    ck_assert(!tb_studio_is_loopback("127.0.0.1:80"));
    ck_assert(!tb_studio_is_loopback(""));
}
END_TEST

static void s_write(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
}

START_TEST(test_last_line)
{
    char path[] = "/tmp/tb_studio_log_XXXXXX", line[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    s_write(path, "terrain bake: baking 1 of 4 regions\n"
                  "terrain bake: progress: solve 1/4\rterrain bake: progress: solve 3/4\r"
                  "terrain bake: coast: 0.2 s\n\n");
    tb_studio_last_line(path, "progress: ", line, sizeof line);
    ck_assert_str_eq(line, "terrain bake: progress: solve 3/4");
    tb_studio_last_line(path, NULL, line, sizeof line);
    ck_assert_str_eq(line, "terrain bake: coast: 0.2 s");
    s_write(path, "terrain bake: no progress here\n"); /* the control */
    tb_studio_last_line(path, "progress: ", line, sizeof line);
    ck_assert_str_eq(line, "");
    /* only the last 64 KiB are read: a progress line before them is not found */
    FILE *fp = fopen(path, "wb");
    fputs("terrain bake: progress: early\n", fp);
    for (int k = 0; k < 70000; k++)
        fputc(k % 80 == 79 ? '\n' : 'x', fp);
    fputs("\n", fp);
    fclose(fp);
    tb_studio_last_line(path, "progress: ", line, sizeof line);
    ck_assert_str_eq(line, "");
    tb_studio_last_line("/nonexistent/log", NULL, line, sizeof line);
    ck_assert_str_eq(line, "");
    unlink(path);
}
END_TEST

START_TEST(test_base64)
{
    /* RFC 4648 section 10's vectors, padded and not */
    const char *in[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg", "Zm9vYmE=", "Zm9vYmFy"};
    const char *want[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    for (int k = 0; k < 7; k++) {
        unsigned char *out;
        size_t n;
        tb_err_t err;
        ck_assert_int_eq(tb_studio_base64_decode(in[k], strlen(in[k]), &out, &n, &err), 0);
        ck_assert_uint_eq(n, strlen(want[k]));
        ck_assert(memcmp(out, want[k], n) == 0);
        free(out);
    }
    unsigned char *out;
    size_t n;
    tb_err_t err;
    ck_assert_int_eq(tb_studio_base64_decode("Zm9v-mFy", 8, &out, &n, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "character 4"));
    ck_assert_int_eq(tb_studio_base64_decode("Zm9vY", 5, &out, &n, &err), -1);
}
END_TEST

/* The save bodies of tests/fuzz/seeds/studio_save, each with the status it must get. */
START_TEST(test_save_bodies)
{
    const char *src = getenv("TB_SOURCE_DIR");
    ck_assert_ptr_nonnull(src);
    struct {
        const char *name;
        int code;
        const char *says;
    } cases[] = {
        {"ok_rgb", 0, NULL},
        {"ok_rgba_force", 0, NULL},
        {"wrong_size", 422, "is 4 x 8 pixels; painting.png is 8 x 4"},
        {"truncated", 422, "the painting sent"},
        {"bad_legend", 422, "uplift_mm_yr: missing"},
        {"not_json", 400, "not JSON"},
        {"bad_base64", 400, "character 2 (0x40) is not base64"},
        {"ok_overlay", 0, NULL},
        {"overlay_partial", 400, "expected all four of \"overlay_png_base64\""},
        {"overlay_bad_marks", 422, "the overlay legend sent: marks[0] (town).kind"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[4096], *body;
        size_t n;
        tb_err_t err;
        snprintf(path, sizeof path, "%s/tests/fuzz/seeds/studio_save/%s", src, cases[k].name);
        ck_assert_int_eq(tb_fs_read_all(path, 1 << 20, &body, &n, &err), 0);
        tb_studio_save_t *sv = calloc(1, sizeof *sv);
        int code = tb_studio_save_parse(body, n, 8, 4, "painting.png", sv, &err);
        ck_assert_msg(code == cases[k].code, "%s: %d, expected %d (%s)", cases[k].name, code,
                      cases[k].code, code ? err.msg : "");
        if (code == 0) {
            ck_assert_uint_eq(sv->img.w, 8);
            ck_assert_uint_eq(sv->img.h, 4);
            const uint8_t *px = sv->img.pixels; /* the lowland colour, alpha dropped */
            ck_assert(px[0] == 0x6f && px[1] == 0x9a && px[2] == 0x4a && px[3] == 0x6f);
            ck_assert_int_eq(sv->legend.n_classes, 5);
            ck_assert(sv->force == (strcmp(cases[k].name, "ok_rgba_force") == 0));
            ck_assert_str_eq(sv->painting_stamp, "1:2");
            /* the overlay, read as RGBA at the painting's size, and its marks as sent */
            bool ov = strcmp(cases[k].name, "ok_overlay") == 0;
            ck_assert(sv->has_overlay == ov);
            if (ov) {
                ck_assert(sv->overlay.w == 8 && sv->overlay.h == 4 &&
                          sv->overlay.format == TB_PNG_RGBA8);
                ck_assert_str_eq(sv->overlay_stamp, "3:4");
                ck_assert_str_eq(sv->overlay_legend_stamp, "5:6");
                ck_assert_ptr_nonnull(strstr(sv->overlay_legend_json, "\"coast_jitter_px\":\t4"));
            }
        } else
            ck_assert_msg(strstr(err.msg, cases[k].says), "%s: %s", cases[k].name, err.msg);
        tb_studio_save_free(sv);
        free(sv);
        free(body);
    }
}
END_TEST

Suite *studio_suite(void)
{
    Suite *s = suite_create("studio");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_loopback);
    tcase_add_test(tc, test_last_line);
    tcase_add_test(tc, test_base64);
    tcase_add_test(tc, test_save_bodies);
    suite_add_tcase(s, tc);
    return s;
}
