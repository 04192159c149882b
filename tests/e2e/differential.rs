//! Differential tests: the same requests to Capstan and to upstream's kube-apiserver v1.36
//! (with its etcd, both from `../shared/k8s/`), the answers compared. Protobuf is read with an
//! independent decoder (`k8s-rs-pb`, generated from upstream's `.proto` files), not with
//! Capstan's negotiation crate, and capstan-client is pointed at upstream's server.

use std::time::Duration;

use capstan_e2e::RawClient;
use capstan_e2e::upstream::{self, Pki, Process};
use capstan_testing::TestServer;
use http::Method;
use k8s_rs_pb::api::core::v1 as core;
use k8s_rs_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_rs_pb::apimachinery::pkg::runtime::Unknown;
use protobuf::Message;
use serde_json::{Value, json};

/// Upstream's API server on its own etcd, and an admin client of it.
struct Upstream {
    client: RawClient,
    kubeconfig: std::path::PathBuf,
    /// Its etcd's client URL.
    etcd_url: String,
    /// Its URL and the CA its serving certificate chains to.
    url: String,
    ca_pem: String,
    /// The API server and the components beside it; dropped before their etcd.
    _processes: Vec<Process>,
    _etcd: upstream::EtcdCluster,
    _dir: tempfile::TempDir,
}

impl Upstream {
    async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// Starts it with `extra` flags after the cluster's.
    async fn start_with(extra: &[&str]) -> Self {
        let bin = upstream::binaries();
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki::new(&dir.path().join("pki"));
        let (etcd, etcd_url) = upstream::start_etcd(&bin);
        let (cert, key) = pki.ca.client("admin", &["system:masters"]);
        let mut flags = vec![format!("--etcd-servers={etcd_url}")];
        flags.extend(extra.iter().map(|f| f.to_string()));
        let (mut apiserver, port) = upstream::start_apiserver(&bin, &pki, 300, &flags, dir.path());
        let url = format!("https://127.0.0.1:{port}");
        let client = RawClient::new(&url, &pki.ca.pem, None).with_client_certificate(
            &pki.ca.pem,
            &cert,
            &key,
        );
        let mut ready = false;
        for _ in 0..300 {
            if let Ok(r) = client
                .try_request(Method::GET, "/readyz", &[], Vec::new())
                .await
                && r.status == 200
            {
                ready = true;
                break;
            }
            if !apiserver.running() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(
            ready,
            "kube-apiserver did not become ready:\n{}",
            apiserver.log_text()
        );
        let kubeconfig = pki.kubeconfig(&url, "admin", &["system:masters"]);
        Self {
            client,
            kubeconfig,
            etcd_url,
            ca_pem: pki.ca.pem.clone(),
            url,
            _processes: vec![apiserver],
            _etcd: etcd,
            _dir: dir,
        }
    }
}

impl Upstream {
    /// Runs upstream's kube-controller-manager beside the server with only `controllers`
    /// (some of what Capstan's server does itself, such as ClusterRole aggregation, is a
    /// controller manager's work upstream).
    fn start_controllers(&mut self, controllers: &str) {
        let bin = upstream::binaries();
        let process = Process::start(
            "kube-controller-manager",
            &bin.join("kube-controller-manager"),
            &[
                format!("--kubeconfig={}", self.kubeconfig.display()),
                format!("--controllers={controllers}"),
                "--leader-elect=false".into(),
                "--secure-port=0".into(),
            ],
            &[],
            self._dir.path(),
        );
        self._processes.push(process);
    }
}

/// `POST` of `body` to `path` on one server; panics unless it was created (or was there).
async fn create_on(client: &RawClient, path: &str, body: &serde_json::Value) {
    let r = client
        .request(
            Method::POST,
            path,
            &[("content-type", "application/json")],
            serde_json::to_vec(body).unwrap(),
        )
        .await;
    assert!(
        r.status == 201 || r.status == 409,
        "POST {path}: {} {}",
        r.status,
        String::from_utf8_lossy(&r.body)
    );
}

fn capstan(server: &TestServer) -> RawClient {
    RawClient::new(&server.url(), server.ca_pem(), Some(server.token()))
}

/// The labels tried on each collection: every kind's own, aliases, and nonsense.
const LABELS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.host",
    "status.phase",
    "status.podIP",
    "spec.unschedulable",
    "spec.clusterIP",
    "spec.type",
    "type",
    "status.replicas",
    "status.successful",
    "spec.signerName",
    "involvedObject.name",
    "reason",
    "source",
    "regarding.name",
    "reportingController",
    "spec.volumeName",
    "no.such.field",
];

const COLLECTIONS: &[&str] = &[
    "/api/v1/pods",
    "/api/v1/nodes",
    "/api/v1/namespaces",
    "/api/v1/services",
    "/api/v1/secrets",
    "/api/v1/configmaps",
    "/api/v1/events",
    "/api/v1/replicationcontrollers",
    "/api/v1/persistentvolumes",
    "/apis/events.k8s.io/v1/events",
    "/apis/apps/v1/replicasets",
    "/apis/batch/v1/jobs",
    "/apis/certificates.k8s.io/v1/certificatesigningrequests",
    "/apis/storage.k8s.io/v1/storageclasses",
];

/// Every label on every collection: accepted by both or refused by both, with the same
/// `Status` body byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_selectors_are_accepted_and_refused_as_upstream_does() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let ours = capstan(&server);
    let mut differences = Vec::new();
    for collection in COLLECTIONS {
        for label in LABELS {
            let path = format!("{collection}?limit=1&fieldSelector={label}%3Dx");
            let theirs = upstream.client.get(&path).await;
            let mine = ours.get(&path).await;
            let same = theirs.status == mine.status
                && (theirs.status == 200 || theirs.body.trim_ascii() == mine.body.trim_ascii());
            if !same {
                differences.push(format!(
                    "{path}:\n  upstream {} {}\n  capstan  {} {}",
                    theirs.status,
                    String::from_utf8_lossy(&theirs.body),
                    mine.status,
                    String::from_utf8_lossy(&mine.body)
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The differences from upstream that are known, each with its reason: `METHOD PATH # why`.
const KNOWN: &str = include_str!("upstream-differences.txt");

/// Whether `method path` is listed in [`KNOWN`].
fn known(method: &Method, path: &str) -> bool {
    KNOWN
        .lines()
        .filter_map(|l| l.split('#').next())
        .any(|l| l.trim() == format!("{method} {path}"))
}

/// Errors of every common kind come in the same bytes from both servers (but for the
/// differences listed in `upstream-differences.txt`, which must still differ: a fixed one is
/// taken off the list).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_statuses_are_byte_identical() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let ours = capstan(&server);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a<b>&c"}});
    /// A request: method, path, body and headers.
    type Request<'a> = (Method, &'a str, Vec<u8>, &'a [(&'a str, &'a str)]);
    const JSON: &[(&str, &str)] = &[("content-type", "application/json")];
    let requests: Vec<Request> = vec![
        (
            Method::GET,
            "/api/v1/namespaces/default/configmaps/missing",
            Vec::new(),
            JSON,
        ),
        (
            Method::GET,
            "/apis/apps/v1/namespaces/default/deployments/missing",
            Vec::new(),
            JSON,
        ),
        (
            Method::GET,
            "/api/v1/pods?fieldSelector=spec.nodeName%3E1",
            Vec::new(),
            JSON,
        ),
        (
            Method::GET,
            "/api/v1/pods?labelSelector=a%20in%20(",
            Vec::new(),
            JSON,
        ),
        (
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            serde_json::to_vec(&cm).unwrap(),
            JSON,
        ),
        (
            Method::DELETE,
            "/api/v1/namespaces/nowhere",
            Vec::new(),
            JSON,
        ),
        // 406: no representation the client accepts (the Status lists the ones offered).
        (
            Method::GET,
            "/api/v1/namespaces/default/secrets",
            Vec::new(),
            &[("accept", "text/html")],
        ),
        (
            Method::GET,
            "/apis/storage.k8s.io/v1/storageclasses",
            Vec::new(),
            &[("accept", "application/json;as=Table;g=meta.k8s.io;v=v2")],
        ),
        // 415: a body in a form the server does not read, created or patched.
        (
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            serde_json::to_vec(&cm).unwrap(),
            &[("content-type", "text/plain")],
        ),
        (
            Method::PATCH,
            "/api/v1/namespaces/default/configmaps/missing",
            b"{}".to_vec(),
            &[("content-type", "text/plain")],
        ),
    ];
    let mut differences = Vec::new();
    for (method, path, body, headers) in requests {
        let theirs = upstream
            .client
            .request(method.clone(), path, headers, body.clone())
            .await;
        let mine = ours.request(method.clone(), path, headers, body).await;
        let same = theirs.status == mine.status && theirs.body == mine.body;
        if known(&method, path) {
            assert!(
                !same,
                "{method} {path} is listed as a difference but is the same"
            );
            continue;
        }
        if !same {
            differences.push(format!(
                "{method} {path} {headers:?}:\n  upstream {} {}\n  capstan  {} {}",
                theirs.status,
                String::from_utf8_lossy(&theirs.body),
                mine.status,
                String::from_utf8_lossy(&mine.body)
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The frames of a protobuf watch (read until the server ends it), each decoded by
/// `k8s-rs-pb` as a bare `WatchEvent` whose object is a whole protobuf body.
async fn watch_frames(client: &RawClient, path: &str) -> Vec<(String, core::ConfigMap)> {
    let answer = client
        .request(
            Method::GET,
            path,
            &[("accept", "application/vnd.kubernetes.protobuf;stream=watch")],
            Vec::new(),
        )
        .await;
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let mut events = Vec::new();
    let mut rest = &answer.body[..];
    while rest.len() >= 4 {
        let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        let frame = &rest[4..4 + len];
        rest = &rest[4 + len..];
        let event = meta::WatchEvent::parse_from_bytes(frame)
            .unwrap_or_else(|e| panic!("a frame is not a bare WatchEvent: {e}"));
        let raw = event.object.raw();
        let body = raw
            .strip_prefix(b"k8s\0")
            .expect("the object keeps its magic");
        let unknown = Unknown::parse_from_bytes(body).unwrap();
        assert_eq!(unknown.typeMeta.kind(), "ConfigMap");
        events.push((
            event.type_().to_string(),
            core::ConfigMap::parse_from_bytes(unknown.raw()).unwrap(),
        ));
    }
    assert!(rest.is_empty(), "a cut frame");
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_watch_frames_are_upstreams() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let ours = capstan(&server);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "watched"}, "data": {"k": "v"}});
    let path = "/api/v1/namespaces/default/configmaps";
    for client in [&upstream.client, &ours] {
        let created = client.send_json(Method::POST, path, &cm).await;
        assert_eq!(created.status, 201);
    }
    let watch = format!("{path}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dwatched");
    let theirs = watch_frames(&upstream.client, &watch).await;
    let mine = watch_frames(&ours, &watch).await;
    let summary = |events: &[(String, core::ConfigMap)]| -> Vec<(String, String, String)> {
        events
            .iter()
            .map(|(t, cm)| {
                (
                    t.clone(),
                    cm.metadata.name().to_string(),
                    cm.data["k"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(summary(&theirs), summary(&mine));
    assert_eq!(
        summary(&mine),
        [("ADDED".to_string(), "watched".to_string(), "v".to_string())]
    );

    // A deletion replayed from before it carries the last state at the deletion's
    // resourceVersion (later than the object's own), on both.
    for (client, created) in [(&upstream.client, &theirs), (&ours, &mine)] {
        let before = created[0].1.metadata.resourceVersion().to_string();
        let deleted = client
            .request(Method::DELETE, &format!("{path}/watched"), &[], Vec::new())
            .await;
        assert_eq!(deleted.status, 200);
        let replay = format!("{watch}&resourceVersion={before}");
        let events = watch_frames(client, &replay).await;
        assert_eq!(
            summary(&events),
            [(
                "DELETED".to_string(),
                "watched".to_string(),
                "v".to_string()
            )]
        );
        let at: u64 = events[0].1.metadata.resourceVersion().parse().unwrap();
        assert!(at > before.parse().unwrap(), "{at} after {before}");
    }
}

/// capstan-client (the scheduler's client) reads upstream's protobuf lists and watches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capstan_client_reads_upstreams_protobuf() {
    use futures_util::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    let upstream = Upstream::start().await;
    let config = capstan_client::Config::from_kubeconfig(&upstream.kubeconfig, None).unwrap();
    assert_eq!(config.content_type, capstan_client::ContentType::Protobuf);
    let client = capstan_client::Client::new(config).unwrap();
    let list = client
        .list::<ConfigMap>(Some("default"), &Default::default())
        .await
        .unwrap();
    let params = capstan_client::ListParams {
        resource_version: list.metadata.resource_version.clone(),
        ..Default::default()
    };
    let watch = client
        .watch::<ConfigMap>(Some("default"), &params, 5)
        .await
        .unwrap();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen"}});
    let created = upstream
        .client
        .send_json(Method::POST, "/api/v1/namespaces/default/configmaps", &cm)
        .await;
    assert_eq!(created.status, 201);
    let mut watch = std::pin::pin!(watch);
    let mut seen = false;
    while let Some(event) = watch.next().await {
        if let capstan_client::WatchEvent::Added(cm) = event.unwrap()
            && cm.metadata.name.as_deref() == Some("seen")
        {
            seen = true;
            break;
        }
    }
    assert!(seen, "the watch delivered the new ConfigMap");
}

/// Objects users create, sent as JSON to both servers.
fn user_objects() -> Vec<(&'static str, serde_json::Value)> {
    let template = json!({"metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}});
    let selector = json!({"matchLabels": {"app": "x"}});
    vec![
        (
            "/api/v1/namespaces/default/configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}}),
        ),
        (
            "/api/v1/namespaces/default/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}}),
        ),
        (
            "/api/v1/namespaces/default/services",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
                "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}}),
        ),
        (
            "/api/v1/namespaces/default/pods",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": template["spec"]}),
        ),
        (
            "/apis/apps/v1/namespaces/default/deployments",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"selector": selector, "template": template}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/statefulsets",
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss"},
                "spec": {"serviceName": "x", "selector": selector, "template": template}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/daemonsets",
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
                "spec": {"selector": selector, "template": template}}),
        ),
        (
            "/apis/batch/v1/namespaces/default/jobs",
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                "spec": {"template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}]}}}}),
        ),
        (
            "/apis/batch/v1/namespaces/default/cronjobs",
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
                "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                    "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
        ),
    ]
}

/// What must differ between two servers, masked: identities, times, versions, allocated
/// addresses, generated name suffixes; and the OpenShift fork's extra projected source (see
/// `../shared/k8s/README.md`: upstream Kubernetes has none). managedFields are masked whole:
/// besides the differences [`masked_but_managed_fields`] masks, the entries that subresource
/// writes record differ (docs/api-behaviour.md, "managedFields"). So is a DaemonSet's
/// template-generation annotation, which upstream's metadata-only forms lack.
fn masked(doc: serde_json::Value) -> serde_json::Value {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                if let Some(fields) = map.get_mut("managedFields") {
                    *fields = json!("*");
                }
                // Upstream's metadata-only forms (a Table row's object, PartialObjectMetadata)
                // lack this annotation: its internal DaemonSet keeps the value in its spec, and
                // only the conversion to apps/v1 writes the annotation.
                if let Some(serde_json::Value::Object(annotations)) = map.get_mut("annotations") {
                    annotations.remove("deprecated.daemonset.template.generation");
                    if annotations.is_empty() {
                        map.remove("annotations");
                    }
                }
                map.values_mut().for_each(walk);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut doc = masked_but_managed_fields(doc);
    walk(&mut doc);
    doc
}

/// [`masked`], but for managedFields, where only times and the `.` marks are masked, a known
/// difference (docs/api-behaviour.md, "managedFields"): upstream marks a new struct or list
/// with `.` when the Go zero value of the kind lacks it (a pointer, or a field with
/// `omitempty`), which no schema served says; Capstan marks every new map, list and struct
/// below the top level.
fn masked_but_managed_fields(mut doc: serde_json::Value) -> serde_json::Value {
    fn walk(v: &mut serde_json::Value, uid: &str) {
        match v {
            serde_json::Value::Object(map) => {
                for key in [
                    "uid",
                    "creationTimestamp",
                    "resourceVersion",
                    "time",
                    "clusterIP",
                    "clusterIPs",
                ] {
                    if let Some(value) = map.get_mut(key) {
                        *value = json!("*");
                    }
                }
                map.remove(".");
                if let Some(serde_json::Value::Array(sources)) = map.get_mut("sources") {
                    sources.retain(|s| s["configMap"]["name"] != "openshift-service-ca.crt");
                }
                map.values_mut().for_each(|v| walk(v, uid));
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| walk(v, uid)),
            serde_json::Value::String(s) if s == uid => *s = "*".into(),
            serde_json::Value::String(s) if s.starts_with("kube-api-access-") => {
                *s = "kube-api-access-*".into()
            }
            _ => {}
        }
    }
    let uid = doc["metadata"]["uid"].as_str().unwrap_or("-").to_string();
    walk(&mut doc, &uid);
    doc
}

/// Fields of a create's managedFields entry that Capstan owns and upstream does not, known
/// (docs/api-behaviour.md, "managedFields"): upstream compares a create with the Go zero
/// value of the kind, in which a CronJob's job template and its pod template have metadata
/// (non-pointer structs all the way down); Capstan's comparison object has only the top-level
/// structs, so the empty template metadata its defaulting leaves counts as set.
const KNOWN_MANAGED_FIELDS: &[(&str, &str, &str)] = &[
    (
        "/apis/batch/v1/namespaces/default/cronjobs",
        "/f:spec/f:jobTemplate/f:metadata",
        "a CronJob's job template metadata",
    ),
    (
        "/apis/batch/v1/namespaces/default/cronjobs",
        "/f:spec/f:jobTemplate/f:spec/f:template/f:metadata",
        "a CronJob's pod template metadata",
    ),
];

/// The created objects are the same on both servers: the same defaults, generated fields,
/// labels, annotations and managedFields, once what must differ is masked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_objects_are_upstreams() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let ours = capstan(&server);
    let differences = create_user_objects(&upstream, &ours).await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Creates [`user_objects`] in both servers; the differences between the created objects.
async fn create_user_objects(upstream: &Upstream, ours: &RawClient) -> Vec<String> {
    // No controller manager runs beside upstream's server here: its default account is made
    // by hand (Capstan's namespace controller makes its own).
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    let mut made = 0;
    while made != 201 && made != 409 {
        made = upstream
            .client
            .send_json(
                Method::POST,
                "/api/v1/namespaces/default/serviceaccounts",
                &account,
            )
            .await
            .status
            .as_u16();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut differences = Vec::new();
    for (path, object) in user_objects() {
        let theirs = upstream.client.send_json(Method::POST, path, &object).await;
        let mine = ours.send_json(Method::POST, path, &object).await;
        assert_eq!(
            theirs.status,
            201,
            "{path}: {}",
            String::from_utf8_lossy(&theirs.body)
        );
        assert_eq!(
            mine.status,
            201,
            "{path}: {}",
            String::from_utf8_lossy(&mine.body)
        );
        let (theirs, mut mine) = (
            masked_but_managed_fields(theirs.json()),
            masked_but_managed_fields(mine.json()),
        );
        for (known_path, pointer, why) in KNOWN_MANAGED_FIELDS {
            if path == *known_path {
                let entry = &mut mine["metadata"]["managedFields"][0]["fieldsV1"];
                let (parent, last) = pointer.rsplit_once('/').unwrap();
                let removed = entry
                    .pointer_mut(parent)
                    .and_then(|p| p.as_object_mut())
                    .and_then(|p| p.remove(last));
                assert!(
                    removed.is_some(),
                    "a known difference is gone (take it off KNOWN_MANAGED_FIELDS): {why}"
                );
            }
        }
        if theirs != mine {
            differences.push(format!(
                "POST {path}:\n  upstream {theirs}\n  capstan  {mine}"
            ));
        }
    }
    differences
}

/// A Table with what must differ masked: the objects inside (as [`masked`]) and the cells of
/// columns that show ages.
fn masked_table(mut table: serde_json::Value) -> serde_json::Value {
    let ages: Vec<usize> = table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, c)| c["name"] == "Age" || c["name"] == "Last Schedule")
        .map(|(i, _)| i)
        .collect();
    // Column descriptions are upstream's API documentation in its own words; Capstan
    // writes its own (listed in upstream-differences.txt).
    for column in table["columnDefinitions"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        column["description"] = json!("*");
    }
    for row in table["rows"].as_array_mut().into_iter().flatten() {
        for i in &ages {
            row["cells"][*i] = json!("*");
        }
        // Allocated addresses and uids in selectors differ by nature.
        for cell in row["cells"].as_array_mut().into_iter().flatten() {
            let text = cell.as_str().unwrap_or_default();
            if text.starts_with("10.0.0.") || text.contains("controller-uid=") {
                *cell = json!("*");
            }
        }
        let object = row["object"].take();
        row["object"] = masked(object);
    }
    table["metadata"]["resourceVersion"] = json!("*");
    table
}

/// Each created object read back from both servers, as JSON, YAML, a Table and
/// PartialObjectMetadata, one by one and as lists: the same answers once masked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_in_every_representation_are_upstreams() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let ours = capstan(&server);
    let created = create_user_objects(&upstream, &ours).await;
    assert!(created.is_empty(), "{}", created.join("\n"));
    const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
    const METADATA: &str = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";
    const METADATA_LIST: &str = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
    let mut differences = Vec::new();
    let mut zeros_dropped = 0;
    for (collection, object) in user_objects() {
        let name = object["metadata"]["name"].as_str().unwrap();
        let one = format!("{collection}/{name}");
        let reads = [
            (one.clone(), "application/json"),
            (one.clone(), "application/yaml"),
            (one.clone(), TABLE),
            (one.clone(), METADATA),
            (collection.to_string(), TABLE),
            (collection.to_string(), METADATA_LIST),
            (format!("{collection}?limit=1"), "application/json"),
        ];
        for (path, accept) in reads {
            let headers = [("accept", accept)];
            let theirs = upstream
                .client
                .request(Method::GET, &path, &headers, Vec::new())
                .await;
            let mine = ours.request(Method::GET, &path, &headers, Vec::new()).await;
            let read = |body: &[u8]| -> serde_json::Value {
                if accept == "application/yaml" {
                    capstan_negotiation::yaml::to_json(body).unwrap_or_default()
                } else {
                    serde_json::from_slice(body).unwrap_or_default()
                }
            };
            // Only the objects created here: each server makes others of its own (Capstan's
            // server publishes kube-root-ca.crt, upstream's controller manager would).
            let ours_only = |doc: &mut serde_json::Value| {
                let created = |v: &serde_json::Value| {
                    let meta = if v["object"].is_object() {
                        &v["object"]["metadata"]
                    } else {
                        &v["metadata"]
                    };
                    meta["name"] == *name
                };
                for list in ["items", "rows"] {
                    if let Some(items) = doc[list].as_array_mut() {
                        items.retain(created);
                    }
                }
            };
            let mask = |mut doc: serde_json::Value| {
                ours_only(&mut doc);
                if let Some(items) = doc["items"].as_array_mut() {
                    // Lists: each item masked with its own uid.
                    for item in items.iter_mut() {
                        *item = masked(item.take());
                    }
                }
                let mut doc = if accept.contains("as=Table") {
                    masked_table(doc)
                } else {
                    masked(doc)
                };
                doc["metadata"]["resourceVersion"] = json!("*");
                doc["metadata"]["continue"] = json!("*");
                doc["metadata"]["remainingItemCount"] = json!("*");
                doc
            };
            let content_type = |r: &capstan_e2e::RawResponse| {
                r.headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string()
            };
            let (theirs_type, mine_type) = (content_type(&theirs), content_type(&mine));
            let (a, b) = (mask(read(&theirs.body)), mask(read(&mine.body)));
            if theirs.status != mine.status || a != b || theirs_type != mine_type {
                differences.push(format!(
                    "GET {path} ({accept}):\n  upstream {} {theirs_type} {a}\n  capstan  {} {mine_type} {b}",
                    theirs.status, mine.status
                ));
            }
        }
        let (protobuf, dropped) = protobuf_reads_agree(&upstream.client, &ours, &one).await;
        differences.extend(protobuf);
        zeros_dropped += dropped;
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert!(
        zeros_dropped > 0 || !known(&Method::GET, "protobuf zero values"),
        "no protobuf zero value differs any more: take it off upstream-differences.txt"
    );
}

/// One object read as protobuf from both servers: upstream's bytes, decoded by Capstan's
/// codec, are the object upstream answers in JSON (what Capstan reads from every Go client
/// writing protobuf), and Capstan's own bytes decode to Capstan's JSON answer. Also counts
/// the zeros dropped under the listed `protobuf zero values` difference.
async fn protobuf_reads_agree(
    upstream: &RawClient,
    ours: &RawClient,
    path: &str,
) -> (Vec<String>, usize) {
    const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
    let codec = capstan_negotiation::protobuf::Codec::default();
    let mut differences = Vec::new();
    let mut dropped = 0;
    for (server, client) in [("upstream", upstream), ("capstan", ours)] {
        let bytes = client
            .request(Method::GET, path, &[("accept", PROTOBUF)], Vec::new())
            .await;
        let mut json = client.get(path).await.json();
        let mut decoded = match codec.decode_object(&bytes.body) {
            Ok(decoded) => decoded,
            Err(e) => {
                differences.push(format!("GET {path} ({PROTOBUF}) from {server}: {e}"));
                continue;
            }
        };
        if known(&Method::GET, "protobuf zero values") {
            dropped += drop_unsent_zeros(&mut decoded, &mut json);
        }
        if decoded != json {
            differences.push(format!(
                "GET {path} ({PROTOBUF}) from {server} decodes to\n  {decoded}\nnot its JSON\n  {json}"
            ));
        }
    }
    (differences, dropped)
}

/// Removes from either document the zero values (`0`, `false`, `""`, `null`) the other does
/// not have (the difference listed as `protobuf zero values`); how many.
fn drop_unsent_zeros(a: &mut serde_json::Value, b: &mut serde_json::Value) -> usize {
    use serde_json::{Map, Value};
    fn zero(v: &Value) -> bool {
        matches!(v, Value::Null | Value::Bool(false))
            || v.as_f64() == Some(0.0)
            || v.as_str() == Some("")
    }
    fn drop_missing(fields: &mut Map<String, Value>, other: &Map<String, Value>) -> usize {
        let before = fields.len();
        fields.retain(|key, value| other.contains_key(key) || !zero(value));
        before - fields.len()
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut dropped = drop_missing(x, y) + drop_missing(y, x);
            for (key, value) in x.iter_mut() {
                if let Some(other) = y.get_mut(key) {
                    dropped += drop_unsent_zeros(value, other);
                }
            }
            dropped
        }
        (Value::Array(x), Value::Array(y)) => x
            .iter_mut()
            .zip(y.iter_mut())
            .map(|(item, other)| drop_unsent_zeros(item, other))
            .sum(),
        _ => 0,
    }
}

mod admission_versions;
mod api_services;
mod authorization;
mod beta_features;
mod deletes;
mod discovery;
mod impersonation;
mod mutating_policies;
mod node_tokens;
mod pod_security;
mod streams;
mod subresources;
mod warnings;
mod writes;

/// A chunked list whose revision etcd has compacted behind the server's back (another client
/// compacting): upstream v1.36 serves the next page from its watch cache (the snapshot is
/// still there), with the remaining count; Capstan, on its own etcd, answers the same.
/// Secrets, not ConfigMaps: Capstan publishes `kube-root-ca.crt` in every namespace (as
/// upstream's controller manager would), and whether it was there before the first page
/// changed Capstan's remaining count (a flake seen under load).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continue_token_past_an_outside_compaction_is_answered_as_upstream() {
    use capstan_etcd::testing::EtcdCluster;
    use capstan_etcd::{EtcdConfig, EtcdStore};
    use capstan_storage::Store;
    let upstream = Upstream::start().await;
    let cluster = EtcdCluster::start(1);
    let endpoints = cluster.endpoints();
    let server = TestServer::start_with(move |config| {
        config.etcd = Some(EtcdConfig::new(endpoints));
    })
    .await;
    let path = "/api/v1/namespaces/default/secrets";
    let mut answers = Vec::new();
    for (client, etcd) in [
        (&upstream.client, vec![upstream.etcd_url.clone()]),
        (&capstan(&server), cluster.endpoints()),
    ] {
        let create = |name: String| {
            let body = serde_json::to_vec(&json!({"metadata": {"name": name}})).unwrap();
            client.request(
                Method::POST,
                path,
                &[("content-type", "application/json")],
                body,
            )
        };
        for i in 0..5 {
            assert_eq!(create(format!("c{i}")).await.status, 201);
        }
        let first = client.get(&format!("{path}?limit=2")).await.json();
        let token = first["metadata"]["continue"].as_str().unwrap().to_string();
        let names = |page: &Value| -> Vec<Value> {
            page["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| i["metadata"]["name"].clone())
                .collect()
        };
        // Continued before anything changes: the rest of the list is counted as it stands.
        let unchanged = client
            .get(&format!("{path}?limit=2&continue={token}"))
            .await
            .json();
        let unchanged = (
            names(&unchanged),
            unchanged["metadata"]["remainingItemCount"].clone(),
        );
        assert_eq!(create("c5".into()).await.status, 201);
        let store = EtcdStore::connect(&EtcdConfig::new(etcd)).await.unwrap();
        let now = store.current_revision().await.unwrap();
        store.compact(now).await.unwrap();
        let next = client
            .get(&format!("{path}?limit=2&continue={token}"))
            .await;
        let page = next.json();
        answers.push((
            unchanged.clone(),
            next.status,
            names(&page),
            page["metadata"]["remainingItemCount"].clone(),
            page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"],
        ));
    }
    assert_eq!(answers[0].1, 200, "upstream serves it: {answers:?}");
    assert_eq!(answers[0], answers[1], "upstream, then Capstan");
}

/// The whole collection read in pages of 500 following the continue tokens: the time it took
/// and how many objects came.
async fn paged_list(client: &RawClient, path: &str) -> (Duration, usize) {
    let start = std::time::Instant::now();
    let mut token = String::new();
    let mut items = 0;
    loop {
        let mut url = format!("{path}?limit=500");
        if !token.is_empty() {
            url.push_str(&format!("&continue={token}"));
        }
        let page = client.get(&url).await;
        assert_eq!(page.status, 200);
        let page = page.json();
        items += page["items"].as_array().map_or(0, Vec::len);
        match page["metadata"]["continue"].as_str() {
            Some(next) if !next.is_empty() => token = next.to_string(),
            _ => return (start.elapsed(), items),
        }
    }
}

/// Creates `count` StorageClasses through `client` with 16 concurrent writers.
async fn populate(client: &RawClient, count: usize) {
    let mut writers = Vec::new();
    for w in 0..16 {
        let client = client.clone();
        writers.push(tokio::spawn(async move {
            for i in (w..count).step_by(16) {
                let body = serde_json::to_vec(&json!({"apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass", "metadata": {"name": format!("paged-{i:05}")},
                    "provisioner": "example.com/p"}))
                .unwrap();
                let r = client
                    .request(
                        Method::POST,
                        "/apis/storage.k8s.io/v1/storageclasses",
                        &[("content-type", "application/json")],
                        body,
                    )
                    .await;
                assert!(r.status == 201 || r.status == 409, "{}", r.status);
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
}

/// Paged lists of 22,000 StorageClasses (pages of 500) and one unpaged list, on Capstan and
/// on upstream's kube-apiserver v1.36.2 (with its etcd) in one run, alternating.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --release --ignored --nocapture"]
async fn paged_lists_side_by_side() {
    const OBJECTS: usize = 22_000;
    const PATH: &str = "/apis/storage.k8s.io/v1/storageclasses";
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let ours = capstan(&server);
    populate(&upstream.client, OBJECTS).await;
    populate(&ours, OBJECTS).await;
    let mut times: [(Vec<f64>, Vec<f64>); 2] = Default::default();
    for _round in 0..7 {
        for (i, client) in [&upstream.client, &ours].into_iter().enumerate() {
            let (paged, items) = paged_list(client, PATH).await;
            assert!(items >= OBJECTS, "{items}");
            let start = std::time::Instant::now();
            assert_eq!(client.get(PATH).await.status, 200);
            times[i].0.push(paged.as_secs_f64() * 1e3);
            times[i].1.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    for (name, (paged, whole)) in ["upstream", "Capstan"].iter().zip(times.iter_mut()) {
        paged.sort_by(f64::total_cmp);
        whole.sort_by(f64::total_cmp);
        println!(
            "{name}: {OBJECTS} in pages of 500: p50 {:.0} ms (min {:.0}, max {:.0}); unpaged p50 {:.0} ms",
            paged[paged.len() / 2],
            paged[0],
            paged[paged.len() - 1],
            whole[whole.len() / 2]
        );
    }
}
