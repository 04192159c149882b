//! Discovery documents (`/api`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`,
//! `/api/v1`) and `/version`, built once from the registry's descriptors.

use std::collections::HashMap;

use bytes::Bytes;
use capstan_meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, GroupVersionForDiscovery,
    ServerAddressByClientCIDR,
};
use capstan_registry::Registry;

use crate::KUBERNETES_VERSION;

/// Serialized discovery documents, keyed by path.
pub struct Discovery {
    documents: HashMap<String, Bytes>,
}

fn to_bytes<T: serde::Serialize>(value: &T) -> Bytes {
    serde_json::to_vec(value).unwrap_or_default().into()
}

impl Discovery {
    /// Builds every document. `server_address` is the `host:port` clients are told to use.
    pub fn build(registry: &Registry, server_address: &str) -> Self {
        let mut documents = HashMap::new();
        let addresses = vec![ServerAddressByClientCIDR {
            client_cidr: "0.0.0.0/0".into(),
            server_address: server_address.into(),
        }];
        // The core group is listed only when it serves something: an empty group version
        // makes client discovery fail.
        let core_versions: Vec<String> = registry
            .groups()
            .into_iter()
            .find(|(g, _)| g.is_empty())
            .map(|(_, v)| v)
            .unwrap_or_default();
        documents.insert(
            "/api".to_string(),
            to_bytes(&APIVersions {
                server_address_by_client_cidrs: addresses.clone(),
                versions: core_versions,
            }),
        );
        let mut groups = Vec::new();
        let mut group_versions: Vec<(String, String)> = Vec::new();
        for (group, versions) in registry.groups() {
            for v in &versions {
                if !group_versions.contains(&(group.clone(), v.clone())) {
                    group_versions.push((group.clone(), v.clone()));
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
            groups.push(api_group);
        }
        documents.insert("/apis".to_string(), to_bytes(&APIGroupList { groups }));
        for (group, version) in group_versions {
            let resources: Vec<APIResource> = registry
                .descriptors()
                .filter(|d| d.group == group && d.version == version)
                .map(|d| APIResource {
                    categories: (!d.categories.is_empty()).then(|| d.categories.clone()),
                    group: None,
                    kind: d.kind.clone(),
                    name: d.resource.clone(),
                    namespaced: d.namespaced,
                    short_names: (!d.short_names.is_empty()).then(|| d.short_names.clone()),
                    singular_name: d.singular.clone(),
                    storage_version_hash: None,
                    verbs: d.verbs.clone(),
                    version: None,
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
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}
