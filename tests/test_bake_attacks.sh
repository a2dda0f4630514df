#!/usr/bin/env bash
# Wrong results against `terrain bake` (docs/distribution.md, "Verifying results"), on the 10 km demo
# planet at 100 steps, each beside a healthy local worker on loopback TCP, against an in-process
# reference:
#  1. replay: a peer answers each job with a valid stored result of the same region made at 50 steps;
#  2. other-region: ... with a stored result of another region;
#  3. oversize: a peer announces a 2 GiB result and streams 256 MiB of it;
#  4. a bad entry in the store (a result of another spec under a region's key, a FIFO under another's)
#     is recomputed, never fatal and never hanging.
# In every attacked bake the coordinator's peak RSS (/usr/bin/time) stays under 160 MiB (a clean farm
# bake of this planet peaks near 55 MiB here). Each ends with the reference's heightmap, and the store it leaves is read back by an in-process
# bake that must take every region from it and match the reference. Negative controls: the attacker
# must have sent its results (its own output), the replayed entries must not be the reference's, and
# the poisoned entry must differ from the good one before the rerun.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

# No tiles: the attacks are on region results, and a farm bake's tiles phase (which now runs on the
# farm) holds tile results of ~50 MB each, far above the RSS bound that is about the attacks; the
# tiles on a farm have their own test (test_farm_phases.sh).
small=(--circumference-km 10 --steps 100 --no-tiles)
bake "$T/ref" "${small[@]}" --workers 0
bake "$T/other" --circumference-km 10 --steps 50 --no-tiles --workers 0
ref_keys=$(cd "$T/ref/.cache" && ls | sort | tr '\n' ' ')

# attacked NAME ATTACK ARGS...: a farm bake with one local worker and the attacker beside it.
attacked() {
  local name=$1 attack=$2
  shift 2
  /usr/bin/time -f '%M' -o "$T/$name.rss" "$TERRAIN" bake "${small[@]}" "${FAST[@]}" \
    --bind 'tcp://127.0.0.1:*' --workers 1 --threads 1 --verbose --out "$T/$name" \
    >"$T/$name.out" 2>"$T/$name.err" &
  coord=$!
  track $coord
  wait_for "$T/$name.out" 'listening for workers on tcp://' 20
  ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/$name.out" | head -1)
  "$MISBEHAVE" --connect "$ep" --attack "$attack" --name "$attack" --timeout 60 "$@" \
    >"$T/$name-client.out" 2>"$T/$name-client.err" &
  client=$!
  track $client
  wait $coord || fail "$name: the bake did not complete beside the attacker"
  wait $client || fail "$name: the attacker failed"
  same_height "$T/ref" "$T/$name" "$name"
  rss_kib=$(cat "$T/$name.rss")
  echo "$name: coordinator peak RSS $((rss_kib / 1024)) MiB"
  [ "$rss_kib" -lt $((160 * 1024)) ] || fail "$name: coordinator peak RSS $((rss_kib / 1024)) MiB, over the 160 MiB bound"
}

# store_is_good DIR WHAT: an in-process bake from DIR's store takes all 4 regions from it and matches.
store_is_good() {
  rm -rf "$T/$1-check"
  mkdir -p "$T/$1-check"
  cp -r "$T/$1/.cache" "$T/$1-check/.cache"
  bake "$T/$1-check" "${small[@]}" --workers 0
  [ "$(dispatch_stat "$T/$1-check" from_store)" = 4 ] && [ "$(dispatch_stat "$T/$1-check" corrupt_store)" = 0 ] ||
    fail "$2: the store left behind holds a bad entry"
  same_height "$T/ref" "$T/$1-check" "$2 (from its store)"
}

# 1. Results of the same regions at another step count.
attacked rp replay --from "$T/other/.cache"
sent=$(grep -c 'sent a replayed result' "$T/rp-client.out" || true)
[ "$sent" -ge 1 ] || fail "replay: the attacker sent nothing (no attack)"
grep -q 'picked .* (50 steps' "$T/rp-client.out" || fail "replay: the attacker did not replay a 50-step result"
for k in $(grep -oE 'picked [0-9a-f]+' "$T/rp-client.out" | cut -d' ' -f2); do
  case " $ref_keys " in *" $k.tbr "*) fail "replay: the replayed entry $k is the reference's" ;; esac
done
n=$(grep -cE 'rejected the result of region [0-9]+ attempt [0-9]+ from replay: region result answers spec [0-9a-f]+ \(50 steps\), not this job' "$T/rp.err" || true)
[ "$n" = "$sent" ] || fail "replay: $sent replayed results sent, $n rejected"
deadlines=$(json_get "$T/rp/meta.json" 'sorted({j["deadline_s"] >= 600 for j in d["dispatch"]["jobs"]})')
[ "$deadlines" = "[True]" ] || fail "replay: the region jobs have no default deadline of at least 600 s"
store_is_good rp "replay"
echo "ok: $sent replayed 50-step results rejected; same heightmap, clean store"

# 2. Another region's result.
attacked orr other-region --from "$T/ref/.cache"
sent=$(grep -c 'sent a replayed result' "$T/orr-client.out" || true)
[ "$sent" -ge 1 ] || fail "other-region: the attacker sent nothing (no attack)"
n=$(grep -cE 'rejected the result of region [0-9]+ attempt [0-9]+ from other-region: region result answers spec [0-9a-f]+ \(100 steps\)' "$T/orr.err" || true)
[ "$n" = "$sent" ] || fail "other-region: $sent results of other regions sent, $n rejected"
store_is_good orr "other-region"
echo "ok: $sent results of other regions rejected; same heightmap, clean store"

# 3. An oversized announced result (the attacker streams 256 MiB: buffered, it would break the bound).
attacked ov oversize
grep -q 'announced a 2147483648-byte result and streamed 256 MiB' "$T/ov-client.out" ||
  fail "oversize: the attacker did not stream its result (no attack)"
grep -qE 'rejected a RESULT chunk from oversize: RESULT job [0-9]+ attempt [0-9]+ chunk 0 of 2048: announces 2147483648 bytes, more than the [0-9]+ allowed' "$T/ov.err" ||
  fail "oversize: the announcement was not refused"
store_is_good ov "oversize"
echo "ok: a 2 GiB announcement refused at chunk 0; peak RSS $((rss_kib / 1024)) MiB"

# 4. Bad entries already in the store: another spec's result under one key, a FIFO under another.
mkdir -p "$T/sp"
cp -r "$T/ref/.cache" "$T/sp/.cache"
# (region entries only: the store also holds the results of later phases' jobs)
set -- $(json_get "$T/ref/meta.json" '" ".join(sorted(j["key"] for j in d["dispatch"]["jobs"] if j["kind"] == "region"))')
victim=$1 fifo=$2
donor=$(json_get "$T/other/meta.json" '[j["key"] for j in d["dispatch"]["jobs"] if j["kind"] == "region"][0]').tbr
python3 - "$T/sp/.cache/$victim.tbr" "$T/other/.cache/$donor" "$victim" <<'EOF'
import sys
path, donor, key = sys.argv[1], sys.argv[2], sys.argv[3]
blob = open(donor, 'rb').read()[20:]
open(path, 'wb').write(b'TBR1' + bytes.fromhex(key) + blob)
EOF
! cmp -s "$T/sp/.cache/$victim.tbr" "$T/ref/.cache/$victim.tbr" || fail "store: the poisoned entry is the good one (no attack)"
rm "$T/sp/.cache/$fifo.tbr"
mkfifo "$T/sp/.cache/$fifo.tbr"
timeout 120 "$TERRAIN" bake "${small[@]}" --workers 0 --out "$T/sp" >"$T/sp.out" 2>"$T/sp.err" ||
  fail "store: the bake over a poisoned store failed or hung ($?)"
grep -qE "stored result unusable, recomputing: region result answers spec [0-9a-f]+ \\(50 steps\\)" "$T/sp.err" ||
  fail "store: the wrong stored result was not reported"
grep -qE "stored result unusable, recomputing: .*$fifo.tbr: not a regular file \\(a FIFO\\)" "$T/sp.err" ||
  fail "store: the FIFO was not reported"
[ "$(dispatch_stat "$T/sp" corrupt_store)" = 2 ] || fail "store: $(dispatch_stat "$T/sp" corrupt_store) corrupt entries counted, expected 2"
same_height "$T/ref" "$T/sp" "store"
store_is_good sp "store"
echo "ok: a wrong stored result and a FIFO in the store were recomputed; same heightmap"
assert_clean "after the attacks"
