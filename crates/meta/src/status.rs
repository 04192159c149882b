//! `Status` errors in upstream form: one [`ApiError`] type that every layer can return and the
//! server writes out unchanged.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ListMeta, Status, StatusCause, StatusDetails,
};

use crate::field::FieldError;

/// The upstream `StatusReason` values Capstan returns, each with its HTTP code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// 400: the request itself is malformed.
    BadRequest,
    /// 401: no valid credentials.
    Unauthorized,
    /// 403: the user may not do this.
    Forbidden,
    /// 404: no such object or path.
    NotFound,
    /// 405: the verb is not served on this path.
    MethodNotAllowed,
    /// 406: no acceptable representation.
    NotAcceptable,
    /// 409: the object exists already.
    AlreadyExists,
    /// 409: a concurrent change won.
    Conflict,
    /// 410: the requested history is gone (compacted).
    Expired,
    /// 410: the resource is gone.
    Gone,
    /// 413: the body is too large.
    RequestEntityTooLarge,
    /// 415: the body's media type is not understood.
    UnsupportedMediaType,
    /// 422: the object failed validation.
    Invalid,
    /// 429: try again later.
    TooManyRequests,
    /// 500: a bug or a storage failure.
    InternalError,
    /// 504: the server could not answer in time.
    Timeout,
    /// 504 (with Retry-After): the server could not answer in time; retry.
    ServerTimeout,
    /// 503: the server cannot serve this now.
    ServiceUnavailable,
    /// No reason given (a webhook's own Status may leave it out): 500 unless the error
    /// carries its own code.
    Unknown,
}

impl Reason {
    /// The HTTP status code upstream uses for this reason.
    pub fn code(self) -> u16 {
        match self {
            Self::BadRequest => 400,
            Self::Unauthorized => 401,
            Self::Forbidden => 403,
            Self::NotFound => 404,
            Self::MethodNotAllowed => 405,
            Self::NotAcceptable => 406,
            Self::AlreadyExists | Self::Conflict => 409,
            Self::Expired | Self::Gone => 410,
            Self::RequestEntityTooLarge => 413,
            Self::UnsupportedMediaType => 415,
            Self::Invalid => 422,
            Self::TooManyRequests => 429,
            Self::InternalError | Self::Unknown => 500,
            Self::ServiceUnavailable => 503,
            Self::Timeout | Self::ServerTimeout => 504,
        }
    }

    /// The upstream reason string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadRequest => "BadRequest",
            Self::Unauthorized => "Unauthorized",
            Self::Forbidden => "Forbidden",
            Self::NotFound => "NotFound",
            Self::MethodNotAllowed => "MethodNotAllowed",
            Self::NotAcceptable => "NotAcceptable",
            Self::AlreadyExists => "AlreadyExists",
            Self::Conflict => "Conflict",
            Self::Expired => "Expired",
            Self::Gone => "Gone",
            Self::RequestEntityTooLarge => "RequestEntityTooLarge",
            Self::UnsupportedMediaType => "UnsupportedMediaType",
            Self::Invalid => "Invalid",
            Self::TooManyRequests => "TooManyRequests",
            Self::InternalError => "InternalError",
            Self::ServiceUnavailable => "ServiceUnavailable",
            Self::Timeout => "Timeout",
            Self::ServerTimeout => "ServerTimeout",
            Self::Unknown => "",
        }
    }

    /// The reason named `reason` ([`Reason::Unknown`] for names Capstan does not use).
    pub fn parse(reason: &str) -> Self {
        const ALL: [Reason; 18] = [
            Reason::BadRequest,
            Reason::Unauthorized,
            Reason::Forbidden,
            Reason::NotFound,
            Reason::MethodNotAllowed,
            Reason::NotAcceptable,
            Reason::AlreadyExists,
            Reason::Conflict,
            Reason::Expired,
            Reason::Gone,
            Reason::RequestEntityTooLarge,
            Reason::UnsupportedMediaType,
            Reason::Invalid,
            Reason::TooManyRequests,
            Reason::InternalError,
            Reason::Timeout,
            Reason::ServerTimeout,
            Reason::ServiceUnavailable,
        ];
        ALL.into_iter()
            .find(|r| r.as_str() == reason)
            .unwrap_or(Reason::Unknown)
    }
}

/// A group and resource, as named in error messages (`storageclasses.storage.k8s.io`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupResource {
    /// The API group; empty for the core group.
    pub group: String,
    /// The plural resource name.
    pub resource: String,
}

impl GroupResource {
    /// Builds a group-resource pair.
    pub fn new(group: impl Into<String>, resource: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// An error that reaches the client as an upstream `Status` object.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The reason, which also fixes the HTTP code.
    pub reason: Reason,
    /// The human-readable message.
    pub message: String,
    /// Name, group, kind, uid and causes, when known (boxed: errors travel in `Result`s).
    pub details: Option<Box<StatusDetails>>,
    /// Seconds after which the client may retry (`Retry-After`), for 429 and 504.
    pub retry_after_seconds: Option<i32>,
    /// A continue token offered with a 410 for an expired one (`metadata.continue`).
    pub continue_token: Option<String>,
    /// The HTTP code when it is not the reason's own (a webhook's Status sets both).
    pub status_code: Option<u16>,
    /// Warnings gathered before the request failed; sent with the error, as upstream sends
    /// a request's warnings whatever its outcome.
    pub warnings: Vec<String>,
}

impl std::error::Error for ApiError {}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.reason.as_str(),
            self.code(),
            self.message
        )
    }
}

fn details(name: &str, gr: &GroupResource) -> StatusDetails {
    StatusDetails {
        name: (!name.is_empty()).then(|| name.to_string()),
        group: (!gr.group.is_empty()).then(|| gr.group.clone()),
        kind: Some(gr.resource.clone()),
        ..Default::default()
    }
}

impl ApiError {
    /// An error with a reason and message and no details.
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
            details: None,
            retry_after_seconds: None,
            continue_token: None,
            status_code: None,
            warnings: Vec::new(),
        }
    }

    /// The same error, sent with `warnings` (those it already had kept after them).
    pub fn with_warnings(mut self, warnings: &[String]) -> Self {
        if !warnings.is_empty() {
            let mine = std::mem::take(&mut self.warnings);
            self.warnings = warnings.iter().cloned().chain(mine).collect();
        }
        self
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(Reason::BadRequest, message)
    }

    /// 500 InternalError, for failures that are not the client's.
    pub fn internal(message: impl fmt::Display) -> Self {
        let mut err = Self::new(
            Reason::InternalError,
            format!("Internal error occurred: {message}"),
        );
        err.details = Some(Box::new(StatusDetails {
            causes: Some(vec![StatusCause {
                message: Some(message.to_string()),
                ..Default::default()
            }]),
            ..Default::default()
        }));
        err
    }

    /// 504 for a read or watch at a resourceVersion storage has not reached after waiting:
    /// upstream's message, `Retry-After: 1` and the `ResourceVersionTooLarge` cause that
    /// clients (client-go's reflector) look for.
    pub fn resource_version_too_large(requested: u64, current: u64) -> Self {
        let mut err = Self::new(
            Reason::Timeout,
            format!("Too large resource version: {requested}, current: {current}"),
        );
        err.retry_after_seconds = Some(1);
        err.details = Some(Box::new(StatusDetails {
            causes: Some(vec![StatusCause {
                reason: Some("ResourceVersionTooLarge".into()),
                message: Some("Too large resource version".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }));
        err
    }

    /// 404 for an object that does not exist.
    pub fn not_found(gr: &GroupResource, name: &str) -> Self {
        let mut err = Self::new(Reason::NotFound, format!("{gr} \"{name}\" not found"));
        err.details = Some(Box::new(details(name, gr)));
        err
    }

    /// 404 for a path the server does not serve.
    pub fn path_not_found() -> Self {
        let mut err = Self::new(
            Reason::NotFound,
            "the server could not find the requested resource",
        );
        err.details = Some(Box::default());
        err
    }

    /// 409 AlreadyExists.
    pub fn already_exists(gr: &GroupResource, name: &str) -> Self {
        let mut err = Self::new(
            Reason::AlreadyExists,
            format!("{gr} \"{name}\" already exists"),
        );
        err.details = Some(Box::new(details(name, gr)));
        err
    }

    /// 409 Conflict: the object changed since the client read it.
    pub fn conflict(gr: &GroupResource, name: &str, why: &str) -> Self {
        let mut err = Self::new(
            Reason::Conflict,
            format!("Operation cannot be fulfilled on {gr} \"{name}\": {why}"),
        );
        err.details = Some(Box::new(details(name, gr)));
        err
    }

    /// The message upstream uses for an optimistic-concurrency conflict.
    pub const MODIFIED: &'static str = "the object has been modified; please apply your changes to the latest version and try again";

    /// 422 Invalid, with one cause per field error. `kind` is the object's kind and `group`
    /// its API group (`StorageClass.storage.k8s.io "x" is invalid: ...`).
    pub fn invalid(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let summary = match listed.len() {
            0 => String::new(),
            1 => listed[0].clone(),
            _ => format!("[{}]", listed.join(", ")),
        };
        let mut err = Self::new(
            Reason::Invalid,
            format!("{qualified} \"{name}\" is invalid: {summary}"),
        );
        err.details = Some(Box::new(StatusDetails {
            name: (!name.is_empty()).then(|| name.to_string()),
            group: (!group.is_empty()).then(|| group.to_string()),
            kind: Some(kind.to_string()),
            causes: Some(errors.iter().map(FieldError::to_cause).collect()),
            ..Default::default()
        }));
        err
    }

    /// 405 for a verb the path does not serve.
    pub fn method_not_allowed() -> Self {
        let mut err = Self::new(
            Reason::MethodNotAllowed,
            "the server does not allow this method on the requested resource",
        );
        err.details = Some(Box::default());
        err
    }

    /// 413 for a body over `limit` bytes.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            Reason::RequestEntityTooLarge,
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// 415 for a body media type the server does not decode here (upstream's message names
    /// only the `accepted` ones).
    pub fn unsupported_media_type(accepted: &[&str]) -> Self {
        Self::new(
            Reason::UnsupportedMediaType,
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    /// 415 as upstream's router words it when a built-in resource's route for the verb does
    /// not take the body's media type (a PATCH of an unknown patch type), with empty details.
    pub fn unsupported_media_type_by_route() -> Self {
        let mut err = Self::new(Reason::UnsupportedMediaType, "415: Unsupported Media Type");
        err.details = Some(Box::default());
        err
    }

    /// 406 when no acceptable representation exists.
    pub fn not_acceptable(offered: &[&str]) -> Self {
        Self::new(
            Reason::NotAcceptable,
            format!(
                "only the following media types are accepted: {}",
                offered.join(", ")
            ),
        )
    }

    /// 401.
    pub fn unauthorized() -> Self {
        Self::new(Reason::Unauthorized, "Unauthorized")
    }

    /// 403 of an authorization decision, with upstream's message shape: the resource
    /// (`pods "p" is forbidden`) names the object, the resource with its subresource
    /// (`cannot create resource "pods/exec"`) what was refused.
    pub fn forbidden(
        user: &str,
        verb: &str,
        gr: &GroupResource,
        subresource: &str,
        name: &str,
        namespace: &str,
        why: &str,
    ) -> Self {
        let mut msg = format!("{gr} ");
        if !name.is_empty() {
            msg.push_str(&format!("\"{name}\" "));
        }
        let refused = if subresource.is_empty() {
            gr.resource.clone()
        } else {
            format!("{}/{subresource}", gr.resource)
        };
        msg = format!("{msg}is forbidden: User \"{user}\" cannot {verb} resource \"{refused}\"");
        if !gr.group.is_empty() {
            msg.push_str(&format!(" in API group \"{}\"", gr.group));
        } else {
            msg.push_str(" in API group \"\"");
        }
        if namespace.is_empty() {
            msg.push_str(" at the cluster scope");
        } else {
            msg.push_str(&format!(" in the namespace \"{namespace}\""));
        }
        if !why.is_empty() {
            msg.push_str(&format!(": {why}"));
        }
        let mut err = Self::new(Reason::Forbidden, msg);
        err.details = Some(Box::new(details(name, gr)));
        err
    }

    /// 403 for a request a rule of the server refuses (not authorization):
    /// `<resource> "<name>" is forbidden: <why>`.
    pub fn forbidden_because(gr: &GroupResource, name: &str, why: &str) -> Self {
        let mut err = Self::new(
            Reason::Forbidden,
            format!("{gr} \"{name}\" is forbidden: {why}"),
        );
        err.details = Some(Box::new(details(name, gr)));
        err
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.status_code.unwrap_or(self.reason.code())
    }

    /// The upstream `Status` object for this error.
    pub fn to_status(&self) -> Status {
        let mut details = self.details.as_deref().cloned();
        if let Some(secs) = self.retry_after_seconds {
            details
                .get_or_insert_with(Default::default)
                .retry_after_seconds = Some(secs);
        }
        Status {
            code: Some(i32::from(self.code())),
            details,
            message: Some(self.message.clone()),
            metadata: ListMeta {
                continue_: self.continue_token.clone(),
                ..Default::default()
            },
            reason: Some(self.reason.as_str())
                .filter(|r| !r.is_empty())
                .map(str::to_string),
            status: Some("Failure".to_string()),
        }
    }
}

/// A `Status` as upstream's API server writes it: its fields in the order of the Go types
/// (kind, apiVersion, metadata, status, message, reason, details, code; details' name,
/// group, kind, uid, causes, retryAfterSeconds; a cause's reason, message, field) and its
/// strings escaped as Go's `encoding/json` escapes them (`<`, `>`, `&`, U+2028, U+2029), so
/// that clients comparing error bodies as strings see the same bytes from both servers.
pub fn status_json(status: &Status) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    // Serializing plain strings and numbers into a Vec cannot fail.
    let _ = serde::Serialize::serialize(&InGoOrder(status), &mut ser);
    out
}

/// `status` indented by two spaces, without a final newline: what upstream writes when not
/// even its error could be given in a form the client accepts (a 406), Go's
/// `json.MarshalIndent`.
pub fn status_json_indented(status: &Status) -> Vec<u8> {
    let mut out = Vec::with_capacity(320);
    let formatter = GoIndented(serde_json::ser::PrettyFormatter::new());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    let _ = serde::Serialize::serialize(&InGoOrder(status), &mut ser);
    out
}

struct InGoOrder<'a>(&'a Status);

impl serde::Serialize for InGoOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let st = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", "Status")?;
        m.serialize_entry("apiVersion", "v1")?;
        m.serialize_entry("metadata", &GoListMeta(&st.metadata))?;
        for (key, value) in [
            ("status", &st.status),
            ("message", &st.message),
            ("reason", &st.reason),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                m.serialize_entry(key, v)?;
            }
        }
        if let Some(d) = &st.details {
            m.serialize_entry("details", &GoDetails(d))?;
        }
        if let Some(code) = st.code.filter(|c| *c != 0) {
            m.serialize_entry("code", &code)?;
        }
        m.end()
    }
}

struct GoListMeta<'a>(&'a ListMeta);

impl serde::Serialize for GoListMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let meta = self.0;
        let mut m = s.serialize_map(None)?;
        for (key, value) in [
            ("selfLink", &meta.self_link),
            ("resourceVersion", &meta.resource_version),
            ("continue", &meta.continue_),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                m.serialize_entry(key, v)?;
            }
        }
        if let Some(n) = meta.remaining_item_count {
            m.serialize_entry("remainingItemCount", &n)?;
        }
        m.end()
    }
}

struct GoDetails<'a>(&'a StatusDetails);

impl serde::Serialize for GoDetails<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let d = self.0;
        let mut m = s.serialize_map(None)?;
        for (key, value) in [
            ("name", &d.name),
            ("group", &d.group),
            ("kind", &d.kind),
            ("uid", &d.uid),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                m.serialize_entry(key, v)?;
            }
        }
        if let Some(causes) = d.causes.as_ref().filter(|c| !c.is_empty()) {
            let causes: Vec<GoCause<'_>> = causes.iter().map(GoCause).collect();
            m.serialize_entry("causes", &causes)?;
        }
        if let Some(secs) = d.retry_after_seconds.filter(|s| *s != 0) {
            m.serialize_entry("retryAfterSeconds", &secs)?;
        }
        m.end()
    }
}

struct GoCause<'a>(&'a StatusCause);

impl serde::Serialize for GoCause<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let c = self.0;
        let mut m = s.serialize_map(None)?;
        for (key, value) in [
            ("reason", &c.reason),
            ("message", &c.message),
            ("field", &c.field),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                m.serialize_entry(key, v)?;
            }
        }
        m.end()
    }
}

/// JSON strings escaped as Go's `encoding/json` escapes them by default.
struct GoFormatter;

impl serde_json::ser::Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            let escaped = match c {
                '<' => "\\u003c",
                '>' => "\\u003e",
                '&' => "\\u0026",
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..i])?;
            writer.write_all(escaped.as_bytes())?;
            start = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// [`GoFormatter`]'s strings, indented as serde_json's pretty printer indents (two spaces,
/// `"key": value`, `{}` and `[]` when empty), which is how Go indents too.
struct GoIndented(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for GoIndented {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        GoFormatter.write_string_fragment(writer, fragment)
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

impl ApiError {
    /// The `Status` body of this error, as upstream writes it (see [`status_json`]).
    pub fn to_json(&self) -> Vec<u8> {
        status_json(&self.to_status())
    }

    /// The `Status` body indented, as upstream writes an error it cannot negotiate a form
    /// for (see [`status_json_indented`]).
    pub fn to_indented_json(&self) -> Vec<u8> {
        status_json_indented(&self.to_status())
    }
}

/// A `Status` of success, as deletecollection returns it.
pub fn success() -> Status {
    Status {
        status: Some("Success".to_string()),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_indented_as_go_indents_it() {
        let mut err = ApiError::not_acceptable(&["application/json", "a<b>"]);
        err.details = Some(Box::default());
        let written = String::from_utf8(err.to_indented_json()).unwrap();
        assert_eq!(
            written,
            "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"only the following media types are accepted: application/json, a\\u003cb\\u003e\",\n  \"reason\": \"NotAcceptable\",\n  \"details\": {},\n  \"code\": 406\n}"
        );
    }

    #[test]
    fn status_bodies_are_written_as_upstream_writes_them() {
        let gr = GroupResource::new("apps", "deployments");
        let mut err = ApiError::invalid(
            "apps",
            "Deployment",
            "web",
            &[FieldError::invalid(
                "spec.replicas",
                "-1",
                "must be >= 0 & <= max",
            )],
        );
        err.retry_after_seconds = Some(2);
        assert_eq!(
            String::from_utf8(err.to_json()).unwrap(),
            concat!(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
                r#""message":"Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: \"-1\": must be \u003e= 0 \u0026 \u003c= max","#,
                r#""reason":"Invalid","details":{"name":"web","group":"apps","kind":"Deployment","#,
                r#""causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"-1\": must be \u003e= 0 \u0026 \u003c= max","field":"spec.replicas"}],"#,
                r#""retryAfterSeconds":2},"code":422}"#
            )
        );
        let not_found = ApiError::not_found(&gr, "web").to_json();
        let back: Status = serde_json::from_slice(&not_found).unwrap();
        assert_eq!(back, ApiError::not_found(&gr, "web").to_status());
    }

    #[test]
    fn not_found_names_group_resource() {
        let gr = GroupResource::new("storage.k8s.io", "storageclasses");
        let status = ApiError::not_found(&gr, "fast").to_status();
        assert_eq!(
            status.message.as_deref(),
            Some("storageclasses.storage.k8s.io \"fast\" not found")
        );
        assert_eq!(status.code, Some(404));
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["kind"], "Status");
        assert_eq!(json["apiVersion"], "v1");
        assert_eq!(json["status"], "Failure");
        assert_eq!(json["details"]["kind"], "storageclasses");
    }

    #[test]
    fn invalid_lists_every_cause() {
        let errs = vec![
            FieldError::required("provisioner", ""),
            FieldError::not_supported("reclaimPolicy", "Keep", &["Delete", "Retain"]),
        ];
        let e = ApiError::invalid("storage.k8s.io", "StorageClass", "x", &errs);
        assert_eq!(e.code(), 422);
        assert!(e.message.starts_with(
            "StorageClass.storage.k8s.io \"x\" is invalid: [provisioner: Required value, "
        ));
        assert_eq!(e.details.unwrap().causes.unwrap().len(), 2);
    }
}
