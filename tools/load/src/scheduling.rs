//! Scheduling throughput, in the manner of upstream's scheduler_perf: `--schedule-nodes`
//! nodes, then `--schedule-pods` pending pods created from 16 clients; a watch records when
//! each pod is seen bound. A scheduler must be running against the same server.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use http_body_util::BodyExt;

use crate::{Conn, Target, ms, percentile};

const CREATORS: usize = 16;

/// Creates `body` in the collection `path` on `conn`; the created object.
async fn create_on(
    conn: &mut Conn,
    target: &Target,
    path: &str,
    body: &serde_json::Value,
) -> serde_json::Value {
    let req = target.request(
        Method::POST,
        path,
        Some(serde_json::to_vec(body).expect("JSON")),
    );
    let (status, body) = conn.send(req).await.expect("a create");
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&body)
    );
    serde_json::from_slice(&body).expect("JSON")
}

/// [`create_on`] a connection of its own, for a single object.
async fn post(target: &Target, path: &str, body: serde_json::Value) -> serde_json::Value {
    let mut conn = target.connect().await.expect("connecting");
    create_on(&mut conn, target, path, &body).await
}

/// Creates the nodes (4 CPUs, 16 GiB, 110 pods each) and their status, and with `slices` a
/// ResourceSlice of devices for each.
async fn create_nodes(target: &Arc<Target>, run: &str, count: usize, slices: bool) {
    let mut tasks = Vec::new();
    for w in 0..CREATORS {
        let target = target.clone();
        let run = run.to_string();
        tasks.push(tokio::spawn(async move {
            let mut conn = target.connect().await.expect("connecting");
            for i in (w..count).step_by(CREATORS) {
                let name = format!("sched-{run}-{i}");
                let mut node = create_on(&mut conn, &target, "/api/v1/nodes", &serde_json::json!({
                    "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                        "topology.kubernetes.io/zone": format!("zone-{}", i % 3), "capstan-load": run}}}))
                .await;
                node["status"] = serde_json::json!({
                    "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                    "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}]});
                let body = serde_json::to_vec(&node).expect("JSON");
                let req = target.request(Method::PUT, &format!("/api/v1/nodes/{name}/status"), Some(body));
                let (status, _) = conn.send(req).await.expect("a status update");
                assert_eq!(status, StatusCode::OK);
                if slices {
                    let slice = resource_slice(&name);
                    create_on(&mut conn, &target, "/apis/resource.k8s.io/v1/resourceslices", &slice)
                        .await;
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("a node creator");
    }
}

/// What the pods ask of the scheduler besides their requests (upstream's scheduler_perf has
/// workloads of each kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// Requests only.
    Plain,
    /// Required anti-affinity on the host name to the pods of the same group (100 groups):
    /// the inter-pod affinity filter looks at every placed pod of the group.
    AntiAffinity,
    /// Spread over zones (`DoNotSchedule`, skew 1) and over nodes (`ScheduleAnyway`).
    Spread,
    /// One device each through its own ResourceClaim (`resource.k8s.io/v1`), of a DeviceClass
    /// selecting by CEL, from ResourceSlices of eight devices per node.
    Claims,
}

/// The DRA driver the `claims` shape's devices belong to.
const DRIVER: &str = "gpu.capstan-load.example";
/// Devices per node in the `claims` shape.
const DEVICES_PER_NODE: usize = 8;

/// The `claims` shape's DeviceClass.
async fn create_device_class(target: &Target) {
    post(
        target,
        "/apis/resource.k8s.io/v1/deviceclasses",
        serde_json::json!({"metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression":
                format!("device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].index >= 0")}}]}}),
    )
    .await;
}

/// Node `name`'s ResourceSlice: its own pool of [`DEVICES_PER_NODE`] devices.
fn resource_slice(name: &str) -> serde_json::Value {
    let devices: Vec<serde_json::Value> = (0..DEVICES_PER_NODE)
        .map(|k| serde_json::json!({"name": format!("gpu-{k}"), "attributes": {"index": {"int": k}}}))
        .collect();
    serde_json::json!({"metadata": {"name": format!("{name}-gpus")},
        "spec": {"driver": DRIVER, "nodeName": name,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices}})
}

/// Pod `i`'s ResourceClaim in the `claims` shape: one device of the class.
fn resource_claim(i: usize) -> serde_json::Value {
    serde_json::json!({"metadata": {"name": format!("c-{i}")},
        "spec": {"devices": {"requests": [{"name": "gpu",
            "exactly": {"deviceClassName": DRIVER}}]}}})
}

/// The pod `i` of a run, shaped as `shape` asks.
fn pod(i: usize, shape: Shape) -> serde_json::Value {
    let group = format!("g{}", i % 100);
    let mut pod = serde_json::json!({
        "metadata": {"name": format!("p-{i}"), "labels": {"app": "sched", "group": group}},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}});
    match shape {
        Shape::Plain => {}
        Shape::AntiAffinity => {
            pod["spec"]["affinity"] = serde_json::json!({"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"group": group}},
                    "topologyKey": "kubernetes.io/hostname"}]}});
        }
        Shape::Claims => {
            pod["spec"]["resourceClaims"] =
                serde_json::json!([{"name": "gpu", "resourceClaimName": format!("c-{i}")}]);
            pod["spec"]["containers"][0]["resources"]["claims"] =
                serde_json::json!([{"name": "gpu"}]);
        }
        Shape::Spread => {
            let selector = serde_json::json!({"matchLabels": {"app": "sched"}});
            pod["spec"]["topologySpreadConstraints"] = serde_json::json!([
                {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector},
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": selector}]);
        }
    }
    pod
}

/// Notes when `pod` is first seen bound.
fn note_bound(bound: &mut HashMap<String, Duration>, pod: &serde_json::Value, epoch: Instant) {
    if pod["spec"]["nodeName"].is_string() {
        let name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
        bound.entry(name).or_insert_with(|| epoch.elapsed());
    }
}

/// Runs the measurement and prints a table row.
pub async fn run(target: &Arc<Target>, run: &str, nodes: usize, pods: usize, shape: Shape) {
    let namespace = format!("sched-{run}");
    post(
        target,
        "/api/v1/namespaces",
        serde_json::json!({"metadata": {"name": namespace}}),
    )
    .await;
    let t = Instant::now();
    if shape == Shape::Claims {
        create_device_class(target).await;
    }
    create_nodes(target, run, nodes, shape == Shape::Claims).await;
    println!(
        "created {nodes} nodes in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let list_path = format!("/api/v1/namespaces/{namespace}/pods");
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    // Watch the namespace's pods from now: the time each is first seen bound. A watch the
    // server ends early (a consumer too slow for its buffer) is opened again after a list.
    let epoch = Instant::now();
    let watcher = {
        let target = target.clone();
        let list_path = list_path.clone();
        tokio::spawn(async move {
            let mut bound: HashMap<String, Duration> = HashMap::new();
            let mut conn = target.connect().await.expect("connecting");
            let mut ready = Some(ready_tx);
            while bound.len() < pods {
                let (_, body) = conn
                    .send(target.request(Method::GET, &list_path, None))
                    .await
                    .expect("a list");
                let listed: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
                for pod in listed["items"].as_array().into_iter().flatten() {
                    note_bound(&mut bound, pod, epoch);
                }
                let rv = listed["metadata"]["resourceVersion"].as_str().unwrap_or("");
                let watch_path =
                    format!("{list_path}?watch=1&resourceVersion={rv}&timeoutSeconds=1800");
                let response = conn
                    .open(target.request(Method::GET, &watch_path, None))
                    .await
                    .expect("a watch");
                if let Some(ready) = ready.take() {
                    let _ = ready.send(());
                }
                let mut body = response.into_body();
                let mut buf = Vec::new();
                while bound.len() < pods {
                    let Some(Ok(frame)) = body.frame().await else {
                        break;
                    };
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    buf.extend_from_slice(&data);
                    let mut start = 0;
                    while let Some(end) = memchr::memchr(b'\n', &buf[start..]) {
                        let line = &buf[start..start + end];
                        start += end + 1;
                        if let Ok(event) = serde_json::from_slice::<serde_json::Value>(line) {
                            note_bound(&mut bound, &event["object"], epoch);
                        }
                    }
                    buf.drain(..start);
                }
            }
            bound
        })
    };
    ready_rx.await.expect("the watch opened");

    // The pods: 100m CPU and 128 MiB each, shaped, from 16 clients.
    let mut tasks = Vec::new();
    for w in 0..CREATORS {
        let target = target.clone();
        let path = list_path.clone();
        let namespace = namespace.clone();
        tasks.push(tokio::spawn(async move {
            let mut conn = target.connect().await.expect("connecting");
            let mut created = Vec::new();
            let claims = format!("/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims");
            for i in (w..pods).step_by(CREATORS) {
                if shape == Shape::Claims {
                    create_on(&mut conn, &target, &claims, &resource_claim(i)).await;
                }
                let name = format!("p-{i}");
                create_on(&mut conn, &target, &path, &pod(i, shape)).await;
                created.push((name, epoch.elapsed()));
            }
            created
        }));
    }
    let mut created = HashMap::new();
    for t in tasks {
        created.extend(t.await.expect("a pod creator"));
    }
    let created_by = created.values().max().copied().unwrap_or_default();
    let bound = tokio::time::timeout(Duration::from_secs(1800), watcher)
        .await
        .expect("every pod bound in time")
        .expect("the watcher");
    let mut latencies: Vec<Duration> = bound
        .iter()
        .filter_map(|(name, at)| created.get(name).map(|c| at.saturating_sub(*c)))
        .collect();
    latencies.sort();
    let last = bound.values().max().copied().unwrap_or_default();
    println!("| pods | nodes | pods | created in s | all bound in s | pods/s | p50 ms | p99 ms |");
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {shape:?} | {nodes} | {} | {:.1} | {:.1} | {:.0} | {} | {} |",
        bound.len(),
        created_by.as_secs_f64(),
        last.as_secs_f64(),
        bound.len() as f64 / last.as_secs_f64(),
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99)),
    );
}
