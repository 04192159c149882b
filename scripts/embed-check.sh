#!/usr/bin/env bash
# Checks that every library crate builds as a path dependency of a crate outside this
# workspace, offline: what a user embedding one of them gets. The outside crate takes the
# workspace's Cargo.lock, so the versions (and the build cache) are the ones CI already built.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
outside="$(mktemp -d)"
trap 'rm -rf "$outside"' EXIT
mkdir -p "$outside/src"
{
    printf '[package]\nname = "embeds-capstan"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
    printf '[workspace]\n\n[dependencies]\n'
    for manifest in "$root"/crates/*/Cargo.toml; do
        name="$(sed -n 's/^name = "\(.*\)"$/\1/p' "$manifest" | head -n 1)"
        printf '%s = { path = "%s" }\n' "$name" "$(dirname "$manifest")"
    done
} > "$outside/Cargo.toml"
echo '//! Nothing: the check is that the dependencies build.' > "$outside/src/lib.rs"
cp "$root/Cargo.lock" "$outside/Cargo.lock"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
cargo check --offline --manifest-path "$outside/Cargo.toml"
