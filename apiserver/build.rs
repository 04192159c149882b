//! Link options of the server binary.

fn main() {
    // Relative relocations packed (DT_RELR, glibc 2.36 and later): the binary's ~100,000
    // pointer fix-ups take 2.4 MB as RELA entries, read and applied at every start; packed,
    // a few kilobytes. Linkers that do not know the option ignore it with a warning.
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
