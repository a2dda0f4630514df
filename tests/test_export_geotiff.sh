#!/usr/bin/env bash
# `terrain export --geotiff` (docs/export.md, "GeoTIFF") on one bake of the 10 km demo planet (two
# 5 km tiles), read back by GDAL from Debian (python3-gdal's osgeo.gdal and gdallocationinfo), not
# by our code. For a 2 x 2 Unreal export crossing the X seam and a 2 x 2 Unity one (whose own RAW
# runs south first; the GeoTIFF is north first whatever the engine):
#  - every exported tile has one GeoTIFF, listed in the sheet, of the tile's size, one Float32 band;
#  - its geotransform is the tile's world position: origin (x cell_m, - y cell_m) for the tile's
#    first lattice sample (x, y), x unwrapped past the circumference, pixels cell_m, north up;
#  - its CRS is a local one in metres whose citation names the seed; AREA_OR_POINT is Area;
#  - every sample is the bake's float height (its .f32z, decoded by tests/tools/tb_export_f32z_raw)
#    bit for bit, and gdallocationinfo -geoloc at world coordinates (sample centres, some across
#    the seam) finds the bake's height at those coordinates.
# Negative controls: the same check on a copy whose tie point is moved by one pixel, and on a copy
# with one sample one float step off, must fail. Refusals: a bake without meta.json (the citation's
# source) exits 1 naming it and writes no GeoTIFF; a GeoTIFF that cannot be renamed into place
# exits 1 naming the file and leaves no temporary.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"
F32=$1/tb_export_f32z_raw
PY=/usr/bin/python3 # Debian's: python3-gdal installs osgeo there (scripts/setup)
"$PY" -c 'from osgeo import gdal' 2>/dev/null ||
  fail "$PY cannot import osgeo.gdal (python3-gdal): scripts/setup installs it"
command -v gdallocationinfo >/dev/null || fail "gdallocationinfo (gdal-bin) is not installed: scripts/setup installs it"

B=$T/b
bake "$B" --circumference-km 10 --steps 20 --workers 2
for id in c000r000 c001r000; do
  "$F32" "$B/tiles/$id.f32z" "$T/$id.ref" >/dev/null || fail "cannot decode $id.f32z"
done

cat >"$T/check.py" <<'PYEOF'
# check.py OUTDIR REFDIR: the checks above on one export's GeoTIFFs; exits non-zero naming the first
# difference.
import array, json, os, struct, subprocess, sys
from osgeo import gdal, osr
gdal.UseExceptions()
out, refdir = sys.argv[1:3]
sheet = json.load(open(os.path.join(out, 'terrain_import.json')))
T, P = 2500, 5000  # the demo's bake tiles and the planet's circumference, samples
ref = {}
for c in (0, 1):
    a = array.array('f'); a.frombytes(open(os.path.join(refdir, 'c%03dr000.ref' % c), 'rb').read()); ref[c] = a
def ref_row(gx, gy, n):  # n floats of the bake's row gy from column gx, wrapping in x
    return array.array('f', [ref[(x % P) // T][gy * T + (x % P) % T] for x in range(gx, gx + n)])
N, (nx, ny), cell = sheet['tile_samples'], sheet['tiles'], sheet['cell_m']
x0, y0 = sheet['area']['first_sample']
stride = N - 1 if sheet['shared_edges'] else N
assert x0 + (nx - 1) * stride + N > P, 'the export does not cross the X seam'
assert sheet['heights']['geotiff_files'] is True and 'geotiff' in sheet, 'the sheet records no GeoTIFF'
tifs = {tuple(f['tile']): f['name'] for f in sheet['files'] if f['what'] == 'heights, float32 GeoTIFF metres'}
assert sorted(tifs) == [(i, j) for i in range(nx) for j in range(ny)], 'GeoTIFFs listed: %s' % sorted(tifs)
for (i, j), name in sorted(tifs.items()):
    path = os.path.join(out, name)
    d = gdal.Open(path)
    assert (d.RasterXSize, d.RasterYSize, d.RasterCount) == (N, N, 1), '%s: %d x %d x %d' % (name, d.RasterXSize, d.RasterYSize, d.RasterCount)
    b = d.GetRasterBand(1)
    assert b.DataType == gdal.GDT_Float32, '%s: band type %s' % (name, gdal.GetDataTypeName(b.DataType))
    gx, gy = x0 + i * stride, y0 + j * stride  # the tile's first sample, x unwrapped
    want = (gx * cell, cell, 0.0, -gy * cell, 0.0, -cell)
    assert d.GetGeoTransform() == want, '%s: geotransform %s, the tile is at %s' % (name, d.GetGeoTransform(), want)
    listed = [t['north_west_m'] for t in sheet['geotiff']['tiles'] if t['file'] == name]
    assert listed == [[want[0], want[3]]], '%s: the sheet places it at %s, not %s' % (name, listed, want[::3])
    srs = d.GetSpatialRef()
    assert srs is not None and srs.GetLinearUnits() == 1.0 and srs.GetLinearUnitsName() in ('metre', 'meter'), '%s: units %s' % (name, srs and srs.GetLinearUnitsName())
    assert 'seed' in srs.ExportToWkt(), '%s: the CRS citation names no seed' % name
    assert d.GetMetadataItem('AREA_OR_POINT') == 'Area', '%s: AREA_OR_POINT %s' % (name, d.GetMetadataItem('AREA_OR_POINT'))
    for r in range(N):
        got = b.ReadRaster(0, r, N, 1, buf_type=gdal.GDT_Float32)
        assert got == ref_row(gx, gy + r, N).tobytes(), '%s: row %d is not the bake\'s floats' % (name, r)
    # a program of GDAL's, asked at world coordinates (sample centres) only
    for px, py in ((0, 0), (N - 1, N - 1), (N // 2, 17), (3, N - 5), (N - 1, 0)):
        X, Y = (gx + px + 0.5) * cell, -(gy + py + 0.5) * cell
        v = subprocess.check_output(['gdallocationinfo', '-valonly', '-geoloc', path, repr(X), repr(Y)]).decode().strip()
        assert v, '%s: gdallocationinfo finds nothing at (%s, %s)' % (name, X, Y)
        assert struct.pack('<f', float(v)) == ref_row(gx + px, gy + py, 1).tobytes(), \
            '%s: at world (%s, %s) m GDAL reads %s, the bake has %r' % (name, X, Y, v, ref_row(gx + px, gy + py, 1)[0])
print('%s: %d GeoTIFFs of %d, geotransforms and %d samples each as baked' % (sheet['engine'], len(tifs), N, N * N))
PYEOF

declare -A SIZE=([unreal]=505 [unity]=513)
for e in unreal unity; do
  "$TERRAIN" export "$B" --engine "$e" --out "$T/$e" --area 9000,400,1500,1500 --tile-samples "${SIZE[$e]}" \
    --geotiff >"$T/$e.out" 2>"$T/$e.err" || fail "terrain export --engine $e --geotiff exited $?: $(tail -1 "$T/$e.err")"
  "$PY" "$T/check.py" "$T/$e" "$T" >>"$T/checks.out" 2>"$T/check.err" || fail "$e: $(tail -1 "$T/check.err")"
done

# negative controls: a tie point one pixel east, and one sample one float step off
for c in shift value; do
  rm -rf "$T/ctl" && cp -r "$T/unreal" "$T/ctl"
  "$PY" - "$T/ctl/terrain_x1_y0.tif" "$c" <<'PYEOF'
import struct, sys
from osgeo import gdal
gdal.UseExceptions()
d = gdal.Open(sys.argv[1], gdal.GA_Update)
if sys.argv[2] == 'shift':
    g = list(d.GetGeoTransform()); g[0] += g[1]; d.SetGeoTransform(g)
else:
    b = d.GetRasterBand(1)  # the next float32 up: its bits plus one (a height is never -0 or NaN)
    bits = struct.unpack('<I', b.ReadRaster(100, 200, 1, 1, buf_type=gdal.GDT_Float32))[0]
    b.WriteRaster(100, 200, 1, 1, struct.pack('<I', bits + 1), buf_type=gdal.GDT_Float32)
d = None
PYEOF
  if "$PY" "$T/check.py" "$T/ctl" "$T" >/dev/null 2>"$T/ctl.err"; then
    fail "negative control '$c': the check passed on a GeoTIFF that is wrong"
  fi
  # ... and for the reason planted: the geotransform, or the floats of row 200
  want=$([ "$c" = shift ] && echo "terrain_x1_y0.tif: geotransform" || echo "terrain_x1_y0.tif: row 200 is not")
  grep -qF "$want" "$T/ctl.err" || fail "negative control '$c' failed for another reason: $(tail -1 "$T/ctl.err")"
  echo "negative control $c: $(tail -1 "$T/ctl.err" | cut -c1-160)" >>"$T/checks.out"
done

# refusals: no meta.json (exit 1 naming it, no GeoTIFF written); a GeoTIFF's name taken by a
# directory (exit 1 naming the file, no temporary left)
N=$T/nometa
mkdir -p "$N/tiles" && cp "$B"/tiles/* "$N/tiles/"
rc=0
"$TERRAIN" export "$N" --engine raw --out "$T/nout" --area 9000,400,1500,1500 --tile-samples 513 --geotiff >"$T/n.out" 2>"$T/n.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'nometa/meta.json' "$T/n.err" || fail "no meta.json: exit $rc, expected 1 naming it: $(cat "$T/n.err")"
[ -z "$(ls "$T/nout" 2>/dev/null | grep '\.tif')" ] || fail "a refused export left GeoTIFFs: $(ls "$T/nout")"
mkdir -p "$T/dir/terrain_x0_y1.tif"
rc=0
"$TERRAIN" export "$B" --engine unreal --out "$T/dir" --area 9000,400,1500,1500 --tile-samples 505 --geotiff >"$T/dir.out" 2>"$T/dir.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'dir/terrain_x0_y1.tif' "$T/dir.err" || fail "an unwritable GeoTIFF: exit $rc, expected 1 naming it: $(cat "$T/dir.err")"
[ -z "$(ls "$T/dir" | grep '\.tmp\.')" ] || fail "a failed GeoTIFF left a temporary: $(ls "$T/dir")"
cat "$T/checks.out"
echo "export_geotiff: ok"
