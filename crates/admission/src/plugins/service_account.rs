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
use serde_json::{Value, json};

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

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
fn mount_token(spec: &mut Value) {
    let existing = items(&spec["volumes"])
        .filter_map(|v| v["name"].as_str())
        .find(|n| n.starts_with(VOLUME_PREFIX))
        .map(str::to_string);
    let volume_name = existing
        .clone()
        .unwrap_or_else(|| capstan_meta::names::generate(VOLUME_PREFIX));
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        // Looked up, not indexed: indexing would add the absent lists as nulls.
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in containers {
            let has_mount = items(&c["volumeMounts"]).any(|m| m["mountPath"] == TOKEN_MOUNT_PATH);
            if has_mount {
                continue;
            }
            let mount =
                json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
            match c["volumeMounts"].as_array_mut() {
                Some(mounts) => mounts.push(mount),
                None => c["volumeMounts"] = json!([mount]),
            }
            mounted = true;
        }
    }
    if !mounted || existing.is_some() {
        return;
    }
    let volume = json!({
        "name": volume_name,
        "projected": {
            "defaultMode": 0o644,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    });
    match spec["volumes"].as_array_mut() {
        Some(volumes) => volumes.push(volume),
        None => spec["volumes"] = json!([volume]),
    }
}

#[async_trait]
impl Plugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        is_pod_create(operation, resource, subresource)
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        let Some(pod) = a.object.as_ref() else {
            return Ok(());
        };
        let mirror = !pod["metadata"]["annotations"]["kubernetes.io/config.mirror"].is_null();
        let spec = &pod["spec"];
        if mirror {
            return match mirror_refusal(spec) {
                Some(why) => Err(forbidden(a, why)),
                None => Ok(()),
            };
        }
        let name = ["serviceAccountName", "serviceAccount"]
            .iter()
            .filter_map(|f| spec[*f].as_str())
            .find(|s| !s.is_empty())
            .unwrap_or("default")
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
            && let Some(why) = unlisted_secret(spec, &account, &name)
        {
            return Err(forbidden(a, &why));
        }
        let automount = spec["automountServiceAccountToken"]
            .as_bool()
            .or_else(|| account["automountServiceAccountToken"].as_bool())
            .unwrap_or(true);
        let Some(spec) = a.object.as_mut().map(|p| &mut p["spec"]) else {
            return Ok(());
        };
        spec["serviceAccountName"] = json!(name);
        if automount {
            mount_token(spec);
        }
        let pull_secrets = &account["imagePullSecrets"];
        if items(&spec["imagePullSecrets"]).next().is_none() && items(pull_secrets).next().is_some()
        {
            spec["imagePullSecrets"] = pull_secrets.clone();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_volume_is_added_once_and_mounted_where_nothing_is() {
        let mut spec = json!({
            "initContainers": [{"name": "i"}],
            "containers": [
                {"name": "a"},
                {"name": "b", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]},
            ],
        });
        mount_token(&mut spec);
        let volumes = spec["volumes"].as_array().unwrap();
        assert_eq!(volumes.len(), 1);
        let name = volumes[0]["name"].as_str().unwrap().to_string();
        assert!(
            name.starts_with(VOLUME_PREFIX) && name.len() == VOLUME_PREFIX.len() + 5,
            "{name}"
        );
        assert_eq!(volumes[0]["projected"]["defaultMode"], 420);
        assert_eq!(
            volumes[0]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
            3607
        );
        for c in ["initContainers", "containers"] {
            assert_eq!(spec[c][0]["volumeMounts"][0]["name"], name.as_str());
            assert_eq!(spec[c][0]["volumeMounts"][0]["readOnly"], true);
        }
        assert_eq!(
            spec["containers"][1]["volumeMounts"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        // A second pass (reinvocation) changes nothing.
        let before = spec.clone();
        mount_token(&mut spec);
        assert_eq!(spec, before);
    }

    #[test]
    fn lists_the_pod_lacks_are_not_added() {
        let mut spec = json!({"containers": [{"name": "a"}]});
        mount_token(&mut spec);
        let keys: Vec<&str> = spec
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
