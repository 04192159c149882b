//! The token webhook: a bearer token no other authenticator knows is posted, as a
//! TokenReview, to the server of a kubeconfig-format file; its answer (user, or not
//! authenticated) is cached for `--authentication-token-webhook-cache-ttl`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use capstan_auth::UserInfo;
use capstan_auth::authn::{Authenticator, Credentials, Outcome, TokenCache};
use capstan_client::{Config, HttpsClient};
use http::Method;
use serde::Deserialize;

use crate::error::{Error, Result};

/// `--authentication-token-webhook-*`.
#[derive(Debug, Clone)]
pub struct TokenWebhookConfig {
    /// `--authentication-token-webhook-config-file`.
    pub config_file: PathBuf,
    /// `--authentication-token-webhook-version`: `v1beta1` or `v1`.
    pub version: String,
    /// `--authentication-token-webhook-cache-ttl`.
    pub cache_ttl: Duration,
    /// The API's audiences (`--api-audiences`): what a token is for when nobody says.
    pub implicit_audiences: Vec<String>,
}

/// How long one review may take (upstream's webhook timeout).
const TIMEOUT: Duration = Duration::from_secs(30);
/// Tries of a review that failed to arrive (connection errors, 5xx, 429).
const TRIES: u32 = 5;
/// Wait before the second try; each next wait is 1.5 times longer.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// What the webhook said, as cached.
#[derive(Debug, Clone)]
enum Answer {
    Authenticated(UserInfo, Vec<String>),
    Unauthenticated(Option<String>),
}

/// Bearer tokens reviewed by a remote server.
pub struct TokenWebhook {
    client: HttpsClient,
    url: String,
    api_version: &'static str,
    implicit_audiences: Vec<String>,
    cache: Option<TokenCache<Answer>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Review {
    #[serde(default)]
    status: ReviewStatus,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ReviewStatus {
    #[serde(default)]
    authenticated: bool,
    #[serde(default)]
    user: ReviewUser,
    #[serde(default)]
    audiences: Vec<String>,
    #[serde(default)]
    error: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ReviewUser {
    #[serde(default)]
    username: String,
    #[serde(default)]
    uid: String,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default)]
    extra: BTreeMap<String, Vec<String>>,
}

impl TokenWebhook {
    /// Reads the configuration file and checks the version.
    pub fn new(config: TokenWebhookConfig) -> Result<Self> {
        let api_version = match config.version.as_str() {
            "v1beta1" => "authentication.k8s.io/v1beta1",
            "v1" => "authentication.k8s.io/v1",
            other => {
                return Err(Error::invalid(
                    "--authentication-token-webhook-version",
                    format!("{other:?} is not one of v1beta1, v1"),
                ));
            }
        };
        let option = "--authentication-token-webhook-config-file";
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
        Ok(Self {
            client,
            url: kubeconfig.server,
            api_version,
            implicit_audiences: config.implicit_audiences,
            cache: (!config.cache_ttl.is_zero()).then(|| TokenCache::new(config.cache_ttl)),
        })
    }

    /// Tokens reviewed by the API server of `server` (delegated authentication,
    /// `authentication.k8s.io/v1`), through `client`.
    pub fn delegated(server: &Config, client: HttpsClient, cache_ttl: Duration) -> Self {
        Self {
            client,
            url: format!(
                "{}/apis/authentication.k8s.io/v1/tokenreviews",
                server.server.trim_end_matches('/')
            ),
            api_version: "authentication.k8s.io/v1",
            implicit_audiences: Vec::new(),
            cache: (!cache_ttl.is_zero()).then(|| TokenCache::new(cache_ttl)),
        }
    }

    /// Posts the review, trying again after failures to get an answer.
    async fn review(
        &self,
        token: &str,
        audiences: &[String],
    ) -> std::result::Result<Review, String> {
        let body = serde_json::json!({
            "apiVersion": self.api_version,
            "kind": "TokenReview",
            "spec": {"token": token, "audiences": audiences},
        });
        let body = bytes::Bytes::from(serde_json::to_vec(&body).map_err(|e| e.to_string())?);
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
                    return serde_json::from_slice(&answer)
                        .map_err(|e| format!("the token webhook's answer does not decode: {e}"));
                }
                Ok((status, _)) if status.is_server_error() || status.as_u16() == 429 => {
                    last = format!("the token webhook answered {status}");
                }
                Ok((status, _)) => return Err(format!("the token webhook answered {status}")),
                Err(e) => last = format!("calling the token webhook: {e}"),
            }
            if attempt < TRIES {
                let jitter = 1.0 + rand::random::<f64>() * 0.2;
                tokio::time::sleep(wait.mul_f64(jitter)).await;
                wait = wait.mul_f64(1.5);
            }
        }
        Err(last)
    }

    async fn ask(&self, token: &str, wanted: &[String]) -> std::result::Result<Answer, String> {
        let review = self.review(token, wanted).await?.status;
        if !review.authenticated {
            return Ok(Answer::Unauthenticated(
                (!review.error.is_empty()).then_some(review.error),
            ));
        }
        let mut audiences = Vec::new();
        if !wanted.is_empty() {
            let got = if review.audiences.is_empty() {
                &self.implicit_audiences
            } else {
                &review.audiences
            };
            audiences = wanted.iter().filter(|a| got.contains(a)).cloned().collect();
            if audiences.is_empty() {
                return Ok(Answer::Unauthenticated(Some(
                    "the token webhook does not support the requested audiences".into(),
                )));
            }
        }
        let user = review.user;
        Ok(Answer::Authenticated(
            UserInfo {
                name: user.username,
                uid: user.uid,
                groups: user.groups,
                extra: user.extra,
            },
            audiences,
        ))
    }
}

#[async_trait]
impl Authenticator for TokenWebhook {
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
        let Some(token) = credentials.bearer_token else {
            return Outcome::NoOpinion;
        };
        let wanted = credentials.audiences.unwrap_or(&self.implicit_audiences);
        // Answers differ by audiences: they are part of the cache key.
        let key = if credentials.audiences.is_some() {
            std::borrow::Cow::Owned(format!("{token}\0{}", wanted.join("\0")))
        } else {
            std::borrow::Cow::Borrowed(token)
        };
        let cached = self.cache.as_ref().and_then(|c| c.get(&key));
        let answer = match cached {
            Some(answer) => answer,
            None => match self.ask(token, wanted).await {
                Ok(answer) => {
                    if let Some(cache) = &self.cache {
                        cache.insert(&key, answer.clone());
                    }
                    answer
                }
                Err(why) => return Outcome::Rejected(why),
            },
        };
        match answer {
            Answer::Authenticated(user, audiences) => Outcome::Authenticated { user, audiences },
            Answer::Unauthenticated(Some(why)) => Outcome::Rejected(why),
            Answer::Unauthenticated(None) => Outcome::NoOpinion,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn webhook(dir: &std::path::Path, server: &str, version: &str) -> Result<TokenWebhook> {
        let file = dir.join("webhook.kubeconfig");
        let config = serde_json::json!({
            "apiVersion": "v1", "kind": "Config", "current-context": "w",
            "clusters": [{"name": "w", "cluster": {"server": server, "insecure-skip-tls-verify": true}}],
            "contexts": [{"name": "w", "context": {"cluster": "w"}}],
        });
        std::fs::write(&file, config.to_string()).unwrap();
        TokenWebhook::new(TokenWebhookConfig {
            config_file: file,
            version: version.into(),
            cache_ttl: Duration::from_secs(120),
            implicit_audiences: Vec::new(),
        })
    }

    #[test]
    fn bad_configurations_name_the_option() {
        let dir = tempfile::tempdir().unwrap();
        let err = webhook(dir.path(), "https://127.0.0.1:1/", "v2")
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .starts_with("--authentication-token-webhook-version")
        );
        let err = webhook(dir.path(), "http://127.0.0.1:1/", "v1")
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .starts_with("--authentication-token-webhook-config-file")
        );
    }

    #[tokio::test]
    async fn an_unreachable_webhook_refuses_after_its_tries_and_is_not_cached() {
        let dir = tempfile::tempdir().unwrap();
        // Nothing listens on port 1.
        let hook = webhook(dir.path(), "https://127.0.0.1:1/review", "v1beta1").unwrap();
        let outcome = hook.authenticate(&Credentials::bearer("t")).await;
        let Outcome::Rejected(why) = outcome else {
            panic!("{outcome:?}");
        };
        assert!(why.contains("calling the token webhook"), "{why}");
        assert!(
            hook.cache.as_ref().unwrap().is_empty(),
            "failures are not remembered"
        );
    }
}
