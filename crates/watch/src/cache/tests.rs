use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig, Store};

use super::*;

/// Values are `label=value` strings; the object keeps them as its only label.
fn decode() -> Decode {
    Arc::new(|kv: &KeyValue| {
        let text = std::str::from_utf8(&kv.value).map_err(|e| e.to_string())?;
        let (k, v) = text.split_once('=').ok_or("not k=v")?;
        Ok(CachedObject {
            key: kv.key.clone(),
            revision: kv.mod_revision,
            json: kv.value.clone().into(),
            labels: [(k, v)].into_iter().collect(),
            fields: Fields::default(),
            protobuf: Default::default(),
            stored_crc: None,
        })
    })
}

fn all() -> Filter {
    Arc::new(|_| true)
}

fn tier(value: &'static str) -> Filter {
    Arc::new(move |o| o.labels.get("tier") == Some(value))
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    cache: WatchCache,
}

async fn fixture(config: WatchCacheConfig) -> Fixture {
    fixture_decoding(config, decode()).await
}

/// As [`decode`], served as JSON that holds the object's resourceVersion, as the API's do.
fn decode_to_json() -> Decode {
    Arc::new(|kv: &KeyValue| {
        let plain = decode()(kv)?;
        let (k, v) = plain.labels.iter().next().ok_or("a label")?;
        let json = format!(
            r#"{{"metadata":{{"resourceVersion":"{}","labels":{{"{k}":"{v}"}}}}}}"#,
            kv.mod_revision.0
        );
        Ok(CachedObject {
            json: json.into(),
            ..plain
        })
    })
}

async fn fixture_decoding(config: WatchCacheConfig, decode: Decode) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap());
    store
        .create("/r/a", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    let cache = WatchCache::start(store.clone(), "/r/".into(), decode, config);
    let now = store.current_revision().await.unwrap();
    cache.wait_for(now, Duration::from_secs(10)).await.unwrap();
    Fixture {
        _dir: dir,
        store,
        cache,
    }
}

impl Fixture {
    /// Creates `key` and waits for the cache to hold it.
    async fn created(&self, key: &str, value: &'static [u8]) -> KeyValue {
        let kv = self
            .store
            .create(key, Bytes::from_static(value))
            .await
            .unwrap();
        self.cache
            .wait_for(kv.mod_revision, Duration::from_secs(10))
            .await
            .unwrap();
        kv
    }
}

async fn next(w: &mut Watch) -> WatchEvent {
    tokio::time::timeout(Duration::from_secs(10), w.events.recv())
        .await
        .expect("an event in time")
        .expect("open")
}

fn kinds(events: &[WatchEvent]) -> Vec<(EventType, String)> {
    events
        .iter()
        .map(|e| (e.kind, e.object.key.clone()))
        .collect()
}

#[tokio::test]
async fn lists_and_follows_changes() {
    let f = fixture(WatchCacheConfig::default()).await;
    let b = f
        .store
        .create("/r/b", Bytes::from_static(b"tier=silver"))
        .await
        .unwrap();
    f.store
        .create("/other/x", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    f.cache
        .wait_for(b.mod_revision, Duration::from_secs(10))
        .await
        .unwrap();
    let (items, rev) = f.cache.list("/r/", &all()).unwrap();
    assert_eq!(
        items.iter().map(|o| o.key.as_str()).collect::<Vec<_>>(),
        ["/r/a", "/r/b"]
    );
    assert!(rev >= b.mod_revision);
    let (gold, _) = f.cache.list("/r/", &tier("gold")).unwrap();
    assert_eq!(gold.len(), 1);
    // A write elsewhere advances the cache (progress) without changing its objects.
    let elsewhere = f.created("/other/y", b"tier=x").await;
    let err = f
        .cache
        .wait_for(
            Revision(elsewhere.mod_revision.0 + 100),
            Duration::from_millis(50),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }));
}

/// `changed_at` moves with the cache's own objects, not with writes elsewhere.
#[tokio::test]
async fn changed_at_follows_only_the_collections_changes() {
    let f = fixture(WatchCacheConfig::default()).await;
    let loaded = f.cache.changed_at().unwrap();
    // Each write's revision, once the cache has caught up with it.
    let cache = &f.cache;
    let seen = |written: KeyValue| async move {
        cache
            .wait_for(written.mod_revision, Duration::from_secs(10))
            .await
            .unwrap();
        written.mod_revision
    };
    let value = Bytes::from_static(b"tier=silver");
    let b = seen(f.store.create("/r/b", value.clone()).await.unwrap()).await;
    assert_eq!(f.cache.changed_at(), Some(b));
    assert!(b > loaded);
    seen(f.store.create("/other/x", value).await.unwrap()).await;
    assert_eq!(f.cache.changed_at(), Some(b));
    let deleted = seen(f.store.delete("/r/b", None).await.unwrap()).await;
    assert_eq!(f.cache.changed_at(), Some(deleted));
}

#[tokio::test]
async fn watch_from_now_from_a_revision_and_too_old() {
    let f = fixture(WatchCacheConfig {
        window: 3,
        fresh: Duration::ZERO,
        watcher_queue: 64,
        ..WatchCacheConfig::default()
    })
    .await;
    let mut w = f.cache.watch("/r/", None, all()).unwrap();
    assert_eq!(kinds(&w.initial), [(EventType::Added, "/r/a".to_string())]);
    let start = w.revision;
    let b = f
        .store
        .create("/r/b", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    f.store
        .update("/r/b", Bytes::from_static(b"tier=silver"), b.mod_revision)
        .await
        .unwrap();
    f.store.delete("/r/a", None).await.unwrap();
    let got: Vec<_> = [next(&mut w).await, next(&mut w).await, next(&mut w).await].to_vec();
    assert_eq!(
        kinds(&got),
        [
            (EventType::Added, "/r/b".into()),
            (EventType::Modified, "/r/b".into()),
            (EventType::Deleted, "/r/a".into())
        ]
    );
    assert_eq!(
        &got[2].object.json.to_bytes()[..],
        b"tier=gold",
        "a deletion carries the last state"
    );
    // Resuming from the start replays the same three changes, without synthetic additions.
    let resumed = f.cache.watch("/r/", Some(start), all()).unwrap();
    assert_eq!(kinds(&resumed.initial), kinds(&got));
    // Push the start out of the window: 410.
    f.store
        .create("/r/c", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    f.created("/r/d", b"tier=gold").await;
    assert!(matches!(
        f.cache.watch("/r/", Some(start), all()),
        Err(Error::Expired { .. })
    ));
    // A revision the cache has not reached is refused: its changes would be skipped.
    let ahead = Revision(f.cache.revision().0 + 1);
    assert!(matches!(
        f.cache.watch("/r/", Some(ahead), all()),
        Err(Error::TooLarge { requested, .. }) if requested == ahead.0
    ));
}

#[tokio::test]
async fn selectors_turn_updates_into_additions_and_deletions() {
    let f = fixture(WatchCacheConfig::default()).await;
    let mut gold = f.cache.watch("/r/", None, tier("gold")).unwrap();
    assert_eq!(gold.initial.len(), 1);
    let a = f.store.get("/r/a").await.unwrap().0.unwrap();
    let moved_out = f
        .store
        .update("/r/a", Bytes::from_static(b"tier=silver"), a.mod_revision)
        .await
        .unwrap();
    let ev = next(&mut gold).await;
    assert_eq!(ev.kind, EventType::Deleted, "stops matching");
    assert_eq!(
        &ev.object.json.to_bytes()[..],
        b"tier=silver",
        "with the new state"
    );
    f.store
        .update(
            "/r/a",
            Bytes::from_static(b"tier=gold"),
            moved_out.mod_revision,
        )
        .await
        .unwrap();
    assert_eq!(
        next(&mut gold).await.kind,
        EventType::Added,
        "starts matching"
    );
}

#[tokio::test]
async fn a_slow_watcher_is_dropped_and_others_keep_up() {
    let f = fixture(WatchCacheConfig {
        window: 100,
        watcher_queue: 2,
        ..WatchCacheConfig::default()
    })
    .await;
    let slow = f.cache.watch("/r/", None, all()).unwrap();
    let mut fast = f.cache.watch("/r/", None, all()).unwrap();
    let Watch {
        events: mut slow_events,
        ..
    } = slow;
    for i in 0..10 {
        f.store
            .create(&format!("/r/n{i}"), Bytes::from_static(b"tier=x"))
            .await
            .unwrap();
        assert_eq!(next(&mut fast).await.object.key, format!("/r/n{i}"));
    }
    // The slow one got what fit in its queue, then its stream ended.
    let mut received = 0;
    while tokio::time::timeout(Duration::from_secs(10), slow_events.recv())
        .await
        .unwrap()
        .is_some()
    {
        received += 1;
    }
    assert_eq!(received, 2);
    assert_eq!(f.cache.watchers(), 1);
}

/// A list whose selector is slow (here: one that waits to be released) holds up neither the
/// changes that follow storage, nor other lists, nor new watches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_list_holds_up_neither_changes_nor_other_lists() {
    let f = Arc::new(fixture(WatchCacheConfig::default()).await);
    let (entered_tx, entered) = std::sync::mpsc::channel::<()>();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = std::sync::Mutex::new(released);
    let slow: Filter = Arc::new(move |_| {
        let _ = entered_tx.send(());
        let _ = released.lock().unwrap().recv();
        true
    });
    let list = tokio::task::spawn_blocking({
        let f = f.clone();
        move || f.cache.list("/r/", &slow).map(|(items, _)| items.len())
    });
    entered.recv().expect("the slow selector runs");
    // While it runs: a change is applied, another list and a watch see it.
    let b = f
        .store
        .create("/r/b", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    f.cache
        .wait_for(b.mod_revision, Duration::from_secs(10))
        .await
        .expect("the change is applied during the slow list");
    let (items, _) = f.cache.list("/r/", &all()).unwrap();
    assert_eq!(items.len(), 2);
    let w = f.cache.watch("/r/", None, tier("gold")).unwrap();
    assert_eq!(w.initial.len(), 2);
    release.send(()).unwrap();
    assert_eq!(
        list.await.unwrap().unwrap(),
        1,
        "the slow list's own snapshot"
    );
}

/// A change that does not decode is never skipped: a delete removes the cached object (its
/// cached state is the event's object) and a put ends the cache's watch and reloads, so the
/// old object is not served as current; the cache's revision advances either way.
#[tokio::test]
async fn changes_that_do_not_decode_are_never_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap());
    store
        .create("/r/a", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    let b = store
        .create("/r/b", Bytes::from_static(b"tier=silver"))
        .await
        .unwrap();
    let unreadable = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readable = decode();
    let switched: Decode = {
        let unreadable = unreadable.clone();
        Arc::new(move |kv: &KeyValue| {
            if unreadable.load(std::sync::atomic::Ordering::Relaxed) {
                Err("no key to decrypt it".to_string())
            } else {
                readable(kv)
            }
        })
    };
    let cache = WatchCache::start(
        store.clone(),
        "/r/".into(),
        switched,
        WatchCacheConfig::default(),
    );
    cache
        .wait_for(b.mod_revision, Duration::from_secs(10))
        .await
        .unwrap();
    let mut watch = cache.watch("/r/", None, all()).unwrap();
    unreadable.store(true, std::sync::atomic::Ordering::Relaxed);

    let deleted = store.delete("/r/a", None).await.unwrap();
    cache
        .wait_for(deleted.mod_revision, Duration::from_secs(10))
        .await
        .expect("the revision advances past a delete that does not decode");
    let event = next(&mut watch).await;
    assert_eq!(
        (event.kind, event.object.key.as_str()),
        (EventType::Deleted, "/r/a")
    );
    let (items, _) = cache.list("/r/", &all()).unwrap();
    let keys: Vec<&str> = items.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(keys, ["/r/b"], "no ghost of the deleted object");

    let updated = store
        .update("/r/b", Bytes::from_static(b"tier=bronze"), b.mod_revision)
        .await
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(10), watch.events.recv())
        .await
        .expect("the watch ends in time");
    assert!(ended.is_none(), "the watch ends: {ended:?}");
    cache
        .wait_for(updated.mod_revision, Duration::from_secs(10))
        .await
        .unwrap();
    let (items, _) = cache.list("/r/", &all()).unwrap();
    assert!(
        items.iter().all(|o| o.labels.get("tier") != Some("silver")),
        "the replaced object is not served as current"
    );
}

/// Creates `/r/n{i}` for each `i` and waits until the cache has them; the last revision.
async fn create_many(f: &Fixture, names: std::ops::Range<usize>) -> Revision {
    let mut last = Revision(0);
    for i in names {
        last = f
            .store
            .create(&format!("/r/n{i}"), Bytes::from_static(b"tier=gold"))
            .await
            .unwrap()
            .mod_revision;
    }
    f.cache
        .wait_for(last, Duration::from_secs(10))
        .await
        .unwrap();
    last
}

/// The window is sized by time: beyond its minimum count it keeps every change of the last
/// `fresh`, so a watch resuming from hundreds of changes ago carries on, up to the count and
/// memory bounds, past which the oldest go (410).
#[tokio::test]
async fn the_window_keeps_recent_changes_up_to_its_bounds() {
    let f = fixture(WatchCacheConfig {
        window: 10,
        window_max: 400,
        ..WatchCacheConfig::default()
    })
    .await;
    let start = f.cache.revision();
    create_many(&f, 0..300).await;
    let resumed = f.cache.watch("/r/", Some(start), all()).unwrap();
    assert_eq!(resumed.initial.len(), 300, "300 changes ago, 75 s window");
    let last = create_many(&f, 300..500).await;
    assert!(
        matches!(
            f.cache.watch("/r/", Some(start), all()),
            Err(Error::Expired { .. })
        ),
        "beyond the count bound"
    );
    let kept = f
        .cache
        .watch("/r/", Some(Revision(last.0 - 400)), all())
        .unwrap();
    assert_eq!(kept.initial.len(), 400);

    // The memory bound: 40 bytes hold four of these ten-byte objects.
    let small = fixture(WatchCacheConfig {
        window: 1,
        window_bytes: 40,
        ..WatchCacheConfig::default()
    })
    .await;
    let start = small.cache.revision();
    let mut revisions = Vec::new();
    for i in 0..6 {
        revisions.push(
            small
                .store
                .create(&format!("/r/m{i}"), Bytes::from_static(b"tier=gold!"))
                .await
                .unwrap()
                .mod_revision,
        );
    }
    small
        .cache
        .wait_for(revisions[5], Duration::from_secs(10))
        .await
        .unwrap();
    assert!(small.cache.watch("/r/", Some(start), all()).is_err());
    let from = revisions[1];
    assert_eq!(
        small
            .cache
            .watch("/r/", Some(from), all())
            .unwrap()
            .initial
            .len(),
        4
    );
}

/// A page at an earlier revision is the collection as it was then: objects changed since
/// show their old state, deleted ones are still there, new ones are not; selectors apply to
/// the old states. Revisions the window does not cover are not answered.
#[tokio::test]
async fn pages_at_an_earlier_revision_undo_later_changes() {
    let f = fixture(WatchCacheConfig::default()).await;
    let listed = create_many(&f, 0..10).await;
    let keys = |page: &Page| {
        page.items
            .iter()
            .map(|o| o.key.trim_start_matches("/r/").to_string())
            .collect::<Vec<_>>()
    };
    let first = f
        .cache
        .page_at("/r/", "/r/", listed, 4, None)
        .unwrap()
        .unwrap();
    assert_eq!(keys(&first), ["a", "n0", "n1", "n2"]);
    assert_eq!((first.next.as_deref(), first.remaining), (Some("/r/n3"), 7));

    // Changes after the first page.
    f.store.delete("/r/n4", None).await.unwrap();
    let (n5, _) = f.store.get("/r/n5").await.unwrap();
    f.store
        .update(
            "/r/n5",
            Bytes::from_static(b"tier=silver"),
            n5.unwrap().mod_revision,
        )
        .await
        .unwrap();
    f.store
        .create("/r/n45", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    let last = f.created("/r/n99", b"tier=gold").await;

    let second = f
        .cache
        .page_at("/r/", "/r/n3", listed, 4, None)
        .unwrap()
        .unwrap();
    assert_eq!(keys(&second), ["n3", "n4", "n5", "n6"]);
    assert_eq!(
        &second.items[2].json.to_bytes()[..],
        b"tier=gold",
        "n5 as it was"
    );
    assert_eq!(
        (second.next.as_deref(), second.remaining),
        (Some("/r/n7"), 3)
    );
    let rest = f
        .cache
        .page_at("/r/", "/r/n7", listed, 4, None)
        .unwrap()
        .unwrap();
    assert_eq!(keys(&rest), ["n7", "n8", "n9"]);
    assert_eq!((rest.next, rest.remaining), (None, 0));

    // At the cache's revision (no later change to undo) the rest is counted from the map,
    // only what lies under the prefix.
    let current = f
        .cache
        .page_at("/r/", "/r/n3", last.mod_revision, 4, None)
        .unwrap()
        .unwrap();
    assert_eq!(keys(&current), ["n3", "n45", "n5", "n6"]);
    assert_eq!(
        (current.next.as_deref(), current.remaining),
        (Some("/r/n7"), 4)
    );
    let narrower = f
        .cache
        .page_at("/r/n4", "/r/n4", last.mod_revision, 0, None)
        .unwrap()
        .unwrap();
    assert_eq!(keys(&narrower), ["n45"]);
    let narrower = f
        .cache
        .page_at("/r/n", "/r/n", last.mod_revision, 2, None)
        .unwrap()
        .unwrap();
    assert_eq!(
        (keys(&narrower), narrower.remaining),
        (vec!["n0".to_string(), "n1".into()], 9)
    );

    // Selectors see the old states; now, the same page shows the changes.
    let gold = f
        .cache
        .page_at("/r/", "/r/n3", listed, 0, Some(&tier("gold")))
        .unwrap()
        .unwrap();
    assert_eq!(keys(&gold), ["n3", "n4", "n5", "n6", "n7", "n8", "n9"]);
    let now = f
        .cache
        .page_at("/r/", "/r/n3", last.mod_revision, 0, Some(&tier("gold")))
        .unwrap()
        .unwrap();
    assert_eq!(keys(&now), ["n3", "n45", "n6", "n7", "n8", "n9", "n99"]);

    // Beyond the cache, or before its window: no answer.
    let ahead = Revision(last.mod_revision.0 + 10);
    assert!(
        f.cache
            .page_at("/r/", "/r/", ahead, 4, None)
            .unwrap()
            .is_none()
    );
    let before_load = Revision(0);
    assert!(
        f.cache
            .page_at("/r/", "/r/", before_load, 4, None)
            .unwrap()
            .is_none()
    );
}

/// A collection larger than a page loads page by page at one revision: writes made while it
/// loads (changes to listed keys, new keys before and after the pages read) arrive as
/// events, and the cache ends up holding exactly what storage holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collection_of_several_pages_loads_at_one_revision() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap());
    let count = 2 * LOAD_PAGE + LOAD_PAGE / 2;
    for i in 0..count {
        store
            .create(&format!("/r/{i:05}"), Bytes::from_static(b"tier=gold"))
            .await
            .unwrap();
    }
    let writer = tokio::spawn({
        let store = store.clone();
        async move {
            for i in 0..200 {
                let key = format!("/r/{:05}", (i * 37) % count);
                let (current, _) = store.get(&key).await.unwrap();
                store
                    .update(
                        &key,
                        Bytes::from(format!("tier=t{i}")),
                        current.unwrap().mod_revision,
                    )
                    .await
                    .unwrap();
                store
                    .create(&format!("/r/{i:05}x"), Bytes::from_static(b"tier=new"))
                    .await
                    .unwrap();
            }
        }
    });
    let cache = WatchCache::start(store.clone(), "/r/".into(), decode(), Default::default());
    writer.await.unwrap();
    let now = store.current_revision().await.unwrap();
    cache.wait_for(now, Duration::from_secs(10)).await.unwrap();
    let (cached, _) = cache.list("/r/", &all()).unwrap();
    let stored = store
        .list(ListRequest {
            prefix: "/r/",
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(cached.len(), count + 200);
    let cached: Vec<_> = cached
        .iter()
        .map(|o| (o.key.clone(), o.json.to_bytes()))
        .collect();
    let stored: Vec<_> = stored
        .items
        .into_iter()
        .map(|kv| (kv.key, kv.value))
        .collect();
    assert_eq!(cached, stored);
}

/// A primed write's object is kept, its revision filled in, instead of decoding its change,
/// whether the change arrives before the write is acknowledged or after. A priming taken back
/// (its write failed) or made for another value is not used: those changes decode.
/// A cached object carries the CRC of the value it stands for: loaded, changed, or changed
/// again to a value it had before.
#[tokio::test]
async fn cached_objects_carry_the_crc_of_their_stored_value() {
    let f = fixture(WatchCacheConfig::default()).await;
    let crc_of = |key: &str| f.cache.get(key).unwrap().expect("cached").stored_crc;
    assert_eq!(crc_of("/r/a"), Some(crc32fast::hash(b"tier=gold")));
    let a = f.store.get("/r/a").await.unwrap().0.unwrap();
    let mut over = a.mod_revision;
    for value in [&b"tier=silver"[..], b"tier=gold"] {
        let kv = f
            .store
            .update("/r/a", Bytes::from_static(value), over)
            .await
            .unwrap();
        f.cache
            .wait_for(kv.mod_revision, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(crc_of("/r/a"), Some(crc32fast::hash(value)));
        over = kv.mod_revision;
    }
}

#[tokio::test]
async fn a_primed_change_is_kept_without_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap());
    let decoded = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counting: Decode = {
        let (decoded, inner) = (decoded.clone(), decode());
        Arc::new(move |kv: &KeyValue| {
            decoded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            inner(kv)
        })
    };
    store
        .create("/r/a", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    let config = WatchCacheConfig {
        verify_primed: false,
        ..WatchCacheConfig::default()
    };
    let cache = WatchCache::start(store.clone(), "/r/".into(), counting, config);
    let now = store.current_revision().await.unwrap();
    cache.wait_for(now, Duration::from_secs(10)).await.unwrap();
    let decodes = || decoded.load(std::sync::atomic::Ordering::Relaxed);
    // The object as primed differs from what its value decodes to (its label and its JSON),
    // so that the test sees which one the cache kept.
    let primed = |tier: &'static str, value: &'static [u8]| PrimedWrite {
        object: CachedObject {
            key: "/r/p".into(),
            revision: Revision(0),
            json: format!("{{\"rv\":\"PENDING\",\"tier\":\"{tier}\"}}").into(),
            labels: [("tier", tier)].into_iter().collect(),
            fields: Fields::default(),
            protobuf: Default::default(),
            stored_crc: None,
        },
        placeholder: 7..14,
        value: Bytes::from_static(value),
    };

    let priming = cache.prime(primed("primed", b"tier=stored"));
    let created = store
        .create("/r/p", Bytes::from_static(b"tier=stored"))
        .await
        .unwrap();
    let revision = created.mod_revision;
    let response = priming.written(revision);
    assert_eq!(
        response,
        format!("{{\"rv\":\"{}\",\"tier\":\"primed\"}}", revision.0)
    );
    cache
        .wait_for(revision, Duration::from_secs(10))
        .await
        .unwrap();
    let kept = cache.get("/r/p").unwrap().expect("cached");
    assert_eq!(kept.labels.get("tier"), Some("primed"));
    assert_eq!(kept.stored_crc, Some(crc32fast::hash(b"tier=stored")));
    assert_eq!((kept.revision, kept.json.to_bytes()), (revision, response));
    assert_eq!(
        decodes(),
        1,
        "only the listed object was decoded, not the primed change"
    );

    // A priming dropped before its write is acknowledged is taken back.
    drop(cache.prime(primed("failed", b"tier=second")));
    let (second, tier) = update_and_read(&store, &cache, b"tier=second", revision).await;
    assert_eq!(tier, "second");
    assert_eq!(decodes(), 2);

    // Primed with another value than the change stores: the change decodes.
    let other = cache.prime(primed("other", b"tier=other"));
    let (_, tier) = update_and_read(&store, &cache, b"tier=third", second).await;
    assert_eq!(tier, "third");
    assert_eq!(decodes(), 3);
    drop(other);
}

/// Updates `/r/p` to `value` over revision `over`, waits for the cache to take the change, and
/// returns the new revision and the tier the cache holds.
async fn update_and_read(
    store: &Arc<dyn Store>,
    cache: &WatchCache,
    value: &'static [u8],
    over: Revision,
) -> (Revision, String) {
    let updated = store
        .update("/r/p", Bytes::from_static(value), over)
        .await
        .unwrap();
    cache
        .wait_for(updated.mod_revision, Duration::from_secs(10))
        .await
        .unwrap();
    let kept = cache.get("/r/p").unwrap().expect("cached");
    let tier = kept.labels.get("tier").unwrap_or_default().to_string();
    (updated.mod_revision, tier)
}

/// A deletion's event carries the last state at the deletion's resourceVersion, live and
/// replayed, made from the one copy the window keeps; a page before the deletion still
/// shows the object at its own resourceVersion.
#[tokio::test]
async fn deletions_serve_the_last_state_at_their_revision_from_one_copy() {
    let f = fixture_decoding(WatchCacheConfig::default(), decode_to_json()).await;
    let json = |o: &CachedObject| String::from_utf8(o.json.contiguous().into_owned()).unwrap();
    let (a, _) = f.store.get("/r/a").await.unwrap();
    let created = a.unwrap().mod_revision;
    let mut live = f.cache.watch("/r/", Some(created), all()).unwrap();
    let before = f.cache.get("/r/a").unwrap().unwrap();
    let deleted = f.store.delete("/r/a", None).await.unwrap().mod_revision;
    let expected = format!(
        r#"{{"metadata":{{"resourceVersion":"{}","labels":{{"tier":"gold"}}}}}}"#,
        deleted.0
    );

    let event = next(&mut live).await;
    assert_eq!(event.kind, EventType::Deleted);
    assert_eq!(
        (json(&event.object), event.object.revision),
        (expected.clone(), deleted)
    );
    let replayed = f.cache.watch("/r/", Some(created), tier("gold")).unwrap();
    assert_eq!(
        kinds(&replayed.initial),
        [(EventType::Deleted, "/r/a".into())]
    );
    assert_eq!(json(&replayed.initial[0].object), expected);
    assert_eq!(replayed.initial[0].object.labels.get("tier"), Some("gold"));

    let page = f
        .cache
        .page_at("/r/", "/r/", created, 0, None)
        .unwrap()
        .unwrap();
    assert!(
        Arc::ptr_eq(&page.items[0], &before),
        "the window's copy is the last state"
    );
    assert_eq!(json(&page.items[0]), json(&before));
}

/// An object whose JSON does not show its resourceVersion once is served as decoded from
/// the deletion's stored value.
#[tokio::test]
async fn deletions_of_objects_without_a_findable_version_decode() {
    let f = fixture(WatchCacheConfig::default()).await;
    let (a, _) = f.store.get("/r/a").await.unwrap();
    let mut live = f
        .cache
        .watch("/r/", Some(a.unwrap().mod_revision), all())
        .unwrap();
    let deleted = f.store.delete("/r/a", None).await.unwrap().mod_revision;
    let event = next(&mut live).await;
    assert_eq!(
        (event.kind, event.object.revision),
        (EventType::Deleted, deleted)
    );
    assert_eq!(&event.object.json.to_bytes()[..], b"tier=gold");
}

/// Aged changes leave the window when other prefixes' writes report progress, not only when
/// the resource changes again.
#[tokio::test]
async fn progress_reports_trim_aged_changes() {
    let f = fixture(WatchCacheConfig {
        window: 1,
        fresh: Duration::from_millis(50),
        ..WatchCacheConfig::default()
    })
    .await;
    let first = f
        .store
        .create("/r/b", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    f.store
        .create("/r/c", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let from = Revision(first.mod_revision.0 - 1);
    let before = f.cache.watch("/r/", Some(from), all()).unwrap();
    assert_eq!(before.initial.len(), 2, "both changes are still kept");
    f.created("/other/x", b"tier=gold").await;
    assert!(matches!(
        f.cache.watch("/r/", Some(from), all()),
        Err(Error::Expired { .. })
    ));
}

/// As [`decode_to_json`], with managedFields whose `fieldsV1` is the same for every object of
/// a label value.
fn decode_with_managed_fields() -> Decode {
    Arc::new(|kv: &KeyValue| {
        let plain = decode()(kv)?;
        let (k, v) = plain.labels.iter().next().ok_or("a label")?;
        let json = format!(
            r#"{{"metadata":{{"resourceVersion":"{}","labels":{{"{k}":"{v}"}},"managedFields":[{{"manager":"m","fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:labels":{{".":{{}},"f:{k}":{{}}}}}},"f:spec":{{"f:{v}":{{}}}}}}}}]}}}}"#,
            kv.mod_revision.0
        );
        Ok(CachedObject {
            json: json.into(),
            ..plain
        })
    })
}

/// Objects whose managedFields hold the same `fieldsV1` keep it once, read back whole, and
/// a deletion's event still carries the deletion's resourceVersion.
#[tokio::test]
async fn alike_managed_fields_are_kept_once() {
    let decode = decode_with_managed_fields();
    let f = fixture_decoding(WatchCacheConfig::default(), decode.clone()).await;
    let b = f.created("/r/b", b"tier=gold").await;
    let (items, _) = f.cache.list("/r/", &all()).unwrap();
    assert_eq!(items.len(), 2);
    for item in &items {
        let (kv, _) = f.store.get(&item.key).await.unwrap();
        assert_eq!(
            item.json,
            decode(&kv.unwrap()).unwrap().json,
            "read back whole"
        );
        assert!(
            item.json.own_len() + 64 < item.json.len(),
            "{} of {} bytes its own",
            item.json.own_len(),
            item.json.len()
        );
    }

    let mut live = f.cache.watch("/r/", Some(b.mod_revision), all()).unwrap();
    let deleted = f.store.delete("/r/b", None).await.unwrap().mod_revision;
    let event = next(&mut live).await;
    let created = String::from_utf8(decode(&b).unwrap().json.contiguous().into_owned()).unwrap();
    let expected = created.replace(
        &format!("\"resourceVersion\":\"{}\"", b.mod_revision.0),
        &format!("\"resourceVersion\":\"{}\"", deleted.0),
    );
    assert_eq!(
        (event.kind, event.object.revision),
        (EventType::Deleted, deleted)
    );
    assert_eq!(
        event.object.json,
        *expected.as_bytes(),
        "the deletion's resourceVersion"
    );
    assert!(
        event.object.json.own_len() < event.object.json.len(),
        "still shared"
    );
}

/// The bound after a prefix's keys.
#[test]
fn a_prefix_ends_at_its_last_character_plus_one() {
    assert_eq!(
        prefix_end("/registry/pods/").as_deref(),
        Some("/registry/pods0")
    );
    assert_eq!(prefix_end("/r/n").as_deref(), Some("/r/o"));
    assert_eq!(prefix_end("/r/é"), None);
    assert_eq!(prefix_end(""), None);
}

#[tokio::test]
async fn watches_of_one_group_are_sent_a_change_one_after_another() {
    let f = fixture(WatchCacheConfig::default()).await;
    // Each watch's filter notes when the cache offers it the change.
    let offered = Arc::new(std::sync::Mutex::new(Vec::new()));
    let noting = |id: &'static str| -> Filter {
        let offered = offered.clone();
        Arc::new(move |_| {
            offered.lock().unwrap().push(id);
            true
        })
    };
    let mut watches = Vec::new();
    for (id, group) in [
        ("a1", 7),
        ("b1", 9),
        ("none", 0),
        ("a2", 7),
        ("b2", 9),
        ("a3", 7),
    ] {
        watches.push(
            f.cache
                .watch_in_group("/r/", None, noting(id), group)
                .unwrap(),
        );
    }
    offered.lock().unwrap().clear();
    f.store
        .create("/r/b", Bytes::from_static(b"tier=gold"))
        .await
        .unwrap();
    for w in &mut watches {
        assert_eq!(kinds(&[next(w).await]), [(EventType::Added, "/r/b".into())]);
    }
    assert_eq!(
        *offered.lock().unwrap(),
        ["a1", "a2", "a3", "b1", "b2", "none"],
        "a group's watches in the order they came, the ungrouped one where it came"
    );
}
