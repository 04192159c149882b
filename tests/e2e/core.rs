//! The core resources: namespaces and their lifecycle, pods (every field kept, binding,
//! graceful deletion, field selectors), status subresources, leases; with kubectl, the kube
//! client and raw HTTP.

use std::time::Duration;

use capstan_e2e::kubectl;
use capstan_testing::TestServer;
use http::Method;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use crate::{admin, ok};

/// A pod manifest with many of the fields real manifests carry.
fn big_pod(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "web"}, "annotations": {"note": "big"}},
        "spec": {
            "initContainers": [{"name": "init", "image": "busybox:1.36", "command": ["sh", "-c", "true"]}],
            "containers": [{
                "name": "app", "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "name": "http"}],
                "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80}},
                "readinessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 5},
                "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "config", "mountPath": "/etc/app"}]
            }],
            "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "1Gi"}}, {"name": "config", "configMap": {"name": "app-config"}}],
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}},
                "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}}]}
            },
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}}],
            "securityContext": {"fsGroup": 2000, "seccompProfile": {"type": "RuntimeDefault"}},
            "priorityClassName": "system-cluster-critical"
        }
    })
}

/// Every value of `sent` is in `got` (arrays element by element): nothing the client sent is
/// lost; defaults may add more.
fn assert_kept(sent: &Value, got: &Value, path: &str) {
    match (sent, got) {
        (Value::Object(s), Value::Object(g)) => {
            for (k, v) in s {
                let inner = format!("{path}.{k}");
                assert!(g.contains_key(k), "{inner} is missing in {got}");
                assert_kept(v, &g[k], &inner);
            }
        }
        (Value::Array(s), Value::Array(g)) => {
            for (i, v) in s.iter().enumerate() {
                let inner = format!("{path}[{i}]");
                assert!(i < g.len(), "{inner} is missing");
                assert_kept(v, &g[i], &inner);
            }
        }
        // A number sent as 80 may come back as 80 (never as a string).
        _ => assert_eq!(sent, got, "{path}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_runs_a_namespace_through_its_life() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let dir = server.data_dir().to_path_buf();
    let raw = admin(&server);
    let write = |name: &str, v: &Value| {
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let ns = write(
        "ns.json",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
    );
    let pod = big_pod("shop", "web");
    let pod_file = write("pod.json", &pod);
    let cm = write(
        "cm.json",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app-config", "namespace": "shop"}, "data": {"a": "1"}}),
    );
    let event = write(
        "ev.json",
        &json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "shop"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "shop"}, "reason": "Testing", "message": "hello", "type": "Normal"}),
    );

    let kc2 = kc.clone();
    let files = [ns, pod_file.clone(), cm, event];
    let got = tokio::task::spawn_blocking(move || {
        // The four namespaces of every cluster exist from the start.
        let listed = ok(kubectl(&kc2, &["get", "namespaces", "-o", "name"]));
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            assert!(listed.contains(&format!("namespace/{name}")), "{listed}");
        }
        for file in &files {
            ok(kubectl(&kc2, &["create", "-f", file]));
        }
        let wide = ok(kubectl(&kc2, &["get", "pods", "-n", "shop", "-o", "wide"]));
        assert!(wide.lines().any(|l| l.starts_with("web ")), "{wide}");
        let unbound = unbound_in_shop(&kc2);
        assert_eq!(unbound.trim(), "pod/web");
        let events = ok(kubectl(
            &kc2,
            &["get", "events", "-n", "shop", "-o", "name"],
        ));
        assert!(events.contains("web.1"), "{events}");
        let sa = ok(kubectl(
            &kc2,
            &[
                "get",
                "serviceaccount",
                "default",
                "-n",
                "shop",
                "-o",
                "name",
            ],
        ));
        assert_eq!(sa.trim(), "serviceaccount/default");
        ok(kubectl(
            &kc2,
            &["get", "pod", "web", "-n", "shop", "-o", "json"],
        ))
    })
    .await
    .unwrap();
    let got: Value = serde_json::from_str(&got).unwrap();
    assert_kept(&pod["spec"], &got["spec"], "spec");
    assert_kept(
        &pod["metadata"]["labels"],
        &got["metadata"]["labels"],
        "labels",
    );
    assert_eq!(got["spec"]["schedulerName"], "default-scheduler");
    assert_eq!(got["spec"]["priority"], 2_000_000_000);
    assert_eq!(got["status"]["phase"], "Pending");
    assert_eq!(got["status"]["qosClass"], "Burstable");

    // Bound through the binding subresource, it is selected by its node.
    let bound = raw
        .send_json(
            Method::POST,
            "/api/v1/namespaces/shop/pods/web/binding",
            &json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"}, "target": {"kind": "Node", "name": "n1"}}),
        )
        .await;
    assert_eq!(
        bound.status,
        201,
        "{}",
        String::from_utf8_lossy(&bound.body)
    );
    let kc2 = kc.clone();
    tokio::task::spawn_blocking(move || {
        let on_n1 = ok(kubectl(
            &kc2,
            &[
                "get",
                "pods",
                "-A",
                "--field-selector",
                "spec.nodeName=n1",
                "-o",
                "name",
            ],
        ));
        assert_eq!(on_n1.trim(), "pod/web");
        let unbound = unbound_in_shop(&kc2);
        assert_eq!(unbound.trim(), "");
        // A bound pod waits for its grace period; --force --grace-period=0 removes it now.
        ok(kubectl(
            &kc2,
            &["delete", "pod", "web", "-n", "shop", "--wait=false"],
        ));
        let terminating = ok(kubectl(
            &kc2,
            &[
                "get",
                "pod",
                "web",
                "-n",
                "shop",
                "-o",
                "jsonpath={.metadata.deletionGracePeriodSeconds}",
            ],
        ));
        assert_eq!(terminating, "30");
        ok(kubectl(
            &kc2,
            &[
                "delete",
                "pod",
                "web",
                "-n",
                "shop",
                "--force",
                "--grace-period=0",
            ],
        ));
        let (found, _, err) = kubectl(&kc2, &["get", "pod", "web", "-n", "shop"]);
        assert!(!found && err.contains("NotFound"), "{err}");
        // The namespace goes with its content.
        ok(kubectl(&kc2, &["create", "-f", &pod_file]));
        ok(kubectl(&kc2, &["delete", "namespace", "shop"]));
    })
    .await
    .unwrap();
    eventually_gone(&raw, "/api/v1/namespaces/shop").await;
    for path in [
        "/api/v1/namespaces/shop/pods",
        "/api/v1/namespaces/shop/configmaps",
        "/api/v1/namespaces/shop/events",
    ] {
        let list = raw.get(path).await.json();
        assert_eq!(list["items"], json!([]), "{path}");
    }
    let r = raw
        .send_json(
            Method::POST,
            "/api/v1/namespaces/shop/pods",
            &big_pod("shop", "late"),
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["message"], "namespaces \"shop\" not found");
}

/// The unbound pods of namespace `shop`, as `kubectl get -o name` prints them.
fn unbound_in_shop(kc: &std::path::Path) -> String {
    let args = [
        "get",
        "pods",
        "-n",
        "shop",
        "--field-selector",
        "spec.nodeName=",
        "-o",
        "name",
    ];
    ok(kubectl(kc, &args))
}

async fn eventually_gone(raw: &capstan_e2e::RawClient, path: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let r = raw.get(path).await;
        if r.status == 404 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{path} is still there: {}",
            String::from_utf8_lossy(&r.body)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminating_namespace_takes_nothing_new() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let r = raw
        .send_json(
            Method::POST,
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "held"}}),
        )
        .await;
    assert_eq!(r.status, 201);
    let created = r.json();
    assert_eq!(created["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(created["status"]["phase"], "Active");
    assert_eq!(
        created["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "held"
    );
    // A config map that holds on: the namespace stays Terminating until it goes.
    let cm = json!({"metadata": {"name": "keep", "finalizers": ["example.com/hold"]}});
    let r = raw
        .send_json(Method::POST, "/api/v1/namespaces/held/configmaps", &cm)
        .await;
    assert_eq!(r.status, 201);
    let r = raw
        .request(Method::DELETE, "/api/v1/namespaces/held", &[], Vec::new())
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["status"]["phase"], "Terminating");

    let r = raw
        .send_json(
            Method::POST,
            "/api/v1/namespaces/held/configmaps",
            &json!({"metadata": {"name": "new"}}),
        )
        .await;
    assert_eq!(r.status, 403);
    let status = r.json();
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps \"new\" is forbidden: unable to create new content in namespace held because it is being terminated"
    );
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "NamespaceTerminating"
    );

    // The controller has asked the config map to go; it waits for its finalizer.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let cm = raw
            .get("/api/v1/namespaces/held/configmaps/keep")
            .await
            .json();
        if !cm["metadata"]["deletionTimestamp"].is_null() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the config map was never deleted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let still = raw.get("/api/v1/namespaces/held").await;
    assert_eq!(still.status, 200);
    let release = br#"{"metadata":{"finalizers":null}}"#.to_vec();
    let r = raw
        .request(
            Method::PATCH,
            "/api/v1/namespaces/held/configmaps/keep",
            &[("content-type", "application/merge-patch+json")],
            release,
        )
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    eventually_gone(&raw, "/api/v1/namespaces/held").await;

    // The cluster's own namespaces stay.
    let r = raw
        .request(
            Method::DELETE,
            "/api/v1/namespaces/default",
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "namespaces \"default\" is forbidden: this namespace may not be deleted"
    );
}

fn api_code(err: kube::Error) -> u16 {
    match err {
        kube::Error::Api(status) => status.code,
        other => panic!("not an API error: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_bind_once_and_keep_status_apart() {
    let server = TestServer::start().await;
    let client = server.client().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod: Pod = serde_json::from_value(big_pod("default", "p1")).unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.unwrap();
    assert_eq!(created.spec.as_ref().unwrap().node_name, None);

    let binding = |node: &str| json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"}, "target": {"kind": "Node", "name": node}});
    let _: kube::core::Status = pods
        .create_subresource("binding", "p1", &PostParams::default(), &binding("n1"))
        .await
        .unwrap();
    let bound = pods.get("p1").await.unwrap();
    assert_eq!(
        bound.spec.as_ref().unwrap().node_name.as_deref(),
        Some("n1")
    );
    let scheduled = bound.status.as_ref().unwrap().conditions.as_ref().unwrap();
    assert!(
        scheduled
            .iter()
            .any(|c| c.type_ == "PodScheduled" && c.status == "True")
    );
    let again = pods
        .create_subresource::<_, kube::core::Status>(
            "binding",
            "p1",
            &PostParams::default(),
            &binding("n2"),
        )
        .await
        .unwrap_err();
    assert_eq!(api_code(again), 409);

    // A write to the pod keeps the stored status; a write to pods/status keeps the spec.
    let mut changed = pods.get("p1").await.unwrap();
    changed.status.as_mut().unwrap().phase = Some("Running".into());
    changed
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("touched".into(), "yes".into());
    let replaced = pods
        .replace("p1", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(
        replaced.status.as_ref().unwrap().phase.as_deref(),
        Some("Pending")
    );
    assert_eq!(replaced.metadata.labels.as_ref().unwrap()["touched"], "yes");
    let mut status_write = replaced.clone();
    status_write.status.as_mut().unwrap().phase = Some("Running".into());
    status_write.spec.as_mut().unwrap().active_deadline_seconds = Some(5);
    let after = pods
        .replace_status("p1", &PostParams::default(), &status_write)
        .await
        .unwrap();
    assert_eq!(
        after.status.as_ref().unwrap().phase.as_deref(),
        Some("Running")
    );
    assert_eq!(after.spec.as_ref().unwrap().active_deadline_seconds, None);

    // Spec fields other than images are immutable: 422 naming the rule.
    let mut moved = after.clone();
    moved.spec.as_mut().unwrap().scheduler_name = Some("other".into());
    let err = pods
        .replace("p1", &PostParams::default(), &moved)
        .await
        .unwrap_err();
    assert_eq!(api_code(err), 422);

    // Graceful deletion of a bound pod, then a forced one.
    let deleting = pods.delete("p1", &DeleteParams::default()).await.unwrap();
    let marked = deleting
        .left()
        .expect("the pod is kept while its grace period runs");
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(30));
    pods.delete("p1", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    assert_eq!(api_code(pods.get("p1").await.unwrap_err()), 404);

    // A pod that was never bound goes at once.
    pods.create(&PostParams::default(), &pod).await.unwrap();
    assert!(
        pods.delete("p1", &DeleteParams::default())
            .await
            .unwrap()
            .is_left()
    );
    assert_eq!(api_code(pods.get("p1").await.unwrap_err()), 404);

    let namespaces: Api<Namespace> = Api::all(client);
    let ns = namespaces.get("kube-system").await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_renew_with_optimistic_concurrency() {
    let server = TestServer::start().await;
    let leases: Api<Lease> = Api::namespaced(server.client().await, "kube-system");
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": "capstan-scheduler"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:00.000000Z", "leaseTransitions": 0}
    }))
    .unwrap();
    let first = leases.create(&PostParams::default(), &lease).await.unwrap();
    // Two candidates read the same version; the first renewal wins, the second is a 409.
    let mut by_a = first.clone();
    by_a.spec.as_mut().unwrap().renew_time =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
            "2026-01-01T00:00:10.123456Z".parse().unwrap(),
        ));
    let mut by_b = first.clone();
    by_b.spec.as_mut().unwrap().holder_identity = Some("b".into());
    let renewed = leases
        .replace("capstan-scheduler", &PostParams::default(), &by_a)
        .await
        .unwrap();
    assert_ne!(
        renewed.metadata.resource_version,
        first.metadata.resource_version
    );
    let err = leases
        .replace("capstan-scheduler", &PostParams::default(), &by_b)
        .await
        .unwrap_err();
    assert_eq!(api_code(err), 409);
    let now = leases.get("capstan-scheduler").await.unwrap();
    let spec = now.spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    // Microsecond times survive.
    assert_eq!(
        serde_json::to_value(spec.renew_time).unwrap(),
        json!("2026-01-01T00:00:10.123456Z")
    );
    // PUT of a missing Lease creates it (upstream allows create-on-update for leases); a
    // missing ConfigMap stays a 404.
    let mut fresh = lease.clone();
    fresh.metadata.name = Some("made-by-put".into());
    let made = leases
        .replace("made-by-put", &PostParams::default(), &fresh)
        .await
        .unwrap();
    assert!(made.metadata.uid.is_some());
    let maps: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(server.client().await, "kube-system");
    let map: k8s_openapi::api::core::v1::ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "nope"}})).unwrap();
    let err = maps
        .replace("nope", &PostParams::default(), &map)
        .await
        .unwrap_err();
    assert_eq!(api_code(err), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_pod_survives_protobuf_both_ways() {
    use capstan_negotiation::protobuf::Codec;
    const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
    let server = TestServer::start().await;
    let raw = admin(&server);
    let codec = Codec::default();
    let sent = big_pod("default", "proto");
    // Sent as protobuf, answered as protobuf.
    let created = raw
        .request(
            Method::POST,
            "/api/v1/namespaces/default/pods",
            &[("content-type", PROTOBUF), ("accept", PROTOBUF)],
            codec.encode_object(&sent).unwrap(),
        )
        .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let created = codec.decode_object(&created.body).unwrap();
    assert_kept(&sent, &created, "");
    // The protobuf read is the JSON read, field for field.
    let as_json = raw
        .get("/api/v1/namespaces/default/pods/proto")
        .await
        .json();
    let as_protobuf = raw
        .request(
            Method::GET,
            "/api/v1/namespaces/default/pods/proto",
            &[("accept", PROTOBUF)],
            Vec::new(),
        )
        .await;
    assert_eq!(codec.decode_object(&as_protobuf.body).unwrap(), as_json);
    assert_eq!(as_json["spec"]["priority"], 2_000_000_000);
    assert_eq!(
        as_json["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"],
        80
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_one_collection_in_both_versions() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    const NEW: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
    const OLD: &str = "/api/v1/namespaces/default/events";
    let start = raw.get(NEW).await.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let created = raw
        .send_json(
            Method::POST,
            NEW,
            &json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": "scheduled"}, "eventTime": "2026-11-22T07:00:00.000001Z",
                "reportingController": "capstan-scheduler", "reportingInstance": "s-1",
                "action": "Binding", "reason": "Scheduled", "type": "Normal",
                "regarding": {"kind": "Pod", "namespace": "default", "name": "web"},
                "note": "bound to n1"}),
        )
        .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    assert_eq!(created.json()["apiVersion"], "events.k8s.io/v1");
    assert_eq!(created.json()["note"], "bound to n1");
    // The same object in the v1 form.
    let old = raw.get(&format!("{OLD}/scheduled")).await.json();
    assert_eq!(old["message"], "bound to n1");
    assert_eq!(old["involvedObject"]["name"], "web");
    assert_eq!(old["reportingComponent"], "capstan-scheduler");
    // Written in v1, read in events.k8s.io/v1.
    raw.send_json(
        Method::POST,
        OLD,
        &json!({"metadata": {"name": "legacy"}, "involvedObject": {"kind": "Node", "name": "n1"},
            "reason": "Rebooted", "message": "node rebooted", "type": "Warning", "count": 3,
            "source": {"component": "kubelet"}}),
    )
    .await;
    let list = raw.get(NEW).await.json();
    assert_eq!(list["kind"], "EventList");
    assert_eq!(list["apiVersion"], "events.k8s.io/v1");
    let legacy = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["metadata"]["name"] == "legacy")
        .unwrap();
    assert_eq!(legacy["note"], "node rebooted");
    assert_eq!(legacy["deprecatedCount"], 3);
    assert_eq!(legacy["deprecatedSource"]["component"], "kubelet");
    // Patches apply to the served form; watches of either version see both writes.
    let patched = raw
        .request(
            Method::PATCH,
            &format!("{NEW}/legacy"),
            &[("content-type", "application/merge-patch+json")],
            br#"{"note": "node rebooted twice"}"#.to_vec(),
        )
        .await;
    assert_eq!(
        patched.status,
        200,
        "{}",
        String::from_utf8_lossy(&patched.body)
    );
    assert_eq!(
        raw.get(&format!("{OLD}/legacy")).await.json()["message"],
        "node rebooted twice"
    );
    let watch = raw
        .get(&format!(
            "{NEW}?watch=1&resourceVersion={start}&timeoutSeconds=1"
        ))
        .await;
    let events: Vec<Value> = watch.json_lines();
    let seen: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["object"]["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("ADDED", "scheduled"),
            ("ADDED", "legacy"),
            ("MODIFIED", "legacy")
        ]
    );
    assert_eq!(events[2]["object"]["note"], "node rebooted twice");
    assert_eq!(events[2]["object"]["apiVersion"], "events.k8s.io/v1");
    // kubectl reads the new form with its columns.
    let kc = server.kubeconfig_path();
    let printed =
        tokio::task::spawn_blocking(move || ok(kubectl(&kc, &["get", "events.events.k8s.io"])))
            .await
            .unwrap();
    assert!(
        printed.lines().next().unwrap().contains("MESSAGE"),
        "{printed}"
    );
    assert!(
        printed.contains("pod/web") && printed.contains("bound to n1"),
        "{printed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_take_the_priority_of_their_class() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    const PODS: &str = "/api/v1/namespaces/default/pods";
    const CLASSES: &str = "/apis/scheduling.k8s.io/v1/priorityclasses";
    let pod = |name: &str, class: Option<&str>, priority: Option<i32>| {
        let mut p = json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        if let Some(c) = class {
            p["spec"]["priorityClassName"] = json!(c);
        }
        if let Some(v) = priority {
            p["spec"]["priority"] = json!(v);
        }
        p
    };
    let r = raw
        .send_json(
            Method::POST,
            CLASSES,
            &json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "batch-low"}, "value": 10, "preemptionPolicy": "Never"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    // No class and no global default: priority 0.
    let plain = raw
        .send_json(Method::POST, PODS, &pod("plain", None, None))
        .await
        .json();
    assert_eq!(plain["spec"]["priority"], 0, "{plain}");
    assert!(plain["spec"].get("priorityClassName").is_none());
    // A user class gives its value and preemption policy.
    let low = raw
        .send_json(Method::POST, PODS, &pod("low", Some("batch-low"), None))
        .await
        .json();
    assert_eq!(low["spec"]["priority"], 10);
    assert_eq!(low["spec"]["preemptionPolicy"], "Never");
    // A missing class, or a stated priority that differs, is forbidden.
    let missing = raw
        .send_json(Method::POST, PODS, &pod("lost", Some("nope"), None))
        .await;
    assert_eq!(missing.status, 403);
    assert_eq!(
        missing.json()["message"],
        "pods \"lost\" is forbidden: no PriorityClass with name nope was found"
    );
    let stated = raw
        .send_json(
            Method::POST,
            PODS,
            &pod("stated", Some("batch-low"), Some(5)),
        )
        .await;
    assert_eq!(stated.status, 403);
    assert!(
        stated.json()["message"]
            .as_str()
            .unwrap()
            .contains("computed 10")
    );
    // A global default class applies to pods that name none (the plugin found none for
    // "plain" above: what it kept is read again once the classes change).
    raw.send_json(
        Method::POST,
        CLASSES,
        &json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "normal"}, "value": 100, "globalDefault": true}),
    )
    .await;
    // The plugin reads the classes as the watch cache follows them (as upstream's reads its
    // informer): a pod created at once may still miss the new class.
    let mut defaulted = Value::Null;
    for attempt in 0..100 {
        defaulted = raw
            .send_json(
                Method::POST,
                PODS,
                &pod(&format!("defaulted-{attempt}"), None, None),
            )
            .await
            .json();
        if defaulted["spec"]["priority"] == 100 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(defaulted["spec"]["priority"], 100);
    assert_eq!(defaulted["spec"]["priorityClassName"], "normal");
    // The built-in classes exist as objects.
    let critical = raw
        .send_json(
            Method::POST,
            PODS,
            &pod("critical", Some("system-node-critical"), None),
        )
        .await
        .json();
    assert_eq!(critical["spec"]["priority"], 2_000_001_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_default_service_account_comes_back() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    const SA: &str = "/api/v1/namespaces/default/serviceaccounts/default";
    let mut first = Value::Null;
    for _ in 0..100 {
        let r = raw.get(SA).await;
        if r.status == 200 {
            first = r.json();
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let old_uid = first["metadata"]["uid"]
        .as_str()
        .expect("a default account")
        .to_string();
    assert_eq!(
        raw.request(Method::DELETE, SA, &[], Vec::new())
            .await
            .status,
        200
    );
    let mut uid = String::new();
    for _ in 0..100 {
        let r = raw.get(SA).await;
        if r.status == 200 {
            uid = r.json()["metadata"]["uid"].as_str().unwrap().to_string();
            if uid != old_uid {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !uid.is_empty() && uid != old_uid,
        "the default account was not recreated"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_debug_adds_ephemeral_containers_through_their_subresource() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let raw = admin(&server);
    let pods = "/api/v1/namespaces/default/pods";

    // Not on create.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}],
            "ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}});
    let r = raw.send_json(Method::POST, pods, &pod).await;
    assert_eq!(r.status, 422);
    assert!(
        r.message()
            .contains("spec.ephemeralContainers: Forbidden: cannot be set on create"),
        "{}",
        r.message()
    );
    ok(kubectl(&kc, &["run", "web", "--image=nginx"]));

    // kubectl debug patches pods/ephemeralcontainers; the container is defaulted.
    ok(kubectl(
        &kc,
        &["debug", "web", "--image=busybox:1.36", "--target=web"],
    ));
    let web = raw.get(&format!("{pods}/web")).await.json();
    let added = &web["spec"]["ephemeralContainers"][0];
    assert_eq!(added["targetContainerName"], "web");
    assert_eq!(added["imagePullPolicy"], "IfNotPresent");
    assert_eq!(added["terminationMessagePolicy"], "File");
    let rv = web["metadata"]["resourceVersion"].clone();

    // A target that is not one of the pod's containers, and a removal: upstream's 422s.
    let (success, _, err) = kubectl(&kc, &["debug", "web", "--image=busybox", "--target=nope"]);
    assert!(!success);
    assert!(
        err.contains("spec.ephemeralContainers[1].targetContainerName: Not found: \"nope\""),
        "{err}"
    );
    let mut without = web.clone();
    without["spec"]["ephemeralContainers"] = json!([]);
    let r = raw
        .send_json(
            Method::PUT,
            &format!("{pods}/web/ephemeralcontainers"),
            &without,
        )
        .await;
    assert_eq!(r.status, 422);
    assert!(
        r.message().contains(&format!(
            "existing ephemeral containers \"{}\" may not be removed",
            added["name"].as_str().unwrap()
        )),
        "{}",
        r.message()
    );
    // The pod itself cannot change them, and the subresource changes nothing else.
    let mut relabelled = web.clone();
    relabelled["metadata"]["labels"] = json!({"changed": "yes"});
    relabelled["spec"]["ephemeralContainers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "second", "image": "busybox"}));
    let r = raw
        .send_json(
            Method::PUT,
            &format!("{pods}/web/ephemeralcontainers"),
            &relabelled,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let web = r.json();
    assert_ne!(web["metadata"]["resourceVersion"], rv);
    assert_eq!(web["spec"]["ephemeralContainers"][1]["name"], "second");
    assert!(web["metadata"]["labels"].get("changed").is_none(), "{web}");
    let mut more = web.clone();
    more["spec"]["ephemeralContainers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "third", "image": "busybox"}));
    let r = raw
        .send_json(Method::PUT, &format!("{pods}/web"), &more)
        .await;
    assert_eq!(r.status, 422);
}
