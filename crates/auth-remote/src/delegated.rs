//! Delegated authentication and authorization, for servers beside the API server (the
//! scheduler's secure port): bearer tokens are reviewed by the API server (TokenReview),
//! requests authorized by it (SubjectAccessReview), and the client and front-proxy
//! authorities are read from its `kube-system/extension-apiserver-authentication` ConfigMap
//! unless given as files.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use capstan_auth::UserInfo;
use capstan_auth::authn::{
    Authenticator, AuthenticatorChain, CaBundle, ClientCa, Credentials, PeerCertificates,
    RequestHeader, RequestHeaderConfig,
};
use capstan_auth::authz::{Attributes, Authorizer, Decision};
use capstan_client::{Config, HttpsClient};
use http::{HeaderMap, Method};

use crate::authz_webhook::AuthorizationWebhook;
use crate::error::{Error, Result};
use crate::webhook::TokenWebhook;

/// The delegation options (`--authentication-*`, `--authorization-*`, `--client-ca-file`,
/// `--requestheader-*`).
#[derive(Debug, Clone)]
pub struct DelegatedConfig {
    /// `--authentication-kubeconfig`: where tokens are reviewed and the ConfigMap read;
    /// `None`: tokens are not accepted and nothing is looked up.
    pub authentication_kubeconfig: Option<PathBuf>,
    /// `--authentication-skip-lookup`.
    pub skip_lookup: bool,
    /// `--authentication-tolerate-lookup-failure`.
    pub tolerate_lookup_failure: bool,
    /// `--authentication-token-webhook-cache-ttl`.
    pub token_cache_ttl: Duration,
    /// `--authorization-kubeconfig`: where requests are authorized; `None`: every request
    /// not always allowed is forbidden.
    pub authorization_kubeconfig: Option<PathBuf>,
    /// `--authorization-always-allow-paths` (exact, or a prefix ending in `*`).
    pub always_allow_paths: Vec<String>,
    /// `--authorization-webhook-cache-authorized-ttl`.
    pub authorized_ttl: Duration,
    /// `--authorization-webhook-cache-unauthorized-ttl`.
    pub unauthorized_ttl: Duration,
    /// `--client-ca-file`.
    pub client_ca_file: Option<PathBuf>,
    /// `--requestheader-client-ca-file`.
    pub request_header_ca_file: Option<PathBuf>,
    /// The other `--requestheader-*` options.
    pub request_header: RequestHeaderConfig,
}

/// Where the API server publishes its authentication settings.
const CONFIG_MAP_PATH: &str =
    "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
/// How often the ConfigMap's authorities are read again.
const REFRESH: Duration = Duration::from_secs(30);
/// How long one call to the API server may take (upstream's delegation timeout).
const TIMEOUT: Duration = Duration::from_secs(10);
/// Members of this group are allowed everything without asking (as upstream).
const PRIVILEGED_GROUP: &str = "system:masters";

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 401: the credentials are not valid.
    Unauthorized,
    /// 403, with upstream's message.
    Forbidden(String),
}

/// Authentication and authorization delegated to the API server.
pub struct Delegated {
    authenticators: AuthenticatorChain,
    authorizer: Option<AuthorizationWebhook>,
    always_allow_paths: Vec<String>,
    refresher: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Delegated {
    fn drop(&mut self) {
        if let Some(task) = &self.refresher {
            task.abort();
        }
    }
}

/// The authorities and headers of the authentication ConfigMap.
#[derive(Debug, Default, Clone)]
struct Published {
    client_ca: Option<String>,
    request_header_ca: Option<String>,
    request_header: RequestHeaderConfig,
}

fn json_list(data: &serde_json::Value, key: &str) -> Vec<String> {
    data[key]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

/// Reads the ConfigMap: `Ok(None)` when there is none.
async fn look_up(
    client: &HttpsClient,
    server: &str,
) -> std::result::Result<Option<Published>, String> {
    let url = format!("{}{CONFIG_MAP_PATH}", server.trim_end_matches('/'));
    let (status, body) = client
        .request(Method::GET, &url, None, bytes::Bytes::new())
        .await
        .map_err(|e| e.to_string())?;
    if status.as_u16() == 404 {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(format!(
            "reading configmap/extension-apiserver-authentication in kube-system: {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    let map: serde_json::Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
    let data = &map["data"];
    let text = |key: &str| {
        data[key]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    Ok(Some(Published {
        client_ca: text("client-ca-file"),
        request_header_ca: text("requestheader-client-ca-file"),
        request_header: RequestHeaderConfig {
            allowed_names: json_list(data, "requestheader-allowed-names"),
            username_headers: json_list(data, "requestheader-username-headers"),
            group_headers: json_list(data, "requestheader-group-headers"),
            extra_headers_prefix: json_list(data, "requestheader-extra-headers-prefix"),
        },
    }))
}

fn kubeconfig(option: &'static str, path: &std::path::Path) -> Result<(Config, HttpsClient)> {
    let config =
        Config::from_kubeconfig(path, None).map_err(|e| Error::invalid(option, e.to_string()))?;
    if !config.server.starts_with("https://") {
        return Err(Error::invalid(
            option,
            format!("the server {:?} is not an https:// URL", config.server),
        ));
    }
    let client =
        HttpsClient::new(&config, TIMEOUT).map_err(|e| Error::invalid(option, e.to_string()))?;
    Ok((config, client))
}

impl Delegated {
    /// Builds the authenticators and the authorizer, looking the missing authorities up in
    /// the ConfigMap (failures fatal unless tolerated, as upstream). Needs a Tokio runtime.
    pub async fn new(config: DelegatedConfig) -> Result<Self> {
        let mut authenticators: Vec<Arc<dyn Authenticator>> = Vec::new();
        let mut published = Published::default();
        let mut lookup = None;
        match &config.authentication_kubeconfig {
            None => tracing::warn!(
                "no --authentication-kubeconfig: tokens are not accepted, and no client CA is \
                 looked up in configmap/extension-apiserver-authentication"
            ),
            Some(path) => {
                let option = "--authentication-kubeconfig";
                let (server, client) = kubeconfig(option, path)?;
                let missing =
                    config.client_ca_file.is_none() || config.request_header_ca_file.is_none();
                if missing && !config.skip_lookup {
                    match look_up(&client, &server.server).await {
                        Ok(Some(found)) => published = found,
                        Ok(None) => tracing::warn!(
                            "configmap/extension-apiserver-authentication in kube-system is \
                             missing: client certificates are not looked up"
                        ),
                        Err(why) if config.tolerate_lookup_failure => tracing::warn!(
                            error = %why,
                            "looking up the authentication configuration failed; going on \
                             without it (--authentication-tolerate-lookup-failure)"
                        ),
                        Err(why) => return Err(Error::invalid(option, why)),
                    }
                    lookup = Some((client.clone(), server.server.clone()));
                }
                let token = TokenWebhook::delegated(&server, client, config.token_cache_ttl);
                authenticators.push(Arc::new(token));
            }
        }
        let map_err = |option: &'static str| {
            move |e: capstan_auth::Error| Error::invalid(option, e.to_string())
        };
        // The front proxy first, then client certificates, then tokens (upstream's order).
        let request_header = match (&config.request_header_ca_file, &published.request_header_ca) {
            (Some(path), _) => Some((
                RequestHeader::load(path, config.request_header.clone())
                    .map_err(map_err("--requestheader-client-ca-file"))?,
                false,
            )),
            (None, Some(pem)) => Some((
                RequestHeader::with_bundle(
                    CaBundle::from_pem("--requestheader-client-ca-file", pem)
                        .map_err(map_err("--requestheader-client-ca-file"))?,
                    published.request_header.clone(),
                )
                .map_err(map_err("--requestheader-client-ca-file"))?,
                true,
            )),
            (None, None) => None,
        };
        let client_ca = match (&config.client_ca_file, &published.client_ca) {
            (Some(path), _) => Some((
                ClientCa::load(path).map_err(map_err("--client-ca-file"))?,
                false,
            )),
            (None, Some(pem)) => Some((
                ClientCa::with_bundle(
                    CaBundle::from_pem("--client-ca-file", pem)
                        .map_err(map_err("--client-ca-file"))?,
                ),
                true,
            )),
            (None, None) => None,
        };
        // The authorities taken from the ConfigMap, and how to find each in a newer copy.
        let mut refreshed: Vec<(PublishedPem, Arc<dyn BundleOwner>)> = Vec::new();
        let mut chain: Vec<Arc<dyn Authenticator>> = Vec::new();
        if let Some((rh, from_map)) = request_header {
            let rh = Arc::new(rh);
            if from_map {
                refreshed.push((|p| p.request_header_ca.clone(), rh.clone()));
            }
            chain.push(rh);
        }
        if let Some((ca, from_map)) = client_ca {
            let ca = Arc::new(ca);
            if from_map {
                refreshed.push((|p| p.client_ca.clone(), ca.clone()));
            }
            chain.push(ca);
        }
        chain.extend(authenticators);
        let refresher = match lookup {
            Some((client, server)) if !refreshed.is_empty() => Some(tokio::spawn(async move {
                loop {
                    tokio::time::sleep(REFRESH).await;
                    let Ok(Some(found)) = look_up(&client, &server).await else {
                        continue;
                    };
                    for (pick, owner) in &refreshed {
                        if let Some(pem) = pick(&found) {
                            match owner.ca_bundle().replace(&pem) {
                                Ok(true) => {
                                    tracing::info!("a published CA bundle changed; reloaded")
                                }
                                Ok(false) => {}
                                Err(e) => {
                                    tracing::warn!(error = %e, "a published CA bundle does not parse; keeping the old one")
                                }
                            }
                        }
                    }
                }
            })),
            _ => None,
        };
        let authorizer = match &config.authorization_kubeconfig {
            None => {
                tracing::warn!(
                    "no --authorization-kubeconfig: every request but the always-allowed \
                     paths is forbidden"
                );
                None
            }
            Some(path) => {
                let (server, client) = kubeconfig("--authorization-kubeconfig", path)?;
                Some(AuthorizationWebhook::delegated(
                    &server,
                    client,
                    config.authorized_ttl,
                    config.unauthorized_ttl,
                ))
            }
        };
        Ok(Self {
            authenticators: AuthenticatorChain::new(chain, true),
            authorizer,
            always_allow_paths: config.always_allow_paths,
            refresher,
        })
    }

    /// Whether `path` is served to anyone (`--authorization-always-allow-paths`).
    pub fn always_allowed(&self, path: &str) -> bool {
        self.always_allow_paths
            .iter()
            .any(|p| match p.strip_suffix('*') {
                Some(prefix) => path.starts_with(prefix),
                None => p == path,
            })
    }

    /// Authenticates a request for the non-resource `path` and authorizes it; the user, or
    /// why not.
    pub async fn admit(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        peer: Option<&PeerCertificates>,
    ) -> std::result::Result<UserInfo, Refusal> {
        let token = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let credentials = match token {
            Some(token) => Credentials::bearer(token),
            None => Credentials::default(),
        }
        .with_headers(headers)
        .with_client_certificates(peer);
        let user = self
            .authenticators
            .authenticate(&credentials)
            .await
            .map_err(|why| {
                tracing::debug!(%why, "unauthorized");
                Refusal::Unauthorized
            })?;
        if self.always_allowed(path) || user.groups.iter().any(|g| g == PRIVILEGED_GROUP) {
            return Ok(user);
        }
        let verb = method.as_str().to_ascii_lowercase();
        let reason = match &self.authorizer {
            None => String::new(),
            Some(authorizer) => {
                let attributes = Attributes {
                    user: user.clone(),
                    verb: verb.clone(),
                    path: path.into(),
                    ..Default::default()
                };
                match authorizer.authorize(&attributes).await {
                    Decision::Allow => return Ok(user),
                    Decision::Deny(reason) | Decision::NoOpinion(reason) => reason,
                }
            }
        };
        let mut message = format!(
            "forbidden: User {:?} cannot {verb} path {path:?}",
            user.name
        );
        if !reason.is_empty() {
            message.push_str(": ");
            message.push_str(&reason);
        }
        Err(Refusal::Forbidden(message))
    }
}

/// Picks one authority's PEM text out of the ConfigMap.
type PublishedPem = fn(&Published) -> Option<String>;

/// An authenticator holding a CA bundle published in the ConfigMap.
trait BundleOwner: Send + Sync {
    fn ca_bundle(&self) -> &CaBundle;
}

impl BundleOwner for ClientCa {
    fn ca_bundle(&self) -> &CaBundle {
        self.bundle()
    }
}

impl BundleOwner for RequestHeader {
    fn ca_bundle(&self) -> &CaBundle {
        self.bundle()
    }
}
