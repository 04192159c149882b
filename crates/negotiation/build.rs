//! Compiles the upstream protobuf schemas into a descriptor set the crate embeds.
//!
//! The schemas (`generated.proto` of every API group, as go-to-protobuf writes them) come from
//! the `k8s-rs-pb` crate, which carries them in its source tree for each Kubernetes version;
//! nothing of them is copied into this repository. The build finds that crate's sources
//! through `cargo metadata` (set `CAPSTAN_K8S_PROTO_DIR` to a directory of the same layout to
//! use other schemas) and parses them with the pure-Rust parser of `protobuf-parse`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Kubernetes version whose schemas are served; the same as k8s-openapi's feature.
const KUBERNETES: &str = "v1_33";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CAPSTAN_K8S_PROTO_DIR");
    let root = match std::env::var_os("CAPSTAN_K8S_PROTO_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => schema_crate_dir().join("src").join(KUBERNETES),
    };
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    assert!(
        !files.is_empty(),
        "no .proto files under {}",
        root.display()
    );
    let parsed = protobuf_parse::Parser::new()
        .pure()
        .include(&root)
        .inputs(&files)
        .parse_and_typecheck()
        .unwrap_or_else(|e| panic!("parsing the schemas under {}: {e:#}", root.display()));
    let set = protobuf::descriptor::FileDescriptorSet {
        file: parsed.file_descriptors,
        ..Default::default()
    };
    let bytes = protobuf::Message::write_to_bytes(&set).expect("descriptor set encodes");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("schemas.pb");
    std::fs::write(&out, bytes).expect("writing the descriptor set");
}

/// Every `.proto` file under `dir`.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading the schema directory {}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
}

/// The source directory of the `k8s-rs-pb` package in this build's dependency graph.
fn schema_crate_dir() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("manifest dir"))
        .join("Cargo.toml");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("running cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let packages = doc["packages"].as_array().expect("a package list");
    let manifest_path = packages
        .iter()
        .find(|p| p["name"] == "k8s-rs-pb")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("k8s-rs-pb is in the dependency graph (a dev-dependency of this crate)");
    Path::new(manifest_path)
        .parent()
        .expect("a manifest has a directory")
        .to_path_buf()
}
