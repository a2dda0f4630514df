#!/usr/bin/env bash
# The format check CI enforces: every C source of the tree is exactly as clang-format writes it
# under the checked-in .clang-format (LLVM base, 4 spaces, 100 columns, Linux braces, includes
# left in their order). To mend a failure: clang-format -i FILE. Usage: check_format.sh SOURCE_DIR
set -euo pipefail
cd "$1"
if ! command -v clang-format >/dev/null 2>&1; then
  echo "format: clang-format is not installed (scripts/test installs Debian's clang-format)" >&2
  exit 1
fi
# Negative control: a badly formatted line must be caught, or this check proves nothing.
if printf 'int  main ( void ){return 0 ;}\n' |
  clang-format --dry-run --Werror --assume-filename=control.c >/dev/null 2>&1; then
  echo "format: the control (a badly formatted line) passed: the check is broken" >&2
  exit 1
fi
bad=()
n=0
while IFS= read -r f; do
  n=$((n + 1))
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(find common jobs coordinator worker tests bench -name '*.[ch]' | sort)
if [ ${#bad[@]} -gt 0 ]; then
  echo "format: ${#bad[@]} of $n files differ from clang-format's output (clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "ok: $n C files as clang-format writes them"
