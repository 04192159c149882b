//! `Priority`: a new pod gets the priority and preemption policy of its PriorityClass (the
//! one it names, or the global default); only one class may be the global default.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::forbidden;
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin, PodMutator};

const DEFAULT_POLICY: &str = "PreemptLowerPriority";

/// The `Priority` plugin.
pub struct Priority {
    lister: Arc<dyn Lister>,
    /// The global default class found at a [`Lister::changed_at`] of the classes: every pod
    /// without a class needs it, and the classes seldom change.
    global: Mutex<Option<(u64, Option<Value>)>>,
}

fn classes() -> GroupResource {
    GroupResource::new("scheduling.k8s.io", "priorityclasses")
}

impl Priority {
    /// Reads PriorityClasses through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self {
            lister,
            global: Mutex::new(None),
        }
    }

    /// The global default class with the highest value, if any.
    async fn global_default(&self) -> Result<Option<Value>, ApiError> {
        // Read before the list: a change in between makes the next call list again.
        let changed_at = self.lister.changed_at(&classes());
        if let Some(at) = changed_at
            && let Some((kept_at, class)) = &*self.kept()
            && *kept_at == at
        {
            return Ok(class.clone());
        }
        let class = self
            .lister
            .list(&classes(), "")
            .await?
            .into_iter()
            .filter(|c| c["globalDefault"] == true)
            .max_by_key(|c| c["value"].as_i64().unwrap_or(0));
        if let Some(at) = changed_at {
            *self.kept() = Some((at, class.clone()));
        }
        Ok(class)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Option<(u64, Option<Value>)>> {
        self.global.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl PodMutator for Priority {
    /// Sets `pod`'s priority and preemption policy from its class, or the global default.
    async fn mutate(&self, a: &Attributes, pod: &mut Pod) -> Result<(), ApiError> {
        let spec = pod.spec.as_ref();
        let named = spec
            .and_then(|s| s.priority_class_name.as_deref())
            .filter(|n| !n.is_empty())
            .map(String::from);
        let class = match &named {
            Some(name) => match self.lister.get(&classes(), "", name).await? {
                Some(class) => Some(class),
                None => {
                    return Err(forbidden(
                        a,
                        &format!("no PriorityClass with name {name} was found"),
                    ));
                }
            },
            None => self.global_default().await?,
        };
        let (value, policy) = match &class {
            Some(c) => (
                c["value"].as_i64().unwrap_or(0),
                c["preemptionPolicy"].as_str().unwrap_or(DEFAULT_POLICY),
            ),
            None => (0, DEFAULT_POLICY),
        };
        if let Some(given) = spec.and_then(|s| s.priority)
            && i64::from(given) != value
        {
            return Err(forbidden(
                a,
                &format!(
                    "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
                ),
            ));
        }
        if let Some(given) = spec.and_then(|s| s.preemption_policy.as_deref())
            && class.is_some()
            && given != policy
        {
            return Err(forbidden(
                a,
                &format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
                ),
            ));
        }
        let Some(spec) = pod.spec.as_mut() else {
            return Ok(());
        };
        // A class's value is an int32 (validated so when it is written).
        spec.priority = Some(i32::try_from(value).unwrap_or_default());
        spec.preemption_policy = Some(policy.to_string());
        if named.is_none()
            && let Some(name) = class.as_ref().and_then(|c| c["metadata"]["name"].as_str())
        {
            spec.priority_class_name = Some(name.to_string());
        }
        Ok(())
    }
}

impl Priority {
    /// A second global default is refused.
    async fn validate_class(&self, a: &Attributes) -> Result<(), ApiError> {
        let Some(class) = &a.object else {
            return Ok(());
        };
        if class["globalDefault"] != true {
            return Ok(());
        }
        let name = class["metadata"]["name"].as_str().unwrap_or_default();
        if let Some(other) = self.global_default().await?
            && other["metadata"]["name"].as_str() != Some(name)
        {
            let other = other["metadata"]["name"].as_str().unwrap_or_default();
            return Err(forbidden(
                a,
                &format!(
                    "PriorityClass {other} is already marked as default. Only one default can exist"
                ),
            ));
        }
        Ok(())
    }
}

#[async_trait]
impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create
            && subresource.is_empty()
            && resource.group.is_empty()
            && resource.resource == "pods"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
            && subresource.is_empty()
            && resource.group == "scheduling.k8s.io"
            && resource.resource == "priorityclasses"
    }

    fn pod_mutator(&self) -> Option<&dyn PodMutator> {
        Some(self)
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        if a.resource.resource == "priorityclasses" {
            self.validate_class(a).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use capstan_auth::UserInfo;
    use serde_json::json;

    use super::*;
    use crate::MemoryLister;

    async fn priority_of_a_pod(plugin: &Priority) -> Value {
        let mut a = Attributes::new(
            Operation::Create,
            GroupResource::new("", "pods"),
            UserInfo::default(),
        );
        a.object = Some(json!({"metadata": {"name": "p"}, "spec": {"containers": []}}));
        plugin.admit(&mut a).await.unwrap();
        a.object.unwrap()["spec"]["priority"].clone()
    }

    #[tokio::test]
    async fn the_global_default_is_listed_again_only_when_the_classes_change() {
        let stored = Arc::new(MemoryLister::new());
        let plugin = Priority::new(stored.clone());
        assert_eq!(priority_of_a_pod(&plugin).await, 0);
        assert_eq!(priority_of_a_pod(&plugin).await, 0);
        assert_eq!(stored.lists(), 1);
        stored.put(
            classes(),
            "",
            json!({"metadata": {"name": "normal"}, "value": 100, "globalDefault": true}),
        );
        assert_eq!(priority_of_a_pod(&plugin).await, 100);
        assert_eq!(priority_of_a_pod(&plugin).await, 100);
        assert_eq!(stored.lists(), 2);
    }
}
