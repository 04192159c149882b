//! `PodSecurity`: the Pod Security Standards (`privileged`, `baseline`, `restricted`)
//! enforced, warned about and audited per namespace, as its `pod-security.kubernetes.io/`
//! labels say (or the configuration's defaults), with the configuration's exemptions.
//! Versions other than `latest` are read as `latest`: one set of checks, upstream's current.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::{ApiError, FieldError, GroupResource};
use serde::Deserialize;
use serde_json::Value;

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};
use crate::error::{Error, Result};

const LABEL: &str = "pod-security.kubernetes.io/";
const LEVELS: [&str; 3] = ["privileged", "baseline", "restricted"];

/// A standard, ordered by strictness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "privileged" => Some(Self::Privileged),
            "baseline" => Some(Self::Baseline),
            "restricted" => Some(Self::Restricted),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        LEVELS[self as usize]
    }
}

/// `PodSecurityConfiguration` (`pod-security.admission.config.k8s.io/v1`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Configuration {
    #[serde(rename = "apiVersion")]
    _api_version: Option<String>,
    #[serde(rename = "kind")]
    _kind: Option<String>,
    defaults: BTreeMap<String, String>,
    exemptions: Exemptions,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
struct Exemptions {
    usernames: Vec<String>,
    runtime_classes: Vec<String>,
    namespaces: Vec<String>,
}

/// The `PodSecurity` plugin.
pub struct PodSecurity {
    lister: Arc<dyn Lister>,
    defaults: [Level; 3],
    exemptions: Exemptions,
}

/// Enforce, audit, warn.
const MODES: [&str; 3] = ["enforce", "audit", "warn"];

impl PodSecurity {
    /// The plugin with its configuration (defaults privileged everywhere, no exemptions).
    pub fn new(lister: Arc<dyn Lister>, config: Option<&Value>) -> Result<Self> {
        let config: Configuration = match config {
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| Error::Plugin {
                plugin: "PodSecurity",
                reason: e.to_string(),
            })?,
            None => Configuration::default(),
        };
        let mut defaults = [Level::Privileged; 3];
        for (key, value) in &config.defaults {
            let Some(i) = MODES.iter().position(|m| m == key) else {
                if key.ends_with("-version") {
                    continue;
                }
                return Err(Error::Plugin {
                    plugin: "PodSecurity",
                    reason: format!("defaults: unknown mode {key:?}"),
                });
            };
            defaults[i] = Level::parse(value).ok_or_else(|| Error::Plugin {
                plugin: "PodSecurity",
                reason: format!(
                    "defaults.{key}: {value:?} is not one of {}",
                    LEVELS.join(", ")
                ),
            })?;
        }
        Ok(Self {
            lister,
            defaults,
            exemptions: config.exemptions,
        })
    }

    /// The namespace's levels (enforce, audit, warn).
    async fn levels(&self, namespace: &str) -> std::result::Result<[Level; 3], ApiError> {
        let ns = self
            .lister
            .get_shared(&core("namespaces"), "", namespace)
            .await?;
        let labels = ns.as_ref().map(|n| &n["metadata"]["labels"]);
        let mut levels = self.defaults;
        for (i, mode) in MODES.iter().enumerate() {
            if let Some(level) = labels
                .and_then(|l| l[format!("{LABEL}{mode}")].as_str())
                .and_then(Level::parse)
            {
                levels[i] = level;
            }
        }
        Ok(levels)
    }
}

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// Every container with its name.
fn containers(spec: &Value) -> Vec<(&str, &Value)> {
    capstan_api::pod_references::containers(spec)
        .map(|c| (c["name"].as_str().unwrap_or_default(), c))
        .collect()
}

/// `container "a"` or `containers "a", "b"`.
fn named(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    if names.len() == 1 {
        format!("container {}", quoted[0])
    } else {
        format!("containers {}", quoted.join(", "))
    }
}

const BASELINE_CAPABILITIES: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

const SAFE_SYSCTLS: [&str; 10] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];

const RESTRICTED_VOLUMES: [&str; 9] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The violations of the baseline standard, as upstream words them, each with its check name.
fn baseline(spec: &Value, annotations: &Value) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    let host: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .iter()
        .filter(|f| spec[**f] == true)
        .map(|f| format!("{f}=true"))
        .collect();
    if !host.is_empty() {
        out.push((
            "hostNamespaces",
            format!("host namespaces ({})", host.join(", ")),
        ));
    }
    let all = containers(spec);
    let privileged: Vec<&str> = all
        .iter()
        .filter(|(_, c)| c["securityContext"]["privileged"] == true)
        .map(|(n, _)| *n)
        .collect();
    if !privileged.is_empty() {
        out.push((
            "privileged",
            format!(
                "privileged ({} must not set securityContext.privileged=true)",
                named(&privileged)
            ),
        ));
    }
    let mut caps = Vec::new();
    for (name, c) in &all {
        let added: Vec<String> = items(&c["securityContext"]["capabilities"]["add"])
            .filter_map(Value::as_str)
            .filter(|cap| !BASELINE_CAPABILITIES.contains(cap))
            .map(|cap| format!("{cap:?}"))
            .collect();
        if !added.is_empty() {
            caps.push(format!(
                "container {name:?} must not include {} in securityContext.capabilities.add",
                added.join(", ")
            ));
        }
    }
    if !caps.is_empty() {
        out.push((
            "capabilities_baseline",
            format!("non-default capabilities ({})", caps.join("; ")),
        ));
    }
    let host_paths: Vec<String> = items(&spec["volumes"])
        .filter(|v| !v["hostPath"].is_null())
        .filter_map(|v| v["name"].as_str().map(|n| format!("{n:?}")))
        .collect();
    if !host_paths.is_empty() {
        let noun = if host_paths.len() == 1 {
            "volume"
        } else {
            "volumes"
        };
        out.push((
            "hostPathVolumes",
            format!("hostPath volumes ({noun} {})", host_paths.join(", ")),
        ));
    }
    let mut ports = Vec::new();
    for (name, c) in &all {
        let used: Vec<String> = items(&c["ports"])
            .filter_map(|p| p["hostPort"].as_i64())
            .filter(|p| *p != 0)
            .map(|p| p.to_string())
            .collect();
        if !used.is_empty() {
            let noun = if used.len() == 1 {
                "hostPort"
            } else {
                "hostPorts"
            };
            ports.push(format!(
                "container {name:?} uses {noun} {}",
                used.join(", ")
            ));
        }
    }
    if !ports.is_empty() {
        out.push(("hostPorts", format!("hostPort ({})", ports.join("; "))));
    }
    if let Some(found) = seccomp(spec, &all, false) {
        out.push(("seccompProfile_baseline", found));
    }
    let unmasked: Vec<&str> = all
        .iter()
        .filter(|(_, c)| {
            c["securityContext"]["procMount"]
                .as_str()
                .is_some_and(|m| m != "Default")
        })
        .map(|(n, _)| *n)
        .collect();
    if !unmasked.is_empty() {
        out.push((
            "procMount",
            format!(
                "procMount ({} must not set securityContext.procMount to \"Unmasked\")",
                named(&unmasked)
            ),
        ));
    }
    let sysctls: Vec<&str> = items(&spec["securityContext"]["sysctls"])
        .filter_map(|s| s["name"].as_str())
        .filter(|n| !SAFE_SYSCTLS.contains(n))
        .collect();
    if !sysctls.is_empty() {
        out.push((
            "sysctls",
            format!("forbidden sysctls ({})", sysctls.join(", ")),
        ));
    }
    if let Some(found) = app_armor(spec, annotations, &all) {
        out.push(("appArmorProfile", found));
    }
    if let Some(found) = se_linux(spec, &all) {
        out.push(("seLinuxOptions", found));
    }
    let host_process = |sc: &Value| sc["windowsOptions"]["hostProcess"] == true;
    let pod_host_process = host_process(&spec["securityContext"]);
    let host_processes: Vec<&str> = all
        .iter()
        .filter(|(_, c)| host_process(&c["securityContext"]))
        .map(|(n, _)| *n)
        .collect();
    if pod_host_process || !host_processes.is_empty() {
        out.push((
            "windowsHostProcess",
            format!(
                "hostProcess ({} must not set securityContext.windowsOptions.hostProcess=true)",
                setters(pod_host_process, &host_processes)
            ),
        ));
    }
    out
}

/// The annotation that set a container's AppArmor profile before the field did.
const APP_ARMOR_ANNOTATION: &str = "container.apparmor.security.beta.kubernetes.io/";

/// AppArmor profiles other than the runtime's default or a local one, in the fields or the
/// annotations (which upstream copies into unset container fields first).
fn app_armor(spec: &Value, annotations: &Value, all: &[(&str, &Value)]) -> Option<String> {
    let allowed = |t: &str| matches!(t, "RuntimeDefault" | "Localhost");
    let mut values: Vec<String> = Vec::new();
    let mut value = |v: String| {
        if !values.contains(&v) {
            values.push(v);
        }
    };
    let mut setters = Vec::new();
    if let Some(t) = spec["securityContext"]["appArmorProfile"]["type"].as_str()
        && !allowed(t)
    {
        setters.push("pod".to_string());
        value(format!("{t:?}"));
    }
    let annotation = |name: &str| annotations[format!("{APP_ARMOR_ANNOTATION}{name}")].as_str();
    let mut bad = Vec::new();
    for (name, c) in all {
        let field = c["securityContext"]["appArmorProfile"]["type"].as_str();
        // The annotation becomes the container's field only where it differs from the pod's.
        let pod_profile = &spec["securityContext"]["appArmorProfile"];
        let synced = annotation(name)
            .map(|a| match a {
                "runtime/default" => ("RuntimeDefault", None),
                "unconfined" => ("Unconfined", None),
                _ if a.starts_with("localhost/") => ("Localhost", a.strip_prefix("localhost/")),
                _ => ("", None),
            })
            .filter(|(t, local)| {
                pod_profile["type"].as_str() != Some(t)
                    || pod_profile["localhostProfile"].as_str() != *local
            })
            .map(|(t, _)| t);
        if let Some(t) = field.or(synced).filter(|t| !t.is_empty() && !allowed(t)) {
            bad.push(*name);
            value(format!("{t:?}"));
        }
    }
    if !bad.is_empty() {
        setters.push(named(&bad));
    }
    let mut annotated = false;
    for (key, v) in annotations.as_object().into_iter().flatten() {
        let Some(v) = v.as_str() else { continue };
        if key.starts_with(APP_ARMOR_ANNOTATION)
            && v != "runtime/default"
            && !v.starts_with("localhost/")
        {
            annotated = true;
            value(format!("\"{key}=\"{v}\"\""));
        }
    }
    if annotated {
        setters.push("annotation".into());
    }
    if setters.is_empty() {
        return None;
    }
    let plural = if values.len() > 1 { "s" } else { "" };
    Some(format!(
        "forbidden AppArmor profile{plural} ({} must not set AppArmor profile type to {})",
        setters.join(" and "),
        values.join(", ")
    ))
}

/// SELinux options beyond a container type and a level: other types, users and roles.
fn se_linux(spec: &Value, all: &[(&str, &Value)]) -> Option<String> {
    const TYPES: [&str; 5] = [
        "",
        "container_t",
        "container_init_t",
        "container_kvm_t",
        "container_engine_t",
    ];
    let mut types = std::collections::BTreeSet::new();
    let (mut user, mut role) = (false, false);
    let mut judge = |options: &Value| {
        let mut bad = false;
        if let Some(t) = options["type"].as_str()
            && !TYPES.contains(&t)
        {
            types.insert(t.to_string());
            bad = true;
        }
        let set = |f: &str| options[f].as_str().is_some_and(|v| !v.is_empty());
        if set("user") {
            user = true;
            bad = true;
        }
        if set("role") {
            role = true;
            bad = true;
        }
        bad
    };
    let mut setters = Vec::new();
    if judge(&spec["securityContext"]["seLinuxOptions"]) {
        setters.push("pod".to_string());
    }
    let bad: Vec<&str> = all
        .iter()
        .filter(|(_, c)| judge(&c["securityContext"]["seLinuxOptions"]))
        .map(|(n, _)| *n)
        .collect();
    if !bad.is_empty() {
        setters.push(named(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    let mut details = Vec::new();
    if !types.is_empty() {
        let quoted: Vec<String> = types.iter().map(|t| format!("{t:?}")).collect();
        let noun = if quoted.len() == 1 { "type" } else { "types" };
        details.push(format!("{noun} {}", quoted.join(", ")));
    }
    if user {
        details.push("user may not be set".to_string());
    }
    if role {
        details.push("role may not be set".to_string());
    }
    Some(format!(
        "seLinuxOptions ({} set forbidden securityContext.seLinuxOptions: {})",
        setters.join(" and "),
        details.join("; ")
    ))
}

/// Who set a field to a value the standard refuses: `pod`, `container "a"`, or both joined
/// by ` and `, as upstream words it.
fn setters(pod: bool, containers: &[&str]) -> String {
    let mut who = Vec::new();
    if pod {
        who.push("pod".to_string());
    }
    if !containers.is_empty() {
        who.push(named(containers));
    }
    who.join(" and ")
}

/// The seccomp check: at baseline only `Unconfined` is refused; at restricted a profile must
/// also be set (on the pod for every container that sets none). An explicit bad setting is
/// reported before, and instead of, the missing ones.
fn seccomp(spec: &Value, all: &[(&str, &Value)], restricted: bool) -> Option<String> {
    let bad = |t: &str| {
        if restricted {
            !matches!(t, "RuntimeDefault" | "Localhost")
        } else {
            t == "Unconfined"
        }
    };
    let kind = |sc: &Value| sc["seccompProfile"]["type"].as_str().map(str::to_string);
    let mut values = std::collections::BTreeSet::new();
    let pod_type = kind(&spec["securityContext"]);
    let pod_bad = pod_type.as_deref().is_some_and(bad);
    if pod_bad {
        values.extend(pod_type.clone());
    }
    let pod_set = pod_type.is_some() && !pod_bad;
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for (name, c) in all {
        match kind(&c["securityContext"]) {
            Some(t) if bad(&t) => {
                explicit.push(*name);
                values.insert(t);
            }
            Some(_) => {}
            None if restricted && !pod_set => implicit.push(*name),
            None => {}
        }
    }
    if pod_bad || !explicit.is_empty() {
        let values: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
        return Some(format!(
            "seccompProfile ({} must not set securityContext.seccompProfile.type to {})",
            setters(pod_bad, &explicit),
            values.join(", ")
        ));
    }
    (!implicit.is_empty()).then(|| {
        format!(
            "seccompProfile (pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")",
            named(&implicit)
        )
    })
}

/// The further checks of the restricted standard, each with upstream's check name.
fn restricted(spec: &Value) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let all = containers(spec);
    // Windows pods have no Linux privilege escalation, capabilities or seccomp to restrict.
    let windows = spec["os"]["name"] == "windows";
    let mut volumes = Vec::new();
    for v in items(&spec["volumes"]) {
        let name = v["name"].as_str().unwrap_or_default();
        let kind = v
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .find(|k| *k != "name");
        if let Some(kind) = kind
            && !RESTRICTED_VOLUMES.contains(&kind)
        {
            volumes.push(format!(
                "volume {name:?} uses restricted volume type {kind:?}"
            ));
        }
    }
    if !volumes.is_empty() {
        out.push((
            "restrictedVolumes",
            format!("restricted volume types ({})", volumes.join("; ")),
        ));
    }
    let escalating: Vec<&str> = all
        .iter()
        .filter(|_| !windows)
        .filter(|(_, c)| c["securityContext"]["allowPrivilegeEscalation"] != false)
        .map(|(n, _)| *n)
        .collect();
    if !escalating.is_empty() {
        out.push((
            "allowPrivilegeEscalation",
            format!(
                "allowPrivilegeEscalation != false ({} must set securityContext.allowPrivilegeEscalation=false)",
                named(&escalating)
            ),
        ));
    }
    let mut caps = Vec::new();
    let not_dropping: Vec<&str> = all
        .iter()
        .filter(|(_, c)| !items(&c["securityContext"]["capabilities"]["drop"]).any(|d| d == "ALL"))
        .map(|(n, _)| *n)
        .collect();
    if !not_dropping.is_empty() {
        caps.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            named(&not_dropping)
        ));
    }
    for (name, c) in &all {
        let added: Vec<String> = items(&c["securityContext"]["capabilities"]["add"])
            .filter_map(Value::as_str)
            .filter(|cap| *cap != "NET_BIND_SERVICE")
            .map(|cap| format!("{cap:?}"))
            .collect();
        if !added.is_empty() {
            caps.push(format!(
                "container {name:?} must not include {} in securityContext.capabilities.add",
                added.join(", ")
            ));
        }
    }
    if !caps.is_empty() && !windows {
        out.push((
            "capabilities_restricted",
            format!("unrestricted capabilities ({})", caps.join("; ")),
        ));
    }
    if let Some(found) = run_as_non_root(spec, &all) {
        out.push(("runAsNonRoot", found));
    }
    let pod_sc = &spec["securityContext"];
    let root: Vec<&str> = all
        .iter()
        .filter(|(_, c)| c["securityContext"]["runAsUser"] == 0)
        .map(|(n, _)| *n)
        .collect();
    if pod_sc["runAsUser"] == 0 {
        out.push((
            "runAsUser",
            "runAsUser=0 (pod must not set runAsUser=0)".into(),
        ));
    } else if !root.is_empty() {
        out.push((
            "runAsUser",
            format!("runAsUser=0 ({} must not set runAsUser=0)", named(&root)),
        ));
    }
    if let Some(found) = seccomp(spec, &all, true).filter(|_| !windows) {
        out.push(("seccompProfile_restricted", found));
    }
    out
}

/// `runAsNonRoot` must be true, on the pod or on every container; an explicit `false` is
/// reported before, and instead of, the containers that set nothing.
fn run_as_non_root(spec: &Value, all: &[(&str, &Value)]) -> Option<String> {
    let pod = spec["securityContext"]["runAsNonRoot"].as_bool();
    let pod_bad = pod == Some(false);
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for (name, c) in all {
        match c["securityContext"]["runAsNonRoot"].as_bool() {
            Some(false) => explicit.push(*name),
            Some(true) => {}
            None if pod != Some(true) => implicit.push(*name),
            None => {}
        }
    }
    if pod_bad || !explicit.is_empty() {
        return Some(format!(
            "runAsNonRoot != true ({} must not set securityContext.runAsNonRoot=false)",
            setters(pod_bad, &explicit)
        ));
    }
    (!implicit.is_empty()).then(|| {
        format!(
            "runAsNonRoot != true (pod or {} must set securityContext.runAsNonRoot=true)",
            named(&implicit)
        )
    })
}

/// The baseline checks the restricted standard replaces with stricter ones of its own.
const OVERRIDDEN_AT_RESTRICTED: [&str; 3] = [
    "capabilities_baseline",
    "hostPathVolumes",
    "seccompProfile_baseline",
];

/// The violations of `level` by the pod spec, in upstream's order: the baseline checks by
/// name, then (at restricted, with the baseline checks it replaces left out) the
/// restricted checks by name.
fn violations(level: Level, spec: &Value, annotations: &Value) -> Vec<String> {
    let mut found = match level {
        Level::Privileged => return Vec::new(),
        Level::Baseline => baseline(spec, annotations),
        Level::Restricted => baseline(spec, annotations)
            .into_iter()
            .filter(|(check, _)| !OVERRIDDEN_AT_RESTRICTED.contains(check))
            .collect(),
    };
    found.sort_by_key(|(check, _)| *check);
    if level == Level::Restricted {
        let mut further = restricted(spec);
        further.sort_by_key(|(check, _)| *check);
        found.extend(further);
    }
    found.into_iter().map(|(_, message)| message).collect()
}

fn is_pod(resource: &GroupResource, subresource: &str) -> bool {
    resource.group.is_empty()
        && resource.resource == "pods"
        && matches!(subresource, "" | "ephemeralcontainers")
}

fn is_namespace(resource: &GroupResource, subresource: &str) -> bool {
    resource.group.is_empty() && resource.resource == "namespaces" && subresource.is_empty()
}

#[async_trait]
impl Plugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
            && (is_pod(resource, subresource) || is_namespace(resource, subresource))
    }

    async fn validate(&self, a: &Attributes) -> std::result::Result<(), ApiError> {
        let Some(object) = a.object.as_ref() else {
            return Ok(());
        };
        if is_namespace(&a.resource, &a.subresource) {
            return check_labels(a, object);
        }
        // Updates that leave the spec alone (labels, status) are not judged again.
        if a.operation == Operation::Update
            && a.subresource.is_empty()
            && a.old_object
                .as_ref()
                .is_some_and(|old| old["spec"] == object["spec"])
        {
            return Ok(());
        }
        if self.exemptions.namespaces.contains(&a.namespace)
            || self.exemptions.usernames.contains(&a.user.name)
            || object["spec"]["runtimeClassName"]
                .as_str()
                .is_some_and(|r| self.exemptions.runtime_classes.iter().any(|e| e == r))
        {
            return Ok(());
        }
        let [enforce, audit, warn] = self.levels(&a.namespace).await?;
        let spec = &object["spec"];
        let annotations = &object["metadata"]["annotations"];
        let found = violations(enforce, spec, annotations);
        if !found.is_empty() {
            return Err(forbidden(
                a,
                &format!(
                    "violates PodSecurity \"{}:latest\": {}",
                    enforce.name(),
                    found.join(", ")
                ),
            ));
        }
        let found = violations(warn, spec, annotations);
        if !found.is_empty() {
            a.feedback.warn(format!(
                "would violate PodSecurity \"{}:latest\": {}",
                warn.name(),
                found.join(", ")
            ));
        }
        let found = violations(audit, spec, annotations);
        if !found.is_empty() {
            a.feedback.annotate(
                "pod-security.kubernetes.io/audit-violations",
                format!(
                    "would violate PodSecurity \"{}:latest\": {}",
                    audit.name(),
                    found.join(", ")
                ),
            );
        }
        a.feedback.annotate(
            "pod-security.kubernetes.io/enforce-policy",
            format!("{}:latest", enforce.name()),
        );
        Ok(())
    }
}

/// A namespace's `pod-security.kubernetes.io/` labels must name a level (and a version).
fn check_labels(a: &Attributes, namespace: &Value) -> std::result::Result<(), ApiError> {
    let mut errors = Vec::new();
    for (key, value) in namespace["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let Some(mode) = key.strip_prefix(LABEL) else {
            continue;
        };
        let value = value.as_str().unwrap_or_default();
        let path = format!("metadata.labels[{key}]");
        if MODES.contains(&mode) {
            if Level::parse(value).is_none() {
                errors.push(FieldError::not_supported(path, value, &LEVELS));
            }
        } else if mode
            .strip_suffix("-version")
            .is_some_and(|m| MODES.contains(&m))
        {
            let ok = value == "latest"
                || value
                    .strip_prefix("v1.")
                    .is_some_and(|minor| minor.parse::<u32>().is_ok());
            if !ok {
                errors.push(FieldError::invalid(
                    path,
                    value,
                    "must be \"latest\" or \"v1.x\"",
                ));
            }
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "",
        "Namespace",
        a.display_name(),
        &errors,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn baseline_names_each_violation() {
        let spec = json!({
            "hostNetwork": true,
            "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
            "containers": [
                {"name": "a", "securityContext": {"privileged": true, "capabilities": {"add": ["NET_ADMIN"]}}, "ports": [{"containerPort": 80, "hostPort": 80}]},
            ],
        });
        assert_eq!(
            violations(Level::Baseline, &spec, &Value::Null),
            // Upstream's order: by check name.
            [
                "non-default capabilities (container \"a\" must not include \"NET_ADMIN\" in securityContext.capabilities.add)",
                "host namespaces (hostNetwork=true)",
                "hostPath volumes (volume \"root\")",
                "hostPort (container \"a\" uses hostPort 80)",
                "privileged (container \"a\" must not set securityContext.privileged=true)",
            ]
        );
        assert!(violations(Level::Privileged, &spec, &Value::Null).is_empty());
    }

    /// The messages upstream's v1.36 kube-apiserver gives for the same pods.
    #[test]
    fn baseline_limits_app_armor_and_se_linux_as_upstream() {
        let unconfined = json!({"appArmorProfile": {"type": "Unconfined"}});
        let spec = json!({"securityContext": unconfined, "containers": [
            {"name": "c", "securityContext": unconfined},
            {"name": "d", "securityContext": unconfined}]});
        assert_eq!(
            violations(Level::Baseline, &spec, &Value::Null),
            [
                "forbidden AppArmor profile (pod and containers \"c\", \"d\" must not set AppArmor profile type to \"Unconfined\")"
            ]
        );
        let spec = json!({"containers": [{"name": "c"}]});
        let annotations = json!({"container.apparmor.security.beta.kubernetes.io/c": "unconfined"});
        assert_eq!(
            violations(Level::Baseline, &spec, &annotations),
            [
                "forbidden AppArmor profiles (container \"c\" and annotation must not set AppArmor profile type to \"Unconfined\", \"container.apparmor.security.beta.kubernetes.io/c=\"unconfined\"\")"
            ]
        );
        let local = json!({"container.apparmor.security.beta.kubernetes.io/c": "localhost/x"});
        assert!(violations(Level::Baseline, &spec, &local).is_empty());
        let spec = json!({
            "hostNetwork": true,
            "securityContext": {"seLinuxOptions": {"type": "spc_t", "user": "u", "role": "r"}},
            "containers": [
                {"name": "c", "securityContext": {"seLinuxOptions": {"type": "bad_t", "user": "x"}}},
                {"name": "ok", "securityContext": {"seLinuxOptions": {"type": "container_kvm_t", "level": "s0:c1"}}}]});
        assert_eq!(
            violations(Level::Baseline, &spec, &Value::Null),
            [
                "host namespaces (hostNetwork=true)",
                "seLinuxOptions (pod and container \"c\" set forbidden securityContext.seLinuxOptions: types \"bad_t\", \"spc_t\"; user may not be set; role may not be set)"
            ]
        );
    }

    #[test]
    fn restricted_asks_for_a_hardened_pod() {
        let plain = json!({"containers": [{"name": "c"}]});
        assert_eq!(
            violations(Level::Restricted, &plain, &Value::Null),
            [
                "allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false)",
                "unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"])",
                "runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true)",
                "seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")",
            ]
        );
        let hardened = json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}],
            "volumes": [{"name": "t", "projected": {"sources": []}}],
        });
        assert!(
            violations(Level::Restricted, &hardened, &Value::Null).is_empty(),
            "{:?}",
            violations(Level::Restricted, &hardened, &Value::Null)
        );
    }
}
