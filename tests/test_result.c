/* Results too large to hold (coordinator/farm/result.h, cache.h's sink and streaming lookup) and
 * the engine's helper threads and hand-over queue (tasks.h, delivery.h): the streamed decoder
 * gives exactly the in-memory decoder's bytes and refuses every damage the in-memory one refuses; a
 * mapping given back with tb_result_done_with leaves the resident set; a stored entry written
 * chunk by chunk reads back; tasks come back; the queue counts what the caller holds. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/blob.h"
#include "common/fs.h"
#include "coordinator/farm/cache.h"
#include "coordinator/farm/delivery.h"
#include "coordinator/farm/jobwork.h"
#include "coordinator/farm/result.h"
#include "coordinator/farm/tasks.h"
#include "jobs/job.h"
#include "support/tb_test.h"

/* Bytes that compress (runs) but not to nothing (a hash stream between them). */
static unsigned char *s_data(size_t n, uint64_t seed)
{
    unsigned char *d = malloc(n);
    for (size_t i = 0; i < n; i++)
        d[i] = (i / 4096) % 2 ? (unsigned char)(XXH64(&i, sizeof i, seed) & 0xff)
                              : (unsigned char)(i / 4096);
    return d;
}

/* A file holding `pad` bytes, then the blob of data[0..n). */
static int s_blob_file(const char *dir, const unsigned char *data, size_t n, size_t pad,
                       size_t *blob_bytes, char *path, size_t path_n)
{
    void *blob;
    tb_err_t err;
    ck_assert_int_eq(tb_blob_encode(data, n, 1, &blob, blob_bytes, &err), 0);
    snprintf(path, path_n, "%s/blob.bin", dir);
    FILE *fp = fopen(path, "wb");
    for (size_t i = 0; i < pad; i++)
        fputc('#', fp);
    fwrite(blob, 1, *blob_bytes, fp);
    fclose(fp);
    free(blob);
    return open(path, O_RDWR);
}

START_TEST(test_streamed_decode_equals_memory_decode)
{
    const char *dir = tb_test_tmpdir("result-stream");
    size_t n = (size_t)3 << 20, blob_bytes;
    unsigned char *data = s_data(n, 1);
    char path[4300];
    int fd = s_blob_file(dir, data, n, 20, &blob_bytes, path, sizeof path);
    tb_err_t err;
    tb_result_t *mem = NULL, *map = NULL;
    uint64_t h1 = 0, h2 = 0;
    ck_assert_int_eq(tb_result_decode_fd(fd, 20, blob_bytes, n, n, dir, &mem, &h1, &err), 0);
    ck_assert_msg(tb_result_decode_fd(fd, 20, blob_bytes, n, 1 << 20, dir, &map, &h2, &err) == 0,
                  "%s", err.msg);
    ck_assert(!tb_result_mapped(mem));
    ck_assert(tb_result_mapped(map));
    ck_assert_uint_eq(tb_result_bytes(map), n);
    ck_assert(memcmp(tb_result_data(map), data, n) == 0);
    ck_assert(memcmp(tb_result_data(mem), data, n) == 0);
    ck_assert_uint_eq(h1, XXH3_64bits(data, n));
    ck_assert_uint_eq(h2, h1);
    /* the decoded file has no name: nothing but the blob is left in the directory */
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) = 1", dir);
    ck_assert_int_eq(system(cmd), 0);
    /* done_with a range, or all of it, keeps the bytes readable (from the file) */
    tb_result_done_with(map, 12345, 1 << 20);
    tb_result_done_with(map, 0, (size_t)-1);
    ck_assert(memcmp(tb_result_data(map), data, n) == 0);
    tb_result_destroy(&map);
    tb_result_destroy(&mem);
    ck_assert_ptr_null(map);
    /* what the decoder refuses, mapped or not: more than allowed, a lying checksum, a damaged
     * frame, a truncated one */
    for (int large = 0; large < 2; large++) {
        size_t lb = large ? 1 << 20 : n;
        ck_assert_int_eq(tb_result_decode_fd(fd, 20, blob_bytes, n - 1, lb, dir, &map, NULL, &err),
                         -1);
        ck_assert_int_eq(err.code, TB_E_INVALID);
        unsigned char b;
        ck_assert_int_eq(pread(fd, &b, 1, 20 + 16), 1);
        b ^= 1;
        ck_assert_int_eq(pwrite(fd, &b, 1, 20 + 16), 1);
        ck_assert_int_eq(tb_result_decode_fd(fd, 20, blob_bytes, n, lb, dir, &map, NULL, &err), -1);
        ck_assert_int_eq(err.code, TB_E_CHECKSUM);
        b ^= 1;
        ck_assert_int_eq(pwrite(fd, &b, 1, 20 + 16), 1);
        off_t mid = 20 + (off_t)blob_bytes / 2;
        ck_assert_int_eq(pread(fd, &b, 1, mid), 1);
        b ^= 0x5a;
        ck_assert_int_eq(pwrite(fd, &b, 1, mid), 1);
        ck_assert_int_eq(tb_result_decode_fd(fd, 20, blob_bytes, n, lb, dir, &map, NULL, &err), -1);
        ck_assert(err.code == TB_E_FORMAT || err.code == TB_E_CHECKSUM);
        b ^= 0x5a;
        ck_assert_int_eq(pwrite(fd, &b, 1, mid), 1);
        ck_assert_int_eq(
            tb_result_decode_fd(fd, 20, blob_bytes - 100, n, lb, dir, &map, NULL, &err), -1);
        ck_assert_int_eq(err.code, TB_E_FORMAT);
        ck_assert_ptr_null(map);
    }
    /* the controls: undamaged again, it decodes */
    ck_assert_int_eq(tb_result_decode_fd(fd, 20, blob_bytes, n, 1 << 20, dir, &map, NULL, &err), 0);
    tb_result_destroy(&map);
    close(fd);
    free(data);
}
END_TEST

static long s_resident_kib(void)
{
    FILE *fp = fopen("/proc/self/statm", "r");
    long size = 0, pages = 0;
    if (fp) {
        if (fscanf(fp, "%ld %ld", &size, &pages) != 2)
            pages = 0;
        fclose(fp);
    }
    return pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A consumer that reads a mapped result in bands and gives each band back holds about one band
 * (the point of tb_result_done_with: a 2.7 GB region read through a mapping must not put 2.7 GB in
 * the coordinator's resident set). The negative control: the same reading without giving back. */
START_TEST(test_done_with_leaves_the_resident_set)
{
    const char *dir = tb_test_tmpdir("result-rss");
    size_t n = (size_t)48 << 20, band = (size_t)4 << 20;
    char path[4300];
    snprintf(path, sizeof path, "%s/raw", dir);
    unsigned char *data = s_data(n, 2);
    tb_err_t err;
    ck_assert_int_eq(tb_fs_write_atomic(path, data, n, &err), 0);
    free(data);
    for (int give_back = 1; give_back >= 0; give_back--) {
        int fd = open(path, O_RDONLY);
        tb_result_t *r = tb_result_map_fd(fd, n, &err);
        ck_assert_ptr_nonnull(r);
        long before = s_resident_kib(), peak = before;
        const unsigned char *p = tb_result_data(r);
        uint64_t sum = 0;
        for (size_t off = 0; off < n; off += band) {
            for (size_t i = off; i < off + band; i += 4096)
                sum += p[i];
            long now = s_resident_kib();
            peak = now > peak ? now : peak;
            if (give_back)
                tb_result_done_with(r, off, band);
        }
        ck_assert_uint_ne(sum, 0);
        long grew_mib = (peak - before) / 1024;
        if (give_back)
            ck_assert_msg(grew_mib <= 12, "reading in bands and giving them back grew by %ld MiB",
                          grew_mib);
        else
            ck_assert_msg(grew_mib >= 40, "the control grew by only %ld MiB: the measure is blind",
                          grew_mib);
        tb_result_destroy(&r);
    }
}
END_TEST

/* A kind's check that reads the whole result in 4 MiB bands, saying after each that it is done
 * with it (tb_job_result_done), and records the resident set's growth at its peak. */
static long s_check_grew_kib;
static int s_band_check(const void *spec, size_t spec_bytes, const void *result, size_t bytes,
                        tb_err_t *err)
{
    (void)spec;
    (void)spec_bytes;
    (void)err;
    const unsigned char *p = result;
    long before = s_resident_kib(), peak = before;
    uint64_t sum = 0;
    for (size_t off = 0; off < bytes; off += (size_t)4 << 20) {
        size_t end = off + ((size_t)4 << 20) < bytes ? off + ((size_t)4 << 20) : bytes;
        for (size_t i = off; i < end; i += 4096)
            sum += p[i];
        long now = s_resident_kib();
        peak = now > peak ? now : peak;
        tb_job_result_done(p + off, end - off);
    }
    s_check_grew_kib = peak - before;
    return sum ? 0 : -1;
}

/* The engine's check of a mapped result (tb_jobwork_check) lets what the kind's check has read
 * leave memory as it goes (jobs/job.h, tb_job_result_done), so two helper threads checking two
 * results of gigabytes do not hold both. The negative control: the same check called without the
 * engine's hook (tb_job_check_result) keeps every page it read; and a result on the heap is left
 * alone (its bytes intact after the check). */
START_TEST(test_check_gives_back_what_it_read)
{
    const tb_job_kind_t kind = {
        .name = "band-check", .max_result_bytes = (size_t)1 << 30, .check_result = s_band_check};
    const char *dir = tb_test_tmpdir("result-check-rss");
    size_t n = (size_t)48 << 20;
    char path[4300];
    snprintf(path, sizeof path, "%s/raw", dir);
    unsigned char *data = s_data(n, 3);
    tb_err_t err;
    ck_assert_int_eq(tb_fs_write_atomic(path, data, n, &err), 0);
    for (int hooked = 1; hooked >= 0; hooked--) {
        int fd = open(path, O_RDONLY);
        tb_result_t *r = tb_result_map_fd(fd, n, &err);
        ck_assert_ptr_nonnull(r);
        int rc = hooked ? tb_jobwork_check(&kind, "", 0, r, &err)
                        : tb_job_check_result(&kind, "", 0, tb_result_data(r), n, &err);
        ck_assert_int_eq(rc, 0);
        long grew_mib = s_check_grew_kib / 1024;
        if (hooked)
            ck_assert_msg(grew_mib <= 12, "the engine's check of 48 MiB in bands grew by %ld MiB",
                          grew_mib);
        else
            ck_assert_msg(grew_mib >= 40, "the control grew by only %ld MiB: the measure is blind",
                          grew_mib);
        ck_assert(memcmp(tb_result_data(r), data, n) == 0); /* back from the file */
        tb_result_destroy(&r);
    }
    /* on the heap: the hook is not set, nothing is dropped */
    tb_result_t *mem = NULL;
    size_t blob_bytes;
    char bpath[4300];
    int fd = s_blob_file(dir, data, (size_t)8 << 20, 0, &blob_bytes, bpath, sizeof bpath);
    uint64_t h = 0;
    ck_assert_int_eq(tb_result_decode_fd(fd, 0, blob_bytes, (size_t)8 << 20, (size_t)8 << 20, dir,
                                         &mem, &h, &err),
                     0);
    close(fd);
    ck_assert(!tb_result_mapped(mem));
    ck_assert_int_eq(tb_jobwork_check(&kind, "", 0, mem, &err), 0);
    ck_assert(memcmp(tb_result_data(mem), data, (size_t)8 << 20) == 0);
    tb_result_destroy(&mem);
    free(data);
}
END_TEST

START_TEST(test_store_sink_and_streamed_lookup)
{
    const char *dir = tb_test_tmpdir("result-store");
    tb_err_t err;
    tb_cache_t *c = tb_cache_open(dir, &err);
    tb_cache_key_t key;
    tb_cache_key_make(&key, "b", "k", "spec", 4, NULL, 0);
    size_t n = (size_t)2 << 20;
    unsigned char *data = s_data(n, 3);
    void *blob;
    size_t blob_bytes;
    ck_assert_int_eq(tb_blob_encode(data, n, 1, &blob, &blob_bytes, &err), 0);
    /* written chunk by chunk as a large result arrives */
    tb_cache_sink_t sink;
    ck_assert_int_eq(tb_cache_sink_open(&sink, tb_cache_dir(c), &key, &err), 0);
    for (size_t off = 0; off < blob_bytes; off += 65536) {
        size_t k = blob_bytes - off < 65536 ? blob_bytes - off : 65536;
        ck_assert_int_eq(tb_cache_sink_write(&sink, (char *)blob + off, k, &err), 0);
    }
    ck_assert_int_eq(tb_cache_sink_commit(&sink, &err), 0);
    /* ... reads back as tb_cache_get reads any entry, and streamed into a mapping */
    void *got;
    size_t got_n;
    ck_assert_int_eq(tb_cache_get(c, &key, n, &got, &got_n, &err), 1);
    ck_assert(got_n == n && memcmp(got, data, n) == 0);
    free(got);
    tb_result_t *r;
    uint64_t h;
    ck_assert_int_eq(tb_cache_get_result(c, &key, n, 1 << 20, &r, &h, &err), 1);
    ck_assert(tb_result_mapped(r) && memcmp(tb_result_data(r), data, n) == 0);
    ck_assert_uint_eq(h, XXH3_64bits(data, n));
    tb_result_destroy(&r);
    /* removed: not found; a missing one is not an error */
    ck_assert_int_eq(tb_cache_remove(c, &key, &err), 0);
    ck_assert_int_eq(tb_cache_get_result(c, &key, n, 1 << 20, &r, &h, &err), 0);
    ck_assert_int_eq(tb_cache_remove(c, &key, &err), 0);
    /* an aborted sink leaves nothing */
    ck_assert_int_eq(tb_cache_sink_open(&sink, tb_cache_dir(c), &key, &err), 0);
    ck_assert_int_eq(tb_cache_sink_write(&sink, blob, 100, &err), 0);
    tb_cache_sink_abort(&sink);
    tb_cache_sink_abort(&sink);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(blob);
    free(data);
    tb_cache_destroy(&c);
}
END_TEST

typedef struct {
    tb_task_t task;
    int value, squared;
} s_sq_t;

static void s_square(tb_task_t *t)
{
    s_sq_t *s = (s_sq_t *)t;
    s->squared = s->value * s->value;
}

static int s_discarded;
static void s_discard(tb_task_t *t)
{
    s_discarded++;
    free(t);
}

START_TEST(test_tasks_come_back)
{
    tb_err_t err;
    tb_tasks_t *tasks = tb_tasks_new(3, &err);
    ck_assert_ptr_nonnull(tasks);
    int n = 50, sum = 0, got = 0;
    for (int i = 0; i < n; i++) {
        s_sq_t *s = calloc(1, sizeof *s);
        s->task.run = s_square;
        s->value = i;
        tb_tasks_post(tasks, &s->task);
    }
    while (got < n) {
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(tb_tasks_wake_fd(tasks), &fds);
        struct timeval tv = {5, 0};
        ck_assert_int_gt(select(tb_tasks_wake_fd(tasks) + 1, &fds, NULL, NULL, &tv), 0);
        tb_task_t *t;
        while ((t = tb_tasks_take(tasks)) != NULL) {
            sum += ((s_sq_t *)t)->squared;
            got++;
            free(t);
        }
    }
    ck_assert_int_eq(sum, (n - 1) * n * (2 * n - 1) / 6);
    ck_assert_int_eq(tb_tasks_pending(tasks), 0);
    /* destroy runs what is queued and hands what was not taken to discard */
    for (int i = 0; i < 5; i++) {
        s_sq_t *s = calloc(1, sizeof *s);
        s->task.run = s_square;
        tb_tasks_post(tasks, &s->task);
    }
    s_discarded = 0;
    tb_tasks_destroy(&tasks, s_discard);
    ck_assert_int_eq(s_discarded, 5);
    ck_assert_ptr_null(tasks);
}
END_TEST

START_TEST(test_delivery_counts_what_the_caller_holds)
{
    tb_err_t err;
    tb_delivery_t *q = tb_delivery_new(NULL, NULL, &err);
    for (size_t i = 0; i < 3; i++) {
        void *d = malloc(100);
        tb_delivery_push(q, i, tb_result_from_memory(&d, 100, &err));
    }
    size_t count, bytes;
    tb_delivery_outstanding(q, &count, &bytes);
    ck_assert(count == 3 && bytes == 300);
    size_t index;
    tb_result_t *r;
    int rc;
    ck_assert_int_eq(tb_delivery_wait(q, 1, &index, &r, &rc, &err), TB_DELIVERY_ITEM);
    ck_assert_uint_eq(index, 0);
    tb_delivery_outstanding(q, &count, &bytes);
    ck_assert_uint_eq(count, 3); /* the caller still holds it */
    tb_result_destroy(&r);
    tb_delivery_finished(q, 100);
    tb_delivery_outstanding(q, &count, &bytes);
    ck_assert(count == 2 && bytes == 200);
    /* a finished batch delivers what is queued first, then says it is over */
    tb_delivery_close(q, 0, NULL);
    ck_assert_int_eq(tb_delivery_wait(q, 1, &index, &r, &rc, &err), TB_DELIVERY_ITEM);
    tb_result_destroy(&r);
    tb_delivery_finished(q, 100);
    ck_assert_int_eq(tb_delivery_wait(q, 1, &index, &r, &rc, &err), TB_DELIVERY_ITEM);
    tb_result_destroy(&r);
    tb_delivery_finished(q, 100);
    ck_assert_int_eq(tb_delivery_wait(q, 1, &index, &r, &rc, &err), TB_DELIVERY_CLOSED);
    ck_assert_int_eq(rc, 0);
    /* a failed one drops what is queued */
    tb_delivery_reset(q);
    void *d = malloc(10);
    tb_delivery_push(q, 5, tb_result_from_memory(&d, 10, &err));
    tb_err_set(&err, TB_E_JOB, "it failed");
    tb_delivery_close(q, -1, &err);
    tb_err_t got;
    ck_assert_int_eq(tb_delivery_wait(q, 1, &index, &r, &rc, &got), TB_DELIVERY_CLOSED);
    ck_assert_int_eq(rc, -1);
    ck_assert_str_eq(got.msg, "it failed");
    /* nothing to do: a tick */
    tb_delivery_reset(q);
    ck_assert_int_eq(tb_delivery_wait(q, 0.05, &index, &r, &rc, &got), TB_DELIVERY_TICK);
    tb_delivery_destroy(&q);
}
END_TEST

Suite *result_suite(void)
{
    Suite *s = suite_create("result");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_streamed_decode_equals_memory_decode);
    tcase_add_test(tc, test_done_with_leaves_the_resident_set);
    tcase_add_test(tc, test_check_gives_back_what_it_read);
    tcase_add_test(tc, test_store_sink_and_streamed_lookup);
    tcase_add_test(tc, test_tasks_come_back);
    tcase_add_test(tc, test_delivery_counts_what_the_caller_holds);
    suite_add_tcase(s, tc);
    return s;
}
