//! A reflector: follows a collection as informers do. It lists (in pages), then watches from
//! the list's resourceVersion; when a watch ends it watches again from the last version it
//! saw (bookmarks included), and when that version is gone (410 Expired) it lists again.

use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{ListableResource, Metadata};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;

use crate::client::{Client, ListParams, WatchEvent};
use crate::error::{Error, Result};

/// Objects per page of the lists.
const PAGE: u32 = 500;

/// What the reflector reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Change<K> {
    /// The whole collection, after a list: it replaces what was known.
    Listed(Vec<K>),
    /// An object was added or changed.
    Applied(K),
    /// An object was deleted (its last state).
    Deleted(K),
}

/// Follows one collection.
pub struct Reflector<K> {
    client: Client,
    namespace: Option<String>,
    params: ListParams,
    watch_timeout: u32,
    resume_from: Option<String>,
    _kind: std::marker::PhantomData<fn() -> K>,
}

impl<K> Reflector<K>
where
    K: ListableResource + Metadata<Ty = ObjectMeta> + DeserializeOwned + Send + 'static,
{
    /// Follows `K` in `namespace` (all namespaces when `None`) with the selectors of
    /// `params`.
    pub fn new(client: Client, namespace: Option<String>, params: ListParams) -> Self {
        Self {
            client,
            namespace,
            params: ListParams {
                limit: 0,
                continue_token: None,
                resource_version: None,
                ..params
            },
            watch_timeout: 300,
            resume_from: None,
            _kind: std::marker::PhantomData,
        }
    }

    /// Each watch asks the server to end after `seconds` (then the reflector resumes).
    pub fn watch_timeout(mut self, seconds: u32) -> Self {
        self.watch_timeout = seconds.max(1);
        self
    }

    /// Starts by watching from `resource_version` instead of listing (a restart that knows
    /// where it was); when that version is gone it lists.
    pub fn resume_from(mut self, resource_version: impl Into<String>) -> Self {
        self.resume_from = Some(resource_version.into());
        self
    }

    async fn list(&self) -> Result<(Vec<K>, String)> {
        let mut items = Vec::new();
        let mut params = ListParams {
            limit: PAGE,
            ..self.params.clone()
        };
        loop {
            let page = self
                .client
                .list::<K>(self.namespace.as_deref(), &params)
                .await?;
            items.extend(page.items);
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params.continue_token = Some(token),
                None => return Ok((items, page.metadata.resource_version.unwrap_or_default())),
            }
        }
    }

    /// Reports changes to `changes` until its receiver goes away.
    pub async fn run(self, changes: mpsc::Sender<Change<K>>) {
        let mut version = self.resume_from.clone();
        loop {
            let from = match version.take() {
                Some(v) => v,
                None => match self.list().await {
                    Ok((items, v)) => {
                        if changes.send(Change::Listed(items)).await.is_err() {
                            return;
                        }
                        v
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, kind = K::KIND, "reflector: list failed");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                },
            };
            match self.watch_from(&from, &changes).await {
                Ok(Some(last)) => version = Some(last),
                Ok(None) => return,
                Err(e) if e.code() == Some(410) => {}
                Err(e) => {
                    tracing::warn!(error = %e, kind = K::KIND, "reflector: watch failed");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    version = Some(from);
                }
            }
        }
    }

    /// One watch from `from`: the version to resume from when it ends, None when the
    /// receiver is gone; 410 (as an answer or an ERROR event) is an `Err`.
    async fn watch_from(
        &self,
        from: &str,
        changes: &mpsc::Sender<Change<K>>,
    ) -> Result<Option<String>> {
        let params = ListParams {
            resource_version: Some(from.to_string()),
            ..self.params.clone()
        };
        let mut events = Box::pin(
            self.client
                .watch::<K>(self.namespace.as_deref(), &params, self.watch_timeout)
                .await?,
        );
        let mut last = from.to_string();
        while let Some(event) = events.next().await {
            let change = match event? {
                WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                    last = version_of(&obj).unwrap_or(last);
                    Change::Applied(obj)
                }
                WatchEvent::Deleted(obj) => {
                    last = version_of(&obj).unwrap_or(last);
                    Change::Deleted(obj)
                }
                WatchEvent::Bookmark(v) => {
                    if !v.is_empty() {
                        last = v;
                    }
                    continue;
                }
                WatchEvent::Error(status) => return Err(Error::Api(status)),
            };
            if changes.send(change).await.is_err() {
                return Ok(None);
            }
        }
        Ok(Some(last))
    }
}

fn version_of<K: Metadata<Ty = ObjectMeta>>(obj: &K) -> Option<String> {
    obj.metadata().resource_version.clone()
}
