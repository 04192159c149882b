//! API Priority and Fairness' configuration: FlowSchemas and PriorityLevelConfigurations
//! followed into the flow controller; the mandatory and suggested objects kept (created when
//! missing, their specs restored while the server owns them); and each FlowSchema's
//! `Dangling` condition kept in its status.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan_flowcontrol::FlowControl;
use capstan_flowcontrol::bootstrap::{self, server_keeps_spec};
use capstan_meta::{Reason, Strategy};
use capstan_registry::options::GetOptions;
use capstan_registry::{Error, RestStorage, WriteOptions};
use k8s_openapi::api::flowcontrol::v1 as api;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// The stores the configuration lives in.
#[derive(Clone)]
pub struct Stores {
    /// `flowschemas`.
    pub schemas: Arc<dyn RestStorage>,
    /// `flowschemas/status`.
    pub schema_status: Arc<dyn RestStorage>,
    /// `prioritylevelconfigurations`.
    pub levels: Arc<dyn RestStorage>,
}

async fn read<T: DeserializeOwned>(
    store: &dyn RestStorage,
    name: &str,
) -> Result<Option<T>, Error> {
    match store.get("", name, &GetOptions::default()).await {
        Ok(found) => Ok(Some(
            serde_json::from_slice(&found.body.into_bytes()).map_err(Error::Encode)?,
        )),
        Err(Error::Api(e)) if e.reason == Reason::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Makes `wanted` exist in `store`; when it exists with another spec and the server owns it
/// (`mandatory`, or the auto-update annotation says so), puts the wanted spec back.
async fn keep<T, S>(
    store: &dyn RestStorage,
    strategy: S,
    mut wanted: T,
    mandatory: bool,
    name: &str,
    meta: fn(&T) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    spec_of: fn(&T) -> serde_json::Value,
) -> Result<(), Error>
where
    T: Serialize + DeserializeOwned + Clone,
    S: Strategy<Object = T>,
{
    strategy.default(&mut wanted);
    let options = WriteOptions::server();
    let Some(current) = read::<T>(store, name).await? else {
        let body = serde_json::to_vec(&wanted).map_err(Error::Encode)?;
        return match store.create("", &body, &options).await {
            Ok(_) => Ok(()),
            Err(Error::Api(e)) if e.reason == Reason::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        };
    };
    let owned = mandatory || server_keeps_spec(meta(&current).annotations.as_ref());
    if !owned || spec_of(&current) == spec_of(&wanted) {
        return Ok(());
    }
    let mut replaced = serde_json::to_value(&current).map_err(Error::Encode)?;
    replaced["spec"] = spec_of(&wanted);
    let body = serde_json::to_vec(&replaced).map_err(Error::Encode)?;
    store.update("", name, &body, &options).await.map(|_| ())
}

fn spec_json<T: Serialize>(spec: &Option<T>) -> serde_json::Value {
    serde_json::to_value(spec).unwrap_or_default()
}

/// Creates the mandatory and suggested objects that are missing and restores the specs the
/// server owns (upstream's `priority-and-fairness-config-producer`).
pub async fn ensure_configuration(stores: &Stores) -> Result<(), Error> {
    let levels = bootstrap::mandatory_priority_levels()
        .into_iter()
        .map(|l| (l, true))
        .chain(
            bootstrap::suggested_priority_levels()
                .into_iter()
                .map(|l| (l, false)),
        );
    for (level, mandatory) in levels {
        let name = level.metadata.name.clone().unwrap_or_default();
        keep(
            &*stores.levels,
            capstan_api::PriorityLevelConfigurationStrategy,
            level,
            mandatory,
            &name,
            |l: &api::PriorityLevelConfiguration| &l.metadata,
            |l| spec_json(&l.spec),
        )
        .await?;
    }
    let schemas = bootstrap::mandatory_flow_schemas()
        .into_iter()
        .map(|s| (s, true))
        .chain(
            bootstrap::suggested_flow_schemas()
                .into_iter()
                .map(|s| (s, false)),
        );
    for (schema, mandatory) in schemas {
        let name = schema.metadata.name.clone().unwrap_or_default();
        keep(
            &*stores.schemas,
            capstan_api::FlowSchemaStrategy,
            schema,
            mandatory,
            &name,
            |s: &api::FlowSchema| &s.metadata,
            |s| spec_json(&s.spec),
        )
        .await?;
    }
    Ok(())
}

/// Sets the `Dangling` condition of every FlowSchema whose condition is not what the
/// configuration says.
async fn mark_dangling(
    stores: &Stores,
    control: &FlowControl,
    schemas: &[api::FlowSchema],
) -> Result<(), Error> {
    for fs in schemas {
        let level = fs
            .spec
            .as_ref()
            .map(|s| s.priority_level_configuration.name.clone())
            .unwrap_or_default();
        let (status, reason, verb) = if control.level_exists(&level) {
            ("False", "Found", "exists")
        } else {
            ("True", "NotFound", "does not exist")
        };
        let current = fs
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_.as_deref() == Some("Dangling")));
        if current.is_some_and(|c| c.status.as_deref() == Some(status)) {
            continue;
        }
        let mut updated = fs.clone();
        let conditions = updated
            .status
            .get_or_insert_with(Default::default)
            .conditions
            .get_or_insert_with(Vec::new);
        conditions.retain(|c| c.type_.as_deref() != Some("Dangling"));
        conditions.push(api::FlowSchemaCondition {
            type_: Some("Dangling".into()),
            status: Some(status.into()),
            reason: Some(reason.into()),
            message: Some(format!(
                "This FlowSchema references the PriorityLevelConfiguration object named \
                 {level:?} and it {verb}"
            )),
            last_transition_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::now(),
            )),
        });
        let name = fs.metadata.name.clone().unwrap_or_default();
        let body = serde_json::to_vec(&updated).map_err(Error::Encode)?;
        match stores
            .schema_status
            .update("", &name, &body, &WriteOptions::server())
            .await
        {
            Ok(_) => {}
            Err(Error::Api(e)) if matches!(e.reason, Reason::NotFound | Reason::Conflict) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What has been seen of one collection, by name, with the list generation that saw it.
type Seen = Arc<Mutex<HashMap<String, u64>>>;

fn note(seen: &Seen, name: &str, deleted: bool, generation: u64) {
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    if deleted {
        seen.remove(name);
    } else {
        seen.insert(name.to_string(), generation);
    }
}

fn stale(seen: &Seen, generation: u64) -> Vec<String> {
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    let gone: Vec<String> = seen
        .iter()
        .filter(|(_, g)| **g < generation)
        .map(|(n, _)| n.clone())
        .collect();
    for name in &gone {
        seen.remove(name);
    }
    gone
}

/// Follows the configuration into `control`; after every change (a moment later, once a
/// burst has settled) keeps the bootstrap objects and the schemas' `Dangling` conditions.
/// `loaded` is notified once both collections have been listed.
pub fn start(
    stores: Stores,
    control: Arc<FlowControl>,
    loaded: Arc<Notify>,
) -> Vec<JoinHandle<()>> {
    let changed = Arc::new(Notify::new());
    let schemas_seen: Seen = Arc::default();
    let levels_seen: Seen = Arc::default();
    let listed_both = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let mut tasks = Vec::new();
    let (fc, fc_listed, ch, ch_listed) = (
        control.clone(),
        control.clone(),
        changed.clone(),
        changed.clone(),
    );
    let (seen, seen_listed) = (schemas_seen.clone(), schemas_seen.clone());
    let (both, ready) = (listed_both.clone(), loaded.clone());
    tasks.extend(crate::watching::feed::<api::FlowSchema>(
        stores.schemas.clone(),
        move |generation| {
            for name in stale(&seen_listed, generation) {
                fc_listed.remove_schema(&name);
            }
            if both.fetch_or(1, std::sync::atomic::Ordering::AcqRel) | 1 == 3 {
                ready.notify_one();
            }
            ch_listed.notify_one();
        },
        move |fs, deleted, generation| {
            let name = fs.metadata.name.clone().unwrap_or_default();
            note(&seen, &name, deleted, generation);
            if deleted {
                fc.remove_schema(&name);
            } else {
                fc.put_schema(&fs);
            }
            ch.notify_one();
        },
    ));
    let (fc, fc_listed, ch, ch_listed) = (
        control.clone(),
        control.clone(),
        changed.clone(),
        changed.clone(),
    );
    let (seen, seen_listed) = (levels_seen.clone(), levels_seen);
    let (both, ready) = (listed_both, loaded);
    tasks.extend(crate::watching::feed::<api::PriorityLevelConfiguration>(
        stores.levels.clone(),
        move |generation| {
            for name in stale(&seen_listed, generation) {
                fc_listed.remove_level(&name);
            }
            if both.fetch_or(2, std::sync::atomic::Ordering::AcqRel) | 2 == 3 {
                ready.notify_one();
            }
            ch_listed.notify_one();
        },
        move |pl, deleted, generation| {
            let name = pl.metadata.name.clone().unwrap_or_default();
            note(&seen, &name, deleted, generation);
            if deleted {
                fc.remove_level(&name);
            } else {
                fc.put_level(&pl);
            }
            ch.notify_one();
        },
    ));
    tasks.push(tokio::spawn(async move {
        loop {
            changed.notified().await;
            // Let a burst of changes (a start, a kubectl apply) settle first.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let result = async {
                ensure_configuration(&stores).await?;
                let listed = stores
                    .schemas
                    .list("", &capstan_registry::ListOptions::default())
                    .await?;
                #[derive(serde::Deserialize)]
                struct Items {
                    items: Vec<api::FlowSchema>,
                }
                let items: Items = serde_json::from_slice(&listed.body.into_bytes())
                    .map_err(Error::Encode)?;
                mark_dangling(&stores, &control, &items.items).await
            }
            .await;
            if let Err(e) = result {
                tracing::warn!(error = %e, "keeping the priority and fairness configuration failed; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                changed.notify_one();
            }
        }
    }));
    tasks
}
