#!/usr/bin/env bash
# How right the live ETA is: one bake (the built-in demo unless BAKE ARGS say otherwise) into OUT
# (removed first), its report.html read every 0.5 s while it runs, and then, for every phase whose
# page gave an ETA, the ETA against the time the phase really took to end (meta.json's timeline) at
# each page written: per phase the median and the largest error over the middle of the phase (the
# pages written between 20 % and 80 % of its time), and every sample with --all. The cost model is
# docs/report.md, "Progress and the ETA"; the issue's target is 30 % on the demo.
# Usage: bench/eta_demo.sh OUT [--all] [BAKE ARGS...]; TB_BUILD_DIR (build). Say what else ran.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/eta_demo.sh OUT [--all] [BAKE ARGS...]" >&2; exit 2; }
out=$1
shift
all=0
if [ "${1:-}" = "--all" ]; then
  all=1
  shift
fi
build=${TB_BUILD_DIR:-build}
rm -rf "$out" "$out.samples"
mkdir -p "$out"
"$build/terrain" bake --out "$out" "$@" >"$out.bake.out" 2>"$out.bake.err" &
baker=$!
: >"$out.samples"
while kill -0 $baker 2>/dev/null; do
  if [ -f "$out/report.html" ]; then
    python3 - "$out/report.html" >>"$out.samples" <<'PY' || true
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'id="eta" data-eta-s="([0-9.]+)" data-eta-phase="(\w+)"', t)
w = re.search(r'data-written-ms="([0-9]+)"', t)
if m and w:
    print(w.group(1), m.group(2), m.group(1))
PY
  fi
  sleep 0.5
done
rc=0
wait $baker || rc=$?
[ $rc = 0 ] || { echo "eta_demo: the bake failed (exit $rc): see $out.bake.err" >&2; exit 1; }
echo "load before the summary: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out.samples" "$out/meta.json" "$all" <<'PY'
import json, statistics, sys
samples, meta, show_all = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3] == "1"
tl = meta["timeline"]
start = {p["name"]: tl["started_unix"] + p["start_s"] for p in tl["phases"]}
end = {p["name"]: tl["started_unix"] + p["start_s"] + p["seconds"] for p in tl["phases"]}
seen, rows = set(), {}
for line in open(samples):
    w, phase, eta = line.split()
    if (w, phase) in seen or phase not in end:
        continue
    seen.add((w, phase))
    t = int(w) / 1000
    left = end[phase] - t
    length = end[phase] - start[phase]
    if left <= 0 or length <= 0:
        continue
    at = (t - start[phase]) / length
    rows.setdefault(phase, []).append((at, float(eta), left))
print(f"{'phase':8s} {'seconds':>8s} {'pages':>6s} {'mid pages':>9s} {'median err':>10s} {'worst err':>9s}")
for phase, r in rows.items():
    mid = [(e - left) / left for at, e, left in r if 0.2 <= at <= 0.8]
    med = f"{100 * statistics.median(mid):+.0f} %" if mid else "-"
    worst = f"{100 * max(mid, key=abs):+.0f} %" if mid else "-"
    print(f"{phase:8s} {end[phase] - start[phase]:8.1f} {len(r):6d} {len(mid):9d} {med:>10s} {worst:>9s}")
    if show_all:
        for at, e, left in r:
            print(f"    at {100 * at:3.0f} %: ETA {e:6.1f} s, {left:6.1f} s left ({100 * (e - left) / left:+.0f} %)")
PY
