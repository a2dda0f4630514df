#!/usr/bin/env bash
# The deployment files parse and do not drift (docs/deploy.md):
#  - docker/compose.yaml and docker/k8s/farm.yaml are valid YAML of the expected shape;
#  - the Kubernetes coordinator runs exactly Compose's coordinator command (the one scripts/test-image
#    runs), and the Kubernetes workers run the image's default command with the same environment
#    variables as Compose's workers, plus their pod name;
#  - every command line - the coordinator's, and the worker's as docker/Dockerfile's CMD expands it
#    under each file's environment - is accepted by this build's terrain / terrain-worker (the same
#    arguments plus --help must exit 0: an unknown option or a bad value exits 2), and the keys the
#    workers are given are the files the Kubernetes secret mounts.
# A negative control: a command line with a misspelt option must be refused by the same check.
set -euo pipefail
source "$2/tests/support/farm_test.sh" "$1" "$2"

if ! python3 -c 'import yaml' 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "deploy_files: installing python3-yaml" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3-yaml >/dev/null
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo -n apt-get update -qq && sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends python3-yaml >/dev/null
  fi
  python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml is missing and cannot be installed (needs root or sudo)"
fi

# Shims on PATH: terrain and terrain-worker record their arguments and run the real program with
# --help appended, which parses every option and value and exits 0, or exits 2 naming the bad one.
mkdir -p "$T/bin"
for prog in terrain terrain-worker; do
  cat >"$T/bin/$prog" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T/$prog.args"
exec "$BUILD/$prog" "\$@" --help >/dev/null
EOF
  chmod +x "$T/bin/$prog"
done

python3 - "$SRC" "$T" <<'EOF' || fail "the deployment files drifted or do not parse (above)"
import os, shlex, subprocess, sys, yaml

src, t = sys.argv[1], sys.argv[2]
env = dict(os.environ, PATH=t + "/bin:" + os.environ["PATH"])
errors = []

def check(cond, what):
    if not cond:
        errors.append(what)

def run(argv, extra_env, what):
    """Runs argv through the shims; returns the arguments the program got."""
    for p in ("terrain", "terrain-worker"):
        try:
            os.unlink(os.path.join(t, p + ".args"))
        except FileNotFoundError:
            pass
    r = subprocess.run(argv, env=dict(env, **extra_env), capture_output=True, text=True)
    check(r.returncode == 0, "%s: %s exited %d: %s" % (what, argv, r.returncode, r.stderr.strip()))
    prog = "terrain-worker" if os.path.exists(os.path.join(t, "terrain-worker.args")) else "terrain"
    try:
        return prog, open(os.path.join(t, prog + ".args")).read().split("\n")[:-1]
    except FileNotFoundError:
        check(False, "%s: %s ran neither terrain nor terrain-worker" % (what, argv))
        return None, []

# The image's default command (the last CMD of docker/Dockerfile, exec form).
cmd = None
for line in open(os.path.join(src, "docker/Dockerfile")):
    if line.startswith("CMD "):
        cmd = yaml.safe_load(line[4:])
check(isinstance(cmd, list) and cmd[:2] == ["sh", "-c"], "Dockerfile: CMD is not [sh, -c, ...]")

compose = yaml.safe_load(open(os.path.join(src, "docker/compose.yaml")))
docs = list(yaml.safe_load_all(open(os.path.join(src, "docker/k8s/farm.yaml"))))
by_kind = {}
for d in docs:
    check(d.get("apiVersion") and d.get("kind") and d.get("metadata", {}).get("name"),
          "farm.yaml: a document without apiVersion, kind and metadata.name")
    by_kind[(d["kind"], d["metadata"]["name"])] = d
svc = by_kind.get(("Service", "coordinator"))
kc = by_kind.get(("Job", "terrain-coordinator"))
kw = by_kind.get(("Job", "terrain-workers"))
check(svc and kc and kw, "farm.yaml: expected Service coordinator, Jobs terrain-coordinator and terrain-workers")
if errors:
    print("\n".join(errors)); sys.exit(1)

cc = compose["services"]["coordinator"]["command"]
cw_env = {k: str(v) for k, v in compose["services"]["worker"]["environment"].items()}
kcc = kc["spec"]["template"]["spec"]["containers"][0]
kwc = kw["spec"]["template"]["spec"]["containers"][0]
check(kcc["command"] == cc, "the Kubernetes coordinator's command differs from Compose's:\n  %s\n  %s" % (kcc["command"], cc))
check("command" not in kwc and "args" not in kwc, "the Kubernetes workers override the image's command")
kw_env = {e["name"]: e.get("value") for e in kwc["env"]}
check(set(kw_env) == set(cw_env) | {"TB_NAME"},
      "worker environment: Kubernetes sets %s, Compose %s (+ TB_NAME)" % (sorted(kw_env), sorted(cw_env)))
check(kw_env.get("TB_CONNECT") == cw_env.get("TB_CONNECT"), "the workers connect to different endpoints")
svc_port = svc["spec"]["ports"][0]["port"]
check(kw_env.get("TB_CONNECT") == "tcp://%s:%d" % (svc["metadata"]["name"], svc_port),
      "TB_CONNECT does not name the coordinator's Service and port")
check("tcp://0.0.0.0:%d" % svc_port in cc, "the coordinator does not bind the Service's port")

# Every command line parses.
prog, args = run(cc, {}, "compose/k8s coordinator")
check(prog == "terrain" and args[:1] == ["bake"], "the coordinator is not terrain bake")
for name, wenv in (("compose worker", cw_env),
                   ("k8s worker", dict(kw_env, TB_NAME="terrain-workers-x7k2p"))):
    prog, args = run(cmd, wenv, name)
    check(prog == "terrain-worker", "%s does not run terrain-worker" % name)
    joined = " ".join(args)
    check("--connect %s" % wenv["TB_CONNECT"] in joined, "%s: no --connect: %s" % (name, joined))
    check("--server-key /keys/coordinator.cert --cert /keys/worker.cert" in joined,
          "%s: TB_KEYS does not give the keys: %s" % (name, joined))
    if "TB_NAME" in wenv:
        check("--name %s" % wenv["TB_NAME"] in joined, "%s: TB_NAME not passed: %s" % (name, joined))

# The keys each side is given are the files its secret mounts.
def mounted(job):
    vols = job["spec"]["template"]["spec"]["volumes"]
    items = [v for v in vols if v["name"] == "keys"][0]["secret"]["items"]
    return {"/keys/" + i["path"] for i in items}
ck = mounted(kc)
for opt in ("--curve-cert", "--curve-clients"):
    path = cc[cc.index(opt) + 1]
    check(path in ck or any(k.startswith(path + "/") for k in ck), "coordinator %s %s is not mounted" % (opt, path))
check("/keys/coordinator.cert_secret" in ck, "the coordinator's secret key is not mounted")
wk = mounted(kw)
check({"/keys/coordinator.cert", "/keys/worker.cert", "/keys/worker.cert_secret"} <= wk,
      "the workers' secret mounts %s" % sorted(wk))

# The negative control: the same check refuses a misspelt option.
n = len(errors)
run(cc + ["--stepz", "5"], {}, "negative control")
check(len(errors) == n + 1, "a misspelt option was not refused")
if len(errors) == n + 1:
    errors.pop()

if errors:
    print("\n".join(errors)); sys.exit(1)
print("ok: compose.yaml and k8s/farm.yaml parse; one coordinator command; workers from the image's CMD; all accepted")
EOF
