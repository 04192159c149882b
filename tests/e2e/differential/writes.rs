//! A pod's own updates and patches: the same writes to the same pod in Capstan and in
//! upstream's kube-apiserver, each by a field manager of its own, the answers compared with
//! their managedFields (times masked): a PUT of the pod as read back, a PUT of a stale copy
//! (the managedFields of an earlier read), and strategic-merge, JSON and merge patches.

use http::Method;
use serde_json::{Value, json};

use super::{Upstream, capstan, create_user_objects, masked_but_managed_fields};
use capstan_e2e::RawClient;
use capstan_testing::TestServer;

const POD: &str = "/api/v1/namespaces/default/pods/w";

/// An answer as compared: its status, and its body masked with its managedFields in
/// manager order (entries written within the same second are ordered by time on one server
/// and by name on the other).
fn compared(status: u16, body: &[u8]) -> (u16, Value) {
    let mut body = masked_but_managed_fields(serde_json::from_slice(body).unwrap_or(Value::Null));
    if let Some(entries) = body["metadata"]["managedFields"].as_array_mut() {
        entries.sort_by(|a, b| a["manager"].to_string().cmp(&b["manager"].to_string()));
    }
    (status, body)
}

/// The writes, each as (method, field manager, content type, body) given the pod as first
/// read and as read just before the write.
fn write(
    step: usize,
    first: &Value,
    current: &Value,
) -> (Method, &'static str, &'static str, Value) {
    let relabelled = |pod: &Value, label: &str| {
        let mut pod = pod.clone();
        pod["metadata"]["labels"][label] = json!("1");
        pod
    };
    match step {
        0 => (
            Method::PUT,
            "reader",
            "application/json",
            relabelled(current, "read"),
        ),
        1 => {
            let mut stale = relabelled(first, "stale");
            stale["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("resourceVersion");
            (Method::PUT, "stale", "application/json", stale)
        }
        2 => (
            Method::PATCH,
            "strategic",
            "application/strategic-merge-patch+json",
            json!({"metadata": {"labels": {"strategic": "1"}}}),
        ),
        3 => (
            Method::PATCH,
            "jsonpatch",
            "application/json-patch+json",
            json!([{"op": "add", "path": "/metadata/labels/json", "value": "1"}]),
        ),
        _ => (
            Method::PATCH,
            "merger",
            "application/merge-patch+json",
            json!({"metadata": {"annotations": {"merged": "1"}}}),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pods_updates_and_patches_record_what_upstreams_do() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let ours = capstan(&server);
    let created = create_user_objects(&upstream, &ours).await;
    assert!(created.is_empty(), "{}", created.join("\n"));
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "w", "labels": {"app": "w"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let clients: [&RawClient; 2] = [&upstream.client, &ours];
    let mut first = Vec::new();
    for client in clients {
        let made = client
            .send_json(Method::POST, "/api/v1/namespaces/default/pods", &pod)
            .await;
        assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
        first.push(client.get(POD).await.json());
    }
    let mut differences = Vec::new();
    for step in 0..5 {
        let mut answers = Vec::new();
        let mut what = String::new();
        for (client, first) in clients.into_iter().zip(&first) {
            let current = client.get(POD).await.json();
            let (method, manager, content_type, body) = write(step, first, &current);
            what = format!("{method} by {manager} ({content_type})");
            let r = client
                .request(
                    method,
                    &format!("{POD}?fieldManager={manager}"),
                    &[("content-type", content_type)],
                    serde_json::to_vec(&body).unwrap(),
                )
                .await;
            assert_eq!(
                r.status,
                200,
                "{what}: {}",
                String::from_utf8_lossy(&r.body)
            );
            answers.push(compared(r.status.as_u16(), &r.body));
        }
        if answers[0] != answers[1] {
            differences.push(format!(
                "{what}:\n  upstream {}\n  capstan  {}",
                answers[0].1, answers[1].1
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
