//! The namespace controller: deleting a namespace's content, finalizing it, and giving every
//! live namespace a `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap (again,
//! when they are deleted).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan_api::core::NAMESPACE_FINALIZER;
use capstan_api::{ConfigMapStrategy, NamespaceStrategy, ServiceAccountStrategy};
use capstan_apiextensions::CustomResources;
use capstan_meta::Reason;
use capstan_registry::{
    DeleteOptions, Error, GenericStore, ListOptions, Registry, RestStorage, WriteOptions,
};
use serde_json::Value;
use tracing::{debug, warn};

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::watching::{Object, Seen, follow};

/// Longest wait between two passes over a terminating namespace's content.
const MAX_RETRY: Duration = Duration::from_secs(5);

/// The ConfigMap of the cluster's CA in every namespace.
const ROOT_CA: &str = "kube-root-ca.crt";

/// How long a namespace goes without its CA map before this controller publishes it: a
/// controller manager's root-ca-cert-publisher, when one runs, publishes it within
/// milliseconds, and two publishers creating it at once would fail one of them (upstream's
/// logs that as an error and retries).
const ROOT_CA_GRACE: Duration = Duration::from_secs(1);
/// Tries to publish a namespace's root CA before giving up.
const ROOT_CA_TRIES: usize = 10;

pub(crate) async fn run(
    registry: Arc<Registry>,
    custom: Option<Arc<CustomResources>>,
    namespaces: Arc<GenericStore<NamespaceStrategy>>,
    service_accounts: Arc<GenericStore<ServiceAccountStrategy>>,
    root_ca: Option<(Arc<GenericStore<ConfigMapStrategy>>, String)>,
) {
    let finalizing: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut has_account: HashSet<String> = HashSet::new();
    // Namespaces that exist and are not terminating.
    let mut active: HashSet<String> = HashSet::new();
    let (tx, mut seen) = mpsc::channel(256);
    let (accounts_tx, mut accounts) = mpsc::channel(256);
    let source: Arc<dyn RestStorage> = namespaces.clone();
    let account_source: Arc<dyn RestStorage> = service_accounts.clone();
    // Every task started here stops with this one (the set aborts them when dropped).
    let mut tasks = JoinSet::new();
    tasks.spawn(follow::<Object>(source, tx));
    tasks.spawn(follow::<Object>(account_source, accounts_tx));
    let (maps_tx, mut maps) = mpsc::channel::<Seen<Object>>(256);
    if let Some((config_maps, _)) = &root_ca {
        let maps_source: Arc<dyn RestStorage> = config_maps.clone();
        tasks.spawn(follow::<Object>(maps_source, maps_tx));
    } else {
        drop(maps_tx);
    }
    loop {
        let Seen {
            object: ns,
            deleted,
            ..
        } = tokio::select! {
            next = seen.recv() => match next {
                Some(seen) => seen,
                None => return,
            },
            Some(account) = accounts.recv() => {
                // A deleted `default` account of a live namespace comes back, as upstream's
                // service account controller brings it back.
                let namespace = account.object.metadata.namespace.as_str();
                let is_default = account.object.metadata.name == "default";
                if account.deleted && is_default && active.contains(namespace) {
                    has_account.remove(namespace);
                    if ensure_default_account(&service_accounts, namespace).await {
                        has_account.insert(namespace.to_string());
                    }
                }
                continue;
            }
            Some(map) = maps.recv() => {
                // A deleted CA map of a live namespace comes back.
                let namespace = map.object.metadata.namespace.as_str();
                if map.deleted && map.object.metadata.name == ROOT_CA && active.contains(namespace)
                    && let Some((config_maps, ca)) = &root_ca
                {
                    tasks.spawn(ensure_root_ca(config_maps.clone(), namespace.to_string(), ca.clone()));
                }
                continue;
            }
        };
        let name = ns.metadata.name;
        if name.is_empty() {
            continue;
        }
        if deleted {
            has_account.remove(&name);
            active.remove(&name);
            continue;
        }
        let terminating = ns.metadata.deletion_timestamp.is_some();
        if terminating {
            active.remove(&name);
        } else {
            active.insert(name.clone());
        }
        let ours = ns.spec.finalizers.iter().any(|f| f == NAMESPACE_FINALIZER);
        if terminating {
            let started = ours
                && finalizing
                    .lock()
                    .map(|mut f| f.insert(name.clone()))
                    .unwrap_or(false);
            if started {
                let registry = registry.clone();
                let custom = custom.clone();
                let namespaces = namespaces.clone();
                let finalizing = finalizing.clone();
                tasks.spawn(async move {
                    finalize_namespace(&registry, custom.as_deref(), &namespaces, &name).await;
                    if let Ok(mut f) = finalizing.lock() {
                        f.remove(&name);
                    }
                });
            }
        } else if !has_account.contains(&name)
            && ensure_default_account(&service_accounts, &name).await
        {
            if let Some((config_maps, ca)) = &root_ca {
                tasks.spawn(ensure_root_ca(
                    config_maps.clone(),
                    name.clone(),
                    ca.clone(),
                ));
            }
            has_account.insert(name);
        }
        // Reap finished finalizations.
        while tasks.try_join_next().is_some() {}
    }
}

/// Creates the namespace's `default` ServiceAccount unless it exists; false when that failed
/// (it is tried again on the namespace's next change).
async fn ensure_default_account(
    service_accounts: &GenericStore<ServiceAccountStrategy>,
    namespace: &str,
) -> bool {
    // Read first: a restart finds every namespace's account there.
    let body = serde_json::json!({"metadata": {"name": "default"}});
    match capstan_registry::builtin::create_unless_present(
        service_accounts,
        namespace,
        "default",
        &body,
    )
    .await
    {
        Ok(_) => true,
        Err(err) => {
            debug!(%err, namespace, "namespace controller: no default service account yet");
            false
        }
    }
}

/// Creates the namespace's `kube-root-ca.crt` ConfigMap (`ca.crt`) unless it exists after
/// [`ROOT_CA_GRACE`].
async fn ensure_root_ca(
    config_maps: Arc<GenericStore<ConfigMapStrategy>>,
    namespace: String,
    ca: String,
) {
    tokio::time::sleep(ROOT_CA_GRACE).await;
    let namespace = namespace.as_str();
    let body = serde_json::json!({"metadata": {"name": ROOT_CA}, "data": {"ca.crt": ca}});
    let Ok(body) = serde_json::to_vec(&body) else {
        return;
    };
    // Retried while the store refuses (a busy or fenced store), as upstream's publisher
    // requeues; a namespace going away ends it.
    let mut wait = ROOT_CA_GRACE;
    for _ in 0..ROOT_CA_TRIES {
        match config_maps
            .create(namespace, &body, &WriteOptions::server())
            .await
        {
            Ok(_) => return,
            Err(Error::Api(e))
                if matches!(
                    e.reason,
                    Reason::AlreadyExists | Reason::Forbidden | Reason::NotFound
                ) =>
            {
                return;
            }
            Err(err) => {
                debug!(%err, namespace, "namespace controller: no root CA config map yet")
            }
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(30));
    }
}

/// Deletes everything in `namespace`, pass after pass until nothing is left (objects may wait
/// for their finalizers or grace periods), then removes the `kubernetes` finalizer, which
/// removes the namespace.
pub async fn finalize_namespace(
    registry: &Registry,
    custom: Option<&CustomResources>,
    namespaces: &GenericStore<NamespaceStrategy>,
    namespace: &str,
) {
    let mut wait = Duration::from_millis(50);
    loop {
        let mut remaining = 0;
        let custom_stores = custom.map(CustomResources::stores).unwrap_or_default();
        for storage in registry.resources().chain(custom_stores.iter()) {
            let d = storage.descriptor();
            if !d.namespaced || !d.subresource.is_empty() || !d.serves("deletecollection") {
                continue;
            }
            if let Err(err) = storage
                .delete_collection(
                    namespace,
                    &ListOptions::default(),
                    // As upstream's namespace deleter: dependents go too, whatever the
                    // kind's default (Jobs and ReplicationControllers would orphan).
                    &DeleteOptions {
                        propagation_policy: Some("Background".into()),
                        ..Default::default()
                    },
                )
                .await
            {
                warn!(%err, namespace, resource = %d.resource, "namespace controller: deleting content failed");
            }
            remaining += count(&**storage, namespace).await;
        }
        if remaining == 0 {
            break;
        }
        debug!(
            namespace,
            remaining, "namespace controller: waiting for content to go"
        );
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_RETRY);
    }
    let finalized = namespaces
        .update_with("", namespace, false, |ns| {
            if let Some(finalizers) = ns.spec.as_mut().and_then(|s| s.finalizers.as_mut()) {
                finalizers.retain(|f| f != NAMESPACE_FINALIZER);
            }
            Ok(())
        })
        .await;
    match finalized {
        Ok(_) => debug!(namespace, "namespace controller: finalized"),
        Err(Error::Api(e)) if e.reason == Reason::NotFound => {}
        Err(err) => warn!(%err, namespace, "namespace controller: finalizing failed"),
    }
}

/// How many objects of `storage` are left in `namespace` (1 when that cannot be told).
async fn count(storage: &dyn RestStorage, namespace: &str) -> usize {
    let options = ListOptions {
        limit: 1,
        ..Default::default()
    };
    match storage.list(namespace, &options).await {
        Ok(encoded) => {
            let list: Value =
                serde_json::from_slice(&encoded.body.into_bytes()).unwrap_or_default();
            let items = list["items"].as_array().map_or(0, Vec::len);
            let more = list["metadata"]["remainingItemCount"].as_u64().unwrap_or(0) as usize;
            let continued = list["metadata"]["continue"]
                .as_str()
                .is_some_and(|c| !c.is_empty());
            items + more.max(usize::from(continued && more == 0))
        }
        Err(_) => 1,
    }
}
