//! What a delete answers: the same objects of many kinds created in Capstan and in
//! upstream's kube-apiserver, deleted from both, the answers (status, the deleted object or
//! a `Status`) compared once masked.

use http::Method;
use serde_json::{Value, json};

use super::authorization::Pair;
use super::{
    Upstream, capstan, create_user_objects, known, masked, protobuf_reads_agree, user_objects,
};
use capstan_testing::TestServer;

/// Objects of kinds beyond [`user_objects`]: (collection, object).
pub(super) fn more_objects() -> Vec<(&'static str, Value)> {
    let rules = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]);
    let hpa_spec = json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "minReplicas": 1, "maxReplicas": 3});
    vec![
        ("/api/v1/namespaces", json!({"metadata": {"name": "gone"}})),
        (
            "/api/v1/namespaces/default/serviceaccounts",
            json!({"metadata": {"name": "sa"}}),
        ),
        (
            "/api/v1/namespaces/default/limitranges",
            json!({"metadata": {"name": "lr"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]}}),
        ),
        (
            "/api/v1/namespaces/default/resourcequotas",
            json!({"metadata": {"name": "rq"},
            "spec": {"hard": {"pods": "100"}}}),
        ),
        (
            "/api/v1/namespaces/default/persistentvolumeclaims",
            json!({"metadata": {"name": "pvc"},
            // An empty class is a value ("no class"), kept through the protobuf storage form.
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                "resources": {"requests": {"storage": "1Gi"}}}}),
        ),
        (
            "/api/v1/persistentvolumes",
            json!({"metadata": {"name": "pv"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/tmp/pv"}}}),
        ),
        ("/api/v1/nodes", json!({"metadata": {"name": "n1"}})),
        (
            "/api/v1/namespaces/default/replicationcontrollers",
            json!({"metadata": {"name": "rc"},
            "spec": {"replicas": 0, "selector": {"app": "rc"}, "template": {"metadata": {"labels": {"app": "rc"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
        ),
        (
            "/api/v1/namespaces/default/podtemplates",
            json!({"metadata": {"name": "pt"},
            "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}),
        ),
        (
            "/api/v1/namespaces/default/events",
            json!({"metadata": {"name": "ev"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "R"}),
        ),
        (
            "/apis/apps/v1/namespaces/default/replicasets",
            json!({"metadata": {"name": "rs"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "rs"}}, "template": {
                "metadata": {"labels": {"app": "rs"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
        ),
        (
            "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
            json!({"metadata": {"name": "hpa2"}, "spec": hpa_spec}),
        ),
        (
            "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
            json!({"metadata": {"name": "hpa1"}, "spec": hpa_spec}),
        ),
        (
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            json!({"metadata": {"name": "pdb"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
            json!({"metadata": {"name": "np"},
            "spec": {"podSelector": {}}}),
        ),
        (
            "/apis/networking.k8s.io/v1/ingressclasses",
            json!({"metadata": {"name": "ic"},
            "spec": {"controller": "example.com/ingress"}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
            json!({"metadata": {"name": "ing"},
            "spec": {"defaultBackend": {"service": {"name": "svc", "port": {"number": 80}}}}}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            json!({"metadata": {"name": "r"}, "rules": rules}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            json!({"metadata": {"name": "rb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"}]}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            json!({"metadata": {"name": "cr"}, "rules": rules}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            json!({"metadata": {"name": "crb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr"},
            "subjects": [{"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"}]}),
        ),
        (
            "/apis/storage.k8s.io/v1/storageclasses",
            json!({"metadata": {"name": "sc"}, "provisioner": "example.com/p"}),
        ),
        (
            "/apis/storage.k8s.io/v1/csidrivers",
            json!({"metadata": {"name": "csi.example.com"}, "spec": {}}),
        ),
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            json!({"metadata": {"name": "pc"}, "value": 1000}),
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            json!({"metadata": {"name": "l"},
            "spec": {"holderIdentity": "me"}}),
        ),
        (
            "/apis/node.k8s.io/v1/runtimeclasses",
            json!({"metadata": {"name": "rtc"}, "handler": "runc"}),
        ),
        (
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
            json!({"metadata": {"name": "es"},
            "addressType": "IPv4", "endpoints": []}),
        ),
        (
            "/apis/events.k8s.io/v1/namespaces/default/events",
            json!({"metadata": {"name": "ev2"},
            "eventTime": "2026-11-28T10:00:00.000000Z", "reportingController": "example.com/c",
            "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}}),
        ),
        (
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            json!({"metadata": {"name": "vap"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["configmaps"], "operations": ["CREATE"]}]},
                "validations": [{"expression": "true"}]}}),
        ),
        (
            "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
            json!({"metadata": {"name": "plc"},
            "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}}),
        ),
        (
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            json!({"metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
        ),
    ]
}

/// An answer to compare: the status and the masked body (a deleted object's deletion time
/// and grace period too, when it stays to be finalized).
pub(super) fn answer((status, body): (u16, Value)) -> (u16, Value) {
    let mut body = masked(body);
    if body["metadata"]["deletionTimestamp"].is_string() {
        body["metadata"]["deletionTimestamp"] = json!("*");
    }
    if let Some(conditions) = body
        .get_mut("status")
        .filter(|s| s.is_object())
        .and_then(|s| s["conditions"].as_array_mut())
    {
        for condition in conditions {
            condition["lastTransitionTime"] = json!("*");
        }
    }
    if body["status"]["lastPhaseTransitionTime"].is_string() {
        body["status"]["lastPhaseTransitionTime"] = json!("*");
    }
    // A quota's usage is its controller's: inside Capstan's server, in upstream's
    // controller manager (not run beside it here).
    if body["kind"] == "ResourceQuota" {
        body["status"] = json!("*");
    }
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_answer_as_upstream() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let pair = Pair {
        upstream: upstream.client.clone(),
        capstan: capstan(&server),
    };
    // The user objects (and upstream's default service account), then the others.
    create_user_objects(&upstream, &pair.capstan).await;
    let objects: Vec<(&str, Value)> = user_objects().into_iter().chain(more_objects()).collect();
    for (path, object) in more_objects() {
        pair.create(path, object).await;
    }
    // A custom object, once its resource is served by both.
    let gadgets = "/apis/example.com/v1/namespaces/default/gadgets";
    let gadget =
        json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}});
    for _ in 0..100 {
        let [theirs, mine] = pair.send(Method::POST, gadgets, &[], &gadget).await;
        if [theirs.0, mine.0].iter().all(|s| *s == 201 || *s == 409) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut differences = Vec::new();
    // Every kind read as protobuf from both (the objects beyond the user objects, which the
    // reads differential covers).
    for (path, object) in more_objects() {
        let one = format!("{path}/{}", object["metadata"]["name"].as_str().unwrap());
        let (protobuf, _) = protobuf_reads_agree(&pair.upstream, &pair.capstan, &one).await;
        differences.extend(protobuf);
    }
    let mut deletes: Vec<(Method, String, Value)> = objects
        .iter()
        .map(|(path, object)| {
            let name = object["metadata"]["name"].as_str().unwrap();
            (Method::DELETE, format!("{path}/{name}"), Value::Null)
        })
        .collect();
    deletes.insert(0, (Method::DELETE, format!("{gadgets}/g"), Value::Null));
    // A delete that finalizers hold, and the same object's second delete.
    pair.create(
        "/api/v1/namespaces/default/configmaps",
        json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}),
    )
    .await;
    for _ in 0..2 {
        deletes.push((
            Method::DELETE,
            "/api/v1/namespaces/default/configmaps/held".into(),
            Value::Null,
        ));
    }
    deletes.push((
        Method::DELETE,
        "/api/v1/namespaces/default/configmaps/missing".into(),
        Value::Null,
    ));
    // A collection deleted by label.
    for name in ["swept-1", "swept-2"] {
        pair.create(
            "/api/v1/namespaces/default/configmaps",
            json!({"metadata": {"name": name, "labels": {"sweep": "yes"}}, "data": {"k": "v"}}),
        )
        .await;
    }
    deletes.push((
        Method::DELETE,
        "/api/v1/namespaces/default/configmaps?labelSelector=sweep%3Dyes".into(),
        Value::Null,
    ));
    for (method, path, body) in deletes {
        let [theirs, mine] = pair.send(method.clone(), &path, &[], &body).await;
        let (theirs, mine) = (answer(theirs), answer(mine));
        if known(&method, &path) {
            assert_ne!(
                theirs, mine,
                "{method} {path} is listed as different but is not"
            );
            continue;
        }
        if theirs != mine {
            differences.push(format!(
                "{method} {path}:\n  upstream {} {}\n  capstan  {} {}",
                theirs.0, theirs.1, mine.0, mine.1
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
