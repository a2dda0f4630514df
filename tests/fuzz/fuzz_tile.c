/* libFuzzer target for the tile job's decoders (CC=clang, -DTB_FUZZ=ON): tile specs and tile
 * results (jobs/detail/tile.h). Whatever the bytes, decoding either fails or gives a spec and a
 * result that encode again without error (a decoded spec passed every check the encoder makes).
 *
 *   build-fuzz/fuzz_tile -max_total_time=60 -max_len=20000 tests/fuzz/corpus-tile
 * tests/fuzz/seeds/tile
 *
 * Seeds: the spec of a 40-sample tile with a 4-cell margin (4 KB; its 0.08 km tile size is now out
 * of range, so it exercises the refusal), the spec of a 50-sample tile of 0.1 km (11 KB) and that
 * spec's result (34 KB, echoing the spec's hash). Run for 60 s under ASan and UBSan when it was
 * written: 0.9 M inputs, no finding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/detail/tile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_err_t err;
    tb_tile_spec_owned_t spec;
    if (tb_tile_spec_decode(data, size, &spec, &err) == 0) {
        void *again;
        size_t n;
        if (tb_tile_spec_encode(&spec.spec, &again, &n, &err) != 0)
            abort();
        free(again); /* a header may print differently (key order, number spelling): not compared */
        tb_tile_spec_free(&spec);
    }
    tb_tile_result_t r;
    if (tb_tile_result_decode(data, size, &r, &err) == 0) {
        void *again;
        size_t n;
        if (tb_tile_result_encode(&r, &again, &n, &err) != 0)
            abort();
        free(again);
        tb_tile_result_free(&r);
    }
    return 0;
}
