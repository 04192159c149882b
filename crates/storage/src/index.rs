//! The embedded store's key index: for every key, the revisions of it that the log still
//! holds. Kept in memory and made from the log when the store opens (as etcd keeps its key
//! index beside bbolt), so that a write adds one entry to one B-tree on disk (the log, in
//! revision order) instead of three.

use std::collections::BTreeMap;
use std::ops::Bound;

/// Marks a revision that deleted its key.
const DELETED: u64 = 1 << 63;

/// One key's revisions in the log, and the create revision of its newest put. Revisions
/// carry [`DELETED`] when they deleted the key. Most keys have one revision: it is kept
/// inline, the older ones (until a compaction) in a list.
#[derive(Debug)]
struct History {
    create: u64,
    newest: u64,
    /// Older revisions, oldest first.
    older: Vec<u64>,
}

/// A revision without its mark, and whether it is a put.
fn unmarked(rev: u64) -> (u64, bool) {
    (rev & !DELETED, rev & DELETED == 0)
}

impl History {
    /// How many revisions are at or before `at`.
    fn upto(&self, at: u64) -> usize {
        if self.newest & !DELETED <= at {
            self.older.len() + 1
        } else {
            self.older.partition_point(|&r| r & !DELETED <= at)
        }
    }

    /// The `i`th revision, oldest first.
    fn nth(&self, i: usize) -> u64 {
        self.older.get(i).copied().unwrap_or(self.newest)
    }

    /// The newest revision at or before `at`, and whether it is a put.
    fn at(&self, at: u64) -> Option<(u64, bool)> {
        let n = self.upto(at);
        n.checked_sub(1).map(|i| unmarked(self.nth(i)))
    }
}

/// Every key's revisions in the log, in key order.
#[derive(Debug, Default)]
pub(crate) struct KeyIndex {
    keys: BTreeMap<Box<str>, History>,
    /// The revision of the last change recorded.
    pub(crate) revision: u64,
}

impl KeyIndex {
    /// Records the change of `key` at `rev`: a put of a value created at `create`, or a
    /// delete.
    pub(crate) fn record(&mut self, key: &str, rev: u64, create: u64, delete: bool) {
        self.revision = self.revision.max(rev);
        let marked = if delete { rev | DELETED } else { rev };
        match self.keys.get_mut(key) {
            Some(h) => {
                h.older.push(h.newest);
                h.newest = marked;
                if !delete {
                    h.create = create;
                }
            }
            None => {
                let h = History {
                    create,
                    newest: marked,
                    older: Vec::new(),
                };
                self.keys.insert(key.into(), h);
            }
        }
    }

    /// The create and mod revisions of `key`'s current value.
    pub(crate) fn current(&self, key: &str) -> Option<(u64, u64)> {
        let h = self.keys.get(key)?;
        match unmarked(h.newest) {
            (rev, true) => Some((h.create, rev)),
            (_, false) => None,
        }
    }

    /// The keys that exist now under `prefix`, from `start` on, with their create and mod
    /// revisions.
    pub(crate) fn live<'a>(
        &'a self,
        prefix: &'a str,
        start: &str,
    ) -> impl Iterator<Item = (&'a str, u64, u64)> + 'a {
        self.under(prefix, start)
            .filter_map(|(key, h)| match unmarked(h.newest) {
                (rev, true) => Some((key, h.create, rev)),
                _ => None,
            })
    }

    /// The keys that existed at revision `at` under `prefix`, from `start` on, each with the
    /// revision of its value then.
    pub(crate) fn live_at<'a>(
        &'a self,
        prefix: &'a str,
        start: &str,
        at: u64,
    ) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        self.under(prefix, start)
            .filter_map(move |(key, h)| match h.at(at) {
                Some((rev, true)) => Some((key, rev)),
                _ => None,
            })
    }

    /// How many keys exist now under `prefix`.
    pub(crate) fn count(&self, prefix: &str) -> u64 {
        self.live(prefix, prefix).count() as u64
    }

    /// How many keys exist now.
    pub(crate) fn len(&self) -> u64 {
        self.count("")
    }

    fn under<'a>(
        &'a self,
        prefix: &'a str,
        start: &str,
    ) -> impl Iterator<Item = (&'a str, &'a History)> + 'a {
        let start = if start > prefix { start } else { prefix };
        self.keys
            .range::<str, _>((Bound::Included(start), Bound::Unbounded))
            .map(|(k, h)| (&**k, h))
            .take_while(move |(k, _)| k.starts_with(prefix))
    }

    /// The revisions of `key` that no read after `to` needs: every one at or before `to` but
    /// the last, and that one too if it deleted the key. So a live key's newest revision, which
    /// holds its value, is never among them.
    pub(crate) fn compactable(&self, key: &str, to: u64) -> Vec<u64> {
        let Some(h) = self.keys.get(key) else {
            return Vec::new();
        };
        let n = h.upto(to);
        let Some(last) = n.checked_sub(1) else {
            return Vec::new();
        };
        let keep_last = h.nth(last) & DELETED == 0;
        let upto = if keep_last { last } else { n };
        (0..upto).map(|i| h.nth(i) & !DELETED).collect()
    }

    /// Forgets the oldest `count` revisions of `key` (those [`KeyIndex::compactable`] gave),
    /// and the key when none is left.
    pub(crate) fn forget(&mut self, key: &str, count: usize) {
        let Some(h) = self.keys.get_mut(key) else {
            return;
        };
        if count > h.older.len() {
            self.keys.remove(key);
        } else {
            h.older.drain(..count);
            h.older.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> KeyIndex {
        let mut ix = KeyIndex::default();
        ix.record("/k/a", 1, 1, false);
        ix.record("/k/b", 2, 2, false);
        ix.record("/k/a", 3, 1, false);
        ix.record("/k/b", 4, 2, true);
        ix.record("/k/b", 5, 5, false);
        ix.record("/k/c", 6, 6, false);
        ix.record("/k/c", 7, 6, true);
        ix.record("/l/d", 8, 8, false);
        ix
    }

    #[test]
    fn current_values_and_their_revisions() {
        let ix = index();
        assert_eq!(ix.current("/k/a"), Some((1, 3)));
        assert_eq!(
            ix.current("/k/b"),
            Some((5, 5)),
            "made again after its delete"
        );
        assert_eq!(ix.current("/k/c"), None);
        assert_eq!(ix.current("/k/z"), None);
        let live: Vec<_> = ix.live("/k/", "").collect();
        assert_eq!(live, [("/k/a", 1, 3), ("/k/b", 5, 5)]);
        let from_b: Vec<_> = ix.live("/k/", "/k/b").collect();
        assert_eq!(from_b, [("/k/b", 5, 5)]);
        assert_eq!((ix.count("/k/"), ix.count("/l/"), ix.len()), (2, 1, 3));
    }

    #[test]
    fn values_at_a_past_revision() {
        let ix = index();
        let at = |rev| ix.live_at("/k/", "", rev).collect::<Vec<_>>();
        assert_eq!(at(2), [("/k/a", 1), ("/k/b", 2)]);
        assert_eq!(at(4), [("/k/a", 3)]);
        assert_eq!(at(6), [("/k/a", 3), ("/k/b", 5), ("/k/c", 6)]);
        assert_eq!(at(7), [("/k/a", 3), ("/k/b", 5)]);
    }

    #[test]
    fn compaction_keeps_what_later_reads_need() {
        let mut ix = index();
        assert_eq!(ix.compactable("/k/a", 3), [1]);
        assert_eq!(
            ix.compactable("/k/b", 4),
            [2, 4],
            "a delete goes with what it deleted"
        );
        assert_eq!(ix.compactable("/k/b", 5), [2, 4]);
        assert_eq!(ix.compactable("/k/c", 6), Vec::<u64>::new());
        assert_eq!(ix.compactable("/k/c", 7), [6, 7]);
        ix.forget("/k/c", 2);
        ix.forget("/k/b", 2);
        assert_eq!(
            ix.live_at("/k/", "", 7).collect::<Vec<_>>(),
            [("/k/a", 3), ("/k/b", 5)]
        );
        assert_eq!(ix.keys.len(), 3, "a key with nothing left is forgotten");
        assert_eq!(ix.current("/k/b"), Some((5, 5)));
    }
}
