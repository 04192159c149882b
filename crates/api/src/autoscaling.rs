//! `autoscaling/v2` HorizontalPodAutoscalers, stored in the `v2` form as upstream stores them,
//! and `autoscaling/v1` served by converting to and from it. What `v1` cannot express (metrics
//! other than a CPU utilization target, current metrics, conditions, scaling behaviour) rides in
//! upstream's round-trip annotations, so an object read and written back through `v1` keeps
//! everything a `v2` client set.

use capstan_meta::columns::{Column, since};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy, quantity};
use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior, HorizontalPodAutoscalerStatus, MetricIdentifier, MetricSpec,
    MetricTarget, ResourceMetricSource,
};
use serde_json::{Map, Value, json};

use crate::describe::Names;

/// The CPU utilization an autoscaler without metrics targets.
pub const DEFAULT_CPU_UTILIZATION: i32 = 80;
/// Longest scaling policy period, in seconds.
const MAX_PERIOD_SECONDS: i32 = 1800;
/// Longest stabilization window, in seconds.
const MAX_STABILIZATION_WINDOW_SECONDS: i32 = 3600;

/// `v1`'s round-trip annotation for the metrics other than its CPU target.
pub const METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `v1`'s round-trip annotation for the current metrics.
pub const CURRENT_METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// `v1`'s round-trip annotation for the status conditions.
pub const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `v1`'s round-trip annotation for the scaling behaviour.
pub const BEHAVIOR_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";
const ROUND_TRIP: [&str; 4] = [
    METRICS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    CONDITIONS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
];

fn names() -> Names<'static> {
    Names {
        group: "autoscaling",
        kind: "HorizontalPodAutoscaler",
        resource: "horizontalpodautoscalers",
        short_names: &["hpa"],
        namespaced: true,
    }
}

fn descriptor_in(version: &str) -> ResourceDescriptor {
    let mut d = names().v1_in_all();
    d.version = version.into();
    d
}

/// The descriptor of `autoscaling/v1` HorizontalPodAutoscalers (served by conversion).
pub fn v1_descriptor() -> ResourceDescriptor {
    descriptor_in("v1")
}

/// The strategy of `autoscaling/v2` HorizontalPodAutoscalers: `status` subresource; at least
/// one replica (scale to zero is an alpha gate upstream), a CPU target of 80% when no metric is
/// given, and the default scale-up and scale-down rules filled into a behaviour that names
/// only some of them.
#[derive(Debug, Default, Clone, Copy)]
pub struct HorizontalPodAutoscalerStrategy;

fn default_scale_up() -> HPAScalingRules {
    HPAScalingRules {
        stabilization_window_seconds: Some(0),
        select_policy: Some("Max".into()),
        policies: Some(vec![
            HPAScalingPolicy {
                type_: "Pods".into(),
                value: 4,
                period_seconds: 15,
            },
            HPAScalingPolicy {
                type_: "Percent".into(),
                value: 100,
                period_seconds: 15,
            },
        ]),
        ..Default::default()
    }
}

fn default_scale_down() -> HPAScalingRules {
    HPAScalingRules {
        stabilization_window_seconds: None,
        select_policy: Some("Max".into()),
        policies: Some(vec![HPAScalingPolicy {
            type_: "Percent".into(),
            value: 100,
            period_seconds: 15,
        }]),
        ..Default::default()
    }
}

/// Fills what `rules` leaves out from `defaults` (all of it when there are no rules).
fn fill_rules(rules: Option<HPAScalingRules>, defaults: HPAScalingRules) -> HPAScalingRules {
    let Some(mut rules) = rules else {
        return defaults;
    };
    if rules.select_policy.is_none() {
        rules.select_policy = defaults.select_policy;
    }
    if rules.policies.is_none() {
        rules.policies = defaults.policies;
    }
    if rules.stabilization_window_seconds.is_none() {
        rules.stabilization_window_seconds = defaults.stabilization_window_seconds;
    }
    rules
}

fn cpu_utilization(percent: i32) -> MetricSpec {
    MetricSpec {
        type_: "Resource".into(),
        resource: Some(ResourceMetricSource {
            name: "cpu".into(),
            target: MetricTarget {
                type_: "Utilization".into(),
                average_utilization: Some(percent),
                ..Default::default()
            },
        }),
        ..Default::default()
    }
}

fn positive(q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity) -> bool {
    quantity::parse(&q.0).is_some_and(|m| m.0 > 0)
}

fn validate_reference(r: &CrossVersionObjectReference, path: &str, errs: &mut FieldErrors) {
    for (field, value) in [("kind", &r.kind), ("name", &r.name)] {
        if value.is_empty() {
            errs.push(FieldError::required(format!("{path}.{field}"), ""));
        }
        for why in crate::rbac::path_segment_name(value) {
            errs.push(FieldError::invalid(format!("{path}.{field}"), value, why));
        }
    }
}

fn validate_identifier(id: &MetricIdentifier, path: &str, errs: &mut FieldErrors) {
    if id.name.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a metric name",
        ));
    }
    for why in crate::rbac::path_segment_name(&id.name) {
        errs.push(FieldError::invalid(format!("{path}.name"), &id.name, why));
    }
}

fn validate_target(t: &MetricTarget, path: &str, errs: &mut FieldErrors) {
    if t.type_.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric target type",
        ));
    }
    if !["Utilization", "Value", "AverageValue"].contains(&t.type_.as_str()) {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            &t.type_,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for (field, q) in [("value", &t.value), ("averageValue", &t.average_value)] {
        if let Some(q) = q
            && !positive(q)
        {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                &q.0,
                "must be positive",
            ));
        }
    }
    if let Some(u) = t.average_utilization
        && u < 1
    {
        errs.push(FieldError::invalid_raw(
            format!("{path}.averageUtilization"),
            u.to_string(),
            "must be greater than 0",
        ));
    }
}

/// A Resource or ContainerResource target: a utilization or an average value, not both.
fn validate_resource_target(t: &MetricTarget, path: &str, errs: &mut FieldErrors) {
    validate_target(t, path, errs);
    if t.average_utilization.is_none() && t.average_value.is_none() {
        errs.push(FieldError::required(
            format!("{path}.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if t.average_utilization.is_some() && t.average_value.is_some() {
        errs.push(FieldError::forbidden(
            format!("{path}.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
}

const METRIC_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

fn validate_metric(m: &MetricSpec, path: &str, errs: &mut FieldErrors) {
    if m.type_.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric source type",
        ));
    }
    if !METRIC_TYPES.contains(&m.type_.as_str()) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            &m.type_,
            &METRIC_TYPES,
        ));
    }
    let mut present = Vec::new();
    if let Some(o) = &m.object {
        present.push("object");
        if present.len() == 1 {
            let p = format!("{path}.object");
            validate_reference(&o.described_object, &format!("{p}.describedObject"), errs);
            validate_identifier(&o.metric, &format!("{p}.metric"), errs);
            validate_target(&o.target, &format!("{p}.target"), errs);
            if o.target.value.is_none() && o.target.average_value.is_none() {
                errs.push(FieldError::required(
                    format!("{p}.target.averageValue"),
                    "must set either a target value or averageValue",
                ));
            }
        }
    }
    if let Some(e) = &m.external {
        present.push("external");
        if present.len() == 1 {
            let p = format!("{path}.external");
            validate_identifier(&e.metric, &format!("{p}.metric"), errs);
            validate_target(&e.target, &format!("{p}.target"), errs);
            if e.target.value.is_none() && e.target.average_value.is_none() {
                errs.push(FieldError::required(
                    format!("{p}.target.averageValue"),
                    "must set either a target value for metric or a per-pod target",
                ));
            }
            if e.target.value.is_some() && e.target.average_value.is_some() {
                errs.push(FieldError::forbidden(
                    format!("{p}.target.value"),
                    "may not set both a target value for metric and a per-pod target",
                ));
            }
        }
    }
    if let Some(pods) = &m.pods {
        present.push("pods");
        if present.len() == 1 {
            let p = format!("{path}.pods");
            validate_identifier(&pods.metric, &format!("{p}.metric"), errs);
            validate_target(&pods.target, &format!("{p}.target"), errs);
            if pods.target.average_value.is_none() {
                errs.push(FieldError::required(
                    format!("{p}.target.averageValue"),
                    "must specify a positive target averageValue",
                ));
            }
        }
    }
    if let Some(r) = &m.resource {
        present.push("resource");
        if present.len() == 1 {
            let p = format!("{path}.resource");
            if r.name.is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.name"),
                    "must specify a resource name",
                ));
            }
            validate_resource_target(&r.target, &format!("{p}.target"), errs);
        }
    }
    if let Some(c) = &m.container_resource {
        present.push("containerResource");
        if present.len() == 1 {
            let p = format!("{path}.containerResource");
            if c.name.is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.name"),
                    "must specify a resource name",
                ));
            }
            if c.container.is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.container"),
                    "must specify a container",
                ));
            } else {
                for why in capstan_meta::validation::dns1123_label(&c.container) {
                    errs.push(FieldError::invalid(
                        format!("{p}.container"),
                        &c.container,
                        why,
                    ));
                }
            }
            validate_resource_target(&c.target, &format!("{p}.target"), errs);
        }
    }
    let expected = match m.type_.as_str() {
        "Object" => Some("object"),
        "Pods" => Some("pods"),
        "Resource" => Some("resource"),
        "External" => Some("external"),
        "ContainerResource" => Some("containerResource"),
        _ => None,
    };
    if let Some(field) = expected
        && !present.contains(&field)
    {
        errs.push(FieldError::required(
            format!("{path}.{field}"),
            "must populate information for the given metric source",
        ));
    }
    if present.len() > 1 {
        for field in present.into_iter().filter(|f| Some(*f) != expected) {
            errs.push(FieldError::forbidden(
                format!("{path}.{field}"),
                "must populate the given metric source only",
            ));
        }
    }
}

fn validate_rules(rules: &HPAScalingRules, path: &str, errs: &mut FieldErrors) {
    // Upstream's HPAConfigurableTolerance (beta and on by default in v1.36).
    if let Some(tolerance) = &rules.tolerance
        && quantity::parse(&tolerance.0).is_some_and(|q| q.0 < 0)
    {
        errs.push(FieldError::invalid(
            format!("{path}.tolerance"),
            &tolerance.0,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(w) = rules.stabilization_window_seconds {
        if w < 0 {
            errs.push(FieldError::invalid_raw(
                format!("{path}.stabilizationWindowSeconds"),
                w.to_string(),
                "must be greater than or equal to zero",
            ));
        }
        if w > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid_raw(
                format!("{path}.stabilizationWindowSeconds"),
                w.to_string(),
                format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(select) = &rules.select_policy
        && !["Disabled", "Max", "Min"].contains(&select.as_str())
    {
        errs.push(FieldError::not_supported(
            format!("{path}.selectPolicy"),
            select,
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies = rules.policies.as_deref().unwrap_or_default();
    if policies.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.iter().enumerate() {
        let p = format!("{path}.policies[{i}]");
        if !["Percent", "Pods"].contains(&policy.type_.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{p}.type"),
                &policy.type_,
                &["Percent", "Pods"],
            ));
        }
        if policy.value <= 0 {
            errs.push(FieldError::invalid_raw(
                format!("{p}.value"),
                policy.value.to_string(),
                "must be greater than zero",
            ));
        }
        if policy.period_seconds <= 0 {
            errs.push(FieldError::invalid_raw(
                format!("{p}.periodSeconds"),
                policy.period_seconds.to_string(),
                "must be greater than zero",
            ));
        }
        if policy.period_seconds > MAX_PERIOD_SECONDS {
            errs.push(FieldError::invalid_raw(
                format!("{p}.periodSeconds"),
                policy.period_seconds.to_string(),
                format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
}

/// The spec checks; `min_replicas_floor` is 0 on an update of an autoscaler already at 0.
fn validate_spec(hpa: &HorizontalPodAutoscaler, min_replicas_floor: i32) -> FieldErrors {
    let mut errs = Vec::new();
    let spec = &hpa.spec;
    if let Some(min) = spec.min_replicas
        && min < min_replicas_floor
    {
        errs.push(FieldError::invalid_raw(
            "spec.minReplicas",
            min.to_string(),
            format!("must be greater than or equal to {min_replicas_floor}"),
        ));
    }
    if spec.max_replicas < 1 {
        errs.push(FieldError::invalid_raw(
            "spec.maxReplicas",
            spec.max_replicas.to_string(),
            "must be greater than 0",
        ));
    }
    if let Some(min) = spec.min_replicas
        && spec.max_replicas < min
    {
        errs.push(FieldError::invalid_raw(
            "spec.maxReplicas",
            spec.max_replicas.to_string(),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    validate_reference(&spec.scale_target_ref, "spec.scaleTargetRef", &mut errs);
    let metrics = spec.metrics.as_deref().unwrap_or_default();
    for (i, m) in metrics.iter().enumerate() {
        validate_metric(m, &format!("spec.metrics[{i}]"), &mut errs);
    }
    if spec.min_replicas == Some(0)
        && !metrics
            .iter()
            .any(|m| m.type_ == "Object" || m.type_ == "External")
    {
        errs.push(FieldError::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    if let Some(b) = &spec.behavior {
        if let Some(up) = &b.scale_up {
            validate_rules(up, "spec.behavior.scaleUp", &mut errs);
        }
        if let Some(down) = &b.scale_down {
            validate_rules(down, "spec.behavior.scaleDown", &mut errs);
        }
    }
    errs
}

impl Strategy for HorizontalPodAutoscalerStrategy {
    type Object = HorizontalPodAutoscaler;

    fn descriptor(&self) -> ResourceDescriptor {
        descriptor_in("v2")
    }

    fn default(&self, hpa: &mut HorizontalPodAutoscaler) {
        let spec = &mut hpa.spec;
        spec.min_replicas.get_or_insert(1);
        if spec.metrics.as_ref().is_none_or(Vec::is_empty) {
            spec.metrics = Some(vec![cpu_utilization(DEFAULT_CPU_UTILIZATION)]);
        }
        if let Some(b) = spec.behavior.take() {
            spec.behavior = Some(HorizontalPodAutoscalerBehavior {
                scale_up: Some(fill_rules(b.scale_up, default_scale_up())),
                scale_down: Some(fill_rules(b.scale_down, default_scale_down())),
            });
        }
    }

    fn prepare_for_create(&self, hpa: &mut HorizontalPodAutoscaler) {
        hpa.status = Some(HorizontalPodAutoscalerStatus::default());
    }

    fn validate(&self, hpa: &HorizontalPodAutoscaler) -> FieldErrors {
        validate_spec(hpa, 1)
    }

    fn validate_update(
        &self,
        new: &HorizontalPodAutoscaler,
        old: &HorizontalPodAutoscaler,
    ) -> FieldErrors {
        let at_zero = old.spec.min_replicas == Some(0);
        validate_spec(new, if at_zero { 0 } else { 1 })
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut HorizontalPodAutoscaler, from: &HorizontalPodAutoscaler) {
        to.status = from.status.clone();
    }
}

// ---------------------------------------------------------------------------------------
// Conversion between the two served versions (JSON to JSON, as the converted storage needs).

/// Copies the fields `keys` of `from` that are present into `to`.
fn copy_fields(to: &mut Map<String, Value>, from: &Value, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key).filter(|v| !v.is_null()) {
            to.insert((*key).into(), v.clone());
        }
    }
}

fn insert_some(map: &mut Map<String, Value>, key: &str, value: Option<&Value>) {
    if let Some(v) = value.filter(|v| !v.is_null()) {
        map.insert(key.into(), v.clone());
    }
}

/// Which half of an autoscaler a metric comes from: the spec's targets or the status's
/// current values. Their `v1` annotation forms differ only in names (`targetValue`,
/// `currentValue`) and in which values are required.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Spec,
    Status,
}

impl Side {
    /// The `v2` field holding the values, which is also the prefix of `v1`'s names.
    fn key(self) -> &'static str {
        match self {
            Self::Spec => "target",
            Self::Status => "current",
        }
    }

    /// `v1`'s name of a value: `Value` → `targetValue` or `currentValue`.
    fn v1(self, suffix: &str) -> String {
        format!("{}{suffix}", self.key())
    }
}

fn metric_identifier(name: Option<&Value>, selector: Option<&Value>) -> Value {
    let mut id = Map::new();
    id.insert("name".into(), name.cloned().unwrap_or(json!("")));
    insert_some(&mut id, "selector", selector);
    id.into()
}

/// A `v2` metric (spec or status) in `v1`'s annotation form.
fn metric_to_v1(m: &Value, side: Side) -> Value {
    let zero = json!("0");
    let values = |source: &Value| source.get(side.key()).cloned().unwrap_or_default();
    // A value `v1` always carries (its Go field is not a pointer) shows as "0" when unset.
    let required = |out: &mut Map<String, Value>, name: String, value: Option<&Value>| {
        out.insert(
            name,
            value.filter(|v| !v.is_null()).unwrap_or(&zero).clone(),
        );
    };
    let mut out = Map::new();
    out.insert("type".into(), m["type"].clone());
    if let Some(o) = m.get("object") {
        let v = values(o);
        let mut src = Map::new();
        insert_some(&mut src, "target", o.get("describedObject"));
        insert_some(&mut src, "metricName", o.pointer("/metric/name"));
        required(&mut src, side.v1("Value"), v.get("value"));
        insert_some(&mut src, "selector", o.pointer("/metric/selector"));
        insert_some(&mut src, "averageValue", v.get("averageValue"));
        out.insert("object".into(), src.into());
    }
    if let Some(p) = m.get("pods") {
        let mut src = Map::new();
        insert_some(&mut src, "metricName", p.pointer("/metric/name"));
        required(
            &mut src,
            side.v1("AverageValue"),
            values(p).get("averageValue"),
        );
        insert_some(&mut src, "selector", p.pointer("/metric/selector"));
        out.insert("pods".into(), src.into());
    }
    for key in ["resource", "containerResource"] {
        if let Some(r) = m.get(key) {
            let v = values(r);
            let mut src = Map::new();
            copy_fields(&mut src, r, &["name", "container"]);
            insert_some(
                &mut src,
                &side.v1("AverageUtilization"),
                v.get("averageUtilization"),
            );
            match side {
                Side::Spec => {
                    insert_some(&mut src, &side.v1("AverageValue"), v.get("averageValue"))
                }
                Side::Status => required(&mut src, side.v1("AverageValue"), v.get("averageValue")),
            }
            out.insert(key.into(), src.into());
        }
    }
    if let Some(e) = m.get("external") {
        let v = values(e);
        let mut src = Map::new();
        insert_some(&mut src, "metricName", e.pointer("/metric/name"));
        insert_some(&mut src, "metricSelector", e.pointer("/metric/selector"));
        match side {
            Side::Spec => insert_some(&mut src, &side.v1("Value"), v.get("value")),
            Side::Status => required(&mut src, side.v1("Value"), v.get("value")),
        }
        insert_some(&mut src, &side.v1("AverageValue"), v.get("averageValue"));
        out.insert("external".into(), src.into());
    }
    out.into()
}

/// A metric (spec or status) from `v1`'s annotation form in the `v2` form. A spec's target
/// gets the type its values imply (`Utilization`, `Value` or `AverageValue`).
fn metric_from_v1(m: &Value, side: Side) -> Value {
    let values = |pairs: &[(&str, Option<&Value>)], kind: &str| {
        let mut v = Map::new();
        if side == Side::Spec {
            v.insert("type".into(), kind.into());
        }
        for (key, value) in pairs {
            insert_some(&mut v, key, *value);
        }
        Value::Object(v)
    };
    let present = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
    let mut out = Map::new();
    out.insert("type".into(), m["type"].clone());
    if let Some(o) = m.get("object") {
        let average = o.get("averageValue");
        let kind = if present(average) {
            "AverageValue"
        } else {
            "Value"
        };
        let mut src = Map::new();
        insert_some(&mut src, "describedObject", o.get("target"));
        src.insert(
            "metric".into(),
            metric_identifier(o.get("metricName"), o.get("selector")),
        );
        let pairs = [
            ("value", o.get(side.v1("Value"))),
            ("averageValue", average),
        ];
        src.insert(side.key().into(), values(&pairs, kind));
        out.insert("object".into(), src.into());
    }
    if let Some(p) = m.get("pods") {
        let mut src = Map::new();
        src.insert(
            "metric".into(),
            metric_identifier(p.get("metricName"), p.get("selector")),
        );
        let pairs = [("averageValue", p.get(side.v1("AverageValue")))];
        src.insert(side.key().into(), values(&pairs, "AverageValue"));
        out.insert("pods".into(), src.into());
    }
    for key in ["resource", "containerResource"] {
        if let Some(r) = m.get(key) {
            let utilization = r.get(side.v1("AverageUtilization"));
            let kind = if present(utilization) {
                "Utilization"
            } else {
                "AverageValue"
            };
            let mut src = Map::new();
            copy_fields(&mut src, r, &["name", "container"]);
            let pairs = [
                ("averageUtilization", utilization),
                ("averageValue", r.get(side.v1("AverageValue"))),
            ];
            src.insert(side.key().into(), values(&pairs, kind));
            out.insert(key.into(), src.into());
        }
    }
    if let Some(e) = m.get("external") {
        let value = e.get(side.v1("Value"));
        let kind = if present(value) {
            "Value"
        } else {
            "AverageValue"
        };
        let mut src = Map::new();
        src.insert(
            "metric".into(),
            metric_identifier(e.get("metricName"), e.get("metricSelector")),
        );
        let pairs = [
            ("value", value),
            ("averageValue", e.get(side.v1("AverageValue"))),
        ];
        src.insert(side.key().into(), values(&pairs, kind));
        out.insert("external".into(), src.into());
    }
    out.into()
}

/// Renames every key of `doc` with `rename` (the behaviour annotation holds upstream's
/// internal type, whose JSON keys are its Go field names: `ScaleUp`, `PeriodSeconds`).
fn rename_keys(doc: &Value, rename: fn(&str) -> String) -> Value {
    match doc {
        Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (rename(k), rename_keys(v, rename)))
            .collect::<Map<_, _>>()
            .into(),
        Value::Array(items) => items.iter().map(|v| rename_keys(v, rename)).collect(),
        other => other.clone(),
    }
}

fn with_first_char(key: &str, upper: bool) -> String {
    let mut chars = key.chars();
    match chars.next() {
        Some(c) if upper => c.to_uppercase().chain(chars).collect(),
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn is_cpu_utilization(m: &Value) -> bool {
    m["type"] == "Resource"
        && m.pointer("/resource/name") == Some(&json!("cpu"))
        && m.pointer("/resource/target/averageUtilization")
            .is_some_and(|v| !v.is_null())
}

fn annotations_mut(doc: &mut Value) -> &mut Map<String, Value> {
    let meta = doc["metadata"]
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    doc["metadata"] = meta.into();
    let annotations = &mut doc["metadata"]["annotations"];
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    annotations.as_object_mut().expect("just made an object")
}

/// Removes the round-trip annotations of `doc`, returning them; an annotation map left empty
/// is removed.
fn take_round_trip(doc: &mut Value) -> Map<String, Value> {
    let annotations = annotations_mut(doc);
    let taken = ROUND_TRIP
        .iter()
        .filter_map(|k| annotations.remove(*k).map(|v| ((*k).to_string(), v)))
        .collect();
    if annotations.is_empty()
        && let Some(meta) = doc["metadata"].as_object_mut()
    {
        meta.remove("annotations");
    }
    taken
}

fn json_annotation(annotations: &Map<String, Value>, key: &str) -> Option<Value> {
    serde_json::from_str(annotations.get(key)?.as_str()?).ok()
}

/// A stored `autoscaling/v2` HorizontalPodAutoscaler as `autoscaling/v1` serves it.
pub fn to_v1(mut doc: Value) -> Value {
    take_round_trip(&mut doc);
    let spec = doc["spec"].take();
    let status = doc["status"].take();
    let metrics = spec["metrics"].as_array().cloned().unwrap_or_default();
    let mut v1_spec = Map::new();
    copy_fields(
        &mut v1_spec,
        &spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    if let Some(cpu) = metrics.iter().find(|m| is_cpu_utilization(m)) {
        v1_spec.insert(
            "targetCPUUtilizationPercentage".into(),
            cpu["resource"]["target"]["averageUtilization"].clone(),
        );
    }
    let others: Vec<Value> = metrics
        .iter()
        .filter(|m| !is_cpu_utilization(m))
        .map(|m| metric_to_v1(m, Side::Spec))
        .collect();
    let current = status["currentMetrics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let mut v1_status = Map::new();
    copy_fields(
        &mut v1_status,
        &status,
        &["observedGeneration", "lastScaleTime"],
    );
    for key in ["currentReplicas", "desiredReplicas"] {
        v1_status.insert(key.into(), status.get(key).cloned().unwrap_or(json!(0)));
    }
    if let Some(cpu) = current.iter().find(|m| {
        m["type"] == "Resource"
            && m.pointer("/resource/name") == Some(&json!("cpu"))
            && m.pointer("/resource/current/averageUtilization")
                .is_some_and(|v| !v.is_null())
    }) {
        v1_status.insert(
            "currentCPUUtilizationPercentage".into(),
            cpu["resource"]["current"]["averageUtilization"].clone(),
        );
    }
    let mut extra = Vec::new();
    if !others.is_empty() {
        extra.push((METRICS_ANNOTATION, Value::Array(others)));
    }
    if !current.is_empty() {
        let current: Vec<Value> = current
            .iter()
            .map(|m| metric_to_v1(m, Side::Status))
            .collect();
        extra.push((CURRENT_METRICS_ANNOTATION, Value::Array(current)));
    }
    if let Some(b) = spec.get("behavior").filter(|b| !b.is_null()) {
        extra.push((
            BEHAVIOR_ANNOTATION,
            rename_keys(b, |k| with_first_char(k, true)),
        ));
    }
    if !conditions.is_empty() {
        extra.push((CONDITIONS_ANNOTATION, Value::Array(conditions)));
    }
    if !extra.is_empty() {
        let annotations = annotations_mut(&mut doc);
        for (key, value) in extra {
            annotations.insert(key.into(), value.to_string().into());
        }
    }
    doc["apiVersion"] = "autoscaling/v1".into();
    doc["spec"] = v1_spec.into();
    doc["status"] = v1_status.into();
    doc
}

/// An `autoscaling/v1` HorizontalPodAutoscaler in the stored `autoscaling/v2` form.
pub fn to_v2(mut doc: Value) -> Value {
    let round_trip = take_round_trip(&mut doc);
    let spec = doc["spec"].take();
    let status = doc["status"].take();
    let mut v2_spec = Map::new();
    copy_fields(
        &mut v2_spec,
        &spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    let mut metrics: Vec<Value> = json_annotation(&round_trip, METRICS_ANNOTATION)
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|m| metric_from_v1(m, Side::Spec))
        .collect();
    if let Some(percent) = spec
        .get("targetCPUUtilizationPercentage")
        .and_then(Value::as_i64)
    {
        metrics.push(serde_json::to_value(cpu_utilization(percent as i32)).unwrap_or_default());
    }
    if metrics.is_empty() {
        metrics.push(
            serde_json::to_value(cpu_utilization(DEFAULT_CPU_UTILIZATION)).unwrap_or_default(),
        );
    }
    v2_spec.insert("metrics".into(), metrics.into());
    if let Some(b) = json_annotation(&round_trip, BEHAVIOR_ANNOTATION).filter(|b| {
        b.as_object()
            .is_some_and(|m| m.values().any(|v| !v.is_null()))
    }) {
        v2_spec.insert(
            "behavior".into(),
            rename_keys(&b, |k| with_first_char(k, false)),
        );
    }
    let mut v2_status = Map::new();
    copy_fields(
        &mut v2_status,
        &status,
        &[
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ],
    );
    let current = match json_annotation(&round_trip, CURRENT_METRICS_ANNOTATION)
        .and_then(|v| v.as_array().cloned())
    {
        Some(list) => list
            .iter()
            .map(|m| metric_from_v1(m, Side::Status))
            .collect(),
        None => match status
            .get("currentCPUUtilizationPercentage")
            .filter(|v| !v.is_null())
        {
            Some(percent) => vec![json!({"type": "Resource", "resource": {
                "name": "cpu", "current": {"averageUtilization": percent}}})],
            None => Vec::new(),
        },
    };
    if !current.is_empty() {
        v2_status.insert("currentMetrics".into(), current.into());
    }
    if let Some(conditions) = json_annotation(&round_trip, CONDITIONS_ANNOTATION) {
        v2_status.insert("conditions".into(), conditions);
    }
    doc["apiVersion"] = "autoscaling/v2".into();
    doc["spec"] = v2_spec.into();
    if status.is_null() {
        doc.as_object_mut().map(|m| m.remove("status"));
    } else {
        doc["status"] = v2_status.into();
    }
    doc
}

// ---------------------------------------------------------------------------------------
// Table columns.

/// One metric as `kubectl get hpa` shows it: `cpu: 45%/80%`, `<unknown>/10 (avg)`.
fn format_metric(spec: &Value, status: Option<&Value>) -> String {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let unknown = || "<unknown>".to_string();
    match spec["type"].as_str() {
        Some(kind @ ("External" | "Object")) => {
            let key = if kind == "External" {
                "external"
            } else {
                "object"
            };
            let s = &spec[key]["target"];
            match text(s.get("averageValue")) {
                Some(avg) => {
                    let current = text(
                        status.and_then(|st| st.pointer(&format!("/{key}/current/averageValue"))),
                    )
                    .unwrap_or_else(unknown);
                    format!("{current}/{avg} (avg)")
                }
                None => {
                    let current =
                        text(status.and_then(|st| st.pointer(&format!("/{key}/current/value"))))
                            .unwrap_or_else(unknown);
                    format!("{current}/{}", text(s.get("value")).unwrap_or_default())
                }
            }
        }
        Some("Pods") => {
            let current = text(status.and_then(|st| st.pointer("/pods/current/averageValue")))
                .unwrap_or_else(unknown);
            let target = text(spec.pointer("/pods/target/averageValue")).unwrap_or_default();
            format!("{current}/{target}")
        }
        Some(kind @ ("Resource" | "ContainerResource")) => {
            let key = if kind == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let source = &spec[key];
            let name = source["name"].as_str().unwrap_or_default();
            let current = status.and_then(|st| st.get(key)).map(|c| &c["current"]);
            match text(source.pointer("/target/averageValue")) {
                Some(avg) => {
                    let now =
                        text(current.and_then(|c| c.get("averageValue"))).unwrap_or_else(unknown);
                    format!("{name}: {now}/{avg}")
                }
                None => {
                    let now = current
                        .and_then(|c| c["averageUtilization"].as_i64())
                        .map_or_else(unknown, |u| format!("{u}%"));
                    let target = source
                        .pointer("/target/averageUtilization")
                        .and_then(Value::as_i64)
                        .map_or_else(|| "<auto>".to_string(), |u| format!("{u}%"));
                    format!("{name}: {now}/{target}")
                }
            }
        }
        _ => "<unknown type>".into(),
    }
}

/// The TARGETS cell: the first two metrics, and how many more there are.
fn format_metrics(hpa: &Value) -> String {
    let specs = hpa.pointer("/spec/metrics").and_then(Value::as_array);
    let statuses = hpa
        .pointer("/status/currentMetrics")
        .and_then(Value::as_array);
    let Some(specs) = specs.filter(|s| !s.is_empty()) else {
        return "<none>".into();
    };
    let shown: Vec<String> = specs
        .iter()
        .take(2)
        .enumerate()
        .map(|(i, s)| format_metric(s, statuses.and_then(|st| st.get(i))))
        .collect();
    let more = specs.len().saturating_sub(2);
    if more > 0 {
        format!("{} + {more} more...", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The object in the `v2` form, whichever version it is served in.
fn as_v2(o: &Value) -> std::borrow::Cow<'_, Value> {
    if o["apiVersion"] == "autoscaling/v1" {
        std::borrow::Cow::Owned(to_v2(o.clone()))
    } else {
        std::borrow::Cow::Borrowed(o)
    }
}

/// HorizontalPodAutoscalers: the target, its metrics, the replica bounds and count.
pub fn columns() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Reference",
            "string",
            "The scaled object, as kind/name.",
            |o, _| {
                let r = &o["spec"]["scaleTargetRef"];
                let kind = r["kind"].as_str().unwrap_or_default();
                let name = r["name"].as_str().unwrap_or_default();
                Value::String(format!("{kind}/{name}"))
            },
        ),
        Column::new(
            "Targets",
            "string",
            "Current and target values of the metrics.",
            |o, _| Value::String(format_metrics(&as_v2(o))),
        ),
        Column::new("MinPods", "string", "The fewest replicas.", |o, _| match o
            .pointer("/spec/minReplicas")
            .and_then(Value::as_i64)
        {
            Some(n) => Value::String(n.to_string()),
            None => Value::String("<unset>".into()),
        }),
        Column::new("MaxPods", "integer", "The most replicas.", |o, _| {
            o.pointer("/spec/maxReplicas").cloned().unwrap_or(json!(0))
        }),
        Column::new("Replicas", "integer", "The current replicas.", |o, _| {
            o.pointer("/status/currentReplicas")
                .cloned()
                .unwrap_or(json!(0))
        }),
        Column::new(
            "Age",
            "string",
            "Time since the autoscaler was created.",
            |o, now| Value::String(since(o.pointer("/metadata/creationTimestamp"), now)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(json: Value) -> HorizontalPodAutoscaler {
        serde_json::from_value(json).unwrap()
    }

    fn defaulted(json: Value) -> HorizontalPodAutoscaler {
        let mut hpa = v2(json);
        HorizontalPodAutoscalerStrategy.default(&mut hpa);
        hpa
    }

    #[test]
    fn defaults_one_replica_a_cpu_target_and_the_missing_rules() {
        let hpa = defaulted(json!({"metadata": {"name": "a"}, "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}));
        let spec = hpa.spec;
        assert_eq!(spec.min_replicas, Some(1));
        let metrics = spec.metrics.unwrap();
        let target = &metrics[0].resource.as_ref().unwrap().target;
        assert_eq!(target.average_utilization, Some(80));
        let b = spec.behavior.unwrap();
        let down = b.scale_down.unwrap();
        assert_eq!(down.stabilization_window_seconds, Some(60));
        assert_eq!(down.select_policy.as_deref(), Some("Max"));
        assert_eq!(down.policies.unwrap()[0].type_, "Percent");
        assert_eq!(b.scale_up.unwrap().policies.unwrap().len(), 2);
    }

    fn messages(errs: FieldErrors) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    #[test]
    fn upstream_messages_for_bad_specs() {
        let hpa = defaulted(json!({"metadata": {"name": "a"}, "spec": {
            "scaleTargetRef": {"kind": "", "name": "a/b"}, "minReplicas": 5, "maxReplicas": 2,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 0, "averageValue": "1"}}},
                {"type": "Pods", "resource": {"name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "1Mi"}}}],
            "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 1801}]}}}}));
        let got = messages(HorizontalPodAutoscalerStrategy.validate(&hpa));
        let want = [
            "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
            "spec.scaleTargetRef.kind: Required value",
            "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
            "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
            "spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization",
            "spec.metrics[1].pods: Required value: must populate information for the given metric source",
            "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
            "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn zero_min_replicas_needs_an_object_or_external_metric() {
        let hpa = defaulted(json!({"metadata": {"name": "a"}, "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 0, "maxReplicas": 2}}));
        let got = messages(HorizontalPodAutoscalerStrategy.validate(&hpa));
        assert_eq!(
            got,
            [
                "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
                "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
            ]
        );
        // An autoscaler already at zero may stay there.
        let got = messages(HorizontalPodAutoscalerStrategy.validate_update(&hpa, &hpa));
        assert_eq!(got.len(), 1, "{got:?}");
    }

    #[test]
    fn v2_round_trips_through_v1_with_its_annotations() {
        let stored = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "a", "namespace": "default", "annotations": {"keep": "me"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 9,
                "metrics": [
                    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30, "selectPolicy": "Min",
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}},
            "status": {"currentReplicas": 3, "desiredReplicas": 4,
                "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 45, "averageValue": "200m"}}}],
                "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}]}});
        let v1 = to_v1(stored.clone());
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 45);
        let annotations = &v1["metadata"]["annotations"];
        assert_eq!(annotations["keep"], "me");
        let metrics: Value =
            serde_json::from_str(annotations[METRICS_ANNOTATION].as_str().unwrap()).unwrap();
        assert_eq!(
            metrics,
            json!([{"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}}])
        );
        let behavior: Value =
            serde_json::from_str(annotations[BEHAVIOR_ANNOTATION].as_str().unwrap()).unwrap();
        assert_eq!(behavior["ScaleDown"]["Policies"][0]["PeriodSeconds"], 60);
        let back = to_v2(v1);
        assert_eq!(back["spec"], stored["spec"]);
        assert_eq!(back["status"], stored["status"]);
        assert_eq!(back["metadata"], stored["metadata"]);
    }

    #[test]
    fn every_metric_source_round_trips_through_v1() {
        let stored = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "a"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 9,
                "metrics": [
                    {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "i"},
                        "metric": {"name": "rps", "selector": {"matchLabels": {"a": "b"}}},
                        "target": {"type": "Value", "value": "10"}}},
                    {"type": "External", "external": {"metric": {"name": "queue"},
                        "target": {"type": "AverageValue", "averageValue": "30"}}},
                    {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app",
                        "target": {"type": "AverageValue", "averageValue": "1Gi"}}}]},
            "status": {"currentReplicas": 1, "desiredReplicas": 1, "currentMetrics": [
                {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "i"},
                    "metric": {"name": "rps"}, "current": {"value": "7"}}},
                {"type": "External", "external": {"metric": {"name": "queue"},
                    "current": {"value": "3", "averageValue": "1"}}},
                {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "5"}}},
                {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app",
                    "current": {"averageValue": "512Mi"}}}]}});
        let v1 = to_v1(stored.clone());
        let metrics: Value = serde_json::from_str(
            v1["metadata"]["annotations"][METRICS_ANNOTATION]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            metrics[0]["object"],
            json!({"target": {"kind": "Ingress", "name": "i"}, "metricName": "rps",
                "targetValue": "10", "selector": {"matchLabels": {"a": "b"}}})
        );
        let back = to_v2(v1);
        assert_eq!(back["spec"], stored["spec"]);
        assert_eq!(back["status"], stored["status"]);
    }

    #[test]
    fn a_v1_object_without_a_cpu_target_targets_80_percent() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "a"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}});
        let v2 = to_v2(v1);
        assert_eq!(
            v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert!(v2.get("status").is_none());
        assert!(v2["metadata"].get("annotations").is_none());
    }

    #[test]
    fn targets_show_current_and_target_values() {
        let hpa = json!({"spec": {"metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
            {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "AverageValue", "averageValue": "30"}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}]},
            "status": {"currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 45}}}]}});
        assert_eq!(
            format_metrics(&hpa),
            "cpu: 45%/80%, <unknown>/30 (avg) + 1 more..."
        );
    }
}
