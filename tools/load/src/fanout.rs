//! Watch fan-out: many watchers on one collection, a burst of creates, and how fast and how
//! late every event reaches every watcher.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use tokio::sync::Barrier;

use crate::{Conn, SC, Target};

/// Fan-out parameters.
pub struct Fanout {
    pub watchers: usize,
    pub events: usize,
    pub connections: usize,
    pub writers: usize,
    /// Creates per second across the writers; 0: as fast as they go.
    pub rate: u32,
}

/// Extracts the send time (µs since the epoch of the run) from an ADDED line.
fn sent_micros(finder: &memchr::memmem::Finder<'_>, line: &[u8]) -> Option<u64> {
    let at = finder.find(line)? + finder.needle().len();
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&line[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

/// What precedes the send time in an event line.
const SENT_NEEDLE: &[u8] = b"\"capstan-load/sent\":\"";

fn object(run: &str, name: &str, sent: u64) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": name,
            "labels": {"capstan-load": run},
            "annotations": {"capstan-load/sent": sent.to_string()},
        },
        "provisioner": "example.com/load",
    }))
    .expect("JSON")
}

/// Runs the fan-out and prints one table row.
pub async fn run(target: &Arc<Target>, run: &str, f: Fanout) {
    let epoch = Instant::now();
    let connections = f.connections.clamp(1, f.watchers);
    let ready = Arc::new(Barrier::new(f.watchers + 1));
    let mut conns = Vec::new();
    for _ in 0..connections {
        conns.push(target.connect().await.expect("connecting"));
    }
    let mut watchers = Vec::new();
    for w in 0..f.watchers {
        let mut conn = match &conns[w % connections] {
            Conn::H2(s) => Conn::H2(s.clone()),
            Conn::H1(_) => target.connect().await.expect("connecting"),
        };
        let target = target.clone();
        let ready = ready.clone();
        let path = format!("{SC}?watch=1&labelSelector=capstan-load%3D{run}&timeoutSeconds=900");
        let expected = f.events;
        watchers.push(tokio::spawn(async move {
            let resp = conn
                .open(target.request(Method::GET, &path, None))
                .await
                .expect("a watch");
            assert_eq!(resp.status(), StatusCode::OK, "the watch starts");
            ready.wait().await;
            let finder = memchr::memmem::Finder::new(SENT_NEEDLE);
            let mut body = resp.into_body();
            let mut buf: Vec<u8> = Vec::new();
            let mut latencies = Vec::with_capacity(expected);
            while latencies.len() < expected {
                let Some(frame) = body.frame().await else {
                    break;
                };
                let Ok(data) = frame.expect("a frame").into_data() else {
                    continue;
                };
                buf.extend_from_slice(&data);
                let now = epoch.elapsed().as_micros() as u64;
                let mut start = 0;
                while let Some(end) = memchr::memchr(b'\n', &buf[start..]) {
                    if let Some(sent) = sent_micros(&finder, &buf[start..start + end]) {
                        latencies.push(now.saturating_sub(sent) as u32);
                    }
                    start += end + 1;
                }
                buf.drain(..start);
            }
            (latencies, now_micros(epoch))
        }));
    }
    ready.wait().await;
    let begin = epoch.elapsed();
    let started = tokio::time::Instant::now();
    let per_writer = f.events.div_ceil(f.writers);
    let (writers_count, rate) = (f.writers, f.rate);
    let mut writers = Vec::new();
    for w in 0..f.writers {
        let target = target.clone();
        let run = run.to_string();
        let count = per_writer.min(f.events.saturating_sub(w * per_writer));
        writers.push(tokio::spawn(async move {
            let mut conn = target.connect().await.expect("connecting");
            for i in 0..count {
                if rate > 0 {
                    // Event n of the run is due at n / rate seconds.
                    let n = (i * writers_count + w) as f64;
                    tokio::time::sleep_until(started + Duration::from_secs_f64(n / rate as f64))
                        .await;
                }
                let sent = epoch.elapsed().as_micros() as u64;
                let req = target.request(
                    Method::POST,
                    SC,
                    Some(object(&run, &format!("fan-{run}-{w}-{i}"), sent)),
                );
                let (status, _): (StatusCode, Bytes) = conn.send(req).await.expect("a create");
                assert_eq!(status, StatusCode::CREATED);
            }
        }));
    }
    for w in writers {
        w.await.expect("a writer");
    }
    let mut all: Vec<u32> = Vec::with_capacity(f.watchers * f.events);
    let mut last = 0;
    for w in watchers {
        let (latencies, done) = w.await.expect("a watcher");
        last = last.max(done);
        all.extend(latencies);
    }
    all.sort_unstable();
    let delivered = all.len();
    let elapsed = Duration::from_micros(last) - begin;
    let pct = |p: f64| {
        all.get(((delivered as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0) as f64
            / 1000.0
    };
    println!(
        "| watch fan-out | {} watchers × {} events | {delivered} delivered ({} missing) | {:.0} events/s | p50 {:.1} ms | p99 {:.1} ms | max {:.1} ms |",
        f.watchers,
        f.events,
        (f.watchers * f.events).saturating_sub(delivered),
        delivered as f64 / elapsed.as_secs_f64(),
        pct(0.5),
        pct(0.99),
        pct(1.0),
    );
}

fn now_micros(epoch: Instant) -> u64 {
    epoch.elapsed().as_micros() as u64
}
