#!/usr/bin/env bash
# Hostile peers against the farm's identity and lease rules (tests/tools/tb_misbehave.c --attack),
# each beside a healthy worker on loopback TCP; every run must end byte-identical to an in-process
# reference (docs/distribution.md, "Worker identity" and "Leases"):
#  1. hijack: READY under the name of a live worker is refused; the live worker is not evicted;
#  2. poison: a peer that registers under a name and gets itself blocklisted does not shut out the
#     real worker of that name, which joins afterwards and does the work;
#  3. cycle: peers that fail every job they get and come back under new names (on one connection,
#     and on a new connection each time) cannot fail the run while a healthy worker is there;
#  4. hoard: a peer that takes a job and only heartbeats loses it at the job's deadline;
#  5. flood: 300 malformed messages from an unregistered peer give at most 5 warnings and a count;
#  6. spoof: a TCP peer that says READY as local-1 before the real local helper local-1 has joined
#     (its start is held back) is refused - a helper is known by the routing id the coordinator
#     handed it, not by its name - and the helper joins and does the work. Negative control: the
#     same client under a name that is not a helper's is accepted and given a job, so the check
#     that the spoofer got none can fail.
# Negative controls: each attack is checked to have happened (the client's own lines, the failed
# attempts in the record), so a test where the attacker did nothing fails.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

common=(--jobs 8 --work 8000)
"$TERRAIN" farm-check "${common[@]}" --workers 0 --out "$T/ref" >/dev/null 2>"$T/ref.err" || fail "reference run failed"

# start_coord NAME ARGS...: a farm-check coordinator on a wildcard loopback port; sets $coord, $ep.
start_coord() {
  local name=$1
  shift
  /usr/bin/time -f '%M' -o "$T/$name.rss" "$TERRAIN" farm-check "${common[@]}" "${FAST[@]}" --bind 'tcp://127.0.0.1:*' --threads 1 \
    --verbose --out "$T/$name" "$@" >"$T/$name.out" 2>"$T/$name.err" &
  coord=$!
  track $coord
  wait_for "$T/$name.out" 'listening on tcp://' 10
  ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/$name.out" | head -1)
}
# same_output NAME: the run's results are the reference's, and its coordinator's peak RSS stayed under
# 100 MiB (a clean run peaks near 10 MiB here).
same_output() {
  cmp -s "$T/ref/farm-check.out" "$T/$1/farm-check.out" || fail "$1: output differs from the reference"
  local rss_kib
  rss_kib=$(cat "$T/$1.rss")
  echo "$1: coordinator peak RSS $((rss_kib / 1024)) MiB"
  [ "$rss_kib" -lt $((100 * 1024)) ] || fail "$1: coordinator peak RSS $((rss_kib / 1024)) MiB, over 100 MiB"
}

# 1. Name hijack.
start_coord hj --workers 1
wait_for "$T/hj.err" "worker local-1 joined" 10
"$MISBEHAVE" --connect "$ep" --attack hijack --name local-1 --timeout 3 >"$T/hj-client.out" 2>"$T/hj-client.err"
wait $coord || fail "hijack: the run did not complete"
grep -qE 'refused READY from conn:[0-9a-f]+ under the name local-1: a live worker \(conn:[0-9a-f]+\) holds it' "$T/hj.err" ||
  fail "hijack: the refusal was not logged"
grep -q 'hijack: 0 jobs received' "$T/hj-client.out" || fail "hijack: the hijacker was given a job"
[ "$(json_get "$T/hj/farm-check.json" 'd["stats"]["lost"]')" = 0 ] || fail "hijack: the live worker lost a job (evicted)"
! grep -q 'worker local-1 gone: reconnected' "$T/hj.err" || fail "hijack: the live worker was evicted"
same_output hj
echo "ok: hijack refused, live worker kept"

# 2. Blocklist poisoning: the attacker takes the name first and gets itself blocklisted.
start_coord po --workers 0 --wait-workers 20
"$MISBEHAVE" --connect "$ep" --attack poison --name good --timeout 4 >"$T/po-client.out" 2>"$T/po-client.err"
grep -q 'refused: blocklisted' "$T/po-client.out" || fail "poison: the attacker was not blocklisted (no attack)"
"$WORKER" --connect "$ep" --name good --threads 1 --heartbeat-ms 250 --liveness 8 --quiet \
  >"$T/po-worker.out" 2>"$T/po-worker.err" &
wpid=$!
track $wpid
wait $coord || fail "poison: the run did not complete with the real worker"
rc=0
wait $wpid || rc=$?
[ $rc = 0 ] || fail "poison: the real worker 'good' exited $rc (3 = refused)"
grep -qE 'worker good blocklisted after 3 failed attempts \(its connection conn:[0-9a-f]+\)' "$T/po.err" || fail "poison: no blocklisting logged"
[ "$(json_get "$T/po/farm-check.json" 'sum(w["jobs_done"] for w in d["workers"] if w["name"]=="good")')" = 8 ] ||
  fail "poison: the real worker did not do the jobs"
same_output po
echo "ok: a blocklisted impostor did not shut out the real worker"

# 3. Name-cycling failers, one on one connection and one on a new connection each time.
start_coord cy --workers 1
"$MISBEHAVE" --connect "$ep" --attack cycle --name cyc --timeout 4 >"$T/cy1-client.out" 2>"$T/cy1-client.err" &
c1=$!
"$MISBEHAVE" --connect "$ep" --attack cycle --name cyn --new-socket --timeout 4 >"$T/cy2-client.out" 2>"$T/cy2-client.err" &
c2=$!
track $c1
track $c2
wait $c1 || true
wait $c2 || true
wait $coord || fail "cycle: the run failed although a healthy worker was present"
most=$(json_get "$T/cy/farm-check.json" \
  'max(sum(1 for a in j["attempts"] if a["outcome"].startswith("failed")) for j in d["jobs"])')
[ "$most" -ge 3 ] || fail "cycle: no job failed 3 times (most: $most); the attack did not happen"
names=$(json_get "$T/cy/farm-check.json" 'len({a["worker"] for j in d["jobs"] for a in j["attempts"] if a["outcome"].startswith("failed")})')
[ "$names" -ge 3 ] || fail "cycle: failures under only $names names"
same_output cy
echo "ok: name-cycling failers ($names names, up to $most failures of one job) did not fail the run"

# 4. A job hoarder, with a 3 s deadline.
start_coord ho --workers 1 --job-timeout 3
"$MISBEHAVE" --connect "$ep" --attack hoard --timeout 8 >"$T/ho-client.out" 2>"$T/ho-client.err" &
c1=$!
track $c1
wait $coord || fail "hoard: the run did not complete"
kill $c1 2>/dev/null || true
grep -q 'got job' "$T/ho-client.out" || fail "hoard: the hoarder never got a job (no attack)"
grep -qE 'job [0-9]+ attempt [0-9]+ on attacker: timed out after 3\.0 s' "$T/ho.err" || fail "hoard: no timeout logged"
same_output ho
[ "$(json_get "$T/hj/farm-check.json" 'sorted({j["deadline_s"] >= 60 for j in d["jobs"]})')" = "[True]" ] ||
  fail "farm-check jobs have no default deadline"
[ "$(json_get "$T/ho/farm-check.json" 'sorted({j["deadline_s"] for j in d["jobs"]})')" = "[3]" ] ||
  fail "--job-timeout 3 did not replace every job's deadline"
echo "ok: a hoarded job was taken back at its deadline"
# 5. A flood of malformed messages.
start_coord fl --workers 1
"$MISBEHAVE" --connect "$ep" --attack flood --timeout 3 >"$T/fl-client.out" 2>"$T/fl-client.err"
wait $coord || fail "flood: the run did not complete"
grep -q 'flood: 0 jobs received, 300 answers sent' "$T/fl-client.out" || fail "flood: the flood was not sent (no attack)"
shown=$(grep -c 'rejected a message from unknown peer' "$T/fl.err" || true)
[ "$shown" -ge 1 ] && [ "$shown" -le 10 ] || fail "flood: $shown warnings shown for 300 bad messages, expected 1..10"
grep -qE 'more than 5 warnings about one peer within 10 s' "$T/fl.err" || fail "flood: the rate limit was not announced"
grep -qE '[0-9]+ warnings about unregistered peers not shown' "$T/fl.err" || fail "flood: the count of hidden warnings was not logged"
same_output fl
echo "ok: 300 malformed messages, $shown warnings shown and the rest counted"

# 5b. A connection storm: 300 peers join and leave one after another while the healthy worker works
# (more work, so the run outlasts the storm): the joined/gone lines are S_PEER_LINES (10) a 10 s
# window (coordinator/farm/loop.c, s_peer_event), the rest counted in one line, and the run ends
# with every job done. Negative control: the storm happened (the client's count, and the coordinator
# heard more peers than it printed).
start_coord st --workers 1 --work 16000
wait_for "$T/st.err" "worker local-1 joined" 10
"$MISBEHAVE" --connect "$ep" --attack storm --name storm --timeout 20 >"$T/st-client.out" 2>"$T/st-client.err"
wait $coord || fail "storm: the run did not complete"
grep -q 'storm: 0 jobs received, 300 answers sent' "$T/st-client.out" || fail "storm: the storm was not sent (no attack)"
shown=$(grep -cE 'worker storm-[0-9]+ (joined|gone)' "$T/st.err" || true)
counted=$(grep -oE '[0-9]+ more workers joined and [0-9]+ left' "$T/st.err" | awk '{s += $1 + $6} END {print s + 0}')
echo "storm: $shown joined/gone lines shown, $counted counted"
[ "$counted" -ge 100 ] || fail "storm: only $counted joins and departures counted (the storm did not reach the coordinator?)"
[ "$shown" -le 40 ] || fail "storm: $shown joined/gone lines for 300 peers (expected at most 10 a 10 s window)"
[ "$(json_get "$T/st/farm-check.json" 'sum(1 for j in d["jobs"] if j["done"])')" = 8 ] || fail "storm: not every job done"
echo "ok: a storm of 300 connections, $shown lines shown and $counted counted"

# 6. local-N spoof: the local helper starts 3 s late (a wrapper), the spoofer says READY first.
printf '#!/bin/sh\nsleep 3\nexec "%s" "$@"\n' "$WORKER" >"$T/slow-worker"
chmod +x "$T/slow-worker"
TB_WORKER_PROGRAM=$T/slow-worker start_coord sp --workers 1
"$MISBEHAVE" --connect "$ep" --attack hijack --name local-1 --timeout 2 >"$T/sp-client.out" 2>"$T/sp-client.err"
wait $coord || fail "spoof: the run did not complete"
grep -qE 'refused READY from conn:[0-9a-f]+ under the name local-1: the names local-N belong to this coordinator' "$T/sp.err" ||
  fail "spoof: the impostor's READY was not refused"
grep -q 'hijack: 0 jobs received' "$T/sp-client.out" || fail "spoof: the impostor was given a job"
refused_line=$(grep -nE 'refused READY .* under the name local-1' "$T/sp.err" | head -1 | cut -d: -f1)
joined_line=$(grep -n 'worker local-1 joined' "$T/sp.err" | head -1 | cut -d: -f1)
[ -n "$joined_line" ] && [ "$refused_line" -lt "$joined_line" ] ||
  fail "spoof: the impostor did not come before the real helper (no attack)"
[ "$(json_get "$T/sp/farm-check.json" '[(w["local"], w["jobs_done"]) for w in d["workers"]]')" = "[(True, 8)]" ] ||
  fail "spoof: the record's workers are not just the real helper with all 8 jobs: $(json_get "$T/sp/farm-check.json" 'd["workers"]')"
same_output sp
# the negative control: the same client, same moment, under a name no helper has, gets work
TB_WORKER_PROGRAM=$T/slow-worker start_coord spc --workers 1
"$MISBEHAVE" --connect "$ep" --attack hijack --name remote-1 --timeout 2 >"$T/spc-client.out" 2>"$T/spc-client.err"
wait $coord || fail "spoof control: the run did not complete"
grep -q 'got job' "$T/spc-client.out" || fail "spoof control: an accepted client got no job, so the spoof check proves nothing"
same_output spc
echo "ok: a TCP peer calling itself local-1 is refused; the real helper did the work"
assert_clean "after the attacks"
