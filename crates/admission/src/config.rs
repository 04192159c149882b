//! Which plugins run: upstream's order, the default set, `--enable-admission-plugins` and
//! `--disable-admission-plugins`, and the `AdmissionConfiguration` file with per-plugin
//! configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// Every plugin Capstan knows, in the order upstream runs them (mutating and validating
/// phases both follow it); webhooks, quota and `AlwaysDeny` come last.
pub const ORDERED: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "SecurityContextDeny",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodSecurityPolicy",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "PersistentVolumeLabel",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// The plugins on unless disabled: the spec's default set, and PodSecurity,
/// ValidatingAdmissionPolicy and MutatingAdmissionPolicy, on by default upstream since v1.25,
/// v1.30 and v1.36 (without labels or policies they change nothing; off, a cluster would
/// ignore the namespaces' Pod Security labels and the policies users write).
pub const DEFAULTS: &[&str] = &[
    "NamespaceLifecycle",
    "PodSecurity",
    "ValidatingAdmissionPolicy",
    "LimitRanger",
    "ServiceAccount",
    "ResourceQuota",
    "Priority",
    "RuntimeClass",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "DefaultIngressClass",
    "TaintNodesByCondition",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionWebhook",
    "CertificateApproval",
    "CertificateSigning",
    "CertificateSubjectRestriction",
];

/// The admission options.
#[derive(Debug, Clone, Default)]
pub struct AdmissionOptions {
    /// `--enable-admission-plugins`: on in addition to the defaults.
    pub enable: Vec<String>,
    /// `--disable-admission-plugins`: off although in the defaults.
    pub disable: Vec<String>,
    /// `--admission-control-config-file`.
    pub config_file: Option<PathBuf>,
}

fn known(option: &'static str, names: &[String]) -> Result<()> {
    match names.iter().find(|n| !ORDERED.contains(&n.as_str())) {
        Some(name) => Err(Error::UnknownPlugin {
            option,
            name: name.clone(),
        }),
        None => Ok(()),
    }
}

impl AdmissionOptions {
    /// The enabled plugins, in upstream's order (the order of the options does not matter).
    pub fn enabled(&self) -> Result<Vec<&'static str>> {
        known("--enable-admission-plugins", &self.enable)?;
        known("--disable-admission-plugins", &self.disable)?;
        let both: Vec<&str> = self
            .enable
            .iter()
            .filter(|n| self.disable.contains(n))
            .map(String::as_str)
            .collect();
        if self.enable.iter().any(|n| n == "PodSecurityPolicy") {
            return Err(Error::Plugin {
                plugin: "PodSecurityPolicy",
                reason: "removed in Kubernetes v1.25 with the policy/v1beta1 PodSecurityPolicy API, which is not served; use PodSecurity (pod-security.kubernetes.io/* namespace labels)".into(),
            });
        }
        if !both.is_empty() {
            return Err(Error::Plugin {
                plugin: "options",
                reason: format!(
                    "{both:?} appear in both --enable-admission-plugins and --disable-admission-plugins"
                ),
            });
        }
        Ok(ORDERED
            .iter()
            .copied()
            .filter(|name| {
                let on = DEFAULTS.contains(name) || self.enable.iter().any(|e| e == name);
                on && !self.disable.iter().any(|d| d == name)
            })
            .collect())
    }

    /// Each plugin's configuration from `--admission-control-config-file` (JSON), by name.
    pub fn plugin_configurations(&self) -> Result<BTreeMap<String, Value>> {
        match &self.config_file {
            None => Ok(BTreeMap::new()),
            Some(path) => read_configuration(path),
        }
    }

    /// The enabled plugins with their configurations, checked (read before anything starts,
    /// so that a bad option fails the start at once).
    pub fn resolve(&self) -> Result<Resolved> {
        Ok(Resolved {
            enabled: self.enabled()?,
            configurations: self.plugin_configurations()?,
        })
    }
}

/// The enabled plugins, in order, and each plugin's configuration.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// The enabled plugins in upstream's order.
    pub enabled: Vec<&'static str>,
    /// Configurations by plugin name.
    pub configurations: BTreeMap<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AdmissionConfiguration {
    api_version: String,
    kind: String,
    #[serde(default)]
    plugins: Vec<PluginConfiguration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginConfiguration {
    name: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    configuration: Option<Value>,
}

const API_VERSIONS: &[&str] = &[
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1alpha1",
    "apiserver.k8s.io/v1alpha1",
];

fn parse(text: &str) -> std::result::Result<Value, String> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
}

/// Reads an `AdmissionConfiguration` (YAML or JSON): each plugin's configuration, inline or
/// from its own file (relative paths from the configuration's directory).
pub fn read_configuration(path: &Path) -> Result<BTreeMap<String, Value>> {
    let fail = |reason: String| Error::Config {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let doc = parse(&text).map_err(&fail)?;
    let config: AdmissionConfiguration =
        serde_json::from_value(doc).map_err(|e| fail(e.to_string()))?;
    if config.kind != "AdmissionConfiguration"
        || !API_VERSIONS.contains(&config.api_version.as_str())
    {
        return Err(fail(format!(
            "not an AdmissionConfiguration of {}: {}, {}",
            API_VERSIONS.join(", "),
            config.api_version,
            config.kind
        )));
    }
    let mut out = BTreeMap::new();
    for plugin in config.plugins {
        if !ORDERED.contains(&plugin.name.as_str()) {
            return Err(fail(format!("unknown admission plugin {:?}", plugin.name)));
        }
        let value = match (plugin.configuration, plugin.path) {
            (Some(_), Some(_)) => {
                return Err(fail(format!(
                    "plugin {:?}: give its configuration or a path, not both",
                    plugin.name
                )));
            }
            (Some(inline), None) => inline,
            (None, Some(file)) => {
                let file = path.parent().unwrap_or(Path::new(".")).join(file);
                let text = std::fs::read_to_string(&file).map_err(|e| {
                    fail(format!("plugin {:?}: {}: {e}", plugin.name, file.display()))
                })?;
                parse(&text).map_err(|e| {
                    fail(format!("plugin {:?}: {}: {e}", plugin.name, file.display()))
                })?
            }
            (None, None) => continue,
        };
        out.insert(plugin.name, value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(enable: &[&str], disable: &[&str]) -> AdmissionOptions {
        AdmissionOptions {
            enable: enable.iter().map(|s| s.to_string()).collect(),
            disable: disable.iter().map(|s| s.to_string()).collect(),
            config_file: None,
        }
    }

    #[test]
    fn enabling_and_disabling_keeps_upstreams_order() {
        let on = options(&["AlwaysPullImages", "NodeRestriction"], &["LimitRanger"])
            .enabled()
            .unwrap();
        let position = |n: &str| on.iter().position(|x| *x == n);
        assert!(position("NodeRestriction") < position("AlwaysPullImages"));
        assert!(position("NamespaceLifecycle") < position("NodeRestriction"));
        assert_eq!(position("LimitRanger"), None);
        assert_eq!(on.last(), Some(&"ResourceQuota"));
        assert_eq!(options(&[], &[]).enabled().unwrap().len(), DEFAULTS.len());
    }

    #[test]
    fn unknown_names_and_contradictions_are_refused() {
        let err = options(&["NodeRestrictions"], &[]).enabled().unwrap_err();
        assert_eq!(
            err.to_string(),
            "--enable-admission-plugins: unknown admission plugin \"NodeRestrictions\""
        );
        let err = options(&["AlwaysDeny"], &["AlwaysDeny"])
            .enabled()
            .unwrap_err();
        assert!(err.to_string().contains("appear in both"), "{err}");
        let err = options(&["PodSecurityPolicy"], &[]).enabled().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("admission plugin PodSecurityPolicy: removed in Kubernetes v1.25"),
            "{err}"
        );
    }

    #[test]
    fn the_configuration_file_inline_and_by_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("tolerations.yaml"),
            "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\ndefault: []\n",
        )
        .unwrap();
        let file = dir.path().join("admission.yaml");
        std::fs::write(
            &file,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n\
             - name: PodTolerationRestriction\n  path: tolerations.yaml\n\
             - name: EventRateLimit\n  configuration:\n    kind: Configuration\n    limits: []\n",
        )
        .unwrap();
        let configs = read_configuration(&file).unwrap();
        assert_eq!(configs["PodTolerationRestriction"]["kind"], "Configuration");
        assert_eq!(configs["EventRateLimit"]["limits"], serde_json::json!([]));

        std::fs::write(
            &file,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugin: []\n",
        )
        .unwrap();
        let err = read_configuration(&file).unwrap_err().to_string();
        assert!(
            err.starts_with("--admission-control-config-file ") && err.contains("plugin"),
            "{err}"
        );
        std::fs::write(&file, "apiVersion: v1\nkind: Config\n").unwrap();
        assert!(
            read_configuration(&file)
                .unwrap_err()
                .to_string()
                .contains("not an AdmissionConfiguration")
        );
        std::fs::write(&file, "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: Nope\n").unwrap();
        assert!(
            read_configuration(&file)
                .unwrap_err()
                .to_string()
                .contains("unknown admission plugin \"Nope\"")
        );
    }
}
