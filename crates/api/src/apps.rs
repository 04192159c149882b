//! `apps/v1`: Deployments, ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions,
//! with upstream's defaults, validation (selectors that match their templates and never
//! change, pod templates checked as pods) and status subresources. The controllers that act
//! on them run in kube-controller-manager upstream, not in the API server.

use capstan_meta::labels::LabelSelector as Selector;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use crate::describe::Names;
use crate::pod::{default_template, validate_template};

/// The descriptor of an `apps/v1` workload, in the `all` category.
fn workload(
    kind: &'static str,
    resource: &'static str,
    short: &'static [&'static str],
) -> ResourceDescriptor {
    names(kind, resource, short).v1_in_all()
}

/// Names of an `apps/v1` workload.
fn names(
    kind: &'static str,
    resource: &'static str,
    short: &'static [&'static str],
) -> Names<'static> {
    Names {
        group: "apps",
        kind,
        resource,
        short_names: short,
        namespaced: true,
    }
}

/// A label selector as text (`a=b,c in (d,e),!f`), as the `scale` subresource reports it.
pub fn selector_text(selector: &LabelSelector) -> String {
    let mut parts: Vec<(String, String)> = Vec::new();
    for (k, v) in selector.match_labels.iter().flatten() {
        parts.push((k.clone(), format!("{k}={v}")));
    }
    for e in selector.match_expressions.iter().flatten() {
        let mut values = e.values.clone().unwrap_or_default();
        values.sort();
        let text = match e.operator.as_str() {
            "In" => format!("{} in ({})", e.key, values.join(",")),
            "NotIn" => format!("{} notin ({})", e.key, values.join(",")),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            other => format!("{} {other}", e.key),
        };
        parts.push((e.key.clone(), text));
    }
    parts.sort();
    parts
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(",")
}

/// What every workload checks: a valid non-empty selector matching the template's labels,
/// the template (restartPolicy `Always`), non-negative replicas.
fn validate_workload(
    kind: &str,
    selector: Option<&LabelSelector>,
    template: Option<&PodTemplateSpec>,
    replicas: Option<i32>,
    privileged: bool,
    errs: &mut FieldErrors,
) {
    match selector {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(s) => match Selector::from_api(s) {
            Err(e) => errs.push(FieldError::invalid("spec.selector", "", e.to_string())),
            Ok(parsed) if parsed.is_empty() => errs.push(FieldError::invalid_raw(
                "spec.selector",
                json!(s).to_string(),
                format!("empty selector is invalid for {kind}"),
            )),
            Ok(parsed) => {
                let labels = template
                    .and_then(|t| t.metadata.as_ref())
                    .and_then(|m| m.labels.clone());
                if !parsed.matches(labels.as_ref()) {
                    errs.push(FieldError::invalid_raw(
                        "spec.template.metadata.labels",
                        json!(labels.unwrap_or_default()).to_string(),
                        "`selector` does not match template `labels`",
                    ));
                }
            }
        },
    }
    errs.extend(validate_template(template, "spec.template", privileged));
    if let Some(policy) = template
        .and_then(|t| t.spec.as_ref())
        .and_then(|s| s.restart_policy.as_deref())
        && policy != "Always"
    {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    if template
        .and_then(|t| t.spec.as_ref())
        .and_then(|s| s.active_deadline_seconds)
        .is_some()
    {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    if let Some(r) = replicas
        && r < 0
    {
        errs.push(FieldError::negative("spec.replicas", i64::from(r)));
    }
}

/// A count that may not be negative (upstream's message).
pub(crate) fn non_negative(errs: &mut FieldErrors, field: &str, value: Option<i32>) {
    if let Some(v) = value
        && v < 0
    {
        errs.push(FieldError::negative(field, i64::from(v)));
    }
}

/// An `IntOrString` count (a rolling update's, a disruption budget's): a non-negative count
/// or a percentage up to 100 %; whether it is zero.
pub(crate) fn int_or_percent(
    errs: &mut FieldErrors,
    field: &str,
    value: Option<&IntOrString>,
) -> bool {
    match value {
        None => false,
        Some(IntOrString::Int(n)) => {
            non_negative(errs, field, Some(*n));
            *n == 0
        }
        Some(IntOrString::String(s)) => {
            let parsed = s.strip_suffix('%').and_then(|n| n.parse::<i64>().ok());
            match parsed {
                None => {
                    errs.push(FieldError::invalid(
                        field,
                        s,
                        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                    ));
                    false
                }
                Some(p) if p > 100 => {
                    errs.push(FieldError::invalid(
                        field,
                        s,
                        "must not be greater than 100%",
                    ));
                    false
                }
                Some(p) => p == 0,
            }
        }
    }
}

/// A rolling update's `maxUnavailable` and `maxSurge` at `path`: each a count or a
/// percentage, not both 0.
fn validate_rolling(
    errs: &mut FieldErrors,
    path: &str,
    unavailable: Option<&IntOrString>,
    surge: Option<&IntOrString>,
) {
    let unavailable_zero = int_or_percent(errs, &format!("{path}.maxUnavailable"), unavailable);
    let surge_zero = int_or_percent(errs, &format!("{path}.maxSurge"), surge);
    if unavailable_zero && surge_zero {
        errs.push(FieldError::invalid(
            format!("{path}.maxUnavailable"),
            "0",
            "may not be 0 when `maxSurge` is 0",
        ));
    }
}

/// The selector may not change (apps/v1).
fn selector_unchanged(
    errs: &mut FieldErrors,
    new: Option<&LabelSelector>,
    old: Option<&LabelSelector>,
) {
    if new != old {
        errs.push(FieldError::invalid_raw(
            "spec.selector",
            json!(new).to_string(),
            "field is immutable",
        ));
    }
}

fn percent(p: &str) -> IntOrString {
    IntOrString::String(p.into())
}

/// The strategy of Deployment.
#[derive(Debug, Default, Clone, Copy)]
pub struct DeploymentStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

impl Strategy for DeploymentStrategy {
    type Object = Deployment;

    fn warnings(&self, new: &Deployment, old: Option<&Deployment>) -> Vec<String> {
        // On update, only when the spec changed (its generation moved), as upstream.
        if old.is_some_and(|old| old.metadata.generation == new.metadata.generation) {
            return Vec::new();
        }
        crate::warnings::template_warnings(new.spec.as_ref().map(|s| &s.template), "spec.template.")
    }

    fn descriptor(&self) -> ResourceDescriptor {
        workload("Deployment", "deployments", &["deploy"])
    }

    fn default(&self, d: &mut Deployment) {
        let spec = d.spec.get_or_insert_with(Default::default);
        spec.replicas.get_or_insert(1);
        let strategy = spec.strategy.get_or_insert_with(Default::default);
        let kind = strategy.type_.get_or_insert_with(|| "RollingUpdate".into());
        if kind == "RollingUpdate" {
            let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
            rolling
                .max_unavailable
                .get_or_insert_with(|| percent("25%"));
            rolling.max_surge.get_or_insert_with(|| percent("25%"));
        }
        spec.revision_history_limit.get_or_insert(10);
        spec.progress_deadline_seconds.get_or_insert(600);
        default_template(&mut spec.template);
    }

    fn prepare_for_create(&self, d: &mut Deployment) {
        d.metadata.generation = Some(1);
        d.status = Some(Default::default());
    }

    fn prepare_for_update(&self, new: &mut Deployment, old: &Deployment) {
        bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, d: &Deployment) -> FieldErrors {
        let mut errs = Vec::new();
        let Some(spec) = &d.spec else {
            return vec![FieldError::required("spec", "")];
        };
        validate_workload(
            "deployment",
            Some(&spec.selector),
            Some(&spec.template),
            spec.replicas,
            self.allow_privileged,
            &mut errs,
        );
        if let Some(strategy) = &spec.strategy {
            match strategy.type_.as_deref() {
                Some("Recreate") if strategy.rolling_update.is_some() => {
                    errs.push(FieldError::forbidden(
                        "spec.strategy.rollingUpdate",
                        "may not be specified when strategy `type` is 'Recreate'",
                    ))
                }
                Some("Recreate" | "RollingUpdate") | None => {}
                Some(other) => errs.push(FieldError::not_supported(
                    "spec.strategy.type",
                    other,
                    &["Recreate", "RollingUpdate"],
                )),
            }
            if let Some(rolling) = &strategy.rolling_update {
                validate_rolling(
                    &mut errs,
                    "spec.strategy.rollingUpdate",
                    rolling.max_unavailable.as_ref(),
                    rolling.max_surge.as_ref(),
                );
            }
        }
        non_negative(
            &mut errs,
            "spec.revisionHistoryLimit",
            spec.revision_history_limit,
        );
        non_negative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
        if let Some(deadline) = spec.progress_deadline_seconds
            && deadline <= spec.min_ready_seconds.unwrap_or(0)
        {
            errs.push(FieldError::invalid(
                "spec.progressDeadlineSeconds",
                &deadline.to_string(),
                "must be greater than minReadySeconds",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Deployment, old: &Deployment) -> FieldErrors {
        let mut errs = self.validate(new);
        selector_unchanged(
            &mut errs,
            new.spec.as_ref().map(|s| &s.selector),
            old.spec.as_ref().map(|s| &s.selector),
        );
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut Deployment, from: &Deployment) {
        to.status = from.status.clone();
    }

    /// A Deployment's labels are written through the resource only, as upstream's.
    fn status_metadata(
        &self,
        sent: &capstan_meta::v1::ObjectMeta,
        stored: &capstan_meta::v1::ObjectMeta,
    ) -> capstan_meta::v1::ObjectMeta {
        capstan_meta::v1::ObjectMeta {
            labels: stored.labels.clone(),
            ..sent.clone()
        }
    }
}

/// Bumps `metadata.generation` when the spec changed (upstream's rule for workloads).
pub(crate) fn bump_generation(
    new: &mut capstan_meta::v1::ObjectMeta,
    old: &capstan_meta::v1::ObjectMeta,
    changed: bool,
) {
    let before = old.generation.unwrap_or(1);
    new.generation = Some(if changed { before + 1 } else { before });
}

/// The strategy of ReplicaSet.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReplicaSetStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

impl Strategy for ReplicaSetStrategy {
    type Object = ReplicaSet;

    fn warnings(&self, new: &ReplicaSet, old: Option<&ReplicaSet>) -> Vec<String> {
        // On update, only when the spec changed (its generation moved), as upstream.
        if old.is_some_and(|old| old.metadata.generation == new.metadata.generation) {
            return Vec::new();
        }
        crate::warnings::template_warnings(
            new.spec.as_ref().and_then(|s| s.template.as_ref()),
            "spec.template.",
        )
    }

    fn descriptor(&self) -> ResourceDescriptor {
        workload("ReplicaSet", "replicasets", &["rs"])
    }

    fn default(&self, rs: &mut ReplicaSet) {
        let spec = rs.spec.get_or_insert_with(Default::default);
        spec.replicas.get_or_insert(1);
        if let Some(t) = spec.template.as_mut() {
            default_template(t);
        }
    }

    fn prepare_for_create(&self, rs: &mut ReplicaSet) {
        rs.metadata.generation = Some(1);
        rs.status = Some(Default::default());
    }

    fn prepare_for_update(&self, new: &mut ReplicaSet, old: &ReplicaSet) {
        bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, rs: &ReplicaSet) -> FieldErrors {
        let mut errs = Vec::new();
        let Some(spec) = &rs.spec else {
            return vec![FieldError::required("spec", "")];
        };
        validate_workload(
            "replicaset",
            Some(&spec.selector),
            spec.template.as_ref(),
            spec.replicas,
            self.allow_privileged,
            &mut errs,
        );
        non_negative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
        errs
    }

    fn validate_update(&self, new: &ReplicaSet, old: &ReplicaSet) -> FieldErrors {
        let mut errs = self.validate(new);
        selector_unchanged(
            &mut errs,
            new.spec.as_ref().map(|s| &s.selector),
            old.spec.as_ref().map(|s| &s.selector),
        );
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut ReplicaSet, from: &ReplicaSet) {
        to.status = from.status.clone();
    }
}

/// The strategy of StatefulSet.
#[derive(Debug, Default, Clone, Copy)]
pub struct StatefulSetStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

impl Strategy for StatefulSetStrategy {
    type Object = StatefulSet;

    fn warnings(&self, new: &StatefulSet, old: Option<&StatefulSet>) -> Vec<String> {
        // On update, only when the spec changed (its generation moved), as upstream.
        if old.is_some_and(|old| old.metadata.generation == new.metadata.generation) {
            return Vec::new();
        }
        let spec = new.spec.as_ref();
        let mut warnings =
            crate::warnings::template_warnings(spec.map(|s| &s.template), "spec.template.");
        let claims = spec.and_then(|s| s.volume_claim_templates.as_ref());
        for (i, claim) in claims.into_iter().flatten().enumerate() {
            if let Some(claim_spec) = &claim.spec {
                // Upstream's path skips the template's `spec`.
                crate::warnings::claim_spec(
                    &mut warnings,
                    &format!("spec.volumeClaimTemplates[{i}]"),
                    claim_spec,
                );
            }
        }
        warnings
    }

    fn descriptor(&self) -> ResourceDescriptor {
        workload("StatefulSet", "statefulsets", &["sts"])
    }

    fn default(&self, sts: &mut StatefulSet) {
        let spec = sts.spec.get_or_insert_with(Default::default);
        spec.replicas.get_or_insert(1);
        spec.pod_management_policy
            .get_or_insert_with(|| "OrderedReady".into());
        let update = spec.update_strategy.get_or_insert_with(Default::default);
        let kind = update.type_.get_or_insert_with(|| "RollingUpdate".into());
        if kind == "RollingUpdate" {
            let rolling = update.rolling_update.get_or_insert_with(Default::default);
            // No maxUnavailable: upstream defaults it only behind the MaxUnavailableStatefulSet
            // gate, off in v1.36.
            rolling.partition.get_or_insert(0);
        }
        spec.revision_history_limit.get_or_insert(10);
        let retention = spec
            .persistent_volume_claim_retention_policy
            .get_or_insert_with(Default::default);
        retention
            .when_deleted
            .get_or_insert_with(|| "Retain".into());
        retention.when_scaled.get_or_insert_with(|| "Retain".into());
        default_template(&mut spec.template);
        for claim in spec.volume_claim_templates.iter_mut().flatten() {
            let claim_spec = claim.spec.get_or_insert_with(Default::default);
            claim_spec
                .volume_mode
                .get_or_insert_with(|| "Filesystem".into());
        }
    }

    fn prepare_for_create(&self, sts: &mut StatefulSet) {
        sts.metadata.generation = Some(1);
        // Go writes the status' non-pointer counts even at zero.
        sts.status = Some(k8s_openapi::api::apps::v1::StatefulSetStatus {
            available_replicas: Some(0),
            ..Default::default()
        });
    }

    fn prepare_for_update(&self, new: &mut StatefulSet, old: &StatefulSet) {
        bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, sts: &StatefulSet) -> FieldErrors {
        let mut errs = Vec::new();
        let Some(spec) = &sts.spec else {
            return vec![FieldError::required("spec", "")];
        };
        validate_workload(
            "statefulset",
            Some(&spec.selector),
            Some(&spec.template),
            spec.replicas,
            self.allow_privileged,
            &mut errs,
        );
        if let Some(p) = spec.pod_management_policy.as_deref()
            && !matches!(p, "OrderedReady" | "Parallel")
        {
            errs.push(FieldError::not_supported(
                "spec.podManagementPolicy",
                p,
                &["OrderedReady", "Parallel"],
            ));
        }
        if let Some(update) = &spec.update_strategy {
            match update.type_.as_deref() {
                Some("OnDelete") if update.rolling_update.is_some() => {
                    errs.push(FieldError::invalid(
                        "spec.updateStrategy.rollingUpdate",
                        "",
                        "only allowed for updateStrategy 'RollingUpdate'",
                    ))
                }
                Some("OnDelete" | "RollingUpdate") | None => {}
                Some(other) => errs.push(FieldError::not_supported(
                    "spec.updateStrategy.type",
                    other,
                    &["OnDelete", "RollingUpdate"],
                )),
            }
            if let Some(rolling) = &update.rolling_update {
                non_negative(
                    &mut errs,
                    "spec.updateStrategy.rollingUpdate.partition",
                    rolling.partition,
                );
            }
        }
        non_negative(
            &mut errs,
            "spec.revisionHistoryLimit",
            spec.revision_history_limit,
        );
        non_negative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
        errs
    }

    fn validate_update(&self, new: &StatefulSet, old: &StatefulSet) -> FieldErrors {
        let mut errs = self.validate(new);
        let (Some(n), Some(o)) = (&new.spec, &old.spec) else {
            return errs;
        };
        // Only these may change; the rest of the spec is fixed at create.
        let mut comparable = n.clone();
        comparable.replicas = o.replicas;
        comparable.ordinals = o.ordinals.clone();
        comparable.template = o.template.clone();
        comparable.update_strategy = o.update_strategy.clone();
        comparable.persistent_volume_claim_retention_policy =
            o.persistent_volume_claim_retention_policy.clone();
        comparable.min_ready_seconds = o.min_ready_seconds;
        comparable.revision_history_limit = o.revision_history_limit;
        if &comparable != o {
            errs.push(FieldError::forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ));
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut StatefulSet, from: &StatefulSet) {
        to.status = from.status.clone();
    }
}

/// The strategy of DaemonSet.
#[derive(Debug, Default, Clone, Copy)]
pub struct DaemonSetStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

/// The annotation in which `apps/v1` keeps a DaemonSet's template generation (upstream's
/// `spec.templateGeneration` of the older versions).
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The template generation `ds` carries (0: none, or unreadable).
fn template_generation(ds: &DaemonSet) -> i64 {
    ds.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(|g| g.parse::<i64>().ok())
        .unwrap_or(0)
}

fn set_template_generation(ds: &mut DaemonSet, generation: i64) {
    if generation == 0 {
        if let Some(annotations) = ds.metadata.annotations.as_mut() {
            annotations.remove(TEMPLATE_GENERATION);
        }
        return;
    }
    let annotations = ds.metadata.annotations.get_or_insert_with(Default::default);
    annotations.insert(TEMPLATE_GENERATION.into(), generation.to_string());
}

impl Strategy for DaemonSetStrategy {
    type Object = DaemonSet;

    fn warnings(&self, new: &DaemonSet, old: Option<&DaemonSet>) -> Vec<String> {
        // On update, only when the spec changed (its generation moved), as upstream.
        if old.is_some_and(|old| old.metadata.generation == new.metadata.generation) {
            return Vec::new();
        }
        crate::warnings::template_warnings(new.spec.as_ref().map(|s| &s.template), "spec.template.")
    }

    fn descriptor(&self) -> ResourceDescriptor {
        workload("DaemonSet", "daemonsets", &["ds"])
    }

    fn default(&self, ds: &mut DaemonSet) {
        let spec = ds.spec.get_or_insert_with(Default::default);
        let update = spec.update_strategy.get_or_insert_with(Default::default);
        let kind = update.type_.get_or_insert_with(|| "RollingUpdate".into());
        if kind == "RollingUpdate" {
            let rolling = update.rolling_update.get_or_insert_with(Default::default);
            rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
            rolling.max_surge.get_or_insert(IntOrString::Int(0));
        }
        spec.revision_history_limit.get_or_insert(10);
        default_template(&mut spec.template);
        // apps/v1 always carries the template generation (upstream's conversion writes it,
        // `0` until the server sets it): the writer's managedFields entry owns it.
        ds.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .entry(TEMPLATE_GENERATION.into())
            .or_insert_with(|| "0".into());
    }

    fn prepare_for_create(&self, ds: &mut DaemonSet) {
        ds.metadata.generation = Some(1);
        ds.status = Some(Default::default());
        // A generation the client gave is kept; the first is 1.
        let given = template_generation(ds);
        set_template_generation(ds, given.max(1));
    }

    fn prepare_for_update(&self, new: &mut DaemonSet, old: &DaemonSet) {
        bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
        // The template's generation is the server's: kept, and counted up when the
        // template changes.
        let before = template_generation(old);
        let template = |ds: &DaemonSet| ds.spec.as_ref().map(|s| s.template.clone());
        let changed = template(new) != template(old);
        set_template_generation(new, before + i64::from(changed));
    }

    fn validate(&self, ds: &DaemonSet) -> FieldErrors {
        let mut errs = Vec::new();
        let Some(spec) = &ds.spec else {
            return vec![FieldError::required("spec", "")];
        };
        validate_workload(
            "daemonset",
            Some(&spec.selector),
            Some(&spec.template),
            None,
            self.allow_privileged,
            &mut errs,
        );
        if let Some(update) = &spec.update_strategy {
            match update.type_.as_deref() {
                Some("OnDelete" | "RollingUpdate") | None => {}
                Some(other) => errs.push(FieldError::not_supported(
                    "spec.updateStrategy.type",
                    other,
                    &["OnDelete", "RollingUpdate"],
                )),
            }
            if let Some(rolling) = &update.rolling_update {
                validate_rolling(
                    &mut errs,
                    "spec.updateStrategy.rollingUpdate",
                    rolling.max_unavailable.as_ref(),
                    rolling.max_surge.as_ref(),
                );
            }
        }
        non_negative(
            &mut errs,
            "spec.revisionHistoryLimit",
            spec.revision_history_limit,
        );
        non_negative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
        errs
    }

    fn validate_update(&self, new: &DaemonSet, old: &DaemonSet) -> FieldErrors {
        let mut errs = self.validate(new);
        selector_unchanged(
            &mut errs,
            new.spec.as_ref().map(|s| &s.selector),
            old.spec.as_ref().map(|s| &s.selector),
        );
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut DaemonSet, from: &DaemonSet) {
        to.status = from.status.clone();
    }
}

/// The strategy of ControllerRevision: a revision number and data, the data fixed.
#[derive(Debug, Default, Clone, Copy)]
pub struct ControllerRevisionStrategy;

impl Strategy for ControllerRevisionStrategy {
    type Object = ControllerRevision;

    fn descriptor(&self) -> ResourceDescriptor {
        names("ControllerRevision", "controllerrevisions", &[]).v1()
    }

    fn validate(&self, rev: &ControllerRevision) -> FieldErrors {
        let mut errs = Vec::new();
        if rev.revision < 0 {
            errs.push(FieldError::negative("revision", rev.revision));
        }
        errs
    }

    fn validate_update(&self, new: &ControllerRevision, old: &ControllerRevision) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.data != old.data {
            errs.push(FieldError::invalid("data", "", "field is immutable"));
        }
        errs
    }
}

/// The replicas of a workload's spec and status, and its selector, as its `scale`
/// subresource shows them.
pub trait Scalable: Send + Sync + 'static {
    /// `spec.replicas`.
    fn desired(&self) -> i32;
    /// Sets `spec.replicas`.
    fn set_desired(&mut self, replicas: i32);
    /// `status.replicas`.
    fn current(&self) -> i32;
    /// The selector, as text.
    fn selector(&self) -> String;
}

macro_rules! scalable {
    ($t:ty, $selector:expr) => {
        impl Scalable for $t {
            fn desired(&self) -> i32 {
                self.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
            }
            fn set_desired(&mut self, replicas: i32) {
                self.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
            }
            fn current(&self) -> i32 {
                self.status
                    .as_ref()
                    .and_then(|s| Option::<i32>::from(s.replicas))
                    .unwrap_or(0)
            }
            fn selector(&self) -> String {
                let get: fn(&$t) -> Option<&LabelSelector> = $selector;
                get(self).map(selector_text).unwrap_or_default()
            }
        }
    };
}

scalable!(Deployment, |d| d.spec.as_ref().map(|s| &s.selector));
scalable!(ReplicaSet, |r| r.spec.as_ref().map(|s| &s.selector));
scalable!(StatefulSet, |s| s.spec.as_ref().map(|s| &s.selector));

#[cfg(test)]
mod tests {
    use super::*;

    const STRATEGY: DeploymentStrategy = DeploymentStrategy {
        allow_privileged: false,
    };

    fn deployment(v: serde_json::Value) -> Deployment {
        let mut d: Deployment = serde_json::from_value(v).unwrap();
        STRATEGY.default(&mut d);
        d
    }

    fn fields(errs: FieldErrors) -> Vec<String> {
        errs.into_iter().map(|e| e.field).collect()
    }

    fn web() -> serde_json::Value {
        json!({"metadata": {"name": "web"}, "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    }

    #[test]
    fn deployments_default_as_upstream() {
        let d = deployment(web());
        let spec = d.spec.unwrap();
        assert_eq!(spec.replicas, Some(1));
        let rolling = spec.strategy.unwrap().rolling_update.unwrap();
        assert_eq!(rolling.max_surge, Some(percent("25%")));
        assert_eq!(spec.revision_history_limit, Some(10));
        assert_eq!(spec.progress_deadline_seconds, Some(600));
        let pod = spec.template.spec.unwrap();
        assert_eq!(pod.restart_policy.as_deref(), Some("Always"));
        assert_eq!(
            pod.containers[0].termination_message_path.as_deref(),
            Some("/dev/termination-log")
        );
    }

    #[test]
    fn selectors_match_templates_and_never_change() {
        let mut v = web();
        v["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"});
        v["spec"]["template"]["spec"]["containers"][0]["image"] = json!("");
        v["spec"]["replicas"] = json!(-1);
        let errs = fields(STRATEGY.validate(&deployment(v)));
        assert_eq!(
            errs,
            [
                "spec.template.metadata.labels",
                "spec.template.spec.containers[0].image",
                "spec.replicas"
            ]
        );
        let old = deployment(web());
        let mut v = web();
        v["spec"]["selector"] = json!({"matchLabels": {"app": "web", "tier": "x"}});
        v["spec"]["template"]["metadata"]["labels"] = json!({"app": "web", "tier": "x"});
        assert_eq!(
            fields(STRATEGY.validate_update(&deployment(v), &old)),
            ["spec.selector"]
        );
    }

    #[test]
    fn generation_follows_the_spec() {
        let mut old = deployment(web());
        STRATEGY.prepare_for_create(&mut old);
        let mut same = old.clone();
        STRATEGY.prepare_for_update(&mut same, &old);
        assert_eq!(same.metadata.generation, Some(1));
        let mut changed = old.clone();
        changed.spec.as_mut().unwrap().replicas = Some(3);
        STRATEGY.prepare_for_update(&mut changed, &old);
        assert_eq!(changed.metadata.generation, Some(2));
    }

    #[test]
    fn selectors_print_as_text() {
        let s: LabelSelector = serde_json::from_value(json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]},
                                 {"key": "x", "operator": "DoesNotExist"}]}))
        .unwrap();
        assert_eq!(selector_text(&s), "app=web,tier in (a,b),!x");
    }
}
