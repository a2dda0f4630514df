#!/usr/bin/env bash
# Paranoid Pirate end to end over loopback TCP: a worker started before its coordinator keeps trying
# and joins when it comes up; when that coordinator is killed mid-run the worker drops its job, backs
# off and reconnects to the replacement started on the same port, which reuses the stored results,
# finishes the run and dismisses the worker (exit 0). The output equals an undisturbed run's.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

jobs=(--jobs 6 --work 4000)
"$TERRAIN" farm-check "${jobs[@]}" --workers 0 --out "$T/ref" >/dev/null 2>"$T/ref.err" || fail "reference run failed"

# Find a free port by letting a first coordinator pick one, then reuse it for both real ones.
"$TERRAIN" farm-check --jobs 1 --work 1 --bind 'tcp://127.0.0.1:*' --workers 1 --out "$T/probe" >"$T/probe.out" 2>&1 ||
  fail "probe run failed"
port=$(grep -oE 'tcp://127.0.0.1:[0-9]+' "$T/probe.out" | head -1 | sed 's/.*://')
ep="tcp://127.0.0.1:$port"

# The worker first: nobody is listening yet.
"$WORKER" --connect "$ep" --name pirate --threads 1 "${FAST[@]}" --backoff-ms 100 --backoff-max-ms 400 \
  2>"$T/worker.err" &
worker=$!
track $worker
sleep 3 # longer than the FAST liveness window (2 s), so the worker has given one attempt up
kill -0 $worker || fail "the worker gave up while no coordinator was there"
grep -q 'reconnecting in' "$T/worker.err" || fail "the worker did not retry while alone"

run=(farm-check "${jobs[@]}" --bind "$ep" "${FAST[@]}" --out "$T/run")
"$TERRAIN" "${run[@]}" >"$T/first.out" 2>"$T/first.err" &
coord=$!
track $coord
for ((i = 0; i < 400; i++)); do
  n=$( (find "$T/run/.cache" -name '*.tbr' 2>/dev/null || true) | wc -l)
  [ "$n" -ge 2 ] && break
  sleep 0.05
done
{ kill -9 $coord && wait $coord; } 2>/dev/null || true
stored=$(find "$T/run/.cache" -name '*.tbr' | wc -l)
[ "$stored" -lt 6 ] || fail "all results were in before the kill; the test needs a mid-run kill"
grep -q 'worker pirate joined' "$T/first.err" || fail "the early worker never joined the first coordinator"

"$TERRAIN" "${run[@]}" >"$T/second.out" 2>"$T/second.err" || fail "the replacement coordinator failed"
wait $worker || fail "the worker did not exit 0 when dismissed"
grep -q 'no word from the coordinator' "$T/worker.err" || fail "the worker never noticed its coordinator die"
grep -q 'worker pirate joined' "$T/second.err" || fail "the worker did not rejoin the replacement"
[ "$(json_get "$T/run/farm-check.json" 'd["stats"]["from_store"]')" = "$stored" ] || fail "stored results not reused"
cmp "$T/ref/farm-check.out" "$T/run/farm-check.out" || fail "output differs from an undisturbed run"
assert_clean "reconnect"
echo "ok: the worker waited, joined, survived its coordinator's death and finished with the next one"
