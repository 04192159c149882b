//! Leader election on a Lease (or, as the legacy locks did, on an annotation of a ConfigMap or
//! an Endpoints object, or on both during a migration), as client-go does it: a candidate takes the lease when nobody
//! holds it or when its holder has not renewed it within the lease duration (measured on the
//! candidate's own clock, from when it last saw the lease change), then renews it every retry
//! period; a leader that cannot renew within the renew deadline has lost the lease.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Endpoints};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use serde::{Deserialize, Serialize};

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
    /// The kind of object the lock lives in.
    pub lock: LockKind,
}

/// A candidate for the lease.
pub struct LeaderElector {
    client: Client,
    config: LeaderElection,
    /// The holder and renew time last seen, and when they were seen.
    observed: Option<(String, Option<jiff::Timestamp>, Instant)>,
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
        let now = jiff::Timestamp::now();
        let me = self.config.identity.clone();
        let duration = i32::try_from(self.config.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let (primary, secondary) = self.config.lock.parts();
        let Some((current, stored)) = self.get(primary).await? else {
            let record = LeaderRecord {
                holder_identity: me,
                lease_duration_seconds: duration,
                acquire_time: Some(now),
                renew_time: Some(now),
                leader_transitions: 0,
            };
            return match self.create(primary, &record).await {
                Ok(()) => {
                    if let Some(secondary) = secondary {
                        self.write_secondary(secondary, &record).await?;
                    }
                    Ok(true)
                }
                Err(e) if e.code() == Some(409) => Ok(false),
                Err(e) => Err(e),
            };
        };
        let seen = (current.holder_identity.clone(), current.renew_time);
        let changed = self
            .observed
            .as_ref()
            .is_none_or(|(h, r, _)| (h, r) != (&seen.0, &seen.1));
        if changed {
            self.observed = Some((seen.0, seen.1, Instant::now()));
        }
        let observed_at = self.observed.as_ref().map_or_else(Instant::now, |o| o.2);
        let held_by_other = !current.holder_identity.is_empty() && current.holder_identity != me;
        let their_duration = if current.lease_duration_seconds > 0 {
            Duration::from_secs(current.lease_duration_seconds as u64)
        } else {
            self.config.lease_duration
        };
        if held_by_other && observed_at.elapsed() < their_duration {
            return Ok(false);
        }
        let mut record = current.clone();
        if current.holder_identity != me {
            record.holder_identity = me;
            record.acquire_time = Some(now);
            record.leader_transitions += 1;
        }
        record.lease_duration_seconds = duration;
        record.renew_time = Some(now);
        match self.update(stored, &record).await {
            Ok(()) => {}
            Err(e) if e.code() == Some(409) => return Ok(false),
            Err(e) => return Err(e),
        }
        if let Some(secondary) = secondary {
            self.write_secondary(secondary, &record).await?;
        }
        Ok(true)
    }

    /// Brings the second object of a multi-lock in line with the record.
    async fn write_secondary(&self, kind: Single, record: &LeaderRecord) -> Result<()> {
        match self.get(kind).await? {
            Some((_, stored)) => self.update(stored, record).await,
            None => match self.create(kind, record).await {
                Err(e) if e.code() == Some(409) => Ok(()),
                other => other,
            },
        }
    }

    fn meta(&self) -> ObjectMeta {
        ObjectMeta {
            name: Some(self.config.name.clone()),
            namespace: Some(self.config.namespace.clone()),
            ..Default::default()
        }
    }

    async fn get(&self, kind: Single) -> Result<Option<(LeaderRecord, Stored)>> {
        let ns = Some(self.config.namespace.as_str());
        let name = self.config.name.as_str();
        let found = match kind {
            Single::Lease => self.client.get::<Lease>(ns, name).await.map(|lease| {
                let record = LeaderRecord::from_lease(lease.spec.as_ref());
                (record, Stored::Lease(lease))
            }),
            Single::ConfigMap => self.client.get::<ConfigMap>(ns, name).await.map(|map| {
                let record = LeaderRecord::from_annotations(&map.metadata);
                (record, Stored::ConfigMap(map))
            }),
            Single::Endpoints => self.client.get::<Endpoints>(ns, name).await.map(|ep| {
                let record = LeaderRecord::from_annotations(&ep.metadata);
                (record, Stored::Endpoints(ep))
            }),
        };
        match found {
            Ok(f) => Ok(Some(f)),
            Err(e) if e.code() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn create(&self, kind: Single, record: &LeaderRecord) -> Result<()> {
        let ns = Some(self.config.namespace.as_str());
        match kind {
            Single::Lease => {
                let lease = Lease {
                    metadata: self.meta(),
                    spec: Some(record.to_lease_spec()),
                };
                self.client.create(ns, &lease).await.map(|_| ())
            }
            Single::ConfigMap => {
                let mut map = ConfigMap {
                    metadata: self.meta(),
                    ..Default::default()
                };
                record.annotate(&mut map.metadata);
                self.client.create(ns, &map).await.map(|_| ())
            }
            Single::Endpoints => {
                let mut ep = Endpoints {
                    metadata: self.meta(),
                    ..Default::default()
                };
                record.annotate(&mut ep.metadata);
                self.client.create(ns, &ep).await.map(|_| ())
            }
        }
    }

    async fn update(&self, stored: Stored, record: &LeaderRecord) -> Result<()> {
        let ns = Some(self.config.namespace.as_str());
        let name = self.config.name.as_str();
        match stored {
            Stored::Lease(mut lease) => {
                lease.spec = Some(record.to_lease_spec());
                self.client.replace(ns, name, &lease).await.map(|_| ())
            }
            Stored::ConfigMap(mut map) => {
                record.annotate(&mut map.metadata);
                self.client.replace(ns, name, &map).await.map(|_| ())
            }
            Stored::Endpoints(mut ep) => {
                record.annotate(&mut ep.metadata);
                self.client.replace(ns, name, &ep).await.map(|_| ())
            }
        }
    }
}

/// The annotation the ConfigMap and Endpoints locks keep the record in.
pub const LEADER_ANNOTATION: &str = "control-plane.alpha.kubernetes.io/leader";

/// The kind of object the lock lives in (`--leader-elect-resource-lock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// A `coordination.k8s.io/v1` Lease.
    Leases,
    /// A ConfigMap's annotation (the legacy lock).
    ConfigMaps,
    /// An Endpoints object's annotation (the legacy lock).
    Endpoints,
    /// Both a ConfigMap and a Lease (the migration lock; the ConfigMap decides).
    ConfigMapsLeases,
    /// Both an Endpoints object and a Lease (the migration lock; the Endpoints decides).
    EndpointsLeases,
}

impl LockKind {
    /// Reads upstream's names.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "leases" => Self::Leases,
            "configmaps" => Self::ConfigMaps,
            "endpoints" => Self::Endpoints,
            "configmapsleases" => Self::ConfigMapsLeases,
            "endpointsleases" => Self::EndpointsLeases,
            _ => return None,
        })
    }

    /// The object that decides, and the one kept in line with it.
    fn parts(self) -> (Single, Option<Single>) {
        match self {
            Self::Leases => (Single::Lease, None),
            Self::ConfigMaps => (Single::ConfigMap, None),
            Self::Endpoints => (Single::Endpoints, None),
            Self::ConfigMapsLeases => (Single::ConfigMap, Some(Single::Lease)),
            Self::EndpointsLeases => (Single::Endpoints, Some(Single::Lease)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Single {
    Lease,
    ConfigMap,
    Endpoints,
}

enum Stored {
    Lease(Lease),
    ConfigMap(ConfigMap),
    Endpoints(Endpoints),
}

/// Who holds the lock, as every lock kind stores it (client-go's LeaderElectionRecord).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LeaderRecord {
    /// The holder.
    pub holder_identity: String,
    /// How long others wait after the last renewal.
    pub lease_duration_seconds: i32,
    /// When the holder took it.
    pub acquire_time: Option<jiff::Timestamp>,
    /// When the holder last renewed it.
    pub renew_time: Option<jiff::Timestamp>,
    /// How many times it changed hands.
    pub leader_transitions: i32,
}

impl LeaderRecord {
    fn from_lease(spec: Option<&LeaseSpec>) -> Self {
        let Some(spec) = spec else {
            return Self::default();
        };
        Self {
            holder_identity: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or(0),
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            leader_transitions: spec.lease_transitions.unwrap_or(0),
        }
    }

    fn to_lease_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder_identity.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.map(MicroTime),
            renew_time: self.renew_time.map(MicroTime),
            lease_transitions: Some(self.leader_transitions),
            ..Default::default()
        }
    }

    fn from_annotations(meta: &ObjectMeta) -> Self {
        meta.annotations
            .as_ref()
            .and_then(|a| a.get(LEADER_ANNOTATION))
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default()
    }

    /// Writes the record into the annotation, times in whole seconds (metav1.Time).
    fn annotate(&self, meta: &mut ObjectMeta) {
        let second = |t: Option<jiff::Timestamp>| {
            t.and_then(|t| jiff::Timestamp::from_second(t.as_second()).ok())
        };
        let record = Self {
            acquire_time: second(self.acquire_time),
            renew_time: second(self.renew_time),
            ..self.clone()
        };
        let text = serde_json::to_string(&record).unwrap_or_default();
        meta.annotations
            .get_or_insert_with(Default::default)
            .insert(LEADER_ANNOTATION.into(), text);
    }
}
