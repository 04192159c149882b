//! `events.k8s.io/v1` Events. Upstream stores them as `v1` Events (one collection, one
//! storage key per event), so they are served by converting to and from the `v1` form: what a
//! client writes in one version, clients of the other read and watch.

use capstan_meta::ResourceDescriptor;
use capstan_meta::columns::{Column, since, text_or};
use serde_json::{Map, Value};

/// Field names: `events.k8s.io/v1` on the left, `v1` on the right. The others (metadata,
/// eventTime, series, reportingInstance, action, reason, related, type) keep their names.
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

fn rename(doc: Value, to_core: bool, api_version: &str) -> Value {
    let Value::Object(fields) = doc else {
        return doc;
    };
    let mut out = Map::new();
    for (key, value) in fields {
        let renamed = RENAMED
            .iter()
            .find(|(new, old)| if to_core { key == *new } else { key == *old })
            .map(|(new, old)| if to_core { *old } else { *new });
        out.insert(renamed.map_or(key, str::to_string), value);
    }
    out.insert("apiVersion".into(), api_version.into());
    out.insert("kind".into(), "Event".into());
    Value::Object(out)
}

/// An `events.k8s.io/v1` Event as the `v1` Event it is stored as.
pub fn to_core(doc: Value) -> Value {
    rename(doc, true, "v1")
}

/// A stored `v1` Event as an `events.k8s.io/v1` Event.
pub fn from_core(doc: Value) -> Value {
    rename(doc, false, "events.k8s.io/v1")
}

/// The descriptor of `events.k8s.io/v1` events.
pub fn descriptor() -> ResourceDescriptor {
    let mut d = crate::describe::Names {
        group: "events.k8s.io",
        kind: "Event",
        resource: "events",
        short_names: &["ev"],
        namespaced: true,
    }
    .v1();
    d.columns = columns();
    // Its labels are the stored `v1` Event's fields under their events.k8s.io names.
    let mut labels = capstan_meta::FieldLabels::of_kind(&["reason", "type"]);
    for part in [
        "kind",
        "namespace",
        "name",
        "uid",
        "apiVersion",
        "resourceVersion",
        "fieldPath",
    ] {
        labels = labels.alias(
            &format!("regarding.{part}"),
            &format!("involvedObject.{part}"),
        );
    }
    d.field_labels = labels.alias("reportingController", "reportingComponent");
    d
}

/// The columns kubectl shows for events, read from the `events.k8s.io/v1` form.
fn columns() -> Vec<Column> {
    vec![
        Column::new(
            "Last Seen",
            "string",
            "When the event was last seen.",
            |o, now| {
                let t = o
                    .pointer("/series/lastObservedTime")
                    .or_else(|| o.get("deprecatedLastTimestamp").filter(|v| v.is_string()))
                    .or_else(|| o.get("eventTime").filter(|v| v.is_string()));
                Value::String(since(t, now))
            },
        ),
        Column::new("Type", "string", "Normal or Warning.", |o, _| {
            text_or(o, "/type", "")
        }),
        Column::new("Reason", "string", "Why the event happened.", |o, _| {
            text_or(o, "/reason", "")
        }),
        Column::new(
            "Object",
            "string",
            "The object the event is about.",
            |o, _| {
                let kind = o["regarding"]["kind"]
                    .as_str()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let name = o["regarding"]["name"].as_str().unwrap_or("");
                Value::String(format!("{kind}/{name}"))
            },
        ),
        Column::new("Message", "string", "What happened.", |o, _| {
            text_or(o, "/note", "")
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_two_forms_map_field_for_field() {
        let new = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "default"},
            "eventTime": "2026-11-22T07:00:00.000001Z", "series": {"count": 2, "lastObservedTime": "2026-11-22T07:00:01.000000Z"},
            "reportingController": "capstan-scheduler", "reportingInstance": "i", "action": "Binding",
            "reason": "Scheduled", "regarding": {"kind": "Pod", "name": "p"}, "related": {"kind": "Node", "name": "n"},
            "note": "bound", "type": "Normal", "deprecatedSource": {"component": "c"},
            "deprecatedFirstTimestamp": "2026-11-22T07:00:00Z", "deprecatedLastTimestamp": "2026-11-22T07:00:01Z",
            "deprecatedCount": 3});
        let core = to_core(new.clone());
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"]["name"], "p");
        assert_eq!(core["message"], "bound");
        assert_eq!(core["reportingComponent"], "capstan-scheduler");
        assert_eq!(core["count"], 3);
        assert_eq!(core["series"]["count"], 2);
        assert!(core.get("note").is_none());
        assert_eq!(from_core(core), new);
    }
}
