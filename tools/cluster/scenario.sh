#!/usr/bin/env bash
# Times a small cluster's life on one API server: Capstan's (the build in target/, by default
# the debug one) or upstream's kube-apiserver v1.36 with its etcd, both from ../shared/k8s.
# Around it: upstream's kube-controller-manager, three kubemark hollow nodes and a scheduler
# (capstan-scheduler, or upstream's with SCHEDULER=upstream), all on 127.0.0.1.
#
#   tools/cluster/scenario.sh capstan|upstream      (CAPSTAN_BUILD=release for target/release)
#
# Prints the time to three Ready nodes (from the API server's start), to 30 pods Running, to a
# rolling update of them done, to a namespace with running pods gone, and the API server's
# resident memory (with etcd's, for upstream) at the end. Needs openssl, kubectl, xz, awk,
# python3.
set -euo pipefail
which=${1:?capstan or upstream}
source "$(dirname "$0")/../lib.sh"
build=$top/target/${CAPSTAN_BUILD:-debug}
need_builds "$build" capstan-apiserver capstan-scheduler
port=$(free_port)
url=https://127.0.0.1:$port

# The PKI: one CA, the server's certificate for 127.0.0.1, a client certificate per component.
new_ca ca
sign ca apiserver /CN=apiserver "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth"
kubeconfig() { # name subject
  sign ca "$1" "$2" extendedKeyUsage=clientAuth
  cat > "$work/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$url", certificate-authority: $pki/ca.crt}}]
users: [{name: u, user: {client-certificate: $pki/$1.crt, client-key: $pki/$1.key}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
YAML
}
kubeconfig admin /O=system:masters/CN=admin
kubeconfig kcm /CN=system:kube-controller-manager
kubeconfig scheduler /CN=system:kube-scheduler
for i in 1 2 3; do kubeconfig node$i /O=system:nodes/CN=system:node:hollow-$i; done
new_service_account_keys

flags=(--bind-address=127.0.0.1 --secure-port=$port --client-ca-file=$pki/ca.crt
  --tls-cert-file=$pki/apiserver.crt --tls-private-key-file=$pki/apiserver.key
  --service-account-key-file=$pki/sa.pub --service-account-signing-key-file=$pki/sa.key
  --service-account-issuer=https://kubernetes.default.svc --authorization-mode=Node,RBAC
  --enable-admission-plugins=NodeRestriction --service-cluster-ip-range=10.0.0.0/24)
start=$(date +%s.%N)
if [ "$which" = capstan ]; then
  "$build/capstan-apiserver" "${flags[@]}" --data-dir="$work/data" > "$work/apiserver.log" 2>&1 &
  server_pids=($!)
  pids+=($!)
  controllers='*,-service-ca-cert-publisher' # the fork's controller: see ../shared/k8s/README.md
else
  start_etcd "$work/etcd"
  server_pids=("$etcd_pid")
  "$bin/kube-apiserver" "${flags[@]}" --etcd-servers="$etcd_url" > "$work/apiserver.log" 2>&1 &
  server_pids+=($!)
  pids+=($!)
  controllers='*'
fi
k() { kubectl --kubeconfig "$work/admin.kubeconfig" "$@"; }
until k get --raw /readyz >/dev/null 2>&1; do sleep 0.1; done
"$bin/kube-controller-manager" --kubeconfig="$work/kcm.kubeconfig" --use-service-account-credentials \
  --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
  --controllers="$controllers" --leader-elect=false --secure-port=0 > "$work/kcm.log" 2>&1 &
pids+=($!)
for i in 1 2 3; do
  mkdir -p "$work/node$i"
  TMPDIR=$work/node$i "$bin/kubemark" --morph=kubelet --name=hollow-$i \
    --kubeconfig="$work/node$i.kubeconfig" --kubelet-port=$((port + 10 + i)) \
    --kubelet-read-only-port=0 --use-host-image-service=false > "$work/node$i.log" 2>&1 &
  pids+=($!)
done
if [ "${SCHEDULER:-capstan}" = upstream ]; then
  "$bin/kube-scheduler" --kubeconfig="$work/scheduler.kubeconfig" --leader-elect=false \
    --secure-port=0 > "$work/scheduler.log" 2>&1 &
else
  "$build/capstan-scheduler" --kubeconfig="$work/scheduler.kubeconfig" --leader-elect=false \
    --secure-port=0 --port=0 > "$work/scheduler.log" 2>&1 &
fi
pids+=($!)

since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
until [ "$(k get nodes --no-headers 2>/dev/null | grep -c ' Ready')" = 3 ]; do sleep 0.1; done
echo "three nodes Ready:            $(since "$start") s (from the API server's start)"
t=$(date +%s.%N)
k create deployment web --image=nginx --replicas=30 >/dev/null
until [ "$(k get pods -l app=web --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l)" = 30 ]; do sleep 0.1; done
echo "30 pods Running:              $(since "$t") s"
t=$(date +%s.%N)
k set image deployment/web nginx=nginx:2 >/dev/null
k rollout status deployment/web --timeout=300s >/dev/null
echo "rolling update of 30 done:    $(since "$t") s"
k create namespace doomed >/dev/null
k -n doomed create deployment d --image=x --replicas=10 >/dev/null
k -n doomed rollout status deployment/d --timeout=300s >/dev/null
t=$(date +%s.%N)
k delete namespace doomed --timeout=300s >/dev/null
echo "namespace of 10 pods gone:    $(since "$t") s"
rss=0
for p in "${server_pids[@]}"; do rss=$((rss + $(awk '/VmRSS/ {print $2}' "/proc/$p/status"))); done
echo "API server resident memory:   $((rss / 1024)) MB$([ "$which" = upstream ] && echo ' (with etcd)')"
