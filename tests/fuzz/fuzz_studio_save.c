/* libFuzzer target: the body of terrain studio's POST /api/save (coordinator/studio/save.h) on
 * arbitrary bytes - JSON, base64, the PNG and the legend inside it (fuzz every decoder). Build with
 * -DTB_FUZZ=ON (clang); run build/fuzz_studio_save [corpus]. The painting expected is 8 x 4 pixels.
 * A body that passes must hold exactly an 8 x 4 RGB painting and a legend that writes back as JSON
 * the same parser reads again to the same number of classes; one refused must say why with 400 or
 * 422. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/studio/save.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_studio_save_t *sv = calloc(1, sizeof *sv);
    tb_legend_t *again = calloc(1, sizeof *again);
    if (!sv || !again) {
        free(sv);
        free(again);
        return 0;
    }
    tb_err_t err;
    int code = tb_studio_save_parse((const char *)data, size, 8, 4, "painting.png", sv, &err);
    if (code == 0) {
        if (sv->img.w != 8 || sv->img.h != 4 || sv->img.format != TB_PNG_RGB8 ||
            sv->legend.n_classes < 1)
            abort();
        char *json = tb_legend_to_json(&sv->legend);
        if (!json || tb_legend_parse(json, "again", again, &err) != 0 ||
            again->n_classes != sv->legend.n_classes)
            abort();
        free(json);
    } else if ((code != 400 && code != 422) || !err.msg[0])
        abort();
    tb_studio_save_free(sv);
    free(sv);
    free(again);
    return 0;
}
