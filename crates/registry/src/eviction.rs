//! `pods/eviction`: a delete that honours the PodDisruptionBudget covering the pod, as
//! upstream's eviction subresource does. A healthy pod is only evicted while its budget allows
//! a disruption, which the eviction takes (`status.disruptionsAllowed` decremented, the pod
//! recorded in `status.disruptedPods`) before the pod is marked with a `DisruptionTarget`
//! condition and deleted. Pods that already disrupt nothing (pending, finished or being
//! deleted) are deleted without looking at budgets.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_api::PodDisruptionBudgetStrategy;
use capstan_meta::labels::LabelSelector;
use capstan_meta::resource::Strategy;
use capstan_meta::v1::{StatusCause, StatusDetails};
use capstan_meta::{ApiError, GroupResource, Reason, ResourceDescriptor};
use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::api::policy::v1::{Eviction, PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::generic::GenericStore;
use crate::options::{DeleteOptions, GetOptions, ListOptions, WriteOptions};
use crate::rest::{Encoded, RestStorage};

/// How many evictions a budget may have approved that its controller has not yet seen.
pub const MAX_DISRUPTED_PODS: usize = 2000;
/// Tries of one eviction that loses races with other writes to the pod.
const EVICTION_RETRIES: usize = 20;

/// `pods/eviction`.
pub struct EvictionRest<S: Strategy<Object = Pod>> {
    pods: Arc<GenericStore<S>>,
    budgets: Arc<GenericStore<PodDisruptionBudgetStrategy>>,
    descriptor: ResourceDescriptor,
}

/// Why a pod may be deleted without a budget's consent.
fn disrupts_nothing(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    matches!(phase, Some("Succeeded" | "Failed" | "Pending"))
        || pod.metadata.deletion_timestamp.is_some()
}

/// Whether a delete must name the pod's resourceVersion so that it does not race the pod
/// becoming ready: every pod but finished or deleting ones.
fn needs_version_guard(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    !matches!(phase, Some("Succeeded" | "Failed")) && pod.metadata.deletion_timestamp.is_none()
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn budget_cause(message: String) -> Option<Box<StatusDetails>> {
    Some(Box::new(StatusDetails {
        causes: Some(vec![StatusCause {
            reason: Some("DisruptionBudget".into()),
            message: Some(message),
            field: None,
        }]),
        ..Default::default()
    }))
}

/// The 429 of a budget that allows no disruption now.
fn budget_exhausted(retry_after: i32, cause: String) -> Error {
    let mut err = ApiError::new(
        Reason::TooManyRequests,
        "Cannot evict pod as it would violate the pod's disruption budget.",
    );
    err.details = budget_cause(cause);
    err.retry_after_seconds = (retry_after > 0).then_some(retry_after);
    err.into()
}

fn still_processing(budget: &str) -> Error {
    budget_exhausted(
        10,
        format!("The disruption budget {budget} is still being processed by the server."),
    )
}

/// Takes one disruption from `budget` (a 429 or 403 when it has none to give), as upstream's
/// check-and-decrement.
fn take_disruption(budget: &mut PodDisruptionBudget, pod: &str) -> Result<()> {
    let name = budget.metadata.name.clone().unwrap_or_default();
    let generation = budget.metadata.generation.unwrap_or(0);
    let status = budget.status.get_or_insert_with(Default::default);
    if status.observed_generation.unwrap_or(0) < generation {
        return Err(still_processing(&name));
    }
    let gr = GroupResource::new("policy", "poddisruptionbudget");
    let allowed = status.disruptions_allowed.unwrap_or(0);
    if allowed < 0 {
        return Err(
            ApiError::forbidden_because(&gr, &name, "pdb disruptions allowed is negative").into(),
        );
    }
    if status.disrupted_pods.as_ref().map_or(0, |d| d.len()) > MAX_DISRUPTED_PODS {
        return Err(ApiError::forbidden_because(
            &gr,
            &name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        )
        .into());
    }
    if allowed == 0 {
        return Err(budget_exhausted(
            0,
            format!(
                "The disruption budget {name} needs {} healthy pods and has {} currently",
                status.desired_healthy.unwrap_or(0),
                status.current_healthy.unwrap_or(0)
            ),
        ));
    }
    status.disruptions_allowed = Some(allowed - 1);
    if allowed == 1 {
        set_disruption_allowed(status, generation);
    }
    status
        .disrupted_pods
        .get_or_insert_with(Default::default)
        .insert(pod.to_string(), capstan_meta::time::now());
    Ok(())
}

/// The `DisruptionAllowed` condition of a budget left with no disruptions (its transition
/// time kept when it already said so).
fn set_disruption_allowed(status: &mut PodDisruptionBudgetStatus, generation: i64) {
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let since = conditions
        .iter()
        .find(|c| c.type_ == "DisruptionAllowed" && c.status == "False")
        .map(|c| c.last_transition_time.clone());
    conditions.retain(|c| c.type_ != "DisruptionAllowed");
    conditions.push(Condition {
        type_: "DisruptionAllowed".into(),
        status: "False".into(),
        reason: "InsufficientPods".into(),
        message: String::new(),
        observed_generation: Some(generation),
        last_transition_time: since.unwrap_or_else(capstan_meta::time::now),
    });
}

/// The dry-run of an eviction: the request's and the body's must agree, as upstream.
fn merged_dry_run(eviction: &Eviction, query: bool) -> Result<bool> {
    let body = eviction
        .delete_options
        .as_ref()
        .and_then(|o| o.dry_run.clone())
        .unwrap_or_default();
    if body.is_empty() || !query {
        return Ok(query || body.iter().any(|d| d == "All"));
    }
    if body != ["All"] {
        return Err(ApiError::bad_request(format!(
            "Non-matching dry-run options in request and content: [All] and [{}]",
            body.join(" ")
        ))
        .into());
    }
    Ok(true)
}

impl<S: Strategy<Object = Pod>> EvictionRest<S> {
    /// The eviction subresource of `pods`, judged by the budgets in `budgets`.
    pub fn new(
        pods: Arc<GenericStore<S>>,
        budgets: Arc<GenericStore<PodDisruptionBudgetStrategy>>,
    ) -> Self {
        let mut descriptor = pods
            .descriptor()
            .subresource("eviction", "Eviction", &["create"]);
        descriptor.response_group_version = Some(("policy".into(), "v1".into()));
        Self {
            pods,
            budgets,
            descriptor,
        }
    }

    async fn pod(&self, namespace: &str, name: &str) -> Result<Pod> {
        let found = self
            .pods
            .get(namespace, name, &GetOptions::default())
            .await?;
        serde_json::from_slice(&found.body.into_bytes()).map_err(Error::Encode)
    }

    /// The budgets whose (non-empty, valid) selector matches the pod.
    async fn budgets_of(&self, pod: &Pod) -> Result<Vec<PodDisruptionBudget>> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let list = self
            .budgets
            .list(namespace, &ListOptions::default())
            .await?;
        let list: Value = serde_json::from_slice(&list.body.into_bytes()).map_err(Error::Encode)?;
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let mut out = Vec::new();
        for item in items {
            let budget: PodDisruptionBudget =
                crate::codec::from_document(&item).map_err(Error::Encode)?;
            let Some(selector) = budget.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
                continue;
            };
            let Ok(selector) = LabelSelector::from_api(selector) else {
                continue;
            };
            if !selector.is_empty() && selector.matches(pod.metadata.labels.as_ref()) {
                out.push(budget);
            }
        }
        Ok(out)
    }

    /// Marks the pod as a disruption target, then deletes it. The delete's resourceVersion
    /// guard, when there is one, moves to the version the mark wrote.
    async fn mark_and_delete(
        &self,
        namespace: &str,
        name: &str,
        mut options: DeleteOptions,
    ) -> Result<()> {
        if !options.dry_run {
            let guard = options.precondition_resource_version.clone();
            let uid = options.precondition_uid.clone();
            let gr = GroupResource::new("", "Pod");
            let marked = self
                .pods
                .update_with(namespace, name, false, |pod| {
                    if let Some(uid) = uid.as_deref().filter(|u| !u.is_empty())
                        && pod.metadata.uid.as_deref() != Some(uid)
                    {
                        return Err(ApiError::conflict(
                            &gr,
                            name,
                            &format!(
                                "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                                pod.metadata.uid.as_deref().unwrap_or_default()
                            ),
                        )
                        .into());
                    }
                    if let Some(rv) = guard.as_deref().filter(|v| !v.is_empty())
                        && pod.metadata.resource_version.as_deref() != Some(rv)
                    {
                        return Err(ApiError::conflict(
                            &gr,
                            name,
                            &format!(
                                "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                                pod.metadata.resource_version.as_deref().unwrap_or_default()
                            ),
                        )
                        .into());
                    }
                    mark_disruption_target(pod);
                    Ok(())
                })
                .await?;
            if guard.is_some() {
                options.precondition_resource_version = marked.metadata.resource_version;
            }
        }
        self.pods.delete(namespace, name, &options).await?;
        Ok(())
    }

    async fn evict(
        &self,
        namespace: &str,
        eviction: Eviction,
        options: &WriteOptions,
    ) -> Result<()> {
        let name = eviction.metadata.name.clone().unwrap_or_default();
        let dry_run = merged_dry_run(&eviction, options.dry_run)?;
        let requested = eviction.delete_options.clone().unwrap_or_default();
        let preconditions = requested.preconditions.clone().unwrap_or_default();
        let base = DeleteOptions {
            dry_run,
            precondition_uid: preconditions.uid.clone(),
            precondition_resource_version: preconditions.resource_version.clone(),
            grace_period_seconds: requested.grace_period_seconds,
            propagation_policy: requested.propagation_policy.clone(),
            orphan_dependents: requested.orphan_dependents,
            user: options.user.clone(),
            feedback: options.feedback.clone(),
            served_as: None,
        };
        let version_given = base.precondition_resource_version.is_some();

        // Pods that disrupt nothing go at once (retrying lost races unless the client named
        // a resourceVersion itself).
        let mut pod = None;
        for attempt in 0..EVICTION_RETRIES {
            let current = self.pod(namespace, &name).await?;
            if !disrupts_nothing(&current) {
                pod = Some(current);
                break;
            }
            let mut delete = base.clone();
            if needs_version_guard(&current) && !version_given {
                delete.precondition_resource_version = current.metadata.resource_version.clone();
            }
            match self.mark_and_delete(namespace, &name, delete).await {
                Err(Error::Api(e))
                    if e.reason == Reason::Conflict
                        && !version_given
                        && attempt + 1 < EVICTION_RETRIES => {}
                other => return other,
            }
        }
        let Some(pod) = pod else {
            return Err(ApiError::conflict(
                &GroupResource::new("", "pods"),
                &name,
                ApiError::MODIFIED,
            )
            .into());
        };

        let budgets = self.budgets_of(&pod).await?;
        if budgets.len() > 1 {
            let mut err = ApiError::new(
                Reason::Unknown,
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            );
            err.status_code = Some(500);
            return Err(err.into());
        }
        let mut guard_version = false;
        if let Some(budget) = budgets.into_iter().next() {
            let budget_name = budget.metadata.name.clone().unwrap_or_default();
            let spec = budget.spec.clone().unwrap_or_default();
            let status = budget.status.clone().unwrap_or_default();
            let unhealthy_goes = !is_ready(&pod)
                && (spec.unhealthy_pod_eviction_policy.as_deref() == Some("AlwaysAllow")
                    || (status.current_healthy.unwrap_or(0)
                        >= status.desired_healthy.unwrap_or(0)
                        && status.desired_healthy.unwrap_or(0) > 0));
            if unhealthy_goes {
                // An unready pod does not count as healthy: deleting it disrupts nothing,
                // unless it becomes ready first (the resourceVersion guard).
                guard_version = true;
            } else {
                let pod_name = name.clone();
                let taken = self
                    .budgets
                    .update_with(namespace, &budget_name, dry_run, |b| {
                        take_disruption(b, &pod_name)
                    })
                    .await;
                match taken {
                    Ok(_) => {}
                    Err(Error::Api(e)) if e.reason == Reason::Conflict => {
                        return Err(ApiError::new(
                            Reason::Timeout,
                            format!(
                                "Timeout: couldn't update PodDisruptionBudget \"{budget_name}\" due to conflicts"
                            ),
                        )
                        .into());
                    }
                    Err(e) => return Err(e),
                }
            }
            let mut delete = base.clone();
            if guard_version && !version_given {
                delete.precondition_resource_version = pod.metadata.resource_version.clone();
            }
            return match self.mark_and_delete(namespace, &name, delete).await {
                Err(Error::Api(e))
                    if e.reason == Reason::Conflict && guard_version && !version_given =>
                {
                    Err(still_processing(&budget_name))
                }
                other => other,
            };
        }
        self.mark_and_delete(namespace, &name, base).await
    }
}

/// Adds (or sets) the pod's `DisruptionTarget` condition, as an eviction leaves it.
fn mark_disruption_target(pod: &mut Pod) {
    let status = pod.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let now = capstan_meta::time::now();
    match conditions
        .iter_mut()
        .find(|c| c.type_ == "DisruptionTarget")
    {
        Some(c) => {
            if c.status != "True" {
                c.last_transition_time = Some(now);
            }
            c.status = "True".into();
            c.reason = Some("EvictionByEvictionAPI".into());
            c.message = Some("Eviction API: evicting".into());
        }
        None => conditions.push(PodCondition {
            type_: "DisruptionTarget".into(),
            status: "True".into(),
            reason: Some("EvictionByEvictionAPI".into()),
            message: Some("Eviction API: evicting".into()),
            last_transition_time: Some(now),
            ..Default::default()
        }),
    }
}

#[async_trait]
impl<S> RestStorage for EvictionRest<S>
where
    S: Strategy<Object = Pod>,
{
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<Eviction>()
    }

    async fn create_for(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let doc: Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("the request body is not a valid JSON object: {e}"))
        })?;
        match doc["apiVersion"].as_str() {
            None | Some("" | "policy/v1" | "policy/v1beta1") => {}
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({other}) does not match the expected API version (policy/v1)"
                ))
                .into());
            }
        }
        if let Some(kind) = doc["kind"]
            .as_str()
            .filter(|k| !k.is_empty() && *k != "Eviction")
        {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind (Eviction)"
            ))
            .into());
        }
        // From the client's bytes: an error's line and column point into its body.
        let eviction: Eviction = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "Eviction in version \"v1\" cannot be handled as a Eviction: {e}"
            ))
        })?;
        if eviction.metadata.name.as_deref() != Some(name) {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object",
            )
            .into());
        }
        let eviction = self
            .pods
            .admit_subresource(
                "eviction",
                "Eviction",
                Some(("policy", "v1")),
                namespace,
                name,
                eviction,
                options,
            )
            .await?;
        self.evict(namespace, eviction, options).await?;
        Encoded::created_success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn budget(status: Value) -> PodDisruptionBudget {
        serde_json::from_value(json!({"metadata": {"name": "web", "generation": 1},
            "spec": {"minAvailable": 2}, "status": status}))
        .unwrap()
    }

    #[test]
    fn a_disruption_is_taken_and_recorded() {
        let mut b = budget(json!({"observedGeneration": 1, "disruptionsAllowed": 1,
            "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3}));
        take_disruption(&mut b, "web-1").unwrap();
        let status = b.status.unwrap();
        assert_eq!(status.disruptions_allowed, Some(0));
        assert!(status.disrupted_pods.unwrap().contains_key("web-1"));
        let c = &status.conditions.unwrap()[0];
        assert_eq!(
            (c.type_.as_str(), c.status.as_str(), c.reason.as_str()),
            ("DisruptionAllowed", "False", "InsufficientPods")
        );
    }

    fn refusal(status: Value) -> ApiError {
        match take_disruption(&mut budget(status), "web-1") {
            Err(Error::Api(e)) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_exhausted_or_unprocessed_budget_refuses_with_upstream_messages() {
        let e = refusal(json!({"observedGeneration": 1, "disruptionsAllowed": 0,
            "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2}));
        assert_eq!(e.code(), 429);
        assert_eq!(e.retry_after_seconds, None);
        let cause = &e.details.unwrap().causes.unwrap()[0];
        assert_eq!(
            cause.message.as_deref(),
            Some("The disruption budget web needs 2 healthy pods and has 2 currently")
        );
        let e = refusal(json!({"observedGeneration": 0, "disruptionsAllowed": 5,
            "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2}));
        assert_eq!((e.code(), e.retry_after_seconds), (429, Some(10)));
        let e = refusal(json!({"observedGeneration": 1, "disruptionsAllowed": -1,
            "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2}));
        assert_eq!(e.code(), 403);
        assert_eq!(
            e.message,
            "poddisruptionbudget.policy \"web\" is forbidden: pdb disruptions allowed is negative"
        );
    }

    #[test]
    fn the_dry_runs_of_query_and_body_must_agree() {
        let with = |dry: Value| -> Eviction {
            serde_json::from_value(
                json!({"metadata": {"name": "p"}, "deleteOptions": {"dryRun": dry}}),
            )
            .unwrap()
        };
        assert!(merged_dry_run(&with(json!(["All"])), false).unwrap());
        assert!(merged_dry_run(&with(json!([])), true).unwrap());
        assert!(!merged_dry_run(&with(json!([])), false).unwrap());
        assert!(merged_dry_run(&with(json!(["Bogus"])), true).is_err());
    }
}
