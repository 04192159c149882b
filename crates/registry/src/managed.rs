//! managedFields on every write of a generic store, and server-side apply: the glue between
//! typed objects and `capstan-merge`.

use capstan_merge::managed::{self, Ignored, ManagedFields, Writer};
use capstan_merge::{Error as MergeError, Typed};
use capstan_meta::v1::{StatusCause, StatusDetails};
use capstan_meta::{ApiError, Reason, ResourceDescriptor, time};
use capstan_negotiation::schema::Schema;
use serde_json::Value;

use crate::generic::Target;

/// The longest field manager name accepted.
pub const MAX_MANAGER_LENGTH: usize = 128;

/// The schema a tracker reads: upstream's, or a custom resource's own.
enum SchemaRef {
    Upstream,
    Custom(std::sync::Arc<Schema>),
}

/// Tracks the field managers of one resource's objects.
pub(crate) struct FieldTracker {
    schema: SchemaRef,
    /// The kind's message, when the schema knows the kind: looked up at the first write, so
    /// that building a store does not wait for upstream's schema (built beside the start).
    root: std::sync::OnceLock<Option<usize>>,
    api_version: String,
    kind: String,
    has_status: bool,
}

impl FieldTracker {
    /// The tracker of `descriptor`'s kind (objects of kinds the schema does not know are
    /// written without managedFields).
    pub fn new(descriptor: &ResourceDescriptor, has_status: bool) -> Self {
        let api_version = descriptor.api_version();
        Self {
            schema: SchemaRef::Upstream,
            root: std::sync::OnceLock::new(),
            api_version,
            kind: descriptor.kind.clone(),
            has_status,
        }
    }

    /// The same tracker reading `schema` (a custom resource's, which knows its kind).
    pub fn with_schema(mut self, schema: std::sync::Arc<Schema>) -> Self {
        self.root = schema.kind(&self.api_version, &self.kind).into();
        self.schema = SchemaRef::Custom(schema);
        self
    }

    /// The typed view, when the kind is known.
    pub fn typed(&self) -> Option<Typed<'_>> {
        let schema = match &self.schema {
            SchemaRef::Upstream => Schema::upstream(),
            SchemaRef::Custom(schema) => schema,
        };
        let root = *self
            .root
            .get_or_init(|| schema.kind(&self.api_version, &self.kind));
        root.map(|root| Typed::at(schema, root))
    }

    fn ignored(&self, target: Target) -> Ignored {
        match target {
            Target::Status | Target::Approval => Ignored::identity().keeping_only(&["status"]),
            Target::Resource | Target::EphemeralContainers | Target::Resize | Target::Scale
                if self.has_status =>
            {
                Ignored::identity().with_top_level(&["status"])
            }
            Target::Resource | Target::EphemeralContainers | Target::Resize | Target::Scale => {
                Ignored::identity()
            }
        }
    }

    fn subresource(target: Target) -> &'static str {
        target.subresource()
    }

    /// Records a create (`old` `None`) or an update by `manager` in `new`'s managedFields.
    /// `new` comes as the client sent it: managedFields it carries that differ from the
    /// stored ones replace them (that is how a client hands over ownership). `old` is read
    /// only: it is given back as it came.
    pub fn record(
        &self,
        target: Target,
        mut old: Option<&mut Value>,
        new: &mut Value,
        manager: &str,
    ) -> Result<(), ApiError> {
        let Some(typed) = self.typed() else {
            return Ok(());
        };
        let stored = old.as_deref_mut().and_then(take_managed_fields);
        let recorded = self.record_over(
            &typed,
            target,
            old.as_deref(),
            stored.as_ref(),
            new,
            manager,
        );
        if let Some(old) = old {
            put_managed_fields(old, stored);
        }
        recorded
    }

    /// [`Self::record`] with the stored entries apart from `old`.
    fn record_over(
        &self,
        typed: &Typed<'_>,
        target: Target,
        old: Option<&Value>,
        stored: Option<&Value>,
        new: &mut Value,
        manager: &str,
    ) -> Result<(), ApiError> {
        let given = take_managed_fields(new);
        let base = match &given {
            Some(given) if Some(given) != stored => Some(given),
            _ => stored,
        };
        let now = time::now_text();
        let writer = Writer {
            manager,
            api_version: &self.api_version,
            subresource: Self::subresource(target),
            now: &now,
        };
        let ignored = self.ignored(target);
        if old.is_none() && base.is_none() {
            // A create with no entries given: its own entry, written straight.
            match managed::created(typed, new, &ignored, &writer) {
                Ok(fields) => put_managed_fields(new, fields),
                Err(err) => tracing::debug!(%err, "managedFields left as they were"),
            }
            return Ok(());
        }
        let decode = || {
            ManagedFields::decode(base).map_err(|e| {
                ApiError::bad_request(format!("metadata.managedFields is invalid: {e}"))
            })
        };
        // The stored entries (written here, so valid) are read only when the write moves
        // fields between managers; others' are read (and judged) first.
        let from_store = base.zip(stored).is_some_and(|(b, s)| std::ptr::eq(b, s));
        let given = if from_store { None } else { Some(decode()?) };
        let changes = match managed::Changes::of(typed, old, new, &ignored) {
            Ok(changes) => changes,
            Err(err) => {
                // The object breaks a list rule (validation reports it); ownership stays.
                tracing::debug!(%err, "managedFields left as they were");
                let base = base.cloned();
                put_managed_fields(new, base);
                return Ok(());
            }
        };
        let in_place = base
            .filter(|_| from_store)
            .and_then(|stored| changes.record_in_place(stored, &writer));
        let fields = match in_place {
            Some(fields) => Some(fields),
            None => {
                let mut entries = match given {
                    Some(entries) => entries,
                    None => decode()?,
                };
                changes.record(&mut entries, &writer);
                entries.encode()
            }
        };
        put_managed_fields(new, fields);
        Ok(())
    }

    /// Server-side apply of `config` over `live` (`None`: the object does not exist yet):
    /// the object to write, with its managedFields.
    pub fn apply(
        &self,
        target: Target,
        mut live: Option<Value>,
        config: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, ApiError> {
        let Some(typed) = self.typed() else {
            return Err(ApiError::new(
                Reason::UnsupportedMediaType,
                "server-side apply is not supported for this kind",
            ));
        };
        let stored = live.as_mut().and_then(take_managed_fields);
        let mut entries = ManagedFields::decode(stored.as_ref()).map_err(|e| {
            ApiError::internal(format!("the stored managedFields are unreadable: {e}"))
        })?;
        let mut config = config.clone();
        take_managed_fields(&mut config);
        let now = time::now_text();
        let writer = Writer {
            manager,
            api_version: &self.api_version,
            subresource: Self::subresource(target),
            now: &now,
        };
        let mut merged = managed::apply(
            &typed,
            &mut entries,
            live,
            &config,
            &self.ignored(target),
            &writer,
            force,
        )
        .map_err(merge_error)?;
        put_managed_fields(&mut merged, entries.encode());
        Ok(merged)
    }
}

/// The Status of a failed merge.
pub(crate) fn merge_error(err: MergeError) -> ApiError {
    match err {
        MergeError::BadPatch(message) => ApiError::bad_request(message),
        MergeError::Invalid(message) => ApiError::new(Reason::Invalid, message),
        MergeError::FieldsV1(message) => ApiError::internal(message),
        MergeError::Conflicts(conflicts) => {
            let message = managed::conflict_message(&conflicts);
            let mut error = ApiError::new(Reason::Conflict, message);
            let causes = conflicts
                .into_iter()
                .map(|c| StatusCause {
                    reason: Some("FieldManagerConflict".into()),
                    message: Some(format!("conflict with {}", c.manager)),
                    field: Some(c.path.to_string()),
                })
                .collect();
            error.details = Some(Box::new(StatusDetails {
                causes: Some(causes),
                ..Default::default()
            }));
            error
        }
    }
}

/// Takes `metadata.managedFields` out of `obj`.
pub(crate) fn take_managed_fields(obj: &mut Value) -> Option<Value> {
    obj.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("managedFields"))
}

/// Puts `fields` (when given) in `obj` as its `metadata.managedFields`.
pub(crate) fn put_managed_fields(obj: &mut Value, fields: Option<Value>) {
    if let (Some(meta), Some(fields)) = (
        obj.get_mut("metadata").and_then(Value::as_object_mut),
        fields,
    ) {
        meta.insert("managedFields".into(), fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pods() -> FieldTracker {
        let descriptor = ResourceDescriptor {
            version: "v1".into(),
            kind: "Pod".into(),
            resource: "pods".into(),
            namespaced: true,
            ..Default::default()
        };
        FieldTracker::new(&descriptor, true)
    }

    #[test]
    fn an_update_reads_the_old_object_and_gives_it_back_as_it_came() {
        let entry = json!({
            "manager": "kubectl", "operation": "Update", "apiVersion": "v1",
            "time": "2026-12-06T01:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
        });
        let old = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"},
                "managedFields": [entry]},
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        });
        let mut new = old.clone();
        new["metadata"]["labels"]["tier"] = "web".into();
        let mut lent = old.clone();
        pods()
            .record(Target::Resource, Some(&mut lent), &mut new, "editor")
            .unwrap();
        assert_eq!(
            lent, old,
            "the old object comes back with its managedFields"
        );
        let managers: Vec<&str> = new["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["kubectl", "editor"], "the stored entry was read");
        assert_eq!(
            new["metadata"]["managedFields"][1]["fieldsV1"],
            json!({"f:metadata": {"f:labels": {"f:tier": {}}}})
        );
    }
}
