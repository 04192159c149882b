//! Event expiry: core events are deleted `--event-ttl` after their last activity.
//!
//! Upstream attaches each event to an etcd lease renewed on every write; here a sweep over the
//! cached events deletes those whose latest timestamp (`lastTimestamp`, `eventTime`,
//! `series.lastObservedTime`, or creation) is older than the TTL.

use std::sync::Arc;
use std::time::Duration;

use capstan_api::EventStrategy;
use capstan_registry::{DeleteOptions, GenericStore, ListOptions, RestStorage};
use k8s_openapi::api::core::v1::Event;
use tracing::{debug, warn};

/// Most time between two sweeps.
const MAX_SWEEP_INTERVAL: Duration = Duration::from_secs(60);

pub(crate) async fn run(events: Arc<GenericStore<EventStrategy>>, ttl: Duration) {
    let interval = (ttl / 10).clamp(Duration::from_millis(100), MAX_SWEEP_INTERVAL);
    loop {
        tokio::time::sleep(interval).await;
        let removed = expire_events(&*events, ttl).await;
        if removed > 0 {
            debug!(removed, "expired events");
        }
    }
}

/// The latest activity an event records.
fn last_activity(ev: &Event) -> Option<jiff::Timestamp> {
    [
        ev.last_timestamp.as_ref().map(|t| t.0),
        ev.event_time.as_ref().map(|t| t.0),
        ev.series
            .as_ref()
            .and_then(|s| s.last_observed_time.as_ref())
            .map(|t| t.0),
        ev.metadata.creation_timestamp.as_ref().map(|t| t.0),
    ]
    .into_iter()
    .flatten()
    .max()
}

/// Deletes every event older than `ttl`; returns how many went.
pub async fn expire_events(events: &dyn RestStorage, ttl: Duration) -> usize {
    let listed = match events.list("", &ListOptions::default()).await {
        Ok(encoded) => encoded.body.into_bytes(),
        Err(err) => {
            warn!(%err, "event expiry: listing failed");
            return 0;
        }
    };
    #[derive(serde::Deserialize)]
    struct Items {
        items: Vec<Event>,
    }
    let Ok(list) = serde_json::from_slice::<Items>(&listed) else {
        return 0;
    };
    let Ok(ttl) = jiff::SignedDuration::try_from(ttl) else {
        return 0;
    };
    let cutoff = jiff::Timestamp::now() - ttl;
    let mut removed = 0;
    for ev in list.items {
        if last_activity(&ev).is_none_or(|last| last > cutoff) {
            continue;
        }
        let options = DeleteOptions {
            precondition_uid: ev.metadata.uid.clone(),
            ..Default::default()
        };
        let ns = ev.metadata.namespace.as_deref().unwrap_or("");
        let name = ev.metadata.name.as_deref().unwrap_or("");
        if events.delete(ns, name, &options).await.is_ok() {
            removed += 1;
        }
    }
    removed
}
