#!/usr/bin/env bash
# `terrain stitch` and the detail phase (docs/tiles.md, "Stitching", "Previews", "The detail
# block"), on one bake of the 10 km demo planet (10 x 3.2 km: one row of two 5 km tiles, c000r000
# and c001r000, 2500 x 1600 samples each, the row cut at the planet's south edge). What it proves:
#  - a mosaic is the tiles' samples: an area equal to a tile decodes to that tile's samples (both
#    formats, against the tile's .png decoded and its .r16); an area across the two tiles is the
#    concatenation of their columns; an area across the X seam (from x = 9 km, and the same area
#    given as x = -1 km) is c001's east columns then c000's west columns, and so is the flow
#    map's (8-bit, --layer flow);
#  - the joins are seamless: on the whole ring, the height steps across the two joins (the tile
#    join at x = 5 km and the X seam) are no larger than the steps between neighbours inside the
#    tiles (max and mean). That is the measurable half; the exact half is that tiles are seamless
#    by construction (tests/test_detail.c: a 2 x 2 block of tiles is byte-identical to one tile
#    computed whole) and that a mosaic copies samples (above). Negative control: the same check on
#    a splice of c000 with c001 shifted 200 rows south must fail;
#  - refusals: bad areas, a bad format or layer, an area over --max-samples, a directory without tiles
#    exit 2; a listed tile file missing, or one byte flipped (its XXH3), exit 1 naming the file,
#    and leave no output behind; an area outside the damage still stitches; a tile the index does
#    not list (an unbaked ocean tile) is filled with 0 m encoded and reported as 100 % filled;
#  - the detail phase: preview_detail.png (2500 x 800: the largest landmass's tiles are the whole
#    5000 x 1600 ring, at 1:2 under the 4096-pixel cap) and preview_detail_crop.png (1024 x 1024)
#    exist with those sizes; summary.txt's detail lines are exactly what meta.json's
#    "tiles"."detail_statistics" give; summary.txt is hashed once in meta.json; report.html shows
#    both previews; with --no-tiles the phase is skipped and writes nothing (nor does the page show
#    a preview).
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"
RAW=$1/tb_png_raw

# the verb frame (docs/architecture.md, how to add a verb): --help, and one line naming a bad option
"$TERRAIN" stitch --help >"$T/help.out" || fail "terrain stitch --help exited $?"
grep -q '^usage: terrain stitch OUT --area' "$T/help.out" || fail "terrain stitch --help prints no usage line"
for bad in "--bogus|--bogus" "x|--area" "x --max-samples 0|--max-samples" "|output directory" \
  "$T/nobake --area 0,0,2,2|nobake/tiles/index.json"; do
  rc=0
  # shellcheck disable=SC2086
  "$TERRAIN" stitch ${bad%%|*} >"$T/bad.out" 2>"$T/bad.err" || rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$T/bad.err")" = 1 ] && grep -qF -- "${bad#*|}" "$T/bad.err" ||
    fail "terrain stitch ${bad%%|*}: exit $rc, expected 2 and one line naming ${bad#*|}: $(cat "$T/bad.err")"
done
echo "ok: terrain stitch --help; bad usage exits 2 with one line naming the option"

bake "$T/b" --circumference-km 10 --steps 20 --workers 2
B=$T/b

# stitch_ok NAME ARGS...: runs terrain stitch $B ARGS, which must succeed
stitch_ok() {
  local name=$1
  shift
  "$TERRAIN" stitch "$B" "$@" >"$T/$name.out" 2>"$T/$name.err" || fail "terrain stitch $* exited $?"
}
# stitch_rc DIR ARGS...: the exit status of terrain stitch DIR ARGS (stderr to $T/rc.err)
stitch_rc() {
  local rc=0
  "$TERRAIN" stitch "$@" >"$T/rc.out" 2>"$T/rc.err" || rc=$?
  echo $rc
}

# 1. One tile.
stitch_ok one_png --area 0,0,5000,3200 --out "$T/one.png"
stitch_ok one_r16 --area 0,0,5000,3200 --out "$T/one.r16"
[ "$("$RAW" "$T/one.png" "$T/one.raw")" = "2500 1600 16" ] || fail "the one-tile mosaic is not 2500 x 1600 16-bit"
"$RAW" "$B/tiles/c000r000.png" "$T/c000.raw" >/dev/null
"$RAW" "$B/tiles/c001r000.png" "$T/c001.raw" >/dev/null
cmp -s "$T/one.raw" "$T/c000.raw" || fail "the mosaic of tile c000r000's area is not its samples (png)"
cmp -s "$T/one.r16" "$B/tiles/c000r000.r16" || fail "the mosaic of tile c000r000's area is not its .r16"
cmp -s "$T/c000.raw" "$T/c001.raw" && fail "the two tiles are the same (the comparisons cannot fail)"
echo "ok: an area equal to a tile is that tile's samples (png and r16)"

# cols.py OUT BYTES FILE:X0:N...: the columns X0..X0+N-1 of each raw tile file (2500 samples a
# row of BYTES bytes: 2 for heights, 1 for the maps, 4 for the splat), joined side by side row by row
cat >"$T/cols.py" <<'EOF'
import sys
out = b''
k = int(sys.argv[2])
pieces = [s.split(':') for s in sys.argv[3:]]
data = [open(p[0], 'rb').read() for p in pieces]
rows = len(data[0]) // (k * 2500)
for r in range(rows):
    for d, (_, x0, n) in zip(data, pieces):
        x0, n = int(x0), int(n)
        out += d[k * (r * 2500 + x0):k * (r * 2500 + x0 + n)]
open(sys.argv[1], 'wb').write(out)
EOF

# 2. Across the two tiles: x 4000..6000 m = c000 columns 2000..2499 then c001 columns 0..499.
stitch_ok two --area 4000,0,2000,3200 --out "$T/two.r16"
python3 "$T/cols.py" "$T/two.want" 2 "$T/c000.raw:2000:500" "$T/c001.raw:0:500"
cmp -s "$T/two.r16" "$T/two.want" || fail "the mosaic across the tile join is not the two tiles' columns"
echo "ok: an area across two tiles is the concatenation of their columns"

# 3. Across the X seam: x 9000..11000 m = c001 columns 2000..2499 then c000 columns 0..499.
stitch_ok seam --area 9000,0,2000,3200 --out "$T/seam.r16"
stitch_ok seam_neg --area -1000,0,2000,3200 --out "$T/seam_neg.r16"
python3 "$T/cols.py" "$T/seam.want" 2 "$T/c001.raw:2000:500" "$T/c000.raw:0:500"
cmp -s "$T/seam.r16" "$T/seam.want" || fail "the mosaic across the X seam is not the two halves"
cmp -s "$T/seam_neg.r16" "$T/seam.want" || fail "x0 = -1000 m is not the same area as x0 = 9000 m"
grep -q '0.00 % filled' "$T/seam.out" || fail "the seam mosaic says it filled samples: $(cat "$T/seam.out")"
# an 8-bit map across the seam: the tiles' _flow.png decoded, side by side
stitch_ok seam_flow --area 9000,0,2000,3200 --layer flow --out "$T/seam_flow.png"
[ "$("$RAW" "$T/seam_flow.png" "$T/seam_flow.raw")" = "1000 1600 8" ] || fail "the flow mosaic is not 1000 x 1600 8-bit"
"$RAW" "$B/tiles/c000r000_flow.png" "$T/c000f.raw" >/dev/null
"$RAW" "$B/tiles/c001r000_flow.png" "$T/c001f.raw" >/dev/null
python3 "$T/cols.py" "$T/seam_flow.want" 1 "$T/c001f.raw:2000:500" "$T/c000f.raw:0:500"
cmp -s "$T/seam_flow.raw" "$T/seam_flow.want" || fail "the flow mosaic across the X seam is not the two halves"
# the RGBA splat weightmap across the seam (four bytes a sample), the same way
stitch_ok seam_splat --area 9000,0,2000,3200 --layer splat --out "$T/seam_splat.png"
[ "$("$RAW" "$T/seam_splat.png" "$T/seam_splat.raw")" = "1000 1600 32" ] || fail "the splat mosaic is not 1000 x 1600 RGBA"
[ "$("$RAW" "$B/tiles/c000r000_splat.png" "$T/c000s.raw")" = "2500 1600 32" ] || fail "c000r000_splat.png is not RGBA"
"$RAW" "$B/tiles/c001r000_splat.png" "$T/c001s.raw" >/dev/null
cmp -s "$T/c000s.raw" "$T/c001s.raw" && fail "the two tiles' splat maps are the same (the comparison cannot fail)"
python3 "$T/cols.py" "$T/seam_splat.want" 4 "$T/c001s.raw:2000:500" "$T/c000s.raw:0:500"
cmp -s "$T/seam_splat.raw" "$T/seam_splat.want" || fail "the splat mosaic across the X seam is not the two halves"
python3 "$T/cols.py" "$T/seam_splat.swapped" 4 "$T/c000s.raw:2000:500" "$T/c001s.raw:0:500"
cmp -s "$T/seam_splat.raw" "$T/seam_splat.swapped" && fail "the splat halves in the wrong order compare equal (the check cannot fail)"
echo "ok: an area across the X seam is the east tile's columns then the west tile's (heights, flow and splat)"

# 4. The joins of the whole ring, and the negative control.
stitch_ok ring --area 0,0,10000,3200 --out "$T/ring.r16"
cat >"$T/joins.py" <<'EOF'
import sys, array
a = array.array('H'); a.frombytes(open(sys.argv[1], 'rb').read())
if sys.byteorder != 'little': a.byteswap()
w = 5000; h = len(a) // w
joins = [(2499, 2500), (4999, 0)]          # the tile join and the X seam
jmax = jsum = 0; n = 0
imax = isum = 0; m = 0
for r in range(h):
    row = a[r * w:(r + 1) * w]
    for x0, x1 in joins:
        d = abs(row[x1] - row[x0]); jmax = max(jmax, d); jsum += d; n += 1
    for x in (*range(1, 2499, 7), *range(2501, 4999, 7)):   # inside the tiles, every 7th column
        d = abs(row[x + 1] - row[x]); imax = max(imax, d); isum += d; m += 1
jmean, imean = jsum / n, isum / m
ok = jmax <= imax and jmean <= 2 * imean
print(f"joins: max {jmax} mean {jmean:.2f}; inside: max {imax} mean {imean:.2f} (16-bit steps): {'seamless' if ok else 'STEP'}")
sys.exit(0 if ok else 1)
EOF
python3 "$T/joins.py" "$T/ring.r16" >"$T/joins.out" || fail "a step at a join: $(cat "$T/joins.out")"
cat "$T/joins.out"
# negative control: c000 beside c001 shifted 200 rows south (its first 200 rows dropped, repeated
# at the end), as a mosaic that put a tile in the wrong place would be
python3 - "$T/ring.r16" "$T/bad_ring.r16" <<'EOF'
import sys
b = open(sys.argv[1], 'rb').read(); w = 5000; h = len(b) // (2 * w); out = b''
for r in range(h):
    s = min(r + 200, h - 1)
    out += b[2 * r * w:2 * (r * w + 2500)] + b[2 * (s * w + 2500):2 * (s * w + w)]
open(sys.argv[2], 'wb').write(out)
EOF
python3 "$T/joins.py" "$T/bad_ring.r16" >"$T/joins_bad.out" &&
  fail "negative control: a misplaced tile passed the join check: $(cat "$T/joins_bad.out")"
echo "ok: negative control - $(cat "$T/joins_bad.out")"

# 5. Refusals: bad usage (2).
for bad in "--area 0,0,0,100" "--area 0,0,100" "--area 0,0,100,x" "--area 0,3000,100,400" \
  "--area 0,-2,100,100" "--area 0,0,10002,100" "--area 0,0,100,100 --format tif" \
  "--area 0,0,100,100 --layer colour" "--area 0,0,100,100 --layer wear --format r16" \
  "--area 0,0,100,100 --layer splat --format r16" \
  "--area 0,0,1000,1000 --max-samples 1000"; do
  # shellcheck disable=SC2086
  rc=$(stitch_rc "$B" $bad --out "$T/refused.png")
  [ "$rc" = 2 ] || fail "stitch $bad exited $rc, expected 2: $(cat "$T/rc.err")"
  [ ! -e "$T/refused.png" ] || fail "stitch $bad left $T/refused.png"
done
grep -q 'budget of 1000 samples' "$T/rc.err" || fail "the budget refusal does not say so: $(cat "$T/rc.err")"
[ "$(stitch_rc "$T" --area 0,0,100,100 --out "$T/refused.png")" = 2 ] || fail "a directory without tiles was not refused with 2"
grep -q 'tiles/index.json' "$T/rc.err" || fail "the refusal does not name tiles/index.json"
echo "ok: bad areas, format, layer, budget and a directory without tiles exit 2 and write nothing"

# 6. A damaged bake (1): a copy of the tiles with one file missing, then one with a flipped byte.
mkdir -p "$T/broken/tiles"
cp "$B/tiles/index.json" "$B"/tiles/*.r16 "$T/broken/tiles/"
rm "$T/broken/tiles/c001r000.r16"
[ "$(stitch_rc "$T/broken" --area 4000,0,2000,100 --out "$T/refused.png")" = 1 ] || fail "a missing tile file was not refused with 1"
grep -q 'c001r000.r16' "$T/rc.err" || fail "the refusal does not name the missing file: $(cat "$T/rc.err")"
[ ! -e "$T/refused.png" ] || fail "a refused stitch left its output"
[ "$(stitch_rc "$T/broken" --area 0,0,4000,100 --out "$T/c000part.r16")" = 0 ] ||
  fail "an area of the intact tile was refused: $(cat "$T/rc.err")"
cp "$B/tiles/c001r000.r16" "$T/broken/tiles/"
python3 - "$T/broken/tiles/c000r000.r16" <<'EOF'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[123457] ^= 1; open(p, 'wb').write(b)
EOF
[ "$(stitch_rc "$T/broken" --area 0,0,10000,100 --out "$T/refused.png")" = 1 ] || fail "a flipped byte was not refused with 1"
grep -q 'c000r000.r16: XXH3' "$T/rc.err" || fail "the refusal does not name the damaged file: $(cat "$T/rc.err")"
[ ! -e "$T/refused.png" ] || fail "a refused stitch left its output"
echo "ok: a missing tile file and a flipped byte exit 1 naming the file; intact areas still stitch"

# 7. A tile the index does not list (an unbaked ocean tile): filled with 0 m encoded, reported.
mkdir -p "$T/ocean/tiles"
cp "$B/tiles/c000r000.r16" "$T/ocean/tiles/"
python3 - "$B/tiles/index.json" "$T/ocean/tiles/index.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d['tiles'] = [t for t in d['tiles'] if t['id'] == 'c000r000']
json.dump(d, open(sys.argv[2], 'w'))
EOF
[ "$(stitch_rc "$T/ocean" --area 6000,0,1000,100 --out "$T/ocean.r16")" = 0 ] || fail "the unbaked area was refused: $(cat "$T/rc.err")"
grep -q '100.00 % filled with 0 m' "$T/rc.out" || fail "the fill is not reported: $(cat "$T/rc.out")"
python3 - "$T/ocean.r16" "$B/tiles/index.json" <<'EOF' || fail "the unbaked area is not 0 m encoded"
import sys, json, struct
lo, hi = json.load(open(sys.argv[2]))['encoding']['elevation_m']
want = max(0, min(65535, round((0 - lo) * 65535 / (hi - lo))))
b = open(sys.argv[1], 'rb').read()
vals = set(struct.unpack('<%dH' % (len(b) // 2), b))
sys.exit(0 if vals == {want} and len(b) == 2 * 500 * 50 else 1)
EOF
echo "ok: an unbaked tile is filled with 0 m encoded and reported as filled"

# 8. The previews and the detail block.
png_size() { python3 -c "import struct,sys; b=open(sys.argv[1],'rb').read(24); print(*struct.unpack('>II', b[16:24]))" "$1"; }
[ "$(png_size "$B/preview_detail.png")" = "2500 800" ] || fail "preview_detail.png is $(png_size "$B/preview_detail.png"), expected 2500 800"
[ "$(png_size "$B/preview_detail_crop.png")" = "1024 1024" ] || fail "preview_detail_crop.png is $(png_size "$B/preview_detail_crop.png")"
grep -q 'preview_detail.png: landmass [0-9]*.s tiles, 5000 x 1600 samples from (0, 0) at 1:2' "$T/b.err" ||
  fail "the bake does not say what preview_detail.png shows"
[ "$(json_get "$B/meta.json" 'list(d["outputs"]).count("summary.txt")')" = 1 ] || fail "meta.json hashes summary.txt more than once"
cat >"$T/detail.py" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))['tiles']; s = d['detail_statistics']
lines = [l for l in open(sys.argv[2]).read().splitlines() if l.startswith('detail:')]
want = []
for name, v in s['slope_deg_histogram'].items():
    total = sum(v)
    if total <= 0: continue
    mean = sum(n * (k + 0.5) for k, n in enumerate(v)) / total
    run, p50, p90 = 0, len(v), len(v)
    for k, n in enumerate(v):
        run += n
        if p50 == len(v) and run >= 0.5 * total: p50 = k + 1
        if p90 == len(v) and run >= 0.9 * total: p90 = k + 1
    want.append("detail:   %-16s %7.2f %5d %5d %7.2f%% %12.0f" % (name, mean, p50, p90, 100.0 * sum(v[30:]) / total, total))
share = s['channel_share_of_land']
want.append("drainage density at 2 m: %.3f km/km2" % (share / 2 * 1000.0))
want.append("detail: eroded %.3f m3, deposited %.3f m3" % (s['eroded_m3'], s['deposited_m3']))
text = "\n".join(lines)
missing = [w for w in want if w not in text]
if missing or not lines or s['eroded_m3'] <= 0:
    print("missing:", missing, "\nsummary:\n" + text); sys.exit(1)
print("ok: %d detail lines of summary.txt match meta.json" % len(lines))
EOF
python3 "$T/detail.py" "$B/meta.json" "$B/summary.txt" || fail "summary.txt's detail block is not meta.json's numbers"
# negative control: the same summary with the eroded volume's last digit changed must fail it
sed -E 's/^(detail: eroded [0-9]+\.[0-9][0-9])([0-9])/\1X/' "$B/summary.txt" >"$T/summary.bad"
cmp -s "$B/summary.txt" "$T/summary.bad" && fail "negative control: the edit changed nothing"
python3 "$T/detail.py" "$B/meta.json" "$T/summary.bad" >/dev/null &&
  fail "negative control: a changed eroded volume passed the comparison"
grep -q '<img src="preview_detail.png"' "$B/report.html" && grep -q '<img src="preview_detail_crop.png"' "$B/report.html" ||
  fail "report.html does not show the detail previews"
echo "ok: preview_detail.png 2500 x 800, preview_detail_crop.png 1024 x 1024 (both in report.html), the detail block is meta.json's"

bake "$T/nt" --circumference-km 10 --steps 20 --workers 2 --no-tiles
[ "$(json_get "$T/nt/meta.json" "[p.get('skip_reason') for p in d['phases'] if p['name'] == 'detail'][0]")" = "it needs tiles, not made: --no-tiles" ] ||
  fail "meta.json does not record the detail phase as skipped"
[ ! -e "$T/nt/preview_detail.png" ] && [ ! -e "$T/nt/preview_detail_crop.png" ] || fail "--no-tiles wrote a detail preview"
grep -q '^detail:' "$T/nt/summary.txt" && fail "--no-tiles' summary has a detail block"
grep -q 'preview_detail' "$T/nt/report.html" && fail "--no-tiles' report.html shows a detail preview"
assert_clean "after the stitch test"
echo "ok: --no-tiles skips the detail phase"
