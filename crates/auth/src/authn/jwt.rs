//! JSON Web Tokens as service-account tokens use them: compact JWS with RS256, ES256 or
//! ES384, keys read from PEM in every form upstream reads, key ids computed as upstream
//! does (so tokens and key sets interoperate with upstream's), and JWKS documents.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A signature algorithm (RFC 7518 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
}

impl Algorithm {
    /// What service-account tokens may use (upstream's list, less P-521).
    pub const SERVICE_ACCOUNT: &'static [Algorithm] = &[Self::RS256, Self::ES256, Self::ES384];
    /// Every algorithm this verifier knows.
    pub const ALL: &'static [Algorithm] = &[
        Self::RS256,
        Self::RS384,
        Self::RS512,
        Self::PS256,
        Self::PS384,
        Self::PS512,
        Self::ES256,
        Self::ES384,
    ];

    /// The RFC 7518 name.
    pub fn name(self) -> &'static str {
        match self {
            Self::RS256 => "RS256",
            Self::RS384 => "RS384",
            Self::RS512 => "RS512",
            Self::PS256 => "PS256",
            Self::PS384 => "PS384",
            Self::PS512 => "PS512",
            Self::ES256 => "ES256",
            Self::ES384 => "ES384",
        }
    }

    /// The algorithm of an RFC 7518 name, if this verifier knows it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|a| a.name() == name)
    }

    fn rsa(self) -> Option<&'static signature::RsaParameters> {
        Some(match self {
            Self::RS256 => &signature::RSA_PKCS1_2048_8192_SHA256,
            Self::RS384 => &signature::RSA_PKCS1_2048_8192_SHA384,
            Self::RS512 => &signature::RSA_PKCS1_2048_8192_SHA512,
            Self::PS256 => &signature::RSA_PSS_2048_8192_SHA256,
            Self::PS384 => &signature::RSA_PSS_2048_8192_SHA384,
            Self::PS512 => &signature::RSA_PSS_2048_8192_SHA512,
            Self::ES256 | Self::ES384 => return None,
        })
    }
}

/// A key that verifies tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    alg: Algorithm,
    /// base64url(SHA-256(PKIX DER)), upstream's key id.
    kid: String,
    /// RSA modulus and exponent, or the uncompressed EC point.
    material: Material,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    Rsa { n: Vec<u8>, e: Vec<u8> },
    Ec { point: Vec<u8> },
}

impl PublicKey {
    fn rsa(n: &[u8], e: &[u8]) -> Self {
        let n = strip_zeros(n).to_vec();
        let e = strip_zeros(e).to_vec();
        let spki = der::seq(&[
            der::seq(&[der::RSA_ENCRYPTION.to_vec(), vec![0x05, 0x00]]),
            der::bit_string(&der::seq(&[der::uint(&n), der::uint(&e)])),
        ]);
        Self {
            alg: Algorithm::RS256,
            kid: key_id(&spki),
            material: Material::Rsa { n, e },
        }
    }

    fn ec(point: &[u8]) -> std::result::Result<Self, String> {
        let (alg, curve) = match point.len() {
            65 => (Algorithm::ES256, der::P256),
            97 => (Algorithm::ES384, der::P384),
            133 => return Err("P-521 keys are not supported (use P-256, P-384 or RSA)".into()),
            _ => return Err("unsupported elliptic-curve key".into()),
        };
        if point.first() != Some(&0x04) {
            return Err("compressed elliptic-curve points are not supported".into());
        }
        let spki = der::seq(&[
            der::seq(&[der::EC_PUBLIC_KEY.to_vec(), curve.to_vec()]),
            der::bit_string(point),
        ]);
        Ok(Self {
            alg,
            kid: key_id(&spki),
            material: Material::Ec {
                point: point.to_vec(),
            },
        })
    }

    fn from_spki(spki: &[u8]) -> std::result::Result<Self, String> {
        use x509_parser::prelude::FromDer;
        use x509_parser::public_key::PublicKey as Parsed;
        let (_, info) = x509_parser::x509::SubjectPublicKeyInfo::from_der(spki)
            .map_err(|e| format!("reading a public key: {e}"))?;
        match info.parsed() {
            Ok(Parsed::RSA(rsa)) => Ok(Self::rsa(rsa.modulus, rsa.exponent)),
            Ok(Parsed::EC(point)) => Self::ec(point.data()),
            Ok(_) => Err("only RSA and ECDSA keys are supported".into()),
            Err(e) => Err(format!("reading a public key: {e}")),
        }
    }

    /// The algorithm tokens signed with this key use.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The key id (`kid`).
    pub fn key_id(&self) -> &str {
        &self.kid
    }

    fn verify(&self, alg: Algorithm, message: &[u8], sig: &[u8]) -> bool {
        match &self.material {
            Material::Rsa { n, e } => alg.rsa().is_some_and(|params| {
                signature::RsaPublicKeyComponents { n, e }
                    .verify(params, message, sig)
                    .is_ok()
            }),
            Material::Ec { point } => {
                let algorithm = match (alg, self.alg) {
                    (Algorithm::ES256, Algorithm::ES256) => &signature::ECDSA_P256_SHA256_FIXED,
                    (Algorithm::ES384, Algorithm::ES384) => &signature::ECDSA_P384_SHA384_FIXED,
                    _ => return false,
                };
                signature::UnparsedPublicKey::new(algorithm, point)
                    .verify(message, sig)
                    .is_ok()
            }
        }
    }

    /// A key of a JWK set (`kty` RSA, or EC on P-256 or P-384); its `kid` is kept.
    pub fn from_jwk(jwk: &serde_json::Value) -> std::result::Result<Self, String> {
        let field = |name: &str| {
            jwk[name]
                .as_str()
                .ok_or_else(|| format!("the key has no {name:?}"))
                .and_then(|v| {
                    URL_SAFE_NO_PAD
                        .decode(v.trim_end_matches('='))
                        .map_err(|_| format!("the key's {name:?} is not base64url"))
                })
        };
        let mut key = match jwk["kty"].as_str() {
            Some("RSA") => Self::rsa(&field("n")?, &field("e")?),
            Some("EC") => {
                let (x, y) = (field("x")?, field("y")?);
                let size = match jwk["crv"].as_str() {
                    Some("P-256") => 32,
                    Some("P-384") => 48,
                    other => return Err(format!("unsupported curve {other:?}")),
                };
                if x.len() != size || y.len() != size {
                    return Err("the key's coordinates do not fit its curve".into());
                }
                let mut point = vec![0x04];
                point.extend(x);
                point.extend(y);
                Self::ec(&point)?
            }
            other => return Err(format!("unsupported key type {other:?}")),
        };
        if let Some(kid) = jwk["kid"].as_str() {
            key.kid = kid.to_string();
        }
        Ok(key)
    }

    /// The key as a JWK (`use: sig`), as upstream's `/openid/v1/jwks` lists it.
    pub fn jwk(&self) -> serde_json::Value {
        let b64 = |b: &[u8]| URL_SAFE_NO_PAD.encode(b);
        match &self.material {
            Material::Rsa { n, e } => serde_json::json!({
                "use": "sig", "kty": "RSA", "kid": self.kid, "alg": self.alg.name(),
                "n": b64(n), "e": b64(e),
            }),
            Material::Ec { point } => {
                let half = (point.len() - 1) / 2;
                let crv = if self.alg == Algorithm::ES384 {
                    "P-384"
                } else {
                    "P-256"
                };
                serde_json::json!({
                    "use": "sig", "kty": "EC", "kid": self.kid, "alg": self.alg.name(), "crv": crv,
                    "x": b64(&point[1..1 + half]), "y": b64(&point[1 + half..]),
                })
            }
        }
    }
}

fn strip_zeros(bytes: &[u8]) -> &[u8] {
    let first = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    &bytes[first..]
}

fn key_id(spki: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, spki))
}

/// A private key that signs tokens.
pub struct SigningKey {
    key: Signer,
    public: PublicKey,
}

enum Signer {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// The first private key in PEM text (PKCS#1 `RSA PRIVATE KEY`, PKCS#8 `PRIVATE KEY`, or
    /// SEC1 `EC PRIVATE KEY`).
    pub fn from_pem(pem: &[u8]) -> std::result::Result<Self, String> {
        for (label, der) in pem::blocks(pem)? {
            if let Some(key) = Self::from_der(&label, &der)? {
                return Ok(key);
            }
        }
        Err("no private key in the file".into())
    }

    fn from_der(label: &str, der: &[u8]) -> std::result::Result<Option<Self>, String> {
        let rng = SystemRandom::new();
        let bad = |e: ring::error::KeyRejected| format!("unusable {label}: {e}");
        let key = match label {
            "RSA PRIVATE KEY" => Signer::Rsa(RsaKeyPair::from_der(der).map_err(bad)?),
            "PRIVATE KEY" => match RsaKeyPair::from_pkcs8(der) {
                Ok(rsa) => Signer::Rsa(rsa),
                Err(_) => Signer::Ec(ec_from_pkcs8(der, &rng).map_err(bad)?),
            },
            "EC PRIVATE KEY" => {
                let mut found = None;
                for curve in [der::P256, der::P384] {
                    let pkcs8 = der::seq(&[
                        vec![0x02, 0x01, 0x00],
                        der::seq(&[der::EC_PUBLIC_KEY.to_vec(), curve.to_vec()]),
                        der::tlv(0x04, der),
                    ]);
                    if let Ok(key) = ec_from_pkcs8(&pkcs8, &rng) {
                        found = Some(key);
                        break;
                    }
                }
                Signer::Ec(found.ok_or_else(|| {
                    format!("unusable {label}: only P-256 and P-384 keys that include their public key are supported")
                })?)
            }
            _ => return Ok(None),
        };
        let public = match &key {
            Signer::Rsa(k) => {
                let (n, e) = der::rsa_public_key(k.public().as_ref())
                    .ok_or_else(|| format!("unusable {label}"))?;
                PublicKey::rsa(n, e)
            }
            Signer::Ec(k) => PublicKey::ec(k.public_key().as_ref())?,
        };
        Ok(Some(Self { key, public }))
    }

    /// A new ECDSA P-256 key as PKCS#8 PEM (`PRIVATE KEY`), for servers that generate their
    /// own signing key.
    pub fn generate_pem() -> std::result::Result<String, String> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| "generating a P-256 key failed".to_string())?;
        let body = base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref());
        let mut pem = String::from("-----BEGIN PRIVATE KEY-----\n");
        for line in body.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(line).unwrap_or_default());
            pem.push('\n');
        }
        pem.push_str("-----END PRIVATE KEY-----\n");
        Ok(pem)
    }

    /// Reads the key of `option` from `path`.
    pub fn load(option: &'static str, path: &Path) -> Result<Self> {
        let pem = std::fs::read(path).map_err(|source| Error::File {
            option,
            path: path.into(),
            source,
        })?;
        Self::from_pem(&pem).map_err(|reason| Error::Invalid {
            option,
            reason: format!("{}: {reason}", path.display()),
        })
    }

    /// The matching public key.
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// A compact JWS of `claims`, with the key's algorithm and id in the header.
    pub fn sign<T: Serialize>(&self, claims: &T) -> std::result::Result<String, String> {
        let header = serde_json::json!({"alg": self.public.alg.name(), "kid": self.public.kid});
        let mut token = URL_SAFE_NO_PAD.encode(header.to_string());
        token.push('.');
        let payload = serde_json::to_vec(claims).map_err(|e| e.to_string())?;
        token.push_str(&URL_SAFE_NO_PAD.encode(payload));
        let rng = SystemRandom::new();
        let sig = match &self.key {
            Signer::Rsa(k) => {
                let mut sig = vec![0; k.public().modulus_len()];
                k.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    token.as_bytes(),
                    &mut sig,
                )
                .map_err(|_| "signing failed".to_string())?;
                sig
            }
            Signer::Ec(k) => k
                .sign(&rng, token.as_bytes())
                .map_err(|_| "signing failed".to_string())?
                .as_ref()
                .to_vec(),
        };
        token.push('.');
        token.push_str(&URL_SAFE_NO_PAD.encode(sig));
        Ok(token)
    }
}

fn ec_from_pkcs8(
    der: &[u8],
    rng: &SystemRandom,
) -> std::result::Result<EcdsaKeyPair, ring::error::KeyRejected> {
    EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, der, rng).or_else(|_| {
        EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P384_SHA384_FIXED_SIGNING, der, rng)
    })
}

/// Every verification key in PEM text: public keys (`PUBLIC KEY`, `RSA PUBLIC KEY`),
/// certificates, and the public halves of private keys.
pub fn public_keys_from_pem(pem: &[u8]) -> std::result::Result<Vec<PublicKey>, String> {
    let mut keys = Vec::new();
    for (label, der) in pem::blocks(pem)? {
        match label.as_str() {
            "PUBLIC KEY" => keys.push(PublicKey::from_spki(&der)?),
            "RSA PUBLIC KEY" => {
                let (n, e) = der::rsa_public_key(&der)
                    .ok_or_else(|| "unreadable RSA PUBLIC KEY".to_string())?;
                keys.push(PublicKey::rsa(n, e));
            }
            "CERTIFICATE" => {
                let (_, cert) = x509_parser::parse_x509_certificate(&der)
                    .map_err(|e| format!("reading a certificate: {e}"))?;
                keys.push(PublicKey::from_spki(cert.public_key().raw)?);
            }
            _ => {
                if let Some(key) = SigningKey::from_der(&label, &der)? {
                    keys.push(key.public);
                }
            }
        }
    }
    if keys.is_empty() {
        return Err("no public key, certificate or private key in the file".into());
    }
    Ok(keys)
}

/// Reads the verification keys of `option` from `path`.
pub fn load_public_keys(option: &'static str, path: &Path) -> Result<Vec<PublicKey>> {
    let pem = std::fs::read(path).map_err(|source| Error::File {
        option,
        path: path.into(),
        source,
    })?;
    public_keys_from_pem(&pem).map_err(|reason| Error::Invalid {
        option,
        reason: format!("{}: {reason}", path.display()),
    })
}

/// The JOSE header fields a verifier reads.
#[derive(Debug, Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

/// Why a token does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    /// Not a compact JWS at all (another kind of bearer token).
    #[error("not a JWT")]
    NotJwt,
    /// A JWS whose header or payload cannot be read.
    #[error("malformed token: {0}")]
    Malformed(&'static str),
    /// An algorithm this verifier does not accept (`none` included).
    #[error("unsupported signing algorithm {0:?}")]
    Algorithm(String),
    /// No key verifies the signature.
    #[error("invalid signature")]
    Signature,
}

/// The payload of a compact JWS, without checking its signature: for finding out who
/// issued it before choosing how to verify it.
pub fn unverified_payload(token: &str) -> std::result::Result<Vec<u8>, JwtError> {
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::NotJwt);
    };
    URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| JwtError::Malformed("payload is not base64url"))
}

/// Checks the signature of a compact JWS with one of `keys` and returns its payload; the
/// algorithms of service-account tokens only.
pub fn verify(token: &str, keys: &[PublicKey]) -> std::result::Result<Vec<u8>, JwtError> {
    verify_with(token, keys, Algorithm::SERVICE_ACCOUNT)
}

/// Checks the signature of a compact JWS, made with one of the `allowed` algorithms, with one
/// of `keys` and returns its payload.
pub fn verify_with(
    token: &str,
    keys: &[PublicKey],
    allowed: &[Algorithm],
) -> std::result::Result<Vec<u8>, JwtError> {
    let Some((signed, sig)) = token.rsplit_once('.') else {
        return Err(JwtError::NotJwt);
    };
    let Some((header, _)) = signed.split_once('.') else {
        return Err(JwtError::NotJwt);
    };
    let header: Header = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|h| serde_json::from_slice(&h).ok())
        .ok_or(JwtError::Malformed("header is not base64url JSON"))?;
    let alg = Algorithm::from_name(&header.alg)
        .filter(|a| allowed.contains(a))
        .ok_or(JwtError::Algorithm(header.alg))?;
    let sig = URL_SAFE_NO_PAD
        .decode(sig)
        .map_err(|_| JwtError::Malformed("signature is not base64url"))?;
    // The named key first; then, as upstream, every key (a kid is only a hint).
    let named = header
        .kid
        .as_deref()
        .and_then(|kid| keys.iter().find(|k| k.kid == kid));
    let verified = match named {
        Some(key) => key.verify(alg, signed.as_bytes(), &sig),
        None => false,
    } || keys.iter().any(|k| k.verify(alg, signed.as_bytes(), &sig));
    if !verified {
        return Err(JwtError::Signature);
    }
    unverified_payload(token)
}

/// The key id a token's header names, if any.
pub fn key_id_of(token: &str) -> Option<String> {
    let header = token.split('.').next()?;
    let header: Header = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
    header.kid
}

/// The smallest PEM reader: every block's label and decoded body.
mod pem {
    use base64::Engine;

    pub fn blocks(text: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
        let text = std::str::from_utf8(text).map_err(|_| "the file is not PEM text".to_string())?;
        let mut out = Vec::new();
        let mut current: Option<(String, String)> = None;
        for line in text.lines().map(str::trim) {
            if let Some(label) = line
                .strip_prefix("-----BEGIN ")
                .and_then(|l| l.strip_suffix("-----"))
            {
                current = Some((label.to_string(), String::new()));
            } else if let Some(label) = line
                .strip_prefix("-----END ")
                .and_then(|l| l.strip_suffix("-----"))
            {
                let Some((begun, body)) = current.take().filter(|(b, _)| b == label) else {
                    return Err(format!("PEM block END {label} without its BEGIN"));
                };
                let der = base64::engine::general_purpose::STANDARD
                    .decode(body)
                    .map_err(|e| format!("PEM block {begun}: {e}"))?;
                out.push((begun, der));
            } else if let Some((_, body)) = current.as_mut() {
                // Encapsulated headers (`Proc-Type: ...`) mean an encrypted key.
                if line.contains(':') {
                    return Err("encrypted PEM blocks are not supported".into());
                }
                body.push_str(line);
            }
        }
        if let Some((label, _)) = current {
            return Err(format!("PEM block {label} is not terminated"));
        }
        Ok(out)
    }
}

/// Just enough DER to build and read the key structures involved.
mod der {
    /// `rsaEncryption` (1.2.840.113549.1.1.1).
    pub const RSA_ENCRYPTION: &[u8] = &[
        0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
    ];
    /// `id-ecPublicKey` (1.2.840.10045.2.1).
    pub const EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    /// `prime256v1` (1.2.840.10045.3.1.7).
    pub const P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    /// `secp384r1` (1.3.132.0.34).
    pub const P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];

    pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let len = content.len();
        if len < 0x80 {
            out.push(len as u8);
        } else {
            let bytes = len.to_be_bytes();
            let skip = bytes
                .iter()
                .position(|b| *b != 0)
                .unwrap_or(bytes.len() - 1);
            out.push(0x80 | (bytes.len() - skip) as u8);
            out.extend_from_slice(&bytes[skip..]);
        }
        out.extend_from_slice(content);
        out
    }

    pub fn seq(items: &[Vec<u8>]) -> Vec<u8> {
        tlv(0x30, &items.concat())
    }

    pub fn bit_string(content: &[u8]) -> Vec<u8> {
        let mut body = vec![0];
        body.extend_from_slice(content);
        tlv(0x03, &body)
    }

    /// A non-negative INTEGER from big-endian bytes without leading zeros.
    pub fn uint(bytes: &[u8]) -> Vec<u8> {
        let mut body = Vec::with_capacity(bytes.len() + 1);
        if bytes.first().is_none_or(|b| b & 0x80 != 0) {
            body.push(0);
        }
        body.extend_from_slice(bytes);
        tlv(0x02, &body)
    }

    /// One element: its tag, content and what follows.
    fn read(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, rest) = input.split_first()?;
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (first as usize, rest)
        } else {
            let n = (first & 0x7f) as usize;
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |acc, b| (acc << 8) | *b as usize);
            (len, &rest[n..])
        };
        (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
    }

    /// The modulus and exponent of a PKCS#1 `RSAPublicKey`.
    pub fn rsa_public_key(input: &[u8]) -> Option<(&[u8], &[u8])> {
        let (0x30, body, _) = read(input)? else {
            return None;
        };
        let (0x02, n, rest) = read(body)? else {
            return None;
        };
        let (0x02, e, _) = read(rest)? else {
            return None;
        };
        Some((n, e))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 2048-bit RSA key in PKCS#1 form and an EC P-256 key in SEC1 form, made by openssl.
    pub(crate) const RSA_PKCS1: &str = include_str!("testdata/rsa-pkcs1.pem");
    pub(crate) const EC_SEC1: &str = include_str!("testdata/ec-sec1.pem");
    const RSA_PKCS8: &str = include_str!("testdata/rsa-pkcs8.pem");
    const RSA_PUBLIC_SPKI: &str = include_str!("testdata/rsa-public.pem");
    const RSA_PUBLIC_PKCS1: &str = include_str!("testdata/rsa-public-pkcs1.pem");
    const EC_PUBLIC: &str = include_str!("testdata/ec-public.pem");
    const EC_PKCS8: &str = include_str!("testdata/ec-pkcs8.pem");
    /// The key ids upstream computes for these keys (`openssl pkey -pubout -outform DER |
    /// openssl dgst -sha256 -binary | basenc --base64url`, padding removed).
    const RSA_KID: &str = include_str!("testdata/rsa.kid");
    const EC_KID: &str = include_str!("testdata/ec.kid");

    #[test]
    fn every_pem_form_gives_the_same_key_and_upstream_key_id() {
        let rsa = SigningKey::from_pem(RSA_PKCS1.as_bytes()).unwrap();
        assert_eq!(rsa.public_key().key_id(), RSA_KID.trim());
        assert_eq!(rsa.public_key().algorithm(), Algorithm::RS256);
        let pkcs8 = SigningKey::from_pem(RSA_PKCS8.as_bytes()).unwrap();
        assert_eq!(pkcs8.public_key(), rsa.public_key());
        for public in [RSA_PUBLIC_SPKI, RSA_PUBLIC_PKCS1, RSA_PKCS1] {
            assert_eq!(
                public_keys_from_pem(public.as_bytes()).unwrap(),
                [rsa.public_key().clone()]
            );
        }
        let ec = SigningKey::from_pem(EC_SEC1.as_bytes()).unwrap();
        assert_eq!(ec.public_key().key_id(), EC_KID.trim());
        assert_eq!(ec.public_key().algorithm(), Algorithm::ES256);
        let ec8 = SigningKey::from_pem(EC_PKCS8.as_bytes()).unwrap();
        assert_eq!(ec8.public_key(), ec.public_key());
        assert_eq!(
            public_keys_from_pem(EC_PUBLIC.as_bytes()).unwrap(),
            [ec.public_key().clone()]
        );
        let both = format!("{RSA_PUBLIC_SPKI}{EC_PUBLIC}");
        assert_eq!(public_keys_from_pem(both.as_bytes()).unwrap().len(), 2);
    }

    #[test]
    fn tokens_verify_with_their_key_only() {
        let rsa = SigningKey::from_pem(RSA_PKCS1.as_bytes()).unwrap();
        let ec = SigningKey::from_pem(EC_SEC1.as_bytes()).unwrap();
        let claims = serde_json::json!({"sub": "x"});
        for key in [&rsa, &ec] {
            let token = key.sign(&claims).unwrap();
            let payload = verify(&token, std::slice::from_ref(key.public_key())).unwrap();
            assert_eq!(
                serde_json::from_slice::<serde_json::Value>(&payload).unwrap(),
                claims
            );
            let all = [rsa.public_key().clone(), ec.public_key().clone()];
            assert!(verify(&token, &all).is_ok());
        }
        let token = rsa.sign(&claims).unwrap();
        assert_eq!(
            verify(&token, std::slice::from_ref(ec.public_key())),
            Err(JwtError::Signature)
        );
        // Tampered payload.
        let mut parts: Vec<&str> = token.split('.').collect();
        let forged = URL_SAFE_NO_PAD.encode(br#"{"sub":"y"}"#);
        parts[1] = &forged;
        assert_eq!(
            verify(&parts.join("."), std::slice::from_ref(rsa.public_key())),
            Err(JwtError::Signature)
        );
        // alg none, with an empty signature.
        let none = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#),
            URL_SAFE_NO_PAD.encode(br#"{"sub":"x"}"#)
        );
        assert_eq!(
            verify(&none, std::slice::from_ref(rsa.public_key())),
            Err(JwtError::Algorithm("none".into()))
        );
        // HS256 keyed with the public key (the algorithm-confusion attack).
        let hs = format!(
            "{}.{}.AAAA",
            URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256"}"#),
            URL_SAFE_NO_PAD.encode(br#"{"sub":"x"}"#)
        );
        assert!(matches!(
            verify(&hs, std::slice::from_ref(rsa.public_key())),
            Err(JwtError::Algorithm(_))
        ));
        assert_eq!(verify("opaque-token", &[]), Err(JwtError::NotJwt));
        assert!(matches!(verify("a.b.c", &[]), Err(JwtError::Malformed(_))));
    }

    #[test]
    fn generated_keys_read_back_and_differ() {
        let first = generate_pem_key();
        let second = generate_pem_key();
        assert_ne!(first.public_key().key_id(), second.public_key().key_id());
        assert_eq!(first.public_key().algorithm(), Algorithm::ES256);
        let token = first.sign(&serde_json::json!({"sub": "x"})).unwrap();
        assert!(verify(&token, std::slice::from_ref(first.public_key())).is_ok());
    }

    fn generate_pem_key() -> SigningKey {
        SigningKey::from_pem(SigningKey::generate_pem().unwrap().as_bytes()).unwrap()
    }

    #[test]
    fn jwks_carry_the_key_components() {
        let rsa = SigningKey::from_pem(RSA_PKCS1.as_bytes()).unwrap();
        let jwk = rsa.public_key().jwk();
        assert_eq!(jwk["kty"], "RSA");
        assert_eq!(jwk["e"], "AQAB");
        assert_eq!(jwk["kid"], RSA_KID.trim());
        let ec = SigningKey::from_pem(EC_SEC1.as_bytes()).unwrap();
        let jwk = ec.public_key().jwk();
        assert_eq!(
            (jwk["kty"].as_str(), jwk["crv"].as_str()),
            (Some("EC"), Some("P-256"))
        );
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["x"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
    }

    #[test]
    fn unusable_files_say_why() {
        assert!(
            public_keys_from_pem(b"nothing here")
                .unwrap_err()
                .contains("no public key")
        );
        let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        assert!(
            SigningKey::from_pem(encrypted.as_bytes())
                .unwrap_err()
                .contains("encrypted")
        );
        assert!(
            SigningKey::from_pem(RSA_PUBLIC_SPKI.as_bytes())
                .unwrap_err()
                .contains("no private key")
        );
    }
}
