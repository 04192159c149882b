# Shared by the scripts under tools/ that run Capstan beside upstream's binaries: a work
# directory removed at exit with every process started through it, a PKI made with openssl,
# loopback ports, etcd. Source it after `set -euo pipefail`; it sets `top`, `bin` (upstream's
# binaries, unpacked by ../shared/k8s/unpack.sh), `work` and `pki`.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$("${CAPSTAN_K8S_DIR:-$top/../shared/k8s}/unpack.sh")
work=$(mktemp -d)
pki=$work/pki
mkdir -p "$pki"
pids=()

# Stops the given processes: SIGTERM, then SIGKILL for those still there after $GRACE seconds
# (1 by default: kube-apiserver does not exit on SIGTERM once its etcd is gone). A server built
# to collect a profile (tools/pgo/train.sh) writes it as it exits, so that script waits longer.
stop() { # pid...
  kill "$@" 2>/dev/null || true
  local waited=0 p alive
  while [ "$waited" -lt "$((${GRACE:-1} * 10))" ]; do
    alive=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -9 "$@" 2>/dev/null || true
}

cleanup() {
  [ ${#pids[@]} -eq 0 ] || stop "${pids[@]}"
  wait 2>/dev/null || true
  # A hollow kubelet keeps its root directory in /tmp whatever TMPDIR says; its log names it.
  local root
  for root in $(sed -n 's/.*Using \(\/tmp\/hollow-kubelet\.[0-9]*\) as root dir.*/\1/p' \
    "$work"/*.log 2>/dev/null); do
    rm -rf "$root"
  done
  rm -rf "$work"
}
trap cleanup EXIT

# Fails unless each named binary of `build` (a target/ directory) is there.
need_builds() { # build name...
  local build=$1 b; shift
  for b in "$@"; do
    [ -x "$build/$b" ] || {
      echo "$build/$b is missing: cargo build (--release) -p ${b/scheduler/scheduler-bin}" >&2
      exit 1
    }
  done
}

# A free loopback port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# A self-signed authority: $pki/NAME.crt and .key.
new_ca() { # name
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/$1.key" -out "$pki/$1.crt" -days 1 \
    -subj "/CN=$1" 2>/dev/null
}

# A certificate signed by CA: $pki/NAME.crt and .key, with the openssl extension lines given.
sign() { # ca name subject extension
  openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/$2.key" -out "$pki/$2.csr" -subj "$3" 2>/dev/null
  echo "$4" > "$pki/$2.ext"
  openssl x509 -req -in "$pki/$2.csr" -CA "$pki/$1.crt" -CAkey "$pki/$1.key" -CAcreateserial \
    -out "$pki/$2.crt" -days 1 -extfile "$pki/$2.ext" 2>/dev/null
}

# A kubeconfig (JSON, which capstan-load reads too) for the server at URL, trusting $pki/ca.crt
# and presenting the certificate $pki/USER.crt (default admin).
kubeconfig() { # file url [user]
  local ca_data user=${3:-admin}
  ca_data=$(base64 -w0 < "$pki/ca.crt")
  cat > "$1" <<JSON
{"apiVersion": "v1", "kind": "Config", "current-context": "c",
 "clusters": [{"name": "c", "cluster": {"server": "$2", "certificate-authority-data": "$ca_data"}}],
 "users": [{"name": "u", "user": {"client-certificate": "$pki/$user.crt", "client-key": "$pki/$user.key"}}],
 "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
JSON
}

# A service-account key pair: $pki/sa.key and $pki/sa.pub.
new_service_account_keys() {
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

# Starts upstream's etcd with its data in DIR (log DIR.log); sets `etcd_url` and `etcd_pid`
# (not echoed: a command substitution's subshell would lose the pid for cleanup).
start_etcd() { # dir
  local client peer
  client=$(free_port); peer=$(free_port)
  "$bin/etcd" --data-dir "$1" --listen-client-urls "http://127.0.0.1:$client" \
    --advertise-client-urls "http://127.0.0.1:$client" --listen-peer-urls "http://127.0.0.1:$peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "default=http://127.0.0.1:$peer" > "$1.log" 2>&1 &
  etcd_pid=$!
  pids+=("$etcd_pid")
  etcd_url=http://127.0.0.1:$client
}
