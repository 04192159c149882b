//! Pods at scale: creating realistic pods from many clients, listing them by node with a field
//! selector, and deleting a namespace full of objects.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{Method, StatusCode};

use crate::{Target, ms, percentile};

/// Nodes the created pods are spread over (set directly in `spec.nodeName`).
const NODES: usize = 10;

/// A pod manifest of about 2 KB, like those controllers create, labelled `capstan-load=<run>`
/// and `generation=<generation>`.
///
/// Written by filling a template made once: building the manifest as a JSON tree for every
/// request took a third of the harness's CPU, which it shares with the server it measures.
pub(crate) fn pod(name: &str, node: Option<&str>, run: &str, generation: u64) -> Vec<u8> {
    static TEMPLATES: std::sync::OnceLock<[Template; 2]> = std::sync::OnceLock::new();
    let [unbound, bound] = TEMPLATES.get_or_init(|| {
        let with = |node| Template::new(|holes| pod_tree(holes[0], node, holes[1], holes[2]));
        [with(None), with(Some(Template::HOLES[3]))]
    });
    let generation = generation.to_string();
    match node {
        None => unbound.fill(&[name, run, &generation]),
        Some(node) => bound.fill(&[name, run, &generation, node]),
    }
}

/// A JSON body written once with placeholder strings, then filled by copying.
pub(crate) struct Template {
    /// The text between the holes.
    parts: Vec<Vec<u8>>,
    /// Which value fills each hole.
    holes: Vec<usize>,
}

impl Template {
    /// The placeholders: strings no manifest holds.
    pub(crate) const HOLES: [&'static str; 4] = [
        "capstan-load-hole-0",
        "capstan-load-hole-1",
        "capstan-load-hole-2",
        "capstan-load-hole-3",
    ];

    /// The template of the tree `make` builds from the placeholders.
    pub(crate) fn new(make: impl Fn(&[&str]) -> serde_json::Value) -> Self {
        let text = serde_json::to_vec(&make(&Self::HOLES)).expect("JSON");
        let (mut parts, mut holes, mut rest) = (Vec::new(), Vec::new(), &text[..]);
        loop {
            let next = Self::HOLES.iter().enumerate().filter_map(|(i, hole)| {
                let quoted = format!("\"{hole}\"");
                memchr::memmem::find(rest, quoted.as_bytes()).map(|at| (at, i, quoted.len()))
            });
            let Some((at, i, len)) = next.min() else {
                parts.push(rest.to_vec());
                return Self { parts, holes };
            };
            parts.push(rest[..at].to_vec());
            holes.push(i);
            rest = &rest[at + len..];
        }
    }

    /// The body with `values[i]` (as JSON strings) where placeholder `i` was.
    pub(crate) fn fill(&self, values: &[&str]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.parts.iter().map(Vec::len).sum::<usize>() + 128);
        for (part, hole) in self.parts.iter().zip(&self.holes) {
            out.extend_from_slice(part);
            serde_json::to_writer(&mut out, values[*hole]).expect("JSON");
        }
        out.extend_from_slice(self.parts.last().expect("a template has a part"));
        out
    }
}

/// [`pod`] as a tree.
fn pod_tree(name: &str, node: Option<&str>, run: &str, generation: &str) -> serde_json::Value {
    let mut spec = serde_json::json!({
        "containers": [{
            "name": "app",
            "image": "registry.example.com/team/app:1.27.3",
            "args": ["--port=8080", "--log-level=info", "--config=/etc/app/config.yaml"],
            "ports": [{"containerPort": 8080, "name": "http"}, {"containerPort": 9090, "name": "metrics"}],
            "env": [
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "GOMAXPROCS", "value": "2"}
            ],
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 10},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "tmp", "mountPath": "/tmp"}],
            "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}
        }],
        "volumes": [{"name": "config", "configMap": {"name": "app-config"}}, {"name": "tmp", "emptyDir": {}}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "load"}}, "topologyKey": "kubernetes.io/hostname"}}]}},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "load", "effect": "NoSchedule"}]
    });
    if let Some(node) = node {
        spec["nodeName"] = node.into();
    }
    serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": "load", "pod-template-hash": "5d8f7c9b6", "capstan-load": run,
                "generation": generation},
            "annotations": {"example.com/owner": "capstan-load", "example.com/revision": "3"}
        },
        "spec": spec
    })
}

pub(crate) async fn create_namespace(target: &Target, name: &str) {
    let mut conn = target.connect().await.expect("connecting");
    let body = serde_json::to_vec(&serde_json::json!({"metadata": {"name": name}})).expect("JSON");
    let req = target.request(Method::POST, "/api/v1/namespaces", Some(body));
    let (status, body) = conn.send(req).await.expect("creating the namespace");
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&body)
    );
}

/// Creates `count` pods in `namespace` from `clients` connections; the latencies.
async fn create_pods(
    target: &Arc<Target>,
    namespace: &str,
    count: usize,
    clients: usize,
    bound: bool,
) -> (Vec<Duration>, Duration) {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..clients {
        let target = target.clone();
        let namespace = namespace.to_string();
        tasks.push(tokio::spawn(async move {
            let mut conn = target.connect().await.expect("connecting");
            let mut latencies = Vec::new();
            let path = format!("/api/v1/namespaces/{namespace}/pods");
            for i in (w..count).step_by(clients) {
                let node = format!("node-{}", i % NODES);
                let body = pod(
                    &format!("pod-{i}"),
                    bound.then_some(node.as_str()),
                    "pods",
                    0,
                );
                let t = Instant::now();
                let (status, body) = conn
                    .send(target.request(Method::POST, &path, Some(body)))
                    .await
                    .expect("a create");
                assert_eq!(
                    status,
                    StatusCode::CREATED,
                    "{}",
                    String::from_utf8_lossy(&body)
                );
                latencies.push(t.elapsed());
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("a client"));
    }
    all.sort();
    (all, start.elapsed())
}

fn row(what: &str, clients: usize, latencies: &[Duration], elapsed: Duration) {
    println!(
        "| {what} | {clients} | {} | {:.0} | {} | {} | {} |",
        latencies.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        ms(percentile(latencies, 0.5)),
        ms(percentile(latencies, 0.99)),
        ms(latencies.last().copied().unwrap_or_default()),
    );
}

/// Runs the pod benchmarks and prints table rows.
pub async fn run(
    target: &Arc<Target>,
    run: &str,
    pods: usize,
    clients: usize,
    duration: Duration,
    namespace_objects: usize,
) {
    println!("| operation | clients | requests | ops/s | p50 ms | p99 ms | max ms |");
    println!("|---|---|---|---|---|---|---|");
    let ns = format!("load-{run}");
    create_namespace(target, &ns).await;
    let (latencies, elapsed) = create_pods(target, &ns, pods, clients, true).await;
    row(
        &format!("create pod (~2 KB), {pods} in all"),
        clients,
        &latencies,
        elapsed,
    );

    // List one node's pods by field selector, one client, back to back.
    let mut conn = target.connect().await.expect("connecting");
    let mut latencies = Vec::new();
    let start = Instant::now();
    let mut items = 0;
    let mut bytes = 0;
    let mut i = 0usize;
    while start.elapsed() < duration {
        let path = format!(
            "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-{}",
            i % NODES
        );
        i += 1;
        let t = Instant::now();
        let (status, body) = conn
            .send(target.request(Method::GET, &path, None))
            .await
            .expect("a list");
        latencies.push(t.elapsed());
        assert_eq!(status, StatusCode::OK);
        if i == 1 {
            // Counted once: parsing megabytes of JSON would slow the loop, not the server.
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            items = v["items"].as_array().map_or(0, Vec::len);
            bytes = body.len();
        }
    }
    latencies.sort();
    row(
        &format!(
            "list pods by spec.nodeName ({items} of {pods}, {:.1} MB)",
            bytes as f64 / 1e6
        ),
        1,
        &latencies,
        start.elapsed(),
    );

    // Forced deletion of the bound pods (no kubelet finishes graceful ones), then the
    // namespace.
    let req = target.request(
        Method::DELETE,
        &format!("/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0"),
        None,
    );
    let t = Instant::now();
    conn.send(req).await.expect("deleting the pods");
    println!(
        "| deletecollection of {pods} pods | 1 | 1 | — | {} | — | — |",
        ms(t.elapsed())
    );
    delete_namespace(target, &ns).await;

    // A namespace holding `namespace_objects` unbound pods, deleted as a whole.
    let doomed = format!("load-{run}-doomed");
    create_namespace(target, &doomed).await;
    create_pods(target, &doomed, namespace_objects, clients, false).await;
    let took = delete_namespace(target, &doomed).await;
    println!(
        "| delete namespace holding {namespace_objects} pods (until it is gone) | 1 | 1 | — | {} | — | — |",
        ms(took)
    );
}

/// Deletes a namespace and waits until it is gone; how long that took.
async fn delete_namespace(target: &Target, name: &str) -> Duration {
    let mut conn = target.connect().await.expect("connecting");
    let path = format!("/api/v1/namespaces/{name}");
    let start = Instant::now();
    let (status, _) = conn
        .send(target.request(Method::DELETE, &path, None))
        .await
        .expect("deleting the namespace");
    assert!(status.is_success());
    loop {
        let (status, _) = conn
            .send(target.request(Method::GET, &path, None))
            .await
            .expect("reading the namespace");
        if status == StatusCode::NOT_FOUND {
            return start.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_template_is_the_tree_written_out() {
        for (name, node, run, generation) in [
            ("p-1", None, "r", 0),
            ("p-2", Some("node-3"), "run \"quoted\" \\ é", 42),
        ] {
            let tree = pod_tree(name, node, run, &generation.to_string());
            let filled = pod(name, node, run, generation);
            assert_eq!(
                serde_json::from_slice::<serde_json::Value>(&filled).unwrap(),
                tree
            );
            assert_eq!(filled, serde_json::to_vec(&tree).unwrap());
        }
        let filled = crate::object("r", "sc-1", 7);
        let tree = crate::storage_class("sc-1", "r", "7");
        assert_eq!(filled, serde_json::to_vec(&tree).unwrap());
    }
}
