//! The embedded store's feed of committed batches to its watchers, bounded per watcher by
//! batches and by bytes.
//!
//! Every watcher has its own queue of shared batches. A watcher whose queue would pass either
//! bound is cut off: its stream ends with [`Error::WatchLagged`](crate::Error::WatchLagged)
//! (a watch cache then reloads), so one slow reader never holds more than the bound in memory
//! nor slows the writer. The batches are shared, so all queues together hold no more than
//! the longest one.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::store::Event;

/// One committed batch, as watchers receive it.
pub(crate) type Batch = Arc<[Event]>;

/// What a watcher's queue may hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// Batches.
    pub batches: usize,
    /// Bytes of keys and values.
    pub bytes: usize,
}

struct Queue {
    tx: mpsc::UnboundedSender<(Batch, usize)>,
    state: Arc<QueueState>,
}

#[derive(Default)]
struct QueueState {
    batches: AtomicUsize,
    bytes: AtomicUsize,
    /// Whether it was cut off, and how far behind it was then.
    cut_off: AtomicBool,
    missed: AtomicU64,
}

/// The sending side, owned by the store.
pub(crate) struct Fanout {
    bounds: Bounds,
    queues: Mutex<Vec<Queue>>,
}

/// One watcher's receiving side.
pub(crate) struct Subscription {
    rx: mpsc::UnboundedReceiver<(Batch, usize)>,
    state: Arc<QueueState>,
}

/// Why a subscription ended.
pub(crate) enum Ended {
    /// The store closed.
    Closed,
    /// The watcher fell behind a bound; it missed this many batches (at least).
    Lagged(u64),
}

impl Fanout {
    pub fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            queues: Mutex::new(Vec::new()),
        }
    }

    /// A new watcher, receiving every batch published from now on.
    pub fn subscribe(&self) -> Subscription {
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Arc::new(QueueState::default());
        self.lock().push(Queue {
            tx,
            state: state.clone(),
        });
        Subscription { rx, state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Queue>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `batch` for every watcher; cuts off those it would take past a bound, and
    /// forgets those that went away.
    pub fn publish(&self, batch: Batch) {
        let bytes: usize = batch
            .iter()
            .map(|e| e.kv.key.len() + e.kv.value.len())
            .sum();
        self.lock().retain(|queue| {
            let state = &queue.state;
            let batches = state.batches.load(Ordering::Acquire);
            let queued = state.bytes.load(Ordering::Acquire);
            // An empty queue takes any one batch: a batch is bounded on its own.
            if batches > 0
                && (batches + 1 > self.bounds.batches || queued + bytes > self.bounds.bytes)
            {
                state.missed.store(batches as u64 + 1, Ordering::Release);
                state.cut_off.store(true, Ordering::Release);
                return false;
            }
            state.batches.fetch_add(1, Ordering::AcqRel);
            state.bytes.fetch_add(bytes, Ordering::AcqRel);
            queue.tx.send((batch.clone(), bytes)).is_ok()
        });
    }
}

impl Subscription {
    /// The next batch, or why there is none.
    pub async fn recv(&mut self) -> Result<Batch, Ended> {
        match self.rx.recv().await {
            Some((batch, bytes)) => {
                self.state.batches.fetch_sub(1, Ordering::AcqRel);
                self.state.bytes.fetch_sub(bytes, Ordering::AcqRel);
                Ok(batch)
            }
            None if self.state.cut_off.load(Ordering::Acquire) => {
                Err(Ended::Lagged(self.state.missed.load(Ordering::Acquire)))
            }
            None => Err(Ended::Closed),
        }
    }
}
