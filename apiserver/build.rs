//! Link options of the server binary.

fn main() {
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") != "linux" || target("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    // A position-dependent executable, as upstream's kube-apiserver (an ELF EXEC): the
    // loader has nothing to relocate, where a PIE's 2.1 MB of pointers (`.data.rel.ro`) are
    // fixed up and copied page by page at every start (~2.5 ms of a ~32 ms start,
    // docs/performance.md). Heap, stacks and shared libraries are still placed at random;
    // the executable's image is not. CAPSTAN_PIE=1 at build time keeps a PIE.
    println!("cargo:rerun-if-env-changed=CAPSTAN_PIE");
    if std::env::var_os("CAPSTAN_PIE").is_some_and(|v| v == "1") {
        // Relative relocations packed (DT_RELR, glibc 2.36 and later): the binary's
        // ~100,000 pointer fix-ups take 2.4 MB as RELA entries; packed, a few kilobytes.
        // Linkers that do not know the option ignore it with a warning.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    } else {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
