//! Client certificates (`--client-ca-file`): a chain that a trusted authority signed for
//! client authentication names its user in the subject's common name and its groups in the
//! organizations.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
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

/// The chain a client presented on its connection, and what the last checks of it decided
/// (a connection's requests share it, so the signatures are checked once per connection and
/// authority bundle, not per request).
#[derive(Debug)]
pub struct PeerCertificates {
    chain: Vec<CertificateDer<'static>>,
    /// One entry per bundle that checked the chain (client CA, request-header CA).
    checked: Mutex<Vec<Checked>>,
}

#[derive(Debug, Clone)]
struct Checked {
    bundle: u64,
    /// Until when the decision holds (the earliest expiry on the chain), Unix seconds.
    until: u64,
    found: std::result::Result<Arc<Subject>, String>,
}

/// Who a verified client certificate names.
#[derive(Debug)]
pub(crate) struct Subject {
    /// The common name (empty when the certificate has none).
    pub common_name: String,
    /// The organizations.
    pub organizations: Vec<String>,
    /// The user's UID from the subject's UID attribute (empty without one), or why the
    /// subject's UIDs name nobody.
    pub uid: std::result::Result<String, String>,
    /// The credential ID the user's `extra` carries: `X509SHA256=` and the leaf's SHA-256 in
    /// hex, made once per connection rather than per request.
    pub credential_id: String,
}

/// The subject attribute carrying a user's UID (upstream's `AllowParsingUserUIDFromCertAuth`,
/// on by default since v1.34).
const UID_OID: &[u64] = &[1, 3, 6, 1, 4, 1, 57683, 2];

/// The UID a subject names: none, or exactly one non-empty string.
fn subject_uid(subject: &x509_parser::x509::X509Name<'_>) -> std::result::Result<String, String> {
    let mut uids = Vec::new();
    for attribute in subject.iter_attributes() {
        let oid: Option<Vec<u64>> = attribute.attr_type().iter().map(|arcs| arcs.collect());
        if oid.as_deref() != Some(UID_OID) {
            continue;
        }
        match attribute.as_str() {
            Ok(uid) => uids.push(uid.to_string()),
            Err(_) => return Err("unable to parse UID into a string".into()),
        }
    }
    match uids.as_slice() {
        [] => Ok(String::new()),
        [uid] if uid.is_empty() => Err("UID cannot be an empty string".into()),
        [uid] => Ok(uid.clone()),
        _ => Err(format!(
            "expected 1 UID, but found multiple: [{}]",
            uids.join(" ")
        )),
    }
}

impl PeerCertificates {
    /// The chain (leaf first), as the TLS handshake gave it; `None` when it is empty.
    pub fn new(chain: Vec<CertificateDer<'static>>) -> Option<Self> {
        (!chain.is_empty()).then(|| Self {
            chain,
            checked: Mutex::new(Vec::new()),
        })
    }

    /// The certificates, leaf first.
    pub fn chain(&self) -> &[CertificateDer<'static>] {
        &self.chain
    }
}

/// A bundle of trusted authorities read from a PEM file, read again when the file changes.
pub struct CaBundle {
    option: &'static str,
    path: PathBuf,
    bundle: RwLock<Arc<Bundle>>,
}

struct Bundle {
    /// Distinguishes bundles (of every file), so that a connection's cached decision is made
    /// again after a reload.
    generation: u64,
    stamp: Option<SystemTime>,
    pem: Arc<str>,
    anchors: Vec<TrustAnchor<'static>>,
}

/// Generations of every bundle read, so that no two share one.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl CaBundle {
    /// Reads the PEM bundle at `path` (given by `option`, which errors name); every
    /// certificate in it is a trusted authority.
    pub fn load(option: &'static str, path: &Path) -> Result<Self> {
        let bundle = Self::read(option, path)?;
        Ok(Self {
            option,
            path: path.into(),
            bundle: RwLock::new(Arc::new(bundle)),
        })
    }

    /// A bundle of the PEM text `pem` (read from elsewhere than a file, such as the
    /// authentication ConfigMap); [`CaBundle::replace`] changes it.
    pub fn from_pem(option: &'static str, pem: &str) -> Result<Self> {
        Ok(Self {
            option,
            path: PathBuf::new(),
            bundle: RwLock::new(Arc::new(Self::parse(option, None, pem.as_bytes())?)),
        })
    }

    /// Takes `pem` as the bundle's authorities when it differs from the current text;
    /// whether it did. Text that does not parse keeps the old authorities.
    pub fn replace(&self, pem: &str) -> Result<bool> {
        if *self.current().pem == *pem {
            return Ok(false);
        }
        let bundle = Self::parse(self.option, None, pem.as_bytes())?;
        *self.bundle.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(bundle);
        Ok(true)
    }

    fn parse(option: &'static str, stamp: Option<SystemTime>, pem: &[u8]) -> Result<Bundle> {
        let anchors = anchors_from_pem(pem).map_err(|reason| Error::Invalid { option, reason })?;
        Ok(Bundle {
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            stamp,
            pem: String::from_utf8_lossy(pem).into(),
            anchors,
        })
    }

    fn read(option: &'static str, path: &Path) -> Result<Bundle> {
        let stamp = modified(path);
        let pem = std::fs::read(path).map_err(|source| Error::File {
            option,
            path: path.into(),
            source,
        })?;
        Self::parse(option, stamp, &pem).map_err(|e| match e {
            Error::Invalid { option, reason } => Error::Invalid {
                option,
                reason: format!("{}: {reason}", path.display()),
            },
            other => other,
        })
    }

    /// Reads the file again when it changed since the last read; a file that no longer
    /// parses keeps the old authorities (and is logged). Whether the authorities changed.
    pub fn reload_if_changed(&self) -> bool {
        let current = self.current();
        if self.path.as_os_str().is_empty() || modified(&self.path) == current.stamp {
            return false;
        }
        match Self::read(self.option, &self.path) {
            Ok(bundle) => {
                tracing::info!(option = self.option, path = %self.path.display(), "CA bundle reloaded");
                *self.bundle.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(bundle);
                true
            }
            Err(err) => {
                tracing::warn!(%err, "reloading a CA bundle failed; keeping the old one");
                false
            }
        }
    }

    /// The bundle's PEM text, as last read.
    pub fn pem(&self) -> Arc<str> {
        self.current().pem.clone()
    }

    fn current(&self) -> Arc<Bundle> {
        self.bundle
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Checks `peer` against the current bundle (once per connection and bundle while the
    /// chain is valid): who it names, or why it is refused.
    pub(crate) fn check(
        &self,
        peer: &PeerCertificates,
    ) -> std::result::Result<Arc<Subject>, String> {
        let bundle = self.current();
        let now = now_secs();
        let mut cached = peer.checked.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cached.iter().find(|c| c.bundle == bundle.generation)
            && now < c.until
        {
            return c.found.clone();
        }
        let (found, until) = verify(&bundle.anchors, &peer.chain, now);
        let found = found.map(Arc::new);
        // Entries of replaced bundles go; a connection meets two bundles at most.
        cached.retain(|c| c.bundle != bundle.generation && c.until > now);
        if cached.len() >= 4 {
            cached.clear();
        }
        cached.push(Checked {
            bundle: bundle.generation,
            until,
            found: found.clone(),
        });
        found
    }
}

/// Client certificates of `--client-ca-file`: the user is the common name, the groups the
/// organizations.
pub struct ClientCa {
    bundle: CaBundle,
}

impl ClientCa {
    /// Reads the `--client-ca-file` bundle at `path`.
    pub fn load(path: &Path) -> Result<Self> {
        Ok(Self {
            bundle: CaBundle::load("--client-ca-file", path)?,
        })
    }

    /// Trusts the authorities of `bundle`.
    pub fn with_bundle(bundle: CaBundle) -> Self {
        Self { bundle }
    }

    /// The bundle (reloads, its PEM for the published authentication info).
    pub fn bundle(&self) -> &CaBundle {
        &self.bundle
    }

    /// Reads the file again when it changed; whether the authorities changed.
    pub fn reload_if_changed(&self) -> bool {
        self.bundle.reload_if_changed()
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

/// Verifies a client chain for client authentication at `now`: who it names, and until
/// when that holds.
pub(crate) fn verify(
    anchors: &[TrustAnchor<'_>],
    chain: &[CertificateDer<'static>],
    now: u64,
) -> (std::result::Result<Subject, String>, u64) {
    let Some((leaf, intermediates)) = chain.split_first() else {
        return (Err("no client certificate".into()), u64::MAX);
    };
    let rejected = |why: String| (Err(why), u64::MAX);
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
    let common_name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .unwrap_or_default()
        .to_string();
    let organizations = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(String::from)
        .collect();
    let digest = ring::digest::digest(&ring::digest::SHA256, leaf.as_ref());
    let found = Subject {
        common_name,
        organizations,
        uid: subject_uid(subject),
        credential_id: format!("X509SHA256={}", hex(digest.as_ref())),
    };
    (Ok(found), until)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[async_trait]
impl Authenticator for ClientCa {
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
        self.check(credentials)
    }

    fn authenticate_now(&self, credentials: &Credentials<'_>) -> Option<Outcome> {
        Some(self.check(credentials))
    }
}

impl ClientCa {
    /// The user of the client's certificate, when this authority signed it.
    fn check(&self, credentials: &Credentials<'_>) -> Outcome {
        let Some(peer) = credentials.client_certificates else {
            return Outcome::NoOpinion;
        };
        match self.bundle.check(peer) {
            // A certificate without a common name names nobody; the request goes on as if
            // it had none.
            Ok(subject) if subject.common_name.is_empty() => Outcome::NoOpinion,
            Ok(subject) => {
                let uid = match &subject.uid {
                    Ok(uid) => uid.clone(),
                    Err(why) => return Outcome::Rejected(why.clone()),
                };
                let mut user = UserInfo {
                    name: subject.common_name.clone(),
                    uid,
                    groups: subject.organizations.clone(),
                    ..Default::default()
                };
                user.extra
                    .insert(CREDENTIAL_ID.into(), vec![subject.credential_id.clone()]);
                Outcome::authenticated(user)
            }
            Err(why) => Outcome::Rejected(why),
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
    async fn a_subjects_uid_attribute_is_the_users_uid() {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new("client-ca");
        let path = dir.path().join("ca.crt");
        std::fs::write(&path, &ca.pem).unwrap();
        let authn = ClientCa::load(&path).unwrap();
        let with_uid = |uid: &str| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::default();
            params.distinguished_name = DistinguishedName::new();
            params.distinguished_name.push(DnType::CommonName, "alice");
            params
                .distinguished_name
                .push(DnType::CustomDnType(UID_OID.to_vec()), uid);
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
            params.signed_by(&key, &ca.issuer).unwrap().pem()
        };
        let peer = chain(&with_uid("1234-abcd"));
        let creds = Credentials::default().with_client_certificates(Some(&peer));
        let u = user(authn.authenticate(&creds).await);
        assert_eq!((u.name.as_str(), u.uid.as_str()), ("alice", "1234-abcd"));
        let peer = chain(&with_uid(""));
        let creds = Credentials::default().with_client_certificates(Some(&peer));
        assert_eq!(
            authn.authenticate(&creds).await,
            Outcome::Rejected("UID cannot be an empty string".into())
        );
        // Without the attribute, no UID.
        let (plain, _) = ca.client("bob", &[], ExtendedKeyUsagePurpose::ClientAuth);
        let peer = chain(&plain);
        let creds = Credentials::default().with_client_certificates(Some(&peer));
        assert_eq!(user(authn.authenticate(&creds).await).uid, "");
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
