//! `LimitRanger`: the namespace's LimitRanges give a new pod's containers their default
//! requests and limits (noted in the `kubernetes.io/limit-ranger` annotation), then bound
//! what containers, pods (with their overhead) and claims ask for: minimum, maximum and the
//! largest limit-to-request ratio.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::quantity::{self, Milli};
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin, PodMutator};

/// The annotation that says which defaults were set.
const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The `LimitRanger` plugin.
pub struct LimitRanger {
    lister: Arc<dyn Lister>,
    namespaces: Arc<super::NamespaceSet>,
}

impl LimitRanger {
    /// Reads LimitRanges through `lister`, in `namespaces` only.
    pub fn new(lister: Arc<dyn Lister>, namespaces: Arc<super::NamespaceSet>) -> Self {
        Self { lister, namespaces }
    }

    /// The items of every LimitRange of the namespace.
    async fn items(&self, a: &Attributes, namespace: &str) -> Result<Vec<Value>, ApiError> {
        match self.namespaces.may_hold(namespace).await {
            Some(true) => {}
            Some(false) => return Ok(Vec::new()),
            None => return Err(super::forbidden(a, "not yet ready to handle request")),
        }
        let ranges = self.lister.list(&core("limitranges"), namespace).await?;
        Ok(ranges
            .into_iter()
            .flat_map(|mut r| match r["spec"]["limits"].take() {
                Value::Array(items) => items,
                _ => Vec::new(),
            })
            .collect())
    }
}

/// Sets the `items`' defaults on `pod`'s containers, and notes them in an annotation (not
/// on a resize, which writes the resources only).
fn default_pod(a: &Attributes, pod: &mut Pod, items: &[Value]) -> Result<(), ApiError> {
    let mut spec = serde_json::to_value(&pod.spec).map_err(ApiError::internal)?;
    let note = apply_defaults(&mut spec, items);
    pod.spec = serde_json::from_value(spec).map_err(ApiError::internal)?;
    if let Some(note) = note
        && a.subresource.is_empty()
    {
        pod.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(ANNOTATION.into(), note);
    }
    Ok(())
}

/// Pods on create and on resize (the only way their containers' resources change), claims
/// on create and update.
fn covered(operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
    if !resource.group.is_empty() {
        return false;
    }
    match (resource.resource.as_str(), subresource) {
        ("pods", "") => operation == Operation::Create,
        ("pods", "resize") => operation == Operation::Update,
        ("persistentvolumeclaims", "") => {
            matches!(operation, Operation::Create | Operation::Update)
        }
        _ => false,
    }
}

fn quantities(v: &Value) -> BTreeMap<&str, (&str, Milli)> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| {
            let text = q.as_str()?;
            Some((k.as_str(), (text, quantity::parse(text)?)))
        })
        .collect()
}

/// A pod's container lists, regular ones first as upstream walks them (in the annotation
/// and in errors).
fn container_lists() -> [(&'static str, &'static str); 2] {
    [
        ("containers", "container"),
        ("initContainers", "init container"),
    ]
}

/// Sets the Container items' default requests and limits where a container has none; the
/// annotation's text, if anything was set.
fn apply_defaults(spec: &mut Value, items: &[Value]) -> Option<String> {
    let container_items: Vec<&Value> = items.iter().filter(|i| i["type"] == "Container").collect();
    if container_items.is_empty() {
        return None;
    }
    let mut notes = Vec::new();
    for (list, kind) in container_lists() {
        // Looked up, not indexed: indexing would add the absent lists as nulls.
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for c in containers.into_iter().flatten() {
            let name = c["name"].as_str().unwrap_or_default().to_string();
            for (field, default_field, word) in [
                ("requests", "defaultRequest", "request"),
                ("limits", "default", "limit"),
            ] {
                let mut set = Vec::new();
                for item in &container_items {
                    for (resource, value) in item[default_field].as_object().into_iter().flatten() {
                        let resources = &mut c["resources"];
                        if resources[field].get(resource).is_none() {
                            if !resources[field].is_object() {
                                resources[field] = json!({});
                            }
                            resources[field][resource] = value.clone();
                            set.push(resource.clone());
                        }
                    }
                }
                if !set.is_empty() {
                    notes.push(format!("{} {word} for {kind} {name}", set.join(", ")));
                }
            }
        }
    }
    (!notes.is_empty()).then(|| format!("LimitRanger plugin set: {}", notes.join("; ")))
}

/// The bounds of one item on one subject's requests and limits.
fn check(
    errors: &mut Vec<String>,
    item: &Value,
    subject: &str,
    requests: &Amounts,
    limits: &Amounts,
    limit_word: &str,
) {
    for (resource, (text, min)) in quantities(&item["min"]) {
        match requests.get(resource) {
            None => errors.push(format!(
                "minimum {resource} usage per {subject} is {text}.  No request is specified"
            )),
            Some((shown, r)) if *r < min => errors.push(format!(
                "minimum {resource} usage per {subject} is {text}, but request is {shown}"
            )),
            Some(_) => {}
        }
    }
    for (resource, (text, max)) in quantities(&item["max"]) {
        match limits.get(resource) {
            None => errors.push(format!(
                "maximum {resource} usage per {subject} is {text}.  No {limit_word} is specified"
            )),
            Some((shown, l)) if *l > max => errors.push(format!(
                "maximum {resource} usage per {subject} is {text}, but {limit_word} is {shown}"
            )),
            Some(_) => {}
        }
    }
    for (resource, (text, ratio)) in quantities(&item["maxLimitRequestRatio"]) {
        let request = requests.get(resource).map_or(Milli(0), |(_, m)| *m);
        let Some((_, limit)) = limits.get(resource) else {
            errors.push(format!(
                "{resource} max limit to request ratio per {subject} is {text}, but no limit is specified"
            ));
            continue;
        };
        if request.0 <= 0 {
            errors.push(format!(
                "{resource} max limit to request ratio per {subject} is {text}, but no request is specified or request is 0"
            ));
            continue;
        }
        let actual = limit.0 as f64 / request.0 as f64;
        if actual > ratio.0 as f64 / 1000.0 {
            errors.push(format!(
                "{resource} max limit to request ratio per {subject} is {text}, but provided ratio is {actual:.6}"
            ));
        }
    }
}

/// A quantity in the shortest plain form (`500m`, `2`, or bytes).
fn show(m: Milli) -> String {
    if m.0 % 1000 == 0 {
        (m.0 / 1000).to_string()
    } else {
        format!("{}m", m.0)
    }
}

/// Quantities by resource: as written, and parsed.
type Amounts = BTreeMap<String, (String, Milli)>;

fn resources(v: &Value) -> Amounts {
    quantities(v)
        .into_iter()
        .map(|(k, (text, m))| (k.to_string(), (text.to_string(), m)))
        .collect()
}

fn add(to: &mut BTreeMap<String, Milli>, from: &Amounts) {
    for (k, (_, v)) in from {
        to.entry(k.clone()).or_insert(Milli(0)).0 += v.0;
    }
}

/// A pod's requests or limits: its containers' sum, at least any init container's, plus the
/// overhead.
fn pod_total(spec: &Value, field: &str) -> BTreeMap<String, Milli> {
    let mut sum = BTreeMap::new();
    for c in spec["containers"].as_array().into_iter().flatten() {
        add(&mut sum, &resources(&c["resources"][field]));
    }
    for c in spec["initContainers"].as_array().into_iter().flatten() {
        for (k, (_, v)) in resources(&c["resources"][field]) {
            let entry = sum.entry(k).or_insert(Milli(0));
            *entry = (*entry).max(v);
        }
    }
    add(&mut sum, &resources(&spec["overhead"]));
    sum
}

/// Computed totals with their plain form.
fn shown(totals: BTreeMap<String, Milli>) -> Amounts {
    totals.into_iter().map(|(k, m)| (k, (show(m), m))).collect()
}

fn validate_pod(spec: &Value, items: &[Value]) -> Vec<String> {
    let mut errors = Vec::new();
    for item in items {
        match item["type"].as_str() {
            Some("Container") => {
                for (list, _) in container_lists() {
                    for c in spec[list].as_array().into_iter().flatten() {
                        let r = &c["resources"];
                        check(
                            &mut errors,
                            item,
                            "Container",
                            &resources(&r["requests"]),
                            &resources(&r["limits"]),
                            "limit",
                        );
                    }
                }
            }
            Some("Pod") => {
                let requests = shown(pod_total(spec, "requests"));
                let limits = shown(pod_total(spec, "limits"));
                check(&mut errors, item, "Pod", &requests, &limits, "limit");
            }
            _ => {}
        }
    }
    errors
}

fn validate_claim(spec: &Value, items: &[Value]) -> Vec<String> {
    let mut errors = Vec::new();
    let requests = resources(&spec["resources"]["requests"]);
    for item in items
        .iter()
        .filter(|i| i["type"] == "PersistentVolumeClaim")
    {
        // A claim's request is also what the maximum bounds.
        check(
            &mut errors,
            item,
            "PersistentVolumeClaim",
            &requests,
            &requests,
            "request",
        );
    }
    errors
}

/// Upstream's aggregate: one error as it is, several in brackets.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[async_trait]
impl Plugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        resource.resource == "pods" && covered(operation, resource, subresource)
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        covered(operation, resource, subresource)
    }

    fn pod_mutator(&self) -> Option<&dyn PodMutator> {
        Some(self)
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        let Some(object) = a.object.as_ref() else {
            return Ok(());
        };
        let items = self.items(a, &a.namespace).await?;
        if items.is_empty() {
            return Ok(());
        }
        let errors = if a.resource.resource == "pods" {
            validate_pod(&object["spec"], &items)
        } else {
            validate_claim(&object["spec"], &items)
        };
        if errors.is_empty() {
            return Ok(());
        }
        Err(forbidden(a, &aggregate(&errors)))
    }
}

/// Nothing to do in a namespace without LimitRanges (the common case).
#[async_trait]
impl PodMutator for LimitRanger {
    async fn mutate(&self, a: &Attributes, pod: &mut Pod) -> Result<(), ApiError> {
        let items = self.items(a, &a.namespace).await?;
        if items.is_empty() {
            return Ok(());
        }
        default_pod(a, pod, &items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_only_what_containers_lack() {
        let items = vec![
            json!({"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"}}),
        ];
        let mut spec = json!({"containers": [
            {"name": "a"},
            {"name": "b", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}},
        ]});
        let note = apply_defaults(&mut spec, &items).unwrap();
        assert_eq!(
            spec["containers"][0]["resources"],
            json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "500m", "memory": "256Mi"}})
        );
        assert_eq!(
            spec["containers"][1]["resources"]["limits"],
            json!({"cpu": "1", "memory": "256Mi"})
        );
        assert_eq!(
            note,
            "LimitRanger plugin set: cpu request for container a; cpu, memory limit for container a; memory limit for container b"
        );
    }

    #[test]
    fn bounds_and_ratios_in_upstream_words() {
        let items = vec![
            json!({"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"}, "maxLimitRequestRatio": {"cpu": "2"}}),
        ];
        let spec = json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": "50m"}, "limits": {"cpu": "400m", "memory": "2Gi"}}}]});
        let errors = validate_pod(&spec, &items);
        assert_eq!(
            errors,
            [
                "minimum cpu usage per Container is 100m, but request is 50m",
                "maximum memory usage per Container is 1Gi, but limit is 2Gi",
                "cpu max limit to request ratio per Container is 2, but provided ratio is 8.000000",
            ]
        );
        let spec = json!({"containers": [{"name": "a"}]});
        assert_eq!(
            validate_pod(&spec, &items)[0],
            "minimum cpu usage per Container is 100m.  No request is specified"
        );
        let pods = vec![json!({"type": "Pod", "max": {"cpu": "1"}})];
        let spec = json!({"containers": [
            {"name": "a", "resources": {"limits": {"cpu": "600m"}}},
            {"name": "b", "resources": {"limits": {"cpu": "600m"}}},
        ]});
        assert_eq!(
            validate_pod(&spec, &pods),
            ["maximum cpu usage per Pod is 1, but limit is 1200m"]
        );
        assert_eq!(aggregate(&["x".into(), "y".into()]), "[x, y]");
    }

    #[test]
    fn claims_are_bounded_by_their_request() {
        let items = vec![
            json!({"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}),
        ];
        let small = json!({"resources": {"requests": {"storage": "500Mi"}}});
        assert_eq!(
            validate_claim(&small, &items),
            ["minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"]
        );
        let big = json!({"resources": {"requests": {"storage": "20Gi"}}});
        assert!(validate_claim(&big, &items)[0].starts_with(
            "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is"
        ));
    }
}
