//! The embedded store's live keys, in memory: each key that exists now, with its create and
//! mod revisions. Made from the log when the store opens (each key's last entry decides), as
//! etcd keeps its key index beside its database: the log stays the only copy on disk, and a
//! write adds one entry at its end instead of also rewriting a B-tree leaf at its key.
//!
//! Deleted keys leave at their delete, so the memory follows what is stored, not the
//! history (older revisions are found through the log's chains, see `embedded`).

use std::collections::BTreeMap;
use std::ops::Bound;

use redb::ReadableTable;

use crate::embedded::{DELETE, LogEntry};
use crate::error::Result;
use crate::store::{Event, EventKind};

/// The keys that exist, in key order, as of [`LiveKeys::revision`].
#[derive(Debug, Default)]
pub(crate) struct LiveKeys {
    keys: BTreeMap<Box<str>, (u64, u64)>,
    /// The revision of the last change recorded here.
    pub(crate) revision: u64,
}

impl LiveKeys {
    /// The live keys of a log, as of `revision` (its last committed revision).
    pub(crate) fn load(log: &impl ReadableTable<u64, LogEntry>, revision: u64) -> Result<Self> {
        let mut live = Self {
            keys: BTreeMap::new(),
            revision,
        };
        for entry in log.iter()? {
            let (r, v) = entry?;
            let (key, kind, create, ..) = v.value();
            live.change(key, kind == DELETE, create, r.value());
        }
        Ok(live)
    }

    /// The create and mod revisions of `key`, when it exists.
    pub(crate) fn get(&self, key: &str) -> Option<(u64, u64)> {
        self.keys.get(key).copied()
    }

    /// Records a committed change.
    pub(crate) fn record(&mut self, event: &Event) {
        let kv = &event.kv;
        match event.kind {
            EventKind::Put | EventKind::Delete => self.change(
                &kv.key,
                event.kind == EventKind::Delete,
                kv.create_revision.0,
                kv.mod_revision.0,
            ),
            EventKind::Progress => {}
        }
        self.revision = self.revision.max(kv.mod_revision.0);
    }

    fn change(&mut self, key: &str, delete: bool, create: u64, rev: u64) {
        if delete {
            self.keys.remove(key);
        } else if let Some(revs) = self.keys.get_mut(key) {
            *revs = (create, rev);
        } else {
            self.keys.insert(key.into(), (create, rev));
        }
    }

    /// The keys under `prefix` from `start` on (when it sorts after `prefix`), with their
    /// create and mod revisions.
    pub(crate) fn under<'a>(
        &'a self,
        prefix: &'a str,
        start: Option<&str>,
    ) -> impl Iterator<Item = (&'a str, u64, u64)> + 'a {
        let from = start.filter(|s| *s > prefix).unwrap_or(prefix);
        self.keys
            .range::<str, _>((Bound::Included(from), Bound::Unbounded))
            .map(|(k, &(create, rev))| (&**k, create, rev))
            .take_while(move |(k, ..)| k.starts_with(prefix))
    }

    /// How many keys exist.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::store::{KeyValue, Revision};

    fn event(kind: EventKind, key: &str, create: u64, rev: u64) -> Event {
        Event {
            kind,
            kv: KeyValue {
                key: key.into(),
                value: Bytes::new(),
                create_revision: Revision(create),
                mod_revision: Revision(rev),
            },
        }
    }

    #[test]
    fn keys_follow_their_changes_and_leave_at_their_delete() {
        let mut live = LiveKeys::default();
        for e in [
            event(EventKind::Put, "/k/a", 1, 1),
            event(EventKind::Put, "/k/b", 2, 2),
            event(EventKind::Put, "/k/a", 1, 3),
            event(EventKind::Delete, "/k/b", 2, 4),
            event(EventKind::Put, "/l/c", 5, 5),
        ] {
            live.record(&e);
        }
        assert_eq!((live.get("/k/a"), live.get("/k/b")), (Some((1, 3)), None));
        assert_eq!((live.len(), live.revision), (2, 5));
        let under: Vec<_> = live.under("/k/", None).collect();
        assert_eq!(under, [("/k/a", 1, 3)]);
        live.record(&event(EventKind::Put, "/k/b", 6, 6));
        let from_b: Vec<_> = live.under("/k/", Some("/k/b")).collect();
        assert_eq!(from_b, [("/k/b", 6, 6)]);
        assert_eq!(live.under("/", Some("/k/a\0")).count(), 2);
    }
}
