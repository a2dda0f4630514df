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

# peaks_within DIR RECORD...: in each dispatch record of DIR/meta.json ("dispatch", "coast.dispatch",
# "tiles.dispatch"), every attempt that reported its worker's peak memory belongs to a job with a
# stated bound (memory_bound_bytes) and peaked at most at it, and worker_peak's summary agrees
# (docs/distribution.md, "Peak memory"). Prints each record's closest peak to its bound.
peaks_within() {
  local dir=$1
  shift
  python3 - "$dir/meta.json" "$@" <<'PY' || fail "a worker's peak memory against its job's bound in $dir: see above"
import json, sys
meta, bad = json.load(open(sys.argv[1])), 0
for rec in sys.argv[2:]:
    d = meta
    for k in rec.split("."):
        d = d[k]
    pairs = [(j["label"], a["peak_rss_bytes"], j["memory_bound_bytes"])
             for j in d["jobs"] for a in j["attempts"] if "peak_rss_bytes" in a]
    if not pairs:
        print(f"{rec}: no attempt reported its peak"); bad += 1; continue
    for label, peak, bound in pairs:
        if bound is None or peak > bound:
            print(f"{rec}: {label} peaked at {peak / 2**20:.0f} MiB, its bound {bound}"); bad += 1
    wp = d["worker_peak"]
    over = sum(1 for _, p, b in pairs if b is not None and p > b)
    if wp["over_bound"] != over or wp["attempts"] != len(pairs) or wp["bounded"] != len(pairs):
        print(f"{rec}: worker_peak {wp} disagrees with the attempts"); bad += 1
    label, peak, bound = max(pairs, key=lambda t: t[1] / (t[2] or 1))
    print(f"{rec}: {len(pairs)} attempts within their bounds; closest {label}, "
          f"{peak / 2**20:.0f} of {bound / 2**20:.0f} MiB ({peak / bound:.2f})")
sys.exit(1 if bad else 0)
PY
}
