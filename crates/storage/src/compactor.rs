use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::store::{Revision, Store};

/// Compacts `store` every `interval`, each time up to the revision that was current one
/// interval earlier, so that at least `interval` of history stays available to watchers.
/// API servers sharing a backend take turns ([`Store::compaction_turn`]): in each interval
/// one of them compacts, the others learn the round and the current revision. The task
/// ends when the returned handle is aborted.
pub fn spawn_compactor(store: Arc<dyn Store>, interval: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut round = 0;
        let mut target: Option<Revision> = None;
        let mut ticker = tokio::time::interval(interval);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            let turn = match store
                .compaction_turn(round, target.unwrap_or_default())
                .await
            {
                Ok(turn) => turn,
                Err(err) => {
                    warn!(%err, "compactor: taking the compaction turn failed");
                    continue;
                }
            };
            round = turn.round;
            if let Some(target) = target.filter(|_| turn.granted) {
                match store.compact(target).await {
                    Ok(()) => debug!(revision = target.0, round, "compacted"),
                    Err(err) => warn!(%err, revision = target.0, "compaction failed"),
                }
            }
            target = Some(turn.current);
        }
    })
}
