//! Remembers what a token's signature check found, so that a client's requests do not each
//! pay for it. Keys are SHA-256 digests of the tokens, never the tokens themselves.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// Entries kept at most; when full, expired entries go, and if none has, the oldest one.
const CAPACITY: usize = 4096;

/// Verified token contents, each kept for a fixed time.
pub struct TokenCache<T> {
    ttl: Duration,
    entries: RwLock<HashMap<[u8; 32], (Instant, T)>>,
}

impl<T: Clone> TokenCache<T> {
    /// A cache whose entries live `ttl`.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: RwLock::new(HashMap::new()),
        }
    }

    fn key(token: &str) -> [u8; 32] {
        let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        let mut key = [0; 32];
        key.copy_from_slice(digest.as_ref());
        key
    }

    /// What was found for `token`, while it is fresh.
    pub fn get(&self, token: &str) -> Option<T> {
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        let (expires, value) = entries.get(&Self::key(token))?;
        (Instant::now() < *expires).then(|| value.clone())
    }

    /// Remembers `value` for `token`.
    pub fn insert(&self, token: &str, value: T) {
        let now = Instant::now();
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= CAPACITY {
            entries.retain(|_, (expires, _)| *expires > now);
            // Still full: the entry closest to its end makes room. (Clearing everything would
            // let anyone flush every user's entry by sending made-up tokens.)
            if entries.len() >= CAPACITY
                && let Some(soonest) = entries
                    .iter()
                    .min_by_key(|(_, (expires, _))| *expires)
                    .map(|(k, _)| *k)
            {
                entries.remove(&soonest);
            }
        }
        entries.insert(Self::key(token), (now + self.ttl, value));
    }

    /// Entries held (fresh or not).
    pub fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_stay_bounded() {
        let cache = TokenCache::new(Duration::from_millis(30));
        cache.insert("a", 1);
        assert_eq!(cache.get("a"), Some(1));
        assert_eq!(cache.get("b"), None);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(cache.get("a"), None);
        let long = TokenCache::new(Duration::from_secs(60));
        long.insert("first", 0);
        std::thread::sleep(Duration::from_millis(2));
        for i in 0..CAPACITY + 10 {
            long.insert(&i.to_string(), i);
        }
        assert!(long.len() <= CAPACITY);
        // A flood of new tokens pushes out the oldest entries one by one, not all at once.
        assert_eq!(long.get("first"), None);
        assert_eq!(long.get(&(CAPACITY + 9).to_string()), Some(CAPACITY + 9));
        assert_eq!(long.get("20"), Some(20));
    }
}
