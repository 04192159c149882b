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
        let groups = group_versions(descriptors.iter().copied());
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
                    storage_version_hash: None,
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
            "gitVersion": format!("v{major}.{minor}.{patch}"),
            "gitCommit": env!("CARGO_PKG_VERSION"),
            "gitTreeState": "clean",
            "buildDate": "1970-01-01T00:00:00Z",
            "goVersion": format!("capstan {}", env!("CARGO_PKG_VERSION")),
            "compiler": "rustc",
            "platform": format!("{}/{}", std::env::consts::OS, go_arch()),
        });
        documents.insert("/version".to_string(), to_bytes(&version));
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
                                    "responseKind": {
                                        "group": s.response_group_version.as_ref().map_or(&s.group, |(g, _)| g),
                                        "version": s.response_group_version.as_ref().map_or(&s.version, |(_, v)| v),
                                        "kind": s.kind,
                                    },
                                    "verbs": s.verbs,
                                })
                            })
                            .collect();
                        let mut r = json!({
                            "resource": d.resource,
                            "responseKind": {"group": d.group, "version": d.version, "kind": d.kind},
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

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}
