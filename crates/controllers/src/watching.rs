//! Following a collection: list, then watch from the list's version, again after every end.

use std::sync::Arc;
use std::time::Duration;

use capstan_registry::{ListOptions, Payload, RestStorage, WatchOptions};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::warn;

/// One object seen: listed, added or modified (`deleted` false), or deleted; or, with
/// `listed` set (and an empty object), the end of a list. `generation` counts the lists:
/// after a relist, objects not seen in the new generation are gone (their deletions were
/// missed).
pub(crate) struct Seen<T = Object> {
    pub object: T,
    pub deleted: bool,
    pub listed: bool,
    pub generation: u64,
}

/// What the controllers read of an object: the rest is skipped while parsing, so that a list
/// of many large objects never lives in memory as JSON trees.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Object {
    pub metadata: Metadata,
    pub spec: Spec,
}

/// The metadata the controllers use.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Metadata {
    #[serde(deserialize_with = "nullable")]
    pub uid: String,
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(deserialize_with = "nullable")]
    pub owner_references: Vec<OwnerReference>,
    #[serde(deserialize_with = "nullable")]
    pub finalizers: Vec<String>,
    pub deletion_timestamp: Option<String>,
}

/// An owner reference.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct OwnerReference {
    #[serde(deserialize_with = "nullable")]
    pub uid: String,
    #[serde(deserialize_with = "nullable")]
    pub api_version: String,
    #[serde(deserialize_with = "nullable")]
    pub kind: String,
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    pub block_owner_deletion: Option<bool>,
}

/// `spec.finalizers` (namespaces); other kinds' specs are skipped, whatever their shape.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Spec {
    #[serde(deserialize_with = "strings")]
    pub finalizers: Vec<String>,
}

/// `null` as the default.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// The strings of a list; anything else is empty.
fn strings<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect())
}

/// A list response: its version and items.
#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de> + Default")]
pub(crate) struct List<T> {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(default, deserialize_with = "nullable")]
    pub items: Vec<T>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ListMeta {
    #[serde(deserialize_with = "nullable")]
    resource_version: String,
}

/// A listed item: its JSON (a list from the watch cache, whose items are kept encoded), or
/// already parsed (a list that came as one document).
enum Item<T> {
    Json(capstan_registry::CachedJson),
    Parsed(Box<T>),
}

/// A list's resourceVersion and its items.
fn list_items<T: serde::de::DeserializeOwned + Default>(
    listed: Payload,
) -> Result<(String, Vec<Item<T>>), serde_json::Error> {
    match listed {
        Payload::List { head, items, .. } => {
            let mut head = head.to_vec();
            head.extend_from_slice(b"]}");
            let list: List<serde::de::IgnoredAny> = serde_json::from_slice(&head)?;
            Ok((
                list.metadata.resource_version,
                items.into_iter().map(Item::Json).collect(),
            ))
        }
        Payload::Whole(body) => {
            let list: List<T> = serde_json::from_slice(&body)?;
            Ok((
                list.metadata.resource_version,
                list.items
                    .into_iter()
                    .map(|item| Item::Parsed(Box::new(item)))
                    .collect(),
            ))
        }
    }
}

/// A watch event.
#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de> + Default")]
struct Event<T> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    object: T,
}

/// Follows `storage` into an index: `apply(object, deleted, generation)` for each object
/// seen, `listed(generation)` at the end of each full list (what it did not see is gone).
/// The follower and the applier, stopped by aborting them.
pub(crate) fn feed<T>(
    storage: Arc<dyn RestStorage>,
    listed: impl Fn(u64) + Send + 'static,
    apply: impl Fn(T, bool, u64) + Send + 'static,
) -> [tokio::task::JoinHandle<()>; 2]
where
    T: serde::de::DeserializeOwned + Default + Send + 'static,
{
    feed_mentioning(storage, &[], listed, apply)
}

/// [`feed`], of the objects whose JSON has one of `needles` only (see
/// [`follow_mentioning`]); no needles: every object.
pub(crate) fn feed_mentioning<T>(
    storage: Arc<dyn RestStorage>,
    needles: &'static [&'static str],
    listed: impl Fn(u64) + Send + 'static,
    apply: impl Fn(T, bool, u64) + Send + 'static,
) -> [tokio::task::JoinHandle<()>; 2]
where
    T: serde::de::DeserializeOwned + Default + Send + 'static,
{
    let (tx, mut rx) = mpsc::channel::<Seen<T>>(256);
    let interest = match needles {
        [] => Interest::All,
        needles => Interest::Mentioning(needles),
    };
    let follower = tokio::spawn(follow_with(storage, tx, interest));
    let applier = tokio::spawn(async move {
        while let Some(seen) = rx.recv().await {
            if seen.listed {
                listed(seen.generation);
            } else {
                apply(seen.object, seen.deleted, seen.generation);
            }
        }
    });
    [follower, applier]
}

/// Sends every object of the collection (cluster-wide), then every changed object as its
/// events arrive; relists when the watch ends. Runs until the receiver goes away.
pub(crate) async fn follow<T>(storage: Arc<dyn RestStorage>, tx: mpsc::Sender<Seen<T>>)
where
    T: serde::de::DeserializeOwned + Default + Send,
{
    follow_with(storage, tx, Interest::All).await
}

/// Like [`follow`], for a controller that cares only for objects whose JSON has one of
/// `needles` (pods that use claims, say): the others are not parsed, as if they did not
/// exist. A needle must be in the JSON of every object the controller needs, before and
/// after each of its changes.
pub(crate) async fn follow_mentioning<T>(
    storage: Arc<dyn RestStorage>,
    tx: mpsc::Sender<Seen<T>>,
    needles: &'static [&'static str],
) where
    T: serde::de::DeserializeOwned + Default + Send,
{
    follow_with(storage, tx, Interest::Mentioning(needles)).await
}

/// Like [`follow`], for a controller that acts on deletions only: sends the end of each list
/// and each deleted object; the listed objects and the other events are not parsed.
pub(crate) async fn follow_deletions<T>(storage: Arc<dyn RestStorage>, tx: mpsc::Sender<Seen<T>>)
where
    T: serde::de::DeserializeOwned + Default + Send,
{
    follow_with(storage, tx, Interest::Deletions).await
}

/// Which objects and events a follower parses and sends.
#[derive(Clone, Copy)]
enum Interest {
    All,
    /// Deleted objects only (and the end of each list).
    Deletions,
    /// Objects whose JSON has one of these strings.
    Mentioning(&'static [&'static str]),
}

impl Interest {
    fn wants(self, json: &[u8]) -> bool {
        match self {
            Interest::All | Interest::Deletions => true,
            Interest::Mentioning(needles) => needles
                .iter()
                .any(|n| memchr::memmem::find(json, n.as_bytes()).is_some()),
        }
    }
}

async fn follow_with<T>(
    storage: Arc<dyn RestStorage>,
    tx: mpsc::Sender<Seen<T>>,
    interest: Interest,
) where
    T: serde::de::DeserializeOwned + Default + Send,
{
    let mut generation = 0u64;
    let handle = async |object: T, deleted: bool, generation: u64| {
        tx.send(Seen {
            object,
            deleted,
            listed: false,
            generation,
        })
        .await
        .is_ok()
    };
    'relist: loop {
        let listed = match storage.list("", &ListOptions::default()).await {
            Ok(encoded) => encoded.body,
            Err(err) => {
                warn!(%err, resource = %storage.descriptor().resource, "controller: list failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let (version, items) = match list_items(listed) {
            Ok(listed) => listed,
            Err(err) => {
                warn!(%err, resource = %storage.descriptor().resource, "controller: unreadable list");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        generation += 1;
        // One item parsed at a time, as the receiver takes them: a list of many large
        // objects never lives in memory parsed all at once.
        let deletions_only = matches!(interest, Interest::Deletions);
        let items = if deletions_only { Vec::new() } else { items };
        for item in items {
            let object = match item {
                Item::Json(json) => {
                    let json = json.contiguous();
                    if !interest.wants(&json) {
                        continue;
                    }
                    match serde_json::from_slice::<T>(&json) {
                        Ok(object) => object,
                        Err(err) => {
                            warn!(%err, resource = %storage.descriptor().resource, "controller: unreadable list");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            continue 'relist;
                        }
                    }
                }
                Item::Parsed(object) => *object,
            };
            if !handle(object, false, generation).await {
                return;
            }
        }
        let end = Seen {
            object: T::default(),
            deleted: false,
            listed: true,
            generation,
        };
        if tx.send(end).await.is_err() {
            return;
        }
        let options = WatchOptions {
            list: ListOptions {
                resource_version: version,
                ..Default::default()
            },
            allow_bookmarks: false,
            timeout: Duration::from_secs(3600),
            initialization: None,
            connection: 0,
        };
        let mut lines = match storage.watch("", &options).await {
            Ok(lines) => lines,
            Err(err) => {
                warn!(%err, resource = %storage.descriptor().resource, "controller: watch failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        'events: while let Some(chunk) = lines.next().await {
            for line in capstan_registry::watching::event_lines(&chunk) {
                let kind = capstan_registry::watching::event_type(line);
                let wanted = match kind {
                    Some("ERROR") | None => true,
                    Some("DELETED") => interest.wants(line),
                    Some(_) => !deletions_only && interest.wants(line),
                };
                if !wanted {
                    continue;
                }
                let Ok(event) = serde_json::from_slice::<Event<T>>(line) else {
                    continue;
                };
                let delivered = match event.kind.as_str() {
                    "ADDED" | "MODIFIED" => handle(event.object, false, generation).await,
                    "DELETED" => handle(event.object, true, generation).await,
                    // ERROR (e.g. 410): start over with a fresh list.
                    "ERROR" => break 'events,
                    _ => true,
                };
                if !delivered {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_follower_mentioning_needles_skips_only_objects_without_them() {
        let claims = Interest::Mentioning(&["\"persistentVolumeClaim\"", "\"ephemeral\""]);
        let uses = br#"{"type":"DELETED","object":{"spec":{"volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"c"}}]}}}"#;
        let generic =
            br#"{"spec":{"volumes":[{"name":"e","ephemeral":{"volumeClaimTemplate":{}}}]}}"#;
        let neither = br#"{"spec":{"ephemeralContainers":[],"containers":[{"resources":{"limits":{"ephemeral-storage":"1Gi"}}}]}}"#;
        assert!(claims.wants(uses));
        assert!(claims.wants(generic));
        assert!(!claims.wants(neither));
        assert!(Interest::All.wants(neither));
        assert!(Interest::Deletions.wants(neither));
    }

    #[test]
    fn objects_read_only_what_controllers_use_and_tolerate_nulls() {
        let pod: Object = serde_json::from_value(serde_json::json!({
            "metadata": {"uid": "u", "name": "p", "namespace": null, "finalizers": null,
                "ownerReferences": [{"uid": "o", "kind": "ReplicaSet", "name": "rs",
                    "apiVersion": "apps/v1", "blockOwnerDeletion": null}],
                "deletionTimestamp": "2026-11-23T19:00:00Z", "managedFields": [{"manager": "x"}]},
            "spec": {"containers": [{"name": "c"}], "finalizers": {"not": "a list"}}
        }))
        .unwrap();
        assert_eq!(pod.metadata.uid, "u");
        assert_eq!(pod.metadata.namespace, "");
        assert_eq!(pod.metadata.owner_references[0].name, "rs");
        assert_eq!(pod.metadata.owner_references[0].block_owner_deletion, None);
        assert!(pod.metadata.deletion_timestamp.is_some());
        assert!(pod.spec.finalizers.is_empty());
        let ns: Object = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "n"}, "spec": {"finalizers": ["kubernetes"]}
        }))
        .unwrap();
        assert_eq!(ns.spec.finalizers, ["kubernetes"]);
    }

    /// The names and the resourceVersion of a list, read through `list_items`.
    fn names(listed: Payload) -> (String, Vec<String>) {
        let (version, items) = list_items::<Object>(listed).unwrap();
        let names = items
            .into_iter()
            .map(|item| match item {
                Item::Json(json) => serde_json::from_slice::<Object>(&json.contiguous()).unwrap(),
                Item::Parsed(object) => *object,
            })
            .map(|o| o.metadata.name)
            .collect();
        (version, names)
    }

    #[test]
    fn lists_are_read_as_their_items_whether_kept_encoded_or_whole() {
        let item = |name: &str| {
            bytes::Bytes::from(format!(
                r#"{{"kind":"Pod","metadata":{{"name":"{name}"}}}}"#
            ))
        };
        let kept = Payload::List {
            head: bytes::Bytes::from_static(
                br#"{"kind":"PodList","metadata":{"resourceVersion":"12"},"items":["#,
            ),
            items: vec![item("a").into(), item("b").into()],
            cached: Vec::new(),
            bare_items: true,
        };
        assert_eq!(names(kept), ("12".into(), vec!["a".into(), "b".into()]));
        let whole = Payload::Whole(bytes::Bytes::from_static(
            br#"{"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"c"}}]}"#,
        ));
        assert_eq!(names(whole), ("7".into(), vec!["c".into()]));
        let broken = Payload::List {
            head: bytes::Bytes::from_static(br#"{"metadata":"#),
            items: Vec::new(),
            cached: Vec::new(),
            bare_items: true,
        };
        assert!(list_items::<Object>(broken).is_err());
    }
}
