//! Watches: raw event streams, selectors, resume, 410, bookmarks, and the kube client.

use std::time::Duration;

use capstan_testing::TestServer;
use futures_util::{StreamExt, TryStreamExt};
use http::Method;
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::json;

use crate::{SC, admin};

fn sc(name: &str, tier: &str) -> serde_json::Value {
    json!({"metadata": {"name": name, "labels": {"tier": tier}}, "provisioner": "example.com/p"})
}

/// The event lines of a watch that ends by its timeout.
async fn lines(c: &capstan_e2e::RawClient, query: &str) -> Vec<serde_json::Value> {
    let resp = c.get(&format!("{SC}?watch=true&{query}")).await;
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.headers["content-type"], "application/json");
    resp.json_lines()
}

fn summary(events: &[serde_json::Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn watch_semantics_over_raw_http() {
    for cache in [true, false] {
        let server = TestServer::start_with(|c| c.watch_cache = cache).await;
        let c = admin(&server);
        let a = c.send_json(Method::POST, SC, &sc("a", "gold")).await.json();
        let start = a["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        c.send_json(Method::POST, SC, &sc("b", "silver")).await;
        let merge = [("content-type", "application/merge-patch+json")];
        // a leaves gold, b joins it.
        c.request(
            Method::PATCH,
            &format!("{SC}/a"),
            &merge,
            br#"{"metadata":{"labels":{"tier":"bronze"}}}"#.to_vec(),
        )
        .await;
        c.request(
            Method::PATCH,
            &format!("{SC}/b"),
            &merge,
            br#"{"metadata":{"labels":{"tier":"gold"}}}"#.to_vec(),
        )
        .await;
        c.request(Method::DELETE, &format!("{SC}/b"), &[], Vec::new())
            .await;

        // Unset resourceVersion: the current state as ADDED events.
        let now = lines(&c, "timeoutSeconds=1").await;
        assert_eq!(
            summary(&now),
            [("ADDED".into(), "a".into())],
            "cache={cache}"
        );
        // From a version: exactly the changes after it, no synthetic events.
        let all = lines(&c, &format!("resourceVersion={start}&timeoutSeconds=1")).await;
        let expected: Vec<(String, String)> = [
            ("ADDED", "b"),
            ("MODIFIED", "a"),
            ("MODIFIED", "b"),
            ("DELETED", "b"),
        ]
        .iter()
        .map(|(t, n)| (t.to_string(), n.to_string()))
        .collect();
        assert_eq!(summary(&all), expected, "cache={cache}");
        // With a selector, updates that cross it become ADDED and DELETED.
        let gold = lines(
            &c,
            &format!("resourceVersion={start}&timeoutSeconds=1&labelSelector=tier%3Dgold"),
        )
        .await;
        let expected: Vec<(String, String)> = [("DELETED", "a"), ("ADDED", "b"), ("DELETED", "b")]
            .iter()
            .map(|(t, n)| (t.to_string(), n.to_string()))
            .collect();
        assert_eq!(summary(&gold), expected, "cache={cache}");
        // Bookmarks: the last line before a timeout carries the current version only.
        let marked = lines(
            &c,
            &format!("resourceVersion={start}&timeoutSeconds=1&allowWatchBookmarks=true"),
        )
        .await;
        let last = marked.last().unwrap();
        assert_eq!(last["type"], "BOOKMARK");
        assert_eq!(last["object"]["kind"], "StorageClass");
        assert!(
            last["object"]["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
                >= 5
        );
        assert!(last["object"]["metadata"].get("name").is_none());
    }
}

#[tokio::test]
async fn watching_from_before_the_window_is_410() {
    let server = TestServer::start_with(|c| {
        c.default_watch_cache_size = 2;
        c.watch_cache_fresh = Duration::ZERO;
    })
    .await;
    let c = admin(&server);
    let mut last = String::new();
    for i in 0..5 {
        let created = c
            .send_json(Method::POST, SC, &sc(&format!("s{i}"), "x"))
            .await
            .json();
        last = created["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
    }
    let events = lines(&c, "resourceVersion=1&timeoutSeconds=1").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 410);
    assert_eq!(events[0]["object"]["reason"], "Expired");
    // A list from the cache reports where to watch from.
    let list = c.get(SC).await.json();
    let rv = list["metadata"]["resourceVersion"].as_str().unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 5);
    // The revision the cache has reached: the last create, or a later write elsewhere.
    assert!(
        rv.parse::<u64>().unwrap() >= last.parse::<u64>().unwrap(),
        "{rv} < {last}"
    );
    // A version beyond the server's is a 504 after a short wait.
    let r = c
        .get(&format!(
            "{SC}?resourceVersion=999&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_eq!(r.status, 504);
    assert_eq!(r.headers["retry-after"], "1");
}

#[tokio::test]
async fn kube_client_watches() {
    let server = TestServer::start().await;
    let api: Api<StorageClass> = Api::all(server.client().await);
    let listed = api.list(&ListParams::default()).await.unwrap();
    let rv = listed.metadata.resource_version.unwrap();
    let mut stream = api
        .watch(&WatchParams::default().timeout(10), &rv)
        .await
        .unwrap()
        .boxed();
    let new: StorageClass = serde_json::from_value(sc("k", "gold")).unwrap();
    api.create(&PostParams::default(), &new).await.unwrap();
    let patch = json!({"metadata": {"labels": {"tier": "silver"}}});
    api.patch("k", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    api.delete("k", &DeleteParams::default()).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let ev = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push(match ev {
            WatchEvent::Added(o) => ("ADDED", o.metadata.labels.unwrap()["tier"].clone()),
            WatchEvent::Modified(o) => ("MODIFIED", o.metadata.labels.unwrap()["tier"].clone()),
            WatchEvent::Deleted(o) => ("DELETED", o.metadata.labels.unwrap()["tier"].clone()),
            other => panic!("unexpected {other:?}"),
        });
    }
    assert_eq!(
        seen,
        [
            ("ADDED", "gold".into()),
            ("MODIFIED", "silver".into()),
            ("DELETED", "silver".into())
        ]
    );
}

/// Polls `check` until it holds, failing after ten seconds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kube_reflector_stays_in_sync_through_changes_and_restarts() {
    use kube::runtime::{WatchStreamExt, reflector, watcher};

    let mut server = TestServer::start_with(|c| {
        c.default_watch_cache_size = 3;
        c.watch_cache_fresh = Duration::ZERO;
    })
    .await;
    let api: Api<StorageClass> = Api::all(server.client().await);
    let (reader, writer) = reflector::store();
    let stream = reflector(
        writer,
        watcher(api.clone(), watcher::Config::default()).default_backoff(),
    );
    let follower = tokio::spawn(stream.for_each(|_| async {}));
    let names = |r: &reflector::Store<StorageClass>| {
        let mut n: Vec<String> = r
            .state()
            .iter()
            .map(|s| s.metadata.name.clone().unwrap())
            .collect();
        n.sort();
        n
    };
    let tier_of = |r: &reflector::Store<StorageClass>, name: &str| {
        r.state()
            .iter()
            .find(|s| s.metadata.name.as_deref() == Some(name))
            .and_then(|s| s.metadata.labels.clone())
            .map(|l| l["tier"].clone())
    };
    let pp = PostParams::default();
    for name in ["a", "b", "c"] {
        api.create(&pp, &serde_json::from_value(sc(name, "gold")).unwrap())
            .await
            .unwrap();
    }
    let patch = json!({"metadata": {"labels": {"tier": "silver"}}});
    api.patch("b", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();
    eventually("b and c, b silver", || {
        names(&reader) == ["b", "c"] && tier_of(&reader, "b").as_deref() == Some("silver")
    })
    .await;

    // A restart drops every watch, and the cache starts a new window: the watcher resumes or,
    // when its version is gone (410), lists again.
    server.restart().await;
    api.create(&pp, &serde_json::from_value(sc("d", "gold")).unwrap())
        .await
        .unwrap();
    api.delete("c", &DeleteParams::default()).await.unwrap();
    for i in 0..6 {
        let name = format!("e{i}");
        api.create(&pp, &serde_json::from_value(sc(&name, "gold")).unwrap())
            .await
            .unwrap();
        api.delete(&name, &DeleteParams::default()).await.unwrap();
    }
    eventually("b and d after the restart", || names(&reader) == ["b", "d"]).await;
    follower.abort();
}

/// Random writes, and a watcher that keeps stopping and resuming from the last version it saw:
/// it must see every change exactly once, in revision order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_watches_miss_nothing_and_repeat_nothing() {
    use rand::{Rng, SeedableRng};

    let server = TestServer::start_with(|c| c.default_watch_cache_size = 1000).await;
    let api: Api<StorageClass> = Api::all(server.client().await);
    let start = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    const OPS: usize = 300;
    let seed: u64 = rand::rng().random();
    let writes = {
        let api = api.clone();
        tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut live: Vec<String> = Vec::new();
            let mut expected = Vec::new();
            for i in 0..OPS {
                let choice = rng.random_range(0..3);
                let (kind, obj) = if live.is_empty() || (choice == 0 && live.len() < 8) {
                    let name = format!("p{i}");
                    live.push(name.clone());
                    (
                        "ADDED",
                        api.create(
                            &PostParams::default(),
                            &serde_json::from_value(sc(&name, "gold")).unwrap(),
                        )
                        .await
                        .unwrap(),
                    )
                } else if choice == 1 {
                    let name = live[rng.random_range(0..live.len())].clone();
                    let patch = json!({"metadata": {"labels": {"step": i.to_string()}}});
                    (
                        "MODIFIED",
                        api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .unwrap(),
                    )
                } else {
                    let name = live.swap_remove(rng.random_range(0..live.len()));
                    (
                        "DELETED",
                        api.delete(&name, &DeleteParams::default())
                            .await
                            .unwrap()
                            .left()
                            .unwrap(),
                    )
                };
                expected.push((
                    kind,
                    obj.metadata.name.unwrap(),
                    obj.metadata.resource_version.unwrap(),
                ));
            }
            expected
        })
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 1);
    let mut got = Vec::new();
    let mut rv = start;
    while got.len() < OPS {
        let stop_after = rng.random_range(1..20);
        let mut stream = api
            .watch(&WatchParams::default().timeout(30), &rv)
            .await
            .unwrap()
            .boxed();
        let mut seen = 0;
        while seen < stop_after && got.len() < OPS {
            let ev = tokio::time::timeout(Duration::from_secs(20), stream.try_next())
                .await
                .expect("an event")
                .unwrap()
                .expect("open");
            let (kind, obj) = match ev {
                WatchEvent::Added(o) => ("ADDED", o),
                WatchEvent::Modified(o) => ("MODIFIED", o),
                WatchEvent::Deleted(o) => ("DELETED", o),
                WatchEvent::Bookmark(b) => {
                    rv = b.metadata.resource_version;
                    continue;
                }
                WatchEvent::Error(e) => panic!("watch error (seed {seed}): {e:?}"),
            };
            rv = obj.metadata.resource_version.clone().unwrap();
            got.push((kind, obj.metadata.name.unwrap(), rv.clone()));
            seen += 1;
        }
    }
    let expected = writes.await.unwrap();
    assert_eq!(got, expected, "seed {seed}");
}

/// A watcher that never reads is dropped once its queue fills, while a watcher that keeps up
/// receives every event: the slow one neither stalls the others nor holds memory without
/// bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_never_reads_is_dropped_and_stalls_no_one() {
    // 2,500 events of ~10 KB (25 MB) exceed what a stalled connection can absorb: the server's
    // queue of 1,024 events, the kernel's send buffer (at most 4 MB by default) and a small
    // receive buffer.
    const OBJECTS: usize = 2500;
    const BATCH: usize = 100;
    let server = TestServer::start().await;
    let raw = admin(&server);
    let api: Api<StorageClass> = Api::all(server.client().await);
    let rv = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();

    let stalled = raw
        .stalled_get(&format!("{SC}?watch=true&resourceVersion={rv}"), 8192)
        .await;
    let mut fast = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    let padding = "x".repeat(10_000);
    let mut seen = 0;
    for batch in 0..OBJECTS / BATCH {
        let creates = (0..BATCH).map(|i| {
            let api = api.clone();
            let mut object = sc(&format!("slow-{batch}-{i}"), "gold");
            object["metadata"]["annotations"] = json!({"padding": padding});
            async move {
                api.create(
                    &PostParams::default(),
                    &serde_json::from_value(object).unwrap(),
                )
                .await
                .unwrap();
            }
        });
        futures_util::future::join_all(creates).await;
        // The fast watcher keeps up (it is never more than one batch behind).
        while seen < (batch + 1) * BATCH {
            let ev = tokio::time::timeout(Duration::from_secs(30), fast.try_next())
                .await
                .expect("the fast watcher stalled")
                .unwrap()
                .expect("the fast watcher's stream ended");
            // kube asks for bookmarks; one may come on a slow machine.
            if matches!(ev, WatchEvent::Bookmark(_)) {
                continue;
            }
            assert!(matches!(ev, WatchEvent::Added(_)), "{ev:?}");
            seen += 1;
        }
    }

    // The stalled watch was ended by the server before it carried every event.
    let response = tokio::time::timeout(Duration::from_secs(60), capstan_e2e::read_to_end(stalled))
        .await
        .expect("the stalled watch was never closed");
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 200"), "{}", &text[..200]);
    let delivered = text.matches("{\"type\":\"ADDED\"").count();
    assert!(
        delivered > 0 && delivered < OBJECTS,
        "the stalled watcher received {delivered} of {OBJECTS} events"
    );
    assert!(text.ends_with("0\r\n\r\n"), "the stream ends cleanly");

    // The server goes on serving watches.
    let listed = api.list(&ListParams::default().limit(1)).await.unwrap();
    assert!(listed.metadata.remaining_item_count.unwrap_or(0) >= (OBJECTS - 1) as i64);
}
