//! `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicies and their bindings: CEL
//! validations the API server evaluates in process, with upstream's defaults and validation
//! (every expression is compiled when the object is written).

use std::collections::BTreeSet;

use capstan_meta::validation::{dns1123_subdomain, qualified_name};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, RuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
};

use crate::admissionregistration::{one_of, validate_conditions, validate_rule, validate_selector};
use crate::describe::Names;

/// The reasons a validation may give.
const REASONS: [&str; 4] = [
    "Unauthorized",
    "Forbidden",
    "Invalid",
    "RequestEntityTooLarge",
];
/// The actions a binding may take on a failed validation.
const ACTIONS: [&str; 3] = ["Deny", "Warn", "Audit"];

/// The operations, groups, versions, resources and scope of a named rule, as a webhook rule.
pub fn as_rule(rule: &NamedRuleWithOperations) -> RuleWithOperations {
    RuleWithOperations {
        api_groups: rule.api_groups.clone(),
        api_versions: rule.api_versions.clone(),
        operations: rule.operations.clone(),
        resources: rule.resources.clone(),
        scope: rule.scope.clone(),
    }
}

fn default_match(m: &mut MatchResources) {
    m.match_policy.get_or_insert_with(|| "Equivalent".into());
    m.namespace_selector.get_or_insert_with(Default::default);
    m.object_selector.get_or_insert_with(Default::default);
    for rule in m
        .resource_rules
        .iter_mut()
        .flatten()
        .chain(m.exclude_resource_rules.iter_mut().flatten())
    {
        rule.scope.get_or_insert_with(|| "*".into());
    }
}

fn validate_compiles(errs: &mut FieldErrors, path: String, expression: &str) {
    if expression.trim().is_empty() {
        errs.push(FieldError::required(path, ""));
    } else if let Err(why) = capstan_cel::Program::compile(expression) {
        errs.push(FieldError::invalid(
            path,
            expression,
            format!("compilation failed: {why}"),
        ));
    }
}

fn validate_match(errs: &mut FieldErrors, path: &str, m: &MatchResources, rules_required: bool) {
    let rules = m.resource_rules.as_deref().unwrap_or_default();
    if rules_required && rules.is_empty() {
        errs.push(FieldError::required(format!("{path}.resourceRules"), ""));
    }
    for (field, list) in [
        ("resourceRules", rules),
        (
            "excludeResourceRules",
            m.exclude_resource_rules.as_deref().unwrap_or_default(),
        ),
    ] {
        for (i, rule) in list.iter().enumerate() {
            let at = format!("{path}.{field}[{i}]");
            validate_rule(errs, &at, &as_rule(rule));
            for (j, name) in rule.resource_names.iter().flatten().enumerate() {
                if name.is_empty() {
                    errs.push(FieldError::required(format!("{at}.resourceNames[{j}]"), ""));
                }
            }
        }
    }
    one_of(
        errs,
        format!("{path}.matchPolicy"),
        m.match_policy.as_deref(),
        &["Equivalent", "Exact"],
    );
    validate_selector(
        errs,
        &format!("{path}.namespaceSelector"),
        m.namespace_selector.as_ref(),
    );
    validate_selector(
        errs,
        &format!("{path}.objectSelector"),
        m.object_selector.as_ref(),
    );
}

/// A CEL identifier: a letter or `_`, then letters, digits and `_`.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn validate_policy(p: &ValidatingAdmissionPolicy) -> FieldErrors {
    let mut errs = Vec::new();
    let spec = &p.spec.clone().unwrap_or_default();
    one_of(
        &mut errs,
        "spec.failurePolicy".into(),
        spec.failure_policy.as_deref(),
        &["Fail", "Ignore"],
    );
    if let Some(kind) = &spec.param_kind {
        match kind.api_version.as_deref().unwrap_or_default() {
            "" => errs.push(FieldError::required("spec.paramKind.apiVersion", "")),
            v if v.split('/').count() > 2 || v.ends_with('/') || v.starts_with('/') => {
                errs.push(FieldError::invalid(
                    "spec.paramKind.apiVersion",
                    v,
                    "must be a group/version or a version",
                ))
            }
            _ => {}
        }
        if kind.kind.as_deref().unwrap_or_default().is_empty() {
            errs.push(FieldError::required("spec.paramKind.kind", ""));
        }
    }
    match &spec.match_constraints {
        Some(m) => validate_match(&mut errs, "spec.matchConstraints", m, true),
        None => errs.push(FieldError::required("spec.matchConstraints", "")),
    }
    let validations = spec.validations.as_deref().unwrap_or_default();
    let annotations = spec.audit_annotations.as_deref().unwrap_or_default();
    if validations.is_empty() && annotations.is_empty() {
        for field in ["validations", "auditAnnotations"] {
            errs.push(FieldError::required(
                format!("spec.{field}"),
                "validations or auditAnnotations must contain at least one item",
            ));
        }
    }
    for (i, v) in validations.iter().enumerate() {
        let at = format!("spec.validations[{i}]");
        validate_compiles(&mut errs, format!("{at}.expression"), &v.expression);
        if let Some(m) = &v.message {
            if m.trim().is_empty() {
                errs.push(FieldError::invalid(
                    format!("{at}.message"),
                    m,
                    "message must be non-empty if specified",
                ));
            } else if m.contains('\n') {
                errs.push(FieldError::invalid(
                    format!("{at}.message"),
                    m,
                    "message must not contain line breaks",
                ));
            }
        }
        if let Some(m) = &v.message_expression {
            validate_compiles(&mut errs, format!("{at}.messageExpression"), m);
        }
        one_of(
            &mut errs,
            format!("{at}.reason"),
            v.reason.as_deref(),
            &REASONS,
        );
    }
    let mut keys = BTreeSet::new();
    for (i, a) in annotations.iter().enumerate() {
        let at = format!("spec.auditAnnotations[{i}]");
        if a.key.is_empty() {
            errs.push(FieldError::required(format!("{at}.key"), ""));
        } else {
            let name = p.metadata.name.as_deref().unwrap_or_default();
            for why in qualified_name(&format!("{name}/{}", a.key)) {
                errs.push(FieldError::invalid(format!("{at}.key"), &a.key, why));
            }
            if !keys.insert(a.key.as_str()) {
                errs.push(FieldError::duplicate(format!("{at}.key"), &a.key));
            }
        }
        validate_compiles(
            &mut errs,
            format!("{at}.valueExpression"),
            &a.value_expression,
        );
    }
    let mut names = BTreeSet::new();
    for (i, v) in spec.variables.iter().flatten().enumerate() {
        let at = format!("spec.variables[{i}]");
        if v.name.is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        } else if !is_identifier(&v.name) {
            errs.push(FieldError::invalid(
                format!("{at}.name"),
                &v.name,
                "name is not a valid CEL identifier",
            ));
        } else if !names.insert(v.name.as_str()) {
            errs.push(FieldError::duplicate(format!("{at}.name"), &v.name));
        }
        validate_compiles(&mut errs, format!("{at}.expression"), &v.expression);
    }
    validate_conditions(
        &mut errs,
        "spec.matchConditions",
        spec.match_conditions.as_deref().unwrap_or_default(),
    );
    errs
}

fn validate_binding(b: &ValidatingAdmissionPolicyBinding) -> FieldErrors {
    let mut errs = Vec::new();
    let spec = &b.spec;
    match spec.policy_name.as_str() {
        "" => errs.push(FieldError::required("spec.policyName", "")),
        name => {
            for why in dns1123_subdomain(name) {
                errs.push(FieldError::invalid("spec.policyName", name, why));
            }
        }
    }
    let actions = &spec.validation_actions;
    if actions.is_empty() {
        errs.push(FieldError::required("spec.validationActions", ""));
    }
    let mut seen = BTreeSet::new();
    for (i, action) in actions.iter().enumerate() {
        let at = format!("spec.validationActions[{i}]");
        if !seen.insert(action.as_str()) {
            errs.push(FieldError::duplicate(at, action));
        } else {
            one_of(&mut errs, at, Some(action.as_str()), &ACTIONS);
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        errs.push(FieldError::invalid(
            "spec.validationActions",
            &actions.join(","),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if let Some(r) = &spec.param_ref {
        match (&r.name, &r.selector) {
            (Some(_), Some(_)) => errs.push(FieldError::forbidden(
                "spec.paramRef.name",
                "name and selector are mutually exclusive",
            )),
            (None, None) => errs.push(FieldError::required(
                "spec.paramRef",
                "one of name or selector must be specified",
            )),
            (Some(name), None) => {
                for why in dns1123_subdomain(name) {
                    errs.push(FieldError::invalid("spec.paramRef.name", name, why));
                }
            }
            (None, Some(s)) => validate_selector(&mut errs, "spec.paramRef.selector", Some(s)),
        }
        if let Some(ns) = r.namespace.as_deref().filter(|ns| !ns.is_empty()) {
            for why in capstan_meta::validation::dns1123_label(ns) {
                errs.push(FieldError::invalid("spec.paramRef.namespace", ns, why));
            }
        }
        match r.parameter_not_found_action.as_deref() {
            None => errs.push(FieldError::required(
                "spec.paramRef.parameterNotFoundAction",
                "",
            )),
            action => one_of(
                &mut errs,
                "spec.paramRef.parameterNotFoundAction".into(),
                action,
                &["Allow", "Deny"],
            ),
        }
    }
    if let Some(m) = &spec.match_resources {
        validate_match(&mut errs, "spec.matchResources", m, false);
    }
    errs
}

/// The strategy of ValidatingAdmissionPolicy (with its `status` subresource).
#[derive(Debug, Default, Clone, Copy)]
pub struct ValidatingAdmissionPolicyStrategy;

/// The strategy of ValidatingAdmissionPolicyBinding.
#[derive(Debug, Default, Clone, Copy)]
pub struct ValidatingAdmissionPolicyBindingStrategy;

fn descriptor(kind: &str, resource: &str) -> ResourceDescriptor {
    let mut d = Names {
        group: "admissionregistration.k8s.io",
        kind,
        resource,
        short_names: &[],
        namespaced: false,
    }
    .v1();
    d.categories = vec!["api-extensions".into()];
    d
}

impl Strategy for ValidatingAdmissionPolicyStrategy {
    type Object = ValidatingAdmissionPolicy;

    fn descriptor(&self) -> ResourceDescriptor {
        descriptor("ValidatingAdmissionPolicy", "validatingadmissionpolicies")
    }

    fn default(&self, obj: &mut ValidatingAdmissionPolicy) {
        let spec = obj.spec.get_or_insert_with(Default::default);
        spec.failure_policy.get_or_insert_with(|| "Fail".into());
        if let Some(m) = &mut spec.match_constraints {
            default_match(m);
        }
    }

    fn prepare_for_create(&self, obj: &mut ValidatingAdmissionPolicy) {
        obj.status = None;
    }

    fn prepare_for_update(
        &self,
        new: &mut ValidatingAdmissionPolicy,
        old: &ValidatingAdmissionPolicy,
    ) {
        new.status = old.status.clone();
    }

    fn validate(&self, obj: &ValidatingAdmissionPolicy) -> FieldErrors {
        validate_policy(obj)
    }

    fn validate_update(
        &self,
        new: &ValidatingAdmissionPolicy,
        _old: &ValidatingAdmissionPolicy,
    ) -> FieldErrors {
        validate_policy(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut ValidatingAdmissionPolicy, from: &ValidatingAdmissionPolicy) {
        to.status = from.status.clone();
    }
}

impl Strategy for ValidatingAdmissionPolicyBindingStrategy {
    type Object = ValidatingAdmissionPolicyBinding;

    fn descriptor(&self) -> ResourceDescriptor {
        descriptor(
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
        )
    }

    fn default(&self, obj: &mut ValidatingAdmissionPolicyBinding) {
        let spec = &mut obj.spec;
        if let Some(m) = &mut spec.match_resources {
            default_match(m);
        }
    }

    fn validate(&self, obj: &ValidatingAdmissionPolicyBinding) -> FieldErrors {
        validate_binding(obj)
    }

    fn validate_update(
        &self,
        new: &ValidatingAdmissionPolicyBinding,
        _old: &ValidatingAdmissionPolicyBinding,
    ) -> FieldErrors {
        validate_binding(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(spec: serde_json::Value) -> ValidatingAdmissionPolicy {
        let mut p: ValidatingAdmissionPolicy =
            serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap();
        ValidatingAdmissionPolicyStrategy.default(&mut p);
        p
    }

    fn fields(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(|e| e.field.clone()).collect()
    }

    fn rules() -> serde_json::Value {
        json!({"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]})
    }

    #[test]
    fn a_policy_is_defaulted_and_its_expressions_compiled() {
        let p = policy(json!({
            "matchConstraints": rules(),
            "validations": [{"expression": "object.spec.replicas <= 5", "reason": "Forbidden"}],
            "variables": [{"name": "replicas", "expression": "object.spec.replicas"}],
        }));
        let spec = p.spec.as_ref().unwrap();
        assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
        let m = spec.match_constraints.as_ref().unwrap();
        assert_eq!(m.match_policy.as_deref(), Some("Equivalent"));
        assert_eq!(
            m.resource_rules.as_ref().unwrap()[0].scope.as_deref(),
            Some("*")
        );
        assert!(validate_policy(&p).is_empty(), "{:?}", validate_policy(&p));

        let bad = policy(json!({
            "matchConstraints": {},
            "validations": [{"expression": "object.spec.replicas <=", "message": "a\nb", "reason": "Teapot"}],
            "variables": [{"name": "1st", "expression": "1"}],
        }));
        assert_eq!(
            fields(&validate_policy(&bad)),
            [
                "spec.matchConstraints.resourceRules",
                "spec.validations[0].expression",
                "spec.validations[0].message",
                "spec.validations[0].reason",
                "spec.variables[0].name",
            ]
        );
        let empty = policy(json!({"matchConstraints": rules()}));
        assert_eq!(
            fields(&validate_policy(&empty)),
            ["spec.validations", "spec.auditAnnotations"]
        );
    }

    #[test]
    fn a_binding_names_its_policy_and_sane_actions() {
        let binding = |spec: serde_json::Value| -> ValidatingAdmissionPolicyBinding {
            serde_json::from_value(json!({"metadata": {"name": "b"}, "spec": spec})).unwrap()
        };
        let good = binding(json!({
            "policyName": "p", "validationActions": ["Deny", "Audit"],
            "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"},
        }));
        assert!(validate_binding(&good).is_empty());
        let bad = binding(json!({
            "validationActions": ["Deny", "Warn", "Deny", "Shout"],
            "paramRef": {"name": "x", "selector": {}},
        }));
        assert_eq!(
            fields(&validate_binding(&bad)),
            [
                "spec.policyName",
                "spec.validationActions[2]",
                "spec.validationActions[3]",
                "spec.validationActions",
                "spec.paramRef.name",
                "spec.paramRef.parameterNotFoundAction",
            ]
        );
    }
}
