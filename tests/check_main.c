/* The main() of every Check suite: tests/test_NAME.c exports Suite *NAME_suite(void), and CMake
 * compiles this file with TB_SUITE_FN naming it, so each suite is one ctest. CK_FORK is left to the
 * environment (Check forks by default, so one crashing test fails alone). */
#include <check.h>
#include <stdlib.h>

Suite *TB_SUITE_FN(void);

int main(void)
{
    SRunner *runner = srunner_create(TB_SUITE_FN());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
