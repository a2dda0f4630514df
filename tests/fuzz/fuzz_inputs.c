/* libFuzzer target for the decoders of what a user or a peer hands us (CC=clang, -DTB_FUZZ=ON): the
 * manifest and legend JSON (common/manifest.h), PNG files (common/png_io.h), and region and coast
 * job specs and results (jobs/region.h, jobs/coast/coast.h: untrusted bytes from the wire or the
 * store), and `--set KEY=VALUE` overrides (common/manifest.h; also read back from a bake's
 * meta.json), one a line, applied to a manifest with a small legend. The first byte picks the
 * decoder. Whatever the bytes, each call either fails with a
 * message or returns a value that passes its own checks; nothing may crash, leak or read out of
 * bounds.
 *
 *   build-fuzz/fuzz_inputs -max_total_time=60 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/manifest.h"
#include "common/png_io.h"
#include "jobs/coast/coast.h"
#include "jobs/region.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *S_LEGEND =
    "{\"classes\": [{\"name\": \"range\", \"colour\": \"#a0522d\", \"kind\": \"land\", "
    "\"uplift_mm_yr\": 0.25}, {\"name\": \"deep\", \"colour\": \"#1f4e79\", \"kind\": "
    "\"ocean\", \"depth_m\": 900}]}";

/* Each line of text is one --set argument; those accepted are applied and the manifest finished. */
static void s_overrides(char *text)
{
    tb_overrides_t *o = tb_overrides_new();
    tb_manifest_t *m = malloc(sizeof *m);
    tb_err_t err;
    if (!o || !m)
        abort();
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        (void)tb_overrides_add(o, line, &err);
    }
    if (tb_overrides_count(o) > TB_OVERRIDES_MAX)
        abort();
    if (tb_manifest_parse("{\"template\": {\"painting\": \"p.png\", \"legend\": \"l.json\"}}",
                          "fuzz.json", ".", m, &err) != 0 ||
        tb_legend_parse(S_LEGEND, "legend.json", &m->legend, &err) != 0)
        abort();
    if (tb_overrides_apply_keys(o, m, &err) == 0 &&
        tb_overrides_apply_legend(o, &m->legend, &err) == 0)
        (void)tb_overrides_finish(o, m, &err);
    free(tb_overrides_to_json(o));
    tb_overrides_destroy(&o);
    free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t which = data[0] % 8;
    data++;
    size--;
    tb_err_t err;
    char *text = NULL;
    if (which <= 1 || which == 7) {
        text = malloc(size + 1);
        memcpy(text, data, size);
        text[size] = '\0';
    }
    switch (which) {
    case 0: {
        tb_manifest_t m;
        if (tb_manifest_parse(text, "fuzz.json", ".", &m, &err) == 0)
            (void)tb_manifest_finish(&m, &err);
        break;
    }
    case 1: {
        tb_legend_t legend;
        if (tb_legend_parse(text, "legend.json", &legend, &err) == 0 &&
            (legend.n_classes < 1 || legend.n_classes > TB_MAX_CLASSES))
            abort();
        break;
    }
    case 2: {
        tb_image_t img;
        if (tb_png_read_mem(data, size, "fuzz.png", TB_PNG_RGB8, 1 << 20, &img, &err) == 0)
            tb_image_free(&img);
        if (tb_png_read_mem(data, size, "fuzz.png", TB_PNG_GRAY16, 1 << 20, &img, &err) == 0)
            tb_image_free(&img);
        break;
    }
    case 3: {
        tb_region_spec_owned_t spec;
        if (tb_region_spec_decode(data, size, &spec, &err) == 0)
            tb_region_spec_free(&spec);
        break;
    }
    case 4: {
        tb_region_result_t r;
        if (tb_region_result_decode(data, size, &r, &err) == 0)
            tb_region_result_free(&r);
        break;
    }
    case 5: {
        tb_coast_spec_owned_t spec;
        if (tb_coast_spec_decode(data, size, &spec, &err) == 0)
            tb_coast_spec_free(&spec);
        break;
    }
    case 6: {
        tb_coast_result_t r;
        if (tb_coast_result_decode(data, size, &r, &err) == 0)
            tb_coast_result_free(&r);
        break;
    }
    case 7:
        s_overrides(text);
        break;
    }
    free(text);
    return 0;
}
