/* libFuzzer target for the coast job's decoders (CC=clang, -DTB_FUZZ=ON): coast specs and coast
 * results (jobs/coast/coast.h). Whatever the bytes, decoding either fails or gives a spec and a
 * result that encode again without error, and a decoded result encodes to the very bytes it came
 * from (its format has no text to print differently).
 *
 *   build-fuzz/fuzz_coast -max_total_time=60 -max_len=20000 tests/fuzz/corpus-coast
 * tests/fuzz/seeds/coast
 *
 * Seeds: the spec of a 48 x 16 planet of 100 m cells with one island and one river mouth (4 KB),
 * and its result (8 KB, echoing the spec's hash). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/coast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_err_t err;
    tb_coast_spec_owned_t spec;
    if (tb_coast_spec_decode(data, size, &spec, &err) == 0) {
        void *again;
        size_t n;
        if (tb_coast_spec_encode(&spec.spec, &again, &n, &err) != 0)
            abort();
        free(again); /* a header may print differently (number spelling): not compared */
        tb_coast_spec_free(&spec);
    }
    tb_coast_result_t r;
    if (tb_coast_result_decode(data, size, &r, &err) == 0) {
        void *again;
        size_t n;
        if (tb_coast_result_encode(&r, &again, &n, &err) != 0)
            abort();
        if (n != size || memcmp(again, data, n) != 0)
            abort();
        free(again);
        tb_coast_result_free(&r);
    }
    return 0;
}
