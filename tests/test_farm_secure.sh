#!/usr/bin/env bash
# Farm security (docs/distribution.md): a bind other hosts can reach is refused without CURVE keys unless
# --insecure is given; with keys from `terrain farm-keys`, a worker holding an allowed certificate
# joins and one without keys never does.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

set +e
"$TERRAIN" farm-check --jobs 1 --work 10 --bind 'tcp://0.0.0.0:*' --out "$T/open" >"$T/open.out" 2>"$T/open.err"
rc=$?
set -e
[ $rc = 2 ] || fail "a non-loopback bind without keys: exit $rc, expected 2 (bad usage)"
[ ! -e "$T/open/.cache" ] || fail "a refused bind left an empty result store"
grep -q 'reachable from other hosts: give CURVE keys' "$T/open.err" || fail "the refusal does not say why"

# --insecure is accepted (and warned about); a worker on loopback finishes the run.
"$TERRAIN" farm-check --jobs 2 --work 10 --bind 'tcp://0.0.0.0:*' --insecure "${FAST[@]}" \
  --out "$T/insecure" >"$T/insecure.out" 2>"$T/insecure.err" &
coord=$!
track $coord
wait_for "$T/insecure.out" 'listening on tcp://' 10
port=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/insecure.out" | head -1 | sed 's/.*://')
"$WORKER" --connect "tcp://127.0.0.1:$port" --threads 1 "${FAST[@]}" 2>"$T/w0.err" || fail "insecure worker failed"
wait $coord || fail "insecure run failed"
grep -q 'insecure' "$T/insecure.err" || fail "--insecure was not warned about"

# CURVE.
"$TERRAIN" farm-keys --out "$T/keys" >"$T/keys.out" || fail "farm-keys failed"
[ "$(stat -c %a "$T/keys/coordinator.cert_secret")" = 600 ] || fail "the secret key is not private"
"$TERRAIN" farm-check --jobs 3 --work 300 --bind 'tcp://127.0.0.1:*' --curve-cert "$T/keys/coordinator.cert" \
  --curve-clients "$T/keys/workers" "${FAST[@]}" --out "$T/curve" >"$T/curve.out" 2>"$T/curve.err" &
coord=$!
track $coord
wait_for "$T/curve.out" 'listening on tcp://' 10
ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/curve.out" | head -1)
# Without keys: the handshake fails, so the coordinator never hears a word; it gives up on its own.
"$WORKER" --connect "$ep" --name plain --threads 1 "${FAST[@]}" --backoff-ms 100 --give-up-s 3 2>"$T/plain.err" &
plain=$!
track $plain
# With an ephemeral key the coordinator does not list: also shut out.
"$WORKER" --connect "$ep" --name stranger --server-key "$T/keys/coordinator.cert" --threads 1 "${FAST[@]}" \
  --backoff-ms 100 --give-up-s 3 2>"$T/stranger.err" &
stranger=$!
track $stranger
sleep 1
"$WORKER" --connect "$ep" --name trusted --server-key "$T/keys/coordinator.cert" --cert "$T/keys/worker.cert" \
  --threads 1 "${FAST[@]}" 2>"$T/trusted.err" || fail "the trusted worker did not exit 0"
wait $coord || fail "CURVE run failed"
grep -q '(CURVE)' "$T/curve.err" || fail "the coordinator did not say it uses CURVE"
grep -qE 'refused a connection on tcp://127\.0\.0\.1:[0-9]+: its key is not among --curve-clients' "$T/curve.err" ||
  fail "the coordinator did not log the stranger's CURVE refusal"
[ "$(json_get "$T/curve/farm-check.json" '[w["name"] for w in d["workers"]]')" = "['trusted']" ] ||
  fail "workers seen: $(json_get "$T/curve/farm-check.json" '[w["name"] for w in d["workers"]]')"
set +e
wait $plain
rc_plain=$?
wait $stranger
rc_stranger=$?
set -e
[ $rc_plain = 4 ] && [ $rc_stranger = 4 ] || fail "workers without a trusted key exited $rc_plain/$rc_stranger, expected 4 (gave up)"
grep -q 'no answer at all: CURVE refused this worker' "$T/stranger.err" ||
  fail "the refused worker was not told what to check: $(cat "$T/stranger.err")"
assert_clean "secure runs"
echo "ok: open bind refused, --insecure works, CURVE admits only the trusted worker"
