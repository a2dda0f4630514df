#!/usr/bin/env bash
# The result store keys a region by what can change its answer (docs/bake.md): a planet made with
# `terrain init` (the 10 km demo, 4 regions) is baked, then
#  - a change to ONE class's uplift in legend.json re-solves exactly the regions whose land holds
#    that class (read from plan.json's class_cells, not assumed) and reuses the others, and the
#    heightmap changes;
#  - a change to elevation_m, which acts after the solve, re-solves nothing (and the heightmap,
#    encoded over the new range, changes while the stored regions do not).
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
