//! A resource served in a second API version whose objects are stored in another version's
//! form (`events.k8s.io/v1` Events are stored as `v1` Events, as upstream stores them). Every
//! verb goes to the stored form's storage; bodies are converted on the way in and answers on
//! the way out, so both versions see one collection: the same objects, resourceVersions and
//! watch events. A conversion may call out and fail (a CRD's conversion webhook): it is
//! asynchronous and converts a whole list at once.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use capstan_meta::{ApiError, HasMetadata, ResourceDescriptor, Strategy};
use capstan_watch::CachedJson;
use futures_util::StreamExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::options::{DeleteOptions, GetOptions, ListOptions, WriteOptions};
use crate::patch::{self, PatchType};
use crate::payload::Payload;
use crate::rest::{Encoded, RestStorage, WatchOptions};
use crate::watching::EventStream;

/// Converts objects' JSON to one form (the served or the stored one).
#[async_trait]
pub trait Converter: Send + Sync {
    /// `objects`, each in any form of the resource, in this converter's form and order.
    async fn convert(&self, objects: Vec<Value>) -> Result<Vec<Value>>;
}

/// A converter mapping each object on its own, in process.
pub struct PerObject<F>(pub F);

#[async_trait]
impl<F: Fn(Value) -> Value + Send + Sync> Converter for PerObject<F> {
    async fn convert(&self, objects: Vec<Value>) -> Result<Vec<Value>> {
        Ok(objects.into_iter().map(&self.0).collect())
    }
}

/// A list's encoded items in the served form, converted a batch at a time: each batch
/// is parsed, converted and written out again before the next is parsed, so a large
/// list is never held as JSON trees whole (and a webhook gets reviews of bounded size).
async fn items_out(converter: &dyn Converter, items: &[CachedJson]) -> Result<Vec<CachedJson>> {
    let mut out = Vec::with_capacity(items.len());
    let mut rest = items;
    while !rest.is_empty() {
        let mut size = 0;
        let count = rest
            .iter()
            .take(CONVERT_BATCH_OBJECTS)
            .take_while(|item| {
                size += item.len();
                size <= CONVERT_BATCH_BYTES
            })
            .count()
            .max(1);
        let (batch, next) = rest.split_at(count);
        rest = next;
        let docs = batch
            .iter()
            .map(|item| serde_json::from_slice(&item.contiguous()).map_err(Error::Encode))
            .collect::<Result<Vec<Value>>>()?;
        for doc in converter.convert(docs).await? {
            out.push(serde_json::to_vec(&doc).map_err(Error::Encode)?.into());
        }
    }
    Ok(out)
}

/// A served version's own rules for writes, applied to a body in the served form before it
/// is converted to the stored form (a CRD version's schema prunes, defaults and judges the
/// writes made in that version, as upstream; the stored form's strategy runs after).
#[async_trait]
pub trait ServedWrite: Send + Sync {
    /// `object` pruned, defaulted and checked, with the warnings for the answer; `old` is
    /// the current object in the served form, on updates.
    async fn admit(
        &self,
        object: Value,
        old: Option<Value>,
        options: &WriteOptions,
    ) -> Result<(Value, Vec<String>)>;
}

/// A [`ServedWrite`] by a strategy of the served form: its pruning (unknown fields reported
/// by the request's field validation), defaults, preparation and validation.
pub struct ServedStrategy<S> {
    strategy: S,
    status: bool,
}

impl<S> ServedStrategy<S> {
    /// Judges writes of the resource (its stored status kept).
    pub fn resource(strategy: S) -> Self {
        Self {
            strategy,
            status: false,
        }
    }

    /// Judges writes of the `status` subresource (the rest kept as stored).
    pub fn status(strategy: S) -> Self {
        Self {
            strategy,
            status: true,
        }
    }
}

#[async_trait]
impl<S> ServedWrite for ServedStrategy<S>
where
    S: Strategy,
    S::Object: Serialize + DeserializeOwned + Clone + Send + Sync,
{
    async fn admit(
        &self,
        object: Value,
        old: Option<Value>,
        options: &WriteOptions,
    ) -> Result<(Value, Vec<String>)> {
        let strategy = &self.strategy;
        let d = strategy.descriptor();
        let (mut obj, warnings): (S::Object, _) = crate::codec::decode_value_pruned(
            object,
            &d,
            options.field_validation,
            |o| strategy.prune(o),
            crate::codec::checked::<S::Object>,
        )?;
        strategy.default(&mut obj);
        let errors = match old {
            Some(old) => {
                let mut old: S::Object =
                    crate::codec::from_document(&old).map_err(Error::Encode)?;
                strategy.on_read(&mut old);
                if self.status {
                    // Only the status changes: the rest is judged as stored.
                    let mut merged = old.clone();
                    strategy.copy_status(&mut merged, &obj);
                    strategy.validate_update(&merged, &old)
                } else {
                    strategy.prepare_for_update(&mut obj, &old);
                    if strategy.has_status() {
                        // Writes of the resource keep the stored status.
                        strategy.copy_status(&mut obj, &old);
                    }
                    strategy.validate_update(&obj, &old)
                }
            }
            None => {
                strategy.prepare_for_create(&mut obj);
                strategy.validate(&obj)
            }
        };
        if !errors.is_empty() {
            let name = obj.metadata().name.clone().unwrap_or_default();
            return Err(ApiError::invalid(&d.group, &d.kind, &name, &errors).into());
        }
        Ok((serde_json::to_value(&obj).map_err(Error::Encode)?, warnings))
    }
}

/// `encoded` with `warnings` first.
fn with_warnings(mut encoded: Encoded, mut warnings: Vec<String>) -> Result<Encoded> {
    if !warnings.is_empty() {
        warnings.append(&mut encoded.warnings);
        encoded.warnings = warnings;
    }
    Ok(encoded)
}

/// One object through `converter`.
async fn convert_one(converter: &dyn Converter, object: Value) -> Result<Value> {
    converter
        .convert(vec![object])
        .await?
        .pop()
        .ok_or_else(|| ApiError::internal("the conversion returned no object").into())
}

/// Most objects of a list converted in one call (one review, for a webhook).
const CONVERT_BATCH_OBJECTS: usize = 500;
/// Most bytes of encoded objects of a list converted in one call (one object at least).
const CONVERT_BATCH_BYTES: usize = 1 << 20;

/// Tries of a patch that loses a race with another write.
const PATCH_RETRIES: usize = 8;

/// Serves `descriptor` through `stored`, converting with `to_stored` and `to_served`.
pub struct ConvertedRest {
    descriptor: ResourceDescriptor,
    stored: Arc<dyn RestStorage>,
    to_stored: Arc<dyn Converter>,
    to_served: Arc<dyn Converter>,
    schema: crate::rest::SchemaFn,
    served: Option<Arc<dyn ServedWrite>>,
}

impl ConvertedRest {
    /// Serves `descriptor` (with the OpenAPI schema `schema`) through `stored`.
    pub fn new(
        descriptor: ResourceDescriptor,
        stored: Arc<dyn RestStorage>,
        to_stored: Arc<dyn Converter>,
        to_served: Arc<dyn Converter>,
        schema: impl Fn(&mut schemars::SchemaGenerator) -> schemars::Schema + Send + Sync + 'static,
    ) -> Self {
        Self {
            descriptor,
            stored,
            to_stored,
            to_served,
            schema: Arc::new(schema),
            served: None,
        }
    }

    /// Writes in the served form pass `served` before they are converted; the stored form
    /// then prunes unknown fields silently (the client's body was judged in its own form).
    pub fn with_served_writes(mut self, served: Arc<dyn ServedWrite>) -> Self {
        self.served = Some(served);
        self
    }

    /// A create's or update's body in the stored form, the served version's warnings, and
    /// the options of the stored write; `old` is read for an update's checks.
    async fn write_in(
        &self,
        body: &[u8],
        update: Option<(&str, &str)>,
        options: &WriteOptions,
    ) -> Result<(Vec<u8>, Vec<String>, WriteOptions)> {
        let Some(served) = &self.served else {
            return Ok((
                self.body_in(body).await?,
                Vec::new(),
                self.passed_on(options),
            ));
        };
        let doc = self.served_doc(body)?;
        let old = match update {
            None => None,
            Some((namespace, name)) => {
                match self.get(namespace, name, &GetOptions::default()).await {
                    Ok(current) => Some(
                        serde_json::from_slice(&current.body.into_bytes())
                            .map_err(Error::Encode)?,
                    ),
                    // The stored write answers for a missing object.
                    Err(Error::Api(e)) if e.code() == 404 => None,
                    Err(e) => return Err(e),
                }
            }
        };
        let skip = update.is_some() && old.is_none();
        let (doc, warnings) = if skip {
            (doc, Vec::new())
        } else {
            served.admit(doc, old, options).await?
        };
        let stored = convert_one(self.to_stored.as_ref(), doc).await?;
        let mut options = self.passed_on(options);
        options.field_validation = crate::options::FieldValidation::Ignore;
        Ok((
            serde_json::to_vec(&stored).map_err(Error::Encode)?,
            warnings,
            options,
        ))
    }

    /// The options of a write passed on to the stored form: admission learns the form the
    /// client wrote in.
    fn passed_on(&self, options: &WriteOptions) -> WriteOptions {
        WriteOptions {
            served_as: Some(crate::forms::form_of(&self.descriptor)),
            ..options.clone()
        }
    }

    async fn body_in(&self, body: &[u8]) -> Result<Vec<u8>> {
        let doc = self.served_doc(body)?;
        let stored = convert_one(self.to_stored.as_ref(), doc).await?;
        serde_json::to_vec(&stored).map_err(Error::Encode)
    }

    /// A body in the served form, its `apiVersion` (when given) the served one.
    fn served_doc(&self, body: &[u8]) -> Result<Value> {
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
        Ok(doc)
    }

    /// A Status answered by the stored form (a delete's), written in upstream's field
    /// order, naming the resource as the client did (`events.k8s.io` events).
    fn status_out(&self, doc: Value) -> Result<Vec<u8>> {
        let mut status: capstan_meta::v1::Status =
            serde_json::from_value(doc).map_err(Error::Encode)?;
        if let Some(details) = status.details.as_mut()
            && details.kind.is_some()
        {
            details.group = Some(self.descriptor.group.clone()).filter(|g| !g.is_empty());
        }
        Ok(capstan_meta::status::status_json(&status))
    }

    /// One stored-form object (or Status) in the served form.
    async fn object_out(&self, doc: Value) -> Result<Value> {
        if doc["kind"] == "Status" {
            Ok(doc)
        } else {
            convert_one(self.to_served.as_ref(), doc).await
        }
    }

    async fn out(&self, encoded: Encoded) -> Result<Encoded> {
        let body = match encoded.body {
            Payload::Whole(bytes) => {
                let doc: Value = serde_json::from_slice(&bytes).map_err(Error::Encode)?;
                if doc["kind"] == "Status" {
                    return Ok(Encoded {
                        body: Payload::Whole(self.status_out(doc)?.into()),
                        ..encoded
                    });
                }
                let doc = if doc.get("items").is_some_and(Value::is_array) {
                    self.list_out(doc).await?
                } else {
                    self.object_out(doc).await?
                };
                Payload::Whole(serde_json::to_vec(&doc).map_err(Error::Encode)?.into())
            }
            Payload::List {
                head,
                items,
                bare_items,
                ..
            } => {
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
                let items = items_out(self.to_served.as_ref(), &items).await?;
                Payload::List {
                    head: head.into(),
                    items,
                    cached: Vec::new(),
                    bare_items,
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
        let stored = self.body_in(body).await?;
        self.out(
            self.stored
                .patch(
                    namespace,
                    name,
                    PatchType::Apply,
                    &stored,
                    &self.passed_on(options),
                )
                .await?,
        )
        .await
    }

    fn retype_list(&self, doc: &mut Value) {
        doc["kind"] = self.descriptor.list_kind().into();
        doc["apiVersion"] = self.descriptor.api_version().into();
    }

    async fn list_out(&self, mut doc: Value) -> Result<Value> {
        self.retype_list(&mut doc);
        if let Some(items) = doc["items"].as_array_mut() {
            let mut pending = std::mem::take(items).into_iter().peekable();
            while pending.peek().is_some() {
                let batch: Vec<Value> = pending.by_ref().take(CONVERT_BATCH_OBJECTS).collect();
                items.extend(self.to_served.convert(batch).await?);
            }
        }
        Ok(doc)
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

    fn forms(&self) -> Option<Arc<crate::forms::StoreForms>> {
        self.stored.forms()
    }

    fn on_served(&self) {
        if let Some(forms) = self.stored.forms() {
            forms.add(
                crate::forms::form_of(&self.descriptor),
                self.to_stored.clone(),
                self.to_served.clone(),
            );
        }
    }

    async fn get(&self, namespace: &str, name: &str, options: &GetOptions) -> Result<Encoded> {
        self.out(self.stored.get(namespace, name, options).await?)
            .await
    }

    async fn list(&self, namespace: &str, options: &ListOptions) -> Result<Encoded> {
        let options = crate::options::resolved(&self.descriptor, options)?;
        self.out(self.stored.list(namespace, &options).await?).await
    }

    async fn watch(&self, namespace: &str, options: &WatchOptions) -> Result<EventStream> {
        let options = WatchOptions {
            list: crate::options::resolved(&self.descriptor, &options.list)?.into_owned(),
            ..options.clone()
        };
        let lines = self.stored.watch(namespace, &options).await?;
        let to_served = self.to_served.clone();
        let api_version = self.descriptor.api_version();
        let kind = self.descriptor.kind.clone();
        Ok(Box::pin(lines.then(move |chunk| {
            let to_served = to_served.clone();
            let api_version = api_version.clone();
            let kind = kind.clone();
            async move { watch_chunk_out(&chunk, to_served.as_ref(), &api_version, &kind).await }
        })))
    }

    async fn create(
        &self,
        namespace: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (body, warnings, options) = self.write_in(body, None, options).await?;
        let out = self.out(self.stored.create(namespace, &body, &options).await?);
        with_warnings(out.await?, warnings)
    }

    async fn update(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (body, warnings, options) = self
            .write_in(body, Some((namespace, name)), options)
            .await?;
        let out = self.out(self.stored.update(namespace, name, &body, &options).await?);
        with_warnings(out.await?, warnings)
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
        let options = DeleteOptions {
            served_as: Some(crate::forms::form_of(&self.descriptor)),
            ..options.clone()
        };
        self.out(self.stored.delete(namespace, name, &options).await?)
            .await
    }

    async fn delete_collection(
        &self,
        namespace: &str,
        list: &ListOptions,
        options: &DeleteOptions,
    ) -> Result<Encoded> {
        let list = crate::options::resolved(&self.descriptor, list)?;
        let options = DeleteOptions {
            served_as: Some(crate::forms::form_of(&self.descriptor)),
            ..options.clone()
        };
        self.out(
            self.stored
                .delete_collection(namespace, &list, &options)
                .await?,
        )
        .await
    }
}

/// A chunk of watch event lines (one or more) in the served form: the objects converted in
/// one call, bookmarks retyped, errors kept. A failed conversion ends the chunk with an
/// `ERROR` event carrying its Status, in place of the events it could not convert.
async fn watch_chunk_out(
    chunk: &[u8],
    to_served: &dyn Converter,
    api_version: &str,
    kind: &str,
) -> Bytes {
    // Each line with whether its object awaits conversion; lines that are not JSON pass as
    // they are.
    let mut lines: Vec<Result<(Value, bool), &[u8]>> = Vec::new();
    let mut objects = Vec::new();
    for line in crate::watching::event_lines(chunk) {
        let Ok(mut event) = serde_json::from_slice::<Value>(line) else {
            lines.push(Err(line));
            continue;
        };
        let converts = match event["type"].as_str() {
            Some("ERROR") => false,
            Some("BOOKMARK") => {
                event["object"]["apiVersion"] = api_version.into();
                event["object"]["kind"] = kind.into();
                false
            }
            _ => {
                objects.push(event["object"].take());
                true
            }
        };
        lines.push(Ok((event, converts)));
    }
    let mut out = Vec::with_capacity(chunk.len());
    let converted = if objects.is_empty() {
        Ok(objects)
    } else {
        to_served.convert(objects).await
    };
    let write = |out: &mut Vec<u8>, event: &Value| {
        if serde_json::to_writer(&mut *out, event).is_ok() {
            out.push(b'\n');
        }
    };
    match converted {
        Ok(objects) => {
            let mut objects = objects.into_iter();
            for line in lines {
                match line {
                    Ok((mut event, converts)) => {
                        if converts {
                            event["object"] = objects.next().unwrap_or_default();
                        }
                        write(&mut out, &event);
                    }
                    Err(raw) => {
                        out.extend_from_slice(raw);
                        out.push(b'\n');
                    }
                }
            }
        }
        Err(e) => {
            let err = match e {
                Error::Api(api) => api,
                other => ApiError::internal(other),
            };
            out.extend_from_slice(&crate::watching::error_line(&err));
        }
    }
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Records the size of each call, converting as `None` conversion does.
    #[derive(Default)]
    struct Recording(Mutex<Vec<usize>>);

    #[async_trait]
    impl Converter for Recording {
        async fn convert(&self, mut objects: Vec<Value>) -> Result<Vec<Value>> {
            self.0.lock().unwrap().push(objects.len());
            for o in &mut objects {
                o["apiVersion"] = "example.com/v2".into();
            }
            Ok(objects)
        }
    }

    fn item(i: usize, padding: usize) -> CachedJson {
        let doc = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": format!("w{i}")}, "data": "x".repeat(padding)});
        serde_json::to_vec(&doc).unwrap().into()
    }

    #[tokio::test]
    async fn lists_are_converted_in_bounded_batches_in_order() {
        let converter = Recording::default();
        let items: Vec<CachedJson> = (0..1203).map(|i| item(i, 10)).collect();
        let out = items_out(&converter, &items).await.unwrap();
        assert_eq!(*converter.0.lock().unwrap(), [500, 500, 203]);
        assert_eq!(out.len(), 1203);
        let last: Value = serde_json::from_slice(&out[1202].contiguous()).unwrap();
        assert_eq!(
            (
                last["apiVersion"].as_str(),
                last["metadata"]["name"].as_str()
            ),
            (Some("example.com/v2"), Some("w1202"))
        );

        // Large objects: a batch stops at 1 MiB, and an object larger than that goes alone.
        let converter = Recording::default();
        let items: Vec<CachedJson> = [300_000, 300_000, 300_000, 300_000, 2_000_000, 10]
            .iter()
            .enumerate()
            .map(|(i, &n)| item(i, n))
            .collect();
        items_out(&converter, &items).await.unwrap();
        assert_eq!(*converter.0.lock().unwrap(), [3, 1, 1, 1]);
    }
}
