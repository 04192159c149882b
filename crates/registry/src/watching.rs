//! Watches and cached lists: turning objects into cache entries, selectors into filters,
//! events into wire lines, and either source of changes (the watch cache, or storage when the
//! cache is off) into one stream of lines with bookmarks and a deadline.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use capstan_meta::{ApiError, Reason, ResourceDescriptor};
use capstan_storage::{EventKind, ListRequest, Revision, Store};
use capstan_watch::{CachedJson, CachedObject, Decode, EventType, Filter, WatchEvent};
use futures_util::{Stream, StreamExt};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::options::ListOptions;

/// A watch response body: complete JSON lines (`{"type":…,"object":…}\n`).
pub type EventStream = Pin<Box<dyn Stream<Item = Bytes> + Send>>;

/// How long a watch waits between bookmarks (when asked for them).
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(10);

/// The selectors of `options` as a filter over cache entries.
pub(crate) fn filter(options: &ListOptions) -> Filter {
    let labels = options.label_selector.clone();
    let fields = options.field_selector.clone();
    Arc::new(move |o: &CachedObject| {
        labels.matches_lookup(|k| o.labels.get(k))
            && fields.matches(|f| o.fields.get(f).map(str::to_string))
    })
}

/// Most bytes of queued events sent as one chunk.
const MAX_CHUNK: usize = 64 * 1024;
/// What an event line adds to its object, at most (`{"type":"MODIFIED","object":` ... `}\n`).
const LINE_OVERHEAD: usize = 32;

/// Appends one event line; the object comes in pieces.
fn push_event<'a>(out: &mut Vec<u8>, kind: &str, object: impl IntoIterator<Item = &'a [u8]>) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    for piece in object {
        out.extend_from_slice(piece);
    }
    out.extend_from_slice(b"}\n");
}

/// The event lines of `events` packed into chunks of at most [`MAX_CHUNK`] bytes (an event
/// larger than that is a chunk of its own).
fn chunked(events: &[WatchEvent]) -> VecDeque<Bytes> {
    let mut chunks = VecDeque::new();
    let mut chunk = Vec::new();
    for e in events {
        let line_len = e.object.json.len() + LINE_OVERHEAD;
        if !chunk.is_empty() && chunk.len() + line_len > MAX_CHUNK {
            chunks.push_back(std::mem::take(&mut chunk).into());
        }
        push_event(&mut chunk, e.kind.as_str(), e.object.json.chunks());
    }
    if !chunk.is_empty() {
        chunks.push_back(chunk.into());
    }
    chunks
}

/// The type of an event line written by [`event_line`] (`ADDED`, `DELETED`, ...), read
/// without parsing the object; None for a line of another form.
pub fn event_type(line: &[u8]) -> Option<&str> {
    let rest = line.strip_prefix(b"{\"type\":\"")?;
    let end = rest.iter().position(|&b| b == b'"')?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// The non-empty lines of a chunk of an [`EventStream`] (one event each), found with a
/// vectorized search: an event's object runs to kilobytes.
pub fn event_lines(chunk: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', chunk)
        .chain(std::iter::once(chunk.len()))
        .map(move |end| {
            let line = &chunk[start..end];
            start = end + 1;
            line
        })
        .filter(|line| !line.is_empty())
}

/// One event line.
pub(crate) fn event_line(kind: &str, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + LINE_OVERHEAD);
    push_event(&mut out, kind, [object]);
    out.into()
}

/// The event line of a cached object.
fn object_line(kind: &str, object: &CachedJson) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + LINE_OVERHEAD);
    push_event(&mut out, kind, object.chunks());
    out.into()
}

/// A BOOKMARK line: the object has only kind, apiVersion and metadata.resourceVersion.
pub(crate) fn bookmark_line(d: &ResourceDescriptor, revision: u64) -> Bytes {
    let object = serde_json::json!({
        "kind": d.kind,
        "apiVersion": d.api_version(),
        "metadata": {"resourceVersion": revision.to_string()},
    });
    event_line("BOOKMARK", &serde_json::to_vec(&object).unwrap_or_default())
}

/// An ERROR line carrying a Status.
pub(crate) fn error_line(err: &ApiError) -> Bytes {
    event_line("ERROR", &err.to_json())
}

/// 410 for a watch that starts before the kept history.
pub(crate) fn expired(requested: u64, oldest: u64) -> ApiError {
    ApiError::new(
        Reason::Expired,
        format!("too old resource version: {requested} ({oldest})"),
    )
}

/// What the stream needs besides its source of events.
pub(crate) struct StreamParams {
    pub descriptor: ResourceDescriptor,
    pub bookmarks: bool,
    pub deadline: Instant,
    /// Dropped once the initial events have been yielded.
    pub initialization: Option<crate::InitializationGuard>,
}

/// The stream [`line_stream`] returns: polled directly (one timer kept for the bookmarks and
/// the deadline, moved only when they change), since a watch of a busy collection is polled
/// once per change per watcher.
struct LineStream {
    pending: VecDeque<Bytes>,
    events: mpsc::Receiver<WatchEvent>,
    /// Every change up to this revision has been queued (see `WatchCache::revision_receiver`).
    progress: watch::Receiver<u64>,
    params: StreamParams,
    next_bookmark: Instant,
    /// Fires at the next bookmark or the deadline, whichever comes first.
    timer: Pin<Box<tokio::time::Sleep>>,
    finished: bool,
}

impl LineStream {
    fn wake_at(&self) -> Instant {
        if self.params.bookmarks {
            self.next_bookmark.min(self.params.deadline)
        } else {
            self.params.deadline
        }
    }

    /// The bookmark or deadline is due: queue what it calls for.
    fn on_timer(&mut self) {
        let now = Instant::now();
        let at_end = now >= self.params.deadline;
        if self.params.bookmarks {
            // Read the revision first: if the queue is empty afterwards, every change up to
            // it has been sent.
            let revision = *self.progress.borrow();
            match self.events.try_recv() {
                Ok(ev) => self
                    .pending
                    .push_back(object_line(ev.kind.as_str(), &ev.object.json)),
                Err(_) if revision > 0 => self
                    .pending
                    .push_back(bookmark_line(&self.params.descriptor, revision)),
                Err(_) => {}
            }
            self.next_bookmark = now + BOOKMARK_INTERVAL;
        }
        if at_end {
            self.finished = true;
        } else {
            let at = self.wake_at();
            self.timer.as_mut().reset(at);
        }
    }
}

impl Stream for LineStream {
    type Item = Bytes;

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Bytes>> {
        use std::task::Poll;
        let st = self.get_mut();
        loop {
            if let Some(chunk) = st.pending.pop_front() {
                if st.pending.is_empty() {
                    st.params.initialization = None;
                }
                return Poll::Ready(Some(chunk));
            }
            if st.finished {
                return Poll::Ready(None);
            }
            match st.events.poll_recv(cx) {
                Poll::Ready(Some(ev)) => {
                    // Events already queued go out in the same chunk: one write, one frame,
                    // one wake-up for a burst instead of one per event.
                    let mut chunk = Vec::with_capacity(ev.object.json.len() + LINE_OVERHEAD);
                    push_event(&mut chunk, ev.kind.as_str(), ev.object.json.chunks());
                    while chunk.len() < MAX_CHUNK {
                        match st.events.try_recv() {
                            Ok(ev) => {
                                push_event(&mut chunk, ev.kind.as_str(), ev.object.json.chunks())
                            }
                            Err(_) => break,
                        }
                    }
                    return Poll::Ready(Some(chunk.into()));
                }
                Poll::Ready(None) => st.finished = true,
                Poll::Pending => match st.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => st.on_timer(),
                    Poll::Pending => return Poll::Pending,
                },
            }
        }
    }
}

/// The lines of a watch: `initial` first, then live events, bookmarks every
/// [`BOOKMARK_INTERVAL`] and one at the end when asked for, until the deadline or until the
/// source ends (the watcher was too slow, or the source restarted).
pub(crate) fn line_stream(
    initial: Vec<WatchEvent>,
    events: mpsc::Receiver<WatchEvent>,
    progress: watch::Receiver<u64>,
    params: StreamParams,
) -> EventStream {
    // The initial events go out in chunks, as bursts of live events do.
    let pending = chunked(&initial);
    let mut params = params;
    if pending.is_empty() {
        params.initialization = None;
    }
    let next_bookmark = Instant::now() + BOOKMARK_INTERVAL;
    let mut stream = LineStream {
        pending,
        events,
        progress,
        params,
        next_bookmark,
        timer: Box::pin(tokio::time::sleep_until(next_bookmark)),
        finished: false,
    };
    let at = stream.wake_at();
    stream.timer.as_mut().reset(at);
    Box::pin(stream)
}

/// A watch served from storage (the watch cache is off). A watch without selectors keeps no
/// state: a put that created its key is ADDED, any other put MODIFIED, as etcd's watchers
/// tell them apart. A watch with selectors keeps only the keys that match them, so that an
/// update crossing the selector becomes ADDED or DELETED; those keys are read once, at the
/// start revision.
pub(crate) async fn storage_watch(
    store: Arc<dyn Store>,
    prefix: String,
    from: Option<Revision>,
    filter: Option<Filter>,
    decode: Decode,
    queue: usize,
) -> Result<
    (
        Vec<WatchEvent>,
        mpsc::Receiver<WatchEvent>,
        watch::Receiver<u64>,
    ),
    capstan_storage::Error,
> {
    let mut matching: HashSet<String> = HashSet::new();
    let mut initial = Vec::new();
    // A watch from a revision without selectors needs nothing from before it.
    let start = match from {
        Some(revision) if filter.is_none() => revision,
        _ => {
            let listed = store
                .list(ListRequest {
                    prefix: &prefix,
                    revision: from,
                    ..Default::default()
                })
                .await?;
            for kv in &listed.items {
                let Ok(o) = decode(kv) else { continue };
                if filter.as_ref().is_none_or(|f| f(&o)) {
                    if from.is_none() {
                        initial.push(WatchEvent {
                            kind: EventType::Added,
                            object: Arc::new(o),
                        });
                    }
                    if filter.is_some() {
                        matching.insert(kv.key.clone());
                    }
                }
            }
            listed.revision
        }
    };
    let mut changes = store.watch(&prefix, start).await?;
    let (tx, rx) = mpsc::channel(queue);
    let (progress_tx, progress_rx) = watch::channel(start.0);
    tokio::spawn(async move {
        loop {
            let ev = tokio::select! {
                ev = changes.next() => match ev {
                    Some(Ok(ev)) => ev,
                    _ => return,
                },
                _ = tx.closed() => return,
            };
            let revision = ev.kv.mod_revision.0;
            if ev.kind != EventKind::Progress {
                let Ok(o) = decode(&ev.kv) else { continue };
                let object = Arc::new(o);
                let deleted = ev.kind == EventKind::Delete;
                let kind = match &filter {
                    None if deleted => Some(EventType::Deleted),
                    None if ev.is_create() => Some(EventType::Added),
                    None => Some(EventType::Modified),
                    Some(filter) => {
                        let now = filter(&object);
                        let before = if now && !deleted {
                            !matching.insert(ev.kv.key.clone())
                        } else {
                            matching.remove(&ev.kv.key)
                        };
                        match (deleted, before, now) {
                            (true, _, true) => Some(EventType::Deleted),
                            (false, false, true) => Some(EventType::Added),
                            (false, true, true) => Some(EventType::Modified),
                            (false, true, false) => Some(EventType::Deleted),
                            _ => None,
                        }
                    }
                };
                if let Some(kind) = kind
                    && tx.try_send(WatchEvent { kind, object }).is_err()
                {
                    return;
                }
            }
            progress_tx.send_replace(revision);
        }
    });
    Ok((initial, rx, progress_rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_lines_tell_their_type_unparsed() {
        let line = event_line("DELETED", br#"{"kind":"Pod","type":"ADDED"}"#);
        assert_eq!(event_type(&line), Some("DELETED"));
        assert_eq!(
            event_type(&error_line(&ApiError::bad_request("old"))),
            Some("ERROR")
        );
        assert_eq!(event_type(br#"{"object":{},"type":"ADDED"}"#), None);
        assert_eq!(event_type(b"{\"type\":\"ADD"), None);
    }

    #[test]
    fn a_chunk_splits_into_its_non_empty_lines() {
        fn lines(chunk: &[u8]) -> Vec<&[u8]> {
            event_lines(chunk).collect()
        }
        assert_eq!(
            lines(b"{\"a\":1}\n{\"b\":2}\n"),
            [&b"{\"a\":1}"[..], b"{\"b\":2}"]
        );
        assert_eq!(lines(b"\n\none\n\ntwo"), [&b"one"[..], b"two"]);
        assert!(lines(b"").is_empty());
        assert!(lines(b"\n").is_empty());
    }

    fn added(name: &str, size: usize) -> WatchEvent {
        let json = format!("{{\"n\":\"{name}{}\"}}", "x".repeat(size));
        WatchEvent {
            kind: EventType::Added,
            object: Arc::new(CachedObject {
                key: name.to_string(),
                revision: Revision(1),
                json: json.into(),
                labels: Default::default(),
                fields: Default::default(),
                protobuf: Default::default(),
                stored_crc: None,
            }),
        }
    }

    #[test]
    fn initial_events_are_packed_into_chunks_of_whole_lines() {
        let events: Vec<WatchEvent> = (0..100)
            .map(|i| added(&format!("o{i}"), 1000))
            .chain([added("big", 100 * 1024), added("last", 10)])
            .collect();
        let chunks = chunked(&events);
        let lines: Vec<Bytes> = events
            .iter()
            .map(|e| object_line(e.kind.as_str(), &e.object.json))
            .collect();
        // Nothing lost, nothing reordered, every chunk whole lines.
        let bytes = |all: &mut dyn Iterator<Item = &Bytes>| {
            all.flat_map(|b| b.to_vec()).collect::<Vec<u8>>()
        };
        assert_eq!(bytes(&mut chunks.iter()), bytes(&mut lines.iter()));
        assert!(chunks.iter().all(|c| c.ends_with(b"}\n")));
        // 100 lines of ~1 KB in two chunks, the large event alone, the last one alone.
        assert_eq!(chunks.len(), 4);
        assert!(chunks[0].len() <= MAX_CHUNK && chunks[0].len() > MAX_CHUNK - 1100);
        assert!(chunks[2].len() > MAX_CHUNK);
        assert!(chunked(&[]).is_empty());
    }
}
