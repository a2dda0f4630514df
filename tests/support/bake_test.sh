# shellcheck shell=bash
# Helpers for the multi-process tests of `terrain bake` (tests/test_bake_*.sh), on top of
# tests/support/farm_test.sh (which gives $TERRAIN, $WORKER, $MISBEHAVE, $T, fail, wait_for,
# assert_clean, json_get, track). Sourced after `set -euo pipefail`:
#
#   source "$2/tests/support/bake_test.sh" "$1" "$2"
#
# Every bake writes DIR/meta.json (its record) and logs to $T/NAME.out and $T/NAME.err, where NAME is
# $LOG when set (`LOG=rerun bake DIR ...`, for a second bake into one directory) or the output
# directory's base name, so `fail` shows the logs of whatever went wrong.
source "$2/tests/support/farm_test.sh" "$1" "$2"

# bake DIR ARGS...: `terrain bake ARGS --out DIR`, which must succeed.
bake() {
  local dir=$1 name
  shift
  name=${LOG:-$(basename "$dir")}
  "$TERRAIN" bake "$@" --out "$dir" >"$T/$name.out" 2>"$T/$name.err" ||
    fail "terrain bake $* --out $dir exited $?"
}

# bake_status DIR ARGS...: like bake, but prints the exit status instead of failing.
bake_status() {
  local dir=$1 name rc=0
  shift
  name=${LOG:-$(basename "$dir")}
  "$TERRAIN" bake "$@" --out "$dir" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
  echo $rc
}

# dispatch_stat DIR KEY: a total from the bake's dispatch record (jobs, from_store, ran, attempts, lost,
# failed, corrupt_store, workers_seen, workers_refused).
dispatch_stat() {
  json_get "$1/meta.json" "d['dispatch']['stats']['$2']"
}

# same_height A B WHAT: the two bakes' planet_height.png are byte-identical.
same_height() {
  cmp -s "$1/planet_height.png" "$2/planet_height.png" ||
    fail "$3: planet_height.png of $1 and $2 differ"
}

# ran_labels DIR: the labels of the jobs this bake computed (not taken from the store), sorted,
# comma-separated ("region 1, region 3").
ran_labels() {
  json_get "$1/meta.json" "', '.join(sorted(j['label'] for j in d['dispatch']['jobs'] if not j['from_store']))"
}
