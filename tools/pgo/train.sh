#!/usr/bin/env bash
# Makes tools/pgo/capstan.profdata.gz, the profile scripts/run.sh builds the release binaries
# with (profile-guided optimization: docs/performance.md, session 71).
#
#   tools/pgo/train.sh
#
# Builds capstan-apiserver and capstan-scheduler instrumented (in target/pgo-train), runs them
# through what they are measured on and what a cluster does to them: the load suite of
# tools/load/side-by-side.sh (StorageClass and Pod creates, GETs and updates as a
# system:masters caller and as an RBAC-bound user, watch fan-out, paged lists) and
# tools/cluster/scenario.sh (upstream's controller manager and hollow kubelets, protobuf
# watches, a Deployment rolled and a namespace deleted), then merges what the processes
# counted into one profile. Code the runs never reached is compiled as cold (for size), which
# is what keeps the optimized build no longer than a plain one. Run it again when the code on
# those paths has changed much: a function whose code changed since the profile loses its
# counts (the build says nothing of it) and is optimized as without a profile. Needs what
# those two scripts need, and llvm-profdata (rustup's `llvm-tools` component, added when
# missing). ~12 minutes on the 2-core machine, builds included.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata=$sysroot/lib/rustlib/$host/bin/llvm-profdata
[ -x "$profdata" ] || rustup component add llvm-tools
llvm=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')

# Flags from a shell that sourced scripts/pgo.sh would take the place of the instrumenting
# ones below (cargo reads CARGO_ENCODED_RUSTFLAGS before RUSTFLAGS): the builds here set their
# own.
unset CARGO_ENCODED_RUSTFLAGS RUSTFLAGS
# The harness stays uninstrumented: only the servers' counts go into the profile.
cargo build --release --locked -p capstan-load
profiles=$top/target/pgo-train/profiles
rm -rf "$profiles"
mkdir -p "$profiles"
# The build scripts are instrumented too: what they count as they run goes aside.
RUSTFLAGS=-Cprofile-generate CARGO_TARGET_DIR=target/pgo-train \
  LLVM_PROFILE_FILE=$top/target/pgo-train/build-scripts/%p.profraw \
  cargo build --release --locked -p capstan-apiserver -p capstan-scheduler-bin
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
ln -s "$top/target/pgo-train/release/capstan-apiserver" "$bin/"
ln -s "$top/target/release/capstan-load" "$bin/"

# Each process writes its counts as it exits: the scripts stop the servers with SIGTERM and
# wait for them (GRACE) before anything harsher.
export LLVM_PROFILE_FILE=$profiles/%p.profraw GRACE=60
SERVERS=capstan DURATION=3s BUILD=$bin tools/load/side-by-side.sh
CAPSTAN_BUILD=pgo-train/release tools/cluster/scenario.sh capstan

"$profdata" merge -o target/pgo-train/capstan.profdata "$profiles"/*.profraw
gzip -9nc target/pgo-train/capstan.profdata > tools/pgo/capstan.profdata.gz
echo "$llvm" > tools/pgo/llvm-version
echo "tools/pgo/capstan.profdata.gz: $(du -h tools/pgo/capstan.profdata.gz | cut -f1), from $(ls "$profiles" | wc -l) processes, LLVM $llvm"
