//! Discovery documents (`/api`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`,
//! `/api/v1`) and `/version`, built from the registry's descriptors and the custom
//! resources', again whenever custom resources come or go.

use std::collections::HashMap;

use bytes::Bytes;
use capstan_meta::ResourceDescriptor;
use capstan_meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, GroupVersionForDiscovery,
    ServerAddressByClientCIDR,
};
use std::sync::Arc;

use capstan_registry::{RestStorage, group_versions};

use crate::KUBERNETES_VERSION;

/// Serialized discovery documents, keyed by path.
pub struct Discovery {
    documents: HashMap<String, Bytes>,
}

fn to_bytes<T: serde::Serialize>(value: &T) -> Bytes {
    serde_json::to_vec(value).unwrap_or_default().into()
}

impl Discovery {
    /// Builds every document of the `resources` served, in their order. `server_address` is
    /// the `host:port` clients are told to use.
    pub fn build(resources: &[Arc<dyn RestStorage>], server_address: &str) -> Self {
        let descriptors: Vec<&ResourceDescriptor> =
            resources.iter().map(|r| r.descriptor()).collect();
        let descriptors = descriptors.as_slice();
        let mut groups = group_versions(descriptors.iter().copied());
        groups.sort_by_cached_key(|(group, _)| group_rank(group));
        let hashes = storage_version_hashes(resources);
        let mut documents = HashMap::new();
        let addresses = vec![ServerAddressByClientCIDR {
            client_cidr: "0.0.0.0/0".into(),
            server_address: server_address.into(),
        }];
        // The core group is listed only when it serves something: an empty group version
        // makes client discovery fail.
        let core_versions: Vec<String> = groups
            .iter()
            .find(|(g, _)| g.is_empty())
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        documents.insert(
            "/api".to_string(),
            to_bytes(&APIVersions {
                server_address_by_client_cidrs: addresses.clone(),
                versions: core_versions,
            }),
        );
        let mut api_groups = Vec::new();
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (group, versions) in &groups {
            for v in versions {
                if !pairs.contains(&(group.clone(), v.clone())) {
                    pairs.push((group.clone(), v.clone()));
                }
            }
            if group.is_empty() {
                continue;
            }
            let entries: Vec<GroupVersionForDiscovery> = versions
                .iter()
                .map(|v| GroupVersionForDiscovery {
                    group_version: format!("{group}/{v}"),
                    version: v.clone(),
                })
                .collect();
            let api_group = APIGroup {
                name: group.clone(),
                preferred_version: entries.first().cloned(),
                server_address_by_client_cidrs: Some(addresses.clone()),
                versions: entries,
            };
            documents.insert(format!("/apis/{group}"), to_bytes(&api_group));
            api_groups.push(api_group);
        }
        documents.insert(
            "/apis".to_string(),
            to_bytes(&APIGroupList { groups: api_groups }),
        );
        for (group, version) in pairs {
            let resources: Vec<APIResource> = descriptors
                .iter()
                .filter(|d| d.group == group && d.version == version)
                .map(|d| APIResource {
                    categories: (!d.categories.is_empty()).then(|| d.categories.clone()),
                    group: d.response_group_version.as_ref().map(|(g, _)| g.clone()),
                    kind: d.kind.clone(),
                    name: d.path_name(),
                    namespaced: d.namespaced,
                    short_names: (!d.short_names.is_empty()).then(|| d.short_names.clone()),
                    singular_name: if d.subresource.is_empty() {
                        d.singular.clone()
                    } else {
                        String::new()
                    },
                    storage_version_hash: d
                        .subresource
                        .is_empty()
                        .then(|| {
                            hashes.get(&(d.group.as_str(), d.version.as_str(), d.resource.as_str()))
                        })
                        .flatten()
                        .cloned(),
                    verbs: d.verbs.clone(),
                    version: d.response_group_version.as_ref().map(|(_, v)| v.clone()),
                })
                .collect();
            let (path, gv) = if group.is_empty() {
                (format!("/api/{version}"), version.clone())
            } else {
                (
                    format!("/apis/{group}/{version}"),
                    format!("{group}/{version}"),
                )
            };
            documents.insert(
                path,
                to_bytes(&APIResourceList {
                    group_version: gv,
                    resources,
                }),
            );
        }
        for (path, core) in [("/api", true), ("/apis", false)] {
            let v2 = aggregated(descriptors, &groups, core);
            let mut v2beta1 = v2.clone();
            v2beta1["apiVersion"] = "apidiscovery.k8s.io/v2beta1".into();
            documents.insert(format!("{AGGREGATED_V2}{path}"), to_bytes(&v2));
            documents.insert(format!("{AGGREGATED_V2BETA1}{path}"), to_bytes(&v2beta1));
        }
        let (major, minor, patch) = KUBERNETES_VERSION;
        let version = serde_json::json!({
            "major": major.to_string(),
            "minor": minor.to_string(),
            // Capstan emulates no other version and speaks with components one minor older.
            "emulationMajor": major.to_string(),
            "emulationMinor": minor.to_string(),
            "minCompatibilityMajor": major.to_string(),
            "minCompatibilityMinor": (minor - 1).to_string(),
            "gitVersion": format!("v{major}.{minor}.{patch}"),
            "gitCommit": env!("CARGO_PKG_VERSION"),
            "gitTreeState": "clean",
            "buildDate": "1970-01-01T00:00:00Z",
            "goVersion": format!("capstan {}", env!("CARGO_PKG_VERSION")),
            "compiler": "rustc",
            "platform": format!("{}/{}", std::env::consts::OS, go_arch()),
        });
        let indented = serde_json::to_vec_pretty(&version).unwrap_or_default();
        documents.insert("/version".to_string(), indented.into());
        Self { documents }
    }

    /// The document served at `path`, if any.
    pub fn get(&self, path: &str) -> Option<Bytes> {
        self.documents.get(path.trim_end_matches('/')).cloned()
    }

    /// The aggregated document (`/api` or `/apis`) in `version` (`v2` or `v2beta1`).
    pub fn aggregated(&self, path: &str, version: &str) -> Option<Bytes> {
        let prefix = match version {
            "v2" => AGGREGATED_V2,
            "v2beta1" => AGGREGATED_V2BETA1,
            _ => return None,
        };
        self.documents
            .get(&format!("{prefix}{}", path.trim_end_matches('/')))
            .cloned()
    }
}

/// Upstream's order of the built-in groups (its aggregator's priorities, highest first); other
/// groups, custom resources', follow in name order as upstream's equal priorities do.
const GROUP_ORDER: &[&str] = &[
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

fn group_rank(group: &str) -> (usize, String) {
    let built_in = GROUP_ORDER.iter().position(|g| *g == group);
    (built_in.unwrap_or(GROUP_ORDER.len()), group.to_string())
}

/// Each stored resource's `storageVersionHash`, by (group, version, resource) served: the
/// first 8 bytes of the SHA-256 of the stored form's `group/version/kind`, in base64, as
/// upstream computes it (clients compare it to notice a storage version change).
fn storage_version_hashes(
    resources: &[Arc<dyn RestStorage>],
) -> HashMap<(&str, &str, &str), String> {
    use base64::Engine;
    resources
        .iter()
        .filter_map(|r| {
            let stored = r.forms()?.stored().clone();
            let key = format!("{}/{}/{}", stored.group, stored.version, stored.kind);
            let digest = ring::digest::digest(&ring::digest::SHA256, key.as_bytes());
            let hash = base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8]);
            let d = r.descriptor();
            Some((
                (d.group.as_str(), d.version.as_str(), d.resource.as_str()),
                hash,
            ))
        })
        .collect()
}

const AGGREGATED_V2: &str = "aggregated-v2:";
const AGGREGATED_V2BETA1: &str = "aggregated-v2beta1:";

/// An `APIGroupDiscoveryList` (`apidiscovery.k8s.io`) of the core group (`core`) or of the
/// named groups: every version with its resources and their subresources.
fn aggregated(
    descriptors: &[&ResourceDescriptor],
    groups: &[(String, Vec<String>)],
    core: bool,
) -> serde_json::Value {
    use serde_json::{Value, json};
    let mut items = Vec::new();
    for (group, versions) in groups {
        if group.is_empty() != core {
            continue;
        }
        let versions: Vec<Value> = versions
            .iter()
            .map(|version| {
                let in_version: Vec<_> = descriptors
                    .iter()
                    .filter(|d| &d.group == group && &d.version == version)
                    .collect();
                let resources: Vec<Value> = in_version
                    .iter()
                    .filter(|d| d.subresource.is_empty())
                    .map(|d| {
                        let subresources: Vec<Value> = in_version
                            .iter()
                            .filter(|s| s.resource == d.resource && !s.subresource.is_empty())
                            .map(|s| {
                                json!({
                                    "subresource": s.subresource,
                                    "responseKind": response_kind(s),
                                    "verbs": s.verbs,
                                })
                            })
                            .collect();
                        let mut r = json!({
                            "resource": d.resource,
                            "responseKind": response_kind(d),
                            "scope": if d.namespaced { "Namespaced" } else { "Cluster" },
                            "singularResource": d.singular,
                            "verbs": d.verbs,
                        });
                        if !d.short_names.is_empty() {
                            r["shortNames"] = json!(d.short_names);
                        }
                        if !d.categories.is_empty() {
                            r["categories"] = json!(d.categories);
                        }
                        if !subresources.is_empty() {
                            r["subresources"] = Value::Array(subresources);
                        }
                        r
                    })
                    .collect();
                json!({"version": version, "resources": resources, "freshness": "Current"})
            })
            .collect();
        let metadata = if group.is_empty() {
            json!({"creationTimestamp": null})
        } else {
            json!({"name": group, "creationTimestamp": null})
        };
        items.push(json!({"metadata": metadata, "versions": versions}));
    }
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// A resource's `responseKind`: the group and version are empty unless the kind is another
/// group version's (a workload's `scale` answers `autoscaling/v1` Scales), as upstream's.
fn response_kind(d: &ResourceDescriptor) -> serde_json::Value {
    let (group, version) = d
        .response_group_version
        .as_ref()
        .map_or(("", ""), |(g, v)| (g.as_str(), v.as_str()));
    serde_json::json!({"group": group, "version": version, "kind": d.kind})
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}
