#!/usr/bin/env bash
# A partial bake: `--only 2,3 --steps 50` on the demo planet solves exactly regions 2 and 3, and every
# line of the statistics block it prints (and writes to summary.txt) says PARTIAL. A whole bake into
# the same directory then reuses those two results and solves only regions 1 and 4 - so a partial
# bake's regions are the whole bake's - and prints no PARTIAL at all (the negative control). With the
# coastal pass the first partial bake skips its tiles, naming regions 1,4 (neither solved nor stored);
# `--only 4,1,4` after the whole bake bakes its tiles from the store. Unknown region ids are refused
# before anything runs, with a message naming the valid range (exit 2). A partial bake differs from
# a whole one only in what the solve feeds in: once the store holds every region, `--only 4,1,4`
# borrows regions 2 and 3 from it and its heightmap, coast and tiles are the whole bake's bytes.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

bake "$T/bake" --only 2,3 --steps 50 --workers 2
[ "$(ran_labels "$T/bake")" = "region 2, region 3" ] || fail "--only 2,3 solved: $(ran_labels "$T/bake")"
[ "$(dispatch_stat "$T/bake" jobs)" = 2 ] || fail "--only 2,3 dispatched $(dispatch_stat "$T/bake" jobs) jobs"
[ "$(json_get "$T/bake/meta.json" '(d["bake"]["partial"], d["bake"]["only"], d["bake"]["regions_solved"], d["bake"]["regions_total"])')" = \
  "(True, [2, 3], 2, 4)" ] || fail "meta.json's bake record does not describe a partial bake of regions 2 and 3"
head -1 "$T/bake/summary.txt" | grep -q '2 of 4 regions (PARTIAL)$' || fail "summary.txt's first line does not say PARTIAL"
# The statistics block: every line after the header, in the file and on stdout.
stats_lines=$(tail -n +2 "$T/bake/summary.txt" | wc -l)
[ "$stats_lines" -ge 8 ] || fail "summary.txt has only $stats_lines statistics lines"
if tail -n +2 "$T/bake/summary.txt" | grep -v '^PARTIAL '; then
  fail "the lines above, in summary.txt, do not say PARTIAL"
fi
printed=$(grep -cE '^(slopes|slope-area|hypsometric|by uplift|plain|rolling|mountain|all land|elevation)' "$T/bake.out" || true)
[ "$printed" = 0 ] || fail "$printed statistics lines printed without PARTIAL"
[ "$(grep -c '^PARTIAL ' "$T/bake.out")" = "$stats_lines" ] || fail "stdout and summary.txt differ in PARTIAL lines"
grep -q '^PARTIAL bake of regions 2,3 of 4 only' "$T/bake.out" || fail "the partial bake does not name its regions"
# with the coastal pass a partial bake's tiles need every region (the pass runs over the whole
# planet): regions 1 and 4 are neither solved nor stored, so it bakes no tile and says so
# (docs/tiles.md; tests/test_tiles_partial_coast.sh bakes them once the store holds the others)
[ "$(json_get "$T/bake/meta.json" "[p.get('skip_reason', '') for p in d['phases'] if p['name'] == 'tiles'][0]")" = \
  "$(json_get "$T/bake/meta.json" "d['tiles']['phase_skipped']")" ] || fail "meta.json's tiles block does not record the skip"
grep -q "phase tiles skipped: a partial bake (regions 2,3 of 4) with the coastal pass: .* regions 1,4 (2 of 4) are neither solved here nor stored" "$T/bake.err" &&
  [ ! -e "$T/bake/tiles" ] || fail "the partial bake with the coast baked tiles, or did not name the missing regions"
echo "ok: --only 2,3 solved regions 2 and 3, and all $stats_lines statistics lines say PARTIAL"

# The whole bake into the same directory: regions 2 and 3 come from the store, no line says PARTIAL.
LOG=whole bake "$T/bake" --steps 50 --workers 2
[ "$(ran_labels "$T/bake")" = "region 1, region 4" ] || fail "the whole bake after --only 2,3 solved: $(ran_labels "$T/bake")"
[ "$(dispatch_stat "$T/bake" from_store)" = 2 ] || fail "the whole bake did not reuse the partial bake's 2 regions"
! grep -q PARTIAL "$T/bake/summary.txt" "$T/whole.out" || fail "a whole bake says PARTIAL"
[ "$(json_get "$T/bake/meta.json" 'd["bake"]["partial"]')" = False ] || fail "meta.json calls the whole bake partial"
mkdir -p "$T/whole_copy"
cp "$T/bake/planet_height.png" "$T/bake/map_coast.png" "$T/whole_copy/"
cp "$T/bake/tiles/index.json" "$T/whole_copy/index.json"

# Repeated and unordered ids name the regions once; from the store this takes a second.
LOG=repeat bake "$T/bake" --only 4,1,4 --steps 50 --workers 2
[ "$(json_get "$T/bake/meta.json" 'd["bake"]["only"]')" = "[1, 4]" ] || fail "--only 4,1,4 is not regions 1 and 4"
grep -q '^PARTIAL bake of regions 1,4 of 4 only' "$T/repeat.out" || fail "--only 4,1,4 is not described as regions 1,4"
# now the store holds every region and the whole bake's coast: regions 2 and 3 are borrowed, so the
# composite, the coast (its job a store hit) and the tiles of regions 1 and 4's land are the whole
# bake's, all from the store
[ "$(json_get "$T/bake/meta.json" "(d['tiles']['regions_from_store'], d['bake']['regions_borrowed'], d['coast']['dispatch']['stats']['from_store'], d['tiles']['dispatch']['stats']['ran'], d['tiles']['tiles'] > 0)")" = \
  "(2, 2, 1, 0, True)" ] || fail "--only 4,1,4 after the whole bake did not bake its tiles from the store"
for f in planet_height.png map_coast.png; do
  cmp -s "$T/whole_copy/$f" "$T/bake/$f" || fail "--only 4,1,4 with every other region stored: $f is not the whole bake's"
done
python3 - "$T/whole_copy/index.json" "$T/bake/tiles/index.json" <<'PY' || fail "--only 4,1,4: a tile differs from the whole bake's"
import json, sys
whole = {t["id"]: t["files"] for t in json.load(open(sys.argv[1]))["tiles"]}
part = {t["id"]: t["files"] for t in json.load(open(sys.argv[2]))["tiles"]}
assert part and all(whole[i] == f for i, f in part.items()), "differs"
PY

# Unknown ids: refused with the valid range, exit 2, nothing written.
for ids in 2,9 0 5; do
  rc=$(LOG=bad bake_status "$T/bad" --only $ids --steps 50 --workers 2)
  [ "$rc" = 2 ] || fail "--only $ids: exit $rc, expected 2"
  grep -q "this planet has regions 1..4" "$T/bad.err" || fail "--only $ids: the message does not name the valid range"
  [ ! -e "$T/bad" ] || fail "--only $ids wrote $T/bad"
done
rc=$(LOG=bad bake_status "$T/bad" --only 2,x --workers 2)
[ "$rc" = 2 ] || fail "--only 2,x: exit $rc, expected 2"
assert_clean "after the partial bakes"
echo "ok: the whole bake reused regions 2 and 3 and says no PARTIAL; unknown ids refused with the range"
