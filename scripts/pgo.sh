# Sourced by scripts/run.sh, and by whoever builds release binaries to measure them
# (`. scripts/pgo.sh && cargo build --release ...`): when tools/pgo holds a profile this
# toolchain reads, cargo's rustc flags gain `-Cprofile-use` with it, so that the build is
# optimized for the paths the profile found hot (profile-guided optimization,
# tools/pgo/train.sh; docs/performance.md, session 71). The flags go into
# CARGO_ENCODED_RUSTFLAGS (fields apart by 0x1f, with RUSTFLAGS' words first when it is set),
# which keeps the profile's path whole when the checkout's path has spaces. PGO=0 leaves the
# flags alone; PGO=check fails when the profile cannot be used (CI). Changing the flags makes
# cargo build every crate again: builds with and without the profile should not take turns in
# one target directory.
pgo_flags() {
  local profile=tools/pgo/capstan.profdata.gz out=target/pgo/capstan.profdata made have
  local flags sep=$'\x1f' encoded words
  [ "${PGO:-1}" != 0 ] && [ -f "$profile" ] || return 0
  made=$(cat tools/pgo/llvm-version)
  have=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
  if [ -z "$have" ] || [ "$have" -lt "$made" ]; then
    echo "note: rustc's LLVM (${have:-?}) is older than tools/pgo's profile (LLVM $made): building without it" >&2
    [ "${PGO:-1}" != check ]
    return
  fi
  # Functions changed since the profile was made are optimized as without one; LLVM would
  # warn of each.
  flags=("-Cprofile-use=$PWD/$out" -Cllvm-args=-no-pgo-warn-mismatch)
  case "$sep${CARGO_ENCODED_RUSTFLAGS-}$sep" in
  *"$sep${flags[0]}$sep"*) return 0 ;; # sourced before in this shell
  esac
  if [ ! "$out" -nt "$profile" ] || [ "${PGO:-1}" = check ]; then
    mkdir -p target/pgo
    gzip -dc "$profile" > "$out"
    # rustc only warns of a profile it cannot read, in every crate: try it once here.
    echo 'fn main() {}' > target/pgo/probe.rs
    if ! rustc -O "${flags[@]}" target/pgo/probe.rs -o target/pgo/probe 2> target/pgo/probe.log ||
      grep -q . target/pgo/probe.log; then
      echo "note: tools/pgo's profile is not usable here: building without it" >&2
      cat target/pgo/probe.log >&2
      rm -f "$out" target/pgo/probe*
      [ "${PGO:-1}" != check ]
      return
    fi
    rm -f target/pgo/probe*
  fi
  # Cargo reads CARGO_ENCODED_RUSTFLAGS in place of RUSTFLAGS, which it splits on whitespace.
  if [ -n "${CARGO_ENCODED_RUSTFLAGS+set}" ]; then
    encoded=$CARGO_ENCODED_RUSTFLAGS
  else
    read -ra words <<< "${RUSTFLAGS:-}"
    encoded=$(IFS=$sep && echo "${words[*]}")
  fi
  export CARGO_ENCODED_RUSTFLAGS="${encoded:+$encoded$sep}${flags[0]}$sep${flags[1]}"
}
pgo_flags
