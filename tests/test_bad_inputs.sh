#!/usr/bin/env bash
# A table of bad inputs (manifests, legends, paintings, command-line values, special files, output
# paths), each run under `timeout` so that none can hang the suite: every row must exit with its
# expected status (2: bad usage or input) and print its message fragment, and no row may leave a
# file in its output directory (nothing written under a final name, no empty result store), nor
# change an input (docs/bake.md, "Bad input"). A row that hangs shows as exit 124 and fails.
# Negative control: the first row is a good plan, which must exit 0 and write its files, so the
# "nothing written" check is seen to find files.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

cd "$T"
"$TERRAIN" init base --circumference-km 10 >/dev/null 2>&1 || fail "terrain init failed"
cores=$(nproc)

# mkpng FILE W H RGBHEX: a W x H PNG of one colour.
mkpng() {
  python3 - "$@" <<'EOF'
import struct, sys, zlib
path, w, h, rgb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), bytes.fromhex(sys.argv[4])
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
raw = b''.join(b'\0' + rgb * w for _ in range(h))
open(path, 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
                       chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
EOF
}
# variant NAME PYTHON: a copy of base/ as NAME/ whose planet.json (m) and legend.json (l) the python
# statements change; files it names are relative to NAME/.
variant() {
  rm -rf "$1"
  cp -r base "$1"
  python3 - "$1" "$2" <<'EOF'
import json, sys
d, code = sys.argv[1], sys.argv[2]
m = json.load(open(d + '/planet.json'))
l = json.load(open(d + '/legend.json'))
exec(code)
json.dump(m, open(d + '/planet.json', 'w'))
json.dump(l, open(d + '/legend.json', 'w'))
EOF
}

n=0
# row EXIT FRAGMENT CMD...: runs CMD (with --out o/N where it says OUT) and checks it.
row() {
  local want=$1 frag=$2 rc=0
  shift 2
  n=$((n + 1))
  local out="o/$n" args=()
  for a in "$@"; do [ "$a" = OUT ] && args+=("$out") || args+=("$a"); done
  local before
  before=$(find . \( -path ./o -o -path ./tmp -o -name 'r[0-9]*.*' \) -prune -o -type f -print0 | xargs -0 -r sha1sum | sort)
  timeout 20 "${args[@]}" >"r$n.out" 2>"r$n.err" </dev/null || rc=$?
  [ "$rc" = "$want" ] || fail "row $n (${args[*]}): exit $rc, expected $want; stderr: $(head -c 600 "r$n.err")"
  grep -qE -- "$frag" "r$n.err" || fail "row $n (${args[*]}): no message matching '$frag'; stderr: $(head -c 600 "r$n.err")"
  if [ "$want" != 0 ]; then
    left=$(find "$out" -mindepth 1 2>/dev/null || true)
    [ -z "$left" ] || fail "row $n (${args[*]}): left files behind: $left"
  fi
  after=$(find . \( -path ./o -o -path ./tmp -o -name 'r[0-9]*.*' \) -prune -o -type f -print0 | xargs -0 -r sha1sum | sort)
  [ "$before" = "$after" ] || fail "row $n (${args[*]}): an input changed"
}

# -- negative control: a good plan writes its files
row 0 '' "$TERRAIN" plan base/planet.json --out OUT
[ -f o/1/plan.json ] || fail "the good plan wrote no plan.json (the checks would see nothing)"
rm -rf o/1

# -- special files and missing files
mkfifo fifo.json fifo.png fifo.cert
row 2 'fifo.json: not a regular file \(a FIFO\)' "$TERRAIN" plan fifo.json --out OUT
row 2 'base: not a regular file \(a directory\)' "$TERRAIN" plan base --out OUT
row 2 '/dev/null: not a regular file \(a character device\)' "$TERRAIN" bake /dev/null --out OUT
row 2 'nothere.json: cannot open: No such file' "$TERRAIN" bake nothere.json --out OUT
variant fl "m['template']['legend'] = '../fifo.json'"
row 2 'fifo.json: not a regular file \(a FIFO\)' "$TERRAIN" plan fl/planet.json --out OUT
variant fp "m['template']['painting'] = '../fifo.png'"
row 2 'fifo.png: not a regular file \(a FIFO\)' "$TERRAIN" bake fp/planet.json --out OUT
variant np "m['template']['painting'] = 'gone.png'"
row 2 'gone.png: cannot open' "$TERRAIN" plan np/planet.json --out OUT
row 2 'fifo.json: not a regular file \(a FIFO\)' "$TERRAIN" gate --gates fifo.json base/planet.json --out OUT

# -- manifests
printf '{' >bad.json
row 2 'bad.json: not valid JSON' "$TERRAIN" plan bad.json --out OUT
variant uk "m['solve']['stepz'] = 3"
row 2 'solve.stepz.*unknown key' "$TERRAIN" plan uk/planet.json --out OUT
variant s0 "m['solve']['steps'] = 0"
row 2 'solve.steps' "$TERRAIN" bake s0/planet.json --out OUT
variant cm "m['cell_m'] = -8"
row 2 'cell_m' "$TERRAIN" plan cm/planet.json --out OUT
variant ck "m['circumference_km'] = 'ten'"
row 2 'circumference_km' "$TERRAIN" plan ck/planet.json --out OUT
variant dt "m['solve']['dt_yr'] = float('nan')" 2>/dev/null || true
row 2 'dt_yr|not valid JSON' "$TERRAIN" plan dt/planet.json --out OUT
# the tiles section's pass keys (docs/tiles.md): one row per kind of check - a range, a key nothing
# reads, a group that is not an object, a check across keys, and the margin the passes require (the
# base planet.json, written by `terrain init`, states its margin: 136)
variant tl "m['tiles']['droplets']['lifetime'] = 0"
row 2 'tiles\.droplets\.lifetime: expected an integer in 1\.\.1000, got 0' "$TERRAIN" plan tl/planet.json --out OUT
variant tu "m['tiles']['droplets']['lifetimes'] = 20"
row 2 'tiles\.droplets\.lifetimes: unknown key' "$TERRAIN" plan tu/planet.json --out OUT
variant tg "m['tiles']['thermal'] = 6"
row 2 'tiles\.thermal: expected an object, got 6' "$TERRAIN" plan tg/planet.json --out OUT
variant ts "m['tiles']['splat']['scree_deg'] = 45"
row 2 'tiles\.splat\.scree_deg 45 must be below tiles\.splat\.rock_deg 40' "$TERRAIN" plan ts/planet.json --out OUT
variant tm "m['tiles']['droplets']['lifetime'] = 30"
row 2 'tiles\.margin_cells 136 is below 173, the provable margin.*tiles\.droplets\.lifetime is 30 \(measured at 20\)' "$TERRAIN" plan tm/planet.json --out OUT

# -- legends
variant lc "l['classes'][0]['name'] = 'low\x1b[31mland'"
row 2 'without control characters' "$TERRAIN" plan lc/planet.json --out OUT
grep -q $'\x1b' "r$n.err" && fail "row $n: a control character was printed raw"
variant lo "l['classes'][0]['colour'] = '#zzzzzz'"
row 2 'colour' "$TERRAIN" plan lo/planet.json --out OUT
variant lk "l['classes'][0]['kind'] = 'lava'"
row 2 '"land" or "ocean"' "$TERRAIN" plan lk/planet.json --out OUT
variant lu "del l['classes'][0]['uplift_mm_yr']"
row 2 'uplift_mm_yr: missing' "$TERRAIN" plan lu/planet.json --out OUT
variant le "l['classes'] = []"
row 2 'classes' "$TERRAIN" plan le/planet.json --out OUT
variant ld "l['classes'][3]['depth_m'] = -5"
row 2 'depth_m' "$TERRAIN" bake ld/planet.json --out OUT
variant ln "l['classes'][0]['name'] = ''"
row 2 'name' "$TERRAIN" plan ln/planet.json --out OUT

# -- paintings
variant pt "open(d + '/painting.png', 'w').write('not a png')"
row 2 'painting.png: not a PNG file' "$TERRAIN" plan pt/planet.json --out OUT
variant ph ""
python3 - ph/painting.png <<'EOF'
import struct, sys, zlib
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
open(sys.argv[1], 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 2147483647, 1, 8, 2, 0, 0, 0)) + chunk(b'IEND', b''))
EOF
row 2 '2147483647 pixels wide, which does not divide' "$TERRAIN" bake ph/planet.json --out OUT
variant pw ""
mkpng pw/painting.png 1249 400 6f9a4a
row 2 '1249 pixels wide, which does not divide' "$TERRAIN" plan pw/planet.json --out OUT
variant pl ""
mkpng pl/painting.png 125 40 6f9a4a
row 2 'no ocean' "$TERRAIN" bake pl/planet.json --out OUT
variant po ""
mkpng po/painting.png 125 40 1f4e79
row 2 'no land' "$TERRAIN" plan po/planet.json --out OUT
variant pc ""
head -c 200 base/painting.png >pc/painting.png
row 2 'painting.png: invalid PNG' "$TERRAIN" plan pc/planet.json --out OUT
variant pu ""
mkpng pu/painting.png 125 40 ff00ff
row 2 'painting.png' "$TERRAIN" plan pu/planet.json --out OUT

# -- command-line values
row 2 '--steps 0: expected an integer in 1\.\.1000000' "$TERRAIN" bake base/planet.json --steps 0 --out OUT
row 2 '--steps' "$TERRAIN" bake base/planet.json --steps -5 --out OUT
row 2 '--steps' "$TERRAIN" bake base/planet.json --steps abc --out OUT
row 2 '--threads 4096: expected 0\.\.' "$TERRAIN" bake base/planet.json --threads 4096 --out OUT
row 2 "--threads $((8 * cores + 1)): expected 0\\.\\.$((8 * cores))" "$TERRAIN" farm-check --threads $((8 * cores + 1)) --out OUT
row 2 '--workers' "$TERRAIN" bake base/planet.json --workers -1 --out OUT
row 2 '--seed' "$TERRAIN" bake base/planet.json --seed -1 --out OUT
row 2 '--only 99: no such region' "$TERRAIN" bake base/planet.json --only 99 --steps 2 --out OUT
row 2 'unknown option|--bogus' "$TERRAIN" bake base/planet.json --bogus --out OUT
row 2 '--fail-jobs: job 99: expected a job index in 0\.\.7' "$TERRAIN" farm-check --fail-jobs 99 --out OUT
row 2 '--fail-jobs' "$TERRAIN" farm-check --fail-jobs -1 --out OUT
row 2 '--jobs' "$TERRAIN" farm-check --jobs 0 --out OUT
row 2 '--heartbeat-ms' "$TERRAIN" farm-check --heartbeat-ms 1 --out OUT
row 2 '--threads' "$TERRAIN" solve-region base/planet.json --region 1 --threads 100000 --out OUT
row 2 '--threads 100000' "$WORKER" --connect tcp://127.0.0.1:1 --threads 100000
row 2 '--circumference-km applies to the demo planet only' "$TERRAIN" plan base/planet.json --circumference-km 20 --out OUT

# -- tiles: choosing them (docs/tiles.md, "Re-running chosen tiles"); refused before anything is written
row 2 '--tiles-only c000r000 with --no-tiles' "$TERRAIN" bake base/planet.json --tiles-only c000r000 --no-tiles --out OUT
row 2 "--tiles-only c009r000: no such tile; this planet's tiles are c000r000\.\.c001r000" "$TERRAIN" bake base/planet.json --tiles-only c009r000 --steps 2 --out OUT
row 2 '--tiles-only x1: not a tile id' "$TERRAIN" bake base/planet.json --tiles-only c000r000,x1 --steps 2 --out OUT
row 2 '--tiles-only c001r000-c000r000: a range runs from its north-west' "$TERRAIN" bake base/planet.json --tiles-only c001r000-c000r000 --steps 2 --out OUT
row 2 'meta.json: no complete bake here' "$TERRAIN" bake base/planet.json --tiles-only c000r000 --steps 2 --out OUT
row 2 'need a circumference of at least 2772 detail cells' "$TERRAIN" bake --circumference-km 5 --steps 2 --out OUT
row 2 'not a complete bake' "$TERRAIN" tiles OUT
row 2 'base: not a complete bake' "$TERRAIN" tiles base
row 2 '--only and --measure-margin: give one or the other' "$TERRAIN" tiles OUT --only c000r000 --measure-margin
row 2 '--sample-km goes with --measure-margin' "$TERRAIN" tiles OUT --sample-km 0.4
row 2 '--sample-km' "$TERRAIN" tiles OUT --measure-margin --sample-km -1
row 2 '--check-seams goes alone' "$TERRAIN" tiles OUT --check-seams --measure-margin
row 2 '--at, --margin and --size-km go with --check-seams' "$TERRAIN" tiles OUT --at c000r000
row 2 '--margin' "$TERRAIN" tiles OUT --check-seams --margin -1

# -- farm refusals: exit 2 and no empty result store
row 2 'reachable from other hosts: give CURVE keys' "$TERRAIN" bake base/planet.json --steps 2 --bind 'tcp://0.0.0.0:*' --out OUT
row 2 'nokey.cert: not a ZeroMQ certificate' "$TERRAIN" farm-check --bind 'tcp://127.0.0.1:*' --curve-cert nokey.cert --out OUT
row 2 'fifo.cert: not a regular file \(a FIFO\)' "$TERRAIN" bake base/planet.json --bind 'tcp://127.0.0.1:*' --curve-cert fifo.cert --out OUT
row 2 'cannot bind tcp://256\.1\.1\.1' "$TERRAIN" farm-check --bind 'tcp://256.1.1.1:5555' --insecure --out OUT
"$TERRAIN" farm-keys --out keys >/dev/null 2>&1 || fail "terrain farm-keys failed"
mkdir -p noclients
row 2 '--curve-clients noclients: no worker certificate in it' "$TERRAIN" bake base/planet.json --steps 2 --bind 'tcp://127.0.0.1:*' --curve-cert keys/coordinator.cert --curve-clients noclients --out OUT
row 2 "--verify '2': expected auto, off, all or a share in \\(0, 1\\]" "$TERRAIN" bake base/planet.json --steps 2 --verify 2 --out OUT
row 2 "--verify 'often': expected auto, off, all or a share" "$TERRAIN" farm-check --verify often --out OUT
row 2 "--out '': expected the output directory" "$TERRAIN" bake base/planet.json --steps 2 --out ''

# -- analyze
python3 -c "import struct; open('nan.f32','wb').write(struct.pack('<16f', *([float('nan')] * 16)))"
row 2 'nan.f32: no finite height in its 16 cells' "$TERRAIN" analyze nan.f32 --raw-float32 4x4 --cell-m 8 --out OUT
row 2 'nan.f32: 64 bytes, but --raw-float32 5x5 needs exactly 100' "$TERRAIN" analyze nan.f32 --raw-float32 5x5 --cell-m 8 --out OUT
python3 -c "import struct; open('big.f32','wb').write(struct.pack('<16f', *([3e38] * 16)))"
row 2 'big.f32: height 3e\+38 m at cell \(0, 0\): expected heights within' "$TERRAIN" analyze big.f32 --raw-float32 4x4 --cell-m 8 --out OUT
# 4611686018427387905 x 16 is 16 cells in a wrapped 64-bit product: the 64 bytes of big.f32
row 2 '--raw-float32 4611686018427387905x16: expected a size of 3 .. 2\^31 cells' "$TERRAIN" analyze big.f32 --raw-float32 4611686018427387905x16 --cell-m 8 --out OUT
row 2 'fifo.png: not a regular file \(a FIFO\)' "$TERRAIN" analyze fifo.png --cell-m 8 --elevation-m -100,100 --out OUT

# -- output paths that hold the run's own inputs, or are not directories
mkdir -p own1 own2 own3
cp base/legend.json base/painting.png own1/
cp base/planet.json own1/plan.json
row 2 'own1/plan.json: an input the run would overwrite' "$TERRAIN" bake own1/plan.json --steps 2 --out own1
cp base/planet.json base/legend.json own2/
cp base/painting.png own2/map_class.png
python3 -c "import json; m=json.load(open('own2/planet.json')); m['template']['painting']='map_class.png'; json.dump(m, open('own2/planet.json','w'))"
row 2 'own2/map_class.png: an input the run would overwrite' "$TERRAIN" plan own2/planet.json --out own2
cp base/planet.json base/painting.png own3/
cp base/legend.json own3/summary.txt
python3 -c "import json; m=json.load(open('own3/planet.json')); m['template']['legend']='summary.txt'; json.dump(m, open('own3/planet.json','w'))"
row 2 'own3/summary.txt: an input the run would overwrite' "$TERRAIN" bake own3/planet.json --steps 2 --out own3
for d in own1 own2 own3; do
  left=$(find "$d" -newer base/planet.json -type f | grep -vE '/(plan\.json|map_class\.png|summary\.txt|planet\.json|legend\.json|painting\.png)$' || true)
  [ -z "$left" ] || fail "a refused bake wrote into its output directory: $left"
  [ ! -e "$d/.cache" ] && [ ! -e "$d/meta.json" ] || fail "a refused bake wrote a store or meta.json into $d"
done
cmp -s own1/plan.json base/planet.json || fail "own1/plan.json (an input) was overwritten"
cmp -s own2/map_class.png base/painting.png || fail "own2/map_class.png (an input) was overwritten"
echo hello >afile
row 2 'afile: exists and is not a directory' "$TERRAIN" bake base/planet.json --steps 2 --out afile
row 2 'afile: exists and is not a directory' "$TERRAIN" plan base/planet.json --out afile
row 2 'afile: exists and is not a directory' "$TERRAIN" farm-check --jobs 1 --work 1 --workers 0 --out afile

# Memory known before it is needed (docs/distribution.md, "Peak memory"): a region whose job's bound
# exceeds --job-memory-gb is refused by plan and bake, naming it; a tile job's bound (0.82 GB for a
# default tile) by the bake before its solve, and plan says the bake would.
row 2 'region [0-9]+ \(landmass.*needs about 0\.0[6-9] GB on its worker .*a job may take 0\.04 GB' \
  "$TERRAIN" plan base/planet.json --out OUT --job-memory-gb 0.04
row 2 'region [0-9]+ \(landmass.*needs about 0\.[0-9][0-9] GB on its worker' \
  "$TERRAIN" bake base/planet.json --steps 1 --out OUT --job-memory-gb 0.04
row 2 'a tile job needs about 0\.8[0-9] GB on its worker \(tiles of 2500 detail cells with a margin of [0-9]+.*a job may take 0\.30 GB' \
  "$TERRAIN" bake base/planet.json --steps 1 --out OUT --job-memory-gb 0.3
"$TERRAIN" plan base/planet.json --out o/plan-mem --job-memory-gb 0.3 >plan-mem.out 2>&1 ||
  fail "plan at 0.3 GB a job: $(tail -3 plan-mem.out)"
grep -q 'tiles: the bake refuses them: a tile job needs about 0\.8' plan-mem.out ||
  fail "plan at 0.3 GB a job does not say the bake refuses its tiles: $(grep tiles plan-mem.out)"
# the control: the same budget holds every region and coast job of this planet
"$TERRAIN" bake base/planet.json --steps 1 --out o/nt-mem --job-memory-gb 0.3 --no-tiles >nt-mem.out 2>&1 ||
  fail "a bake without tiles at 0.3 GB a job was refused: $(tail -3 nt-mem.out)"

echo "ok: $n rows (1 good, $((n - 1)) bad inputs), each with its exit status and message, none hanging, nothing written"
