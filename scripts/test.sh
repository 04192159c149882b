#!/usr/bin/env bash
# Runs the whole Capstan test suite. On a fresh Debian machine with only the Rust toolchain it
# first installs what the build and the tests need: a C compiler (for ring), protoc (for the
# etcd client's generated code), kubectl, and etcd (the etcd backend's tests run a real one).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/needs.sh
needs cc build-essential protoc protobuf-compiler kubectl kubernetes-client etcd etcd-server xz xz-utils

cargo test --workspace --locked "$@"
