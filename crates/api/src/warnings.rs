//! Warnings about valid objects, sent with the answer to a write as upstream sends them.
//! Pods and pod templates: deprecated node labels, annotations and volume plugins, duplicate
//! entries a client probably did not mean, fractional byte quantities, ambiguous ports, null
//! label selectors that match nothing, negative grace periods. Volumes and claims, Ingresses
//! and RuntimeClasses: their deprecated annotations, policies and labels.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use capstan_meta::quantity;
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PersistentVolumeSpec, PodAffinityTerm, PodSpec, PodTemplateSpec,
    Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Node labels upstream deprecated, with what it says about each.
const DEPRECATED_NODE_LABELS: [(&str, &str); 8] = [
    (
        "beta.kubernetes.io/arch",
        r#"deprecated since v1.14; use "kubernetes.io/arch" instead"#,
    ),
    (
        "beta.kubernetes.io/os",
        r#"deprecated since v1.14; use "kubernetes.io/os" instead"#,
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        r#"deprecated since v1.17; use "topology.kubernetes.io/region" instead"#,
    ),
    (
        "failure-domain.beta.kubernetes.io/zone",
        r#"deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#,
    ),
    (
        "beta.kubernetes.io/instance-type",
        r#"deprecated since v1.17; use "node.kubernetes.io/instance-type" instead"#,
    ),
    ("app.kubernetes.io/created-by", "deprecated since v1.9"),
    (
        "scheduler.alpha.kubernetes.io/preferAvoidPods",
        "deprecated since v1.22; use Taints and Tolerations instead",
    ),
    (
        "node-role.kubernetes.io/master",
        r#"use "node-role.kubernetes.io/control-plane" instead"#,
    ),
];

/// What upstream says about a deprecated node label, if `key` is one.
pub fn deprecated_node_label(key: &str) -> Option<&'static str> {
    DEPRECATED_NODE_LABELS
        .iter()
        .find(|(label, _)| *label == key)
        .map(|(_, why)| *why)
}

/// Pod annotations that no longer do anything.
const DEPRECATED_ANNOTATIONS: [(&str, &str); 3] = [
    (
        "scheduler.alpha.kubernetes.io/critical-pod",
        r#"non-functional in v1.16+; use the "priorityClassName" field instead"#,
    ),
    (
        "security.alpha.kubernetes.io/sysctls",
        r#"non-functional in v1.11+; use the "sysctls" field instead"#,
    ),
    (
        "security.alpha.kubernetes.io/unsafe-sysctls",
        r#"non-functional in v1.11+; use the "sysctls" field instead"#,
    ),
];

const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER: &str = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_FIELD: &str = r#"non-functional in v1.27+; use the "seccompProfile" field instead"#;

/// The warnings for a pod template at `root` (`spec.template.`, the `.` included) of a
/// workload, nothing when there is none.
pub fn template_warnings(template: Option<&PodTemplateSpec>, root: &str) -> Vec<String> {
    match template.and_then(|t| t.spec.as_ref().map(|spec| (spec, &t.metadata))) {
        Some((spec, meta)) => warnings(spec, meta.as_ref().unwrap_or(&ObjectMeta::default()), root),
        None => Vec::new(),
    }
}

/// The warnings for a pod (`root` empty) or a pod template at `root`.
pub fn warnings(spec: &PodSpec, meta: &ObjectMeta, root: &str) -> Vec<String> {
    let template = !root.is_empty();
    let spec_path = format!("{root}spec");
    let annotations_path = format!("{root}metadata.annotations");
    let no_annotations = BTreeMap::new();
    let annotations = meta.annotations.as_ref().unwrap_or(&no_annotations);
    let mut out = Vec::new();

    for key in spec.node_selector.iter().flatten().map(|(k, _)| k) {
        if let Some(why) = deprecated_node_label(key) {
            out.push(format!("{spec_path}.nodeSelector[{key}]: {why}"));
        }
    }
    if let Some(node) = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
    {
        let required = node
            .required_during_scheduling_ignored_during_execution
            .iter()
            .flat_map(|r| r.node_selector_terms.iter().enumerate())
            .map(|(i, term)| (format!("{spec_path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]"), term));
        let preferred = node
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, p)| (format!("{spec_path}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference"), &p.preference));
        for (path, term) in required.chain(preferred) {
            node_selector_term(&mut out, &path, term);
        }
    }
    for (i, t) in spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{spec_path}.topologySpreadConstraints[{i}]");
        if let Some(why) = deprecated_node_label(&t.topology_key) {
            out.push(format!("{at}.topologyKey: {} is {why}", t.topology_key));
        }
        if t.label_selector.is_none() {
            out.push(format!(
                "{at}.labelSelector: a null labelSelector results in matching no pod"
            ));
        }
    }
    for (key, why) in DEPRECATED_ANNOTATIONS {
        if annotations.contains_key(key) {
            out.push(format!("{annotations_path}[{key}]: {why}"));
        }
    }
    volume_warnings(&mut out, spec, &spec_path);
    for (i, alias) in duplicates(spec.host_aliases.iter().flatten().map(|a| a.ip.as_str())) {
        out.push(format!(
            "{spec_path}.hostAliases[{i}].ip: duplicate ip \"{alias}\""
        ));
    }
    let pull_secrets: Vec<&str> = spec
        .image_pull_secrets
        .iter()
        .flatten()
        .map(|s| s.name.as_str())
        .collect();
    for (i, name) in duplicates(pull_secrets.iter().copied()) {
        out.push(format!(
            "{spec_path}.imagePullSecrets[{i}].name: duplicate name \"{name}\""
        ));
    }
    for (i, name) in pull_secrets.iter().enumerate() {
        if name.is_empty() {
            out.push(format!(
                "{spec_path}.imagePullSecrets[{i}].name: invalid empty name \"\""
            ));
        }
    }
    for resource in ["memory", "ephemeral-storage"] {
        if let Some(q) = spec.overhead.as_ref().and_then(|o| o.get(resource)) {
            fractional_bytes(
                &mut out,
                || format!("{spec_path}.overhead[{resource}]"),
                &q.0,
            );
        }
    }
    let pod_seccomp = spec
        .security_context
        .as_ref()
        .is_some_and(|s| s.seccomp_profile.is_some());
    if !pod_seccomp && annotations.contains_key(SECCOMP_POD) {
        out.push(format!(
            "{annotations_path}[{SECCOMP_POD}]: {SECCOMP_FIELD}"
        ));
    }
    let pod_app_armor = spec
        .security_context
        .as_ref()
        .is_some_and(|s| s.app_armor_profile.is_some());
    let containers = containers(spec, &spec_path);
    // A container's annotation key is made only when some annotation could be one.
    let annotated = |prefix: &str| annotations.keys().any(|k| k.starts_with(prefix));
    let (seccomp_annotated, app_armor_annotated) =
        (annotated(SECCOMP_CONTAINER), annotated(APPARMOR_CONTAINER));
    for (c, path) in &containers {
        let context = c.security_context.as_ref();
        if seccomp_annotated && context.is_none_or(|s| s.seccomp_profile.is_none()) {
            let key = format!("{SECCOMP_CONTAINER}{}", c.name);
            if annotations.contains_key(&key) {
                out.push(format!("{annotations_path}[{key}]: {SECCOMP_FIELD}"));
            }
        }
        // Pods have theirs turned into fields on create (with no warning); templates warn.
        if template
            && app_armor_annotated
            && !pod_app_armor
            && context.is_none_or(|s| s.app_armor_profile.is_none())
        {
            let key = format!("{APPARMOR_CONTAINER}{}", c.name);
            if annotations.contains_key(&key) {
                out.push(format!(
                    "{annotations_path}[{key}]: deprecated since v1.30; use the \"appArmorProfile\" field instead"
                ));
            }
        }
        if let Some(resources) = &c.resources {
            for (kind, list) in [
                ("limits", &resources.limits),
                ("requests", &resources.requests),
            ] {
                for resource in ["memory", "ephemeral-storage"] {
                    if let Some(q) = list.as_ref().and_then(|l| l.get(resource)) {
                        fractional_bytes(
                            &mut out,
                            || format!("{path}.resources.{kind}[{resource}]"),
                            &q.0,
                        );
                    }
                }
            }
        }
        let mut seen = BTreeSet::new();
        for (i, env) in c.env.iter().flatten().enumerate() {
            if seen.insert(env.name.as_str()) {
                continue;
            }
            let reference = format!("$({})", env.name);
            let value = env.value.as_deref().unwrap_or_default();
            if env.value_from.is_some() || value == reference || !value.contains(&reference) {
                out.push(format!(
                    "{path}.env[{i}]: hides previous definition of \"{}\", which may be dropped when using apply",
                    env.name
                ));
            }
        }
    }
    port_warnings(&mut out, &containers);
    if spec.termination_grace_period_seconds.is_some_and(|s| s < 0) {
        out.push(format!(
            "{spec_path}.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
        ));
    }
    if let Some(affinity) = &spec.affinity {
        for (name, terms) in [
            (
                "podAffinity",
                affinity.pod_affinity.as_ref().map(|a| {
                    (
                        &a.required_during_scheduling_ignored_during_execution,
                        &a.preferred_during_scheduling_ignored_during_execution,
                    )
                }),
            ),
            (
                "podAntiAffinity",
                affinity.pod_anti_affinity.as_ref().map(|a| {
                    (
                        &a.required_during_scheduling_ignored_during_execution,
                        &a.preferred_during_scheduling_ignored_during_execution,
                    )
                }),
            ),
        ] {
            let Some((required, preferred)) = terms else {
                continue;
            };
            let at = format!("{spec_path}.affinity.{name}");
            null_selectors(
                &mut out,
                required.iter().flatten().enumerate().map(|(i, t)| {
                    (
                        format!(
                            "{at}.requiredDuringSchedulingIgnoredDuringExecution[{i}].labelSelector"
                        ),
                        t,
                    )
                }),
            );
            null_selectors(
                &mut out,
                preferred.iter().flatten().enumerate().map(|(i, w)| {
                    (format!("{at}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm.labelSelector"), &w.pod_affinity_term)
                }),
            );
        }
    }
    out
}

fn node_selector_term(out: &mut Vec<String>, path: &str, term: &NodeSelectorTerm) {
    for (i, e) in term.match_expressions.iter().flatten().enumerate() {
        if let Some(why) = deprecated_node_label(&e.key) {
            out.push(format!(
                "{path}.matchExpressions[{i}].key: {} is {why}",
                e.key
            ));
        }
    }
}

fn null_selectors<'a>(
    out: &mut Vec<String>,
    terms: impl Iterator<Item = (String, &'a PodAffinityTerm)>,
) {
    for (path, term) in terms {
        if term.label_selector.is_none() {
            out.push(format!(
                "{path}: a null labelSelector results in matching no pod"
            ));
        }
    }
}

/// The volume plugins upstream deprecated, with when.
const DEPRECATED_VOLUMES: [(&str, &str); 9] = [
    (
        "photonPersistentDisk",
        "deprecated in v1.11, non-functional in v1.16+",
    ),
    (
        "gitRepo",
        "deprecated in v1.11, and disabled by default in v1.33+",
    ),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
    ("storageos", "deprecated in v1.22, non-functional in v1.25+"),
    ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
];

/// Which of [`DEPRECATED_VOLUMES`] a pod's volume sets, in that order.
fn volume_plugins(v: &Volume) -> [bool; 9] {
    [
        v.photon_persistent_disk.is_some(),
        v.git_repo.is_some(),
        v.scale_io.is_some(),
        v.flocker.is_some(),
        v.storageos.is_some(),
        v.quobyte.is_some(),
        v.glusterfs.is_some(),
        v.cephfs.is_some(),
        v.rbd.is_some(),
    ]
}

/// Which of [`DEPRECATED_VOLUMES`] a PersistentVolume's spec sets, in that order.
fn persistent_volume_plugins(spec: &PersistentVolumeSpec) -> [bool; 9] {
    [
        spec.photon_persistent_disk.is_some(),
        false,
        spec.scale_io.is_some(),
        spec.flocker.is_some(),
        spec.storageos.is_some(),
        spec.quobyte.is_some(),
        spec.glusterfs.is_some(),
        spec.cephfs.is_some(),
        spec.rbd.is_some(),
    ]
}

/// The deprecated volume plugins a volume source sets (`set`, as [`volume_plugins`] gives
/// them), warned about at `path`.
fn deprecated_plugins(out: &mut Vec<String>, set: [bool; 9], path: &str) {
    for ((field, why), set) in DEPRECATED_VOLUMES.into_iter().zip(set) {
        if set {
            // Upstream names storageos by its Go field.
            let named = if field == "storageos" {
                "storageOS"
            } else {
                field
            };
            out.push(format!("{path}.{named}: {why}"));
        }
    }
}

fn volume_warnings(out: &mut Vec<String>, spec: &PodSpec, spec_path: &str) {
    let volumes = spec.volumes.as_deref().unwrap_or_default();
    for (i, v) in volumes.iter().enumerate() {
        let set = volume_plugins(v);
        if set.contains(&true) {
            deprecated_plugins(out, set, &format!("{spec_path}.volumes[{i}]"));
        }
        if let Some(claim) = v
            .ephemeral
            .as_ref()
            .and_then(|e| e.volume_claim_template.as_ref())
        {
            claim_spec(
                out,
                &format!("{spec_path}.volumes[{i}].ephemeral.volumeClaimTemplate.spec"),
                &claim.spec,
            );
        }
    }
}

const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

fn beta_storage_class(out: &mut Vec<String>, meta: &ObjectMeta) {
    if meta
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(BETA_STORAGE_CLASS))
    {
        out.push(format!(
            "metadata.annotations[{BETA_STORAGE_CLASS}]: deprecated since v1.8; use \"storageClassName\" attribute instead"
        ));
    }
}

/// A PersistentVolume's warnings: the beta storage class annotation, the Recycle policy,
/// deprecated node labels in its node affinity, deprecated volume plugins.
pub fn persistent_volume(pv: &PersistentVolume) -> Vec<String> {
    let mut out = Vec::new();
    beta_storage_class(&mut out, &pv.metadata);
    let Some(spec) = &pv.spec else { return out };
    if spec.persistent_volume_reclaim_policy.as_deref() == Some("Recycle") {
        out.push("spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.".into());
    }
    let terms = spec
        .node_affinity
        .as_ref()
        .and_then(|a| a.required.as_ref())
        .map(|r| r.node_selector_terms.as_slice())
        .unwrap_or_default();
    for (i, term) in terms.iter().enumerate() {
        node_selector_term(
            &mut out,
            &format!("spec.nodeAffinity.required.nodeSelectorTerms[{i}]"),
            term,
        );
    }
    deprecated_plugins(&mut out, persistent_volume_plugins(spec), "spec");
    out
}

/// A PersistentVolumeClaim's warnings: the beta storage class annotation, fractional bytes.
pub fn persistent_volume_claim(pvc: &PersistentVolumeClaim) -> Vec<String> {
    let mut out = Vec::new();
    beta_storage_class(&mut out, &pvc.metadata);
    if let Some(spec) = &pvc.spec {
        claim_spec(&mut out, "spec", spec);
    }
    out
}

/// A claim spec's fractional storage requests and limits, at `path` (a claim's `spec`, an
/// ephemeral volume's template, a StatefulSet's claim template).
pub fn claim_spec(out: &mut Vec<String>, path: &str, spec: &PersistentVolumeClaimSpec) {
    let Some(resources) = &spec.resources else {
        return;
    };
    for (kind, list) in [
        ("requests", &resources.requests),
        ("limits", &resources.limits),
    ] {
        if let Some(q) = list.as_ref().and_then(|l| l.get("storage")) {
            fractional_bytes(out, || format!("{path}.resources.{kind}[storage]"), &q.0);
        }
    }
}

/// Every container (init, regular, ephemeral) with its path, in upstream's order.
fn containers<'a>(spec: &'a PodSpec, spec_path: &str) -> Vec<(Cow<'a, Container>, String)> {
    let mut all = Vec::new();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        all.push((Cow::Borrowed(c), format!("{spec_path}.initContainers[{i}]")));
    }
    for (i, c) in spec.containers.iter().enumerate() {
        all.push((Cow::Borrowed(c), format!("{spec_path}.containers[{i}]")));
    }
    for (i, c) in spec.ephemeral_containers.iter().flatten().enumerate() {
        let common: Option<Container> = serde_json::to_value(c)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok());
        if let Some(common) = common {
            all.push((
                Cow::Owned(common),
                format!("{spec_path}.ephemeralContainers[{i}]"),
            ));
        }
    }
    all
}

/// The entries of `items` equal to an earlier one, with their index.
fn duplicates<'a>(items: impl Iterator<Item = &'a str>) -> Vec<(usize, &'a str)> {
    let mut seen = BTreeSet::new();
    items
        .enumerate()
        .filter(|(_, item)| !seen.insert(*item))
        .collect()
}

/// Warns when `text`, the quantity at `path` (made only then), is a fraction of a byte.
fn fractional_bytes(out: &mut Vec<String>, path: impl FnOnce() -> String, text: &str) {
    if quantity::parse(text).is_some_and(|m| m.0 % 1000 != 0) {
        out.push(format!(
            "{}: fractional byte value \"{text}\" is invalid, must be an integer",
            path()
        ));
    }
}

/// A port as Go prints the struct (`%+v`).
fn go_port(p: &ContainerPort) -> String {
    format!(
        "{{Name:{} HostPort:{} ContainerPort:{} Protocol:{} HostIP:{}}}",
        p.name.as_deref().unwrap_or_default(),
        p.host_port.unwrap_or_default(),
        p.container_port,
        p.protocol.as_deref().unwrap_or_default(),
        p.host_ip.as_deref().unwrap_or_default(),
    )
}

/// The ports seen so far by container port and protocol, each with its (container, port)
/// indexes.
type PortsSeen<'a> = BTreeMap<(i32, &'a str), Vec<((usize, usize), &'a ContainerPort)>>;

fn port_warnings(out: &mut Vec<String>, containers: &[(Cow<'_, Container>, String)]) {
    // A port's path is made only for a warning: (container, port) indexes until then.
    let at = |(c, i): (usize, usize)| format!("{}.ports[{i}]", containers[c].1);
    let mut by_port = PortsSeen::new();
    for (c, (container, _)) in containers.iter().enumerate() {
        for (i, port) in container.ports.iter().flatten().enumerate() {
            let here = (c, i);
            let host_ip = port.host_ip.as_deref().unwrap_or_default();
            let host_port = port.host_port.unwrap_or_default();
            if !host_ip.is_empty() && host_port == 0 {
                out.push(format!(
                    "{}: hostIP set without hostPort: {}",
                    at(here),
                    go_port(port)
                ));
            }
            let key = (
                port.container_port,
                port.protocol.as_deref().unwrap_or_default(),
            );
            let others = by_port.entry(key).or_default();
            for &(other_at, other) in others.iter() {
                let other_ip = other.host_ip.as_deref().unwrap_or_default();
                let other_port = other.host_port.unwrap_or_default();
                let conflict = if host_ip == other_ip && host_port == other_port {
                    "duplicate"
                } else if host_port == 0 || other_port == 0 {
                    "overlapping"
                } else if host_port == other_port && (host_ip.is_empty() != other_ip.is_empty()) {
                    "dangerously ambiguous"
                } else {
                    continue;
                };
                out.push(format!(
                    "{}: {conflict} port definition with {}",
                    at(here),
                    at(other_at)
                ));
            }
            others.push((here, port));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(value: serde_json::Value) -> (PodSpec, ObjectMeta) {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(value).unwrap();
        (pod.spec.unwrap(), pod.metadata)
    }

    #[test]
    fn a_pod_and_a_template_are_warned_at_their_own_paths() {
        let (spec, meta) = pod(json!({
            "metadata": {"annotations": {"scheduler.alpha.kubernetes.io/critical-pod": ""}},
            "spec": {
                "nodeSelector": {"beta.kubernetes.io/os": "linux"},
                "terminationGracePeriodSeconds": -1,
                "imagePullSecrets": [{"name": "a"}, {"name": "a"}],
                "containers": [{"name": "c", "image": "i",
                    "env": [{"name": "X", "value": "1"}, {"name": "X", "value": "2"}, {"name": "X", "value": "$(X)-3"}],
                    "resources": {"limits": {"memory": "100m"}},
                    "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "TCP", "hostPort": 8080}]}],
                "volumes": [{"name": "g", "gitRepo": {"repository": "r"}}],
            },
        }));
        assert_eq!(
            warnings(&spec, &meta, ""),
            [
                r#"spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead"#,
                r#"metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead"#,
                "spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+",
                r#"spec.imagePullSecrets[1].name: duplicate name "a""#,
                r#"spec.containers[0].resources.limits[memory]: fractional byte value "100m" is invalid, must be an integer"#,
                r#"spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply"#,
                "spec.containers[0].ports[1]: overlapping port definition with spec.containers[0].ports[0]",
                "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
            ]
        );
        assert_eq!(
            warnings(&spec, &meta, "spec.template.")[0],
            r#"spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead"#
        );
        let (plain, meta) = pod(json!({"spec": {"containers": [{"name": "c", "image": "i"}]}}));
        assert!(warnings(&plain, &meta, "").is_empty());
    }

    #[test]
    fn a_persistent_volume_is_warned_of_each_deprecated_plugin_in_upstreams_order() {
        let pv: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": "pv"},
            "spec": {
                "rbd": {"monitors": ["m"], "image": "i"},
                "storageos": {"volumeName": "v"},
                "nfs": {"server": "s", "path": "/p"},
            },
        }))
        .unwrap();
        assert_eq!(
            persistent_volume(&pv),
            [
                "spec.storageOS: deprecated in v1.22, non-functional in v1.25+",
                "spec.rbd: deprecated in v1.28, non-functional in v1.31+",
            ]
        );
    }
}
