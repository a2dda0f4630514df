#!/usr/bin/env bash
# Wrong coast and tile results against `terrain bake` (docs/distribution.md, "Verifying results"), on
# the 10 km demo planet at 20 steps (tests/test_bake_attacks.sh does the same for region results):
#  1. coast-replay: a peer answers the coast job with the stored coast result of another seed (the
#     same planet size, other heights: only the echo of the spec's hash tells them apart);
#  2. tile-replay: a peer answers a tile job with the stored result of the same tile of another seed
#     (same tile, same sizes: again only the echo tells);
#  3. other-tile: ... with the stored result of the other tile of the same bake (same sizes);
#  4. a bad entry already in the store (another seed's coast result under the coast key, another
#     tile's result under a tile key) is recomputed.
# The peer connects to the bake's own local endpoint (the private ipc socket of its local workers):
# the bake starts its one local worker through a wrapper (--worker-program) that first runs the
# attacker (tests/tools/tb_misbehave.c) there until it has answered one job and left, then becomes a
# healthy terrain-worker. Each phase before the attacked one comes from a store copied from the
# reference, so the attacker's one answer goes to the attacked phase. Each attacked bake must end
# with the reference's bytes (heightmap, tile files) and leave the reference's store entries.
# Negative controls: the attacker must have sent its result (its own output), and the same attack
# with the kind's check turned off (TB_TEST_UNCHECKED=KIND, jobs/job.c) gets the wrong bytes into
# the outputs and the store.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

tiny=(--circumference-km 10 --steps 20)
bake "$T/ref" "${tiny[@]}" --workers 0
bake "$T/seed8" "${tiny[@]}" --workers 0 --seed 8

# keys KIND DIR: the store keys of DIR's jobs of KIND (region, coast_block, tile), sorted.
keys() {
  json_get "$2/meta.json" "' '.join(sorted(j['key'] for rec in (d['dispatch'], d['coast']['dispatch'], d['tiles']['dispatch']) for j in rec['jobs'] if j['kind'] == '$1'))"
}
tile_files() { json_get "$1/tiles/index.json" "json.dumps([t['files'] for t in d['tiles']], sort_keys=True)"; }
[ "$(tile_files "$T/seed8")" != "$(tile_files "$T/ref")" ] || fail "seed 8 gave the reference's tiles (the attack could not be told)"
! cmp -s "$T/seed8/planet_height.png" "$T/ref/planet_height.png" || fail "seed 8 gave the reference's heightmap"
[ "$(keys coast_block "$T/seed8")" != "$(keys coast_block "$T/ref")" ] || fail "seed 8's coast job has the reference's key"

# The local worker the bakes start: the first one runs the attacker on its endpoint first.
cat >"$T/attacker-first" <<'EOF'
#!/usr/bin/env bash
# invoked as: PROGRAM --connect ENDPOINT --name NAME ...
if mkdir "$ATTACK_DIR/started" 2>/dev/null; then
  "$MISBEHAVE" --connect "$2" --attack "$ATTACK" --from "$ATTACK_FROM" --name attacker --timeout 60 \
    >"$ATTACK_DIR/client.out" 2>"$ATTACK_DIR/client.err"
fi
exec "$WORKER" "$@"
EOF
chmod +x "$T/attacker-first"

# attacked NAME ATTACK FROM STORE-KINDS BAKE-ARGS...: a bake with one local worker behind the
# attacker, over a store holding the reference's entries of STORE-KINDS (e.g. "region coast_block").
attacked() {
  local name=$1 attack=$2 from=$3 kinds=$4 k
  shift 4
  rm -rf "$T/$name" "$T/$name-attack"
  mkdir -p "$T/$name/.cache" "$T/$name-attack"
  for k in $(for kind in $kinds; do keys "$kind" "$T/ref"; done); do
    cp "$T/ref/.cache/$k.tbr" "$T/$name/.cache/"
  done
  # (a lenient liveness: the attacker decodes stored tile results, seconds on a loaded machine,
  # and nothing here waits for a lost worker)
  ATTACK=$attack ATTACK_FROM=$from ATTACK_DIR=$T/$name-attack MISBEHAVE=$MISBEHAVE WORKER=$WORKER \
    "$TERRAIN" bake "${tiny[@]}" --heartbeat-ms 250 --liveness 80 --workers 1 --threads 2 --verbose \
    --worker-program "$T/attacker-first" --out "$T/$name" "$@" >"$T/$name.out" 2>"$T/$name.err" ||
    [ -n "${MAY_FAIL:-}" ] || fail "$name: the bake did not complete beside the attacker"
  grep -q 'sent a replayed result' "$T/$name-attack/client.out" ||
    fail "$name: the attacker sent nothing (no attack): $(cat "$T/$name-attack/client.out")"
}

# same_entries NAME KIND: the bake's store entries of KIND are the reference's, byte for byte.
same_entries() {
  local k
  for k in $(keys "$2" "$T/ref"); do
    cmp -s "$T/ref/.cache/$k.tbr" "$T/$1/.cache/$k.tbr" || return 1
  done
}

# bad_entry NAME KIND: the store of bake NAME holds, under the key of the KIND job the attacker
# answered first, an entry other than the reference's.
bad_entry() {
  local label key
  label=$(grep -oE "dispatch: job [0-9]+ \(($2[^)]*)\) attempt 1 to attacker" "$T/$1.err" | head -1 | sed -E 's/.*\((.*)\).*/\1/')
  [ -n "$label" ] || return 1
  key=$(json_get "$T/ref/meta.json" "[j['key'] for rec in (d['coast']['dispatch'], d['tiles']['dispatch']) for j in rec['jobs'] if j['label'] == '$label'][0]")
  [ -f "$T/$1/.cache/$key.tbr" ] && ! cmp -s "$T/ref/.cache/$key.tbr" "$T/$1/.cache/$key.tbr"
}

# 1. Another seed's coast result.
attacked co coast-replay "$T/seed8/.cache" "region" --no-tiles
grep -q 'picked .* (coast block, ' "$T/co-attack/client.out" || fail "coast: the attacker did not replay a coast result"
grep -qE 'rejected the result of coast attempt 1 from attacker: coast block result answers spec [0-9a-f]+, not this job' "$T/co.err" ||
  fail "coast: the replayed result was not rejected"
same_height "$T/ref" "$T/co" "coast"
same_entries co coast_block || fail "coast: the store holds a bad coast entry"
[ "$(json_get "$T/co/meta.json" "d['coast']['dispatch']['stats']['failed']")" = 1 ] || fail "coast: no failed attempt recorded"
echo "ok: another seed's coast result rejected; same heightmap, the reference's store entry"
TB_TEST_UNCHECKED=coast_block attacked co-unchecked coast-replay "$T/seed8/.cache" "region" --no-tiles
grep -q 'TB_TEST_UNCHECKED=coast_block' "$T/co-unchecked.err" || fail "coast control: the check was not turned off"
! cmp -s "$T/ref/planet_height.png" "$T/co-unchecked/planet_height.png" ||
  fail "coast control: without the check the wrong result left the heightmap unchanged (the test cannot fail)"
bad_entry co-unchecked coast || fail "coast control: without the check the store does not hold the wrong entry"
echo "ok: negative control - without the check the wrong coast result is used and stored"

# tile_attack NAME ATTACK FROM SAME WHAT: ATTACK (from the store FROM) on the first tile job: the
# attacker's result (of the job's own tile when SAME is 1, of the other tile when 0) is rejected, the
# tile files and the tile store entries are the reference's; then the control without the check.
tile_attack() {
  local name=$1 attack=$2 from=$3 same=$4 what=$5 job answered
  attacked "$name" "$attack" "$from" "region coast_block"
  # (the first tile job the attacker was given is the one it answers: the result is verified off the
  # dispatch loop, so the attacker can be handed the second tile before it leaves)
  job=$(grep -oE 'dispatch: job [0-9]+ \(tile c[0-9]+r[0-9]+\) attempt 1 to attacker' "$T/$name.err" | head -1 | grep -oE 'c[0-9]+r[0-9]+' || true)
  answered=$(grep -oE 'picked .* \(tile c[0-9]+r[0-9]+\)' "$T/$name-attack/client.out" | grep -oE '\(tile c[0-9]+r[0-9]+' | grep -oE 'c[0-9]+r[0-9]+' || true)
  [ -n "$job" ] && [ -n "$answered" ] || fail "$what: the attacker did not answer a tile job with a tile result"
  { [ "$same" = 1 ] && [ "$answered" = "$job" ]; } || { [ "$same" = 0 ] && [ "$answered" != "$job" ]; } ||
    fail "$what: the attacker answered tile $job with tile $answered"
  grep -qE "rejected the result of tile $job attempt 1 from attacker: tile result answers spec [0-9a-f]+ \\(tile $answered\\), not this job" "$T/$name.err" ||
    fail "$what: the replayed result was not rejected"
  [ "$(tile_files "$T/$name")" = "$(tile_files "$T/ref")" ] || fail "$what: the tile files differ from the reference"
  same_entries "$name" tile || fail "$what: the store holds a bad tile entry"
  echo "ok: $what rejected; same tile files, the reference's store entries"
  # (without the check another tile's result fails the bake in the tiles phase, which checks the
  # tile id of what it writes; the wrong entry is in the store by then)
  MAY_FAIL=1 TB_TEST_UNCHECKED=tile attacked "$name-unchecked" "$attack" "$from" "region coast_block"
  grep -q 'the result is for another tile' "$T/$name-unchecked.err" ||
    [ "$(tile_files "$T/$name-unchecked")" != "$(tile_files "$T/ref")" ] ||
    fail "$what control: without the check the wrong result went unnoticed (the test cannot fail)"
  bad_entry "$name-unchecked" tile || fail "$what control: without the check the store does not hold the wrong entry"
  echo "ok: negative control - without the check $what is stored"
}

# 2. Another seed's result of the same tile (same sizes: only the echo tells them apart).
tile_attack tr tile-replay "$T/seed8/.cache" 1 "another seed's result of the same tile"
# 3. Another tile's result of the same bake (same sizes: the 10 km planet's two tiles are alike).
tile_attack ot other-tile "$T/ref/.cache" 0 "another tile's result"

# 4. Bad entries already in the store: seed 8's coast result under the coast key, and one tile's
# result under the other tile's key (the store's 20-byte header is rewritten with the victim's key).
mkdir -p "$T/sp"
cp -r "$T/ref/.cache" "$T/sp/.cache"
coast_key=$(keys coast_block "$T/ref")
set -- $(keys tile "$T/ref")
tile_victim=$1 tile_donor=$2
poison() {
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, donor, key = sys.argv[1], sys.argv[2], sys.argv[3]
blob = open(donor, 'rb').read()[20:]
open(path, 'wb').write(b'TBR1' + bytes.fromhex(key) + blob)
EOF
}
poison "$T/sp/.cache/$coast_key.tbr" "$T/seed8/.cache/$(keys coast_block "$T/seed8").tbr" "$coast_key"
poison "$T/sp/.cache/$tile_victim.tbr" "$T/ref/.cache/$tile_donor.tbr" "$tile_victim"
! same_entries sp coast_block || fail "store: the poisoned coast entry is the good one (no attack)"
! same_entries sp tile || fail "store: the poisoned tile entry is the good one (no attack)"
timeout 300 "$TERRAIN" bake "${tiny[@]}" --workers 0 --out "$T/sp" >"$T/sp.out" 2>"$T/sp.err" ||
  fail "store: the bake over a poisoned store failed or hung ($?)"
grep -qE 'stored result unusable, recomputing: coast block result answers spec [0-9a-f]+, not this job' "$T/sp.err" ||
  fail "store: the wrong stored coast result was not reported"
grep -qE 'stored result unusable, recomputing: tile result answers spec [0-9a-f]+ \(tile c00[01]r000\)' "$T/sp.err" ||
  fail "store: the wrong stored tile result was not reported"
same_height "$T/ref" "$T/sp" "store"
[ "$(tile_files "$T/sp")" = "$(tile_files "$T/ref")" ] || fail "store: the tile files differ from the reference"
same_entries sp coast_block && same_entries sp tile || fail "store: a bad entry was left in the store"
echo "ok: a wrong stored coast result and a wrong stored tile result were recomputed"
assert_clean "after the attacks"
