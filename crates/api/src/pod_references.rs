//! The secrets and config maps a pod names, wherever it names them: image pull secrets,
//! containers' `env` and `envFrom` (init and ephemeral containers too), `secret`, `configMap`
//! and projected volumes, and the secret references of the other volume sources (CSI's
//! `nodePublishSecretRef`, the in-tree sources' `secretRef`, azureFile's `secretName`).
//!
//! One visitor for everything that decides on these references (the Node authorizer's graph,
//! NodeRestriction, the ServiceAccount plugin), so none of them misses one another sees.

use serde_json::Value;

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// The lists of containers in a pod spec: init containers, containers, ephemeral containers.
pub const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// The fields of a pod spec, besides [`CONTAINER_LISTS`], that these functions read: a reader
/// that keeps only what they need (the Node graph) keeps these.
pub const SPEC_FIELDS: [&str; 2] = ["imagePullSecrets", "volumes"];

/// The fields of a container that these functions read.
pub const CONTAINER_FIELDS: [&str; 2] = ["env", "envFrom"];

/// Every container of a pod spec: init containers, containers, then ephemeral containers.
pub fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    CONTAINER_LISTS
        .into_iter()
        .flat_map(|list| items(&spec[list]))
}

fn named<'a>(out: &mut Vec<&'a str>, name: Option<&'a str>) {
    if let Some(name) = name.filter(|n| !n.is_empty())
        && !out.contains(&name)
    {
        out.push(name);
    }
}

/// The names of the secrets the pod spec `spec` uses, each once, in the order found.
pub fn secret_names(spec: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    for pull in items(&spec["imagePullSecrets"]) {
        named(&mut out, pull["name"].as_str());
    }
    for c in containers(spec) {
        for env in items(&c["env"]) {
            named(&mut out, env["valueFrom"]["secretKeyRef"]["name"].as_str());
        }
        for from in items(&c["envFrom"]) {
            named(&mut out, from["secretRef"]["name"].as_str());
        }
    }
    for volume in items(&spec["volumes"]) {
        for source in items(&volume["projected"]["sources"]) {
            named(&mut out, source["secret"]["name"].as_str());
        }
        // `secret.secretName`, azureFile's `secretName`, and every source's `*secretRef`
        // (`secretRef`, CSI's `nodePublishSecretRef`, ...).
        let Some(sources) = volume.as_object() else {
            continue;
        };
        for source in sources.values().filter_map(Value::as_object) {
            for (key, value) in source {
                if key == "secretName" {
                    named(&mut out, value.as_str());
                } else if key.ends_with("ecretRef") {
                    named(&mut out, value["name"].as_str());
                }
            }
        }
    }
    out
}

/// The names of the config maps the pod spec `spec` uses, each once, in the order found.
pub fn config_map_names(spec: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    for c in containers(spec) {
        for env in items(&c["env"]) {
            named(
                &mut out,
                env["valueFrom"]["configMapKeyRef"]["name"].as_str(),
            );
        }
        for from in items(&c["envFrom"]) {
            named(&mut out, from["configMapRef"]["name"].as_str());
        }
    }
    for volume in items(&spec["volumes"]) {
        named(&mut out, volume["configMap"]["name"].as_str());
        for source in items(&volume["projected"]["sources"]) {
            named(&mut out, source["configMap"]["name"].as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_source_of_a_secret_is_seen() {
        let spec = json!({
            "imagePullSecrets": [{"name": "pull"}],
            "initContainers": [{"name": "i", "envFrom": [{"secretRef": {"name": "init"}}]}],
            "containers": [{"name": "c", "env": [
                {"name": "A", "valueFrom": {"secretKeyRef": {"name": "env", "key": "k"}}},
                {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cm-env", "key": "k"}}}]}],
            "ephemeralContainers": [{"name": "e", "envFrom": [{"secretRef": {"name": "eph"}}]}],
            "volumes": [
                {"name": "s", "secret": {"secretName": "vol"}},
                {"name": "p", "projected": {"sources": [{"secret": {"name": "proj"}},
                    {"configMap": {"name": "cm-proj"}}]}},
                {"name": "csi", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi"}}},
                {"name": "ceph", "cephfs": {"monitors": ["m"], "secretRef": {"name": "ceph"}}},
                {"name": "az", "azureFile": {"secretName": "azure", "shareName": "s"}},
                {"name": "cm", "configMap": {"name": "cm-vol"}},
                {"name": "again", "secret": {"secretName": "vol"}}]});
        assert_eq!(
            secret_names(&spec),
            [
                "pull", "init", "env", "eph", "vol", "proj", "csi", "ceph", "azure"
            ]
        );
        assert_eq!(config_map_names(&spec), ["cm-env", "cm-proj", "cm-vol"]);
        assert!(secret_names(&json!({"containers": [{"name": "c"}]})).is_empty());
    }
}
