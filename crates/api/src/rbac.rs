//! `rbac.authorization.k8s.io/v1`: Role, ClusterRole, RoleBinding, ClusterRoleBinding, with
//! upstream's defaults and validation.

use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};

use crate::describe::Names;

/// The API group.
pub const GROUP: &str = "rbac.authorization.k8s.io";

/// RBAC object names are path segments, as upstream: anything but `.`, `..`, `/` and `%`.
pub fn path_segment_name(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name == "." || name == ".." {
        errs.push(format!("may not be '{name}'"));
    }
    for c in ["/", "%"] {
        if name.contains(c) {
            errs.push(format!("may not contain '{c}'"));
        }
    }
    errs
}

fn validate_rules(rules: &[PolicyRule], namespaced: bool, errs: &mut FieldErrors) {
    for (i, rule) in rules.iter().enumerate() {
        let path = format!("rules[{i}]");
        if rule.verbs.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.verbs"),
                "verbs must contain at least one value",
            ));
        }
        let urls = rule.non_resource_urls.as_deref().unwrap_or_default();
        if !urls.is_empty() {
            if namespaced {
                errs.push(FieldError::invalid_raw(
                    format!("{path}.nonResourceURLs"),
                    format!("{urls:?}"),
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            let has = |v: &Option<Vec<String>>| v.as_ref().is_some_and(|v| !v.is_empty());
            if has(&rule.api_groups) || has(&rule.resources) || has(&rule.resource_names) {
                errs.push(FieldError::invalid_raw(
                    format!("{path}.nonResourceURLs"),
                    format!("{urls:?}"),
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if rule.api_groups.as_deref().unwrap_or_default().is_empty() {
            errs.push(FieldError::required(
                format!("{path}.apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if rule.resources.as_deref().unwrap_or_default().is_empty() {
            errs.push(FieldError::required(
                format!("{path}.resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
}

fn validate_role_ref(role_ref: &RoleRef, kinds: &[&str], errs: &mut FieldErrors) {
    let api_group = role_ref.api_group.as_deref().unwrap_or_default();
    if api_group != GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            api_group,
            &[GROUP],
        ));
    }
    if !kinds.contains(&role_ref.kind.as_str()) {
        errs.push(FieldError::not_supported(
            "roleRef.kind",
            &role_ref.kind,
            kinds,
        ));
    }
    if role_ref.name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    } else {
        for why in path_segment_name(&role_ref.name) {
            errs.push(FieldError::invalid("roleRef.name", &role_ref.name, why));
        }
    }
}

fn validate_subjects(subjects: &[Subject], cluster: bool, errs: &mut FieldErrors) {
    for (i, s) in subjects.iter().enumerate() {
        let path = format!("subjects[{i}]");
        if s.name.is_empty() {
            errs.push(FieldError::required(format!("{path}.name"), ""));
        }
        let group = s.api_group.as_deref().unwrap_or_default();
        match s.kind.as_str() {
            "ServiceAccount" => {
                if !s.name.is_empty() {
                    for why in capstan_meta::validation::dns1123_subdomain(&s.name) {
                        errs.push(FieldError::invalid(format!("{path}.name"), &s.name, why));
                    }
                }
                if !group.is_empty() {
                    errs.push(FieldError::not_supported(
                        format!("{path}.apiGroup"),
                        group,
                        &[""],
                    ));
                }
                if cluster && s.namespace.as_deref().unwrap_or_default().is_empty() {
                    errs.push(FieldError::required(format!("{path}.namespace"), ""));
                }
            }
            "User" | "Group" => {
                if group != GROUP {
                    errs.push(FieldError::not_supported(
                        format!("{path}.apiGroup"),
                        group,
                        &[GROUP],
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                format!("{path}.kind"),
                other,
                &["ServiceAccount", "User", "Group"],
            )),
        }
    }
}

/// Subjects of kind User and Group belong to the RBAC group when they name none (upstream's
/// v1 defaulting).
fn default_subjects(subjects: &mut Option<Vec<Subject>>) {
    for s in subjects.iter_mut().flatten() {
        if s.api_group.as_deref().unwrap_or_default().is_empty()
            && (s.kind == "User" || s.kind == "Group")
        {
            s.api_group = Some(GROUP.into());
        }
    }
}

fn role_ref_changed(new: &RoleRef, old: &RoleRef, errs: &mut FieldErrors) {
    if new != old {
        errs.push(FieldError::invalid_raw(
            "roleRef",
            format!(
                "rbac.RoleRef{{APIGroup:{:?}, Kind:{:?}, Name:{:?}}}",
                new.api_group, new.kind, new.name
            ),
            "cannot change roleRef",
        ));
    }
}

/// The strategy of Roles: namespaced rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoleStrategy;

impl Strategy for RoleStrategy {
    type Object = Role;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: GROUP,
            kind: "Role",
            resource: "roles",
            short_names: &[],
            namespaced: true,
        }
        .v1()
    }

    fn validate(&self, role: &Role) -> FieldErrors {
        let mut errs = Vec::new();
        validate_rules(role.rules.as_deref().unwrap_or_default(), true, &mut errs);
        errs
    }

    fn validate_update(&self, new: &Role, _old: &Role) -> FieldErrors {
        self.validate(new)
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        path_segment_name
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }
}

/// The strategy of ClusterRoles: cluster-wide rules, or an aggregation of other roles'.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterRoleStrategy;

impl Strategy for ClusterRoleStrategy {
    type Object = ClusterRole;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: GROUP,
            kind: "ClusterRole",
            resource: "clusterroles",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn validate(&self, role: &ClusterRole) -> FieldErrors {
        let mut errs = Vec::new();
        validate_rules(role.rules.as_deref().unwrap_or_default(), false, &mut errs);
        if let Some(aggregation) = &role.aggregation_rule
            && aggregation
                .cluster_role_selectors
                .as_deref()
                .unwrap_or_default()
                .is_empty()
        {
            errs.push(FieldError::required(
                "aggregationRule.clusterRoleSelectors",
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &ClusterRole, _old: &ClusterRole) -> FieldErrors {
        self.validate(new)
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        path_segment_name
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }
}

/// The strategy of RoleBindings: subjects granted a Role or ClusterRole in one namespace.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoleBindingStrategy;

impl Strategy for RoleBindingStrategy {
    type Object = RoleBinding;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: GROUP,
            kind: "RoleBinding",
            resource: "rolebindings",
            short_names: &[],
            namespaced: true,
        }
        .v1()
    }

    fn default(&self, binding: &mut RoleBinding) {
        default_subjects(&mut binding.subjects);
    }

    fn validate(&self, binding: &RoleBinding) -> FieldErrors {
        let mut errs = Vec::new();
        validate_role_ref(&binding.role_ref, &["Role", "ClusterRole"], &mut errs);
        validate_subjects(
            binding.subjects.as_deref().unwrap_or_default(),
            false,
            &mut errs,
        );
        errs
    }

    fn validate_update(&self, new: &RoleBinding, old: &RoleBinding) -> FieldErrors {
        let mut errs = self.validate(new);
        role_ref_changed(&new.role_ref, &old.role_ref, &mut errs);
        errs
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        path_segment_name
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }
}

/// The strategy of ClusterRoleBindings: subjects granted a ClusterRole everywhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterRoleBindingStrategy;

impl Strategy for ClusterRoleBindingStrategy {
    type Object = ClusterRoleBinding;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: GROUP,
            kind: "ClusterRoleBinding",
            resource: "clusterrolebindings",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn default(&self, binding: &mut ClusterRoleBinding) {
        default_subjects(&mut binding.subjects);
    }

    fn validate(&self, binding: &ClusterRoleBinding) -> FieldErrors {
        let mut errs = Vec::new();
        validate_role_ref(&binding.role_ref, &["ClusterRole"], &mut errs);
        validate_subjects(
            binding.subjects.as_deref().unwrap_or_default(),
            true,
            &mut errs,
        );
        errs
    }

    fn validate_update(&self, new: &ClusterRoleBinding, old: &ClusterRoleBinding) -> FieldErrors {
        let mut errs = self.validate(new);
        role_ref_changed(&new.role_ref, &old.role_ref, &mut errs);
        errs
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        path_segment_name
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn rules_as_upstream_checks_them() {
        let role: Role = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "r", "namespace": "ns"},
        "rules": [
            {"verbs": [], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
            {"verbs": ["get"]},
        ]}))
        .unwrap();
        let got = fields(&RoleStrategy.validate(&role));
        assert_eq!(
            got,
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                r#"rules[1].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs"#,
                "rules[2].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[2].resources: Required value: resource rules must supply at least one resource",
            ]
        );
        let cluster: ClusterRole = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/metrics/*"]}]}))
        .unwrap();
        assert!(ClusterRoleStrategy.validate(&cluster).is_empty());
        assert_eq!(path_segment_name("a/b"), ["may not contain '/'"]);
        assert!(path_segment_name("system:node:n1").is_empty());
    }

    #[test]
    fn bindings_default_and_check_their_subjects_and_role() {
        let mut b: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "b"},
            "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "x"},
            "subjects": [{"kind": "User", "name": "alice"},
                         {"kind": "ServiceAccount", "name": "robot"},
                         {"kind": "Robot", "name": "r2"}]}))
        .unwrap();
        ClusterRoleBindingStrategy.default(&mut b);
        assert_eq!(
            b.subjects.as_ref().unwrap()[0].api_group.as_deref(),
            Some(GROUP)
        );
        let got = fields(&ClusterRoleBindingStrategy.validate(&b));
        assert_eq!(
            got,
            [
                r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#,
                "subjects[1].namespace: Required value",
                r#"subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#,
            ]
        );
        let old: RoleBinding = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "b", "namespace": "ns"},
            "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "x"}}))
        .unwrap();
        let mut new = old.clone();
        new.role_ref.name = "y".into();
        let got = fields(&RoleBindingStrategy.validate_update(&new, &old));
        assert_eq!(got.len(), 1);
        assert!(got[0].ends_with("cannot change roleRef"), "{got:?}");
    }
}
