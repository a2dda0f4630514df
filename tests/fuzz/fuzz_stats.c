/* libFuzzer target: the statistics and histogram decoders on arbitrary bytes (fuzz every
 * decoder). Build with -DTB_FUZZ=ON (clang); run build/fuzz_stats [corpus]. Anything decoded must
 * also summarise, report, and survive a second round trip unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hist.h"
#include "jobs/stats/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_err_t err;
    tb_reader_t r;
    tb_reader_init(&r, data, size);
    tb_hist_t *h = tb_hist_decode(&r, &err);
    if (h) {
        (void)tb_hist_quantile(h, 0.5);
        (void)tb_hist_fraction_below(h, 1.0);
        tb_hist_destroy(&h);
    }
    tb_stats_t *s = tb_stats_decode(data, size, &err);
    if (s) {
        char *text = tb_stats_report_text(s, NULL, "fuzz");
        free(text);
        cJSON_Delete(tb_stats_report_json(s, NULL, NULL));
        size_t len;
        uint8_t *again = tb_stats_encode(s, &len, &err);
        tb_stats_t *back = again ? tb_stats_decode(again, len, &err) : NULL;
        if (!back || !tb_stats_equal(s, back))
            abort(); /* what decodes once must round-trip */
        free(again);
        tb_stats_destroy(&back);
        tb_stats_destroy(&s);
    }
    return 0;
}
