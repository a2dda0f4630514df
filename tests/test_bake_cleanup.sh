#!/usr/bin/env bash
# Local mode leaves nothing behind - no worker process, no socket file, no private directory - after
# a normal end, after errors (jobs that time out on every worker while the workers are busy; a worker
# program that does not exist; a heightmap that clips) and after Ctrl-C (SIGINT), which exits 130 in
# local and in-process mode and never leaves a meta.json claiming a complete bake. The 10 km demo.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

small=(--circumference-km 10)

# Normal end.
bake "$T/ok" "${small[@]}" --steps 20 --workers 2 --no-tiles
assert_clean "normal end"
# The workers' peak memory per attempt (their VmHWM, reset at each job's start: RESULT and FAIL carry
# it) is in meta.json: the solve's and the coast's largest, with its job, above the worker's own few
# MiB and under this machine's memory.
mem=$(awk '/MemTotal/ {printf "%d", $2 * 1024}' /proc/meminfo)
for rec in dispatch coast.dispatch; do
  python3 - "$T/ok/meta.json" "$rec" "$mem" <<'PY' || fail "the workers' peak memory in meta.json: see above"
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[k]
wp, mem = d["worker_peak"], float(sys.argv[3])
peaks = [a["peak_rss_bytes"] for j in d["jobs"] for a in j["attempts"] if "peak_rss_bytes" in a]
ok = wp and 4 << 20 < wp["bytes"] < mem and wp["bytes"] == max(peaks) and wp["job"]
print(f"{sys.argv[2]}: the largest worker peak {wp['bytes'] / 2**20:.0f} MiB ({wp['job']}), {len(peaks)} attempts measured")
sys.exit(0 if ok else 1)
PY
done
# ... and no attempt exceeded its job's stated bound (the region's and the coast's memory models).
peaks_within "$T/ok" dispatch coast.dispatch

# Error while workers are busy: every attempt at region 2 outlives --job-timeout and is cancelled.
# Three failures fail a job only once every live worker has failed it; a blocklisted local worker is
# respawned under a new name, so a fourth attempt can come first (docs/distribution.md).
rc=$(bake_status "$T/timeout" "${small[@]}" --steps 400 --workers 2 --threads 1 --job-timeout 0.2)
[ "$rc" = 1 ] || fail "jobs timing out: exit $rc, expected 1"
grep -qE 'failed [3-9] times .*timed out after 0.2 s' "$T/timeout.err" || fail "no timeout failure in the log"
[ ! -e "$T/timeout/meta.json" ] || fail "a failed bake wrote meta.json"
assert_clean "jobs timing out"

# Error before any worker joins: the worker program does not exist.
rc=$(bake_status "$T/noexe" "${small[@]}" --steps 20 --workers 2 --worker-program /nonexistent/terrain-worker)
[ "$rc" = 1 ] || fail "missing worker program: exit $rc, expected 1"
grep -q 'every local worker has exited' "$T/noexe.err" || fail "no explanation for the missing workers"
assert_clean "missing worker program"

# Error after the solve: an elevation range the ocean floor falls out of clips > 0.1 % and fails the
# bake (exit 1) with the fraction; the outputs are written so the clipping can be looked at.
"$TERRAIN" init "$T/planet" "${small[@]}" >"$T/init.out" 2>"$T/init.err" || fail "terrain init failed"
python3 - "$T/planet/planet.json" <<'EOF'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m["elevation_m"] = [-50, 200]
json.dump(m, open(p, "w"), indent=1)
EOF
rc=$(bake_status "$T/clip" "$T/planet/planet.json" --only 4 --steps 20 --workers 2)
[ "$rc" = 1 ] || fail "a clipping heightmap: exit $rc, expected 1"
grep -qE 'error: [0-9.]+ % of the planet.s cells lie outside elevation_m \[-50, 200\]' "$T/clip.err" ||
  fail "the clip failure does not give the fraction and the range"
[ -e "$T/clip/planet_height.png" ] || fail "the clipping bake did not write its heightmap for inspection"
assert_clean "clipping heightmap"

# SIGINT mid-bake, local workers: exit 130, workers stopped, directory removed, no meta.json.
"$TERRAIN" bake "${small[@]}" --steps 1000 --workers 2 --threads 1 --verbose --out "$T/int" \
  >"$T/int.out" 2>"$T/int.err" &
coord=$!
track $coord
wait_for "$T/int.err" 'attempt 1 \(region, [0-9]+-byte spec\) started' 20
sleep 0.3
kill -INT $coord
rc=0
wait $coord || rc=$?
[ $rc = 130 ] || fail "SIGINT, local workers: exit $rc, expected 130"
grep -qE 'interrupted with [0-9]+ of 4 regions done' "$T/int.err" || fail "no interruption message"
[ ! -e "$T/int/meta.json" ] || fail "an interrupted bake wrote meta.json"
assert_clean "SIGINT with local workers"

# SIGINT mid-bake in-process: the solve's progress callback stops it.
"$TERRAIN" bake "${small[@]}" --steps 1000 --workers 0 --out "$T/int0" >"$T/int0.out" 2>"$T/int0.err" &
coord=$!
track $coord
wait_for "$T/int0.err" 'baking 4 of 4 regions' 20
sleep 0.5
kill -INT $coord
rc=0
wait $coord || rc=$?
[ $rc = 130 ] || fail "SIGINT, in-process: exit $rc, expected 130"
[ ! -e "$T/int0/meta.json" ] || fail "an interrupted in-process bake wrote meta.json"
assert_clean "SIGINT in-process"
echo "ok: nothing left behind after a normal end, three kinds of error and SIGINT (exit 130)"
