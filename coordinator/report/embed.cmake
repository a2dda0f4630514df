# Embeds a file's bytes into C: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake writes
# `const unsigned char NAME[]` (the bytes and a terminating 0) and `const size_t NAME_len`. The
# report's browser assets (the vendored three.js, the 3D view's script) reach the `terrain` binary
# this way, so a bake writes them beside report.html without reading the source tree.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" body "${body}")
file(WRITE "${OUT}" "/* generated from ${IN} by coordinator/report/embed.cmake: do not edit */\n"
  "#include <stddef.h>\nconst unsigned char ${NAME}[] = {\n${body}0x00};\n"
  "const size_t ${NAME}_len = ${bytes};\n")
