#!/usr/bin/env bash
# capstan-scheduler beside upstream's kube-scheduler v1.36 (../shared/k8s), each in turn on a
# fresh Capstan API server (release build, embedded store), scheduling the same pods on the
# same nodes: capstan-load --schedule-nodes creates the nodes, then the pods, and times their
# bindings from a watch. Upstream's scheduler gets the same client rate limits (5,000 QPS).
#
#   tools/scheduler/side-by-side.sh     NODES="1000 5000" PODS=5000 SHAPES="plain anti-affinity spread claims"
#                                       SCHEDULERS="capstan upstream" (the defaults)
#                                       BUILD=dir (the binaries; target/release by default)
#
# Prints capstan-load's row per run, then the scheduler's CPU seconds and resident memory.
# Needs release builds of capstan-apiserver, capstan-scheduler and capstan-load; python3, xz.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
build=${BUILD:-$top/target/release}
need_builds "$build" capstan-apiserver capstan-scheduler capstan-load
ticks=$(getconf CLK_TCK)

# One run: a fresh API server, one scheduler, the harness; the scheduler's cost at the end.
run() { # scheduler nodes pods shape
  local dir=$work/$1-$2-$4 port server scheduler
  mkdir -p "$dir"
  port=$(free_port)
  "$build/capstan-apiserver" --data-dir="$dir/data" --cert-dir="$dir/pki" --bind-address=127.0.0.1 \
    --secure-port="$port" --write-admin-kubeconfig="$dir/admin.kubeconfig" > "$dir/apiserver.log" 2>&1 &
  server=$!
  pids+=("$server")
  until [ -s "$dir/admin.kubeconfig" ] && kubectl --kubeconfig "$dir/admin.kubeconfig" get --raw /readyz >/dev/null 2>&1; do
    sleep 0.1
  done
  if [ "$1" = upstream ]; then
    cat > "$dir/scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$dir/admin.kubeconfig", qps: 5000, burst: 5000}
leaderElection: {leaderElect: false}
YAML
    "$bin/kube-scheduler" --config="$dir/scheduler.yaml" --secure-port=0 > "$dir/scheduler.log" 2>&1 &
  else
    "$build/capstan-scheduler" --kubeconfig="$dir/admin.kubeconfig" --kube-api-qps=5000 \
      --kube-api-burst=5000 --leader-elect=false --secure-port=0 --port=0 > "$dir/scheduler.log" 2>&1 &
  fi
  scheduler=$!
  pids+=("$scheduler")
  echo "== $1 scheduler, $2 nodes, $3 pods, $4"
  "$build/capstan-load" --kubeconfig "$dir/admin.kubeconfig" --schedule-nodes "$2" \
    --schedule-pods "$3" --schedule-shape "$4" | grep '^|' | tail -1
  awk -v t="$ticks" '{printf "scheduler CPU: %.1f s, ", ($14 + $15) / t}' "/proc/$scheduler/stat"
  awk '/VmRSS/ {printf "resident: %d MB\n", $2 / 1024}' "/proc/$scheduler/status"
  kill "$scheduler" "$server"
  wait "$scheduler" "$server" 2>/dev/null || true
}

for nodes in ${NODES:-1000 5000}; do
  for shape in ${SHAPES:-plain anti-affinity spread claims}; do
    for scheduler in ${SCHEDULERS:-capstan upstream}; do
      run "$scheduler" "$nodes" "${PODS:-5000}" "$shape"
    done
  done
done
