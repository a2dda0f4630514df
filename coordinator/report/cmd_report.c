/* `terrain report OUT`: rewrites OUT/report.html from OUT/meta.json and the outputs beside it
 * (coordinator/report/report.h, docs/report.md), for bakes made before the page existed or after
 * editing. Exit status 0, or 2 when OUT holds no finished bake or its meta.json is unreadable. */
#include <stdio.h>

#include "common/args.h"
#include "coordinator/commands.h"
#include "coordinator/report/report.h"

int tb_cmd_report(int argc, char **argv)
{
    bool help = false;
    tb_opt_t opts[] = {
        {"help", TB_OPT_FLAG, &help, NULL, NULL, "show this help"},
    };
    const int n_opts = (int)(sizeof opts / sizeof opts[0]);
    const char *usage = "terrain report OUT   (OUT: a bake's output directory, with its meta.json)";
    tb_err_t err;
    const char *pos[1];
    int n_pos;
    if (tb_args_parse(argc, argv, opts, n_opts, pos, 1, &n_pos, &err) != 0) {
        fprintf(stderr, "terrain report: %s\n", err.msg);
        return 2;
    }
    if (help) {
        tb_args_usage(stdout, usage, opts, n_opts);
        return 0;
    }
    if (n_pos != 1) {
        fprintf(stderr, "terrain report: expected the bake's output directory\nusage: %s\n", usage);
        return 2;
    }
    if (tb_report_write(pos[0], &err) != 0) {
        fprintf(stderr, "terrain report: %s\n", err.msg);
        return err.code == TB_E_NOMEM ? 1 : 2;
    }
    printf("report: %s/%s\n", pos[0], TB_REPORT_FILE);
    return 0;
}
