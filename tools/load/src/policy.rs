//! `--admission-policy`: a ValidatingAdmissionPolicy with a binding that denies, registered
//! for StorageClass creates and updates, so that the operations measure what an in-process
//! CEL policy adds (the server needs `--enable-admission-plugins=ValidatingAdmissionPolicy`).

use std::time::{Duration, Instant};

use http::{Method, StatusCode};

use crate::{SC, Target};

const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

/// The registered policy and binding.
pub(crate) struct Policy {
    name: String,
}

/// Registers the policy and binding, and waits until the server enforces them.
pub(crate) async fn install(target: &Target, run: &str) -> Result<Policy, String> {
    let name = format!("capstan-load-{run}");
    let policy = serde_json::json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["storage.k8s.io"], "apiVersions": ["v1"], "resources": ["storageclasses"]}]},
            "variables": [{"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"}],
            "validations": [
                {"expression": "!('capstan-load-deny' in variables.labels)", "messageExpression": "'refused: ' + object.metadata.name"},
                {"expression": "object.provisioner.size() > 0 && object.parameters.all(k, k.size() < 64)"},
            ],
        },
    });
    let binding = serde_json::json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    });
    let mut conn = target.connect().await?;
    for (path, body) in [(POLICIES, policy), (BINDINGS, binding)] {
        let (status, answer) = conn
            .send(target.request(Method::POST, path, Some(body.to_string().into_bytes())))
            .await?;
        if status != StatusCode::CREATED {
            return Err(format!(
                "registering the admission policy: {status} {}",
                String::from_utf8_lossy(&answer)
            ));
        }
    }
    // The server follows policies asynchronously: probe with a dry run it must refuse.
    let probe = serde_json::to_vec(&serde_json::json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": format!("probe-{run}"), "labels": {"capstan-load-deny": "yes"}},
        "provisioner": "example.com/load",
    }))
    .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let req = target.request(
            Method::POST,
            &format!("{SC}?dryRun=All"),
            Some(probe.clone()),
        );
        let (status, _) = conn.send(req).await?;
        if status.is_client_error() {
            return Ok(Policy { name });
        }
        if Instant::now() > deadline {
            return Err("the server never enforced the admission policy (is the ValidatingAdmissionPolicy plugin enabled?)".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl Policy {
    /// Deletes the binding and the policy.
    pub(crate) async fn remove(self, target: &Target) {
        let Ok(mut conn) = target.connect().await else {
            eprintln!("capstan-load: removing the admission policy: no connection");
            return;
        };
        for collection in [BINDINGS, POLICIES] {
            let path = format!("{collection}/{}", self.name);
            if let Err(e) = conn.send(target.request(Method::DELETE, &path, None)).await {
                eprintln!("capstan-load: removing the admission policy: {e}");
            }
        }
    }
}
