//! `ImagePolicyWebhook`: a new pod's images (and an update's changed images) are sent as an
//! `imagepolicy.k8s.io/v1alpha1` ImageReview to the backend its configuration names; the
//! answer is cached (`allowTTL`, `denyTTL`), and a backend that cannot be asked allows or
//! denies as `defaultAllow` says.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use capstan_admission::{Attributes, Operation, Plugin};
use capstan_client::{Config, HttpsClient};
use capstan_meta::{ApiError, GroupResource};
use http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

/// The break-glass annotation: a pod carrying it is admitted whatever the backend says.
const BREAK_GLASS: &str = "alpha.image-policy.k8s.io/break-glass";

/// `ImagePolicyConfiguration`'s `imagePolicy`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Settings {
    kube_config_file: String,
    #[serde(rename = "allowTTL", default = "allow_ttl")]
    allow_ttl: u64,
    #[serde(rename = "denyTTL", default = "deny_ttl")]
    deny_ttl: u64,
    #[serde(default = "retry_backoff")]
    retry_backoff: u64,
    #[serde(default)]
    default_allow: bool,
}

fn allow_ttl() -> u64 {
    300
}
fn deny_ttl() -> u64 {
    30
}
fn retry_backoff() -> u64 {
    500
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Configuration {
    #[serde(rename = "apiVersion")]
    _api_version: Option<String>,
    #[serde(rename = "kind")]
    _kind: Option<String>,
    image_policy: Settings,
}

/// The `ImagePolicyWebhook` plugin.
pub struct ImagePolicyWebhook {
    client: HttpsClient,
    url: String,
    allow_ttl: Duration,
    deny_ttl: Duration,
    retry_backoff: Duration,
    default_allow: bool,
    cache: Mutex<HashMap<String, (Instant, bool, String)>>,
}

impl ImagePolicyWebhook {
    /// The plugin from its configuration (`imagePolicy` with the backend's kubeconfig;
    /// relative paths from `base`).
    pub fn new(config: &Value, base: &Path) -> Result<Self, String> {
        let config: Configuration = serde_json::from_value(config.clone())
            .map_err(|e| format!("ImagePolicyWebhook: {e}"))?;
        let s = config.image_policy;
        let path = base.join(&s.kube_config_file);
        let kubeconfig = Config::from_kubeconfig(&path, None)
            .map_err(|e| format!("ImagePolicyWebhook: {}: {e}", path.display()))?;
        let client = HttpsClient::new(&kubeconfig, Duration::from_secs(30))
            .map_err(|e| format!("ImagePolicyWebhook: {e}"))?;
        Ok(Self {
            client,
            url: kubeconfig.server,
            allow_ttl: Duration::from_secs(s.allow_ttl),
            deny_ttl: Duration::from_secs(s.deny_ttl),
            retry_backoff: Duration::from_millis(s.retry_backoff),
            default_allow: s.default_allow,
            cache: Mutex::default(),
        })
    }

    /// Allowed, with the backend's reason; or the backend could not be asked.
    async fn ask(&self, review: &Value) -> Result<(bool, String), String> {
        let body = Bytes::from(review.to_string());
        let mut last = String::new();
        for attempt in 0..3 {
            if attempt > 0 {
                tokio::time::sleep(self.retry_backoff * attempt).await;
            }
            match self
                .client
                .request(
                    Method::POST,
                    &self.url,
                    Some("application/json"),
                    body.clone(),
                )
                .await
            {
                Ok((status, answer)) if status.is_success() => {
                    let answer: Value = serde_json::from_slice(&answer)
                        .map_err(|e| format!("the answer is not an ImageReview: {e}"))?;
                    let status = &answer["status"];
                    return Ok((
                        status["allowed"] == true,
                        status["reason"].as_str().unwrap_or_default().to_string(),
                    ));
                }
                Ok((status, _)) => last = format!("the backend answered {status}"),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    }
}

fn images(pod: Option<&Value>) -> Vec<String> {
    let Some(spec) = pod.map(|p| &p["spec"]) else {
        return Vec::new();
    };
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|l| spec[*l].as_array().into_iter().flatten())
        .filter_map(|c| c["image"].as_str().map(str::to_string))
        .collect()
}

#[async_trait]
impl Plugin for ImagePolicyWebhook {
    fn name(&self) -> &'static str {
        "ImagePolicyWebhook"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
            && resource.group.is_empty()
            && resource.resource == "pods"
            && matches!(subresource, "" | "ephemeralcontainers")
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        let new = images(a.object.as_ref());
        if a.operation == Operation::Update && new == images(a.old_object.as_ref()) {
            return Ok(());
        }
        let annotations = a
            .object
            .as_ref()
            .and_then(|p| p["metadata"]["annotations"].as_object());
        let policy_annotations: BTreeMap<&String, &Value> = annotations
            .into_iter()
            .flatten()
            .filter(|(k, _)| {
                k.split('/')
                    .next()
                    .is_some_and(|d| d.ends_with(".image-policy.k8s.io"))
            })
            .collect();
        if annotations.is_some_and(|m| m.get(BREAK_GLASS).and_then(Value::as_str) == Some("true")) {
            a.feedback
                .annotate("imagepolicywebhook.image-policy.k8s.io/break-glass", "true");
            return Ok(());
        }
        let review = json!({
            "apiVersion": "imagepolicy.k8s.io/v1alpha1",
            "kind": "ImageReview",
            "spec": {
                "containers": new.iter().map(|i| json!({"image": i})).collect::<Vec<_>>(),
                "annotations": policy_annotations,
                "namespace": a.namespace,
            },
        });
        let key = review["spec"].to_string();
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .filter(|(until, _, _)| *until > Instant::now())
            .map(|(_, allowed, reason)| (*allowed, reason.clone()));
        let (allowed, reason) = match cached {
            Some(answer) => answer,
            None => match self.ask(&review).await {
                Ok((allowed, reason)) => {
                    let ttl = if allowed {
                        self.allow_ttl
                    } else {
                        self.deny_ttl
                    };
                    self.cache
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(key, (Instant::now() + ttl, allowed, reason.clone()));
                    (allowed, reason)
                }
                Err(e) if self.default_allow => {
                    a.feedback
                        .annotate("imagepolicywebhook.image-policy.k8s.io/failed-open", "true");
                    tracing::warn!(error = %e, "image policy webhook unreachable; allowed (defaultAllow)");
                    return Ok(());
                }
                Err(e) => {
                    return Err(ApiError::forbidden_because(
                        &a.resource,
                        a.display_name(),
                        &format!("image policy webhook backend could not be asked: {e}"),
                    ));
                }
            },
        };
        if allowed {
            return Ok(());
        }
        Err(ApiError::forbidden_because(
            &a.resource,
            a.display_name(),
            &format!("image policy webhook backend denied one or more images: {reason}"),
        ))
    }
}
