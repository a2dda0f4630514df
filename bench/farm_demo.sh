#!/usr/bin/env bash
# One farm bake of the built-in demo (25 km, 4 regions, the coast, 10 tiles) on loopback TCP: the
# coordinator (`--workers 0 --threads 1`, everything else its defaults) and WORKERS (3)
# terrain-worker processes of one thread each, fresh (OUT is removed first), then the regions phase's
# worker-seconds from meta.json: verification runs' seconds against all (docs/distribution.md,
# "Verification by replication", "Cost, measured"). Time it from outside for the whole-process CPU:
#   /usr/bin/time -f '%U %S %e' bench/farm_demo.sh OUT --verify auto
#   /usr/bin/time -f '%U %S %e' bench/farm_demo.sh OUT --verify off
# Usage: bench/farm_demo.sh OUT [BAKE ARGS...]; TB_BUILD_DIR (build), WORKERS (3).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/farm_demo.sh OUT [BAKE ARGS...]" >&2; exit 2; }
out=$1
shift
build=${TB_BUILD_DIR:-build}
workers=${WORKERS:-3}
rm -rf "$out"
mkdir -p "$out"
"$build/terrain" bake --bind 'tcp://127.0.0.1:*' --workers 0 --threads 1 --out "$out" "$@" \
  >"$out.coord.out" 2>"$out.coord.err" &
coord=$!
ep=
for _ in $(seq 300); do
  ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$out.coord.out" 2>/dev/null | head -1 || true)
  [ -n "$ep" ] && break
  kill -0 $coord 2>/dev/null || break
  sleep 0.1
done
[ -n "$ep" ] || { echo "farm_demo: the coordinator did not listen (see $out.coord.err)" >&2; exit 1; }
pids=()
for i in $(seq "$workers"); do
  "$build/terrain-worker" --connect "$ep" --name "w$i" --threads 1 >"$out.w$i.out" 2>&1 &
  pids+=($!)
done
rc=0
wait $coord || rc=$?
for p in "${pids[@]}"; do wait "$p" || true; done
[ $rc -eq 0 ] || { echo "farm_demo: the bake failed ($rc; see $out.coord.err)" >&2; exit $rc; }
# each run's record and log kept beside OUT (the next run removes OUT)
stamp=$(date -u +%H%M%S)
cp "$out/meta.json" "$out.$stamp.meta.json"
cp "$out.coord.err" "$out.$stamp.coord.err"
echo "farm_demo: $out.$stamp.meta.json"

python3 - "$out/meta.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def phase(name, rec):
    tot = ver = 0.0
    jobs = []
    for j in rec["jobs"]:
        for a in j.get("attempts", []):
            s = a.get("seconds", 0) or 0
            tot += s
            if a.get("verify"):
                ver += s
                jobs.append(j["label"])
    print("farm_demo: %s: %.1f of %.1f worker-seconds were verification runs (%.1f %%)%s"
          % (name, ver, tot, 100 * ver / tot if tot else 0,
             ": " + ", ".join(sorted(set(jobs))) if jobs else ""))
    return tot, ver
t = v = 0.0
for name, rec in (("regions", d["dispatch"]), ("coast", d["coast"]["dispatch"]),
                  ("tiles", d["tiles"]["dispatch"])):
    a, b = phase(name, rec)
    t += a
    v += b
print("farm_demo: all phases: %.1f of %.1f worker-seconds were verification runs (%.1f %%)"
      % (v, t, 100 * v / t if t else 0))
PY
