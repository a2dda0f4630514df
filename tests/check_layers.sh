#!/usr/bin/env bash
# The layers of docs/architecture.md, from the includes: common/ includes only common/ (and the
# generated build headers), jobs/ only common/ and jobs/, coordinator/farm/ only those and itself,
# worker/ only those, itself and the wire protocol. The control: the same rules applied to a jobs/
# file that includes a coordinator header must report it, so the check can fail.
set -euo pipefail
src=$1

# s_violations DIR ALLOWED-REGEX [FILES...]: every quoted include under DIR not matching ALLOWED
s_violations() {
  local dir=$1 allowed=$2
  shift 2
  local files=("$@")
  [ ${#files[@]} -gt 0 ] || mapfile -t files < <(find "$src/$dir" -name '*.[ch]')
  grep -Hn '^#include "' "${files[@]}" | grep -Ev "#include \"($allowed)" || true
}

gen='buildid\.h"|gitversion\.h"'
common_ok="common/|$gen"
jobs_ok="common/|jobs/"
farm_ok="common/|jobs/|coordinator/farm/"
worker_ok="common/|jobs/|worker/|coordinator/farm/proto\.h\""

bad=$(s_violations common "$common_ok"; s_violations jobs "$jobs_ok"; s_violations coordinator/farm "$farm_ok";
      s_violations worker "$worker_ok")
if [ -n "$bad" ]; then
  echo "FAIL: includes across the layers (docs/architecture.md):"
  echo "$bad"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "common/grid.h"\n#include "coordinator/bake/bake.h"\n' >"$tmp/x.c"
[ -n "$(s_violations jobs "$jobs_ok" "$tmp/x.c")" ] ||
  { echo "FAIL (control): a jobs/ file including coordinator/ was not reported"; exit 1; }
n=$(find "$src/common" "$src/jobs" "$src/coordinator/farm" "$src/worker" -name '*.[ch]' | wc -l)
echo "ok: $n files of common/, jobs/, coordinator/farm/ and worker/ include only their layers"
