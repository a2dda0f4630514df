/* libFuzzer target for the coast_block job's decoders (CC=clang, -DTB_FUZZ=ON): block specs and
 * block results (jobs/coast/blocks.h). Whatever the bytes, decoding either fails or gives a spec
 * and a result that encode again without error, and a decoded result encodes to the very bytes it
 * came from (its format has no text to print differently); the kind's bound is never below an
 * accepted result of its spec.
 *
 *   build-fuzz/fuzz_coast_block -max_total_time=60 -max_len=20000 tests/fuzz/corpus-coast_block
 * tests/fuzz/seeds/coast_block
 *
 * Seeds: the spec of the south-east block of a 48 x 24 planet of 100 m cells cut 2 x 2 with a halo
 * of 6 (an island, a river mouth; 4 KB), and its result (11 KB, echoing the spec's hash). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/blocks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_err_t err;
    tb_coast_block_spec_owned_t spec;
    if (tb_coast_block_spec_decode(data, size, &spec, &err) == 0) {
        void *again;
        size_t n;
        if (tb_coast_block_spec_encode(&spec.spec, &again, &n, &err) != 0)
            abort();
        free(again); /* a header may print differently (number spelling): not compared */
        tb_coast_block_spec_free(&spec);
    }
    tb_coast_block_result_t r;
    if (tb_coast_block_result_decode(data, size, &r, &err) == 0) {
        void *again;
        size_t n;
        if (tb_coast_block_result_encode(&r, &again, &n, &err) != 0)
            abort();
        if (n != size || memcmp(again, data, n) != 0)
            abort();
        free(again);
        tb_coast_block_result_free(&r);
    }
    return 0;
}
