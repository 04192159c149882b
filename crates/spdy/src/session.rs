//! A SPDY/3.1 session over one connection: streams opened by either side, their bytes
//! multiplexed, pings answered. A reader task decodes frames and hands each stream's bytes
//! to it (a full stream holds the reader back: the connection's own backpressure, as the
//! Kubernetes peers, which do no SPDY flow control, expect); a writer task encodes what the
//! streams send, in order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::Error;
use crate::frame::{FLAG_FIN, Frame, HeaderCodec, Headers};

/// Chunks of a stream's bytes waiting for its reader.
const STREAM_BUFFER: usize = 16;
/// Frames waiting for the writer.
const WRITE_BUFFER: usize = 64;
/// The largest data frame sent.
const CHUNK: usize = 32 * 1024;
/// RST_STREAM status: the stream is cancelled.
const CANCEL: u32 = 5;

struct Entry {
    data: Option<mpsc::Sender<Bytes>>,
    reply: Option<oneshot::Sender<Headers>>,
}

struct Shared {
    frames: mpsc::Sender<Frame>,
    streams: Mutex<HashMap<u32, Entry>>,
    next_id: AtomicU32,
}

impl Shared {
    fn streams(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Entry>> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One side of a session; clones share it. The connection closes when either side ends the
/// session ([`Session::close`]) or the connection itself ends.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
}

/// A stream: its headers (the peer's SYN_STREAM, or its SYN_REPLY), the bytes the peer sends
/// on it, and a way to send.
pub struct Stream {
    /// The stream id.
    pub id: u32,
    /// The headers the peer sent for it.
    pub headers: Headers,
    data: mpsc::Receiver<Bytes>,
    sender: StreamSender,
}

/// Sends on a stream; clones send on the same stream.
#[derive(Clone)]
pub struct StreamSender {
    id: u32,
    frames: mpsc::Sender<Frame>,
}

impl Stream {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The next bytes the peer sent; `None` once it has finished the stream (or reset it,
    /// or the connection ended).
    pub async fn recv(&mut self) -> Option<Bytes> {
        self.data.recv().await
    }

    /// A sender for this stream.
    pub fn sender(&self) -> StreamSender {
        self.sender.clone()
    }

    /// Splits the stream into its receiving half and a sender.
    pub fn split(self) -> (mpsc::Receiver<Bytes>, StreamSender) {
        (self.data, self.sender)
    }
}

impl StreamSender {
    /// Sends `data` (in frames of at most 32 KiB).
    pub async fn send(&self, mut data: Bytes) -> Result<(), Error> {
        while !data.is_empty() {
            let chunk = data.split_to(data.len().min(CHUNK));
            self.frames
                .send(Frame::Data {
                    stream_id: self.id,
                    flags: 0,
                    data: chunk,
                })
                .await
                .map_err(|_| Error::Closed)?;
        }
        Ok(())
    }

    /// Ends this direction of the stream (an empty data frame with FIN).
    pub async fn finish(&self) -> Result<(), Error> {
        self.frames
            .send(Frame::Data {
                stream_id: self.id,
                flags: FLAG_FIN,
                data: Bytes::new(),
            })
            .await
            .map_err(|_| Error::Closed)
    }

    /// Cancels the stream.
    pub async fn reset(&self) {
        let _ = self
            .frames
            .send(Frame::RstStream {
                stream_id: self.id,
                status: CANCEL,
            })
            .await;
    }
}

impl Session {
    /// The client side over `io` (odd stream ids), and the streams the server opens.
    pub fn client<T>(io: T) -> (Self, mpsc::Receiver<Stream>)
    where
        T: AsyncRead + AsyncWrite + Send + 'static,
    {
        Self::start(io, 1)
    }

    /// The server side over `io` (even stream ids), and the streams the client opens (each
    /// already accepted with a SYN_REPLY).
    pub fn server<T>(io: T) -> (Self, mpsc::Receiver<Stream>)
    where
        T: AsyncRead + AsyncWrite + Send + 'static,
    {
        Self::start(io, 2)
    }

    fn start<T>(io: T, first_id: u32) -> (Self, mpsc::Receiver<Stream>)
    where
        T: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (reader, writer) = tokio::io::split(io);
        let (frames, outgoing) = mpsc::channel(WRITE_BUFFER);
        let (accepted, incoming) = mpsc::channel(STREAM_BUFFER);
        let shared = Arc::new(Shared {
            frames,
            streams: Mutex::new(HashMap::new()),
            next_id: AtomicU32::new(first_id),
        });
        tokio::spawn(write_frames(writer, outgoing));
        tokio::spawn(read_frames(
            reader,
            shared.clone(),
            shared.frames.clone(),
            accepted,
            first_id == 2,
        ));
        (Self { shared }, incoming)
    }

    /// Opens a stream with `headers` and waits for the peer to accept it.
    pub async fn open(&self, headers: Headers) -> Result<Stream, Error> {
        let id = self.shared.next_id.fetch_add(2, Ordering::Relaxed);
        let (data_tx, data_rx) = mpsc::channel(STREAM_BUFFER);
        let (reply_tx, reply_rx) = oneshot::channel();
        self.shared.streams().insert(
            id,
            Entry {
                data: Some(data_tx),
                reply: Some(reply_tx),
            },
        );
        self.shared
            .frames
            .send(Frame::SynStream {
                stream_id: id,
                associated_to: 0,
                priority: 0,
                flags: 0,
                headers,
            })
            .await
            .map_err(|_| Error::Closed)?;
        let headers = reply_rx.await.map_err(|_| Error::Refused(id))?;
        Ok(Stream {
            id,
            headers,
            data: data_rx,
            sender: StreamSender {
                id,
                frames: self.shared.frames.clone(),
            },
        })
    }

    /// Ends the session: the peer is told, and the connection closes once the frames
    /// already queued are written.
    pub async fn close(&self) {
        let _ = self
            .shared
            .frames
            .send(Frame::GoAway {
                last_good_stream_id: 0,
                status: 0,
            })
            .await;
    }
}

async fn write_frames<W: AsyncWrite>(writer: W, mut outgoing: mpsc::Receiver<Frame>) {
    tokio::pin!(writer);
    let mut codec = HeaderCodec::new();
    let mut buf = BytesMut::with_capacity(64 * 1024);
    while let Some(frame) = outgoing.recv().await {
        let going_away = matches!(frame, Frame::GoAway { .. });
        if let Err(err) = frame.encode(&mut codec, &mut buf) {
            tracing::debug!(%err, "SPDY frame not encoded");
            break;
        }
        // Whatever else is queued goes out in the same write.
        while buf.len() < 64 * 1024 {
            match outgoing.try_recv() {
                Ok(next) => {
                    if next.encode(&mut codec, &mut buf).is_err() {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        if writer.write_all(&buf).await.is_err() || writer.flush().await.is_err() {
            break;
        }
        buf.clear();
        if going_away {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

async fn read_frames<R: AsyncRead>(
    reader: R,
    shared: Arc<Shared>,
    frames: mpsc::Sender<Frame>,
    accepted: mpsc::Sender<Stream>,
    server: bool,
) {
    tokio::pin!(reader);
    let mut codec = HeaderCodec::new();
    let mut buf = BytesMut::with_capacity(64 * 1024);
    'connection: loop {
        loop {
            let frame = match Frame::decode(&mut buf, &mut codec) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(err) => {
                    tracing::debug!(%err, "SPDY session ended");
                    break 'connection;
                }
            };
            match frame {
                Frame::SynStream {
                    stream_id,
                    flags,
                    headers,
                    ..
                } => {
                    let (data_tx, data_rx) = mpsc::channel(STREAM_BUFFER);
                    let fin = flags & FLAG_FIN != 0;
                    shared.streams().insert(
                        stream_id,
                        Entry {
                            data: (!fin).then_some(data_tx),
                            reply: None,
                        },
                    );
                    if server {
                        let _ = frames
                            .send(Frame::SynReply {
                                stream_id,
                                flags: 0,
                                headers: Vec::new(),
                            })
                            .await;
                    }
                    let stream = Stream {
                        id: stream_id,
                        headers,
                        data: data_rx,
                        sender: StreamSender {
                            id: stream_id,
                            frames: frames.clone(),
                        },
                    };
                    if accepted.send(stream).await.is_err() {
                        let _ = frames
                            .send(Frame::RstStream {
                                stream_id,
                                status: 3,
                            })
                            .await;
                    }
                }
                Frame::SynReply {
                    stream_id,
                    headers,
                    flags,
                    ..
                } => {
                    let mut streams = shared.streams();
                    if let Some(entry) = streams.get_mut(&stream_id) {
                        if let Some(reply) = entry.reply.take() {
                            let _ = reply.send(headers);
                        }
                        if flags & FLAG_FIN != 0 {
                            entry.data = None;
                        }
                    }
                }
                Frame::Data {
                    stream_id,
                    flags,
                    data,
                } => {
                    let sender = shared
                        .streams()
                        .get(&stream_id)
                        .and_then(|e| e.data.clone());
                    if let Some(sender) = sender
                        && !data.is_empty()
                    {
                        // A reader that went away leaves the stream's bytes unread.
                        let _ = sender.send(data).await;
                    }
                    if flags & FLAG_FIN != 0
                        && let Some(entry) = shared.streams().get_mut(&stream_id)
                    {
                        entry.data = None;
                    }
                }
                Frame::RstStream { stream_id, .. } => {
                    shared.streams().remove(&stream_id);
                }
                Frame::Ping { id } => {
                    // Only the peer's pings are answered (its ids have the other parity).
                    if (id % 2 == 0) != server {
                        let _ = frames.send(Frame::Ping { id }).await;
                    }
                }
                Frame::GoAway { .. } => break 'connection,
                Frame::Headers { .. } | Frame::Settings { .. } | Frame::WindowUpdate { .. } => {}
            }
        }
        match reader.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    // Every stream ends with the connection.
    shared.streams().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn streams_carry_bytes_both_ways_and_end_with_fin() {
        let (a, b) = tokio::io::duplex(1024);
        let (client, _) = Session::client(a);
        let (_server, mut incoming) = Session::server(b);
        let opener = tokio::spawn(async move {
            let mut stream = client
                .open(vec![("streamtype".into(), "stdin".into())])
                .await
                .unwrap();
            let sender = stream.sender();
            sender.send(Bytes::from(vec![7u8; 100_000])).await.unwrap();
            sender.finish().await.unwrap();
            let mut echoed = Vec::new();
            while let Some(chunk) = stream.recv().await {
                echoed.extend_from_slice(&chunk);
            }
            echoed
        });
        let mut stream = incoming.recv().await.unwrap();
        assert_eq!(stream.header("StreamType"), Some("stdin"));
        let mut got = Vec::new();
        while let Some(chunk) = stream.recv().await {
            got.extend_from_slice(&chunk);
        }
        assert_eq!(got.len(), 100_000);
        stream.sender().send(Bytes::from(got)).await.unwrap();
        stream.sender().finish().await.unwrap();
        let echoed = opener.await.unwrap();
        assert_eq!(echoed, vec![7u8; 100_000]);
    }

    #[tokio::test]
    async fn megabytes_pass_in_many_frames() {
        // Far more bytes than the reader's first buffer: it must keep finding room.
        let (a, b) = tokio::io::duplex(4096);
        let (client, _) = Session::client(a);
        let (_server, mut incoming) = Session::server(b);
        let sender = tokio::spawn(async move {
            let stream = client.open(Vec::new()).await.unwrap();
            for _ in 0..256 {
                stream
                    .sender()
                    .send(Bytes::from(vec![3u8; 33_333]))
                    .await
                    .unwrap();
            }
            stream.sender().finish().await.unwrap();
            stream
        });
        let mut stream = incoming.recv().await.unwrap();
        let mut total = 0;
        while let Some(chunk) = stream.recv().await {
            total += chunk.len();
        }
        assert_eq!(total, 256 * 33_333);
        drop(sender.await.unwrap());
    }

    #[tokio::test]
    async fn a_closed_connection_ends_every_stream() {
        let (a, b) = tokio::io::duplex(1024);
        let (client, _) = Session::client(a);
        let (server, mut incoming) = Session::server(b);
        let open = tokio::spawn(async move { client.open(Vec::new()).await });
        let _accepted = incoming.recv().await.unwrap();
        let mut stream = open.await.unwrap().unwrap();
        server.close().await;
        drop(server);
        drop(incoming);
        assert_eq!(stream.recv().await, None);
    }
}
