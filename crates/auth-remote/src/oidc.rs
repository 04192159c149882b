//! OpenID Connect ID tokens (`--oidc-*`): JWTs of one issuer, for one client id, verified with
//! the keys the issuer publishes. The discovery document
//! (`<issuer>/.well-known/openid-configuration`) and the key set it names are fetched over
//! HTTPS in the background at start and again when a token names a key not seen yet; until
//! the first fetch succeeds, the issuer's tokens are refused.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use capstan_auth::UserInfo;
use capstan_auth::authn::jwt::{self, Algorithm, JwtError, PublicKey};
use capstan_auth::authn::{Authenticator, Credentials, Outcome, TokenCache};
use capstan_client::{Config, HttpsClient};
use http::Method;
use serde_json::Value;

use crate::error::{Error, Result};

/// `--oidc-*`.
#[derive(Debug, Clone, Default)]
pub struct OidcConfig {
    /// `--oidc-issuer-url` (https).
    pub issuer_url: String,
    /// `--oidc-client-id`: the audience tokens must carry.
    pub client_id: String,
    /// `--oidc-ca-file`; none: the host's root certificates.
    pub ca_file: Option<PathBuf>,
    /// `--oidc-username-claim` (`sub`).
    pub username_claim: String,
    /// `--oidc-username-prefix`; none: `<issuer>#` unless the claim is `email`; `-`: none.
    pub username_prefix: Option<String>,
    /// `--oidc-groups-claim`.
    pub groups_claim: Option<String>,
    /// `--oidc-groups-prefix`.
    pub groups_prefix: String,
    /// `--oidc-required-claim`: claims that must be present with these values.
    pub required_claims: BTreeMap<String, String>,
    /// `--oidc-signing-algs` (`RS256`).
    pub signing_algs: Vec<String>,
}

/// Clock skew allowed on `nbf` (the issuer's clock may run ahead).
const NBF_SKEW: i64 = 300;
/// Keys are fetched again at most this often when tokens name unknown ones.
const REFETCH_AFTER: Duration = Duration::from_secs(10);
/// How long a verified token's user is remembered (as upstream's token cache).
const CACHE_TTL: Duration = Duration::from_secs(10);

/// Tokens of one OpenID Connect issuer.
pub struct Oidc {
    config: OidcConfig,
    algorithms: Vec<Algorithm>,
    username_prefix: String,
    client: HttpsClient,
    keys: RwLock<Arc<Vec<PublicKey>>>,
    last_fetch: Mutex<Option<Instant>>,
    cache: TokenCache<(i64, UserInfo)>,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

impl Oidc {
    /// Checks the options and prepares the HTTPS client; keys are fetched by [`Oidc::start`].
    pub fn new(config: OidcConfig) -> Result<Self> {
        let issuer = "--oidc-issuer-url";
        if !config.issuer_url.starts_with("https://") {
            return Err(Error::invalid(
                issuer,
                format!("{:?} is not an https:// URL", config.issuer_url),
            ));
        }
        if config.issuer_url.parse::<http::Uri>().is_err() {
            return Err(Error::invalid(
                issuer,
                format!("{:?} is not a URL", config.issuer_url),
            ));
        }
        if config.client_id.is_empty() {
            return Err(Error::invalid(
                "--oidc-client-id",
                "required with --oidc-issuer-url",
            ));
        }
        if config.username_claim.is_empty() {
            return Err(Error::invalid("--oidc-username-claim", "may not be empty"));
        }
        let algorithms = config
            .signing_algs
            .iter()
            .map(|name| {
                Algorithm::from_name(name).ok_or_else(|| {
                    Error::invalid(
                        "--oidc-signing-algs",
                        format!(
                            "{name:?} is not supported (supported: {})",
                            Algorithm::ALL
                                .iter()
                                .map(|a| a.name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if algorithms.is_empty() {
            return Err(Error::invalid("--oidc-signing-algs", "may not be empty"));
        }
        let username_prefix = match config.username_prefix.as_deref() {
            Some("-") => String::new(),
            Some(prefix) => prefix.to_string(),
            None if config.username_claim == "email" => String::new(),
            None => format!("{}#", config.issuer_url),
        };
        let mut client_config = Config::new(config.issuer_url.clone());
        if let Some(path) = &config.ca_file {
            let pem = std::fs::read(path).map_err(|e| {
                Error::invalid("--oidc-ca-file", format!("reading {}: {e}", path.display()))
            })?;
            client_config.ca_pem = Some(pem);
        }
        let client = HttpsClient::new(&client_config, Duration::from_secs(30))
            .map_err(|e| Error::invalid("--oidc-ca-file", e.to_string()))?;
        Ok(Self {
            config,
            algorithms,
            username_prefix,
            client,
            keys: RwLock::new(Arc::new(Vec::new())),
            last_fetch: Mutex::new(None),
            cache: TokenCache::new(CACHE_TTL),
        })
    }

    /// Fetches the keys in the background, every ten seconds until it succeeds.
    pub fn start(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let oidc = self.clone();
        tokio::spawn(async move {
            loop {
                match oidc.fetch_keys().await {
                    Ok(count) => {
                        tracing::info!(issuer = %oidc.config.issuer_url, keys = count, "OIDC keys fetched");
                        return;
                    }
                    Err(err) => {
                        tracing::warn!(issuer = %oidc.config.issuer_url, %err, "fetching the OIDC keys failed; again in 10s");
                    }
                }
                tokio::time::sleep(REFETCH_AFTER).await;
            }
        })
    }

    async fn get_json(&self, url: &str) -> std::result::Result<Value, String> {
        let (status, body) = self
            .client
            .request(Method::GET, url, None, bytes::Bytes::new())
            .await
            .map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{url} answered {status}"));
        }
        serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
    }

    /// Reads the discovery document and the key set it names; how many keys were usable.
    async fn fetch_keys(&self) -> std::result::Result<usize, String> {
        *self.last_fetch.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        let issuer = self.config.issuer_url.trim_end_matches('/');
        let discovery = self
            .get_json(&format!("{issuer}/.well-known/openid-configuration"))
            .await?;
        if discovery["issuer"].as_str() != Some(self.config.issuer_url.as_str()) {
            return Err(format!(
                "the discovery document names issuer {}, not {:?}",
                discovery["issuer"], self.config.issuer_url
            ));
        }
        let jwks_uri = discovery["jwks_uri"]
            .as_str()
            .ok_or("the discovery document has no jwks_uri")?;
        let set = self.get_json(jwks_uri).await?;
        let keys: Vec<PublicKey> = set["keys"]
            .as_array()
            .ok_or("the key set has no keys")?
            .iter()
            .filter(|k| k["use"].as_str().is_none_or(|u| u == "sig"))
            .filter_map(|k| match PublicKey::from_jwk(k) {
                Ok(key) => Some(key),
                Err(why) => {
                    tracing::debug!(%why, "skipping an OIDC key");
                    None
                }
            })
            .collect();
        if keys.is_empty() {
            return Err("the key set has no usable key".into());
        }
        let count = keys.len();
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(keys);
        Ok(count)
    }

    fn keys(&self) -> Arc<Vec<PublicKey>> {
        self.keys.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether the keys may be fetched again now (not fetched in the last ten seconds).
    fn may_refetch(&self) -> bool {
        let last = *self.last_fetch.lock().unwrap_or_else(|e| e.into_inner());
        last.is_none_or(|t| t.elapsed() >= REFETCH_AFTER)
    }

    /// The signature checked (keys fetched again once for a key not seen yet); the claims.
    async fn verified_claims(&self, token: &str) -> std::result::Result<Value, String> {
        let keys = self.keys();
        let first = jwt::verify_with(token, &keys, &self.algorithms);
        let payload = match first {
            Ok(payload) => payload,
            Err(JwtError::Signature) if self.may_refetch() => {
                let kid = jwt::key_id_of(token);
                let known = kid
                    .as_deref()
                    .is_some_and(|kid| keys.iter().any(|k| k.key_id() == kid));
                if known {
                    return Err("invalid signature".into());
                }
                self.fetch_keys().await?;
                jwt::verify_with(token, &self.keys(), &self.algorithms)
                    .map_err(|e| e.to_string())?
            }
            Err(e) => return Err(e.to_string()),
        };
        serde_json::from_slice(&payload).map_err(|e| format!("malformed claims: {e}"))
    }

    /// The user the claims name; the token's expiry.
    fn user(&self, claims: &Value) -> std::result::Result<(UserInfo, i64), String> {
        let now = now();
        let audience_ok = match &claims["aud"] {
            Value::String(a) => *a == self.config.client_id,
            Value::Array(all) => all
                .iter()
                .any(|a| a.as_str() == Some(&self.config.client_id)),
            _ => false,
        };
        if !audience_ok {
            return Err("the token is not for this client id".into());
        }
        let exp = claims["exp"].as_f64().ok_or("the token has no expiry")? as i64;
        if now >= exp {
            return Err("the token has expired".into());
        }
        if let Some(nbf) = claims["nbf"].as_f64()
            && now + NBF_SKEW < nbf as i64
        {
            return Err("the token is not valid yet".into());
        }
        let claim = &self.config.username_claim;
        let name = claims[claim.as_str()]
            .as_str()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("the token has no string claim {claim:?}"))?;
        if claim == "email"
            && let Some(verified) = claims.get("email_verified")
            && verified.as_bool() != Some(true)
        {
            return Err("the token's email is not verified".into());
        }
        for (key, wanted) in &self.config.required_claims {
            if claims[key.as_str()].as_str() != Some(wanted.as_str()) {
                return Err(format!("the required claim {key:?} is missing or differs"));
            }
        }
        let mut groups = Vec::new();
        if let Some(groups_claim) = &self.config.groups_claim {
            match &claims[groups_claim.as_str()] {
                Value::Null => {}
                Value::String(g) => groups.push(g.clone()),
                Value::Array(all) => {
                    for g in all {
                        groups.push(
                            g.as_str()
                                .ok_or_else(|| {
                                    format!("the claim {groups_claim:?} is not a list of strings")
                                })?
                                .to_string(),
                        );
                    }
                }
                _ => {
                    return Err(format!(
                        "the claim {groups_claim:?} is not a string or a list of strings"
                    ));
                }
            }
        }
        let user = UserInfo {
            name: format!("{}{name}", self.username_prefix),
            groups: groups
                .into_iter()
                .map(|g| format!("{}{g}", self.config.groups_prefix))
                .collect(),
            ..Default::default()
        };
        Ok((user, exp))
    }
}

#[async_trait]
impl Authenticator for Oidc {
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
        let Some(token) = credentials.bearer_token else {
            return Outcome::NoOpinion;
        };
        if let Some((exp, user)) = self.cache.get(token)
            && now() < exp
        {
            return Outcome::authenticated(user);
        }
        // Only this issuer's tokens are this authenticator's business.
        let Ok(payload) = jwt::unverified_payload(token) else {
            return Outcome::NoOpinion;
        };
        let issuer = serde_json::from_slice::<Value>(&payload)
            .ok()
            .and_then(|c| c["iss"].as_str().map(String::from));
        if issuer.as_deref() != Some(self.config.issuer_url.as_str()) {
            return Outcome::NoOpinion;
        }
        let checked = match self.verified_claims(token).await {
            Ok(claims) => self.user(&claims),
            Err(why) => Err(why),
        };
        match checked {
            Ok((user, exp)) => {
                self.cache.insert(token, (exp, user.clone()));
                Outcome::authenticated(user)
            }
            Err(why) => Outcome::Rejected(format!("oidc: {why}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oidc(username_claim: &str, prefix: Option<&str>) -> Oidc {
        Oidc::new(OidcConfig {
            issuer_url: "https://idp.example".into(),
            client_id: "capstan".into(),
            username_claim: username_claim.into(),
            username_prefix: prefix.map(String::from),
            groups_claim: Some("roles".into()),
            signing_algs: vec!["RS256".into()],
            ..Default::default()
        })
        .unwrap()
    }

    fn claims() -> Value {
        serde_json::json!({"iss": "https://idp.example", "aud": "capstan", "sub": "1234",
            "email": "ann@example.com", "exp": now() + 60, "roles": "admin"})
    }

    #[test]
    fn user_names_are_prefixed_as_upstream_does() {
        let name = |o: Oidc| o.user(&claims()).unwrap().0.name;
        assert_eq!(name(oidc("sub", None)), "https://idp.example#1234");
        assert_eq!(name(oidc("sub", Some("-"))), "1234");
        assert_eq!(name(oidc("sub", Some("corp:"))), "corp:1234");
        assert_eq!(name(oidc("email", None)), "ann@example.com");
        let (user, _) = oidc("sub", None).user(&claims()).unwrap();
        assert_eq!(user.groups, ["admin"], "a single group as a string");
    }

    #[test]
    fn claims_that_do_not_fit_are_refused() {
        let o = oidc("sub", None);
        let mut c = claims();
        c["aud"] = serde_json::json!(["someone-else"]);
        assert!(o.user(&c).is_err());
        let mut c = claims();
        c["exp"] = (now() - 1).into();
        assert!(o.user(&c).is_err());
        let mut c = claims();
        c["roles"] = serde_json::json!([1, 2]);
        assert!(o.user(&c).is_err());
        let mut c = claims();
        c["nbf"] = (now() + 3600).into();
        assert!(o.user(&c).is_err());
        let mut c = claims();
        c.as_object_mut().unwrap().remove("sub");
        assert!(o.user(&c).is_err());
    }
}
