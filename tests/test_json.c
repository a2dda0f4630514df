/* JSON text that keeps every double's bits (common/json.h): what crosses from the coordinator to a
 * worker in a spec must come back as the same double, or the worker bakes another planet. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/noise.h"

/* The double a JSON text holds at "v". */
static double s_read_back(const char *text)
{
    cJSON *root = cJSON_Parse(text);
    ck_assert_ptr_nonnull(root);
    double v = cJSON_GetObjectItemCaseSensitive(root, "v")->valuedouble;
    cJSON_Delete(root);
    return v;
}

static char *s_print_one(double v, bool ours)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "v", v);
    char *text = ours ? tb_json_print(root, false) : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    ck_assert_ptr_nonnull(text);
    return text;
}

START_TEST(test_the_100_km_rock_wavelength_survives)
{
    /* 100 km round, rock asked at 3 km: 33 periods of 3030.3030303030305 m. cJSON's own print
     * gives 3030.30303030303 back (the negative control: the bug the 100 km demo hit); ours gives
     * the same double. */
    double v = tb_snap_wavelength(100000.0, 3000.0);
    char *theirs = s_print_one(v, false), *ours = s_print_one(v, true);
    ck_assert(s_read_back(theirs) != v);
    ck_assert(s_read_back(ours) == v);
    free(theirs);
    free(ours);
}
END_TEST

START_TEST(test_every_double_comes_back_exactly)
{
    /* Doubles of every size and pattern, from the hash (rule 1: no stateful random source). */
    int lost_by_cjson = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = tb_hash(7, TB_SALT_TEST, i, 0, 0);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        if (i % 2)
            v = (double)(bits % 1000000) / 33.0; /* planet-sized quotients, like the wavelengths */
        char *ours = s_print_one(v, true);
        ck_assert_msg(s_read_back(ours) == v, "%.17g printed as %s", v, ours);
        free(ours);
        char *theirs = s_print_one(v, false);
        lost_by_cjson += s_read_back(theirs) != v;
        free(theirs);
    }
    ck_assert_int_gt(lost_by_cjson, 0); /* the test can fail: cJSON alone loses some */
}
END_TEST

START_TEST(test_exact_numbers_print_as_cjson_prints_them)
{
    /* A file whose numbers were already exact keeps its bytes, and the tree is left as it was. */
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "a", 3.125);
    cJSON_AddNumberToObject(root, "b", 100000.0 / 33.0);
    cJSON *arr = cJSON_AddArrayToObject(root, "c");
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(0.1));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(NAN));
    cJSON_AddItemToArray(arr, cJSON_CreateRaw("[1]"));
    char *ours = tb_json_print(root, true);
    ck_assert_ptr_nonnull(ours);
    ck_assert_ptr_nonnull(strstr(ours, "\"a\":\t3.125"));
    ck_assert_ptr_nonnull(strstr(ours, "3030.3030303030305"));
    ck_assert_ptr_nonnull(strstr(ours, "0.1,"));
    ck_assert_ptr_nonnull(strstr(ours, "null"));
    ck_assert_ptr_nonnull(strstr(ours, "[1]"));
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(root, "b")));
    ck_assert(cJSON_IsRaw(cJSON_GetArrayItem(arr, 2)));
    char *again = cJSON_Print(root);
    ck_assert_ptr_nonnull(strstr(again, "3030.30303030303")); /* cJSON's, untouched */
    free(again);
    free(ours);
    cJSON_Delete(root);
}
END_TEST

Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_the_100_km_rock_wavelength_survives);
    tcase_add_test(tc, test_every_double_comes_back_exactly);
    tcase_add_test(tc, test_exact_numbers_print_as_cjson_prints_them);
    suite_add_tcase(s, tc);
    return s;
}
