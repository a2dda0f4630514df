#!/usr/bin/env bash
# `terrain export` (docs/export.md) on one bake of the 10 km demo planet (two 5 km tiles, 2500 x
# 1600 samples each). For every preset, a 2 x 2 export crossing the X seam (from x = 9 km, 1.5 km
# square, so the tiles run past x = 10 km onto x = 0):
#  - every file's size is in the engine's valid set and its name follows the engine's pattern;
#  - neighbours share their edge rows and columns byte for byte (Unreal, Unity, raw) or, for
#    Terrain3D's regions, which share none, abut: every sample is the bake's at its position;
#  - the 16-bit heights decoded with the sheet's lo/hi agree with the bake's float heights (its
#    .f32z, decoded by tests/tools/tb_export_f32z_raw) within half a step at every sample, across
#    the seam; raw's float32 files are the bake's floats bit for bit;
#  - the weights sum to exactly 255 at every sample; where they are not resampled they are the
#    bake's splat map at the same positions (`terrain stitch --layer splat` of the covered area);
#  - the share of land samples equal to all four neighbours is at most 1 % (printed);
#  - a program that is not ours reads the files back: GDAL (Debian's gdal-bin) finds the same
#    heights with the sheet's scale at sample points of the Unreal PNG and the raw .f32 (ENVI).
# Negative controls: the edge check on a column one off, and the half-step check with the scale
# moved by one step, must fail. Refusals: bad usage exits 2 with one line; a flipped byte in a
# needed .f32z exits 1 naming it and writes nothing; a tile missing from the index exits 2 naming
# it, and --fill-unbaked fills it.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"
RAW=$1/tb_png_raw
F32=$1/tb_export_f32z_raw
command -v gdallocationinfo >/dev/null || fail "gdallocationinfo (gdal-bin) is not installed: scripts/setup installs it"

"$TERRAIN" export --help >"$T/help.out" || fail "terrain export --help exited $?"
grep -q '^usage: terrain export OUT --engine' "$T/help.out" || fail "terrain export --help prints no usage line"
for bad in "--bogus|--bogus" "x --out o|--engine" "x --engine unreal|--out" \
  "x --engine cry --out o|--engine \"cry\"" "x --engine raw --out o --area 1,2|--area" \
  "x --engine raw --out o --area 0,0,9,9 --tiles c000r000|give one" \
  "$T/nobake --engine raw --out o|nobake/tiles/index.json"; do
  rc=0
  # shellcheck disable=SC2086
  "$TERRAIN" export ${bad%%|*} >"$T/bad.out" 2>"$T/bad.err" || rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$T/bad.err")" = 1 ] && grep -qF -- "${bad#*|}" "$T/bad.err" ||
    fail "terrain export ${bad%%|*}: exit $rc, expected 2 and one line naming ${bad#*|}: $(cat "$T/bad.err")"
done

B=$T/b
bake "$B" --circumference-km 10 --steps 20 --workers 2
for id in c000r000 c001r000; do
  "$F32" "$B/tiles/$id.f32z" "$T/$id.ref" >/dev/null || fail "cannot decode $id.f32z"
done

cat >"$T/check.py" <<'EOF'
# check.py ENGINE OUTDIR REFDIR SPLAT.raw RAWTOOL [control]: the checks above on one export.
import array, json, os, re, subprocess, sys
engine, out, refdir, splat_path, rawtool = sys.argv[1:6]
control = sys.argv[6] if len(sys.argv) > 6 else ''
sheet = json.load(open(os.path.join(out, 'terrain_import.json')))
T, P = 2500, 5000
ref = {}
for c in (0, 1):
    a = array.array('f'); a.frombytes(open(os.path.join(refdir, 'c%03dr000.ref' % c), 'rb').read()); ref[c] = a
def ref_at(gx, gy):
    gx %= P
    return ref[gx // T][gy * T + gx % T]
valid = {'unreal': [127, 253, 505, 1009, 2017, 4033, 8129], 'unity': [33, 65, 129, 257, 513, 1025, 2049, 4097],
         'godot': [64, 128, 256, 512, 1024, 2048], 'raw': [129, 257, 513, 1025, 2049, 4097, 8193]}[engine]
pattern = {'unreal': r'terrain(_[a-z_]+)?_x\d+_y\d+\.png', 'unity': r'terrain(_splat)?_\d+_\d+\.(raw|png)',
           'godot': r'terrain(_splat)?_\d+_\d+\.(r16|png)', 'raw': r'terrain(_[a-z_]+)?_\d+_\d+\.(r16|f32|hdr|png)'}[engine]
for f in os.listdir(out):
    if not f.startswith('terrain_import.'):
        assert re.fullmatch(pattern, f), 'file name %s does not follow %s' % (f, pattern)
N, (nx, ny) = sheet['tile_samples'], sheet['tiles']
assert N in valid, 'tile size %d not in %s' % (N, valid)
assert (nx, ny) == (2, 2), 'not 2 x 2 tiles: %s' % sheet['tiles']
x0, y0 = sheet['area']['first_sample']
stride = N - 1 if sheet['shared_edges'] else N
assert x0 + (nx - 1) * stride + N > P, 'the export does not cross the X seam'
h = sheet['heights']; lo, hi = h['lo_m'], h['hi_m']; step = (hi - lo) / 65535
if control == 'scale':
    lo += step
def name(i, j, layer='', ext=''):
    if engine == 'unreal': return 'terrain%s_x%d_y%d%s' % (layer, i, j, ext)
    if engine == 'unity': return 'terrain%s_%d_%d%s' % (layer, i, ny - 1 - j, ext)
    return 'terrain%s_%d_%d%s' % (layer, i, j, ext)
def decode_png(path, want_bits):
    raw = path + '.raw'
    w, hh, bits = map(int, subprocess.check_output([rawtool, path, raw]).split())
    assert w == hh and bits == want_bits, '%s: %d x %d of %d bits' % (path, w, hh, bits)
    data = open(raw, 'rb').read(); os.remove(raw)
    if bits == 16:
        a = array.array('H'); a.frombytes(data); return w, a
    return w, data
tiles = {}
for j in range(ny):
    for i in range(nx):
        hext = {'unreal': '.png', 'unity': '.raw'}.get(engine, '.r16')
        p = os.path.join(out, name(i, j, '', hext))
        if hext == '.png':
            w, v = decode_png(p, 16)
        else:
            a = array.array('H'); a.frombytes(open(p, 'rb').read()); w = int(round((len(a)) ** 0.5))
            assert w * w == len(a), '%s: %d samples, not square' % (p, len(a))
            v = a
            if engine == 'unity':  # Unity's RAW runs south to north: back to north-up
                v = array.array('H', b''.join(v[(N - 1 - r) * N:(N - r) * N].tobytes() for r in range(N)))
        assert w == N, '%s is %d samples, the sheet says %d' % (p, w, N)
        tiles[i, j] = v
        worst = 0.0
        for r in range(N):
            gy = y0 + j * stride + r
            for s in range(N):
                d = abs(lo + v[r * N + s] * step - ref_at(x0 + i * stride + s, gy))
                if d > worst: worst = d
        assert worst <= step / 2 * (1 + 1e-6) + 1e-6, '%s: decoded heights %.6f m from the bake (half a step %.6f)' % (p, worst, step / 2)
        if engine == 'raw':
            f = array.array('f'); f.frombytes(open(os.path.join(out, name(i, j, '', '.f32')), 'rb').read())
            for r in range(N):
                for s in range(N):
                    assert f[r * N + s] == ref_at(x0 + i * stride + s, y0 + j * stride + r), 'float32 differs'
off = 1 if control == 'edge' else 0
if sheet['shared_edges']:
    for j in range(ny):
        a, b = tiles[0, j], tiles[1, j]
        assert all(a[r * N + N - 1 - off] == b[r * N] for r in range(N)), 'column join of row %d differs' % j
    for i in range(nx):
        a, b = tiles[i, 0], tiles[i, 1]
        assert a[(N - 1 - off) * N:(N - off) * N] == b[0:N], 'row join of column %d differs' % i
# weights
sp = open(splat_path, 'rb').read(); SW = (nx - 1) * stride + N
for j in range(ny):
    for i in range(nx):
        if engine in ('unreal', 'raw'):
            layers = [decode_png(os.path.join(out, name(i, j, '_' + l, '.png')), 8)[1] for l in ('rock', 'grass', 'sediment', 'scree_snow')]
            for k in range(N * N):
                assert sum(L[k] for L in layers) == 255, 'weights do not sum to 255'
            for r in range(0, N, 7):
                for s in range(N):
                    o = 4 * ((j * stride + r) * SW + i * stride + s)
                    assert tuple(L[r * N + s] for L in layers) == tuple(sp[o:o + 4]), 'weights are not the bake splat'
        else:
            w, v = decode_png(os.path.join(out, name(i, j, '_splat', '.png')), 32)
            assert w == (N - 1 if engine == 'unity' else N), 'splat of %d texels' % w
            for k in range(w * w):
                assert v[4 * k] + v[4 * k + 1] + v[4 * k + 2] + v[4 * k + 3] == 255, 'weights do not sum to 255'
            if engine == 'godot':
                for r in range(0, N, 7):
                    o = 4 * ((j * stride + r) * SW + i * stride)
                    assert v[4 * r * N:4 * (r + 1) * N] == sp[o:o + 4 * N], 'weights are not the bake splat'
t = h['terraced_share_16bit']
assert t <= 0.01, 'terraced share %.4f over 1 %%' % t
print('%s: %d x %d tiles of %d, heights within %.3f mm, terraced %.3f %%' % (engine, nx, ny, N, step / 2 * 1000, 100 * t))
EOF

declare -A SIZE=([unreal]=505 [unity]=513 [godot]=512 [raw]=513)
for e in unreal unity godot raw; do
  O=$T/$e
  "$TERRAIN" export "$B" --engine "$e" --out "$O" --area 9000,400,1500,1500 --tile-samples "${SIZE[$e]}" \
    >"$T/$e.out" 2>"$T/$e.err" || fail "terrain export --engine $e exited $?"
  grep -q 'terraces: .* of .* land samples equal all four neighbours' "$T/$e.out" || fail "$e: no terrace line"
  x0=$(json_get "$O/terrain_import.json" "d['area']['first_sample'][0]")
  y0=$(json_get "$O/terrain_import.json" "d['area']['first_sample'][1]")
  cw=$(json_get "$O/terrain_import.json" "d['area']['covered_samples'][0]")
  "$TERRAIN" stitch "$B" --layer splat --area "$((2 * x0)),$((2 * y0)),$((2 * cw)),$((2 * cw))" \
    --out "$T/$e.splat.png" >/dev/null || fail "$e: cannot stitch the splat"
  "$RAW" "$T/$e.splat.png" "$T/$e.splat.raw" >/dev/null
  python3 "$T/check.py" "$e" "$O" "$T" "$T/$e.splat.raw" "$RAW" >>"$T/checks.out" 2>"$T/check.err" ||
    fail "$e: $(tail -1 "$T/check.err")"
done
for c in edge scale; do
  if python3 "$T/check.py" unreal "$T/unreal" "$T" "$T/unreal.splat.raw" "$RAW" "$c" >/dev/null 2>&1; then
    fail "negative control '$c': the check passed on a wrong column or scale"
  fi
done

# GDAL reads the files back: the Unreal PNG decoded with the sheet's scale, the raw .f32 by its
# ENVI header, at sample points, against the bake's floats
lo=$(json_get "$T/unreal/terrain_import.json" "d['heights']['lo_m']")
hi=$(json_get "$T/unreal/terrain_import.json" "d['heights']['hi_m']")
x0=$(json_get "$T/unreal/terrain_import.json" "d['area']['first_sample'][0]")
y0=$(json_get "$T/unreal/terrain_import.json" "d['area']['first_sample'][1]")
gdalinfo "$T/unreal/terrain_x1_y0.png" | grep -q 'Size is 505, 505' || fail "gdalinfo: terrain_x1_y0.png is not 505 x 505"
gdalinfo "$T/raw/terrain_1_1.f32" | grep -q 'Size is 513, 513' || fail "gdalinfo: terrain_1_1.f32 is not 513 x 513"
for pt in "0 0" "17 300" "250 250" "504 504" "300 17"; do
  set -- $pt
  v=$(gdallocationinfo -valonly "$T/unreal/terrain_x1_y0.png" "$1" "$2")
  gx=$((x0 + 504 + $1)); gy=$((y0 + $2))
  python3 - "$lo" "$hi" "$v" "$gx" "$gy" "$T" <<'EOF' || fail "GDAL's value at ($1, $2) of terrain_x1_y0.png is not the bake's"
import array, sys
lo, hi, v, gx, gy, T = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
gx %= 5000
a = array.array('f'); a.frombytes(open('%s/c%03dr000.ref' % (T, gx // 2500), 'rb').read())
step = (hi - lo) / 65535
assert abs(lo + v * step - a[gy * 2500 + gx % 2500]) <= step / 2 + 1e-6
EOF
  f=$(gdallocationinfo -valonly "$T/raw/terrain_1_1.f32" "$1" "$2")
  x0r=$(json_get "$T/raw/terrain_import.json" "d['area']['first_sample'][0]")
  y0r=$(json_get "$T/raw/terrain_import.json" "d['area']['first_sample'][1]")
  python3 - "$f" "$((x0r + 512 + $1))" "$((y0r + 512 + $2))" "$T" <<'EOF' || fail "GDAL's float at ($1, $2) of terrain_1_1.f32 is not the bake's"
import array, sys
f, gx, gy, T = float(sys.argv[1]), int(sys.argv[2]) % 5000, int(sys.argv[3]), sys.argv[4]
a = array.array('f'); a.frombytes(open('%s/c%03dr000.ref' % (T, gx // 2500), 'rb').read())
assert abs(f - a[gy * 2500 + gx % 2500]) <= 1e-4 * max(1, abs(f))
EOF
done

# refusals: a flipped byte in a needed .f32z (exit 1, naming it, nothing written); a tile missing
# from the index (exit 2 naming it) and --fill-unbaked
D=$T/damaged
mkdir -p "$D/tiles" && cp "$B"/tiles/* "$D/tiles/"
printf '\x55' | dd of="$D/tiles/c000r000.f32z" bs=1 seek=5000 conv=notrunc status=none
rc=0
"$TERRAIN" export "$D" --engine raw --out "$T/dout" --area 9000,400,1500,1500 --tile-samples 513 >"$T/d.out" 2>"$T/d.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'c000r000.f32z' "$T/d.err" || fail "a damaged .f32z: exit $rc, expected 1 naming it: $(cat "$T/d.err")"
[ -z "$(ls -A "$T/dout" 2>/dev/null)" ] || fail "a refused export left files: $(ls "$T/dout")"
M=$T/missing
mkdir -p "$M/tiles" && cp "$B"/tiles/* "$M/tiles/"
python3 - "$M/tiles/index.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d['tiles'] = [t for t in d['tiles'] if t['id'] != 'c000r000']
json.dump(d, open(sys.argv[1], 'w'))
EOF
rc=0
"$TERRAIN" export "$M" --engine godot --out "$T/mout" --area 9000,400,1500,1500 --tile-samples 512 >"$T/m.out" 2>"$T/m.err" || rc=$?
[ "$rc" = 2 ] && grep -q 'needs tile(s) c000r000 ' "$T/m.err" || fail "a tile missing from the index: exit $rc, expected 2 naming it: $(cat "$T/m.err")"
"$TERRAIN" export "$M" --engine godot --out "$T/mout" --area 9000,400,1500,1500 --tile-samples 512 --fill-unbaked -20 >"$T/m.out" 2>"$T/m.err" ||
  fail "--fill-unbaked: exit $?: $(cat "$T/m.err")"
grep -q 'samples of unbaked tiles filled with -20 m' "$T/m.out" || fail "--fill-unbaked does not say what it filled"
cat "$T/checks.out"
echo "export: ok"
