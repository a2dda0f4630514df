#!/usr/bin/env bash
# Seamless by construction on a baked planet (docs/tiles.md, "Seams on a baked planet"): the 30 km
# demo planet (6 columns of 5 km tiles, so tiles of 10 km divide it too; 9.6 km high, rows of 5 and
# 4.6 km: a real 2 x 2 block) baked at 20 steps without the coastal pass and without tiles (2 local
# workers), then `terrain tiles OUT --check-seams` (in-process: it dispatches nothing, and computes
# the five tiles on a pool of every core):
#  - at the margin in use (the default, 136 cells) the 2 x 2 block round the steepest point of the
#    largest landmass, each tile its own tile job, is byte-identical in every map to the 10 km tile
#    computed in one piece: exit 0, "seams: identical";
#  - the negative control: at half the margin (68 cells) cells differ: exit 1, and the line says how
#    many and by how much (printed to the test's log);
#  - neither run writes anything into the bake (every file's bytes and the listing as they were);
#  - bad usage is exit 2: --margin without --check-seams, --at a tile outside the lattice, and a
#    --size-km whose double does not divide the circumference (naming it).
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

A=$T/planet
bake "$A" --circumference-km 30 --steps 20 --no-coast --no-tiles --workers 2
snapshot() { (cd "$A" && find . -type f ! -path './.cache/*' -print0 | sort -z | xargs -0 sha256sum); }
before=$(snapshot)

# --- at the margin in use: identical
rc=0
"$TERRAIN" tiles "$A" --check-seams --workers 0 >"$T/seams.out" 2>"$T/seams.err" || rc=$?
[ "$rc" = 0 ] || fail "--check-seams at the default margin exited $rc (expected 0: seamless)"
grep -q '^seams: block c[0-9]*r[0-9]* c[0-9]*r[0-9]* / c[0-9]*r[0-9]* c[0-9]*r[0-9]* of 5 km tiles against tile c[0-9]*r[0-9]* of 10 km in one piece, margin 136 cells' "$T/seams.out" ||
  fail "--check-seams did not name a 2 x 2 block of 5 km tiles at the 136-cell margin"
grep -q '^seams: identical' "$T/seams.out" || fail "--check-seams at the default margin: no 'seams: identical'"
[ "$(grep -c 'own job): 0 cells differ' "$T/seams.out")" = 4 ] ||
  fail "--check-seams at the default margin: not every tile of the block printed 0 cells differing"
grep '^seams:' "$T/seams.out" >&2

# --- the negative control: half the margin shows the seam
rc=0
"$TERRAIN" tiles "$A" --check-seams --margin 68 --workers 0 >"$T/half.out" 2>"$T/half.err" || rc=$?
[ "$rc" = 1 ] || fail "--check-seams --margin 68 exited $rc (expected 1: a seam)"
line=$(grep '^seams: DIFFER at a margin of 68 cells: ' "$T/half.out") ||
  fail "--check-seams --margin 68: no 'seams: DIFFER' line"
n=$(sed -E 's/^seams: DIFFER at a margin of 68 cells: ([0-9]+) of .*/\1/' <<<"$line")
[ "$n" -gt 0 ] || fail "--check-seams --margin 68 reports $n cells differing"
echo "negative control: $line" >&2

[ "$(snapshot)" = "$before" ] || fail "--check-seams changed the bake's files"

# --- bad usage: exit 2
rc=0
"$TERRAIN" tiles "$A" --margin 68 >"$T/u1.out" 2>"$T/u1.err" || rc=$?
[ "$rc" = 2 ] && grep -q 'go with --check-seams' "$T/u1.err" || fail "--margin without --check-seams: exit $rc"
rc=0
"$TERRAIN" tiles "$A" --check-seams --at c099r000 >"$T/u2.out" 2>"$T/u2.err" || rc=$?
[ "$rc" = 2 ] && grep -q 'c099r000' "$T/u2.err" || fail "--check-seams --at c099r000: exit $rc, or the id not named"
rc=0
"$TERRAIN" tiles "$A" --check-seams --size-km 6 >"$T/u3.out" 2>"$T/u3.err" || rc=$?
[ "$rc" = 2 ] && grep -q 'twice the size (12 km)' "$T/u3.err" ||
  fail "--check-seams --size-km 6 (12 km does not divide 30 km): exit $rc, or no reason given"
[ "$(snapshot)" = "$before" ] || fail "a refused --check-seams changed the bake's files"
echo "tiles_seams: ok" >&2
