//! `/metrics` in the Prometheus text format, and the storage metrics polled from the store:
//! `apiserver_storage_objects{resource}` (every `--etcd-count-metric-poll-period`) and
//! `apiserver_storage_size_bytes{storage_cluster_id}` (every `--etcd-db-metric-poll-interval`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use capstan_registry::Registry;
use capstan_storage::Store;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use tokio::task::JoinHandle;

type Labels = Vec<(String, String)>;

/// The server's metrics.
pub struct Metrics {
    registry: prometheus_client::registry::Registry,
    storage_objects: Family<Labels, Gauge>,
    storage_size: Family<Labels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// The metric families, registered and empty.
    pub fn new() -> Self {
        let mut registry = prometheus_client::registry::Registry::default();
        let storage_objects = Family::<Labels, Gauge>::default();
        registry.register(
            "apiserver_storage_objects",
            "[STABLE] Number of stored objects at the time of last check split by kind.",
            storage_objects.clone(),
        );
        let storage_size = Family::<Labels, Gauge>::default();
        registry.register(
            "apiserver_storage_size_bytes",
            "[ALPHA] Size of the storage database file physically allocated in bytes.",
            storage_size.clone(),
        );
        Self {
            registry,
            storage_objects,
            storage_size,
        }
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }

    /// Starts the storage pollers; a zero period disables one. The tasks end when the
    /// handles are aborted.
    pub fn start_storage_polls(
        self: &Arc<Self>,
        registry: Arc<Registry>,
        prefix: String,
        count_period: Duration,
        size_period: Duration,
        stores: Vec<(String, Arc<dyn Store>)>,
    ) -> Vec<JoinHandle<()>> {
        let mut tasks = Vec::new();
        if !count_period.is_zero() {
            let metrics = self.clone();
            tasks.push(tokio::spawn(async move {
                let mut ticker = tokio::time::interval(count_period);
                loop {
                    ticker.tick().await;
                    metrics.count_objects(&registry, &prefix).await;
                }
            }));
        }
        if !size_period.is_zero() {
            let metrics = self.clone();
            tasks.push(tokio::spawn(async move {
                let mut ticker = tokio::time::interval(size_period);
                loop {
                    ticker.tick().await;
                    for (cluster, store) in &stores {
                        match store.size_bytes().await {
                            Ok(Some(bytes)) => {
                                metrics
                                    .storage_size
                                    .get_or_create(&vec![(
                                        "storage_cluster_id".into(),
                                        cluster.clone(),
                                    )])
                                    .set(bytes as i64);
                            }
                            Ok(None) => {}
                            Err(err) => tracing::debug!(%err, "storage size poll failed"),
                        }
                    }
                }
            }));
        }
        tasks
    }

    /// Counts every served resource's stored objects.
    async fn count_objects(&self, registry: &Registry, prefix: &str) {
        // One count per stored collection (a resource served in two versions counts once).
        let mut collections = BTreeMap::new();
        for d in registry.descriptors() {
            if !d.subresource.is_empty() {
                continue;
            }
            let label = if d.group.is_empty() {
                d.resource.clone()
            } else {
                format!("{}.{}", d.resource, d.group)
            };
            let key = format!("{prefix}/{}/", d.resource);
            collections
                .entry(label)
                .or_insert((key, registry.store_for(&d.group, &d.resource)));
        }
        for (label, (key, store)) in collections {
            match store.count(&key).await {
                Ok(n) => {
                    self.storage_objects
                        .get_or_create(&vec![("resource".into(), label)])
                        .set(n as i64);
                }
                Err(err) => tracing::debug!(%err, resource = label, "object count poll failed"),
            }
        }
    }
}
