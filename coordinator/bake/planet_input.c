/* Loading the planet a command works on; see planet_input.h. */
#include "coordinator/bake/planet_input.h"

#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/png_io.h"

#include "jobs/plan/demo.h"

/* Reads the painting, checking the size its header declares against the planet (its width divides
 * the planet's) and the planet it makes against TB_INPUT_MAX_PIXELS before a pixel is decoded. */
static int s_read_painting(const tb_manifest_t *m, tb_image_t *out, tb_err_t *err)
{
    char *data;
    size_t bytes;
    uint32_t w, h;
    if (tb_fs_read_all(m->painting_path, (size_t)1 << 34, &data, &bytes, err) != 0)
        return -1;
    int rc = tb_png_peek(data, bytes, m->painting_path, &w, &h, err);
    if (rc == 0 && ((int64_t)w > m->planet_w || m->planet_w % (int64_t)w != 0))
        rc = tb_err_set(err, TB_E_INVALID,
                        "%s: %u pixels wide, which does not divide the planet's %lld cells "
                        "(circumference_km %g / cell_m %g); paint it %lld pixels wide, or a "
                        "divisor of that",
                        m->painting_path, w, (long long)m->planet_w, m->circumference_km, m->cell_m,
                        (long long)m->planet_w);
    if (rc == 0 &&
        (uint64_t)h * (uint64_t)(m->planet_w / w) * (uint64_t)m->planet_w > TB_INPUT_MAX_PIXELS)
        rc = tb_err_set(err, TB_E_INVALID,
                        "%s: %u x %u pixels make a planet of %lld x %llu cells, more than the "
                        "%llu allowed",
                        m->painting_path, w, h, (long long)m->planet_w,
                        (unsigned long long)h * (uint64_t)(m->planet_w / w),
                        (unsigned long long)TB_INPUT_MAX_PIXELS);
    if (rc == 0)
        rc = tb_png_read_mem(data, bytes, m->painting_path, TB_PNG_RGB8, TB_INPUT_MAX_PIXELS, out,
                             err);
    free(data);
    return rc;
}

int tb_planet_input_load(const char *manifest_path, const tb_input_options_t *opt,
                         tb_planet_input_t *out, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    tb_input_options_t none = {0};
    if (!opt)
        opt = &none;
    tb_manifest_t *m = &out->manifest;
    if (!manifest_path) {
        uint64_t seed = opt->has_seed ? opt->seed : TB_DEMO_SEED;
        double km = opt->has_circumference ? opt->circumference_km : TB_DEMO_CIRCUMFERENCE_KM;
        if (tb_demo_planet(seed, km, m, &out->painting, err) != 0)
            return -1; /* the message names "(demo planet, seed N)" and the numbers */
    } else {
        if (opt->has_circumference)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: --circumference-km applies to the demo planet only; a "
                              "manifest sets circumference_km itself",
                              manifest_path);
        if (tb_manifest_load(manifest_path, m, err) != 0)
            return -1;
        if (opt->has_seed)
            m->seed = opt->seed;
        if (s_read_painting(m, &out->painting, err) != 0)
            return tb_err_prefix(err, "%s: template.painting", manifest_path);
    }
    out->planet_w = m->planet_w;
    if (out->painting.w == 0 || m->planet_w % (int64_t)out->painting.w != 0) {
        tb_err_set(err, TB_E_INVALID,
                   "%s: %u pixels wide, which does not divide the planet's %lld cells "
                   "(circumference_km %g / cell_m %g); paint it %lld pixels wide, or a divisor of "
                   "that",
                   m->painting_path, out->painting.w, (long long)m->planet_w, m->circumference_km,
                   m->cell_m, (long long)m->planet_w);
        tb_planet_input_free(out);
        return -1;
    }
    out->planet_h = (int64_t)out->painting.h * (m->planet_w / (int64_t)out->painting.w);
    return 0;
}

void tb_planet_input_free(tb_planet_input_t *in)
{
    if (!in)
        return;
    tb_image_free(&in->painting);
    memset(in, 0, sizeof *in);
}
