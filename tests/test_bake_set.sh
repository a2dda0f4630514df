#!/usr/bin/env bash
# `--set KEY=VALUE` on bake and plan (docs/manifest.md, "Overrides"; issue 28, deliverable 3). On the
# built-in demo planet (no file; 10 km round, region 2, 50 steps), every bake into one OUT so they
# share its result store:
#  - `--set solve.k=6e-5` re-solves the region, its heightmap differs from the plain bake's, and
#    meta.json names the override and holds it in the resolved manifest;
#  - a key only the tiles read (tiles.splat.rock_deg) re-solves nothing: the region is reused;
#  - a coast key reuses the region and runs the coast again;
#  - `--set solve.k=<the manifest's own value>` reuses the plain bake's region and gives its
#    heightmap to the bit (the store keys follow the effective value, not the option);
#  - a bad value is refused with exit 2 naming the option, and meta.json is left as it was.
# A complete bake with an override: `terrain tiles` re-applies meta.json's overrides (its resolved
# manifest must match the record's), and `bake --tiles-only` without the --set is refused.
# Then on a manifest file: a path given with --set is the current directory's, not the manifest's.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

run=(--circumference-km 10 --only 2 --steps 50 --workers 2)
out="$T/bake"
meta="$out/meta.json"

bake "$out" "${run[@]}"
[ "$(dispatch_stat "$out" ran)" = 1 ] || fail "the plain bake solved $(dispatch_stat "$out" ran) regions, expected 1"
[ "$(json_get "$meta" "d['overrides']")" = "{}" ] || fail "the plain bake records overrides: $(json_get "$meta" "d['overrides']")"
k_file=$(json_get "$meta" "repr(d['manifest']['solve']['k'])")
[ "$k_file" != "6e-05" ] || fail "the demo's solve.k is already 6e-5: the test needs another value"
cp "$out/planet_height.png" "$T/plain.png"

LOG=k bake "$out" "${run[@]}" --set solve.k=6e-5
[ "$(dispatch_stat "$out" ran)" = 1 ] || fail "--set solve.k=6e-5 solved $(dispatch_stat "$out" ran) regions, expected 1 (re-solved)"
grep -q "(1 solved, 0 from the store)" "$T/k.out" || fail "the log does not say the region was solved again"
grep -q "overriding the manifest: --set solve.k=6e-5" "$T/k.err" || fail "the bake's log does not name the override"
[ "$(json_get "$meta" "d['overrides']")" = "{'solve.k': 6e-05}" ] || fail "meta.json overrides: $(json_get "$meta" "d['overrides']")"
[ "$(json_get "$meta" "repr(d['manifest']['solve']['k'])")" = "6e-05" ] || fail "meta.json's manifest does not hold solve.k 6e-5"
! cmp -s "$T/plain.png" "$out/planet_height.png" || fail "--set solve.k=6e-5 left the heightmap as the plain bake's"
cp "$out/planet_height.png" "$T/k.png"
echo "ok: --set solve.k=6e-5 re-solved region 2, changed its heightmap and is named in meta.json"

# A key only the tiles read: the region of the last bake (same solve.k) comes from the store.
LOG=tileskey bake "$out" "${run[@]}" --set solve.k=6e-5 --set tiles.splat.rock_deg=45
[ "$(dispatch_stat "$out" ran)" = 0 ] || fail "a tiles key re-solved: $(ran_labels "$out")"
[ "$(dispatch_stat "$out" from_store)" = 1 ] || fail "a tiles key did not reuse the stored region"
grep -q "(0 solved, 1 from the store)" "$T/tileskey.out" || fail "the log does not say the region was reused"
[ "$(json_get "$meta" "d['overrides']['tiles.splat.rock_deg']")" = 45 ] || fail "meta.json does not name tiles.splat.rock_deg"
cmp -s "$T/k.png" "$out/planet_height.png" || fail "a tiles key changed the heightmap"
echo "ok: a tiles-only key reused the stored region"

# A coast key: the region is reused (the plain bake's), the coast runs again.
LOG=coastkey bake "$out" "${run[@]}" --set coast.shelf_km=4
[ "$(dispatch_stat "$out" ran)" = 0 ] || fail "a coast key re-solved: $(ran_labels "$out")"
[ "$(json_get "$meta" "d['coast']['dispatch']['stats']['ran']")" = 1 ] || fail "a coast key did not run the coast again"
echo "ok: a coast key reused the region and ran the coast again"

# The manifest's own value through --set: the same effective planet, the same store keys.
LOG=same bake "$out" "${run[@]}" --set "solve.k=$k_file"
[ "$(dispatch_stat "$out" ran)" = 0 ] || fail "--set solve.k=$k_file (the manifest's value) re-solved: $(ran_labels "$out")"
cmp -s "$T/plain.png" "$out/planet_height.png" || fail "--set solve.k=$k_file did not give the plain bake's heightmap"
echo "ok: --set of the manifest's own value reused the plain bake's region, heightmap identical"

# Bad usage: exit 2, the option named, nothing rewritten.
cp "$meta" "$T/meta.before"
[ "$(LOG=bad bake_status "$out" "${run[@]}" --set solve.k=0)" = 2 ] || fail "--set solve.k=0 did not exit 2"
grep -q -- "--set solve.k=0: solve.k: expected a number in 1e-12..1, got 0" "$T/bad.err" || fail "--set solve.k=0: $(cat "$T/bad.err")"
[ "$(LOG=bad2 bake_status "$out" "${run[@]}" --set solve.kk=1)" = 2 ] || fail "--set solve.kk=1 did not exit 2"
grep -q "did you mean solve.k?" "$T/bad2.err" || fail "--set solve.kk=1: $(cat "$T/bad2.err")"
[ "$(LOG=bad3 bake_status "$out" "${run[@]}" --set solve.k)" = 2 ] || fail "--set solve.k (no =) did not exit 2"
[ "$(LOG=bad4 bake_status "$out" "${run[@]}" --set template.painting=x.png)" = 2 ] || fail "a template key on the demo did not exit 2"
grep -q "demo planet has no template" "$T/bad4.err" || fail "template key on the demo: $(cat "$T/bad4.err")"
[ "$(LOG=bad5 bake_status "$out" "${run[@]}" --set solve.steps=20)" = 2 ] || fail "--steps with --set solve.steps did not exit 2"
grep -q -- "--steps 50 and --set solve.steps=20: both set the steps" "$T/bad5.err" || fail "--steps and solve.steps: $(cat "$T/bad5.err")"
cmp -s "$T/meta.before" "$meta" || fail "a refused --set rewrote meta.json"
echo "ok: bad --set values exit 2 naming the option"

# solve-region takes them too: its region differs with solve.k overridden.
sr=(solve-region --circumference-km 10 --region 2 --steps 20 --threads 2)
"$TERRAIN" "${sr[@]}" --out "$T/sr_plain" >"$T/sr_plain.out" 2>"$T/sr_plain.err" || fail "solve-region failed"
"$TERRAIN" "${sr[@]}" --set solve.k=6e-5 --out "$T/sr_k" >"$T/sr_k.out" 2>"$T/sr_k.err" || fail "solve-region --set failed"
! cmp -s "$T/sr_plain/region_height.png" "$T/sr_k/region_height.png" || fail "solve-region ignored --set solve.k"
echo "ok: solve-region --set solve.k=6e-5 changed the region"

# A complete bake (tiles: c000r000 and c001r000 hold land) with solve.k overridden; the tiles are
# re-run from meta.json alone.
full=(--circumference-km 10 --steps 10 --workers 2)
LOG=full bake "$T/full" "${full[@]}" --set solve.k=6e-5
"$TERRAIN" tiles "$T/full" --only c000r000 --workers 2 >"$T/tiles.out" 2>"$T/tiles.err" ||
  fail "terrain tiles of a bake with --set failed: $(cat "$T/tiles.err")"
grep -q "1 detail tiles re-run" "$T/tiles.out" || fail "terrain tiles: $(cat "$T/tiles.out")"
[ "$(json_get "$T/full/meta.json" "d['overrides']")" = "{'solve.k': 6e-05}" ] || fail "terrain tiles dropped the overrides from meta.json"
# the control: the same re-run through bake without the --set is another planet
[ "$(LOG=noset bake_status "$T/full" "${full[@]}" --tiles-only c000r000)" = 2 ] ||
  fail "--tiles-only without the bake's --set was not refused"
grep -q "another planet" "$T/noset.err" || fail "--tiles-only without --set: $(cat "$T/noset.err")"
LOG=withset bake "$T/full" "${full[@]}" --set solve.k=6e-5 --tiles-only c000r000
echo "ok: terrain tiles re-applies the recorded overrides; --tiles-only needs them given again"

# A manifest file: a path override is the current directory's. alt.json lives only in the current
# directory ($T/cwd), not beside the manifest.
"$TERRAIN" init "$T/planet" --circumference-km 10 >"$T/init.out" 2>"$T/init.err" || fail "terrain init failed"
mkdir "$T/cwd"
cp "$T/planet/legend.json" "$T/cwd/alt.json"
(cd "$T/cwd" && "$TERRAIN" plan "$T/planet/planet.json" --set template.legend=alt.json \
  --set legend.classes.range.uplift_mm_yr=0.9 --out "$T/plan" >"$T/plan.out" 2>"$T/plan.err") ||
  fail "plan with --set template.legend=alt.json failed: $(cat "$T/plan.err")"
grep -q "^overrides: --set template.legend=alt.json --set legend.classes.range.uplift_mm_yr=0.9" "$T/plan.out" ||
  fail "terrain plan does not print the overrides"
[ "$(json_get "$T/plan/plan.json" "d['manifest']['template']['legend']")" = "./alt.json" ] ||
  fail "template.legend resolved to $(json_get "$T/plan/plan.json" "d['manifest']['template']['legend']")"
[ "$(json_get "$T/plan/plan.json" "[c['uplift_mm_yr'] for c in d['manifest']['legend']['classes'] if c['name'] == 'range'][0]")" = 0.9 ] ||
  fail "plan.json's legend does not hold range's overridden uplift"
# the control: from the manifest's folder's parent, alt.json is not there and the option is named
rc=0
(cd "$T" && "$TERRAIN" plan "$T/planet/planet.json" --set template.legend=alt.json --out "$T/plan2" \
  >"$T/plan2.out" 2>"$T/plan2.err") || rc=$?
[ "$rc" = 2 ] || fail "a missing --set template.legend exited $rc, expected 2"
grep -q -- "--set template.legend=alt.json" "$T/plan2.err" || fail "the missing legend's message: $(cat "$T/plan2.err")"
echo "ok: a path given with --set is the current directory's"
assert_clean "after the --set bakes"
