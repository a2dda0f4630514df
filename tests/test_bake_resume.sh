#!/usr/bin/env bash
# Resume (docs/bake.md, "Resume"): a bake rerun into its directory rewrites nothing that matches.
# The 10 km demo with 2 km tiles (10 tiles) at 20 steps:
#  - an unchanged rerun: the outputs, maps and detail phases are unchanged (their input keys and
#    files match meta.json), every tile is kept (its spec and files match index.json), and no output
#    file is written again - only meta.json and report.html, the records - every byte the same;
#  - the negative control: a tile file and planet_height.png damaged on disk are found and made
#    again, to the first bake's bytes, and only that tile is re-baked;
#  - a legend edit (the `range` class, which only region 2 holds), without the coast: region 2 is
#    solved again and the others come from the store, the tiles whose windows hold none of region
#    2's land are kept and the others re-baked, and every tile file is the bytes a fresh bake of the
#    edited planet makes.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

"$TERRAIN" init "$T/in" --circumference-km 10 >"$T/init.out" 2>&1 || fail "terrain init failed"
python3 - "$T/in" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/planet.json"))
m.setdefault("tiles", {})["size_km"] = 2
json.dump(m, open(d + "/p2.json", "w"), indent=1)
legend = json.load(open(d + "/legend.json"))
for c in legend["classes"]:
    if c["name"] == "range":
        c["uplift_mm_yr"] = 0.5
json.dump(legend, open(d + "/legend_range.json", "w"), indent=1)
m["template"]["legend"] = "legend_range.json"
json.dump(m, open(d + "/p2_range.json", "w"), indent=1)
PY
run=(--steps 20 --workers 2)
B=$T/b
bake "$B" "$T/in/p2.json" "${run[@]}"
n=$(json_get "$B/tiles/index.json" 'len(d["tiles"])')
[ "$n" -ge 6 ] || fail "only $n tiles"
cp -r "$B" "$T/first"

# --- an unchanged rerun
touch "$T/mark"
sleep 1
LOG=same bake "$B" "$T/in/p2.json" "${run[@]}"
for p in outputs maps detail; do
  grep -q "phase $p unchanged" "$T/same.err" || fail "the unchanged rerun ran phase $p"
done
grep -q "tiles: $n of $n kept from the previous bake" "$T/same.err" || fail "the unchanged rerun re-baked tiles"
rewritten=$(cd "$B" && find . -type f -newer "$T/mark" ! -path './.cache/*' ! -path './.planet/*' | sort | tr '\n' ' ')
[ "$rewritten" = "./meta.json ./report.html " ] || fail "the unchanged rerun wrote $rewritten"
for f in $(cd "$T/first" && find . -type f ! -path './.cache/*' ! -path './.planet/*' ! -name meta.json ! -name report.html); do
  cmp -s "$T/first/$f" "$B/$f" || fail "$f changed in the unchanged rerun"
done
echo "ok: an unchanged rerun keeps every output and tile and writes only meta.json and report.html"

# --- the negative control: damaged files are found and made again
tile=$(json_get "$B/tiles/index.json" 'd["tiles"][1]["id"]')
printf 'x' | dd of="$B/tiles/${tile}_wear.png" bs=1 seek=200 conv=notrunc 2>/dev/null
printf 'x' | dd of="$B/planet_height.png" bs=1 seek=300 conv=notrunc 2>/dev/null
LOG=damaged bake "$B" "$T/in/p2.json" "${run[@]}"
grep -q "tiles: $((n - 1)) of $n kept" "$T/damaged.err" || fail "the damaged tile was kept, or more than it re-baked"
! grep -q "phase outputs unchanged" "$T/damaged.err" || fail "the damaged heightmap was kept"
cmp -s "$T/first/tiles/${tile}_wear.png" "$B/tiles/${tile}_wear.png" || fail "the damaged tile file was not made again"
cmp -s "$T/first/planet_height.png" "$B/planet_height.png" || fail "the damaged heightmap was not made again"
echo "ok: a damaged tile file and heightmap are found and made again ($tile re-baked alone)"

# --- a legend edit without the coast: region 2 and the tiles near it again, the rest kept
N=$T/nc
bake "$N" "$T/in/p2.json" "${run[@]}" --no-coast
LOG=edit bake "$N" "$T/in/p2_range.json" "${run[@]}" --no-coast
[ "$(ran_labels "$N")" = "region 2" ] || fail "the legend edit solved: $(ran_labels "$N")"
kept=$(grep -oE 'tiles: [0-9]+ of [0-9]+ kept' "$T/edit.err" | grep -oE '^tiles: [0-9]+' | grep -oE '[0-9]+' || echo 0)
[ "$kept" -gt 0 ] && [ "$kept" -lt "$n" ] || fail "the legend edit kept $kept of $n tiles (some are far from region 2)"
bake "$T/fresh" "$T/in/p2_range.json" "${run[@]}" --no-coast
for f in $(cd "$T/fresh/tiles" && ls); do
  cmp -s "$T/fresh/tiles/$f" "$N/tiles/$f" || fail "tiles/$f after the edit differs from a fresh bake's"
done
cmp -s "$T/fresh/planet_height.png" "$N/planet_height.png" || fail "the heightmap after the edit differs from a fresh bake's"
assert_clean "after the reruns"
echo "ok: a legend edit re-solves region 2 alone, keeps $kept of $n tiles, and makes a fresh bake's bytes"
