//! Forwarding one request over a connection already open to a backend (a pod, a kubelet):
//! the answer is streamed back as it arrives, and an upgrade the backend accepts (`101
//! Switching Protocols`: SPDY, WebSocket) is spliced both ways until either side closes.

use std::convert::Infallible;

use capstan_meta::{ApiError, Reason};
use futures_util::StreamExt;
use http::{HeaderMap, HeaderName, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt, BodyStream, Empty, StreamBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::response::Body;

/// Headers that belong to one connection, not to the request or answer passed on.
const HOP_BY_HOP: &[HeaderName] = &[
    header::CONNECTION,
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

/// The error of a backend that cannot be reached or answered nothing usable.
pub(crate) fn unreachable(error: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        Reason::ServiceUnavailable,
        format!("error trying to reach service: {error}"),
    )
}

/// Whether the request asks to switch protocols (`Connection: Upgrade` with an `Upgrade`).
pub(crate) fn wants_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(header::UPGRADE)
        && headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
}

/// Drops the connection's own headers; an upgrade keeps `Connection` and `Upgrade`, which
/// are what it asks for.
pub(crate) fn strip(headers: &mut HeaderMap, upgrade: bool) {
    for name in HOP_BY_HOP {
        if upgrade && (name == header::CONNECTION || name == header::UPGRADE) {
            continue;
        }
        headers.remove(name);
    }
    headers.remove("keep-alive");
}

/// `req` readied for a backend: its path the segments after the proxy subresource (the
/// client's trailing slash and query kept), the connection's headers dropped, `Host` the
/// backend's, and none of the client's credentials (`Authorization`, `Impersonate-*`),
/// which are the API server's business.
pub(crate) fn backend_request(
    req: Request<Incoming>,
    segments: &[String],
    host: &str,
) -> Result<Request<Incoming>, ApiError> {
    let (mut parts, body) = req.into_parts();
    let mut path = format!("/{}", segments.join("/"));
    if parts.uri.path().ends_with('/') && !path.ends_with('/') {
        path.push('/');
    }
    if let Some(query) = parts.uri.query() {
        path = format!("{path}?{query}");
    }
    parts.uri = path
        .parse::<Uri>()
        .map_err(|e| ApiError::bad_request(format!("invalid path: {e}")))?;
    let upgrade = wants_upgrade(&parts.headers);
    strip(&mut parts.headers, upgrade);
    parts.headers.remove(header::AUTHORIZATION);
    let impersonation: Vec<HeaderName> = parts
        .headers
        .keys()
        .filter(|k| k.as_str().starts_with("impersonate-"))
        .cloned()
        .collect();
    for name in impersonation {
        parts.headers.remove(name);
    }
    parts
        .headers
        .insert(header::HOST, host.parse().map_err(ApiError::internal)?);
    Ok(Request::from_parts(parts, body))
}

/// Sends `req` over `io` and answers with the backend's response: its body streamed (a
/// broken backend ends it early; a client going away closes the backend connection), or,
/// when the backend switches protocols, its `101` with both connections spliced, the
/// backend's side carrying at most `bytes_per_sec` each way (0: no limit).
pub(crate) async fn forward<T>(
    io: T,
    mut req: Request<Incoming>,
    bytes_per_sec: u64,
) -> Result<Response<Body>, ApiError>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let upgrading = wants_upgrade(req.headers());
    let client_side = upgrading.then(|| hyper::upgrade::on(&mut req));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(unreachable)?;
    tokio::spawn(async move {
        if let Err(err) = connection.with_upgrades().await {
            tracing::debug!(%err, "forwarded connection ended");
        }
    });
    let mut response = sender.send_request(req).await.map_err(unreachable)?;
    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        let Some(client_side) = client_side else {
            return Err(unreachable("the backend switched protocols unasked"));
        };
        let backend_side = hyper::upgrade::on(&mut response);
        tokio::spawn(async move {
            let (client, backend) = tokio::join!(client_side, backend_side);
            let (Ok(client), Ok(backend)) = (client, backend) else {
                tracing::debug!("an upgraded connection was not established");
                return;
            };
            let client = TokioIo::new(client);
            let backend = crate::throttle::Throttled::new(TokioIo::new(backend), bytes_per_sec);
            splice(client, backend).await;
        });
        let (mut parts, _) = response.into_parts();
        strip(&mut parts.headers, true);
        return Ok(Response::from_parts(
            parts,
            Empty::new().map_err(|never| match never {}).boxed_unsync(),
        ));
    }
    Ok(stream_back(response))
}

/// Carries bytes between `client` and `backend` until both directions have ended. Each
/// direction ends on its own, at the end of what its source sends or at an error, and then
/// ends its destination's writing: an error one way does not cut the other. (A kubelet that
/// has closed after a command's last output makes the client's last frames fail to reach
/// it; that output, still on its way to the client, arrives whole.)
async fn splice<C, B>(client: C, backend: B)
where
    C: AsyncRead + AsyncWrite,
    B: AsyncRead + AsyncWrite,
{
    use tokio::io::AsyncWriteExt;
    let (mut client_reads, mut client_writes) = tokio::io::split(client);
    let (mut backend_reads, mut backend_writes) = tokio::io::split(backend);
    let up = async {
        let copied = tokio::io::copy(&mut client_reads, &mut backend_writes).await;
        let _ = backend_writes.shutdown().await;
        copied
    };
    let down = async {
        let copied = tokio::io::copy(&mut backend_reads, &mut client_writes).await;
        let _ = client_writes.shutdown().await;
        copied
    };
    let (up, down) = tokio::join!(up, down);
    for (from, copied) in [("client", up), ("backend", down)] {
        if let Err(err) = copied {
            tracing::debug!(%err, from, "a direction of an upgraded connection ended");
        }
    }
}

/// A backend's response passed on: its own connection's headers dropped, its body streamed
/// as it arrives (a broken backend ends it early).
pub(crate) fn stream_back(response: Response<Incoming>) -> Response<Body> {
    let (mut parts, body) = response.into_parts();
    strip(&mut parts.headers, false);
    let frames = BodyStream::new(body)
        .take_while(|frame| std::future::ready(frame.is_ok()))
        .filter_map(|frame| std::future::ready(frame.ok().map(Ok::<_, Infallible>)));
    Response::from_parts(parts, StreamBody::new(frames).boxed_unsync())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_backend_that_leaves_first_still_delivers_its_last_bytes() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut client, client_side) = tokio::io::duplex(64 << 10);
        let (backend_side, mut backend) = tokio::io::duplex(64 << 10);
        let spliced = tokio::spawn(splice(client_side, backend_side));
        let payload: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = payload.clone();
        // The backend says all it has and goes away at once, reading nothing.
        tokio::spawn(async move {
            backend.write_all(&sent).await.unwrap();
            drop(backend);
        });
        let (mut client_reads, mut client_writes) = tokio::io::split(&mut client);
        // The client keeps talking, which the backend never hears.
        let talking = async { while client_writes.write_all(&[7; 4096]).await.is_ok() {} };
        let mut received = Vec::new();
        let reading = client_reads.read_to_end(&mut received);
        let (_, read) = tokio::join!(talking, reading);
        read.unwrap();
        assert!(
            received == payload,
            "{} of {} bytes",
            received.len(),
            payload.len()
        );
        spliced.await.unwrap();
    }

    #[test]
    fn an_upgrade_needs_both_headers() {
        let mut headers = HeaderMap::new();
        headers.insert(header::UPGRADE, "SPDY/3.1".parse().unwrap());
        assert!(!wants_upgrade(&headers));
        headers.insert(header::CONNECTION, "keep-alive, Upgrade".parse().unwrap());
        assert!(wants_upgrade(&headers));
        strip(&mut headers, true);
        assert!(headers.contains_key(header::UPGRADE));
        strip(&mut headers, false);
        assert!(headers.is_empty());
    }
}
