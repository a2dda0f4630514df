/* The verbs of `terrain`. Each takes the arguments after its own name and returns the process exit
 * status: 0 success, 1 a failed run or gate, 2 bad usage or input. */
#ifndef TB_COMMANDS_H
#define TB_COMMANDS_H

int tb_cmd_version(int argc, char **argv);
int tb_cmd_schema(int argc, char **argv);
int tb_cmd_plan(int argc, char **argv);
int tb_cmd_init(int argc, char **argv);
int tb_cmd_farm_check(int argc, char **argv);
int tb_cmd_farm_keys(int argc, char **argv);

int tb_cmd_bake(int argc, char **argv);
int tb_cmd_solve_region(int argc, char **argv);
int tb_cmd_gate(int argc, char **argv);
int tb_cmd_analyze(int argc, char **argv);
int tb_cmd_report(int argc, char **argv);
int tb_cmd_stitch(int argc, char **argv);
int tb_cmd_export(int argc, char **argv);
int tb_cmd_tiles(int argc, char **argv);
int tb_cmd_studio(int argc, char **argv);

#endif
