/* Helpers shared by the Check suites; see tb_test.h. */
#include "support/tb_test.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static _Thread_local char s_buf[4096];

const char *tb_test_tmpdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(s_buf, sizeof s_buf, "%s/tbtest-%s-XXXXXX", base, tag);
    ck_assert_msg(mkdtemp(s_buf) != NULL, "mkdtemp %s failed", s_buf);
    return s_buf;
}

static const char *s_env_path(const char *var, const char *fallback, const char *name)
{
    const char *dir = getenv(var);
    if (!dir || !*dir)
        dir = fallback;
    snprintf(s_buf, sizeof s_buf, "%s/%s", dir, name);
    return s_buf;
}

const char *tb_test_build_path(const char *name)
{
    return s_env_path("TB_BUILD_DIR", ".", name);
}
const char *tb_test_source_path(const char *name)
{
    return s_env_path("TB_SOURCE_DIR", "..", name);
}

const char *tb_test_write_file(const char *dir, const char *name, const char *text)
{
    static _Thread_local char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    ck_assert_msg(fp != NULL, "cannot write %s", path);
    fputs(text, fp);
    fclose(fp);
    return path;
}

int tb_test_run(const char *command, char **output)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s 2>&1", command);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "popen %s failed", command);
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    size_t n;
    while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 1024) {
            cap *= 2;
            out = realloc(out, cap);
        }
    }
    out[len] = '\0';
    int status = pclose(p);
    if (output)
        *output = out;
    else
        free(out);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return -1;
}
