//! The `EncryptionConfiguration` file: parsed strictly, every problem named with its place.

use std::collections::HashSet;

use base64::Engine;
use serde::Deserialize;

use crate::{Error, Key, Provider, Transformer};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct File {
    api_version: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    resources: Vec<ResourceEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceEntry {
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    providers: Vec<ProviderEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderEntry {
    identity: Option<serde_json::Value>,
    aescbc: Option<KeysEntry>,
    aesgcm: Option<KeysEntry>,
    secretbox: Option<KeysEntry>,
    kms: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysEntry {
    #[serde(default)]
    keys: Vec<KeyEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyEntry {
    name: String,
    secret: String,
}

/// Which resources an entry covers.
#[derive(Debug, Clone)]
enum Matcher {
    /// `resource` (core) or `resource.group`.
    Exact { resource: String, group: String },
    /// `*.group` (`*.` for the core group).
    Group(String),
    /// `*.*`.
    All,
}

impl Matcher {
    fn parse(text: &str) -> Result<Self, String> {
        if text == "*.*" {
            return Ok(Matcher::All);
        }
        if let Some(group) = text.strip_prefix("*.") {
            return Ok(Matcher::Group(group.to_string()));
        }
        if text.contains('*') || text.is_empty() {
            return Err(format!(
                "{text:?} is not a resource: use resource, resource.group, *.group, *. or *.*"
            ));
        }
        let (resource, group) = text.split_once('.').unwrap_or((text, ""));
        Ok(Matcher::Exact {
            resource: resource.to_string(),
            group: group.to_string(),
        })
    }

    fn matches(&self, group: &str, resource: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Group(g) => g == group,
            Matcher::Exact {
                resource: r,
                group: g,
            } => r == resource && g == group,
        }
    }
}

/// A loaded `EncryptionConfiguration`.
#[derive(Debug, Clone, Default)]
pub struct EncryptionConfig {
    rules: Vec<(Vec<Matcher>, Transformer)>,
}

impl EncryptionConfig {
    /// Reads and checks the file at `path`.
    pub fn load(path: &std::path::Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }

    /// Parses and checks a configuration (YAML or JSON).
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = |m: String| Error::Config(m);
        let file: File = serde_saphyr::from_str(text).map_err(|e| bad(e.to_string()))?;
        match file.api_version.as_deref() {
            Some("apiserver.config.k8s.io/v1") => {}
            other => {
                return Err(bad(format!(
                    "apiVersion must be apiserver.config.k8s.io/v1, not {other:?}"
                )));
            }
        }
        if file.kind.as_deref() != Some("EncryptionConfiguration") {
            return Err(bad(format!(
                "kind must be EncryptionConfiguration, not {:?}",
                file.kind
            )));
        }
        let mut rules = Vec::new();
        for (i, entry) in file.resources.into_iter().enumerate() {
            let at = format!("resources[{i}]");
            if entry.resources.is_empty() {
                return Err(bad(format!(
                    "{at}.resources: must list at least one resource"
                )));
            }
            let matchers = entry
                .resources
                .iter()
                .enumerate()
                .map(|(j, r)| {
                    Matcher::parse(r).map_err(|m| bad(format!("{at}.resources[{j}]: {m}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if entry.providers.is_empty() {
                return Err(bad(format!(
                    "{at}.providers: must list at least one provider"
                )));
            }
            let providers = entry
                .providers
                .into_iter()
                .enumerate()
                .map(|(j, p)| provider(p).map_err(|m| bad(format!("{at}.providers[{j}]{m}"))))
                .collect::<Result<Vec<_>, _>>()?;
            rules.push((matchers, Transformer::new(providers)));
        }
        Ok(Self { rules })
    }

    /// The transformer of a resource, or `None` when no entry covers it (stored as it is).
    pub fn for_resource(&self, group: &str, resource: &str) -> Option<Transformer> {
        self.rules
            .iter()
            .find(|(matchers, _)| matchers.iter().any(|m| m.matches(group, resource)))
            .map(|(_, t)| t.clone())
    }
}

/// One provider entry (the error starts with the rest of its path).
fn provider(entry: ProviderEntry) -> Result<Provider, String> {
    let given = [
        entry.identity.is_some(),
        entry.aescbc.is_some(),
        entry.aesgcm.is_some(),
        entry.secretbox.is_some(),
        entry.kms.is_some(),
    ]
    .iter()
    .filter(|g| **g)
    .count();
    if given != 1 {
        return Err(": exactly one of identity, aescbc, aesgcm, secretbox, kms must be set".into());
    }
    if entry.kms.is_some() {
        return Err(".kms: KMS providers are not supported by Capstan yet".into());
    }
    if entry.identity.is_some() {
        return Ok(Provider::Identity);
    }
    if let Some(k) = entry.aescbc {
        return keys(k, "aescbc", &[16, 24, 32]).map(Provider::AesCbc);
    }
    if let Some(k) = entry.aesgcm {
        return keys(k, "aesgcm", &[16, 24, 32]).map(Provider::AesGcm);
    }
    let k = entry.secretbox.expect("one provider is set");
    keys(k, "secretbox", &[32]).map(Provider::Secretbox)
}

fn keys(entry: KeysEntry, provider: &str, sizes: &[usize]) -> Result<Vec<Key>, String> {
    if entry.keys.is_empty() {
        return Err(format!(".{provider}.keys: must list at least one key"));
    }
    let mut names = HashSet::new();
    entry
        .keys
        .into_iter()
        .enumerate()
        .map(|(i, k)| {
            let at = format!(".{provider}.keys[{i}]");
            if k.name.is_empty() || k.name.contains(':') {
                return Err(format!("{at}.name: must be non-empty and without ':'"));
            }
            if !names.insert(k.name.clone()) {
                return Err(format!("{at}.name: {:?} is used twice", k.name));
            }
            let secret = base64::engine::general_purpose::STANDARD
                .decode(k.secret.trim())
                .map_err(|e| format!("{at}.secret: not base64: {e}"))?;
            if !sizes.contains(&secret.len()) {
                let allowed: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
                return Err(format!(
                    "{at}.secret: {provider} keys are {} bytes long, this one is {}",
                    allowed.join(" or "),
                    secret.len()
                ));
            }
            Ok(Key {
                name: k.name,
                secret,
            })
        })
        .collect()
}
