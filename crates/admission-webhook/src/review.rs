//! `admission.k8s.io` AdmissionReviews: the request sent, the response read and checked.

use std::collections::BTreeMap;

use base64::Engine;
use capstan_admission::{Attributes, Operation};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::matching::Versioned;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupVersionKind<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupVersionResource<'a> {
    group: &'a str,
    version: &'a str,
    resource: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UserInfo<'a> {
    username: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    uid: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    groups: &'a [String],
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    extra: &'a BTreeMap<String, Vec<String>>,
}

/// The request of a review (`object` and `oldObject` only in what is sent).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    uid: &'a str,
    kind: GroupVersionKind<'a>,
    resource: GroupVersionResource<'a>,
    #[serde(skip_serializing_if = "str::is_empty")]
    sub_resource: &'a str,
    request_kind: GroupVersionKind<'a>,
    request_resource: GroupVersionResource<'a>,
    #[serde(skip_serializing_if = "str::is_empty")]
    request_sub_resource: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    namespace: &'a str,
    operation: &'static str,
    user_info: UserInfo<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_object: Option<&'a Value>,
    dry_run: bool,
    options: Value,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Review<'a> {
    api_version: String,
    kind: &'static str,
    request: Request<'a>,
}

/// The options object of the operation, as upstream sends it.
fn options(a: &Attributes) -> Value {
    let kind = match a.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
        Operation::Connect => return Value::Null,
    };
    let mut options = json!({"apiVersion": "meta.k8s.io/v1", "kind": kind});
    if a.dry_run {
        options["dryRun"] = json!(["All"]);
    }
    options
}

fn request<'a>(a: &'a Attributes, v: &'a Versioned, uid: &'a str, objects: bool) -> Request<'a> {
    // The kind of the request as made: a subresource's own kind (an `autoscaling/v1`
    // Scale), or the resource's kind in the version the client used.
    let request_kind = match &a.served_as {
        Some(form) => GroupVersionKind {
            group: &form.group,
            version: &form.version,
            kind: &form.kind,
        },
        None => {
            let (group, version) = a.kind_group_version();
            GroupVersionKind {
                group,
                version,
                kind: &a.kind,
            }
        }
    };
    let requested = match &a.served_as {
        Some(form) => (&*form.group, &*form.version, &*form.resource),
        None => (&*a.resource.group, &*a.version, &*a.resource.resource),
    };
    let same_as_requested = v.form.group == requested.0
        && v.form.version == requested.1
        && v.form.resource == requested.2;
    let kind = if same_as_requested {
        GroupVersionKind { ..request_kind }
    } else {
        GroupVersionKind {
            group: &v.form.group,
            version: &v.form.version,
            kind: &v.form.kind,
        }
    };
    Request {
        uid,
        request_kind,
        kind,
        resource: GroupVersionResource {
            group: &v.form.group,
            version: &v.form.version,
            resource: &v.form.resource,
        },
        sub_resource: &a.subresource,
        request_resource: GroupVersionResource {
            group: requested.0,
            version: requested.1,
            resource: requested.2,
        },
        request_sub_resource: &a.subresource,
        name: &a.name,
        namespace: &a.namespace,
        operation: a.operation.as_str(),
        user_info: UserInfo {
            username: &a.user.name,
            uid: &a.user.uid,
            groups: &a.user.groups,
            extra: &a.user.extra,
        },
        object: v.object(a).filter(|_| objects),
        old_object: v.old_object(a).filter(|_| objects),
        dry_run: a.dry_run,
        options: options(a),
    }
}

/// The body of a review of `a`, seen as `v`, with request `uid`, in `version` (`v1` or
/// `v1beta1`).
pub(crate) fn encode(a: &Attributes, v: &Versioned, uid: &str, version: &str) -> Vec<u8> {
    let review = Review {
        api_version: format!("admission.k8s.io/{version}"),
        kind: "AdmissionReview",
        request: request(a, v, uid, true),
    };
    serde_json::to_vec(&review).unwrap_or_default()
}

/// The request as match conditions see it (`request`): everything but the objects.
pub(crate) fn request_variable(a: &Attributes, v: &Versioned) -> Value {
    serde_json::to_value(request(a, v, "", false)).unwrap_or(Value::Null)
}

/// What a webhook answered.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub allowed: bool,
    pub status: Status,
    /// A decoded JSONPatch.
    pub patch: Option<json_patch::Patch>,
    pub warnings: Vec<String>,
    pub audit_annotations: BTreeMap<String, String>,
}

/// The Status of a denial.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Status {
    pub code: Option<i32>,
    pub message: String,
    pub reason: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResponseReview {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    response: Option<Response>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    allowed: bool,
    #[serde(default)]
    status: Option<Status>,
    #[serde(default)]
    patch: Option<String>,
    #[serde(default)]
    patch_type: Option<String>,
    #[serde(default)]
    audit_annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    warnings: Option<Vec<String>>,
}

/// Reads a review's answer to request `uid`, checking it as upstream does; the error says
/// what is wrong with it.
pub(crate) fn decode(body: &[u8], uid: &str, version: &str) -> Result<Answer, String> {
    let review: ResponseReview = serde_json::from_slice(body)
        .map_err(|e| format!("the response is not an AdmissionReview: {e}"))?;
    let expected = format!("admission.k8s.io/{version}");
    if version == "v1" && (review.api_version != expected || review.kind != "AdmissionReview") {
        return Err(format!(
            "expected webhook response of {expected}, Kind=AdmissionReview, got {}, Kind={}",
            review.api_version, review.kind
        ));
    }
    let Some(response) = review.response else {
        return Err("webhook response was absent".into());
    };
    if version == "v1" && response.uid != uid {
        return Err(format!(
            "expected response.uid=\"{uid}\", got \"{}\"",
            response.uid
        ));
    }
    let patch = match &response.patch {
        None => None,
        Some(p) => {
            match response.patch_type.as_deref() {
                Some("JSONPatch") => {}
                None if version != "v1" => {}
                None => {
                    return Err("webhook returned response.patch but not response.patchType".into());
                }
                Some(other) => {
                    return Err(format!(
                        "webhook returned invalid response.patchType of \"{other}\""
                    ));
                }
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(p)
                .map_err(|e| format!("response.patch is not base64: {e}"))?;
            let patch: json_patch::Patch = serde_json::from_slice(&bytes)
                .map_err(|e| format!("response.patch is not a JSONPatch: {e}"))?;
            Some(patch)
        }
    };
    Ok(Answer {
        allowed: response.allowed,
        status: response.status.unwrap_or_default(),
        patch,
        warnings: response.warnings.unwrap_or_default(),
        audit_annotations: response.audit_annotations.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_auth::UserInfo;
    use capstan_meta::GroupResource;

    fn attributes() -> Attributes {
        let mut a = Attributes::new(
            Operation::Create,
            GroupResource::new("", "pods"),
            UserInfo {
                name: "alice".into(),
                groups: vec!["dev".into()],
                ..Default::default()
            },
        );
        a.version = "v1".into();
        a.kind = "Pod".into();
        a.namespace = "ns".into();
        a.name = "p".into();
        a.dry_run = true;
        a.object = Some(json!({"metadata": {"name": "p"}}));
        a
    }

    #[test]
    fn the_request_carries_what_upstream_sends() {
        let a = attributes();
        let body = encode(&a, &Versioned::stored(&a), "u-1", "v1");
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["apiVersion"], "admission.k8s.io/v1");
        let r = &v["request"];
        assert_eq!(r["uid"], "u-1");
        assert_eq!(
            r["kind"],
            json!({"group": "", "version": "v1", "kind": "Pod"})
        );
        assert_eq!(r["resource"]["resource"], "pods");
        assert_eq!(r["operation"], "CREATE");
        assert_eq!(r["userInfo"]["username"], "alice");
        assert_eq!(r["object"]["metadata"]["name"], "p");
        assert_eq!(r["dryRun"], true);
        assert_eq!(r["options"]["kind"], "CreateOptions");
        assert_eq!(r["options"]["dryRun"], json!(["All"]));
        assert!(r.get("oldObject").is_none());
        let a = attributes();
        assert!(
            request_variable(&a, &Versioned::stored(&a))
                .get("object")
                .is_none()
        );
    }

    #[test]
    fn responses_are_checked() {
        let ok = |v: Value| decode(&serde_json::to_vec(&v).unwrap(), "u-1", "v1");
        let allowed = ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u-1", "allowed": true, "warnings": ["w"]}})).unwrap();
        assert!(allowed.allowed);
        assert_eq!(allowed.warnings, ["w"]);
        let wrong_uid = ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u-2", "allowed": true}})).unwrap_err();
        assert!(
            wrong_uid.contains("expected response.uid=\"u-1\""),
            "{wrong_uid}"
        );
        let absent = ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}))
            .unwrap_err();
        assert_eq!(absent, "webhook response was absent");
        let no_type = ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u-1", "allowed": true, "patch": "W10="}})).unwrap_err();
        assert!(no_type.contains("patchType"), "{no_type}");
        let patch = base64::engine::general_purpose::STANDARD
            .encode(br#"[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]"#);
        let patched = ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u-1", "allowed": true, "patch": patch, "patchType": "JSONPatch"}})).unwrap();
        assert_eq!(patched.patch.unwrap().0.len(), 1);
        assert!(
            decode(b"<html>", "u-1", "v1")
                .unwrap_err()
                .contains("not an AdmissionReview")
        );
        // v1beta1 answers need neither the uid nor the patch type.
        let old = decode(
            serde_json::to_vec(
                &json!({"response": {"allowed": false, "status": {"message": "no"}}}),
            )
            .unwrap()
            .as_slice(),
            "u-1",
            "v1beta1",
        )
        .unwrap();
        assert_eq!(old.status.message, "no");
    }
}
