//! The `MutatingAdmissionPolicy` plugin: MutatingAdmissionPolicies and their bindings,
//! compiled as the watch cache delivers them and evaluated in process per request: match
//! constraints, parameters, match conditions, variables, then each mutation in order, an
//! apply configuration merged into the object or a JSON patch applied to it; reinvoked once
//! when `reinvocationPolicy: IfNeeded` and a later mutation changed the object.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_admission::{Attributes, Lister, Operation, Plugin};
use capstan_cel::{Activation, Program};
use capstan_merge::{Ty, Typed};
use capstan_meta::status::Reason;
use capstan_meta::{ApiError, GroupResource};
use capstan_negotiation::schema::Schema;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{StatusCause, StatusDetails};
use serde_json::Value;
use tracing::warn;

use crate::index::Condition;
use crate::matching::{Versioned, namespaced};
use crate::policy::{
    Bound, Compiled, CompiledBinding, Constraints, Index, NoParams, ParamKind, ParamRef, Request,
    bind_variables, conditions, conditions_hold, find_params, variables,
};
use crate::review;

/// How a mutation changes the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatchType {
    /// An apply configuration, merged as server-side apply merges.
    ApplyConfiguration,
    /// A list of JSON patch operations.
    JsonPatch,
}

/// One mutation of a policy.
struct Mutation {
    patch_type: PatchType,
    expression: String,
    program: Result<Program, String>,
}

/// A compiled MutatingAdmissionPolicy.
pub struct MutatingPolicy {
    name: String,
    fail_open: bool,
    reinvoke: bool,
    param_kind: Option<ParamKind>,
    /// Absent (only in an object another server stored): matches nothing.
    constraints: Option<Constraints>,
    conditions: Vec<Condition>,
    variables: Vec<(String, Result<Program, String>)>,
    mutations: Vec<Mutation>,
}

impl Compiled for MutatingPolicy {
    type Source = MutatingAdmissionPolicy;

    fn compile(p: &MutatingAdmissionPolicy) -> Self {
        let spec = p.spec.clone().unwrap_or_default();
        Self {
            name: p.metadata.name.clone().unwrap_or_default(),
            fail_open: spec.failure_policy.as_deref() == Some("Ignore"),
            reinvoke: spec.reinvocation_policy.as_deref() == Some("IfNeeded"),
            param_kind: spec.param_kind.as_ref().map(ParamKind::new),
            constraints: spec
                .match_constraints
                .as_ref()
                .map(|m| Constraints::new(m, true)),
            conditions: conditions(spec.match_conditions.as_deref()),
            variables: variables(spec.variables.as_deref()),
            mutations: spec
                .mutations
                .iter()
                .flatten()
                .filter_map(|m| {
                    let (patch_type, expression) = match m.patch_type.as_str() {
                        "ApplyConfiguration" => (
                            PatchType::ApplyConfiguration,
                            m.apply_configuration.as_ref()?.expression.clone(),
                        ),
                        "JSONPatch" => (
                            PatchType::JsonPatch,
                            m.json_patch.as_ref()?.expression.clone(),
                        ),
                        _ => return None,
                    };
                    let expression = expression.unwrap_or_default();
                    Some(Mutation {
                        patch_type,
                        program: Program::compile_mutation(&expression)
                            .map_err(|e| format!("compilation failed: {e}")),
                        expression,
                    })
                })
                .collect(),
        }
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// A compiled MutatingAdmissionPolicyBinding.
pub struct MutatingBinding {
    name: String,
    policy: String,
    param_ref: Option<ParamRef>,
    constraints: Option<Constraints>,
}

impl Compiled for MutatingBinding {
    type Source = MutatingAdmissionPolicyBinding;

    fn compile(b: &MutatingAdmissionPolicyBinding) -> Self {
        let spec = b.spec.clone().unwrap_or_default();
        Self {
            name: b.metadata.name.clone().unwrap_or_default(),
            policy: spec.policy_name.unwrap_or_default(),
            param_ref: spec.param_ref.as_ref().map(ParamRef::new),
            constraints: spec
                .match_resources
                .as_ref()
                .map(|m| Constraints::new(m, false)),
        }
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl CompiledBinding for MutatingBinding {
    fn policy(&self) -> &str {
        &self.policy
    }
}

/// The index of MutatingAdmissionPolicies and their bindings.
pub type MutatingPolicyIndex = Index<MutatingPolicy, MutatingBinding>;

/// The plugin `MutatingAdmissionPolicy`.
pub struct MutatingAdmissionPolicies {
    index: Arc<MutatingPolicyIndex>,
    lister: Arc<dyn Lister>,
}

/// The key of this plugin's snapshots in the reinvocation state.
const PLUGIN: &str = "MutatingAdmissionPolicy";

/// What evaluating a binding came to.
enum Outcome {
    /// The binding does not apply (not matched, a false condition, no parameters allowed).
    Skipped,
    /// It applied; the object in the stored form (changed or not).
    Applied,
}

impl MutatingAdmissionPolicies {
    /// The plugin over `index`; namespaces and parameters read through `lister`.
    pub fn new(index: Arc<MutatingPolicyIndex>, lister: Arc<dyn Lister>) -> Self {
        Self { index, lister }
    }

    /// Evaluates one binding, changing `a.object`; an error is the policy's failure (its
    /// failure policy is the caller's to apply).
    async fn evaluate(
        &self,
        bound: &Bound<MutatingPolicy, MutatingBinding>,
        a: &mut Attributes,
        namespace_cache: &mut Option<Option<Value>>,
    ) -> Result<Outcome, String> {
        let (policy, binding) = (&bound.policy, &bound.binding);
        let Some(constraints) = &policy.constraints else {
            return Ok(Outcome::Skipped);
        };
        let (form, namespace) = {
            let mut request = Request {
                a,
                lister: self.lister.as_ref(),
                namespace: namespace_cache.take(),
                activation: None,
            };
            let matched = match request.matches(constraints).await? {
                Some(form) => match &binding.constraints {
                    Some(c) => request.matches(c).await?.map(|_| form),
                    None => Some(form),
                },
                None => None,
            };
            let namespace = match (&matched, namespaced(a)) {
                (Some(_), true) => request.namespace().await?.cloned(),
                _ => None,
            };
            *namespace_cache = request.namespace.take();
            match matched {
                Some(form) => (form, namespace.unwrap_or(Value::Null)),
                None => return Ok(Outcome::Skipped),
            }
        };
        let params = match (&policy.param_kind, &binding.param_ref) {
            (Some(kind), Some(reference)) => {
                match find_params(self.lister.as_ref(), kind, reference, a).await {
                    Ok(params) => params,
                    Err(NoParams::Allowed) => return Ok(Outcome::Skipped),
                    Err(NoParams::Error(why)) => return Err(why),
                }
            }
            // Without a paramRef, a policy with a paramKind sees `params` null.
            _ => vec![Value::Null],
        };
        let versioned = Versioned::of(a, form.clone())
            .await
            .map_err(|e| e.message)?;
        let mut object = versioned.object(a).cloned().unwrap_or(Value::Null);
        let before = object.clone();
        let mut activation = Activation::new();
        let bind = |activation: &mut Activation, name: &str, value: &Value| {
            activation.bind(name, value).map_err(|e| e.to_string())
        };
        bind(
            &mut activation,
            "oldObject",
            versioned.old_object(a).unwrap_or(&Value::Null),
        )?;
        bind(
            &mut activation,
            "request",
            &review::request_variable(a, &versioned),
        )?;
        bind(&mut activation, "namespaceObject", &namespace)?;
        let typed = Typed::for_kind(
            Schema::upstream(),
            &api_version(&form.group, &form.version),
            &form.kind,
        );
        let mut applied = false;
        for param in &params {
            bind(&mut activation, "params", param)?;
            bind(&mut activation, "object", &object)?;
            if !conditions_hold(&policy.conditions, &activation)? {
                continue;
            }
            applied = true;
            for mutation in &policy.mutations {
                bind_variables(&policy.variables, &mut activation);
                let program = mutation.program.as_ref().map_err(Clone::clone)?;
                let result = program
                    .run(&activation)
                    .and_then(|v| capstan_cel::to_json(&v))
                    .map_err(|e| {
                        format!(
                            "expression '{}' resulted in error: {e}",
                            mutation.expression
                        )
                    })?;
                object = match mutation.patch_type {
                    PatchType::ApplyConfiguration => apply_configuration(typed, object, &result)
                        .map_err(|e| format!("error applying patch: {e}"))?,
                    PatchType::JsonPatch => json_patch_result(object, result)?,
                };
                bind(&mut activation, "object", &object)?;
            }
        }
        if !applied {
            return Ok(Outcome::Skipped);
        }
        if object != before {
            a.object = Some(match &a.forms {
                Some(forms) if !versioned.is_stored() => forms
                    .back_from_form(object, &form)
                    .await
                    .map_err(|e| e.message)?,
                _ => object,
            });
        }
        Ok(Outcome::Applied)
    }
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// `config` merged into `object` as server-side apply merges (structs and maps by field,
/// associative lists and sets by item), refusing to touch atomic structs, maps and lists,
/// which an apply configuration would replace whole. Kinds the built-in schemas do not know
/// (custom resources) merge maps by key and replace everything else.
fn apply_configuration(
    typed: Option<Typed<'_>>,
    object: Value,
    config: &Value,
) -> Result<Value, String> {
    if !config.is_object() {
        return Err(format!(
            "invalid ApplyConfiguration: must evaluate to an Object, not {}",
            json_type(config)
        ));
    }
    let Some(typed) = typed else {
        return Ok(merge_untyped(object, config));
    };
    let mut path = String::new();
    check_granular(&typed, typed.root(), config, &mut path).map_err(|at| {
        format!("invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {at}")
    })?;
    typed
        .merge(typed.root(), Some(object), config)
        .map(|(merged, _)| merged)
        .map_err(|e| format!("invalid ApplyConfiguration: {e}"))
}

/// Fails with the path of the first struct, map or list of `config` that the schema makes
/// atomic (or does not know).
fn check_granular(
    typed: &Typed<'_>,
    ty: Ty<'_>,
    config: &Value,
    path: &mut String,
) -> Result<(), String> {
    let len = path.len();
    let result = match (ty, config) {
        (Ty::Leaf, Value::Object(_) | Value::Array(_)) => Err(path.clone()),
        (Ty::Struct(_) | Ty::Map(_), Value::Object(fields)) => {
            fields.iter().try_for_each(|(key, value)| {
                path.push('.');
                path.push_str(key);
                let r = check_granular(typed, typed.child(ty, key), value, path);
                path.truncate(len);
                r
            })
        }
        (Ty::List(field), Value::Array(items)) => {
            items.iter().enumerate().try_for_each(|(i, item)| {
                path.push_str(&format!("[{i}]"));
                let r = check_granular(typed, typed.item_type(field), item, path);
                path.truncate(len);
                r
            })
        }
        _ => Ok(()),
    };
    path.truncate(len);
    result
}

/// `config` over `object` without a schema: maps merge by key, everything else is replaced,
/// `null` removes.
fn merge_untyped(object: Value, config: &Value) -> Value {
    match (object, config) {
        (Value::Object(mut live), Value::Object(applied)) => {
            for (key, value) in applied {
                if value.is_null() {
                    live.remove(key);
                    continue;
                }
                let merged = merge_untyped(live.remove(key).unwrap_or(Value::Null), value);
                live.insert(key.clone(), merged);
            }
            Value::Object(live)
        }
        (_, config) => config.clone(),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// `object` with the JSON patch `operations` applied; a failed `test` (a different value, or
/// none) leaves it unchanged: it is how a patch is made conditional.
fn json_patch_result(mut object: Value, operations: Value) -> Result<Value, String> {
    if !operations.is_array() {
        return Err(format!(
            "JSON Patch: the expression must evaluate to a list of JSONPatch, not {}",
            json_type(&operations)
        ));
    }
    let patch: json_patch::Patch =
        serde_json::from_value(operations).map_err(|e| format!("JSON Patch: {e}"))?;
    match capstan_merge::json_patch::apply(&mut object, &patch.0) {
        Ok(()) => Ok(object),
        Err(e)
            if matches!(
                patch.0.get(e.operation),
                Some(json_patch::PatchOperation::Test(_))
            ) =>
        {
            Ok(object)
        }
        Err(e) => Err(format!("JSON Patch: {e}")),
    }
}

/// Upstream's refusal: the policy and binding named in the message, 403 with reason
/// `Invalid`, the message again as the one cause.
fn denied(a: &Attributes, policy: &str, binding: &str, why: &str) -> ApiError {
    let requested = a.requested();
    let message = format!("policy '{policy}' with binding '{binding}' denied request: {why}");
    let mut err = ApiError::forbidden_because(
        &GroupResource::new(requested.group.clone(), requested.resource.clone()),
        a.display_name(),
        "",
    );
    err.message = message.clone();
    err.reason = Reason::Invalid;
    err.status_code = Some(403);
    err.details = Some(Box::new(StatusDetails {
        name: Some(a.display_name().to_string()).filter(|n| !n.is_empty()),
        group: Some(requested.group).filter(|g| !g.is_empty()),
        kind: Some(requested.resource),
        causes: Some(vec![StatusCause {
            message: Some(message),
            ..Default::default()
        }]),
        ..Default::default()
    }));
    err
}

#[async_trait]
impl Plugin for MutatingAdmissionPolicies {
    fn name(&self) -> &'static str {
        PLUGIN
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        if operation == Operation::Delete || crate::matching::exempt(resource) {
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

    /// Every binding in name order, each seeing the object as the ones before left it. In
    /// the second round only the `IfNeeded` bindings whose output changed since are run.
    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        crate::wait_ready(self.index.wait_loaded(), a).await?;
        let snapshot = self.index.snapshot();
        let round = a.reinvocation.round;
        let mut namespace = None;
        for bound in snapshot.iter() {
            let key = format!("{PLUGIN}/{}", bound.binding.name);
            if round > 0 {
                // Reinvoked only when a later mutation changed what this binding produced.
                match a.reinvocation.watched.remove(&key) {
                    Some(left) if Some(&left) != a.object.as_ref() => {}
                    _ => continue,
                }
            }
            match self.evaluate(bound, a, &mut namespace).await {
                Ok(Outcome::Skipped) => {}
                Ok(Outcome::Applied) => {
                    if round == 0
                        && bound.policy.reinvoke
                        && let Some(object) = &a.object
                    {
                        a.reinvocation.watched.insert(key, object.clone());
                    }
                }
                Err(why) if bound.policy.fail_open => {
                    warn!(policy = %bound.policy.name, %why, "mutating admission policy failed; ignored (failurePolicy Ignore)");
                }
                Err(why) => {
                    return Err(denied(a, &bound.policy.name, &bound.binding.name, &why));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_typed() -> Option<Typed<'static>> {
        Typed::for_kind(Schema::upstream(), "v1", "Pod")
    }

    #[test]
    fn an_apply_configuration_merges_by_the_schema_and_leaves_atomics_alone() {
        let pod = json!({
            "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "app", "image": "nginx", "args": ["x"]}]},
        });
        let merged = apply_configuration(
            pod_typed(),
            pod.clone(),
            &json!({"metadata": {"labels": {"b": "2"}}, "spec": {"containers": [{"name": "app", "image": "nginx:2"}, {"name": "sidecar", "image": "envoy"}]}}),
        )
        .unwrap();
        assert_eq!(merged["metadata"]["labels"], json!({"a": "1", "b": "2"}));
        assert_eq!(
            merged["spec"]["containers"],
            json!([{"name": "app", "image": "nginx:2", "args": ["x"]}, {"name": "sidecar", "image": "envoy"}])
        );
        let refused = apply_configuration(
            pod_typed(),
            pod.clone(),
            &json!({"spec": {"containers": [{"name": "app", "args": ["y"]}]}}),
        )
        .unwrap_err();
        assert_eq!(
            refused,
            "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.containers[0].args"
        );
        assert!(apply_configuration(pod_typed(), pod, &json!([1])).is_err());
    }

    #[test]
    fn a_custom_object_merges_maps_and_replaces_lists() {
        let object = json!({"spec": {"size": 1, "tags": ["a"], "extra": {"k": "v"}}});
        let merged = apply_configuration(
            None,
            object,
            &json!({"spec": {"tags": ["b"], "extra": {"j": "w"}}}),
        )
        .unwrap();
        assert_eq!(
            merged,
            json!({"spec": {"size": 1, "tags": ["b"], "extra": {"k": "v", "j": "w"}}})
        );
    }

    #[test]
    fn a_failed_test_operation_leaves_the_object_unchanged() {
        let object = json!({"data": {"k": "v"}});
        let skipped = json_patch_result(
            object.clone(),
            json!([{"op": "replace", "path": "/data/k", "value": "new"}, {"op": "test", "path": "/data/k", "value": "nope"}]),
        )
        .unwrap();
        assert_eq!(skipped, object);
        let missing = json_patch_result(
            object.clone(),
            json!([{"op": "test", "path": "/data/color", "value": "red"}, {"op": "add", "path": "/data/n", "value": "1"}]),
        )
        .unwrap();
        assert_eq!(missing, object);
        let applied = json_patch_result(
            object.clone(),
            json!([{"op": "test", "path": "/data/k", "value": "v"}, {"op": "add", "path": "/data/n", "value": "1"}]),
        )
        .unwrap();
        assert_eq!(applied, json!({"data": {"k": "v", "n": "1"}}));
        assert!(
            json_patch_result(
                object,
                json!([{"op": "replace", "path": "/nothing/here", "value": 1}])
            )
            .unwrap_err()
            .starts_with("JSON Patch: ")
        );
    }
}
