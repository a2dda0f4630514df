/* libFuzzer target: the gates file parser (coordinator/gate/gate.h) and the statistics lookup on
 * arbitrary text (fuzz every decoder). Build with -DTB_FUZZ=ON (clang); run
 * build/fuzz_gates [corpus]. A file that parses must hold 1..TB_GATE_MAX gates of known
 * statistics, each with a bound, min <= max, and its values must read from the same text taken as
 * a statistics object without crashing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/gate/gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    tb_gates_t g;
    tb_err_t err;
    if (tb_gates_parse(text, "fuzz", &g, &err) == 0) {
        if (g.n < 1 || g.n > TB_GATE_MAX)
            abort();
        for (int i = 0; i < g.n; i++) {
            const tb_gate_t *gt = &g.gate[i];
            if (tb_gate_metric_find(gt->name) != gt->metric || (!gt->has_min && !gt->has_max) ||
                (gt->has_min && gt->has_max && !(gt->min <= gt->max)))
                abort();
            tb_gate_check_t c;
            tb_gate_check(gt, 0.5, NAN, &c);
            char b[96];
            tb_gate_bound_text(gt, b, sizeof b);
        }
    }
    cJSON *st = cJSON_Parse(text);
    for (int m = 0; m < tb_gate_metric_count(); m++)
        (void)tb_gate_metric_value(st, m);
    cJSON_Delete(st);
    free(text);
    return 0;
}
