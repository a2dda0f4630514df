#!/usr/bin/env bash
# A misbehaving client (tests/tools/tb_misbehave.c) against a farm coordinator on loopback TCP: random
# bytes, a truncated frame, a RESULT for a job not leased to it and a blob whose checksum lies are each
# logged and rejected, another build id is refused, and the run still completes with the right output.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

common=(--jobs 6 --work 4000)
"$TERRAIN" farm-check "${common[@]}" --workers 0 --out "$T/ref" >/dev/null 2>"$T/ref.err" || fail "reference run failed"

"$TERRAIN" farm-check "${common[@]}" "${FAST[@]}" --bind 'tcp://127.0.0.1:*' --workers 1 --threads 1 \
  --out "$T/run" >"$T/run.out" 2>"$T/run.err" &
coord=$!
track $coord
wait_for "$T/run.out" 'listening on tcp://' 10
ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/run.out" | head -1)
"$MISBEHAVE" --connect "$ep" --timeout 8 >"$T/client.out" 2>"$T/client.err" || {
  cat "$T/client.out" >&2
  fail "the misbehaving client could not do its steps"
}
wait $coord || fail "the run did not complete"

expect() { grep -qE -- "$1" "$T/run.err" || fail "coordinator log has no line matching: $1"; }
expect 'rejected a message from unknown peer [0-9a-f]+: malformed protocol message: not a terrain-bake message'
expect 'rejected a message from unknown peer [0-9a-f]+: malformed READY message'
expect 'refused worker other-build: build id 0\.0\.0\+not-this-build differs'
expect 'rejected RESULT for job [0-9]+ attempt [0-9]+ from misbehave: not leased to it'
expect 'rejected the result of job [0-9]+ attempt [0-9]+ from misbehave: blob: XXH3 of the'
grep -q 'step 3: refused: build id' "$T/client.out" || fail "the client was not told it was refused"

cmp "$T/ref/farm-check.out" "$T/run/farm-check.out" || fail "output differs from the reference"
[ "$(json_get "$T/run/farm-check.json" 'd["stats"]["workers_refused"]')" = 1 ] || fail "refusal not counted"
corrupt=$(json_get "$T/run/farm-check.json" \
  'sum(1 for j in d["jobs"] for a in j["attempts"] if a["worker"]=="misbehave" and a["outcome"].startswith("corrupt result"))')
[ "$corrupt" = 1 ] || fail "the record shows $corrupt corrupt attempts by the client, expected 1"
[ "$(json_get "$T/run/farm-check.json" 'all(j["worker"] != "misbehave" for j in d["jobs"])')" = True ] ||
  fail "a result from the misbehaving client was accepted"
assert_clean "after the misbehaving client"
echo "ok: every bad message logged and rejected, other build refused, output correct"
