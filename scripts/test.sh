#!/usr/bin/env bash
# Runs the whole Capstan test suite. On a fresh Debian machine with only the Rust toolchain it
# first installs what the end-to-end tests drive: a C compiler (for ring) and kubectl.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cc >/dev/null 2>&1 || need+=(build-essential)
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

cargo test --workspace --locked "$@"
