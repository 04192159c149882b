//! The certificate plugins: `CertificateApproval` (approving or denying a request needs the
//! `approve` verb on its signer), `CertificateSigning` (issuing the certificate needs `sign`)
//! and `CertificateSubjectRestriction` (no `system:masters` certificates from the API
//! server client signer).

use std::sync::Arc;

use async_trait::async_trait;
use capstan_auth::authz::{Attributes as AuthzAttributes, Authorizer, Decision};
use capstan_meta::{ApiError, GroupResource};
use serde_json::Value;

use super::forbidden;
use crate::attributes::{Attributes, Operation};
use crate::chain::Plugin;

const GROUP: &str = "certificates.k8s.io";
/// The signer of API server client certificates.
const CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

fn is_csr(resource: &GroupResource) -> bool {
    resource.group == GROUP && resource.resource == "certificatesigningrequests"
}

fn signer(a: &Attributes) -> &str {
    a.object
        .as_ref()
        .and_then(|o| o["spec"]["signerName"].as_str())
        .unwrap_or_default()
}

/// Whether the user may `verb` the signer: by its name, or by `<domain>/*`.
async fn may(authorizer: &dyn Authorizer, a: &Attributes, verb: &str) -> bool {
    let name = signer(a);
    let mut names = vec![name.to_string()];
    if let Some((domain, _)) = name.split_once('/') {
        names.push(format!("{domain}/*"));
    }
    for name in names {
        let asked = AuthzAttributes {
            user: a.user.clone(),
            verb: verb.into(),
            resource_request: true,
            api_group: GROUP.into(),
            api_version: "*".into(),
            resource: "signers".into(),
            name,
            ..Default::default()
        };
        if authorizer.authorize(&asked).await == Decision::Allow {
            return true;
        }
    }
    false
}

/// `CertificateApproval`.
pub struct CertificateApproval(pub Arc<dyn Authorizer>);

#[async_trait]
impl Plugin for CertificateApproval {
    fn name(&self) -> &'static str {
        "CertificateApproval"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Update && is_csr(resource) && subresource == "approval"
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        if may(self.0.as_ref(), a, "approve").await {
            return Ok(());
        }
        Err(forbidden(
            a,
            &format!(
                "user not permitted to approve requests with signerName {:?}",
                signer(a)
            ),
        ))
    }
}

/// `CertificateSigning`.
pub struct CertificateSigning(pub Arc<dyn Authorizer>);

fn certificate(v: Option<&Value>) -> &str {
    v.and_then(|o| o["status"]["certificate"].as_str())
        .unwrap_or_default()
}

#[async_trait]
impl Plugin for CertificateSigning {
    fn name(&self) -> &'static str {
        "CertificateSigning"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Update && is_csr(resource) && subresource == "status"
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        // Only issuing (a changed certificate) needs the verb.
        if certificate(a.object.as_ref()) == certificate(a.old_object.as_ref()) {
            return Ok(());
        }
        if may(self.0.as_ref(), a, "sign").await {
            return Ok(());
        }
        Err(forbidden(
            a,
            &format!(
                "user not permitted to sign requests with signerName {:?}",
                signer(a)
            ),
        ))
    }
}

/// `CertificateSubjectRestriction`.
pub struct CertificateSubjectRestriction;

#[async_trait]
impl Plugin for CertificateSubjectRestriction {
    fn name(&self) -> &'static str {
        "CertificateSubjectRestriction"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create && is_csr(resource) && subresource.is_empty()
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        if signer(a) != CLIENT_SIGNER {
            return Ok(());
        }
        let request = a
            .object
            .as_ref()
            .and_then(|o| o["spec"]["request"].as_str())
            .unwrap_or_default();
        let Ok(pem) = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, request)
        else {
            return Ok(());
        };
        let organizations =
            capstan_api::certificates::request_organizations(&pem).unwrap_or_default();
        if organizations.iter().any(|o| o == "system:masters") {
            return Err(forbidden(
                a,
                &format!("use of {CLIENT_SIGNER} signer with system:masters group is not allowed"),
            ));
        }
        Ok(())
    }
}
