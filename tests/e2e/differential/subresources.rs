//! Writes through subresources: the same objects created in Capstan and in upstream's
//! kube-apiserver, then the same writes to their `status`, `scale`, `binding`, `eviction`,
//! `ephemeralcontainers`, `resize`, `token` and `finalize` subresources (and some refused ones); the
//! answers compared once masked.

use http::Method;
use serde_json::{Value, json};

use super::deletes::{answer, more_objects};
use super::{Upstream, capstan, create_user_objects};
use capstan_testing::TestServer;

const MERGE: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const JSON: &str = "application/json";

/// Drops the fields whose value is null, everywhere in `v`.
fn without_nulls(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(without_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(without_nulls),
        _ => {}
    }
}

/// What must differ besides [`answer`]'s masks: tokens and their times. Fields written as
/// null are compared as absent (upstream writes Go's zero times and nil lists as null where
/// they have no `omitempty`; every client decodes both the same; listed as "null fields" in
/// upstream-differences.txt).
fn masked((status, body): (u16, Value)) -> (u16, Value) {
    let (status, mut body) = answer((status, body));
    if super::known(&Method::PATCH, "null fields") {
        without_nulls(&mut body);
    }
    for key in ["token", "expirationTimestamp"] {
        if body["status"].get(key).is_some() {
            body["status"][key] = json!("*");
        }
    }
    (status, body)
}

/// A strategic merge patch of the `rp` pod's container `c` through `resize`.
fn resize(container: Value) -> (Method, String, &'static str, Value) {
    let mut container = container;
    container["name"] = json!("c");
    (
        Method::PATCH,
        "/api/v1/namespaces/default/pods/rp/resize".into(),
        STRATEGIC,
        json!({"spec": {"containers": [container]}}),
    )
}

/// (method, path, content type, body) of each write.
fn writes() -> Vec<(Method, String, &'static str, Value)> {
    let ns = "/api/v1/namespaces/default";
    let apps = "/apis/apps/v1/namespaces/default";
    let scale = |replicas: i64| json!({"spec": {"replicas": replicas}});
    vec![
        (
            Method::PATCH,
            format!("{ns}/pods/p/status"),
            MERGE,
            json!({"status": {"phase": "Running", "podIP": "10.0.0.5", "podIPs": [{"ip": "10.0.0.5"}],
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": null}]}}),
        ),
        (
            Method::PATCH,
            format!("{ns}/pods/p/status"),
            MERGE,
            json!({"status": {"podIP": "not-an-ip"}}),
        ),
        (
            Method::POST,
            format!("{ns}/pods/p/binding"),
            JSON,
            json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}),
        ),
        (
            Method::POST,
            format!("{ns}/pods/p/binding"),
            JSON,
            json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}),
        ),
        (
            Method::PATCH,
            format!("{ns}/pods/p/ephemeralcontainers"),
            STRATEGIC,
            json!({"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox",
                "targetContainerName": "c", "stdin": true, "tty": true}]}}),
        ),
        (
            Method::PATCH,
            format!("{ns}/pods/p/ephemeralcontainers"),
            STRATEGIC,
            json!({"spec": {"ephemeralContainers": [{"name": "c", "image": "busybox"}]}}),
        ),
        // Resizes: resources change, the rest of what is sent is dropped, other resources,
        // resize policies, removed limits and QoS changes are refused.
        (
            Method::POST,
            format!("{ns}/pods"),
            JSON,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "rp"},
                "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {
                    "requests": {"cpu": "100m", "memory": "100Mi"},
                    "limits": {"cpu": "200m", "memory": "200Mi"}}}]}}),
        ),
        // AppArmor annotations become the containers' fields on create (but the pod's own
        // profile), an invalid one is refused.
        (
            Method::POST,
            format!("{ns}/pods"),
            JSON,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "aa", "annotations": {
                    "container.apparmor.security.beta.kubernetes.io/c": "localhost/p2",
                    "container.apparmor.security.beta.kubernetes.io/d": "runtime/default",
                    "container.apparmor.security.beta.kubernetes.io/i": "unconfined"}},
                "spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
                    "initContainers": [{"name": "i", "image": "x"}],
                    "containers": [{"name": "c", "image": "x"}, {"name": "d", "image": "x"},
                        {"name": "e", "image": "x", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]}}),
        ),
        (
            Method::POST,
            format!("{ns}/pods"),
            JSON,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ab", "annotations": {
                    "container.apparmor.security.beta.kubernetes.io/c": "localhost/"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]}}),
        ),
        (
            Method::GET,
            format!("{ns}/pods/rp/resize"),
            JSON,
            Value::Null,
        ),
        resize(json!({"resources": {"requests": {"cpu": "150m"}}})),
        resize(json!({"image": "busybox", "resources": {"limits": {"memory": "150Mi"}}})),
        resize(json!({"resources": {"requests": {"memory": null}}})),
        resize(json!({"resources": {"requests": {"cpu": "200m", "memory": "150Mi"}}})),
        resize(json!({"resources": {"requests": {"ephemeral-storage": "1Gi"}}})),
        resize(
            json!({"resizePolicy": [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]}),
        ),
        resize(json!({"resources": {"limits": {"cpu": null}}})),
        resize(json!({"resources": {"requests": {"cpu": "300m"}}})),
        (
            Method::PATCH,
            format!("{ns}/pods/rp/resize"),
            MERGE,
            json!({"metadata": {"labels": {"x": "y"}}}),
        ),
        (
            Method::GET,
            format!("{apps}/deployments/d/scale"),
            JSON,
            Value::Null,
        ),
        (
            Method::PATCH,
            format!("{apps}/deployments/d/scale"),
            MERGE,
            scale(3),
        ),
        (
            Method::PUT,
            format!("{apps}/deployments/d/scale"),
            JSON,
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {"name": "d", "namespace": "default"}, "spec": {"replicas": 2}}),
        ),
        (
            Method::PATCH,
            format!("{apps}/deployments/d/scale"),
            MERGE,
            scale(-1),
        ),
        (
            Method::PATCH,
            format!("{apps}/statefulsets/ss/scale"),
            MERGE,
            scale(2),
        ),
        (
            Method::PATCH,
            format!("{apps}/replicasets/rs/scale"),
            MERGE,
            scale(2),
        ),
        (
            Method::PATCH,
            format!("{ns}/replicationcontrollers/rc/scale"),
            MERGE,
            scale(2),
        ),
        (
            Method::PATCH,
            format!("{apps}/deployments/d/status"),
            MERGE,
            json!({"status": {"replicas": 2, "observedGeneration": 3,
                "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                    "message": "m", "lastUpdateTime": null, "lastTransitionTime": null}]}}),
        ),
        (
            Method::PATCH,
            format!("{apps}/daemonsets/ds/status"),
            MERGE,
            json!({"status": {"desiredNumberScheduled": 1, "currentNumberScheduled": 1,
                "numberMisscheduled": 0, "numberReady": 0}}),
        ),
        (
            Method::PATCH,
            "/apis/batch/v1/namespaces/default/jobs/j/status".into(),
            MERGE,
            json!({"status": {"active": 1}}),
        ),
        (
            Method::PATCH,
            "/apis/batch/v1/namespaces/default/cronjobs/cj/status".into(),
            MERGE,
            json!({"status": {"active": []}}),
        ),
        (
            Method::PATCH,
            "/api/v1/nodes/n1/status".into(),
            MERGE,
            json!({"status": {"capacity": {"cpu": "2", "pods": "110"}, "allocatable": {"cpu": "2", "pods": "110"}}}),
        ),
        (
            Method::PATCH,
            format!("{ns}/services/svc/status"),
            MERGE,
            json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}}),
        ),
        (
            Method::PATCH,
            format!("{ns}/persistentvolumeclaims/pvc/status"),
            MERGE,
            json!({"status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}),
        ),
        (
            Method::PATCH,
            "/api/v1/persistentvolumes/pv/status".into(),
            MERGE,
            json!({"status": {"phase": "Available"}}),
        ),
        (
            Method::PATCH,
            format!("{ns}/resourcequotas/rq/status"),
            MERGE,
            json!({"status": {"hard": {"pods": "100"}, "used": {"pods": "1"}}}),
        ),
        (
            Method::PATCH,
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb/status".into(),
            MERGE,
            json!({"status": {"currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1,
                "disruptionsAllowed": 0, "observedGeneration": 1}}),
        ),
        (
            Method::PATCH,
            "/apis/networking.k8s.io/v1/namespaces/default/ingresses/ing/status".into(),
            MERGE,
            json!({"status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}}),
        ),
        (
            Method::PATCH,
            "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/hpa2/status".into(),
            MERGE,
            json!({"status": {"currentReplicas": 1, "desiredReplicas": 2}}),
        ),
        (
            Method::POST,
            format!("{ns}/serviceaccounts/sa/token"),
            JSON,
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"audiences": ["example.com"], "expirationSeconds": 3600}}),
        ),
        (
            Method::POST,
            format!("{ns}/serviceaccounts/default/token"),
            JSON,
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": 60}}),
        ),
        (
            Method::POST,
            format!("{ns}/pods/p/eviction"),
            JSON,
            json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p", "namespace": "default"}}),
        ),
        // Strategic merge patches order list items as upstream's: a patch's new items first.
        (
            Method::PATCH,
            format!("{apps}/deployments/d"),
            STRATEGIC,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}}}),
        ),
        (
            Method::PATCH,
            format!("{ns}/configmaps/cm"),
            STRATEGIC,
            json!({"metadata": {"finalizers": ["example.com/b"]}}),
        ),
        (
            Method::PATCH,
            format!("{ns}/configmaps/cm"),
            STRATEGIC,
            json!({"metadata": {"finalizers": ["example.com/a"]}}),
        ),
        (
            Method::PUT,
            "/api/v1/namespaces/gone/finalize".into(),
            JSON,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"},
                "spec": {"finalizers": []}}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subresource_writes_answer_as_upstream() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let pair = super::authorization::Pair {
        upstream: upstream.client.clone(),
        capstan: capstan(&server),
    };
    create_user_objects(&upstream, &pair.capstan).await;
    for (path, object) in more_objects() {
        pair.create(path, object).await;
    }
    let mut differences = Vec::new();
    for (method, path, content_type, body) in writes() {
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(&body).unwrap()
        };
        let headers = [("content-type", content_type)];
        let mut answers = Vec::new();
        for client in [&pair.upstream, &pair.capstan] {
            let r = client
                .request(method.clone(), &path, &headers, bytes.clone())
                .await;
            let body = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            answers.push(masked((r.status.as_u16(), body)));
        }
        if super::known(&method, &path) {
            assert_ne!(
                answers[0], answers[1],
                "{method} {path} is listed as different but is not"
            );
            continue;
        }
        if answers[0] != answers[1] {
            differences.push(format!(
                "{method} {path} {body}:\n  upstream {} {}\n  capstan  {} {}",
                answers[0].0, answers[0].1, answers[1].0, answers[1].1
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
