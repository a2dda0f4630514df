#!/usr/bin/env bash
# The verb frame (coordinator/cli/verb.h), through the built programs: every verb of `terrain`
# answers --help with exit 0 and a usage line; every bad-usage path - an unknown option, a value of
# the wrong type, a value out of its range (the seed 0..2^53 of every verb that takes one, the steps,
# the threads), a missing required argument - exits 2 with exactly one line on stderr, naming the
# option; and nothing is written. The controls: a good invocation of the same verbs exits 0, and the
# largest seed, 2^53, is accepted, so the checks are not refusing everything.
set -euo pipefail
build=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TERRAIN="$build/terrain"
WORKER="$build/terrain-worker"
fail() { echo "FAIL: $*" >&2; exit 1; }

verbs=(version schema plan init bake solve-region gate analyze farm-check farm-keys report tiles studio)
for v in "${verbs[@]}"; do
  rc=0
  "$TERRAIN" "$v" --help >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 0 ] || fail "terrain $v --help: exit $rc"
  grep -q "^usage: terrain $v" "$T/out" || fail "terrain $v --help prints no usage line"
  grep -q -- "--help" "$T/out" || fail "terrain $v --help does not list --help"
done
rc=0; "$WORKER" --help >"$T/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "terrain-worker --help: exit $rc"

# bad usage: ARGS | the text the one line must hold
bad=(
  "bake --bogus|--bogus"
  "bake --seed -1|--seed -1"
  "bake --seed 9007199254740993|--seed 9007199254740993"
  "bake --seed x|--seed"
  "bake --steps 1000001|--steps"
  "bake --threads 5000|--threads"
  "bake --workers -1|--workers"
  "bake --only 0,x|--only"
  "bake --heartbeat-ms 5|--heartbeat-ms"
  "bake --curve-cert c|--curve-cert"
  "bake a.json b.json|b.json"
  "plan --seed 9007199254740993|--seed"
  "plan --circumference-km|--circumference-km"
  "init|DIR"
  "init $T/w --seed -3|--seed"
  "solve-region|--region"
  "solve-region --region 1 --threads -1|--threads"
  "gate --seeds 1,x|--seeds"
  "gate --seeds 9007199254740993|--seeds"
  "gate --steps -1|--steps"
  "gate --baseline $T/none|--baseline"
  "analyze|HEIGHTMAP"
  "analyze x.png --mfd-exponent 101|--mfd-exponent"
  "analyze x.png --cell-m -2|--cell-m"
  "farm-check --jobs 0|--jobs"
  "farm-check --seed -1|--seed"
  "farm-keys|--out"
  "studio --bogus|--bogus"
  "studio --port 65536|--port"
  "studio --seed -1|--seed"
  "studio m.json --seed 3|--seed"
  "schema --bogus|--bogus"
  "version extra|extra"
  "report|output directory"
  "report --bogus x|--bogus"
  "report a b|\"b\""
  "tiles|output directory"
  "tiles --bogus x|--bogus"
  "tiles a b|\"b\""
  "tiles x --sample-km 0|--sample-km"
  "bake --tiles-only|--tiles-only"
  "report nobake|nobake/meta.json: not found"
  "frobnicate|frobnicate"
)
for case in "${bad[@]}"; do
  args=${case%%|*}
  want=${case#*|}
  rc=0
  # shellcheck disable=SC2086
  (cd "$T" && "$TERRAIN" $args) >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || fail "terrain $args: exit $rc, expected 2 ($(head -c 300 "$T/err"))"
  lines=$(wc -l <"$T/err")
  [ "$lines" = 1 ] || fail "terrain $args: $lines lines on stderr, expected one: $(cat "$T/err")"
  grep -qF -- "$want" "$T/err" || fail "terrain $args: the message does not name $want: $(cat "$T/err")"
done
rc=0; "$WORKER" --threads -1 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- '--threads' "$T/err" ||
  fail "terrain-worker --threads -1: exit $rc: $(cat "$T/err")"
[ -z "$(ls "$T" | grep -v '^out$\|^err$' || true)" ] || fail "bad usage wrote files: $(ls "$T")"

# controls: the same verbs, used well
"$TERRAIN" version >/dev/null || fail "terrain version failed"
"$TERRAIN" schema >/dev/null || fail "terrain schema failed"
(cd "$T" && "$TERRAIN" init w --seed 9007199254740992 --circumference-km 5 >/dev/null 2>&1) ||
  fail "terrain init with the largest seed, 2^53, failed"
(cd "$T" && "$TERRAIN" plan w/planet.json --out p >/dev/null 2>&1) || fail "terrain plan failed"
echo "ok: ${#verbs[@]} verbs answer --help; ${#bad[@]} bad usages exit 2 with one line naming the option"
