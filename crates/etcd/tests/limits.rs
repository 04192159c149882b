//! Answers larger than gRPC's default limit on a received message, against a real etcd.

use bytes::Bytes;
use capstan_etcd::testing::EtcdCluster;
use capstan_storage::{ListRequest, Store};

/// A range read of more than 4 MiB (gRPC's default limit on a message received) is answered
/// whole, as etcd's Go client, and so upstream's kube-apiserver, takes it: the watch cache's
/// list of a few thousand pods is such a read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_read_larger_than_four_mebibytes_is_answered_whole() {
    let cluster = EtcdCluster::start(1);
    let store = cluster.store().await;
    // Six values of 1 MiB: each write stays under etcd's own limit on a request (1.5 MiB).
    let value = Bytes::from(vec![b'x'; 1 << 20]);
    for i in 0..6 {
        store
            .create(&format!("/big/{i}"), value.clone())
            .await
            .unwrap();
    }
    let listed = store
        .list(ListRequest {
            prefix: "/big/",
            start: None,
            limit: 0,
            revision: None,
        })
        .await
        .expect("a 6 MiB range read");
    assert_eq!(listed.items.len(), 6);
    assert!(listed.items.iter().all(|kv| kv.value == value));
    assert!(!listed.more);
}
