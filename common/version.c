/* Version strings; the build id comes from cmake/buildid.cmake. */
#include "common/version.h"

#include "buildid.h"
#include "gitversion.h"

const char *tb_version(void)
{
    return TB_VERSION_STRING;
}
const char *tb_build_id(void)
{
    return TB_BUILD_ID;
}
const char *tb_git_id(void)
{
    return TB_GIT_ID;
}
const char *tb_tool_id(void)
{
    return TB_TOOL_ID;
}
