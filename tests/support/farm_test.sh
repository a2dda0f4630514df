# shellcheck shell=bash disable=SC2034
# Helpers for the multi-process tests (tests/test_farm_*.sh), sourced after `set -euo pipefail`:
#
#   source "$2/tests/support/farm_test.sh" "$1" "$2"
#
# Gives: $TERRAIN, $WORKER, $MISBEHAVE (the programs), $T (a scratch directory removed at exit),
# $TMPDIR pointed inside $T so every local worker's private ipc directory lands where the test can see
# it, FAST (short heartbeats: a lost worker is noticed in 2 s, lenient enough for a loaded 2-core
# machine), and functions to wait for a log
# line, to check that nothing was left behind, and to fail with a message. Processes the test starts
# in the background are recorded with `track PID` and killed (by pid) at exit.
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
TERRAIN=$BUILD/terrain
WORKER=$BUILD/terrain-worker
MISBEHAVE=$BUILD/tb_misbehave
T=$(mktemp -d "${TMPDIR:-/tmp}/tbfarm-XXXXXX")
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
export TB_NO_PROGRESS=1
FAST=(--heartbeat-ms 250 --liveness 8)
TRACKED=()

track() { TRACKED+=("$1"); }

s_cleanup() {
  local p
  for p in "${TRACKED[@]:-}"; do
    [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true
  done
  # Workers of a failed test: found by the private directory in their command line, killed by pid.
  for p in $(pgrep -f -- "$T/tmp" 2>/dev/null || true); do
    kill -9 "$p" 2>/dev/null || true
  done
  [ -n "${KEEP_T:-}" ] || rm -rf "$T"
}
trap s_cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  for f in "$T"/*.err; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -30 "$f" >&2; }
  done
  exit 1
}

# wait_for FILE REGEX SECONDS: waits until a line of FILE matches REGEX.
wait_for() {
  local file=$1 re=$2 secs=$3 i
  for ((i = 0; i < secs * 20; i++)); do
    grep -qE -- "$re" "$file" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "no line matching '$re' in $file after $secs s"
}

# wait_gone PID SECONDS: waits until process PID has exited (it must not be our child).
wait_gone() {
  local pid=$1 secs=$2 i
  for ((i = 0; i < secs * 20; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  return 1
}

# assert_clean WHAT: no worker process and no private directory or socket file is left behind.
assert_clean() {
  local i left
  for ((i = 0; i < 60; i++)); do
    left=$(pgrep -f -- "$T/tmp" || true)
    [ -z "$left" ] && break
    sleep 0.05
  done
  [ -z "$left" ] || fail "$1: worker processes left behind: $(ps -o pid,args -p "${left//$'\n'/,}")"
  left=$(find "$TMPDIR" -mindepth 1 2>/dev/null || true)
  [ -z "$left" ] || fail "$1: files left behind: $left"
}

# json_get FILE PYTHON-EXPR: evaluates an expression over the parsed JSON document `d`.
json_get() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}
