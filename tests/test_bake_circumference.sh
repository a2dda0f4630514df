#!/usr/bin/env bash
# The demo planet at circumferences other than the tests' 10-25 km (issue 22): `terrain plan`
# accepts each (it decodes a region spec as a worker does and runs the solve's first checks:
# tb_plan_check_jobs), and the 100 km demo, whose rock wavelength (100 km / 33) once lost its last
# bit in the spec's JSON so that every worker refused every region, bakes through a local worker.
# Its region 1 only and one step, so the bake is the plan, the coast, the outputs and the maps of a
# 12500 x 4000 planet (about half a minute); the whole planet at 400 steps is `scripts/bench
# scale`'s. The plan's refusal of a worker-refused spec has its negative control in
# tests/test_uplift.c (probes one ulp off).
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

for c in 30 45 60 75 100; do
  "$TERRAIN" plan --circumference-km "$c" --out "$T/plan$c" >"$T/plan$c.out" 2>"$T/plan$c.err" ||
    fail "terrain plan --circumference-km $c exited $?"
done
echo "ok: terrain plan accepts the demo at 30, 45, 60, 75 and 100 km"

bake "$T/b100" --circumference-km 100 --steps 1 --no-tiles --only 1 --workers 1 --threads 2
[ "$(json_get "$T/b100/meta.json" 'd["bake"]["regions_solved"]')" = 1 ] || fail "the 100 km bake solved no region"
[ "$(json_get "$T/b100/meta.json" 'd["dispatch"]["mode"]')" = local ] || fail "the 100 km region did not run on a worker"
[ "$(json_get "$T/b100/meta.json" 'd["dispatch"]["stats"]["failed"]')" = 0 ] || fail "a 100 km attempt failed"
[ "$(json_get "$T/b100/meta.json" 'd["manifest"]["circumference_km"]')" = 100 ] || fail "meta.json is not of the 100 km planet"
echo "ok: the 100 km demo bakes through a local worker"
