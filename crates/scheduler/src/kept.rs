//! What plugins derive from the cache for a kind of pod, kept across pods.

use std::collections::VecDeque;

use crate::cache::{Cache, Mark, PodChange};

/// Values a plugin derives from the whole cache for a kind of pod (the key: say, a namespace
/// and a set of constraints), kept for the most recently used keys. The pods of one workload
/// share their key, and between two of them only the pods placed or removed meanwhile change
/// the value: those changes ([`Cache::pod_changes_since`]) are applied to the kept value
/// instead of deriving it again over every node.
#[derive(Debug)]
pub struct KeptAcrossPods<K, V> {
    entries: VecDeque<Entry<K, V>>,
    capacity: usize,
    derived: usize,
}

#[derive(Debug)]
struct Entry<K, V> {
    key: K,
    mark: Mark,
    value: V,
}

impl<K, V: Clone> KeptAcrossPods<K, V> {
    /// Keeps the values of at most `capacity` keys.
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            capacity,
            derived: 0,
        }
    }

    /// The value of the key `is_key` accepts: the kept one, brought up to date by `apply` for
    /// each pod change since it was derived, or (when there is none, or the changes since are
    /// not known) a new one from `derive`, kept under the key it gives.
    pub fn get(
        &mut self,
        cache: &Cache,
        is_key: impl Fn(&K) -> bool,
        mut apply: impl FnMut(&mut V, &PodChange),
        derive: impl FnOnce() -> (K, V),
    ) -> V {
        let found = self.entries.iter().position(|e| is_key(&e.key));
        if let Some(mut entry) = found.and_then(|i| self.entries.remove(i))
            && let Some(changes) = cache.pod_changes_since(entry.mark)
        {
            changes.for_each(|change| apply(&mut entry.value, change));
            entry.mark = cache.mark();
            let value = entry.value.clone();
            self.entries.push_front(entry);
            return value;
        }
        let (key, value) = derive();
        self.derived += 1;
        self.entries.push_front(Entry {
            key,
            mark: cache.mark(),
            value: value.clone(),
        });
        self.entries.truncate(self.capacity);
        value
    }

    /// How many values were derived anew.
    pub fn derived(&self) -> usize {
        self.derived
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{cluster, node, pod};
    use serde_json::json;

    /// Pods on the cache's nodes, counted by walking or by applying changes.
    fn placed(
        kept: &mut KeptAcrossPods<&'static str, i64>,
        cache: &Cache,
        key: &'static str,
    ) -> i64 {
        let apply = |n: &mut i64, c: &PodChange| *n += if c.added { 1 } else { -1 };
        kept.get(
            cache,
            |k| *k == key,
            apply,
            || (key, cache.nodes().map(|n| n.pods.len() as i64).sum()),
        )
    }

    #[test]
    fn values_are_applied_changes_until_the_changes_are_unknown() {
        let mut cache = cluster(vec![node("n1", json!({}))], Vec::new());
        let mut kept = KeptAcrossPods::new(1);
        assert_eq!(placed(&mut kept, &cache, "a"), 0);
        cache.assume(&pod("p1", json!({}), json!({})), "n1");
        cache.assume(&pod("p2", json!({}), json!({})), "n1");
        cache.remove_pod("default/p1");
        assert_eq!(placed(&mut kept, &cache, "a"), 1);
        assert_eq!(kept.derived(), 1);
        // A second key pushes the first out (capacity 1).
        assert_eq!(placed(&mut kept, &cache, "b"), 1);
        assert_eq!(placed(&mut kept, &cache, "a"), 1);
        assert_eq!(kept.derived(), 3);
        // A new node: derived again.
        cache.set_node(node("n2", json!({})));
        assert_eq!(placed(&mut kept, &cache, "a"), 1);
        assert_eq!(kept.derived(), 4);
    }
}
