#!/usr/bin/env bash
# The farm under Slurm (docs/deploy.md): a one-host cluster of this test's own (Debian's slurm-wlm and
# munge, installed when missing; munged with its own key and socket, slurmctld and slurmd on a
# generated slurm.conf in a private directory, tests/support/slurm.sh) runs docker/slurm/bake.sbatch
# unchanged, configured the way a site configures it (environment: TERRAIN_ARGS, KEYS from
# `terrain farm-keys`, PORT, TB_BIN; allocation: two tasks of one CPU). The coordinator runs as one
# job step and the two workers as another; the job must complete, its output must show the CURVE bind
# and both workers joining under their Slurm task names, and the planet must be byte-identical to an
# in-process bake of the same manifest. Skipped (ctest SKIP) with the reason only when Slurm cannot
# be installed or started here.
set -euo pipefail
source "$2/tests/support/slurm.sh"
slurm_reexec "$0" "$@"
source "$2/tests/support/farm_test.sh" "$1" "$2"
slurm_require
slurm_trap
slurm_start

"$TERRAIN" farm-keys --out "$T/keys" >/dev/null || fail "farm-keys failed"
small=(--circumference-km 10 --steps 100)
# In the background, so a signal ends the test (and its trap cleans up) without waiting for it.
"$TERRAIN" bake "${small[@]}" --workers 0 --out "$T/ref" >"$T/ref.out" 2>"$T/ref.err" &
track $!
wait $! || fail "the in-process reference bake failed"

# What a site sets, then sbatch as a site runs it. The coordinator binds every address of this host
# (tcp://0.0.0.0:PORT), so it runs with CURVE keys only.
port=$(s_free_port)
tasks=2
id=$(env KEYS="$T/keys" PORT="$port" TB_BIN="$BUILD" \
  TERRAIN_ARGS="bake ${small[*]} --out $T/farm" \
  sbatch --parsable --nodes=1 --ntasks-per-node=$tasks --cpus-per-task=1 --chdir="$T" \
  --output="$T/job.out" "$SRC/docker/slurm/bake.sbatch") || fail "sbatch refused the job"
id=${id%%;*}
end=$(slurm_wait_job "$id" 150)
[ "$end" = "COMPLETED 0:0" ] || {
  cat "$T/job.out" >&2 || true
  tail -20 "$SLURM_DIR"/log/slurmd.* >&2 || true
  fail "job $id ended $end, expected COMPLETED 0:0"
}

steps=$(sort -u "$SLURM_DIR/steps" | tr '\n' ',')
grep -qE "(^|,)$id\.[0-9]+ terrain," <<<"$steps" && grep -qE "(^|,)$id\.[0-9]+ bash," <<<"$steps" ||
  fail "job steps seen: $steps; expected a step 'terrain' (the coordinator) and a step 'bash' (the workers)"
cmp -s "$T/ref/planet_height.png" "$T/farm/planet_height.png" ||
  fail "planet_height.png of the Slurm bake differs from the in-process bake"
grep -q "listening for workers on tcp://0.0.0.0:$port (CURVE)" "$T/job.out" ||
  fail "the coordinator did not bind with CURVE: $(cat "$T/job.out")"
for ((k = 0; k < tasks; k++)); do
  grep -q "worker $SLURM_NODE-$k joined" "$T/job.out" || fail "task $k's worker never joined: $(cat "$T/job.out")"
done
names=$(json_get "$T/farm/meta.json" 'sorted(w["name"] for w in d["dispatch"]["workers"])')
[ "$names" = "['$SLURM_NODE-0', '$SLURM_NODE-1']" ] || fail "workers in the record: $names"
[ "$(json_get "$T/farm/meta.json" 'sum(1 for j in d["dispatch"]["jobs"] if j["done"])')" = 4 ] ||
  fail "not every region was done"
assert_clean "the Slurm bake"
echo "ok: sbatch docker/slurm/bake.sbatch on a one-host cluster: job $id completed, coordinator and" \
  "$tasks workers as Slurm steps, CURVE, planet_height.png identical to in-process"
