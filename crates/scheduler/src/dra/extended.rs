//! Extended resources backed by device classes (upstream's DRAExtendedResource): a pod that
//! asks for `example.com/gpu: 2` on a node whose allocatable has none of it gets the devices
//! of the DeviceClass whose `extendedResourceName` is `example.com/gpu` (or of class `x` for
//! `deviceclass.resource.kubernetes.io/x`), through a ResourceClaim the scheduler writes for
//! the pod: one request per container and resource (`container-<i>-request-<j>`), the pod as
//! controlling owner, annotated `resource.kubernetes.io/extended-resource-claim: "true"`.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, ContainerExtendedResourceRequest, Pod};
use k8s_openapi::api::resource::v1::{
    DeviceClass, DeviceRequest, ExactDeviceRequest, ResourceClaim,
};

use super::DraIndex;
use crate::resources::Resources;

/// The annotation marking the claim the scheduler writes for a pod's extended resources.
pub const EXTENDED_CLAIM_ANNOTATION: &str = "resource.kubernetes.io/extended-resource-claim";

/// The prefix of the extended resource every device class backs implicitly.
pub const IMPLICIT_PREFIX: &str = "deviceclass.resource.kubernetes.io/";

/// Whether `name` may be an extended resource backed by a device class: an extended
/// resource name (a domain outside `kubernetes.io`, not `requests.`-prefixed), or a device
/// class's implicit name.
pub fn is_extended_name(name: &str) -> bool {
    if name.starts_with(IMPLICIT_PREFIX) {
        return true;
    }
    let Some((domain, _)) = name.split_once('/') else {
        return false;
    };
    let native = domain == "kubernetes.io" || domain.ends_with(".kubernetes.io");
    !native && !name.starts_with("requests.")
}

impl DraIndex {
    /// The device class backing extended resource `name`: the class named by an implicit
    /// name, else the newest class (then the first by name) whose `extendedResourceName`
    /// it is.
    pub fn class_for_extended(&self, name: &str) -> Option<&Arc<DeviceClass>> {
        if let Some(class) = name.strip_prefix(IMPLICIT_PREFIX) {
            return self.class(class);
        }
        self.classes()
            .filter(|c| c.spec.extended_resource_name.as_deref() == Some(name))
            .max_by(|a, b| {
                let created = |c: &DeviceClass| c.metadata.creation_timestamp.clone().map(|t| t.0);
                created(a)
                    .cmp(&created(b))
                    .then_with(|| b.metadata.name.cmp(&a.metadata.name))
            })
    }

    /// The claim the scheduler wrote for `pod`'s extended resources in an earlier attempt.
    pub fn extended_claim_of<'a>(&'a self, pod: &'a Pod) -> Option<&'a Arc<ResourceClaim>> {
        let uid = pod.metadata.uid.as_deref()?;
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        self.claims_in(ns).find(|c| {
            c.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(EXTENDED_CLAIM_ANNOTATION))
                .is_some_and(|v| v == "true")
                && c.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.uid == uid && o.controller == Some(true))
        })
    }
}

/// The extended resources of a pod's `requests` (in units) that device classes back.
pub fn backed_resources(requests: &Resources, index: &DraIndex) -> BTreeMap<String, i64> {
    requests
        .scalar
        .iter()
        .filter(|(name, amount)| {
            **amount > 0 && is_extended_name(name) && index.class_for_extended(name).is_some()
        })
        .map(|(name, amount)| (name.clone(), *amount))
        .collect()
}

/// The whole units of `name` that `container` requests.
fn requested(container: &Container, name: &str) -> i64 {
    let requests = container
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref());
    let Some(q) = requests.and_then(|r| r.get(name)) else {
        return 0;
    };
    capstan_meta::quantity::parse(&q.0)
        .map_or(0, |m| i64::try_from(m.units_ceil()).unwrap_or(i64::MAX))
}

/// A request of the claim for `name` of container `index` (`container-<i>-request-<j>`, `j`
/// the resource's place among the container's requests by name) for `count` devices.
fn request(
    index: usize,
    container: &Container,
    name: &str,
    class: &str,
    count: i64,
) -> DeviceRequest {
    let names = container
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .map(|r| r.keys().position(|k| k == name).unwrap_or(0))
        .unwrap_or(0);
    DeviceRequest {
        name: format!("container-{index}-request-{names}"),
        exactly: Some(ExactDeviceRequest {
            device_class_name: class.to_string(),
            allocation_mode: Some("ExactCount".into()),
            count: Some(count),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The claim's requests for the resources in `needed` (those the node does not offer
/// itself), and which request serves each container's resource. Long-lived containers
/// (regular ones and sidecars) get a request each; an init container that runs to
/// completion first uses the requests of the long-lived containers after it, and asks
/// for what they do not cover in one request shared by all such init containers (the
/// largest they need). Requests are in name order.
pub fn requests_and_mappings(
    pod: &Pod,
    needed: &BTreeMap<String, i64>,
    index: &DraIndex,
) -> (Vec<DeviceRequest>, Vec<ContainerExtendedResourceRequest>) {
    let Some(spec) = pod.spec.as_ref() else {
        return (Vec::new(), Vec::new());
    };
    let inits = spec.init_containers.as_deref().unwrap_or_default();
    let containers: Vec<&Container> = inits.iter().chain(&spec.containers).collect();
    let short_lived =
        |i: usize| i < inits.len() && containers[i].restart_policy.as_deref() != Some("Always");
    let mut requests = Vec::new();
    let mut mappings = Vec::new();
    for name in needed.keys() {
        let Some(class) = index.class_for_extended(name) else {
            continue;
        };
        let class = class.metadata.name.as_deref().unwrap_or("");
        let mapping = |container: &Container, request: &str| ContainerExtendedResourceRequest {
            container_name: container.name.clone(),
            resource_name: name.clone(),
            request_name: request.to_string(),
        };
        // Long-lived containers: one request each.
        let mut long: Vec<Option<DeviceRequest>> = vec![None; containers.len()];
        let mut long_mappings = Vec::new();
        for (i, c) in containers
            .iter()
            .enumerate()
            .filter(|(i, _)| !short_lived(*i))
        {
            let count = requested(c, name);
            if count > 0 {
                let r = request(i, c, name, class, count);
                long_mappings.push(mapping(c, &r.name));
                long[i] = Some(r);
            }
        }
        // Init containers that finish: the long-lived requests after them, then their own.
        let mut largest: Option<DeviceRequest> = None;
        let mut own_names = Vec::new();
        let mut short_mappings = Vec::new();
        for (i, c) in containers
            .iter()
            .enumerate()
            .filter(|(i, _)| short_lived(*i))
        {
            let want = requested(c, name);
            if want == 0 {
                continue;
            }
            let mut covered = 0;
            for r in long[i..].iter().flatten() {
                if covered >= want {
                    break;
                }
                covered += r.exactly.as_ref().and_then(|e| e.count).unwrap_or(0);
                short_mappings.push(mapping(c, &r.name));
            }
            if covered < want {
                let r = request(i, c, name, class, want - covered);
                short_mappings.push(mapping(c, &r.name));
                own_names.push(r.name.clone());
                let count = |r: &DeviceRequest| r.exactly.as_ref().and_then(|e| e.count);
                if largest.as_ref().is_none_or(|l| count(l) < count(&r)) {
                    largest = Some(r);
                }
            }
        }
        if let Some(largest) = largest {
            for m in &mut short_mappings {
                if own_names.contains(&m.request_name) {
                    m.request_name = largest.name.clone();
                }
            }
            requests.push(largest);
        }
        requests.extend(long.into_iter().flatten());
        mappings.extend(long_mappings);
        mappings.extend(short_mappings);
    }
    requests.sort_by(|a, b| a.name.cmp(&b.name));
    (requests, mappings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index() -> DraIndex {
        let mut index = DraIndex::default();
        for (name, extended) in [("gpu", Some("example.com/gpu")), ("fpga", None)] {
            index.put_class(
                serde_json::from_value(json!({"metadata": {"name": name},
                    "spec": {"extendedResourceName": extended}}))
                .unwrap(),
            );
        }
        index
    }

    #[test]
    fn extended_resources_map_to_their_classes_by_name_or_implicitly() {
        let index = index();
        let class = |n: &str| {
            index
                .class_for_extended(n)
                .and_then(|c| c.metadata.name.clone())
        };
        assert_eq!(class("example.com/gpu").as_deref(), Some("gpu"));
        assert_eq!(
            class("deviceclass.resource.kubernetes.io/fpga").as_deref(),
            Some("fpga")
        );
        assert_eq!(class("example.com/fpga"), None);
        assert!(!is_extended_name("cpu") && !is_extended_name("kubernetes.io/x"));
        assert!(!is_extended_name("hugepages-2Mi") && is_extended_name("example.com/gpu"));
    }

    #[test]
    fn each_container_gets_a_request_and_init_containers_reuse_later_ones() {
        let index = index();
        let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [
                {"name": "warm", "image": "i", "resources": {"requests": {"example.com/gpu": "3"}}},
                {"name": "load", "image": "i", "resources": {"requests": {"example.com/gpu": "1"}}}],
            "containers": [
                {"name": "main", "image": "i", "resources": {"requests": {
                    "cpu": "1", "example.com/gpu": "2"}}},
                {"name": "side", "image": "i"}]}}))
        .unwrap();
        let needed = backed_resources(&crate::resources::pod_requests(&pod), &index);
        assert_eq!(needed, BTreeMap::from([("example.com/gpu".to_string(), 3)]));
        let (requests, mappings) = requests_and_mappings(&pod, &needed, &index);
        let names: Vec<(&str, i64)> = requests
            .iter()
            .map(|r| (r.name.as_str(), r.exactly.as_ref().unwrap().count.unwrap()))
            .collect();
        // main's request (its gpu is its second request by name), and one more device for
        // the init container that needs three: the other init container makes do with main's.
        assert_eq!(
            names,
            [("container-0-request-0", 1), ("container-2-request-1", 2)]
        );
        let mapped: Vec<(&str, &str)> = mappings
            .iter()
            .map(|m| (m.container_name.as_str(), m.request_name.as_str()))
            .collect();
        assert_eq!(
            mapped,
            [
                ("main", "container-2-request-1"),
                ("warm", "container-2-request-1"),
                ("warm", "container-0-request-0"),
                ("load", "container-2-request-1"),
            ]
        );
    }
}
