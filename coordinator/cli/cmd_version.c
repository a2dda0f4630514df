/* `terrain version`: the version, the build id workers must match, and the git id. */
#include <stdio.h>

#include "common/version.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"

int tb_cmd_version(int argc, char **argv)
{
    tb_verb_t v = {.name = "version", .usage = "terrain version"};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    printf("terrain %s (build %s, git %s)\n", tb_version(), tb_build_id(), tb_git_id());
    return 0;
}
