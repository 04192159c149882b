//! The security rules of pod validation, as upstream checks them: each container's security
//! context (privilege by cluster policy, unmasked `/proc` only in a user namespace, no
//! privileged container that forbids escalation), the pod's host namespaces against its ports
//! and sysctls, Windows host-process pods, and the fields each operating system may not set.

use capstan_meta::{FieldError, FieldErrors};
use k8s_openapi::api::core::v1::{AppArmorProfile, Container, Pod, PodSpec, SecurityContext};

/// One container's security context at `path` (`spec.containers[0]`).
pub(crate) fn validate_container(
    path: &str,
    sc: Option<&SecurityContext>,
    spec: &PodSpec,
    allow_privileged: bool,
    errs: &mut FieldErrors,
) {
    let Some(sc) = sc else {
        return;
    };
    let at = |field: &str| format!("{path}.securityContext.{field}");
    if sc.privileged == Some(true) && !allow_privileged {
        errs.push(FieldError::forbidden(
            at("privileged"),
            "disallowed by cluster policy",
        ));
    }
    if sc.proc_mount.as_deref() == Some("Unmasked") && spec.host_users != Some(false) {
        errs.push(FieldError::invalid(
            at("procMount"),
            "Unmasked",
            "`hostUsers` must be false to use `Unmasked`",
        ));
    }
    if sc.allow_privilege_escalation == Some(false) {
        let conflicts = [
            (
                sc.privileged == Some(true),
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ),
            (
                sc.capabilities
                    .as_ref()
                    .and_then(|c| c.add.as_ref())
                    .is_some_and(|add| add.iter().any(|c| c == "CAP_SYS_ADMIN")),
                "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            ),
        ];
        for (_, why) in conflicts.iter().filter(|(found, _)| *found) {
            errs.push(FieldError::invalid_raw(
                format!("{path}.securityContext"),
                go_security_context(sc),
                *why,
            ));
        }
    }
}

/// The security context as upstream prints it in an error: its internal Go structure as
/// JSON (field names capitalized, unset pointers `null`, unset strings empty).
fn go_security_context(sc: &SecurityContext) -> String {
    let json = |v: serde_json::Value| v.to_string();
    let text = |v: &Option<String>| json(serde_json::json!(v));
    let string = |v: &Option<String>| json(serde_json::json!(v.clone().unwrap_or_default()));
    let nested =
        |fields: Option<Vec<(&str, String)>>| fields.map_or("null".to_string(), |f| object(&f));
    object(&[
        (
            "Capabilities",
            nested(sc.capabilities.as_ref().map(|c| {
                vec![
                    ("Add", json(serde_json::json!(c.add))),
                    ("Drop", json(serde_json::json!(c.drop))),
                ]
            })),
        ),
        ("Privileged", json(serde_json::json!(sc.privileged))),
        (
            "SELinuxOptions",
            nested(sc.se_linux_options.as_ref().map(|o| {
                vec![
                    ("User", string(&o.user)),
                    ("Role", string(&o.role)),
                    ("Type", string(&o.type_)),
                    ("Level", string(&o.level)),
                ]
            })),
        ),
        (
            "WindowsOptions",
            nested(sc.windows_options.as_ref().map(|o| {
                vec![
                    ("GMSACredentialSpecName", text(&o.gmsa_credential_spec_name)),
                    ("GMSACredentialSpec", text(&o.gmsa_credential_spec)),
                    ("RunAsUserName", text(&o.run_as_user_name)),
                    ("HostProcess", json(serde_json::json!(o.host_process))),
                ]
            })),
        ),
        ("RunAsUser", json(serde_json::json!(sc.run_as_user))),
        ("RunAsGroup", json(serde_json::json!(sc.run_as_group))),
        ("RunAsNonRoot", json(serde_json::json!(sc.run_as_non_root))),
        (
            "ReadOnlyRootFilesystem",
            json(serde_json::json!(sc.read_only_root_filesystem)),
        ),
        (
            "AllowPrivilegeEscalation",
            json(serde_json::json!(sc.allow_privilege_escalation)),
        ),
        ("ProcMount", text(&sc.proc_mount)),
        (
            "SeccompProfile",
            nested(sc.seccomp_profile.as_ref().map(|p| {
                vec![
                    ("Type", json(serde_json::json!(p.type_))),
                    ("LocalhostProfile", text(&p.localhost_profile)),
                ]
            })),
        ),
        (
            "AppArmorProfile",
            nested(sc.app_armor_profile.as_ref().map(|p| {
                vec![
                    ("Type", json(serde_json::json!(p.type_))),
                    ("LocalhostProfile", text(&p.localhost_profile)),
                ]
            })),
        ),
    ])
}

/// A JSON object of already rendered values, keys in the given order.
fn object(fields: &[(&str, String)]) -> String {
    let members: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
    format!("{{{}}}", members.join(","))
}

/// The sysctls living in the IPC namespace (the rest of the namespaced ones are the
/// network's, `net.*`).
fn ipc_sysctl(name: &str) -> bool {
    matches!(
        name,
        "kernel.sem"
            | "kernel.shmall"
            | "kernel.shmmax"
            | "kernel.shmmni"
            | "kernel.shm_rmid_forced"
            | "kernel.msgmax"
            | "kernel.msgmnb"
            | "kernel.msgmni"
    ) || name.starts_with("fs.mqueue.")
}

/// The pod's host namespaces against what its containers and sysctls ask: with the host's
/// network a host port is the container port, and no sysctl of a shared namespace is set.
pub(crate) fn validate_host_namespaces(spec: &PodSpec, errs: &mut FieldErrors) {
    let host_network = spec.host_network == Some(true);
    if host_network {
        for (i, c) in spec.containers.iter().enumerate() {
            for (j, port) in c.ports.iter().flatten().enumerate() {
                if let Some(host) = port.host_port.filter(|h| *h != port.container_port) {
                    errs.push(FieldError::invalid_raw(
                        format!("spec.containers[{i}].ports[{j}].hostPort"),
                        host.to_string(),
                        "must match `containerPort` when `hostNetwork` is true",
                    ));
                }
            }
        }
    }
    let sysctls = spec
        .security_context
        .as_ref()
        .and_then(|s| s.sysctls.as_deref())
        .unwrap_or_default();
    for (i, sysctl) in sysctls.iter().enumerate() {
        let path = format!("spec.securityContext.sysctls[{i}].name");
        if host_network && sysctl.name.starts_with("net.") {
            errs.push(FieldError::invalid(
                path.clone(),
                &sysctl.name,
                "may not be specified when 'hostNetwork' is true",
            ));
        }
        if spec.host_ipc == Some(true) && ipc_sysctl(&sysctl.name) {
            errs.push(FieldError::invalid(
                path,
                &sysctl.name,
                "may not be specified when 'hostIPC' is true",
            ));
        }
    }
}

/// Every container of the pod (init, regular, ephemeral) with its field path.
fn all_containers(spec: &PodSpec) -> Vec<(String, Option<&SecurityContext>)> {
    fn list<'a>(
        path: &str,
        containers: &'a [Container],
    ) -> Vec<(String, Option<&'a SecurityContext>)> {
        containers
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("{path}[{i}]"), c.security_context.as_ref()))
            .collect()
    }
    let mut out = list(
        "spec.initContainers",
        spec.init_containers.as_deref().unwrap_or_default(),
    );
    out.extend(list("spec.containers", &spec.containers));
    out.extend(
        spec.ephemeral_containers
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| {
                (
                    format!("spec.ephemeralContainers[{i}]"),
                    c.security_context.as_ref(),
                )
            }),
    );
    out
}

/// Windows host-process pods: all containers or none, on the host's network, and only
/// where privileged pods are allowed.
pub(crate) fn validate_host_process(
    spec: &PodSpec,
    allow_privileged: bool,
    errs: &mut FieldErrors,
) {
    let pod = spec
        .security_context
        .as_ref()
        .and_then(|s| s.windows_options.as_ref())
        .and_then(|w| w.host_process);
    let containers = all_containers(spec);
    let mut host_process = 0;
    for (path, sc) in &containers {
        let own = sc
            .and_then(|s| s.windows_options.as_ref())
            .and_then(|w| w.host_process);
        if let (Some(pod), Some(own)) = (pod, own)
            && pod != own
        {
            errs.push(FieldError::invalid_raw(
                format!("{path}.securityContext.windowsOptions.hostProcess"),
                own.to_string(),
                format!("pod hostProcess value must be identical if both are specified, was {pod}"),
            ));
        }
        if own.or(pod) == Some(true) {
            host_process += 1;
        }
    }
    if host_process == 0 {
        return;
    }
    if host_process != containers.len() {
        errs.push(FieldError::invalid(
            "spec",
            "",
            "If pod contains any hostProcess containers then all containers must be HostProcess containers",
        ));
    }
    if spec.host_network != Some(true) {
        errs.push(FieldError::invalid_raw(
            "spec.hostNetwork",
            "false",
            "hostNetwork must be true if pod contains any hostProcess containers",
        ));
    }
    if !allow_privileged {
        errs.push(FieldError::forbidden(
            "spec",
            "hostProcess containers are disallowed by cluster policy",
        ));
    }
}

/// What the pod's operating system (`spec.os.name`) rules out: Windows options on Linux,
/// Linux-only settings on Windows.
pub(crate) fn validate_os(spec: &PodSpec, errs: &mut FieldErrors) {
    let Some(os) = spec.os.as_ref() else {
        return;
    };
    let pod_sc = spec.security_context.as_ref();
    match os.name.as_str() {
        "linux" => {
            let linux_only = "windows options cannot be set for a linux pod";
            if pod_sc.is_some_and(|s| s.windows_options.is_some()) {
                errs.push(FieldError::forbidden(
                    "spec.securityContext.windowsOptions",
                    linux_only,
                ));
            }
            for (path, sc) in all_containers(spec) {
                if sc.is_some_and(|s| s.windows_options.is_some()) {
                    errs.push(FieldError::forbidden(
                        format!("{path}.securityContext.windowsOptions"),
                        linux_only,
                    ));
                }
            }
        }
        "windows" => {
            let windows = "cannot be set for a windows pod";
            let mut forbid = |path: String, set: bool| {
                if set {
                    errs.push(FieldError::forbidden(path, windows));
                }
            };
            if let Some(s) = pod_sc {
                let p = |f: &str| format!("spec.securityContext.{f}");
                forbid(p("appArmorProfile"), s.app_armor_profile.is_some());
                forbid(p("seLinuxOptions"), s.se_linux_options.is_some());
            }
            forbid("spec.hostUsers".into(), spec.host_users.is_some());
            forbid("spec.hostIPC".into(), spec.host_ipc == Some(true));
            forbid("spec.hostPID".into(), spec.host_pid == Some(true));
            if let Some(s) = pod_sc {
                let p = |f: &str| format!("spec.securityContext.{f}");
                forbid(p("seccompProfile"), s.seccomp_profile.is_some());
                forbid(p("fsGroup"), s.fs_group.is_some());
                forbid(p("fsGroupChangePolicy"), s.fs_group_change_policy.is_some());
                forbid(
                    p("sysctls"),
                    s.sysctls.as_ref().is_some_and(|v| !v.is_empty()),
                );
                forbid(
                    "spec.shareProcessNamespace".into(),
                    spec.share_process_namespace.is_some(),
                );
                forbid(p("runAsUser"), s.run_as_user.is_some());
                forbid(p("runAsGroup"), s.run_as_group.is_some());
                forbid(p("supplementalGroups"), s.supplemental_groups.is_some());
                forbid(
                    p("supplementalGroupsPolicy"),
                    s.supplemental_groups_policy.is_some(),
                );
            }
            for (path, sc) in all_containers(spec) {
                let Some(sc) = sc else { continue };
                let p = |f: &str| format!("{path}.securityContext.{f}");
                forbid(p("seLinuxOptions"), sc.se_linux_options.is_some());
                forbid(p("seccompProfile"), sc.seccomp_profile.is_some());
                forbid(p("appArmorProfile"), sc.app_armor_profile.is_some());
                forbid(p("capabilities"), sc.capabilities.is_some());
                forbid(
                    p("readOnlyRootFilesystem"),
                    sc.read_only_root_filesystem.is_some(),
                );
                forbid(p("privileged"), sc.privileged.is_some());
                forbid(
                    p("allowPrivilegeEscalation"),
                    sc.allow_privilege_escalation.is_some(),
                );
                forbid(p("procMount"), sc.proc_mount.is_some());
                forbid(p("runAsUser"), sc.run_as_user.is_some());
                forbid(p("runAsGroup"), sc.run_as_group.is_some());
            }
        }
        _ => {}
    }
}

/// The deprecated per-container AppArmor annotation's prefix.
const APP_ARMOR_ANNOTATION: &str = "container.apparmor.security.beta.kubernetes.io/";

/// The profile field an AppArmor annotation value stands for, if it is a valid one.
fn app_armor_field(annotation: &str) -> Option<AppArmorProfile> {
    let (type_, localhost_profile) = match annotation {
        "runtime/default" => ("RuntimeDefault", None),
        "unconfined" => ("Unconfined", None),
        other => {
            let name = other.strip_prefix("localhost/").filter(|p| !p.is_empty())?;
            ("Localhost", Some(name.to_string()))
        }
    };
    Some(AppArmorProfile {
        type_: type_.into(),
        localhost_profile,
    })
}

/// On create, a container with an AppArmor annotation and no profile field of its own gets
/// the field the annotation stands for, unless that is the pod's profile (upstream's version
/// skew handling; the field is not written back to annotations any more). Windows pods and
/// invalid annotations are left alone. Returns upstream's deprecation warning for each
/// annotation copied or unusable.
pub(crate) fn sync_app_armor_annotations(pod: &mut Pod) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(spec) = pod.spec.as_mut() else {
        return warnings;
    };
    let annotations = pod.metadata.annotations.as_ref();
    if spec.os.as_ref().is_some_and(|os| os.name == "windows") || annotations.is_none() {
        return warnings;
    }
    let pod_profile = spec
        .security_context
        .as_ref()
        .and_then(|s| s.app_armor_profile.clone());
    for c in spec
        .init_containers
        .iter_mut()
        .flatten()
        .chain(spec.containers.iter_mut())
    {
        let own = c
            .security_context
            .as_ref()
            .and_then(|s| s.app_armor_profile.as_ref());
        let key = format!("{APP_ARMOR_ANNOTATION}{}", c.name);
        let Some(annotation) = annotations.and_then(|a| a.get(&key)) else {
            continue;
        };
        if own.is_some() {
            continue;
        }
        let warn = match app_armor_field(annotation) {
            Some(field) if pod_profile.as_ref() != Some(&field) => {
                c.security_context
                    .get_or_insert_with(Default::default)
                    .app_armor_profile = Some(field);
                true
            }
            Some(_) => false,
            None => true,
        };
        if warn {
            warnings.push(format!(
                "metadata.annotations[{key}]: deprecated since v1.30; use the \"appArmorProfile\" field instead"
            ));
        }
    }
    warnings
}

/// On create, a container's AppArmor annotation (the deprecated
/// `container.apparmor.security.beta.kubernetes.io/<name>`) must say what its profile field
/// (or the pod's) says.
pub(crate) fn validate_app_armor_annotations(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
    spec: &PodSpec,
    errs: &mut FieldErrors,
) {
    if spec.os.as_ref().is_some_and(|os| os.name == "windows") {
        return;
    }
    let Some(annotations) = annotations else {
        return;
    };
    let pod_profile = spec
        .security_context
        .as_ref()
        .and_then(|s| s.app_armor_profile.as_ref());
    let init = spec.init_containers.as_deref().unwrap_or_default();
    let containers = init
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("spec.initContainers[{i}]"), c))
        .chain(
            spec.containers
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("spec.containers[{i}]"), c)),
        );
    for (path, c) in containers {
        let own = c
            .security_context
            .as_ref()
            .and_then(|s| s.app_armor_profile.as_ref());
        // Without a field of its own, a valid annotation becomes the container's field
        // (upstream syncs them before validating), so it cannot disagree.
        let key = format!("{APP_ARMOR_ANNOTATION}{}", c.name);
        if own.is_none()
            && annotations
                .get(&key)
                .is_some_and(|a| app_armor_field(a).is_some())
        {
            continue;
        }
        let profile = own.or(pod_profile);
        let (Some(profile), Some(annotation)) = (profile, annotations.get(&key)) else {
            continue;
        };
        let at = |f: &str| format!("{path}.securityContext.appArmorProfile.{f}");
        let type_mismatch = "apparmor type in annotation and field must match";
        match profile.type_.as_str() {
            "Unconfined" if annotation != "unconfined" => {
                errs.push(FieldError::forbidden(at("type"), type_mismatch));
            }
            "RuntimeDefault" if annotation != "runtime/default" => {
                errs.push(FieldError::forbidden(at("type"), type_mismatch));
            }
            "Localhost" => match annotation.strip_prefix("localhost/") {
                None => errs.push(FieldError::forbidden(at("type"), type_mismatch)),
                Some(name) if profile.localhost_profile.as_deref() != Some(name) => {
                    errs.push(FieldError::forbidden(
                        at("localhostProfile"),
                        "apparmor profile in annotation and field must match",
                    ));
                }
                Some(_) => {}
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_armor_annotations_become_fields_unless_the_pod_says_the_same() {
        let mut pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "annotations": {
                "container.apparmor.security.beta.kubernetes.io/a": "localhost/prof",
                "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
                "container.apparmor.security.beta.kubernetes.io/c": "bogus",
                "container.apparmor.security.beta.kubernetes.io/d": "unconfined"}},
            "spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
                "containers": [{"name": "a"}, {"name": "b"}, {"name": "c"},
                    {"name": "d", "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}]}
        }))
        .unwrap();
        sync_app_armor_annotations(&mut pod);
        let profiles: Vec<Option<String>> = pod
            .spec
            .unwrap()
            .containers
            .iter()
            .map(|c| {
                c.security_context
                    .as_ref()
                    .and_then(|s| s.app_armor_profile.as_ref())
                    .map(|p| {
                        format!(
                            "{}:{}",
                            p.type_,
                            p.localhost_profile.clone().unwrap_or_default()
                        )
                    })
            })
            .collect();
        assert_eq!(
            profiles,
            [
                Some("Localhost:prof".to_string()),
                None,
                None,
                Some("RuntimeDefault:".to_string())
            ]
        );
    }
}
