//! `v1` Pod: upstream defaulting, the validation users meet, the update rules, graceful
//! deletion and the selectable fields.

use std::collections::{BTreeMap, BTreeSet};

use capstan_meta::{
    FieldError, FieldErrors, FieldLabels, ResourceDescriptor, Strategy, quantity, validation,
};
use k8s_openapi::api::core::v1::{Container, EphemeralContainer, Pod, PodSpec, PodStatus, Probe};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::describe::Names;
use crate::pod_security_context;

/// Default grace period of a pod's deletion.
pub const DEFAULT_GRACE_SECONDS: i64 = 30;
/// The scheduler a pod is for unless it names another.
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";
/// Built-in priority classes and their values.
pub const SYSTEM_PRIORITY_CLASSES: &[(&str, i32)] = &[
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];
/// Fields of a pod usable in field selectors.
pub const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
];

const RESTART_POLICIES: &[&str] = &["Always", "OnFailure", "Never"];
const DNS_POLICIES: &[&str] = &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP"];
const PULL_POLICIES: &[&str] = &["Always", "Never", "IfNotPresent"];
/// The annotation of a kubelet's mirror of a static pod.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// The strategy of `v1` Pod.
#[derive(Debug, Default, Clone, Copy)]
pub struct PodStrategy {
    /// Accept containers with `securityContext.privileged: true` (`--allow-privileged`).
    pub allow_privileged: bool,
}

/// A negative termination grace period (accepted: old clients sent them) becomes 1 second on
/// a pod, as upstream treats it; templates keep theirs and are warned about it.
fn positive_grace_period(pod: &mut Pod) {
    if let Some(spec) = pod.spec.as_mut()
        && spec.termination_grace_period_seconds.is_some_and(|g| g < 0)
    {
        spec.termination_grace_period_seconds = Some(1);
    }
}

impl Strategy for PodStrategy {
    fn deletes_gracefully(&self) -> bool {
        true
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = Pod;

    fn warnings(&self, new: &Pod, old: Option<&Pod>) -> Vec<String> {
        // On update, only when the spec changed (its generation moved), as upstream.
        if old.is_some_and(|old| old.metadata.generation == new.metadata.generation) {
            return Vec::new();
        }
        match &new.spec {
            Some(spec) => crate::warnings::warnings(spec, &new.metadata, ""),
            None => Vec::new(),
        }
    }

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "",
            kind: "Pod",
            resource: "pods",
            short_names: &["po"],
            namespaced: true,
        }
        .v1_in_all();
        // `spec.host` is what v1 clients of long ago sent for `spec.nodeName`.
        d.field_labels = FieldLabels::of_kind(POD_FIELDS).alias("spec.host", "spec.nodeName");
        d
    }

    fn default(&self, pod: &mut Pod) {
        let spec = pod.spec.get_or_insert_with(Default::default);
        default_spec(spec);
        // A pod's, not a template's (upstream defaults these on the Pod only).
        spec.enable_service_links.get_or_insert(true);
        for c in spec
            .containers
            .iter_mut()
            .chain(spec.init_containers.iter_mut().flatten())
        {
            requests_from_limits(c);
        }
    }

    fn prepare_for_create(&self, pod: &mut Pod) {
        self.prepare_for_create_warned(pod);
    }

    fn prepare_for_create_warned(&self, pod: &mut Pod) -> Vec<String> {
        // Pods count their spec's generations, as upstream's since v1.33.
        pod.metadata.generation = Some(1);
        let warnings = crate::pod_security_context::sync_app_armor_annotations(pod);
        positive_grace_period(pod);
        // The deprecated `serviceAccount` mirrors `serviceAccountName`, as upstream's
        // conversion keeps them; the ServiceAccount admission plugin names `default` when a
        // pod names no account. The tolerations and priority come from their plugins too.
        let spec = pod.spec.get_or_insert_with(Default::default);
        if spec
            .service_account_name
            .as_deref()
            .is_none_or(str::is_empty)
        {
            spec.service_account_name = spec.service_account.clone().filter(|s| !s.is_empty());
        }
        spec.service_account = spec.service_account_name.clone();
        spec.preemption_policy
            .get_or_insert_with(|| "PreemptLowerPriority".into());
        let qos = qos_class(spec);
        // A pod created with scheduling gates says why it waits, as upstream's API server
        // does.
        let gated = spec
            .scheduling_gates
            .as_ref()
            .is_some_and(|g| !g.is_empty());
        let conditions = gated.then(|| {
            vec![k8s_openapi::api::core::v1::PodCondition {
                type_: "PodScheduled".into(),
                status: "False".into(),
                reason: Some("SchedulingGated".into()),
                message: Some("Scheduling is blocked due to non-empty scheduling gates".into()),
                last_transition_time: Some(capstan_meta::time::now()),
                ..Default::default()
            }]
        });
        pod.status = Some(PodStatus {
            phase: Some("Pending".into()),
            qos_class: Some(qos.into()),
            conditions,
            ..Default::default()
        });
        warnings
    }

    fn validate(&self, pod: &Pod) -> FieldErrors {
        let mut errs = self.check(pod);
        if let Some(spec) = &pod.spec {
            pod_security_context::validate_app_armor_annotations(
                pod.metadata.annotations.as_ref(),
                spec,
                &mut errs,
            );
        }
        if pod.spec.as_ref().is_some_and(|s| {
            s.ephemeral_containers
                .as_ref()
                .is_some_and(|e| !e.is_empty())
        }) {
            errs.push(FieldError::forbidden(
                "spec.ephemeralContainers",
                "cannot be set on create",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Pod, old: &Pod) -> FieldErrors {
        let mut errs = self.check(new);
        if let Some(status) = &new.status {
            validate_ips(
                "status.podIPs",
                status.pod_ips.iter().flatten().map(|p| p.ip.as_str()),
                &mut errs,
            );
            validate_ips(
                "status.hostIPs",
                status.host_ips.iter().flatten().map(|h| h.ip.as_str()),
                &mut errs,
            );
        }
        let (Some(new_spec), Some(old_spec)) = (&new.spec, &old.spec) else {
            return errs;
        };
        if new_spec == old_spec {
            // Most updates leave the spec as it was (labels, annotations, ...).
            return errs;
        }
        // Only images, activeDeadlineSeconds, added tolerations and removed scheduling gates
        // may change.
        let mut comparable = new_spec.clone();
        for (c, o) in comparable.containers.iter_mut().zip(&old_spec.containers) {
            c.image = o.image.clone();
        }
        for (c, o) in comparable
            .init_containers
            .iter_mut()
            .flatten()
            .zip(old_spec.init_containers.iter().flatten())
        {
            c.image = o.image.clone();
        }
        comparable.active_deadline_seconds = old_spec.active_deadline_seconds;
        let old_tolerations = old_spec.tolerations.clone().unwrap_or_default();
        let new_tolerations = new_spec.tolerations.clone().unwrap_or_default();
        if old_tolerations.iter().all(|t| new_tolerations.contains(t)) {
            comparable.tolerations = old_spec.tolerations.clone();
        }
        let old_gates = old_spec.scheduling_gates.clone().unwrap_or_default();
        if new_spec
            .scheduling_gates
            .iter()
            .flatten()
            .all(|g| old_gates.contains(g))
        {
            comparable.scheduling_gates = old_spec.scheduling_gates.clone();
        }
        if new.metadata.deletion_timestamp.is_some() {
            comparable.termination_grace_period_seconds = old_spec.termination_grace_period_seconds;
        }
        if &comparable != old_spec {
            errs.push(FieldError::forbidden(
                "spec",
                "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
            ));
        }
        errs
    }

    fn field(&self, pod: &Pod, field: &str) -> Option<String> {
        let spec = pod.spec.as_ref();
        let status = pod.status.as_ref();
        let text = |v: Option<&String>| Some(v.cloned().unwrap_or_default());
        match field {
            "spec.nodeName" => text(spec.and_then(|s| s.node_name.as_ref())),
            "spec.restartPolicy" => text(spec.and_then(|s| s.restart_policy.as_ref())),
            "spec.schedulerName" => text(spec.and_then(|s| s.scheduler_name.as_ref())),
            "spec.serviceAccountName" => text(spec.and_then(|s| s.service_account_name.as_ref())),
            "spec.hostNetwork" => Some(
                spec.and_then(|s| s.host_network)
                    .unwrap_or(false)
                    .to_string(),
            ),
            "status.phase" => text(status.and_then(|s| s.phase.as_ref())),
            "status.podIP" => text(status.and_then(|s| s.pod_ip.as_ref())),
            "status.podIPs" => Some(
                status
                    .and_then(|s| s.pod_ips.as_ref())
                    .map(|ips| {
                        ips.iter()
                            .map(|ip| ip.ip.clone())
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default(),
            ),
            "status.nominatedNodeName" => text(status.and_then(|s| s.nominated_node_name.as_ref())),
            _ => None,
        }
    }

    fn copy_ephemeral_containers(&self, to: &mut Pod, from: &Pod) {
        let containers = from
            .spec
            .as_ref()
            .and_then(|s| s.ephemeral_containers.clone());
        to.spec
            .get_or_insert_with(Default::default)
            .ephemeral_containers = containers;
    }

    /// Ephemeral containers are only added: the ones a pod has never change or go, and a
    /// static pod's mirror takes none.
    fn validate_ephemeral_containers_update(&self, new: &Pod, old: &Pod) -> FieldErrors {
        let mirrored = old
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION));
        if mirrored {
            return vec![FieldError::forbidden(
                "",
                "static pods do not support ephemeral containers",
            )];
        }
        let mut errs = self.check(new);
        let listed = |pod: &Pod| -> Vec<EphemeralContainer> {
            pod.spec
                .as_ref()
                .and_then(|s| s.ephemeral_containers.clone())
                .unwrap_or_default()
        };
        let now = listed(new);
        for before in listed(old) {
            match now.iter().find(|c| c.name == before.name) {
                None => errs.push(FieldError::forbidden(
                    "spec.ephemeralContainers",
                    format!(
                        "existing ephemeral containers {:?} may not be removed\n",
                        before.name
                    ),
                )),
                Some(c) if *c != before => errs.push(FieldError::forbidden(
                    "spec.ephemeralContainers",
                    format!(
                        "existing ephemeral containers {:?} may not be changed\n",
                        before.name
                    ),
                )),
                Some(_) => {}
            }
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    /// A resize writes the containers' resources (matched by name) and nothing else; the
    /// rest of what was sent is dropped, as upstream's.
    fn copy_resize(&self, to: &mut Pod, from: &Pod) {
        let (Some(to), Some(from)) = (to.spec.as_mut(), from.spec.as_ref()) else {
            return;
        };
        let sent = |name: &str| {
            from.containers
                .iter()
                .chain(from.init_containers.iter().flatten())
                .find(|c| c.name == name)
        };
        for c in to
            .containers
            .iter_mut()
            .chain(to.init_containers.iter_mut().flatten())
        {
            if let Some(new) = sent(&c.name) {
                c.resources = new.resources.clone();
                c.resize_policy = new.resize_policy.clone();
            }
        }
    }

    /// Only CPU and memory may change, their limits may not be removed (requests may: they
    /// are defaulted from the limits again), and the QoS class stays (upstream's words and
    /// order).
    fn validate_resize_update(&self, new: &Pod, old: &Pod) -> FieldErrors {
        let mut errs = self.check(new);
        let (Some(new_spec), Some(old_spec)) = (&new.spec, &old.spec) else {
            return errs;
        };
        let all = |spec: &PodSpec| -> Vec<Container> {
            spec.containers
                .iter()
                .chain(spec.init_containers.iter().flatten())
                .cloned()
                .collect()
        };
        let cpu_memory_only = |mut c: Container| {
            if let Some(r) = c.resources.as_mut() {
                for list in [r.requests.as_mut(), r.limits.as_mut()]
                    .into_iter()
                    .flatten()
                {
                    list.retain(|name, _| name != "cpu" && name != "memory");
                }
            }
            c
        };
        let mut other_changes = false;
        for (i, (new_c, old_c)) in all(new_spec).into_iter().zip(all(old_spec)).enumerate() {
            let path = if i < new_spec.containers.len() {
                format!("spec.containers[{i}].resources")
            } else {
                format!(
                    "spec.initContainers[{}].resources",
                    i - new_spec.containers.len()
                )
            };
            // Requests may go (defaulting puts them back from the limits); limits may not.
            let limited = |c: &Container| -> Vec<&'static str> {
                let limits = c.resources.as_ref().and_then(|r| r.limits.as_ref());
                ["cpu", "memory"]
                    .into_iter()
                    .filter(|n| limits.is_some_and(|l| l.contains_key(*n)))
                    .collect()
            };
            let after = limited(&new_c);
            if limited(&old_c).iter().any(|n| !after.contains(n)) {
                errs.push(FieldError::forbidden(
                    format!("{path}.limits"),
                    "resource limits cannot be removed",
                ));
            }
            if new_c.resize_policy != old_c.resize_policy
                || cpu_memory_only(new_c) != cpu_memory_only(old_c)
            {
                other_changes = true;
            }
        }
        if other_changes {
            errs.push(FieldError::forbidden(
                "spec",
                "only cpu and memory resources are mutable",
            ));
        }
        let before = qos_class(old_spec);
        if qos_class(new_spec) != before {
            errs.push(FieldError::invalid(
                "spec",
                before,
                "Pod QOS Class may not change as a result of resizing",
            ));
        }
        errs
    }

    fn prepare_for_update(&self, new: &mut Pod, old: &Pod) {
        positive_grace_period(new);
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn copy_status(&self, to: &mut Pod, from: &Pod) {
        to.status = from.status.clone();
        if let Some(status) = to.status.as_mut() {
            sync_ips(status);
        }
    }

    /// A pod's owners are not written through `status` (kubelets of old wrote them wrong
    /// there, and the garbage collector relies on them), as upstream's.
    fn status_metadata(
        &self,
        sent: &capstan_meta::v1::ObjectMeta,
        stored: &capstan_meta::v1::ObjectMeta,
    ) -> capstan_meta::v1::ObjectMeta {
        capstan_meta::v1::ObjectMeta {
            owner_references: stored.owner_references.clone(),
            ..sent.clone()
        }
    }

    fn grace_period(&self, pod: &Pod, requested: Option<i64>) -> i64 {
        let spec = pod.spec.as_ref();
        let unbound = spec
            .and_then(|s| s.node_name.as_deref())
            .is_none_or(str::is_empty);
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if unbound || matches!(phase, Some("Succeeded" | "Failed")) {
            return 0;
        }
        requested
            .or_else(|| spec.and_then(|s| s.termination_grace_period_seconds))
            .unwrap_or(DEFAULT_GRACE_SECONDS)
            .max(0)
    }
}

/// Defaults a workload's pod template as a pod is defaulted.
pub fn default_template(template: &mut k8s_openapi::api::core::v1::PodTemplateSpec) {
    default_spec(template.spec.get_or_insert_with(Default::default));
}

/// Validates a workload's pod template at `path` (e.g. `spec.template`): its labels and
/// its spec, as a pod's, with the fields named from the workload; `privileged`: whether
/// privileged containers are allowed (`--allow-privileged`).
pub fn validate_template(
    template: Option<&k8s_openapi::api::core::v1::PodTemplateSpec>,
    path: &str,
    privileged: bool,
) -> FieldErrors {
    let Some(template) = template else {
        return vec![FieldError::required(path, "")];
    };
    let mut errs = Vec::new();
    if let Some(labels) = template.metadata.as_ref().and_then(|m| m.labels.as_ref()) {
        errs.extend(validation::labels(
            &format!("{path}.metadata.labels"),
            labels,
        ));
    }
    let mut spec_errs = Vec::new();
    match &template.spec {
        None => spec_errs.push(FieldError::required("spec", "")),
        Some(spec) => {
            validate_spec(spec, privileged, &mut spec_errs);
            if spec
                .ephemeral_containers
                .as_ref()
                .is_some_and(|e| !e.is_empty())
            {
                spec_errs.push(FieldError::forbidden(
                    "spec.ephemeralContainers",
                    "ephemeral containers not allowed in pod template",
                ));
            }
        }
    }
    for mut e in spec_errs {
        e.field = format!("{path}.{}", e.field);
        errs.push(e);
    }
    errs
}

fn default_spec(spec: &mut PodSpec) {
    spec.restart_policy.get_or_insert_with(|| "Always".into());
    spec.dns_policy.get_or_insert_with(|| "ClusterFirst".into());
    spec.termination_grace_period_seconds
        .get_or_insert(DEFAULT_GRACE_SECONDS);
    spec.security_context.get_or_insert_with(Default::default);
    spec.scheduler_name
        .get_or_insert_with(|| DEFAULT_SCHEDULER.into());
    let host_network = spec.host_network == Some(true);
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        default_container(c);
        // On the host's network a container's port is the host's port.
        for port in c.ports.iter_mut().flatten().filter(|_| host_network) {
            if port.host_port.unwrap_or(0) == 0 {
                port.host_port = Some(port.container_port);
            }
        }
    }
    for c in spec.ephemeral_containers.iter_mut().flatten() {
        c.resources.get_or_insert_with(Default::default);
        c.termination_message_path
            .get_or_insert_with(|| "/dev/termination-log".into());
        c.termination_message_policy
            .get_or_insert_with(|| "File".into());
        if c.image_pull_policy.is_none() {
            c.image_pull_policy = Some(pull_policy(c.image.as_deref().unwrap_or("")).into());
        }
    }
    for v in spec.volumes.iter_mut().flatten() {
        const MODE: i32 = 0o644;
        if let Some(s) = v.secret.as_mut() {
            s.default_mode.get_or_insert(MODE);
        }
        if let Some(c) = v.config_map.as_mut() {
            c.default_mode.get_or_insert(MODE);
        }
        if let Some(p) = v.projected.as_mut() {
            p.default_mode.get_or_insert(MODE);
        }
        if let Some(d) = v.downward_api.as_mut() {
            d.default_mode.get_or_insert(MODE);
        }
        if let Some(h) = v.host_path.as_mut() {
            h.type_.get_or_insert_with(String::new);
        }
    }
}

/// `podIP` and `podIPs` (and `hostIP`, `hostIPs`) made to agree, as upstream's conversion
/// does: a given `podIP` is authoritative (it replaces a list that starts elsewhere, or makes
/// an empty one), and `podIP` is always the list's first.
fn sync_ips(status: &mut k8s_openapi::api::core::v1::PodStatus) {
    use k8s_openapi::api::core::v1::{HostIP, PodIP};
    sync_ip_pair(
        &mut status.pod_ip,
        &mut status.pod_ips,
        |p| &p.ip,
        |ip| PodIP { ip },
    );
    sync_ip_pair(
        &mut status.host_ip,
        &mut status.host_ips,
        |h| &h.ip,
        |ip| HostIP { ip },
    );
}

/// One address field and its list kept in step: a set address the list does not start with
/// replaces the list; the list's first address is the field.
fn sync_ip_pair<T>(
    single: &mut Option<String>,
    list: &mut Option<Vec<T>>,
    ip_of: impl Fn(&T) -> &String,
    make: impl Fn(String) -> T,
) {
    if let Some(ip) = single.clone().filter(|ip| !ip.is_empty())
        && list.as_ref().and_then(|l| l.first()).map(&ip_of) != Some(&ip)
    {
        *list = Some(vec![make(ip)]);
    }
    if let Some(first) = list.as_ref().and_then(|l| l.first()) {
        *single = Some(ip_of(first).clone());
    }
}

/// A pod's or host's addresses: each an address, at most two, one per family.
fn validate_ips<'a>(path: &str, ips: impl Iterator<Item = &'a str>, errs: &mut FieldErrors) {
    let ips: Vec<&str> = ips.collect();
    let mut families = Vec::new();
    for (i, ip) in ips.iter().enumerate() {
        match ip.parse::<std::net::IpAddr>() {
            Ok(parsed) => families.push(parsed.is_ipv4()),
            Err(_) => errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                ip,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            )),
        }
    }
    if ips.len() > 2 {
        errs.push(FieldError::too_many(path, ips.len(), 2));
    } else if families.len() == 2 && families[0] == families[1] {
        errs.push(FieldError::invalid(
            path,
            &format!("[{}]", ips.join(" ")),
            "may specify no more than one IP for each IP family",
        ));
    }
}

/// A pod's container requests what it limits unless it says otherwise (templates are left
/// alone: their pods get it when created).
fn requests_from_limits(c: &mut Container) {
    if let Some(resources) = c.resources.as_mut()
        && let Some(limits) = resources.limits.clone()
    {
        let requests = resources.requests.get_or_insert_with(BTreeMap::new);
        for (name, value) in limits {
            requests.entry(name).or_insert(value);
        }
    }
}

fn default_container(c: &mut Container) {
    // Go writes the struct even when empty: every upstream container has `resources: {}`.
    c.resources.get_or_insert_with(Default::default);
    c.termination_message_path
        .get_or_insert_with(|| "/dev/termination-log".into());
    c.termination_message_policy
        .get_or_insert_with(|| "File".into());
    if c.image_pull_policy.is_none() {
        c.image_pull_policy = Some(pull_policy(c.image.as_deref().unwrap_or("")).into());
    }
    for p in c.ports.iter_mut().flatten() {
        p.protocol.get_or_insert_with(|| "TCP".into());
    }
    for probe in [
        c.liveness_probe.as_mut(),
        c.readiness_probe.as_mut(),
        c.startup_probe.as_mut(),
    ]
    .into_iter()
    .flatten()
    {
        default_probe(probe);
    }
    for env in c.env.iter_mut().flatten() {
        if let Some(field) = env.value_from.as_mut().and_then(|f| f.field_ref.as_mut()) {
            field.api_version.get_or_insert_with(|| "v1".into());
        }
    }
}

/// The default pull policy of `image`: `Always` for `latest` or no tag, else `IfNotPresent`.
fn pull_policy(image: &str) -> &'static str {
    // The tag is what follows the last ':' after the last '/' (a registry port is not a tag).
    let last = image.rsplit('/').next().unwrap_or(image);
    let name = last.split('@').next().unwrap_or(last);
    let tag = name.rsplit_once(':').map(|(_, t)| t);
    let digest = last.contains('@');
    if !digest && matches!(tag, None | Some("latest")) {
        "Always"
    } else {
        "IfNotPresent"
    }
}

fn default_probe(p: &mut Probe) {
    p.timeout_seconds.get_or_insert(1);
    p.period_seconds.get_or_insert(10);
    p.success_threshold.get_or_insert(1);
    p.failure_threshold.get_or_insert(3);
    if let Some(http) = p.http_get.as_mut() {
        http.scheme.get_or_insert_with(|| "HTTP".into());
        http.path.get_or_insert_with(|| "/".into());
    }
}

/// Upstream's QoS class: Guaranteed when every container sets equal CPU and memory requests
/// and limits, BestEffort when none sets any, Burstable otherwise.
pub fn qos_class(spec: &PodSpec) -> &'static str {
    let containers: Vec<&Container> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in &containers {
        let empty = BTreeMap::new();
        let resources = c.resources.as_ref();
        let requests = resources
            .and_then(|r| r.requests.as_ref())
            .unwrap_or(&empty);
        let limits = resources.and_then(|r| r.limits.as_ref()).unwrap_or(&empty);
        for name in ["cpu", "memory"] {
            let nonzero = |m: &BTreeMap<String, Quantity>| {
                m.get(name)
                    .and_then(|q| quantity::parse(&q.0))
                    .is_some_and(|v| v.0 != 0)
            };
            if nonzero(requests) || nonzero(limits) {
                any = true;
            }
            let req = requests.get(name).and_then(|q| quantity::parse(&q.0));
            let lim = limits.get(name).and_then(|q| quantity::parse(&q.0));
            if lim.is_none() || req.is_some_and(|r| Some(r) != lim) {
                guaranteed = false;
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// The spec's validation; `allow_privileged`: whether privileged containers (and Windows
/// host-process pods) are allowed (`--allow-privileged`).
fn validate_spec(spec: &PodSpec, allow_privileged: bool, errs: &mut FieldErrors) {
    if spec.containers.is_empty() {
        errs.push(FieldError::required("spec.containers", ""));
    }
    let mut names = BTreeSet::new();
    // Upstream checks the regular containers before the init containers.
    let init = spec.init_containers.as_deref().unwrap_or_default();
    let regular = (0..spec.containers.len()).map(|i| format!("spec.containers[{i}]"));
    let init_paths = (0..init.len()).map(|i| format!("spec.initContainers[{i}]"));
    let ordered = regular.zip(&spec.containers).chain(init_paths.zip(init));
    for (path, c) in ordered {
        validate_container(&path, c, &mut names, errs);
        pod_security_context::validate_container(
            &path,
            c.security_context.as_ref(),
            spec,
            allow_privileged,
            errs,
        );
    }
    unique_host_ports(&spec.containers, errs);
    if let Some(p) = spec.restart_policy.as_deref()
        && !RESTART_POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.restartPolicy",
            p,
            RESTART_POLICIES,
        ));
    }
    if let Some(p) = spec.dns_policy.as_deref()
        && !DNS_POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported("spec.dnsPolicy", p, DNS_POLICIES));
    }
    if let Some(node) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        for why in validation::dns1123_subdomain(node) {
            errs.push(FieldError::invalid("spec.nodeName", node, why));
        }
    }
    if let Some(resources) = &spec.resources {
        validate_resources("spec.resources", resources, true, errs);
    }
    validate_env_files(spec, errs);
    // The pod's own hostname (upstream's HostnameOverride, beta and on by default in v1.36).
    if let Some(host) = spec.hostname_override.as_deref() {
        for why in validation::dns1123_subdomain(host) {
            errs.push(FieldError::invalid("spec.hostnameOverride", host, why));
        }
    }
    // Host aliases' addresses, strictly (upstream's StrictIPCIDRValidation).
    for (i, alias) in spec.host_aliases.iter().flatten().enumerate() {
        if let Some(why) = crate::service::strict_ip_problem(&alias.ip, &[]) {
            errs.push(FieldError::invalid(
                format!("spec.hostAliases[{i}].ip"),
                &alias.ip,
                why,
            ));
        }
    }
    let mut volumes = BTreeSet::new();
    for (i, v) in spec.volumes.iter().flatten().enumerate() {
        let path = format!("spec.volumes[{i}].name");
        for why in validation::dns1123_label(&v.name) {
            errs.push(FieldError::invalid(path.clone(), &v.name, why));
        }
        if !volumes.insert(v.name.as_str()) {
            errs.push(FieldError::duplicate(path, &v.name));
        }
    }
    pod_security_context::validate_host_namespaces(spec, errs);
    pod_security_context::validate_host_process(spec, allow_privileged, errs);
    pod_security_context::validate_os(spec, errs);
}

/// A host port (by protocol and address) is taken by one container port only.
fn unique_host_ports(containers: &[Container], errs: &mut FieldErrors) {
    let mut taken = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        for (j, port) in c.ports.iter().flatten().enumerate() {
            let Some(host) = port.host_port.filter(|p| *p != 0) else {
                continue;
            };
            let key = format!(
                "{}/{}/{host}",
                port.protocol.as_deref().unwrap_or("TCP"),
                port.host_ip.as_deref().unwrap_or_default()
            );
            if !taken.insert(key.clone()) {
                errs.push(FieldError::duplicate(
                    format!("spec.containers[{i}].ports[{j}].hostPort"),
                    &key,
                ));
            }
        }
    }
}

/// The init containers, then the regular ones, each with its field path.
fn init_and_regular_containers(spec: &PodSpec) -> impl Iterator<Item = (String, &Container)> {
    let init = spec.init_containers.as_deref().unwrap_or_default();
    let paths = |path: &'static str, list: &'_ [Container]| {
        (0..list.len()).map(move |i| format!("{path}[{i}]"))
    };
    paths("spec.initContainers", init)
        .zip(init)
        .chain(paths("spec.containers", &spec.containers).zip(&spec.containers))
}

impl PodStrategy {
    /// The checks of every write: the spec, and privilege unless allowed.
    fn check(&self, pod: &Pod) -> FieldErrors {
        let mut errs = Vec::new();
        match &pod.spec {
            None => errs.push(FieldError::required("spec", "")),
            Some(spec) => {
                validate_spec(spec, self.allow_privileged, &mut errs);
                validate_ephemeral_containers(spec, self.allow_privileged, &mut errs);
            }
        }
        errs
    }
}

/// The fields an ephemeral container may not set (they serve a pod's own workload).
fn forbidden_ephemeral_fields(c: &EphemeralContainer) -> Vec<&'static str> {
    let nonempty = |v: Option<usize>| v.is_some_and(|n| n > 0);
    let resources = c.resources.as_ref().is_some_and(|r| {
        nonempty(r.limits.as_ref().map(BTreeMap::len))
            || nonempty(r.requests.as_ref().map(BTreeMap::len))
            || nonempty(r.claims.as_ref().map(Vec::len))
    });
    [
        ("ports", nonempty(c.ports.as_ref().map(Vec::len))),
        ("resources", resources),
        (
            "resizePolicy",
            nonempty(c.resize_policy.as_ref().map(Vec::len)),
        ),
        (
            "restartPolicy",
            c.restart_policy.as_deref().is_some_and(|p| !p.is_empty()),
        ),
        ("livenessProbe", c.liveness_probe.is_some()),
        ("readinessProbe", c.readiness_probe.is_some()),
        ("startupProbe", c.startup_probe.is_some()),
        ("lifecycle", c.lifecycle.is_some()),
    ]
    .into_iter()
    .filter_map(|(field, set)| set.then_some(field))
    .collect()
}

/// An ephemeral container as the container it shares its fields with.
fn as_container(c: &EphemeralContainer) -> Container {
    let mut doc = serde_json::to_value(c).unwrap_or_default();
    if let Some(fields) = doc.as_object_mut() {
        fields.remove("targetContainerName");
    }
    serde_json::from_value(doc).unwrap_or_default()
}

/// Ephemeral containers: valid containers, named uniquely among all of the pod's, targeting
/// one of its other containers, without the fields of a workload's containers.
fn validate_ephemeral_containers(spec: &PodSpec, allow_privileged: bool, errs: &mut FieldErrors) {
    let ephemeral = spec.ephemeral_containers.as_deref().unwrap_or_default();
    if ephemeral.is_empty() {
        return;
    }
    let others: BTreeSet<&str> = init_and_regular_containers(spec)
        .map(|(_, c)| c.name.as_str())
        .collect();
    let converted: Vec<Container> = ephemeral.iter().map(as_container).collect();
    let mut names = others.clone();
    for (i, (ec, c)) in ephemeral.iter().zip(&converted).enumerate() {
        let path = format!("spec.ephemeralContainers[{i}]");
        validate_container(&path, c, &mut names, errs);
        pod_security_context::validate_container(
            &path,
            c.security_context.as_ref(),
            spec,
            allow_privileged,
            errs,
        );
        if let Some(target) = ec
            .target_container_name
            .as_deref()
            .filter(|t| !t.is_empty())
            && !others.contains(target)
        {
            errs.push(FieldError::not_found(
                format!("{path}.targetContainerName"),
                target,
            ));
        }
        for field in forbidden_ephemeral_fields(ec) {
            errs.push(FieldError::forbidden(
                format!("{path}.{field}"),
                "cannot be set for an Ephemeral Container",
            ));
        }
        for (j, m) in ec.volume_mounts.iter().flatten().enumerate() {
            for (field, value) in [("subPath", &m.sub_path), ("subPathExpr", &m.sub_path_expr)] {
                if value.as_deref().is_some_and(|v| !v.is_empty()) {
                    errs.push(FieldError::forbidden(
                        format!("{path}.volumeMounts[{j}].{field}"),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
}

fn validate_container<'a>(
    path: &str,
    c: &'a Container,
    names: &mut BTreeSet<&'a str>,
    errs: &mut FieldErrors,
) {
    if c.name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    } else {
        for why in validation::dns1123_label(&c.name) {
            errs.push(FieldError::invalid(format!("{path}.name"), &c.name, why));
        }
        if !names.insert(c.name.as_str()) {
            errs.push(FieldError::duplicate(format!("{path}.name"), &c.name));
        }
    }
    if c.image.as_deref().is_none_or(|i| i.trim().is_empty()) {
        errs.push(FieldError::required(format!("{path}.image"), ""));
    }
    if let Some(p) = c.image_pull_policy.as_deref()
        && !PULL_POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported(
            format!("{path}.imagePullPolicy"),
            p,
            PULL_POLICIES,
        ));
    }
    for (i, port) in c.ports.iter().flatten().enumerate() {
        let p = format!("{path}.ports[{i}]");
        if !(1..=65535).contains(&port.container_port) {
            errs.push(FieldError::invalid(
                format!("{p}.containerPort"),
                &port.container_port.to_string(),
                "must be between 1 and 65535, inclusive",
            ));
        }
        if let Some(proto) = port.protocol.as_deref()
            && !PROTOCOLS.contains(&proto)
        {
            errs.push(FieldError::not_supported(
                format!("{p}.protocol"),
                proto,
                PROTOCOLS,
            ));
        }
    }
    if let Some(resources) = &c.resources {
        validate_resources(&format!("{path}.resources"), resources, false, errs);
    }
    let rules = c.restart_policy_rules.as_deref().unwrap_or_default();
    if !rules.is_empty() && c.restart_policy.is_none() {
        errs.push(FieldError::required(
            format!("{path}.restartPolicy"),
            "must specify restartPolicy when restart rules are used",
        ));
    }
    for (i, rule) in rules.iter().enumerate() {
        if !RESTART_RULE_ACTIONS.contains(&rule.action.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{path}.restartPolicyRules[{i}].action"),
                &rule.action,
                RESTART_RULE_ACTIONS,
            ));
        }
    }
}

/// The actions of a container's restart rules (upstream's ContainerRestartRules).
const RESTART_RULE_ACTIONS: &[&str] = &["Restart", "RestartAllContainers"];

/// The resources a pod as a whole may set (upstream's PodLevelResources), as its message
/// lists them.
const POD_LEVEL_RESOURCES: &[&str] = &["cpu", "hugepages-", "memory"];

/// Requests and limits under `path` (a container's, or the pod's own when `pod_level`): each
/// a quantity of at least 0, of a kind the pod level supports, no request above its limit.
fn validate_resources(
    path: &str,
    resources: &k8s_openapi::api::core::v1::ResourceRequirements,
    pod_level: bool,
    errs: &mut FieldErrors,
) {
    let mut parsed = BTreeMap::new();
    for (kind, map) in [
        ("requests", &resources.requests),
        ("limits", &resources.limits),
    ] {
        for (name, q) in map.iter().flatten() {
            let field = format!("{path}.{kind}[{name}]");
            let supported = name == "cpu" || name == "memory" || name.starts_with("hugepages-");
            if pod_level && !supported {
                errs.push(FieldError::not_supported(field, name, POD_LEVEL_RESOURCES));
                continue;
            }
            match quantity::parse(&q.0) {
                None => errs.push(FieldError::invalid(field, &q.0, quantity::QUANTITY_ERROR)),
                Some(v) if v.0 < 0 => errs.push(FieldError::invalid(
                    field,
                    &q.0,
                    "must be greater than or equal to 0",
                )),
                Some(v) => {
                    parsed.insert((kind, name.as_str()), (v, q.0.as_str()));
                }
            }
        }
    }
    for ((kind, name), (request, text)) in &parsed {
        if *kind != "requests" {
            continue;
        }
        if let Some((limit, limit_text)) = parsed.get(&("limits", name))
            && request > limit
        {
            errs.push(FieldError::invalid(
                format!("{path}.requests"),
                text,
                format!("must be less than or equal to {name} limit of {limit_text}"),
            ));
        }
    }
}

/// Environment variables read from files (upstream's EnvFiles): a key, and a volume of the
/// pod.
fn validate_env_files(spec: &PodSpec, errs: &mut FieldErrors) {
    let volumes: BTreeSet<&str> = spec
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.as_str())
        .collect();
    for (path, c) in init_and_regular_containers(spec) {
        for (i, env) in c.env.iter().flatten().enumerate() {
            let Some(file) = env
                .value_from
                .as_ref()
                .and_then(|v| v.file_key_ref.as_ref())
            else {
                continue;
            };
            let at = format!("{path}.env[{i}].valueFrom.fileKeyRef");
            if file.key.is_empty() {
                errs.push(FieldError::required(format!("{at}.key"), ""));
            }
            if !volumes.contains(file.volume_name.as_str()) {
                errs.push(FieldError::not_found(
                    format!("{at}.volumeName"),
                    &file.volume_name,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn defaults_follow_upstream() {
        let mut p = pod(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [
                {"name": "a", "image": "nginx", "ports": [{"containerPort": 80}],
                 "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                 "livenessProbe": {"httpGet": {"port": 80}}},
                {"name": "b", "image": "registry:5000/app:1.2"},
                {"name": "c", "image": "app@sha256:abc"}
            ]}
        }));
        PodStrategy {
            allow_privileged: false,
        }
        .default(&mut p);
        PodStrategy {
            allow_privileged: false,
        }
        .prepare_for_create(&mut p);
        let spec = p.spec.as_ref().unwrap();
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(spec.scheduler_name.as_deref(), Some(DEFAULT_SCHEDULER));
        assert_eq!(spec.termination_grace_period_seconds, Some(30));
        assert_eq!(
            spec.service_account_name, None,
            "the ServiceAccount plugin's part"
        );
        assert_eq!(
            spec.tolerations, None,
            "the DefaultTolerationSeconds plugin's part"
        );
        let pulls: Vec<_> = spec
            .containers
            .iter()
            .map(|c| c.image_pull_policy.clone().unwrap())
            .collect();
        assert_eq!(pulls, ["Always", "IfNotPresent", "IfNotPresent"]);
        let a = &spec.containers[0];
        assert_eq!(
            a.ports.as_ref().unwrap()[0].protocol.as_deref(),
            Some("TCP")
        );
        let requests = a.resources.as_ref().unwrap().requests.as_ref().unwrap();
        assert_eq!(requests["memory"].0, "1Gi");
        let probe = a.liveness_probe.as_ref().unwrap();
        assert_eq!(
            (probe.period_seconds, probe.failure_threshold),
            (Some(10), Some(3))
        );
        let status = p.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Pending"));
        // b and c have no resources: Burstable, not Guaranteed.
        assert_eq!(status.qos_class.as_deref(), Some("Burstable"));
    }

    #[test]
    fn validation_names_the_fields() {
        let p = pod(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [
                {"name": "Bad_Name", "image": ""},
                {"name": "x", "image": "i", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1", "memory": "lots"}}}
            ], "restartPolicy": "Sometimes"}
        }));
        let fields: Vec<String> = PodStrategy {
            allow_privileged: false,
        }
        .validate(&p)
        .iter()
        .map(|e| e.field.clone())
        .collect();
        for expected in [
            "spec.containers[0].name",
            "spec.containers[0].image",
            "spec.containers[1].resources.limits[memory]",
            "spec.containers[1].resources.requests",
            "spec.restartPolicy",
        ] {
            assert!(
                fields.iter().any(|f| f == expected),
                "{expected} in {fields:?}"
            );
        }
        let empty = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": []}}));
        assert_eq!(
            PodStrategy {
                allow_privileged: false
            }
            .validate(&empty)[0]
                .field,
            "spec.containers"
        );
    }

    #[test]
    fn only_images_and_a_few_fields_may_change() {
        let old = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "v1"}]}}),
        );
        let mut new = old.clone();
        new.spec.as_mut().unwrap().containers[0].image = Some("v2".into());
        new.spec.as_mut().unwrap().active_deadline_seconds = Some(10);
        assert!(
            PodStrategy {
                allow_privileged: false
            }
            .validate_update(&new, &old)
            .is_empty()
        );
        new.spec.as_mut().unwrap().node_name = Some("n1".into());
        let errs = PodStrategy {
            allow_privileged: false,
        }
        .validate_update(&new, &old);
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0]
                .detail
                .starts_with("pod updates may not change fields")
        );
    }

    #[test]
    fn pod_ips_follow_pod_ip_and_are_checked() {
        use k8s_openapi::api::core::v1::{PodIP, PodStatus};
        let ips = |l: &[&str]| Some(l.iter().map(|ip| PodIP { ip: ip.to_string() }).collect());
        // A given podIP is authoritative; podIP is always the list's first.
        let mut status = PodStatus {
            pod_ip: Some("10.0.0.9".into()),
            pod_ips: ips(&["10.0.0.5", "fd00::5"]),
            ..Default::default()
        };
        sync_ips(&mut status);
        assert_eq!(status.pod_ips, ips(&["10.0.0.9"]));
        let mut status = PodStatus {
            pod_ips: ips(&["10.0.0.5", "fd00::5"]),
            ..Default::default()
        };
        sync_ips(&mut status);
        assert_eq!(status.pod_ip.as_deref(), Some("10.0.0.5"));
        let check = |l: &[&str]| {
            let mut errs = Vec::new();
            validate_ips("status.podIPs", l.iter().copied(), &mut errs);
            errs.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        };
        assert!(check(&["10.0.0.5", "fd00::5"]).is_empty());
        assert_eq!(
            check(&["not-an-ip"]),
            [
                "status.podIPs[0]: Invalid value: \"not-an-ip\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
            ]
        );
        assert_eq!(check(&["10.0.0.5", "10.0.0.6"]).len(), 1);
        assert_eq!(check(&["10.0.0.5", "fd00::5", "10.0.0.6"]).len(), 1);
    }

    #[test]
    fn grace_period_of_bound_and_unbound_pods() {
        let mut p = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "i"}], "terminationGracePeriodSeconds": 45}}),
        );
        assert_eq!(
            PodStrategy {
                allow_privileged: false
            }
            .grace_period(&p, None),
            0
        );
        p.spec.as_mut().unwrap().node_name = Some("n1".into());
        assert_eq!(
            PodStrategy {
                allow_privileged: false
            }
            .grace_period(&p, None),
            45
        );
        assert_eq!(
            PodStrategy {
                allow_privileged: false
            }
            .grace_period(&p, Some(0)),
            0
        );
        assert_eq!(
            PodStrategy {
                allow_privileged: false
            }
            .grace_period(&p, Some(5)),
            5
        );
    }

    #[test]
    fn privileged_containers_need_the_cluster_policy() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {
                "initContainers": [{"name": "i", "image": "x",
                    "securityContext": {"privileged": true}}],
                "containers": [{"name": "a", "image": "x"},
                    {"name": "b", "image": "x", "securityContext": {"privileged": true}}],
                "ephemeralContainers": [{"name": "e", "image": "x",
                    "securityContext": {"privileged": true}}]
            }
        }))
        .unwrap();
        let strict = PodStrategy {
            allow_privileged: false,
        }
        .check(&pod);
        let fields: Vec<&str> = strict.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            // In upstream's order: regular containers, init containers, ephemeral ones.
            [
                "spec.containers[1].securityContext.privileged",
                "spec.initContainers[0].securityContext.privileged",
                "spec.ephemeralContainers[0].securityContext.privileged",
            ]
        );
        assert!(
            PodStrategy {
                allow_privileged: true
            }
            .check(&pod)
            .is_empty()
        );
    }

    #[test]
    fn ephemeral_containers_are_added_only_through_their_subresource() {
        let s = PodStrategy {
            allow_privileged: false,
        };
        let old = pod(serde_json::json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "app", "image": "x"}],
                "ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}}));
        let messages = |errs: FieldErrors| -> Vec<String> {
            errs.iter()
                .map(|e| format!("{}: {}", e.field, e.body()))
                .collect()
        };
        assert_eq!(
            messages(s.validate(&old)),
            ["spec.ephemeralContainers: Forbidden: cannot be set on create"]
        );
        let mut new = old.clone();
        let added: EphemeralContainer = serde_json::from_value(serde_json::json!({
            "name": "app", "image": "busybox", "targetContainerName": "nope",
            "ports": [{"containerPort": 80}], "readinessProbe": {"exec": {"command": ["true"]}},
            "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "x"}]}))
        .unwrap();
        let list = new
            .spec
            .as_mut()
            .unwrap()
            .ephemeral_containers
            .as_mut()
            .unwrap();
        list[0].image = Some("other".into());
        list.push(added);
        assert_eq!(
            messages(s.validate_ephemeral_containers_update(&new, &old)),
            [
                "spec.ephemeralContainers[1].name: Duplicate value: \"app\"",
                "spec.ephemeralContainers[1].targetContainerName: Not found: \"nope\"",
                "spec.ephemeralContainers[1].ports: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[1].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[1].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"dbg\" may not be changed\n",
            ]
        );
        let mut mirror = old.clone();
        mirror.metadata.annotations =
            Some([(MIRROR_POD_ANNOTATION.to_string(), "x".to_string())].into());
        assert_eq!(
            messages(s.validate_ephemeral_containers_update(&new, &mirror)),
            [": Forbidden: static pods do not support ephemeral containers"]
        );
    }
}
