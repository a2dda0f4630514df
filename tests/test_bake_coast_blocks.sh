#!/usr/bin/env bash
# The coast phase in blocks (docs/coast.md, "Blocks"; coordinator/bake/phase_coast.c): the 10 km
# demo with shorter coastal reaches (a halo of 320 cells, so a 1250-cell planet splits) baked with
# the coast's whole pass in one job, and with --job-memory-gb 0.13 (3 blocks of 3 x 1, a probe round
# and a full one, on 2 workers): the heightmap, the coast and exposure maps and summary.txt are the
# same bytes. A rerun takes every block job from the store, and runs no probe round: it starts from
# the previous bake's final bits (meta.json's coast.share_bits), which a lying meta.json cannot turn
# into another planet (the control: wrong bits, a further round, the same bytes). The control: a
# drift twice as wide makes another coast (the comparison sees the coast). tests/test_coast_blocks.c
# holds the blocks to the whole pass on many layouts, with a halo one step short as its control.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

"$TERRAIN" init "$T/in" --circumference-km 10 >"$T/init.out" 2>&1 || fail "terrain init failed"
python3 - "$T/in/planet.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["coast"] = {"shelf_km": 0.6, "slope_km": 0.3, "ref_fetch_km": 0.6, "drift_km": 0.1,
              "carry_m": 150, "deposit_reach_m": 150, "surf_reach_m": 60}
json.dump(m, open(sys.argv[1][:-5] + "_short.json", "w"), indent=1)
m["coast"]["drift_km"] = 0.2
json.dump(m, open(sys.argv[1][:-5] + "_wide.json", "w"), indent=1)
PY
run=(--steps 20 --no-tiles --workers 2)
bake "$T/whole" "$T/in/planet_short.json" "${run[@]}"
bake "$T/blocks" "$T/in/planet_short.json" "${run[@]}" --job-memory-gb 0.13
grep -q 'coast: 3 blocks (3 x 1) with a halo of 320 cells' "$T/blocks.err" || fail "the coast was not cut into 3 blocks"
[ "$(json_get "$T/whole/meta.json" 'len(d["coast"]["dispatch"]["jobs"])')" = 1 ] || fail "the whole coast was not one job"
[ "$(json_get "$T/blocks/meta.json" '[j["kind"] for j in d["coast"]["dispatch"]["jobs"]]')" = \
  "['coast_block', 'coast_block', 'coast_block']" ] || fail "the blocked coast's last round is not 3 block jobs"
for f in planet_height.png map_coast.png map_exposure.png preview.png summary.txt; do
  cmp -s "$T/whole/$f" "$T/blocks/$f" || fail "$f of the whole pass and of 3 blocks differ"
done
echo "ok: the coast in 3 blocks (probe and full round) is the whole pass's heightmap, maps and summary"
# every block job's worker within the block's estimate (tb_coast_block_peak_bytes)
peaks_within "$T/blocks" coast.dispatch
peaks_within "$T/whole" coast.dispatch

rounds() { json_get "$1/meta.json" '[d["coast"][k] for k in ("rounds", "probed", "known_share")]'; }
[ "$(rounds "$T/blocks")" = "[2, True, False]" ] || fail "the first blocked bake did not probe, then run one full round: $(rounds "$T/blocks")"
LOG=rerun bake "$T/blocks" "$T/in/planet_short.json" "${run[@]}" --job-memory-gb 0.13
[ "$(json_get "$T/blocks/meta.json" 'd["coast"]["dispatch"]["stats"]["from_store"]')" = 3 ] ||
  fail "the rerun did not take the block jobs from the store"
cmp -s "$T/whole/planet_height.png" "$T/blocks/planet_height.png" || fail "the rerun's heightmap differs"
# the rerun on the same inputs takes the first bake's bits: one round, no probe
[ "$(rounds "$T/blocks")" = "[1, False, True]" ] || fail "the rerun did not run one round from the previous bake's bits: $(rounds "$T/blocks")"
grep -q 'no probe: the bits of the previous bake' "$T/rerun.err" || fail "the rerun did not say it skipped the probe"
# a meta.json that lies about the bits costs a round, never a byte: the round's tally refutes them
python3 - "$T/blocks/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["coast"]["share_bits"][0] -= 1
json.dump(m, open(sys.argv[1], "w"))
PY
LOG=lied bake "$T/blocks" "$T/in/planet_short.json" "${run[@]}" --job-memory-gb 0.13
r=$(rounds "$T/blocks")
[ "${r:0:1}" = "[" ] && [ "${r:1:1}" -ge 2 ] && [ "${r#*, }" = "False, True]" ] || fail "wrong bits in meta.json were not refuted by a further round: $r"
for f in planet_height.png map_coast.png map_exposure.png summary.txt; do
  cmp -s "$T/whole/$f" "$T/blocks/$f" || fail "$f differs after a rerun from wrong bits"
done
echo "ok: a rerun runs one round from the previous bake's bits; wrong bits cost a round, not a byte"

bake "$T/wide" "$T/in/planet_wide.json" "${run[@]}" --job-memory-gb 0.13
! cmp -s "$T/whole/map_coast.png" "$T/wide/map_coast.png" || fail "a wider drift made the same coast"
assert_clean "after the blocked coasts"
echo "ok: a rerun takes the blocks from the store; a wider drift (the control) makes another coast"
