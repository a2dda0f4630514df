#!/usr/bin/env bash
# The demo bake (25 km, 4 regions, 20 steps) in-process on one thread, through 1 local worker on
# two threads, through 4 local workers on one thread each, and through 2 farm workers over loopback
# TCP gives byte-identical planet_height.png, summary.txt and maps (docs/determinism.md: not the number of
# workers or threads, not who ran what). Then the result store of one of those bakes: a rerun reuses
# every region and computes nothing; a stored result with a flipped byte is caught by its checksum
# and only that region is recomputed; --fresh recomputes everything. Every rerun ends with the same
# heightmap.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

demo=(--steps 20 --no-tiles) # the tiles have their own test (test_bake_tiles.sh)
bake "$T/inproc" "${demo[@]}" --workers 0 --threads 1
bake "$T/w1" "${demo[@]}" --workers 1 --threads 2
bake "$T/w4" "${demo[@]}" --workers 4 --threads 1

# Farm mode on loopback TCP: no local workers, two terrain-worker processes connect.
"$TERRAIN" bake "${demo[@]}" --bind 'tcp://127.0.0.1:*' --workers 0 --out "$T/farm" \
  >"$T/farm.out" 2>"$T/farm.err" &
coord=$!
track $coord
wait_for "$T/farm.out" 'listening for workers on tcp://' 10
ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/farm.out" | head -1)
for name in farm-a farm-b; do
  "$WORKER" --connect "$ep" --name $name --threads 1 2>"$T/$name.err" &
  track $!
done
wait $coord || fail "the farm bake failed"

# Not vacuous: the solve made relief (a bake of nothing would agree with itself too).
[ "$(json_get "$T/inproc/meta.json" 'd["extent"]["max_m"] > 5')" = True ] ||
  fail "the reference bake has no relief: max $(json_get "$T/inproc/meta.json" 'd["extent"]["max_m"]') m"
[ "$(json_get "$T/inproc/meta.json" 'd["dispatch"]["mode"]')" = in-process ] || fail "--workers 0 did not run in-process"
[ "$(json_get "$T/w1/meta.json" 'd["dispatch"]["mode"]')" = local ] || fail "--workers 1 did not run local workers"
[ "$(json_get "$T/w1/meta.json" '[w["threads"] for w in d["dispatch"]["workers"]]')" = "[2]" ] ||
  fail "the 1-worker bake did not run on 2 threads: $(json_get "$T/w1/meta.json" '[w["threads"] for w in d["dispatch"]["workers"]]')"
[ "$(json_get "$T/w4/meta.json" 'sorted({w["threads"] for w in d["dispatch"]["workers"]})')" = "[1]" ] ||
  fail "the 4-worker bake did not run on 1 thread each"
# local workers start as jobs are ready for them (docs/distribution.md), so how many of the 4 the
# solve's 4 regions needed depends on timing: at least two, or the bake was not distributed
seen=$(dispatch_stat "$T/w4" workers_seen)
[ "$seen" -ge 2 ] && [ "$seen" -le 4 ] || fail "the 4-worker bake saw $seen workers"
farm_workers=$(json_get "$T/farm/meta.json" '" ".join(sorted({j["worker"] for j in d["dispatch"]["jobs"]}))')
[ "$(json_get "$T/farm/meta.json" 'd["dispatch"]["mode"]')" = farm ] || fail "--bind did not run in farm mode"
[ "$(json_get "$T/farm/meta.json" 'len({j["worker"] for j in d["dispatch"]["jobs"]})')" -ge 1 ] ||
  fail "no farm worker solved anything"
for run in w1 w4 farm; do
  same_height "$T/inproc" "$T/$run" "in-process against $run"
  cmp -s "$T/inproc/summary.txt" "$T/$run/summary.txt" || fail "summary.txt of in-process and $run differ"
  for f in map_flow.png map_basins.png preview.png map_uplift.png map_slope.png map_relief.png \
    map_erodibility.png planet_height_low.png map_coast.png map_exposure.png; do
    cmp -s "$T/inproc/$f" "$T/$run/$f" || fail "$f of in-process and $run differ"
  done
  [ "$(dispatch_stat "$T/$run" ran)" = 4 ] || fail "$run solved $(dispatch_stat "$T/$run" ran) of 4 regions"
done
# meta.json records the XXH3 of every output; check one against the file itself.
[ "$(json_get "$T/w1/meta.json" 'sorted(d["outputs"])')" = \
  "['map_basins.png', 'map_class.png', 'map_coast.png', 'map_erodibility.png', 'map_exposure.png', 'map_flow.png', 'map_regions.png', 'map_relief.png', 'map_slope.png', 'map_uplift.png', 'plan.json', 'planet_height.png', 'planet_height_low.png', 'preview.png', 'summary.txt']" ] ||
  fail "meta.json does not hash every output: $(json_get "$T/w1/meta.json" 'sorted(d["outputs"])')"
echo "ok: in-process on 1 thread, 1 worker x 2 threads, 4 workers x 1 thread and 2 farm workers ($farm_workers) agree byte for byte"

# The store. A rerun of the same command solves nothing.
LOG=rerun bake "$T/w1" "${demo[@]}" --workers 1
[ "$(dispatch_stat "$T/w1" from_store)" = 4 ] && [ "$(dispatch_stat "$T/w1" ran)" = 0 ] ||
  fail "rerun: $(dispatch_stat "$T/w1" ran) regions solved, $(dispatch_stat "$T/w1" from_store) reused; expected 0 and 4"
grep -q '(0 solved, 4 from the store)' "$T/rerun.out" || fail "the rerun does not say it reused everything"
same_height "$T/inproc" "$T/w1" "rerun from the store"
rerun_s=$(json_get "$T/w1/meta.json" 'round(d["bake"]["seconds"], 2)')

# A stored result with one byte flipped in its blob is detected by the checksum and recomputed.
victim=$(ls -S "$T/w1/.cache"/*.tbr | tail -1) # the smallest: cheap to recompute
python3 - "$victim" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[len(b) // 2] ^= 0x5a
open(p, 'wb').write(bytes(b))
EOF
LOG=corrupt bake "$T/w1" "${demo[@]}" --workers 1
[ "$(dispatch_stat "$T/w1" corrupt_store)" = 1 ] || fail "the flipped byte was not detected"
[ "$(dispatch_stat "$T/w1" ran)" = 1 ] && [ "$(dispatch_stat "$T/w1" from_store)" = 3 ] ||
  fail "after the corruption: $(dispatch_stat "$T/w1" ran) solved, $(dispatch_stat "$T/w1" from_store) reused; expected 1 and 3"
grep -qE 'region [0-9]+: stored result unusable, recomputing: .*blob: XXH3 of the [0-9]+ decoded bytes is' "$T/corrupt.err" ||
  fail "the corrupt result was not logged as a checksum mismatch"
same_height "$T/inproc" "$T/w1" "after recomputing a corrupt stored result"

# --fresh ignores the store.
LOG=fresh bake "$T/w1" "${demo[@]}" --workers 2 --fresh
[ "$(dispatch_stat "$T/w1" ran)" = 4 ] && [ "$(dispatch_stat "$T/w1" from_store)" = 0 ] ||
  fail "--fresh: $(dispatch_stat "$T/w1" ran) solved, $(dispatch_stat "$T/w1" from_store) reused; expected 4 and 0"
same_height "$T/inproc" "$T/w1" "--fresh"
assert_clean "after the bakes"
echo "ok: the rerun reused all 4 regions ($rerun_s s), a corrupt result was recomputed alone, --fresh solved all 4"
