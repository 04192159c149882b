#!/usr/bin/env bash
# The load suite against upstream's kube-apiserver v1.36 (on etcd 3.6, ../shared/k8s) and
# Capstan's release build (embedded store) in one run: both with Node,RBAC authorization and
# the same flags, each measured in turn by capstan-load over HTTP/2 with a client certificate.
#
#   tools/load/side-by-side.sh      SERVERS="upstream capstan" DURATION=5s (the defaults)
#                                   BUILD=<dir> (the release builds; target/release)
#
# For each server: resident memory idle (kube-apiserver's plus its etcd's), StorageClass and Pod
# creates, GETs and updates at 16 and 64 clients as a system:masters caller (each row with the
# CPU time per request of the server, etcd included, and of the harness), GETs as a user
# bound by RBAC to a role, the watch fan-out (500 watchers, 1,000 events created as fast as
# the server takes them, then at 200/s for both), 22,000
# StorageClasses listed in pages of 500, and resident memory with 22,000 StorageClasses and
# 11,000 Pods stored. Needs release builds of capstan-apiserver and capstan-load, made as
# scripts/run.sh makes them (`. scripts/pgo.sh && cargo build --release -p capstan-apiserver
# -p capstan-load`: with the profile of tools/pgo); openssl, kubectl, python3, xz.
set -euo pipefail
export RUST_BACKTRACE=0
source "$(dirname "$0")/../lib.sh"
build=${BUILD:-$top/target/release}
need_builds "$build" capstan-apiserver capstan-load
new_ca ca
sign ca apiserver /CN=apiserver "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth"
sign ca admin /O=system:masters/CN=admin extendedKeyUsage=clientAuth
sign ca reader /CN=reader extendedKeyUsage=clientAuth
new_service_account_keys
flags=(--bind-address=127.0.0.1 --client-ca-file=$pki/ca.crt
  --tls-cert-file=$pki/apiserver.crt --tls-private-key-file=$pki/apiserver.key
  --service-account-key-file=$pki/sa.pub --service-account-signing-key-file=$pki/sa.key
  --service-account-issuer=https://kubernetes.default.svc --authorization-mode=Node,RBAC
  --service-cluster-ip-range=10.0.0.0/24)

# Resident memory of the given pids together, in MB.
resident() { # pid...
  local kb=0 p
  for p in "$@"; do kb=$((kb + $(awk '/VmRSS/ {print $2}' "/proc/$p/status"))); done
  echo $((kb / 1024))
}

run() { # server
  local dir=$work/$1 port server watched=()
  mkdir -p "$dir"
  port=$(free_port)
  if [ "$1" = upstream ]; then
    start_etcd "$dir/etcd"
    "$bin/kube-apiserver" "${flags[@]}" --secure-port="$port" --etcd-servers="$etcd_url" \
      > "$dir/server.log" 2>&1 &
    server=$!
    watched=("$server" "$etcd_pid")
  else
    "$build/capstan-apiserver" "${flags[@]}" --secure-port="$port" --data-dir="$dir/data" \
      > "$dir/server.log" 2>&1 &
    server=$!
    watched=("$server")
  fi
  pids+=("$server")
  for user in admin reader; do
    kubeconfig "$dir/$user.kubeconfig" "https://127.0.0.1:$port" "$user"
  done
  k() { kubectl --kubeconfig "$dir/admin.kubeconfig" "$@"; }
  until k get --raw /readyz >/dev/null 2>&1; do sleep 0.2; done
  k create clusterrole loader --verb=get,list,watch,create,update,delete,deletecollection \
    --resource=storageclasses.storage.k8s.io,pods >/dev/null
  k create clusterrolebinding loader --clusterrole=loader --user=reader >/dev/null
  # Pods need their service account (no controller manager makes it here).
  k create serviceaccount default --dry-run=client -o yaml | k apply -f - >/dev/null 2>&1
  sleep 5
  echo "== $1"
  echo "resident memory, idle: $(resident "${watched[@]}") MB"
  # Each operation's row ends with the CPU time per request of the server (with its etcd)
  # and of the harness.
  local cpu_of
  cpu_of=$(IFS=,; echo "${watched[*]}")
  load() { # user options...
    local user=$1; shift
    "$build/capstan-load" --kubeconfig "$dir/$user.kubeconfig" --token "" \
      --client-certificate "$pki/$user.crt" --client-key "$pki/$user.key" --cpu-of "$cpu_of" \
      "$@" | grep '^| [a-z]'
  }
  local d=${DURATION:-5s}
  for resource in storageclasses pods; do
    echo "-- $resource, system:masters"
    load admin --resource "$resource" --clients 16,64 --ops create,get,update --duration "$d"
    echo "-- $resource, a user bound by RBAC"
    load reader --resource "$resource" --clients 64 --ops create,get --duration "$d"
  done
  for rate in 0 200; do
    echo "-- watch fan-out, 500 watchers x 1,000 events, creates per second: ${rate/#0/unpaced}"
    "$build/capstan-load" --kubeconfig "$dir/admin.kubeconfig" --token "" \
      --client-certificate "$pki/admin.crt" --client-key "$pki/admin.key" \
      --watchers 500 --events 1000 --event-rate "$rate" | grep -i 'p99\|deliver' || true
  done
  echo "-- 22,000 StorageClasses in pages of 500"
  load admin --populate 22000 --keep --clients 1 --ops list-paged --duration 10s
  load admin --resource pods --populate 11000 --keep --clients 1 --ops get:/version --duration 1s \
    > /dev/null
  sleep 5
  echo "resident memory, 22,000 StorageClasses and 11,000 Pods: $(resident "${watched[@]}") MB"
  GRACE=${GRACE:-2} stop "${watched[@]}"
  wait "${watched[@]}" 2>/dev/null || true
}

for server in ${SERVERS:-upstream capstan}; do
  run "$server"
done
