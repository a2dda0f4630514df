#!/usr/bin/env bash
# A partial bake's tiles with the coastal pass (docs/tiles.md, "Tiles of a partial bake"), on the
# 10 km demo planet (two coast tiles: c000r000 holds land of regions 2 and 3, c001r000 of all four)
# at 20 steps:
#  - the negative control: --only 2,3 into an empty directory skips the tiles phase, naming the
#    regions neither solved nor stored (1,4) and what to do, in the log and in meta.json's "tiles";
#    no tile is written; exit 0;
#  - the whole bake (its store seeded with those two regions), then --only 1 into the same directory:
#    the other regions are borrowed from the store, so the composite and its coast are the whole
#    bake's (the coast job has the same key and comes from the store) and so is planet_height.png;
#    the bake bakes c001r000 (land of region 1) and lists c000r000 as skipped (no land of region 1);
#    c001r000's seven files and its index.json entry equal the whole bake's;
#  - a fresh directory whose store holds only the four regions' results: --only 1, on a farm of one
#    TCP worker, computes the coast (its key the whole bake's) and tile c001r000 there,
#    byte-identical to the whole bake's, and with --no-tiles the same heightmap;
#  - a store without region 4, and one whose region 4 is damaged: the tiles phase is skipped naming
#    region 4 alone (the damaged one with a warning);
#  - `terrain tiles OUT --only c001r000` in the partial bake re-runs that tile to the same bytes (the
#    coast from the store); naming c000r000 is refused, exit 2.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

base=(--circumference-km 10 --steps 20)
run=("${base[@]}" --workers 2)

# tiles_of DIR: the ids of the tiles index.json lists
tiles_of() { json_get "$1/tiles/index.json" "' '.join(t['id'] for t in d['tiles'])"; }
# entry DIR ID: index.json's entry of tile ID, canonically
entry() { json_get "$1/tiles/index.json" "json.dumps([t for t in d['tiles'] if t['id'] == '$2'], sort_keys=True)"; }
# same_tile A B ID WHAT: tile ID's seven files and index entry are the same in bakes A and B
same_tile() {
  local f n=0
  for f in "$1/tiles/$3".* "$1/tiles/$3"_*; do
    cmp -s "$f" "$2/tiles/$(basename "$f")" || fail "$4: tiles/$(basename "$f") differs from $2's"
    n=$((n + 1))
  done
  [ "$n" = 7 ] || fail "$4: $n files of $3, not 7"
  [ "$(entry "$1" "$3")" = "$(entry "$2" "$3")" ] && [ "$(entry "$1" "$3")" != "[]" ] ||
    fail "$4: the index entry of $3 differs from $2's"
}
# coast_key DIR: the key of the coast job
coast_key() {
  json_get "$1/meta.json" "d['coast']['dispatch']['jobs'][0]['key']"
}

# --- the negative control: no store, regions 1 and 4 missing
N=$T/none
LOG=none bake "$N" "${run[@]}" --only 2,3
grep -q "phase tiles skipped: a partial bake (regions 2,3 of 4) with the coastal pass: .*regions 1,4 (2 of 4) are neither solved here nor stored in $N/.cache for this build; bake the whole planet" "$T/none.err" ||
  fail "the skipped tiles phase does not name the missing regions 1,4 and what to do"
[ "$(json_get "$N/meta.json" "(d['tiles']['regions_missing'], d['tiles']['regions_missing_count'], d['tiles']['phase_skipped'][:15])")" = \
  "([1, 4], 2, 'a partial bake ')" ] || fail "meta.json's tiles block does not record the missing regions"
[ ! -e "$N/tiles" ] && [ ! -e "$N/preview_detail.png" ] || fail "the partial bake without the other regions wrote tiles"
echo "ok: --only 2,3 without a store skips the tiles, naming regions 1,4"

# --- the whole bake, its store seeded with regions 2 and 3
W=$T/whole
mkdir "$W"
cp -r "$N/.cache" "$W/"
LOG=whole bake "$W" "${run[@]}"
[ "$(tiles_of "$W")" = "c000r000 c001r000" ] || fail "the whole bake's tiles are '$(tiles_of "$W")'"
mkdir "$T/ref"
cp -r "$W/tiles" "$W/planet_height.png" "$W/meta.json" "$T/ref/"
! cmp -s "$W/tiles/c000r000.png" "$W/tiles/c001r000.png" || fail "the two tiles are the same bytes"

# --only 1 into the whole bake's directory
LOG=only1 bake "$W" "${run[@]}" --only 1
[ "$(tiles_of "$W")" = c001r000 ] || fail "--only 1 baked '$(tiles_of "$W")', not c001r000"
[ "$(json_get "$W/meta.json" "([s['id'] for s in d['tiles']['skipped']], d['tiles']['regions_from_store'], d['tiles']['from_store'] + d['tiles']['kept'], d['coast']['dispatch']['stats']['from_store'])")" = \
  "(['c000r000'], 3, 1, 1)" ] || fail "--only 1 after the whole bake: not c000r000 skipped, 3 regions borrowed, tile and coast from the store"
[ "$(coast_key "$W")" = "$(coast_key "$T/ref")" ] || fail "the partial bake's coast is not the whole bake's coast job"
same_tile "$W" "$T/ref" c001r000 "--only 1 after the whole bake"
cmp -s "$W/planet_height.png" "$T/ref/planet_height.png" || fail "the partial bake's planet_height.png is not the whole bake's"
cp "$W/planet_height.png" "$T/only1_height.png"
echo "ok: --only 1 after the whole bake bakes c001r000 (coast and tile from the store), the whole bake's bytes"

# --- a fresh directory with the four regions only: the coast and the tile computed
P=$T/fresh
mkdir -p "$P/.cache"
for k in $(json_get "$T/ref/meta.json" "' '.join(j['key'] for j in d['dispatch']['jobs'] if j['kind'] == 'region')"); do
  cp "$W/.cache/$k.tbr" "$P/.cache/"
done
[ "$(find "$P/.cache" -name '*.tbr' | wc -l)" = 4 ] || fail "the seeded store does not hold 4 regions"
# on a farm of one TCP worker: the coast of the whole composite is a batch of the bake's one engine
"$TERRAIN" bake "${base[@]}" "${FAST[@]}" --bind 'tcp://127.0.0.1:*' --workers 0 --threads 1 --only 1 \
  --out "$P" >"$T/fresh.out" 2>"$T/fresh.err" &
coord=$!
track $coord
wait_for "$T/fresh.out" 'listening for workers on tcp://' 30
ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/fresh.out" | head -1)
"$WORKER" --connect "$ep" --name w1 --threads 1 "${FAST[@]}" >"$T/w1.out" 2>"$T/w1.err" &
wpid=$!
track $wpid
wait $coord || fail "the farm's partial bake failed"
wait $wpid || fail "the farm's worker failed"
[ "$(json_get "$P/meta.json" "(d['coast']['dispatch']['stats']['ran'], d['tiles']['dispatch']['stats']['ran'], d['tiles']['regions_from_store'])")" = \
  "(1, 1, 3)" ] || fail "the fresh partial bake did not compute the coast and the tile"
[ "$(json_get "$P/meta.json" "(d['coast']['dispatch']['mode'], d['coast']['dispatch']['jobs'][0]['worker'], d['tiles']['dispatch']['jobs'][0]['worker'])")" = \
  "('farm', 'w1', 'w1')" ] || fail "the coast or the tile did not run on the farm's worker"
[ "$(coast_key "$P")" = "$(coast_key "$T/ref")" ] || fail "the fresh partial bake's coast job is not the whole bake's"
same_tile "$P" "$T/ref" c001r000 "--only 1 into a fresh directory"
cmp -s "$P/planet_height.png" "$T/only1_height.png" || fail "the fresh partial bake's planet_height.png differs"
LOG=freshnt bake "$P" "${run[@]}" --only 1 --no-tiles
cmp -s "$P/planet_height.png" "$T/only1_height.png" || fail "the tiles changed the partial bake's own planet_height.png"
echo "ok: --only 1 from the regions alone, on a farm, computes the coast and c001r000, the whole bake's bytes"

# --- a store without region 4, and one with region 4 damaged: skipped, naming region 4
key4=$(json_get "$T/ref/meta.json" "[j['key'] for j in d['dispatch']['jobs'] if j['label'] == 'region 4'][0]")
for how in absent damaged; do
  D=$T/$how
  mkdir -p "$D"
  cp -r "$P/.cache" "$D/"
  if [ $how = absent ]; then
    rm "$D/.cache/$key4.tbr"
  else
    printf 'damaged' | dd of="$D/.cache/$key4.tbr" bs=1 seek=100 conv=notrunc 2>/dev/null
  fi
  LOG=$how bake "$D" "${run[@]}" --only 1
  grep -q "phase tiles skipped: .*region 4 (1 of 4) is neither solved here nor stored" "$T/$how.err" ||
    fail "$how region 4: the tiles phase was not skipped naming region 4"
  [ "$(json_get "$D/meta.json" "d['tiles']['regions_missing']")" = "[4]" ] || fail "$how region 4: meta.json does not name it"
  [ ! -e "$D/tiles" ] || fail "$how region 4: tiles written"
done
grep -q "region 4: stored result unusable, left out" "$T/damaged.err" || fail "the damaged region 4 was not reported"
echo "ok: a store without region 4, or with it damaged, skips the tiles naming region 4"

# --- terrain tiles in the partial bake: c001r000 re-run to the same bytes; c000r000 refused
rc=0
"$TERRAIN" tiles "$W" --only c001r000 --workers 0 >"$T/rerun.out" 2>"$T/rerun.err" || rc=$?
[ "$rc" = 0 ] || fail "terrain tiles --only c001r000 in the partial bake: exit $rc"
[ "$(json_get "$W/meta.json" "(d['tiles']['rerun']['computed'], d['tiles']['rerun']['unchanged'])")" = "(1, 1)" ] ||
  fail "the re-run tile is not its index entry"
same_tile "$W" "$T/ref" c001r000 "terrain tiles --only c001r000"
cp "$W/meta.json" "$T/meta.good"
rc=0
"$TERRAIN" tiles "$W" --only c000r000 --workers 0 >"$T/refused.out" 2>"$T/refused.err" || rc=$?
[ "$rc" = 2 ] || fail "terrain tiles --only c000r000 in the partial bake of region 1: exit $rc, expected 2"
grep -q -- "--only c000r000: it holds no land of the regions this partial bake solved" "$T/refused.err" ||
  fail "the refusal does not say why"
cmp -s "$W/meta.json" "$T/meta.good" || fail "the refused re-run changed meta.json"
assert_clean "after the partial bakes with the coast"
echo "ok: terrain tiles re-runs the partial bake's tile to the same bytes and refuses a tile of other land"
