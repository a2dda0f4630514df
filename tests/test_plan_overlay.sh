#!/usr/bin/env bash
# The overlay (docs/plan.md, "The overlay"; issue 28, deliverable 2), as a user paints one: the 10 km
# demo written out by `terrain init`, an RGBA overlay of a town (a disc), a ferry route across the
# seam (a 3-pixel path), a coast_jitter band along the continent's west coast and one stray
# unmatched pixel.
#  - `terrain plan` prints the overlay line (marks, pieces, the unmatched pixel counted with where
#    it is) and writes overlay.json, whose disc centre and area and whose polyline's vertices are
#    the painted ones in world metres, and map_overlay.png;
#  - the coast jitter changed map_class.png only near the marked coast (within its reach of 6 px,
#    the band's rows and columns); with coast_jitter_px 0 (the control) the plan's map_class.png
#    is byte for byte the plan's without an overlay;
#  - `terrain bake` writes the same overlay.json and a map_overlay.png, and its heights differ from
#    the bake without the overlay (the jitter reaches the solve) while a rerun gives the same bits;
#  - refused with exit 2, naming the file or key: an overlay without its legend, an overlay of
#    another size than the painting, a legend with an unknown kind.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"
SRC=$2
cd "$T"
"$TERRAIN" init w --circumference-km 10 >/dev/null
python3 "$SRC/tests/support/overlay_paint.py" w/overlay.png 1250 400 \
  '[["disc",420,330,12,[255,0,0]],["line",[[1200.5,60.5],[1260.5,75.5],[1310.5,90.5]],1,[0,0,0]],["rect",185,60,215,340,[255,255,0]],["pixel",600,20,[10,200,10]]]'
marks() { # marks FILE JITTER_PX
  cat >"$1" <<JSON
{"marks": [
  {"name": "town", "colour": "#ff0000", "kind": "blob"},
  {"name": "ferry", "colour": "#000000", "kind": "path"},
  {"name": "rugged", "colour": "#ffff00", "kind": "coast_jitter", "coast_jitter_px": $2}
]}
JSON
}
marks w/marks.json 6
marks w/still.json 0
with_overlay() { # with_overlay MANIFEST LEGEND [OVERLAY]
  python3 - "$1" "$2" "${3:-overlay.png}" <<'PY'
import json, sys
m = json.load(open('w/planet.json'))
m['template']['overlay'] = sys.argv[3]
m['template']['overlay_legend'] = sys.argv[2]
json.dump(m, open(sys.argv[1], 'w'), indent=1)
PY
}
with_overlay w/ov.json marks.json
with_overlay w/still_ov.json still.json

"$TERRAIN" plan w/planet.json --out plain >plain.out 2>plain.err || fail "the plain plan failed"
"$TERRAIN" plan w/ov.json --out ov >ov.out 2>ov.err || fail "the plan with the overlay failed"
grep -q '^overlay: 3 marks, 3 pieces (1 blobs, 1 paths, 1 coast_jitter), [0-9]* marked pixels, 1 unmatched pixels dropped (the first at 600,20); the coast jitter moved [1-9][0-9]* painting pixels' ov.out ||
  fail "the plan's overlay line: $(grep overlay ov.out)"
[ -s ov/map_overlay.png ] || fail "no map_overlay.png"
[ ! -e plain/overlay.json ] || fail "a plan without an overlay wrote overlay.json"

python3 - ov/overlay.json <<'PY' || fail "overlay.json does not hold what was painted"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d['pixel_m'] == 8 and d['circumference_m'] == 10000, d
assert d['unmatched_pixels'] == 1 and d['first_unmatched_px'] == [600, 20], d['unmatched_pixels']
town = [f for f in d['features'] if f['mark'] == 'town']
assert len(town) == 1, town
t = town[0]
# the disc: centre (420, 330) px = (3360, 2640) m, area pi 12^2 px of 64 m2
assert abs(t['centre_m'][0] - 3360) < 1 and abs(t['centre_m'][1] - 2640) < 1, t['centre_m']
assert abs(t['area_m2'] - math.pi * 144 * 64) < 0.03 * math.pi * 144 * 64, t['area_m2']
ferry = [f for f in d['features'] if f['mark'] == 'ferry']
assert len(ferry) == 1 and ferry[0]['crosses_seam'], ferry
line = ferry[0]['polyline_m']
want = [(9604, 484), (10084, 604), (10484, 724)]  # x unwrapped past the circumference
assert len(line) == 3, line
for (x, y), (wx, wy) in zip(line, want):
    assert math.hypot(x - wx, y - wy) <= 4 * 8, (line, want)  # within the stroke's width and a pixel
print("overlay.json: town at", t['centre_m'], "ferry", line)
PY

# the coast jitter: map_class.png (1 pixel a cell at 10 km) differs only near the marked coast
python3 - plain/map_class.png ov/map_class.png "$SRC" <<'PY' || fail "the coast jitter moved the wrong cells"
import sys
sys.path.insert(0, sys.argv[3] + '/tests/support')
from png_read import png_read
w, h, bpp, a = png_read(sys.argv[1])
_, _, _, b = png_read(sys.argv[2])
diff = [(k // bpp % w, k // bpp // w) for k in range(0, len(a), bpp) if a[k:k + bpp] != b[k:k + bpp]]
assert len(diff) > 20, f"only {len(diff)} cells changed"
bad = [(x, y) for x, y in diff if not (185 - 6 <= x < 215 + 6 and 60 - 6 <= y < 340 + 6)]
assert not bad, f"{len(bad)} cells changed away from the marked coast, e.g. {bad[:5]}"
print(f"coast jitter: {len(diff)} cells of map_class.png changed, all beside the marked coast")
PY
"$TERRAIN" plan w/still_ov.json --out still >still.out 2>still.err || fail "the plan with coast_jitter_px 0 failed"
cmp -s plain/map_class.png still/map_class.png || fail "coast_jitter_px 0 changed map_class.png"
grep -q 'the coast jitter moved 0 painting pixels' still.out || fail "coast_jitter_px 0: $(grep overlay still.out)"

# the bake: the same overlay.json, and the jitter reaches the heights
bake "$T/b_plain" w/planet.json --steps 5 --no-tiles --workers 1
bake "$T/b_ov" w/ov.json --steps 5 --no-tiles --workers 1
cmp -s ov/overlay.json b_ov/overlay.json || fail "the bake's overlay.json is not the plan's"
[ -s b_ov/map_overlay.png ] || fail "the bake wrote no map_overlay.png"
[ ! -e b_plain/overlay.json ] || fail "a bake without an overlay wrote overlay.json"
! cmp -s b_plain/planet_height.png b_ov/planet_height.png || fail "the overlay's coast jitter did not reach the heights"
LOG=again bake "$T/b_ov2" w/ov.json --steps 5 --no-tiles --workers 1
cmp -s b_ov/planet_height.png b_ov2/planet_height.png || fail "two bakes with one overlay differ"

# refusals
python3 - <<'PY'
import json
m = json.load(open('w/ov.json'))
del m['template']['overlay_legend']
json.dump(m, open('w/nolegend.json', 'w'))
PY
rc=0; "$TERRAIN" plan w/nolegend.json --out bad >bad.out 2>bad.err || rc=$?
[ $rc = 2 ] && grep -q 'template.overlay_legend: missing' bad.err || fail "an overlay without its legend: exit $rc, $(cat bad.err)"
python3 "$SRC/tests/support/overlay_paint.py" w/small.png 1250 399 '[]'
with_overlay w/small.json marks.json small.png
rc=0; "$TERRAIN" bake w/small.json --out bad --steps 1 >bad.out 2>bad.err || rc=$?
[ $rc = 2 ] && grep -q 'small.png: 1250 x 399 pixels; expected the painting.s size, 1250 x 400' bad.err ||
  fail "an overlay of another size: exit $rc, $(cat bad.err)"
sed 's/"path"/"road"/' w/marks.json >w/badkind.json
with_overlay w/badkind_ov.json badkind.json
rc=0; "$TERRAIN" plan w/badkind_ov.json --out bad >bad.out 2>bad.err || rc=$?
[ $rc = 2 ] && grep -q 'template.overlay_legend: w/badkind.json: marks\[1\] (ferry).kind: expected "blob", "path" or "coast_jitter"' bad.err ||
  fail "an unknown mark kind: exit $rc, $(cat bad.err)"
[ ! -e bad/planet_height.png ] || fail "a refused bake wrote planet_height.png"
# a sheet without transparency (an opaque white background) is read, every pixel unmatched, and
# the plan says why
python3 "$SRC/tests/support/overlay_paint.py" w/opaque.png 1250 400 '[["rect",0,0,1250,400,[255,255,255]],["disc",420,330,12,[255,0,0]]]'
with_overlay w/opaque.json marks.json opaque.png
"$TERRAIN" plan w/opaque.json --out opaque >opaque.out 2>opaque.err || fail "the plan with an opaque overlay failed: $(cat opaque.err)"
grep -q 'unmatched pixels dropped (the first at 0,0); more than half the sheet matches no mark: save it with a transparent background (alpha 0 is blank)' opaque.out ||
  fail "an opaque overlay: $(grep overlay opaque.out)"
grep -q 'unmatched pixels dropped (the first at 600,20);' ov.out && ! grep -q 'more than half' ov.out ||
  fail "the transparent overlay was told it is opaque: $(grep overlay ov.out)"
echo "plan_overlay: ok"
