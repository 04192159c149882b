#!/usr/bin/env bash
# GETs through the aggregator, Capstan's and upstream's kube-apiserver v1.36 side by side: one
# sample-apiserver (wardle.example.com, on its own etcd; ../shared/k8s) behind both, registered
# on each with the same APIService; capstan-load GETs one Flunder through each server in turn.
#
#   tools/aggregation/bench.sh            (release builds of capstan-apiserver and capstan-load)
#
# Needs openssl, kubectl, xz, curl.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
build=$top/target/release
need_builds "$build" capstan-apiserver capstan-load
new_ca ca; new_ca front-proxy-ca; new_ca wardle-ca
sign ca apiserver /CN=apiserver "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth"
sign ca admin /O=system:masters/CN=admin extendedKeyUsage=clientAuth
sign front-proxy-ca proxy /CN=front-proxy-client extendedKeyUsage=clientAuth
sign wardle-ca wardle /CN=api.wardle.svc "subjectAltName=DNS:api.wardle.svc
extendedKeyUsage=serverAuth"
new_service_account_keys
flags=(--bind-address=127.0.0.1 --client-ca-file=$pki/ca.crt
  --tls-cert-file=$pki/apiserver.crt --tls-private-key-file=$pki/apiserver.key
  --service-account-key-file=$pki/sa.pub --service-account-signing-key-file=$pki/sa.key
  --service-account-issuer=https://kubernetes.default.svc --authorization-mode=Node,RBAC
  --service-cluster-ip-range=10.0.0.0/24
  --requestheader-client-ca-file=$pki/front-proxy-ca.crt --requestheader-allowed-names=front-proxy-client
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group
  --requestheader-extra-headers-prefix=X-Remote-Extra-
  --proxy-client-cert-file=$pki/proxy.crt --proxy-client-key-file=$pki/proxy.key)
# The two front servers.
cport=$(free_port); uport=$(free_port)
"$build/capstan-apiserver" "${flags[@]}" --secure-port="$cport" --data-dir="$work/capstan" \
  > "$work/capstan.log" 2>&1 &
pids+=($!)
start_etcd "$work/etcd-upstream"
uetcd=$etcd_url
"$bin/kube-apiserver" "${flags[@]}" --secure-port="$uport" --etcd-servers="$uetcd" \
  > "$work/upstream.log" 2>&1 &
pids+=($!)
kubeconfig "$work/capstan.kubeconfig" "https://127.0.0.1:$cport"
kubeconfig "$work/upstream.kubeconfig" "https://127.0.0.1:$uport"
for s in capstan upstream; do
  until kubectl --kubeconfig "$work/$s.kubeconfig" get --raw /readyz >/dev/null 2>&1; do sleep 0.2; done
done

# The extension server, trusting upstream for delegated authentication and authorization (both
# front servers present the same front-proxy certificate, so it trusts either).
wport=$(free_port)
start_etcd "$work/etcd-wardle"
wetcd=$etcd_url
"$bin/sample-apiserver" --etcd-servers="$wetcd" --bind-address=127.0.0.1 --secure-port="$wport" \
  --tls-cert-file="$pki/wardle.crt" --tls-private-key-file="$pki/wardle.key" \
  --kubeconfig="$work/upstream.kubeconfig" --authentication-kubeconfig="$work/upstream.kubeconfig" \
  --authorization-kubeconfig="$work/upstream.kubeconfig" > "$work/wardle.log" 2>&1 &
pids+=($!)
bundle=$(base64 -w0 < "$pki/wardle-ca.crt")
for s in capstan upstream; do
  k() { kubectl --kubeconfig "$work/$s.kubeconfig" "$@"; }
  k create namespace wardle >/dev/null
  k -n wardle create service externalname api --external-name=localhost >/dev/null
  k apply -f - >/dev/null <<YAML
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.wardle.example.com}
spec:
  group: wardle.example.com
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  caBundle: $bundle
  service: {namespace: wardle, name: api, port: $wport}
YAML
  k wait --for=condition=Available apiservice/v1alpha1.wardle.example.com --timeout=120s >/dev/null
done
kubectl --kubeconfig "$work/capstan.kubeconfig" apply -f - >/dev/null <<YAML
apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata: {name: fl, namespace: default}
YAML
path=/apis/wardle.example.com/v1alpha1/namespaces/default/flunders/fl
for round in 1 2; do
  for s in capstan upstream; do
    echo "== $s, round $round"
    "$build/capstan-load" --kubeconfig "$work/$s.kubeconfig" --token "" \
      --client-certificate "$pki/admin.crt" --client-key "$pki/admin.key" \
      --clients "${CLIENTS:-1,16,64}" --ops "get:$path" --duration "${DURATION:-5s}"
  done
done
