#!/usr/bin/env bash
# The same jobs give byte-identical output in-process, through 1 and 3 local workers (ipc://) and
# through 2 farm workers over loopback TCP - with results big enough to travel in several chunks.
# Farm workers exit 0 when the coordinator says the run is done. Nothing is left behind.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

common=(--jobs 6 --work 1500 --result-kib 300 --chunk-kib 64 "${FAST[@]}")

"$TERRAIN" farm-check "${common[@]}" --workers 0 --out "$T/inproc" >"$T/inproc.out" 2>"$T/inproc.err" ||
  fail "in-process run failed"
"$TERRAIN" farm-check "${common[@]}" --workers 1 --threads 2 --verbose --out "$T/one" >"$T/one.out" 2>"$T/one.err" ||
  fail "1-worker run failed"
# Largest first: job i does (4 + i % 4) / 4 units of work, so one worker takes 3 2 1 5 0 4.
order=$(grep -oE 'dispatch: job [0-9]+' "$T/one.err" | awk '{printf "%s ", $3}')
[ "$order" = "3 2 1 5 0 4 " ] || fail "dispatch order '$order', expected largest first '3 2 1 5 0 4 '"
"$TERRAIN" farm-check "${common[@]}" --workers 3 --threads 1 --out "$T/three" >"$T/three.out" 2>"$T/three.err" ||
  fail "3-worker run failed"
assert_clean "local runs"

# Farm mode on loopback TCP: the coordinator binds a free port, two workers connect to it.
"$TERRAIN" farm-check "${common[@]}" --bind 'tcp://127.0.0.1:*' --out "$T/farm" >"$T/farm.out" 2>"$T/farm.err" &
coord=$!
track $coord
wait_for "$T/farm.out" 'listening on tcp://' 10
ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/farm.out" | head -1)
"$WORKER" --connect "$ep" --name farm-a --threads 1 "${FAST[@]}" 2>"$T/wa.err" &
wa=$!
"$WORKER" --connect "$ep" --name farm-b --threads 1 "${FAST[@]}" 2>"$T/wb.err" &
wb=$!
track $wa
track $wb
wait $coord || fail "farm run failed"
wait $wa || fail "farm worker a did not exit 0 on DISCONNECT"
wait $wb || fail "farm worker b did not exit 0 on DISCONNECT"

for run in one three farm; do
  cmp "$T/inproc/farm-check.out" "$T/$run/farm-check.out" || fail "$run output differs from in-process"
done
[ "$(json_get "$T/three/farm-check.json" 'd["stats"]["workers_seen"]')" = 3 ] || fail "3 workers did not all join"
[ "$(json_get "$T/farm/farm-check.json" 'sorted({j["worker"] for j in d["jobs"]})')" = "['farm-a', 'farm-b']" ] ||
  echo "note: one farm worker took every job" >&2
# Chunked: a 300 KiB result in 64 KiB chunks.
grep -q "6 jobs verified" "$T/farm.out" || fail "farm results not verified"
# Negative control: another seed gives another file.
"$TERRAIN" farm-check "${common[@]}" --workers 0 --seed 2 --out "$T/seed2" >/dev/null 2>&1 || fail "seed 2 run failed"
! cmp -s "$T/inproc/farm-check.out" "$T/seed2/farm-check.out" || fail "another seed gave the same output"
assert_clean "farm run"

# A job six times longer than the liveness window (1.2 s against 2 x 100 ms) is never taken for
# dead: the worker heartbeats from its I/O thread while the job thread computes.
"$TERRAIN" farm-check --jobs 1 --work 30000 --workers 1 --threads 1 --heartbeat-ms 100 --liveness 2 \
  --out "$T/long" >"$T/long.out" 2>"$T/long.err" || fail "long job run failed"
[ "$(json_get "$T/long/farm-check.json" '(d["stats"]["lost"], d["stats"]["attempts"])')" = "(0, 1)" ] ||
  fail "a long job was taken for dead: $(json_get "$T/long/farm-check.json" 'd["jobs"][0]["attempts"]')"
[ "$(json_get "$T/long/farm-check.json" 'd["jobs"][0]["seconds"] > 0.4')" = True ] ||
  fail "the long job was not longer than the liveness window; the check proves nothing"
assert_clean "long job"
echo "ok: in-process, 1 worker, 3 workers and 2 farm workers agree byte for byte; a long job stays alive"
