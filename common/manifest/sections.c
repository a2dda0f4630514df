/* The manifest's sections, in the order their keys are read, checked and written (see section.h).
 * A new section is one file common/manifest/NAME.c and one line here, at the end. */
#include "common/manifest/section.h"

const tb_manifest_section_t *const tb_manifest_sections[] = {
    &tb_manifest_section_planet, /* seed, circumference_km, cell_m, template.*, elevation_m */
    &tb_manifest_section_regions, &tb_manifest_section_solve,  &tb_manifest_section_massif,
    &tb_manifest_section_rock,    &tb_manifest_section_faults, &tb_manifest_section_tiles,
    &tb_manifest_section_coast, /* the coastal pass: docs/coast.md */
};
const size_t tb_manifest_n_sections = sizeof tb_manifest_sections / sizeof tb_manifest_sections[0];
