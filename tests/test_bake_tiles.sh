#!/usr/bin/env bash
# The tiles phase (docs/tiles.md): the 10 km demo planet (two 5 km tiles, both coast) is baked
#  - in-process (--workers 0) and on 2 local workers: every tile file is byte-identical (the XXH3s
#    of tiles/index.json agree) - and, the negative control, another seed gives other tiles;
#  - again into the same directory: every tile comes from the result store, the files unchanged;
#  - with --no-tiles: no tile job runs and meta.json records the phase as skipped.
# The index lists every tile with its origin, size and samples, and the .r16 holds 2 bytes a sample.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

run=(--circumference-km 10 --steps 20)
bake "$T/inproc" "${run[@]}" --workers 0
bake "$T/local" "${run[@]}" --workers 2
files() { json_get "$1/tiles/index.json" "json.dumps([t['files'] for t in d['tiles']], sort_keys=True)"; }
n=$(json_get "$T/local/tiles/index.json" "len(d['tiles'])")
[ "$n" -ge 1 ] || fail "no tile in the index"
[ "$(files "$T/inproc")" = "$(files "$T/local")" ] || fail "tiles differ between in-process and 2 workers"
[ "$(json_get "$T/local/meta.json" "d['tiles']['tiles']")" = "$n" ] || fail "meta.json's tile count"
for id in $(json_get "$T/local/tiles/index.json" "' '.join(t['id'] for t in d['tiles'])"); do
  for f in "$id.png" "$id.r16" "${id}_flow.png" "${id}_wear.png" "${id}_deposit.png" "${id}_splat.png"; do
    [ -s "$T/local/tiles/$f" ] || fail "tiles/$f missing"
  done
  samples=$(json_get "$T/local/tiles/index.json" "[t['samples'][0] * t['samples'][1] for t in d['tiles'] if t['id'] == '$id'][0]")
  [ "$(stat -c %s "$T/local/tiles/$id.r16")" = $((2 * samples)) ] || fail "$id.r16 is not 2 bytes a sample"
done
echo "ok: $n tiles, byte-identical in-process and on 2 workers"
# A tile job's weight is its window's cells with a land cell counting 1.9 (phase_tiles.c): the
# tiles of one row have windows of one size, so weight / (1 + 0.9 x land share) agrees among them,
# the share read here from the heights above 0 m (the class raster's land, within a few %). The
# control: the two tiles' land shares differ (61 and 7 % at this seed), so their weights alone do not.
python3 - "$T/local" <<'PY' || fail "the tile weights do not follow the land share"
import array, json, sys
out = sys.argv[1]
ix = json.load(open(out + "/tiles/index.json"))
lo, hi = ix["encoding"]["elevation_m"]
zero = -lo * 65535 / (hi - lo)
rows = {}
for j in json.load(open(out + "/meta.json"))["tiles"]["dispatch"]["jobs"]:
    tid = j["label"].split()[1]
    a = array.array("H")
    a.frombytes(open(f"{out}/tiles/{tid}.r16", "rb").read())
    share = sum(1 for v in a[::7] if v > zero) / len(a[::7])
    rows.setdefault(tid[4:], []).append((j["weight"], share, tid))
pairs = 0
for row in rows.values():
    for (w1, s1, t1) in row:
        for (w2, s2, t2) in row:
            if t1 >= t2:
                continue
            pairs += 1
            c1, c2 = w1 / (1 + 0.9 * s1), w2 / (1 + 0.9 * s2)
            print(f"{t1}: weight {w1:.0f}, land {s1:.2f}; {t2}: weight {w2:.0f}, land {s2:.2f}; "
                  f"window cells {c1:.0f} and {c2:.0f}")
            assert abs(c1 / c2 - 1) < 0.05, "the window cells implied differ"
            if abs(s1 - s2) > 0.2:
                assert abs(w1 / w2 - 1) > 0.1, "the weights do not see the land"
assert pairs > 0, "no two tiles in one row"
PY
# the workers' peaks within each tile job's stated bound (jobs/detail/tile.h, tb_tile_peak_bytes)
peaks_within "$T/local" dispatch tiles.dispatch

bake "$T/seed8" "${run[@]}" --workers 2 --seed 8
[ "$(files "$T/seed8")" != "$(files "$T/local")" ] || fail "another seed gave the same tiles (the comparison cannot fail)"
echo "ok: negative control - seed 8 gives other tiles"

cp "$T/local/tiles/index.json" "$T/index.before"
LOG=rerun bake "$T/local" "${run[@]}" --workers 2
[ "$(json_get "$T/local/meta.json" "d['tiles']['from_store'] + d['tiles']['kept']")" = "$n" ] || fail "the rerun recomputed tiles"
[ "$(files "$T/local")" = "$(json_get "$T/index.before" "json.dumps([t['files'] for t in d['tiles']], sort_keys=True)")" ] ||
  fail "the rerun changed the tiles"
echo "ok: a rerun takes every tile from the store"

bake "$T/notiles" "${run[@]}" --workers 2 --no-tiles
[ ! -e "$T/notiles/tiles" ] || fail "--no-tiles wrote tiles"
[ "$(json_get "$T/notiles/meta.json" "[p.get('skipped') for p in d['phases'] if p['name'] == 'tiles'][0]")" = True ] ||
  fail "meta.json does not record the tiles phase as skipped"
assert_clean "after the tile bakes"
echo "ok: --no-tiles skips the phase"
