//! Serving for Capstan's daemons: the serving certificate ([`tls`]) and [`serve`], which
//! accepts connections (TLS or plain) and answers them with HTTP/1.1 or HTTP/2; the
//! `/debug/pprof/` endpoints ([`profiling`]).

mod coalesce;
mod connections;
mod error;
pub mod feature_gates;
pub mod files;
pub mod lanes;
pub mod memory;
pub mod options;
pub mod profiling;
pub mod sni;
pub mod tls;

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

pub use connections::{
    Activity, ConnectionLimit, ConnectionPermit, IDLE_TIMEOUT, InFlight, TrackedBody,
    raise_open_file_limit,
};
pub use error::{Error, Result};

/// The certificate chain a TLS client presented (a request extension); whether an
/// authority vouches for it is for the handler to check.
#[derive(Debug, Clone)]
pub struct ClientChain(pub std::sync::Arc<[rustls_pki_types::CertificateDer<'static>]>);

/// Whether a connection came over TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// HTTPS.
    Tls,
    /// Plain HTTP.
    Plain,
}

/// Binds a listening socket: always with address reuse (as Go's listeners on Linux, so a
/// restart binds at once despite TIME_WAIT), and with port reuse when `port_sharing`
/// (`--permit-port-sharing`: several instances on one address and port).
pub fn listen(bind: std::net::SocketAddr, port_sharing: bool) -> std::io::Result<TcpListener> {
    let socket = if bind.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    if port_sharing {
        socket.set_reuseport(true)?;
    }
    socket.bind(bind)?;
    socket.listen(1024)
}

/// The HTTP/2 stream limit for `--http2-max-streams-per-connection` (0: Capstan's 1000).
pub fn http2_max_streams(configured: u32) -> u32 {
    if configured == 0 { 1000 } else { configured }
}

/// What bounds one connection's time, shared by both daemons' accept loops.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionTimeouts {
    /// How long a client may take to finish the TLS handshake.
    pub handshake: std::time::Duration,
    /// How long a client may take to send a request's headers (HTTP/1.1; the wait on an
    /// idle keep-alive connection included).
    pub headers: std::time::Duration,
    /// How long a connection with no request in flight stays open (HTTP/2 too).
    pub idle: std::time::Duration,
}

impl Default for ConnectionTimeouts {
    /// Upstream's Go servers: 32 s for the handshake and headers (their `ReadHeaderTimeout`,
    /// which also bounds the handshake), 90 s idle.
    fn default() -> Self {
        let upstream = std::time::Duration::from_secs(32);
        Self {
            handshake: upstream,
            headers: upstream,
            idle: IDLE_TIMEOUT,
        }
    }
}

/// The HTTP/1.1 and HTTP/2 connection builder both daemons use: the header timeout of
/// `timeouts` and at most `http2_max_streams` streams per HTTP/2 connection (0: the default).
pub fn http_builder(
    timeouts: ConnectionTimeouts,
    http2_max_streams: u32,
) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(timeouts.headers);
    builder
        .http2()
        .max_concurrent_streams(self::http2_max_streams(http2_max_streams));
    builder
}

/// A connection accepted under a [`ConnectionLimit`].
#[derive(Debug)]
pub struct Accepted {
    /// The connection.
    pub stream: tokio::net::TcpStream,
    /// The client's address.
    pub peer: std::net::SocketAddr,
    /// Its place under the limit: keep it as long as the connection.
    pub permit: ConnectionPermit,
}

/// Accepts the next connection once `limit` has room for it. A failed accept (file
/// descriptors exhausted, most often) is retried after `backoff`, which doubles from 5 ms
/// to 1 s while accepts keep failing and starts over after a success, as Go's servers do.
pub async fn accept(
    listener: &TcpListener,
    limit: &ConnectionLimit,
    backoff: &mut std::time::Duration,
) -> Accepted {
    let permit = limit.acquire().await;
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                *backoff = std::time::Duration::ZERO;
                return Accepted {
                    stream,
                    peer,
                    permit,
                };
            }
            Err(err) => {
                *backoff = (*backoff * 2).clamp(
                    std::time::Duration::from_millis(5),
                    std::time::Duration::from_secs(1),
                );
                tracing::warn!(%err, retry_in = ?backoff, "accept failed");
                tokio::time::sleep(*backoff).await;
            }
        }
    }
}

/// The TLS handshake of `stream`, given up after `timeout`.
pub async fn handshake<IO>(
    acceptor: tokio_rustls::TlsAcceptor,
    stream: IO,
    peer: std::net::SocketAddr,
    timeout: std::time::Duration,
) -> Option<tokio_rustls::server::TlsStream<IO>>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => Some(tls),
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            None
        }
    }
}

/// Serves one connection until it ends; once no request has been in flight on it for
/// `idle`, or when `stop` resolves, it is closed gracefully: requests in flight finish, then
/// the connection is dropped a second later at most. While the connection writes in bulk,
/// its task runs on the bulk lane ([`lanes`]).
/// `service` must count its requests in the meter's activity ([`Activity::begin`]), and
/// `io` should sit on a [`lanes::LaneStream`] of the same meter.
pub async fn serve_connection<I, S, B>(
    builder: std::sync::Arc<auto::Builder<TokioExecutor>>,
    io: I,
    service: S,
    meter: std::sync::Arc<lanes::Meter>,
    idle: std::time::Duration,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    TokioExecutor: auto::HttpServerConnExec<S::Future, B>,
{
    let activity = meter.activity().clone();
    let io = lanes::Metered::new(
        coalesce::Coalescing::new(io, activity.clone()),
        meter.clone(),
    );
    let task = async move {
        let conn = builder.serve_connection_with_upgrades(io, service);
        tokio::pin!(conn);
        tokio::pin!(stop);
        tokio::select! {
            ended = conn.as_mut() => return ended,
            _ = activity.idle_for(idle) => tracing::debug!("closing an idle connection"),
            _ = &mut stop => {}
        }
        conn.as_mut().graceful_shutdown();
        // A client may never answer the HTTP/2 shutdown's PING: once no request is left, a
        // second of grace, then the connection is dropped (as Go's servers do after GOAWAY).
        tokio::select! {
            ended = conn => ended,
            _ = activity.idle_for(std::time::Duration::from_secs(1)) => Ok(()),
        }
    };
    lanes::run(task, meter).await
}

/// Accepts connections on `listener` until the task is dropped, answering each request with
/// `handler`; with `tls`, connections are TLS (ALPN picks HTTP/2 or HTTP/1.1). HTTP/2
/// clients may open `http2_max_streams` streams at once (0: the default). A TLS client's
/// certificates travel in each request's [`ClientChain`] extension. Connections are bounded
/// by the open-file limit ([`ConnectionLimit::from_open_files`]) and closed when idle.
pub async fn serve<H, F>(
    listener: TcpListener,
    tls: Option<sni::Acceptor>,
    http2_max_streams: u32,
    handler: H,
) where
    H: Fn(Request<Incoming>, Transport) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let timeouts = ConnectionTimeouts::default();
    let limit = ConnectionLimit::from_open_files();
    let builder = std::sync::Arc::new(http_builder(timeouts, http2_max_streams));
    let mut backoff = std::time::Duration::ZERO;
    loop {
        let Accepted {
            stream,
            peer,
            permit,
        } = accept(&listener, &limit, &mut backoff).await;
        let acceptor = match (&tls, stream.local_addr()) {
            (Some(tls), Ok(local)) => Some(tls.for_connection(local.ip())),
            (Some(_), Err(_)) => continue,
            (None, _) => None,
        };
        let handler = handler.clone();
        let builder = builder.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let activity = Activity::default();
            let meter = std::sync::Arc::new(lanes::Meter::new(&activity));
            let stream = lanes::LaneStream::new(stream, meter.clone());
            let service = |transport: Transport, chain: Option<ClientChain>| {
                let activity = activity.clone();
                hyper::service::service_fn(move |mut req: Request<Incoming>| {
                    let in_flight = activity.begin();
                    if let Some(chain) = &chain {
                        req.extensions_mut().insert(chain.clone());
                    }
                    let answer = handler(req, transport);
                    async move { Ok::<_, Infallible>(in_flight.hold(answer.await)) }
                })
            };
            let never = std::future::pending();
            let result = match acceptor {
                Some(acceptor) => {
                    let Some(tls) = handshake(acceptor, stream, peer, timeouts.handshake).await
                    else {
                        return;
                    };
                    let chain = tls
                        .get_ref()
                        .1
                        .peer_certificates()
                        .map(|chain| ClientChain(chain.to_vec().into()));
                    let service = service(Transport::Tls, chain);
                    let io = TokioIo::new(tls);
                    serve_connection(builder, io, service, meter, timeouts.idle, never).await
                }
                None => {
                    let service = service(Transport::Plain, None);
                    let io = TokioIo::new(stream);
                    serve_connection(builder, io, service, meter, timeouts.idle, never).await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}
