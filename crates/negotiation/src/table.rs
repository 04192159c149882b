//! Server-side Tables (`meta.k8s.io` `Table`, what `kubectl get` prints) and
//! `PartialObjectMetadata`, built from objects' JSON and the resource's columns.

use capstan_meta::columns::Column;
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};

/// What each row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// Nothing.
    None,
    /// The object's metadata as a `PartialObjectMetadata` (the default).
    #[default]
    Metadata,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Reads the `includeObject` query parameter.
    pub fn parse(value: Option<&str>) -> Result<Self> {
        match value.unwrap_or("") {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => Err(Error::BadRequest(format!(
                "includeObject: unsupported value {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
            ))),
        }
    }
}

/// Builds Tables for one resource.
#[derive(Debug, Clone)]
pub struct Tables<'a> {
    columns: std::borrow::Cow<'a, [Column]>,
    include: IncludeObject,
    version: &'static str,
    now: i64,
}

impl<'a> Tables<'a> {
    /// Tables of `meta.k8s.io/{version}` with `columns` (the default columns when empty),
    /// ages counted at `now` (Unix seconds).
    pub fn new(
        columns: &'a [Column],
        include: IncludeObject,
        version: &'static str,
        now: i64,
    ) -> Self {
        let columns = if columns.is_empty() {
            std::borrow::Cow::Owned(Column::defaults())
        } else {
            std::borrow::Cow::Borrowed(columns)
        };
        Self {
            columns,
            include,
            version,
            now,
        }
    }

    /// The column definitions.
    pub fn definitions(&self) -> Value {
        Value::Array(
            self.columns
                .iter()
                .map(|c| {
                    json!({"name": c.name, "type": c.type_, "format": c.format,
                        "description": c.description, "priority": c.priority})
                })
                .collect(),
        )
    }

    /// One row.
    pub fn row(&self, obj: &Value) -> Value {
        let cells: Vec<Value> = self.columns.iter().map(|c| c.cell(obj, self.now)).collect();
        let mut row = Map::new();
        row.insert("cells".into(), Value::Array(cells));
        match self.include {
            IncludeObject::None => {}
            IncludeObject::Metadata => {
                row.insert("object".into(), partial_metadata(obj, "v1"));
            }
            IncludeObject::Object => {
                row.insert("object".into(), obj.clone());
            }
        }
        Value::Object(row)
    }

    /// A table of `objects`; `metadata` is the list metadata (resourceVersion, continue,
    /// remainingItemCount). Without `headers` the column definitions are left out (the
    /// events of a watch after the first).
    pub fn table<'o>(
        &self,
        metadata: Value,
        objects: impl IntoIterator<Item = &'o Value>,
        headers: bool,
    ) -> Value {
        let rows: Vec<Value> = objects.into_iter().map(|o| self.row(o)).collect();
        let mut table = Map::new();
        table.insert("kind".into(), "Table".into());
        table.insert(
            "apiVersion".into(),
            format!("meta.k8s.io/{}", self.version).into(),
        );
        table.insert("metadata".into(), metadata);
        table.insert(
            "columnDefinitions".into(),
            if headers {
                self.definitions()
            } else {
                Value::Array(Vec::new())
            },
        );
        table.insert("rows".into(), Value::Array(rows));
        Value::Object(table)
    }
}

/// The `PartialObjectMetadata` of an object: its metadata under the `meta.k8s.io` kind.
pub fn partial_metadata(obj: &Value, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// The `PartialObjectMetadataList` of a list's metadata and items.
pub fn partial_metadata_list<'o>(
    metadata: Value,
    items: impl IntoIterator<Item = &'o Value>,
    version: &str,
) -> Value {
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "items": items.into_iter().map(|o| partial_metadata(o, version)).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> Value {
        json!({"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1",
            "metadata": {"name": "fast", "resourceVersion": "5",
                "creationTimestamp": "2026-11-22T07:00:00Z"},
            "provisioner": "p"})
    }

    #[test]
    fn the_default_table_has_name_and_creation_time() {
        let tables = Tables::new(&[], IncludeObject::Metadata, "v1", 0);
        let t = tables.table(json!({"resourceVersion": "9"}), [&object()], true);
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(t["columnDefinitions"][0]["name"], "Name");
        assert_eq!(t["columnDefinitions"][0]["format"], "name");
        assert_eq!(t["columnDefinitions"][1]["name"], "Created At");
        assert_eq!(t["columnDefinitions"][1]["type"], "date");
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["fast", "2026-11-22T07:00:00Z"])
        );
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(t["rows"][0]["object"]["metadata"]["resourceVersion"], "5");
        assert_eq!(t["metadata"]["resourceVersion"], "9");
    }

    #[test]
    fn rows_carry_what_include_object_asks_for() {
        let obj = object();
        let none = Tables::new(&[], IncludeObject::None, "v1beta1", 0);
        let t = none.table(json!({}), [&obj], false);
        assert!(t["rows"][0].get("object").is_none());
        assert_eq!(t["columnDefinitions"], json!([]));
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
        let whole = Tables::new(&[], IncludeObject::Object, "v1", 0);
        assert_eq!(whole.row(&obj)["object"], obj);
        assert!(IncludeObject::parse(Some("Everything")).is_err());
        assert_eq!(IncludeObject::parse(None).unwrap(), IncludeObject::Metadata);
    }

    #[test]
    fn declared_columns_compute_their_cells() {
        let columns = [
            Column::name(),
            Column::new("Provisioner", "string", "", |o, _| o["provisioner"].clone()),
            Column::age(),
        ];
        let tables = Tables::new(&columns, IncludeObject::None, "v1", 1_795_330_800 + 600);
        assert_eq!(tables.row(&object())["cells"], json!(["fast", "p", "10m"]));
    }
}
