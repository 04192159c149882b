//! The authenticators the options ask for, in upstream's order: client certificates, the
//! token file, service-account tokens, bootstrap tokens.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use capstan_auth::authn::jwt::{self, SigningKey};
use capstan_auth::authn::serviceaccount::{
    ObjectLookup, ServiceAccountConfig, ServiceAccountTokens,
};
use capstan_auth::authn::{Authenticator, BootstrapTokens, ClientCa, StaticTokens};
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
            .and_then(|()| write_private(&path, pem.as_bytes()))
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

fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(contents)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// The authenticators, and the task that keeps the client CA current.
pub struct Authenticators {
    /// In order.
    pub chain: Vec<Arc<dyn Authenticator>>,
    /// Re-reads `--client-ca-file` when it changes.
    pub client_ca_reload: Option<JoinHandle<()>>,
}

/// Builds the chain of `config`; `tokens` are the static tokens (the file's and the admin's).
pub fn authenticators(
    config: &ServerConfig,
    tokens: StaticTokens,
    service_accounts: Arc<ServiceAccountTokens>,
    lookup: Arc<dyn ObjectLookup>,
) -> Result<Authenticators> {
    let mut chain: Vec<Arc<dyn Authenticator>> = Vec::new();
    let mut client_ca_reload = None;
    if let Some(path) = &config.client_ca_file {
        let ca = Arc::new(ClientCa::load(path)?);
        chain.push(ca.clone());
        client_ca_reload = Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                ca.reload_if_changed();
            }
        }));
    }
    if !tokens.is_empty() {
        chain.push(Arc::new(tokens));
    }
    chain.push(service_accounts);
    if config.bootstrap_token_auth {
        chain.push(Arc::new(BootstrapTokens::new(lookup)));
    }
    Ok(Authenticators {
        chain,
        client_ca_reload,
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
