#!/usr/bin/env bash
# The coast phase (docs/coast.md): the demo planet (10 km, 30 steps) baked in-process on one thread
# and through 3 local workers gives byte-identical heightmaps, coast maps and summaries; the coast
# ran as one job of the dispatch (its record in meta.json), its sediment budget closes to 1e-9 and it
# cut and laid something; a rerun takes the coast job from the store. `--no-coast` runs no coastal
# pass (the phase records so in its note, no coast maps, meta.json's coast null) and leaves every
# sea cell at its class's painted depth - the composite as it was before the coast existed - while
# the coast bake's sea floor takes many depths
# (the negative control of that check). A worker SIGKILLed in the middle of the coast job: the job
# runs again and the planet is the undisturbed one.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

demo=(--circumference-km 10 --steps 30 --no-tiles) # the tiles have tests/test_bake_tiles.sh
bake "$T/inproc" "${demo[@]}" --workers 0 --threads 1
bake "$T/w3" "${demo[@]}" --workers 3 --threads 1

for run in inproc w3; do
  [ "$(json_get "$T/$run/meta.json" 'd["coast"]["budget_relative_error"] < 1e-9')" = True ] ||
    fail "$run: the coast budget does not close: $(json_get "$T/$run/meta.json" 'd["coast"]["budget_relative_error"]')"
  [ "$(json_get "$T/$run/meta.json" 'd["coast"]["cut_mm3"] > 0 and d["coast"]["laid_mm3"] > 0')" = True ] ||
    fail "$run: the coast cut or laid nothing"
  [ "$(json_get "$T/$run/meta.json" '[p["name"] for p in d["phases"] if not p["skipped"]]')" = \
    "['plan', 'solve', 'composite', 'coast', 'outputs', 'maps']" ] || fail "$run: the phases that ran are not plan .. outputs with coast"
  [ "$(json_get "$T/$run/meta.json" 'len(d["coast"]["dispatch"]["jobs"])')" = 1 ] || fail "$run: the coast was not one job"
  grep -q '^coast: [0-9]* km of shoreline' "$T/$run/summary.txt" || fail "$run: summary.txt has no coast block"
done
[ "$(json_get "$T/w3/meta.json" 'd["coast"]["dispatch"]["mode"]')" = local ] || fail "the 3-worker bake's coast did not run on a worker"
[ "$(json_get "$T/inproc/meta.json" 'd["coast"]["dispatch"]["mode"]')" = in-process ] || fail "the in-process coast ran elsewhere"
same_height "$T/inproc" "$T/w3" "coast in-process against 3 workers"
for f in map_coast.png map_exposure.png preview.png summary.txt; do
  cmp -s "$T/inproc/$f" "$T/w3/$f" || fail "$f of in-process and 3 workers differ"
done
echo "ok: the coast in-process and on 3 workers agree byte for byte; its budget closes"

# A rerun takes the coast job from the store and makes the same planet.
LOG=rerun bake "$T/w3" "${demo[@]}" --workers 3 --threads 1
[ "$(json_get "$T/w3/meta.json" 'd["coast"]["dispatch"]["stats"]["from_store"]')" = 1 ] ||
  fail "the rerun did not reuse the stored coast result"
same_height "$T/inproc" "$T/w3" "coast from the store"

# --no-coast: skipped, no coast maps, the sea at its painted depths; with the coast, a sea floor.
bake "$T/nocoast" "${demo[@]}" --workers 0 --no-coast
[ "$(json_get "$T/nocoast/meta.json" '[(p["skipped"], p.get("note", "")[:12]) for p in d["phases"] if p["name"] == "coast"]')" = \
  "[(False, '--no-coast: ')]" ] || fail "--no-coast: the coast phase does not say it ran no pass"
[ ! -e "$T/nocoast/map_coast.png" ] && [ "$(json_get "$T/nocoast/meta.json" 'd["coast"]')" = None ] ||
  fail "--no-coast wrote coast outputs"
grep -q '^coast: skipped (--no-coast)' "$T/nocoast/summary.txt" || fail "--no-coast's summary does not say so"
sea_depths() { # DIR: the distinct heights (m, to 1 cm) of planet_height.png below sea level
  python3 - "$1/planet_height.png" "$1/meta.json" "$SRC/tests/support" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from png_read import png_read
w, h, bpp, data = png_read(sys.argv[1])
assert bpp == 2, f"{sys.argv[1]}: not 16-bit grey"
rows = [data[y * 2 * w:(y + 1) * 2 * w] for y in range(h)]
lo, hi = json.load(open(sys.argv[2]))['manifest']['elevation_m']
vals = set()
for line in rows:
    for x in range(w):
        hm = lo + (line[2 * x] << 8 | line[2 * x + 1]) / 65535 * (hi - lo)
        if hm < -0.02:
            vals.add(round(hm, 2))
print(len(vals), sorted(vals)[:3], sorted(vals)[-3:])
PY
}
painted=$(json_get "$T/nocoast/meta.json" 'sorted(-c["depth_m"] for c in d["manifest"]["legend"]["classes"] if c["kind"] == "ocean")')
nocoast=$(sea_depths "$T/nocoast")
withcoast=$(sea_depths "$T/inproc")
[ "$(echo "$nocoast" | cut -d' ' -f1)" -le "$(json_get "$T/nocoast/meta.json" 'len([c for c in d["manifest"]["legend"]["classes"] if c["kind"] == "ocean"])')" ] ||
  fail "--no-coast's sea takes more depths than the legend paints ($painted): $nocoast"
[ "$(echo "$withcoast" | cut -d' ' -f1)" -gt 50 ] || fail "the coast bake's sea floor has only $withcoast depths"
! cmp -s "$T/nocoast/planet_height.png" "$T/inproc/planet_height.png" || fail "--no-coast made the coast bake's heightmap"

# SIGKILL the worker running the coast job. The demo's coast job takes a few tenths of a second on
# one thread, so the worker is stopped (SIGSTOP) the moment the coordinator logs the dispatch, and
# killed while stopped; when the job had already come back by then (the kill found nothing to
# interrupt: attempts ['ok']) the try proves nothing and is made again, at most five times.
big=(--steps 5 --no-tiles)
bake "$T/ref" "${big[@]}" --workers 0
attempts=
for try in 1 2 3 4 5; do
  rm -rf "$T/killed"
  "$TERRAIN" bake "${big[@]}" --workers 1 --threads 1 --verbose --out "$T/killed" >"$T/killed.out" 2>"$T/killed.err" &
  coord=$!
  track $coord
  re='dispatch: job 0 \(coast\) attempt 1 to local-[0-9]+ \(pid [0-9]+\)'
  for ((i = 0; i < 3000; i++)); do
    grep -qE -- "$re" "$T/killed.err" 2>/dev/null && break
    sleep 0.02
  done
  pid=$(grep -m1 -E "$re" "$T/killed.err" | sed -E 's/.*\(pid ([0-9]+)\).*/\1/')
  [ -n "$pid" ] || fail "no coast dispatch in $T/killed.err after 60 s"
  kill -STOP "$pid" || fail "the coast worker $pid was gone before the kill"
  kill -9 "$pid"
  wait $coord || fail "the bake did not complete after its coast worker was killed"
  attempts=$(json_get "$T/killed/meta.json" '[a["outcome"].split(":")[0] for a in d["coast"]["dispatch"]["jobs"][0]["attempts"]]')
  [ "$attempts" = "['ok']" ] || break
  echo "note: try $try: the coast job was back before its worker was stopped; again"
done
[ "$attempts" = "['lost', 'ok']" ] ||
  fail "the coast job's attempts: $(json_get "$T/killed/meta.json" 'd["coast"]["dispatch"]["jobs"][0]["attempts"]')"
same_height "$T/ref" "$T/killed" "after the coast worker was killed"
cmp -s "$T/ref/map_coast.png" "$T/killed/map_coast.png" || fail "map_coast.png differs after the kill"
echo "ok: the coast job lost its worker (pid $pid), ran again, and made the undisturbed planet"
assert_clean "after the coast bakes"
echo "ok: --no-coast leaves the sea at its painted depths ($nocoast); with the coast it has a floor ($withcoast)"
