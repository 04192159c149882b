//! Typed REST calls: paths from the resource type, bodies in JSON or protobuf, errors as the
//! server's Status.

use std::sync::Arc;

use bytes::Bytes;
use capstan_negotiation::protobuf::{self, Codec};
use futures_util::{Stream, StreamExt};
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use k8s_openapi::{ListableResource, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::{Config, ContentType};
use crate::error::{Error, Result};
use crate::limiter::RateLimiter;
use crate::transport::Transport;

/// A patch body's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 7386 merge patch.
    Merge,
    /// Strategic merge patch.
    Strategic,
    /// RFC 6902 JSON patch.
    Json,
}

impl PatchType {
    fn media_type(self) -> &'static str {
        match self {
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Json => "application/json-patch+json",
        }
    }
}

/// Selectors and paging of a list or watch.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit` (0: everything at once).
    pub limit: u32,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
}

impl ListParams {
    fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        if let Some(s) = &self.label_selector {
            q.push(("labelSelector", s.clone()));
        }
        if let Some(s) = &self.field_selector {
            q.push(("fieldSelector", s.clone()));
        }
        if self.limit > 0 {
            q.push(("limit", self.limit.to_string()));
        }
        if let Some(c) = &self.continue_token {
            q.push(("continue", c.clone()));
        }
        if let Some(rv) = &self.resource_version {
            q.push(("resourceVersion", rv.clone()));
        }
        q
    }
}

/// One watch event.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent<K> {
    /// ADDED.
    Added(K),
    /// MODIFIED.
    Modified(K),
    /// DELETED (the last state).
    Deleted(K),
    /// BOOKMARK: only the resourceVersion moved.
    Bookmark(String),
    /// ERROR: the watch ends with this Status (410 Expired: list again).
    Error(Box<Status>),
}

/// A client of one API server.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    transport: Transport,
    limiter: RateLimiter,
}

/// The path of `K`'s collection in `namespace` (all namespaces when `None`).
pub fn collection_path<K: Resource>(namespace: Option<&str>) -> String {
    let root = if K::GROUP.is_empty() {
        format!("/api/{}", K::VERSION)
    } else {
        format!("/apis/{}/{}", K::GROUP, K::VERSION)
    };
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{root}/namespaces/{ns}/{}", K::URL_PATH_SEGMENT),
        _ => format!("{root}/{}", K::URL_PATH_SEGMENT),
    }
}

fn encode_query(path: &str, query: &[(&str, String)]) -> String {
    if query.is_empty() {
        return path.to_string();
    }
    let pairs: Vec<String> = query
        .iter()
        .map(|(k, v)| format!("{k}={}", percent(v)))
        .collect();
    format!("{path}?{}", pairs.join("&"))
}

fn percent(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Client {
    /// A client for `config`.
    pub fn new(config: Config) -> Result<Self> {
        Ok(Self {
            inner: Arc::new(Inner {
                transport: Transport::new(&config)?,
                limiter: RateLimiter::new(config.qps, config.burst),
                config,
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    fn accept(&self) -> &'static str {
        match self.inner.config.content_type {
            ContentType::Json => "application/json",
            ContentType::Protobuf => "application/vnd.kubernetes.protobuf, application/json",
        }
    }

    /// Sends one request (after the rate limiter lets it) and returns the status, the
    /// response's Content-Type and its body.
    pub async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Result<(StatusCode, String, Bytes)> {
        let response = self
            .open(method, path_and_query, content_type, body)
            .await?;
        let status = response.status();
        let ct = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| Error::Connection {
                server: self.inner.config.server.clone(),
                message: e.to_string(),
            })?
            .to_bytes();
        Ok((status, ct, bytes))
    }

    async fn open(
        &self,
        method: Method,
        path_and_query: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Result<http::Response<hyper::body::Incoming>> {
        self.inner.limiter.acquire().await;
        let config = &self.inner.config;
        let uri = format!("{}{path_and_query}", config.server.trim_end_matches('/'));
        let accept = self.accept();
        self.inner
            .transport
            .send(|| {
                let mut b = Request::builder()
                    .method(method.clone())
                    .uri(&uri)
                    .header(header::ACCEPT, accept)
                    .header(header::USER_AGENT, &config.user_agent);
                if let Some(token) = &config.token {
                    b = b.header(header::AUTHORIZATION, format!("Bearer {token}"));
                }
                if let Some(ct) = content_type {
                    b = b.header(header::CONTENT_TYPE, ct);
                }
                b.body(Full::new(body.clone())).unwrap_or_default()
            })
            .await
    }

    /// The body of an answer as JSON (from JSON or protobuf), or the error its Status says.
    fn decode(status: StatusCode, content_type: &str, body: &[u8]) -> Result<Value> {
        let doc: Value = if content_type.starts_with(protobuf::MEDIA_TYPE) {
            Codec::default()
                .decode_object(body)
                .map_err(|e| Error::Decode(e.to_string()))?
        } else if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(body).map_err(|e| Error::Decode(e.to_string()))?
        };
        if status.is_success() {
            return Ok(doc);
        }
        let mut failure: Status = serde_json::from_value(doc).unwrap_or_default();
        if failure.code.is_none() {
            failure.code = Some(i32::from(status.as_u16()));
        }
        if failure.message.is_none() {
            failure.message = Some(status.to_string());
        }
        Err(Error::Api(Box::new(failure)))
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<(&'static str, Bytes)>,
    ) -> Result<T> {
        let (ct, bytes) = body.map_or((None, Bytes::new()), |(ct, b)| (Some(ct), b));
        let (status, content_type, answer) = self.send(method, path, ct, bytes).await?;
        let doc = Self::decode(status, &content_type, &answer)?;
        serde_json::from_value(doc).map_err(|e| Error::Decode(e.to_string()))
    }

    /// An object's body in the configured representation.
    fn body_of<K: Resource + Serialize>(&self, obj: &K) -> Result<(&'static str, Bytes)> {
        let mut doc = serde_json::to_value(obj).map_err(|e| Error::Decode(e.to_string()))?;
        doc["apiVersion"] = K::API_VERSION.into();
        doc["kind"] = K::KIND.into();
        self.document_body(&doc)
    }

    fn document_body(&self, doc: &Value) -> Result<(&'static str, Bytes)> {
        let codec = Codec::default();
        let api_version = doc["apiVersion"].as_str().unwrap_or("");
        let kind = doc["kind"].as_str().unwrap_or("");
        if self.inner.config.content_type == ContentType::Protobuf && codec.knows(api_version, kind)
        {
            let bytes = codec
                .encode_object(doc)
                .map_err(|e| Error::Decode(e.to_string()))?;
            return Ok((protobuf::MEDIA_TYPE, bytes.into()));
        }
        let bytes = serde_json::to_vec(doc).map_err(|e| Error::Decode(e.to_string()))?;
        Ok(("application/json", bytes.into()))
    }

    /// Whether the server serves `K` (its group version's discovery document lists it); a
    /// group version the server does not know is `Ok(false)`.
    pub async fn serves<K: Resource>(&self) -> Result<bool> {
        let path = collection_path::<K>(None);
        let root = path
            .strip_suffix(K::URL_PATH_SEGMENT)
            .unwrap_or(&path)
            .trim_end_matches('/');
        let list: Value = match self.call(Method::GET, root, None).await {
            Ok(list) => list,
            Err(e) if e.code() == Some(404) => return Ok(false),
            Err(e) => return Err(e),
        };
        Ok(list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["name"] == K::URL_PATH_SEGMENT))
    }

    /// Reads one object.
    pub async fn get<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<K> {
        let path = format!("{}/{name}", collection_path::<K>(namespace));
        self.call(Method::GET, &path, None).await
    }

    /// Lists objects (one page when `params.limit` is set).
    pub async fn list<K>(
        &self,
        namespace: Option<&str>,
        params: &ListParams,
    ) -> Result<k8s_openapi::List<K>>
    where
        K: ListableResource + DeserializeOwned,
    {
        let path = encode_query(&collection_path::<K>(namespace), &params.query());
        self.call(Method::GET, &path, None).await
    }

    /// Creates an object.
    pub async fn create<K: Resource + Serialize + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        obj: &K,
    ) -> Result<K> {
        let body = self.body_of(obj)?;
        self.call(Method::POST, &collection_path::<K>(namespace), Some(body))
            .await
    }

    /// Replaces an object (optimistic concurrency through its resourceVersion).
    pub async fn replace<K: Resource + Serialize + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
        obj: &K,
    ) -> Result<K> {
        self.put(namespace, name, "", obj).await
    }

    /// Replaces an object's status (`<resource>/status`).
    pub async fn replace_status<K: Resource + Serialize + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
        obj: &K,
    ) -> Result<K> {
        self.put(namespace, name, "/status", obj).await
    }

    async fn put<K: Resource + Serialize + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
        suffix: &str,
        obj: &K,
    ) -> Result<K> {
        let body = self.body_of(obj)?;
        let path = format!("{}/{name}{suffix}", collection_path::<K>(namespace));
        self.call(Method::PUT, &path, Some(body)).await
    }

    /// Patches an object (patch bodies are JSON).
    pub async fn patch<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
    ) -> Result<K> {
        let path = format!("{}/{name}", collection_path::<K>(namespace));
        self.patch_at(&path, patch_type, patch).await
    }

    async fn patch_at<T: DeserializeOwned>(
        &self,
        path: &str,
        patch_type: PatchType,
        patch: &Value,
    ) -> Result<T> {
        let body = serde_json::to_vec(patch).map_err(|e| Error::Decode(e.to_string()))?;
        self.call(
            Method::PATCH,
            path,
            Some((patch_type.media_type(), body.into())),
        )
        .await
    }

    /// Patches an object's `status` subresource.
    pub async fn patch_status<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
    ) -> Result<K> {
        let path = format!("{}/{name}/status", collection_path::<K>(namespace));
        self.patch_at(&path, patch_type, patch).await
    }

    /// Deletes an object; the answer (the object while it is being deleted, or a Status) is
    /// returned as JSON.
    pub async fn delete<K: Resource>(&self, namespace: Option<&str>, name: &str) -> Result<Value> {
        let path = format!("{}/{name}", collection_path::<K>(namespace));
        self.call(Method::DELETE, &path, None).await
    }

    /// Creates through a subresource of `name`, e.g. a `Binding` through `pods/{name}/binding`.
    pub async fn create_subresource<K: Resource, B: Resource + Serialize>(
        &self,
        namespace: Option<&str>,
        name: &str,
        subresource: &str,
        body: &B,
    ) -> Result<Value> {
        let body = self.body_of(body)?;
        let path = format!("{}/{name}/{subresource}", collection_path::<K>(namespace));
        self.call(Method::POST, &path, Some(body)).await
    }

    /// Watches a collection from `params.resource_version`, with bookmarks, for at most
    /// `timeout_seconds`; the stream ends when the server ends the watch.
    pub async fn watch<K>(
        &self,
        namespace: Option<&str>,
        params: &ListParams,
        timeout_seconds: u32,
    ) -> Result<impl Stream<Item = Result<WatchEvent<K>>> + Send + use<K>>
    where
        K: Resource + DeserializeOwned + Send + 'static,
    {
        let mut query = params.query();
        query.push(("watch", "1".into()));
        query.push(("allowWatchBookmarks", "true".into()));
        query.push(("timeoutSeconds", timeout_seconds.to_string()));
        let path = encode_query(&collection_path::<K>(namespace), &query);
        let response = self.open(Method::GET, &path, None, Bytes::new()).await?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        if !status.is_success() {
            let body = response
                .into_body()
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            Self::decode(status, &content_type, &body)?;
            return Err(Error::Decode(format!("watch answered {status}")));
        }
        let protobuf = content_type.starts_with(protobuf::MEDIA_TYPE);
        let frames = crate::watch::frames(response.into_body(), protobuf);
        Ok(frames.map(move |frame| frame.and_then(|f| crate::watch::event::<K>(&f, protobuf))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Node};
    use k8s_openapi::api::storage::v1::StorageClass;

    #[test]
    fn paths_follow_group_version_and_scope() {
        assert_eq!(
            collection_path::<ConfigMap>(Some("ns")),
            "/api/v1/namespaces/ns/configmaps"
        );
        assert_eq!(collection_path::<ConfigMap>(None), "/api/v1/configmaps");
        assert_eq!(collection_path::<Node>(None), "/api/v1/nodes");
        assert_eq!(
            collection_path::<StorageClass>(None),
            "/apis/storage.k8s.io/v1/storageclasses"
        );
        let params = ListParams {
            field_selector: Some("spec.nodeName=".into()),
            label_selector: Some("app in (a,b)".into()),
            ..Default::default()
        };
        assert_eq!(
            encode_query("/p", &params.query()),
            "/p?labelSelector=app%20in%20%28a%2Cb%29&fieldSelector=spec.nodeName%3D"
        );
    }
}
