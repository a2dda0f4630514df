/* Helpers shared by the Check suites: scratch directories and paths to the built programs. */
#ifndef TB_TEST_H
#define TB_TEST_H

#include <stddef.h>

/* Creates a fresh empty directory under $TMPDIR (or /tmp) named after `tag`; returns its path in a
 * static buffer owned by the caller's thread until the next call. Aborts the test on failure. */
const char *tb_test_tmpdir(const char *tag);

/* The build directory (from TB_BUILD_DIR, set by ctest) joined with `name`, e.g. "terrain". */
const char *tb_test_build_path(const char *name);

/* The source directory (TB_SOURCE_DIR) joined with `name`. */
const char *tb_test_source_path(const char *name);

/* Writes text to dir/name; returns the full path (static buffer). Aborts on failure. */
const char *tb_test_write_file(const char *dir, const char *name, const char *text);

/* Runs a shell command, capturing stdout+stderr into a malloc'd string *output (may be NULL);
 * returns the exit status (or 128 + signal). */
int tb_test_run(const char *command, char **output);

#endif
