/* coordinator/studio/'s helpers that need no server or browser (the server and the page are
 * tests/test_studio_browser.sh's): which --bind addresses count as loopback, and the last line of a
 * child's log that the page shows as the bake's progress - found among progress bars redrawn with
 * \r, in the file's last 64 KiB only. Controls: addresses just outside 127.0.0.0/8 and text that is
 * no address are not loopback; a log with no progress line gives "". */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/studio/child.h"
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

Suite *studio_suite(void)
{
    Suite *s = suite_create("studio");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_loopback);
    tcase_add_test(tc, test_last_line);
    suite_add_tcase(s, tc);
    return s;
}
