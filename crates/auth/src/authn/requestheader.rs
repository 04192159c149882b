//! The front proxy (`--requestheader-*`): a proxy that authenticated the user itself presents
//! a client certificate signed by the request-header authority and names the user in headers
//! (`X-Remote-User`, `X-Remote-Group`, `X-Remote-Extra-<key>`). The headers are believed
//! only on such a connection, and only from the allowed common names when any are given.

use std::path::Path;

use async_trait::async_trait;
use http::{HeaderMap, HeaderName};

use super::x509::CaBundle;
use super::{Authenticator, Credentials, Outcome};
use crate::error::{Error, Result};
use crate::user::UserInfo;

/// `--requestheader-*` options.
#[derive(Debug, Clone, Default)]
pub struct RequestHeaderConfig {
    /// `--requestheader-allowed-names`; empty: any certificate the bundle verifies.
    pub allowed_names: Vec<String>,
    /// `--requestheader-username-headers`, in order of preference.
    pub username_headers: Vec<String>,
    /// `--requestheader-group-headers`.
    pub group_headers: Vec<String>,
    /// `--requestheader-extra-headers-prefix`.
    pub extra_headers_prefix: Vec<String>,
}

/// Users named by the headers of a trusted proxy.
pub struct RequestHeader {
    bundle: CaBundle,
    config: RequestHeaderConfig,
    username_headers: Vec<HeaderName>,
    group_headers: Vec<HeaderName>,
    /// Lower-case prefixes.
    extra_prefixes: Vec<String>,
}

fn header_names(option: &'static str, names: &[String]) -> Result<Vec<HeaderName>> {
    names
        .iter()
        .map(|n| {
            HeaderName::from_bytes(n.trim().as_bytes()).map_err(|_| Error::Invalid {
                option,
                reason: format!("{n:?} is not a header name"),
            })
        })
        .collect()
}

impl RequestHeader {
    /// Reads the `--requestheader-client-ca-file` bundle at `path`; header names are checked.
    pub fn load(path: &Path, config: RequestHeaderConfig) -> Result<Self> {
        Self::with_bundle(
            CaBundle::load("--requestheader-client-ca-file", path)?,
            config,
        )
    }

    /// Trusts proxies whose certificates `bundle` verifies; header names are checked.
    pub fn with_bundle(bundle: CaBundle, config: RequestHeaderConfig) -> Result<Self> {
        let username_headers =
            header_names("--requestheader-username-headers", &config.username_headers)?;
        let group_headers = header_names("--requestheader-group-headers", &config.group_headers)?;
        let extra_prefixes = config
            .extra_headers_prefix
            .iter()
            .map(|p| {
                let p = p.trim();
                if p.is_empty() || HeaderName::from_bytes(p.as_bytes()).is_err() {
                    return Err(Error::Invalid {
                        option: "--requestheader-extra-headers-prefix",
                        reason: format!("{p:?} is not a header name prefix"),
                    });
                }
                Ok(p.to_ascii_lowercase())
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            bundle,
            config,
            username_headers,
            group_headers,
            extra_prefixes,
        })
    }

    /// The bundle (reloads, its PEM for the published authentication info).
    pub fn bundle(&self) -> &CaBundle {
        &self.bundle
    }

    /// The options it was made with.
    pub fn config(&self) -> &RequestHeaderConfig {
        &self.config
    }

    /// The user the headers name; `None` without a user name.
    fn user(&self, headers: &HeaderMap) -> Option<UserInfo> {
        let values = |name: &HeaderName| {
            headers
                .get_all(name)
                .into_iter()
                .filter_map(|v| v.to_str().ok())
                .filter(|v| !v.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let name = self
            .username_headers
            .iter()
            .find_map(|h| values(h).into_iter().next())?;
        let groups = self.group_headers.iter().flat_map(values).collect();
        let mut user = UserInfo {
            name,
            groups,
            ..Default::default()
        };
        for (header, value) in headers {
            let Some(key) = self
                .extra_prefixes
                .iter()
                .find_map(|p| header.as_str().strip_prefix(p.as_str()))
            else {
                continue;
            };
            let Ok(value) = value.to_str() else { continue };
            if key.is_empty() || value.is_empty() {
                continue;
            }
            user.extra
                .entry(unescape(key))
                .or_default()
                .push(value.to_string());
        }
        Some(user)
    }
}

/// Extra keys travel percent-encoded in header names (`X-Remote-Extra-Example.com%2fteam`).
fn unescape(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = key.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).to_ascii_lowercase()
}

#[async_trait]
impl Authenticator for RequestHeader {
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
        self.check(credentials)
    }

    fn authenticate_now(&self, credentials: &Credentials<'_>) -> Option<Outcome> {
        Some(self.check(credentials))
    }
}

impl RequestHeader {
    /// The user the front proxy names, when the request comes from it.
    fn check(&self, credentials: &Credentials<'_>) -> Outcome {
        let (Some(peer), Some(headers)) = (credentials.client_certificates, credentials.headers)
        else {
            return Outcome::NoOpinion;
        };
        let subject = match self.bundle.check(peer) {
            Ok(subject) => subject,
            // Another authority's certificate: the client-certificate authenticator's
            // business, not a proxy's.
            Err(_) => return Outcome::NoOpinion,
        };
        if !self.config.allowed_names.is_empty()
            && !self.config.allowed_names.contains(&subject.common_name)
        {
            return Outcome::Rejected(format!(
                "client certificate CN {:?} is not one of --requestheader-allowed-names",
                subject.common_name
            ));
        }
        match self.user(headers) {
            Some(user) => Outcome::authenticated(user),
            None => Outcome::NoOpinion,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::PeerCertificates;
    use crate::authn::x509::tests::TestCa;
    use rcgen::ExtendedKeyUsagePurpose;
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;

    fn peer(pem: &str) -> PeerCertificates {
        PeerCertificates::new(
            CertificateDer::pem_slice_iter(pem.as_bytes())
                .collect::<std::result::Result<_, _>>()
                .unwrap(),
        )
        .unwrap()
    }

    fn config() -> RequestHeaderConfig {
        RequestHeaderConfig {
            allowed_names: vec!["front-proxy-client".into()],
            username_headers: vec!["X-Remote-User".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_headers_prefix: vec!["X-Remote-Extra-".into()],
        }
    }

    #[test]
    fn only_an_allowed_proxy_names_users_in_headers() {
        let dir = tempfile::tempdir().unwrap();
        let proxy_ca = TestCa::new("front-proxy-ca");
        let client_ca = TestCa::new("client-ca");
        let path = dir.path().join("front-proxy-ca.crt");
        std::fs::write(&path, &proxy_ca.pem).unwrap();
        let authn = RequestHeader::load(&path, config()).unwrap();

        let mut headers = HeaderMap::new();
        headers.insert("x-remote-user", "alice".parse().unwrap());
        headers.append("x-remote-group", "dev".parse().unwrap());
        headers.append("x-remote-group", "ops".parse().unwrap());
        headers.append("x-remote-extra-scopes", "read".parse().unwrap());
        headers.append("x-remote-extra-scopes", "write".parse().unwrap());
        headers.append("x-remote-extra-example.com%2fteam", "blue".parse().unwrap());
        let ask = |peer: &PeerCertificates, headers: &HeaderMap| {
            let credentials = Credentials {
                headers: Some(headers),
                ..Credentials::default().with_client_certificates(Some(peer))
            };
            futures_lite(authn.authenticate(&credentials))
        };

        let (proxy, _) = proxy_ca.client(
            "front-proxy-client",
            &[],
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        let proxy = peer(&proxy);
        let Outcome::Authenticated { user, .. } = ask(&proxy, &headers) else {
            panic!("the allowed proxy names the user");
        };
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, ["dev", "ops"]);
        assert_eq!(user.extra["scopes"], ["read", "write"]);
        assert_eq!(user.extra["example.com/team"], ["blue"]);

        let (stranger, _) =
            proxy_ca.client("someone-else", &[], ExtendedKeyUsagePurpose::ClientAuth);
        assert!(matches!(
            ask(&peer(&stranger), &headers),
            Outcome::Rejected(_)
        ));

        let (other, _) = client_ca.client(
            "front-proxy-client",
            &[],
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        assert_eq!(
            ask(&peer(&other), &headers),
            Outcome::NoOpinion,
            "another authority's certificate"
        );

        assert_eq!(
            ask(&proxy, &HeaderMap::new()),
            Outcome::NoOpinion,
            "no user header"
        );
    }

    /// Runs a future that never waits (the authenticator reads no I/O).
    fn futures_lite<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn bad_header_names_name_the_option() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.crt");
        std::fs::write(&path, TestCa::new("ca").pem).unwrap();
        let mut bad = config();
        bad.group_headers = vec!["X Remote Group".into()];
        let err = RequestHeader::load(&path, bad).err().unwrap().to_string();
        assert!(err.contains("--requestheader-group-headers"), "{err}");
        let err = RequestHeader::load(&dir.path().join("missing"), config())
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("--requestheader-client-ca-file"), "{err}");
    }
}
