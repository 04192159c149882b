//! API Priority and Fairness' configuration: FlowSchemas and PriorityLevelConfigurations
//! followed into the flow controller; the mandatory and suggested objects kept (created when
//! missing, their specs restored while the server owns them); and each FlowSchema's
//! `Dangling` condition kept in its status.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan_flowcontrol::FlowControl;
use capstan_flowcontrol::bootstrap::{self, server_keeps_spec};
use capstan_meta::{Reason, Strategy};
use capstan_registry::builtin::write_each;
use capstan_registry::options::GetOptions;
use capstan_registry::{Error, RestStorage, WriteOptions};
use k8s_openapi::Metadata;
use k8s_openapi::api::flowcontrol::v1 as api;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// The stores the configuration lives in.
pub use capstan_control::FlowControlStores as Stores;

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

/// Makes each of `mandatory` and `suggested` exist in `store`; when one exists with another
/// spec and the server owns it (a mandatory object, or the auto-update annotation says so),
/// puts the wanted spec back.
async fn keep<T, S>(
    store: &dyn RestStorage,
    strategy: S,
    mandatory: Vec<T>,
    suggested: Vec<T>,
) -> Result<(), Error>
where
    T: Metadata<Ty = ObjectMeta> + Serialize + DeserializeOwned,
    S: Strategy<Object = T>,
{
    let options = &WriteOptions::server();
    let spec = &|object: &T| serde_json::to_value(object).map(|mut v| v["spec"].take());
    let strategy = &strategy;
    let wanted = mandatory.into_iter().map(|o| (o, true));
    let wanted = wanted.chain(suggested.into_iter().map(|o| (o, false)));
    write_each(wanted, |(mut object, mandatory)| async move {
        strategy.default(&mut object);
        let name = object.metadata().name.clone().unwrap_or_default();
        let Some(current) = read::<T>(store, &name).await? else {
            let body = serde_json::to_vec(&object).map_err(Error::Encode)?;
            return match store.create("", &body, options).await {
                Ok(_) => Ok(()),
                Err(Error::Api(e)) if e.reason == Reason::AlreadyExists => Ok(()),
                Err(e) => Err(e),
            };
        };
        let owned = mandatory || server_keeps_spec(current.metadata().annotations.as_ref());
        let wanted_spec = spec(&object).map_err(Error::Encode)?;
        if !owned || spec(&current).map_err(Error::Encode)? == wanted_spec {
            return Ok(());
        }
        let mut replaced = serde_json::to_value(&current).map_err(Error::Encode)?;
        replaced["spec"] = wanted_spec;
        let body = serde_json::to_vec(&replaced).map_err(Error::Encode)?;
        store.update("", &name, &body, options).await.map(drop)
    })
    .await?;
    Ok(())
}

/// Creates the mandatory and suggested objects that are missing and restores the specs the
/// server owns (upstream's `priority-and-fairness-config-producer`).
pub async fn ensure_configuration(stores: &Stores) -> Result<(), Error> {
    keep(
        &*stores.levels,
        capstan_api::PriorityLevelConfigurationStrategy,
        bootstrap::mandatory_priority_levels(),
        bootstrap::suggested_priority_levels(),
    )
    .await?;
    keep(
        &*stores.schemas,
        capstan_api::FlowSchemaStrategy,
        bootstrap::mandatory_flow_schemas(),
        bootstrap::suggested_flow_schemas(),
    )
    .await
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

/// What following one collection into the flow controller shares with the other.
#[derive(Clone)]
struct Following {
    control: Arc<FlowControl>,
    changed: Arc<Notify>,
    /// One bit per collection listed; `loaded` is notified when both are.
    listed: Arc<AtomicU8>,
    loaded: Arc<Notify>,
}

impl Following {
    /// Follows `store` (collection `bit`) into the controller with `put` and `remove`.
    fn start<T>(
        self,
        store: Arc<dyn RestStorage>,
        bit: u8,
        put: fn(&FlowControl, &T),
        remove: fn(&FlowControl, &str),
    ) -> [JoinHandle<()>; 2]
    where
        T: Metadata<Ty = ObjectMeta> + DeserializeOwned + Default + Send + 'static,
    {
        let seen: Seen = Arc::default();
        let (on_list, on_object) = (self.clone(), self);
        let seen_listed = seen.clone();
        crate::watching::feed::<T>(
            store,
            move |generation| {
                for name in stale(&seen_listed, generation) {
                    remove(&on_list.control, &name);
                }
                if on_list.listed.fetch_or(bit, Ordering::AcqRel) | bit == 3 {
                    on_list.loaded.notify_one();
                }
                on_list.changed.notify_one();
            },
            move |object, deleted, generation| {
                let name = object.metadata().name.clone().unwrap_or_default();
                note(&seen, &name, deleted, generation);
                if deleted {
                    remove(&on_object.control, &name);
                } else {
                    put(&on_object.control, &object);
                }
                on_object.changed.notify_one();
            },
        )
    }
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
    let listed = Arc::new(AtomicU8::new(0));
    let follow = Following {
        control: control.clone(),
        changed: changed.clone(),
        listed,
        loaded,
    };
    let mut tasks = Vec::new();
    tasks.extend(follow.clone().start(
        stores.schemas.clone(),
        1,
        FlowControl::put_schema,
        FlowControl::remove_schema,
    ));
    tasks.extend(follow.start(
        stores.levels.clone(),
        2,
        FlowControl::put_level,
        FlowControl::remove_level,
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
