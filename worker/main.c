/* `terrain-worker`: the stateless worker. The ZeroMQ loop arrives with the bake (issue 5); until then
 * it only reports its build id, so the build and the packaging have both programs from the start. */
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/version.h"

int main(int argc, char **argv)
{
    tb_log_set_program("terrain-worker");
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("terrain-worker %s (build %s, git %s)\n", tb_version(), tb_build_id(), tb_git_id());
        return 0;
    }
    fprintf(stderr, "terrain-worker: the worker loop is not built yet; only --version works\n");
    return 2;
}
