//! Which group versions and resources are served (`--runtime-config`).
//!
//! Keys as upstream: `api/all`, `api/ga`, `api/beta`, `api/alpha`, a group version
//! (`apps/v1`, `v1` or `api/v1` for the core group) or one resource of it
//! (`apps/v1/deployments`). The broader key yields to the narrower, whatever their order:
//! `api/all`, then the levels, then group versions, then resources. GA versions are on by
//! default; every version Capstan serves is GA.

use capstan_meta::ResourceDescriptor;

use crate::error::{Error, Result};

/// The stability level of a version (`v1`: GA, `v1beta1`: beta, `v1alpha1`: alpha).
fn level(version: &str) -> &'static str {
    if version.contains("alpha") {
        "alpha"
    } else if version.contains("beta") {
        "beta"
    } else {
        "ga"
    }
}

/// What a key names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    All,
    Level(&'static str),
    GroupVersion(String, String),
    Resource(String, String, String),
}

fn parse_key(key: &str) -> Result<Key> {
    let bad = || {
        Error::RuntimeConfig(format!(
            "invalid key {key:?}: not api/all, api/ga, api/beta, api/alpha, group/version or group/version/resource"
        ))
    };
    let parts: Vec<&str> = key.trim_matches('/').split('/').collect();
    let version_ok = |v: &str| !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric());
    Ok(match parts.as_slice() {
        ["api", "all"] => Key::All,
        ["api", "ga"] => Key::Level("ga"),
        ["api", "beta"] => Key::Level("beta"),
        ["api", "alpha"] => Key::Level("alpha"),
        ["api" | "", version] if version_ok(version) => {
            Key::GroupVersion(String::new(), version.to_string())
        }
        [version] if version_ok(version) => Key::GroupVersion(String::new(), version.to_string()),
        ["api", version, resource] if version_ok(version) => {
            Key::Resource(String::new(), version.to_string(), resource.to_string())
        }
        [group, version] if !group.is_empty() => {
            if !version_ok(version) {
                return Err(bad());
            }
            Key::GroupVersion(group.to_string(), version.to_string())
        }
        [group, version, resource] if version_ok(version) && !resource.is_empty() => {
            Key::Resource(group.to_string(), version.to_string(), resource.to_string())
        }
        _ => return Err(bad()),
    })
}

/// The parsed `--runtime-config`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    entries: Vec<(Key, bool)>,
}

impl RuntimeConfig {
    /// From `key=bool` pairs (a bare key means true, as upstream); refuses unknown keys and
    /// turning the core group off.
    pub fn parse(pairs: &[(String, bool)]) -> Result<Self> {
        let mut entries = Vec::new();
        for (key, enabled) in pairs {
            let parsed = parse_key(key)?;
            if !enabled && matches!(&parsed, Key::GroupVersion(g, v) if g.is_empty() && v == "v1") {
                return Err(Error::RuntimeConfig(format!(
                    "{key:?}: the core API (v1) cannot be turned off"
                )));
            }
            entries.push((parsed, *enabled));
        }
        Ok(Self { entries })
    }

    /// The group versions the configuration turns on by name, for the server to check it
    /// serves them.
    pub fn enabled_group_versions(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .filter_map(|(k, on)| match k {
                Key::GroupVersion(g, v) if *on => Some((g.clone(), v.clone())),
                Key::Resource(g, v, _) if *on => Some((g.clone(), v.clone())),
                _ => None,
            })
            .collect()
    }

    /// Whether the resource (or subresource) `d` is served.
    pub fn serves(&self, d: &ResourceDescriptor) -> bool {
        if d.group.is_empty() && d.version == "v1" {
            let off = self.entries.iter().any(|(k, on)| {
                !on && matches!(k, Key::Resource(g, v, r) if g.is_empty() && v == "v1" && *r == d.resource)
            });
            return !off;
        }
        let lvl = level(&d.version);
        let mut enabled = lvl == "ga";
        // Broader keys first, narrower ones after: the narrowest that names `d` decides.
        for rank in 0..4 {
            for (key, on) in &self.entries {
                let applies = match (rank, key) {
                    (0, Key::All) => true,
                    (1, Key::Level(l)) => *l == lvl,
                    (2, Key::GroupVersion(g, v)) => *g == d.group && *v == d.version,
                    (3, Key::Resource(g, v, r)) => {
                        *g == d.group && *v == d.version && *r == d.resource
                    }
                    _ => false,
                };
                if applies {
                    enabled = *on;
                }
            }
        }
        enabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(group: &str, version: &str, resource: &str) -> ResourceDescriptor {
        ResourceDescriptor {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
            ..Default::default()
        }
    }

    fn config(pairs: &[(&str, bool)]) -> RuntimeConfig {
        let pairs: Vec<(String, bool)> = pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        RuntimeConfig::parse(&pairs).unwrap()
    }

    #[test]
    fn the_narrowest_key_decides_whatever_the_order() {
        let c = config(&[("apps/v1", true), ("api/all", false)]);
        assert!(c.serves(&d("apps", "v1", "deployments")));
        assert!(!c.serves(&d("batch", "v1", "jobs")));
        assert!(c.serves(&d("", "v1", "pods")), "the core group stays");
        let c = config(&[("apps/v1/daemonsets", false)]);
        assert!(!c.serves(&d("apps", "v1", "daemonsets")));
        assert!(c.serves(&d("apps", "v1", "deployments")));
        let c = config(&[("api/ga", false), ("storage.k8s.io/v1", true)]);
        assert!(!c.serves(&d("apps", "v1", "deployments")));
        assert!(c.serves(&d("storage.k8s.io", "v1", "storageclasses")));
        assert!(!config(&[]).serves(&d("x.io", "v1beta1", "y")));
    }

    #[test]
    fn bad_keys_and_turning_off_the_core_group_are_refused() {
        let parse = |k: &str, v: bool| RuntimeConfig::parse(&[(k.to_string(), v)]);
        let refused = |k: &str, v: bool| match parse(k, v) {
            Err(Error::RuntimeConfig(why)) => why,
            other => panic!("{other:?}"),
        };
        assert!(refused("api/v1", false).contains("cannot be turned off"));
        assert!(refused("v1", false).contains("cannot be turned off"));
        assert!(refused("apps/v-1", true).contains("invalid key"));
        assert!(parse("api/v1/pods", false).is_ok());
        assert_eq!(
            config(&[("apps/v1", true), ("api/beta", true)]).enabled_group_versions(),
            [("apps".to_string(), "v1".to_string())]
        );
    }
}
