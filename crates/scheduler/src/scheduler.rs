//! The scheduling loop: informers keep the cache and the queue current; each pod popped from
//! the queue is placed by the profile, assumed on its node, and bound through
//! `pods/{name}/binding` while the next pod is scheduled. Outcomes are reported as upstream
//! does: the `PodScheduled` condition and `Scheduled` / `FailedScheduling` events.

use std::sync::{Arc, Mutex};

use capstan_client::{Change, Client, ListParams, Reflector};
use k8s_openapi::api::core::v1::{Binding, Node, ObjectReference, Pod, PodCondition};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::cache::{Cache, pod_key};
use crate::framework::{PodInfo, Profile};
use crate::queue::{Outcome, Queue};

/// A running scheduler's shared parts.
pub struct Scheduler {
    client: Client,
    profile: Profile,
    cache: Mutex<Cache>,
    queue: Queue,
    instance: String,
}

impl Scheduler {
    /// A scheduler using `client` and `profile`.
    pub fn new(client: Client, profile: Profile) -> Arc<Self> {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "capstan".into());
        Arc::new(Self {
            client,
            instance: format!("{}-{host}", profile.scheduler_name),
            profile,
            cache: Mutex::new(Cache::default()),
            queue: Queue::default(),
        })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn ours(&self, pod: &Pod) -> bool {
        let spec = pod.spec.as_ref();
        let name = spec
            .and_then(|s| s.scheduler_name.as_deref())
            .unwrap_or("default-scheduler");
        name == self.profile.scheduler_name
            && spec
                .and_then(|s| s.node_name.as_deref())
                .is_none_or(str::is_empty)
            && pod.metadata.deletion_timestamp.is_none()
            && !matches!(
                pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded" | "Failed")
            )
    }

    fn pod_seen(&self, pod: Pod) {
        let key = pod_key(&pod);
        let bound = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty());
        if bound {
            self.queue.remove(&key);
            self.cache().set_pod(pod);
        } else if self.ours(&pod) {
            self.queue.add(pod);
        } else {
            self.queue.remove(&key);
        }
    }

    fn pod_gone(&self, pod: &Pod) {
        let key = pod_key(pod);
        self.queue.remove(&key);
        let was_placed = {
            let mut cache = self.cache();
            let placed = cache.is_placed(&key);
            cache.remove_pod(&key);
            placed
        };
        if was_placed {
            self.queue.cluster_changed();
        }
    }

    /// Runs until the task is dropped: informers, then the scheduling loop.
    pub async fn run(self: Arc<Self>) {
        let mut tasks = JoinSet::new();
        let (node_tx, mut nodes) = mpsc::channel(1024);
        let (pod_tx, mut pods) = mpsc::channel(1024);
        tasks.spawn(
            Reflector::<Node>::new(self.client.clone(), None, ListParams::default()).run(node_tx),
        );
        tasks.spawn(
            Reflector::<Pod>::new(self.client.clone(), None, ListParams::default()).run(pod_tx),
        );
        // Nothing is scheduled before both collections have been listed once (a pod
        // scheduled against an empty cache would see no nodes).
        let (synced_tx, mut synced) = tokio::sync::watch::channel((false, false));
        let me = self.clone();
        tasks.spawn(async move {
            loop {
                tokio::select! {
                    Some(change) = nodes.recv() => {
                        match change {
                            Change::Listed(all) => {
                                me.cache().reset_nodes(all);
                                synced_tx.send_modify(|s| s.0 = true);
                            }
                            Change::Applied(node) => me.cache().set_node(node),
                            Change::Deleted(node) => me.cache().remove_node(node.metadata.name.as_deref().unwrap_or("")),
                        }
                        me.queue.cluster_changed();
                    }
                    Some(change) = pods.recv() => match change {
                        Change::Listed(all) => {
                            all.into_iter().for_each(|p| me.pod_seen(p));
                            synced_tx.send_modify(|s| s.1 = true);
                        }
                        Change::Applied(pod) => me.pod_seen(pod),
                        Change::Deleted(pod) => me.pod_gone(&pod),
                    },
                    else => return,
                }
            }
        });
        if synced
            .wait_for(|(nodes, pods)| *nodes && *pods)
            .await
            .is_err()
        {
            return;
        }
        loop {
            let pod = self.queue.pop().await;
            self.clone().schedule_one(pod, &mut tasks);
            while tasks.try_join_next().is_some() {}
        }
    }

    fn schedule_one(self: Arc<Self>, pod: Pod, tasks: &mut JoinSet<()>) {
        let mut info = PodInfo::new(pod);
        let key = info.key.clone();
        let placed = {
            let mut cache = self.cache();
            if cache.is_placed(&key) {
                None
            } else {
                info.prepare(&cache);
                let nodes: Vec<_> = cache.nodes().collect();
                let choice = self.profile.select(&info, &nodes);
                if let Ok(node) = &choice {
                    cache.assume(&info.pod, node);
                }
                Some(choice)
            }
        };
        match placed {
            None => self.queue.done(&key, Outcome::Done),
            Some(Ok(node)) => {
                tasks.spawn(async move {
                    let outcome = self.bind(&info.pod, &node).await;
                    if outcome != Outcome::Done {
                        self.cache().forget(&key);
                    }
                    self.queue.done(&key, outcome);
                });
            }
            Some(Err(fit)) => {
                let message = fit.message();
                tracing::info!(pod = %key, %message, "unschedulable");
                self.queue.done(&key, Outcome::Unschedulable);
                tasks.spawn(async move { self.report_unschedulable(&info.pod, &message).await });
            }
        }
    }

    async fn bind(&self, pod: &Pod, node: &str) -> Outcome {
        let ns = pod.metadata.namespace.as_deref();
        let name = pod.metadata.name.as_deref().unwrap_or("");
        let binding = Binding {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: ns.map(str::to_string),
                uid: pod.metadata.uid.clone(),
                ..Default::default()
            },
            target: ObjectReference {
                kind: Some("Node".into()),
                name: Some(node.into()),
                ..Default::default()
            },
        };
        match self
            .client
            .create_subresource::<Pod, _>(ns, name, "binding", &binding)
            .await
        {
            Ok(_) => {
                let note = format!(
                    "Successfully assigned {}/{name} to {node}",
                    ns.unwrap_or("")
                );
                self.event(pod, "Normal", "Scheduled", "Binding", &note)
                    .await;
                Outcome::Done
            }
            // Bound already, or gone: nothing more to do for this pod.
            Err(e) if matches!(e.code(), Some(404 | 409)) => Outcome::Done,
            Err(e) => {
                tracing::warn!(pod = name, error = %e, "binding failed");
                Outcome::Error
            }
        }
    }

    /// Sets `PodScheduled=False` (reason `Unschedulable`) and records `FailedScheduling`.
    async fn report_unschedulable(&self, pod: &Pod, message: &str) {
        let ns = pod.metadata.namespace.as_deref();
        let name = pod.metadata.name.as_deref().unwrap_or("");
        for _ in 0..3 {
            let Ok(mut current) = self.client.get::<Pod>(ns, name).await else {
                return;
            };
            let status = current.status.get_or_insert_with(Default::default);
            let conditions = status.conditions.get_or_insert_with(Vec::new);
            let same = conditions.iter().any(|c| {
                c.type_ == "PodScheduled"
                    && c.status == "False"
                    && c.message.as_deref() == Some(message)
            });
            if same {
                break;
            }
            conditions.retain(|c| c.type_ != "PodScheduled");
            conditions.push(PodCondition {
                type_: "PodScheduled".into(),
                status: "False".into(),
                reason: Some("Unschedulable".into()),
                message: Some(message.into()),
                last_transition_time: Some(Time(jiff::Timestamp::now())),
                ..Default::default()
            });
            match self.client.replace_status(ns, name, &current).await {
                Err(e) if e.code() == Some(409) => continue,
                _ => break,
            }
        }
        self.event(pod, "Warning", "FailedScheduling", "Scheduling", message)
            .await;
    }

    async fn event(&self, pod: &Pod, kind: &str, reason: &str, action: &str, note: &str) {
        let now = jiff::Timestamp::now();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let event = Event {
            metadata: ObjectMeta {
                name: Some(format!("{name}.{:x}", now.as_nanosecond())),
                namespace: pod.metadata.namespace.clone(),
                ..Default::default()
            },
            event_time: Some(MicroTime(now)),
            reporting_controller: Some(self.profile.scheduler_name.clone()),
            reporting_instance: Some(self.instance.clone()),
            action: Some(action.into()),
            reason: Some(reason.into()),
            type_: Some(kind.into()),
            note: Some(note.into()),
            regarding: Some(ObjectReference {
                kind: Some("Pod".into()),
                api_version: Some("v1".into()),
                namespace: pod.metadata.namespace.clone(),
                name: Some(name),
                uid: pod.metadata.uid.clone(),
                resource_version: pod.metadata.resource_version.clone(),
                ..Default::default()
            }),
            ..Default::default()
        };
        if let Err(e) = self
            .client
            .create(pod.metadata.namespace.as_deref(), &event)
            .await
        {
            tracing::debug!(error = %e, "recording an event failed");
        }
    }
}
