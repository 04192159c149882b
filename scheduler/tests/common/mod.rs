//! What the scheduler's test binaries share: a scheduler process that is killed with its
//! guard, and waiting for a pod to be bound.

use std::time::Duration;

use capstan_client::Client;
use k8s_openapi::api::core::v1::Pod;

/// A running `capstan-scheduler`, killed (and reaped) when dropped.
pub struct Running(pub std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The node `default/name` is bound to, waiting up to 20 s for it.
#[allow(dead_code)]
pub async fn node_of(client: &Client, name: &str) -> Option<String> {
    for _ in 0..200 {
        let p: Pod = client.get(Some("default"), name).await.unwrap();
        if let Some(n) = p.spec.and_then(|s| s.node_name) {
            return Some(n);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}
