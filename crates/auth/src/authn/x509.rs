//! Client certificates (`--client-ca-file`): a chain that a trusted authority signed for
//! client authentication names its user in the subject's common name and its groups in the
//! organizations.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use async_trait::async_trait;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, TrustAnchor, UnixTime};

use super::{Authenticator, Credentials, Outcome};
use crate::error::{Error, Result};
use crate::user::UserInfo;

/// The extra key upstream records the credential's identity under.
pub(crate) const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";

/// The chain a client presented on its connection, and what the last check of it decided
/// (a connection's requests share it, so the signatures are checked once per connection and
/// authority bundle, not per request).
#[derive(Debug)]
pub struct PeerCertificates {
    chain: Vec<CertificateDer<'static>>,
    checked: Mutex<Option<Checked>>,
}

#[derive(Debug, Clone)]
struct Checked {
    bundle: u64,
    /// Until when the decision holds (the earliest expiry on the chain), Unix seconds.
    until: u64,
    outcome: Outcome,
}

impl PeerCertificates {
    /// The chain (leaf first), as the TLS handshake gave it; `None` when it is empty.
    pub fn new(chain: Vec<CertificateDer<'static>>) -> Option<Self> {
        (!chain.is_empty()).then(|| Self {
            chain,
            checked: Mutex::new(None),
        })
    }

    /// The certificates, leaf first.
    pub fn chain(&self) -> &[CertificateDer<'static>] {
        &self.chain
    }
}

/// The authorities of `--client-ca-file`, read again when the file changes.
pub struct ClientCa {
    path: PathBuf,
    bundle: RwLock<Arc<Bundle>>,
}

struct Bundle {
    /// Distinguishes bundles, so that a connection's cached decision is made again after a
    /// reload.
    generation: u64,
    stamp: Option<SystemTime>,
    anchors: Vec<TrustAnchor<'static>>,
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl ClientCa {
    /// Reads the PEM bundle at `path`; every certificate in it is a trusted authority.
    pub fn load(path: &Path) -> Result<Self> {
        let bundle = Self::read(path, 1)?;
        Ok(Self {
            path: path.into(),
            bundle: RwLock::new(Arc::new(bundle)),
        })
    }

    fn read(path: &Path, generation: u64) -> Result<Bundle> {
        let stamp = modified(path);
        let pem = std::fs::read(path).map_err(|source| Error::File {
            option: "--client-ca-file",
            path: path.into(),
            source,
        })?;
        Ok(Bundle {
            generation,
            stamp,
            anchors: anchors_from_pem(&pem).map_err(|reason| Error::Invalid {
                option: "--client-ca-file",
                reason: format!("{}: {reason}", path.display()),
            })?,
        })
    }

    /// Reads the file again when it changed since the last read; a file that no longer
    /// parses keeps the old authorities (and is logged).
    pub fn reload_if_changed(&self) {
        let current = self.current();
        if modified(&self.path) == current.stamp {
            return;
        }
        match Self::read(&self.path, current.generation + 1) {
            Ok(bundle) => {
                tracing::info!(path = %self.path.display(), "client CA bundle reloaded");
                *self.bundle.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(bundle);
            }
            Err(err) => {
                tracing::warn!(%err, "reloading the client CA bundle failed; keeping the old one")
            }
        }
    }

    fn current(&self) -> Arc<Bundle> {
        self.bundle
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Checks `peer` against the current bundle (once per connection and bundle while the
    /// chain is valid).
    fn check(&self, peer: &PeerCertificates) -> Outcome {
        let bundle = self.current();
        let now = now_secs();
        let mut cached = peer.checked.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cached.as_ref()
            && c.bundle == bundle.generation
            && now < c.until
        {
            return c.outcome.clone();
        }
        let (outcome, until) = verify(&bundle.anchors, &peer.chain, now);
        *cached = Some(Checked {
            bundle: bundle.generation,
            until,
            outcome: outcome.clone(),
        });
        outcome
    }
}

/// Trust anchors from the certificates of a PEM bundle.
pub(crate) fn anchors_from_pem(
    pem: &[u8],
) -> std::result::Result<Vec<TrustAnchor<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| format!("reading certificates: {e}"))?;
    if certs.is_empty() {
        return Err("no certificate in the file".into());
    }
    certs
        .iter()
        .map(|c| {
            webpki::anchor_from_trusted_cert(c)
                .map(|a| a.to_owned())
                .map_err(|e| format!("not a usable authority certificate: {e}"))
        })
        .collect()
}

/// Verifies a client chain for client authentication at `now`; the outcome and until when
/// it holds.
pub(crate) fn verify(
    anchors: &[TrustAnchor<'_>],
    chain: &[CertificateDer<'static>],
    now: u64,
) -> (Outcome, u64) {
    let Some((leaf, intermediates)) = chain.split_first() else {
        return (Outcome::NoOpinion, u64::MAX);
    };
    let rejected = |why: String| (Outcome::Rejected(why), u64::MAX);
    let cert = match webpki::EndEntityCert::try_from(leaf) {
        Ok(cert) => cert,
        Err(e) => return rejected(format!("unreadable client certificate: {e}")),
    };
    let verified = cert.verify_for_usage(
        webpki::ALL_VERIFICATION_ALGS,
        anchors,
        intermediates,
        UnixTime::since_unix_epoch(std::time::Duration::from_secs(now)),
        webpki::KeyUsage::client_auth(),
        None,
        None,
    );
    if let Err(e) = verified {
        return rejected(format!("verifying certificate: {e}"));
    }
    let until = chain
        .iter()
        .filter_map(|c| x509_parser::parse_x509_certificate(c).ok())
        .map(|(_, c)| c.validity().not_after.timestamp().max(0) as u64)
        .min()
        .unwrap_or(u64::MAX);
    let Ok((_, parsed)) = x509_parser::parse_x509_certificate(leaf) else {
        return rejected("unreadable client certificate".into());
    };
    let subject = parsed.subject();
    let name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .unwrap_or_default();
    if name.is_empty() {
        // A certificate without a common name names nobody; the request goes on as if it
        // had none.
        return (Outcome::NoOpinion, until);
    }
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(String::from)
        .collect();
    let digest = ring::digest::digest(&ring::digest::SHA256, leaf.as_ref());
    let mut user = UserInfo {
        name: name.to_string(),
        groups,
        ..Default::default()
    };
    user.extra.insert(
        CREDENTIAL_ID.into(),
        vec![format!("X509SHA256={}", hex(digest.as_ref()))],
    );
    (Outcome::authenticated(user), until)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[async_trait]
impl Authenticator for ClientCa {
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
        match credentials.client_certificates {
            Some(peer) => self.check(peer),
            None => Outcome::NoOpinion,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rcgen::{
        BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose,
        IsCa, Issuer, KeyPair,
    };

    /// A test authority that signs client certificates.
    pub struct TestCa {
        pub pem: String,
        issuer: Issuer<'static, KeyPair>,
    }

    impl TestCa {
        pub fn new(name: &str) -> Self {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::default();
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name = DistinguishedName::new();
            params.distinguished_name.push(DnType::CommonName, name);
            let cert = params.self_signed(&key).unwrap();
            Self {
                pem: cert.pem(),
                issuer: Issuer::new(params, key),
            }
        }

        /// A client certificate for `cn` in `orgs`, with its key (PEM).
        pub fn client(
            &self,
            cn: &str,
            orgs: &[&str],
            usage: ExtendedKeyUsagePurpose,
        ) -> (String, String) {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::default();
            params.distinguished_name = DistinguishedName::new();
            if !cn.is_empty() {
                params.distinguished_name.push(DnType::CommonName, cn);
            }
            for o in orgs {
                params.distinguished_name.push(DnType::OrganizationName, *o);
            }
            params.extended_key_usages = vec![usage];
            let cert = params.signed_by(&key, &self.issuer).unwrap();
            (cert.pem(), key.serialize_pem())
        }
    }

    fn chain(pem: &str) -> PeerCertificates {
        PeerCertificates::new(
            CertificateDer::pem_slice_iter(pem.as_bytes())
                .collect::<std::result::Result<_, _>>()
                .unwrap(),
        )
        .unwrap()
    }

    fn user(outcome: Outcome) -> UserInfo {
        match outcome {
            Outcome::Authenticated { user, .. } => user,
            other => panic!("not authenticated: {other:?}"),
        }
    }

    #[tokio::test]
    async fn users_come_from_certificates_signed_by_the_bundle() {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new("client-ca");
        let other = TestCa::new("other-ca");
        let path = dir.path().join("ca.crt");
        std::fs::write(&path, &ca.pem).unwrap();
        let authn = ClientCa::load(&path).unwrap();

        // (rcgen keeps one value per attribute type: one organization here.)
        let (alice, _) = ca.client("alice", &["dev"], ExtendedKeyUsagePurpose::ClientAuth);
        let peer = chain(&alice);
        let creds = Credentials::default().with_client_certificates(Some(&peer));
        let u = user(authn.authenticate(&creds).await);
        assert_eq!(u.name, "alice");
        assert_eq!(u.groups, ["dev"]);
        assert!(u.extra[CREDENTIAL_ID][0].starts_with("X509SHA256="));

        let (mallory, _) = other.client("mallory", &[], ExtendedKeyUsagePurpose::ClientAuth);
        let peer = chain(&mallory);
        let creds = Credentials::default().with_client_certificates(Some(&peer));
        assert!(matches!(
            authn.authenticate(&creds).await,
            Outcome::Rejected(_)
        ));

        let (server, _) = ca.client("web", &[], ExtendedKeyUsagePurpose::ServerAuth);
        let peer = chain(&server);
        let creds = Credentials::default().with_client_certificates(Some(&peer));
        assert!(
            matches!(authn.authenticate(&creds).await, Outcome::Rejected(_)),
            "a certificate for serving only does not authenticate clients"
        );

        let (nameless, _) = ca.client("", &["dev"], ExtendedKeyUsagePurpose::ClientAuth);
        let peer = chain(&nameless);
        let creds = Credentials::default().with_client_certificates(Some(&peer));
        assert_eq!(authn.authenticate(&creds).await, Outcome::NoOpinion);
    }

    #[tokio::test]
    async fn a_changed_bundle_is_read_again_and_decides_anew() {
        let dir = tempfile::tempdir().unwrap();
        let first = TestCa::new("first");
        let second = TestCa::new("second");
        let path = dir.path().join("ca.crt");
        std::fs::write(&path, &first.pem).unwrap();
        let authn = ClientCa::load(&path).unwrap();
        let (bob, _) = second.client("bob", &[], ExtendedKeyUsagePurpose::ClientAuth);
        let peer = chain(&bob);
        let creds = Credentials::default().with_client_certificates(Some(&peer));
        assert!(matches!(
            authn.authenticate(&creds).await,
            Outcome::Rejected(_)
        ));

        // A broken file keeps the old bundle.
        std::fs::write(&path, "not a certificate").unwrap();
        filetime_bump(&path);
        authn.reload_if_changed();
        assert!(matches!(
            authn.authenticate(&creds).await,
            Outcome::Rejected(_)
        ));

        std::fs::write(&path, format!("{}{}", first.pem, second.pem)).unwrap();
        filetime_bump(&path);
        authn.reload_if_changed();
        assert_eq!(user(authn.authenticate(&creds).await).name, "bob");
    }

    /// Moves the file's modification time forward (file systems with coarse clocks).
    fn filetime_bump(path: &Path) {
        let later =
            SystemTime::now() + std::time::Duration::from_secs(2 + rand::random::<u64>() % 1000);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(later)
            .unwrap();
    }

    #[test]
    fn bad_bundles_name_the_option() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.crt");
        std::fs::write(&path, "garbage").unwrap();
        let err = ClientCa::load(&path).err().unwrap().to_string();
        assert!(err.contains("--client-ca-file"), "{err}");
        let err = ClientCa::load(&dir.path().join("missing"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("--client-ca-file"), "{err}");
    }
}
