//! The serving certificate: loaded from files, or a self-signed CA and serving pair
//! generated once into the certificate directory and reused on every start.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::{Error, Result};

/// PEM material of the serving certificate.
#[derive(Debug, Clone)]
pub struct ServingCert {
    /// The certificate chain (serving certificate first).
    pub chain_pem: String,
    /// The private key.
    pub key_pem: String,
    /// The certificate clients should trust: the last certificate of the chain.
    pub ca_pem: String,
}

fn read(what: &'static str, path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::File {
        what,
        path: path.into(),
        source,
    })
}

fn write(what: &'static str, path: &Path, contents: &str, mode: u32) -> Result<()> {
    crate::files::replace(path, contents.as_bytes(), mode).map_err(|source| Error::File {
        what,
        path: path.into(),
        source,
    })
}

fn last_cert_pem(chain_pem: &str) -> Result<String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| Error::Tls(format!("parsing certificates: {e}")))?;
    let last = certs
        .last()
        .ok_or_else(|| Error::Tls("the certificate file holds no certificate".into()))?;
    Ok(pem_encode("CERTIFICATE", last.as_ref()))
}

fn pem_encode(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// Loads the configured pair, or the one in `cert_dir` (`<pair>.crt`, `<pair>.key`),
/// generating it there on first start. `hosts` are extra names and addresses the generated
/// certificate covers.
pub fn load_or_generate(
    pair: &str,
    cert_file: Option<&Path>,
    key_file: Option<&Path>,
    cert_dir: &Path,
    hosts: &[String],
) -> Result<ServingCert> {
    match (cert_file, key_file) {
        (Some(cert), Some(key)) => {
            let chain_pem = read("reading --tls-cert-file", cert)?;
            let key_pem = read("reading --tls-private-key-file", key)?;
            Ok(ServingCert {
                ca_pem: last_cert_pem(&chain_pem)?,
                chain_pem,
                key_pem,
            })
        }
        (Some(_), None) | (None, Some(_)) => Err(Error::Tls(
            "--tls-cert-file and --tls-private-key-file must be given together".into(),
        )),
        (None, None) => {
            let cert_path: PathBuf = cert_dir.join(format!("{pair}.crt"));
            let key_path: PathBuf = cert_dir.join(format!("{pair}.key"));
            if cert_path.exists() && key_path.exists() {
                let chain_pem = read("reading generated certificate", &cert_path)?;
                let key_pem = read("reading generated key", &key_path)?;
                return Ok(ServingCert {
                    ca_pem: last_cert_pem(&chain_pem)?,
                    chain_pem,
                    key_pem,
                });
            }
            let generated = generate(pair, hosts)?;
            std::fs::create_dir_all(cert_dir).map_err(|source| Error::File {
                what: "creating --cert-dir",
                path: cert_dir.into(),
                source,
            })?;
            write(
                "writing generated key",
                &key_path,
                &generated.key_pem,
                0o600,
            )?;
            write(
                "writing generated certificate",
                &cert_path,
                &generated.chain_pem,
                0o644,
            )?;
            Ok(generated)
        }
    }
}

/// A new CA and a serving certificate it signs, for localhost and `hosts`, kept in memory
/// only (what a daemon without a certificate directory serves).
pub fn generate(pair: &str, hosts: &[String]) -> Result<ServingCert> {
    use rcgen::{
        BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let tls = |e: rcgen::Error| Error::Tls(format!("generating a self-signed certificate: {e}"));
    let now = time_now();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, format!("capstan-ca@{now}"));
    ca_params.distinguished_name = dn;
    let ca_key = KeyPair::generate().map_err(tls)?;
    let ca_cert = ca_params.self_signed(&ca_key).map_err(tls)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);

    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "kubernetes".to_string(),
        "kubernetes.default".to_string(),
        "kubernetes.default.svc".to_string(),
    ];
    for h in hosts {
        if !names.contains(h) {
            names.push(h.clone());
        }
    }
    let mut params = CertificateParams::new(names).map_err(tls)?;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, format!("capstan-{pair}@{now}"));
    params.distinguished_name = dn;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().map_err(tls)?;
    let cert = params.signed_by(&key, &issuer).map_err(tls)?;
    let ca_pem = ca_cert.pem();
    Ok(ServingCert {
        chain_pem: format!("{}{}", cert.pem(), ca_pem),
        key_pem: key.serialize_pem(),
        ca_pem,
    })
}

fn time_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// TLS tuning as upstream's options name it (`--tls-min-version`, `--tls-cipher-suites`).
#[derive(Debug, Clone, Default)]
pub struct TlsTuning {
    /// `VersionTLS12` or `VersionTLS13`; none: TLS 1.2 and 1.3.
    pub min_version: Option<String>,
    /// Upstream (Go) names of the TLS 1.2 suites to offer; empty: rustls's defaults. TLS 1.3
    /// suites are always on (as in Go, where this list does not reach TLS 1.3); naming
    /// them is accepted.
    pub cipher_suites: Vec<String>,
}

/// The TLS 1.2 suites rustls offers, by their upstream names (both spellings of ChaCha).
const TLS12_SUITES: &[(&str, rustls::CipherSuite)] = &[
    (
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
        rustls::CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        rustls::CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
];

/// The TLS 1.3 suites (always on).
const TLS13_SUITES: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

/// Go's other suite names (CBC, RSA key exchange, 3DES, RC4): valid upstream, not offered by
/// rustls.
const UNSUPPORTED_SUITES: &[&str] = &[
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
];

impl TlsTuning {
    /// Checks the options: an unknown name, a suite rustls does not offer or a version
    /// before TLS 1.2 is an error that says so.
    pub fn validate(&self) -> Result<()> {
        self.versions()?;
        self.provider().map(|_| ())
    }

    fn versions(&self) -> Result<&'static [&'static rustls::SupportedProtocolVersion]> {
        static BOTH: &[&rustls::SupportedProtocolVersion] =
            &[&rustls::version::TLS13, &rustls::version::TLS12];
        static ONLY13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
        match self.min_version.as_deref() {
            None | Some("") | Some("VersionTLS12") => Ok(BOTH),
            Some("VersionTLS13") => Ok(ONLY13),
            Some(v @ ("VersionTLS10" | "VersionTLS11")) => Err(Error::Tls(format!(
                "--tls-min-version={v}: TLS 1.0 and 1.1 are not offered (rustls supports TLS 1.2 and 1.3); use VersionTLS12 or VersionTLS13"
            ))),
            Some(other) => Err(Error::Tls(format!(
                "--tls-min-version={other}: must be one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13"
            ))),
        }
    }

    fn provider(&self) -> Result<rustls::crypto::CryptoProvider> {
        let mut provider = rustls::crypto::ring::default_provider();
        if self.cipher_suites.is_empty() {
            return Ok(provider);
        }
        let mut wanted = Vec::new();
        for name in &self.cipher_suites {
            if TLS13_SUITES.contains(&name.as_str()) {
                continue;
            }
            match TLS12_SUITES.iter().find(|(n, _)| n == name) {
                Some((_, suite)) => wanted.push(*suite),
                None if UNSUPPORTED_SUITES.contains(&name.as_str()) => {
                    return Err(Error::Tls(format!(
                        "--tls-cipher-suites: {name} is not supported (rustls offers only ECDHE suites with AES-GCM or ChaCha20-Poly1305)"
                    )));
                }
                None => {
                    return Err(Error::Tls(format!(
                        "--tls-cipher-suites: {name} is not a cipher suite name"
                    )));
                }
            }
        }
        provider.cipher_suites.retain(|s| match s {
            rustls::SupportedCipherSuite::Tls13(_) => true,
            rustls::SupportedCipherSuite::Tls12(_) => wanted.contains(&s.suite()),
        });
        Ok(provider)
    }
}

/// The rustls configuration: TLS 1.2 and 1.3, ALPN `h2` then `http/1.1`.
pub fn server_config(cert: &ServingCert) -> Result<rustls::ServerConfig> {
    server_config_tuned(cert, &TlsTuning::default())
}

/// The rustls configuration with certificates picked per handshake by `resolver` (SNI,
/// reloads), the versions and suites of `tuning`, ALPN `h2` then `http/1.1`. With
/// `request_client_certs`, clients are asked for a certificate (see [`RequestClientCert`]).
pub fn server_config_with_resolver(
    resolver: Arc<crate::sni::CertResolver>,
    tuning: &TlsTuning,
    request_client_certs: bool,
) -> Result<rustls::ServerConfig> {
    let provider = Arc::new(tuning.provider()?);
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(tuning.versions()?)
        .map_err(|e| Error::Tls(e.to_string()))?;
    let builder = if request_client_certs {
        builder.with_client_cert_verifier(Arc::new(RequestClientCert::new(&provider)))
    } else {
        builder.with_no_client_auth()
    };
    let mut config = builder.with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// Asks every client for a certificate without requiring one, and takes any chain it sends:
/// the handshake only proves that the client holds the certificate's key. Which authority
/// must have signed it is the authenticators' business (`--client-ca-file` and
/// `--requestheader-client-ca-file` trust different ones, and both reload), so a certificate
/// no authority vouches for is refused with a 401, not a failed handshake, as upstream.
/// No acceptable authorities are named, so clients send their certificate whoever signed it.
#[derive(Debug)]
pub struct RequestClientCert {
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl RequestClientCert {
    /// A verifier checking handshake signatures with `provider`'s algorithms.
    pub fn new(provider: &rustls::crypto::CryptoProvider) -> Self {
        Self {
            algorithms: provider.signature_verification_algorithms,
        }
    }
}

impl rustls::server::danger::ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: rustls_pki_types::UnixTime,
    ) -> std::result::Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        Ok(rustls::server::danger::ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// [`server_config`] with the versions and suites of `tuning`.
pub fn server_config_tuned(cert: &ServingCert, tuning: &TlsTuning) -> Result<rustls::ServerConfig> {
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(cert.chain_pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| Error::Tls(format!("parsing the certificate: {e}")))?;
    let key = PrivateKeyDer::from_pem_slice(cert.key_pem.as_bytes())
        .map_err(|e| Error::Tls(format!("parsing the private key: {e}")))?;
    let provider = Arc::new(tuning.provider()?);
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(tuning.versions()?)
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| {
            Error::Tls(format!(
                "the certificate and key do not form a usable pair: {e}"
            ))
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_pair_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_generate(
            "apiserver",
            None,
            None,
            dir.path(),
            &["example.test".into()],
        )
        .unwrap();
        let second = load_or_generate("apiserver", None, None, dir.path(), &[]).unwrap();
        assert!(dir.path().join("apiserver.crt").exists());
        assert_eq!(first.chain_pem, second.chain_pem);
        assert_ne!(first.ca_pem, first.chain_pem);
        server_config(&first).unwrap();
        assert!(
            load_or_generate("apiserver", Some(Path::new("/x")), None, dir.path(), &[]).is_err()
        );
    }
}
