/* `terrain schema`: prints the manifest's key table as Markdown (the table in docs/manifest.md). */
#include <stdio.h>
#include <stdlib.h>

#include "common/manifest.h"
#include "coordinator/cli/commands.h"

int tb_cmd_schema(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    char *table = tb_manifest_schema_markdown();
    if (!table)
        return 1;
    fputs(table, stdout);
    free(table);
    return 0;
}
