/* "checksum-grind"; see checksum_grind.h. The spec and result layouts are little-endian:
 *
 *   spec   "CGR1", u32 lanes, u64 seed, u64 work, u64 out_bytes, u32 flags, u32 zero    (40 bytes)
 *   result "CGO1", u32 lanes, u64 seed, u64 work, u64 out_bytes                         (32 bytes)
 *          u64 final value of each lane
 *          out_bytes of stream: 8-byte block b is XXH3-64(b, seed = XXH3 of the lane values)
 */
#include "jobs/checksum_grind.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/hash.h"

#define S_P ((uint64_t)0x1FFFFFFFFFFFFFFFULL) /* 2^61 - 1, a Mersenne prime */
#define S_RESULT_HEADER 32
#define S_STREAM_TASK_BYTES ((size_t)1 << 20)
#define S_CHECK_EVERY ((uint64_t)1 << 16) /* squarings between progress and cancel checks */

static void s_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void s_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t s_get32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t s_get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* a * b mod 2^61 - 1 for a, b < p: the 122-bit product folds as hi * 2^61 + lo = hi + lo (mod p).
 */
static inline uint64_t s_mulmod_p(uint64_t a, uint64_t b)
{
    unsigned __int128 prod = (unsigned __int128)a * b;
    uint64_t r = ((uint64_t)prod & S_P) + (uint64_t)(prod >> 61);
    return r >= S_P ? r - S_P : r;
}

static uint64_t s_mulmod(uint64_t a, uint64_t b, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)a * b) % m);
}

static uint64_t s_powmod(uint64_t base, uint64_t e, uint64_t m)
{
    uint64_t r = 1 % m;
    base %= m;
    while (e) {
        if (e & 1)
            r = s_mulmod(r, base, m);
        base = s_mulmod(base, base, m);
        e >>= 1;
    }
    return r;
}

/* A lane's start, in [2, p - 1): never 0 or 1, whose squares would be fixed points. */
static uint64_t s_lane_start(uint64_t seed, uint32_t lane)
{
    return 2 + tb_hash(seed, TB_SALT_CHECKSUM_GRIND, (int64_t)lane, 0, 0) % (S_P - 3);
}

uint64_t tb_grind_lane_answer(uint64_t seed, uint32_t lane, uint64_t work)
{
    /* x^(p-1) = 1 for x != 0 (Fermat), so x^(2^work) = x^(2^work mod (p - 1)). */
    uint64_t e = s_powmod(2, work, S_P - 1);
    return s_powmod(s_lane_start(seed, lane), e, S_P);
}

void tb_grind_spec_encode(const tb_grind_spec_t *spec, unsigned char buf[TB_GRIND_SPEC_BYTES])
{
    memcpy(buf, "CGR1", 4);
    s_put32(buf + 4, spec->lanes);
    s_put64(buf + 8, spec->seed);
    s_put64(buf + 16, spec->work);
    s_put64(buf + 24, spec->out_bytes);
    s_put32(buf + 32, spec->flags);
    s_put32(buf + 36, 0);
}

int tb_grind_spec_decode(const void *bytes, size_t n, tb_grind_spec_t *spec, tb_err_t *err)
{
    const unsigned char *b = bytes;
    memset(spec, 0, sizeof *spec);
    if (n != TB_GRIND_SPEC_BYTES || memcmp(b, "CGR1", 4) != 0)
        return tb_err_set(err, TB_E_FORMAT, "%s spec: expected %d bytes starting \"CGR1\", got %zu",
                          TB_GRIND_KIND, TB_GRIND_SPEC_BYTES, n);
    spec->lanes = s_get32(b + 4);
    spec->seed = s_get64(b + 8);
    spec->work = s_get64(b + 16);
    spec->out_bytes = s_get64(b + 24);
    spec->flags = s_get32(b + 32);
    if (spec->lanes < 1 || spec->lanes > TB_GRIND_MAX_LANES)
        return tb_err_set(err, TB_E_INVALID, "%s spec: %u lanes, expected 1..%d", TB_GRIND_KIND,
                          spec->lanes, TB_GRIND_MAX_LANES);
    if (spec->out_bytes > TB_GRIND_MAX_OUT_BYTES)
        return tb_err_set(err, TB_E_INVALID, "%s spec: out_bytes %llu, at most %llu", TB_GRIND_KIND,
                          (unsigned long long)spec->out_bytes,
                          (unsigned long long)TB_GRIND_MAX_OUT_BYTES);
    if ((spec->flags & ~(TB_GRIND_FLAG_FAIL | TB_GRIND_FLAG_SLOW_CHECK)) || s_get32(b + 36) != 0)
        return tb_err_set(err, TB_E_INVALID, "%s spec: unknown flags %#x", TB_GRIND_KIND,
                          spec->flags);
    return 0;
}

size_t tb_grind_result_bytes(const tb_grind_spec_t *spec)
{
    return S_RESULT_HEADER + 8 * (size_t)spec->lanes + (size_t)spec->out_bytes;
}

typedef struct {
    const tb_grind_spec_t *spec;
    tb_job_ctx_t *ctx;
    unsigned char *out;
    uint64_t digest;           /* seed of the stream */
    atomic_uint_fast64_t done; /* squarings finished, over all lanes */
    atomic_bool stop;
} s_run_t;

static void s_lane_task(void *arg, size_t lane, int thread)
{
    (void)thread;
    s_run_t *run = arg;
    uint64_t x = s_lane_start(run->spec->seed, (uint32_t)lane);
    uint64_t total = run->spec->work * run->spec->lanes;
    for (uint64_t left = run->spec->work; left > 0;) {
        if (atomic_load(&run->stop))
            return;
        uint64_t n = left < S_CHECK_EVERY ? left : S_CHECK_EVERY;
        for (uint64_t k = 0; k < n; k++)
            x = s_mulmod_p(x, x);
        left -= n;
        uint64_t done = atomic_fetch_add(&run->done, n) + n;
        if (tb_job_progress(run->ctx, (double)done / (double)total, "squaring"))
            atomic_store(&run->stop, true);
    }
    s_put64(run->out + S_RESULT_HEADER + 8 * lane, x);
}

/* Fills stream[0..n) starting at byte `offset` of the stream (a multiple of 8). */
static void s_stream(unsigned char *stream, size_t n, uint64_t offset, uint64_t digest)
{
    for (size_t i = 0; i < n; i += 8) {
        unsigned char b[8], h[8];
        s_put64(b, (offset + i) / 8);
        s_put64(h, XXH3_64bits_withSeed(b, 8, digest));
        memcpy(stream + i, h, n - i < 8 ? n - i : 8);
    }
}

static void s_stream_task(void *arg, size_t task, int thread)
{
    (void)thread;
    s_run_t *run = arg;
    size_t lanes_end = S_RESULT_HEADER + 8 * (size_t)run->spec->lanes;
    size_t start = task * S_STREAM_TASK_BYTES, total = (size_t)run->spec->out_bytes;
    size_t n = total - start < S_STREAM_TASK_BYTES ? total - start : S_STREAM_TASK_BYTES;
    s_stream(run->out + lanes_end + start, n, start, run->digest);
}

static int s_grind_run(const void *spec_bytes, size_t n, tb_job_ctx_t *ctx, tb_job_output_t *out,
                       tb_err_t *err)
{
    tb_grind_spec_t spec;
    if (tb_grind_spec_decode(spec_bytes, n, &spec, err) != 0)
        return -1;
    if (spec.flags & TB_GRIND_FLAG_FAIL)
        return tb_err_set(err, TB_E_JOB, "%s seed %llu: the spec asks this job to fail",
                          TB_GRIND_KIND, (unsigned long long)spec.seed);
    size_t bytes = tb_grind_result_bytes(&spec);
    unsigned char *buf = tb_malloc(bytes, "a checksum-grind result", err);
    if (!buf)
        return -1;
    memcpy(buf, "CGO1", 4);
    s_put32(buf + 4, spec.lanes);
    s_put64(buf + 8, spec.seed);
    s_put64(buf + 16, spec.work);
    s_put64(buf + 24, spec.out_bytes);
    s_run_t run = {.spec = &spec, .ctx = ctx, .out = buf};
    atomic_init(&run.done, 0);
    atomic_init(&run.stop, false);
    tb_pool_run(ctx->pool, spec.lanes, s_lane_task, &run);
    if (atomic_load(&run.stop)) {
        free(buf);
        return tb_err_set(err, TB_E_INTERRUPTED, "%s seed %llu: cancelled", TB_GRIND_KIND,
                          (unsigned long long)spec.seed);
    }
    run.digest = XXH3_64bits(buf + S_RESULT_HEADER, 8 * (size_t)spec.lanes);
    size_t tasks = ((size_t)spec.out_bytes + S_STREAM_TASK_BYTES - 1) / S_STREAM_TASK_BYTES;
    tb_pool_run(ctx->pool, tasks, s_stream_task, &run);
    tb_job_progress(ctx, 1.0, "done");
    out->data = buf;
    out->bytes = bytes;
    return 0;
}

int tb_grind_verify(const tb_grind_spec_t *spec, const void *result, size_t bytes, tb_err_t *err)
{
    const unsigned char *r = result;
    size_t want = tb_grind_result_bytes(spec);
    if (bytes != want)
        return tb_err_set(err, TB_E_CHECKSUM, "%s result: %zu bytes, expected %zu", TB_GRIND_KIND,
                          bytes, want);
    if (memcmp(r, "CGO1", 4) != 0 || s_get32(r + 4) != spec->lanes ||
        s_get64(r + 8) != spec->seed || s_get64(r + 16) != spec->work ||
        s_get64(r + 24) != spec->out_bytes)
        return tb_err_set(err, TB_E_CHECKSUM, "%s result: header does not match the spec",
                          TB_GRIND_KIND);
    for (uint32_t lane = 0; lane < spec->lanes; lane++) {
        uint64_t got = s_get64(r + S_RESULT_HEADER + 8 * (size_t)lane);
        uint64_t expect = tb_grind_lane_answer(spec->seed, lane, spec->work);
        if (got != expect)
            return tb_err_set(err, TB_E_CHECKSUM,
                              "%s seed %llu lane %u: %016llx, the trapdoor says %016llx",
                              TB_GRIND_KIND, (unsigned long long)spec->seed, lane,
                              (unsigned long long)got, (unsigned long long)expect);
        for (int t = 0; (spec->flags & TB_GRIND_FLAG_SLOW_CHECK) && t < TB_GRIND_SLOW_CHECK_TIMES;
             t++) {
            uint64_t x = s_lane_start(spec->seed, lane);
            for (uint64_t k = 0; k < spec->work; k++)
                x = s_mulmod_p(x, x);
            if (x != expect)
                return tb_err_set(err, TB_E_INTERNAL,
                                  "%s seed %llu lane %u: the chain and the "
                                  "trapdoor disagree",
                                  TB_GRIND_KIND, (unsigned long long)spec->seed, lane);
        }
    }
    size_t lanes_end = S_RESULT_HEADER + 8 * (size_t)spec->lanes;
    uint64_t digest = XXH3_64bits(r + S_RESULT_HEADER, 8 * (size_t)spec->lanes);
    unsigned char block[4096];
    for (size_t off = 0; off < spec->out_bytes; off += sizeof block) {
        size_t n = spec->out_bytes - off < sizeof block ? spec->out_bytes - off : sizeof block;
        s_stream(block, n, off, digest);
        if (memcmp(block, r + lanes_end + off, n) != 0)
            return tb_err_set(err, TB_E_CHECKSUM, "%s seed %llu: stream differs near byte %zu",
                              TB_GRIND_KIND, (unsigned long long)spec->seed, off);
    }
    return 0;
}

static size_t s_grind_bound(const void *spec_bytes, size_t n)
{
    tb_grind_spec_t spec;
    tb_err_t err;
    return tb_grind_spec_decode(spec_bytes, n, &spec, &err) == 0 ? tb_grind_result_bytes(&spec) : 0;
}

static int s_grind_check(const void *spec_bytes, size_t n, const void *result, size_t bytes,
                         tb_err_t *err)
{
    tb_grind_spec_t spec;
    if (tb_grind_spec_decode(spec_bytes, n, &spec, err) != 0)
        return -1;
    return tb_grind_verify(&spec, result, bytes, err);
}

const tb_job_kind_t tb_job_kind_checksum_grind = {
    .name = TB_GRIND_KIND,
    .run = s_grind_run,
    .max_spec_bytes = TB_GRIND_SPEC_BYTES,
    .max_result_bytes = S_RESULT_HEADER + 8 * TB_GRIND_MAX_LANES + TB_GRIND_MAX_OUT_BYTES,
    .summary = "deterministic squarings mod 2^61-1 with a cheap trapdoor check (farm-check)",
    .result_bound = s_grind_bound,
    .check_result = s_grind_check,
};
