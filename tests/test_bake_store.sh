#!/usr/bin/env bash
# The result store keys a region by what can change its answer (docs/bake.md): a planet made with
# `terrain init` (the 10 km demo, 4 regions) is baked, then
#  - a change to ONE class's uplift in legend.json re-solves exactly the regions whose land holds
#    that class (read from plan.json's class_cells, not assumed) and reuses the others, and the
#    heightmap changes;
#  - a change to elevation_m, which acts after the solve, re-solves nothing (and the heightmap,
#    encoded over the new range, changes while the stored regions do not);
#  - --store DIR: a store outside OUT shared by two bakes, read back by `terrain tiles`; bad ones
#    refused.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

"$TERRAIN" init "$T/planet" --circumference-km 10 >"$T/init.out" 2>"$T/init.err" || fail "terrain init failed"
run=("$T/planet/planet.json" --steps 30 --workers 2 --no-tiles) # the tiles have tests/test_bake_tiles.sh
bake "$T/bake" "${run[@]}"
[ "$(dispatch_stat "$T/bake" ran)" = 4 ] || fail "the first bake solved $(dispatch_stat "$T/bake" ran) of 4 regions"
cp "$T/bake/planet_height.png" "$T/before.png"

# Which regions hold highland land, from the plan; the test needs some but not all.
expected=$(json_get "$T/bake/plan.json" "', '.join('region %d' % r['id'] for r in d['regions'] if r['class_cells'].get('highland', 0) > 0)")
n_expected=$(json_get "$T/bake/plan.json" "sum(1 for r in d['regions'] if r['class_cells'].get('highland', 0) > 0)")
[ "$n_expected" -ge 1 ] && [ "$n_expected" -lt 4 ] || fail "highland is in $n_expected of 4 regions; pick another class"

python3 - "$T/planet/legend.json" <<'EOF'
import json, sys
p = sys.argv[1]
legend = json.load(open(p))
(c,) = [c for c in legend["classes"] if c["name"] == "highland"]
c["uplift_mm_yr"] = round(c["uplift_mm_yr"] * 1.2, 6)
json.dump(legend, open(p, "w"), indent=1)
EOF
LOG=legend bake "$T/bake" "${run[@]}"
[ "$(ran_labels "$T/bake")" = "$expected" ] ||
  fail "after editing highland: solved [$(ran_labels "$T/bake")], expected [$expected]"
[ "$(dispatch_stat "$T/bake" from_store)" = $((4 - n_expected)) ] || fail "the regions without highland were not reused"
! cmp -s "$T/before.png" "$T/bake/planet_height.png" || fail "the heightmap did not change with the legend"
echo "ok: a change to highland's uplift re-solved only $expected"

# elevation_m only encodes the heightmap: every region is reused.
python3 - "$T/planet/planet.json" <<'EOF'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m["elevation_m"] = [m["elevation_m"][0] - 100, m["elevation_m"][1] + 100]
json.dump(m, open(p, "w"), indent=1)
EOF
cp "$T/bake/planet_height.png" "$T/before.png"
LOG=elevation bake "$T/bake" "${run[@]}"
[ "$(dispatch_stat "$T/bake" ran)" = 0 ] || fail "a change to elevation_m re-solved $(ran_labels "$T/bake")"
! cmp -s "$T/before.png" "$T/bake/planet_height.png" || fail "the heightmap ignored the new elevation range"
assert_clean "after the store bakes"
echo "ok: a change to elevation_m re-solved nothing"

# --store DIR: a store outside OUT, shared by two bakes of this build. The second bake into
# another OUT takes every region from it and makes no OUT/.cache; a bake without --store (the
# control) does not see it. `terrain tiles` re-runs a tile of a --store bake from that store (with
# the store's regions gone, the same re-run is refused: the control).
demo=(--circumference-km 10 --steps 10 --workers 2)
LOG=store1 bake "$T/s1" "${demo[@]}" --store "$T/shared" --no-tiles
[ "$(dispatch_stat "$T/s1" ran)" = 4 ] || fail "--store: the first bake solved $(dispatch_stat "$T/s1" ran) of 4"
[ -d "$T/shared" ] && [ ! -e "$T/s1/.cache" ] || fail "--store: the results did not go to the given store alone"
[ "$(json_get "$T/s1/meta.json" "d['bake']['store']")" = "$T/shared" ] || fail "meta.json does not name the store"
LOG=store2 bake "$T/s2" "${demo[@]}" --store "$T/shared" --no-tiles
[ "$(dispatch_stat "$T/s2" ran)" = 0 ] && [ "$(dispatch_stat "$T/s2" from_store)" = 4 ] ||
  fail "--store: a second bake sharing the store solved $(ran_labels "$T/s2")"
same_height "$T/s1" "$T/s2" "two bakes sharing a store"
LOG=store3 bake "$T/s3" "${demo[@]}" --no-tiles
[ "$(dispatch_stat "$T/s3" ran)" = 4 ] || fail "a bake without --store used another bake's store"
LOG=store4 bake "$T/s4" "${demo[@]}" --store "$T/shared"
"$TERRAIN" tiles "$T/s4" --only c000r000 --workers 2 >"$T/tiles4.out" 2>"$T/tiles4.err" ||
  fail "terrain tiles of a --store bake failed: $(cat "$T/tiles4.err")"
grep -q "1 detail tiles re-run" "$T/tiles4.out" || fail "terrain tiles: $(cat "$T/tiles4.out")"
mv "$T/shared" "$T/shared.away"
rc=0
"$TERRAIN" tiles "$T/s4" --only c000r000 --workers 2 >"$T/tiles5.out" 2>"$T/tiles5.err" || rc=$?
[ "$rc" != 0 ] || fail "terrain tiles re-ran a tile with the bake's store gone (it read another store)"
mv "$T/shared.away" "$T/shared"
echo "ok: --store shares a store between bakes, and terrain tiles reads the one the bake used"

# A --store that cannot be one is refused before anything is baked, naming it.
touch "$T/afile"
ln -s "$T/shared" "$T/alink"
for bad in "" "$T/afile" "$T/alink"; do
  rc=$(LOG=badstore bake_status "$T/s5" "${demo[@]}" --no-tiles --store "$bad")
  [ "$rc" = 2 ] || fail "--store '$bad': exit $rc, expected 2"
  grep -q -- "--store" "$T/badstore.err" || fail "--store '$bad': the error does not name the option: $(cat "$T/badstore.err")"
  [ ! -e "$T/s5/planet_height.png" ] || fail "--store '$bad': baked anyway"
done
assert_clean "after the --store bakes"
echo "ok: an empty --store, a file and a symbolic link are refused, naming --store"
