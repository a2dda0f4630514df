/* The replay's negative control: a target that aborts on an input starting with "crash". ctest
 * fuzz_replay_control replays it over tests/fuzz/seeds/control and must fail (WILL_FAIL), so a
 * crashing target cannot pass through tests/fuzz/replay_main.c unnoticed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 5 && memcmp(data, "crash", 5) == 0)
        abort();
    return 0;
}
