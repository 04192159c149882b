//! A resource served in a second API version whose objects are stored in another version's
//! form (`events.k8s.io/v1` Events are stored as `v1` Events, as upstream stores them). Every
//! verb goes to the stored form's storage; bodies are converted on the way in and answers on
//! the way out, so both versions see one collection: the same objects, resourceVersions and
//! watch events.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use capstan_meta::{ApiError, ResourceDescriptor};
use futures_util::StreamExt;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::options::{DeleteOptions, GetOptions, ListOptions, WriteOptions};
use crate::patch::{self, PatchType};
use crate::payload::Payload;
use crate::rest::{Encoded, RestStorage, WatchOptions};
use crate::watching::EventStream;

/// A conversion of one object's JSON between the served and the stored form.
pub type Convert = Arc<dyn Fn(Value) -> Value + Send + Sync>;

/// Tries of a patch that loses a race with another write.
const PATCH_RETRIES: usize = 8;

/// Serves `descriptor` through `stored`, converting with `to_stored` and `to_served`.
pub struct ConvertedRest {
    descriptor: ResourceDescriptor,
    stored: Arc<dyn RestStorage>,
    to_stored: Convert,
    to_served: Convert,
    schema: crate::rest::SchemaFn,
}

impl ConvertedRest {
    /// Serves `descriptor` (with the OpenAPI schema `schema`) through `stored`.
    pub fn new(
        descriptor: ResourceDescriptor,
        stored: Arc<dyn RestStorage>,
        to_stored: impl Fn(Value) -> Value + Send + Sync + 'static,
        to_served: impl Fn(Value) -> Value + Send + Sync + 'static,
        schema: impl Fn(&mut schemars::SchemaGenerator) -> schemars::Schema + Send + Sync + 'static,
    ) -> Self {
        Self {
            descriptor,
            stored,
            to_stored: Arc::new(to_stored),
            to_served: Arc::new(to_served),
            schema: Arc::new(schema),
        }
    }

    fn body_in(&self, body: &[u8]) -> Result<Vec<u8>> {
        let doc: Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("the request body is not valid JSON: {e}"))
        })?;
        let served_version = self.descriptor.api_version();
        if let Some(v) = doc.get("apiVersion").and_then(Value::as_str)
            && v != served_version
        {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({served_version})"
            ))
            .into());
        }
        serde_json::to_vec(&(self.to_stored)(doc)).map_err(Error::Encode)
    }

    /// One stored-form object (or Status) in the served form.
    fn object_out(&self, doc: Value) -> Value {
        if doc["kind"] == "Status" {
            doc
        } else {
            (self.to_served)(doc)
        }
    }

    fn out(&self, encoded: Encoded) -> Result<Encoded> {
        let body = match encoded.body {
            Payload::Whole(bytes) => {
                let doc: Value = serde_json::from_slice(&bytes).map_err(Error::Encode)?;
                let doc = if doc.get("items").is_some_and(Value::is_array) {
                    self.list_out(doc)
                } else {
                    self.object_out(doc)
                };
                Payload::Whole(serde_json::to_vec(&doc).map_err(Error::Encode)?.into())
            }
            Payload::List { head, items, .. } => {
                let mut list_head = head.to_vec();
                list_head.extend_from_slice(b"]}");
                let mut doc: Value = serde_json::from_slice(&list_head).map_err(Error::Encode)?;
                self.retype_list(&mut doc);
                if let Some(map) = doc.as_object_mut() {
                    map.remove("items");
                }
                let mut head = serde_json::to_vec(&doc).map_err(Error::Encode)?;
                head.pop();
                head.extend_from_slice(b",\"items\":[");
                let items = items
                    .iter()
                    .map(|item| {
                        let doc: Value = serde_json::from_slice(item).map_err(Error::Encode)?;
                        let out = (self.to_served)(doc);
                        Ok(Bytes::from(
                            serde_json::to_vec(&out).map_err(Error::Encode)?,
                        ))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Payload::List {
                    head: head.into(),
                    items,
                    cached: Vec::new(),
                }
            }
        };
        Ok(Encoded { body, ..encoded })
    }

    /// Server-side apply in the served version: the applied configuration is converted to
    /// the stored form and applied there, so managers own the stored form's fields (upstream
    /// records them in the version they applied; ownership and conflicts come out the same).
    async fn apply(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let config: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the apply patch is malformed: {e}")))?;
        for field in ["apiVersion", "kind"] {
            if config
                .get(field)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(
                    ApiError::bad_request(format!("an apply patch must set {field}")).into(),
                );
            }
        }
        let stored = self.body_in(body)?;
        self.out(
            self.stored
                .patch(namespace, name, PatchType::Apply, &stored, options)
                .await?,
        )
    }

    fn retype_list(&self, doc: &mut Value) {
        doc["kind"] = self.descriptor.list_kind().into();
        doc["apiVersion"] = self.descriptor.api_version().into();
    }

    fn list_out(&self, mut doc: Value) -> Value {
        self.retype_list(&mut doc);
        if let Some(items) = doc["items"].as_array_mut() {
            for item in items {
                *item = (self.to_served)(item.take());
            }
        }
        doc
    }
}

#[async_trait]
impl RestStorage for ConvertedRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        (self.schema)(generator)
    }

    fn cached_count(&self) -> Option<u64> {
        self.stored.cached_count()
    }

    async fn get(&self, namespace: &str, name: &str, options: &GetOptions) -> Result<Encoded> {
        self.out(self.stored.get(namespace, name, options).await?)
    }

    async fn list(&self, namespace: &str, options: &ListOptions) -> Result<Encoded> {
        self.out(self.stored.list(namespace, options).await?)
    }

    async fn watch(&self, namespace: &str, options: &WatchOptions) -> Result<EventStream> {
        let lines = self.stored.watch(namespace, options).await?;
        let to_served = self.to_served.clone();
        let api_version = self.descriptor.api_version();
        let kind = self.descriptor.kind.clone();
        Ok(Box::pin(lines.map(move |chunk| {
            // A chunk holds one or more complete event lines.
            let mut out = Vec::with_capacity(chunk.len());
            for line in chunk.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let Ok(mut event) = serde_json::from_slice::<Value>(line) else {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                    continue;
                };
                let object = event["object"].take();
                event["object"] = match event["type"].as_str() {
                    Some("ERROR") => object,
                    Some("BOOKMARK") => {
                        let mut object = object;
                        object["apiVersion"] = api_version.clone().into();
                        object["kind"] = kind.clone().into();
                        object
                    }
                    _ => to_served(object),
                };
                if serde_json::to_writer(&mut out, &event).is_ok() {
                    out.push(b'\n');
                }
            }
            Bytes::from(out)
        })))
    }

    async fn create(
        &self,
        namespace: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let body = self.body_in(body)?;
        self.out(self.stored.create(namespace, &body, options).await?)
    }

    async fn update(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let body = self.body_in(body)?;
        self.out(self.stored.update(namespace, name, &body, options).await?)
    }

    /// Applied to the served form: read, convert, patch, convert back, and update with the
    /// read's resourceVersion (retried when another write came between, unless the patch
    /// names a resourceVersion itself). Server-side apply goes to the stored form instead.
    async fn patch(
        &self,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        if patch_type == PatchType::Apply {
            return self.apply(namespace, name, body, options).await;
        }
        let explicit = patch::sets_resource_version(patch_type, body);
        let mut last = None;
        for _ in 0..PATCH_RETRIES {
            let current = self.get(namespace, name, &GetOptions::default()).await?;
            let mut doc: Value =
                serde_json::from_slice(&current.body.into_bytes()).map_err(Error::Encode)?;
            let read_version = doc["metadata"]["resourceVersion"].clone();
            patch::apply(patch_type, None, &mut doc, body)?;
            if !explicit {
                doc["metadata"]["resourceVersion"] = read_version;
            }
            let updated = serde_json::to_vec(&doc).map_err(Error::Encode)?;
            match self.update(namespace, name, &updated, options).await {
                Err(Error::Api(e)) if e.code() == 409 && !explicit => last = Some(e),
                other => return other,
            }
        }
        Err(last
            .unwrap_or_else(|| ApiError::internal("the patch could not be applied"))
            .into())
    }

    async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Encoded> {
        self.out(self.stored.delete(namespace, name, options).await?)
    }

    async fn delete_collection(
        &self,
        namespace: &str,
        list: &ListOptions,
        options: &DeleteOptions,
    ) -> Result<Encoded> {
        self.out(
            self.stored
                .delete_collection(namespace, list, options)
                .await?,
        )
    }
}
