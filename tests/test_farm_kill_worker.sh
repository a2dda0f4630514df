#!/usr/bin/env bash
# A worker killed with SIGKILL in the middle of a job: the run completes, the record shows the job's
# first attempt lost and its second attempt ok, and the output is byte-identical to an undisturbed run.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

common=(--jobs 4 --work 8000 "${FAST[@]}")
"$TERRAIN" farm-check "${common[@]}" --workers 0 --out "$T/ref" >/dev/null 2>"$T/ref.err" || fail "reference run failed"

"$TERRAIN" farm-check "${common[@]}" --workers 2 --threads 1 --verbose --out "$T/run" >"$T/run.out" 2>"$T/run.err" &
coord=$!
track $coord
wait_for "$T/run.err" 'dispatch: job [0-9]+ .* attempt 1 to local-[0-9]+ \(pid [0-9]+\)' 10
line=$(grep -m1 -E 'dispatch: job [0-9]+ .* attempt 1 to local-[0-9]+ \(pid [0-9]+\)' "$T/run.err")
job=$(sed -E 's/.*dispatch: job ([0-9]+) .*/\1/' <<<"$line")
pid=$(sed -E 's/.*\(pid ([0-9]+)\).*/\1/' <<<"$line")
sleep 0.3
kill -0 "$pid" || fail "worker $pid already gone before the kill"
kill -9 "$pid"
wait $coord || fail "the run did not complete after a worker was killed"

cmp "$T/ref/farm-check.out" "$T/run/farm-check.out" || fail "output differs from the undisturbed run"
outcomes=$(json_get "$T/run/farm-check.json" "[a['outcome'].split(':')[0] for a in d['jobs'][$job]['attempts']]")
[ "$outcomes" = "['lost', 'ok']" ] || fail "job $job attempts are $outcomes, expected ['lost', 'ok']"
[ "$(json_get "$T/run/farm-check.json" "d['jobs'][$job]['attempts'][1]['attempt']")" = 2 ] || fail "no attempt 2"
[ "$(json_get "$T/run/farm-check.json" 'd["stats"]["lost"]')" = 1 ] || fail "more than the killed attempt was lost"
grep -q "job $job attempt 1 on local-[0-9]*: lost: process killed by signal 9" "$T/run.err" ||
  fail "the loss was not logged"
assert_clean "after the killed worker"
echo "ok: job $job lost its worker (pid $pid), ran again as attempt 2, same output"
