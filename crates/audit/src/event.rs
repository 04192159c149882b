//! Audit events (`audit.k8s.io/v1` `Event`) and their two written forms: JSON and the
//! one-line legacy format.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use jiff::Timestamp;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::policy::{Level, Stage};

/// The group version events are written in.
pub const API_VERSION: &str = "audit.k8s.io/v1";

/// A user as events record it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct User {
    /// The name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub username: String,
    /// The UID.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The groups.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Extra attributes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl From<&capstan_auth::UserInfo> for User {
    fn from(u: &capstan_auth::UserInfo) -> Self {
        Self {
            username: u.name.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        }
    }
}

/// The object a request is about.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// The resource.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    /// The namespace.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's UID, as the request body gives it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The API group.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// The API version.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The object's resourceVersion, as the request body gives it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// The subresource.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

impl ObjectRef {
    /// Fills the namespace, name, UID and resourceVersion this reference lacks from the
    /// `metadata` of `body` (a request's JSON object), as upstream completes references from
    /// the objects of creates and updates. Says whether anything changed.
    pub fn complete_from(&mut self, body: &[u8]) -> bool {
        #[derive(serde::Deserialize)]
        struct Object {
            metadata: Option<Metadata>,
        }
        #[derive(serde::Deserialize, Default)]
        #[serde(default, rename_all = "camelCase")]
        struct Metadata {
            namespace: String,
            name: String,
            uid: String,
            resource_version: String,
        }
        let Some(meta) = serde_json::from_slice::<Object>(body)
            .ok()
            .and_then(|o| o.metadata)
        else {
            return false;
        };
        let mut changed = false;
        for (mine, theirs) in [
            (&mut self.namespace, meta.namespace),
            (&mut self.name, meta.name),
            (&mut self.uid, meta.uid),
            (&mut self.resource_version, meta.resource_version),
        ] {
            if mine.is_empty() && !theirs.is_empty() {
                *mine = theirs;
                changed = true;
            }
        }
        changed
    }
}

/// What is known of a request when it arrives; shared by all its events.
#[derive(Debug, Clone)]
pub struct RequestRecord {
    /// The level the policy chose.
    pub level: Level,
    /// The request's audit ID (its `Audit-ID` header).
    pub audit_id: String,
    /// The path and query.
    pub request_uri: String,
    /// The authorization verb.
    pub verb: String,
    /// The authenticated user.
    pub user: User,
    /// The user it acts as (`Impersonate-*`).
    pub impersonated_user: Option<User>,
    /// The client's address, then the addresses of `X-Forwarded-For`.
    pub source_ips: Vec<String>,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The object, for resource requests.
    pub object_ref: Option<ObjectRef>,
    /// When the request arrived.
    pub received: Timestamp,
    /// The record's fields as JSON, encoded once for all the request's events (leave
    /// default; changing a field after an event was encoded must reset it).
    pub encoded: OnceLock<Box<[u8]>>,
}

/// The status of a response as events record it (a `Status` without its type fields).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ResponseStatus {
    /// Always empty, as upstream writes it.
    pub metadata: Empty,
    /// `Success` or `Failure`, for Status answers.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// The message.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The reason.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// The HTTP status code.
    pub code: u16,
}

/// An empty JSON object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Empty {}

impl ResponseStatus {
    /// A status of `code` only (what successes record).
    pub fn code(code: u16) -> Self {
        Self {
            code,
            ..Self::default()
        }
    }

    /// The status of an error answer: its `Status` body's fields, or the code alone when the
    /// body is not one.
    pub fn from_status_body(code: u16, body: &[u8]) -> Self {
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Status {
            status: String,
            message: String,
            reason: String,
            details: Option<serde_json::Value>,
        }
        let s: Status = serde_json::from_slice(body).unwrap_or_default();
        Self {
            metadata: Empty {},
            status: s.status,
            message: s.message,
            reason: s.reason,
            details: s.details,
            code,
        }
    }
}

/// One audit event: a request at one stage.
#[derive(Debug, Clone)]
pub struct Event {
    /// The request.
    pub request: Arc<RequestRecord>,
    /// The stage.
    pub stage: Stage,
    /// When the stage was reached.
    pub stage_timestamp: Timestamp,
    /// The answer's status (from ResponseStarted on).
    pub response_status: Option<ResponseStatus>,
    /// The request's body (level Request and above).
    pub request_object: Option<Arc<RawValue>>,
    /// The response's body (level RequestResponse).
    pub response_object: Option<Arc<RawValue>>,
    /// Annotations from authorization and admission.
    pub annotations: Option<Arc<BTreeMap<String, String>>>,
}

/// The fields every event of a request shares, between `stage` and `responseStatus`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shared<'a> {
    #[serde(rename = "requestURI")]
    request_uri: &'a str,
    verb: &'a str,
    user: &'a User,
    #[serde(skip_serializing_if = "Option::is_none")]
    impersonated_user: Option<&'a User>,
    #[serde(rename = "sourceIPs", skip_serializing_if = "<[String]>::is_empty")]
    source_ips: &'a [String],
    #[serde(skip_serializing_if = "str::is_empty")]
    user_agent: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    object_ref: Option<&'a ObjectRef>,
}

/// The fields of one stage's event, after the shared ones.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Stagewise<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    response_status: Option<&'a ResponseStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_object: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_object: Option<&'a RawValue>,
    request_received_timestamp: MicroTime,
    stage_timestamp: MicroTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<&'a BTreeMap<String, String>>,
}

/// `value`'s JSON object without its braces, appended to `out`.
fn append_fields(out: &mut Vec<u8>, value: &impl Serialize) {
    let start = out.len();
    // Writing into a Vec cannot fail, and every field serializes.
    let _ = serde_json::to_writer(&mut *out, value);
    // `{` at the start and `}` at the end go; what is between is `"k":v,...`.
    out.remove(start);
    out.pop();
}

/// A timestamp written with microseconds, as upstream's `MicroTime`.
struct MicroTime(Timestamp);

impl Serialize for MicroTime {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 27];
        s.serialize_str(rfc3339_micros(self.0, &mut buf))
    }
}

/// `ts` as `2006-01-02T15:04:05.000000Z` in `buf` (the civil date computed directly: a
/// general formatter costs more than the rest of an event's encoding).
pub fn rfc3339_micros(ts: Timestamp, buf: &mut [u8; 27]) -> &str {
    let micros = ts.as_microsecond();
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400) as u32;
    // Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = (yoe + era * 400 + i64::from(month <= 2)).clamp(0, 9999) as u32;
    let mut put = |at: usize, value: u32, width: usize| {
        let mut v = value;
        for i in (0..width).rev() {
            buf[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, year, 4);
    put(5, month, 2);
    put(8, day, 2);
    put(11, of_day / 3600, 2);
    put(14, of_day / 60 % 60, 2);
    put(17, of_day % 60, 2);
    put(20, frac, 6);
    buf[4] = b'-';
    buf[7] = b'-';
    buf[10] = b'T';
    buf[13] = b':';
    buf[16] = b':';
    buf[19] = b'.';
    buf[26] = b'Z';
    std::str::from_utf8(buf).unwrap_or_default()
}

impl Event {
    /// Appends the event's JSON (one line, no newline) to `out`; the fields shared by the
    /// request's events are encoded once.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let r = &*self.request;
        out.extend_from_slice(b"{\"kind\":\"Event\",\"apiVersion\":\"");
        out.extend_from_slice(API_VERSION.as_bytes());
        out.extend_from_slice(b"\",\"level\":\"");
        out.extend_from_slice(r.level.as_str().as_bytes());
        out.extend_from_slice(b"\",\"auditID\":");
        let _ = serde_json::to_writer(&mut *out, &r.audit_id);
        out.extend_from_slice(b",\"stage\":\"");
        out.extend_from_slice(self.stage.as_str().as_bytes());
        out.extend_from_slice(b"\",");
        let shared = r.encoded.get_or_init(|| {
            let mut fields = Vec::with_capacity(256);
            append_fields(
                &mut fields,
                &Shared {
                    request_uri: &r.request_uri,
                    verb: &r.verb,
                    user: &r.user,
                    impersonated_user: r.impersonated_user.as_ref(),
                    source_ips: &r.source_ips,
                    user_agent: &r.user_agent,
                    object_ref: r.object_ref.as_ref(),
                },
            );
            fields.into_boxed_slice()
        });
        out.extend_from_slice(shared);
        out.push(b',');
        append_fields(
            out,
            &Stagewise {
                response_status: self.response_status.as_ref(),
                request_object: self.request_object.as_deref(),
                response_object: self.response_object.as_deref(),
                request_received_timestamp: MicroTime(r.received),
                stage_timestamp: MicroTime(self.stage_timestamp),
                annotations: self.annotations.as_deref().filter(|a| !a.is_empty()),
            },
        );
        out.push(b'}');
    }

    /// The event as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(512);
        self.write_json(&mut out);
        out
    }

    /// The event without its request and response bodies (what truncation keeps).
    pub fn without_bodies(&self) -> Event {
        Event {
            request_object: None,
            response_object: None,
            ..self.clone()
        }
    }

    /// The one-line legacy form (`--audit-log-format=legacy`), no newline.
    pub fn legacy_line(&self) -> String {
        let r = &*self.request;
        let (user, groups) = if r.user.username.is_empty() {
            ("<none>".to_string(), "<none>".to_string())
        } else if r.user.groups.is_empty() {
            (r.user.username.clone(), "<none>".to_string())
        } else {
            (r.user.username.clone(), quoted_list(&r.user.groups))
        };
        let (as_user, as_groups) = match &r.impersonated_user {
            Some(u) if u.groups.is_empty() => (u.username.clone(), "<lookup>".to_string()),
            Some(u) => (u.username.clone(), quoted_list(&u.groups)),
            None => ("<self>".to_string(), "<lookup>".to_string()),
        };
        let namespace = r
            .object_ref
            .as_ref()
            .map(|o| o.namespace.as_str())
            .filter(|n| !n.is_empty())
            .unwrap_or("<none>");
        let response = self
            .response_status
            .as_ref()
            .map(|s| s.code.to_string())
            .unwrap_or_else(|| "<deferred>".to_string());
        let ip = r
            .source_ips
            .first()
            .map(String::as_str)
            .unwrap_or("<unknown>");
        format!(
            "{} AUDIT: id={} stage={} ip={} method={} user={} groups={} as={} asgroups={} \
             user-agent={} namespace={} uri={} response=\"{}\"",
            r.received.strftime("%Y-%m-%dT%H:%M:%S%.fZ"),
            go_quote(&r.audit_id),
            go_quote(self.stage.as_str()),
            go_quote(ip),
            go_quote(&r.verb),
            go_quote(&user),
            go_quote(&groups),
            go_quote(&as_user),
            go_quote(&as_groups),
            go_quote(&r.user_agent),
            go_quote(namespace),
            go_quote(&r.request_uri),
            response,
        )
    }
}

fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|g| go_quote(g))
        .collect::<Vec<_>>()
        .join(",")
}

/// `text` in double quotes with Go's escapes (`%q`).
fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `json` without `metadata.managedFields`, in the object and in a list's items
/// (`omitManagedFields`); `json` itself when it is not an object.
pub fn strip_managed_fields(json: &RawValue) -> Option<Arc<RawValue>> {
    let mut doc: serde_json::Value = serde_json::from_str(json.get()).ok()?;
    let strip = |obj: &mut serde_json::Value| {
        if let Some(meta) = obj.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            meta.remove("managedFields");
        }
    };
    strip(&mut doc);
    if let Some(items) = doc.get_mut("items").and_then(|i| i.as_array_mut()) {
        items.iter_mut().for_each(strip);
    }
    let text = serde_json::to_string(&doc).ok()?;
    RawValue::from_string(text).ok().map(Arc::from)
}

/// `bytes` as a JSON value for an event; `None` when they are not JSON.
pub fn raw_json(bytes: &[u8]) -> Option<Arc<RawValue>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let raw: Box<RawValue> = serde_json::from_str::<&RawValue>(text).ok()?.to_owned();
    Some(Arc::from(raw))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample(stage: Stage) -> Event {
        let received: Timestamp = "2026-11-25T10:00:00.123456Z".parse().unwrap();
        Event {
            request: Arc::new(RequestRecord {
                level: Level::RequestResponse,
                audit_id: "0c1d2e3f-0000-4000-8000-000000000001".into(),
                request_uri: "/api/v1/namespaces/default/configmaps?fieldManager=kubectl".into(),
                verb: "create".into(),
                user: User {
                    username: "alice".into(),
                    groups: vec!["dev".into(), "system:authenticated".into()],
                    ..User::default()
                },
                impersonated_user: None,
                source_ips: vec!["127.0.0.1".into()],
                user_agent: "kubectl/v1.33.0".into(),
                object_ref: Some(ObjectRef {
                    resource: "configmaps".into(),
                    namespace: "default".into(),
                    api_version: "v1".into(),
                    ..ObjectRef::default()
                }),
                received,
                encoded: OnceLock::new(),
            }),
            stage,
            stage_timestamp: received,
            response_status: Some(ResponseStatus::code(201)),
            request_object: raw_json(br#"{"kind":"ConfigMap","metadata":{"name":"x"}}"#),
            response_object: None,
            annotations: Some(Arc::new(BTreeMap::from([(
                "authorization.k8s.io/decision".to_string(),
                "allow".to_string(),
            )]))),
        }
    }

    #[test]
    fn json_has_upstreams_fields() {
        let ev = sample(Stage::ResponseComplete);
        let first = sample(Stage::RequestReceived);
        let first = Event {
            request: ev.request.clone(),
            ..first
        };
        let v: serde_json::Value = serde_json::from_slice(&first.to_json()).unwrap();
        assert_eq!(v["stage"], "RequestReceived");
        // The second event reuses the shared fields the first encoded.
        assert!(ev.request.encoded.get().is_some());
        let v: serde_json::Value = serde_json::from_slice(&ev.to_json()).unwrap();
        assert_eq!(v["kind"], "Event");
        assert_eq!(v["apiVersion"], "audit.k8s.io/v1");
        assert_eq!(v["auditID"], "0c1d2e3f-0000-4000-8000-000000000001");
        assert_eq!(v["stage"], "ResponseComplete");
        assert_eq!(v["requestURI"], ev.request.request_uri);
        assert_eq!(v["user"]["groups"][1], "system:authenticated");
        assert_eq!(v["sourceIPs"][0], "127.0.0.1");
        assert_eq!(v["objectRef"]["resource"], "configmaps");
        assert!(v["objectRef"].get("name").is_none());
        assert_eq!(
            v["responseStatus"],
            serde_json::json!({"metadata": {}, "code": 201})
        );
        assert_eq!(v["requestObject"]["metadata"]["name"], "x");
        assert!(v.get("responseObject").is_none());
        assert_eq!(v["requestReceivedTimestamp"], "2026-11-25T10:00:00.123456Z");
        assert_eq!(v["annotations"]["authorization.k8s.io/decision"], "allow");
    }

    #[test]
    fn timestamps_match_a_general_formatter() {
        for text in [
            "1970-01-01T00:00:00.000000Z",
            "2000-02-29T23:59:59.999999Z",
            "2026-11-25T10:00:00.123456Z",
            "2100-03-01T00:00:01.000001Z",
        ] {
            let ts: Timestamp = text.parse().unwrap();
            let mut buf = [0u8; 27];
            assert_eq!(rfc3339_micros(ts, &mut buf), text);
            assert_eq!(
                rfc3339_micros(ts, &mut buf),
                ts.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
            );
        }
    }

    #[test]
    fn references_are_completed_from_the_body_without_overriding_the_path() {
        let mut r = ObjectRef {
            resource: "configmaps".into(),
            namespace: "default".into(),
            ..ObjectRef::default()
        };
        let body = br#"{"kind":"ConfigMap","metadata":{"namespace":"other","name":"a\u0062",
            "uid":"u-1","resourceVersion":"42","labels":{"x":"y"}},"data":{"k":"v"}}"#;
        assert!(r.complete_from(body));
        assert_eq!(
            (&*r.namespace, &*r.name, &*r.uid, &*r.resource_version),
            ("default", "ab", "u-1", "42")
        );
        assert!(!r.complete_from(body), "nothing left to fill");
        assert!(!ObjectRef::default().complete_from(b"not json"));
        assert!(!ObjectRef::default().complete_from(br#"{"metadata":{"generateName":"x-"}}"#));
    }

    #[test]
    fn legacy_lines_quote_as_go_does() {
        let mut ev = sample(Stage::RequestReceived);
        ev.response_status = None;
        assert_eq!(
            ev.legacy_line(),
            "2026-11-25T10:00:00.123456Z AUDIT: id=\"0c1d2e3f-0000-4000-8000-000000000001\" \
             stage=\"RequestReceived\" ip=\"127.0.0.1\" method=\"create\" user=\"alice\" \
             groups=\"\\\"dev\\\",\\\"system:authenticated\\\"\" as=\"<self>\" \
             asgroups=\"<lookup>\" user-agent=\"kubectl/v1.33.0\" namespace=\"default\" \
             uri=\"/api/v1/namespaces/default/configmaps?fieldManager=kubectl\" \
             response=\"<deferred>\""
        );
    }

    #[test]
    fn managed_fields_are_stripped_from_objects_and_items() {
        let raw = raw_json(
            br#"{"metadata":{"name":"a","managedFields":[{}]},"items":[{"metadata":{"managedFields":[]}}]}"#,
        )
        .unwrap();
        let stripped = strip_managed_fields(&raw).unwrap();
        assert_eq!(
            stripped.get(),
            r#"{"items":[{"metadata":{}}],"metadata":{"name":"a"}}"#
        );
        assert!(raw_json(b"not json").is_none());
    }
}
