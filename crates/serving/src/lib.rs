//! Serving for Capstan's daemons: the serving certificate ([`tls`]) and [`serve`], which
//! accepts connections (TLS or plain) and answers them with HTTP/1.1 or HTTP/2; the
//! `/debug/pprof/` endpoints ([`profiling`]).

mod error;
pub mod files;
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

/// What bounds one connection's start, shared by both daemons' accept loops.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionTimeouts {
    /// How long a client may take to finish the TLS handshake.
    pub handshake: std::time::Duration,
    /// How long a client may take to send a request's headers (HTTP/1.1; the wait on an
    /// idle keep-alive connection included).
    pub headers: std::time::Duration,
}

impl Default for ConnectionTimeouts {
    /// 32 s each: what upstream's Go servers allow (their `ReadHeaderTimeout`, which also
    /// bounds the handshake).
    fn default() -> Self {
        let upstream = std::time::Duration::from_secs(32);
        Self {
            handshake: upstream,
            headers: upstream,
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

/// Accepts the next connection. A failed accept (file descriptors exhausted, most often) is
/// retried after `backoff`, which doubles from 5 ms to 1 s while accepts keep failing and
/// starts over after a success, as Go's servers do.
pub async fn accept(
    listener: &TcpListener,
    backoff: &mut std::time::Duration,
) -> (tokio::net::TcpStream, std::net::SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(pair) => {
                *backoff = std::time::Duration::ZERO;
                return pair;
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
pub async fn handshake(
    acceptor: tokio_rustls::TlsAcceptor,
    stream: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
    timeout: std::time::Duration,
) -> Option<tokio_rustls::server::TlsStream<tokio::net::TcpStream>> {
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

/// Accepts connections on `listener` until the task is dropped, answering each request with
/// `handler`; with `tls`, connections are TLS (ALPN picks HTTP/2 or HTTP/1.1). HTTP/2
/// clients may open `http2_max_streams` streams at once (0: the default). A TLS client's
/// certificates travel in each request's [`ClientChain`] extension.
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
    let builder = std::sync::Arc::new(http_builder(timeouts, http2_max_streams));
    let mut backoff = std::time::Duration::ZERO;
    loop {
        let (stream, peer) = accept(&listener, &mut backoff).await;
        let acceptor = match (&tls, stream.local_addr()) {
            (Some(tls), Ok(local)) => Some(tls.for_connection(local.ip())),
            (Some(_), Err(_)) => continue,
            (None, _) => None,
        };
        let handler = handler.clone();
        let builder = builder.clone();
        tokio::spawn(async move {
            let result = match acceptor {
                Some(acceptor) => match handshake(acceptor, stream, peer, timeouts.handshake).await
                {
                    Some(tls) => {
                        let chain = tls
                            .get_ref()
                            .1
                            .peer_certificates()
                            .map(|chain| ClientChain(chain.to_vec().into()));
                        let service =
                            hyper::service::service_fn(move |mut req: Request<Incoming>| {
                                if let Some(chain) = &chain {
                                    req.extensions_mut().insert(chain.clone());
                                }
                                let answer = handler(req, Transport::Tls);
                                async move { Ok::<_, Infallible>(answer.await) }
                            });
                        builder.serve_connection(TokioIo::new(tls), service).await
                    }
                    None => return,
                },
                None => {
                    let service = hyper::service::service_fn(move |req| {
                        let answer = handler(req, Transport::Plain);
                        async move { Ok::<_, Infallible>(answer.await) }
                    });
                    builder
                        .serve_connection(TokioIo::new(stream), service)
                        .await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}
