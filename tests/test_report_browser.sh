#!/usr/bin/env bash
# report.html in a real browser (Debian's chromium, headless; installed here when missing): the page
# of a finished 10 km demo bake at 50 steps has no console message, every image loaded, every number
# tagged with a meta.json path equal to meta.json, one bar per histogram bin, the slope-area points
# and lines, one timeline bar per attempt; `terrain report` rewrites the same page; a page caught
# mid-bake shows the solve phase and a running job; after the coordinator is SIGKILLed its last page
# still opens, and ten minutes on says the coordinator may have died. Negative controls: the checker
# fails a page with one number changed, one bar removed, or a script error. The finished bake runs
# the coastal pass: every number of meta.json's coast block is tagged on the page and equal to it
# (negative controls: a coast number changed, one untagged). Screenshots go to
# BUILD/test-output/report_browser/ (docs/report.md).
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then sudo_cmd=(); elif command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo);
  else fail "chromium is missing and neither root nor sudo is available to install it"; fi
  "${sudo_cmd[@]}" apt-get update -qq >"$T/apt.log" 2>&1 || fail "apt-get update failed"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium >>"$T/apt.log" 2>&1 || fail "cannot install chromium (see $T/apt.log)"
fi
CHECK=$SRC/tests/support/report_check.py
SHOTS=$BUILD/test-output/report_browser
mkdir -p "$SHOTS"
small=(--circumference-km 10 --workers 2 --no-tiles) # the tiles have tests/test_bake_tiles.sh

# browse URL NAME [ARGS]: chromium on URL with ARGS; stdout to $T/NAME.dom, its log to
# $T/NAME.console. dom URL NAME: the page's DOM after its script ran.
n_browse=0
browse() {
  local url=$1 name=$2
  shift 2
  n_browse=$((n_browse + 1))
  timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --user-data-dir="$T/chrome-$n_browse" --enable-logging=stderr --v=0 --hide-scrollbars \
    --virtual-time-budget=4000 "$@" "$url" >"$T/$name.dom" 2>"$T/$name.console" ||
    fail "chromium on $url exited $?"
}
dom() { browse "$1" "$2" --dump-dom; }
# check MODE NAME META [NOW]: the checker on a browsed page.
check() {
  python3 "$CHECK" "$1" "$T/$2.dom" "$T/$2.console" "$3" ${4:+"$4"} >"$T/$2.check" ||
    fail "$2: $(cat "$T/$2.check")"
  cat "$T/$2.check"
}
# check_fails MODE NAME META WHAT: the checker must fail the page (a negative control).
check_fails() {
  if python3 "$CHECK" "$1" "$T/$2.dom" "$T/$2.console" "$3" >"$T/$2.check"; then
    fail "negative control '$4': the checker passed it: $(cat "$T/$2.check")"
  fi
  grep -q "FAIL" "$T/$2.check" || fail "negative control '$4': no failure named"
  echo "negative control ($4): $(grep -m1 FAIL "$T/$2.check")"
}

# 1. A page caught mid-bake, then the coordinator SIGKILLed.
"$TERRAIN" bake "${small[@]}" --threads 1 --steps 1000 --fresh --out "$T/live" >"$T/live.out" \
  2>"$T/live.err" &
coord=$!
track $coord
for ((i = 0; i < 1200; i++)); do
  if grep -q 'data-phase="solve"' "$T/live/report.html" 2>/dev/null &&
    grep -q 'class="job-running"' "$T/live/report.html" 2>/dev/null; then
    cp "$T/live/report.html" "$T/live/mid.html"
    grep -q 'class="job-running"' "$T/live/mid.html" && break
  fi
  sleep 0.05
done
[ -f "$T/live/mid.html" ] || fail "no live page with a running job within 60 s"
kill -9 $coord
wait $coord 2>/dev/null || true
[ ! -e "$T/live/meta.json" ] || fail "a killed bake left a meta.json"

# 2. A finished bake (its plan is the live bake's: the same planet).
bake "$T/done" "${small[@]}" --steps 50 --fresh
[ -f "$T/done/report.html" ] || fail "the finished bake wrote no report.html"
size=$(stat -c %s "$T/done/report.html")
[ "$size" -lt 2000000 ] || fail "report.html is $size bytes, over 2 MB"
# The coast is baked (on by default): its block must be in meta.json for the page to show it.
json_get "$T/done/meta.json" "d['coast']['shoreline_km']" >/dev/null ||
  fail "the finished bake's meta.json has no coast block"
grep -q 'data-meta="coast.shoreline_km"' "$T/done/report.html" ||
  fail "report.html has no tagged coast number"
for f in map_slope.png map_relief.png map_erodibility.png planet_height_low.png map_coast.png \
  map_exposure.png; do
  json_get "$T/done/meta.json" "d['outputs']['$f']" >/dev/null || fail "$f is not in meta.json's outputs"
done

dom "file://$T/live/mid.html#selfcheck" mid
check running mid "$T/done/meta.json"
dom "file://$T/live/report.html#selfcheck" killed
check killed killed "$T/done/meta.json"
written=$(sed -n 's/.*data-written-ms="\([0-9]*\)".*/\1/p' "$T/live/report.html" | head -1)
dom "file://$T/live/report.html#selfcheck&now=$((written + 600000))" killed10
check killed killed10 "$T/done/meta.json" $((written + 600000))

dom "file://$T/done/report.html#selfcheck" done
check finished done "$T/done/meta.json"

# 3. `terrain report` rewrites the page from meta.json: the same checks pass.
rm "$T/done/report.html"
"$TERRAIN" report "$T/done" >"$T/report.out" 2>"$T/report.err" || fail "terrain report exited $?"
dom "file://$T/done/report.html#selfcheck" rewritten
check finished rewritten "$T/done/meta.json"
rc=0
"$TERRAIN" report "$T/live" >"$T/report2.out" 2>"$T/report2.err" || rc=$?
[ $rc = 2 ] || fail "terrain report on a bake that did not finish: exit $rc, expected 2"
grep -q "meta.json: not found" "$T/report2.err" || fail "terrain report does not say meta.json is missing"

# 4. Negative controls: the checker fails a page with one number changed, one bar gone, a script
# error.
python3 - "$T/done/report.html" "$T/done/bad-number.html" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'(data-meta="statistics\.slopes\.median_deg"[^>]*>)([0-9.]+)<', t)
v = float(m.group(2)) + 1
open(sys.argv[2], "w").write(t[:m.start(2)] + f"{v:.1f}" + t[m.end(2):])
PY
dom "file://$T/done/bad-number.html#selfcheck" bad-number
check_fails finished bad-number "$T/done/meta.json" "a number changed"
python3 - "$T/done/report.html" "$T/done/bad-coast.html" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'(data-meta="coast\.shoreline_km"[^>]*>)([0-9.]+)<', t)
v = float(m.group(2)) + 1
open(sys.argv[2], "w").write(t[:m.start(2)] + f"{v:.1f}" + t[m.end(2):])
PY
dom "file://$T/done/bad-coast.html#selfcheck" bad-coast
check_fails finished bad-coast "$T/done/meta.json" "a coast number changed"
sed 's/data-meta="coast\.exposure_p50"/data-untagged="coast.exposure_p50"/' "$T/done/report.html" \
  >"$T/done/untagged-coast.html"
dom "file://$T/done/untagged-coast.html#selfcheck" untagged-coast
check_fails finished untagged-coast "$T/done/meta.json" "a coast number untagged"
sed '0,/<rect class="bar"[^>]*>/s///' "$T/done/report.html" >"$T/done/bad-bars.html"
dom "file://$T/done/bad-bars.html#selfcheck" bad-bars
check_fails finished bad-bars "$T/done/meta.json" "a bar removed"
sed 's|</main>|<script>noSuchFunction();</script></main>|' "$T/done/report.html" >"$T/done/bad-js.html"
dom "file://$T/done/bad-js.html#selfcheck" bad-js
check_fails finished bad-js "$T/done/meta.json" "a script error"

# 5. Screenshots, to look at.
for page in done/report.html live/mid.html live/report.html; do
  name=$(echo "$page" | tr '/.' '--')
  browse "file://$T/$page#noreload" "shot-$name" --window-size=1400,1000 --screenshot="$SHOTS/$name.png"
  [ -s "$SHOTS/$name.png" ] || fail "no screenshot of $page"
done
# The verdict's coast block alone (a copy of the page whose stylesheet hides the rest: a headless
# screenshot of the page opened at #coast comes out blank).
python3 - "$T/done/report.html" "$T/done/coast-only.html" <<'PY'
import sys
t = open(sys.argv[1]).read()
css = ("<style>main>:not(#verdict){display:none!important}"
       "#verdict>:not(h2):not(#coast):not(#coast~*){display:none!important}"
       "#gates,#gates~*{display:none!important}</style>")
open(sys.argv[2], "w").write(t.replace("</head>", css + "</head>", 1))
PY
browse "file://$T/done/coast-only.html#noreload" shot-coast --window-size=1400,900 \
  --screenshot="$SHOTS/done-coast.png"
[ -s "$SHOTS/done-coast.png" ] || fail "no screenshot of the coast block"
browse "file://$T/live/report.html#noreload&now=$((written + 600000))" shot-killed --window-size=1400,1000 \
  --screenshot="$SHOTS/killed-10min.png"
echo "ok: report.html of a finished, a running and a killed bake checked in chromium ($size bytes); screenshots in $SHOTS"
