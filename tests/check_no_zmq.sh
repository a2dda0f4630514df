#!/usr/bin/env bash
# jobs/ and its tests link no ZeroMQ (docs/architecture.md, layers): for each program named, its link
# line (CMake's link.txt) and its needed shared libraries hold no libzmq or libczmq. The control: the
# same checks on terrain-worker, which speaks the wire protocol, must find ZeroMQ, so the check can fail.
set -euo pipefail
build=$1
shift
[ $# -gt 0 ] || { echo "check_no_zmq: no jobs-only program given" >&2; exit 1; }
s_zmq_in() { # prints where program $1 mentions ZeroMQ, if anywhere
  local link="$build/CMakeFiles/$1.dir/link.txt"
  [ -f "$link" ] || { echo "check_no_zmq: $link missing" >&2; exit 1; }
  grep -o '[^ ]*zmq[^ ]*' "$link" | head -3 || true
  readelf -d "$build/$1" | grep NEEDED | grep -o 'lib[cz]*zmq[^]]*' || true
}
fail=0
for p in "$@"; do
  found=$(s_zmq_in "$p")
  if [ -n "$found" ]; then
    echo "FAIL: $p links ZeroMQ: $found"
    fail=1
  fi
done
control=$(s_zmq_in terrain-worker)
if [ -z "$control" ]; then
  echo "FAIL (control): terrain-worker shows no ZeroMQ, so this check cannot see it"
  fail=1
fi
[ $fail -eq 0 ] && echo "ok: $# jobs-only programs link no ZeroMQ (terrain-worker does: $(echo $control | head -c 60))"
exit $fail
