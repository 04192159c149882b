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
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out_dir.join("schemas.pb"), bytes).expect("writing the descriptor set");
    let mut markers = String::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        scan_markers(&text, &mut markers);
    }
    std::fs::write(out_dir.join("markers.tsv"), markers).expect("writing the markers");
}

/// Collects the merge markers (`+listType=map`, `+patchMergeKey=name`, ...) that the
/// generator leaves in the comment above a message or a field. Descriptors drop comments,
/// so they are read from the text: one line per marked message (`pkg.Message<TAB><TAB>…`) or
/// field (`pkg.Message<TAB>field<TAB>…`), the markers joined by `;`.
fn scan_markers(text: &str, out: &mut String) {
    let mut package = String::new();
    let mut scopes: Vec<String> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(comment) = line.strip_prefix("//") {
            if let Some(marker) = comment.trim().strip_prefix('+') {
                const KNOWN: &[&str] = &[
                    "listType=",
                    "listMapKey=",
                    "mapType=",
                    "structType=",
                    "patchStrategy=",
                    "patchMergeKey=",
                    "default=",
                ];
                if KNOWN.iter().any(|k| marker.starts_with(k)) {
                    pending.push(marker.to_string());
                }
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("package ") {
            package = rest.trim_end_matches(';').trim().to_string();
        } else if let Some(rest) = line.strip_prefix("message ") {
            let name = rest.trim_end_matches('{').trim();
            let full = match scopes.last() {
                Some(parent) => format!("{parent}.{name}"),
                None => format!("{package}.{name}"),
            };
            if !pending.is_empty() {
                out.push_str(&format!("{full}\t\t{}\n", pending.join(";")));
            }
            scopes.push(full);
        } else if line.starts_with('}') {
            scopes.pop();
        } else if let (Some(scope), Some((decl, _))) = (scopes.last(), line.split_once('='))
            && !pending.is_empty()
            && let Some(field) = decl.split_whitespace().last()
        {
            out.push_str(&format!("{scope}\t{field}\t{}\n", pending.join(";")));
        }
        if !line.is_empty() {
            pending.clear();
        }
    }
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
