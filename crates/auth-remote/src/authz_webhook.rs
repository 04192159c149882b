//! The authorization webhook (`--authorization-mode=Webhook`): each request's attributes are
//! posted, as a SubjectAccessReview, to the server of a kubeconfig-format file; allowed and
//! refused answers are cached for their own times.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use capstan_auth::authn::TokenCache;
use capstan_auth::authz::{Attributes, Authorizer, Decision};
use capstan_client::{Config, HttpsClient};
use http::Method;
use serde::Deserialize;

use crate::error::{Error, Result};

/// `--authorization-webhook-*`.
#[derive(Debug, Clone)]
pub struct AuthorizationWebhookConfig {
    /// `--authorization-webhook-config-file`.
    pub config_file: PathBuf,
    /// `--authorization-webhook-version`: `v1beta1` or `v1`.
    pub version: String,
    /// `--authorization-webhook-cache-authorized-ttl`.
    pub authorized_ttl: Duration,
    /// `--authorization-webhook-cache-unauthorized-ttl`.
    pub unauthorized_ttl: Duration,
}

const TIMEOUT: Duration = Duration::from_secs(30);
const TRIES: u32 = 5;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// Requests authorized by a remote server.
pub struct AuthorizationWebhook {
    client: HttpsClient,
    url: String,
    v1: bool,
    allowed: Option<TokenCache<Decision>>,
    refused: Option<TokenCache<Decision>>,
}

#[derive(Deserialize, Default)]
struct Review {
    #[serde(default)]
    status: ReviewStatus,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ReviewStatus {
    #[serde(default)]
    allowed: bool,
    #[serde(default)]
    denied: bool,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    evaluation_error: String,
}

impl AuthorizationWebhook {
    /// Reads the configuration file and checks the version.
    pub fn new(config: AuthorizationWebhookConfig) -> Result<Self> {
        let v1 = match config.version.as_str() {
            "v1beta1" => false,
            "v1" => true,
            other => {
                return Err(Error::invalid(
                    "--authorization-webhook-version",
                    format!("{other:?} is not one of v1beta1, v1"),
                ));
            }
        };
        let option = "--authorization-webhook-config-file";
        let kubeconfig = Config::from_kubeconfig(&config.config_file, None)
            .map_err(|e| Error::invalid(option, e.to_string()))?;
        if !kubeconfig.server.starts_with("https://") {
            return Err(Error::invalid(
                option,
                format!("the server {:?} is not an https:// URL", kubeconfig.server),
            ));
        }
        let client = HttpsClient::new(&kubeconfig, TIMEOUT)
            .map_err(|e| Error::invalid(option, e.to_string()))?;
        let cache = |ttl: Duration| (!ttl.is_zero()).then(|| TokenCache::new(ttl));
        Ok(Self {
            client,
            url: kubeconfig.server,
            v1,
            allowed: cache(config.authorized_ttl),
            refused: cache(config.unauthorized_ttl),
        })
    }

    /// Requests authorized by the API server of `server` (delegated authorization,
    /// `authorization.k8s.io/v1`), through `client`; answers cached for their times.
    pub fn delegated(
        server: &Config,
        client: HttpsClient,
        authorized_ttl: Duration,
        unauthorized_ttl: Duration,
    ) -> Self {
        let cache = |ttl: Duration| (!ttl.is_zero()).then(|| TokenCache::new(ttl));
        Self {
            client,
            url: format!(
                "{}/apis/authorization.k8s.io/v1/subjectaccessreviews",
                server.server.trim_end_matches('/')
            ),
            v1: true,
            allowed: cache(authorized_ttl),
            refused: cache(unauthorized_ttl),
        }
    }

    /// The SubjectAccessReview of a request (v1beta1 names the groups `group`).
    fn review_body(&self, a: &Attributes) -> serde_json::Value {
        let mut spec = serde_json::json!({"user": a.user.name});
        if !a.user.uid.is_empty() {
            spec["uid"] = a.user.uid.clone().into();
        }
        if !a.user.groups.is_empty() {
            spec[if self.v1 { "groups" } else { "group" }] = a.user.groups.clone().into();
        }
        if !a.user.extra.is_empty() {
            spec["extra"] = serde_json::json!(a.user.extra);
        }
        if a.resource_request {
            spec["resourceAttributes"] = serde_json::json!({
                "namespace": a.namespace, "verb": a.verb, "group": a.api_group,
                "version": a.api_version, "resource": a.resource,
                "subresource": a.subresource, "name": a.name,
            });
        } else {
            spec["nonResourceAttributes"] = serde_json::json!({"path": a.path, "verb": a.verb});
        }
        let api_version = if self.v1 {
            "authorization.k8s.io/v1"
        } else {
            "authorization.k8s.io/v1beta1"
        };
        serde_json::json!({"apiVersion": api_version, "kind": "SubjectAccessReview", "spec": spec})
    }

    async fn ask(&self, body: bytes::Bytes) -> std::result::Result<Review, String> {
        let mut wait = FIRST_BACKOFF;
        let mut last = String::new();
        for attempt in 1..=TRIES {
            let sent = self
                .client
                .request(
                    Method::POST,
                    &self.url,
                    Some("application/json"),
                    body.clone(),
                )
                .await;
            match sent {
                Ok((status, answer)) if status.is_success() => {
                    return serde_json::from_slice(&answer).map_err(|e| {
                        format!("the authorization webhook's answer does not decode: {e}")
                    });
                }
                Ok((status, _)) if status.is_server_error() || status.as_u16() == 429 => {
                    last = format!("the authorization webhook answered {status}");
                }
                Ok((status, _)) => {
                    return Err(format!("the authorization webhook answered {status}"));
                }
                Err(e) => last = format!("calling the authorization webhook: {e}"),
            }
            if attempt < TRIES {
                let jitter = 1.0 + rand::random::<f64>() * 0.2;
                tokio::time::sleep(wait.mul_f64(jitter)).await;
                wait = wait.mul_f64(1.5);
            }
        }
        Err(last)
    }
}

#[async_trait]
impl Authorizer for AuthorizationWebhook {
    async fn authorize(&self, attributes: &Attributes) -> Decision {
        let review = self.review_body(attributes);
        let Ok(body) = serde_json::to_vec(&review) else {
            return Decision::NoOpinion("the review does not encode".into());
        };
        // The review itself is the cache key (as upstream keys on the request).
        let key = String::from_utf8_lossy(&body).into_owned();
        for cache in [&self.allowed, &self.refused].into_iter().flatten() {
            if let Some(decision) = cache.get(&key) {
                return decision;
            }
        }
        let status = match self.ask(body.into()).await {
            Ok(review) => review.status,
            Err(why) => return Decision::NoOpinion(why),
        };
        let reason = if status.evaluation_error.is_empty() {
            status.reason
        } else if status.reason.is_empty() {
            status.evaluation_error
        } else {
            format!("{}: {}", status.reason, status.evaluation_error)
        };
        let (decision, cache) = if status.allowed {
            (Decision::Allow, &self.allowed)
        } else if status.denied {
            (Decision::Deny(reason), &self.refused)
        } else {
            (Decision::NoOpinion(reason), &self.refused)
        };
        if let Some(cache) = cache {
            cache.insert(&key, decision.clone());
        }
        decision
    }
}
