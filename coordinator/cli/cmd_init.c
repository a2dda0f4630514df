/* `terrain init DIR [--seed N] [--circumference-km K] [--force]`: writes the built-in demo planet
 * out as files a user can edit - painting.png (one pixel per cell, the legend's colours),
 * legend.json and planet.json - so `terrain plan DIR/planet.json` plans the same planet and a
 * repainted one plans the user's own. Refuses to overwrite an existing file unless --force. Exit
 * status: 0 written, 1 a file could not be written, 2 bad usage or input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/png_rows.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"
#include "coordinator/bake/planet_input.h"

#define S_USAGE "terrain init DIR [--seed N] [--circumference-km K] [--force]"

static const char *s_names[3] = {"painting.png", "legend.json", "planet.json"};

int tb_cmd_init(int argc, char **argv)
{
    int64_t seed = 0;
    double km = 0;
    bool seed_given = false, km_given = false, force = false;
    const tb_opt_t opts[] = {
        TB_VERB_OPT_SEED(&seed, &seed_given, "seed of the demo planet (default 7)"),
        TB_VERB_OPT_CIRCUMFERENCE(&km, &km_given,
                                  "circumference (default 25; a whole number of 5 km tiles)"),
        {"force", TB_OPT_FLAG, &force, NULL, NULL, "overwrite existing files"},
    };
    tb_verb_t v = {.name = "init",
                   .usage = S_USAGE,
                   TB_VERB_OPTS(opts),
                   .min_positional = 1,
                   .max_positional = 1,
                   .positional_what = "DIR"};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    tb_err_t err;
    const char *dir = v.positional[0];
    char paths[3][TB_PATH_MAX];
    for (int k = 0; k < 3; k++) {
        if (tb_fs_join(paths[k], sizeof paths[k], dir, s_names[k], &err) != 0)
            return tb_verb_error(&v, TB_EXIT_USAGE, &err);
        if (!force && tb_fs_exists(paths[k]))
            return tb_verb_usage(&v, "%s exists; pass --force to overwrite it", paths[k]);
    }
    tb_input_options_t opt = {seed_given, (uint64_t)seed, km_given, km};
    tb_planet_input_t in;
    if (tb_planet_input_load(NULL, &opt, &in, &err) != 0)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    char *legend = tb_legend_to_json(&in.manifest.legend);
    char *manifest = tb_manifest_to_file_json(&in.manifest, s_names[0], s_names[1]);
    int rc = legend && manifest ? 0 : tb_err_set(&err, TB_E_NOMEM, "out of memory");
    if (rc == 0)
        rc = tb_fs_mkdir_p(dir, &err);
    if (rc == 0)
        rc = tb_row_source_write_png(tb_planet_input_rows(&in), paths[0], 6, &err);
    if (rc == 0)
        rc = tb_fs_write_atomic(paths[1], legend, strlen(legend), &err);
    if (rc == 0)
        rc = tb_fs_write_atomic(paths[2], manifest, strlen(manifest), &err);
    free(legend);
    free(manifest);
    if (rc == 0)
        printf("wrote %s (%lld x %lld, one pixel per %g m cell), %s and %s for %s\n"
               "plan it with: terrain plan %s\n",
               paths[0], (long long)in.painting_w, (long long)in.painting_h, in.manifest.cell_m,
               paths[1], paths[2], in.manifest.source, paths[2]);
    else
        tb_verb_error(&v, TB_EXIT_FAILED, &err);
    tb_planet_input_free(&in);
    return rc == 0 ? TB_EXIT_OK : TB_EXIT_FAILED;
}
