//! The real `capstan-scheduler` binary against a real API server: pods get bound where
//! resources, taints, selectors, schedulability, topology spread, pod affinity and volumes
//! allow; a pod that fits nowhere gets upstream's condition and event, and is bound once the
//! cluster changes; a high-priority pod preempts lower ones.

use std::time::Duration;

use capstan_client::{Client, Config, ListParams};
use capstan_testing::TestServer;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::events::v1::Event;
use serde_json::json;

mod common;

use common::{Running, node_of, unschedulable_message};

fn node(name: &str, cpu: &str, labels: serde_json::Value, spec: serde_json::Value) -> (Node, Node) {
    let node: Node =
        serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "spec": spec}))
            .unwrap();
    let mut with_status = node.clone();
    with_status.status = Some(
        serde_json::from_value(json!({
        "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
        "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True"}]}))
        .unwrap(),
    );
    (node, with_status)
}

fn pod(name: &str, extra: serde_json::Value) -> Pod {
    let mut p = json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx",
        "resources": {"requests": {"cpu": "500m", "memory": "128Mi"}}}]}});
    if let (Some(spec), Some(more)) = (p["spec"].as_object_mut(), extra.as_object()) {
        spec.extend(more.clone());
    }
    serde_json::from_value(p).unwrap()
}

/// Creates the nodes (with their status) and starts the real scheduler binary.
async fn start(server: &TestServer, nodes: Vec<(Node, Node)>) -> (Client, Running) {
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    for (n, with_status) in nodes {
        let name = n.metadata.name.clone().unwrap();
        let created: Node = client.create(None, &n).await.unwrap();
        let mut status = with_status;
        status.metadata.resource_version = created.metadata.resource_version;
        client.replace_status(None, &name, &status).await.unwrap();
    }
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_capstan-scheduler"))
        .arg("--kubeconfig")
        .arg(server.kubeconfig_path())
        .args(["--kube-api-qps=0", "--secure-port=0", "--port=0"])
        .spawn()
        .expect("the scheduler starts");
    (client, Running(child))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_binds_pods_where_they_fit() {
    let server = TestServer::start().await;
    let nodes = vec![
        node("n1", "2", json!({"zone": "a"}), json!({})),
        node(
            "n2",
            "4",
            json!({"zone": "b", "accelerator": "gpu"}),
            json!({"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}),
        ),
        node(
            "n3",
            "1",
            json!({"zone": "c"}),
            json!({"unschedulable": true}),
        ),
    ];
    let (client, _scheduler) = start(&server, nodes).await;

    client
        .create(Some("default"), &pod("plain", json!({})))
        .await
        .unwrap();
    client
        .create(Some("default"), &pod("gpu", json!({
            "nodeSelector": {"accelerator": "gpu"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]})))
        .await
        .unwrap();
    client
        .create(
            Some("default"),
            &pod("other", json!({"schedulerName": "someone-else"})),
        )
        .await
        .unwrap();
    let mut big = pod("big", json!({}));
    big.spec.as_mut().unwrap().containers[0].resources =
        Some(serde_json::from_value(json!({"requests": {"cpu": "3"}})).unwrap());
    client.create(Some("default"), &big).await.unwrap();

    assert_eq!(node_of(&client, "plain").await.as_deref(), Some("n1"));
    assert_eq!(node_of(&client, "gpu").await.as_deref(), Some("n2"));

    // The big pod fits nowhere: the condition and the event say why, as upstream words it.
    let expected = "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.";
    let message = unschedulable_message(&client, "big").await;
    assert_eq!(message, expected);
    // Events are recorded apart from the status write: waited for.
    let mut events = Vec::new();
    for _ in 0..100 {
        events = client
            .list::<Event>(Some("default"), &ListParams::default())
            .await
            .unwrap()
            .items;
        let reasons = |reason: &str| events.iter().any(|e| e.reason.as_deref() == Some(reason));
        if reasons("FailedScheduling") && reasons("Scheduled") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let failed = events
        .iter()
        .find(|e| e.reason.as_deref() == Some("FailedScheduling"))
        .expect("a FailedScheduling event");
    assert_eq!(failed.note.as_deref(), Some(expected));
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("Scheduled")
                && e.note.as_deref() == Some("Successfully assigned default/plain to n1"))
    );

    // A node opens up with room: the waiting pod goes there.
    let mut n3: Node = client.get(None, "n3").await.unwrap();
    n3.spec.as_mut().unwrap().unschedulable = Some(false);
    n3.status
        .as_mut()
        .unwrap()
        .allocatable
        .as_mut()
        .unwrap()
        .insert(
            "cpu".into(),
            k8s_openapi::apimachinery::pkg::api::resource::Quantity("8".into()),
        );
    let n3: Node = client.replace(None, "n3", &n3).await.unwrap();
    let mut n3_status = n3.clone();
    n3_status
        .status
        .as_mut()
        .unwrap()
        .allocatable
        .as_mut()
        .unwrap()
        .insert(
            "cpu".into(),
            k8s_openapi::apimachinery::pkg::api::resource::Quantity("8".into()),
        );
    // Unconditionally: the server's node-taint controller may have written the node since
    // (it drops the unschedulable taint).
    n3_status.metadata.resource_version = None;
    client.replace_status(None, "n3", &n3_status).await.unwrap();
    assert_eq!(node_of(&client, "big").await.as_deref(), Some("n3"));

    // Pods of another scheduler are left alone.
    let other: Pod = client.get(Some("default"), "other").await.unwrap();
    assert!(other.spec.unwrap().node_name.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spread_constraints_and_pod_affinity_place_pods_by_topology() {
    let server = TestServer::start().await;
    let nodes = vec![
        node(
            "a1",
            "8",
            json!({"zone": "a", "kubernetes.io/hostname": "a1"}),
            json!({}),
        ),
        node(
            "a2",
            "8",
            json!({"zone": "a", "kubernetes.io/hostname": "a2"}),
            json!({}),
        ),
        node(
            "b1",
            "8",
            json!({"zone": "b", "kubernetes.io/hostname": "b1"}),
            json!({}),
        ),
    ];
    let (client, _scheduler) = start(&server, nodes).await;
    let labeled = |name: &str, app: &str, spec: serde_json::Value| {
        let mut p = pod(name, spec);
        p.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        p
    };
    // Four web pods that must spread over the zones with a skew of at most one: two land in
    // zone b, whose single node takes both, although zone a has twice the room.
    let spread = json!({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]});
    let mut zones = std::collections::BTreeMap::new();
    for i in 0..4 {
        let name = format!("web-{i}");
        client
            .create(Some("default"), &labeled(&name, "web", spread.clone()))
            .await
            .unwrap();
        let node = node_of(&client, &name).await.expect("bound");
        *zones.entry(node.starts_with('a')).or_insert(0) += 1;
    }
    assert_eq!(zones, [(false, 2), (true, 2)].into());

    // A pod that refuses to share a node with any web pod fits nowhere: every node has one.
    let anti = json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}});
    let nodes_with_web = {
        let pods = client
            .list::<Pod>(Some("default"), &ListParams::default())
            .await
            .unwrap();
        pods.items
            .iter()
            .filter_map(|p| p.spec.as_ref()?.node_name.clone())
            .collect::<std::collections::BTreeSet<_>>()
    };
    client
        .create(Some("default"), &labeled("loner", "loner", anti))
        .await
        .unwrap();
    if nodes_with_web.len() == 3 {
        assert_eq!(
            unschedulable_message(&client, "loner").await,
            "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        );
    } else {
        // Both zone-a pods share a node: the loner takes the other.
        let free = ["a1", "a2"]
            .into_iter()
            .find(|n| !nodes_with_web.contains(*n));
        assert_eq!(node_of(&client, "loner").await.as_deref(), free);
    }

    // A pod that wants to be in the zone of the database goes to zone b.
    client
        .create(
            Some("default"),
            &labeled("db", "db", json!({"nodeName": "b1"})),
        )
        .await
        .unwrap();
    let near_db = json!({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}]}}});
    client
        .create(Some("default"), &labeled("cache", "cache", near_db))
        .await
        .unwrap();
    assert_eq!(node_of(&client, "cache").await.as_deref(), Some("b1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_high_priority_pod_preempts_lower_ones() {
    use k8s_openapi::api::scheduling::v1::PriorityClass;
    let server = TestServer::start().await;
    let (client, _scheduler) = start(&server, vec![node("only", "2", json!({}), json!({}))]).await;
    for (name, value) in [("low", 10), ("high", 1000)] {
        let class: PriorityClass =
            serde_json::from_value(json!({"metadata": {"name": name}, "value": value})).unwrap();
        client.create(None, &class).await.unwrap();
    }
    let sized = |name: &str, class: &str, cpu: &str| {
        let mut p = pod(name, json!({"priorityClassName": class}));
        p.spec.as_mut().unwrap().containers[0].resources =
            Some(serde_json::from_value(json!({"requests": {"cpu": cpu}})).unwrap());
        p
    };
    // Two low pods fill the node: 500m each, plus one of 1 CPU.
    for (name, cpu) in [("low-a", "500m"), ("low-b", "1")] {
        client
            .create(Some("default"), &sized(name, "low", cpu))
            .await
            .unwrap();
        assert_eq!(node_of(&client, name).await.as_deref(), Some("only"));
    }
    // The high pod needs 1 CPU: evicting low-b (1 CPU) is enough; low-a stays.
    client
        .create(Some("default"), &sized("urgent", "high", "1"))
        .await
        .unwrap();
    let mut nominated = None;
    for _ in 0..200 {
        let p: Pod = client.get(Some("default"), "urgent").await.unwrap();
        nominated = p.status.and_then(|s| s.nominated_node_name);
        if nominated.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(nominated.as_deref(), Some("only"));
    // The victim is being deleted (a bound pod gets a grace period); the other stays.
    let victim: Pod = client.get(Some("default"), "low-b").await.unwrap();
    assert!(victim.metadata.deletion_timestamp.is_some());
    let spared: Pod = client.get(Some("default"), "low-a").await.unwrap();
    assert!(spared.metadata.deletion_timestamp.is_none());
    let events = client
        .list::<Event>(Some("default"), &ListParams::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("Preempted")
                && e.note.as_deref() == Some("Preempted by default/urgent on node only"))
    );
    // No kubelet runs here: finish the victim as one would, and the preemptor is bound.
    let force = serde_json::to_vec(&json!({"gracePeriodSeconds": 0})).unwrap();
    let (status, _, _) = client
        .send(
            http::Method::DELETE,
            "/api/v1/namespaces/default/pods/low-b",
            Some("application/json"),
            force.into(),
        )
        .await
        .unwrap();
    assert!(status.is_success(), "{status}");
    assert_eq!(node_of(&client, "urgent").await.as_deref(), Some("only"));
}

/// Plays the volume controller (or a provisioner): binds `claim` to `volume`.
async fn bind_claim(client: &Client, claim: &str, volume: &str) {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    let mut pvc: PersistentVolumeClaim = client.get(Some("default"), claim).await.unwrap();
    pvc.spec.as_mut().unwrap().volume_name = Some(volume.into());
    let pvc: PersistentVolumeClaim = client.replace(Some("default"), claim, &pvc).await.unwrap();
    let mut with_status = pvc.clone();
    with_status.status = Some(serde_json::from_value(json!({"phase": "Bound"})).unwrap());
    client
        .replace_status(Some("default"), claim, &with_status)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_first_consumer_claims_follow_the_pod() {
    use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
    use k8s_openapi::api::storage::v1::StorageClass;
    let server = TestServer::start().await;
    let nodes = vec![
        node(
            "a1",
            "8",
            json!({"topology.kubernetes.io/zone": "a"}),
            json!({}),
        ),
        node(
            "b1",
            "8",
            json!({"topology.kubernetes.io/zone": "b"}),
            json!({}),
        ),
    ];
    let (client, _scheduler) = start(&server, nodes).await;
    for class in [
        json!({"metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer"}),
        json!({"metadata": {"name": "zonal"}, "provisioner": "example.com/csi",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [{"matchLabelExpressions": [
                {"key": "topology.kubernetes.io/zone", "values": ["b"]}]}]}),
    ] {
        let class: StorageClass = serde_json::from_value(class).unwrap();
        client.create(None, &class).await.unwrap();
    }
    let volume: PersistentVolume = serde_json::from_value(json!({"metadata": {"name": "pv-a"},
        "spec": {"storageClassName": "local", "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "5Gi"}, "local": {"path": "/mnt/disk"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}}}}))
    .unwrap();
    client.create(None, &volume).await.unwrap();
    for (name, class) in [("data", "local"), ("scratch", "zonal")] {
        let claim: PersistentVolumeClaim =
            serde_json::from_value(json!({"metadata": {"name": name},
            "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}))
            .unwrap();
        client.create(Some("default"), &claim).await.unwrap();
    }
    let with_claim = |name: &str, claim: &str| {
        pod(
            name,
            json!({"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}),
        )
    };

    // A static local volume in zone a: the scheduler binds it to the claim (claimRef), the
    // volume controller completes the binding, then the pod is bound to a node of zone a.
    client
        .create(Some("default"), &with_claim("db", "data"))
        .await
        .unwrap();
    let mut claimed = false;
    for _ in 0..200 {
        let pv: PersistentVolume = client.get(None, "pv-a").await.unwrap();
        let claim_ref = pv.spec.and_then(|s| s.claim_ref);
        if let Some(r) = claim_ref {
            assert_eq!(r.name.as_deref(), Some("data"));
            claimed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(claimed, "the scheduler set the volume's claimRef");
    let pending: Pod = client.get(Some("default"), "db").await.unwrap();
    assert!(
        pending.spec.unwrap().node_name.is_none(),
        "bound before its volume"
    );
    bind_claim(&client, "data", "pv-a").await;
    assert_eq!(node_of(&client, "db").await.as_deref(), Some("a1"));

    // Dynamic provisioning limited to zone b: the claim is annotated with the chosen node.
    client
        .create(Some("default"), &with_claim("worker", "scratch"))
        .await
        .unwrap();
    let mut selected = None;
    for _ in 0..200 {
        let pvc: PersistentVolumeClaim = client.get(Some("default"), "scratch").await.unwrap();
        selected = pvc
            .metadata
            .annotations
            .and_then(|a| a.get("volume.kubernetes.io/selected-node").cloned());
        if selected.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(selected.as_deref(), Some("b1"));
    let provisioned: PersistentVolume = serde_json::from_value(json!({"metadata": {"name": "pvc-scratch"},
        "spec": {"storageClassName": "zonal", "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"}, "csi": {"driver": "example.com/csi", "volumeHandle": "h-1"},
            "claimRef": {"namespace": "default", "name": "scratch"}}}))
    .unwrap();
    client.create(None, &provisioned).await.unwrap();
    bind_claim(&client, "scratch", "pvc-scratch").await;
    assert_eq!(node_of(&client, "worker").await.as_deref(), Some("b1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gated_pods_wait_for_their_gates_to_be_removed() {
    let server = TestServer::start().await;
    let (client, _scheduler) = start(&server, vec![node("n1", "4", json!({}), json!({}))]).await;
    client
        .create(
            Some("default"),
            &pod(
                "gated",
                json!({"schedulingGates": [{"name": "example.com/quota"}]}),
            ),
        )
        .await
        .unwrap();
    // The API server says why it waits; the scheduler leaves it alone.
    let created: Pod = client.get(Some("default"), "gated").await.unwrap();
    let condition = created.status.unwrap().conditions.unwrap().remove(0);
    assert_eq!(
        (condition.type_.as_str(), condition.reason.as_deref()),
        ("PodScheduled", Some("SchedulingGated"))
    );
    client
        .create(Some("default"), &pod("marker", json!({})))
        .await
        .unwrap();
    assert_eq!(node_of(&client, "marker").await.as_deref(), Some("n1"));
    let still: Pod = client.get(Some("default"), "gated").await.unwrap();
    assert!(still.spec.as_ref().unwrap().node_name.is_none());
    // The gate is lifted: the pod is scheduled.
    let mut lifted = still;
    lifted.spec.as_mut().unwrap().scheduling_gates = None;
    client
        .replace(Some("default"), "gated", &lifted)
        .await
        .unwrap();
    assert_eq!(node_of(&client, "gated").await.as_deref(), Some("n1"));
}
