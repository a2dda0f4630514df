/* libFuzzer target for what the coordinator does with a result before it stores or uses it
 * (CC=clang, -DTB_FUZZ=ON; docs/distribution.md, "Verifying results"): the input is a u32
 * little-endian spec length, that many spec bytes, then the result bytes. Each job kind's bound and
 * check run on them, and the region result decoder on the result. Nothing may crash, leak or read
 * out of bounds, and whatever a check accepts must decode and answer the spec: a region result that
 * passes echoes the XXH3 of the spec, and no accepted result is larger than its spec's bound.
 *
 *   build-fuzz/fuzz_result -max_total_time=60 tests/fuzz/corpus-result tests/fuzz/seeds/result */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "jobs/job.h"
#include "jobs/region.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
        if (strcmp(kind->name, "region") == 0) {
            tb_region_result_t r;
            if (tb_region_result_decode(result, result_bytes, &r, &err) != 0)
                abort();
            if (r.spec_xxh3 != XXH3_64bits(spec, spec_bytes))
                abort();
            tb_region_result_free(&r);
        }
    }
    tb_region_result_t r;
    if (tb_region_result_decode(result, result_bytes, &r, &err) == 0)
        tb_region_result_free(&r);
    return 0;
}
