#!/usr/bin/env bash
# No orphan worker process, socket file or private directory after a normal end, after a run that
# fails (a job failing on 3 different workers; a worker blocklisted; a worker program that does not
# start) and after SIGINT mid-run - and each of those ends with the right status and message.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

# Normal end.
"$TERRAIN" farm-check --jobs 4 --work 500 --workers 2 "${FAST[@]}" --out "$T/ok" >"$T/ok.out" 2>"$T/ok.err" ||
  fail "normal run failed"
assert_clean "normal end"

# A job that fails everywhere fails the run with its own error, after 3 different workers.
set +e
"$TERRAIN" farm-check --jobs 4 --work 500 --workers 3 --threads 1 --fail-jobs 1 "${FAST[@]}" \
  --out "$T/fail" >"$T/fail.out" 2>"$T/fail.err"
rc=$?
set -e
[ $rc = 1 ] || fail "a failing job: exit $rc, expected 1"
grep -q 'job 1 failed 3 times (on 3 different workers): .*the spec asks this job to fail' "$T/fail.err" ||
  fail "the run's error does not carry the job's own error"
workers=$(json_get "$T/fail/farm-check.json" 'sorted({a["worker"] for a in d["jobs"][1]["attempts"]})')
[ "$(json_get "$T/fail/farm-check.json" 'len({a["worker"] for a in d["jobs"][1]["attempts"]})')" = 3 ] ||
  fail "job 1 ran on $workers, expected 3 different workers"
assert_clean "failed job"

# A worker that fails job after job is blocklisted (told to go, and not let back).
set +e
"$TERRAIN" farm-check --jobs 6 --work 200 --workers 1 --threads 1 --fail-jobs 0,1,2,3,4,5 "${FAST[@]}" \
  --out "$T/block" >"$T/block.out" 2>"$T/block.err"
rc=$?
set -e
[ $rc = 1 ] || fail "blocklist run: exit $rc, expected 1"
grep -q 'worker local-1 blocklisted after 3 failed attempts' "$T/block.err" || fail "no blocklisting logged"
[ "$(json_get "$T/block/farm-check.json" '[w["blocklisted"] for w in d["workers"] if w["name"]=="local-1"]')" = "[True]" ] ||
  fail "the record does not mark local-1 blocklisted"
assert_clean "blocklisted worker"

# Attempts that outlive --job-timeout are cancelled on the worker (CANCEL, then its FAIL) and retried.
set +e
"$TERRAIN" farm-check --jobs 2 --work 30000 --workers 2 --threads 1 --job-timeout 0.3 "${FAST[@]}" \
  --out "$T/timeout" >"$T/timeout.out" 2>"$T/timeout.err"
rc=$?
set -e
[ $rc = 1 ] || fail "job timeout: exit $rc, expected 1"
grep -qE 'failed [3-9] times .*: timed out after 0.3 s' "$T/timeout.err" || fail "no timeout failure"
grep -q 'terrain-worker local-[0-9]*: warning: job [0-9] attempt [0-9] failed after .*: cancelled' "$T/timeout.err" ||
  fail "the workers did not cancel the timed-out jobs"
assert_clean "job timeout"

# A worker program that cannot start: the run fails instead of waiting for ever.
set +e
"$TERRAIN" farm-check --jobs 2 --work 200 --workers 2 --worker-program /nonexistent/terrain-worker \
  "${FAST[@]}" --out "$T/noexe" >"$T/noexe.out" 2>"$T/noexe.err"
rc=$?
set -e
[ $rc = 1 ] || fail "missing worker program: exit $rc, expected 1"
grep -q 'every local worker has exited' "$T/noexe.err" || fail "no explanation for the missing workers"
assert_clean "missing worker program"

# SIGINT mid-run: the coordinator stops its workers, removes its directory and exits 130.
"$TERRAIN" farm-check --jobs 6 --work 20000 --workers 2 --threads 1 --verbose "${FAST[@]}" \
  --out "$T/int" >"$T/int.out" 2>"$T/int.err" &
coord=$!
track $coord
wait_for "$T/int.err" 'dispatch: job' 10
sleep 0.2
kill -INT $coord
set +e
wait $coord
rc=$?
set -e
[ $rc = 130 ] || fail "SIGINT: exit $rc, expected 130"
grep -q 'interrupted with' "$T/int.err" || fail "no interruption message"
assert_clean "SIGINT"
echo "ok: nothing left behind after a normal end, four kinds of failure and SIGINT"
