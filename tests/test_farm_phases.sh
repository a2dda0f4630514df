#!/usr/bin/env bash
# One farm for every phase of a bake (docs/distribution.md, "One engine across the phases"): the
# 10 km demo planet baked with `--bind` on loopback TCP and three terrain-worker processes, one of
# them SIGKILLed while it computes a tile, against an in-process bake (--workers 0):
#  1. the regions, the coast job and the tile jobs all ran on the farm's workers (meta.json's dispatch
#     records name w1..w3, never "in-process"), in mode "farm";
#  2. the killed worker's tile was lost and run again on another worker, and the bake finished;
#  3. planet_height.png, map_coast.png, tiles/index.json and every tile file are byte-identical to
#     the in-process bake's;
#  4. the workers were kept across the phases and told to leave once, at the end: each joined once
#     (the coordinator's log), none but the killed one was lost, none was left without a coordinator
#     (a reconnection), each survivor was said goodbye to exactly once and exited 0;
#  5. a bake interrupted (SIGINT) in its tiles phase tells its two workers once that the run failed,
#     and they leave.
# Negative controls: the in-process reference has relief and tiles (a bake of nothing would agree
# with itself), the kill is checked to have hit a running tile (the worker's own log and the record),
# and before this engine a farm bake fails check 1 (its coast ran "in-process", its tiles were skipped).
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

run=(--circumference-km 10 --steps 20)
bake "$T/ref" "${run[@]}" --workers 0
[ "$(json_get "$T/ref/meta.json" 'd["extent"]["max_m"] > 5')" = True ] || fail "the reference bake has no relief"
n_tiles=$(json_get "$T/ref/tiles/index.json" 'len(d["tiles"])')
[ "$n_tiles" -ge 2 ] || fail "the reference bake has $n_tiles tiles; the test needs 2"

"$TERRAIN" bake "${run[@]}" "${FAST[@]}" --bind 'tcp://127.0.0.1:*' --workers 0 --threads 1 --verbose \
  --out "$T/farm" >"$T/farm.out" 2>"$T/farm.err" &
coord=$!
track $coord
wait_for "$T/farm.out" 'listening for workers on tcp://' 30
ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/farm.out" | head -1)
declare -A pid
for name in w1 w2 w3; do
  "$WORKER" --connect "$ep" --name $name --threads 1 "${FAST[@]}" >"$T/$name.out" 2>"$T/$name.err" &
  pid[$name]=$!
  track ${pid[$name]}
done

# The first tile job out: kill its worker once the worker has started it.
re='dispatch: job [0-9]+ \(tile (c[0-9]+r[0-9]+)\) attempt 1 to (w[0-9])'
wait_for "$T/farm.err" "$re" 150
line=$(grep -m1 -E "$re" "$T/farm.err")
tile=$(sed -E "s/.*$re.*/\\1/" <<<"$line")
victim=$(sed -E "s/.*$re.*/\\2/" <<<"$line")
wait_for "$T/$victim.err" '\(tile, [0-9]+-byte spec\) started' 30
kill -9 "${pid[$victim]}"
echo "killed $victim while it computed tile $tile"
wait $coord || fail "the farm bake failed after $victim was killed"

# 1. every job on the farm
for sec in '["dispatch"]' '["coast"]["dispatch"]' '["tiles"]["dispatch"]'; do
  [ "$(json_get "$T/farm/meta.json" "d$sec['mode']")" = farm ] || fail "d$sec is not in farm mode"
  workers=$(json_get "$T/farm/meta.json" "' '.join(sorted({j['worker'] for j in d$sec['jobs']}))")
  for w in $workers; do
    [[ $w =~ ^w[123]$ ]] || fail "a job of d$sec ran on '$w', not on a farm worker"
  done
  [ -n "$workers" ] || fail "d$sec has no job"
done
echo "ok: regions, coast and tiles ran on the farm's workers ($(json_get "$T/farm/meta.json" \
  "' '.join(j['worker'] for j in d['coast']['dispatch']['jobs'])") did the coast)"

# 2. the killed tile ran again elsewhere
outcome=$(json_get "$T/farm/meta.json" \
  "[a['outcome'] for j in d['tiles']['dispatch']['jobs'] if j['label'] == 'tile $tile' for a in j['attempts'] if a['worker'] == '$victim'][0]")
[[ $outcome == lost:* ]] || fail "tile $tile's attempt on $victim: '$outcome', expected lost"
done_by=$(json_get "$T/farm/meta.json" "[j['worker'] for j in d['tiles']['dispatch']['jobs'] if j['label'] == 'tile $tile'][0]")
[ "$done_by" != "$victim" ] || fail "tile $tile was done by the killed worker"
[ "$(json_get "$T/farm/meta.json" 'd["tiles"]["dispatch"]["stats"]["lost"]')" -ge 1 ] || fail "the tiles' record counts no loss"
echo "ok: tile $tile was lost with $victim ($outcome) and done by $done_by"

# 3. the same bytes
same_height "$T/ref" "$T/farm" "in-process against the farm"
cmp -s "$T/ref/map_coast.png" "$T/farm/map_coast.png" || fail "map_coast.png differs"
cmp -s "$T/ref/tiles/index.json" "$T/farm/tiles/index.json" || fail "tiles/index.json differs"
n_files=0
for f in "$T"/ref/tiles/*; do
  cmp -s "$f" "$T/farm/tiles/$(basename "$f")" || fail "tiles/$(basename "$f") differs"
  n_files=$((n_files + 1))
done
[ "$n_files" = $((7 * n_tiles + 1)) ] || fail "only $n_files tile files compared"
echo "ok: planet_height.png, map_coast.png and $n_files tile files byte-identical to the in-process bake"

# 4. kept across the phases, dismissed once
for name in w1 w2 w3; do
  joins=$(grep -c "worker $name joined" "$T/farm.err" || true)
  [ "$joins" = 1 ] || fail "$name joined $joins times (dismissed or lost between phases?)"
done
gone=$(grep -E 'worker w[0-9] gone' "$T/farm.err" || true)
[ "$(wc -l <<<"$gone")" = 1 ] && [[ $gone == *"worker $victim gone"* ]] || fail "workers lost: $gone"
for name in w1 w2 w3; do
  [ "$name" = "$victim" ] && continue
  rc=0
  wait "${pid[$name]}" || rc=$?
  [ $rc = 0 ] || fail "$name exited $rc"
  [ "$(grep -c 'the coordinator said goodbye (the run is complete)' "$T/$name.err")" = 1 ] ||
    fail "$name was not said goodbye exactly once"
  ! grep -q 'no word from the coordinator' "$T/$name.err" || fail "$name lost its coordinator between phases"
done
echo "ok: each worker joined once, kept across solve, coast and tiles, and left once at the end"

# 5. Interrupted in the tiles phase: the workers are told once that the run failed, and leave. The
# store of the bake above without its tiles makes solve and coast instant (so the engine binds only
# for the tiles: a later batch can bind too).
mkdir -p "$T/int"
cp -r "$T/farm/.cache" "$T/int/.cache"
for key in $(json_get "$T/farm/meta.json" "' '.join(j['key'] for j in d['tiles']['dispatch']['jobs'])"); do
  rm "$T/int/.cache/$key.tbr"
done
"$TERRAIN" bake "${run[@]}" "${FAST[@]}" --bind 'tcp://127.0.0.1:*' --workers 0 --threads 1 --verbose \
  --out "$T/int" >"$T/int.out" 2>"$T/int.err" &
coord=$!
track $coord
wait_for "$T/int.out" 'listening for workers on tcp://' 60
ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/int.out" | head -1)
for name in w4 w5; do
  "$WORKER" --connect "$ep" --name $name --threads 1 "${FAST[@]}" >"$T/$name.out" 2>"$T/$name.err" &
  pid[$name]=$!
  track ${pid[$name]}
done
wait_for "$T/int.err" 'dispatch: job [0-9]+ \(tile c[0-9]+r[0-9]+\) attempt 1 to w[45]' 60
kill -INT $coord
crc=0
wait $coord || crc=$?
[ $crc != 0 ] || fail "the interrupted bake exited 0"
[ ! -e "$T/int/meta.json" ] || fail "the interrupted bake wrote meta.json"
[ "$(grep -c 'results reused from' "$T/int.err")" -ge 2 ] || fail "solve and coast did not come from the store"
for name in w4 w5; do
  rc=0
  wait "${pid[$name]}" || rc=$?
  [ $rc = 0 ] || fail "$name exited $rc after the interrupt"
  [ "$(grep -c 'the coordinator said goodbye (the run failed)' "$T/$name.err")" = 1 ] ||
    fail "$name was not told once that the run failed"
done
echo "ok: an interrupt in the tiles phase (exit $crc) dismissed both workers once"
