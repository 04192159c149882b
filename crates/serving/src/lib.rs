//! Serving for Capstan's daemons: the serving certificate ([`tls`]) and [`serve`], which
//! accepts connections (TLS or plain) and answers them with HTTP/1.1 or HTTP/2; the
//! `/debug/pprof/` endpoints ([`profiling`]).

mod error;
pub mod profiling;
pub mod sni;
pub mod tls;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

pub use error::{Error, Result};

/// Whether a connection came over TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// HTTPS.
    Tls,
    /// Plain HTTP.
    Plain,
}

/// Accepts connections on `listener` until the task is dropped, answering each request with
/// `handler`; with `tls`, connections are TLS (ALPN picks HTTP/2 or HTTP/1.1).
pub async fn serve<H, F>(listener: TcpListener, tls: Option<rustls::ServerConfig>, handler: H)
where
    H: Fn(Request<Incoming>, Transport) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let acceptor = tls.map(|c| tokio_rustls::TlsAcceptor::from(Arc::new(c)));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "accepting a connection failed");
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let handler = handler.clone();
        tokio::spawn(async move {
            let builder = auto::Builder::new(TokioExecutor::new());
            let result = match acceptor {
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(tls) => {
                        let service = hyper::service::service_fn(move |req| {
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
