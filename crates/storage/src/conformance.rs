//! The conformance suite of the [`Store`] trait. Every backend runs it from its own tests:
//! `capstan_storage::conformance::run_all(&store).await`. Each check uses its own key prefix,
//! so the suite runs on a store that already holds other data.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;

use crate::error::Error;
use crate::store::{EventKind, ListRequest, Revision, Store, WatchStream};

/// Runs every check against `store`.
pub async fn run_all(store: &dyn Store) {
    create_get_and_already_exists(store).await;
    guarded_update(store).await;
    guarded_delete(store).await;
    list_with_prefix_limit_and_start(store).await;
    list_at_older_revision(store).await;
    watch_history_then_live(store).await;
    watch_reports_progress(store).await;
    compaction(store).await;
    counts(store).await;
}

/// `count` counts the keys of a prefix, deleted ones not; a backend that knows its size says
/// a positive one.
pub async fn counts(store: &dyn Store) {
    for i in 0..3 {
        store.create(&format!("/count/k{i}"), b("v")).await.unwrap();
    }
    store.create("/countx", b("v")).await.unwrap();
    store.delete("/count/k1", None).await.unwrap();
    assert_eq!(store.count("/count/").await.unwrap(), 2);
    assert_eq!(store.count("/nothing/").await.unwrap(), 0);
    if let Some(size) = store.size_bytes().await.unwrap() {
        assert!(size > 0);
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// The next change, skipping progress notifications.
async fn next_event(stream: &mut WatchStream) -> crate::Event {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("a watch event within 10 s")
            .expect("the stream is open")
            .expect("no watch error");
        if ev.kind != EventKind::Progress {
            return ev;
        }
    }
}

/// Create, get, and a second create of the same key.
pub async fn create_get_and_already_exists(store: &dyn Store) {
    let before = store.current_revision().await.unwrap();
    let kv = store.create("/cgae/a", b("one")).await.unwrap();
    assert!(kv.mod_revision > before, "a write advances the revision");
    assert_eq!(kv.create_revision, kv.mod_revision);
    let (got, rev) = store.get("/cgae/a").await.unwrap();
    assert_eq!(got.unwrap(), kv);
    assert!(rev >= kv.mod_revision);
    assert!(matches!(
        store.create("/cgae/a", b("two")).await,
        Err(Error::AlreadyExists { .. })
    ));
    assert!(store.get("/cgae/missing").await.unwrap().0.is_none());
    assert_eq!(
        store.current_revision().await.unwrap(),
        kv.mod_revision.max(rev)
    );
}

/// Updates succeed only at the expected revision; a conflict reports the current value.
pub async fn guarded_update(store: &dyn Store) {
    let created = store.create("/gu/a", b("v1")).await.unwrap();
    let updated = store
        .update("/gu/a", b("v2"), created.mod_revision)
        .await
        .unwrap();
    assert!(updated.mod_revision > created.mod_revision);
    assert_eq!(updated.create_revision, created.create_revision);
    match store.update("/gu/a", b("v3"), created.mod_revision).await {
        Err(Error::Conflict { current, .. }) => {
            assert_eq!(current.value, b("v2"));
            assert_eq!(current.mod_revision, updated.mod_revision);
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(matches!(
        store.update("/gu/missing", b("x"), Revision(1)).await,
        Err(Error::NotFound { .. })
    ));
    assert_eq!(store.get("/gu/a").await.unwrap().0.unwrap().value, b("v2"));
}

/// Deletes return the last value; guarded deletes check the revision.
pub async fn guarded_delete(store: &dyn Store) {
    let created = store.create("/gd/a", b("v1")).await.unwrap();
    assert!(matches!(
        store
            .delete("/gd/a", Some(Revision(created.mod_revision.0 + 1000)))
            .await,
        Err(Error::Conflict { .. })
    ));
    let deleted = store
        .delete("/gd/a", Some(created.mod_revision))
        .await
        .unwrap();
    assert_eq!(deleted.value, b("v1"));
    assert!(deleted.mod_revision > created.mod_revision);
    assert!(store.get("/gd/a").await.unwrap().0.is_none());
    assert!(matches!(
        store.delete("/gd/a", None).await,
        Err(Error::NotFound { .. })
    ));
    // The key can be created again, with a new create revision.
    let again = store.create("/gd/a", b("v2")).await.unwrap();
    assert!(again.create_revision > deleted.mod_revision);
}

/// Prefix ranges, limits, continuation from a start key.
pub async fn list_with_prefix_limit_and_start(store: &dyn Store) {
    for k in ["a", "b", "c", "d"] {
        store.create(&format!("/lp/x/{k}"), b(k)).await.unwrap();
    }
    store.create("/lp/xy", b("outside")).await.unwrap();
    let all = store
        .list(ListRequest {
            prefix: "/lp/x/",
            ..Default::default()
        })
        .await
        .unwrap();
    let keys: Vec<_> = all.items.iter().map(|kv| kv.key.as_str()).collect();
    assert_eq!(keys, ["/lp/x/a", "/lp/x/b", "/lp/x/c", "/lp/x/d"]);
    assert!(!all.more);
    let page = store
        .list(ListRequest {
            prefix: "/lp/x/",
            limit: 2,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.items.len(), 2);
    assert!(page.more);
    let rest = store
        .list(ListRequest {
            prefix: "/lp/x/",
            start: Some("/lp/x/c"),
            limit: 2,
            revision: Some(page.revision),
        })
        .await
        .unwrap();
    let keys: Vec<_> = rest.items.iter().map(|kv| kv.key.as_str()).collect();
    assert_eq!(keys, ["/lp/x/c", "/lp/x/d"]);
    assert!(!rest.more);
    assert_eq!(rest.revision, page.revision);
}

/// Reads at an older revision see the state of then, including since-deleted keys.
pub async fn list_at_older_revision(store: &dyn Store) {
    let a = store.create("/lo/a", b("a1")).await.unwrap();
    let bkv = store.create("/lo/b", b("b1")).await.unwrap();
    let then = bkv.mod_revision;
    store
        .update("/lo/a", b("a2"), a.mod_revision)
        .await
        .unwrap();
    store.delete("/lo/b", None).await.unwrap();
    store.create("/lo/c", b("c1")).await.unwrap();

    let old = store
        .list(ListRequest {
            prefix: "/lo/",
            revision: Some(then),
            ..Default::default()
        })
        .await
        .unwrap();
    let got: Vec<_> = old
        .items
        .iter()
        .map(|kv| (kv.key.as_str(), kv.value.clone()))
        .collect();
    assert_eq!(got, [("/lo/a", b("a1")), ("/lo/b", b("b1"))]);
    assert_eq!(old.revision, then);
    assert_eq!(old.items[0].mod_revision, a.mod_revision);

    let paged = store
        .list(ListRequest {
            prefix: "/lo/",
            revision: Some(then),
            limit: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(paged.items.len(), 1);
    assert!(paged.more);

    let now = store
        .list(ListRequest {
            prefix: "/lo/",
            ..Default::default()
        })
        .await
        .unwrap();
    let got: Vec<_> = now
        .items
        .iter()
        .map(|kv| (kv.key.as_str(), kv.value.clone()))
        .collect();
    assert_eq!(got, [("/lo/a", b("a2")), ("/lo/c", b("c1"))]);

    let future = Revision(now.revision.0 + 1000);
    assert!(matches!(
        store
            .list(ListRequest {
                prefix: "/lo/",
                revision: Some(future),
                ..Default::default()
            })
            .await,
        Err(Error::FutureRevision { .. })
    ));
}

/// A watch replays history after its start revision, then delivers live changes, in order.
pub async fn watch_history_then_live(store: &dyn Store) {
    let first = store.create("/wh/a", b("1")).await.unwrap();
    let second = store
        .update("/wh/a", b("2"), first.mod_revision)
        .await
        .unwrap();
    store.create("/other/x", b("not watched")).await.unwrap();
    let mut stream = store.watch("/wh/", first.mod_revision).await.unwrap();
    let ev = next_event(&mut stream).await;
    assert_eq!(
        (ev.kind, ev.kv.value.clone(), ev.kv.mod_revision),
        (EventKind::Put, b("2"), second.mod_revision)
    );
    assert!(!ev.is_create());

    let third = store.create("/wh/b", b("3")).await.unwrap();
    let ev = next_event(&mut stream).await;
    assert_eq!(ev.kv.key, "/wh/b");
    assert!(ev.is_create());
    assert_eq!(ev.kv.mod_revision, third.mod_revision);

    let deleted = store.delete("/wh/a", None).await.unwrap();
    let ev = next_event(&mut stream).await;
    assert_eq!(ev.kind, EventKind::Delete);
    assert_eq!(ev.kv.value, b("2"), "a delete event carries the last value");
    assert_eq!(ev.kv.mod_revision, deleted.mod_revision);
}

/// Writes elsewhere advance a quiet watch with progress notifications.
pub async fn watch_reports_progress(store: &dyn Store) {
    let start = store.current_revision().await.unwrap();
    let mut stream = store.watch("/quiet/", start).await.unwrap();
    let other = store.create("/noisy/a", b("x")).await.unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("progress within 10 s")
        .expect("open")
        .expect("no error");
    assert_eq!(ev.kind, EventKind::Progress);
    assert_eq!(ev.kv.mod_revision, other.mod_revision);
}

/// Compaction keeps what later reads need and refuses reads before it.
pub async fn compaction(store: &dyn Store) {
    let a = store.create("/cp/a", b("a1")).await.unwrap();
    let a2 = store
        .update("/cp/a", b("a2"), a.mod_revision)
        .await
        .unwrap();
    let gone = store.create("/cp/gone", b("g")).await.unwrap();
    store.delete("/cp/gone", None).await.unwrap();
    let mark = store.create("/cp/b", b("b1")).await.unwrap().mod_revision;
    store
        .update("/cp/a", b("a3"), a2.mod_revision)
        .await
        .unwrap();

    store.compact(mark).await.unwrap();
    assert_eq!(store.compacted_revision().await.unwrap(), mark);
    assert!(matches!(
        store
            .list(ListRequest {
                prefix: "/cp/",
                revision: Some(gone.mod_revision),
                ..Default::default()
            })
            .await,
        Err(Error::Compacted { .. })
    ));
    assert!(matches!(
        store.watch("/cp/", gone.mod_revision).await,
        Err(Error::Compacted { .. })
    ));
    // The state at the compaction revision is still readable.
    let at = store
        .list(ListRequest {
            prefix: "/cp/",
            revision: Some(mark),
            ..Default::default()
        })
        .await
        .unwrap();
    let got: Vec<_> = at
        .items
        .iter()
        .map(|kv| (kv.key.as_str(), kv.value.clone()))
        .collect();
    assert_eq!(got, [("/cp/a", b("a2")), ("/cp/b", b("b1"))]);
    // A watch from the compaction revision sees the later change.
    let mut stream = store.watch("/cp/", mark).await.unwrap();
    assert_eq!(next_event(&mut stream).await.kv.value, b("a3"));
    // Compacting again at the same revision is a no-op.
    store.compact(mark).await.unwrap();
}
