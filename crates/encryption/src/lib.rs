//! Encryption at rest, as upstream configures and stores it.
//!
//! [`EncryptionConfig::load`] reads an `EncryptionConfiguration` (`apiserver.config.k8s.io/v1`,
//! YAML or JSON): for lists of resources, an ordered list of providers (`identity`, `aescbc`,
//! `aesgcm`, `secretbox`, each but identity with named keys). [`EncryptionConfig::for_resource`]
//! gives a resource's [`Transformer`]: the first provider (its first key) writes, every
//! provider reads. Encrypted values carry upstream's prefix `k8s:enc:<provider>:v1:<key>:`
//! followed by the nonce or IV and the ciphertext, so either server reads the other's data.

mod config;

use std::sync::Arc;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit, block_padding::Pkcs7};
use rand::RngCore;

pub use config::EncryptionConfig;

/// Errors of the configuration file and of encrypting or decrypting one value.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration file cannot be read.
    #[error("reading the encryption configuration {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The configuration is malformed or names something unsupported.
    #[error("encryption configuration: {0}")]
    Config(String),
    /// A stored value cannot be decrypted (wrong or missing key, tampered data).
    #[error("{0}")]
    Decrypt(String),
}

/// One named key of a provider.
#[derive(Clone)]
pub(crate) struct Key {
    name: String,
    secret: Vec<u8>,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({:?}, {} bytes)", self.name, self.secret.len())
    }
}

/// A provider with its keys.
#[derive(Debug, Clone)]
pub(crate) enum Provider {
    /// Stores values as they are.
    Identity,
    /// AES-CBC with PKCS#7 padding and a random 16-byte IV.
    AesCbc(Vec<Key>),
    /// AES-GCM with a random 12-byte nonce, the storage key as authenticated data.
    AesGcm(Vec<Key>),
    /// XSalsa20-Poly1305 with a random 24-byte nonce.
    Secretbox(Vec<Key>),
}

impl Provider {
    fn name(&self) -> &'static str {
        match self {
            Provider::Identity => "identity",
            Provider::AesCbc(_) => "aescbc",
            Provider::AesGcm(_) => "aesgcm",
            Provider::Secretbox(_) => "secretbox",
        }
    }

    fn keys(&self) -> &[Key] {
        match self {
            Provider::Identity => &[],
            Provider::AesCbc(keys) | Provider::AesGcm(keys) | Provider::Secretbox(keys) => keys,
        }
    }
}

fn prefix(provider: &str, key: &str) -> String {
    format!("k8s:enc:{provider}:v1:{key}:")
}

/// How one resource's values are written and read.
#[derive(Debug, Clone)]
pub struct Transformer {
    providers: Arc<Vec<Provider>>,
}

impl Transformer {
    pub(crate) fn new(providers: Vec<Provider>) -> Self {
        Self {
            providers: Arc::new(providers),
        }
    }

    /// The stored form of `plaintext` under `storage_key`, by the first provider.
    pub fn encrypt(&self, storage_key: &str, plaintext: &[u8]) -> Vec<u8> {
        let Some(provider) = self.providers.first() else {
            return plaintext.to_vec();
        };
        // Identity has no keys: values are stored as they are.
        let Some(key) = provider.keys().first() else {
            return plaintext.to_vec();
        };
        let mut out = prefix(provider.name(), &key.name).into_bytes();
        match provider {
            Provider::Identity => unreachable!("identity has no keys"),
            Provider::AesCbc(_) => {
                let mut iv = [0u8; 16];
                rand::rng().fill_bytes(&mut iv);
                out.extend_from_slice(&iv);
                out.extend(cbc_encrypt(&key.secret, &iv, plaintext));
            }
            Provider::AesGcm(_) => {
                let mut nonce = [0u8; 12];
                rand::rng().fill_bytes(&mut nonce);
                out.extend_from_slice(&nonce);
                out.extend(
                    gcm(&key.secret, &nonce, storage_key, plaintext, true)
                        .expect("aesgcm keys are checked to be 16, 24 or 32 bytes"),
                );
            }
            Provider::Secretbox(_) => {
                let mut nonce = [0u8; 24];
                rand::rng().fill_bytes(&mut nonce);
                out.extend_from_slice(&nonce);
                let cipher = crypto_secretbox::XSalsa20Poly1305::new_from_slice(&key.secret)
                    .expect("secretbox keys are checked to be 32 bytes");
                out.extend(
                    cipher
                        .encrypt(&nonce.into(), plaintext)
                        .expect("secretbox encryption cannot fail"),
                );
            }
        }
        out
    }

    /// The plaintext of a stored value under `storage_key`, by whichever provider and key
    /// its prefix names (unprefixed values are read only when `identity` is a provider).
    pub fn decrypt(&self, storage_key: &str, stored: &[u8]) -> Result<Vec<u8>, Error> {
        if stored.starts_with(b"k8s:enc:") {
            for provider in self.providers.iter() {
                for key in provider.keys() {
                    let p = prefix(provider.name(), &key.name);
                    if let Some(payload) = stored.strip_prefix(p.as_bytes()) {
                        return open(provider, key, storage_key, payload).map_err(|why| {
                            Error::Decrypt(format!(
                                "the {} key {:?} cannot decrypt it: {why}",
                                provider.name(),
                                key.name
                            ))
                        });
                    }
                }
            }
            let named = String::from_utf8_lossy(&stored[..stored.len().min(64)])
                .split(':')
                .take(5)
                .collect::<Vec<_>>()
                .join(":");
            return Err(Error::Decrypt(format!(
                "no configured provider has the key its prefix names ({named}:)"
            )));
        }
        if self
            .providers
            .iter()
            .any(|p| matches!(p, Provider::Identity))
        {
            return Ok(stored.to_vec());
        }
        Err(Error::Decrypt(
            "the value is not encrypted and identity is not a provider for it".into(),
        ))
    }
}

fn open(
    provider: &Provider,
    key: &Key,
    storage_key: &str,
    payload: &[u8],
) -> Result<Vec<u8>, String> {
    match provider {
        Provider::Identity => Ok(payload.to_vec()),
        Provider::AesCbc(_) => {
            if payload.len() < 16 || !(payload.len() - 16).is_multiple_of(16) {
                return Err("the data is not whole AES blocks".into());
            }
            let (iv, data) = payload.split_at(16);
            cbc_decrypt(&key.secret, iv, data)
        }
        Provider::AesGcm(_) => {
            if payload.len() < 12 {
                return Err("the data is shorter than a nonce".into());
            }
            let (nonce, data) = payload.split_at(12);
            gcm(&key.secret, nonce, storage_key, data, false)
        }
        Provider::Secretbox(_) => {
            if payload.len() < 24 {
                return Err("the data is shorter than a nonce".into());
            }
            let (nonce, data) = payload.split_at(24);
            let cipher = crypto_secretbox::XSalsa20Poly1305::new_from_slice(&key.secret)
                .map_err(|e| e.to_string())?;
            let nonce: [u8; 24] = nonce.try_into().map_err(|_| "bad nonce".to_string())?;
            cipher
                .decrypt(&nonce.into(), data)
                .map_err(|_| "authentication failed".to_string())
        }
    }
}

fn cbc_encrypt(secret: &[u8], iv: &[u8; 16], plaintext: &[u8]) -> Vec<u8> {
    match secret.len() {
        16 => cbc::Encryptor::<aes::Aes128>::new_from_slices(secret, iv)
            .expect("checked key size")
            .encrypt_padded_vec_mut::<Pkcs7>(plaintext),
        24 => cbc::Encryptor::<aes::Aes192>::new_from_slices(secret, iv)
            .expect("checked key size")
            .encrypt_padded_vec_mut::<Pkcs7>(plaintext),
        _ => cbc::Encryptor::<aes::Aes256>::new_from_slices(secret, iv)
            .expect("checked key size")
            .encrypt_padded_vec_mut::<Pkcs7>(plaintext),
    }
}

fn cbc_decrypt(secret: &[u8], iv: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    let bad = |_| "the padding is wrong (another key wrote it?)".to_string();
    match secret.len() {
        16 => cbc::Decryptor::<aes::Aes128>::new_from_slices(secret, iv)
            .map_err(|e| e.to_string())?
            .decrypt_padded_vec_mut::<Pkcs7>(data)
            .map_err(bad),
        24 => cbc::Decryptor::<aes::Aes192>::new_from_slices(secret, iv)
            .map_err(|e| e.to_string())?
            .decrypt_padded_vec_mut::<Pkcs7>(data)
            .map_err(bad),
        _ => cbc::Decryptor::<aes::Aes256>::new_from_slices(secret, iv)
            .map_err(|e| e.to_string())?
            .decrypt_padded_vec_mut::<Pkcs7>(data)
            .map_err(bad),
    }
}

/// AES-GCM seal (`seal`) or open with the storage key as authenticated data.
fn gcm(secret: &[u8], nonce: &[u8], aad: &str, data: &[u8], seal: bool) -> Result<Vec<u8>, String> {
    use aes_gcm::aead::generic_array::GenericArray;
    use aes_gcm::aes::Aes192;
    use aes_gcm::{Aes128Gcm, Aes256Gcm, AesGcm};
    type Aes192Gcm = AesGcm<Aes192, aes_gcm::aead::consts::U12>;
    let nonce = GenericArray::from_slice(nonce);
    let payload = Payload {
        msg: data,
        aad: aad.as_bytes(),
    };
    let result = match secret.len() {
        16 => {
            let c = Aes128Gcm::new_from_slice(secret).map_err(|e| e.to_string())?;
            if seal {
                c.encrypt(nonce, payload)
            } else {
                c.decrypt(nonce, payload)
            }
        }
        24 => {
            let c = Aes192Gcm::new_from_slice(secret).map_err(|e| e.to_string())?;
            if seal {
                c.encrypt(nonce, payload)
            } else {
                c.decrypt(nonce, payload)
            }
        }
        _ => {
            let c = Aes256Gcm::new_from_slice(secret).map_err(|e| e.to_string())?;
            if seal {
                c.encrypt(nonce, payload)
            } else {
                c.decrypt(nonce, payload)
            }
        }
    };
    result.map_err(|_| "authentication failed".to_string())
}

#[cfg(test)]
mod tests;
