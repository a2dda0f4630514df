/* libFuzzer target for the stored-data decoders (CC=clang, -DTB_FUZZ=ON): blobs
 * (common/blob.h) and stored-result files (coordinator/farm/cache.h), with a small size limit.
 * Whatever the bytes, decoding either fails or returns bytes whose XXH3 is the one the header
 * promised.
 *
 *   build-fuzz/fuzz_blob -max_total_time=60 tests/fuzz/corpus-blob tests/fuzz/seeds/blob */
#include <stdint.h>
#include <stdlib.h>
#include <xxhash.h>

#include "common/blob.h"
#include "coordinator/farm/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *out;
    size_t bytes;
    tb_err_t err;
    if (tb_blob_decode(data, size, 1 << 20, &out, &bytes, &err) == 0) {
        tb_blob_info_t info;
        if (tb_blob_peek(data, size, &info, &err) != 0 || info.raw_bytes != bytes ||
            XXH3_64bits(out, bytes) != info.raw_xxh3)
            abort();
        free(out);
    }
    if (tb_cache_decode_file(data, size, NULL, 1 << 20, &out, &bytes, &err) == 0)
        free(out);
    return 0;
}
