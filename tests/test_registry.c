/* The dispatch engine's worker and lease registry (coordinator/farm/registry.h) on its own:
 * identities by connection, lookups of live workers only, the blocklist of connections, names
 * counted once, and the warning rate limit. */
#include <check.h>
#include <cJSON.h>
#include <string.h>

#include "coordinator/farm/registry.h"

START_TEST(test_identity_is_the_connection)
{
    char a[TB_WORKER_NAME_MAX], b[TB_WORKER_NAME_MAX], k[TB_WORKER_NAME_MAX];
    tb_registry_conn_id("id-1", 4, NULL, a, sizeof a);
    tb_registry_conn_id("id-2", 4, NULL, b, sizeof b);
    tb_registry_conn_id("id-1", 4, "Z85KEY", k, sizeof k);
    ck_assert_str_ne(a, b);
    ck_assert(strncmp(a, "conn:", 5) == 0 && strlen(a) == 21);
    ck_assert_str_eq(k, "key:Z85KEY");
}
END_TEST

START_TEST(test_lookups_see_live_workers_only)
{
    tb_err_t err;
    tb_registry_t *r = tb_registry_new(&err);
    char c1[TB_WORKER_NAME_MAX], c2[TB_WORKER_NAME_MAX];
    tb_registry_conn_id("r1", 2, NULL, c1, sizeof c1);
    tb_registry_conn_id("r2", 2, NULL, c2, sizeof c2);
    tb_worker_t *w1 = tb_registry_add(r, "r1", 2, c1, "alpha", 4, 1 << 30, false);
    tb_worker_t *w2 = tb_registry_add(r, "r2", 2, c2, "beta", 2, 1 << 30, true);
    ck_assert_ptr_nonnull(w1);
    ck_assert_int_eq(w2->index, 1);
    ck_assert_int_eq(w1->job, -1);
    ck_assert_ptr_eq(tb_registry_by_id(r, "r2", 2), w2);
    ck_assert_ptr_eq(tb_registry_by_name(r, "alpha"), w1);
    ck_assert_uint_eq(tb_registry_alive(r), 2);
    w1->alive = false;
    ck_assert_ptr_null(tb_registry_by_id(r, "r1", 2));
    ck_assert_ptr_null(tb_registry_by_name(r, "alpha"));
    ck_assert_uint_eq(tb_registry_alive(r), 1);
    /* the same name again (a reconnection) is one name seen, and the same connection one number */
    tb_worker_t *w3 = tb_registry_add(r, "r1", 2, c1, "alpha", 4, 1 << 30, false);
    ck_assert_uint_eq(tb_registry_names_seen(r), 2);
    ck_assert_uint_eq(w3->conn_no, w1->conn_no);
    ck_assert_uint_ne(w2->conn_no, w1->conn_no);
    ck_assert_ptr_eq(tb_registry_at(r, 0), w1); /* entries stay where they were */
    ck_assert_str_eq(tb_registry_name(r, 2), "alpha");
    ck_assert_str_eq(tb_registry_name(r, 7), "?");
    /* a routing id longer than the protocol allows is refused */
    unsigned char big[300] = {0};
    ck_assert_ptr_null(tb_registry_add(r, big, sizeof big, c1, "x", 1, 0, false));
    cJSON *j = tb_registry_json(r);
    ck_assert_int_eq(cJSON_GetArraySize(j), 3);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "alive")));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 1), "local")));
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 1), "trust")->valuestring, "new");
    cJSON_Delete(j);
    tb_registry_destroy(&r);
    ck_assert_ptr_null(r);
}
END_TEST

START_TEST(test_blocklist_holds_connections)
{
    tb_err_t err;
    tb_registry_t *r = tb_registry_new(&err);
    ck_assert(!tb_registry_blocklisted(r, "conn:1"));
    tb_registry_blocklist(r, "conn:1");
    tb_registry_blocklist(r, "conn:1");
    ck_assert(tb_registry_blocklisted(r, "conn:1"));
    ck_assert(!tb_registry_blocklisted(r, "conn:2"));
    tb_registry_destroy(&r);
}
END_TEST

START_TEST(test_warnings_are_rate_limited)
{
    tb_warn_limit_t l = {0};
    long skipped;
    int shown = 0;
    for (int i = 0; i < 50; i++)
        shown += tb_warn_ok(&l, &skipped);
    ck_assert_int_eq(shown, 5);
    ck_assert_int_eq(l.suppressed, 45);
    /* a new window: the next one shown says how many were not */
    l.window_start_s -= 11;
    ck_assert(tb_warn_ok(&l, &skipped));
    ck_assert_int_eq(skipped, 45);
    ck_assert_int_eq(l.suppressed, 0);
}
END_TEST

Suite *registry_suite(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_identity_is_the_connection);
    tcase_add_test(tc, test_lookups_see_live_workers_only);
    tcase_add_test(tc, test_blocklist_holds_connections);
    tcase_add_test(tc, test_warnings_are_rate_limited);
    suite_add_tcase(s, tc);
    return s;
}
