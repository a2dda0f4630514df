#!/usr/bin/env bash
# Every job kind's own check runs before a result is stored or used (docs/distribution.md,
# "Verifying results"): store entries altered so that their spec's echo still matches and their
# checksum is right (tests/tools/tb_misbehave.c --tamper), one per kind, on the 10 km demo at 20
# steps:
#   region       its header's box moved one column east (it once was stored under the region's
#                key, failed the composite with "the result is for another box", and every later
#                run failed the same way);
#   coast_block  its tally's cut 1000 units more than its first drift's sources (a budget that does
#                not close);
#   tile         its first height 100 m higher (its 16-bit sample no longer encodes it).
# A bake over the tampered store must report each entry as unusable with the kind's own words,
# recompute it, end with the reference's bytes (heightmap, coast map, tile files) and leave the
# reference's entries in the store. Negative controls: each entry differs from the reference's
# after tampering, and with that kind's check off (TB_TEST_UNCHECKED=KIND, jobs/job.c) the tampered
# entry is used: the bake fails or its outputs differ.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

tiny=(--circumference-km 10 --steps 20 --workers 0)
bake "$T/ref" "${tiny[@]}"

# key KIND: the reference's store key of its first job of KIND.
key() {
  json_get "$T/ref/meta.json" "sorted(j['key'] for rec in (d['dispatch'], d['coast']['dispatch'], d['tiles']['dispatch']) for j in rec['jobs'] if j['kind'] == '$1')[0]"
}
tile_files() { json_get "$1/tiles/index.json" "json.dumps([t['files'] for t in d['tiles']], sort_keys=True)"; }
coast_stats() { json_get "$1/meta.json" "json.dumps({k: v for k, v in d['coast'].items() if k not in ('seconds', 'dispatch')}, sort_keys=True)"; }
same_outputs() { # A B: heightmap, coast map and statistics, tile files identical
  cmp -s "$1/planet_height.png" "$2/planet_height.png" && cmp -s "$1/map_coast.png" "$2/map_coast.png" &&
    [ "$(coast_stats "$1")" = "$(coast_stats "$2")" ] &&
    [ "$(tile_files "$1")" = "$(tile_files "$2")" ] &&
    for f in "$1"/tiles/*; do cmp -s "$f" "$2/tiles/$(basename "$f")" || return 1; done
}

# tampered DIR: a copy of the reference's store with one entry of each kind altered.
tampered() {
  local kind k
  mkdir -p "$1"
  cp -r "$T/ref/.cache" "$1/.cache"
  for kind in region coast_block tile; do
    k=$(key $kind)
    "$MISBEHAVE" --tamper "$1/.cache/$k.tbr" >>"$T/tamper.out" || fail "cannot tamper with the $kind entry"
    ! cmp -s "$1/.cache/$k.tbr" "$T/ref/.cache/$k.tbr" || fail "the tampered $kind entry is the good one (no attack)"
  done
}

tampered "$T/t"
timeout 300 "$TERRAIN" bake "${tiny[@]}" --out "$T/t" >"$T/t.out" 2>"$T/t.err" ||
  fail "the bake over a tampered store failed or hung"
grep -qE 'region [0-9]+: stored result unusable, recomputing: region result: box [0-9]+,[0-9]+ .*not the spec.s' "$T/t.err" ||
  fail "the region entry with another box was not reported"
grep -qE 'stored result unusable, recomputing: coast block result: the first drift.s sources [0-9]+ are not the cut' "$T/t.err" ||
  fail "the coast block entry whose budget does not close was not reported"
grep -qE 'stored result unusable, recomputing: tile result \(tile c00[01]r000\): interior cell 0 has height' "$T/t.err" ||
  fail "the tile entry with a wrong height was not reported"
same_outputs "$T/ref" "$T/t" || fail "the bake over a tampered store differs from the reference"
for kind in region coast_block tile; do
  cmp -s "$T/t/.cache/$(key $kind).tbr" "$T/ref/.cache/$(key $kind).tbr" || fail "the tampered $kind entry was left in the store"
done
# a second bake over it reuses everything: nothing is poisoned
LOG=t2 bake "$T/t" "${tiny[@]}"
[ "$(dispatch_stat "$T/t" corrupt_store)" = 0 ] || fail "the second bake still found unusable entries"
[ "$(dispatch_stat "$T/t" from_store)" = "$(dispatch_stat "$T/t" jobs)" ] || fail "the second bake recomputed regions"
echo "ok: a region with another box, a coast block whose budget does not close and a tile with a wrong height were refused from the store and recomputed; same bytes"

# Negative controls: without the kind's check the tampered entry gets through.
for kind in region coast_block tile; do
  tampered "$T/n-$kind"
  rc=0
  TB_TEST_UNCHECKED=$kind timeout 300 "$TERRAIN" bake "${tiny[@]}" --out "$T/n-$kind" >"$T/n-$kind.out" 2>"$T/n-$kind.err" || rc=$?
  if [ "$rc" = 0 ] && same_outputs "$T/ref" "$T/n-$kind"; then
    fail "$kind: with its check off the tampered entry changed nothing (the test cannot fail)"
  fi
  echo "ok (negative control): with the $kind check off the tampered entry is used (exit $rc$([ "$rc" = 0 ] && echo ', other bytes'))"
done
assert_clean "after the checks"

# No write through a symbolic link: OUT/.cache pointing elsewhere is refused, naming it, and nothing
# lands at its target.
mkdir -p "$T/sl" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/sl/.cache"
rc=0
timeout 120 "$TERRAIN" bake "${tiny[@]}" --no-tiles --out "$T/sl" >"$T/sl.out" 2>"$T/sl.err" || rc=$?
[ "$rc" != 0 ] || fail "a bake whose result store is a symbolic link succeeded"
grep -qF "$T/sl/.cache: the result store is a symbolic link (to $T/elsewhere); refusing to write through it" "$T/sl.err" ||
  fail "the symbolic link was not named"
[ -z "$(ls -A "$T/elsewhere")" ] || fail "the bake wrote through the symbolic link: $(ls "$T/elsewhere")"
echo "ok: a result store that is a symbolic link refused (exit $rc), nothing written through it"
# The same for the directories the bake writes inside OUT: refused up front, before any work,
# naming the link and its target, with nothing written at the target.
for d in tiles report_assets report_terrain; do
  rm -rf "$T/sl" "$T/elsewhere" && mkdir -p "$T/sl" "$T/elsewhere"
  ln -s "$T/elsewhere" "$T/sl/$d"
  rc=0
  timeout 120 "$TERRAIN" bake "${tiny[@]}" --out "$T/sl" >"$T/sl.out" 2>"$T/sl.err" || rc=$?
  [ "$rc" != 0 ] || fail "a bake whose OUT/$d is a symbolic link succeeded"
  grep -qF "$T/sl/$d: a symbolic link (to $T/elsewhere); refusing to write through it" "$T/sl.err" ||
    fail "OUT/$d, a symbolic link, was not named: $(head -c 400 "$T/sl.err")"
  [ -z "$(ls -A "$T/elsewhere")" ] || fail "the bake wrote through OUT/$d: $(ls "$T/elsewhere")"
  [ ! -e "$T/sl/planet_height.png" ] || fail "OUT/$d a symbolic link was refused only after the bake's work"
  echo "ok: OUT/$d a symbolic link refused up front (exit $rc), nothing written through it"
done
