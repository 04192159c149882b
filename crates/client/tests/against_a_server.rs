//! The client against a real Capstan API server: typed calls in protobuf and JSON, Status
//! errors, bindings, watches, and a reflector that resumes and relists.

use std::time::Duration;

use capstan_client::{
    Change, Client, Config, ContentType, ListParams, PatchType, Reflector, WatchEvent,
};
use capstan_testing::TestServer;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Binding, ConfigMap, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

fn client(server: &TestServer, content_type: ContentType) -> Client {
    let mut config = Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap();
    config.content_type = content_type;
    Client::new(config).unwrap()
}

fn config_map(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some([("app".to_string(), "web".to_string())].into()),
            ..Default::default()
        },
        data: Some([("k".to_string(), value.to_string())].into()),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_calls_in_both_representations() {
    let server = TestServer::start().await;
    for (content_type, prefix) in [(ContentType::Protobuf, "p"), (ContentType::Json, "j")] {
        let c = client(&server, content_type);
        let ns = Some("default");
        let created = c
            .create(ns, &config_map(&format!("{prefix}1"), "v1"))
            .await
            .unwrap();
        assert_eq!(created.data.as_ref().unwrap()["k"], "v1");
        assert!(created.metadata.uid.is_some());
        let mut got: ConfigMap = c.get(ns, &format!("{prefix}1")).await.unwrap();
        got.data = Some([("k".to_string(), "v2".to_string())].into());
        let replaced = c.replace(ns, &format!("{prefix}1"), &got).await.unwrap();
        assert_eq!(replaced.data.as_ref().unwrap()["k"], "v2");
        // A stale write is a 409 Conflict with the server's Status.
        let stale = c
            .replace(ns, &format!("{prefix}1"), &got)
            .await
            .unwrap_err();
        assert_eq!(stale.code(), Some(409), "{stale}");
        let patched: ConfigMap = c
            .patch(
                ns,
                &format!("{prefix}1"),
                PatchType::Merge,
                &json!({"data": {"extra": "x"}}),
            )
            .await
            .unwrap();
        assert_eq!(patched.data.as_ref().unwrap()["extra"], "x");
        let missing = c.get::<ConfigMap>(ns, "nope").await.unwrap_err();
        assert_eq!(missing.code(), Some(404));
        assert!(missing.to_string().contains("NotFound"), "{missing}");
        c.create(ns, &config_map(&format!("{prefix}2"), "v"))
            .await
            .unwrap();
        let page = c
            .list::<ConfigMap>(
                ns,
                &ListParams {
                    label_selector: Some("app=web".into()),
                    limit: 1,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(page.items.len(), 1);
        assert!(page.metadata.continue_.is_some());
        c.delete::<ConfigMap>(ns, &format!("{prefix}2"))
            .await
            .unwrap();
        assert_eq!(
            c.get::<ConfigMap>(ns, &format!("{prefix}2"))
                .await
                .unwrap_err()
                .code(),
            Some(404)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_tells_which_resources_are_served() {
    use k8s_openapi::api::apps::v1::ReplicaSet;
    use k8s_openapi::api::authentication::v1::TokenRequest;
    use k8s_openapi::api::core::v1::Service;
    use k8s_openapi::api::storage::v1::StorageClass;
    use k8s_openapi::api::storagemigration::v1beta1::StorageVersionMigration;
    let server = TestServer::start().await;
    let c = client(&server, ContentType::Protobuf);
    assert!(c.serves::<ConfigMap>().await.unwrap());
    assert!(c.serves::<StorageClass>().await.unwrap());
    assert!(c.serves::<Service>().await.unwrap());
    // Not served: a kind missing from a served group version (TokenRequest is only a
    // subresource, as upstream), and a group version the server does not know.
    assert!(!c.serves::<TokenRequest>().await.unwrap());
    assert!(c.serves::<ReplicaSet>().await.unwrap());
    assert!(!c.serves::<StorageVersionMigration>().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_bind_through_the_subresource() {
    let server = TestServer::start().await;
    let c = client(&server, ContentType::Protobuf);
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}))
    .unwrap();
    c.create(Some("default"), &pod).await.unwrap();
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some("web".into()),
            ..Default::default()
        },
        target: ObjectReference {
            kind: Some("Node".into()),
            name: Some("n1".into()),
            ..Default::default()
        },
    };
    c.create_subresource::<Pod, _>(Some("default"), "web", "binding", &binding)
        .await
        .unwrap();
    let bound: Pod = c.get(Some("default"), "web").await.unwrap();
    assert_eq!(bound.spec.unwrap().node_name.as_deref(), Some("n1"));
    let again = c
        .create_subresource::<Pod, _>(Some("default"), "web", "binding", &binding)
        .await
        .unwrap_err();
    assert_eq!(again.code(), Some(409));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_decode_protobuf_frames() {
    let server = TestServer::start().await;
    let c = client(&server, ContentType::Protobuf);
    let start = c
        .list::<ConfigMap>(Some("default"), &ListParams::default())
        .await
        .unwrap();
    let rv = start.metadata.resource_version.unwrap();
    c.create(Some("default"), &config_map("a", "1"))
        .await
        .unwrap();
    c.delete::<ConfigMap>(Some("default"), "a").await.unwrap();
    let params = ListParams {
        resource_version: Some(rv),
        ..Default::default()
    };
    let events: Vec<_> = c
        .watch::<ConfigMap>(Some("default"), &params, 1)
        .await
        .unwrap()
        .collect()
        .await;
    // Only "a": the namespace's kube-root-ca.crt may be published after the list.
    let named_a = |cm: &ConfigMap| cm.metadata.name.as_deref() == Some("a");
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e.as_ref().unwrap() {
            WatchEvent::Added(cm) if named_a(cm) => Some("ADDED"),
            WatchEvent::Deleted(cm) if named_a(cm) => Some("DELETED"),
            WatchEvent::Modified(cm) if named_a(cm) => Some("MODIFIED"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["ADDED", "DELETED"]);
}

async fn next<K>(rx: &mut tokio::sync::mpsc::Receiver<Change<K>>) -> Change<K> {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("a change in time")
        .expect("the reflector runs")
}

/// ConfigMap watches the server has started (`apiserver_request_total` counts a watch when
/// it starts).
async fn watches_started(c: &Client) -> f64 {
    let (_, _, page) = c
        .send(http::Method::GET, "/metrics", None, bytes::Bytes::new())
        .await
        .unwrap();
    String::from_utf8_lossy(&page)
        .lines()
        .filter(|l| {
            l.starts_with("apiserver_request_total{")
                && l.contains("verb=\"WATCH\"")
                && l.contains("resource=\"configmaps\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn name_of(change: &Change<ConfigMap>) -> String {
    match change {
        Change::Applied(c) | Change::Deleted(c) => c.metadata.name.clone().unwrap_or_default(),
        Change::Listed(items) => format!("listed {}", items.len()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reflector_lists_watches_resumes_and_relists() {
    let server = TestServer::start_with(|c| {
        // A short history: a resume from far back is gone (410).
        c.compaction_interval = Duration::from_millis(200);
        c.default_watch_cache_size = 4;
        c.watch_cache_fresh = std::time::Duration::ZERO;
    })
    .await;
    let c = client(&server, ContentType::Protobuf);
    for i in 0..3 {
        c.create(Some("default"), &config_map(&format!("pre{i}"), "x"))
            .await
            .unwrap();
    }
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    // The namespace's CA map comes and goes on its own schedule: not this test's subject.
    let params = ListParams {
        field_selector: Some("metadata.name!=kube-root-ca.crt".into()),
        ..Default::default()
    };
    let reflector = Reflector::<ConfigMap>::new(c.clone(), Some("default".into()), params.clone())
        .watch_timeout(1);
    let task = tokio::spawn(reflector.run(tx));
    assert_eq!(name_of(&next(&mut rx).await), "listed 3");
    c.create(Some("default"), &config_map("during", "x"))
        .await
        .unwrap();
    assert_eq!(name_of(&next(&mut rx).await), "during");
    // The watch ends after a second; the reflector resumes without listing again.
    let watches = watches_started(&c).await;
    for _ in 0..200 {
        if watches_started(&c).await > watches {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        watches_started(&c).await > watches,
        "the reflector watches again"
    );
    c.delete::<ConfigMap>(Some("default"), "pre0")
        .await
        .unwrap();
    let change = next(&mut rx).await;
    assert!(matches!(&change, Change::Deleted(_)), "{change:?}");
    assert_eq!(name_of(&change), "pre0");
    task.abort();

    // A restart that resumes from a compacted version gets 410 and lists again.
    for i in 0..6 {
        c.create(Some("default"), &config_map(&format!("late{i}"), "x"))
            .await
            .unwrap();
    }
    // Four changes fit the watch cache's window: resuming from "1" is too old at once.
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let reflector =
        Reflector::<ConfigMap>::new(c.clone(), Some("default".into()), params).resume_from("1");
    let task = tokio::spawn(reflector.run(tx));
    assert_eq!(name_of(&next(&mut rx).await), "listed 9");
    task.abort();
}
