/* `terrain report OUT`: rewrites OUT/report.html from OUT/meta.json and the outputs beside it
 * (coordinator/report/report.h, docs/report.md), for bakes made before the page existed or after
 * editing. Exit status 0, 1 when the page cannot be written, or 2 when OUT holds no finished bake
 * or its meta.json is unreadable. */
#include <stdio.h>

#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"
#include "coordinator/report/report.h"

int tb_cmd_report(int argc, char **argv)
{
    tb_verb_t v = {.name = "report",
                   .usage = "terrain report OUT   (OUT: a bake's output directory, with its "
                            "meta.json)",
                   .min_positional = 1,
                   .max_positional = 1,
                   .positional_what = "the bake's output directory"};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    tb_err_t err;
    if (tb_report_write(v.positional[0], &err) != 0)
        return tb_verb_error(&v, err.code == TB_E_NOMEM ? TB_EXIT_FAILED : TB_EXIT_USAGE, &err);
    printf("report: %s/%s\n", v.positional[0], TB_REPORT_FILE);
    return TB_EXIT_OK;
}
