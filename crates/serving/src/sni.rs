//! Certificates chosen by the name a client asks for (`--tls-sni-cert-key`), and reloaded when
//! their files change on disk.
//!
//! Rules, as upstream's: an exact name beats a wildcard (`*.example.com` covers one label);
//! names given explicitly after the key file beat names taken from the certificate (its DNS
//! names, IP addresses and common name); among equals the pair given first wins; a client
//! that sends no name is matched by the local address it connected to (IP patterns); a name
//! nothing covers gets the default serving certificate.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::{Error, Result};

/// One `--tls-sni-cert-key` value: `cert,key` or `cert,key:name,name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SniCertKey {
    /// The certificate (chain) file.
    pub cert_file: PathBuf,
    /// The key file.
    pub key_file: PathBuf,
    /// Explicit domain patterns; empty: the certificate's own names.
    pub names: Vec<String>,
}

impl SniCertKey {
    /// Parses `cert.crt,cert.key` or `cert.crt,cert.key:*.example.com,example.com`.
    pub fn parse(value: &str) -> std::result::Result<Self, String> {
        let (files, names) = match value.split_once(':') {
            Some((files, names)) => (files, names.split(',').map(str::to_string).collect()),
            None => (value, Vec::new()),
        };
        let (cert, key) = files
            .split_once(',')
            .filter(|(c, k)| !c.is_empty() && !k.is_empty())
            .ok_or_else(|| format!("{value:?} is not certfile,keyfile[:names]"))?;
        let names: Vec<String> = names;
        if names.iter().any(String::is_empty) {
            return Err(format!("{value:?} has an empty domain pattern"));
        }
        Ok(Self {
            cert_file: cert.into(),
            key_file: key.into(),
            names,
        })
    }
}

/// A pair on disk and when it was read.
#[derive(Debug, Clone)]
struct Source {
    cert_file: PathBuf,
    key_file: PathBuf,
    names: Vec<String>,
    stamp: Option<SystemTime>,
}

impl Source {
    fn modified(&self) -> Option<SystemTime> {
        let m = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        m(&self.cert_file).max(m(&self.key_file))
    }
}

#[derive(Debug, Default)]
struct Loaded {
    default: Option<Arc<CertifiedKey>>,
    /// (name, rank, key): rank 0 explicit, 1 extracted; sorted by rank, then given order.
    names: Vec<(String, u8, Arc<CertifiedKey>)>,
    /// Whether some name is an IP address.
    has_ip: bool,
}

/// The files behind the certificates.
#[derive(Debug)]
struct Sources {
    /// The default pair's files (`None`: an in-memory pair).
    default: Option<Source>,
    sni: Vec<Source>,
}

/// Picks the certificate for each handshake; see the module documentation.
#[derive(Debug)]
pub struct CertResolver {
    /// An in-memory default (a generated pair), used when there are no default files.
    fixed: Option<Arc<CertifiedKey>>,
    sources: RwLock<Sources>,
    loaded: RwLock<Loaded>,
}

fn certified(chain_pem: &[u8], key_pem: &[u8]) -> Result<(Arc<CertifiedKey>, Vec<String>)> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::Tls(format!("parsing a certificate: {e}")))?;
    let first = chain
        .first()
        .ok_or_else(|| Error::Tls("a certificate file holds no certificate".into()))?;
    let names = certificate_names(first.as_ref());
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| Error::Tls(format!("parsing a private key: {e}")))?;
    let signer = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|e| Error::Tls(format!("an unusable private key: {e}")))?;
    let certified = CertifiedKey::new(chain, signer);
    // A pair caught half-written (or mismatched) is refused, not served.
    certified
        .keys_match()
        .map_err(|e| Error::Tls(format!("the certificate and key do not match: {e}")))?;
    Ok((Arc::new(certified), names))
}

/// The DNS names, IP addresses and common name of a certificate (lower case).
fn certificate_names(der: &[u8]) -> Vec<String> {
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                x509_parser::extensions::GeneralName::DNSName(dns) => {
                    names.push(dns.to_ascii_lowercase());
                }
                x509_parser::extensions::GeneralName::IPAddress(bytes) => {
                    let ip = match bytes.len() {
                        4 => <[u8; 4]>::try_from(*bytes).ok().map(std::net::IpAddr::from),
                        16 => <[u8; 16]>::try_from(*bytes)
                            .ok()
                            .map(std::net::IpAddr::from),
                        _ => None,
                    };
                    names.extend(ip.map(|ip| ip.to_string()));
                }
                _ => {}
            }
        }
    }
    for cn in cert.subject().iter_common_name() {
        if let Ok(cn) = cn.as_str() {
            names.push(cn.to_ascii_lowercase());
        }
    }
    names
}

fn read(path: &PathBuf) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::File {
        what: "certificate",
        path: path.clone(),
        source,
    })
}

impl CertResolver {
    /// A resolver with the default pair from files (reloaded on change) or in memory, and
    /// the SNI pairs.
    pub fn new(
        default_files: Option<(PathBuf, PathBuf)>,
        default_pem: Option<(&str, &str)>,
        sni: &[SniCertKey],
    ) -> Result<Arc<Self>> {
        let fixed = match default_pem {
            Some((chain, key)) if default_files.is_none() => {
                Some(certified(chain.as_bytes(), key.as_bytes())?.0)
            }
            _ => None,
        };
        let resolver = Arc::new(Self {
            fixed,
            sources: RwLock::new(Sources {
                default: default_files.map(|(cert_file, key_file)| Source {
                    cert_file,
                    key_file,
                    names: Vec::new(),
                    stamp: None,
                }),
                sni: sni
                    .iter()
                    .map(|s| Source {
                        cert_file: s.cert_file.clone(),
                        key_file: s.key_file.clone(),
                        names: s.names.iter().map(|n| n.to_ascii_lowercase()).collect(),
                        stamp: None,
                    })
                    .collect(),
            }),
            loaded: RwLock::new(Loaded::default()),
        });
        resolver.reload()?;
        Ok(resolver)
    }

    /// Reads every file again.
    pub fn reload(&self) -> Result<()> {
        let mut loaded = Loaded::default();
        let mut sources = self.sources.write().unwrap_or_else(|e| e.into_inner());
        // Stamps are taken before reading and kept only when everything loads, so that a
        // failed reload is tried again at the next check.
        let stamps: Vec<Option<SystemTime>> = sources
            .default
            .iter()
            .chain(&sources.sni)
            .map(Source::modified)
            .collect();
        if let Some(source) = &sources.default {
            let (key, _) = certified(&read(&source.cert_file)?, &read(&source.key_file)?)?;
            loaded.default = Some(key);
        } else {
            loaded.default = self.fixed.clone();
        }
        let mut explicit = Vec::new();
        let mut extracted = Vec::new();
        for source in &sources.sni {
            let (key, names) = certified(&read(&source.cert_file)?, &read(&source.key_file)?)?;
            if source.names.is_empty() {
                extracted.extend(names.into_iter().map(|n| (n, 1, key.clone())));
            } else {
                explicit.extend(source.names.iter().map(|n| (n.clone(), 0, key.clone())));
            }
        }
        loaded.names = explicit;
        loaded.names.extend(extracted);
        loaded.has_ip = loaded
            .names
            .iter()
            .any(|(n, _, _)| n.parse::<std::net::IpAddr>().is_ok());
        let Sources { default, sni } = &mut *sources;
        for (source, stamp) in default.iter_mut().chain(sni.iter_mut()).zip(stamps) {
            source.stamp = stamp;
        }
        *self.loaded.write().unwrap_or_else(|e| e.into_inner()) = loaded;
        Ok(())
    }

    /// Reloads when a file changed since it was read; a pair that does not load keeps the
    /// previous one serving (and is logged).
    pub fn reload_if_changed(&self) {
        let changed = {
            let sources = self.sources.read().unwrap_or_else(|e| e.into_inner());
            sources
                .default
                .iter()
                .chain(&sources.sni)
                .any(|s| s.modified() != s.stamp)
        };
        if changed {
            match self.reload() {
                Ok(()) => tracing::info!("serving certificates reloaded"),
                Err(err) => {
                    tracing::warn!(%err, "reloading the serving certificates failed; keeping the old ones")
                }
            }
        }
    }

    /// Checks the files every `period` until the task is aborted.
    pub fn watch(self: &Arc<Self>, period: Duration) -> tokio::task::JoinHandle<()> {
        let resolver = self.clone();
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(period);
            loop {
                ticker.tick().await;
                resolver.reload_if_changed();
            }
        })
    }

    /// Whether some pattern is an IP address (matched against the address a connection
    /// came in on, when its client sends no name).
    pub fn has_ip_names(&self) -> bool {
        self.loaded.read().unwrap_or_else(|e| e.into_inner()).has_ip
    }

    fn pick(
        &self,
        server_name: Option<&str>,
        local_ip: Option<std::net::IpAddr>,
    ) -> Option<Arc<CertifiedKey>> {
        let loaded = self.loaded.read().unwrap_or_else(|e| e.into_inner());
        // A client connecting by IP sends no name: the address it reached stands for one.
        let name = server_name
            .map(str::to_ascii_lowercase)
            .or_else(|| local_ip.map(|ip| ip.to_string()));
        if let Some(name) = name {
            let wildcard = name.split_once('.').map(|(_, rest)| format!("*.{rest}"));
            // Exact names before wildcards; within each, explicit before extracted.
            for candidate in std::iter::once(Some(&name))
                .chain([wildcard.as_ref()])
                .flatten()
            {
                for rank in [0, 1] {
                    if let Some((_, _, key)) = loaded
                        .names
                        .iter()
                        .find(|(n, r, _)| *r == rank && n == candidate)
                    {
                        return Some(key.clone());
                    }
                }
            }
        }
        loaded.default.clone()
    }
}

impl ResolvesServerCert for CertResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.pick(hello.server_name(), None)
    }
}

/// A resolver for one connection: [`CertResolver`] with the local address the connection
/// came in on, for IP patterns.
#[derive(Debug)]
struct AtLocalAddress {
    resolver: Arc<CertResolver>,
    ip: std::net::IpAddr,
}

impl ResolvesServerCert for AtLocalAddress {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.resolver.pick(hello.server_name(), Some(self.ip))
    }
}

/// Accepts TLS connections with certificates picked by SNI, and by the local address when a
/// client sends no name and an IP pattern was given.
#[derive(Clone)]
pub struct Acceptor {
    config: Arc<rustls::ServerConfig>,
    resolver: Arc<CertResolver>,
}

impl std::fmt::Debug for Acceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Acceptor").finish_non_exhaustive()
    }
}

impl Acceptor {
    /// An acceptor over `config`, whose certificates `resolver` picks.
    pub fn new(config: rustls::ServerConfig, resolver: Arc<CertResolver>) -> Self {
        Self {
            config: Arc::new(config),
            resolver,
        }
    }

    /// The acceptor for a connection that came in on `local` (a per-connection
    /// configuration only when some pattern is an IP address).
    pub fn for_connection(&self, local: std::net::IpAddr) -> tokio_rustls::TlsAcceptor {
        if !self.resolver.has_ip_names() {
            return tokio_rustls::TlsAcceptor::from(self.config.clone());
        }
        let mut config = (*self.config).clone();
        config.cert_resolver = Arc::new(AtLocalAddress {
            resolver: self.resolver.clone(),
            ip: local,
        });
        tokio_rustls::TlsAcceptor::from(Arc::new(config))
    }
}
