#!/usr/bin/env bash
# `terrain studio` in a real browser (Debian's chromium, headless, and python3-websocket: installed
# here when missing), driven over the DevTools protocol by tests/support/studio_drive.py: a stroke
# of the range brush across the X seam, a new uplift typed for range, a legend changed behind the
# page (the page must stop and ask, nothing overwritten), Overwrite, Plan, Bake region. Checked: the
# saved painting's pixels on both sides of the seam (negative control: the same check fails on the
# painting before the stroke), the plan's class counts against the plan before the stroke plus the
# pixels changed, the legend on disk, the baked region's files and the page's progress line; the
# hostile requests (no token 403, wrong method 405, oversized body 413, a painting of the wrong
# size and a legend the parser refuses 422, a second child 409). Screenshots go to
# BUILD/test-output/studio/ (docs/studio.md). Then a planet with an overlay: its second sheet painted
# across the seam, erased, a mark's coast_jitter_px typed, saved and planned (studio_drive.py
# --overlay).
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

# Debian's python3, where Debian's python3-websocket installs (a python3 earlier on PATH, pyenv's,
# would not see it)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
"$PY" -c 'import websocket' 2>/dev/null || need+=(python3-websocket)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo_cmd=(); elif command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo);
  else fail "${need[*]} missing and neither root nor sudo is available to install them"; fi
  "${sudo_cmd[@]}" apt-get update -qq >"$T/apt.log" 2>&1 || fail "apt-get update failed"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${need[@]}" >>"$T/apt.log" 2>&1 || fail "cannot install ${need[*]} (see $T/apt.log)"
fi
SHOTS=$BUILD/test-output/studio
rm -rf "$SHOTS"
mkdir -p "$SHOTS"

# The 10 km demo planet (1250 x 400 pixels) and its plan before anything is painted.
"$TERRAIN" init "$T/planet" --circumference-km 10 >"$T/init.out" 2>&1 || fail "terrain init failed"
cp "$T/planet/painting.png" "$T/before.png"
TB_NO_PROGRESS=1 "$TERRAIN" plan "$T/planet/planet.json" --out "$T/plan-before" >"$T/plan-before.out" 2>&1 ||
  fail "terrain plan of the planet before the stroke failed"

# The studio, on any free loopback port.
"$TERRAIN" studio "$T/planet/planet.json" --port 0 --out "$T/out" >"$T/studio.out" 2>"$T/studio.err" &
studio_pid=$!
track $studio_pid
for _ in $(seq 100); do grep -q 'token=' "$T/studio.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^studio: open \(http.*\)$/\1/p' "$T/studio.out")
[ -n "$url" ] || fail "terrain studio printed no URL: $(cat "$T/studio.out" "$T/studio.err")"
case $url in http://127.0.0.1:*/\?token=????????????????????????????????) ;;
  *) fail "the URL $url is not loopback with a 32-digit token" ;; esac

# chromium_on NAME URL: headless chromium on URL with its profile in $T/NAME; sets chrome_pid and
# port (its DevTools port). Its stderr goes to $T/NAME.log: its D-Bus noise is not shown by fail.
chromium_on() {
  chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$T/$1" --remote-debugging-port=0 --window-size=1400,1000 --hide-scrollbars \
    "$2" >"$T/$1.out" 2>"$T/$1.log" &
  chrome_pid=$!
  track $chrome_pid
  for _ in $(seq 150); do [ -s "$T/$1/DevToolsActivePort" ] && break; sleep 0.1; done
  port=$(head -1 "$T/$1/DevToolsActivePort" 2>/dev/null) || fail "chromium gave no DevTools port"
}
chromium_on chrome "$url"

"$PY" "$SRC/tests/support/studio_drive.py" "$url" "$T/planet" "$T/out" "$T/before.png" \
  "$T/plan-before/plan.json" "$SHOTS" "$port" >"$T/drive.out" 2>&1 ||
  fail "the browser session: $(cat "$T/drive.out")"
cat "$T/drive.out"
for s in 1-loaded 2-stroke 3-conflict 4-planned 5-baked; do
  [ -s "$SHOTS/$s.png" ] || fail "no screenshot $s.png"
done

kill -TERM $chrome_pid 2>/dev/null || true

# SIGTERM stops the studio with status 0, and with it the bake it left running (the driver's last
# request) and that bake's local workers.
bake_pid=$(cat "$T/out/long-bake.pid")
kill -0 "$bake_pid" 2>/dev/null || fail "the long bake (pid $bake_pid) is not running"
kill -TERM $studio_pid
rc=0
wait $studio_pid || rc=$?
[ $rc = 0 ] || fail "terrain studio exited $rc on SIGTERM"
! kill -0 "$bake_pid" 2>/dev/null || fail "the bake (pid $bake_pid) outlived the studio"
left=$(pgrep -f -- "$T/tmp" || true)
[ -z "$left" ] || fail "processes left behind: $(ps -o pid,args -p "${left//$'\n'/,}")"
echo "ok: SIGTERM stopped the studio (exit 0) and the bake it was running (pid $bake_pid), no worker left"
# Without MANIFEST: the demo written to --dir first, then served. A non-loopback --bind is
# announced; an address that is none is refused (exit 2).
"$TERRAIN" studio --dir "$T/demo" --circumference-km 10 --bind 0.0.0.0 --port 0 >"$T/demo.out" 2>"$T/demo.err" &
demo_pid=$!
track $demo_pid
for _ in $(seq 100); do grep -q 'token=' "$T/demo.out" 2>/dev/null && break; sleep 0.1; done
grep -q 'token=' "$T/demo.out" || fail "the demo studio printed no URL: $(cat "$T/demo.out" "$T/demo.err")"
for f in planet.json painting.png legend.json; do [ -s "$T/demo/$f" ] || fail "the demo studio wrote no $f"; done
grep -q "WARNING: serving on 0.0.0.0, NOT loopback" "$T/demo.err" || fail "--bind 0.0.0.0 was not announced: $(cat "$T/demo.err")"
kill -TERM $demo_pid
wait $demo_pid || fail "the demo studio exited $? on SIGTERM"
echo "ok: without MANIFEST the studio wrote the demo to --dir and served it; --bind 0.0.0.0 said: $(grep -o 'WARNING.*loopback' "$T/demo.err")"
rc=0
"$TERRAIN" studio "$T/planet/planet.json" --bind localhost:80 >"$T/badbind.out" 2>"$T/badbind.err" || rc=$?
[ $rc = 2 ] && grep -q -- "--bind localhost:80: expected a dotted IPv4 address" "$T/badbind.err" ||
  fail "--bind localhost:80: exit $rc, $(cat "$T/badbind.err")"
echo "ok: --bind localhost:80 refused (exit 2): $(cat "$T/badbind.err")"

# A planet with an overlay (docs/plan.md, "The overlay"): the page's second sheet. A town disc and a
# coast_jitter band painted before; the session paints a town stroke across the seam, erases its
# last pixel, sets rugged's coast_jitter_px to 9 and plans (tests/support/studio_drive.py --overlay).
"$TERRAIN" init "$T/ovplanet" --circumference-km 10 >"$T/init2.out" 2>&1 || fail "terrain init failed"
python3 "$SRC/tests/support/overlay_paint.py" "$T/ovplanet/overlay.png" 1250 400 \
  '[["disc",420,330,12,[255,0,0]],["rect",185,60,215,340,[255,255,0]]]'
cp "$T/ovplanet/overlay.png" "$T/overlay-before.png"
cat >"$T/ovplanet/marks.json" <<'JSON'
{"marks": [
  {"name": "town", "colour": "#ff0000", "kind": "blob"},
  {"name": "ferry", "colour": "#000000", "kind": "path"},
  {"name": "rugged", "colour": "#ffff00", "kind": "coast_jitter", "coast_jitter_px": 6}
]}
JSON
python3 - "$T/ovplanet/planet.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m['template'].update(overlay='overlay.png', overlay_legend='marks.json')
json.dump(m, open(sys.argv[1], 'w'), indent=1)
PY
"$TERRAIN" studio "$T/ovplanet/planet.json" --port 0 --out "$T/ovout" >"$T/studio2.out" 2>"$T/studio2.err" &
studio2_pid=$!
track $studio2_pid
for _ in $(seq 100); do grep -q 'token=' "$T/studio2.out" 2>/dev/null && break; sleep 0.1; done
url2=$(sed -n 's/^studio: open \(http.*\)$/\1/p' "$T/studio2.out")
[ -n "$url2" ] || fail "the overlay planet's studio printed no URL: $(cat "$T/studio2.out" "$T/studio2.err")"
chromium_on chrome2 "$url2"
chrome2_pid=$chrome_pid port2=$port
"$PY" "$SRC/tests/support/studio_drive.py" --overlay "$url2" "$T/ovplanet" "$T/ovout" \
  "$T/overlay-before.png" "$SHOTS" "$port2" >"$T/drive2.out" 2>&1 ||
  fail "the overlay session: $(cat "$T/drive2.out")"
cat "$T/drive2.out"
for s in 6-overlay 7-overlay-planned; do [ -s "$SHOTS/$s.png" ] || fail "no screenshot $s.png"; done
kill -TERM $chrome2_pid 2>/dev/null || true
kill -TERM $studio2_pid
wait $studio2_pid || fail "the overlay planet's studio exited $? on SIGTERM"
echo "ok: terrain studio painted, planned and baked from chromium; screenshots in $SHOTS"
