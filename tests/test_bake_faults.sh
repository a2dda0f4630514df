#!/usr/bin/env bash
# What can go wrong during a bake, against an undisturbed in-process reference (the 10 km demo
# planet, 4 regions, 100 steps; region 2 holds 70 % of the work and runs a couple of seconds):
#  1. a local worker killed with SIGKILL in the middle of region 2: the bake completes, meta.json
#     shows region 2's first attempt lost and its second attempt ok, and the heightmap is identical;
#  2. the coordinator killed with SIGKILL mid-bake: its workers die with it, and the same command run
#     again solves exactly the regions whose results were not stored (by key) and ends identical;
#  3. a misbehaving client (tests/tools/tb_misbehave.c) against `terrain bake --bind` on loopback TCP:
#     random bytes, a truncated frame, another build id, a RESULT for a job not leased to it and a
#     blob whose checksum lies are each logged and rejected, and the bake still completes identical.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

small=(--circumference-km 10 --steps 100 --no-tiles) # tiles: test_bake_tiles.sh
bake "$T/ref" "${small[@]}" --workers 0

# 1. SIGKILL a worker in the middle of region 2.
"$TERRAIN" bake "${small[@]}" --workers 2 --threads 1 --verbose --out "$T/kw" >"$T/kw.out" 2>"$T/kw.err" &
coord=$!
track $coord
re='dispatch: job [0-9]+ \(region 2\) attempt 1 to local-[0-9]+ \(pid [0-9]+\)'
wait_for "$T/kw.err" "$re" 20
pid=$(grep -m1 -oE "$re" "$T/kw.err" | sed -E 's/.*\(pid ([0-9]+)\).*/\1/')
job=$(grep -m1 -oE "$re" "$T/kw.err" | sed -E 's/dispatch: job ([0-9]+) .*/\1/')
wait_for "$T/kw.err" "job $job attempt 1 \\(region, [0-9]+-byte spec\\) started" 10
sleep 0.2
! grep -q 'region 2 attempt 1 done' "$T/kw.err" || fail "region 2 finished before the kill; the test needs it running"
kill -9 "$pid" || fail "worker $pid already gone before the kill"
wait $coord || fail "the bake did not complete after a worker was killed"
same_height "$T/ref" "$T/kw" "a bake that lost a worker"
outcomes=$(json_get "$T/kw/meta.json" \
  '[(a["attempt"], a["outcome"].split(":")[0]) for j in d["dispatch"]["jobs"] if j["label"] == "region 2" for a in j["attempts"]]')
[ "$outcomes" = "[(1, 'lost'), (2, 'ok')]" ] || fail "region 2 attempts are $outcomes, expected lost then ok as attempt 2"
[ "$(dispatch_stat "$T/kw" lost)" = 1 ] || fail "$(dispatch_stat "$T/kw" lost) attempts lost, expected only the killed one"
grep -q 'region 2 attempt 1 on local-[0-9]*: lost: process killed by signal 9' "$T/kw.err" || fail "the loss was not logged"
assert_clean "after the killed worker"
echo "ok: region 2 lost its worker (pid $pid), ran again as attempt 2, same heightmap"

# 2. SIGKILL the coordinator once some regions are stored, then rerun the same command.
ck=("${small[@]}" --workers 2 --threads 1 --out "$T/ck")
"$TERRAIN" bake "${ck[@]}" >"$T/ck1.out" 2>"$T/ck1.err" &
coord=$!
track $coord
for ((i = 0; i < 600; i++)); do
  n=$( (find "$T/ck/.cache" -name '*.tbr' 2>/dev/null || true) | wc -l)
  [ "$n" -ge 1 ] && break
  sleep 0.05
done
{ kill -9 $coord && wait $coord; } 2>/dev/null || true
stored_keys=$(find "$T/ck/.cache" -name '*.tbr' -printf '%f\n' | sed 's/\.tbr$//' | sort | tr '\n' ' ')
stored=$(wc -w <<<"$stored_keys")
[ "$stored" -ge 1 ] && [ "$stored" -lt 4 ] || fail "killed with $stored of 4 results stored; the test needs some but not all"
[ ! -e "$T/ck/meta.json" ] || fail "a killed bake left a meta.json"
for p in $(pgrep -f -- "$T/tmp" || true); do
  wait_gone "$p" 5 || fail "worker $p outlived its coordinator"
done
"$TERRAIN" bake "${ck[@]}" >"$T/ck2.out" 2>"$T/ck2.err" || fail "the rerun failed"
reused_keys=$(json_get "$T/ck/meta.json" '" ".join(sorted(j["key"] for j in d["dispatch"]["jobs"] if j["from_store"])) + " "')
[ "$reused_keys" = "$stored_keys" ] || fail "the rerun reused [$reused_keys], the store held [$stored_keys]"
[ "$(dispatch_stat "$T/ck" ran)" = $((4 - stored)) ] ||
  fail "the rerun solved $(dispatch_stat "$T/ck" ran) regions, expected $((4 - stored))"
grep -q "($((4 - stored)) solved, $stored from the store)" "$T/ck2.out" || fail "the rerun does not say what it solved"
same_height "$T/ref" "$T/ck" "the rerun after a killed coordinator"
assert_clean "after the rerun"
echo "ok: coordinator killed with $stored of 4 regions stored; the rerun solved only $(ran_labels "$T/ck"); same heightmap"

# 3. A misbehaving client beside one honest local worker, on loopback TCP.
"$TERRAIN" bake "${small[@]}" --bind 'tcp://127.0.0.1:*' --workers 1 --threads 1 --out "$T/mb" \
  >"$T/mb.out" 2>"$T/mb.err" &
coord=$!
track $coord
wait_for "$T/mb.out" 'listening for workers on tcp://' 20
ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/mb.out" | head -1)
"$MISBEHAVE" --connect "$ep" --timeout 15 >"$T/client.out" 2>"$T/client.err" || {
  cat "$T/client.out" >&2
  fail "the misbehaving client could not do its steps"
}
wait $coord || fail "the bake did not complete beside the misbehaving client"
expect() { grep -qE -- "$1" "$T/mb.err" || fail "coordinator log has no line matching: $1"; }
expect 'rejected a message from unknown peer [0-9a-f]+: malformed protocol message: not a terrain-bake message'
expect 'rejected a message from unknown peer [0-9a-f]+: malformed READY message'
expect 'refused worker other-build: build id 0\.0\.0\+not-this-build differs'
expect 'rejected RESULT for job [0-9]+ attempt [0-9]+ from misbehave: not leased to it'
expect 'rejected the result of region [0-9]+ attempt [0-9]+ from misbehave: blob: XXH3 of the'
grep -q 'step 3: refused: build id' "$T/client.out" || fail "the client was not told it was refused"
[ "$(dispatch_stat "$T/mb" workers_refused)" = 1 ] || fail "the refusal was not counted"
corrupt=$(json_get "$T/mb/meta.json" \
  'sum(1 for j in d["dispatch"]["jobs"] for a in j["attempts"] if a["worker"] == "misbehave" and a["outcome"].startswith("corrupt result"))')
[ "$corrupt" = 1 ] || fail "the record shows $corrupt corrupt attempts by the client, expected 1"
[ "$(json_get "$T/mb/meta.json" 'all(j["worker"] != "misbehave" for j in d["dispatch"]["jobs"])')" = True ] ||
  fail "a result from the misbehaving client was accepted"
same_height "$T/ref" "$T/mb" "the bake beside a misbehaving client"
assert_clean "after the misbehaving client"
echo "ok: every bad message logged and rejected, the other build refused, the bake identical"
