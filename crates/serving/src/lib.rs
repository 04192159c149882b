//! Serving for Capstan's daemons: the serving certificate ([`tls`]) and [`serve`], which
//! accepts connections (TLS or plain) and answers them with HTTP/1.1 or HTTP/2; the
//! `/debug/pprof/` endpoints ([`profiling`]).

mod error;
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
    let max_streams = self::http2_max_streams(http2_max_streams);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "accepting a connection failed");
                continue;
            }
        };
        let acceptor = match (&tls, stream.local_addr()) {
            (Some(tls), Ok(local)) => Some(tls.for_connection(local.ip())),
            (Some(_), Err(_)) => continue,
            (None, _) => None,
        };
        let handler = handler.clone();
        tokio::spawn(async move {
            let mut builder = auto::Builder::new(TokioExecutor::new());
            builder.http2().max_concurrent_streams(max_streams);
            let result = match acceptor {
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(tls) => {
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
                    Err(e) => {
                        tracing::debug!(%peer, error = %e, "TLS handshake failed");
                        return;
                    }
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
