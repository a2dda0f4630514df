/* `terrain version`: the version, the build id workers must match, and the git id. */
#include <stdio.h>

#include "common/version.h"
#include "coordinator/cli/commands.h"

int tb_cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("terrain %s (build %s, git %s)\n", tb_version(), tb_build_id(), tb_git_id());
    return 0;
}
