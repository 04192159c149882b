//! Capstan on a real etcd: two API servers sharing one cluster, upstream's key layout, and
//! what clients see while etcd is down.

use std::time::Duration;

use capstan_etcd::EtcdConfig;
use capstan_etcd::testing::EtcdCluster;
use capstan_storage::Store;
use capstan_testing::TestServer;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use serde_json::json;

use crate::admin;

async fn on_etcd(cluster: &EtcdCluster) -> TestServer {
    let endpoints = cluster.endpoints();
    TestServer::start_with(move |config| {
        let mut etcd = EtcdConfig::new(endpoints);
        etcd.request_timeout = Duration::from_secs(5);
        etcd.dial_timeout = Duration::from_secs(2);
        config.etcd = Some(etcd);
    })
    .await
}

fn config_map(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"k": value}})).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_one_etcd() {
    let cluster = EtcdCluster::start(1);
    let a = on_etcd(&cluster).await;
    let b = on_etcd(&cluster).await;
    let on_a: Api<ConfigMap> = Api::namespaced(a.client().await, "default");
    let on_b: Api<ConfigMap> = Api::namespaced(b.client().await, "default");

    // A watcher on A sees what is written through B.
    let mut events = on_a
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    on_b.create(&PostParams::default(), &config_map("shared", "1"))
        .await
        .unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.next().await {
                Some(Ok(WatchEvent::Added(cm)))
                    if cm.metadata.name.as_deref() == Some("shared") =>
                {
                    return cm;
                }
                Some(Ok(_)) => continue,
                other => panic!("the watch ended: {other:?}"),
            }
        }
    })
    .await
    .expect("A's watcher sees B's create");
    assert_eq!(seen.data.unwrap()["k"], "1");

    // Optimistic concurrency holds across servers.
    let read_on_a = on_a.get("shared").await.unwrap();
    let mut changed = on_b.get("shared").await.unwrap();
    changed
        .data
        .as_mut()
        .unwrap()
        .insert("k".into(), "2".into());
    on_b.replace("shared", &PostParams::default(), &changed)
        .await
        .unwrap();
    let mut stale = read_on_a.clone();
    stale.data.as_mut().unwrap().insert("k".into(), "3".into());
    let err = on_a
        .replace("shared", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 409),
        "{err:?}"
    );
    // A consistent list on A includes B's latest write.
    let listed = on_a.list(&Default::default()).await.unwrap();
    let item = listed
        .items
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some("shared"))
        .unwrap();
    assert_eq!(item.data.as_ref().unwrap()["k"], "2");

    // The keys are upstream's: <prefix>/<resource>/<namespace>/<name>.
    let raw = cluster.store().await;
    let (kv, _) = raw
        .get("/registry/configmaps/default/shared")
        .await
        .unwrap();
    // The values are upstream's default form: the protobuf envelope.
    let value = kv.expect("the key").value;
    assert!(value.starts_with(b"k8s\x00"), "{value:?}");
    let codec =
        capstan_negotiation::protobuf::Codec::new(capstan_negotiation::schema::Schema::upstream());
    let stored = codec.decode_object(&value).unwrap();
    assert_eq!(stored["data"]["k"], "2");
    assert_eq!(stored["kind"], "ConfigMap");
    assert!(
        raw.get("/registry/namespaces/default")
            .await
            .unwrap()
            .0
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_fail_clearly_while_etcd_is_down_and_recover() {
    let mut cluster = EtcdCluster::start(1);
    let server = on_etcd(&cluster).await;
    let raw = admin(&server);
    let path = "/api/v1/namespaces/default/configmaps";
    let res = raw
        .send_json(
            http::Method::POST,
            path,
            &json!({"metadata": {"name": "before"}}),
        )
        .await;
    assert_eq!(res.status.as_u16(), 201);

    let ready = raw.get("/readyz?verbose").await;
    assert_eq!(ready.status.as_u16(), 200);
    assert_eq!(
        String::from_utf8_lossy(&ready.body),
        "[+]ping ok\n[+]etcd ok\n[+]shutdown ok\n\
         [+]poststarthook/start-system-namespaces-controller ok\n\
         [+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n\
         [+]poststarthook/rbac/bootstrap-roles ok\n\
         [+]poststarthook/start-service-ip-repair-controllers ok\n\
         [+]poststarthook/start-cluster-authentication-info-controller ok\n\
         [+]poststarthook/priority-and-fairness-config-producer ok\n\
         [+]poststarthook/apiservice-registration-controller ok\n\
         readyz check passed\n"
    );

    cluster.members[0].kill();
    // The health endpoints say so, within the check's timeout.
    let ready = raw.get("/readyz").await;
    assert_eq!(ready.status.as_u16(), 500);
    assert_eq!(
        String::from_utf8_lossy(&ready.body),
        "[+]ping ok\n[-]etcd failed: reason withheld\n[+]shutdown ok\n\
         [+]poststarthook/start-system-namespaces-controller ok\n\
         [+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n\
         [+]poststarthook/rbac/bootstrap-roles ok\n\
         [+]poststarthook/start-service-ip-repair-controllers ok\n\
         [+]poststarthook/start-cluster-authentication-info-controller ok\n\
         [+]poststarthook/priority-and-fairness-config-producer ok\n\
         [+]poststarthook/apiservice-registration-controller ok\n\
         readyz check failed\n"
    );
    assert_eq!(raw.get("/readyz/etcd").await.status.as_u16(), 500);
    assert_eq!(raw.get("/livez/ping").await.status.as_u16(), 200);
    assert_eq!(raw.get("/readyz?exclude=etcd").await.status.as_u16(), 200);
    let started = std::time::Instant::now();
    let res = raw
        .send_json(
            http::Method::POST,
            path,
            &json!({"metadata": {"name": "during"}}),
        )
        .await;
    let code = res.status.as_u16();
    assert!(
        code == 503 || code == 504,
        "{code}: {}",
        String::from_utf8_lossy(&res.body)
    );
    let status = res.json();
    assert_eq!(status["kind"], "Status");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );

    cluster.members[0].restart();
    cluster.members[0].wait_healthy(Duration::from_secs(30));
    let recovered = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let res = raw
                .send_json(
                    http::Method::POST,
                    path,
                    &json!({"metadata": {"name": "after"}}),
                )
                .await;
            if res.status.as_u16() == 201 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(recovered.is_ok(), "writes work again once etcd is back");
    assert_eq!(raw.get("/readyz").await.status.as_u16(), 200);
    let res = raw.get(&format!("{path}/before")).await;
    assert_eq!(res.status.as_u16(), 200, "acknowledged writes survive");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_acknowledged_write_is_lost_when_the_leader_dies() {
    let mut cluster = EtcdCluster::start(3);
    let server = on_etcd(&cluster).await;
    let raw = admin(&server);
    let path = "/api/v1/namespaces/default/configmaps";
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acks = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut writers = Vec::new();
    for writer in 0..4 {
        let raw = raw.clone();
        let stop = stop.clone();
        let acks = acks.clone();
        writers.push(tokio::spawn(async move {
            let (mut acknowledged, mut failed) = (Vec::new(), 0u32);
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let name = format!("burst-{writer}-{i}");
                i += 1;
                let res = raw
                    .send_json(
                        http::Method::POST,
                        path,
                        &json!({"metadata": {"name": name}}),
                    )
                    .await;
                match res.status.as_u16() {
                    201 => {
                        acknowledged.push(name);
                        acks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    500..=599 => failed += 1,
                    other => panic!("{other}: {}", String::from_utf8_lossy(&res.body)),
                }
            }
            (acknowledged, failed)
        }));
    }
    // Writes under way, the leader dies; they go on once a new leader is elected.
    let acknowledged_so_far = || acks.load(std::sync::atomic::Ordering::Relaxed);
    let reach = |count: usize| async move {
        tokio::time::timeout(Duration::from_secs(30), async {
            while acknowledged_so_far() < count {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .is_ok()
    };
    assert!(reach(20).await, "the burst is writing");
    let leader = cluster.leader().expect("a leader");
    cluster.members[leader].kill();
    let at_kill = acknowledged_so_far();
    assert!(reach(at_kill + 40).await, "writes go on under a new leader");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut acknowledged = Vec::new();
    let mut failed = 0;
    for writer in writers {
        let (names, errors) = writer.await.unwrap();
        acknowledged.extend(names);
        failed += errors;
    }
    assert!(
        acknowledged.len() > 20,
        "the burst wrote {} objects",
        acknowledged.len()
    );
    // Every acknowledged create is there, read back through the surviving members.
    let listed = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let res = raw.get(path).await;
            if res.status.as_u16() == 200 {
                return res.json();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the cluster answers again");
    let names: std::collections::HashSet<String> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|n| !names.contains(*n))
        .collect();
    assert!(
        lost.is_empty(),
        "acknowledged but lost: {lost:?} ({failed} writes failed)"
    );
}

/// A chunked list outlived by the server's own compaction (every second here): the next
/// chunk is 410 with a fresh token that goes on from the same place. (A compaction by
/// another etcd client leaves the server's watch cache serving the chunk, as upstream's:
/// `differential::a_continue_token_past_an_outside_compaction_is_answered_as_upstream`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_list_outlived_by_compaction_gets_a_fresh_token() {
    let cluster = EtcdCluster::start(1);
    let endpoints = cluster.endpoints();
    let server = TestServer::start_with(move |config| {
        config.etcd = Some(EtcdConfig::new(endpoints));
        config.compaction_interval = Duration::from_secs(1);
    })
    .await;
    let raw = admin(&server);
    let path = "/api/v1/namespaces/default/configmaps";
    for i in 0..5 {
        let res = raw
            .send_json(
                http::Method::POST,
                path,
                &json!({"metadata": {"name": format!("c{i}")}}),
            )
            .await;
        assert_eq!(res.status.as_u16(), 201);
    }
    let first = raw.get(&format!("{path}?limit=2")).await.json();
    let token = first["metadata"]["continue"]
        .as_str()
        .unwrap_or_else(|| panic!("a continue token: {first}"))
        .to_string();
    let listed_at = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    // Another write, then the compactor passes the list's revision.
    let res = raw
        .send_json(
            http::Method::POST,
            path,
            &json!({"metadata": {"name": "c5"}}),
        )
        .await;
    assert_eq!(res.status.as_u16(), 201);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let exact = raw
            .get(&format!(
                "{path}?resourceVersion={listed_at}&resourceVersionMatch=Exact"
            ))
            .await;
        if exact.status.as_u16() == 410 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never compacted past {listed_at}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let expired = raw.get(&format!("{path}?limit=2&continue={token}")).await;
    assert_eq!(
        expired.status.as_u16(),
        410,
        "{}",
        String::from_utf8_lossy(&expired.body)
    );
    let status = expired.json();
    assert_eq!(status["reason"], "Expired");
    let fresh = status["metadata"]["continue"]
        .as_str()
        .expect("a fresh token");
    // The fresh token goes on from where the list was, at the current state.
    let rest = raw.get(&format!("{path}?continue={fresh}")).await;
    assert_eq!(
        rest.status.as_u16(),
        200,
        "{}",
        String::from_utf8_lossy(&rest.body)
    );
    let names: Vec<String> = rest.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .filter(|n| n != "kube-root-ca.crt")
        .collect();
    assert_eq!(names, ["c2", "c3", "c4", "c5"]);
}

const KEY1: &str = "c2VjcmV0IGlzIHNlY3VyZSwgdGhpcyBpcyBhIDMyIGI=";
const KEY2: &str = "YW5vdGhlciBzZWNyZXQga2V5IG9mIDMyIGJ5dGVzISE=";

async fn encrypted(cluster: &EtcdCluster, providers: &str) -> TestServer {
    let endpoints = cluster.endpoints();
    let text = format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n{providers}"
    );
    let encryption = capstan_encryption::EncryptionConfig::parse(&text).unwrap();
    TestServer::start_with(move |config| {
        config.etcd = Some(EtcdConfig::new(endpoints));
        config.encryption = Some(encryption);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_encrypted_at_rest_and_keys_rotate() {
    let cluster = EtcdCluster::start(1);
    let raw_etcd = cluster.store().await;
    let stored = |name: &'static str| {
        let raw_etcd = raw_etcd.clone();
        async move {
            let (kv, _) = raw_etcd
                .get(&format!("/registry/secrets/default/{name}"))
                .await
                .unwrap();
            kv.expect("the key").value
        }
    };
    let path = "/api/v1/namespaces/default/secrets";
    let secret = |name: &str| json!({"metadata": {"name": name}, "stringData": {"password": "hunter2-plaintext"}});

    // Key 1 writes.
    let first = encrypted(
        &cluster,
        &format!("  - aescbc:\n      keys: [{{name: key1, secret: {KEY1}}}]\n  - identity: {{}}\n"),
    )
    .await;
    let raw = admin(&first);
    assert_eq!(
        raw.send_json(http::Method::POST, path, &secret("old"))
            .await
            .status
            .as_u16(),
        201
    );
    let value = stored("old").await;
    assert!(value.starts_with(b"k8s:enc:aescbc:v1:key1:"), "{value:?}");
    assert!(
        !value.windows(8).any(|w| w == b"hunter2-"),
        "the plaintext is in etcd"
    );
    let got = raw.get(&format!("{path}/old")).await.json();
    assert_eq!(got["data"]["password"], "aHVudGVyMi1wbGFpbnRleHQ=");
    // ConfigMaps are not covered: stored in the clear (protobuf).
    let res = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "open"}, "data": {"k": "visible"}}),
        )
        .await;
    assert_eq!(res.status.as_u16(), 201);
    let (cm, _) = raw_etcd
        .get("/registry/configmaps/default/open")
        .await
        .unwrap();
    assert!(cm.unwrap().value.starts_with(b"k8s\x00"));
    first.stop().await;

    // Rotation: key 2 first, key 1 still read.
    let second = encrypted(&cluster, &format!("  - aescbc:\n      keys:\n      - {{name: key2, secret: {KEY2}}}\n      - {{name: key1, secret: {KEY1}}}\n")).await;
    let raw = admin(&second);
    let old = raw.get(&format!("{path}/old")).await.json();
    assert_eq!(
        old["data"]["password"], "aHVudGVyMi1wbGFpbnRleHQ=",
        "decrypted with key 1"
    );
    assert_eq!(
        raw.send_json(http::Method::POST, path, &secret("new"))
            .await
            .status
            .as_u16(),
        201
    );
    assert!(stored("new").await.starts_with(b"k8s:enc:aescbc:v1:key2:"));
    // Rewriting the old secret moves it to key 2.
    let res = raw
        .request(
            http::Method::PATCH,
            &format!("{path}/old"),
            &[("content-type", "application/merge-patch+json")],
            br#"{"metadata":{"labels":{"rotated":"yes"}}}"#.to_vec(),
        )
        .await;
    assert_eq!(res.status.as_u16(), 200);
    let patched = res.json();
    assert_eq!(patched["metadata"]["labels"]["rotated"], "yes");
    assert_eq!(patched["data"]["password"], "aHVudGVyMi1wbGFpbnRleHQ=");
    assert!(stored("old").await.starts_with(b"k8s:enc:aescbc:v1:key2:"));
    second.stop().await;

    // A server without key 2 cannot read those secrets: a clear error for each, no crash.
    let third = encrypted(
        &cluster,
        &format!("  - aescbc:\n      keys: [{{name: key1, secret: {KEY1}}}]\n"),
    )
    .await;
    let raw = admin(&third);
    let res = raw.get(&format!("{path}/new")).await;
    assert_eq!(res.status.as_u16(), 500);
    let text = String::from_utf8_lossy(&res.body);
    assert!(text.contains("k8s:enc:aescbc:v1:key2"), "{text}");
    assert!(
        !text.contains("/registry/"),
        "no storage keys in a 500: {text}"
    );
    assert_eq!(
        raw.get("/api/v1/namespaces/default/configmaps/open")
            .await
            .status
            .as_u16(),
        200
    );
    // Ready once its post-start hooks have run, the unreadable secret notwithstanding.
    crate::wait_ready(&third).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_overridden_to_its_own_etcd() {
    let main = EtcdCluster::start(1);
    let events = EtcdCluster::start(1);
    let (main_endpoints, event_endpoints) = (main.endpoints(), events.endpoints());
    let server = TestServer::start_with(move |config| {
        config.etcd = Some(EtcdConfig::new(main_endpoints));
        config.etcd_overrides = vec![("".into(), "configmaps".into(), event_endpoints)];
    })
    .await;
    let raw = admin(&server);
    let res = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "apart"}}),
        )
        .await;
    assert_eq!(res.status.as_u16(), 201);
    let res = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/secrets",
            &json!({"metadata": {"name": "main"}}),
        )
        .await;
    assert_eq!(res.status.as_u16(), 201);
    let in_main = main.store().await;
    let in_events = events.store().await;
    assert!(
        in_events
            .get("/registry/configmaps/default/apart")
            .await
            .unwrap()
            .0
            .is_some()
    );
    assert!(
        in_main
            .get("/registry/configmaps/default/apart")
            .await
            .unwrap()
            .0
            .is_none()
    );
    assert!(
        in_main
            .get("/registry/secrets/default/main")
            .await
            .unwrap()
            .0
            .is_some()
    );
    // Lists and watches of the overridden resource work from its own cluster.
    let listed = raw
        .get("/api/v1/namespaces/default/configmaps")
        .await
        .json();
    let names: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert!(names.contains(&"apart"), "{names:?}");
}

/// The value of the sample `name{labels}` in a Prometheus text page.
fn sample(page: &str, series: &str) -> Option<f64> {
    page.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_metrics_count_objects_and_measure_the_database() {
    let cluster = EtcdCluster::start(1);
    let endpoints = cluster.endpoints();
    let label = endpoints.join(",");
    let server = TestServer::start_with(move |config| {
        config.etcd = Some(EtcdConfig::new(endpoints));
        config.etcd_count_metric_poll_period = Duration::from_millis(100);
        config.etcd_db_metric_poll_interval = Duration::from_millis(100);
    })
    .await;
    let raw = admin(&server);
    for i in 0..3 {
        let res = raw
            .send_json(
                http::Method::POST,
                "/api/v1/namespaces/default/configmaps",
                &json!({"metadata": {"name": format!("m{i}")}}),
            )
            .await;
        assert_eq!(res.status.as_u16(), 201);
    }
    let page = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let res = raw.get("/metrics").await;
            assert_eq!(res.status.as_u16(), 200);
            let page = String::from_utf8_lossy(&res.body).into_owned();
            // The three and the server's own (kube-system's, each namespace's CA map), as
            // many as a list finds, and at least eight.
            let listed = raw.get("/api/v1/configmaps").await.json()["items"]
                .as_array()
                .map_or(0, Vec::len);
            let counted = sample(&page, r#"apiserver_storage_objects{resource="configmaps"}"#);
            if listed >= 8 && counted == Some(listed as f64) {
                return page;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the count reaches what a list finds");
    assert!(
        page.contains("# TYPE apiserver_storage_objects gauge"),
        "{page}"
    );
    assert!(
        sample(
            &page,
            r#"apiserver_storage_objects{resource="storageclasses.storage.k8s.io"}"#
        )
        .is_some(),
        "{page}"
    );
    let size = sample(
        &page,
        &format!("apiserver_storage_size_bytes{{storage_cluster_id=\"{label}\"}}"),
    );
    assert!(size.is_some_and(|s| s > 0.0), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn component_statuses_probe_the_components_and_each_etcd_server() {
    let cluster = EtcdCluster::start(1);
    let healthz = capstan_e2e::HttpsServer::start(|r| {
        assert_eq!(r.path, "/healthz");
        (http::StatusCode::OK, json!("ok"))
    })
    .await;
    let endpoints = cluster.endpoints();
    let scheduler = format!("{}/healthz", healthz.url);
    let server = TestServer::start_with(move |config| {
        config.etcd = Some(EtcdConfig::new(endpoints));
        config.component_health_urls = vec![
            ("scheduler".into(), scheduler),
            // Nothing listens on port 1.
            (
                "controller-manager".into(),
                "https://127.0.0.1:1/healthz".into(),
            ),
        ];
    })
    .await;
    let raw = admin(&server);

    let list = raw.get("/api/v1/componentstatuses").await;
    assert_eq!(list.status, 200);
    assert_eq!(
        list.headers["warning"],
        "299 - \"v1 ComponentStatus is deprecated in v1.19+\""
    );
    let items = list.json()["items"].as_array().unwrap().clone();
    let names: Vec<&str> = items
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["scheduler", "controller-manager", "etcd-0"]);
    let condition = |i: usize| items[i]["conditions"][0].clone();
    assert_eq!(condition(0)["status"], "True");
    assert_eq!(condition(1)["status"], "False");
    assert!(
        condition(1)["error"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1:1"),
        "{}",
        condition(1)
    );
    assert_eq!(
        condition(2),
        json!({"type": "Healthy", "status": "True", "message": "ok"})
    );

    let (success, table, _) = capstan_e2e::kubectl(&server.kubeconfig_path(), &["get", "cs"]);
    assert!(success, "{table}");
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().take(3).collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "STATUS", "MESSAGE"]);
    assert_eq!(rows[2][..2], ["controller-manager", "Unhealthy"]);
    assert_eq!(rows[3], ["etcd-0", "Healthy", "ok"]);

    let one = raw.get("/api/v1/componentstatuses/etcd-0").await.json();
    assert_eq!(one["kind"], "ComponentStatus");
    let missing = raw.get("/api/v1/componentstatuses/nope").await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.message(), "componentstatuses \"nope\" not found");
}

/// Consistent lists and watches served by the watch cache while another resource is written
/// without pause, on Debian's etcd and on the one upstream ships (3.6, which reports progress
/// only to watchers that have caught up): each waits for the cache to reach the current
/// revision, asking for progress until it does, and none times out (504).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consistent_reads_keep_up_under_writes_elsewhere_on_both_etcd_versions() {
    let upstream = capstan_e2e::upstream::binaries().join("etcd");
    for cluster in [EtcdCluster::start(1), EtcdCluster::start_binary(&upstream)] {
        let server = on_etcd(&cluster).await;
        let raw = admin(&server);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = tokio::spawn({
            let raw = raw.clone();
            let stop = stop.clone();
            async move {
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let body = json!({"metadata": {"name": format!("busy-{i}")}});
                    let path = "/api/v1/namespaces/default/configmaps";
                    raw.send_json(http::Method::POST, path, &body).await;
                    i += 1;
                }
            }
        });
        for i in 0..10 {
            let listed = raw.get("/api/v1/namespaces/default/secrets").await;
            assert_eq!(
                listed.status.as_u16(),
                200,
                "list {i}: {}",
                listed.message()
            );
            let watched = raw
                .get("/api/v1/namespaces/default/secrets?watch=1&timeoutSeconds=1")
                .await;
            assert_eq!(watched.status.as_u16(), 200, "watch {i}");
            assert!(
                !String::from_utf8_lossy(&watched.body).contains("\"code\":504"),
                "watch {i}: {}",
                String::from_utf8_lossy(&watched.body)
            );
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.await.unwrap();
    }
}
