#!/usr/bin/env bash
# Builds and runs capstan-apiserver with the given options. On a fresh Debian machine with
# only the Rust toolchain it first installs what the build needs: a C compiler (for ring and mimalloc) and
# protoc (for the etcd client's generated code). The build uses tools/pgo's profile when the
# toolchain can read it (scripts/pgo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/needs.sh
needs cc build-essential protoc protobuf-compiler
. scripts/pgo.sh

exec cargo run --release --locked -p capstan-apiserver -- "$@"
