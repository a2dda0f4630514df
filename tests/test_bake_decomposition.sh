#!/usr/bin/env bash
# Two frames agree (docs/determinism.md): the same painting cut into regions three different ways bakes to a
# byte-identical planet. The 10 km demo planet at regions.ocean_margin_km 0.4 has 4 regions; at 1.0
# landmasses 3 and 4 (the one across the seam) share a region, so 3 regions in other boxes; at 1.5
# the whole planet is one region that wraps round the cylinder. The plan's region counts are checked
# first, so the test cannot pass by baking one decomposition three times. Heights, drainage, basins
# and every statistic must agree (the statistics JSON in meta.json compared whole).
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

"$TERRAIN" init "$T/planet" --circumference-km 10 >"$T/init.out" 2>"$T/init.err" || fail "terrain init failed"
counts=()
for margin in 0.4 1.0 1.5; do
  python3 - "$T/planet/planet.json" "$T/planet/margin_$margin.json" "$margin" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["regions"]["ocean_margin_km"] = float(sys.argv[3])
json.dump(m, open(sys.argv[2], "w"), indent=1)
EOF
  bake "$T/m$margin" "$T/planet/margin_$margin.json" --steps 100 --workers 2 --no-tiles
  counts+=("$(json_get "$T/m$margin/plan.json" 'len(d["regions"])')")
done
[ "$(json_get "$T/m0.4/meta.json" 'd["extent"]["max_m"] > 5')" = True ] || fail "the bake made no relief"
[ "${counts[*]}" = "4 3 1" ] || fail "margins 0.4, 1.0, 1.5 give ${counts[*]} regions; expected 4 3 1"
[ "$(json_get "$T/m1.5/plan.json" 'd["regions"][0]["box"]["w"]')" = 1250 ] || fail "margin 1.5 is not one ring region"
for margin in 1.0 1.5; do
  same_height "$T/m0.4" "$T/m$margin" "margins 0.4 and $margin"
  for f in map_flow.png map_basins.png map_uplift.png preview.png; do
    cmp -s "$T/m0.4/$f" "$T/m$margin/$f" || fail "$f differs between margins 0.4 and $margin"
  done
  python3 - "$T/m0.4/meta.json" "$T/m$margin/meta.json" <<'EOF' || fail "statistics differ between margins 0.4 and $margin"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if a["statistics"] == b["statistics"] and a["extent"] == b["extent"] else 1)
EOF
done
assert_clean "after the decompositions"
echo "ok: 4, 3 and 1 regions (margins 0.4, 1.0, 1.5 km) bake byte-identical heights, maps and statistics"
