//! Following a collection: list, then watch from the list's version, again after every end.

use std::sync::Arc;
use std::time::Duration;

use capstan_registry::{ListOptions, RestStorage, WatchOptions};
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::warn;

/// One object seen: listed, added or modified (`deleted` false), or deleted; or, with
/// `listed` set and a null object, the end of a list. `generation` counts the lists: after a
/// relist, objects not seen in the new generation are gone (their deletions were missed).
pub(crate) struct Seen {
    pub object: Value,
    pub deleted: bool,
    pub listed: bool,
    pub generation: u64,
}

/// Sends every object of the collection (cluster-wide), then every changed object as its
/// events arrive; relists when the watch ends. Runs until the receiver goes away.
pub(crate) async fn follow(storage: Arc<dyn RestStorage>, tx: mpsc::Sender<Seen>) {
    let mut generation = 0u64;
    let handle = async |object: Value, deleted: bool, generation: u64| {
        tx.send(Seen {
            object,
            deleted,
            listed: false,
            generation,
        })
        .await
        .is_ok()
    };
    loop {
        let listed = match storage.list("", &ListOptions::default()).await {
            Ok(encoded) => encoded.body.into_bytes(),
            Err(err) => {
                warn!(%err, resource = %storage.descriptor().resource, "controller: list failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let mut list: Value = serde_json::from_slice(&listed).unwrap_or_default();
        let version = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or("")
            .to_string();
        generation += 1;
        if let Value::Array(items) = list["items"].take() {
            for item in items {
                if !handle(item, false, generation).await {
                    return;
                }
            }
        }
        let end = Seen {
            object: Value::Null,
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
            for line in chunk.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let Ok(mut event) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                let delivered = match event["type"].as_str() {
                    Some("ADDED" | "MODIFIED") => {
                        handle(event["object"].take(), false, generation).await
                    }
                    Some("DELETED") => handle(event["object"].take(), true, generation).await,
                    // ERROR (e.g. 410): start over with a fresh list.
                    Some("ERROR") => break 'events,
                    _ => true,
                };
                if !delivered {
                    return;
                }
            }
        }
    }
}
