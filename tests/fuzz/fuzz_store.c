/* libFuzzer target for the store-entry reader (CC=clang, -DTB_FUZZ=ON): a stored result file
 * (coordinator/farm/cache.h, "TBR1", key, blob) read as the dispatch engine reads one before it
 * reuses it (docs/distribution.md, "The result store"): decoded under the key in its own header and
 * under another key, then checked against a region spec by the region kind. The first byte splits
 * the input: that many bytes (times 64) of spec, then the file. Nothing may crash, leak or read out
 * of bounds; a file decoded under the other key must not succeed, and a decoded result that passes
 * the region check must decode as a region result.
 *
 *   build-fuzz/fuzz_store -max_total_time=60 tests/fuzz/corpus-store tests/fuzz/seeds/store */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/farm/cache.h"
#include "jobs/job.h"
#include "jobs/region.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t spec_bytes = (size_t)data[0] * 64;
    data++;
    size--;
    if (spec_bytes > size)
        spec_bytes = size;
    const uint8_t *spec = data, *file = data + spec_bytes;
    size_t file_bytes = size - spec_bytes;
    tb_err_t err;
    void *raw;
    size_t raw_bytes;
    tb_cache_key_t own, other;
    memset(&own, 0, sizeof own);
    if (file_bytes >= 20)
        memcpy(own.bytes, file + 4, 16);
    other = own;
    other.bytes[0] ^= 0x5a;
    if (tb_cache_decode_file(file, file_bytes, &other, 1 << 24, &raw, &raw_bytes, &err) == 0)
        abort();
    if (tb_cache_decode_file(file, file_bytes, &own, 1 << 24, &raw, &raw_bytes, &err) != 0)
        return 0;
    const tb_job_kind_t *region = tb_job_find("region");
    if (tb_job_check_result(region, spec, spec_bytes, raw, raw_bytes, &err) == 0) {
        tb_region_result_t r;
        if (tb_region_result_decode(raw, raw_bytes, &r, &err) != 0)
            abort();
        tb_region_result_free(&r);
    }
    free(raw);
    return 0;
}
