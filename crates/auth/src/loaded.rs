//! Whether an index has listed each of the collections it follows once: checked on every
//! request, awaited at start-up without polling.

use tokio::sync::watch;

/// One flag per followed collection; loaded when all are set. Flags are set as collections
/// are listed, and cleared only all at once, for a load that starts over.
#[derive(Debug)]
pub struct Loaded<const N: usize> {
    listed: watch::Sender<[bool; N]>,
}

impl<const N: usize> Default for Loaded<N> {
    fn default() -> Self {
        Self {
            listed: watch::Sender::new([false; N]),
        }
    }
}

impl<const N: usize> Loaded<N> {
    /// Collection `slot` has been listed once.
    pub fn set(&self, slot: usize) {
        self.listed
            .send_if_modified(|listed| !std::mem::replace(&mut listed[slot], true));
    }

    /// No collection has been listed: the index loads again from the start.
    pub fn clear(&self) {
        self.listed.send_replace([false; N]);
    }

    /// Whether every collection has been listed once.
    pub fn is_loaded(&self) -> bool {
        self.listed.borrow().iter().all(|l| *l)
    }

    /// Returns once every collection has been listed.
    pub async fn wait(&self) {
        if self.is_loaded() {
            return;
        }
        let mut listed = self.listed.subscribe();
        // The sender lives as long as `self`, so the wait cannot fail.
        let _ = listed.wait_for(|l| l.iter().all(|l| *l)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_waiter_wakes_when_the_last_collection_is_listed() {
        let loaded = std::sync::Arc::new(Loaded::<2>::default());
        let waiter = tokio::spawn({
            let loaded = loaded.clone();
            async move { loaded.wait().await }
        });
        loaded.set(0);
        loaded.set(0);
        tokio::task::yield_now().await;
        assert!(!loaded.is_loaded());
        assert!(!waiter.is_finished());
        loaded.set(1);
        assert!(loaded.is_loaded());
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("the waiter wakes")
            .unwrap();
        // Waiting on a loaded index returns at once.
        loaded.wait().await;
        loaded.clear();
        assert!(!loaded.is_loaded());
        loaded.set(0);
        loaded.set(1);
        assert!(loaded.is_loaded());
    }
}
