#!/usr/bin/env bash
# Fencing (the OpenCue trap: one frame run on two hosts): a worker frozen mid-job with SIGSTOP looks
# dead, so its job runs again elsewhere; when it wakes and sends the first attempt's result, that
# result is rejected, not used, and the output is exactly an undisturbed run's. The record shows the
# first attempt lost and the second one done by the other worker.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

# Enough jobs that the healthy worker is still busy when the woken one finishes its stale attempt,
# even when other tests load both cores (with 8, the run once ended before the stale RESULT came).
common=(--jobs 32 --work 5000)
"$TERRAIN" farm-check "${common[@]}" --workers 0 --out "$T/ref" >/dev/null 2>"$T/ref.err" || fail "reference run failed"

# Liveness 10 x 200 ms: the woken worker has two seconds to finish and send its stale result.
"$TERRAIN" farm-check "${common[@]}" --heartbeat-ms 200 --liveness 10 --workers 2 --threads 1 --verbose --out "$T/run" \
  >"$T/run.out" 2>"$T/run.err" &
coord=$!
track $coord
wait_for "$T/run.err" 'dispatch: job [0-9]+ .* attempt 1 to local-[0-9]+ \(pid [0-9]+\)' 10
line=$(grep -m1 -E 'dispatch: job [0-9]+ .* attempt 1 to local-[0-9]+ \(pid [0-9]+\)' "$T/run.err")
job=$(sed -E 's/.*dispatch: job ([0-9]+) .*/\1/' <<<"$line")
name=$(sed -E 's/.* to (local-[0-9]+) .*/\1/' <<<"$line")
pid=$(sed -E 's/.*\(pid ([0-9]+)\).*/\1/' <<<"$line")
sleep 0.2
kill -STOP "$pid"
# Frozen for longer than the liveness window: the coordinator re-dispatches.
wait_for "$T/run.err" "job $job attempt 1 on $name: lost: silent for" 10
kill -CONT "$pid"
wait $coord || fail "the run did not complete"

cmp "$T/ref/farm-check.out" "$T/run/farm-check.out" || fail "output differs from the undisturbed run"
attempts=$(json_get "$T/run/farm-check.json" "[(a['worker'], a['outcome'].split(':')[0]) for a in d['jobs'][$job]['attempts']]")
[ "$(json_get "$T/run/farm-check.json" "d['jobs'][$job]['attempts'][0]['outcome'].startswith('lost: silent')")" = True ] ||
  fail "job $job attempts: $attempts"
[ "$(json_get "$T/run/farm-check.json" "d['jobs'][$job]['worker'] != '$name' or len(d['jobs'][$job]['attempts']) > 2")" = True ] ||
  fail "the frozen worker's result was used: $attempts"
# The woken worker finished attempt 1 and sent it: refused, because that lease is gone - as from an
# unknown peer, or, if the worker re-registered first, as not leased to it.
grep -qE "rejected RESULT (from unknown peer [0-9a-f]+: not registered|for job $job attempt 1 from [^:]+: not leased)" "$T/run.err" ||
  fail "the frozen worker's stale RESULT never arrived or was not rejected"
assert_clean "stale attempt"
echo "ok: job $job's frozen attempt was fenced off; attempts $attempts; identical output"
