//! Core `LimitRange`: per-namespace bounds on the resources of containers, pods and claims,
//! with the defaults containers get (the LimitRanger admission plugin applies them).

use std::collections::BTreeMap;

use capstan_meta::quantity::{self, Milli};
use capstan_meta::validation::qualified_name;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::core::v1::{LimitRange, LimitRangeItem};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::describe::Names;

/// The strategy of LimitRange.
#[derive(Debug, Default, Clone, Copy)]
pub struct LimitRangeStrategy;

type Quantities = BTreeMap<String, Quantity>;

/// Upstream's defaults of a Container item: the default limit is the maximum, the default
/// request the default limit, else the minimum.
fn default_item(item: &mut LimitRangeItem) {
    if item.type_ != "Container" {
        return;
    }
    let max = item.max.clone().unwrap_or_default();
    let default = item.default.get_or_insert_with(Default::default);
    for (k, v) in max {
        default.entry(k).or_insert(v);
    }
    let default = default.clone();
    let min = item.min.clone().unwrap_or_default();
    let request = item.default_request.get_or_insert_with(Default::default);
    for (k, v) in default.into_iter().chain(min) {
        request.entry(k).or_insert(v);
    }
    if item.default.as_ref().is_some_and(BTreeMap::is_empty) {
        item.default = None;
    }
    if item
        .default_request
        .as_ref()
        .is_some_and(BTreeMap::is_empty)
    {
        item.default_request = None;
    }
}

fn parsed(q: &Quantity) -> Option<Milli> {
    quantity::parse(&q.0)
}

/// `a` must not exceed `b` for every resource both name.
fn ordered(
    errs: &mut FieldErrors,
    path: &str,
    (a_name, a): (&str, Option<&Quantities>),
    (b_name, b): (&str, Option<&Quantities>),
) {
    let (Some(a), Some(b)) = (a, b) else {
        return;
    };
    for (resource, low) in a {
        let Some(high) = b.get(resource) else {
            continue;
        };
        if let (Some(l), Some(h)) = (parsed(low), parsed(high))
            && l > h
        {
            errs.push(FieldError::invalid(
                format!("{path}.{a_name}[{resource}]"),
                &low.0,
                format!(
                    "{} value {} is greater than {} value {}",
                    words(a_name),
                    low.0,
                    words(b_name),
                    high.0
                ),
            ));
        }
    }
}

fn words(field: &str) -> &'static str {
    match field {
        "min" => "min",
        "max" => "max",
        "default" => "default",
        _ => "default request",
    }
}

fn validate_item(errs: &mut FieldErrors, path: &str, item: &LimitRangeItem) {
    let kind = item.type_.as_str();
    match kind {
        "" => errs.push(FieldError::required(format!("{path}.type"), "")),
        "Pod" | "Container" | "PersistentVolumeClaim" => {}
        other if other.contains('/') && qualified_name(other).is_empty() => {}
        other => errs.push(FieldError::invalid(
            format!("{path}.type"),
            other,
            "must be a standard limit type or fully qualified",
        )),
    }
    let maps = [
        ("min", item.min.as_ref()),
        ("max", item.max.as_ref()),
        ("default", item.default.as_ref()),
        ("defaultRequest", item.default_request.as_ref()),
        (
            "maxLimitRequestRatio",
            item.max_limit_request_ratio.as_ref(),
        ),
    ];
    for (field, map) in maps {
        for (resource, q) in map.into_iter().flatten() {
            let at = format!("{path}.{field}[{resource}]");
            if !qualified_name(resource).is_empty() {
                errs.push(FieldError::invalid(
                    &at,
                    resource,
                    "must be a standard resource type or fully qualified",
                ));
            }
            match parsed(q) {
                None => errs.push(FieldError::invalid(&at, &q.0, quantity::QUANTITY_ERROR)),
                Some(m) if m.0 < 0 => errs.push(FieldError::invalid(
                    &at,
                    &q.0,
                    "must be greater than or equal to 0",
                )),
                Some(_) => {}
            }
        }
    }
    if kind == "Pod" {
        for (field, map) in [
            ("default", &item.default),
            ("defaultRequest", &item.default_request),
        ] {
            if map.as_ref().is_some_and(|m| !m.is_empty()) {
                errs.push(FieldError::forbidden(
                    format!("{path}.{field}"),
                    "may not be specified when `type` is 'Pod'",
                ));
            }
        }
    }
    if kind == "PersistentVolumeClaim" {
        let has = |m: &Option<Quantities>| m.as_ref().is_some_and(|m| m.contains_key("storage"));
        if !has(&item.min) && !has(&item.max) {
            errs.push(FieldError::required(
                format!("{path}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
    }
    let (min, max) = (item.min.as_ref(), item.max.as_ref());
    let (default, request) = (item.default.as_ref(), item.default_request.as_ref());
    ordered(errs, path, ("min", min), ("max", max));
    ordered(errs, path, ("min", min), ("default", default));
    ordered(errs, path, ("default", default), ("max", max));
    ordered(errs, path, ("min", min), ("defaultRequest", request));
    ordered(errs, path, ("defaultRequest", request), ("max", max));
    ordered(
        errs,
        path,
        ("defaultRequest", request),
        ("default", default),
    );
    for (resource, ratio) in item.max_limit_request_ratio.iter().flatten() {
        let Some(r) = parsed(ratio) else {
            continue;
        };
        if r < Milli(1000) {
            errs.push(FieldError::invalid(
                format!("{path}.maxLimitRequestRatio[{resource}]"),
                &ratio.0,
                format!("ratio {} is less than 1", ratio.0),
            ));
        }
    }
}

impl Strategy for LimitRangeStrategy {
    type Object = LimitRange;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "",
            kind: "LimitRange",
            resource: "limitranges",
            short_names: &["limits"],
            namespaced: true,
        }
        .v1()
    }

    fn default(&self, obj: &mut LimitRange) {
        for item in obj.spec.iter_mut().flat_map(|s| s.limits.iter_mut()) {
            default_item(item);
        }
    }

    fn validate(&self, obj: &LimitRange) -> FieldErrors {
        let mut errs = Vec::new();
        for (i, item) in obj.spec.iter().flat_map(|s| s.limits.iter()).enumerate() {
            validate_item(&mut errs, &format!("spec.limits[{i}]"), item);
        }
        errs
    }

    fn validate_update(&self, new: &LimitRange, _old: &LimitRange) -> FieldErrors {
        self.validate(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn range(limits: serde_json::Value) -> LimitRange {
        serde_json::from_value(
            json!({"metadata": {"name": "l", "namespace": "ns"}, "spec": {"limits": limits}}),
        )
        .unwrap()
    }

    #[test]
    fn container_items_default_their_limits_and_requests() {
        let mut r = range(
            json!([{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}, "default": {"memory": "1Gi"}}]),
        );
        LimitRangeStrategy.default(&mut r);
        let item = &r.spec.as_ref().unwrap().limits[0];
        let text = |m: &Option<Quantities>| -> BTreeMap<String, String> {
            m.iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.0.clone()))
                .collect()
        };
        assert_eq!(
            text(&item.default),
            BTreeMap::from([("cpu".into(), "2".into()), ("memory".into(), "1Gi".into())])
        );
        assert_eq!(
            text(&item.default_request),
            BTreeMap::from([("cpu".into(), "2".into()), ("memory".into(), "1Gi".into())])
        );
        assert!(
            LimitRangeStrategy.validate(&r).is_empty(),
            "{:?}",
            LimitRangeStrategy.validate(&r)
        );
    }

    #[test]
    fn bounds_must_be_ordered_and_pods_take_no_defaults() {
        let r = range(json!([
            {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}, "maxLimitRequestRatio": {"cpu": "500m"}},
            {"type": "Pod", "default": {"cpu": "1"}},
            {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}},
            {"type": "Thing"},
        ]));
        let errs = LimitRangeStrategy.validate(&r);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        for f in [
            "spec.limits[0].min[cpu]",
            "spec.limits[0].maxLimitRequestRatio[cpu]",
            "spec.limits[1].default",
            "spec.limits[2].limits",
            "spec.limits[3].type",
        ] {
            assert!(fields.contains(&f), "{f} not in {fields:?}");
        }
        let min = errs
            .iter()
            .find(|e| e.field == "spec.limits[0].min[cpu]")
            .unwrap();
        assert_eq!(min.detail, "min value 2 is greater than max value 1");
    }
}
