//! `NodeRestriction`: the write half of the Node authorizer. A node (user `system:node:<n>`
//! in `system:nodes`) changes only its own Node, Lease and CSINode, the status of pods bound
//! to it, and mirror pods bound to it; it asks tokens only for its pods, creates and deletes
//! only ResourceSlices of its own devices (`spec.nodeName`), asks kubelet certificates only
//! in its own name, and cannot set the labels kept for administrators. Its pods' tokens are
//! for one audience at most, one those pods use (a projected token volume, a CSI driver
//! asking tokens for it, inline or behind a claim) unless the node may
//! `request-serviceaccounts-token-audience` (upstream's `ServiceAccountNodeAudienceRestriction`,
//! on by default since v1.33).

use std::sync::Arc;

use async_trait::async_trait;
use capstan_auth::authz::node::node_name;
use capstan_auth::authz::{Attributes as AuthzAttributes, Authorizer, Decision};
use capstan_meta::{ApiError, GroupResource};
use serde_json::Value;

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

const MIRROR: &str = "kubernetes.io/config.mirror";
/// Labels only administrators set (a node cannot claim them for itself).
const RESTRICTED_DOMAIN: &str = "node-restriction.kubernetes.io";
/// The signers of kubelets' client and serving certificates.
const KUBELET_SIGNERS: [&str; 2] = [
    "kubernetes.io/kube-apiserver-client-kubelet",
    "kubernetes.io/kubelet-serving",
];

/// The `NodeRestriction` plugin.
pub struct NodeRestriction {
    lister: Arc<dyn Lister>,
    authorizer: Option<Arc<dyn Authorizer>>,
}

impl NodeRestriction {
    /// Reads pods, claims, volumes and CSI drivers through `lister`; asks `authorizer` for
    /// token audiences the node's pods do not use (without one, those are refused).
    pub fn new(lister: Arc<dyn Lister>, authorizer: Option<Arc<dyn Authorizer>>) -> Self {
        Self { lister, authorizer }
    }
}

fn bound_to(pod: Option<&Value>) -> &str {
    pod.and_then(|p| p["spec"]["nodeName"].as_str())
        .unwrap_or_default()
}

/// Whether a label is in the `node-restriction.kubernetes.io` domain or one of its subdomains,
/// which only administrators may set on nodes.
fn restricted_label(key: &str) -> bool {
    key.split_once('/').is_some_and(|(domain, _)| {
        domain == RESTRICTED_DOMAIN || domain.ends_with(&format!(".{RESTRICTED_DOMAIN}"))
    })
}

/// Whether the pod uses an object of `kind` a mirror pod may not use (every way a pod names a
/// secret or config map counts, as the Node authorizer's graph counts them).
fn references(pod: &Value, kind: &str) -> bool {
    let spec = &pod["spec"];
    match kind {
        "secrets" => !capstan_api::pod_references::secret_names(spec).is_empty(),
        "configmaps" => !capstan_api::pod_references::config_map_names(spec).is_empty(),
        "persistentvolumeclaims" => spec["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|v| v["persistentVolumeClaim"].is_object() || v["ephemeral"].is_object()),
        _ => false,
    }
}

/// The object a request is about: its name, or (for a create) the body's.
fn target_name(a: &Attributes) -> &str {
    if a.name.is_empty() {
        a.object
            .as_ref()
            .and_then(|o| o["metadata"]["name"].as_str())
            .unwrap_or_default()
    } else {
        &a.name
    }
}

fn labels(object: Option<&Value>) -> Vec<(String, String)> {
    object
        .and_then(|o| o["metadata"]["labels"].as_object())
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect()
}

impl NodeRestriction {
    fn create_pod(&self, node: &str, a: &Attributes) -> Result<(), ApiError> {
        let Some(pod) = &a.object else {
            return Ok(());
        };
        if pod["metadata"]["annotations"][MIRROR].is_null() {
            return Err(forbidden(
                a,
                &format!(
                    "pod does not have \"{MIRROR}\" annotation, node \"{node}\" can only create mirror pods"
                ),
            ));
        }
        if bound_to(Some(pod)) != node {
            return Err(forbidden(
                a,
                &format!("node \"{node}\" can only create pods with spec.nodeName set to itself"),
            ));
        }
        let owners = pod["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match owners.as_slice() {
            [] => {}
            [owner]
                if owner["kind"] == "Node"
                    && owner["apiVersion"] == "v1"
                    && owner["name"] == node
                    && owner["controller"] == true => {}
            [_] => {
                return Err(forbidden(
                    a,
                    &format!(
                        "node \"{node}\" can only create pods with a controller owner reference set to itself"
                    ),
                ));
            }
            _ => {
                return Err(forbidden(
                    a,
                    &format!(
                        "node \"{node}\" can only create pods with a single owner reference set to itself"
                    ),
                ));
            }
        }
        if pod["spec"]["serviceAccountName"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
        {
            return Err(forbidden(
                a,
                &format!("node \"{node}\" can not create pods that reference a service account"),
            ));
        }
        for kind in ["secrets", "configmaps", "persistentvolumeclaims"] {
            if references(pod, kind) {
                return Err(forbidden(
                    a,
                    &format!("node \"{node}\" can not create pods that reference {kind}"),
                ));
            }
        }
        Ok(())
    }

    async fn pods(&self, node: &str, a: &Attributes) -> Result<(), ApiError> {
        match (a.operation, a.subresource.as_str()) {
            (Operation::Create, "") => self.create_pod(node, a),
            (Operation::Delete, "") if bound_to(a.old_object.as_ref()) != node => Err(forbidden(
                a,
                &format!("node \"{node}\" can only delete pods with spec.nodeName set to itself"),
            )),
            (Operation::Update, "status") if bound_to(a.old_object.as_ref()) != node => {
                Err(forbidden(
                    a,
                    &format!(
                        "node \"{node}\" can only update pod status for pods with spec.nodeName set to itself"
                    ),
                ))
            }
            (Operation::Create, "eviction") => {
                let pod = self
                    .lister
                    .get(&core("pods"), &a.namespace, &a.name)
                    .await?;
                if pod.is_some() && bound_to(pod.as_ref()) != node {
                    return Err(forbidden(
                        a,
                        &format!(
                            "node {node} can only evict pods with spec.nodeName set to itself"
                        ),
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn nodes(&self, node: &str, a: &Attributes) -> Result<(), ApiError> {
        let name = target_name(a);
        if name != node {
            return Err(forbidden(
                a,
                &format!("node \"{node}\" is not allowed to modify node \"{name}\""),
            ));
        }
        if a.subresource.is_empty()
            && a.operation == Operation::Update
            && let (Some(new), Some(old)) = (&a.object, &a.old_object)
            && new["spec"]["taints"] != old["spec"]["taints"]
        {
            return Err(forbidden(
                a,
                &format!("node \"{node}\" is not allowed to modify taints"),
            ));
        }
        let before = labels(a.old_object.as_ref());
        let after = labels(a.object.as_ref());
        let mut changed: Vec<&str> = after
            .iter()
            .filter(|l| !before.contains(l))
            .chain(
                before
                    .iter()
                    .filter(|l| !after.iter().any(|(k, _)| *k == l.0)),
            )
            .map(|(k, _)| k.as_str())
            .filter(|k| restricted_label(k))
            .collect();
        changed.sort();
        changed.dedup();
        if !changed.is_empty() {
            let verb = if a.operation == Operation::Create {
                "set the following labels"
            } else {
                "modify labels"
            };
            return Err(forbidden(
                a,
                &format!(
                    "node \"{node}\" is not allowed to {verb}: {}",
                    changed.join(", ")
                ),
            ));
        }
        Ok(())
    }

    async fn token(&self, node: &str, a: &Attributes) -> Result<(), ApiError> {
        let bound = a.object.as_ref().map(|o| &o["spec"]["boundObjectRef"]);
        let Some(bound) = bound.filter(|b| b["kind"] == "Pod") else {
            return Err(forbidden(a, "node requested token not bound to a pod"));
        };
        let name = bound["name"].as_str().unwrap_or_default();
        let uid = bound["uid"].as_str().unwrap_or_default();
        if uid.is_empty() {
            return Err(forbidden(
                a,
                "node requested token with a pod binding without a uid",
            ));
        }
        let pod = self.lister.get(&core("pods"), &a.namespace, name).await?;
        if let Some(pod) = &pod
            && pod["metadata"]["uid"].as_str() != Some(uid)
        {
            return Err(forbidden(
                a,
                "the UID in the bound object reference does not match the UID in record. The object might have been deleted and then recreated",
            ));
        }
        if bound_to(pod.as_ref()) != node {
            return Err(forbidden(
                a,
                "node requested token bound to a pod scheduled on a different node",
            ));
        }
        let audiences = a.object.as_ref().map(|o| &o["spec"]["audiences"]);
        let audiences: Vec<&str> = audiences
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if audiences.len() > 1 {
            return Err(forbidden(a, "node may only request 0 or 1 audiences"));
        }
        let audience = audiences.first().copied().unwrap_or_default();
        if let Some(pod) = &pod
            && self.pod_uses_audience(pod, &a.namespace, audience).await?
        {
            return Ok(());
        }
        if self.may_request_audience(a, audience).await {
            return Ok(());
        }
        Err(forbidden(
            a,
            &format!(
                "audience {} not found in pod spec volume, {} is not authorized to request tokens for this audience",
                serde_json::Value::from(audience),
                a.user.name
            ),
        ))
    }

    /// Whether `pod` asks tokens for `audience`: a projected token volume for it, or a CSI
    /// driver whose CSIDriver requests tokens for it, inline or behind a claim (an ephemeral
    /// volume's claim is `<pod>-<volume>`).
    async fn pod_uses_audience(
        &self,
        pod: &Value,
        namespace: &str,
        audience: &str,
    ) -> Result<bool, ApiError> {
        let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
        for volume in pod["spec"]["volumes"].as_array().into_iter().flatten() {
            let projected = volume["projected"]["sources"]
                .as_array()
                .into_iter()
                .flatten();
            let token_audiences = projected
                .filter(|s| s["serviceAccountToken"].is_object())
                .map(|s| {
                    s["serviceAccountToken"]["audience"]
                        .as_str()
                        .unwrap_or_default()
                });
            if token_audiences.into_iter().any(|a| a == audience) {
                return Ok(true);
            }
            let volume_name = volume["name"].as_str().unwrap_or_default();
            let driver = if let Some(driver) = volume["csi"]["driver"].as_str() {
                Some(driver.to_string())
            } else if let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() {
                self.claimed_driver(namespace, claim).await?
            } else if volume["ephemeral"].is_object() {
                let claim = format!("{pod_name}-{volume_name}");
                self.claimed_driver(namespace, &claim).await?
            } else {
                None
            };
            if let Some(driver) = driver
                && self.driver_requests_audience(&driver, audience).await?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The CSI driver of the volume bound to claim `namespace/claim`, if any.
    async fn claimed_driver(
        &self,
        namespace: &str,
        claim: &str,
    ) -> Result<Option<String>, ApiError> {
        let Some(claim) = self
            .lister
            .get(&core("persistentvolumeclaims"), namespace, claim)
            .await?
        else {
            return Ok(None);
        };
        let Some(volume) = claim["spec"]["volumeName"]
            .as_str()
            .filter(|v| !v.is_empty())
        else {
            return Ok(None);
        };
        let volume = self
            .lister
            .get(&core("persistentvolumes"), "", volume)
            .await?;
        Ok(volume.and_then(|v| v["spec"]["csi"]["driver"].as_str().map(str::to_string)))
    }

    /// Whether CSIDriver `driver` requests tokens for `audience`.
    async fn driver_requests_audience(
        &self,
        driver: &str,
        audience: &str,
    ) -> Result<bool, ApiError> {
        let drivers = GroupResource::new("storage.k8s.io", "csidrivers");
        let Some(driver) = self.lister.get(&drivers, "", driver).await? else {
            return Ok(false);
        };
        let requests = driver["spec"]["tokenRequests"]
            .as_array()
            .into_iter()
            .flatten();
        Ok(requests
            .into_iter()
            .any(|r| r["audience"].as_str().unwrap_or_default() == audience))
    }

    /// Whether the node may `request-serviceaccounts-token-audience` (the audience as the
    /// resource, the service account as the name).
    async fn may_request_audience(&self, a: &Attributes, audience: &str) -> bool {
        let Some(authorizer) = &self.authorizer else {
            return false;
        };
        let asked = AuthzAttributes {
            user: a.user.clone(),
            verb: "request-serviceaccounts-token-audience".into(),
            resource_request: true,
            api_group: String::new(),
            api_version: "v1".into(),
            resource: audience.into(),
            namespace: a.namespace.clone(),
            name: a.name.clone(),
            ..Default::default()
        };
        authorizer.authorize(&asked).await == Decision::Allow
    }

    /// A node publishes (and withdraws) ResourceSlices of its own devices only; updates are
    /// the Node authorizer's to check (it knows the stored slice's node).
    fn resource_slice(node: &str, a: &Attributes) -> Result<(), ApiError> {
        let (object, verb) = match a.operation {
            Operation::Create => (a.object.as_ref(), "create"),
            Operation::Delete => (a.old_object.as_ref(), "delete"),
            _ => return Ok(()),
        };
        let slice_node = object
            .and_then(|o| o["spec"]["nodeName"].as_str())
            .unwrap_or("");
        if slice_node != node {
            return Err(forbidden(
                a,
                &format!(
                    "can only {verb} ResourceSlice with the same NodeName as the requesting node"
                ),
            ));
        }
        Ok(())
    }

    /// A node asks the kubelet signers for a certificate of its own identity only (a
    /// certificate for another node's name would let it act as that node).
    fn certificate_request(node: &str, a: &Attributes) -> Result<(), ApiError> {
        let spec = a.object.as_ref().map(|o| &o["spec"]);
        let signer = spec.and_then(|s| s["signerName"].as_str()).unwrap_or("");
        if a.operation != Operation::Create || !KUBELET_SIGNERS.contains(&signer) {
            return Ok(());
        }
        let encoded = spec.and_then(|s| s["request"].as_str()).unwrap_or("");
        let common_name =
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, encoded)
                .map_err(|e| e.to_string())
                .and_then(|pem| capstan_api::certificates::request_common_name(&pem))
                .map_err(|e| forbidden(a, &format!("unable to parse csr: {e}")))?;
        let own = format!("system:node:{node}");
        if common_name != own {
            return Err(forbidden(
                a,
                &format!("can only create a node CSR with CN={own}"),
            ));
        }
        Ok(())
    }

    fn own_object(&self, node: &str, a: &Attributes, what: &str) -> Result<(), ApiError> {
        let name = target_name(a);
        if name != node {
            return Err(forbidden(
                a,
                &format!("node \"{node}\" is not allowed to modify {what} \"{name}\""),
            ));
        }
        Ok(())
    }
}

#[async_trait]
impl Plugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        if operation == Operation::Connect {
            return false;
        }
        match (resource.group.as_str(), resource.resource.as_str()) {
            ("", "pods" | "nodes") => true,
            ("", "serviceaccounts") => subresource == "token",
            ("coordination.k8s.io", "leases") | ("storage.k8s.io", "csinodes") => true,
            ("resource.k8s.io", "resourceslices") => subresource.is_empty(),
            ("certificates.k8s.io", "certificatesigningrequests") => {
                operation == Operation::Create && subresource.is_empty()
            }
            _ => false,
        }
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        let Some(node) = node_name(&a.user) else {
            return Ok(());
        };
        if node.is_empty() {
            return Err(forbidden(
                a,
                "could not determine node from user \"system:node:\"",
            ));
        }
        match (a.resource.group.as_str(), a.resource.resource.as_str()) {
            ("", "pods") => self.pods(node, a).await,
            ("", "nodes") => self.nodes(node, a),
            ("", "serviceaccounts") => self.token(node, a).await,
            ("coordination.k8s.io", "leases") if a.namespace == "kube-node-lease" => {
                self.own_object(node, a, "lease")
            }
            ("storage.k8s.io", "csinodes") => self.own_object(node, a, "CSINode"),
            ("resource.k8s.io", "resourceslices") => Self::resource_slice(node, a),
            ("certificates.k8s.io", "certificatesigningrequests") => {
                Self::certificate_request(node, a)
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_restricted_domain_and_its_subdomains_are_for_administrators() {
        assert!(restricted_label("node-restriction.kubernetes.io/pool"));
        assert!(restricted_label("team.node-restriction.kubernetes.io/pool"));
        assert!(!restricted_label("evilnode-restriction.kubernetes.io/pool"));
        assert!(!restricted_label(
            "example.com/node-restriction.kubernetes.io"
        ));
        assert!(!restricted_label("pool"));
    }

    #[test]
    fn a_kubelet_certificate_request_must_be_readable() {
        let mut a = Attributes::new(
            Operation::Create,
            GroupResource::new("certificates.k8s.io", "certificatesigningrequests"),
            capstan_auth::UserInfo::default(),
        );
        a.name = "garbled".into();
        a.object = Some(serde_json::json!({"spec": {
            "signerName": "kubernetes.io/kubelet-serving", "request": "bm90IGEgcmVxdWVzdA=="}}));
        let err = NodeRestriction::certificate_request("n1", &a).unwrap_err();
        assert_eq!(err.code(), 403);
        assert!(err.to_string().contains("unable to parse csr: "), "{err}");
        a.object.as_mut().unwrap()["spec"]["signerName"] = "example.com/signer".into();
        assert!(NodeRestriction::certificate_request("n1", &a).is_ok());
    }
}
