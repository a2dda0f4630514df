# shellcheck shell=bash disable=SC2034,SC2154
# Private networks for the multi-host tests (tests/test_farm_hosts.sh). Sourced first, so the test can
# call netns_reexec before tests/support/farm_test.sh makes its scratch directory:
#
#   source "$2/tests/support/netns.sh"; netns_reexec "$0" "$@"
#   source "$2/tests/support/farm_test.sh" "$1" "$2"; netns_require; netns_trap
# Everything lives in network namespaces this file creates: a "switch"
# namespace holding a bridge, and one namespace per host joined to it by a veth pair whose switch
# end is the host's port. Nothing is added to the machine's own namespace, so no packet of a test
# can leave the namespaces it made.
#
#   netns_require             skips the test (exit 77, ctest SKIP) when the machine forbids namespaces
#   netns_switch              makes the switch (call once)
#   netns_host NAME ADDR/LEN  makes host NAME with address ADDR on the switch
#   netns_on NAME             NETNS_ON=(the prefix that runs a command on host NAME)
#   netns_port NAME up|down   the host's switch port: down is a pulled cable (a partition)
#   netns_readdress NAME OLD/LEN NEW/LEN   the host's address changes (a new DHCP lease)
#
# Namespace names carry the test's pid, so two runs never share one; netns_cleanup (called by the
# EXIT trap netns_trap installs, before farm_test.sh's own cleanup) kills every process still inside
# them and deletes them.
NETNS_PREFIX=tbhosts$$
NETNS_SW=$NETNS_PREFIX-sw
NETNS_MADE=()
NETNS_SKIP=77


s_ip() { ip "$@"; }

netns_cleanup() {
  local ns p
  for ns in "${NETNS_MADE[@]:-}"; do
    [ -n "$ns" ] || continue
    for p in $(s_ip netns pids "$ns" 2>/dev/null || true); do
      kill -9 "$p" 2>/dev/null || true
    done
  done
  for ns in "${NETNS_MADE[@]:-}"; do
    [ -n "$ns" ] && s_ip netns del "$ns" 2>/dev/null || true
  done
  NETNS_MADE=()
}

# Installs an EXIT trap running netns_cleanup, then farm_test.sh's cleanup.
netns_trap() {
  trap 'rc=$?; netns_cleanup; s_cleanup; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

s_netns_skip() {
  echo "SKIP: $* (this machine forbids network namespaces to this user; the multi-host test needs" \
    "root (or passwordless sudo), ip netns, veth pairs and a bridge)" >&2
  exit $NETNS_SKIP
}

netns_require() {
  [ "$(id -u)" -eq 0 ] || s_netns_skip "not root (netns_reexec runs the test under sudo when it can)"
  if ! command -v ip >/dev/null; then
    echo "netns: installing iproute2" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends iproute2 >/dev/null
  fi
  local probe=$NETNS_PREFIX-probe out ns owner p
  # Namespaces of a run killed with SIGKILL (a ctest timeout), whose trap never ran: their owner's
  # pid is in their name and gone.
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^tbhosts[0-9]+-[a-z0-9]+$' || true); do
    owner=${ns#tbhosts}
    owner=${owner%%-*}
    ! kill -0 "$owner" 2>/dev/null || continue
    for p in $(ip netns pids "$ns" 2>/dev/null || true); do kill -9 "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
    echo "netns: removed $ns, left by a killed run" >&2
  done
  if ! out=$(s_ip netns add "$probe" 2>&1); then
    s_netns_skip "ip netns add failed: $out"
  fi
  NETNS_MADE+=("$probe")
  if ! out=$(s_ip -n "$probe" link add tbp0 type veth peer name tbp1 2>&1); then
    s_netns_skip "no veth pairs: $out"
  fi
  if ! out=$(s_ip -n "$probe" link add tbbr type bridge 2>&1); then
    s_netns_skip "no bridges: $out"
  fi
  s_ip netns del "$probe"
  NETNS_MADE=()
}

netns_switch() {
  s_ip netns add "$NETNS_SW"
  NETNS_MADE+=("$NETNS_SW")
  s_ip -n "$NETNS_SW" link add br0 type bridge
  s_ip -n "$NETNS_SW" link set br0 up
}

netns_host() {
  local name=$1 addr=$2 ns=$NETNS_PREFIX-$1
  s_ip netns add "$ns"
  NETNS_MADE+=("$ns")
  s_ip -n "$ns" link set lo up
  # Both ends are made inside namespaces: the port in the switch, eth0 in the host.
  s_ip -n "$NETNS_SW" link add "p-$name" type veth peer name eth0 netns "$ns"
  s_ip -n "$NETNS_SW" link set "p-$name" master br0 up
  s_ip -n "$ns" addr add "$addr" dev eth0
  s_ip -n "$ns" link set eth0 up
}

netns_port() {
  s_ip -n "$NETNS_SW" link set "p-$1" "$2"
}

netns_readdress() {
  local ns=$NETNS_PREFIX-$1
  s_ip -n "$ns" addr del "$2" dev eth0
  s_ip -n "$ns" addr add "$3" dev eth0
}

# netns_on NAME: sets NETNS_ON to the command prefix that runs a program on host NAME:
#   netns_on h1; "${NETNS_ON[@]}" "$WORKER" ... &
# `ip netns exec` execs the program, so $! is the program's own pid.
netns_on() {
  NETNS_ON=(ip netns exec "$NETNS_PREFIX-$1")
}

# netns_reexec "$0" "$@": called first thing by a test; as a user with passwordless sudo, runs the
# test again as root (namespaces need it); as root, or without sudo, does nothing (netns_require
# then skips with the reason).
netns_reexec() {
  local self=$1
  shift
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    exec sudo -n bash "$self" "$@"
  fi
}
