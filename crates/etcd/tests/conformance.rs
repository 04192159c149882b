//! The storage conformance suite against a real etcd.

use capstan_etcd::testing::EtcdCluster;
use capstan_etcd::{EtcdConfig, EtcdStore};
use capstan_storage::Store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_passes_the_storage_conformance_suite() {
    let cluster = EtcdCluster::start(1);
    let store = EtcdStore::connect(&EtcdConfig::new(cluster.endpoints()))
        .await
        .unwrap();
    capstan_storage::conformance::run_all(&store).await;
    // The keys are etcd's own: another client sees them as written.
    let (kv, _) = store.get("/cgae/a").await.unwrap();
    assert_eq!(&kv.unwrap().value[..], b"one");
}
