//! The service-account tokens a kubelet may ask for, against upstream's NodeRestriction
//! (`ServiceAccountNodeAudienceRestriction`, on by default since v1.33): the audiences the
//! node's pods use (projected token volumes, CSI drivers inline or behind a claim), others
//! only with `request-serviceaccounts-token-audience`, and never two at once.

use http::Method;
use serde_json::{Value, json};

use super::authorization::start_pair;
use super::create_on;
use capstan_e2e::RawClient;

const NS: &str = "/api/v1/namespaces/default";
const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

/// A pod of service account `app` on node `n1` with `volumes`.
fn pod(name: &str, volumes: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"nodeName": "n1", "serviceAccountName": "app",
            "containers": [{"name": "c", "image": "app"}], "volumes": volumes}})
}

/// What a token request by node `n1` for pod `pod` with `audiences` gets from `client`:
/// status, reason, message.
async fn ask(client: &RawClient, pod: &str, audiences: &[&str]) -> (u16, Value, Value) {
    let found = client
        .request(Method::GET, &format!("{NS}/pods/{pod}"), &[], Vec::new())
        .await;
    let found: Value = serde_json::from_slice(&found.body).unwrap();
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": audiences, "expirationSeconds": 3600,
            "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": pod,
                "uid": found["metadata"]["uid"]}}});
    let r = client
        .request(
            Method::POST,
            &format!("{NS}/serviceaccounts/app/token"),
            &[
                ("content-type", "application/json"),
                ("impersonate-user", "system:node:n1"),
                ("impersonate-group", "system:nodes"),
            ],
            serde_json::to_vec(&body).unwrap(),
        )
        .await;
    let answer: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    (
        r.status.as_u16(),
        answer["reason"].clone(),
        answer["message"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_asks_tokens_only_for_audiences_its_pods_use() {
    let (pair, _upstream, _server) = start_pair().await;
    let setup: Vec<(String, Value)> = vec![
        (
            format!("{NS}/serviceaccounts"),
            json!({"metadata": {"name": "app"}}),
        ),
        (
            "/apis/storage.k8s.io/v1/csidrivers".into(),
            json!({"metadata": {"name": "secrets.csi.example"},
                "spec": {"tokenRequests": [{"audience": "secrets-aud"}]}}),
        ),
        (
            "/apis/storage.k8s.io/v1/csidrivers".into(),
            json!({"metadata": {"name": "disk.csi.example"},
                "spec": {"tokenRequests": [{"audience": "disk-aud"}, {"audience": ""}]}}),
        ),
        (
            "/api/v1/persistentvolumes".into(),
            json!({"metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"], "csi": {"driver": "disk.csi.example", "volumeHandle": "h1"},
                "claimRef": {"namespace": "default", "name": "data"}}}),
        ),
        (
            format!("{NS}/persistentvolumeclaims"),
            json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}, "volumeName": "pv1",
                "storageClassName": ""}}),
        ),
        (format!("{NS}/pods"), pod("plain", json!([]))),
        (
            format!("{NS}/pods"),
            pod(
                "vault",
                json!([{"name": "v", "projected": {"sources": [
                {"serviceAccountToken": {"path": "t", "audience": "vault"}}]}}]),
            ),
        ),
        (
            format!("{NS}/pods"),
            pod(
                "inline",
                json!([{"name": "s", "csi": {"driver": "secrets.csi.example"}}]),
            ),
        ),
        (
            format!("{NS}/pods"),
            pod(
                "claimed",
                json!([{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]),
            ),
        ),
        (
            "/api/v1/persistentvolumes".into(),
            json!({"metadata": {"name": "pv2"}, "spec": {"capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"], "csi": {"driver": "secrets.csi.example", "volumeHandle": "h2"},
                "claimRef": {"namespace": "default", "name": "ephemeral-scratch"}}}),
        ),
        (
            format!("{NS}/persistentvolumeclaims"),
            json!({"metadata": {"name": "ephemeral-scratch"}, "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}, "volumeName": "pv2",
                "storageClassName": ""}}),
        ),
        (
            format!("{NS}/pods"),
            pod(
                "ephemeral",
                json!([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                    "resources": {"requests": {"storage": "1Gi"}}}}}}]),
            ),
        ),
        (
            format!("{NS}/pods"),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare"},
                "spec": {"nodeName": "n1", "serviceAccountName": "app",
                    "automountServiceAccountToken": false,
                    "containers": [{"name": "c", "image": "app"}]}}),
        ),
        (
            format!("{RBAC}/clusterroles"),
            json!({"metadata": {"name": "audiences"}, "rules": [
                {"apiGroups": [""], "resources": ["granted-aud"],
                 "verbs": ["request-serviceaccounts-token-audience"]},
                {"apiGroups": [""], "resources": ["app-only-aud"], "resourceNames": ["app"],
                 "verbs": ["request-serviceaccounts-token-audience"]},
                {"apiGroups": [""], "resources": ["other-sa-aud"], "resourceNames": ["other"],
                 "verbs": ["request-serviceaccounts-token-audience"]}]}),
        ),
        (
            format!("{RBAC}/clusterrolebindings"),
            json!({"metadata": {"name": "audiences"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "audiences"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:node:n1"}]}),
        ),
    ];
    for client in [&pair.upstream, &pair.capstan] {
        for (path, body) in &setup {
            create_on(client, path, body).await;
        }
    }
    let cases: Vec<(&str, &[&str])> = vec![
        ("plain", &[]),
        ("plain", &["vault"]),
        ("vault", &["vault"]),
        ("vault", &["vault", "other"]),
        ("inline", &["secrets-aud"]),
        ("inline", &["disk-aud"]),
        ("claimed", &["disk-aud"]),
        ("claimed", &["secrets-aud"]),
        ("plain", &["granted-aud"]),
        ("plain", &["app-only-aud"]),
        ("plain", &["other-sa-aud"]),
        ("ephemeral", &["secrets-aud"]),
        ("ephemeral", &["disk-aud"]),
        ("bare", &[]),
        ("bare", &["granted-aud"]),
    ];
    let mut differences = Vec::new();
    let mut refused = 0;
    for (pod, audiences) in cases {
        let theirs = ask(&pair.upstream, pod, audiences).await;
        let mine = ask(&pair.capstan, pod, audiences).await;
        if theirs.0 == 403 {
            refused += 1;
        }
        if theirs != mine {
            differences.push(format!(
                "{pod} {audiences:?}\n  upstream {theirs:?}\n  capstan  {mine:?}"
            ));
        }
    }
    assert!(refused >= 4, "the refusals are exercised ({refused})");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
