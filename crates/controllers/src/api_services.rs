//! APIServices (upstream's autoregister, crd-registration and availability controllers):
//!
//! - one `Local` APIService for every group version this server serves, with upstream's
//!   priorities; built-in ones labelled `kube-aggregator.kubernetes.io/automanaged: onstart`,
//!   custom resources' `true`. An automanaged APIService whose group version is no longer
//!   served (a deleted CRD's) is deleted.
//! - each APIService's `Available` condition: `Local` ones are always available; a
//!   service-backed one is checked by a [`Probe`] (the server's aggregator: the Service, its
//!   endpoints, a discovery request to the backend) when it changes and every
//!   [`RECHECK`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use capstan_meta::Reason;
use capstan_registry::builtin::write_each;
use capstan_registry::options::GetOptions;
use capstan_registry::{Error, ListOptions, RestStorage, WriteOptions};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::{
    APIService, APIServiceCondition, APIServiceSpec, APIServiceStatus,
};
use tokio::sync::mpsc;
use tracing::{debug, warn};

use crate::watching::{Seen, follow};

/// The label upstream puts on the APIServices it keeps.
pub const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";

/// How often service-backed APIServices are checked when nothing changes.
pub const RECHECK: Duration = Duration::from_secs(30);

/// The group and version priorities of the built-in group versions (upstream's table, by
/// `kube-apiserver`'s aggregator); versions not listed get the group's priority and 15.
fn builtin_priorities(group: &str, version: &str) -> (i32, i32) {
    let group_priority = match group {
        "" => 18000,
        "apps" => 17800,
        "events.k8s.io" => 17750,
        "authentication.k8s.io" => 17700,
        "authorization.k8s.io" => 17600,
        "autoscaling" => 17500,
        "batch" => 17400,
        "certificates.k8s.io" => 17300,
        "networking.k8s.io" => 17200,
        "policy" => 17100,
        "rbac.authorization.k8s.io" => 17000,
        "storage.k8s.io" => 16800,
        "apiextensions.k8s.io" | "admissionregistration.k8s.io" => 16700,
        "scheduling.k8s.io" => 16600,
        "coordination.k8s.io" => 16500,
        "node.k8s.io" => 16300,
        "discovery.k8s.io" | "resource.k8s.io" => 16200,
        "flowcontrol.apiserver.k8s.io" => 16100,
        "internal.apiserver.k8s.io" => 16000,
        "storagemigration.k8s.io" => 15800,
        _ => 15000,
    };
    let version_priority = match (group, version) {
        ("", "v1") => 1,
        ("autoscaling", "v2") => 30,
        ("flowcontrol.apiserver.k8s.io" | "resource.k8s.io", "v1") => 21,
        ("admissionregistration.k8s.io", "v1beta1") => 12,
        (_, v) if v.contains("alpha") => 1,
        (_, v) if v.contains("beta") => 9,
        _ => 15,
    };
    (group_priority, version_priority)
}

/// The `Local` APIService of `group`/`version`: a built-in one, or a custom resource's
/// (`custom`), which upstream ranks low (1000, 100).
pub fn local_api_service(group: &str, version: &str, custom: bool) -> APIService {
    let (group_priority, version_priority) = if custom {
        (1000, 100)
    } else {
        builtin_priorities(group, version)
    };
    let managed = if custom { "true" } else { "onstart" };
    APIService {
        metadata: ObjectMeta {
            name: Some(capstan_api::apiregistration::api_service_name(
                group, version,
            )),
            labels: Some(BTreeMap::from([(AUTOMANAGED.into(), managed.into())])),
            ..Default::default()
        },
        spec: Some(APIServiceSpec {
            group: (!group.is_empty()).then(|| group.to_string()),
            version: Some(version.to_string()),
            group_priority_minimum: group_priority,
            version_priority,
            ..Default::default()
        }),
        status: None,
    }
}

/// Makes the automanaged APIServices in `store` exactly `wanted` (group, version, whether a
/// custom resource's): missing ones created, changed ones put back, the others deleted.
/// APIServices without the label are the users' and left alone, even for a served group
/// version.
pub async fn sync_local(
    store: &dyn RestStorage,
    wanted: &[(String, String, bool)],
) -> Result<(), Error> {
    let options = WriteOptions::server();
    let listed = store.list("", &ListOptions::default()).await?;
    let listed: serde_json::Value =
        serde_json::from_slice(&listed.body.into_bytes()).map_err(Error::Encode)?;
    let existing: Vec<APIService> =
        serde_json::from_value(listed["items"].clone()).map_err(Error::Encode)?;
    let by_name: BTreeMap<String, &APIService> = existing
        .iter()
        .map(|a| (a.metadata.name.clone().unwrap_or_default(), a))
        .collect();
    let wanted: Vec<APIService> = wanted
        .iter()
        .map(|(group, version, custom)| local_api_service(group, version, *custom))
        .collect();
    let keep: std::collections::BTreeSet<String> = wanted
        .iter()
        .map(|want| want.metadata.name.clone().unwrap_or_default())
        .collect();
    let (by_name, options) = (&by_name, &options);
    write_each(wanted, |want| async move {
        let name = want.metadata.name.clone().unwrap_or_default();
        let Some(current) = by_name.get(&name) else {
            let body = serde_json::to_vec(&want).map_err(Error::Encode)?;
            return match store.create("", &body, options).await {
                Ok(_) => Ok(()),
                Err(Error::Api(e)) if e.reason == Reason::AlreadyExists => Ok(()),
                Err(e) => Err(e),
            };
        };
        let label = current
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(AUTOMANAGED));
        let wanted_label = want
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(AUTOMANAGED));
        // A user's own APIService for a served group version wins (upstream leaves an
        // unlabelled one alone).
        if label.is_none() || (label == wanted_label && current.spec == want.spec) {
            return Ok(());
        }
        let mut replaced = (*current).clone();
        replaced.spec = want.spec;
        replaced
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .extend(want.metadata.labels.unwrap_or_default());
        let body = serde_json::to_vec(&replaced).map_err(Error::Encode)?;
        store.update("", &name, &body, options).await.map(drop)
    })
    .await?;
    for (name, current) in by_name {
        let managed = current
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(AUTOMANAGED));
        if managed && !keep.contains(name) {
            match store
                .delete("", name, &capstan_registry::DeleteOptions::default())
                .await
            {
                Ok(_) => {}
                Err(Error::Api(e)) if e.reason == Reason::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

pub use capstan_control::{Availability, Probe};

/// The availability an APIService has now: `Local` ones without asking.
async fn availability(probe: &dyn Probe, api_service: &APIService) -> Availability {
    let local = api_service
        .spec
        .as_ref()
        .is_none_or(|s| s.service.is_none());
    if local {
        return Availability::available("Local", "Local APIServices are always available");
    }
    probe.check(api_service).await
}

/// `api_service`'s status with its `Available` condition saying `now`; none when it already
/// does (the transition time moves only when the status changes).
fn with_condition(api_service: &APIService, now: &Availability) -> Option<APIService> {
    let status = if now.available { "True" } else { "False" };
    let conditions = api_service
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let current = conditions.iter().find(|c| c.type_ == "Available");
    if let Some(c) = current
        && c.status == status
        && c.reason.as_deref() == Some(now.reason.as_str())
        && c.message.as_deref() == Some(now.message.as_str())
    {
        return None;
    }
    let transition = match current {
        Some(c) if c.status == status => c.last_transition_time.clone(),
        _ => Some(capstan_meta::time::now()),
    };
    let condition = APIServiceCondition {
        type_: "Available".into(),
        status: status.into(),
        reason: Some(now.reason.clone()),
        message: Some(now.message.clone()),
        last_transition_time: transition,
    };
    let mut conditions: Vec<APIServiceCondition> = conditions
        .into_iter()
        .filter(|c| c.type_ != "Available")
        .collect();
    conditions.push(condition);
    let mut updated = api_service.clone();
    updated.status = Some(APIServiceStatus {
        conditions: Some(conditions),
    });
    Some(updated)
}

/// Writes `api_service`'s availability to its status when it changed; the status written.
async fn record(
    status_store: &dyn RestStorage,
    api_service: &APIService,
    now: &Availability,
) -> Result<(), Error> {
    let Some(updated) = with_condition(api_service, now) else {
        return Ok(());
    };
    let name = updated.metadata.name.clone().unwrap_or_default();
    let body = serde_json::to_vec(&updated).map_err(Error::Encode)?;
    match status_store
        .update("", &name, &body, &WriteOptions::server())
        .await
    {
        Ok(_) => Ok(()),
        // Changed or gone since it was read: the watch brings the new one.
        Err(Error::Api(e)) if matches!(e.reason, Reason::Conflict | Reason::NotFound) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Keeps every APIService's `Available` condition: follows `api_services`, writes through
/// `status_store` (`apiservices/status`), tells `probe` of every APIService (the aggregator's
/// routes follow them) and asks it about service-backed ones.
pub async fn keep_available(
    api_services: Arc<dyn RestStorage>,
    status_store: Arc<dyn RestStorage>,
    probe: Arc<dyn Probe>,
) {
    let (tx, mut events) = mpsc::channel::<Seen<APIService>>(256);
    // Owned here, so that stopping this controller stops the follower (and lets the store go).
    let mut follower = tokio::task::JoinSet::new();
    follower.spawn(follow::<APIService>(api_services, tx));
    let mut known: BTreeMap<String, (u64, APIService)> = BTreeMap::new();
    let mut recheck = tokio::time::interval(RECHECK);
    recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            seen = events.recv() => {
                let Some(seen) = seen else { return };
                if seen.listed {
                    known.retain(|name, (generation, _)| {
                        let kept = *generation >= seen.generation;
                        if !kept {
                            probe.gone(name);
                        }
                        kept
                    });
                    continue;
                }
                let name = seen.object.metadata.name.clone().unwrap_or_default();
                if seen.deleted {
                    known.remove(&name);
                    probe.gone(&name);
                    continue;
                }
                probe.seen(&seen.object);
                let now = availability(&*probe, &seen.object).await;
                if let Err(e) = record(&*status_store, &seen.object, &now).await {
                    warn!(apiservice = %name, error = %e, "could not record availability");
                }
                known.insert(name, (seen.generation, seen.object));
            }
            _ = recheck.tick() => {
                for (name, (_, api_service)) in &known {
                    if api_service.spec.as_ref().is_none_or(|s| s.service.is_none()) {
                        continue;
                    }
                    let fresh = match status_store.get("", name, &GetOptions::default()).await {
                        Ok(found) => serde_json::from_slice::<APIService>(&found.body.into_bytes()).ok(),
                        Err(_) => None,
                    };
                    let Some(fresh) = fresh else { continue };
                    let now = availability(&*probe, &fresh).await;
                    debug!(apiservice = %name, available = now.available, "rechecked");
                    if let Err(e) = record(&*status_store, &fresh, &now).await {
                        warn!(apiservice = %name, error = %e, "could not record availability");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_api_services_carry_upstream_priorities_and_labels() {
        let core = local_api_service("", "v1", false);
        assert_eq!(core.metadata.name.as_deref(), Some("v1."));
        let spec = core.spec.unwrap();
        assert_eq!(
            (spec.group_priority_minimum, spec.version_priority),
            (18000, 1)
        );
        assert_eq!(spec.group, None);
        let custom = local_api_service("stable.example.com", "v1", true);
        let labels = custom.metadata.labels.unwrap();
        assert_eq!(labels[AUTOMANAGED], "true");
        let spec = custom.spec.unwrap();
        assert_eq!(
            (spec.group_priority_minimum, spec.version_priority),
            (1000, 100)
        );
    }

    #[test]
    fn the_condition_changes_only_when_availability_does() {
        let api_service = local_api_service("apps", "v1", false);
        let up = Availability::available("Local", "Local APIServices are always available");
        let written = with_condition(&api_service, &up).expect("a first condition");
        assert!(with_condition(&written, &up).is_none());
        let down = Availability::unavailable("ServiceNotFound", "gone");
        let failed = with_condition(&written, &down).expect("a change");
        let c = &failed.status.unwrap().conditions.unwrap()[0];
        assert_eq!(
            (c.status.as_str(), c.reason.as_deref()),
            ("False", Some("ServiceNotFound"))
        );
    }
}
