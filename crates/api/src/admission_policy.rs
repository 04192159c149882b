//! `admissionregistration.k8s.io/v1` Validating- and MutatingAdmissionPolicies and their
//! bindings: CEL validations and mutations the API server evaluates in process, with
//! upstream's defaults and validation (every expression is compiled when the object is
//! written).

use std::collections::BTreeSet;

use capstan_meta::validation::{dns1123_subdomain, qualified_name};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MatchResources, MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding,
    NamedRuleWithOperations, ParamKind, ParamRef, RuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, Variable,
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
    validate_compiles_with(errs, path, expression, capstan_cel::Program::compile);
}

fn validate_compiles_with(
    errs: &mut FieldErrors,
    path: String,
    expression: &str,
    compile: fn(&str) -> Result<capstan_cel::Program, capstan_cel::Error>,
) {
    if expression.trim().is_empty() {
        errs.push(FieldError::required(path, ""));
    } else if let Err(why) = compile(expression) {
        errs.push(FieldError::invalid(
            path,
            expression,
            format!("compilation failed: {why}"),
        ));
    }
}

/// The operations a mutating policy may match (never DELETE).
const MUTATING_OPERATIONS: [&str; 4] = ["*", "CONNECT", "CREATE", "UPDATE"];

/// Which kind of policy a `matchConstraints` or `matchResources` belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Policy {
    Validating,
    Mutating,
}

fn validate_match(
    errs: &mut FieldErrors,
    path: &str,
    m: &MatchResources,
    rules_required: bool,
    policy: Policy,
) {
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
    if policy == Policy::Mutating {
        for op in rules.iter().flat_map(|r| r.operations.iter().flatten()) {
            one_of(
                errs,
                format!("{path}.resourceRules.operations"),
                Some(op),
                &MUTATING_OPERATIONS,
            );
        }
    }
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

/// What both kinds of policy hold besides their validations or mutations.
struct Common<'a> {
    failure_policy: Option<&'a str>,
    param_kind: Option<&'a ParamKind>,
    match_constraints: Option<&'a MatchResources>,
    match_conditions: &'a [MatchCondition],
    variables: &'a [Variable],
}

/// Validates what both kinds of policy hold, in upstream's order.
fn validate_common(errs: &mut FieldErrors, c: &Common<'_>, policy: Policy) {
    one_of(
        errs,
        "spec.failurePolicy".into(),
        c.failure_policy,
        &["Fail", "Ignore"],
    );
    if let Some(kind) = c.param_kind {
        match kind.api_version.as_deref().unwrap_or_default() {
            "" => errs.push(FieldError::required("spec.paramKind.apiVersion", "")),
            v if v.split('/').count() > 2 || v.ends_with('/') || v.starts_with('/') => {
                errs.push(FieldError::invalid(
                    "spec.paramKind.apiVersion",
                    v,
                    format!("unexpected GroupVersion string: {v}"),
                ))
            }
            _ => {}
        }
        if kind.kind.as_deref().unwrap_or_default().is_empty() {
            errs.push(FieldError::required("spec.paramKind.kind", ""));
        }
    }
    match c.match_constraints {
        Some(m) => validate_match(errs, "spec.matchConstraints", m, true, policy),
        None => errs.push(FieldError::required("spec.matchConstraints", "")),
    }
    validate_conditions(errs, "spec.matchConditions", c.match_conditions);
    let mut names = BTreeSet::new();
    for (i, v) in c.variables.iter().enumerate() {
        let at = format!("spec.variables[{i}]");
        if v.name.is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        } else if !is_identifier(&v.name) {
            errs.push(FieldError::invalid(
                format!("{at}.name"),
                &v.name,
                "must be a valid CEL identifier",
            ));
        } else if !names.insert(v.name.as_str()) {
            errs.push(FieldError::duplicate(format!("{at}.name"), &v.name));
        }
        if v.expression.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{at}.expression"),
                "expression is not specified",
            ));
        } else {
            validate_compiles(errs, format!("{at}.expression"), &v.expression);
        }
    }
}

fn validate_policy(p: &ValidatingAdmissionPolicy) -> FieldErrors {
    let mut errs = Vec::new();
    let spec = &p.spec.clone().unwrap_or_default();
    validate_common(
        &mut errs,
        &Common {
            failure_policy: spec.failure_policy.as_deref(),
            param_kind: spec.param_kind.as_ref(),
            match_constraints: spec.match_constraints.as_ref(),
            match_conditions: spec.match_conditions.as_deref().unwrap_or_default(),
            variables: spec.variables.as_deref().unwrap_or_default(),
        },
        Policy::Validating,
    );
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
    errs
}

/// The patch types a mutation may have.
const PATCH_TYPES: [&str; 2] = ["ApplyConfiguration", "JSONPatch"];

fn validate_mutating_policy(p: &MutatingAdmissionPolicy) -> FieldErrors {
    let mut errs = Vec::new();
    let spec = &p.spec.clone().unwrap_or_default();
    validate_common(
        &mut errs,
        &Common {
            failure_policy: spec.failure_policy.as_deref(),
            param_kind: spec.param_kind.as_ref(),
            match_constraints: spec.match_constraints.as_ref(),
            match_conditions: spec.match_conditions.as_deref().unwrap_or_default(),
            variables: spec.variables.as_deref().unwrap_or_default(),
        },
        Policy::Mutating,
    );
    let mutations = spec.mutations.as_deref().unwrap_or_default();
    if mutations.is_empty() {
        errs.push(FieldError::required(
            "spec.mutations",
            "mutations must contain at least one item",
        ));
    }
    for (i, m) in mutations.iter().enumerate() {
        let at = format!("spec.mutations[{i}]");
        let expressions = [
            (
                "applyConfiguration",
                m.apply_configuration
                    .as_ref()
                    .map(|a| a.expression.as_deref()),
            ),
            (
                "jsonPatch",
                m.json_patch.as_ref().map(|j| j.expression.as_deref()),
            ),
        ];
        match m.patch_type.as_str() {
            "" => errs.push(FieldError::required(format!("{at}.patchType"), "")),
            kind @ ("ApplyConfiguration" | "JSONPatch") => {
                // This type's own field first, then the other one's.
                let own = usize::from(kind == "JSONPatch");
                let (field, expression) = expressions[own];
                match expression {
                    None => errs.push(FieldError::required(
                        format!("{at}.{field}"),
                        format!("must be specified when patchType is {kind}"),
                    )),
                    Some(expression) => validate_compiles_with(
                        &mut errs,
                        format!("{at}.{field}.expression"),
                        expression.unwrap_or_default(),
                        capstan_cel::Program::compile_mutation,
                    ),
                }
                let (other, set) = expressions[1 - own];
                if set.is_some() {
                    errs.push(FieldError::invalid(
                        format!("{at}.{other}"),
                        &format!("{{{other}}}"),
                        format!("must not be specified when patchType is {kind}"),
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                format!("{at}.patchType"),
                other,
                &PATCH_TYPES,
            )),
        }
    }
    match spec.reinvocation_policy.as_deref() {
        None | Some("") => errs.push(FieldError::required("spec.reinvocationPolicy", "")),
        policy => one_of(
            &mut errs,
            "spec.reinvocationPolicy".into(),
            policy,
            &["IfNeeded", "Never"],
        ),
    }
    errs
}

fn validate_policy_name(errs: &mut FieldErrors, name: &str) {
    match name {
        "" => errs.push(FieldError::required("spec.policyName", "")),
        name => {
            for why in dns1123_subdomain(name) {
                errs.push(FieldError::invalid("spec.policyName", name, why));
            }
        }
    }
}

fn validate_param_ref(errs: &mut FieldErrors, r: &ParamRef) {
    match (&r.name, &r.selector) {
        (Some(_), Some(_)) => {
            for field in ["name", "selector"] {
                errs.push(FieldError::forbidden(
                    format!("spec.paramRef.{field}"),
                    "name and selector are mutually exclusive",
                ));
            }
        }
        (None, None) => errs.push(FieldError::required(
            "spec.paramRef",
            "one of name or selector must be specified",
        )),
        (Some(name), None) => {
            for why in dns1123_subdomain(name) {
                errs.push(FieldError::invalid("spec.paramRef.name", name, why));
            }
        }
        (None, Some(s)) => validate_selector(errs, "spec.paramRef.selector", Some(s)),
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
            errs,
            "spec.paramRef.parameterNotFoundAction".into(),
            action,
            &["Deny", "Allow"],
        ),
    }
}

fn validate_binding(b: &ValidatingAdmissionPolicyBinding) -> FieldErrors {
    let mut errs = Vec::new();
    let spec = &b.spec;
    validate_policy_name(&mut errs, &spec.policy_name);
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
        validate_param_ref(&mut errs, r);
    }
    if let Some(m) = &spec.match_resources {
        validate_match(
            &mut errs,
            "spec.matchResources",
            m,
            false,
            Policy::Validating,
        );
    }
    errs
}

fn validate_mutating_binding(b: &MutatingAdmissionPolicyBinding) -> FieldErrors {
    let mut errs = Vec::new();
    let spec = b.spec.clone().unwrap_or_default();
    validate_policy_name(&mut errs, spec.policy_name.as_deref().unwrap_or_default());
    if let Some(r) = &spec.param_ref {
        validate_param_ref(&mut errs, r);
    }
    if let Some(m) = &spec.match_resources {
        validate_match(&mut errs, "spec.matchResources", m, false, Policy::Mutating);
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

/// The strategy of MutatingAdmissionPolicy.
#[derive(Debug, Default, Clone, Copy)]
pub struct MutatingAdmissionPolicyStrategy;

/// The strategy of MutatingAdmissionPolicyBinding.
#[derive(Debug, Default, Clone, Copy)]
pub struct MutatingAdmissionPolicyBindingStrategy;

impl Strategy for MutatingAdmissionPolicyStrategy {
    type Object = MutatingAdmissionPolicy;

    fn descriptor(&self) -> ResourceDescriptor {
        descriptor("MutatingAdmissionPolicy", "mutatingadmissionpolicies")
    }

    fn default(&self, obj: &mut MutatingAdmissionPolicy) {
        let spec = obj.spec.get_or_insert_with(Default::default);
        spec.failure_policy.get_or_insert_with(|| "Fail".into());
        if let Some(m) = &mut spec.match_constraints {
            default_match(m);
        }
    }

    fn validate(&self, obj: &MutatingAdmissionPolicy) -> FieldErrors {
        validate_mutating_policy(obj)
    }

    fn validate_update(
        &self,
        new: &MutatingAdmissionPolicy,
        _old: &MutatingAdmissionPolicy,
    ) -> FieldErrors {
        validate_mutating_policy(new)
    }
}

impl Strategy for MutatingAdmissionPolicyBindingStrategy {
    type Object = MutatingAdmissionPolicyBinding;

    fn descriptor(&self) -> ResourceDescriptor {
        descriptor(
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
        )
    }

    fn default(&self, obj: &mut MutatingAdmissionPolicyBinding) {
        if let Some(m) = obj
            .spec
            .get_or_insert_with(Default::default)
            .match_resources
            .as_mut()
        {
            default_match(m);
        }
    }

    fn validate(&self, obj: &MutatingAdmissionPolicyBinding) -> FieldErrors {
        validate_mutating_binding(obj)
    }

    fn validate_update(
        &self,
        new: &MutatingAdmissionPolicyBinding,
        _old: &MutatingAdmissionPolicyBinding,
    ) -> FieldErrors {
        validate_mutating_binding(new)
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
                "spec.variables[0].name",
                "spec.validations[0].expression",
                "spec.validations[0].message",
                "spec.validations[0].reason",
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
                "spec.paramRef.selector",
                "spec.paramRef.parameterNotFoundAction",
            ]
        );
    }

    #[test]
    fn a_mutating_policy_needs_mutations_of_one_patch_type_and_a_reinvocation_policy() {
        let policy = |spec: serde_json::Value| {
            let mut p: MutatingAdmissionPolicy =
                serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap();
            MutatingAdmissionPolicyStrategy.default(&mut p);
            p
        };
        let good = policy(json!({
            "matchConstraints": rules(),
            "reinvocationPolicy": "IfNeeded",
            "mutations": [
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{spec: Object.spec{replicas: 2}}"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'remove', path: '/spec/paused'}]"}},
            ],
        }));
        assert_eq!(
            good.spec.as_ref().unwrap().failure_policy.as_deref(),
            Some("Fail")
        );
        assert!(validate_mutating_policy(&good).is_empty());
        let bad = policy(json!({
            "matchConstraints": {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["DELETE"], "resources": ["pods"]}]},
            "mutations": [
                {"patchType": "Weird"},
                {"patchType": "ApplyConfiguration"},
                {"patchType": "JSONPatch", "applyConfiguration": {"expression": "Object{}"}},
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Pod{}"}},
            ],
        }));
        assert_eq!(
            fields(&validate_mutating_policy(&bad)),
            [
                "spec.matchConstraints.resourceRules.operations",
                "spec.mutations[0].patchType",
                "spec.mutations[1].applyConfiguration",
                "spec.mutations[2].jsonPatch",
                "spec.mutations[2].applyConfiguration",
                "spec.mutations[3].applyConfiguration.expression",
                "spec.reinvocationPolicy",
            ]
        );
    }
}
