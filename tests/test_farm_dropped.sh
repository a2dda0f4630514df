#!/usr/bin/env bash
# Liveness after a dropped answer (docs/distribution.md, "Leases, fencing and the failure rules"):
# farm bakes of the 10 km demo at 20 steps on loopback TCP beside a worker that computes its first
# job and drops the answer (tests/tools/tb_misbehave.c --attack drop), then heartbeats on and answers
# later jobs honestly:
#  1. wrong-attempt: the coast job's RESULT sent under the attempt number + 1 (the phases before it
#     from the reference's store, so the coast job is its first), beside an honest worker;
#  2. wrong-id: a region job's RESULT sent under another job id, beside an honest worker;
#  3. ignore-cancel: no answer at all and its CANCEL ignored, with --job-timeout 15, as the only
#     worker (a cancelled worker that never says it stopped was never given work again).
# Each bake must end byte-identical to the in-process reference, and the dropped job must be done
# within twice its deadline of its first dispatch (meta.json's attempts); the log names the dropped
# answer. Negative controls: the attacker's own output says it dropped the answer, and the dropped
# job's record shows the failed attempt.
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

run=(--circumference-km 10 --steps 20)
bake "$T/ref" "${run[@]}" --workers 0
keys() { json_get "$T/ref/meta.json" "' '.join(sorted(j['key'] for rec in (d['dispatch'], d['coast']['dispatch'], d['tiles']['dispatch']) for j in rec['jobs'] if j['kind'] in '$*'.split()))"; }
tile_files() { json_get "$1/tiles/index.json" "json.dumps([t['files'] for t in d['tiles']], sort_keys=True)"; }
same_outputs() {
  cmp -s "$1/planet_height.png" "$2/planet_height.png" && cmp -s "$1/map_coast.png" "$2/map_coast.png" &&
    [ "$(tile_files "$1")" = "$(tile_files "$2")" ] &&
    for f in "$1"/tiles/*; do cmp -s "$f" "$2/tiles/$(basename "$f")" || return 1; done
}

# dropped NAME HOW HONEST PRESTORE [ARGS...]: the farm bake with the attacker (and an honest worker
# when HONEST is 1; PRESTORE: kinds whose entries come from the reference's store).
dropped() {
  local name=$1 how=$2 honest=$3 pre=$4
  shift 4
  mkdir -p "$T/$name/.cache"
  for k in $(keys $pre); do cp "$T/ref/.cache/$k.tbr" "$T/$name/.cache/"; done
  timeout 300 "$TERRAIN" bake "${run[@]}" "${FAST[@]}" --bind 'tcp://127.0.0.1:*' --workers 0 --threads 1 \
    --verify off "$@" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" &
  local coord=$!
  track $coord
  wait_for "$T/$name.out" 'listening for workers on tcp://' 30
  local ep
  ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/$name.out" | head -1)
  "$MISBEHAVE" --connect "$ep" --attack drop --drop "$how" --name dropper --timeout 280 \
    >"$T/$name-dropper.out" 2>"$T/$name-dropper.err" &
  track $!
  if [ "$honest" = 1 ]; then
    wait_for "$T/$name.err" 'worker dropper joined' 30
    "$WORKER" --connect "$ep" --name honest --threads 1 "${FAST[@]}" >"$T/$name-honest.out" 2>"$T/$name-honest.err" &
    track $!
  fi
  wait $coord || fail "$name: the bake failed or hung after the dropped answer"
  grep -q "^dropped job" "$T/$name-dropper.out" || fail "$name: the attacker dropped no answer (no attack)"
  same_outputs "$T/ref" "$T/$name" || fail "$name: the outputs differ from the in-process reference"
}

# within NAME LABEL: the job LABEL was done within twice its deadline of its first dispatch, and
# its record shows more than one attempt.
within() {
  local r
  r=$(json_get "$T/$1/meta.json" "[(len(j['attempts']), j['deadline_s'], max(a['start_s'] + a['seconds'] for a in j['attempts']) - min(a['start_s'] for a in j['attempts'])) for rec in (d['dispatch'], d['coast']['dispatch'], d['tiles']['dispatch']) for j in rec['jobs'] if j['label'] == '$2'][0]")
  python3 - "$r" "$1" <<'EOF' || fail "$2"
import sys
n, deadline, span = eval(sys.argv[1])
if n < 2:
    sys.exit(f"{sys.argv[2]}: the dropped job ran {n} time(s): its dropped attempt is not in the record")
if span > 2 * deadline:
    sys.exit(f"{sys.argv[2]}: done {span:.1f} s after its first dispatch, over twice its deadline {deadline:.0f} s")
print(f"{sys.argv[2]}: {n} attempts, done {span:.1f} s after its first dispatch (deadline {deadline:.0f} s)")
EOF
}

# 1. The coast job answered under the wrong attempt number.
dropped wa wrong-attempt 1 "region"
grep -qE 'coast attempt 1 on dropper: bad answer: a RESULT for job [0-9]+ attempt 2, not its lease \(job [0-9]+ attempt 1\); it will run again' "$T/wa.err" ||
  fail "wrong-attempt: the dropped answer was not named"
within wa coast
echo "ok: a coast answer under the wrong attempt number ended its lease; the job ran again at once"

# 2. A region job answered under another job id.
dropped wi wrong-id 1 ""
label=$(grep -oE '^dropped job [0-9]+' "$T/wi-dropper.out" | head -1)
grep -qE 'region [0-9]+ attempt 1 on dropper: bad answer: a RESULT for job [0-9]+ attempt 1, not its lease' "$T/wi.err" ||
  fail "wrong-id: the dropped answer was not named"
region=$(grep -oE 'region [0-9]+ attempt 1 on dropper: bad answer' "$T/wi.err" | head -1 | cut -d' ' -f1-2)
within wi "$region"
echo "ok: a region answer under another job id ended its lease ($label); the job ran again at once"

# 3. No answer and the cancel ignored, the attacker the only worker.
dropped ic ignore-cancel 0 "" --job-timeout 15
grep -qE 'attempt 1 on dropper: timed out after 15.0 s; it will run again' "$T/ic.err" ||
  fail "ignore-cancel: the silent attempt did not time out"
region=$(grep -oE '(region [0-9]+|coast|tile c[0-9]+r[0-9]+) attempt 1 on dropper: timed out' "$T/ic.err" | head -1 | sed 's/ attempt 1.*//')
within ic "$region"
echo "ok: a worker that ignored its cancel got work again after one liveness window; the bake finished"
assert_clean "after the dropped answers"
