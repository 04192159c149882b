//! managedFields: which manager set which fields, kept on every write, and server-side apply
//! with its conflicts.
//!
//! Every write is an *Update* by its field manager: the fields it adds or changes become its
//! own and leave the other managers; the fields it removes leave everyone. An *Apply* merges
//! the applied configuration over the live object; fields it would change that another
//! manager owns are conflicts (unless forced, which takes them over); the applier then owns
//! exactly the fields of its configuration, and fields it applied before and no longer
//! applies are removed unless another manager owns them.

use std::fmt;

use serde_json::{Map, Value};

use crate::Error;
use crate::fieldset::{FieldSet, Path, PathElement, prefixed};
use crate::typed::{Ty, Typed};

/// The most Update entries kept; older ones are merged into one `ancient-changes` entry.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The manager that owns the fields of an object that had no managedFields at its first apply.
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// The manager older Update entries are merged into.
pub const ANCIENT_CHANGES: &str = "ancient-changes";

/// The operation of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update or a non-apply patch.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One entry of `metadata.managedFields`.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The field manager.
    pub manager: String,
    /// Apply or Update.
    pub operation: Operation,
    /// The API version the fields are named in.
    pub api_version: String,
    /// When the entry last changed (RFC 3339).
    pub time: Option<String>,
    /// The subresource written (`status`, ...), empty for the resource.
    pub subresource: String,
    /// The fields owned.
    pub fields: FieldSet,
}

impl Entry {
    fn is(&self, manager: &str, operation: Operation, subresource: &str) -> bool {
        self.manager == manager && self.operation == operation && self.subresource == subresource
    }
}

impl fmt::Display for Entry {
    /// How a conflict names the manager: `"name"`, with the subresource and, for Update
    /// entries, the version.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.manager)?;
        if !self.subresource.is_empty() {
            write!(f, " with subresource {:?}", self.subresource)?;
        }
        if self.operation == Operation::Update {
            write!(f, " using {}", self.api_version)?;
        }
        Ok(())
    }
}

/// A field an apply would change that another manager owns.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The owner, as a conflict names it (see [`Entry`]'s `Display`).
    pub manager: String,
    /// The field.
    pub path: Path,
}

/// The message of an apply conflict error, in upstream's words.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            only.manager, only.path
        );
    }
    let mut managers: Vec<&str> = conflicts.iter().map(|c| c.manager.as_str()).collect();
    managers.sort_unstable();
    managers.dedup();
    let mut lines = Vec::new();
    for manager in managers {
        lines.push(format!("conflicts with {manager}:"));
        for c in conflicts.iter().filter(|c| c.manager == manager) {
            lines.push(format!("- {}", c.path));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Who writes, in what version, when.
#[derive(Debug, Clone, Copy)]
pub struct Writer<'a> {
    /// The field manager.
    pub manager: &'a str,
    /// The API version of the request.
    pub api_version: &'a str,
    /// The subresource written, empty for the resource.
    pub subresource: &'a str,
    /// The time of the write (RFC 3339).
    pub now: &'a str,
}

/// The managedFields of one object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ManagedFields {
    /// The entries.
    pub entries: Vec<Entry>,
}

impl ManagedFields {
    /// Reads `metadata.managedFields` (absent: no entries).
    pub fn decode(value: Option<&Value>) -> Result<Self, Error> {
        let mut entries = Vec::new();
        for item in value.and_then(Value::as_array).into_iter().flatten() {
            let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
            let operation = match text("operation").as_deref() {
                Some("Apply") => Operation::Apply,
                Some("Update") => Operation::Update,
                other => {
                    return Err(Error::FieldsV1(format!(
                        "managedFields operation must be Apply or Update, not {other:?}"
                    )));
                }
            };
            let fields = match item.get("fieldsV1") {
                Some(v) => FieldSet::from_fields_v1(v)?,
                None => FieldSet::new(),
            };
            entries.push(Entry {
                manager: text("manager").unwrap_or_default(),
                operation,
                api_version: text("apiVersion").unwrap_or_default(),
                time: text("time"),
                subresource: text("subresource").unwrap_or_default(),
                fields,
            });
        }
        Ok(Self { entries })
    }

    /// The `metadata.managedFields` value (`None` when there are no entries).
    pub fn encode(&self) -> Option<Value> {
        if self.entries.is_empty() {
            return None;
        }
        // Upstream's order: by operation, time, manager, apiVersion, subresource.
        let mut order: Vec<&Entry> = self.entries.iter().collect();
        fn key(e: &Entry) -> (&str, &str, &str, &str, &str) {
            (
                e.operation.as_str(),
                e.time.as_deref().unwrap_or_default(),
                &e.manager,
                &e.api_version,
                &e.subresource,
            )
        }
        order.sort_by(|p, q| key(p).cmp(&key(q)));
        let items = order
            .into_iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("manager".into(), Value::String(e.manager.clone()));
                m.insert("operation".into(), e.operation.as_str().into());
                m.insert("apiVersion".into(), Value::String(e.api_version.clone()));
                if let Some(time) = &e.time {
                    m.insert("time".into(), Value::String(time.clone()));
                }
                m.insert("fieldsType".into(), "FieldsV1".into());
                m.insert("fieldsV1".into(), e.fields.to_fields_v1());
                if !e.subresource.is_empty() {
                    m.insert("subresource".into(), Value::String(e.subresource.clone()));
                }
                Value::Object(m)
            })
            .collect();
        Some(Value::Array(items))
    }

    fn position(&self, manager: &str, operation: Operation, subresource: &str) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.is(manager, operation, subresource))
    }

    /// The entry of this writer and operation, created when missing.
    fn entry_mut(&mut self, writer: &Writer<'_>, operation: Operation) -> &mut Entry {
        let i = match self.position(writer.manager, operation, writer.subresource) {
            Some(i) => i,
            None => {
                self.entries.push(Entry {
                    manager: writer.manager.to_string(),
                    operation,
                    api_version: writer.api_version.to_string(),
                    time: None,
                    subresource: writer.subresource.to_string(),
                    fields: FieldSet::new(),
                });
                self.entries.len() - 1
            }
        };
        &mut self.entries[i]
    }

    /// Drops empty entries and folds the oldest Update entries beyond the cap together.
    fn tidy(&mut self) {
        self.entries.retain(|e| !e.fields.is_empty());
        let updates = self
            .entries
            .iter()
            .filter(|e| e.operation == Operation::Update)
            .count();
        if updates <= MAX_UPDATE_MANAGERS {
            return;
        }
        let mut by_age: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].operation == Operation::Update)
            .collect();
        by_age.sort_by(|&a, &b| self.entries[a].time.cmp(&self.entries[b].time));
        let fold: Vec<usize> = by_age[..updates - MAX_UPDATE_MANAGERS + 1].to_vec();
        let mut ancient = FieldSet::new();
        let mut time = None;
        let mut api_version = String::new();
        for &i in &fold {
            ancient.union_with(&self.entries[i].fields);
            time = self.entries[i].time.clone().max(time);
            api_version = self.entries[i].api_version.clone();
        }
        let mut i = 0;
        self.entries.retain(|_| {
            i += 1;
            !fold.contains(&(i - 1))
        });
        self.entries.push(Entry {
            manager: ANCIENT_CHANGES.into(),
            operation: Operation::Update,
            api_version,
            time,
            subresource: String::new(),
            fields: ancient,
        });
    }
}

/// The paths no manager owns: type and identity fields the server sets, and the parts of the
/// object another endpoint writes (the status of a resource with a status subresource, or
/// everything but the status through it).
#[derive(Debug, Clone, Default)]
pub struct Ignored {
    top_level: Vec<String>,
    keep_only: Option<Vec<String>>,
}

impl Ignored {
    /// Nothing beyond the identity fields.
    pub fn identity() -> Self {
        Self::default()
    }

    /// Also the top-level fields `fields` (e.g. `status` of a resource written apart).
    pub fn with_top_level(mut self, fields: &[&str]) -> Self {
        self.top_level.extend(fields.iter().map(|f| f.to_string()));
        self
    }

    /// Every top-level field but `fields` (the status subresource owns only its status).
    pub fn keeping_only(mut self, fields: &[&str]) -> Self {
        self.keep_only = Some(fields.iter().map(|f| f.to_string()).collect());
        self
    }

    /// Whether the top-level field `name` is ignored as a whole.
    fn drops_top_level(&self, name: &str) -> bool {
        matches!(name, "apiVersion" | "kind")
            || self.top_level.iter().any(|f| f == name)
            || self
                .keep_only
                .as_ref()
                .is_some_and(|keep| !keep.iter().any(|f| f == name))
    }

    /// `set` without the ignored paths.
    pub fn strip(&self, set: &mut FieldSet) {
        if set.is_empty() {
            return;
        }
        set.retain(|element| match element {
            PathElement::Field(name) => !self.drops_top_level(name),
            // Only fields are named at the top level; anything else goes with `keep_only`.
            _ => self.keep_only.is_none(),
        });
        set.retain_below("metadata", |element| {
            !matches!(element, PathElement::Field(name) if IDENTITY_METADATA.contains(&name.as_str()))
        });
    }
}

/// The fields of `metadata` no manager owns.
const IDENTITY_METADATA: [&str; 8] = [
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "generation",
    "managedFields",
    "resourceVersion",
];

/// Records a write of `new` over `old` (`None`: a create) by `writer`, both objects in JSON
/// without their managedFields.
pub fn update(
    typed: &Typed<'_>,
    managed: &mut ManagedFields,
    old: Option<&Value>,
    new: &Value,
    ignored: &Ignored,
    writer: &Writer<'_>,
) -> Result<(), Error> {
    Changes::of(typed, old, new, ignored)?.record(managed, writer);
    Ok(())
}

/// What a write changes, as managedFields count it: the paths it adds or modifies, and the
/// paths it removes, the ignored ones left out.
#[derive(Debug)]
pub struct Changes {
    changed: FieldSet,
    removed: FieldSet,
}

impl Changes {
    /// The changes of a write of `new` over `old` (`None`: a create), both without their
    /// managedFields.
    pub fn of(
        typed: &Typed<'_>,
        old: Option<&Value>,
        new: &Value,
        ignored: &Ignored,
    ) -> Result<Self, Error> {
        let skeleton;
        let old = match old {
            Some(old) => old,
            None => {
                skeleton = self::skeleton(typed);
                &skeleton
            }
        };
        let mut cmp = typed.compare(old, new)?;
        ignored.strip(&mut cmp.added);
        ignored.strip(&mut cmp.modified);
        ignored.strip(&mut cmp.removed);
        let (changed, removed) = cmp.into_changed();
        Ok(Self { changed, removed })
    }

    /// Records the changes by `writer` in `managed` (see [`update`]).
    pub fn record(self, managed: &mut ManagedFields, writer: &Writer<'_>) {
        let Changes { changed, removed } = self;
        if changed.is_empty() && removed.is_empty() {
            return;
        }
        for entry in &mut managed.entries {
            if !entry.is(writer.manager, Operation::Update, writer.subresource) {
                entry.fields = entry.fields.difference(&changed);
                if !removed.is_empty() {
                    entry.fields = entry.fields.difference(&removed);
                }
            }
        }
        let any_changed = !changed.is_empty();
        if any_changed
            || managed
                .position(writer.manager, Operation::Update, writer.subresource)
                .is_some()
        {
            let entry = managed.entry_mut(writer, Operation::Update);
            if entry.fields.is_empty() {
                entry.fields = changed;
            } else {
                entry.fields.union_with(&changed);
            }
            if !removed.is_empty() {
                entry.fields = entry.fields.difference(&removed);
            }
            if any_changed {
                entry.time = Some(writer.now.to_string());
                entry.api_version = writer.api_version.to_string();
            }
        }
        managed.tidy();
    }

    /// What [`Self::record`] makes of `stored` (managedFields as written here: valid, every
    /// entry owning something), worked out on the stored form when the write moves no field
    /// between entries: the writer's Update entry already owns every changed field, no other
    /// entry owns one, and no entry owns a removed one. Then only the writer's entry's time
    /// and version change, and nothing is read into sets or written again. `None` otherwise.
    pub fn record_in_place(&self, stored: &Value, writer: &Writer<'_>) -> Option<Value> {
        let items = stored.as_array()?;
        if self.changed.is_empty() && self.removed.is_empty() {
            return Some(stored.clone());
        }
        fn text<'v>(item: &'v Value, key: &str) -> &'v str {
            item.get(key).and_then(Value::as_str).unwrap_or_default()
        }
        let is_writers = |item: &Value| {
            text(item, "manager") == writer.manager
                && text(item, "operation") == Operation::Update.as_str()
                && text(item, "subresource") == writer.subresource
        };
        let updates = items
            .iter()
            .filter(|item| text(item, "operation") == Operation::Update.as_str())
            .count();
        if updates > MAX_UPDATE_MANAGERS {
            return None;
        }
        let mut own = None;
        for (i, item) in items.iter().enumerate() {
            let fields = item.get("fieldsV1");
            if !fields
                .and_then(Value::as_object)
                .is_some_and(|f| f.keys().any(|k| k != "."))
            {
                return None;
            }
            if self.removed.overlap_fields_v1(fields).any {
                return None;
            }
            let overlap = self.changed.overlap_fields_v1(fields);
            if is_writers(item) {
                if !overlap.all {
                    return None;
                }
                own = Some(i);
            } else if overlap.any {
                return None;
            }
        }
        let own = own?;
        let mut out = items.clone();
        if !self.changed.is_empty() {
            let entry = out[own].as_object_mut()?;
            entry.insert("time".into(), Value::String(writer.now.to_string()));
            entry.insert(
                "apiVersion".into(),
                Value::String(writer.api_version.to_string()),
            );
        }
        // The order [`ManagedFields::encode`] writes.
        fn key(e: &Value) -> [&str; 5] {
            ["operation", "time", "manager", "apiVersion", "subresource"].map(|k| text(e, k))
        }
        out.sort_by(|p, q| key(p).cmp(&key(q)));
        Some(Value::Array(out))
    }
}

/// The managedFields of `new`, created by `writer` with no managedFields given: what
/// [`update`] from no object and no entries, then [`ManagedFields::encode`], give, written
/// straight in `FieldsV1` form. `None` when the write sets nothing owned.
pub fn created(
    typed: &Typed<'_>,
    new: &Value,
    ignored: &Ignored,
    writer: &Writer<'_>,
) -> Result<Option<Value>, Error> {
    let root = typed.root();
    let mut fields = Map::new();
    for (key, value) in new.as_object().into_iter().flatten() {
        if ignored.drops_top_level(key) {
            continue;
        }
        let ty = typed.child(root, key);
        let mut inner = Map::new();
        // The struct fields [`update`] compares with an empty struct (see [`skeleton`]): the
        // struct itself is no change of its own.
        let in_skeleton = typed
            .message()
            .fields
            .iter()
            .any(|f| f.name == *key && matches!(typed.field_type(f), Ty::Struct(_)));
        if in_skeleton {
            if crate::typed::is_empty(value) {
                // Not `{}`: changed as a whole (metadata is never owned as a whole).
                if key != "metadata" && value.as_object().is_none_or(|m| !m.is_empty()) {
                    fields.insert(prefixed("f:", key), Value::Object(inner));
                }
                continue;
            }
            typed.added_fields_v1(ty, value, &mut inner)?;
        } else if !matches!(ty, Ty::Leaf) && !crate::typed::is_empty(value) {
            typed.added_fields_v1(ty, value, &mut inner)?;
            if !inner.is_empty() {
                inner.insert(".".into(), Value::Object(Map::new()));
            }
        }
        if key == "metadata" {
            for name in IDENTITY_METADATA {
                inner.remove(&prefixed("f:", name));
            }
            inner.remove(".");
            if inner.is_empty() {
                continue;
            }
        } else if in_skeleton && inner.is_empty() {
            continue;
        }
        fields.insert(prefixed("f:", key), Value::Object(inner));
    }
    if fields.is_empty() {
        return Ok(None);
    }
    let mut entry = Map::new();
    entry.insert("manager".into(), writer.manager.into());
    entry.insert("operation".into(), Operation::Update.as_str().into());
    entry.insert("apiVersion".into(), writer.api_version.into());
    entry.insert("time".into(), writer.now.into());
    entry.insert("fieldsType".into(), "FieldsV1".into());
    entry.insert("fieldsV1".into(), Value::Object(fields));
    if !writer.subresource.is_empty() {
        entry.insert("subresource".into(), writer.subresource.into());
    }
    Ok(Some(Value::Array(vec![Value::Object(entry)])))
}

/// Applies `config` over `live` (`None`: the object does not exist yet) for `writer`:
/// returns the object to write, with `managed` updated, or the conflicts when another
/// manager owns a field the apply changes and `force` is off.
pub fn apply(
    typed: &Typed<'_>,
    managed: &mut ManagedFields,
    live: Option<Value>,
    config: &Value,
    ignored: &Ignored,
    writer: &Writer<'_>,
    force: bool,
) -> Result<Value, Error> {
    if let Some(live) = &live
        && managed.entries.is_empty()
    {
        // Fields set before any apply belong to someone: conflicts must see them.
        let mut owned = typed.field_set(typed.root(), live)?;
        ignored.strip(&mut owned);
        managed.entries.push(Entry {
            manager: BEFORE_FIRST_APPLY.into(),
            operation: Operation::Update,
            api_version: writer.api_version.to_string(),
            time: None,
            subresource: writer.subresource.to_string(),
            fields: owned,
        });
    }
    let live = live.unwrap_or_else(|| skeleton(typed));
    let (mut merged, mut changed) = typed.merge(typed.root(), Some(live), config)?;
    ignored.strip(&mut changed);
    let mut conflicts = Vec::new();
    for entry in &managed.entries {
        if entry.is(writer.manager, Operation::Apply, writer.subresource) {
            continue;
        }
        for path in entry.fields.intersection(&changed).paths() {
            conflicts.push(Conflict {
                manager: entry.to_string(),
                path,
            });
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(Error::Conflicts(conflicts));
    }
    let mut others = FieldSet::new();
    for entry in &mut managed.entries {
        if !entry.is(writer.manager, Operation::Apply, writer.subresource) {
            entry.fields = entry.fields.difference(&changed);
            others.union_with(&entry.fields);
        }
    }
    let mut applied = typed.field_set(typed.root(), config)?;
    ignored.strip(&mut applied);
    let previous = managed
        .position(writer.manager, Operation::Apply, writer.subresource)
        .map(|i| managed.entries[i].fields.clone())
        .unwrap_or_default();
    let dropped = previous.difference(&applied).difference(&others);
    typed.remove(typed.root(), &mut merged, &dropped)?;
    let entry = managed.entry_mut(writer, Operation::Apply);
    if entry.fields != applied || entry.time.is_none() {
        entry.time = Some(writer.now.to_string());
    }
    entry.fields = applied;
    entry.api_version = writer.api_version.to_string();
    managed.tidy();
    Ok(merged)
}

/// What a create is compared with: an object whose top-level structs exist but are empty (as
/// upstream's typed zero value is), so that only what the create sets counts as added.
fn skeleton(typed: &Typed<'_>) -> Value {
    let mut m = Map::new();
    for field in &typed.message().fields {
        if matches!(typed.field_type(field), crate::typed::Ty::Struct(_)) {
            m.insert(field.name.clone(), Value::Object(Map::new()));
        }
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests;
