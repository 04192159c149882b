//! The embedded schemas (`schemas/v1_35.pb` and its markers) are what the upstream
//! `generated.proto` files compile to. The files come from the `k8s-rs-pb` crate's source tree
//! (a dev-dependency; nothing of the `.proto` text is kept here) and are parsed with the
//! pure-Rust `protobuf-parse`. Run with `CAPSTAN_BLESS_SCHEMAS=1` to rewrite the embedded files
//! after changing the Kubernetes version or the generator below.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Kubernetes version whose schemas are embedded; the same as k8s-openapi's feature.
const KUBERNETES: &str = "v1_35";

#[test]
fn embedded_schemas_match_the_upstream_sources() {
    let root = schema_crate_dir().join("src").join(KUBERNETES);
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
    let descriptors = protobuf::Message::write_to_bytes(&set).expect("descriptor set encodes");
    let mut markers = String::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        scan_markers(&text, &mut markers);
    }

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let descriptor_path = dir.join(format!("{KUBERNETES}.pb"));
    let markers_path = dir.join(format!("{KUBERNETES}-markers.tsv"));
    if std::env::var_os("CAPSTAN_BLESS_SCHEMAS").is_some() {
        std::fs::write(&descriptor_path, &descriptors).expect("writing the descriptor set");
        std::fs::write(&markers_path, &markers).expect("writing the markers");
        return;
    }
    let embedded = std::fs::read(&descriptor_path).expect("the embedded descriptor set");
    assert!(
        embedded == descriptors,
        "{} is stale: run this test with CAPSTAN_BLESS_SCHEMAS=1",
        descriptor_path.display()
    );
    let embedded = std::fs::read_to_string(&markers_path).expect("the embedded markers");
    assert_eq!(embedded, markers, "{} is stale", markers_path.display());
}

/// Collects the merge markers (`+listType=map`, `+patchMergeKey=name`, ...) that the
/// generator leaves in the comment above a message or a field. Descriptors drop comments,
/// so they are read from the text: one line per marked message (`pkg.Message<TAB><TAB>…`) or
/// field (`pkg.Message<TAB>field<TAB>…`), the markers joined by `;`.
fn scan_markers(text: &str, out: &mut String) {
    const KNOWN: &[&str] = &[
        "listType=",
        "listMapKey=",
        "mapType=",
        "structType=",
        "patchStrategy=",
        "patchMergeKey=",
        "default=",
    ];
    let mut package = String::new();
    let mut scopes: Vec<String> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(comment) = line.strip_prefix("//") {
            if let Some(marker) = comment.trim().strip_prefix('+')
                && KNOWN.iter().any(|k| marker.starts_with(k))
            {
                pending.push(marker.to_string());
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

/// The source directory of the `k8s-rs-pb` package this test was built with. Cargo has
/// already fetched it (it is a dev-dependency), so the lookup stays offline.
fn schema_crate_dir() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // Offline, only this platform's packages can be read: others' (e.g. Android-only
    // dependencies of chrono) were never downloaded.
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--offline",
            "--format-version",
            "1",
            "--filter-platform",
            &host_triple(),
            "--manifest-path",
        ])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let manifest_path = doc["packages"]
        .as_array()
        .expect("a package list")
        .iter()
        .find(|p| p["name"] == "k8s-rs-pb")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("k8s-rs-pb is a dev-dependency of this crate");
    Path::new(manifest_path)
        .parent()
        .expect("a manifest has a directory")
        .to_path_buf()
}

/// The triple of the platform the tests run on, as rustc names it.
fn host_triple() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("running rustc -vV");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names its host")
        .to_string()
}
