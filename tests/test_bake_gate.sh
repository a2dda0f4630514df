#!/usr/bin/env bash
# `terrain gate` end to end (docs/gate.md): the demo planet on three seeds at 100 steps passes the
# built-in gates and writes well-formed JUnit; a rerun reuses every stored region and, against
# itself as --baseline, reports no change; the negative control (--test-no-incision) fails with the
# failing gates named, in the table and in the JUnit; a bad gates file is refused naming the key.
# In-process (--workers 0), one core: about 45 s of bakes and 15 s for the control on this machine.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

xml_check() { # FILE: well-formed XML, and prints "suites cases failures errors" of the JUnit
  python3 - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
cases = [c for s in suites for c in s.findall("testcase")]
fails = [c for c in cases if c.find("failure") is not None]
errs = [c for c in cases if c.find("error") is not None]
assert int(root.get("tests")) == len(cases) and int(root.get("failures")) == len(fails)
for c in fails:
    f = c.find("failure")
    assert c.get("name") in f.get("message"), f.get("message")
    assert "value" in f.text and "bound" in f.text, f.text
print(len(suites), len(cases), len(fails), len(errs), " ".join(sorted(c.get("name") for c in fails)))
EOF
}

t0=$(date +%s)
"$TERRAIN" gate --steps 100 --workers 0 --out "$T/gate" >"$T/gate.out" 2>"$T/gate.err" ||
  fail "the gate failed on the demo planet: $(cat "$T/gate.out")"
t1=$(date +%s)
cat "$T/gate.out"
echo "gate on seeds 7, 9342, 67914 at 100 steps: $((t1 - t0)) s" >&2
grep -q "gate: PASS, 54 of 54 checks" "$T/gate.out" || fail "not 54 passing checks (18 gates x 3 seeds)"
for s in 7 9342 67914; do
  [ -f "$T/gate/seed-$s/meta.json" ] || fail "no bake for seed $s"
done
[ "$(xml_check "$T/gate/junit.xml")" = "3 54 0 0 " ] || fail "JUnit: $(xml_check "$T/gate/junit.xml")"
[ "$(json_get "$T/gate/gate.json" '(d["passed"], d["checks"])')" = "(True, 54)" ] || fail "gate.json"

# A rerun reuses the stored regions, and against itself reports no change.
"$TERRAIN" gate --steps 100 --workers 0 --out "$T/gate" --baseline "$T/gate" \
  >"$T/rerun.out" 2>"$T/rerun.err" || fail "the rerun failed"
[ "$(grep -c "4 of 4 results reused" "$T/rerun.err")" = 3 ] || fail "the rerun solved again"
grep -q "change against the baseline" "$T/rerun.out" || fail "no baseline table"
grep -q "^slope_area_exponent .*(+0) .*(+0) .*(+0) *+0 over 3 seeds" "$T/rerun.out" ||
  fail "a rerun against itself changed: $(grep slope_area_exponent "$T/rerun.out")"

# The negative control: no incision. It must fail, naming the gates it fails - the whole planet's
# and the steep painted class's, whose bounds are the defaults' - and against the passing bake of
# seed 7 its change shows; a max_change gate fails on that change.
cat >"$T/change.json" <<'EOF'
{"description": "a density floor the control passes, and a limit on its change it does not",
 "gates": {"drainage_density_per_km": {"min": 0.2, "max_change": 0.05},
           "slope_area_exponent": {"min": -0.65, "max": -0.15},
           "slope_area_r2": {"min": 0.65},
           "painted.range.slope_median_deg": {"min": 12, "max": 32},
           "painted.range.slope_area_exponent": {"min": -0.8, "max": -0.3},
           "painted.range.slope_area_channels_exponent": {"min": -0.65, "max": -0.35},
           "painted.range.slope_area_channels_r2": {"min": 0.9}}}
EOF
set +e
"$TERRAIN" gate --steps 100 --workers 0 --seeds 7 --test-no-incision --out "$T/nc" \
  --gates "$T/change.json" --baseline "$T/gate" --junit "$T/nc.xml" >"$T/nc.out" 2>"$T/nc.err"
rc=$?
set -e
t2=$(date +%s)
cat "$T/nc.out"
echo "negative control (seed 7, no incision): $((t2 - t1)) s" >&2
[ "$rc" = 1 ] || fail "the negative control exited $rc, expected 1 (gates failed)"
for g in slope_area_exponent slope_area_r2 drainage_density_per_km painted.range.slope_median_deg \
  painted.range.slope_area_exponent painted.range.slope_area_channels_exponent \
  painted.range.slope_area_channels_r2; do
  grep -q "^FAIL seed 7: $g = " "$T/nc.out" || fail "the negative control did not name $g"
done
grep -q "changed by -0.1[0-9]* from the baseline 0.5[0-9]*" "$T/nc.out" || fail "no max_change failure"
[ "$(xml_check "$T/nc.xml")" = "1 7 7 0 drainage_density_per_km painted.range.slope_area_channels_exponent painted.range.slope_area_channels_r2 painted.range.slope_area_exponent painted.range.slope_median_deg slope_area_exponent slope_area_r2" ] ||
  fail "negative control JUnit: $(xml_check "$T/nc.xml")"

# Gates file errors are named by key and stop before any bake (exit 2).
printf '{"gates": {"clip_fraction": {"maxx": 0.1}}}' >"$T/bad.json"
set +e
"$TERRAIN" gate --gates "$T/bad.json" --out "$T/bad" >"$T/bad.out" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || fail "a bad gates file exited $rc, expected 2"
grep -q "gates.clip_fraction.maxx: unknown key" "$T/bad.out" || fail "$(cat "$T/bad.out")"
[ ! -e "$T/bad" ] || fail "a bad gates file still baked"
"$TERRAIN" gate --print-gates | python3 -c 'import json, sys; json.load(sys.stdin)' ||
  fail "--print-gates is not JSON"
echo "ok: three seeds pass in $((t1 - t0)) s, the control fails by name in $((t2 - t1)) s; JUnit parses"
