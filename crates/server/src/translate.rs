//! WebSocket streams for kubelets that speak only SPDY, as upstream's API server bridges
//! them: an exec or attach over `v5.channel.k8s.io` is answered by the server itself and
//! carried to the kubelet as SPDY streams (`v4.channel.k8s.io`), and a port-forward
//! WebSocket carrying SPDY (`SPDY/3.1+portforward.k8s.io`) is tunnelled to a SPDY upgrade of
//! the kubelet.
//!
//! The v5 channels: the first byte of each binary message names it (0 stdin, 1 stdout,
//! 2 stderr, 3 the final Status, 4 terminal resizes); a message `[255, n]` closes channel
//! `n` (stdin's end of input).

use std::sync::Arc;

use bytes::Bytes;
use capstan_meta::ApiError;
use capstan_spdy::{Session, StreamSender};
use futures_util::{SinkExt, StreamExt};
use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

use crate::kubelet::{KubeletClient, KubeletLocation};
use crate::response::Body;

/// The WebSocket protocol of remote commands translated here.
pub(crate) const V5: &str = "v5.channel.k8s.io";
/// The WebSocket protocol tunnelling SPDY port-forward streams.
pub(crate) const PORT_FORWARD_TUNNEL: &str = "SPDY/3.1+portforward.k8s.io";
/// The remote-command protocol spoken to the kubelet over SPDY.
const KUBELET_REMOTE_COMMAND: &str = "v4.channel.k8s.io";
/// The port-forward protocol spoken to the kubelet over SPDY.
const KUBELET_PORT_FORWARD: &str = "portforward.k8s.io";

/// The WebSocket subprotocols a request offers.
pub(crate) fn offered(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Which streams a remote command uses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Streams {
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
    pub tty: bool,
}

/// The `101` accepting the client's WebSocket with `protocol`; the upgraded connection
/// goes to `run` once established.
fn accept<F, Fut>(
    mut req: Request<Incoming>,
    protocol: &'static str,
    run: F,
) -> Result<Response<Body>, ApiError>
where
    F: FnOnce(WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let key = req
        .headers()
        .get(header::SEC_WEBSOCKET_KEY)
        .ok_or_else(|| ApiError::bad_request("missing Sec-WebSocket-Key"))?
        .as_bytes()
        .to_vec();
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        match upgrade.await {
            Ok(upgraded) => {
                let ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None)
                        .await;
                run(ws).await;
            }
            Err(err) => tracing::debug!(%err, "WebSocket upgrade not completed"),
        }
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "Upgrade")
        .header(header::UPGRADE, "websocket")
        .header(header::SEC_WEBSOCKET_ACCEPT, derive_accept_key(&key))
        .header(header::SEC_WEBSOCKET_PROTOCOL, protocol)
        .body(Empty::new().map_err(|never| match never {}).boxed_unsync())
        .map_err(ApiError::internal)
}

/// The SPDY upgrade request for the kubelet at `location`.
fn spdy_request(
    location: &KubeletLocation,
    path_and_query: &str,
    protocol: &str,
) -> Result<Request<Empty<Bytes>>, ApiError> {
    Request::builder()
        .method(http::Method::POST)
        .uri(path_and_query)
        .header(header::HOST, location.authority())
        .header(header::CONNECTION, "Upgrade")
        .header(header::UPGRADE, "SPDY/3.1")
        .header("X-Stream-Protocol-Version", protocol)
        .body(Empty::new())
        .map_err(ApiError::internal)
}

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// A v5 message on `channel`.
fn channel(channel: u8, data: &[u8]) -> Message {
    let mut bytes = Vec::with_capacity(data.len() + 1);
    bytes.push(channel);
    bytes.extend_from_slice(data);
    Message::Binary(bytes.into())
}

/// The final Status of a command that could not run.
fn failure(message: &str) -> Vec<u8> {
    serde_json::json!({"metadata": {}, "status": "Failure", "message": message,
        "reason": "InternalError", "code": 500})
    .to_string()
    .into_bytes()
}

async fn close(mut ws: Socket) {
    let _ = ws
        .close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        }))
        .await;
}

/// Answers an exec or attach WebSocket (`v5.channel.k8s.io`) and carries it to the kubelet
/// as SPDY streams.
pub(crate) fn remote_command(
    kubelet: Arc<KubeletClient>,
    location: KubeletLocation,
    path_and_query: String,
    streams: Streams,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    accept(req, V5, move |mut ws| async move {
        let upgrade = match spdy_request(&location, &path_and_query, KUBELET_REMOTE_COMMAND) {
            Ok(request) => kubelet.upgrade(&location, request).await,
            Err(err) => Err(err),
        };
        let upgraded = match upgrade {
            Ok((_, upgraded)) => upgraded,
            Err(err) => {
                let message = err.to_status().message.unwrap_or_default();
                let _ = ws.send(channel(3, &failure(&message))).await;
                return close(ws).await;
            }
        };
        let (session, _) = Session::client(upgraded);
        if let Err(message) = bridge(&session, &mut ws, streams).await {
            let _ = ws.send(channel(3, &failure(&message))).await;
        }
        session.close().await;
        close(ws).await;
    })
}

/// Opens the kubelet's streams and moves bytes until the command ends.
async fn bridge(session: &Session, ws: &mut Socket, streams: Streams) -> Result<(), String> {
    let open = |kind: &'static str| async move {
        session
            .open(vec![("streamType".into(), kind.into())])
            .await
            .map_err(|e| format!("opening the {kind} stream: {e}"))
    };
    let mut error = open("error").await?;
    let stdin: Option<StreamSender> = match streams.stdin {
        true => Some(open("stdin").await?.sender()),
        false => None,
    };
    let mut outputs = Vec::new();
    if streams.stdout {
        outputs.push((1u8, open("stdout").await?));
    }
    if streams.stderr && !streams.tty {
        outputs.push((2u8, open("stderr").await?));
    }
    let resize = match streams.tty {
        true => Some(open("resize").await?.sender()),
        false => None,
    };
    // The kubelet's output, in order per stream, funnelled to the one WebSocket writer.
    let (to_client, mut output) = tokio::sync::mpsc::channel::<(u8, Bytes)>(16);
    let mut readers = Vec::new();
    for (number, stream) in outputs {
        let to_client = to_client.clone();
        readers.push(tokio::spawn(async move {
            let (mut data, _) = stream.split();
            while let Some(chunk) = data.recv().await {
                if to_client.send((number, chunk)).await.is_err() {
                    break;
                }
            }
        }));
    }
    drop(to_client);
    let (mut sink, mut source) = ws.split();
    let mut status = Vec::new();
    // Each direction on its own, so that a full one never holds the other back.
    let upstream = async {
        while let Some(Ok(message)) = source.next().await {
            let data = match message {
                Message::Binary(data) => data,
                Message::Close(_) => break,
                _ => continue,
            };
            match data.split_first() {
                Some((0, rest)) if !rest.is_empty() => {
                    if let Some(stdin) = &stdin {
                        let _ = stdin.send(Bytes::copy_from_slice(rest)).await;
                    }
                }
                Some((4, rest)) => {
                    if let Some(resize) = &resize {
                        let _ = resize.send(Bytes::copy_from_slice(rest)).await;
                    }
                }
                Some((255, [0])) => {
                    if let Some(stdin) = &stdin {
                        let _ = stdin.finish().await;
                    }
                }
                _ => {}
            }
        }
    };
    let downstream = async {
        let mut outputs_open = true;
        let mut status_open = true;
        while outputs_open || status_open {
            tokio::select! {
                chunk = output.recv(), if outputs_open => match chunk {
                    Some((number, data)) => {
                        if sink.send(channel(number, &data)).await.is_err() {
                            return false;
                        }
                    }
                    None => outputs_open = false,
                },
                chunk = error.recv(), if status_open => match chunk {
                    Some(data) => status.extend_from_slice(&data),
                    None => status_open = false,
                },
            }
        }
        true
    };
    // The command's end (or the client's) ends the bridge.
    let finished = tokio::select! {
        finished = downstream => finished,
        () = upstream => false,
    };
    for reader in readers {
        reader.abort();
    }
    if finished {
        // An empty error stream is a command that succeeded.
        if status.is_empty() {
            status = br#"{"metadata":{},"status":"Success"}"#.to_vec();
        }
        let _ = sink.send(channel(3, &status)).await;
    }
    Ok(())
}

/// Answers a port-forward WebSocket tunnelling SPDY and joins it to a SPDY upgrade of the
/// kubelet: the client's SPDY frames pass through as they are.
pub(crate) fn port_forward_tunnel(
    kubelet: Arc<KubeletClient>,
    location: KubeletLocation,
    path_and_query: String,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    accept(req, PORT_FORWARD_TUNNEL, move |ws| async move {
        let upgrade = match spdy_request(&location, &path_and_query, KUBELET_PORT_FORWARD) {
            Ok(request) => kubelet.upgrade(&location, request).await,
            Err(err) => Err(err),
        };
        let upgraded = match upgrade {
            Ok((_, upgraded)) => upgraded,
            Err(err) => {
                tracing::debug!(%err, "port-forward tunnel: the kubelet refused");
                return close(ws).await;
            }
        };
        let (mut to_kubelet_r, mut to_kubelet_w) = tokio::io::split(upgraded);
        let (mut sink, mut source) = ws.split();
        let upstream = async {
            while let Some(Ok(message)) = source.next().await {
                let data = match message {
                    Message::Binary(data) => data,
                    Message::Close(_) => break,
                    _ => continue,
                };
                if to_kubelet_w.write_all(&data).await.is_err() {
                    break;
                }
            }
            let _ = to_kubelet_w.shutdown().await;
        };
        let downstream = async {
            let mut buf = vec![0u8; 32 * 1024];
            loop {
                match to_kubelet_r.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if sink
                            .send(Message::Binary(Bytes::copy_from_slice(&buf[..n])))
                            .await
                            .is_err()
                        {
                            break;
                        }
                    }
                }
            }
            let _ = sink
                .send(Message::Close(Some(CloseFrame {
                    code: CloseCode::Normal,
                    reason: "".into(),
                })))
                .await;
        };
        tokio::select! {
            _ = upstream => {}
            _ = downstream => {}
        }
    })
}
