//! Building responses: JSON bodies, `Status` errors, pretty printing, warnings.

use std::convert::Infallible;

use bytes::Bytes;
use capstan_meta::ApiError;
use capstan_registry::Payload;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};

/// The response body type of every handler (streaming bodies fit too).
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A complete body.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

/// Responses larger than this are compressed for a client that accepts gzip (upstream's
/// threshold).
const GZIP_THRESHOLD: u64 = 128 * 1024;

/// Whether the request's `Accept-Encoding` names `gzip` (as upstream reads it: one of the
/// comma-separated codings is exactly `gzip`, without parameters).
pub fn accepts_gzip(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| coding.trim() == "gzip")
}

/// `resp` gzip-compressed as it is sent (`Content-Encoding: gzip`, `Vary: Accept-Encoding`)
/// when its body is known to be larger than upstream's threshold and is not encoded already;
/// otherwise unchanged. Compression runs chunk by chunk as the connection takes the body, at
/// the fastest level, as upstream's.
pub fn gzip_large(resp: Response<Body>) -> Response<Body> {
    let large = http_body::Body::size_hint(resp.body())
        .exact()
        .is_some_and(|len| len > GZIP_THRESHOLD);
    if !large || resp.headers().contains_key(header::CONTENT_ENCODING) {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts
        .headers
        .append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    let body = GzipBody {
        inner: body,
        encoder: Some(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        )),
    };
    Response::from_parts(parts, body.boxed_unsync())
}

/// `body` gzip-compressed whole, at the fastest level.
pub fn gzip_whole(body: &[u8]) -> Bytes {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 4),
        flate2::Compression::fast(),
    );
    // Writing into a vector cannot fail.
    let _ = encoder.write_all(body);
    encoder.finish().unwrap_or_default().into()
}

/// A body compressed as it is polled.
struct GzipBody {
    inner: Body,
    /// `None` once the compressed stream is finished.
    encoder: Option<flate2::write::GzEncoder<Vec<u8>>>,
}

impl http_body::Body for GzipBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        use std::io::Write;
        use std::task::Poll;
        let this = &mut *self;
        loop {
            let Some(encoder) = this.encoder.as_mut() else {
                return Poll::Ready(None);
            };
            let frame = match std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(frame) => frame,
            };
            match frame {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    // Writing into a vector cannot fail.
                    let _ = encoder.write_all(&data);
                    let out = std::mem::take(encoder.get_mut());
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(http_body::Frame::data(out.into()))));
                    }
                }
                Some(Err(never)) => match never {},
                None => {
                    let out = this
                        .encoder
                        .take()
                        .map(|e| e.finish().unwrap_or_default())
                        .unwrap_or_default();
                    return Poll::Ready(Some(Ok(http_body::Frame::data(out.into()))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.encoder.is_none()
    }
}

/// Re-indents a JSON body for `pretty=true` (two spaces a level, keys in the order they
/// were sent, numbers and strings as they were written, no final newline: upstream's
/// layout); the body is returned unchanged if it is not JSON.
pub fn prettify(body: Bytes) -> Bytes {
    if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() {
        return body;
    }
    indent(&body).into()
}

/// A compact JSON body ended by a newline, as Go's JSON encoder ends upstream's answers.
pub fn with_newline(body: Bytes) -> Bytes {
    if body.ends_with(b"\n") {
        return body;
    }
    let mut ended = bytes::BytesMut::with_capacity(body.len() + 1);
    ended.extend_from_slice(&body);
    ended.extend_from_slice(b"\n");
    ended.freeze()
}

/// Indents valid JSON without building a document (strings are copied whole): 15 times
/// cheaper than parsing into a `Value` and printing it again.
fn indent(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() + json.len() / 2);
    let mut depth = 0usize;
    // An object or array was opened and nothing is written in it yet.
    let mut opened = false;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + 2 * depth, b' ');
    };
    let mut i = 0;
    while let Some(&b) = json.get(i) {
        i += 1;
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if !opened {
                    newline(&mut out, depth);
                }
                opened = false;
                out.push(b);
                continue;
            }
            _ => {}
        }
        if opened {
            newline(&mut out, depth);
            opened = false;
        }
        match b {
            b'{' | b'[' => {
                out.push(b);
                depth += 1;
                opened = true;
            }
            b',' => {
                out.push(b);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            b'"' => {
                // The string up to its closing quote, escapes skipped over.
                let start = i - 1;
                let rest = |i: usize| json.get(i..).unwrap_or_default();
                while let Some(at) = memchr::memchr2(b'"', b'\\', rest(i)) {
                    i += at + 1;
                    if json[i - 1] == b'"' {
                        break;
                    }
                    i += 1;
                }
                let end = i.min(json.len());
                out.extend_from_slice(&json[start..end]);
                i = end;
            }
            _ => out.push(b),
        }
    }
    out
}

/// A JSON response with `status`.
pub fn json(status: StatusCode, body: Bytes, pretty: bool) -> Response<Body> {
    let body = if pretty {
        prettify(body)
    } else {
        with_newline(body)
    };
    json_as_it_is(status, body)
}

/// A JSON response whose body is sent as it is (already laid out, its newline or not).
pub fn json_as_it_is(status: StatusCode, body: Bytes) -> Response<Body> {
    let mut resp = Response::new(full(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// Bytes per frame of a list sent in pieces.
const LIST_CHUNK: usize = 64 * 1024;

/// A JSON response with `status` from a payload: a list goes out in frames of about 64 KiB
/// assembled as the connection takes them (the last a newline), with its exact
/// Content-Length.
pub fn json_payload(status: StatusCode, payload: Payload, pretty: bool) -> Response<Body> {
    let payload = match payload {
        Payload::Whole(body) => return json(status, body, pretty),
        // Assembled from stored objects: JSON without a check.
        list if pretty => return json_as_it_is(status, indent(&list.into_sent_bytes()).into()),
        list => list,
    };
    let body = PayloadBody {
        remaining: payload.len() as u64 + 1,
        chunks: payload.into_chunks(LIST_CHUNK),
    };
    let mut resp = Response::new(body.boxed_unsync());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// A body of known length produced chunk by chunk, ended by a newline.
struct PayloadBody {
    /// Bytes left to send, the final newline included.
    remaining: u64,
    chunks: capstan_registry::payload::Chunks,
}

impl http_body::Body for PayloadBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        let next = self
            .chunks
            .next()
            .or_else(|| (self.remaining == 1).then(|| Bytes::from_static(b"\n")));
        if let Some(chunk) = &next {
            self.remaining = self.remaining.saturating_sub(chunk.len() as u64);
        }
        std::task::Poll::Ready(next.map(|c| Ok(http_body::Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.remaining)
    }
}

/// The `Status` response of an error, with `Retry-After` when the error carries one.
pub fn error(err: &ApiError) -> Response<Body> {
    // A 406 cannot be given in a form the client accepts either: upstream writes it as
    // indented JSON without the serializer's final newline.
    let body = if err.code() == 406 {
        Bytes::from(err.to_indented_json())
    } else {
        with_newline(err.to_json().into())
    };
    let status = StatusCode::from_u16(err.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = json_as_it_is(status, body.clone());
    add_warnings(&mut resp, &err.warnings);
    resp.extensions_mut().insert(ErrorStatus(body));
    if let Some(secs) = err.retry_after_seconds {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    resp
}

/// The `Status` (JSON) of an error response, for the layers above the handler (audit).
#[derive(Debug, Clone)]
pub struct ErrorStatus(pub Bytes);

/// Adds `Warning: 299 - "…"` headers, as upstream sends warnings.
pub fn add_warnings(resp: &mut Response<Body>, warnings: &[String]) {
    for w in warnings {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
}

/// A plain-text response (health checks).
pub fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut resp = Response::new(full(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// A streaming JSON response (watch): `lines` are written as they come, until the stream ends
/// or `stop` fires (server shutdown).
pub fn json_stream(
    lines: capstan_registry::EventStream,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Response<Body> {
    use futures_util::StreamExt;
    let stopped = async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    let frames = lines
        .take_until(Box::pin(stopped))
        .map(|line| Ok::<_, Infallible>(hyper::body::Frame::data(line)));
    let mut resp = Response::new(http_body_util::StreamBody::new(frames).boxed_unsync());
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// A body that keeps `guard` until its last frame is sent or the body is dropped (a client
/// that goes away): what a request holds (a seat) lasts while its response is written.
struct Holding<G> {
    body: Body,
    guard: Option<G>,
}

impl<G: Send + Unpin + 'static> http_body::Body for Holding<G> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        let polled = std::pin::Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, std::task::Poll::Ready(None)) || self.body.is_end_stream() {
            self.guard = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// `resp` with `guard` kept until its body has been sent.
pub fn hold_until_sent<G: Send + Unpin + 'static>(
    resp: Response<Body>,
    guard: G,
) -> Response<Body> {
    if http_body::Body::is_end_stream(resp.body()) {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    Response::from_parts(
        parts,
        UnsyncBoxBody::new(Holding {
            body,
            guard: Some(guard),
        }),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use http_body_util::{BodyExt, StreamBody};

    use super::*;

    #[test]
    fn indenting_matches_a_printed_document_and_keeps_the_order() {
        let compact = br#"{"kind":"List","items":[{"b":1,"a":[],"c":{}},{"s":"a \\\" , : { [","n":-1.5e3}],"e":[1,[2,{}]]}"#;
        let pretty = indent(compact);
        let expected = "{\n  \"kind\": \"List\",\n  \"items\": [\n    {\n      \"b\": 1,\n      \"a\": [],\n      \"c\": {}\n    },\n    {\n      \"s\": \"a \\\\\\\" , : { [\",\n      \"n\": -1.5e3\n    }\n  ],\n  \"e\": [\n    1,\n    [\n      2,\n      {}\n    ]\n  ]\n}";
        assert_eq!(String::from_utf8(pretty).unwrap(), expected);
        // serde_json prints the same layout for a document whose keys are already sorted.
        let sorted = br#"{"a":[1,{"x":null,"y":[]}],"b":{"c":"d"},"e":{}}"#;
        let value: serde_json::Value = serde_json::from_slice(sorted).unwrap();
        assert_eq!(indent(sorted), serde_json::to_vec_pretty(&value).unwrap());
        // Whitespace already in the input is replaced, and bodies that are not JSON pass.
        assert_eq!(indent(b" [ 1 ,\n 2 ] "), b"[\n  1,\n  2\n]");
        assert_eq!(prettify(Bytes::from_static(b"not json")), "not json");
        // Cut short, it stops without reading past the end.
        assert_eq!(
            indent(br#"{"a\"#),
            br#"{
  "a\"#
        );
    }

    #[tokio::test]
    async fn compact_answers_end_in_one_newline() {
        let object = json(StatusCode::OK, Bytes::from_static(b"{\"a\":1}"), false);
        assert_eq!(body_of(object).await, "{\"a\":1}\n");
        let status = json(StatusCode::OK, Bytes::from_static(b"{}\n"), false);
        assert_eq!(body_of(status).await, "{}\n");
        let pretty = json(StatusCode::OK, Bytes::from_static(b"{\"a\":1}"), true);
        assert_eq!(body_of(pretty).await, "{\n  \"a\": 1\n}");
        // A list sent in chunks: its length counts the newline.
        let list = Payload::List {
            head: Bytes::from_static(b"{\"kind\":\"List\",\"items\":["),
            items: vec!["{\"a\":1}".into(); 3],
            bare_items: false,
            cached: Vec::new(),
        };
        let resp = json_payload(StatusCode::OK, list, false);
        let len = http_body::Body::size_hint(resp.body()).exact();
        let body = body_of(resp).await;
        assert_eq!(
            body,
            "{\"kind\":\"List\",\"items\":[{\"a\":1},{\"a\":1},{\"a\":1}]}\n"
        );
        assert_eq!(len, Some(body.len() as u64));
    }

    async fn body_of(resp: Response<Body>) -> Bytes {
        resp.into_body().collect().await.unwrap().to_bytes()
    }

    #[test]
    fn gzip_is_accepted_as_upstream_reads_it() {
        let accepts = |value: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert(header::ACCEPT_ENCODING, value.parse().unwrap());
            accepts_gzip(&headers)
        };
        assert!(accepts("gzip"));
        assert!(accepts("deflate, gzip"));
        assert!(accepts("br,gzip ,deflate"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("GZIP"));
        assert!(!accepts("deflate, br"));
        assert!(!accepts_gzip(&http::HeaderMap::new()));
    }

    #[tokio::test]
    async fn large_answers_are_compressed_as_they_are_sent() {
        use std::io::Read;
        // An answer over the threshold.
        let item = format!("{{\"data\":\"{}\"}}", "x".repeat(1000));
        let chunks: Vec<Bytes> = (0..200).map(|_| Bytes::from(item.clone())).collect();
        let whole: Vec<u8> = chunks.concat();
        let len = whole.len() as u64;
        assert!(len > GZIP_THRESHOLD);
        let body = PayloadBody {
            remaining: len,
            chunks: Payload::Whole(Bytes::from(whole.clone())).into_chunks(4096),
        };
        let mut resp = Response::new(body.boxed_unsync());
        resp.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        let resp = gzip_large(resp);
        assert_eq!(resp.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(resp.headers()[header::VARY], "Accept-Encoding");
        assert!(!resp.headers().contains_key(header::CONTENT_LENGTH));
        let compressed = resp.into_body().collect().await.unwrap().to_bytes();
        assert!(compressed.len() < whole.len() / 10, "{}", compressed.len());
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&compressed[..])
            .read_to_end(&mut plain)
            .unwrap();
        assert_eq!(plain, whole);

        // Small answers, and answers already encoded, go as they are.
        let small = gzip_large(json(StatusCode::OK, Bytes::from_static(b"{}"), false));
        assert!(!small.headers().contains_key(header::CONTENT_ENCODING));
        assert_eq!(
            small.into_body().collect().await.unwrap().to_bytes(),
            "{}\n"
        );
        let mut encoded = Response::new(full(Bytes::from(whole)));
        encoded
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("br"));
        let encoded = gzip_large(encoded);
        assert_eq!(encoded.headers()[header::CONTENT_ENCODING], "br");
    }

    #[tokio::test]
    async fn a_held_guard_lasts_until_the_last_frame_and_no_longer() {
        let frames = futures_util::stream::iter(
            ["first", "second"]
                .map(|s| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(s)))),
        );
        let guard = Arc::new(());
        let resp = Response::new(UnsyncBoxBody::new(StreamBody::new(frames)));
        let mut body = hold_until_sent(resp, guard.clone()).into_body();
        let first = body.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), "first");
        assert_eq!(
            Arc::strong_count(&guard),
            2,
            "held while the body is written"
        );
        body.frame().await.unwrap().unwrap();
        assert!(body.frame().await.is_none());
        assert_eq!(Arc::strong_count(&guard), 1, "given back at the end");

        // A body dropped half way (the client went away) gives it back too.
        let frames = futures_util::stream::iter(
            ["a", "b"].map(|s| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(s)))),
        );
        let resp = Response::new(UnsyncBoxBody::new(StreamBody::new(frames)));
        let mut body = hold_until_sent(resp, guard.clone()).into_body();
        body.frame().await.unwrap().unwrap();
        drop(body);
        assert_eq!(Arc::strong_count(&guard), 1);
        // An empty body holds nothing.
        let empty = hold_until_sent(Response::new(full(Bytes::new())), guard.clone());
        assert_eq!(Arc::strong_count(&guard), 1);
        drop(empty);
    }
}
