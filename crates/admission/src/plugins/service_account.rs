//! `ServiceAccount`: a new pod runs as a service account that exists (`default` unless it
//! names one), mounts that account's API credentials as the projected `kube-api-access-*`
//! volume (a bound token, the cluster CA, the namespace) unless automounting is off, and
//! inherits the account's image pull secrets when it has none. Mirror pods may reference no
//! account and no secret. An account annotated `kubernetes.io/enforce-mountable-secrets:
//! "true"` limits the pod to the secrets it lists.
//!
//! Upstream checks mirror pods and mountable secrets again in the validating phase; no
//! plugin built here adds secrets or accounts after this one, so the mutating phase decides
//! alone and pod creates pay for no second serialization.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::core::v1::{
    ConfigMapProjection, DownwardAPIProjection, DownwardAPIVolumeFile, KeyToPath,
    ObjectFieldSelector, Pod, PodSpec, ProjectedVolumeSource, ServiceAccountTokenProjection,
    Volume, VolumeMount, VolumeProjection,
};
use serde_json::Value;

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin, PodMutator};

/// Where containers find the account's credentials.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The prefix of the generated volume's name.
const VOLUME_PREFIX: &str = "kube-api-access-";
/// The lifetime asked for the projected token (upstream's: an hour and 7 s).
const TOKEN_SECONDS: i64 = 3607;
/// The annotation that limits pods to the account's secrets.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";
/// How often, and how far apart, a missing `default` account is looked up again (the
/// controller creates it with the namespace).
const DEFAULT_ATTEMPTS: u32 = 10;
const RETRY_INTERVAL: Duration = Duration::from_millis(150);

/// The `ServiceAccount` plugin.
pub struct ServiceAccount {
    lister: Arc<dyn Lister>,
}

impl ServiceAccount {
    /// Reads service accounts through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self { lister }
    }

    /// The account, looked up again for a while when it is the `default` one; a missing
    /// namespace is upstream's 404 (NamespaceLifecycle says so first upstream, where it
    /// takes part in the mutating phase; here it validates, so as to cost nothing there).
    async fn account(&self, namespace: &str, name: &str) -> Result<Option<Arc<Value>>, ApiError> {
        let attempts = if name == "default" {
            DEFAULT_ATTEMPTS
        } else {
            1
        };
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(RETRY_INTERVAL).await;
            }
            if let Some(account) = self
                .lister
                .get_shared(&core("serviceaccounts"), namespace, name)
                .await?
            {
                return Ok(Some(account));
            }
            if attempt == 0 {
                let namespaces = core("namespaces");
                if self
                    .lister
                    .get_shared(&namespaces, "", namespace)
                    .await?
                    .is_none()
                {
                    return Err(ApiError::not_found(&namespaces, namespace));
                }
            }
        }
        Ok(None)
    }
}

fn is_pod_create(operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
    operation == Operation::Create
        && resource.group.is_empty()
        && resource.resource == "pods"
        && subresource.is_empty()
}

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// Every container of the pod (init, regular, ephemeral) with its kind for messages.
fn containers(spec: &Value) -> impl Iterator<Item = (&'static str, &Value)> {
    items(&spec["initContainers"])
        .map(|c| ("init container", c))
        .chain(items(&spec["containers"]).map(|c| ("container", c)))
        .chain(items(&spec["ephemeralContainers"]).map(|c| ("ephemeral container", c)))
}

/// The secrets a volume mounts (directly or projected).
fn volume_secrets(volume: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = volume["secret"]["secretName"]
        .as_str()
        .into_iter()
        .collect();
    names.extend(
        items(&volume["projected"]["sources"]).filter_map(|s| s["secret"]["name"].as_str()),
    );
    names
}

/// Why a mirror pod is refused, if it is.
fn mirror_refusal(spec: &Value) -> Option<&'static str> {
    let named = |f: &str| spec[f].as_str().is_some_and(|s| !s.is_empty());
    if named("serviceAccountName") || named("serviceAccount") {
        return Some("a mirror pod may not reference service accounts");
    }
    (!capstan_api::pod_references::secret_names(spec).is_empty())
        .then_some("a mirror pod may not reference secrets")
}

/// The first secret the pod uses that the account does not list, as upstream words it.
fn unlisted_secret(spec: &Value, account: &Value, account_name: &str) -> Option<String> {
    let listed: Vec<&str> = items(&account["secrets"])
        .filter_map(|s| s["name"].as_str())
        .collect();
    let not_listed = |name: &str| !listed.contains(&name);
    let tail = format!(
        "is not allowed because service account {account_name} does not reference that secret"
    );
    for volume in items(&spec["volumes"]) {
        if let Some(name) = volume_secrets(volume).into_iter().find(|n| not_listed(n)) {
            return Some(format!("volume with secret.secretName=\"{name}\" {tail}"));
        }
    }
    for (kind, c) in containers(spec) {
        let container = c["name"].as_str().unwrap_or_default();
        for env in items(&c["env"]) {
            if let Some(name) = env["valueFrom"]["secretKeyRef"]["name"].as_str()
                && not_listed(name)
            {
                let var = env["name"].as_str().unwrap_or_default();
                return Some(format!(
                    "{kind} {container} with envVar {var} referencing secret.secretName=\"{name}\" {tail}"
                ));
            }
        }
        for from in items(&c["envFrom"]) {
            if let Some(name) = from["secretRef"]["name"].as_str()
                && not_listed(name)
            {
                return Some(format!(
                    "{kind} {container} with envFrom referencing secret.secretName=\"{name}\" {tail}"
                ));
            }
        }
    }
    let pull: Vec<&str> = items(&account["imagePullSecrets"])
        .filter_map(|s| s["name"].as_str())
        .collect();
    for (i, s) in items(&spec["imagePullSecrets"]).enumerate() {
        let name = s["name"].as_str().unwrap_or_default();
        if !pull.contains(&name) {
            return Some(format!(
                "imagePullSecrets[{i}].name=\"{name}\" is not allowed because service account {account_name} does not reference that imagePullSecret"
            ));
        }
    }
    None
}

/// Adds the projected credentials volume and its mount in every container (not ephemeral
/// ones) that has nothing mounted at [`TOKEN_MOUNT_PATH`].
fn mount_token(spec: &mut PodSpec) {
    let existing = spec
        .volumes
        .iter()
        .flatten()
        .map(|v| &v.name)
        .find(|n| n.starts_with(VOLUME_PREFIX))
        .cloned();
    let volume_name = existing
        .clone()
        .unwrap_or_else(|| capstan_meta::names::generate(VOLUME_PREFIX));
    let mut mounted = false;
    let lists = [spec.init_containers.as_mut(), Some(&mut spec.containers)];
    for c in lists.into_iter().flatten().flatten() {
        let mounts = c.volume_mounts.get_or_insert_with(Vec::new);
        if mounts.iter().any(|m| m.mount_path == TOKEN_MOUNT_PATH) {
            continue;
        }
        mounts.push(VolumeMount {
            name: volume_name.clone(),
            read_only: Some(true),
            mount_path: TOKEN_MOUNT_PATH.into(),
            ..Default::default()
        });
        mounted = true;
    }
    if !mounted || existing.is_some() {
        return;
    }
    let sources = vec![
        VolumeProjection {
            service_account_token: Some(ServiceAccountTokenProjection {
                expiration_seconds: Some(TOKEN_SECONDS),
                path: "token".into(),
                audience: None,
            }),
            ..Default::default()
        },
        VolumeProjection {
            config_map: Some(ConfigMapProjection {
                name: "kube-root-ca.crt".into(),
                items: Some(vec![KeyToPath {
                    key: "ca.crt".into(),
                    path: "ca.crt".into(),
                    mode: None,
                }]),
                optional: None,
            }),
            ..Default::default()
        },
        VolumeProjection {
            downward_api: Some(DownwardAPIProjection {
                items: Some(vec![DownwardAPIVolumeFile {
                    path: "namespace".into(),
                    field_ref: Some(ObjectFieldSelector {
                        api_version: Some("v1".into()),
                        field_path: "metadata.namespace".into(),
                    }),
                    ..Default::default()
                }]),
            }),
            ..Default::default()
        },
    ];
    spec.volumes.get_or_insert_with(Vec::new).push(Volume {
        name: volume_name,
        projected: Some(ProjectedVolumeSource {
            default_mode: Some(0o644),
            sources: Some(sources),
        }),
        ..Default::default()
    });
}

#[async_trait]
impl Plugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        is_pod_create(operation, resource, subresource)
    }

    fn pod_mutator(&self) -> Option<&dyn PodMutator> {
        Some(self)
    }
}

#[async_trait]
impl PodMutator for ServiceAccount {
    /// Checks `pod`'s account and secrets, and mounts the account's credentials.
    async fn mutate(&self, a: &Attributes, pod: &mut Pod) -> Result<(), ApiError> {
        // The checks of mirror pods and of enforced accounts read the spec as JSON: they
        // are seldom needed, so the common create pays for no tree of it.
        let spec_tree = |pod: &Pod| serde_json::to_value(&pod.spec).map_err(ApiError::internal);
        let mirror = pod
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|m| m.contains_key("kubernetes.io/config.mirror"));
        if mirror {
            return match mirror_refusal(&spec_tree(pod)?) {
                Some(why) => Err(forbidden(a, why)),
                None => Ok(()),
            };
        }
        let spec = pod.spec.get_or_insert_with(Default::default);
        let name = [&spec.service_account_name, &spec.service_account]
            .into_iter()
            .flatten()
            .find(|s| !s.is_empty())
            .map_or("default", String::as_str)
            .to_string();
        let Some(account) = self.account(&a.namespace, &name).await? else {
            return Err(forbidden(
                a,
                &format!(
                    "error looking up service account {}/{name}: serviceaccount \"{name}\" not found",
                    a.namespace
                ),
            ));
        };
        if account["metadata"]["annotations"][ENFORCE_MOUNTABLE_SECRETS] == "true"
            && let Some(why) = unlisted_secret(&spec_tree(pod)?, &account, &name)
        {
            return Err(forbidden(a, &why));
        }
        let spec = pod.spec.get_or_insert_with(Default::default);
        let automount = spec
            .automount_service_account_token
            .or_else(|| account["automountServiceAccountToken"].as_bool())
            .unwrap_or(true);
        spec.service_account_name = Some(name);
        if automount {
            mount_token(spec);
        }
        if spec.image_pull_secrets.as_ref().is_none_or(Vec::is_empty)
            && items(&account["imagePullSecrets"]).next().is_some()
        {
            spec.image_pull_secrets = serde_json::from_value(account["imagePullSecrets"].clone())
                .map_err(|e| {
                ApiError::internal(format!("the account's imagePullSecrets: {e}"))
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec_of(tree: Value) -> PodSpec {
        serde_json::from_value(tree).unwrap()
    }

    #[test]
    fn the_token_volume_is_added_once_and_mounted_where_nothing_is() {
        let mut spec = spec_of(json!({
            "initContainers": [{"name": "i"}],
            "containers": [
                {"name": "a"},
                {"name": "b", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]},
            ],
        }));
        mount_token(&mut spec);
        let tree = serde_json::to_value(&spec).unwrap();
        let volumes = tree["volumes"].as_array().unwrap();
        assert_eq!(volumes.len(), 1);
        let name = volumes[0]["name"].as_str().unwrap().to_string();
        assert!(
            name.starts_with(VOLUME_PREFIX) && name.len() == VOLUME_PREFIX.len() + 5,
            "{name}"
        );
        assert_eq!(
            volumes[0]["projected"],
            json!({"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ]})
        );
        for c in ["initContainers", "containers"] {
            assert_eq!(
                tree[c][0]["volumeMounts"],
                json!([{"name": name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH}])
            );
        }
        assert_eq!(
            tree["containers"][1]["volumeMounts"],
            json!([{"name": "own", "mountPath": TOKEN_MOUNT_PATH}])
        );
        // A second pass (reinvocation) changes nothing.
        let before = spec.clone();
        mount_token(&mut spec);
        assert_eq!(spec, before);
    }

    #[test]
    fn lists_the_pod_lacks_are_not_added() {
        let mut spec = spec_of(json!({"containers": [{"name": "a"}]}));
        mount_token(&mut spec);
        let tree = serde_json::to_value(&spec).unwrap();
        let keys: Vec<&str> = tree
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["containers", "volumes"]);
    }

    #[test]
    fn mirror_pods_reference_no_account_and_no_secret() {
        assert_eq!(
            mirror_refusal(&json!({"serviceAccountName": "x"})),
            Some("a mirror pod may not reference service accounts")
        );
        let env = json!({"containers": [{"name": "c", "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]});
        assert_eq!(
            mirror_refusal(&env),
            Some("a mirror pod may not reference secrets")
        );
        let projected = json!({"volumes": [{"name": "v", "projected": {"sources": [{"secret": {"name": "s"}}]}}]});
        assert_eq!(
            mirror_refusal(&projected),
            Some("a mirror pod may not reference secrets")
        );
        assert_eq!(
            mirror_refusal(&json!({"containers": [{"name": "c"}]})),
            None
        );
    }

    #[test]
    fn enforced_accounts_limit_secrets() {
        let account = json!({"secrets": [{"name": "ok"}], "imagePullSecrets": [{"name": "pull"}]});
        let spec = json!({"volumes": [{"name": "v", "secret": {"secretName": "other"}}]});
        assert_eq!(
            unlisted_secret(&spec, &account, "sa").as_deref(),
            Some(
                "volume with secret.secretName=\"other\" is not allowed because service account sa does not reference that secret"
            )
        );
        let spec = json!({"containers": [{"name": "c", "envFrom": [{"secretRef": {"name": "x"}}]}], "imagePullSecrets": [{"name": "pull"}]});
        assert!(
            unlisted_secret(&spec, &account, "sa")
                .unwrap()
                .starts_with("container c with envFrom")
        );
        let spec = json!({"volumes": [{"name": "v", "secret": {"secretName": "ok"}}], "imagePullSecrets": [{"name": "nope"}]});
        assert!(
            unlisted_secret(&spec, &account, "sa")
                .unwrap()
                .starts_with("imagePullSecrets[0].name=\"nope\"")
        );
        let spec = json!({"volumes": [{"name": "v", "secret": {"secretName": "ok"}}]});
        assert_eq!(unlisted_secret(&spec, &account, "sa"), None);
    }
}
