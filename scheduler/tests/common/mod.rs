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

/// The `PodScheduled=False` message of `name`, once the scheduler has set it.
#[allow(dead_code)]
pub async fn unschedulable_message(client: &Client, name: &str) -> String {
    match try_unschedulable_message(client, name).await {
        Some(message) => message,
        None => panic!("{name} got no PodScheduled condition"),
    }
}

/// The same, `None` when the scheduler has not set it within 60 s (a pod whose claim the
/// controller manager creates first waited longer than 20 s in a CI run on a busy machine).
#[allow(dead_code)]
pub async fn try_unschedulable_message(client: &Client, name: &str) -> Option<String> {
    for _ in 0..600 {
        let p: Pod = client.get(Some("default"), name).await.unwrap();
        let condition = p
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.type_ == "PodScheduled");
        if let Some(c) = condition {
            assert_eq!(c.status, "False");
            assert_eq!(c.reason.as_deref(), Some("Unschedulable"));
            return Some(c.message.unwrap_or_default());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

#[allow(unused_imports)]
pub use capstan_e2e::upstream::free_port;

/// A plain HTTP/1.1 GET: (status line, body).
#[allow(dead_code)]
pub fn plain_get(port: u16, path: &str) -> Option<(String, String)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}
