//! Server-side apply, managedFields and strategic merge patch, driven by kubectl, the kube
//! crate and raw HTTP.

use capstan_e2e::kubectl;
use capstan_testing::TestServer;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::{admin, ok};

/// PATCH `path` with `body` of `content_type`: the status code and the body as text.
async fn patch(
    raw: &capstan_e2e::RawClient,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, String) {
    let res = raw
        .request(
            http::Method::PATCH,
            path,
            &[("content-type", content_type)],
            body.to_vec(),
        )
        .await;
    (
        res.status.as_u16(),
        String::from_utf8_lossy(&res.body).into_owned(),
    )
}

/// The fields `manager` owns in `obj`, as upstream's path strings' FieldsV1 keys.
fn owned(obj: &Value, manager: &str) -> Option<Value> {
    obj["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager)
        .map(|e| e["fieldsV1"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_server_side_apply_conflicts_and_force() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let dir = server.data_dir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let manifest = dir.join("cm.yaml");
        let write = |data: &str| {
            std::fs::write(
                &manifest,
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n{data}"),
            )
            .unwrap();
        };
        let m = manifest.to_str().unwrap().to_string();
        write("  key: one\n  extra: x\n");
        assert!(ok(kubectl(&kc, &["apply", "--server-side", "-f", &m])).contains("serverside-applied"));
        let got: Value = serde_json::from_str(&ok(kubectl(&kc, &["get", "cm", "settings", "--show-managed-fields", "-o", "json"]))).unwrap();
        let entry = &got["metadata"]["managedFields"][0];
        assert_eq!(entry["manager"], "kubectl");
        assert_eq!(entry["operation"], "Apply");
        assert_eq!(entry["fieldsV1"], json!({"f:data": {"f:key": {}, "f:extra": {}}}));

        // Another manager changing the same field conflicts...
        write("  key: two\n");
        let (success, _, err) = kubectl(&kc, &["apply", "--server-side", "--field-manager=other", "-f", &m]);
        assert!(!success, "the conflicting apply succeeded");
        assert!(err.contains(r#"conflict with "kubectl""#) && err.contains(".data.key"), "{err}");
        // ... until it forces: the field changes hands.
        ok(kubectl(&kc, &["apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", &m]));
        let got: Value = serde_json::from_str(&ok(kubectl(&kc, &["get", "cm", "settings", "--show-managed-fields", "-o", "json"]))).unwrap();
        assert_eq!(got["data"], json!({"key": "two", "extra": "x"}));
        assert_eq!(owned(&got, "other"), Some(json!({"f:data": {"f:key": {}}})));
        assert_eq!(owned(&got, "kubectl"), Some(json!({"f:data": {"f:extra": {}}})));

        // The first manager stops applying `extra`: nobody else owns it, so it goes.
        write("  key: two\n");
        ok(kubectl(&kc, &["apply", "--server-side", "-f", &m]));
        assert_eq!(ok(kubectl(&kc, &["get", "cm", "settings", "-o", "jsonpath={.data}"])), r#"{"key":"two"}"#);

        // Imperative writes are recorded under kubectl's own manager names.
        ok(kubectl(&kc, &["label", "cm", "settings", "tier=gold"]));
        let got: Value = serde_json::from_str(&ok(kubectl(&kc, &["get", "cm", "settings", "--show-managed-fields", "-o", "json"]))).unwrap();
        let label = owned(&got, "kubectl-label").expect("kubectl-label's entry");
        assert_eq!(label, json!({"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}}));
        // A server-side dry run changes nothing.
        write("  key: three\n");
        ok(kubectl(&kc, &["apply", "--server-side", "--dry-run=server", "--force-conflicts", "-f", &m]));
        assert_eq!(ok(kubectl(&kc, &["get", "cm", "settings", "-o", "jsonpath={.data.key}"])), "two");

        // replace, and the server-side dry runs of create and delete.
        ok(kubectl(&kc, &["replace", "-f", &m]));
        assert_eq!(ok(kubectl(&kc, &["get", "cm", "settings", "-o", "jsonpath={.data.key}"])), "three");
        let other = dir.join("other.yaml");
        std::fs::write(&other, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ghost\n  namespace: default\n").unwrap();
        let said = ok(kubectl(&kc, &["create", "--dry-run=server", "-f", other.to_str().unwrap()]));
        assert!(said.contains("created (server dry run)"), "{said}");
        let (found, _, err) = kubectl(&kc, &["get", "cm", "ghost"]);
        assert!(!found && err.contains("NotFound"), "{err}");
        ok(kubectl(&kc, &["delete", "--dry-run=server", "cm", "settings"]));
        ok(kubectl(&kc, &["get", "cm", "settings"]));
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_patches_containers_by_name() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let dir = server.data_dir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let manifest = dir.join("pod.yaml");
        let write = |image: &str| {
            std::fs::write(
                &manifest,
                format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\nspec:\n  containers:\n  - name: app\n    image: {image}\n    env:\n    - name: A\n      value: '1'\n  - name: sidecar\n    image: proxy:1\n"),
            )
            .unwrap();
        };
        let m = manifest.to_str().unwrap().to_string();
        write("app:1");
        ok(kubectl(&kc, &["apply", "-f", &m]));
        // A strategic patch names one container; the other and the defaulted fields stay.
        ok(kubectl(&kc, &["patch", "pod", "web", "--type=strategic", "-p",
            r#"{"spec":{"containers":[{"name":"sidecar","image":"proxy:2"}]}}"#]));
        let images = ok(kubectl(&kc, &["get", "pod", "web", "-o",
            "jsonpath={.spec.containers[*].image} {.spec.containers[1].terminationMessagePath}"]));
        assert_eq!(images, "app:1 proxy:2 /dev/termination-log");
        // Finalizers are a merged set: a second strategic patch adds beside the first (before
        // it: upstream puts a patch's new items first, as `differential::subresources` shows).
        ok(kubectl(&kc, &["patch", "pod", "web", "-p", r#"{"metadata":{"finalizers":["example.com/a"]}}"#]));
        ok(kubectl(&kc, &["patch", "pod", "web", "-p", r#"{"metadata":{"finalizers":["example.com/b"]}}"#]));
        assert_eq!(
            ok(kubectl(&kc, &["get", "pod", "web", "-o", "jsonpath={.metadata.finalizers}"])),
            r#"["example.com/b","example.com/a"]"#
        );
        ok(kubectl(&kc, &["patch", "pod", "web", "-p", r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/a","example.com/b"]}}"#]));
        // Client-side apply sends a strategic patch keyed by container name: both images
        // follow the manifest (the sidecar's patched image is set back), while the fields
        // the manifest does not name (the env list, the defaults) stay.
        write("app:2");
        assert!(ok(kubectl(&kc, &["apply", "-f", &m])).contains("configured"));
        let images = ok(kubectl(&kc, &["get", "pod", "web", "-o", "jsonpath={.spec.containers[*].image} {.spec.containers[0].env[0].name}"]));
        assert_eq!(images, "app:2 proxy:1 A");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn kube_apply_with_managers_and_force() {
    let server = TestServer::start().await;
    let api: Api<ConfigMap> = Api::namespaced(server.client().await, "default");
    let config = |value: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owned"},
               "data": {"shared": value}})
    };
    // Apply creates the object.
    let created = api
        .patch(
            "owned",
            &PatchParams::apply("team-a"),
            &Patch::Apply(config("a")),
        )
        .await
        .unwrap();
    assert_eq!(created.data.unwrap()["shared"], "a");
    let entries = created.metadata.managed_fields.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].manager.as_deref(), Some("team-a"));
    assert_eq!(entries[0].operation.as_deref(), Some("Apply"));
    assert!(entries[0].time.is_some());

    let err = api
        .patch(
            "owned",
            &PatchParams::apply("team-b"),
            &Patch::Apply(config("b")),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        status.message,
        r#"Apply failed with 1 conflict: conflict with "team-a": .data.shared"#
    );
    let forced = api
        .patch(
            "owned",
            &PatchParams::apply("team-b").force(),
            &Patch::Apply(config("b")),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["shared"], "b");
    let managers: Vec<String> = forced
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .filter_map(|e| e.manager)
        .collect();
    assert_eq!(managers, ["team-b"], "team-a owned nothing else");

    // An Update (replace) by a typed client takes ownership of what it changes.
    let mut current = api.get("owned").await.unwrap();
    current
        .data
        .as_mut()
        .unwrap()
        .insert("mine".into(), "x".into());
    let replaced = api
        .replace(
            "owned",
            &PostParams {
                field_manager: Some("controller".into()),
                ..Default::default()
            },
            &current,
        )
        .await
        .unwrap();
    let entry = replaced
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .find(|e| e.manager.as_deref() == Some("controller"))
        .expect("the controller's entry");
    assert_eq!(entry.operation.as_deref(), Some("Update"));
    assert_eq!(
        entry.fields_v1.unwrap().0,
        json!({"f:data": {"f:mine": {}}})
    );
}

#[tokio::test]
async fn apply_bad_input() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let path = "/api/v1/namespaces/default/configmaps/bad";
    let body =
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"},"data":{"a":"1"}}"#;
    let apply = "application/apply-patch+yaml";
    let with_manager = |m: &str| format!("{path}?fieldManager={m}");
    // No fieldManager: 400.
    let (code, text) = patch(&raw, path, apply, body).await;
    assert_eq!(code, 400, "{text}");
    assert!(text.contains("fieldManager: Required value"), "{text}");
    // YAML is accepted; the apply creates the object.
    let yaml = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  a: '1'\n";
    let (code, text) = patch(&raw, &with_manager("m"), apply, yaml).await;
    assert_eq!(code, 201, "{text}");
    // A malformed document: 400. Another kind: 400. force on a merge patch: 422.
    let (code, text) = patch(&raw, &with_manager("m"), apply, b"a: [").await;
    assert_eq!(code, 400, "{text}");
    let secret = br#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"bad"}}"#;
    let (code, text) = patch(&raw, &with_manager("m"), apply, secret).await;
    assert_eq!(code, 400, "{text}");
    let merge = br#"{"data":{"a":"2"}}"#;
    let (code, text) = patch(
        &raw,
        &format!("{path}?force=true"),
        "application/merge-patch+json",
        merge,
    )
    .await;
    assert_eq!(code, 422, "{text}");
    // A conflict carries one cause per field, naming the manager.
    let changed =
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"},"data":{"a":"2"}}"#;
    let (code, text) = patch(&raw, &with_manager("n"), apply, changed).await;
    assert_eq!(code, 409, "{text}");
    let status: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"m\"", "field": ".data.a"}])
    );
    // A pod whose container lacks its key field (name) cannot be applied.
    let pods: Api<Pod> = Api::namespaced(server.client().await, "default");
    let err = pods
        .patch(
            "nameless",
            &PatchParams::apply("m"),
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nameless"},
                                 "spec": {"containers": [{"image": "x"}]}}),
            ),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 422, "{}", status.message);
}
