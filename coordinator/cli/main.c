/* `terrain`: the coordinator's command-line entry. Dispatches to one verb per coordinator/cmd_*.c.
 */
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "coordinator/cli/commands.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} s_command_t;

static const s_command_t s_commands[] = {
    {"version", tb_cmd_version, "print the version and build id"},
    {"schema", tb_cmd_schema, "print the manifest keys as a Markdown table"},
    {"plan", tb_cmd_plan, "read the painting, cut the planet into regions, print the plan"},
    {"init", tb_cmd_init, "write the demo planet out as an editable painting, legend, manifest"},
    {"bake", tb_cmd_bake, "plan the planet, solve its regions on workers, write the heightmap"},
    {"solve-region", tb_cmd_solve_region, "solve one region in-process and write its maps"},
    {"gate", tb_cmd_gate, "bake on several seeds and check the statistics against gates (CI)"},
    {"analyze", tb_cmd_analyze, "the statistics block of any heightmap (a DEM, a bake's PNG)"},
    {"tiles", tb_cmd_tiles, "re-run chosen detail tiles of a bake, or measure the tile margin"},
    {"report", tb_cmd_report, "rewrite a bake's report.html from its meta.json and outputs"},
    {"stitch", tb_cmd_stitch, "one seamless mosaic of any area of a bake's detail tiles"},
    {"export", tb_cmd_export, "write a bake's detail tiles as Unreal, Unity or Godot import them"},
    {"studio", tb_cmd_studio, "paint, plan and bake one region of a planet in a browser page"},
    {"farm-check", tb_cmd_farm_check, "dispatch verifiable test jobs to check workers and a farm"},
    {"farm-keys", tb_cmd_farm_keys, "write CURVE certificates for a farm"},
};

static void s_usage(FILE *out)
{
    fprintf(out, "usage: terrain COMMAND [ARGS]   (terrain COMMAND --help for its options)\n\n");
    for (size_t i = 0; i < sizeof s_commands / sizeof s_commands[0]; i++)
        fprintf(out, "  %-14s %s\n", s_commands[i].name, s_commands[i].summary);
    fprintf(out, "\nWith no manifest, every command uses the built-in demo planet (--seed N).\n");
}

int main(int argc, char **argv)
{
    tb_log_set_program("terrain");
    if (argc < 2) {
        s_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        s_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0)
        return tb_cmd_version(0, NULL);
    for (size_t i = 0; i < sizeof s_commands / sizeof s_commands[0]; i++)
        if (strcmp(argv[1], s_commands[i].name) == 0)
            return s_commands[i].run(argc - 2, argv + 2);
    tb_log_error("unknown command \"%s\" (terrain --help lists the commands)", argv[1]);
    return 2;
}
