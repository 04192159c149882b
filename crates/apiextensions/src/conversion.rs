//! Conversion of custom objects between a CRD's versions. `None` rewrites `apiVersion`;
//! `Webhook` sends the objects not yet in the wanted version to the CRD's webhook in one
//! `ConversionReview` and checks what comes back as upstream does: the same count, kind,
//! name, namespace and uid, the wanted version, and metadata unchanged but for labels and
//! annotations (which are validated as on any write).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use capstan_client::{HttpsClient, ServiceResolver, WebhookTarget};
use capstan_meta::ApiError;
use capstan_meta::status::Reason;
use capstan_registry::converted::{Converter, PerObject};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookConversion,
};
use serde_json::Value;

/// How long a conversion webhook may take (upstream's webhook client timeout).
const TIMEOUT: Duration = Duration::from_secs(30);

/// The ConversionReview versions this server speaks, by preference of the CRD's list.
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// The converter of `crd`'s objects to `api_version` (a version of its group), by the CRD's
/// strategy; `webhook` is shared by the CRD's converters.
pub fn converter(
    crd: &CustomResourceDefinition,
    webhook: &Option<Arc<Webhook>>,
    api_version: String,
) -> Arc<dyn Converter> {
    match webhook {
        Some(hook) => Arc::new(WebhookConverter {
            hook: hook.clone(),
            api_version,
            kind: crd.spec.names.kind.clone(),
        }),
        None => Arc::new(PerObject(move |mut doc: Value| {
            if doc.get("apiVersion").is_some() {
                doc["apiVersion"] = Value::String(api_version.clone());
            }
            doc
        })),
    }
}

/// A CRD's conversion webhook: where it is, and the review version it is sent.
pub struct Webhook {
    endpoint: Result<(HttpsClient, String), String>,
    review_version: Option<&'static str>,
}

impl Webhook {
    /// The webhook of `crd`, when its strategy is `Webhook`; one named by a `service`
    /// reference is reached where `services` resolves it.
    pub fn of(
        crd: &CustomResourceDefinition,
        services: Option<Arc<dyn ServiceResolver>>,
    ) -> Option<Arc<Self>> {
        let conversion = crd.spec.conversion.as_ref()?;
        if conversion.strategy != "Webhook" {
            return None;
        }
        let webhook = conversion.webhook.as_ref();
        Some(Arc::new(Self {
            endpoint: webhook.map_or_else(
                || Err("no webhook is configured".into()),
                |w| endpoint(w, services),
            ),
            review_version: webhook.and_then(|w| {
                w.conversion_review_versions
                    .iter()
                    .find_map(|v| REVIEW_VERSIONS.into_iter().find(|known| known == v))
            }),
        }))
    }

    /// Sends `objects` to be converted to `api_version`; the converted objects as the
    /// webhook answered them (checked against the review, not yet against the objects).
    async fn call(&self, objects: &[&Value], api_version: &str) -> Result<Vec<Value>, String> {
        let review_version = self
            .review_version
            .ok_or("no supported conversion review versions")?;
        let (client, url) = self.endpoint.as_ref().map_err(Clone::clone)?;
        let uid = capstan_meta::names::uid();
        // Written straight from the objects: a JSON tree of the review would copy them all.
        let review = Review {
            api_version: format!("apiextensions.k8s.io/{review_version}"),
            kind: "ConversionReview",
            request: ReviewRequest {
                uid: &uid,
                desired_api_version: api_version,
                objects,
            },
        };
        let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
        let (status, answer) = client
            .request(
                http::Method::POST,
                url,
                Some("application/json"),
                body.into(),
            )
            .await
            .map_err(|e| format!("Post {url:?}: {e}"))?;
        if !status.is_success() {
            let message = serde_json::from_slice::<Value>(&answer)
                .ok()
                .and_then(|s| s["message"].as_str().map(str::to_string))
                .filter(|m| !m.is_empty());
            return Err(message.unwrap_or_else(|| {
                format!(
                    "the server responded with the status code {} but did not return more information",
                    status.as_u16()
                )
            }));
        }
        let answer: Value = serde_json::from_slice(&answer)
            .map_err(|e| format!("the webhook's answer is not a ConversionReview: {e}"))?;
        converted_objects(review_version, &uid, answer)
    }
}

/// A ConversionReview request, borrowing the objects it sends.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Review<'a> {
    api_version: String,
    kind: &'static str,
    request: ReviewRequest<'a>,
}

#[derive(serde::Serialize)]
struct ReviewRequest<'a> {
    uid: &'a str,
    #[serde(rename = "desiredAPIVersion")]
    desired_api_version: &'a str,
    objects: &'a [&'a Value],
}

/// The address of a webhook and a client trusting its `caBundle`.
fn endpoint(
    webhook: &WebhookConversion,
    services: Option<Arc<dyn ServiceResolver>>,
) -> Result<(HttpsClient, String), String> {
    let config = webhook
        .client_config
        .as_ref()
        .ok_or("the webhook has no clientConfig")?;
    let service = config.service.as_ref();
    let target = WebhookTarget::of(
        config.url.as_deref(),
        service.map(|s| (&*s.namespace, &*s.name, s.port, s.path.as_deref())),
    )?;
    let ca_bundle = config.ca_bundle.as_ref().map(|b| b.0.as_slice());
    let (client, url) = HttpsClient::for_webhook(target, ca_bundle, TIMEOUT, services)?;
    // As upstream's client, the call names its timeout.
    Ok((client, format!("{url}?timeout={}s", TIMEOUT.as_secs())))
}

/// The converted objects of a webhook's `answer` to the review `uid`, or why there are none.
fn converted_objects(review_version: &str, uid: &str, answer: Value) -> Result<Vec<Value>, String> {
    let Value::Object(mut answer) = answer else {
        return Err("the webhook's answer is not a ConversionReview".into());
    };
    if review_version == "v1" {
        let got = format!(
            "{}, Kind={}",
            answer
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            answer
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        if got != "apiextensions.k8s.io/v1, Kind=ConversionReview" {
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {got}"
            ));
        }
    }
    let Some(Value::Object(mut response)) = answer.remove("response") else {
        return Err("no response provided".into());
    };
    // v1beta1 answers were never held to their uid.
    if review_version == "v1" {
        let got = response
            .get("uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
    }
    let result = response.get("result").cloned().unwrap_or_default();
    let status = result["status"].as_str().unwrap_or_default();
    if status != "Success" {
        return Err(match result["message"].as_str() {
            Some(message) if !message.is_empty() => message.to_string(),
            _ => format!("response.result.status was '{status}', not 'Success'"),
        });
    }
    match response.remove("convertedObjects") {
        Some(Value::Array(objects)) => Ok(objects),
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(_) => Err("response.convertedObjects is not a list".into()),
    }
}

/// `original` as the webhook converted it (`converted`): the converted object with the
/// original's metadata, but for the labels and annotations the webhook set.
fn checked(original: &Value, mut converted: Value, api_version: &str) -> Result<Value, String> {
    let got = converted["apiVersion"].as_str().unwrap_or_default();
    if got != api_version {
        return Err(format!(
            "invalid groupVersion (expected {api_version}, received {got})"
        ));
    }
    let (o, c) = (&original["metadata"], &converted["metadata"]);
    for (what, a, b) in [
        ("kind", &original["kind"], &converted["kind"]),
        ("name", &o["name"], &c["name"]),
        ("namespace", &o["namespace"], &c["namespace"]),
        ("UID", &o["uid"], &c["uid"]),
    ] {
        let (a, b) = (
            a.as_str().unwrap_or_default(),
            b.as_str().unwrap_or_default(),
        );
        if a != b {
            return Err(format!("must have the same {what}: {a} != {b}"));
        }
    }
    let Some(answered) = converted
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
    else {
        return Err(match converted.get("metadata") {
            None => "missing metadata in converted object".into(),
            Some(_) => "invalid metadata in converted object".into(),
        });
    };
    let mut metadata = original["metadata"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for field in ["labels", "annotations"] {
        match answered.get(field) {
            None | Some(Value::Null) => {
                metadata.remove(field);
            }
            Some(Value::Object(map)) => {
                if let Some((key, _)) = map.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!(
                        "metadata.{field}[{key}] must be a string in converted object"
                    ));
                }
                if metadata.get(field) != answered.get(field) {
                    check_strings(field, map)?;
                }
                metadata.insert(field.into(), Value::Object(map.clone()));
            }
            Some(_) => return Err(format!("invalid metadata.{field} in converted object")),
        }
    }
    converted["metadata"] = Value::Object(metadata);
    Ok(converted)
}

/// Labels or annotations a webhook changed, validated as on any write.
fn check_strings(field: &str, map: &serde_json::Map<String, Value>) -> Result<(), String> {
    let strings: BTreeMap<String, String> = map
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    let meta = capstan_meta::v1::ObjectMeta {
        name: Some("converted".into()),
        labels: (field == "labels").then(|| strings.clone()),
        annotations: (field == "annotations").then_some(strings),
        ..Default::default()
    };
    let errs = capstan_meta::validation::object_meta(&meta, false, |_| Vec::new());
    match errs.as_slice() {
        [] => Ok(()),
        [one] => Err(one.to_string()),
        many => Err(format!(
            "[{}]",
            many.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Converts objects to one version through a CRD's webhook.
struct WebhookConverter {
    hook: Arc<Webhook>,
    api_version: String,
    kind: String,
}

impl WebhookConverter {
    /// Upstream's error for a conversion of objects from `from` that failed.
    fn failure(&self, from: &Value, message: String) -> capstan_registry::Error {
        let gvk = format!(
            "{}, Kind={}",
            from["apiVersion"].as_str().unwrap_or_default(),
            from["kind"].as_str().unwrap_or(&self.kind)
        );
        let mut err = ApiError::new(
            Reason::Unknown,
            format!("conversion webhook for {gvk} {message}"),
        );
        err.status_code = Some(500);
        err.into()
    }
}

#[async_trait]
impl Converter for WebhookConverter {
    async fn convert(&self, mut objects: Vec<Value>) -> capstan_registry::Result<Vec<Value>> {
        // Objects already in the wanted version are not sent.
        let pending: Vec<usize> = (0..objects.len())
            .filter(|&i| objects[i]["apiVersion"] != self.api_version.as_str())
            .collect();
        let Some(&first) = pending.first() else {
            return Ok(objects);
        };
        let sent: Vec<&Value> = pending.iter().map(|&i| &objects[i]).collect();
        let converted = self
            .hook
            .call(&sent, &self.api_version)
            .await
            .map_err(|e| self.failure(&objects[first], format!("failed: {e}")))?;
        if converted.len() != pending.len() {
            return Err(self.failure(
                &objects[first],
                format!(
                    "returned {} objects, expected {}",
                    converted.len(),
                    pending.len()
                ),
            ));
        }
        let single = pending.len() == 1;
        for (n, (i, object)) in pending.into_iter().zip(converted).enumerate() {
            let out = checked(&objects[i], object, &self.api_version).map_err(|e| {
                let what = if single {
                    "invalid object".to_string()
                } else {
                    format!("invalid converted object at index {n}")
                };
                self.failure(&objects[first], format!("returned {what}: {e}"))
            })?;
            objects[i] = out;
        }
        Ok(objects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(uid: &str, result: Value, objects: Value) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": uid, "result": result, "convertedObjects": objects}
        })
    }

    #[test]
    fn answers_are_held_to_their_review() {
        let ok = json!({"status": "Success"});
        assert_eq!(
            converted_objects("v1", "u", answer("u", ok.clone(), json!([{"a": 1}]))),
            Ok(vec![json!({"a": 1})])
        );
        assert_eq!(
            converted_objects("v1", "u", answer("other", ok.clone(), json!([]))),
            Err(r#"expected response.uid="u", got "other""#.into())
        );
        // v1beta1 answers are not held to their uid.
        assert!(converted_objects("v1beta1", "u", answer("other", ok, json!([]))).is_ok());
        assert_eq!(
            converted_objects(
                "v1",
                "u",
                answer(
                    "u",
                    json!({"status": "Failure", "message": "no v3 here"}),
                    json!([])
                )
            ),
            Err("no v3 here".into())
        );
        assert_eq!(
            converted_objects("v1", "u", answer("u", json!({}), json!([]))),
            Err("response.result.status was '', not 'Success'".into())
        );
        assert_eq!(
            converted_objects("v1", "u", json!({"apiVersion": "v1", "kind": "Status"})),
            Err("expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status".into())
        );
        assert_eq!(
            converted_objects(
                "v1",
                "u",
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"})
            ),
            Err("no response provided".into())
        );
    }

    fn object(version: &str, name: &str, labels: Value) -> Value {
        json!({
            "apiVersion": format!("example.com/{version}"), "kind": "Shop",
            "metadata": {"name": name, "namespace": "default", "uid": "1",
                         "resourceVersion": "7", "labels": labels},
            "spec": {"size": 1}
        })
    }

    #[test]
    fn converted_objects_keep_their_metadata_but_labels_and_annotations() {
        let original = object("v1", "a", json!({"x": "1"}));
        let mut converted = object("v2", "a", json!({"x": "2"}));
        converted["metadata"]["resourceVersion"] = json!("999");
        converted["metadata"]["annotations"] = json!({"note": "converted"});
        converted["spec"] = json!({"sizes": [1]});
        let out = checked(&original, converted, "example.com/v2").unwrap();
        assert_eq!(out["metadata"]["resourceVersion"], "7");
        assert_eq!(out["metadata"]["labels"], json!({"x": "2"}));
        assert_eq!(out["metadata"]["annotations"], json!({"note": "converted"}));
        assert_eq!(out["spec"], json!({"sizes": [1]}));

        // Labels dropped by the webhook are dropped.
        let mut bare = object("v2", "a", json!({}));
        bare["metadata"].as_object_mut().unwrap().remove("labels");
        let out = checked(&original, bare, "example.com/v2").unwrap();
        assert!(out["metadata"].get("labels").is_none());
    }

    #[test]
    fn converted_objects_that_change_identity_or_version_are_refused() {
        let original = object("v1", "a", json!({}));
        let cases = [
            (
                object("v1", "a", json!({})),
                "invalid groupVersion (expected example.com/v2, received example.com/v1)",
            ),
            (
                object("v2", "b", json!({})),
                "must have the same name: a != b",
            ),
            (
                object("v2", "a", json!({"bad key!": "x"})),
                "metadata.labels: Invalid value: \"bad key!\"",
            ),
            (
                object("v2", "a", json!({"n": 1})),
                "metadata.labels[n] must be a string in converted object",
            ),
        ];
        for (converted, want) in cases {
            let err = checked(&original, converted, "example.com/v2").unwrap_err();
            assert!(err.starts_with(want), "{err}");
        }
        let mut kindless = object("v2", "a", json!({}));
        kindless["kind"] = json!("Store");
        assert_eq!(
            checked(&original, kindless, "example.com/v2").unwrap_err(),
            "must have the same kind: Shop != Store"
        );
        let mut metaless = object("v2", "a", json!({}));
        metaless.as_object_mut().unwrap().remove("metadata");
        assert!(checked(&original, metaless, "example.com/v2").is_err());
    }
}
