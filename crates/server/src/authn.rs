//! The authenticators the options ask for, in upstream's order: the front proxy's headers,
//! client certificates, the token file, service-account tokens, bootstrap tokens, OIDC, the
//! token webhook; and the
//! `kube-system/extension-apiserver-authentication` ConfigMap that tells delegating servers
//! (and the scheduler) which client certificates and proxy headers to trust.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use capstan_auth::authn::jwt::{self, SigningKey};
use capstan_auth::authn::serviceaccount::{
    ObjectLookup, ServiceAccountConfig, ServiceAccountTokens,
};
use capstan_auth::authn::{Authenticator, BootstrapTokens, ClientCa, RequestHeader, StaticTokens};
use capstan_auth_remote::{Oidc, TokenWebhook, TokenWebhookConfig};
use capstan_registry::Registry;
use tokio::task::JoinHandle;

use crate::config::{ServerConfig, ServiceAccountOptions};
use crate::error::{Error, Result};

/// The issuer of a server that was given no `--service-account-issuer` (kubeadm's).
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// The signing key a server generates for itself, in `--data-dir` (beside the data whose
/// legacy tokens it signed, and unlike `--cert-dir` not on a tmpfs by default).
const GENERATED_KEY: &str = "sa.key";

/// The service-account configuration of `options`: keys read, the signing key generated in
/// `data_dir` when neither a key nor an issuer is given; `external` is the `host:port`
/// clients reach the server at (the default JWKS URI).
pub fn service_account_config(
    options: &ServiceAccountOptions,
    data_dir: &Path,
    tls_private_key_file: Option<&Path>,
    external: &str,
) -> Result<ServiceAccountConfig> {
    validate(options)?;
    let (issuers, signing_key) = match (&options.signing_key_file, options.issuers.is_empty()) {
        (Some(file), false) => (
            options.issuers.clone(),
            SigningKey::load("--service-account-signing-key-file", file)?,
        ),
        (None, true) => (vec![DEFAULT_ISSUER.to_string()], generated_key(data_dir)?),
        (Some(_), true) => {
            return Err(invalid(
                "--service-account-issuer",
                "is required with --service-account-signing-key-file",
            ));
        }
        (None, false) => {
            return Err(invalid(
                "--service-account-signing-key-file",
                "is required with --service-account-issuer",
            ));
        }
    };
    let mut keys = Vec::new();
    for file in &options.key_files {
        keys.extend(jwt::load_public_keys("--service-account-key-file", file)?);
    }
    // As upstream: without key files, the serving key verifies (when it is a usable key).
    if options.key_files.is_empty()
        && let Some(file) = tls_private_key_file
    {
        match jwt::load_public_keys("--tls-private-key-file", file) {
            Ok(found) => keys.extend(found),
            Err(e) => {
                tracing::warn!(error = %e, "the serving key does not verify service-account tokens")
            }
        }
    }
    // The server always accepts what it signs.
    keys.push(signing_key.public_key().clone());
    Ok(ServiceAccountConfig {
        issuers,
        api_audiences: options.api_audiences.clone(),
        keys,
        signing_key: Some(Arc::new(signing_key)),
        max_expiration: options.max_token_expiration,
        extend_expiration: options.extend_token_expiration,
        lookup: options.lookup,
        jwks_uri: Some(
            options
                .jwks_uri
                .clone()
                .unwrap_or_else(|| format!("https://{external}/openid/v1/jwks")),
        ),
    })
}

fn invalid(option: &'static str, reason: impl Into<String>) -> Error {
    Error::Auth(capstan_auth::Error::Invalid {
        option,
        reason: reason.into(),
    })
}

fn validate(options: &ServiceAccountOptions) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for issuer in &options.issuers {
        if issuer.is_empty() {
            return Err(invalid("--service-account-issuer", "may not be empty"));
        }
        if issuer.contains(':') && url_host(issuer).is_none() {
            return Err(invalid(
                "--service-account-issuer",
                format!("{issuer:?} contains a ':' but is not a valid URL"),
            ));
        }
        if !seen.insert(issuer) {
            return Err(invalid(
                "--service-account-issuer",
                format!("{issuer:?} is given more than once"),
            ));
        }
    }
    if let Some(max) = options.max_token_expiration
        && (max < Duration::from_secs(3600) || max > Duration::from_secs(1 << 32))
    {
        return Err(invalid(
            "--service-account-max-token-expiration",
            "must be between 1 hour and 2^32 seconds",
        ));
    }
    if let Some(uri) = &options.jwks_uri
        && (!uri.starts_with("https://") || url_host(uri).is_none())
    {
        return Err(invalid(
            "--service-account-jwks-uri",
            format!("{uri:?} is not an https URL"),
        ));
    }
    if options.api_audiences.iter().any(String::is_empty) {
        return Err(invalid(
            "--api-audiences",
            "may not contain an empty audience",
        ));
    }
    Ok(())
}

/// The host of a `scheme://host[/path]` URL, if it is one.
fn url_host(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+')
    {
        return None;
    }
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty() && !host.contains(char::is_whitespace)).then_some(host)
}

/// `data_dir/sa.key`, created on first start.
fn generated_key(data_dir: &Path) -> Result<SigningKey> {
    let path = data_dir.join(GENERATED_KEY);
    if !path.exists() {
        let pem = SigningKey::generate_pem().map_err(Error::Startup)?;
        std::fs::create_dir_all(data_dir)
            .and_then(|()| capstan_serving::files::replace(&path, pem.as_bytes(), 0o600))
            .map_err(|e| {
                Error::Startup(format!(
                    "writing the service-account signing key {}: {e}",
                    path.display()
                ))
            })?;
        tracing::info!(path = %path.display(), "generated the service-account signing key");
    }
    Ok(SigningKey::load("--data-dir", &path)?)
}

/// The authenticators, and the authorities they read from files.
pub struct Authenticators {
    /// In order.
    pub chain: Vec<Arc<dyn Authenticator>>,
    /// `--client-ca-file`.
    pub client_ca: Option<Arc<ClientCa>>,
    /// `--requestheader-*`.
    pub request_header: Option<Arc<RequestHeader>>,
    /// Background work (fetching OIDC keys).
    pub tasks: Vec<JoinHandle<()>>,
    /// The server's own audiences (`--api-audiences`, else the issuers).
    pub implicit_audiences: Vec<String>,
}

/// Builds the chain of `config`; `tokens` are the static tokens (the file's and the admin's).
pub fn authenticators(
    config: &ServerConfig,
    tokens: StaticTokens,
    service_accounts: Arc<ServiceAccountTokens>,
    lookup: Arc<dyn ObjectLookup>,
) -> Result<Authenticators> {
    let mut chain: Vec<Arc<dyn Authenticator>> = Vec::new();
    let request_header = match &config.requestheader_client_ca_file {
        Some(path) => {
            let authn = Arc::new(RequestHeader::load(path, config.requestheader.clone())?);
            chain.push(authn.clone());
            Some(authn)
        }
        None => None,
    };
    let client_ca = match &config.client_ca_file {
        Some(path) => {
            let ca = Arc::new(ClientCa::load(path)?);
            chain.push(ca.clone());
            Some(ca)
        }
        None => None,
    };
    if !tokens.is_empty() {
        chain.push(Arc::new(tokens));
    }
    let implicit_audiences = service_accounts.config().audiences().to_vec();
    chain.push(service_accounts);
    if config.bootstrap_token_auth {
        chain.push(Arc::new(BootstrapTokens::new(lookup)));
    }
    let mut tasks = Vec::new();
    if let Some(oidc) = &config.oidc {
        let oidc = Arc::new(Oidc::new(oidc.clone())?);
        tasks.push(oidc.start());
        chain.push(oidc);
    }
    if let Some(webhook) = &config.token_webhook {
        chain.push(Arc::new(TokenWebhook::new(TokenWebhookConfig {
            implicit_audiences: implicit_audiences.clone(),
            ..webhook.clone()
        })?));
    }
    Ok(Authenticators {
        chain,
        client_ca,
        request_header,
        tasks,
        implicit_audiences,
    })
}

/// Reads and checks `--proxy-client-cert-file` and `--proxy-client-key-file` (a PEM chain and
/// its key), so that a wrong file fails the start rather than the first call out; both PEMs.
pub fn load_proxy_client_cert(
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok(None),
        (Some(cert), Some(key)) => (cert, key),
        (Some(_), None) => {
            return Err(invalid(
                "--proxy-client-key-file",
                "required with --proxy-client-cert-file",
            ));
        }
        (None, Some(_)) => {
            return Err(invalid(
                "--proxy-client-cert-file",
                "required with --proxy-client-key-file",
            ));
        }
    };
    let read = |option: &'static str, path: &Path| {
        std::fs::read(path).map_err(|e| invalid(option, format!("{}: {e}", path.display())))
    };
    let cert_pem = read("--proxy-client-cert-file", cert)?;
    let key_pem = read("--proxy-client-key-file", key)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| {
            invalid(
                "--proxy-client-cert-file",
                format!("{}: {e}", cert.display()),
            )
        })?;
    if chain.is_empty() {
        return Err(invalid(
            "--proxy-client-cert-file",
            format!("{}: no certificate in the file", cert.display()),
        ));
    }
    PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| invalid("--proxy-client-key-file", format!("{}: {e}", key.display())))?;
    Ok(Some((cert_pem, key_pem)))
}

/// Where the authentication info is published.
pub const AUTHENTICATION_INFO: (&str, &str) = ("kube-system", "extension-apiserver-authentication");

/// The data of the authentication-info ConfigMap: the client CA bundle, and the front
/// proxy's bundle and headers (lists as JSON arrays), as upstream writes them.
pub fn authentication_info(
    client_ca: Option<&ClientCa>,
    request_header: Option<&RequestHeader>,
) -> BTreeMap<String, String> {
    let mut data = BTreeMap::new();
    if let Some(ca) = client_ca {
        data.insert("client-ca-file".into(), ca.bundle().pem().to_string());
    }
    if let Some(rh) = request_header {
        let list = |v: &[String]| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
        let c = rh.config();
        data.insert(
            "requestheader-client-ca-file".into(),
            rh.bundle().pem().to_string(),
        );
        data.insert("requestheader-allowed-names".into(), list(&c.allowed_names));
        data.insert(
            "requestheader-username-headers".into(),
            list(&c.username_headers),
        );
        data.insert("requestheader-group-headers".into(), list(&c.group_headers));
        data.insert(
            "requestheader-extra-headers-prefix".into(),
            list(&c.extra_headers_prefix),
        );
    }
    data
}

/// Writes the authentication info; whether it changed anything.
async fn publish_authentication_info(
    registry: &Registry,
    client_ca: Option<&ClientCa>,
    request_header: Option<&RequestHeader>,
) -> capstan_registry::Result<bool> {
    let data = authentication_info(client_ca, request_header);
    let (namespace, name) = AUTHENTICATION_INFO;
    let wrote =
        capstan_registry::builtin::publish_config_map(registry, namespace, name, &data).await?;
    if wrote {
        tracing::info!(configmap = name, "published the authentication info");
    }
    Ok(wrote)
}

/// Where the server records since when it tracks the use of legacy service-account
/// tokens (kube-controller-manager's legacy token cleaner reads it).
pub const LEGACY_TOKEN_TRACKING: (&str, &str) = (
    "kube-system",
    "kube-apiserver-legacy-service-account-token-tracking",
);

/// Keeps `kube-system/kube-apiserver-legacy-service-account-token-tracking`: created with
/// `since` set to the day (UTC, `YYYY-MM-DD`) it is first written, as upstream's API server
/// does, put back within a minute when deleted, and never changed otherwise (`since` must
/// not move forward: the cleaner counts a token's unused days from it).
pub fn keep_legacy_token_tracking(registry: Arc<Registry>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tick.tick().await;
            let today = capstan_meta::time::now().0.to_string();
            let data = BTreeMap::from([("since".to_string(), today[..10].to_string())]);
            let (namespace, name) = LEGACY_TOKEN_TRACKING;
            if let Err(err) =
                capstan_registry::builtin::create_config_map(&registry, namespace, name, &data)
                    .await
            {
                tracing::warn!(%err, "recording the legacy token tracking date failed");
            }
        }
    })
}

/// Publishes the authentication info (a first attempt before returning, as the other
/// post-start hooks) and keeps it and the bundles current: files re-read within a second of a
/// change, the ConfigMap written after every change and checked every minute (an edited or
/// deleted one is put back). `published` finishes after the first write.
pub async fn keep_authentication_info(
    registry: Arc<Registry>,
    client_ca: Option<Arc<ClientCa>>,
    request_header: Option<Arc<RequestHeader>>,
    published: crate::health::PostStartHook,
) -> JoinHandle<()> {
    let mut due = tokio::time::Instant::now();
    if publish_authentication_info(&registry, client_ca.as_deref(), request_header.as_deref())
        .await
        .is_ok()
    {
        published.finish();
        due += Duration::from_secs(60);
    }
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let mut changed = false;
            if let Some(ca) = &client_ca {
                changed |= ca.reload_if_changed();
            }
            if let Some(rh) = &request_header {
                changed |= rh.bundle().reload_if_changed();
            }
            if !changed && tokio::time::Instant::now() < due {
                continue;
            }
            let client_ca = client_ca.as_deref();
            match publish_authentication_info(&registry, client_ca, request_header.as_deref()).await
            {
                Ok(_) => {
                    published.finish();
                    due = tokio::time::Instant::now() + Duration::from_secs(60);
                }
                // The storage may be down: again in a second.
                Err(err) => tracing::warn!(%err, "publishing the authentication info failed"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ServiceAccountOptions {
        ServiceAccountOptions::default()
    }

    #[test]
    fn without_options_the_server_generates_and_keeps_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let first = service_account_config(&options(), dir.path(), None, "h:1").unwrap();
        let second = service_account_config(&options(), dir.path(), None, "h:1").unwrap();
        assert_eq!(first.issuers, [DEFAULT_ISSUER]);
        assert_eq!(
            first.keys[0].key_id(),
            second.keys[0].key_id(),
            "the key is kept across starts"
        );
        assert_eq!(
            first.jwks_uri.as_deref(),
            Some("https://h:1/openid/v1/jwks")
        );
        let mode = std::fs::metadata(dir.path().join(GENERATED_KEY))
            .unwrap()
            .permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }

    #[test]
    fn bad_options_name_the_option() {
        let dir = tempfile::tempdir().unwrap();
        let cases: Vec<(ServiceAccountOptions, &str)> = vec![
            (
                ServiceAccountOptions {
                    issuers: vec!["https://a".into()],
                    ..options()
                },
                "--service-account-signing-key-file",
            ),
            (
                ServiceAccountOptions {
                    signing_key_file: Some(dir.path().join("missing.key")),
                    ..options()
                },
                "--service-account-issuer",
            ),
            (
                ServiceAccountOptions {
                    issuers: vec!["https://a".into()],
                    signing_key_file: Some(dir.path().join("missing.key")),
                    ..options()
                },
                "--service-account-signing-key-file: reading",
            ),
            (
                ServiceAccountOptions {
                    issuers: vec!["http//a:b".into()],
                    ..options()
                },
                "--service-account-issuer: \"http//a:b\"",
            ),
            (
                ServiceAccountOptions {
                    max_token_expiration: Some(Duration::from_secs(60)),
                    ..options()
                },
                "--service-account-max-token-expiration",
            ),
            (
                ServiceAccountOptions {
                    jwks_uri: Some("http://a/keys".into()),
                    ..options()
                },
                "--service-account-jwks-uri",
            ),
            (
                ServiceAccountOptions {
                    key_files: vec![dir.path().join("missing.pub")],
                    ..options()
                },
                "--service-account-key-file: reading",
            ),
        ];
        for (case, option) in cases {
            let err = service_account_config(&case, dir.path(), None, "h:1")
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(option), "{case:?}: {err}");
        }
    }
}
