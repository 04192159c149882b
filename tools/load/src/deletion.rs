//! Deletion at scale: `deletecollection` of many objects (the server's
//! `--delete-collection-workers` decides its parallelism), and the garbage collector
//! removing many dependents of one owner.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{Method, StatusCode};

use crate::Target;
use crate::pods::create_namespace;

const CLIENTS: usize = 16;

/// Creates `count` ConfigMaps named `{prefix}-{i}` in `namespace` (16 clients), each with
/// `owner` as its owner when given.
async fn create_maps(
    target: &Arc<Target>,
    namespace: &str,
    prefix: &str,
    count: usize,
    owner: Option<(String, String)>,
) {
    let mut tasks = Vec::new();
    for w in 0..CLIENTS {
        let target = target.clone();
        let namespace = namespace.to_string();
        let prefix = prefix.to_string();
        let owner = owner.clone();
        tasks.push(tokio::spawn(async move {
            let mut conn = target.connect().await.expect("connecting");
            let path = format!("/api/v1/namespaces/{namespace}/configmaps");
            for i in (w..count).step_by(CLIENTS) {
                let mut doc = serde_json::json!({"metadata": {"name": format!("{prefix}-{i}"),
                    "labels": {"capstan-load": "deletion"}},
                    "data": {"key": "value"}});
                if let Some((name, uid)) = &owner {
                    doc["metadata"]["ownerReferences"] = serde_json::json!([{"apiVersion": "v1",
                        "kind": "ConfigMap", "name": name, "uid": uid, "blockOwnerDeletion": true}]);
                }
                let body = serde_json::to_vec(&doc).expect("JSON");
                let (status, body) = conn
                    .send(target.request(Method::POST, &path, Some(body)))
                    .await
                    .expect("a create");
                assert_eq!(status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&body));
            }
        }));
    }
    for t in tasks {
        t.await.expect("a client");
    }
}

/// How many ConfigMaps labelled by the harness `namespace` holds.
async fn count_maps(target: &Target, namespace: &str) -> usize {
    let mut conn = target.connect().await.expect("connecting");
    let path =
        format!("/api/v1/namespaces/{namespace}/configmaps?labelSelector=capstan-load%3Ddeletion");
    let (status, body) = conn
        .send(target.request(Method::GET, &path, None))
        .await
        .expect("a list");
    assert_eq!(status, StatusCode::OK);
    let doc: serde_json::Value = serde_json::from_slice(&body).expect("a list");
    doc["items"].as_array().map_or(0, Vec::len)
}

async fn until_empty(target: &Target, namespace: &str, start: Instant) -> Duration {
    while count_maps(target, namespace).await > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    start.elapsed()
}

/// Times a deletecollection of `count` ConfigMaps, then the collection of `count`
/// dependents of a deleted owner (background) and of a foreground deletion; prints rows.
pub async fn run(target: &Arc<Target>, run: &str, count: usize) {
    println!("| operation | objects | took | objects/s |");
    println!("|---|---|---|---|");
    let row = |what: &str, took: Duration| {
        println!(
            "| {what} | {count} | {:.2} s | {:.0} |",
            took.as_secs_f64(),
            count as f64 / took.as_secs_f64()
        );
    };
    let ns = format!("delete-{run}");
    create_namespace(target, &ns).await;
    create_maps(target, &ns, "plain", count, None).await;
    let mut conn = target.connect().await.expect("connecting");
    let start = Instant::now();
    let path = format!("/api/v1/namespaces/{ns}/configmaps?labelSelector=capstan-load%3Ddeletion");
    let (status, body) = conn
        .send(target.request(Method::DELETE, &path, None))
        .await
        .expect("a deletecollection");
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    row("deletecollection", start.elapsed());

    for (policy, label) in [
        ("Background", "garbage collection (background)"),
        (
            "Foreground",
            "garbage collection (foreground, until the owner is gone)",
        ),
    ] {
        let owner = format!("owner-{}", policy.to_lowercase());
        let body =
            serde_json::to_vec(&serde_json::json!({"metadata": {"name": owner}})).expect("JSON");
        let (status, created) = conn
            .send(target.request(
                Method::POST,
                &format!("/api/v1/namespaces/{ns}/configmaps"),
                Some(body),
            ))
            .await
            .expect("the owner");
        assert_eq!(status, StatusCode::CREATED);
        let created: serde_json::Value = serde_json::from_slice(&created).expect("JSON");
        let uid = created["metadata"]["uid"]
            .as_str()
            .expect("a uid")
            .to_string();
        create_maps(target, &ns, &owner, count, Some((owner.clone(), uid))).await;
        let body =
            serde_json::to_vec(&serde_json::json!({"propagationPolicy": policy})).expect("JSON");
        let start = Instant::now();
        let (status, _) = conn
            .send(target.request(
                Method::DELETE,
                &format!("/api/v1/namespaces/{ns}/configmaps/{owner}"),
                Some(body),
            ))
            .await
            .expect("deleting the owner");
        assert!(status.is_success());
        let mut took = until_empty(target, &ns, start).await;
        if policy == "Foreground" {
            loop {
                let (status, _) = conn
                    .send(target.request(
                        Method::GET,
                        &format!("/api/v1/namespaces/{ns}/configmaps/{owner}"),
                        None,
                    ))
                    .await
                    .expect("reading the owner");
                if status == StatusCode::NOT_FOUND {
                    took = start.elapsed();
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        row(label, took);
    }
    let _ = conn
        .send(target.request(Method::DELETE, &format!("/api/v1/namespaces/{ns}"), None))
        .await;
}
