//! `pods/eviction` honouring PodDisruptionBudgets: a budget not yet processed, one with a
//! disruption to give, one without; unready pods; dry-run; two budgets; and `kubectl drain`.

use capstan_e2e::{RawClient, kubectl};
use capstan_testing::TestServer;
use http::Method;
use serde_json::{Value, json};

use crate::{admin, ok};

const PODS: &str = "/api/v1/namespaces/default/pods";
const PDBS: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";

async fn running_pod(raw: &RawClient, name: &str) {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}});
    let r = raw.send_json(Method::POST, PODS, &pod).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    set_ready(raw, name, true).await;
}

async fn set_ready(raw: &RawClient, name: &str, ready: bool) {
    let mut pod = raw.get(&format!("{PODS}/{name}")).await.json();
    pod["status"]["phase"] = json!("Running");
    pod["status"]["conditions"] =
        json!([{"type": "Ready", "status": if ready { "True" } else { "False" }}]);
    let r = raw
        .send_json(Method::PUT, &format!("{PODS}/{name}/status"), &pod)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

async fn set_budget_status(raw: &RawClient, name: &str, allowed: i64, current: i64) {
    let mut pdb = raw.get(&format!("{PDBS}/{name}")).await.json();
    pdb["status"] = json!({"observedGeneration": pdb["metadata"]["generation"],
        "disruptionsAllowed": allowed, "currentHealthy": current, "desiredHealthy": 2,
        "expectedPods": 3});
    let r = raw
        .send_json(Method::PUT, &format!("{PDBS}/{name}/status"), &pdb)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

async fn evict(raw: &RawClient, name: &str, delete_options: Value) -> (u16, Value) {
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": name}, "deleteOptions": delete_options});
    let r = raw
        .send_json(Method::POST, &format!("{PODS}/{name}/eviction"), &eviction)
        .await;
    (r.status.as_u16(), r.json())
}

fn cause(status: &Value) -> &str {
    status["details"]["causes"][0]["message"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evictions_honour_disruption_budgets() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}});
    assert_eq!(
        raw.send_json(Method::POST, "/api/v1/nodes", &node)
            .await
            .status,
        201
    );
    for name in ["web-0", "web-1", "web-2"] {
        running_pod(&raw, name).await;
    }

    // Discovery names the policy/v1 Eviction kind.
    let discovery = raw.get("/api/v1").await.json();
    let entry = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods/eviction")
        .unwrap()
        .clone();
    assert_eq!(
        (&entry["group"], &entry["version"], &entry["kind"]),
        (&json!("policy"), &json!("v1"), &json!("Eviction"))
    );

    // Without a budget a pod is simply evicted; a name that differs from the URL's is a 400.
    let (code, body) = evict(&raw, "web-2", json!({"gracePeriodSeconds": 0})).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["status"], "Success");
    assert_eq!(raw.get(&format!("{PODS}/web-2")).await.status, 404);
    let r = raw
        .send_json(
            Method::POST,
            &format!("{PODS}/web-1/eviction"),
            &json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-0"}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "name in URL does not match name in Eviction object"
    );
    running_pod(&raw, "web-2").await;

    // A budget its controller has not processed yet refuses, asking to retry in 10 s.
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}});
    assert_eq!(raw.send_json(Method::POST, PDBS, &pdb).await.status, 201);
    let (code, body) = evict(&raw, "web-0", json!({})).await;
    assert_eq!(code, 429, "{body}");
    assert_eq!(
        body["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(body["details"]["retryAfterSeconds"], 10, "{body}");
    assert_eq!(
        cause(&body),
        "The disruption budget web is still being processed by the server."
    );

    // One disruption to give: a dry run takes nothing; the eviction takes it, marks the pod
    // and starts its graceful deletion.
    set_budget_status(&raw, "web", 1, 3).await;
    let (code, body) = evict(&raw, "web-0", json!({"dryRun": ["All"]})).await;
    assert_eq!(code, 201, "{body}");
    let pdb_now = raw.get(&format!("{PDBS}/web")).await.json();
    assert_eq!(pdb_now["status"]["disruptionsAllowed"], 1);
    assert!(
        raw.get(&format!("{PODS}/web-0")).await.json()["metadata"]
            .get("deletionTimestamp")
            .is_none()
    );
    let (code, body) = evict(&raw, "web-0", json!({})).await;
    assert_eq!(code, 201, "{body}");
    let pdb_now = raw.get(&format!("{PDBS}/web")).await.json();
    assert_eq!(pdb_now["status"]["disruptionsAllowed"], 0);
    assert!(pdb_now["status"]["disruptedPods"]["web-0"].is_string());
    assert_eq!(
        pdb_now["status"]["conditions"][0]["reason"],
        "InsufficientPods"
    );
    let web0 = raw.get(&format!("{PODS}/web-0")).await.json();
    assert!(web0["metadata"]["deletionTimestamp"].is_string(), "{web0}");
    let target = web0["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "DisruptionTarget")
        .unwrap()
        .clone();
    assert_eq!(target["reason"], "EvictionByEvictionAPI");

    // None left: the next healthy pod stays, with the budget's numbers in the cause.
    let (code, body) = evict(&raw, "web-1", json!({})).await;
    assert_eq!(code, 429, "{body}");
    assert_eq!(
        cause(&body),
        "The disruption budget web needs 2 healthy pods and has 3 currently"
    );
    assert!(body["details"].get("retryAfterSeconds").is_none());
    // A pod already being deleted disrupts nothing more.
    let (code, _) = evict(&raw, "web-0", json!({"gracePeriodSeconds": 0})).await;
    assert_eq!(code, 201);
    assert_eq!(raw.get(&format!("{PODS}/web-0")).await.status, 404);

    // An unready pod goes while the healthy ones meet the budget, without taking from it.
    set_ready(&raw, "web-1", false).await;
    set_budget_status(&raw, "web", 0, 2).await;
    let (code, body) = evict(&raw, "web-1", json!({"gracePeriodSeconds": 0})).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        raw.get(&format!("{PDBS}/web")).await.json()["status"]["disruptionsAllowed"],
        0
    );

    // Two budgets over one pod: upstream's 500.
    let mut second = pdb.clone();
    second["metadata"]["name"] = json!("web-too");
    assert_eq!(raw.send_json(Method::POST, PDBS, &second).await.status, 201);
    let (code, body) = evict(&raw, "web-2", json!({})).await;
    assert_eq!(code, 500, "{body}");
    assert_eq!(
        body["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    let r = raw
        .request(Method::DELETE, &format!("{PDBS}/web-too"), &[], Vec::new())
        .await;
    assert_eq!(r.status, 200);

    // kubectl drain evicts what the budget allows.
    running_pod(&raw, "web-3").await;
    set_budget_status(&raw, "web", 5, 3).await;
    let kc = server.kubeconfig_path();
    let out = ok(kubectl(
        &kc,
        &[
            "drain",
            "n1",
            "--force",
            "--grace-period=0",
            "--ignore-daemonsets",
            "--timeout=30s",
        ],
    ));
    assert!(out.contains("node/n1 drained"), "{out}");
    let left = raw.get(PODS).await.json();
    assert_eq!(left["items"], json!([]), "{left}");
    let node = raw.get("/api/v1/nodes/n1").await.json();
    assert_eq!(node["spec"]["unschedulable"], true);
}
