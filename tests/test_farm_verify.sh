#!/usr/bin/env bash
# Verification by replication (docs/distribution.md, "Verification by replication"): a farm bake of
# the 10 km demo at 20 steps on loopback TCP with two workers, one honest terrain-worker and one
# that computes every job and then alters its answer where no check can see it, checksum recomputed
# and the spec's echo intact (tests/tools/tb_misbehave.c --attack lie: a region's land height, a coast
# block's height, 64 bytes of a tile's flow map). Once for each kind the liar alters (region,
# coast_block, tile; the phases before the attacked one from a store copied from the reference, so
# the liar's first job is of that kind), with the farm's default settings:
#  1. the bake ends with the in-process reference's bytes (heightmap, coast map, every tile file) and
#     the reference's store entries;
#  2. the log names the quarantined worker and meta.json's dispatch record lists it in "quarantined";
#  3. the liar did send altered answers (its own output) and each was outvoted.
# Negative control: the same farm with --verify off lets the altered bytes land (outputs or store
# entries differ from the reference's).
set -euo pipefail
source "$2/tests/support/bake_test.sh" "$1" "$2"

run=(--circumference-km 10 --steps 20)
bake "$T/ref" "${run[@]}" --workers 0

keys() { # KIND...: the reference's store keys of those kinds
  json_get "$T/ref/meta.json" "' '.join(sorted(j['key'] for rec in (d['dispatch'], d['coast']['dispatch'], d['tiles']['dispatch']) for j in rec['jobs'] if j['kind'] in '$*'.split()))"
}
tile_files() { json_get "$1/tiles/index.json" "json.dumps([t['files'] for t in d['tiles']], sort_keys=True)"; }
same_outputs() { # A B
  cmp -s "$1/planet_height.png" "$2/planet_height.png" && cmp -s "$1/map_coast.png" "$2/map_coast.png" &&
    [ "$(tile_files "$1")" = "$(tile_files "$2")" ] &&
    for f in "$1"/tiles/*; do cmp -s "$f" "$2/tiles/$(basename "$f")" || return 1; done
}
same_store() { # DIR: every entry the reference has, with its bytes
  for k in $(keys region coast_block tile); do cmp -s "$1/.cache/$k.tbr" "$T/ref/.cache/$k.tbr" || return 1; done
}

# farm NAME KIND [ARGS...]: the farm bake with the liar altering KIND's answers; the phases before KIND
# come from the reference's store.
farm() {
  local name=$1 kind=$2 before
  shift 2
  case $kind in region) before="" ;; coast_block) before="region" ;; tile) before="region coast_block" ;; esac
  mkdir -p "$T/$name/.cache"
  for k in $(keys $before); do cp "$T/ref/.cache/$k.tbr" "$T/$name/.cache/"; done
  "$TERRAIN" bake "${run[@]}" "${FAST[@]}" --bind 'tcp://127.0.0.1:*' --workers 0 --threads 1 "$@" \
    --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" &
  local coord=$!
  track $coord
  wait_for "$T/$name.out" 'listening for workers on tcp://' 30
  local ep
  ep=$(grep -oE 'tcp://[0-9.]+:[0-9]+' "$T/$name.out" | head -1)
  "$MISBEHAVE" --connect "$ep" --attack lie --lie-kinds "$kind" --name liar --timeout 200 \
    >"$T/$name-liar.out" 2>"$T/$name-liar.err" &
  local liar=$!
  track $liar
  "$WORKER" --connect "$ep" --name honest --threads 1 "${FAST[@]}" >"$T/$name-honest.out" 2>"$T/$name-honest.err" &
  track $!
  wait $coord || fail "$name: the farm bake failed beside the liar"
  wait $liar || true
}

for kind in region coast_block tile; do
  farm "v-$kind" $kind
  d="$T/v-$kind"
  n=$(grep -c 'sent an altered' "$d-liar.out" || true)
  [ "$n" -ge 1 ] || fail "$kind: the liar altered no answer (no attack)"
  same_outputs "$T/ref" "$d" || fail "$kind: the farm bake's outputs differ from the in-process reference"
  same_store "$d" || fail "$kind: a store entry differs from the reference's"
  grep -qE 'worker liar \(conn:[0-9a-f]+\) quarantined for this bake: its result of (region [0-9]+|coast|tile c[0-9]+r[0-9]+) \([0-9a-f]+\) is outside the majority' "$d.err" ||
    fail "$kind: the log does not name the quarantined worker"
  [ "$(json_get "$d/meta.json" "sorted({w for rec in (d['dispatch'], d['coast']['dispatch'], d['tiles']['dispatch']) for w in rec['quarantined']})")" = "['liar']" ] ||
    fail "$kind: meta.json's dispatch records do not list the liar as quarantined"
  echo "ok: $kind: $n altered answer(s) outvoted, the liar quarantined, the reference's bytes"
done

# Negative control: verification off, the altered answers land.
for kind in region tile; do
  farm "off-$kind" $kind --verify off
  d="$T/off-$kind"
  [ "$(grep -c 'sent an altered' "$d-liar.out" || true)" -ge 1 ] || fail "off-$kind: the liar altered no answer (no attack)"
  if same_outputs "$T/ref" "$d" && same_store "$d"; then
    fail "off-$kind: with --verify off the altered answers changed nothing (the test cannot fail)"
  fi
  echo "ok (negative control): with --verify off the liar's $kind answers land"
done
assert_clean "after the farm bakes"
