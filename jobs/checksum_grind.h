/* "checksum-grind": the distribution layer's own job kind, a real piece of deterministic CPU work
 * whose result the coordinator can verify for a fraction of what it cost (`terrain farm-check`).
 *
 * The work is a time-lock puzzle (Rivest, Shamir and Wagner 1996): each of `lanes` lanes starts
 * from x0 = a hash of (seed, lane) and squares it `work` times modulo the Mersenne prime p = 2^61 -
 * 1, a strictly sequential chain. Whoever knows p - 1 checks the answer with one fast
 * exponentiation, x0^(2^work mod (p - 1)) mod p, so verification is cheap and the work cannot be
 * skipped. Lanes are independent and run on the job's threads; the bytes do not depend on how many
 * threads ran them. After the lanes, `out_bytes` bytes of XXH3 stream keyed by the lanes' results
 * make the result as large as a test needs (chunked transfers, the result store).
 *
 * Typical sizes: 16 lanes, 10^5..10^7 squarings a lane (about 4 ns each), results of a few hundred
 * bytes to tens of MiB.
 */
#ifndef TB_CHECKSUM_GRIND_H
#define TB_CHECKSUM_GRIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "jobs/job.h"

#define TB_GRIND_KIND "checksum-grind"
#define TB_GRIND_SPEC_BYTES 40
#define TB_GRIND_MAX_LANES 256
#define TB_GRIND_MAX_OUT_BYTES ((uint64_t)256 << 20)
#define TB_GRIND_FLAG_FAIL 1u /* the job fails with TB_E_JOB: for tests of the failure rules */
/* The check also walks every lane's chain the slow way, TB_GRIND_SLOW_CHECK_TIMES times over: a
 * check that costs that many times the job's squarings, so a test can keep results in flight on
 * the coordinator's helper threads (tests/test_dispatch.c, the bound on held results). */
#define TB_GRIND_FLAG_SLOW_CHECK 2u
#define TB_GRIND_SLOW_CHECK_TIMES 64

typedef struct {
    uint64_t seed;
    uint32_t lanes;     /* 1..TB_GRIND_MAX_LANES */
    uint64_t work;      /* squarings per lane */
    uint64_t out_bytes; /* stream bytes after the lanes' results, 0..TB_GRIND_MAX_OUT_BYTES */
    uint32_t flags;     /* TB_GRIND_FLAG_* */
} tb_grind_spec_t;

extern const tb_job_kind_t tb_job_kind_checksum_grind;

/* Writes the canonical 40-byte spec into buf. */
void tb_grind_spec_encode(const tb_grind_spec_t *spec, unsigned char buf[TB_GRIND_SPEC_BYTES]);

/* Reads a canonical spec; TB_E_FORMAT for wrong size or magic, TB_E_INVALID for values out of
 * range. */
int tb_grind_spec_decode(const void *bytes, size_t n, tb_grind_spec_t *spec, tb_err_t *err);

/* The size of the result a spec produces. */
size_t tb_grind_result_bytes(const tb_grind_spec_t *spec);

/* Checks a result against its spec without redoing the squarings: header, every lane's value by the
 * trapdoor, and the stream. Returns 0, or -1 with TB_E_CHECKSUM naming the first wrong lane or
 * byte. */
int tb_grind_verify(const tb_grind_spec_t *spec, const void *result, size_t bytes, tb_err_t *err);

/* x0^(2^work) mod 2^61 - 1 the fast way (the trapdoor), for tests. */
uint64_t tb_grind_lane_answer(uint64_t seed, uint32_t lane, uint64_t work);

#endif
