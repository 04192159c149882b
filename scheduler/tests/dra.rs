//! Dynamic Resource Allocation end to end: the real `capstan-scheduler` binary on a Capstan
//! server, with upstream's kube-controller-manager v1.36 (its resourceclaim controller
//! creates claims from templates and releases them) and ResourceSlices published as a DRA
//! driver publishes them. Pods get devices picked by a DeviceClass selecting on an
//! attribute, a shared claim keeps its pods on one node, a pod waits when devices run out
//! and is bound once a finished pod's devices come back.

use capstan_client::ListParams;
use capstan_client::{Client, Config};
use capstan_e2e::upstream::{self, Process};
use capstan_testing::TestServer;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::resource::v1::{
    DeviceClass, DeviceRequestAllocationResult, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
};
use serde_json::{Value, json};

mod common;

use common::{Running, node_of, try_unschedulable_message, unschedulable_message};

fn from<T: for<'de> k8s_openapi::serde::Deserialize<'de>>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

/// A driver's slice of `node`'s GPUs, one per model given.
fn slice(node: &str, models: &[&str]) -> ResourceSlice {
    let devices: Vec<Value> = models
        .iter()
        .enumerate()
        .map(|(i, m)| json!({"name": format!("gpu-{i}"), "attributes": {"model": {"string": m}}}))
        .collect();
    from(
        json!({"metadata": {"name": format!("{node}-gpu.example.com")},
        "spec": {"driver": "gpu.example.com", "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}),
    )
}

fn pod(name: &str, claims: Value) -> Pod {
    from(json!({"metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "app"}], "resourceClaims": claims}}))
}

/// The first device allocated to an allocated claim.
fn first_result(claim: &ResourceClaim) -> &DeviceRequestAllocationResult {
    let devices = claim.status.as_ref().and_then(|s| s.allocation.as_ref());
    let results = devices.and_then(|a| a.devices.as_ref()?.results.as_ref());
    results
        .and_then(|r| r.first())
        .expect("an allocated device")
}

/// The devices allocated to `default/name` (`pool/device`) and its consumers' names.
async fn allocation(client: &Client, name: &str) -> (Vec<String>, Vec<String>) {
    let claim: ResourceClaim = client.get(Some("default"), name).await.unwrap();
    let status = claim.status.unwrap_or_default();
    let devices = status
        .allocation
        .and_then(|a| a.devices)
        .and_then(|d| d.results)
        .unwrap_or_default()
        .into_iter()
        .map(|r| format!("{}/{}", r.pool, r.device))
        .collect();
    let consumers = status
        .reserved_for
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.name)
        .collect();
    (devices, consumers)
}

/// Ready nodes named `names`, with room for pods.
async fn ready_nodes(client: &Client, names: &[&str]) {
    for name in names {
        let created: Node = client
            .create(None, &from::<Node>(json!({"metadata": {"name": name}})))
            .await
            .unwrap();
        let with_status: Node = from(json!({"metadata": {"name": name,
            "resourceVersion": created.metadata.resource_version}, "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}]}}));
        client
            .replace_status(None, name, &with_status)
            .await
            .unwrap();
    }
}

/// The scheduler binary on `server`.
fn scheduler(server: &TestServer) -> Running {
    Running(
        std::process::Command::new(env!("CARGO_BIN_EXE_capstan-scheduler"))
            .arg("--kubeconfig")
            .arg(server.kubeconfig_path())
            .args(["--kube-api-qps=0", "--secure-port=0", "--port=0"])
            .spawn()
            .expect("the scheduler starts"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn pods_get_devices_from_claims_and_wait_when_they_run_out() {
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    ready_nodes(&client, &["n1", "n2", "n3"]).await;
    client
        .create(None, &slice("n1", &["a100", "a100"]))
        .await
        .unwrap();
    client
        .create(None, &slice("n2", &["h100", "h100", "h100", "h100"]))
        .await
        .unwrap();
    for (name, selector) in [
        ("gpu", "device.driver == 'gpu.example.com'"),
        (
            "a100",
            "device.attributes['gpu.example.com'].model == 'a100'",
        ),
        (
            "h100",
            "device.attributes['gpu.example.com'].model == 'h100'",
        ),
    ] {
        let class: DeviceClass = from(json!({"metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": selector}}]}}));
        client.create(None, &class).await.unwrap();
    }
    let template: ResourceClaimTemplate = from(json!({"metadata": {"name": "three-h100"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus",
            "exactly": {"deviceClassName": "h100", "count": 3}}]}}}}));
    client.create(Some("default"), &template).await.unwrap();
    let shared: ResourceClaim = from(json!({"metadata": {"name": "shared"},
        "spec": {"devices": {"requests": [{"name": "gpu",
            "exactly": {"deviceClassName": "a100"}}]}}}));
    client.create(Some("default"), &shared).await.unwrap();

    let _scheduler = scheduler(&server);
    let logs = tempfile::tempdir().unwrap();
    let kubeconfig = server.kubeconfig_path().display().to_string();
    let _kcm = Process::start(
        "kube-controller-manager",
        &upstream::binaries().join("kube-controller-manager"),
        &[
            format!("--kubeconfig={kubeconfig}"),
            "--controllers=resourceclaim-controller".into(),
            "--leader-elect=false".into(),
            "--secure-port=0".into(),
        ],
        &[],
        logs.path(),
    );

    // A claim from a template: three h100s, only n2 has them.
    let from_template = json!([{"name": "gpus", "resourceClaimTemplateName": "three-h100"}]);
    client
        .create(Some("default"), &pod("trainer", from_template.clone()))
        .await
        .unwrap();
    assert_eq!(
        node_of(&client, "trainer").await.as_deref(),
        Some("n2"),
        "{}",
        std::fs::read_to_string(logs.path().join("kube-controller-manager.log"))
            .unwrap_or_default()
    );
    let trainer: Pod = client.get(Some("default"), "trainer").await.unwrap();
    let generated = trainer.status.unwrap().resource_claim_statuses.unwrap()[0]
        .resource_claim_name
        .clone()
        .unwrap();
    let (devices, consumers) = allocation(&client, &generated).await;
    assert_eq!(devices.len(), 3, "{devices:?}");
    assert!(devices.iter().all(|d| d.starts_with("n2/")), "{devices:?}");
    assert_eq!(consumers, ["trainer"]);
    let claim: ResourceClaim = client.get(Some("default"), &generated).await.unwrap();
    assert!(
        claim
            .metadata
            .finalizers
            .unwrap_or_default()
            .contains(&"resource.kubernetes.io/delete-protection".to_string())
    );

    // A shared claim: both pods on the node of its one a100.
    let uses_shared = json!([{"name": "gpu", "resourceClaimName": "shared"}]);
    for name in ["reader-1", "reader-2"] {
        client
            .create(Some("default"), &pod(name, uses_shared.clone()))
            .await
            .unwrap();
    }
    assert_eq!(node_of(&client, "reader-1").await.as_deref(), Some("n1"));
    assert_eq!(node_of(&client, "reader-2").await.as_deref(), Some("n1"));
    let (devices, mut consumers) = allocation(&client, "shared").await;
    consumers.sort();
    assert_eq!(devices.len(), 1);
    assert_eq!(consumers, ["reader-1", "reader-2"]);

    // One h100 is left: a second trainer waits, with upstream's reason.
    client
        .create(Some("default"), &pod("trainer-2", from_template))
        .await
        .unwrap();
    // Its claim comes from the controller manager first; a wait that ends says why.
    let Some(message) = try_unschedulable_message(&client, "trainer-2").await else {
        let claims: Vec<String> = client
            .list::<ResourceClaim>(Some("default"), &ListParams::default())
            .await
            .map(|l| {
                l.items
                    .into_iter()
                    .filter_map(|c| c.metadata.name)
                    .collect()
            })
            .unwrap_or_default();
        let pod: Pod = client.get(Some("default"), "trainer-2").await.unwrap();
        panic!(
            "trainer-2 got no PodScheduled condition; claims {claims:?}; pod status {:?}; \
             controller manager's log:\n{}",
            pod.status,
            std::fs::read_to_string(logs.path().join("kube-controller-manager.log"))
                .unwrap_or_default()
        );
    };
    assert!(
        message.starts_with("0/3 nodes are available:")
            && message.contains("cannot allocate all claims"),
        "{message}"
    );
    // The first trainer finishes: the controller manager releases its claim, and the
    // second gets the devices.
    let mut done: Pod = client.get(Some("default"), "trainer").await.unwrap();
    done.status.get_or_insert_with(Default::default).phase = Some("Succeeded".into());
    client
        .replace_status(Some("default"), "trainer", &done)
        .await
        .unwrap();
    let mut bound = None;
    for _ in 0..3 {
        bound = node_of(&client, "trainer-2").await;
        if bound.is_some() {
            break;
        }
    }
    assert_eq!(bound.as_deref(), Some("n2"));
}

/// Waits up to 30 s for `check` to hold of claim `default/name`; the claim when it does.
async fn claim_when(
    client: &Client,
    name: &str,
    what: &str,
    check: impl Fn(&ResourceClaim) -> bool,
) -> ResourceClaim {
    for _ in 0..300 {
        let claim: ResourceClaim = client.get(Some("default"), name).await.unwrap();
        if check(&claim) {
            return claim;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let claim: ResourceClaim = client.get(Some("default"), name).await.unwrap();
    panic!("claim {name} never {what}: {:?}", claim.status);
}

/// The notes of the events about pod `default/name` with `reason`.
async fn notes(client: &Client, name: &str, reason: &str) -> Vec<String> {
    let events: Vec<Event> = client
        .list(Some("default"), &ListParams::default())
        .await
        .unwrap()
        .items;
    events
        .into_iter()
        .filter(|e| {
            e.reason.as_deref() == Some(reason)
                && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
        })
        .filter_map(|e| e.note)
        .collect()
}

/// Sets the one device's status condition `kind` of claim `default/name`, as its driver does.
async fn report_device(client: &Client, name: &str, kind: &str) {
    let mut claim: ResourceClaim = client.get(Some("default"), name).await.unwrap();
    claim.status.as_mut().unwrap().devices = Some(vec![from(json!({
        "driver": "cxl.example.com", "pool": "fabric", "device": "mem-0",
        "conditions": [{"type": kind, "status": "True", "reason": "Driver",
            "message": "reported by the test's driver", "lastTransitionTime": "2026-11-29T00:00:00Z"}]}))]);
    client
        .replace_status(Some("default"), name, &claim)
        .await
        .unwrap();
}

fn reserved(claim: &ResourceClaim) -> bool {
    claim.status.as_ref().is_some_and(|s| {
        s.allocation.is_some() && s.reserved_for.as_ref().is_some_and(|r| !r.is_empty())
    })
}

/// Devices that must be attached before a pod may use them (binding conditions): the
/// scheduler allocates one, reserves it for the pod and holds the pod (a
/// `BindingConditionsPending` event) until the driver reports it attached. When the driver
/// reports a failure instead, the scheduler takes the pod out of the claim (Unreserve),
/// deallocates the claim on the next attempt (PostFilter, `deallocation of ResourceClaim
/// completed`) and allocates it afresh.
#[tokio::test(flavor = "multi_thread")]
async fn devices_with_binding_conditions_hold_the_pod_until_the_driver_attaches_them() {
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    ready_nodes(&client, &["n1", "n2"]).await;
    let fabric: ResourceSlice = from(json!({"metadata": {"name": "fabric"},
        "spec": {"driver": "cxl.example.com", "allNodes": true,
            "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "mem-0", "bindsToNode": true,
                "bindingConditions": ["cxl.example.com/Attached"],
                "bindingFailureConditions": ["cxl.example.com/AttachFailed"]}]}}));
    client.create(None, &fabric).await.unwrap();
    let class: DeviceClass = from(json!({"metadata": {"name": "cxl"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'cxl.example.com'"}}]}}));
    client.create(None, &class).await.unwrap();
    let claim: ResourceClaim = from(json!({"metadata": {"name": "mem"},
        "spec": {"devices": {"requests": [{"name": "mem",
            "exactly": {"deviceClassName": "cxl"}}]}}}));
    client.create(Some("default"), &claim).await.unwrap();
    let _scheduler = scheduler(&server);
    client
        .create(
            Some("default"),
            &pod("db", json!([{"name": "mem", "resourceClaimName": "mem"}])),
        )
        .await
        .unwrap();

    // Allocated and reserved for the pod, bound to one node, with the device's conditions;
    // the pod waits unbound.
    let first = claim_when(&client, "mem", "reserved", reserved).await;
    let result = first_result(&first);
    assert_eq!(
        result.binding_conditions.as_deref(),
        Some(&["cxl.example.com/Attached".to_string()][..])
    );
    let mut pending = Vec::new();
    for _ in 0..100 {
        pending = notes(&client, "db", "BindingConditionsPending").await;
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        pending[0].starts_with("waiting for binding conditions for device on node n"),
        "{pending:?}"
    );
    let db: Pod = client.get(Some("default"), "db").await.unwrap();
    assert_eq!(db.spec.unwrap().node_name, None);

    // The attachment fails: the claim is given back, deallocated, and allocated again.
    report_device(&client, "mem", "cxl.example.com/AttachFailed").await;
    let mut failed = Vec::new();
    for _ in 0..300 {
        failed = notes(&client, "db", "FailedScheduling").await;
        if failed
            .iter()
            .any(|n| n.contains("deallocation of ResourceClaim completed"))
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        failed.iter().any(|n| n
            == "0/2 nodes are available: 2 resourceclaim not available on the node. deallocation of ResourceClaim completed, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
        "{failed:?}"
    );
    let second = claim_when(&client, "mem", "reserved again without the failure", |c| {
        reserved(c) && c.status.as_ref().is_some_and(|s| s.devices.is_none())
    })
    .await;
    assert_ne!(
        second.metadata.resource_version,
        first.metadata.resource_version
    );

    // Attached: the pod is bound to the node the device was attached to.
    report_device(&client, "mem", "cxl.example.com/Attached").await;
    let node = node_of(&client, "db").await.expect("bound once attached");
    let selector = second
        .status
        .unwrap()
        .allocation
        .unwrap()
        .node_selector
        .unwrap();
    assert_eq!(
        selector.node_selector_terms[0]
            .match_fields
            .as_ref()
            .unwrap()[0]
            .values,
        Some(vec![node])
    );
}

/// A device shared between claims (`allowMultipleAllocations`): each claim gets a share
/// with its own id and the capacity it consumes, until the capacity runs out.
#[tokio::test(flavor = "multi_thread")]
async fn claims_share_a_device_while_its_capacity_lasts() {
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    ready_nodes(&client, &["n1", "n2"]).await;
    let nic: ResourceSlice = from(json!({"metadata": {"name": "n1-nic"},
        "spec": {"driver": "nic.example.com", "nodeName": "n1",
            "pool": {"name": "n1-nic", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "eth0", "allowMultipleAllocations": true,
                "capacity": {"bandwidth": {"value": "40G",
                    "requestPolicy": {"default": "10G", "validRange": {"min": "10G", "step": "10G"}}}}}]}}));
    client.create(None, &nic).await.unwrap();
    let class: DeviceClass = from(json!({"metadata": {"name": "nic"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'nic.example.com'"}}]}}));
    client.create(None, &class).await.unwrap();
    for (name, bandwidth) in [("a", "15G"), ("b", "20G"), ("c", "10G")] {
        let claim: ResourceClaim = from(json!({"metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "net", "exactly": {
                "deviceClassName": "nic", "capacity": {"requests": {"bandwidth": bandwidth}}}}]}}}));
        client.create(Some("default"), &claim).await.unwrap();
    }
    let _scheduler = scheduler(&server);
    for name in ["a", "b"] {
        client
            .create(
                Some("default"),
                &pod(name, json!([{"name": "net", "resourceClaimName": name}])),
            )
            .await
            .unwrap();
        assert_eq!(node_of(&client, name).await.as_deref(), Some("n1"));
    }
    let share = |claim: &ResourceClaim| {
        let result = first_result(claim).clone();
        (
            result.device,
            result.share_id.unwrap(),
            result.consumed_capacity.unwrap()["bandwidth"].0.clone(),
        )
    };
    let a = share(&client.get(Some("default"), "a").await.unwrap());
    let b = share(&client.get(Some("default"), "b").await.unwrap());
    assert_eq!((a.0.as_str(), b.0.as_str()), ("eth0", "eth0"));
    assert_ne!(a.1, b.1);
    assert_eq!((a.2.as_str(), b.2.as_str()), ("19531250Ki", "20G"));
    // 20G + 20G used of 40G: a third share does not fit.
    client
        .create(
            Some("default"),
            &pod("c", json!([{"name": "net", "resourceClaimName": "c"}])),
        )
        .await
        .unwrap();
    let message = unschedulable_message(&client, "c").await;
    assert!(message.contains("cannot allocate all claims"), "{message}");
}

/// Extended resources backed by a device class: a pod asking for `example.com/gpu: 2`
/// lands on the node whose driver publishes the devices (no node offers the resource
/// itself), through a claim the scheduler writes for the pod (owned by it, annotated, one
/// request per container) and names in the pod's status; a pod asking for more than is
/// left waits.
#[tokio::test(flavor = "multi_thread")]
async fn extended_resources_are_met_by_devices_of_their_class() {
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    ready_nodes(&client, &["n1", "n2"]).await;
    client
        .create(None, &slice("n2", &["a100", "a100", "a100"]))
        .await
        .unwrap();
    let class: DeviceClass = from(json!({"metadata": {"name": "gpu"},
        "spec": {"extendedResourceName": "example.com/gpu",
            "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}));
    client.create(None, &class).await.unwrap();
    let _scheduler = scheduler(&server);
    let asking = |name: &str, gpus: &str| -> Pod {
        from(json!({"metadata": {"name": name}, "spec": {"containers": [
            {"name": "train", "image": "app", "resources": {
                "requests": {"example.com/gpu": gpus}, "limits": {"example.com/gpu": gpus}}}]}}))
    };
    client
        .create(Some("default"), &asking("trainer", "2"))
        .await
        .unwrap();
    assert_eq!(node_of(&client, "trainer").await.as_deref(), Some("n2"));
    let trainer: Pod = client.get(Some("default"), "trainer").await.unwrap();
    let status = trainer
        .status
        .unwrap()
        .extended_resource_claim_status
        .expect("the pod names its extended resource claim");
    assert!(
        status
            .resource_claim_name
            .starts_with("trainer-extended-resources-"),
        "{status:?}"
    );
    assert_eq!(status.request_mappings.len(), 1);
    let mapping = &status.request_mappings[0];
    assert_eq!(
        (
            mapping.container_name.as_str(),
            mapping.resource_name.as_str(),
            mapping.request_name.as_str()
        ),
        ("train", "example.com/gpu", "container-0-request-0")
    );
    let claim: ResourceClaim = client
        .get(Some("default"), &status.resource_claim_name)
        .await
        .unwrap();
    let annotations = claim.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations
            .get("resource.kubernetes.io/extended-resource-claim")
            .map(String::as_str),
        Some("true")
    );
    let owner = &claim.metadata.owner_references.clone().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Pod", "trainer", Some(true))
    );
    let (devices, consumers) = allocation(&client, &status.resource_claim_name).await;
    assert_eq!(devices.len(), 2, "{devices:?}");
    assert!(devices.iter().all(|d| d.starts_with("n2/")));
    assert_eq!(consumers, ["trainer"]);
    // One device is left: a pod asking for two waits.
    client
        .create(Some("default"), &asking("second", "2"))
        .await
        .unwrap();
    let message = unschedulable_message(&client, "second").await;
    assert!(message.contains("cannot allocate all claims"), "{message}");
}
