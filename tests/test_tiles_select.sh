#!/usr/bin/env bash
# Choosing tiles (docs/tiles.md, "Re-running chosen tiles", "Tiles of a partial bake"), on the 10 km
# demo planet (two coast tiles, c000r000 and c001r000) at 20 steps without the coastal pass:
#  - a partial bake (--only 2,3) bakes c000r000, whose window holds only land of regions 2 and 3, and
#    lists c001r000 as skipped; the whole bake into the same directory then takes c000r000 from the
#    store (its spec is the same bytes) and its files equal the partial bake's (the control: the two
#    tiles differ, and the whole bake computed c001r000); and once the store holds every region, a
#    partial bake into that directory bakes both tiles, the whole bake's bytes;
#  - `terrain tiles OUT --only c001r000` re-runs that tile only: every region comes from the store,
#    the tile is computed afresh (its job ran, not from the store), its files come back
#    byte-identical (the control: both tiles' .png damaged first - the chosen one is restored, the
#    other is left as it was, so the run rewrote exactly the chosen tile), index.json is unchanged and
#    meta.json differs only in "tiles" (its "rerun" record);
#  - `terrain bake --tiles-only c000r000` does the same for the other tile; with other --steps it is
#    refused (exit 2), and so are a bad tile id (naming it and the range), a store without the
#    regions (naming one), a manifest whose XXH3 is not the one the bake recorded and a directory
#    without meta.json - each leaving the bake as it was;
#  - `terrain tiles OUT --measure-margin` prints its table and a verdict on the default margin and
#    writes nothing;
#  - resume: a bake SIGKILLed in its tiles phase after one tile was stored, run again into the same
#    directory, takes that tile from the store and computes the other (meta.json's tiles.from_store
#    is the count stored before the kill), and every tile file equals the uninterrupted bake's;
#  - a 5 km planet (one tile column: a tile and its 136-cell margin do not fit round it) is refused
#    at plan time with exit 2 naming the limit, and nothing is written; with --no-tiles it bakes
#    (the control: the refusal is the tiles').
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

run=(--circumference-km 10 --steps 20 --no-coast)
A=$T/whole

# --- a partial bake's tiles: --only 2,3 solves the land of c000r000's whole window (region boxes in
# plan.json: regions 1 and 4 lie east of it), not of c001r000's
LOG=partial bake "$A" "${run[@]}" --only 2,3 --workers 2
[ "$(json_get "$A/tiles/index.json" "' '.join(t['id'] for t in d['tiles'])")" = c000r000 ] ||
  fail "the partial bake of regions 2,3 did not bake exactly c000r000"
[ "$(json_get "$A/meta.json" "[s['id'] for s in d['tiles']['skipped']]")" = "['c001r000']" ] ||
  fail "the partial bake does not list c001r000 as skipped"
mkdir "$T/partial"
cp "$A"/tiles/c000r000* "$T/partial/"
echo "ok: a partial bake bakes the tile its regions cover and lists the other as skipped"

# the whole bake into the same directory: regions 2 and 3 and tile c000r000 from the store - its spec
# (every raster it reads) is the same bytes - and its files identical to the partial bake's
LOG=whole bake "$A" "${run[@]}" --workers 2
ids=$(json_get "$A/tiles/index.json" "' '.join(t['id'] for t in d['tiles'])")
[ "$ids" = "c000r000 c001r000" ] || fail "the 10 km planet's tiles are '$ids', not c000r000 c001r000"
# (kept as it was, or from the store: the same spec either way; docs/bake.md, "Resume")
[ "$(json_get "$A/meta.json" "d['tiles']['from_store'] + d['tiles']['kept']")" = 1 ] || fail "the whole bake did not find the partial bake's tile in the store"
for f in "$T"/partial/*; do
  cmp -s "$f" "$A/tiles/$(basename "$f")" || fail "tiles/$(basename "$f") of the partial bake differs from the whole bake's"
done
# the control: the other tile is not the same picture, so the comparison can fail
! cmp -s "$A/tiles/c000r000.png" "$A/tiles/c001r000.png" || fail "the two tiles are the same bytes"
echo "ok: the partial bake's tile is byte-identical to the whole bake's"
mkdir "$T/ref"
cp "$A"/tiles/* "$T/ref/"
cp "$A/meta.json" "$T/meta.before"

# tiles_status NAME ARGS...: `terrain tiles ARGS`, logging to $T/NAME.{out,err}; prints the exit status.
tiles_status() {
  local name=$1 rc=0
  shift
  "$TERRAIN" tiles "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
  echo $rc
}
# meta_except_tiles DIR: meta.json without its "tiles" section, canonically.
meta_except_tiles() {
  json_get "$1" "json.dumps({k: v for k, v in d.items() if k != 'tiles'}, sort_keys=True)"
}

# --- terrain tiles OUT --only c001r000
printf 'damaged' >"$A/tiles/c001r000.png"
printf 'damaged' >"$A/tiles/c000r000.png"
rc=$(tiles_status only1 "$A" --only c001r000 --workers 0)
[ "$rc" = 0 ] || fail "terrain tiles --only c001r000: exit $rc"
grep -q "4 of 4 results reused" "$T/only1.err" || fail "terrain tiles did not take the 4 regions from the store"
grep -q -- "--no-coast: no coastal pass" "$T/only1.err" || fail "terrain tiles did not read --no-coast from meta.json"
[ "$(json_get "$A/meta.json" "d['tiles']['rerun']['ids']")" = "['c001r000']" ] || fail "rerun.ids"
[ "$(json_get "$A/meta.json" "(d['tiles']['rerun']['dispatch']['stats']['ran'], d['tiles']['rerun']['dispatch']['stats']['from_store'])")" = "(1, 0)" ] ||
  fail "the chosen tile was not computed afresh"
[ "$(json_get "$A/meta.json" "(d['tiles']['rerun']['unchanged'], d['tiles']['rerun']['changed'])")" = "(1, [])" ] ||
  fail "the re-run tile does not match its index entry"
for f in "$T"/ref/c001r000*; do
  cmp -s "$f" "$A/tiles/$(basename "$f")" || fail "tiles/$(basename "$f") differs after the re-run"
done
[ "$(cat "$A/tiles/c000r000.png")" = damaged ] || fail "a tile that was not chosen was rewritten"
cmp -s "$T/ref/index.json" "$A/tiles/index.json" || fail "index.json changed"
[ "$(meta_except_tiles "$A/meta.json")" = "$(meta_except_tiles "$T/meta.before")" ] || fail "meta.json changed outside \"tiles\""
[ "$(json_get "$A/meta.json" "{k: v for k, v in d['tiles'].items() if k != 'rerun'} == json.load(open('$T/meta.before'))['tiles']")" = True ] ||
  fail "meta.json's tiles changed beyond its rerun record"
echo "ok: terrain tiles --only c001r000 recomputed that tile to the same bytes and touched nothing else"

# --- terrain bake --tiles-only c000r000
LOG=bakeonly bake "$A" "${run[@]}" --tiles-only c000r000 --workers 0
cmp -s "$T/ref/c000r000.png" "$A/tiles/c000r000.png" || fail "bake --tiles-only c000r000 did not restore c000r000.png"
[ "$(json_get "$A/meta.json" "d['tiles']['rerun']['ids']")" = "['c000r000']" ] || fail "rerun.ids after bake --tiles-only"
cp "$A/meta.json" "$T/meta.good"
rc=$(LOG=steps bake_status "$A" --circumference-km 10 --steps 21 --no-coast --tiles-only c000r000 --workers 0)
[ "$rc" = 2 ] || fail "--tiles-only with other --steps: exit $rc, expected 2"
grep -q "solved 20 steps, this one 21" "$T/steps.err" || fail "--steps 21: the message does not name the steps"
rc=$(tiles_status badid "$A" --only c000r000,c002r000 --workers 0)
[ "$rc" = 2 ] || fail "--only c002r000: exit $rc, expected 2"
grep -q -- "--only c002r000: no such tile; this planet's tiles are c000r000..c001r000" "$T/badid.err" ||
  fail "a bad tile id: the message does not name it and the range"
rc=$(tiles_status badform "$A" --only c1r0x --workers 0)
[ "$rc" = 2 ] && grep -q "c1r0x: not a tile id" "$T/badform.err" || fail "--only c1r0x: exit $rc"
# the store without its regions: a copy of the bake whose .cache holds only the tiles
cp -r "$A" "$T/nostore"
for f in "$T"/nostore/.cache/*.tbr; do rm -f "$f"; done
rc=$(tiles_status nostore "$T/nostore" --only c000r000 --workers 0)
[ "$rc" = 2 ] || fail "terrain tiles without the regions in the store: exit $rc, expected 2"
grep -q "has no result of region 1 for this build" "$T/nostore.err" || fail "the missing regions are not named"
# a manifest that is not the one the bake read
mkdir "$T/forged"
python3 - "$A/meta.json" "$T/forged" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
f = sys.argv[2] + '/planet.json'
d['inputs'] = {'manifest': {'path': f, 'xxh3': '0000000000000000'}, 'painting': {'path': f, 'xxh3': '0'}}
json.dump(d, open(sys.argv[2] + '/meta.json', 'w'))
EOF
echo '{}' >"$T/forged/planet.json"
rc=$(tiles_status forged "$T/forged" --only c000r000 --workers 0)
[ "$rc" = 2 ] || fail "a changed manifest: exit $rc, expected 2"
grep -q "planet.json: the manifest changed since the bake" "$T/forged.err" || fail "a changed manifest: no clear message"
# a directory that is not a bake
rc=$(tiles_status notbake "$T/ref" --workers 0)
[ "$rc" = 2 ] && grep -q "not a complete bake" "$T/notbake.err" || fail "terrain tiles on a directory without meta.json: exit $rc"
cmp -s "$T/meta.good" "$A/meta.json" || fail "a refused re-run changed meta.json"
cmp -s "$T/ref/index.json" "$A/tiles/index.json" || fail "a refused re-run changed index.json"
echo "ok: bake --tiles-only re-runs its tile; other steps, a bad id, a store without regions, a changed manifest refused"

# --- the margin measured on this planet: a table, a verdict, and nothing written
rc=$(tiles_status margin "$A" --measure-margin --sample-km 0.4 --workers 0)
[ "$rc" = 0 ] || fail "terrain tiles --measure-margin: exit $rc"
grep -qE "^measured margin: [0-9]+ cells for identical 16-bit interiors .* provable bound 143; margin in use 136 \(default 136\): covers" "$T/margin.out" ||
  fail "terrain tiles --measure-margin printed no verdict covering the default margin: $(tail -3 "$T/margin.out")"
[ "$(grep -cE '^ +[0-9]+ ' "$T/margin.out")" = 22 ] || fail "the margin table does not have its 22 margins (0 .. 136, the last step of 8 under the bound 143)"
cmp -s "$T/meta.good" "$A/meta.json" && cmp -s "$T/ref/index.json" "$A/tiles/index.json" || fail "--measure-margin wrote into the bake"
echo "ok: --measure-margin: $(grep '^measured margin' "$T/margin.out" | cut -c1-110)"

# --- resume: killed in the tiles phase after one tile was stored
R=$T/resumed
"$TERRAIN" bake "${run[@]}" --workers 0 --out "$R" >"$T/killed.out" 2>"$T/killed.err" &
pid=$!
track $pid
stored=0
for ((i = 0; i < 6000; i++)); do # 4 regions (no coast job), then the first tile
  stored=$({ find "$R/.cache" -name '*.tbr' 2>/dev/null || true; } | wc -l)
  [ "$stored" -ge 5 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
{ kill -9 $pid && wait $pid; } 2>/dev/null || true
[ "$stored" -ge 5 ] || fail "the bake ended before a tile was stored ($stored results)"
[ ! -e "$R/meta.json" ] || fail "the killed bake wrote meta.json (it finished before the kill)"
tiles_before=$(($(find "$R/.cache" -name '*.tbr' | wc -l) - 4))
[ "$tiles_before" -ge 1 ] && [ "$tiles_before" -lt 2 ] || fail "$tiles_before tiles stored before the kill: the test needs 1"
LOG=resume bake "$R" "${run[@]}" --workers 2
[ "$(json_get "$R/meta.json" "(d['tiles']['from_store'], d['tiles']['dispatch']['stats']['ran'])")" = "($tiles_before, $((2 - tiles_before)))" ] ||
  fail "the resumed bake took $(json_get "$R/meta.json" "d['tiles']['from_store']") tiles from the store, $tiles_before were stored"
for f in "$T"/ref/*; do
  [ "$(basename "$f")" = index.json ] && continue
  cmp -s "$f" "$R/tiles/$(basename "$f")" || fail "tiles/$(basename "$f") of the resumed bake differs from the whole bake's"
done
[ "$(json_get "$R/tiles/index.json" "json.dumps(d['tiles'], sort_keys=True)")" = "$(json_get "$T/ref/index.json" "json.dumps(d['tiles'], sort_keys=True)")" ] ||
  fail "the resumed bake's index differs"
echo "ok: a bake killed after $tiles_before stored tile(s) resumes with them from the store; every tile file identical"

# --- a partial bake borrows the stored regions it did not solve: after the whole bake, --only 2,3
# into the same directory bakes both tiles (c001r000's window reaches regions 1 and 4, which the
# store holds), both from the store or kept (their specs are the whole bake's), the same files
LOG=partial2 bake "$A" "${run[@]}" --only 2,3 --workers 2
[ "$(json_get "$A/meta.json" "(d['bake']['partial'], d['tiles']['tiles'], d['tiles']['skipped'], d['tiles']['regions_from_store'], d['tiles']['from_store'] + d['tiles']['kept'])")" = \
  "(True, 2, [], 2, 2)" ] || fail "the partial bake after the whole one did not bake both tiles from the stored regions"
for f in "$T"/ref/c*; do
  cmp -s "$f" "$A/tiles/$(basename "$f")" || fail "tiles/$(basename "$f") of the second partial bake differs from the whole bake's"
done
echo "ok: a partial bake bakes the tiles whose other regions the store holds, the whole bake's bytes"

# --- a planet too small for a tile and its margin
rc=$(LOG=small bake_status "$T/small" --circumference-km 5 --steps 2 --workers 0)
[ "$rc" = 2 ] || fail "a 5 km planet with tiles: exit $rc, expected 2"
grep -q "need a circumference of at least 2772 detail cells.*margin of 136" "$T/small.err" || fail "the 5 km refusal does not name the limit"
[ ! -e "$T/small" ] || fail "the refused 5 km bake wrote $T/small"
LOG=smallnt bake "$T/smallnt" --circumference-km 5 --steps 2 --workers 0 --no-tiles
assert_clean "after the tile selection bakes"
echo "ok: a 5 km planet is refused at plan time with the limit; with --no-tiles it bakes"
