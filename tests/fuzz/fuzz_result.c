/* libFuzzer target for what the coordinator does with a result before it stores or uses it
 * (CC=clang, -DTB_FUZZ=ON; docs/distribution.md, "Verifying results"): the input is a u32
 * little-endian spec length, that many spec bytes, then the result bytes. Each job kind's bound and
 * check run on them, and the region, coast and tile result decoders on the result. Nothing may
 * crash, leak or read out of bounds, and whatever a check accepts must decode and answer the spec:
 * a region, coast or tile result that passes echoes the XXH3 of the spec, and no accepted result
 * is larger than its spec's bound. Seeds: a region, a coast and a tile (spec, result) pair.
 *
 *   build-fuzz/fuzz_result -max_total_time=60 tests/fuzz/corpus-result tests/fuzz/seeds/result */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "jobs/coast/coast.h"
#include "jobs/detail/tile.h"
#include "jobs/job.h"
#include "jobs/region.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decodes result as a result of kind `name` and gives the spec hash it echoes: 0, -1 when it does
 * not decode, 1 when the kind echoes none (checksum-grind: its trapdoor is its check). */
static int s_echo(const char *name, const uint8_t *result, size_t bytes, uint64_t *echo)
{
    tb_err_t err;
    if (strcmp(name, "region") == 0) {
        tb_region_result_t r;
        if (tb_region_result_decode(result, bytes, &r, &err) != 0)
            return -1;
        *echo = r.spec_xxh3;
        tb_region_result_free(&r);
    } else if (strcmp(name, "coast") == 0) {
        tb_coast_result_t c;
        if (tb_coast_result_decode(result, bytes, &c, &err) != 0)
            return -1;
        *echo = c.spec_xxh3;
        tb_coast_result_free(&c);
    } else if (strcmp(name, "tile") == 0) {
        tb_tile_result_t t;
        if (tb_tile_result_decode(result, bytes, &t, &err) != 0)
            return -1;
        *echo = t.spec_xxh3;
        tb_tile_result_free(&t);
    } else {
        return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    size_t spec_bytes =
        (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
    if (spec_bytes > size - 4)
        spec_bytes = size - 4;
    const uint8_t *spec = data + 4, *result = spec + spec_bytes;
    size_t result_bytes = size - 4 - spec_bytes;
    tb_err_t err;
    for (size_t k = 0; k < tb_job_kind_count(); k++) {
        const tb_job_kind_t *kind = tb_job_kind_at(k);
        size_t bound = tb_job_result_bound(kind, spec, spec_bytes);
        if (bound > kind->max_result_bytes)
            abort();
        if (tb_job_check_result(kind, spec, spec_bytes, result, result_bytes, &err) != 0)
            continue;
        if (result_bytes > bound)
            abort();
        /* an accepted result of an echoing kind decodes and echoes this spec's hash */
        uint64_t echo = 0;
        int rc = s_echo(kind->name, result, result_bytes, &echo);
        if (rc < 0 || (rc == 0 && echo != XXH3_64bits(spec, spec_bytes)))
            abort();
    }
    /* and every decoder on the result bytes, whatever the checks said */
    uint64_t echo;
    for (size_t k = 0; k < tb_job_kind_count(); k++)
        (void)s_echo(tb_job_kind_at(k)->name, result, result_bytes, &echo);
    return 0;
}
