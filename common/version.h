/* The version and build id of this binary. The build id names the model code (common/ and jobs/):
 * two binaries with the same id bake the same planet, so a worker with another id is refused and
 * the result cache keys on it. */
#ifndef TB_VERSION_INFO_H
#define TB_VERSION_INFO_H

const char *tb_version(void);  /* "0.1.0" */
const char *tb_build_id(void); /* "0.1.0+<16 hex digits of the model sources' SHA-256>" */
const char *tb_git_id(void);   /* git describe at configure time, for humans only */
/* The build id and a hash of coordinator/ too: the code a bake's output files are a function of. */
const char *tb_tool_id(void);

#endif
