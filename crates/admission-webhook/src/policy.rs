//! The `ValidatingAdmissionPolicy` plugin: ValidatingAdmissionPolicies and their bindings,
//! compiled once per change as the watch cache delivers them, evaluated in process per
//! request: match constraints, parameters, match conditions, variables, validations and
//! audit annotations, then the binding's actions (Deny, Warn, Audit) on each failure.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use capstan_admission::{Attributes, Form, Lister, Operation, Plugin};
use capstan_cel::{Activation, Program};
use capstan_meta::labels::LabelSelector;
use capstan_meta::status::Reason;
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, RuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{StatusCause, StatusDetails};
use serde_json::{Value, json};
use tracing::warn;

use crate::index::{Condition, selector};
use crate::matching::{Rule, Versioned, invocation, labels, namespace_object, namespaced};
use crate::review;

/// The audit annotation that lists failed validations a binding audits.
pub const VALIDATION_FAILURE_ANNOTATION: &str =
    "validation.policy.admission.k8s.io/validation_failure";

/// Which objects a list of the index holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    /// ValidatingAdmissionPolicy.
    Policy,
    /// ValidatingAdmissionPolicyBinding.
    Binding,
}

/// A rule that may also name the objects it covers.
pub(crate) struct NamedRule {
    rule: Rule,
    names: Vec<String>,
}

impl NamedRule {
    fn new(rule: &NamedRuleWithOperations) -> Self {
        Self {
            rule: Rule::new(&RuleWithOperations {
                api_groups: rule.api_groups.clone(),
                api_versions: rule.api_versions.clone(),
                operations: rule.operations.clone(),
                resources: rule.resources.clone(),
                scope: rule.scope.clone(),
            }),
            names: rule.resource_names.clone().unwrap_or_default(),
        }
    }

    fn matches(&self, a: &Attributes, form: &Form, in_namespace: bool) -> bool {
        self.rule.matches_form(a.operation, form, in_namespace)
            && (self.names.is_empty() || self.names.contains(&a.name))
    }
}

/// `matchConstraints` of a policy or `matchResources` of a binding.
pub(crate) struct Constraints {
    /// No `resourceRules` in a binding: whatever its policy matches.
    every_resource: bool,
    /// `matchPolicy: Equivalent` (the default).
    equivalent: bool,
    rules: Vec<NamedRule>,
    excludes: Vec<NamedRule>,
    namespace_selector: LabelSelector,
    object_selector: LabelSelector,
}

impl Constraints {
    pub(crate) fn new(m: &MatchResources, rules_required: bool) -> Self {
        let rules: Vec<NamedRule> = m
            .resource_rules
            .iter()
            .flatten()
            .map(NamedRule::new)
            .collect();
        Self {
            every_resource: !rules_required && rules.is_empty(),
            equivalent: m.match_policy.as_deref() != Some("Exact"),
            rules,
            excludes: m
                .exclude_resource_rules
                .iter()
                .flatten()
                .map(NamedRule::new)
                .collect(),
            namespace_selector: selector(m.namespace_selector.as_ref()),
            object_selector: selector(m.object_selector.as_ref()),
        }
    }

    pub(crate) fn may_match(
        &self,
        operation: Operation,
        resource: &GroupResource,
        subresource: &str,
    ) -> bool {
        self.every_resource
            || self.rules.iter().any(|r| {
                r.rule
                    .may_match(operation, &resource.group, &resource.resource, subresource)
            })
    }
}

/// A policy's parameter kind.
pub(crate) struct ParamKind {
    api_version: String,
    group: String,
    kind: String,
}

impl ParamKind {
    pub(crate) fn new(k: &k8s_openapi::api::admissionregistration::v1::ParamKind) -> Self {
        let api_version = k.api_version.clone().unwrap_or_default();
        Self {
            group: api_version
                .split_once('/')
                .map(|(g, _)| g.to_string())
                .unwrap_or_default(),
            api_version,
            kind: k.kind.clone().unwrap_or_default(),
        }
    }
}

/// One validation.
struct Check {
    expression: String,
    program: Result<Program, String>,
    message: Option<String>,
    message_program: Option<Result<Program, String>>,
    reason: Reason,
}

/// A compiled ValidatingAdmissionPolicy.
pub struct Policy {
    name: String,
    fail_open: bool,
    param_kind: Option<ParamKind>,
    /// Absent (only in an object another server stored): matches nothing.
    constraints: Option<Constraints>,
    conditions: Vec<Condition>,
    variables: Vec<(String, Result<Program, String>)>,
    checks: Vec<Check>,
    annotations: Vec<(String, Result<Program, String>)>,
}

pub(crate) fn compile(expression: &str) -> Result<Program, String> {
    Program::compile(expression).map_err(|e| format!("compilation failed: {e}"))
}

/// A policy's match conditions, compiled.
pub(crate) fn conditions(
    list: Option<&[k8s_openapi::api::admissionregistration::v1::MatchCondition]>,
) -> Vec<Condition> {
    list.unwrap_or_default()
        .iter()
        .map(|c| Condition {
            name: c.name.clone(),
            program: Program::compile(&c.expression).map_err(|e| e.to_string()),
        })
        .collect()
}

/// A policy's variables, compiled.
pub(crate) fn variables(
    list: Option<&[k8s_openapi::api::admissionregistration::v1::Variable]>,
) -> Vec<(String, Result<Program, String>)> {
    list.unwrap_or_default()
        .iter()
        .map(|v| (v.name.clone(), compile(&v.expression)))
        .collect()
}

impl Policy {
    fn new(p: &ValidatingAdmissionPolicy) -> Self {
        let spec = p.spec.clone().unwrap_or_default();
        Self {
            name: p.metadata.name.clone().unwrap_or_default(),
            fail_open: spec.failure_policy.as_deref() == Some("Ignore"),
            param_kind: spec.param_kind.as_ref().map(ParamKind::new),
            constraints: spec
                .match_constraints
                .as_ref()
                .map(|m| Constraints::new(m, true)),
            conditions: conditions(spec.match_conditions.as_deref()),
            variables: variables(spec.variables.as_deref()),
            checks: spec
                .validations
                .iter()
                .flatten()
                .map(|v| Check {
                    expression: v.expression.clone(),
                    program: compile(&v.expression),
                    message: v.message.clone().filter(|m| !m.trim().is_empty()),
                    message_program: v.message_expression.as_deref().map(compile),
                    reason: match v.reason.as_deref() {
                        Some("Unauthorized") => Reason::Unauthorized,
                        Some("Forbidden") => Reason::Forbidden,
                        Some("RequestEntityTooLarge") => Reason::RequestEntityTooLarge,
                        _ => Reason::Invalid,
                    },
                })
                .collect(),
            annotations: spec
                .audit_annotations
                .iter()
                .flatten()
                .map(|a| (a.key.clone(), compile(&a.value_expression)))
                .collect(),
        }
    }
}

/// Where a binding's parameters come from.
pub(crate) struct ParamRef {
    name: Option<String>,
    namespace: Option<String>,
    selector: LabelSelector,
    deny_if_missing: bool,
}

impl ParamRef {
    pub(crate) fn new(r: &k8s_openapi::api::admissionregistration::v1::ParamRef) -> Self {
        Self {
            selector: selector(r.selector.as_ref()),
            name: r.name.clone(),
            namespace: r.namespace.clone().filter(|ns| !ns.is_empty()),
            deny_if_missing: r.parameter_not_found_action.as_deref() == Some("Deny"),
        }
    }
}

/// A compiled ValidatingAdmissionPolicyBinding.
pub struct Binding {
    name: String,
    policy: String,
    deny: bool,
    warn: bool,
    audit: bool,
    param_ref: Option<ParamRef>,
    constraints: Option<Constraints>,
}

impl Binding {
    fn new(b: &ValidatingAdmissionPolicyBinding) -> Self {
        let spec = b.spec.clone();
        let actions = spec.validation_actions;
        let has = |action: &str| actions.iter().any(|a| a == action);
        Self {
            name: b.metadata.name.clone().unwrap_or_default(),
            policy: spec.policy_name,
            deny: has("Deny"),
            warn: has("Warn"),
            audit: has("Audit"),
            param_ref: spec.param_ref.as_ref().map(ParamRef::new),
            constraints: spec
                .match_resources
                .as_ref()
                .map(|m| Constraints::new(m, false)),
        }
    }

    fn actions(&self) -> Vec<&'static str> {
        [
            (self.deny, "Deny"),
            (self.warn, "Warn"),
            (self.audit, "Audit"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }
}

/// A policy or binding as the index keeps it: compiled from its object.
pub trait Compiled: Send + Sync + 'static {
    /// The object it is compiled from.
    type Source;
    /// Compiles `source`.
    fn compile(source: &Self::Source) -> Self;
    /// The object's name.
    fn name(&self) -> &str;
}

/// A compiled binding: it names its policy.
pub trait CompiledBinding: Compiled {
    /// The name of the policy bound.
    fn policy(&self) -> &str;
}

impl Compiled for Policy {
    type Source = ValidatingAdmissionPolicy;
    fn compile(source: &ValidatingAdmissionPolicy) -> Self {
        Self::new(source)
    }
    fn name(&self) -> &str {
        &self.name
    }
}

impl Compiled for Binding {
    type Source = ValidatingAdmissionPolicyBinding;
    fn compile(source: &ValidatingAdmissionPolicyBinding) -> Self {
        Self::new(source)
    }
    fn name(&self) -> &str {
        &self.name
    }
}

impl CompiledBinding for Binding {
    fn policy(&self) -> &str {
        &self.policy
    }
}

/// A binding with the policy it names.
pub(crate) struct Bound<P, B> {
    pub(crate) policy: Arc<P>,
    pub(crate) binding: Arc<B>,
}

struct State<P, B> {
    policies: BTreeMap<String, (u64, Arc<P>)>,
    bindings: BTreeMap<String, (u64, Arc<B>)>,
    /// Every binding whose policy exists, in binding name order.
    snapshot: Arc<Vec<Bound<P, B>>>,
}

impl<P, B> Default for State<P, B> {
    fn default() -> Self {
        Self {
            policies: BTreeMap::new(),
            bindings: BTreeMap::new(),
            snapshot: Arc::default(),
        }
    }
}

impl<P: Compiled, B: CompiledBinding> State<P, B> {
    fn rebuild(&mut self) {
        let bound = self
            .bindings
            .values()
            .filter_map(|(_, binding)| {
                let (_, policy) = self.policies.get(binding.policy())?;
                Some(Bound {
                    policy: policy.clone(),
                    binding: binding.clone(),
                })
            })
            .collect();
        self.snapshot = Arc::new(bound);
    }
}

/// Every policy and binding of one kind, kept current by whoever follows them (the server's
/// controllers, from the watch cache).
pub struct Index<P, B> {
    state: RwLock<State<P, B>>,
    /// Whether the policies and the bindings have each been listed once.
    loaded: capstan_auth::loaded::Loaded<2>,
}

/// The index of ValidatingAdmissionPolicies and their bindings.
pub type PolicyIndex = Index<Policy, Binding>;

impl<P, B> Default for Index<P, B> {
    fn default() -> Self {
        Self {
            state: RwLock::default(),
            loaded: Default::default(),
        }
    }
}

impl<P: Compiled, B: CompiledBinding> std::fmt::Debug for Index<P, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("bound", &self.snapshot().len())
            .finish()
    }
}

impl<P: Compiled, B: CompiledBinding> Index<P, B> {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State<P, B>> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds or replaces a policy seen in list `generation`.
    pub fn put_policy(&self, policy: &P::Source, generation: u64) {
        let compiled = Arc::new(P::compile(policy));
        let mut state = self.write();
        state
            .policies
            .insert(compiled.name().to_string(), (generation, compiled));
        state.rebuild();
    }

    /// Adds or replaces a binding seen in list `generation`.
    pub fn put_binding(&self, binding: &B::Source, generation: u64) {
        let compiled = Arc::new(B::compile(binding));
        let mut state = self.write();
        state
            .bindings
            .insert(compiled.name().to_string(), (generation, compiled));
        state.rebuild();
    }

    /// Removes a deleted policy or binding.
    pub fn remove(&self, kind: PolicyKind, name: &str) {
        let mut state = self.write();
        let removed = match kind {
            PolicyKind::Policy => state.policies.remove(name).is_some(),
            PolicyKind::Binding => state.bindings.remove(name).is_some(),
        };
        if removed {
            state.rebuild();
        }
    }

    /// A full list of generation `generation` ended: objects it did not hold are gone.
    pub fn listed(&self, kind: PolicyKind, generation: u64) {
        let mut state = self.write();
        match kind {
            PolicyKind::Policy => state.policies.retain(|_, (g, _)| *g >= generation),
            PolicyKind::Binding => state.bindings.retain(|_, (g, _)| *g >= generation),
        }
        state.rebuild();
        drop(state);
        self.loaded.set(match kind {
            PolicyKind::Policy => 0,
            PolicyKind::Binding => 1,
        });
    }

    /// Whether both kinds were listed once.
    pub fn is_loaded(&self) -> bool {
        self.loaded.is_loaded()
    }

    /// Returns once both kinds have been listed once.
    pub async fn wait_loaded(&self) {
        self.loaded.wait().await
    }

    pub(crate) fn snapshot(&self) -> Arc<Vec<Bound<P, B>>> {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .snapshot
            .clone()
    }
}

/// What one request's evaluations share, computed when first needed.
pub(crate) struct Request<'a> {
    pub(crate) a: &'a Attributes,
    pub(crate) lister: &'a dyn Lister,
    pub(crate) namespace: Option<Option<Value>>,
    /// The variables, for the form they were made in.
    pub(crate) activation: Option<(Form, Activation)>,
}

impl Request<'_> {
    pub(crate) async fn namespace(&mut self) -> Result<Option<&Value>, String> {
        if self.namespace.is_none() {
            let found = namespace_object(self.lister, self.a)
                .await
                .map_err(|e| format!("could not read the namespace: {}", e.message))?;
            self.namespace = Some(found);
        }
        Ok(self.namespace.as_ref().and_then(Option::as_ref))
    }

    /// The variables every expression sees, with the request in `form`: `object`,
    /// `oldObject`, `request` and `namespaceObject` (`params` and `variables` are bound per
    /// policy).
    async fn activation(&mut self, form: &Form) -> Result<&mut Activation, String> {
        if self
            .activation
            .as_ref()
            .is_none_or(|(made, _)| made != form)
        {
            let a = self.a;
            let namespace = if namespaced(a) {
                self.namespace().await?.cloned().unwrap_or(Value::Null)
            } else {
                Value::Null
            };
            let v = Versioned::of(a, form.clone())
                .await
                .map_err(|e| e.message)?;
            let mut activation = Activation::new();
            let bind = |activation: &mut Activation, name: &str, value: &Value| {
                activation.bind(name, value).map_err(|e| e.to_string())
            };
            bind(
                &mut activation,
                "object",
                v.object(a).unwrap_or(&Value::Null),
            )?;
            bind(
                &mut activation,
                "oldObject",
                v.old_object(a).unwrap_or(&Value::Null),
            )?;
            bind(&mut activation, "request", &review::request_variable(a, &v))?;
            bind(&mut activation, "namespaceObject", &namespace)?;
            self.activation = Some((form.clone(), activation));
        }
        match &mut self.activation {
            Some((_, activation)) => Ok(activation),
            None => Err("no variables".into()),
        }
    }

    /// The form in which `c` matches the request (rules and match policy, exclusions,
    /// selectors), or `None`.
    pub(crate) async fn matches(&mut self, c: &Constraints) -> Result<Option<Form>, String> {
        let a = self.a;
        let in_namespace = namespaced(a);
        let form = if c.every_resource {
            a.requested()
        } else {
            match invocation(a, c.equivalent, |form| {
                c.rules.iter().any(|r| r.matches(a, form, in_namespace))
            }) {
                Some(form) => form,
                None => return Ok(None),
            }
        };
        if invocation(a, c.equivalent, |form| {
            c.excludes.iter().any(|r| r.matches(a, form, in_namespace))
        })
        .is_some()
        {
            return Ok(None);
        }
        let is_namespace = a.resource.group.is_empty() && a.resource.resource == "namespaces";
        if !c.namespace_selector.is_empty() && (in_namespace || is_namespace) {
            let labels = if is_namespace {
                labels(a.object.as_ref().or(a.old_object.as_ref()))
            } else {
                labels(self.namespace().await?)
            };
            if !c.namespace_selector.matches(labels.as_ref()) {
                return Ok(None);
            }
        }
        let selected = c.object_selector.is_empty()
            || c.object_selector
                .matches(labels(a.object.as_ref()).as_ref())
            || c.object_selector
                .matches(labels(a.old_object.as_ref()).as_ref());
        Ok(selected.then_some(form))
    }
}

/// One failed validation (or an error the policy does not ignore).
struct Failure {
    message: String,
    reason: Reason,
    /// The validation's index, for the audit annotation.
    index: Option<usize>,
}

/// What a binding's evaluation found.
enum Verdict {
    /// Not matched, matched and passed, or skipped on an ignored error.
    Passed,
    Failed(Vec<Failure>),
}

fn config_error(policy: &Policy, why: String) -> Verdict {
    if policy.fail_open {
        warn!(policy = %policy.name, %why, "admission policy failed; ignored (failurePolicy Ignore)");
        return Verdict::Passed;
    }
    Verdict::Failed(vec![Failure {
        message: format!("failed to configure binding: {why}"),
        reason: Reason::Invalid,
        index: None,
    }])
}

/// Why a binding has no parameter objects.
pub(crate) enum NoParams {
    /// None found, and the binding allows that: the policy is skipped.
    Allowed,
    /// A misconfiguration, or none found where the binding denies that.
    Error(String),
}

/// The parameter objects `reference` selects, of `kind`.
pub(crate) async fn find_params(
    lister: &dyn Lister,
    kind: &ParamKind,
    reference: &ParamRef,
    a: &Attributes,
) -> Result<Vec<Value>, NoParams> {
    let Some(resource) = lister.resource_for_kind(&kind.group, &kind.kind) else {
        return Err(NoParams::Error(format!(
            "failed to find resource referenced by paramKind: '{}, Kind={}'",
            kind.api_version, kind.kind
        )));
    };
    let namespace = if lister.is_namespaced(&resource).unwrap_or(true) {
        match (&reference.namespace, namespaced(a)) {
            (Some(ns), _) => ns.clone(),
            (None, true) => a.namespace.clone(),
            (None, false) => {
                return Err(NoParams::Error(
                    "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into(),
                ));
            }
        }
    } else {
        String::new()
    };
    let found = match &reference.name {
        Some(name) => lister
            .get(&resource, &namespace, name)
            .await
            .map(|o| o.into_iter().collect::<Vec<_>>()),
        None => lister.list(&resource, &namespace).await.map(|all| {
            all.into_iter()
                .filter(|o| reference.selector.matches(labels(Some(o)).as_ref()))
                .collect()
        }),
    };
    let found = found
        .map_err(|e| NoParams::Error(format!("failed to read the parameters: {}", e.message)))?;
    if found.is_empty() {
        return Err(if reference.deny_if_missing {
            NoParams::Error(
                "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
            )
        } else {
            NoParams::Allowed
        });
    }
    Ok(found)
}

/// The plugin `ValidatingAdmissionPolicy`.
pub struct ValidatingAdmissionPolicies {
    index: Arc<PolicyIndex>,
    lister: Arc<dyn Lister>,
}

impl ValidatingAdmissionPolicies {
    /// The plugin over `index`; namespaces and parameters read through `lister`.
    pub fn new(index: Arc<PolicyIndex>, lister: Arc<dyn Lister>) -> Self {
        Self { index, lister }
    }

    /// The parameter objects of a binding (`[null]` for a policy without `paramKind`), or
    /// the verdict when there are none.
    async fn params(
        &self,
        bound: &Bound<Policy, Binding>,
        a: &Attributes,
    ) -> Result<Vec<Value>, Verdict> {
        let (policy, binding) = (&bound.policy, &bound.binding);
        let Some(kind) = &policy.param_kind else {
            return Ok(vec![Value::Null]);
        };
        let Some(reference) = &binding.param_ref else {
            return Err(config_error(
                policy,
                format!(
                    "paramKind kind `{}` is defined but paramRef is not set in the binding",
                    kind.kind
                ),
            ));
        };
        find_params(self.lister.as_ref(), kind, reference, a)
            .await
            .map_err(|missing| match missing {
                NoParams::Allowed => Verdict::Passed,
                NoParams::Error(why) => config_error(policy, why),
            })
    }

    /// Evaluates one binding.
    async fn evaluate(&self, bound: &Bound<Policy, Binding>, request: &mut Request<'_>) -> Verdict {
        let (policy, binding) = (&bound.policy, &bound.binding);
        let Some(constraints) = &policy.constraints else {
            return Verdict::Passed;
        };
        // The policy's constraints choose the form its expressions see; the binding's
        // only narrow what it applies to.
        let matched = match request.matches(constraints).await {
            Ok(Some(form)) => match &binding.constraints {
                Some(c) => request.matches(c).await.map(|m| m.map(|_| form)),
                None => Ok(Some(form)),
            },
            other => other,
        };
        let form = match matched {
            Ok(Some(form)) => form,
            Ok(None) => return Verdict::Passed,
            Err(why) => return config_error(policy, why),
        };
        let params = match self.params(bound, request.a).await {
            Ok(params) => params,
            Err(verdict) => return verdict,
        };
        let a = request.a;
        let activation = match request.activation(&form).await {
            Ok(activation) => activation,
            Err(why) => return config_error(policy, why),
        };
        let mut failures = Vec::new();
        for param in &params {
            match evaluate_with(policy, activation, param, a) {
                Ok(found) => failures.extend(found),
                Err(verdict) => return verdict,
            }
        }
        if failures.is_empty() {
            Verdict::Passed
        } else {
            Verdict::Failed(failures)
        }
    }
}

/// Binds `variables`: each sees the ones before it; one that fails is absent, so that only
/// an expression that reads it fails.
pub(crate) fn bind_variables(
    programs: &[(String, Result<Program, String>)],
    activation: &mut Activation,
) {
    let mut variables: Vec<(String, capstan_cel::CelValue)> = Vec::new();
    activation.bind_results("variables", &variables);
    for (name, program) in programs {
        let Ok(program) = program else { continue };
        if let Ok(value) = program.run(activation) {
            variables.push((name.clone(), value));
            activation.bind_results("variables", &variables);
        }
    }
}

/// Whether every match condition holds: false when one is false, an error (the first) when
/// none is false and one fails.
pub(crate) fn conditions_hold(
    conditions: &[Condition],
    activation: &Activation,
) -> Result<bool, String> {
    let mut condition_error = None;
    for condition in conditions {
        let verdict = match &condition.program {
            Ok(program) => program.run_bool(activation).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        match verdict {
            Ok(false) => return Ok(false),
            Ok(true) => {}
            Err(e) => {
                condition_error.get_or_insert_with(|| {
                    format!(
                        "failed to evaluate match condition \"{}\": {e}",
                        condition.name
                    )
                });
            }
        }
    }
    match condition_error {
        Some(why) => Err(why),
        None => Ok(true),
    }
}

/// Evaluates a policy with one parameter object: its failures, or a verdict that ends the
/// evaluation (a false match condition, or an error).
fn evaluate_with(
    policy: &Policy,
    activation: &mut Activation,
    param: &Value,
    a: &Attributes,
) -> Result<Vec<Failure>, Verdict> {
    let fail = |why: String| {
        if policy.fail_open {
            warn!(policy = %policy.name, %why, "admission policy failed; ignored (failurePolicy Ignore)");
            Verdict::Passed
        } else {
            Verdict::Failed(vec![Failure {
                message: why,
                reason: Reason::Invalid,
                index: None,
            }])
        }
    };
    activation
        .bind("params", param)
        .map_err(|e| fail(e.to_string()))?;
    bind_variables(&policy.variables, activation);
    match conditions_hold(&policy.conditions, activation) {
        Ok(true) => {}
        Ok(false) => return Err(Verdict::Passed),
        Err(why) => return Err(fail(why)),
    }
    let mut failures = Vec::new();
    for (index, check) in policy.checks.iter().enumerate() {
        let result = match &check.program {
            Ok(program) => program.run_bool(activation).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        match result {
            Ok(true) => {}
            Ok(false) => failures.push(Failure {
                message: message(check, activation),
                reason: check.reason,
                index: Some(index),
            }),
            Err(_) if policy.fail_open => {}
            Err(e) => failures.push(Failure {
                message: format!("expression '{}' resulted in error: {e}", check.expression),
                reason: Reason::Invalid,
                index: Some(index),
            }),
        }
    }
    for (key, program) in &policy.annotations {
        let value = match program {
            Ok(program) => program.run(activation).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        match value {
            Ok(capstan_cel::CelValue::String(s)) => a
                .feedback
                .annotate(format!("{}/{key}", policy.name), s.to_string()),
            Ok(capstan_cel::CelValue::Null) => {}
            Ok(other) => {
                if let Verdict::Failed(f) = fail(format!(
                    "valueExpression of audit annotation '{key}' must evaluate to a string or null, not {:?}",
                    other.type_of()
                )) {
                    failures.extend(f);
                }
            }
            Err(e) => {
                if let Verdict::Failed(f) = fail(format!(
                    "valueExpression of audit annotation '{key}' resulted in error: {e}"
                )) {
                    failures.extend(f);
                }
            }
        }
    }
    Ok(failures)
}

/// The message of a failed validation: its `messageExpression`'s if that gives one line of
/// text, else its `message`, else upstream's default.
fn message(check: &Check, activation: &Activation) -> String {
    if let Some(Ok(program)) = &check.message_program
        && let Ok(capstan_cel::CelValue::String(s)) = program.run(activation)
    {
        let s = s.trim();
        if !s.is_empty() && !s.contains('\n') {
            return s.to_string();
        }
    }
    check
        .message
        .clone()
        .unwrap_or_else(|| format!("failed expression: {}", check.expression))
}

#[async_trait]
impl Plugin for ValidatingAdmissionPolicies {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        if crate::matching::exempt(resource) {
            return false;
        }
        if !self.index.is_loaded() {
            return true;
        }
        self.index.snapshot().iter().any(|b| {
            b.policy
                .constraints
                .as_ref()
                .is_some_and(|c| c.may_match(operation, resource, subresource))
        })
    }

    /// Every binding; the first denial answers, after every warning and audit annotation.
    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        crate::wait_ready(self.index.wait_loaded(), a).await?;
        let snapshot = self.index.snapshot();
        let mut request = Request {
            a,
            lister: self.lister.as_ref(),
            namespace: None,
            activation: None,
        };
        let mut denial = None;
        let mut audited = Vec::new();
        for bound in snapshot.iter() {
            let Verdict::Failed(failures) = self.evaluate(bound, &mut request).await else {
                continue;
            };
            let (policy, binding) = (&bound.policy.name, &bound.binding.name);
            for failure in failures {
                if bound.binding.warn {
                    a.feedback.warn(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{binding}': {}",
                        failure.message
                    ));
                }
                if bound.binding.audit {
                    audited.push(json!({
                        "message": failure.message,
                        "policy": policy,
                        "binding": binding,
                        "expressionIndex": failure.index,
                        "validationActions": bound.binding.actions(),
                    }));
                }
                if bound.binding.deny && denial.is_none() {
                    denial = Some(denied(a, policy, binding, &failure));
                }
            }
        }
        if !audited.is_empty() {
            a.feedback.annotate(
                VALIDATION_FAILURE_ANNOTATION,
                Value::Array(audited).to_string(),
            );
        }
        match denial {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }
}

/// Upstream's denial: `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy ...`,
/// with the validation's reason and its code, and the reason after the colon as a cause.
fn denied(a: &Attributes, policy: &str, binding: &str, failure: &Failure) -> ApiError {
    // The resource as the client named it (`events.events.k8s.io`, not the stored `events`).
    let requested = a.requested();
    let why = format!(
        "ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {}",
        failure.message
    );
    let mut err = ApiError::forbidden_because(
        &GroupResource::new(requested.group, requested.resource),
        a.display_name(),
        &why,
    );
    err.reason = failure.reason;
    let details = err
        .details
        .get_or_insert_with(|| Box::new(StatusDetails::default()));
    details.causes = Some(vec![StatusCause {
        message: Some(why),
        ..Default::default()
    }]);
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_admission::MemoryLister;
    use capstan_auth::UserInfo;

    /// A namespace and a ConfigMap, with ConfigMaps served as parameters.
    fn lister() -> Arc<dyn Lister> {
        let configmaps = GroupResource::new("", "configmaps");
        Arc::new(
            MemoryLister::new()
                .serving("", "ConfigMap", configmaps.clone(), true)
                .with(
                    GroupResource::new("", "namespaces"),
                    "",
                    json!({"metadata": {"name": "prod", "labels": {"env": "prod"}}}),
                )
                .with(
                    configmaps,
                    "prod",
                    json!({"metadata": {"name": "limits"}, "data": {"max": "3"}}),
                ),
        )
    }

    fn policy(spec: Value) -> ValidatingAdmissionPolicy {
        serde_json::from_value(json!({"metadata": {"name": "replicas"}, "spec": spec})).unwrap()
    }

    fn binding(spec: Value) -> ValidatingAdmissionPolicyBinding {
        serde_json::from_value(json!({"metadata": {"name": "replicas-binding"}, "spec": spec}))
            .unwrap()
    }

    fn deployment(replicas: i64) -> Attributes {
        let mut a = Attributes::new(
            Operation::Create,
            GroupResource::new("apps", "deployments"),
            UserInfo::default(),
        );
        a.version = "v1".into();
        a.kind = "Deployment".into();
        a.namespace = "prod".into();
        a.name = "web".into();
        a.object = Some(
            json!({"metadata": {"name": "web", "namespace": "prod"}, "spec": {"replicas": replicas}}),
        );
        a
    }

    fn rules() -> Value {
        json!({"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]})
    }

    fn plugin(p: Value, b: Value) -> ValidatingAdmissionPolicies {
        let index = Arc::new(PolicyIndex::new());
        index.put_policy(&policy(p), 1);
        index.put_binding(&binding(b), 1);
        index.listed(PolicyKind::Policy, 1);
        index.listed(PolicyKind::Binding, 1);
        ValidatingAdmissionPolicies::new(index, lister())
    }

    #[tokio::test]
    async fn a_false_validation_denies_with_upstreams_message_and_reason() {
        let plugin = plugin(
            json!({
                "matchConstraints": rules(),
                "variables": [{"name": "limit", "expression": "int(params.data.max)"}],
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{
                    "expression": "object.spec.replicas <= variables.limit",
                    "messageExpression": "'replicas must be at most ' + string(variables.limit)",
                    "reason": "Forbidden",
                }],
            }),
            json!({
                "policyName": "replicas", "validationActions": ["Deny"],
                "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"},
            }),
        );
        let resource = GroupResource::new("apps", "deployments");
        assert!(plugin.validates(Operation::Create, &resource, ""));
        assert!(!plugin.validates(Operation::Delete, &resource, ""));
        plugin.validate(&deployment(3)).await.unwrap();
        let err = plugin.validate(&deployment(4)).await.unwrap_err();
        assert_eq!(err.code(), 403);
        assert_eq!(
            err.message,
            "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: replicas must be at most 3"
        );
    }

    #[tokio::test]
    async fn warn_and_audit_actions_admit_and_report() {
        let plugin = plugin(
            json!({
                "matchConstraints": rules(),
                "validations": [{"expression": "object.spec.replicas <= 2"}],
                "auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}],
            }),
            json!({"policyName": "replicas", "validationActions": ["Warn", "Audit"]}),
        );
        let a = deployment(5);
        plugin.validate(&a).await.unwrap();
        assert_eq!(
            a.feedback.take_warnings(),
            [
                "Validation failed for ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding': failed expression: object.spec.replicas <= 2"
            ]
        );
        let annotations = a.feedback.annotations();
        assert_eq!(annotations["replicas/replicas"], "5");
        let audited: Value =
            serde_json::from_str(&annotations[VALIDATION_FAILURE_ANNOTATION]).unwrap();
        assert_eq!(audited[0]["expressionIndex"], 0);
        assert_eq!(audited[0]["validationActions"], json!(["Warn", "Audit"]));
    }

    #[tokio::test]
    async fn binding_selectors_missing_params_and_errors_follow_the_policy() {
        // The binding only covers namespaces labelled env=test: nothing happens in prod.
        let narrowed = plugin(
            json!({"matchConstraints": rules(), "validations": [{"expression": "false"}]}),
            json!({
                "policyName": "replicas", "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": {"matchLabels": {"env": "test"}}},
            }),
        );
        narrowed.validate(&deployment(1)).await.unwrap();

        let missing = |action: &str| {
            plugin(
                json!({
                    "matchConstraints": rules(),
                    "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                    "validations": [{"expression": "true"}],
                }),
                json!({
                    "policyName": "replicas", "validationActions": ["Deny"],
                    "paramRef": {"name": "absent", "parameterNotFoundAction": action},
                }),
            )
        };
        missing("Allow").validate(&deployment(1)).await.unwrap();
        let err = missing("Deny").validate(&deployment(1)).await.unwrap_err();
        assert!(
            err.message.ends_with(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
            ),
            "{}",
            err.message
        );
        assert_eq!(err.code(), 422);

        let failing = |policy: &str| {
            plugin(
                json!({
                    "matchConstraints": rules(), "failurePolicy": policy,
                    "validations": [{"expression": "object.spec.missing > 1"}],
                }),
                json!({"policyName": "replicas", "validationActions": ["Deny"]}),
            )
        };
        failing("Ignore").validate(&deployment(1)).await.unwrap();
        let err = failing("Fail").validate(&deployment(1)).await.unwrap_err();
        assert!(
            err.message
                .contains("expression 'object.spec.missing > 1' resulted in error"),
            "{}",
            err.message
        );
    }
}
