/* The manifest section "coast": the coastal pass (docs/coast.md). Its keys are the one list of
 * common/coast_params.h, so the section, the defaults and the coast job's spec never disagree. See
 * common/manifest/section.h. */
#include "common/manifest/section.h"

static const tb_mkey_t s_keys[] = {
#define S_ROW(name, lo, hi, def, doc)                                                              \
    {"coast." #name, TB_MKEY_DOUBLE, TB_MKEY_OFF(coast.name), 0, lo, hi, def, 0, doc},
    TB_COAST_KEYS(S_ROW)
#undef S_ROW
        {"coast." TB_COAST_SECTOR_KEY, TB_MKEY_RANGE, TB_MKEY_OFF(coast.wave_from_deg),
         TB_MKEY_OFF(coast.wave_to_deg), TB_COAST_SECTOR_LO, TB_COAST_SECTOR_HI,
         TB_COAST_SECTOR_DEF_FROM, TB_COAST_SECTOR_DEF_TO, TB_COAST_SECTOR_DOC},
};

static const char *const s_objects[] = {"coast", NULL};

/* The checks across keys and against the planet's cell and circumference. */
static int s_check(tb_manifest_t *m, tb_err_t *err)
{
    if (tb_coast_params_check(&m->coast, m->cell_m, m->planet_w, err) != 0)
        return tb_err_prefix(err, "%s", m->source);
    return 0;
}

const tb_manifest_section_t tb_manifest_section_coast = {
    .name = "coast",
    .objects = s_objects,
    TB_MSECTION_KEYS(s_keys),
    .check = s_check,
};
