//! Hooks on writes that need more than the object itself: other stored objects. Pod priority
//! is the first (upstream's `Priority` admission plugin). The admission issue turns these into
//! plugins of its chain; the trait is the seam.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_api::PriorityClassStrategy;
use capstan_meta::v1::ObjectMeta;
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::generic::GenericStore;
use crate::options::{GetOptions, ListOptions};
use crate::rest::RestStorage;

/// Refuses a valid write of an object of type `T` by its author (`old` is the stored object
/// of an update), e.g. RBAC's escalation checks.
#[async_trait]
pub trait WriteCheck<T>: Send + Sync + 'static {
    /// `Ok` to let the write go on, or the upstream error refusing it.
    async fn check(&self, new: &T, old: Option<&T>, user: &capstan_auth::UserInfo) -> Result<()>;
}

/// Adjusts or refuses a new object of type `T` after defaulting, before validation.
#[async_trait]
pub trait CreateHook<T>: Send + Sync + 'static {
    /// Changes `obj` as needed, or refuses it with an upstream error.
    async fn on_create(&self, obj: &mut T) -> Result<()>;
}

/// Resolves a new pod's priority from its PriorityClass, as upstream's `Priority` admission
/// plugin does: the class named by `priorityClassName`, or the global default class when none
/// is named (priority 0 without one). The pod gets the class's value and preemption policy; a
/// missing class, or a pod that states a different priority or preemption policy itself, is
/// 403 Forbidden.
pub struct PodPriority {
    classes: Arc<GenericStore<PriorityClassStrategy>>,
}

impl PodPriority {
    /// Looks classes up in `classes`.
    pub fn new(classes: Arc<GenericStore<PriorityClassStrategy>>) -> Self {
        Self { classes }
    }

    async fn class(&self, name: &str) -> Result<Option<Value>> {
        match self.classes.get("", name, &GetOptions::default()).await {
            Ok(found) => Ok(Some(
                serde_json::from_slice(&found.body.into_bytes()).map_err(Error::Encode)?,
            )),
            Err(Error::Api(e)) if e.code() == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The global default class with the highest value, if any.
    async fn global_default(&self) -> Result<Option<Value>> {
        let listed = self.classes.list("", &ListOptions::default()).await?;
        let list: Value =
            serde_json::from_slice(&listed.body.into_bytes()).map_err(Error::Encode)?;
        Ok(list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["globalDefault"] == true)
            .max_by_key(|c| c["value"].as_i64().unwrap_or(0))
            .cloned())
    }
}

fn forbidden(meta: &ObjectMeta, why: &str) -> Error {
    let name = meta
        .name
        .as_deref()
        .or(meta.generate_name.as_deref())
        .unwrap_or("");
    ApiError::forbidden_because(&GroupResource::new("", "pods"), name, why).into()
}

#[async_trait]
impl CreateHook<Pod> for PodPriority {
    async fn on_create(&self, pod: &mut Pod) -> Result<()> {
        let spec = pod.spec.get_or_insert_with(Default::default);
        let named = spec.priority_class_name.clone().filter(|n| !n.is_empty());
        let class = match &named {
            Some(name) => match self.class(name).await? {
                Some(class) => Some(class),
                None => {
                    return Err(forbidden(
                        &pod.metadata,
                        &format!("no PriorityClass with name {name} was found"),
                    ));
                }
            },
            None => self.global_default().await?,
        };
        let (value, policy, class_name) = match &class {
            Some(c) => (
                c["value"].as_i64().unwrap_or(0) as i32,
                c["preemptionPolicy"]
                    .as_str()
                    .unwrap_or("PreemptLowerPriority")
                    .to_string(),
                c["metadata"]["name"].as_str().map(str::to_string),
            ),
            None => (0, "PreemptLowerPriority".to_string(), None),
        };
        if let Some(given) = spec.priority
            && given != value
        {
            return Err(forbidden(
                &pod.metadata,
                &format!(
                    "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
                ),
            ));
        }
        if let Some(given) = spec.preemption_policy.as_deref()
            && class.is_some()
            && given != policy
        {
            return Err(forbidden(
                &pod.metadata,
                &format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
                ),
            ));
        }
        spec.priority = Some(value);
        spec.preemption_policy = Some(policy);
        if named.is_none() {
            spec.priority_class_name = class_name;
        }
        Ok(())
    }
}
