//! A member cut off from its peers, on a real three-member etcd cluster.

use std::time::{Duration, Instant};

use capstan_etcd::testing::EtcdCluster;
use capstan_etcd::{EtcdConfig, EtcdStore};
use capstan_storage::{Error, EventKind, Store};
use futures_util::StreamExt;

/// A member whose peers are gone (stopped with SIGSTOP: they keep their sockets and answer
/// nothing) has no leader. A watch on it ends with an error (etcd ends watches that require a
/// leader, and a watch that hears nothing ends on its own) instead of going silent while the
/// server reports ready; the health check fails; with the peers back, writes and new watches
/// work again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_on_a_member_without_a_leader_ends_and_the_store_recovers() {
    let cluster = EtcdCluster::start(3);
    let mut config = EtcdConfig::new(vec![cluster.members[0].endpoint()]);
    config.request_timeout = Duration::from_secs(5);
    let store = EtcdStore::connect(&config).await.unwrap();
    let first = store.create("/part/a", "1".into()).await.unwrap();
    let mut watch = store.watch("/part/", first.mod_revision).await.unwrap();
    for member in &cluster.members[1..] {
        member.pause();
    }
    let started = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(40), async {
        loop {
            match watch.next().await {
                Some(Ok(_)) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("the watch ends instead of going silent");
    assert!(
        matches!(ended, Some(Err(Error::Unavailable(_)))),
        "{ended:?} after {:?}",
        started.elapsed()
    );
    assert!(store.ping().await.is_err(), "not ready without a leader");

    for member in &cluster.members[1..] {
        member.resume();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let written = loop {
        match store.create("/part/b", "2".into()).await {
            Ok(kv) => break kv,
            Err(err) => {
                assert!(Instant::now() < deadline, "no recovery: {err}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    let mut watch = store.watch("/part/", first.mod_revision).await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match watch.next().await.expect("an event") {
                Ok(event) if event.kind == EventKind::Progress => continue,
                other => return other.unwrap(),
            }
        }
    })
    .await
    .expect("an event in time");
    assert_eq!(
        (event.kv.key.as_str(), event.kv.mod_revision),
        ("/part/b", written.mod_revision)
    );
    store.ping().await.unwrap();
}
