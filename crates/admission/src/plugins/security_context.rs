//! `SecurityContextDeny` (refuses pods that set the security context fields it guards, for
//! clusters without another pod security mechanism) and `DenyServiceExternalIPs` (refuses
//! new or changed `spec.externalIPs` of Services).

use async_trait::async_trait;
use capstan_meta::{ApiError, FieldError, GroupResource};
use serde_json::Value;

use super::forbidden;
use crate::attributes::{Attributes, Operation};
use crate::chain::Plugin;

/// `SecurityContextDeny`.
pub struct SecurityContextDeny;

fn set(v: &Value) -> bool {
    !v.is_null()
}

/// The first guarded field the pod sets, in upstream's words.
fn refusal(spec: &Value) -> Option<&'static str> {
    let pod = &spec["securityContext"];
    let guarded = [
        (
            "supplementalGroups",
            "pod.Spec.SecurityContext.SupplementalGroups is forbidden",
        ),
        (
            "seLinuxOptions",
            "pod.Spec.SecurityContext.SELinuxOptions is forbidden",
        ),
        (
            "runAsUser",
            "pod.Spec.SecurityContext.RunAsUser is forbidden",
        ),
        ("fsGroup", "pod.Spec.SecurityContext.FSGroup is forbidden"),
    ];
    if let Some((_, why)) = guarded.iter().find(|(f, _)| set(&pod[*f])) {
        return Some(why);
    }
    for list in ["initContainers", "containers"] {
        for c in spec[list].as_array().into_iter().flatten() {
            let sc = &c["securityContext"];
            if set(&sc["seLinuxOptions"]) {
                return Some("SecurityContext.SELinuxOptions is forbidden");
            }
            if set(&sc["runAsUser"]) {
                return Some("SecurityContext.RunAsUser is forbidden");
            }
        }
    }
    None
}

#[async_trait]
impl Plugin for SecurityContextDeny {
    fn name(&self) -> &'static str {
        "SecurityContextDeny"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
            && resource.group.is_empty()
            && resource.resource == "pods"
            && subresource.is_empty()
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        match a.object.as_ref().and_then(|p| refusal(&p["spec"])) {
            Some(why) => Err(forbidden(a, why)),
            None => Ok(()),
        }
    }
}

/// `DenyServiceExternalIPs`.
pub struct DenyServiceExternalIPs;

fn external_ips(object: Option<&Value>) -> Vec<&str> {
    let mut ips: Vec<&str> = object
        .and_then(|o| o["spec"]["externalIPs"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    ips.sort_unstable();
    ips
}

#[async_trait]
impl Plugin for DenyServiceExternalIPs {
    fn name(&self) -> &'static str {
        "DenyServiceExternalIPs"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
            && resource.group.is_empty()
            && resource.resource == "services"
            && subresource.is_empty()
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        let new = external_ips(a.object.as_ref());
        // Taking addresses away is allowed; adding or changing them is not.
        let old = external_ips(a.old_object.as_ref());
        if new.is_empty() || new.iter().all(|ip| old.contains(ip)) {
            return Ok(());
        }
        let why = FieldError::forbidden(
            "spec.externalIPs",
            "use of external IPs is denied by admission control",
        );
        Err(forbidden(a, &format!("{}: {}", why.field, why.body())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn guarded_fields_are_named_as_upstream_names_them() {
        assert_eq!(
            refusal(&json!({"securityContext": {"runAsUser": 0}})),
            Some("pod.Spec.SecurityContext.RunAsUser is forbidden")
        );
        assert_eq!(
            refusal(
                &json!({"containers": [{"name": "c", "securityContext": {"seLinuxOptions": {"level": "s0"}}}]})
            ),
            Some("SecurityContext.SELinuxOptions is forbidden")
        );
        assert_eq!(
            refusal(
                &json!({"securityContext": {"runAsNonRoot": true}, "containers": [{"name": "c"}]})
            ),
            None
        );
    }
}
