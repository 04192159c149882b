#!/usr/bin/env bash
# Runs the whole Capstan test suite. On a fresh Debian machine with only the Rust toolchain it
# first installs what the build and the tests need: a C compiler (for ring), protoc (for the
# etcd client's generated code), kubectl, etcd (the etcd backend's tests run a real one), xz
# (upstream's binaries are unpacked with it) and procps's `kill` (tests signal the server;
# slim images lack it).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/needs.sh
needs cc build-essential protoc protobuf-compiler kubectl kubernetes-client etcd etcd-server xz xz-utils \
  /bin/kill procps

cargo test --workspace --locked "$@"
