//! `resource.k8s.io/v1`: Dynamic Resource Allocation. DeviceClasses (what kind of device, by
//! CEL selectors), ResourceClaims (a request for devices, allocated by the scheduler in its
//! `status`), ResourceClaimTemplates (a claim per pod) and ResourceSlices (the devices a
//! driver publishes, per node or for a set of nodes).
//!
//! Validation covers what upstream checks on the shape of each object: names, required and
//! exclusive fields, list limits, CEL selectors compiling, immutable specs. What the CEL
//! type checker of upstream adds (an expression's result type, its cost) and the device
//! attribute value rules are not checked yet (docs/api-behaviour.md).

use std::collections::{BTreeSet, HashSet};

use capstan_meta::fields::{FieldLabels, Refusal};
use capstan_meta::validation::{dns1123_label, dns1123_subdomain, qualified_name};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::resource::v1::{
    DeviceClaim, DeviceClass, DeviceSelector, DeviceToleration, ExactDeviceRequest,
    OpaqueDeviceConfiguration, ResourceClaim, ResourceClaimSpec, ResourceClaimTemplate,
    ResourceSlice,
};
use serde_json::Value;

use crate::describe::Names;

const GROUP: &str = "resource.k8s.io";
/// Requests, constraints, configurations and selectors a claim or class may list.
const MAX_LIST: usize = 32;
/// Subrequests of one `firstAvailable` request.
const MAX_SUBREQUESTS: usize = 8;
/// Devices of one ResourceSlice.
const MAX_DEVICES: usize = 128;
/// Consumers a claim may be reserved for.
const MAX_RESERVED_FOR: usize = 256;
/// Bytes of a CEL selector expression.
const MAX_EXPRESSION: usize = 10 * 1024;
/// Bytes of an opaque configuration's parameters.
const MAX_PARAMETERS: usize = 10 * 1024;
/// Characters of a driver name.
const MAX_DRIVER: usize = 63;
/// Attributes and capacities of one device, together.
const MAX_ATTRIBUTES: usize = 32;
const ALLOCATION_MODES: [&str; 2] = ["All", "ExactCount"];
const TOLERATION_OPERATORS: [&str; 2] = ["Equal", "Exists"];
const TAINT_EFFECTS: [&str; 3] = ["NoExecute", "NoSchedule", "None"];

fn names(kind: &'static str, resource: &'static str, namespaced: bool) -> ResourceDescriptor {
    Names {
        group: GROUP,
        kind,
        resource,
        short_names: &[],
        namespaced,
    }
    .v1()
}

/// A driver name: a DNS subdomain of at most 63 characters.
fn driver(path: &str, name: &str, errs: &mut FieldErrors) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    if name.len() > MAX_DRIVER {
        errs.push(FieldError::too_long(path, MAX_DRIVER));
    }
    for why in dns1123_subdomain(&name.to_ascii_lowercase()) {
        errs.push(FieldError::invalid(path, name, why));
    }
}

/// A list of at most `max` items.
fn at_most<T>(path: &str, items: &[T], max: usize, errs: &mut FieldErrors) {
    if items.len() > max {
        errs.push(FieldError::too_many(path, items.len(), max));
    }
}

fn selectors(path: &str, list: &[DeviceSelector], errs: &mut FieldErrors) {
    at_most(path, list, MAX_LIST, errs);
    for (i, selector) in list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let Some(cel) = &selector.cel else {
            errs.push(FieldError::required(format!("{at}.cel"), ""));
            continue;
        };
        let expr_path = format!("{at}.cel.expression");
        let expression = cel.expression.as_str();
        if expression.trim().is_empty() {
            errs.push(FieldError::required(expr_path, ""));
        } else if expression.len() > MAX_EXPRESSION {
            errs.push(FieldError::too_long(expr_path, MAX_EXPRESSION));
        } else if let Err(detail) = capstan_cel::check::check_device_selector(expression) {
            errs.push(FieldError::invalid(expr_path, expression, detail));
        }
    }
}

fn opaque(path: &str, config: &OpaqueDeviceConfiguration, errs: &mut FieldErrors) {
    driver(&format!("{path}.driver"), &config.driver, errs);
    let at = format!("{path}.parameters");
    match &config.parameters.0 {
        Value::Null => errs.push(FieldError::required(at, "")),
        Value::Object(_) => {
            let size = serde_json::to_vec(&config.parameters.0).map_or(0, |b| b.len());
            if size > MAX_PARAMETERS {
                errs.push(FieldError::too_long(at, MAX_PARAMETERS));
            }
        }
        _ => errs.push(FieldError::invalid(
            at,
            "<value omitted>",
            "parameters must be a valid JSON object",
        )),
    }
}

fn tolerations(path: &str, list: &[DeviceToleration], errs: &mut FieldErrors) {
    at_most(path, list, 16, errs);
    for (i, t) in list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let operator = t.operator.as_deref().unwrap_or("Equal");
        if let Some(key) = t.key.as_deref().filter(|k| !k.is_empty()) {
            for why in qualified_name(key) {
                errs.push(FieldError::invalid(format!("{at}.key"), key, why));
            }
        } else if operator != "Exists" {
            errs.push(FieldError::invalid(
                format!("{at}.operator"),
                operator,
                "value must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if !TOLERATION_OPERATORS.contains(&operator) {
            errs.push(FieldError::not_supported(
                format!("{at}.operator"),
                operator,
                &TOLERATION_OPERATORS,
            ));
        }
        if operator == "Exists" && t.value.as_deref().is_some_and(|v| !v.is_empty()) {
            errs.push(FieldError::invalid(
                format!("{at}.operator"),
                operator,
                "value must be empty when `operator` is 'Exists'",
            ));
        }
        if let Some(effect) = t.effect.as_deref().filter(|e| !e.is_empty())
            && !TAINT_EFFECTS.contains(&effect)
        {
            errs.push(FieldError::not_supported(
                format!("{at}.effect"),
                effect,
                &TAINT_EFFECTS,
            ));
        }
    }
}

/// `allocationMode`, `count`, class, selectors and tolerations of a request or subrequest.
fn device_request(
    at: &str,
    class: &str,
    mode: Option<&str>,
    count: Option<i64>,
    selector_list: Option<&[DeviceSelector]>,
    toleration_list: Option<&[DeviceToleration]>,
    errs: &mut FieldErrors,
) {
    let class_path = format!("{at}.deviceClassName");
    if class.is_empty() {
        errs.push(FieldError::required(class_path, ""));
    } else {
        for why in dns1123_subdomain(class) {
            errs.push(FieldError::invalid(class_path.clone(), class, why));
        }
    }
    match mode.unwrap_or("ExactCount") {
        "ExactCount" => {
            if let Some(n) = count
                && n <= 0
            {
                errs.push(FieldError::invalid_raw(
                    format!("{at}.count"),
                    n.to_string(),
                    "must be greater than zero",
                ));
            }
        }
        "All" => {
            if count.is_some_and(|n| n != 0) {
                errs.push(FieldError::invalid_raw(
                    format!("{at}.count"),
                    count.unwrap_or_default().to_string(),
                    "must not be specified when allocationMode is 'All'",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{at}.allocationMode"),
            other,
            &ALLOCATION_MODES,
        )),
    }
    selectors(
        &format!("{at}.selectors"),
        selector_list.unwrap_or_default(),
        errs,
    );
    tolerations(
        &format!("{at}.tolerations"),
        toleration_list.unwrap_or_default(),
        errs,
    );
}

fn exactly(at: &str, r: &ExactDeviceRequest, errs: &mut FieldErrors) {
    device_request(
        at,
        &r.device_class_name,
        r.allocation_mode.as_deref(),
        r.count,
        r.selectors.as_deref(),
        r.tolerations.as_deref(),
        errs,
    );
}

/// A request name (`name`) or a subrequest reference (`request/subrequest`) that must name
/// one of `known`.
fn request_refs(path: &str, refs: &[String], known: &BTreeSet<String>, errs: &mut FieldErrors) {
    let mut seen = HashSet::new();
    for (i, r) in refs.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let head = r.split('/').next().unwrap_or_default();
        if !known.contains(head) && !known.contains(r.as_str()) {
            errs.push(FieldError::invalid(
                at.clone(),
                r,
                "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
            ));
        }
        if !seen.insert(r) {
            errs.push(FieldError::duplicate(at, r));
        }
    }
}

fn claim_spec(path: &str, spec: &ResourceClaimSpec, errs: &mut FieldErrors) {
    let Some(devices) = &spec.devices else {
        return;
    };
    let at = format!("{path}.devices");
    device_claim(&at, devices, errs);
}

fn device_claim(at: &str, devices: &DeviceClaim, errs: &mut FieldErrors) {
    let requests = devices.requests.as_deref().unwrap_or_default();
    let path = format!("{at}.requests");
    at_most(&path, requests, MAX_LIST, errs);
    let mut known = BTreeSet::new();
    for (i, request) in requests.iter().enumerate() {
        let r_at = format!("{path}[{i}]");
        name_label(&format!("{r_at}.name"), &request.name, errs);
        if !request.name.is_empty() && !known.insert(request.name.clone()) {
            errs.push(FieldError::duplicate(format!("{r_at}.name"), &request.name));
        }
        match (&request.exactly, &request.first_available) {
            (Some(_), Some(_)) => errs.push(FieldError::invalid(
                r_at.clone(),
                "<value omitted>",
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )),
            (None, None) => errs.push(FieldError::required(
                r_at.clone(),
                "exactly one of `exactly` or `firstAvailable` is required",
            )),
            (Some(e), None) => exactly(&format!("{r_at}.exactly"), e, errs),
            (None, Some(subs)) => {
                let s_path = format!("{r_at}.firstAvailable");
                if subs.is_empty() {
                    errs.push(FieldError::required(s_path.clone(), ""));
                }
                at_most(&s_path, subs, MAX_SUBREQUESTS, errs);
                let mut sub_names = HashSet::new();
                for (j, sub) in subs.iter().enumerate() {
                    let s_at = format!("{s_path}[{j}]");
                    name_label(&format!("{s_at}.name"), &sub.name, errs);
                    if !sub.name.is_empty() && !sub_names.insert(sub.name.as_str()) {
                        errs.push(FieldError::duplicate(format!("{s_at}.name"), &sub.name));
                    }
                    known.insert(format!("{}/{}", request.name, sub.name));
                    device_request(
                        &s_at,
                        &sub.device_class_name,
                        sub.allocation_mode.as_deref(),
                        sub.count,
                        sub.selectors.as_deref(),
                        sub.tolerations.as_deref(),
                        errs,
                    );
                }
            }
        }
    }
    let constraints = devices.constraints.as_deref().unwrap_or_default();
    let c_path = format!("{at}.constraints");
    at_most(&c_path, constraints, MAX_LIST, errs);
    for (i, c) in constraints.iter().enumerate() {
        let c_at = format!("{c_path}[{i}]");
        request_refs(
            &format!("{c_at}.requests"),
            c.requests.as_deref().unwrap_or_default(),
            &known,
            errs,
        );
        match (c.match_attribute.as_deref(), c.distinct_attribute.as_deref()) {
            (Some(_), Some(_)) => errs.push(FieldError::invalid(
                c_at.clone(),
                "<value omitted>",
                "exactly one of `matchAttribute` or `distinctAttribute` is required, but multiple fields are set",
            )),
            (None, None) => errs.push(FieldError::required(
                c_at.clone(),
                "exactly one of `matchAttribute` or `distinctAttribute` is required",
            )),
            (Some(a), None) => attribute_name(&format!("{c_at}.matchAttribute"), a, errs),
            (None, Some(a)) => attribute_name(&format!("{c_at}.distinctAttribute"), a, errs),
        }
    }
    let configs = devices.config.as_deref().unwrap_or_default();
    let f_path = format!("{at}.config");
    at_most(&f_path, configs, MAX_LIST, errs);
    for (i, config) in configs.iter().enumerate() {
        let f_at = format!("{f_path}[{i}]");
        request_refs(
            &format!("{f_at}.requests"),
            config.requests.as_deref().unwrap_or_default(),
            &known,
            errs,
        );
        match &config.opaque {
            Some(o) => opaque(&format!("{f_at}.opaque"), o, errs),
            None => errs.push(FieldError::required(format!("{f_at}.opaque"), "")),
        }
    }
}

fn name_label(path: &str, name: &str, errs: &mut FieldErrors) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    for why in dns1123_label(name).into_iter().filter(|_| !name.is_empty()) {
        errs.push(FieldError::invalid(path, name, why));
    }
}

/// A fully qualified attribute name: `<domain>/<identifier>`.
fn attribute_name(path: &str, name: &str, errs: &mut FieldErrors) {
    match name.split_once('/') {
        Some((domain, id)) if !domain.is_empty() && !id.is_empty() => {
            for why in dns1123_subdomain(domain) {
                errs.push(FieldError::invalid(path, name, why));
            }
            c_identifier(path, name, id, errs);
        }
        _ => errs.push(FieldError::invalid(path, name, "must include a domain")),
    }
}

/// The part of an attribute or capacity name after the domain: a C identifier of at most 32
/// characters.
fn c_identifier(path: &str, whole: &str, id: &str, errs: &mut FieldErrors) {
    let first_ok = id
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        errs.push(FieldError::invalid(
            path,
            whole,
            "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
        ));
    }
    if id.len() > 32 {
        errs.push(FieldError::too_long(path, 32));
    }
}

/// The strategy of DeviceClass: selectors and configuration checked; `metadata.generation`
/// counts spec changes.
#[derive(Debug, Default, Clone, Copy)]
pub struct DeviceClassStrategy;

impl Strategy for DeviceClassStrategy {
    type Object = DeviceClass;

    fn descriptor(&self) -> ResourceDescriptor {
        names("DeviceClass", "deviceclasses", false)
    }

    fn prepare_for_create(&self, class: &mut DeviceClass) {
        class.metadata.generation = Some(1);
    }

    fn prepare_for_update(&self, new: &mut DeviceClass, old: &DeviceClass) {
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, class: &DeviceClass) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = &class.spec;
        selectors(
            "spec.selectors",
            spec.selectors.as_deref().unwrap_or_default(),
            &mut errs,
        );
        let configs = spec.config.as_deref().unwrap_or_default();
        at_most("spec.config", configs, MAX_LIST, &mut errs);
        for (i, config) in configs.iter().enumerate() {
            let at = format!("spec.config[{i}].opaque");
            match &config.opaque {
                Some(o) => opaque(&at, o, &mut errs),
                None => errs.push(FieldError::required(at, "")),
            }
        }
        errs
    }

    fn validate_update(&self, new: &DeviceClass, _old: &DeviceClass) -> FieldErrors {
        self.validate(new)
    }
}

fn claim_defaults(spec: &mut ResourceClaimSpec) {
    let Some(requests) = spec.devices.as_mut().and_then(|d| d.requests.as_mut()) else {
        return;
    };
    for request in requests {
        if let Some(e) = request.exactly.as_mut() {
            request_defaults(&mut e.allocation_mode, &mut e.count, &mut e.tolerations);
        }
        for sub in request.first_available.iter_mut().flatten() {
            request_defaults(
                &mut sub.allocation_mode,
                &mut sub.count,
                &mut sub.tolerations,
            );
        }
    }
}

/// `allocationMode` ExactCount with `count` 1 unless set; tolerations' operator `Equal`.
fn request_defaults(
    mode: &mut Option<String>,
    count: &mut Option<i64>,
    tolerations: &mut Option<Vec<DeviceToleration>>,
) {
    let mode = mode.get_or_insert_with(|| "ExactCount".into());
    if mode == "ExactCount" {
        count.get_or_insert(1);
    }
    for t in tolerations.iter_mut().flatten() {
        t.operator.get_or_insert_with(|| "Equal".into());
    }
}

/// The strategy of ResourceClaim: the spec is immutable; the `status` subresource carries the
/// allocation (written by the scheduler), the consumers it is reserved for and the devices'
/// status (written by drivers).
#[derive(Debug, Default, Clone, Copy)]
pub struct ResourceClaimStrategy;

impl Strategy for ResourceClaimStrategy {
    type Object = ResourceClaim;

    fn descriptor(&self) -> ResourceDescriptor {
        names("ResourceClaim", "resourceclaims", true)
    }

    fn default(&self, claim: &mut ResourceClaim) {
        claim_defaults(&mut claim.spec);
    }

    fn prepare_for_create(&self, claim: &mut ResourceClaim) {
        claim.status = None;
    }

    fn validate(&self, claim: &ResourceClaim) -> FieldErrors {
        let mut errs = Vec::new();
        claim_spec("spec", &claim.spec, &mut errs);
        validate_claim_status(claim, &mut errs);
        errs
    }

    fn validate_update(&self, new: &ResourceClaim, old: &ResourceClaim) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.spec != old.spec {
            errs.push(FieldError::invalid(
                "spec",
                "<value omitted>",
                "field is immutable",
            ));
        }
        let allocation = |c: &ResourceClaim| c.status.as_ref().and_then(|s| s.allocation.clone());
        if let (Some(before), Some(after)) = (allocation(old), allocation(new))
            && before != after
        {
            errs.push(FieldError::invalid(
                "status.allocation",
                "<value omitted>",
                "field is immutable",
            ));
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut ResourceClaim, from: &ResourceClaim) {
        to.status = from.status.clone();
    }
}

fn validate_claim_status(claim: &ResourceClaim, errs: &mut FieldErrors) {
    let Some(status) = &claim.status else {
        return;
    };
    let reserved = status.reserved_for.as_deref().unwrap_or_default();
    at_most("status.reservedFor", reserved, MAX_RESERVED_FOR, errs);
    let mut uids = HashSet::new();
    for (i, consumer) in reserved.iter().enumerate() {
        let at = format!("status.reservedFor[{i}]");
        if consumer.resource.is_empty() {
            errs.push(FieldError::required(format!("{at}.resource"), ""));
        }
        if consumer.name.is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        }
        if consumer.uid.is_empty() {
            errs.push(FieldError::required(format!("{at}.uid"), ""));
        } else if !uids.insert(consumer.uid.as_str()) {
            errs.push(FieldError::duplicate(format!("{at}.uid"), &consumer.uid));
        }
    }
    if !reserved.is_empty() && status.allocation.is_none() {
        errs.push(FieldError::forbidden(
            "status.reservedFor",
            "may not be specified when `allocated` is not set",
        ));
    }
    let results = status
        .allocation
        .as_ref()
        .and_then(|a| a.devices.as_ref())
        .and_then(|d| d.results.as_deref())
        .unwrap_or_default();
    for (i, device) in status.devices.iter().flatten().enumerate() {
        let share = device.share_id.as_deref().unwrap_or_default();
        let allocated = results.iter().any(|r| {
            (r.driver.as_str(), r.pool.as_str(), r.device.as_str())
                == (&device.driver, &device.pool, &device.device)
                && r.share_id.as_deref().unwrap_or_default() == share
        });
        if !allocated {
            // Rendered as upstream renders the key it looks up (fields in this order).
            let text = |v: &str| serde_json::Value::from(v).to_string();
            let key = format!(
                "{{\"Driver\":{},\"Pool\":{},\"Device\":{},\"ShareID\":{}}}",
                text(&device.driver),
                text(&device.pool),
                text(&device.device),
                text(share)
            );
            errs.push(FieldError::invalid_raw(
                format!("status.devices[{i}]"),
                key,
                "must be an allocated device in the claim",
            ));
        }
    }
    if status.allocation.is_some() {
        at_most("status.allocation.devices.results", results, MAX_LIST, errs);
        for (i, r) in results.iter().enumerate() {
            let at = format!("status.allocation.devices.results[{i}]");
            driver(&format!("{at}.driver"), &r.driver, errs);
            if r.pool.is_empty() {
                errs.push(FieldError::required(format!("{at}.pool"), ""));
            }
            name_label(&format!("{at}.device"), &r.device, errs);
            if r.request.is_empty() {
                errs.push(FieldError::required(format!("{at}.request"), ""));
            }
        }
    }
}

/// The strategy of ResourceClaimTemplate: the claim spec it stamps out, immutable.
#[derive(Debug, Default, Clone, Copy)]
pub struct ResourceClaimTemplateStrategy;

impl Strategy for ResourceClaimTemplateStrategy {
    type Object = ResourceClaimTemplate;

    fn descriptor(&self) -> ResourceDescriptor {
        names("ResourceClaimTemplate", "resourceclaimtemplates", true)
    }

    fn default(&self, template: &mut ResourceClaimTemplate) {
        claim_defaults(&mut template.spec.spec);
    }

    fn validate(&self, template: &ResourceClaimTemplate) -> FieldErrors {
        let mut errs = Vec::new();
        claim_spec("spec.spec", &template.spec.spec, &mut errs);
        if let Some(labels) = template
            .spec
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref())
        {
            errs.extend(capstan_meta::validation::labels(
                "spec.metadata.labels",
                labels,
            ));
        }
        errs
    }

    fn validate_update(
        &self,
        new: &ResourceClaimTemplate,
        old: &ResourceClaimTemplate,
    ) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.spec != old.spec {
            errs.push(FieldError::invalid(
                "spec",
                "<value omitted>",
                "field is immutable",
            ));
        }
        errs
    }
}

/// The strategy of ResourceSlice: one pool's devices from one driver, on one node or for a
/// set of nodes (exactly one of `nodeName`, `nodeSelector`, `allNodes` and
/// `perDeviceNodeSelection`); `driver` and `nodeName` are immutable. Field selectors
/// `spec.nodeName` and `spec.driver`, as upstream.
#[derive(Debug, Default, Clone, Copy)]
pub struct ResourceSliceStrategy;

impl Strategy for ResourceSliceStrategy {
    type Object = ResourceSlice;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = names("ResourceSlice", "resourceslices", false);
        d.field_labels = FieldLabels {
            refusal: Refusal::NotSupportedForGroupVersionKind,
            ..FieldLabels::of_kind(&["spec.nodeName", "spec.driver"]).without_namespace()
        };
        d
    }

    fn field(&self, slice: &ResourceSlice, field: &str) -> Option<String> {
        match field {
            "spec.nodeName" => Some(slice.spec.node_name.clone().unwrap_or_default()),
            "spec.driver" => Some(slice.spec.driver.clone()),
            _ => None,
        }
    }

    fn prepare_for_create(&self, slice: &mut ResourceSlice) {
        slice.metadata.generation = Some(1);
    }

    fn prepare_for_update(&self, new: &mut ResourceSlice, old: &ResourceSlice) {
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, slice: &ResourceSlice) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = &slice.spec;
        driver("spec.driver", &spec.driver, &mut errs);
        let pool = &spec.pool;
        if pool.name.is_empty() {
            errs.push(FieldError::required("spec.pool.name", ""));
        } else {
            for segment in pool.name.split('/') {
                for why in dns1123_subdomain(segment) {
                    errs.push(FieldError::invalid("spec.pool.name", &pool.name, why));
                }
            }
        }
        if pool.generation < 0 {
            errs.push(FieldError::invalid_raw(
                "spec.pool.generation",
                pool.generation.to_string(),
                "must be greater than or equal to 0",
            ));
        }
        if pool.resource_slice_count <= 0 {
            errs.push(FieldError::invalid_raw(
                "spec.pool.resourceSliceCount",
                pool.resource_slice_count.to_string(),
                "must be greater than zero",
            ));
        }
        let placements = [
            spec.node_name.as_deref().is_some_and(|n| !n.is_empty()),
            spec.node_selector.is_some(),
            spec.all_nodes == Some(true),
            spec.per_device_node_selection == Some(true),
        ];
        match placements.iter().filter(|set| **set).count() {
            0 => errs.push(FieldError::required(
                "spec",
                "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
            )),
            1 => {}
            _ => errs.push(FieldError::invalid(
                "spec",
                "<value omitted>",
                "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set",
            )),
        }
        if let Some(node) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
            for why in dns1123_subdomain(node) {
                errs.push(FieldError::invalid("spec.nodeName", node, why));
            }
        }
        // Counters shared by partitionable devices are published apart from the devices
        // (upstream's DRAPartitionableDevices, beta and on by default in v1.36).
        let counter_sets = spec.shared_counters.as_deref().unwrap_or_default();
        if !counter_sets.is_empty() && spec.devices.is_some() {
            errs.push(FieldError::invalid(
                "spec",
                "",
                "only one of `sharedCounters` or `devices` is allowed",
            ));
        }
        let mut set_names = HashSet::new();
        for (i, set) in counter_sets.iter().enumerate() {
            if !set_names.insert(set.name.as_str()) {
                errs.push(FieldError::duplicate(
                    format!("spec.sharedCounters[{i}]"),
                    &set.name,
                ));
            }
        }
        let devices = spec.devices.as_deref().unwrap_or_default();
        at_most("spec.devices", devices, MAX_DEVICES, &mut errs);
        let mut seen = HashSet::new();
        for (i, device) in devices.iter().enumerate() {
            let at = format!("spec.devices[{i}]");
            name_label(&format!("{at}.name"), &device.name, &mut errs);
            if !device.name.is_empty() && !seen.insert(device.name.as_str()) {
                errs.push(FieldError::duplicate(format!("{at}.name"), &device.name));
            }
            let attributes = device.attributes.as_ref().map_or(0, |a| a.len());
            let capacity = device.capacity.as_ref().map_or(0, |c| c.len());
            if attributes + capacity > MAX_ATTRIBUTES {
                errs.push(FieldError::too_many(
                    at.clone(),
                    attributes + capacity,
                    MAX_ATTRIBUTES,
                ));
            }
            for (name, value) in device.attributes.iter().flatten() {
                let a_at = format!("{at}.attributes[{name}]");
                match name.split_once('/') {
                    Some((domain, id)) => {
                        for why in dns1123_subdomain(domain) {
                            errs.push(FieldError::invalid(a_at.clone(), name, why));
                        }
                        c_identifier(&a_at, name, id, &mut errs);
                    }
                    None => c_identifier(&a_at, name, name, &mut errs),
                }
                let kinds = [
                    value.bool.is_some(),
                    value.int.is_some(),
                    value.string.is_some(),
                    value.version.is_some(),
                    value.bools.is_some(),
                    value.ints.is_some(),
                    value.strings.is_some(),
                    value.versions.is_some(),
                ];
                if kinds.iter().filter(|k| **k).count() != 1 {
                    errs.push(FieldError::invalid(
                        a_at,
                        "<value omitted>",
                        "exactly one value must be specified",
                    ));
                }
            }
            // Device taints (upstream's DRADeviceTaints, beta and on by default in v1.36).
            for (j, taint) in device.taints.iter().flatten().enumerate() {
                let t_at = format!("{at}.taints[{j}]");
                for why in capstan_meta::validation::qualified_name(&taint.key) {
                    errs.push(FieldError::invalid(format!("{t_at}.key"), &taint.key, why));
                }
                if let Some(value) = &taint.value {
                    for why in capstan_meta::validation::label_value(value) {
                        errs.push(FieldError::invalid(format!("{t_at}.value"), value, why));
                    }
                }
                if !TAINT_EFFECTS.contains(&taint.effect.as_str()) {
                    errs.push(FieldError::not_supported(
                        format!("{t_at}.effect"),
                        &taint.effect,
                        &TAINT_EFFECTS,
                    ));
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &ResourceSlice, old: &ResourceSlice) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.spec.driver != old.spec.driver {
            errs.push(FieldError::invalid(
                "spec.driver",
                &new.spec.driver,
                "field is immutable",
            ));
        }
        if new.spec.node_name != old.spec.node_name {
            errs.push(FieldError::invalid(
                "spec.nodeName",
                new.spec.node_name.as_deref().unwrap_or_default(),
                "field is immutable",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(spec: Value) -> ResourceClaim {
        let mut c: ResourceClaim =
            serde_json::from_value(json!({"metadata": {"name": "c"}, "spec": spec})).unwrap();
        ResourceClaimStrategy.default(&mut c);
        c
    }

    fn fields(errs: &FieldErrors) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}:{}", e.field, e.kind.reason()))
            .collect()
    }

    #[test]
    fn a_request_defaults_to_one_device() {
        let c = claim(json!({"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}));
        let requests = c.spec.devices.as_ref().unwrap().requests.as_ref().unwrap();
        let e = requests[0].exactly.as_ref().unwrap();
        assert_eq!(e.allocation_mode.as_deref(), Some("ExactCount"));
        assert_eq!(e.count, Some(1));
        assert!(ResourceClaimStrategy.validate(&c).is_empty());
    }

    #[test]
    fn requests_need_one_way_of_asking_and_known_names() {
        let c = claim(json!({"devices": {
            "requests": [{"name": "a"}, {"name": "a", "exactly": {"deviceClassName": "x",
                "allocationMode": "All", "count": 2,
                "selectors": [{"cel": {"expression": "device.driver =="}}]}}],
            "constraints": [{"requests": ["b"], "matchAttribute": "nodomain"}]}}));
        let errs = fields(&ResourceClaimStrategy.validate(&c));
        for want in [
            "spec.devices.requests[0]:FieldValueRequired",
            "spec.devices.requests[1].name:FieldValueDuplicate",
            "spec.devices.requests[1].exactly.count:FieldValueInvalid",
            "spec.devices.requests[1].exactly.selectors[0].cel.expression:FieldValueInvalid",
            "spec.devices.constraints[0].requests[0]:FieldValueInvalid",
            "spec.devices.constraints[0].matchAttribute:FieldValueInvalid",
        ] {
            assert!(
                errs.contains(&want.to_string()),
                "{want} missing in {errs:?}"
            );
        }
    }

    #[test]
    fn a_claims_spec_and_allocation_do_not_change() {
        let old = claim(json!({"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}));
        let mut new = claim(json!({"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "other"}}]}}));
        new.metadata = old.metadata.clone();
        let errs = fields(&ResourceClaimStrategy.validate_update(&new, &old));
        assert_eq!(errs, ["spec:FieldValueInvalid"]);
    }

    #[test]
    fn a_reservation_needs_an_allocation() {
        let mut c = claim(json!({}));
        c.status = serde_json::from_value(json!({"reservedFor": [
            {"resource": "pods", "name": "p", "uid": "1"},
            {"resource": "pods", "name": "q", "uid": "1"}]}))
        .unwrap();
        let errs = fields(&ResourceClaimStrategy.validate(&c));
        assert_eq!(
            errs,
            [
                "status.reservedFor[1].uid:FieldValueDuplicate",
                "status.reservedFor:FieldValueForbidden"
            ]
        );
    }

    #[test]
    fn a_slice_is_placed_one_way_and_names_its_devices() {
        let slice: ResourceSlice = serde_json::from_value(json!({
            "metadata": {"name": "s"},
            "spec": {"driver": "gpu.example.com", "nodeName": "n1", "allNodes": true,
                "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a"},
                    "example.com/bad-name": {"int": 1, "bool": true}}},
                    {"name": "gpu-0"}]}}))
        .unwrap();
        let errs = fields(&ResourceSliceStrategy.validate(&slice));
        assert_eq!(
            errs,
            [
                "spec:FieldValueInvalid",
                "spec.devices[0].attributes[example.com/bad-name]:FieldValueInvalid",
                "spec.devices[0].attributes[example.com/bad-name]:FieldValueInvalid",
                "spec.devices[1].name:FieldValueDuplicate",
            ]
        );
        assert_eq!(
            ResourceSliceStrategy
                .field(&slice, "spec.nodeName")
                .as_deref(),
            Some("n1")
        );
    }

    #[test]
    fn a_class_selects_with_cel_and_configures_opaquely() {
        let class: DeviceClass = serde_json::from_value(json!({
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}, {}],
                "config": [{"opaque": {"driver": "gpu.example.com", "parameters": 3}}]}}))
        .unwrap();
        let errs = fields(&DeviceClassStrategy.validate(&class));
        assert_eq!(
            errs,
            [
                "spec.selectors[1].cel:FieldValueRequired",
                "spec.config[0].opaque.parameters:FieldValueInvalid"
            ]
        );
    }
}
