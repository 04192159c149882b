//! The storage conformance suite against a real etcd.

use capstan_etcd::testing::EtcdCluster;
use capstan_etcd::{EtcdConfig, EtcdStore};
use capstan_storage::Store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_passes_the_storage_conformance_suite() {
    let cluster = EtcdCluster::start(1);
    let store = cluster.store().await;
    capstan_storage::conformance::run_all(&store).await;
    // The keys are etcd's own: another client sees them as written.
    let (kv, _) = store.get("/cgae/a").await.unwrap();
    assert_eq!(&kv.unwrap().value[..], b"one");
}

/// Two API servers on one etcd take turns at compaction (upstream's protocol on
/// `compact_rev_key`): in each round one is granted the turn and the other learns the round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_servers_on_one_etcd_take_turns_at_compaction() {
    use capstan_storage::Revision;
    let cluster = EtcdCluster::start(1);
    let config = EtcdConfig::new(cluster.endpoints());
    let a = EtcdStore::connect(&config).await.unwrap();
    let b = EtcdStore::connect(&config).await.unwrap();
    a.create("/turns/x", "1".into()).await.unwrap();

    let first = a.compaction_turn(0, Revision(0)).await.unwrap();
    assert!(first.granted);
    assert_eq!(first.round, 1);
    let late = b.compaction_turn(0, Revision(0)).await.unwrap();
    assert!(!late.granted, "the round was taken");
    assert_eq!(late.round, 1);

    // Next round: whoever comes first with the round it saw takes it.
    let second = b.compaction_turn(late.round, late.current).await.unwrap();
    assert!(second.granted);
    assert_eq!(second.round, 2);
    let lost = a.compaction_turn(first.round, first.current).await.unwrap();
    assert!(!lost.granted);
    assert_eq!(lost.round, 2);

    // The key holds the target of the granted round, as upstream's servers read it.
    let (kv, _) = a.get("compact_rev_key").await.unwrap();
    assert_eq!(kv.unwrap().value, late.current.0.to_string());
}
