/* The import sheet of an export (internal to coordinator/export/): <name>_import.json and
 * <name>_import.txt in the output directory, with the numbers to type into the engine
 * (docs/export.md says where each comes from): Unreal's Location, Scale and component layout;
 * Unity's terrain width, length, height, heightmap resolution and per-tile positions; Terrain3D's
 * region size, vertex spacing, R16 range and per-region import positions; for every engine the
 * 16-bit decoding, the terrace share and every file with its XXH3. */
#ifndef TB_EXPORT_SHEET_H
#define TB_EXPORT_SHEET_H

#include <cJSON.h>

#include "coordinator/export/export.h"

/* Refuses (TB_E_INVALID, with the numbers) a grid the engine cannot hold: Terrain3D's region map
 * is 32 x 32 regions. */
int tb_export_sheet_check(tb_export_engine_t engine, const tb_export_grid_t *g, tb_err_t *err);

/* Writes both files (atomically). `files` is the list of files written (borrowed). */
int tb_export_sheet_write(const char *bake_dir, const tb_export_opts_t *o,
                          const tb_mosaic_info_t *info, const tb_export_preset_t *p,
                          const tb_export_report_t *rep, cJSON *files, tb_err_t *err);

#endif
