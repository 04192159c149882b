use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::store::{Revision, Store};

/// Compacts `store` every `interval`, each time up to the revision that was current one
/// interval earlier, so that at least `interval` of history stays available to watchers.
/// The task ends when the returned handle is aborted.
pub fn spawn_compactor(store: Arc<dyn Store>, interval: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut previous: Option<Revision> = None;
        let mut ticker = tokio::time::interval(interval);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            let current = match store.current_revision().await {
                Ok(rev) => rev,
                Err(err) => {
                    warn!(%err, "compactor: reading the current revision failed");
                    continue;
                }
            };
            if let Some(target) = previous {
                match store.compact(target).await {
                    Ok(()) => debug!(revision = target.0, "compacted"),
                    Err(err) => warn!(%err, revision = target.0, "compaction failed"),
                }
            }
            previous = Some(current);
        }
    })
}
