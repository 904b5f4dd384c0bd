#!/usr/bin/env bash
# A real Slurm cluster on this machine, for tests: munged, one slurmctld and two slurmd nodes,
# each node in its own network namespace (its own address on a private bridge) and UTS namespace
# (its own host name), so that SLURM_NODEID, the node list and every address are those of two
# machines. Debian's slurmctld/slurmd/slurm-client/munge (scripts/bootstrap.sh --test), never the
# slurm-wlm-emulator package (front-end mode: every task would be node 0). Needs root (namespaces).
#
#   source local_cluster.sh
#   cluster_start DIR     # DIR: scratch for keys, state, logs; exports SLURM_CONF
#   srun -N 2 hostname    # node1, node2
#   cluster_stop          # everything cluster_start started, namespaces and links included
#
# Sets CLUSTER_NODES (node1 node2), CLUSTER_ADDR_node1/_node2 and CLUSTER_IFNAME (each node's
# interface name, the same in every namespace: GLOO_SOCKET_IFNAME).

cluster_log() { printf '[cluster] %s\n' "$*" >&2; }

cluster_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cluster_start() {
  CLUSTER_DIR=$1
  local id=$(($$ % 100000)) net=$((($$ % 200) + 20))
  CLUSTER_BRIDGE=tbbr$id
  CLUSTER_IFNAME=tbeth0
  CLUSTER_NODES="node1 node2"
  CLUSTER_NETNS=()
  CLUSTER_PIDS=()
  local subnet=10.231.$net host_addr=10.231.$net.1
  mkdir -p "$CLUSTER_DIR"/{munge,state,spool}
  chmod 700 "$CLUSTER_DIR/munge"

  # The private network: a bridge in this namespace, one veth pair per node.
  ip link add "$CLUSTER_BRIDGE" type bridge || return 1
  ip addr add "$host_addr/24" dev "$CLUSTER_BRIDGE" && ip link set "$CLUSTER_BRIDGE" up || return 1
  local i=1 node
  for node in $CLUSTER_NODES; do
    local ns=tipbench-$id-$node addr=$subnet.$((i + 1))
    ip netns add "$ns" || return 1
    CLUSTER_NETNS+=("$ns")
    ip link add "tbh$id$i" type veth peer name "tbn$id$i" || return 1
    ip link set "tbh$id$i" master "$CLUSTER_BRIDGE" && ip link set "tbh$id$i" up || return 1
    ip link set "tbn$id$i" netns "$ns" || return 1
    ip -n "$ns" link set "tbn$id$i" name "$CLUSTER_IFNAME" || return 1
    ip -n "$ns" addr add "$addr/24" dev "$CLUSTER_IFNAME" || return 1
    ip -n "$ns" link set "$CLUSTER_IFNAME" up && ip -n "$ns" link set lo up || return 1
    printf -v "CLUSTER_ADDR_$node" '%s' "$addr"
    export "CLUSTER_ADDR_$node"
    i=$((i + 1))
  done

  # MUNGE, with its own key and socket (the machine's munged, if any, is left alone).
  dd if=/dev/urandom of="$CLUSTER_DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$CLUSTER_DIR/munge/munge.key"
  local sock=$CLUSTER_DIR/munge/munge.sock
  munged --force --socket="$sock" --key-file="$CLUSTER_DIR/munge/munge.key" \
    --pid-file="$CLUSTER_DIR/munge/munged.pid" --log-file="$CLUSTER_DIR/munge/munged.log" \
    --seed-file="$CLUSTER_DIR/munge/munged.seed" || { cluster_log "munged did not start"; return 1; }

  local ctl_port
  ctl_port=$(cluster_free_port)
  export SLURM_CONF=$CLUSTER_DIR/slurm.conf
  {
    echo "ClusterName=tipbench-test"
    echo "SlurmctldHost=$(hostname -s)($host_addr)"
    echo "SlurmctldPort=$ctl_port"
    echo "SlurmdPort=6818"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$sock"
    echo "StateSaveLocation=$CLUSTER_DIR/state"
    echo "SlurmdSpoolDir=$CLUSTER_DIR/spool/%n"
    echo "SlurmctldPidFile=$CLUSTER_DIR/slurmctld.pid"
    echo "SlurmdPidFile=$CLUSTER_DIR/slurmd-%n.pid"
    echo "SlurmctldLogFile=$CLUSTER_DIR/slurmctld.log"
    echo "SlurmdLogFile=$CLUSTER_DIR/slurmd-%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    echo "SlurmdTimeout=60"
    echo "InactiveLimit=0"
    echo "KillWait=5"
    local cpus
    cpus=$(nproc)
    for node in $CLUSTER_NODES; do
      local var=CLUSTER_ADDR_$node
      echo "NodeName=$node NodeAddr=${!var} CPUs=$cpus State=UNKNOWN"
    done
    echo "PartitionName=test Nodes=${CLUSTER_NODES// /,} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
  } >"$SLURM_CONF"

  slurmctld -i -f "$SLURM_CONF" || { cluster_log "slurmctld did not start: $(tail -n 5 "$CLUSTER_DIR/slurmctld.log")"; return 1; }
  for node in $CLUSTER_NODES; do
    mkdir -p "$CLUSTER_DIR/spool/$node"
    # nsenter, not `ip netns exec`: that remounts /sys, and slurmd needs the host's cgroup mounts.
    nsenter --net="/run/netns/tipbench-$id-$node" unshare --uts sh -c "hostname $node && exec slurmd -D -N $node -f $SLURM_CONF" \
      >"$CLUSTER_DIR/slurmd-$node.out" 2>&1 &
    CLUSTER_PIDS+=($!)
    disown $!  # stopped by cluster_stop; no job-control notice when it is killed
  done
  # Both nodes idle, or give up after 60 s naming what the daemons said.
  local waited=0
  until [[ $(sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$') -eq 2 ]]; do
    if ((waited >= 60)); then
      cluster_log "the nodes never became idle: $(sinfo -N 2>&1 | tr '\n' ' ')"
      cluster_log "slurmd: $(tail -n 3 "$CLUSTER_DIR"/slurmd-*.log 2>&1 | tr '\n' ' ')"
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  cluster_log "2 nodes idle after ${waited} s (${CLUSTER_NODES}; controller port $ctl_port)"
}

cluster_stop() {
  [[ -n ${CLUSTER_DIR:-} ]] || return 0
  scancel --quiet --full -u root 2>/dev/null
  local ns pid
  for ns in "${CLUSTER_NETNS[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  done
  [[ -f $CLUSTER_DIR/slurmctld.pid ]] && kill -9 "$(cat "$CLUSTER_DIR/slurmctld.pid")" 2>/dev/null
  [[ -f $CLUSTER_DIR/munge/munged.pid ]] && kill -9 "$(cat "$CLUSTER_DIR/munge/munged.pid")" 2>/dev/null
  for pid in "${CLUSTER_PIDS[@]}"; do  # gone within a second of the kill above
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  for ns in "${CLUSTER_NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  ip link del "$CLUSTER_BRIDGE" 2>/dev/null
  CLUSTER_DIR=
}
