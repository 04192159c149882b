//! Leader election on a Lease, as client-go does it: a candidate takes the lease when nobody
//! holds it or when its holder has not renewed it within the lease duration (measured on the
//! candidate's own clock, from when it last saw the lease change), then renews it every retry
//! period; a leader that cannot renew within the renew deadline has lost the lease.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

use crate::client::Client;
use crate::error::Result;

/// Where the lease lives and how it is held.
#[derive(Debug, Clone)]
pub struct LeaderElection {
    /// The lease's namespace (`kube-system`).
    pub namespace: String,
    /// The lease's name (`kube-scheduler`).
    pub name: String,
    /// This candidate's identity (unique per process).
    pub identity: String,
    /// How long others wait after the last renewal before taking over.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up.
    pub renew_deadline: Duration,
    /// The wait between attempts.
    pub retry_period: Duration,
}

/// A candidate for the lease.
pub struct LeaderElector {
    client: Client,
    config: LeaderElection,
    /// The holder and renew time last seen, and when they were seen.
    observed: Option<(String, Option<MicroTime>, Instant)>,
}

impl LeaderElector {
    /// A candidate using `client`.
    pub fn new(client: Client, config: LeaderElection) -> Self {
        Self {
            client,
            config,
            observed: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LeaderElection {
        &self.config
    }

    /// Waits until this candidate holds the lease.
    pub async fn acquire(&mut self) {
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "leader election: the lease is unreachable"),
            }
            tokio::time::sleep(self.config.retry_period).await;
        }
    }

    /// Renews the lease every retry period; returns when a renewal has not succeeded for the
    /// renew deadline (leadership is lost).
    pub async fn hold(&mut self) {
        let mut last_renewal = Instant::now();
        loop {
            tokio::time::sleep(self.config.retry_period).await;
            match self.try_acquire_or_renew().await {
                Ok(true) => last_renewal = Instant::now(),
                Ok(false) => return,
                Err(e) => tracing::warn!(error = %e, "leader election: renewing failed"),
            }
            if last_renewal.elapsed() > self.config.renew_deadline {
                return;
            }
        }
    }

    /// One attempt: true when this candidate holds the lease afterwards.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool> {
        let ns = Some(self.config.namespace.as_str());
        let now = MicroTime(jiff::Timestamp::now());
        let me = self.config.identity.clone();
        let duration = i32::try_from(self.config.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let current = match self.client.get::<Lease>(ns, &self.config.name).await {
            Ok(lease) => lease,
            Err(e) if e.code() == Some(404) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.config.name.clone()),
                        namespace: Some(self.config.namespace.clone()),
                        ..Default::default()
                    },
                    spec: Some(LeaseSpec {
                        holder_identity: Some(me),
                        lease_duration_seconds: Some(duration),
                        acquire_time: Some(now.clone()),
                        renew_time: Some(now),
                        lease_transitions: Some(0),
                        ..Default::default()
                    }),
                };
                return match self.client.create(ns, &lease).await {
                    Ok(_) => Ok(true),
                    Err(e) if e.code() == Some(409) => Ok(false),
                    Err(e) => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        let spec = current.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let seen = (holder.clone(), spec.renew_time.clone());
        let changed = self
            .observed
            .as_ref()
            .is_none_or(|(h, r, _)| (h, r) != (&seen.0, &seen.1));
        if changed {
            self.observed = Some((seen.0, seen.1, Instant::now()));
        }
        let observed_at = self.observed.as_ref().map_or_else(Instant::now, |o| o.2);
        let held_by_other = !holder.is_empty() && holder != me;
        let their_duration = spec
            .lease_duration_seconds
            .map_or(self.config.lease_duration, |s| {
                Duration::from_secs(s.max(0) as u64)
            });
        if held_by_other && observed_at.elapsed() < their_duration {
            return Ok(false);
        }
        let mut lease = current;
        let spec = lease.spec.get_or_insert_with(Default::default);
        if holder != me {
            spec.holder_identity = Some(me);
            spec.acquire_time = Some(now.clone());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.lease_duration_seconds = Some(duration);
        spec.renew_time = Some(now);
        match self.client.replace(ns, &self.config.name, &lease).await {
            Ok(_) => Ok(true),
            Err(e) if e.code() == Some(409) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
