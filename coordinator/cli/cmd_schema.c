/* `terrain schema`: prints the manifest's key table as Markdown (the table in docs/manifest.md). */
#include <stdio.h>
#include <stdlib.h>

#include "common/manifest.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"

int tb_cmd_schema(int argc, char **argv)
{
    tb_verb_t v = {.name = "schema", .usage = "terrain schema"};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    char *table = tb_manifest_schema_markdown();
    if (!table)
        return 1;
    fputs(table, stdout);
    free(table);
    return 0;
}
