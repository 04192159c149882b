//! Decoding request bodies into typed objects (with upstream checks of apiVersion and kind
//! and of unknown fields) and encoding objects and lists.

use std::sync::Arc;

use capstan_meta::{ApiError, ResourceDescriptor};
use capstan_watch::{CachedJson, CachedObject};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::options::FieldValidation;
use crate::payload::Payload;

/// A body's `apiVersion` and `kind`.
#[derive(Default)]
struct TypePeek {
    api_version: Option<String>,
    kind: Option<String>,
}

impl TypePeek {
    /// Reads `body`'s `apiVersion` and `kind` members, stopping once both are read: clients
    /// write them first, and the decode that follows reads (and judges) the rest.
    fn read(body: &[u8]) -> serde_json::Result<Self> {
        let mut peek = TypePeek::default();
        let mut complete = false;
        let read = serde::de::Deserializer::deserialize_map(
            &mut serde_json::Deserializer::from_slice(body),
            PeekVisitor {
                peek: &mut peek,
                complete: &mut complete,
            },
        );
        match read {
            // Stopping early leaves the object open, which the parser reports.
            Err(_) if complete => Ok(peek),
            Err(err) => Err(err),
            Ok(()) => Ok(peek),
        }
    }
}

/// Fills a [`TypePeek`]; `complete` once both members were read.
struct PeekVisitor<'p> {
    peek: &'p mut TypePeek,
    complete: &'p mut bool,
}

/// A member name of a body's top level, as [`PeekVisitor`] tells them apart.
enum PeekKey {
    ApiVersion,
    Kind,
    Other,
}

impl<'de> Deserialize<'de> for PeekKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = PeekKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E>(self, key: &str) -> Result<PeekKey, E> {
                Ok(match key {
                    "apiVersion" => PeekKey::ApiVersion,
                    "kind" => PeekKey::Kind,
                    _ => PeekKey::Other,
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> serde::de::Visitor<'de> for PeekVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (mut api_version, mut kind) = (false, false);
        while let Some(key) = map.next_key::<PeekKey>()? {
            match key {
                PeekKey::ApiVersion => {
                    self.peek.api_version = map.next_value()?;
                    api_version = true;
                }
                PeekKey::Kind => {
                    self.peek.kind = map.next_value()?;
                    kind = true;
                }
                PeekKey::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            if api_version && kind {
                *self.complete = true;
                return Ok(());
            }
        }
        Ok(())
    }
}

fn format_path(path: &serde_ignored::Path<'_>, out: &mut String) {
    use serde_ignored::Path;
    match path {
        Path::Root => {}
        Path::Seq { parent, index } => {
            format_path(parent, out);
            out.push_str(&format!("[{index}]"));
        }
        Path::Map { parent, key } => {
            format_path(parent, out);
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(key);
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => format_path(parent, out),
    }
}

/// Checks that a body's `apiVersion` and `kind`, when present, are those of the resource.
pub(crate) fn check_type(body: &[u8], d: &ResourceDescriptor) -> Result<(), ApiError> {
    let peek = TypePeek::read(body).map_err(|e| {
        ApiError::bad_request(format!("the request body is not a valid JSON object: {e}"))
    })?;
    check_type_meta(peek.api_version.as_deref(), peek.kind.as_deref(), d)
}

/// [`check_type`] for a document already parsed (a patched object).
pub(crate) fn check_type_value(
    doc: &serde_json::Value,
    d: &ResourceDescriptor,
) -> Result<(), ApiError> {
    let field = |name: &str| -> Result<Option<&str>, ApiError> {
        match doc.get(name) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(ApiError::bad_request(format!(
                "{name} must be a string, found {other}"
            ))),
        }
    };
    check_type_meta(field("apiVersion")?, field("kind")?, d)
}

fn check_type_meta(
    api_version: Option<&str>,
    kind: Option<&str>,
    d: &ResourceDescriptor,
) -> Result<(), ApiError> {
    let want_version = d.api_version();
    if let Some(v) = api_version.filter(|v| !v.is_empty())
        && v != want_version
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({v}) does not match the expected API version ({want_version})"
        )));
    }
    if let Some(k) = kind.filter(|k| !k.is_empty())
        && k != d.kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind ({})",
            d.kind
        )));
    }
    Ok(())
}

/// Where a JSON object's `metadata.managedFields` lie in its text (`None`: absent, `null`,
/// or the text is no object). Reading stops after `metadata` (which clients write before the
/// spec and status).
fn managed_fields_span(json: &[u8]) -> Option<std::ops::Range<usize>> {
    #[derive(Deserialize)]
    struct Metadata<'a> {
        #[serde(borrow, rename = "managedFields")]
        managed_fields: Option<&'a serde_json::value::RawValue>,
    }
    /// Reads the top level's members up to `metadata`.
    struct Visitor<'o, 'a>(&'o mut Option<Option<&'a serde_json::value::RawValue>>);
    impl<'de> serde::de::Visitor<'de> for Visitor<'_, 'de> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "metadata" {
                    let metadata: Option<Metadata<'de>> = map.next_value()?;
                    *self.0 = Some(metadata.and_then(|m| m.managed_fields));
                    return Ok(());
                }
                map.next_value::<serde::de::IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut found = None;
    // Stopping after `metadata` leaves the object open, which the parser reports: what was
    // read stands.
    let _ = serde::de::Deserializer::deserialize_map(
        &mut serde_json::Deserializer::from_slice(json),
        Visitor(&mut found),
    );
    let raw = found??.get().as_bytes();
    let start = raw.as_ptr() as usize - json.as_ptr() as usize;
    Some(start..start + raw.len())
}

/// `body` (an update's) with its managedFields replaced by `null` when they are, byte for
/// byte, those of `stored` (the stored object's JSON): a client that sends the object back
/// as it read it (kube-rs, the Python client) then costs no reading of them, and the update
/// records its manager over the stored entries as it does for equal entries read (see
/// `FieldTracker::record`). Any other body is kept.
pub(crate) fn without_echoed_managed_fields<'b>(
    body: &'b [u8],
    stored: &[u8],
) -> std::borrow::Cow<'b, [u8]> {
    let echoed = managed_fields_span(body).filter(|sent| {
        managed_fields_span(stored).is_some_and(|kept| body[sent.clone()] == stored[kept])
    });
    match echoed {
        Some(sent) => {
            let mut out = Vec::with_capacity(body.len());
            out.extend_from_slice(&body[..sent.start]);
            out.extend_from_slice(b"null");
            out.extend_from_slice(&body[sent.end..]);
            std::borrow::Cow::Owned(out)
        }
        None => std::borrow::Cow::Borrowed(body),
    }
}

/// Decodes `body` as the resource's object type. Unknown fields become warnings or, with
/// `Strict`, a 400; type errors are a 400 naming the kind.
pub(crate) fn decode<T: DeserializeOwned>(
    body: &[u8],
    d: &ResourceDescriptor,
    validation: FieldValidation,
) -> Result<(T, Vec<String>), ApiError> {
    decode_pruned(body, d, validation, |_| Vec::new(), checked::<T>)
}

/// [`decode`], with `prune` removing (and naming) fields the type's schema does not declare
/// from the decoded object; they count as unknown fields too. `checked` decodes (see
/// [`Checked`]).
pub(crate) fn decode_pruned<T>(
    body: &[u8],
    d: &ResourceDescriptor,
    validation: FieldValidation,
    prune: impl FnOnce(&mut T) -> Vec<String>,
    checked: Checked<T>,
) -> Result<(T, Vec<String>), ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the body of the request was empty"));
    }
    check_type(body, d)?;
    decode_checked(body, d, validation, prune, Positions::Keep, checked)
}

/// Decodes a JSON value (a patched object) like [`decode`].
pub(crate) fn decode_value<T: DeserializeOwned>(
    value: serde_json::Value,
    d: &ResourceDescriptor,
    validation: FieldValidation,
) -> Result<(T, Vec<String>), ApiError> {
    decode_value_pruned(value, d, validation, |_| Vec::new(), checked::<T>)
}

/// [`decode_value`] with pruning, as [`decode_pruned`]. The document is decoded from its bytes,
/// through the same deserializer as request bodies, so that every type's deserializing code
/// exists once rather than once more for `serde_json::Value` (a patch pays one serialization).
pub(crate) fn decode_value_pruned<T>(
    value: serde_json::Value,
    d: &ResourceDescriptor,
    validation: FieldValidation,
    prune: impl FnOnce(&mut T) -> Vec<String>,
    checked: Checked<T>,
) -> Result<(T, Vec<String>), ApiError> {
    let body = serde_json::to_vec(&value).map_err(|e| cannot_handle(d, &e, Positions::Omit))?;
    decode_checked(&body, d, validation, prune, Positions::Omit, checked)
}

/// A typed object from a JSON document (an admitted or converted object), through its bytes:
/// see [`decode_value_pruned`] for why not `serde_json::from_value`.
pub(crate) fn from_document<T: DeserializeOwned>(
    doc: &serde_json::Value,
) -> Result<T, serde_json::Error> {
    serde_json::from_slice(&serde_json::to_vec(doc)?)
}

/// Whether a decoding error names its line and column: not for a document serialized here,
/// whose positions mean nothing to the client.
#[derive(Clone, Copy)]
enum Positions {
    Keep,
    Omit,
}

/// Decodes a whole JSON body as a `T`, telling `unknown` of every field `T` does not declare.
/// A function pointer, so that a store can take it where it is built (see
/// `kind::KindJson`).
pub(crate) type Checked<T> =
    fn(&[u8], &mut dyn FnMut(serde_ignored::Path<'_>)) -> serde_json::Result<T>;

/// The [`Checked`] decoder of `T`.
pub(crate) fn checked<T: DeserializeOwned>(
    body: &[u8],
    unknown: &mut dyn FnMut(serde_ignored::Path<'_>),
) -> serde_json::Result<T> {
    // One callback type for every `T`: serde_ignored's wrappers, and the deserializing code
    // of every type nested in `T` (ObjectMeta, PodSpec, ...), are generic over it, so a
    // closure type per `T` compiled them once per resource kind.
    let mut de = serde_json::Deserializer::from_slice(body);
    let obj = serde_ignored::deserialize(&mut de, unknown)?;
    de.end()?;
    Ok(obj)
}

fn decode_checked<T>(
    body: &[u8],
    d: &ResourceDescriptor,
    validation: FieldValidation,
    prune: impl FnOnce(&mut T) -> Vec<String>,
    positions: Positions,
    checked: Checked<T>,
) -> Result<(T, Vec<String>), ApiError> {
    let mut unknown = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| {
        let mut s = String::new();
        format_path(&path, &mut s);
        unknown.push(s);
    };
    let mut obj = checked(body, &mut record).map_err(|e| cannot_handle(d, &e, positions))?;
    unknown.extend(prune(&mut obj));
    unknown_fields(unknown, validation).map(|w| (obj, w))
}

fn cannot_handle(d: &ResourceDescriptor, e: &serde_json::Error, positions: Positions) -> ApiError {
    let mut message = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    if matches!(positions, Positions::Omit) && message.ends_with(&position) {
        message.truncate(message.len() - position.len());
    }
    ApiError::bad_request(format!(
        "{} in version \"{}\" cannot be handled as a {}: {message}",
        d.kind, d.version, d.kind
    ))
}

fn unknown_fields(
    unknown: Vec<String>,
    validation: FieldValidation,
) -> Result<Vec<String>, ApiError> {
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    let messages: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field \"{p}\""))
        .collect();
    match validation {
        FieldValidation::Ignore => Ok(Vec::new()),
        FieldValidation::Warn => Ok(messages),
        FieldValidation::Strict => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            messages.join(", ")
        ))),
    }
}

/// A list body: `{"kind":…,"apiVersion":…,"metadata":{…},"items":[…]}` from items already
/// encoded (they are not copied here; see [`Payload`]).
pub(crate) fn encode_list(
    d: &ResourceDescriptor,
    resource_version: &str,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    items: Vec<CachedJson>,
    cached: Vec<Arc<CachedObject>>,
) -> Payload {
    let mut head = Vec::with_capacity(160);
    head.extend_from_slice(b"{\"kind\":");
    push_json_str(&mut head, &d.list_kind());
    head.extend_from_slice(b",\"apiVersion\":");
    push_json_str(&mut head, &d.api_version());
    head.extend_from_slice(b",\"metadata\":{\"resourceVersion\":");
    push_json_str(&mut head, resource_version);
    if let Some(token) = continue_token {
        head.extend_from_slice(b",\"continue\":");
        push_json_str(&mut head, token);
    }
    if let Some(n) = remaining {
        head.extend_from_slice(format!(",\"remainingItemCount\":{n}").as_bytes());
    }
    head.extend_from_slice(b"},\"items\":[");
    Payload::List {
        head: head.into(),
        items,
        cached,
        bare_items: !d.custom,
    }
}

fn push_json_str(out: &mut Vec<u8>, s: &str) {
    // Serializing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_meta::Strategy;
    use k8s_openapi::api::storage::v1::StorageClass;

    fn desc() -> ResourceDescriptor {
        capstan_api::StorageClassStrategy.descriptor()
    }

    #[test]
    fn unknown_fields_by_mode() {
        let body = br#"{"metadata":{"name":"a","bogus":1},"provisioner":"p","extra":{"x":1},"allowedTopologies":[{"oops":1}]}"#;
        let (_, warnings) = decode::<StorageClass>(body, &desc(), FieldValidation::Warn).unwrap();
        assert_eq!(
            warnings,
            [
                r#"unknown field "metadata.bogus""#,
                r#"unknown field "extra""#,
                r#"unknown field "allowedTopologies[0].oops""#
            ]
        );
        assert!(
            decode::<StorageClass>(body, &desc(), FieldValidation::Ignore)
                .unwrap()
                .1
                .is_empty()
        );
        let err = decode::<StorageClass>(body, &desc(), FieldValidation::Strict).unwrap_err();
        assert_eq!(err.code(), 400);
        assert!(
            err.message
                .starts_with("strict decoding error: unknown field")
        );
    }

    #[test]
    fn the_type_is_read_from_the_leading_members() {
        let d = desc();
        // Read wherever they are; the members after them are left to the decode.
        for body in [
            &br#"{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","provisioner":"p"}"#[..],
            br#"{"provisioner":"p","kind":"StorageClass","x":[1,{"y":2}],"apiVersion":"storage.k8s.io/v1"}"#,
            br#"{"kind":"StorageClass","apiVersion":"storage.k8s.io/v1", not json"#,
            br#"{"provisioner":"p"}"#,
            br#"{"kind":null,"apiVersion":""}"#,
        ] {
            check_type(body, &d).unwrap_or_else(|e| panic!("{}: {e:?}", String::from_utf8_lossy(body)));
        }
        let refused = |body: &[u8]| check_type(body, &d).unwrap_err().message;
        assert_eq!(
            refused(br#"{"x":{"kind":"Pod"},"kind":"Pod","apiVersion":"storage.k8s.io/v1"}"#),
            "the kind in the data (Pod) does not match the expected kind (StorageClass)"
        );
        assert_eq!(
            refused(br#"{"apiVersion":"v1","provisioner":"p"}"#),
            "the API version in the data (v1) does not match the expected API version (storage.k8s.io/v1)"
        );
        for body in [
            &b"{not json"[..],
            br#"{"provisioner":"p","apiVersion":"v1""#,
            br#"{"kind":5,"apiVersion":"v1"}"#,
            b"[]",
        ] {
            assert!(
                refused(body).starts_with("the request body is not a valid JSON object: "),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn managed_fields_sent_back_as_stored_are_not_read() {
        let stored = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"annotations":{"note":"\"managedFields\":[1]"},"managedFields":[{"fieldsV1":{"f:metadata":{}},"manager":"m"}],"name":"p"},"spec":{}}"#;
        let echoed = without_echoed_managed_fields(stored, stored);
        assert_eq!(
            std::str::from_utf8(&echoed).unwrap(),
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"annotations":{"note":"\"managedFields\":[1]"},"managedFields":null,"name":"p"},"spec":{}}"#
        );
        // Anything else is read as sent: other entries, another order, none, broken text,
        // none stored.
        let other = br#"{"metadata":{"managedFields":[{"manager":"n"}],"name":"p"}}"#;
        let reordered = br#"{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:metadata":{}}}],"name":"p"}}"#;
        let none = br#"{"metadata":{"name":"p"}}"#;
        let broken =
            br#"{"metadata":{"managedFields":[{"fieldsV1":{"f:metadata":{}},"manager":"m"}]"#;
        for body in [&other[..], reordered, none, broken] {
            assert!(matches!(
                without_echoed_managed_fields(body, stored),
                std::borrow::Cow::Borrowed(_)
            ));
        }
        assert!(matches!(
            without_echoed_managed_fields(stored, none),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn type_and_syntax_errors() {
        let cases: [&[u8]; 5] = [
            b"{not json",
            br#"{"apiVersion":"v1","kind":"StorageClass"}"#,
            br#"{"apiVersion":"storage.k8s.io/v1","kind":"Pod"}"#,
            br#"{"provisioner":5}"#,
            b"{} trailing",
        ];
        for body in cases {
            let err = decode::<StorageClass>(body, &desc(), FieldValidation::Warn).unwrap_err();
            assert_eq!(err.code(), 400, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn documents_decode_as_bodies_do_without_positions() {
        let doc = serde_json::json!({"metadata": {"name": "a", "bogus": 1}, "provisioner": "p"});
        let (sc, warnings) =
            decode_value::<StorageClass>(doc, &desc(), FieldValidation::Warn).unwrap();
        assert_eq!(sc.provisioner, "p");
        assert_eq!(warnings, [r#"unknown field "metadata.bogus""#]);

        let body = br#"{"provisioner":5}"#;
        let from_body = decode::<StorageClass>(body, &desc(), FieldValidation::Warn).unwrap_err();
        assert!(
            from_body.message.contains(" at line 1 column "),
            "{}",
            from_body.message
        );
        let doc = serde_json::json!({"provisioner": 5});
        let from_doc =
            decode_value::<StorageClass>(doc, &desc(), FieldValidation::Warn).unwrap_err();
        assert_eq!(from_doc.code(), 400);
        assert!(
            from_doc
                .message
                .starts_with("StorageClass in version \"v1\" cannot be handled")
                && !from_doc.message.contains(" at line "),
            "{}",
            from_doc.message
        );
    }

    #[test]
    fn list_encoding_is_valid_json() {
        let list = encode_list(
            &desc(),
            "7",
            Some("tok\"en"),
            Some(3),
            vec!["{\"a\":1}".into(), "{}".into()],
            Vec::new(),
        );
        let v: serde_json::Value = serde_json::from_slice(&list.into_bytes()).unwrap();
        assert_eq!(v["kind"], "StorageClassList");
        assert_eq!(v["metadata"]["continue"], "tok\"en");
        assert_eq!(v["items"].as_array().unwrap().len(), 2);
    }
}
