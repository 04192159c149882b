//! Writing an answer in the negotiated representation: JSON as the registry produced it, or
//! converted to YAML, protobuf, a Table or `PartialObjectMetadata`; request bodies read from
//! JSON, YAML or protobuf.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use capstan_meta::ApiError;
use capstan_meta::columns::Column;
use capstan_negotiation::media::{self, Format};
use capstan_negotiation::protobuf::Codec;
use capstan_negotiation::table::{self, IncludeObject, Tables};
use capstan_negotiation::{Choice, Endpoint, Transform, yaml};
use capstan_registry::{CachedJson, CachedObject, EventStream, Payload};
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::response::{self, Body};

/// How to write the answers of one request.
#[derive(Debug, Clone)]
pub struct Renderer {
    /// The negotiated representation.
    pub choice: Choice,
    /// What kind of answer it is.
    pub endpoint: Endpoint,
    /// The resource's table columns.
    pub columns: Vec<Column>,
    /// `includeObject` of Table rows.
    pub include: IncludeObject,
    /// Indented output (`pretty=true`, or a human's tool).
    pub pretty: bool,
}

impl Renderer {
    fn tables(&self, version: &'static str) -> Tables<'_> {
        Tables::new(
            &self.columns,
            self.include,
            version,
            jiff::Timestamp::now().as_second(),
        )
    }

    /// A response with `status` and the registry's JSON `payload`.
    pub fn render(&self, status: StatusCode, payload: Payload) -> Result<Response<Body>, ApiError> {
        let choice = self.choice;
        if choice.format == Format::Json && choice.transform == Transform::Object {
            return Ok(response::json_payload(
                status,
                payload,
                self.pretty || choice.pretty,
            ));
        }
        let body = match (&payload, choice.format, choice.transform) {
            (
                Payload::List {
                    head,
                    items,
                    cached,
                    ..
                },
                Format::Protobuf,
                Transform::Object,
            ) => protobuf_list(head, items, cached)?,
            _ => {
                // YAML gets the list as JSON clients get it; the transforms read typed items.
                let bytes = if choice.transform == Transform::Object {
                    payload.into_sent_bytes()
                } else {
                    payload.into_bytes()
                };
                let doc: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| ApiError::internal(format!("a stored object is not JSON: {e}")))?;
                let doc = self.transform(doc, true);
                encode(&doc, choice.format, self.pretty || choice.pretty)?
            }
        };
        let mut resp = Response::new(response::full(body));
        *resp.status_mut() = status;
        set_content_type(&mut resp, &choice.content_type(self.endpoint));
        Ok(resp)
    }

    /// The document in the negotiated form: a Table or metadata only (a Status stays as it
    /// is).
    fn transform(&self, doc: Value, headers: bool) -> Value {
        if doc["kind"] == "Status" {
            return doc;
        }
        let is_list = doc.get("items").is_some_and(Value::is_array);
        match self.choice.transform {
            Transform::Object => doc,
            Transform::Table(version) => {
                let tables = self.tables(version);
                if is_list {
                    let meta = doc.get("metadata").cloned().unwrap_or_else(|| json!({}));
                    let items = doc["items"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                    tables.table(meta, items, headers)
                } else {
                    let rv = doc.pointer("/metadata/resourceVersion").cloned();
                    let meta = rv.map_or_else(|| json!({}), |rv| json!({"resourceVersion": rv}));
                    tables.table(meta, [&doc], headers)
                }
            }
            Transform::Metadata(version) => {
                if is_list {
                    let meta = doc.get("metadata").cloned().unwrap_or_else(|| json!({}));
                    let items = doc["items"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                    table::partial_metadata_list(meta, items, version)
                } else {
                    table::partial_metadata(&doc, version)
                }
            }
        }
    }

    /// A watch response: each event's object in the negotiated form (a Table's columns come
    /// with the first event only), JSON lines or length-prefixed protobuf frames.
    pub fn watch(
        self,
        lines: EventStream,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) -> Response<Body> {
        use futures_util::StreamExt;
        if self.choice.format == Format::Json && self.choice.transform == Transform::Object {
            return response::json_stream(lines, stop);
        }
        let content_type = self.choice.content_type(Endpoint::Watch);
        let stopped = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        let mut first = true;
        let frames = lines
            .take_until(Box::pin(stopped))
            .map(move |chunk| {
                // A chunk holds one or more complete event lines.
                let mut out = Vec::with_capacity(chunk.len());
                for line in capstan_registry::watching::event_lines(&chunk) {
                    out.extend_from_slice(&self.watch_event(line, &mut first)?);
                }
                Ok::<Bytes, String>(out.into())
            })
            .take_while(|frame| {
                if let Err(e) = frame {
                    tracing::warn!(error = %e, "ending a watch: an event does not convert");
                }
                std::future::ready(frame.is_ok())
            })
            .filter_map(|frame| std::future::ready(frame.ok()))
            .map(|frame| Ok::<_, Infallible>(hyper::body::Frame::data(frame)));
        let mut resp = Response::new(http_body_util::StreamBody::new(frames).boxed_unsync());
        set_content_type(&mut resp, &content_type);
        resp
    }

    /// One event in the negotiated form; `first` is true until an object event has been sent
    /// (it carries the Table's columns).
    fn watch_event(&self, line: &[u8], first: &mut bool) -> Result<Bytes, String> {
        let mut event: Value = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        let kind = event["type"].as_str().unwrap_or("").to_string();
        let object = event["object"].take();
        let object = match (kind.as_str(), self.choice.transform) {
            ("ERROR", _) => object,
            // A bookmark only moves the resourceVersion: an empty Table carries it.
            ("BOOKMARK", Transform::Table(version)) => {
                let rv = object.pointer("/metadata/resourceVersion").cloned();
                let meta = rv.map_or_else(|| json!({}), |rv| json!({"resourceVersion": rv}));
                self.tables(version).table(meta, [], false)
            }
            ("BOOKMARK", _) => self.transform(object, false),
            _ => {
                let headers = std::mem::replace(first, false);
                self.transform(object, headers)
            }
        };
        match self.choice.format {
            Format::Protobuf => Codec::default()
                .encode_watch_frame(&kind, &object)
                .map(Bytes::from)
                .map_err(|e| e.to_string()),
            _ => {
                let mut out = serde_json::to_vec(&json!({"type": kind, "object": object}))
                    .map_err(|e| e.to_string())?;
                out.push(b'\n');
                Ok(out.into())
            }
        }
    }
}

/// A list sent as protobuf, item by item from the items' JSON; an item from the watch cache
/// is encoded once and its encoding kept there for the next lists.
fn protobuf_list(
    head: &Bytes,
    items: &[CachedJson],
    cached: &[Arc<CachedObject>],
) -> Result<Bytes, ApiError> {
    let mut head_doc = head.to_vec();
    head_doc.extend_from_slice(b"]}");
    let head: Value = serde_json::from_slice(&head_doc)
        .map_err(|e| ApiError::internal(format!("a list head is not JSON: {e}")))?;
    let api_version = head["apiVersion"].as_str().unwrap_or("");
    let list_kind = head["kind"].as_str().unwrap_or("");
    let item_kind = list_kind.strip_suffix("List").unwrap_or(list_kind);
    let meta = head.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let codec = Codec::default();
    let failed = |e: capstan_negotiation::Error| {
        ApiError::internal(format!("encoding a list as protobuf: {e}"))
    };
    let mut raws = Vec::with_capacity(items.len());
    for (i, json) in items.iter().enumerate() {
        let slot = cached.get(i).map(|c| &c.protobuf);
        if let Some(raw) = slot.and_then(|s| s.get()) {
            raws.push(raw.clone());
            continue;
        }
        let raw = Bytes::from(
            codec
                .encode_item(api_version, item_kind, &json.contiguous())
                .map_err(failed)?,
        );
        if let Some(slot) = slot {
            let _ = slot.set(raw.clone());
        }
        raws.push(raw);
    }
    codec
        .assemble_list(api_version, list_kind, &meta, &raws)
        .map(Bytes::from)
        .map_err(failed)
}

/// A document in `format`.
fn encode(doc: &Value, format: Format, pretty: bool) -> Result<Bytes, ApiError> {
    let bytes = match format {
        // Upstream's layout: indented without a final newline, compact with one.
        Format::Json if pretty => serde_json::to_vec_pretty(doc).unwrap_or_default(),
        Format::Json => {
            let mut out = serde_json::to_vec(doc).unwrap_or_default();
            out.push(b'\n');
            out
        }
        Format::Yaml => yaml::from_json(doc).map_err(|e| ApiError::internal(e.to_string()))?,
        Format::Protobuf => Codec::default()
            .encode_object(doc)
            .map_err(|e| ApiError::internal(format!("encoding as protobuf: {e}")))?,
    };
    Ok(bytes.into())
}

fn set_content_type(resp: &mut Response<Body>, content_type: &str) {
    if let Ok(v) = HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(header::CONTENT_TYPE, v);
    }
}

/// The Accept header, if any.
pub fn accept(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::ACCEPT).and_then(|v| v.to_str().ok())
}

/// An error's `Status` in the format the client accepts (JSON when it accepts nothing we
/// write).
pub fn error(err: &ApiError, headers: &HeaderMap) -> Response<Body> {
    let offer = media::Offer {
        endpoint: Endpoint::Document,
        protobuf: true,
    };
    let format = media::negotiate(accept(headers), offer)
        .map(|c| c.format)
        .unwrap_or(Format::Json);
    if format == Format::Json {
        return response::error(err);
    }
    let status = serde_json::to_value(err.to_status()).unwrap_or_default();
    let Ok(body) = encode(&status, format, false) else {
        return response::error(err);
    };
    let mut resp = response::error(err);
    *resp.body_mut() = response::full(body);
    set_content_type(&mut resp, format.media_type());
    resp
}

/// A request body (create, update) as JSON, from the format its Content-Type names.
pub fn body_to_json(headers: &HeaderMap, body: Bytes) -> Result<Bytes, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    match media::body_format(content_type)? {
        Format::Json => Ok(body),
        Format::Yaml => {
            let doc = yaml::to_json(&body)?;
            Ok(serde_json::to_vec(&doc).unwrap_or_default().into())
        }
        Format::Protobuf => {
            let doc = Codec::default().decode_object(&body)?;
            Ok(serde_json::to_vec(&doc).unwrap_or_default().into())
        }
    }
}
