//! kubectl against a real server: create, get, apply, label, annotate, patch, edit, explain,
//! delete.

use capstan_e2e::{kubectl, kubectl_with_env};
use capstan_testing::TestServer;

use crate::ok;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_manages_storage_classes() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let dir = server.data_dir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let manifest = dir.join("sc.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: fast\n  labels:\n    tier: gold\nprovisioner: example.com/fast\nparameters:\n  type: ssd\nallowVolumeExpansion: true\n",
        )
        .unwrap();
        let m = manifest.to_str().unwrap();

        assert!(ok(kubectl(&kc, &["create", "-f", m])).contains("storageclass.storage.k8s.io/fast created"));
        let listed = ok(kubectl(&kc, &["get", "sc"]));
        assert!(listed.lines().any(|l| l.starts_with("fast ")), "{listed}");
        let (success, _, err) = kubectl(&kc, &["create", "-f", m]);
        assert!(!success && err.contains("AlreadyExists"), "{err}");

        // apply: first on an object created imperatively, then a real change.
        ok(kubectl(&kc, &["apply", "-f", m]));
        std::fs::write(
            &manifest,
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: fast\n  labels:\n    tier: gold\nprovisioner: example.com/fast\nparameters:\n  type: ssd\nallowVolumeExpansion: false\nmountOptions: [ro]\n",
        )
        .unwrap();
        assert!(ok(kubectl(&kc, &["apply", "-f", m])).contains("configured"));
        let got = ok(kubectl(&kc, &["get", "sc", "fast", "-o", "jsonpath={.allowVolumeExpansion} {.mountOptions}"]));
        assert_eq!(got, "false [\"ro\"]");

        ok(kubectl(&kc, &["label", "sc", "fast", "zone=a"]));
        ok(kubectl(&kc, &["annotate", "sc", "fast", "note=hi"]));
        ok(kubectl(&kc, &["patch", "sc", "fast", "--type=merge", "-p", r#"{"allowVolumeExpansion":true}"#]));
        ok(kubectl(&kc, &["patch", "sc", "fast", "--type=json", "-p", r#"[{"op":"add","path":"/metadata/labels/x","value":"y"}]"#]));
        let labels = ok(kubectl(&kc, &["get", "sc", "-l", "zone=a", "-o", "jsonpath={.items[0].metadata.labels}"]));
        assert!(labels.contains(r#""x":"y""#) && labels.contains(r#""tier":"gold""#), "{labels}");
        ok(kubectl_with_env(&kc, &["edit", "sc", "fast"], &[("EDITOR", "sed -i s/note:\\ hi/note:\\ edited/")]));
        assert_eq!(ok(kubectl(&kc, &["get", "sc", "fast", "-o", "jsonpath={.metadata.annotations.note}"])), "edited");

        // Immutable fields are refused with the field named.
        let (success, _, err) = kubectl(&kc, &["patch", "sc", "fast", "--type=merge", "-p", r#"{"reclaimPolicy":"Retain"}"#]);
        assert!(!success && err.contains("reclaimPolicy"), "{err}");
        // Unknown fields are refused by server-side validation (kubectl's default).
        std::fs::write(&manifest, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: typo\nprovisioner: p\nreclaimPolicyy: Retain\n").unwrap();
        let (success, _, err) = kubectl(&kc, &["create", "-f", m]);
        assert!(!success && err.contains("unknown field") && err.contains("reclaimPolicyy"), "{err}");

        let explained = ok(kubectl(&kc, &["explain", "sc.allowedTopologies"]));
        assert!(explained.contains("allowedTopologies") && explained.contains("matchLabelExpressions"), "{explained}");

        assert!(ok(kubectl(&kc, &["delete", "sc", "fast"])).contains("deleted"));
        let (success, _, err) = kubectl(&kc, &["get", "sc", "fast"]);
        assert!(!success && err.contains("NotFound"), "{err}");
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_watches_and_chunks() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let dir = server.data_dir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        use std::io::{BufRead, BufReader};
        let cache = kc.with_file_name("kubectl-cache");
        let mut child = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .arg("--cache-dir")
            .arg(&cache)
            .args(["get", "sc", "--watch", "-o", "name"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        for i in 0..5 {
            let manifest = dir.join(format!("sc{i}.yaml"));
            std::fs::write(&manifest, format!("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: w{i}\nprovisioner: p\n")).unwrap();
            ok(kubectl(&kc, &["create", "-f", manifest.to_str().unwrap()]));
            let line = out.next().expect("a watch line").unwrap();
            assert_eq!(line, format!("storageclass.storage.k8s.io/w{i}"));
        }
        let _ = child.kill();
        let _ = child.wait();
        // Chunked listing: five objects in chunks of two.
        let names = ok(kubectl(&kc, &["get", "sc", "--chunk-size=2", "-o", "name"]));
        assert_eq!(names.lines().count(), 5, "{names}");
    })
    .await
    .unwrap();
}
