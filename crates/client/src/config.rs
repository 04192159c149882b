//! Where the API server is and how to talk to it: from a kubeconfig, as client-go reads one.

use std::path::{Path, PathBuf};

use base64::Engine;

use crate::error::{Error, Result};

/// The representation of request and response bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContentType {
    /// `application/json`.
    Json,
    /// `application/vnd.kubernetes.protobuf` (with JSON accepted for kinds that have no
    /// protobuf form).
    #[default]
    Protobuf,
}

impl ContentType {
    /// Reads `application/json` or `application/vnd.kubernetes.protobuf` (the values of
    /// `--kube-api-content-type`).
    pub fn parse(media_type: &str) -> Result<Self> {
        match media_type {
            "application/json" => Ok(ContentType::Json),
            "application/vnd.kubernetes.protobuf" => Ok(ContentType::Protobuf),
            other => Err(Error::Config(format!(
                "unsupported content type {other:?}: use application/json or application/vnd.kubernetes.protobuf"
            ))),
        }
    }
}

/// How to reach and authenticate to an API server.
#[derive(Clone)]
pub struct Config {
    /// `https://host:port`.
    pub server: String,
    /// CA certificates (PEM) the server's certificate must chain to; none means the
    /// platform's roots are not consulted either: set one, or `insecure`.
    pub ca_pem: Option<Vec<u8>>,
    /// Skip verifying the server's certificate (kubeconfig `insecure-skip-tls-verify`).
    pub insecure: bool,
    /// A bearer token.
    pub token: Option<String>,
    /// A client certificate and its key (PEM).
    pub client_identity: Option<(Vec<u8>, Vec<u8>)>,
    /// The namespace of the current context.
    pub namespace: Option<String>,
    /// Bodies in JSON or protobuf.
    pub content_type: ContentType,
    /// Requests per second (client-side limit; 0 for none).
    pub qps: f32,
    /// Requests allowed at once above the rate.
    pub burst: u32,
    /// The User-Agent header.
    pub user_agent: String,
}

/// Everything but the secrets: the token and the client key show as `<redacted>`.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |present: bool| if present { Some("<redacted>") } else { None };
        f.debug_struct("Config")
            .field("server", &self.server)
            .field(
                "ca_pem",
                &self.ca_pem.as_ref().map(|p| String::from_utf8_lossy(p)),
            )
            .field("insecure", &self.insecure)
            .field("token", &redacted(self.token.is_some()))
            .field(
                "client_identity",
                &self
                    .client_identity
                    .as_ref()
                    .map(|(cert, _)| (String::from_utf8_lossy(cert), "<redacted>")),
            )
            .field("namespace", &self.namespace)
            .field("content_type", &self.content_type)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("user_agent", &self.user_agent)
            .finish()
    }
}

impl Config {
    /// A configuration for `server` with no credentials, protobuf bodies and client-go's
    /// default limits of the scheduler (50 QPS, burst 100).
    pub fn new(server: impl Into<String>) -> Self {
        Self {
            server: server.into(),
            ca_pem: None,
            insecure: false,
            token: None,
            client_identity: None,
            namespace: None,
            content_type: ContentType::Protobuf,
            qps: 50.0,
            burst: 100,
            user_agent: format!("capstan-client/{}", env!("CARGO_PKG_VERSION")),
        }
    }

    /// Reads the kubeconfig at `path` (its current context); `master`, when given, replaces
    /// the server address (`--master`).
    pub fn from_kubeconfig(path: &Path, master: Option<&str>) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("reading kubeconfig {}: {e}", path.display())))?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::from_kubeconfig_str(&text, &base, master)
    }

    /// Reads kubeconfig text; relative file names in it are relative to `base`.
    pub fn from_kubeconfig_str(text: &str, base: &Path, master: Option<&str>) -> Result<Self> {
        let doc: Kubeconfig = serde_saphyr::from_str(text)
            .map_err(|e| Error::Config(format!("the kubeconfig does not parse: {e}")))?;
        let current = doc.current_context.as_str();
        if current.is_empty() {
            return Err(Error::Config(
                "the kubeconfig has no current-context".into(),
            ));
        }
        let missing = |what: &str, name: &str| {
            Error::Config(format!("the kubeconfig has no {what} named {name:?}"))
        };
        let context = doc
            .contexts
            .iter()
            .find(|c| c.name == current)
            .map(|c| &c.context)
            .ok_or_else(|| missing("context", current))?;
        let cluster = doc
            .clusters
            .iter()
            .find(|c| c.name == context.cluster)
            .map(|c| &c.cluster)
            .ok_or_else(|| missing("cluster", &context.cluster))?;
        let default_user = AuthInfo::default();
        let user = match context.user.as_str() {
            "" => &default_user,
            name => doc
                .users
                .iter()
                .find(|u| u.name == name)
                .map(|u| &u.user)
                .ok_or_else(|| missing("user", name))?,
        };
        let server = master.filter(|m| !m.is_empty()).unwrap_or(&cluster.server);
        if server.is_empty() {
            return Err(Error::Config(
                "the kubeconfig's cluster has no server".into(),
            ));
        }
        let mut config = Config::new(server);
        config.ca_pem = data_or_file(
            "certificate-authority",
            &cluster.certificate_authority_data,
            &cluster.certificate_authority,
            base,
        )?;
        config.insecure = cluster.insecure_skip_tls_verify;
        config.token = if !user.token.is_empty() {
            Some(user.token.clone())
        } else if !user.token_file.is_empty() {
            Some(
                std::fs::read_to_string(resolve(base, &user.token_file))
                    .map_err(|e| {
                        Error::Config(format!("reading tokenFile {}: {e}", user.token_file))
                    })?
                    .trim()
                    .to_string(),
            )
        } else {
            None
        };
        let cert = data_or_file(
            "client-certificate",
            &user.client_certificate_data,
            &user.client_certificate,
            base,
        )?;
        let key = data_or_file("client-key", &user.client_key_data, &user.client_key, base)?;
        config.client_identity = cert.zip(key);
        config.namespace = Some(context.namespace.clone()).filter(|n| !n.is_empty());
        Ok(config)
    }
}

/// The parts of a kubeconfig the client uses (strings stay strings: a user named `y` is not
/// a boolean).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Kubeconfig {
    #[serde(rename = "current-context")]
    current_context: String,
    clusters: Vec<Named<Cluster>>,
    contexts: Vec<NamedContext>,
    users: Vec<NamedUser>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Named<T> {
    name: String,
    cluster: T,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct NamedContext {
    name: String,
    context: Context,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct NamedUser {
    name: String,
    user: AuthInfo,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, rename_all = "kebab-case")]
struct Cluster {
    server: String,
    certificate_authority: String,
    certificate_authority_data: String,
    insecure_skip_tls_verify: bool,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Context {
    cluster: String,
    user: String,
    namespace: String,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, rename_all = "kebab-case")]
struct AuthInfo {
    token: String,
    #[serde(rename = "tokenFile")]
    token_file: String,
    client_certificate: String,
    client_certificate_data: String,
    client_key: String,
    client_key_data: String,
}

fn resolve(base: &Path, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// `<what>-data` (base64) when set, else the file `file` names.
fn data_or_file(what: &str, data: &str, file: &str, base: &Path) -> Result<Option<Vec<u8>>> {
    if !data.is_empty() {
        return base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map(Some)
            .map_err(|e| Error::Config(format!("{what}-data is not base64: {e}")));
    }
    if file.is_empty() {
        return Ok(None);
    }
    std::fs::read(resolve(base, file))
        .map(Some)
        .map_err(|e| Error::Config(format!("reading {what} {file}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_context_picks_cluster_user_and_namespace() {
        let dir = std::env::temp_dir().join(format!("capstan-client-kc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ca.crt"), "PEM").unwrap();
        std::fs::write(dir.join("token"), "file-token\n").unwrap();
        let text = "apiVersion: v1\nkind: Config\ncurrent-context: b\nclusters:\n- name: one\n  cluster:\n    server: https://one:6443\n- name: two\n  cluster:\n    server: https://two:6443\n    certificate-authority: ca.crt\ncontexts:\n- name: a\n  context: {cluster: one, user: x}\n- name: b\n  context: {cluster: two, user: y, namespace: team}\nusers:\n- name: x\n  user: {token: abc}\n- name: y\n  user: {tokenFile: token}\n";
        let c = Config::from_kubeconfig_str(text, &dir, None).unwrap();
        assert_eq!(c.server, "https://two:6443");
        assert_eq!(c.ca_pem.as_deref(), Some(b"PEM".as_slice()));
        assert_eq!(c.token.as_deref(), Some("file-token"));
        let printed = format!("{c:?}");
        assert!(
            !printed.contains("file-token") && printed.contains("<redacted>"),
            "{printed}"
        );
        assert_eq!(c.namespace.as_deref(), Some("team"));
        let c = Config::from_kubeconfig_str(text, &dir, Some("https://master:1")).unwrap();
        assert_eq!(c.server, "https://master:1");
        let broken = Config::from_kubeconfig_str("current-context: nope\n", &dir, None);
        assert!(matches!(broken, Err(Error::Config(m)) if m.contains("nope")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
