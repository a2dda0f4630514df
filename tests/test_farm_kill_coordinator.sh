#!/usr/bin/env bash
# The coordinator killed with SIGKILL mid-run: its local workers die with it (PR_SET_PDEATHSIG), and
# the same command run again computes only the jobs whose results were not yet stored, ending with
# output identical to an undisturbed run. The directory the killed coordinator left is swept.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

common=(--jobs 8 --work 3000 --workers 2 --threads 1 "${FAST[@]}" --out "$T/run")
"$TERRAIN" farm-check --jobs 8 --work 3000 --workers 0 --out "$T/ref" >/dev/null 2>"$T/ref.err" ||
  fail "reference run failed"

"$TERRAIN" farm-check "${common[@]}" >"$T/first.out" 2>"$T/first.err" &
coord=$!
track $coord
for ((i = 0; i < 400; i++)); do
  n=$( (find "$T/run/.cache" -name '*.tbr' 2>/dev/null || true) | wc -l)
  [ "$n" -ge 3 ] && break
  sleep 0.05
done
{ kill -9 $coord && wait $coord; } 2>/dev/null || true
stored=$(find "$T/run/.cache" -name '*.tbr' | wc -l)
[ "$stored" -ge 1 ] && [ "$stored" -lt 8 ] || fail "killed with $stored of 8 results stored; the test needs some but not all"
# The orphaned workers must go on their own (they got SIGTERM when their parent died).
for p in $(pgrep -f -- "$T/tmp" || true); do
  wait_gone "$p" 5 || fail "worker $p outlived its coordinator"
done
left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'terrain-*' | wc -l)
[ "$left" = 1 ] || fail "expected the killed coordinator's directory to remain until the rerun, found $left"

"$TERRAIN" farm-check "${common[@]}" >"$T/second.out" 2>"$T/second.err" || fail "the rerun failed"
ran=$(json_get "$T/run/farm-check.json" "d['stats']['ran']")
reused=$(json_get "$T/run/farm-check.json" "d['stats']['from_store']")
[ "$reused" = "$stored" ] || fail "rerun reused $reused results, $stored were stored"
[ "$ran" = $((8 - stored)) ] || fail "rerun computed $ran jobs, expected $((8 - stored))"
grep -q "($ran ran, $stored from the store" "$T/second.out" || fail "summary line does not say what ran"
cmp "$T/ref/farm-check.out" "$T/run/farm-check.out" || fail "final output differs from an undisturbed run"
assert_clean "after the rerun"
echo "ok: killed with $stored of 8 stored; the rerun computed $ran; identical output"
