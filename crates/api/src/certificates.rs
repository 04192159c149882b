//! `certificates.k8s.io/v1` CertificateSigningRequests: a PEM certificate request for a
//! signer, approved or denied through `approval`, answered through `status`.

use std::collections::BTreeSet;

use capstan_meta::validation::dns1123_subdomain;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition,
};

use crate::describe::Names;

/// The signer whose certificates authenticate to the API server.
pub const API_SERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

/// The key usages a request may ask for (upstream's names).
const USAGES: [&str; 21] = [
    "signing",
    "digital signature",
    "content commitment",
    "key encipherment",
    "key agreement",
    "data encipherment",
    "cert sign",
    "crl sign",
    "encipher only",
    "decipher only",
    "any",
    "server auth",
    "client auth",
    "code signing",
    "email protection",
    "s/mime",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "timestamping",
    "ocsp signing",
];

/// The organizations (groups) of the subject of a PEM certificate request, or why it is not
/// one.
pub fn request_organizations(pem: &[u8]) -> Result<Vec<String>, String> {
    let (_, block) = x509_parser::pem::parse_x509_pem(pem)
        .map_err(|_| "PEM block type must be CERTIFICATE REQUEST".to_string())?;
    if block.label != "CERTIFICATE REQUEST" {
        return Err("PEM block type must be CERTIFICATE REQUEST".into());
    }
    use x509_parser::prelude::FromDer;
    let (_, request) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&block.contents)
            .map_err(|e| format!("the certificate request cannot be read: {e}"))?;
    Ok(request
        .certification_request_info
        .subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect())
}

/// The strategy of CertificateSigningRequest: the spec is fixed at create (the requester's
/// identity filled in by the registry); the status changes through `status`, the approval
/// conditions through `approval`.
#[derive(Debug, Default, Clone, Copy)]
pub struct CertificateSigningRequestStrategy;

fn is_approval(c: &CertificateSigningRequestCondition) -> bool {
    matches!(c.type_.as_str(), "Approved" | "Denied")
}

fn validate_conditions(errs: &mut FieldErrors, csr: &CertificateSigningRequest) {
    let conditions = csr
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let at = format!("status.conditions[{i}]");
        if c.type_.is_empty() {
            errs.push(FieldError::required(format!("{at}.type"), ""));
        } else if !seen.insert(c.type_.clone())
            && matches!(c.type_.as_str(), "Approved" | "Denied" | "Failed")
        {
            errs.push(FieldError::duplicate(format!("{at}.type"), &c.type_));
        }
        if !matches!(c.status.as_str(), "True" | "False" | "Unknown") {
            errs.push(FieldError::not_supported(
                format!("{at}.status"),
                &c.status,
                &["False", "True", "Unknown"],
            ));
        }
    }
    if seen.contains("Approved") && seen.contains("Denied") {
        errs.push(FieldError::invalid(
            "status.conditions",
            "",
            "Approved and Denied conditions are mutually exclusive",
        ));
    }
    if let Some(cert) = csr.status.as_ref().and_then(|s| s.certificate.as_ref())
        && !cert.0.is_empty()
        && !x509_parser::pem::Pem::iter_from_buffer(&cert.0)
            .all(|p| p.is_ok_and(|p| p.label == "CERTIFICATE"))
    {
        errs.push(FieldError::invalid(
            "status.certificate",
            "",
            "must contain only PEM CERTIFICATE blocks",
        ));
    }
}

impl Strategy for CertificateSigningRequestStrategy {
    type Object = CertificateSigningRequest;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "certificates.k8s.io",
            kind: "CertificateSigningRequest",
            resource: "certificatesigningrequests",
            short_names: &["csr"],
            namespaced: false,
        }
        .v1()
    }

    fn prepare_for_create(&self, csr: &mut CertificateSigningRequest) {
        csr.status = None;
    }

    fn prepare_for_update(
        &self,
        new: &mut CertificateSigningRequest,
        old: &CertificateSigningRequest,
    ) {
        new.spec = old.spec.clone();
    }

    fn validate(&self, csr: &CertificateSigningRequest) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = &csr.spec;
        if spec.request.0.is_empty() {
            errs.push(FieldError::required("spec.request", ""));
        } else if let Err(why) = request_organizations(&spec.request.0) {
            errs.push(FieldError::invalid("spec.request", "", why));
        }
        if spec.signer_name.is_empty() {
            errs.push(FieldError::required("spec.signerName", ""));
        } else {
            let (domain, path) = spec.signer_name.split_once('/').unwrap_or_default();
            if domain.is_empty() || path.is_empty() || !dns1123_subdomain(domain).is_empty() {
                errs.push(FieldError::invalid(
                    "spec.signerName",
                    &spec.signer_name,
                    "must be a fully qualified domain and path of the form 'example.com/signer-name'",
                ));
            }
        }
        if let Some(s) = spec.expiration_seconds
            && s < 600
        {
            errs.push(FieldError::invalid(
                "spec.expirationSeconds",
                &s.to_string(),
                "may not specify a duration less than 600 seconds (10 minutes)",
            ));
        }
        let usages = spec.usages.clone().unwrap_or_default();
        if usages.is_empty() {
            errs.push(FieldError::required("spec.usages", ""));
        }
        let mut seen = BTreeSet::new();
        for (i, u) in usages.iter().enumerate() {
            if !USAGES.contains(&u.as_str()) {
                errs.push(FieldError::not_supported(
                    format!("spec.usages[{i}]"),
                    u,
                    &USAGES,
                ));
            } else if !seen.insert(u.as_str()) {
                errs.push(FieldError::duplicate(format!("spec.usages[{i}]"), u));
            }
        }
        if spec.signer_name == API_SERVER_CLIENT_SIGNER {
            for (i, u) in usages.iter().enumerate() {
                if !matches!(
                    u.as_str(),
                    "client auth" | "digital signature" | "key encipherment"
                ) {
                    errs.push(FieldError::not_supported(
                        format!("spec.usages[{i}]"),
                        u,
                        &["client auth", "digital signature", "key encipherment"],
                    ));
                }
            }
        }
        validate_conditions(&mut errs, csr);
        errs
    }

    fn validate_update(
        &self,
        new: &CertificateSigningRequest,
        old: &CertificateSigningRequest,
    ) -> FieldErrors {
        let mut errs = Vec::new();
        validate_conditions(&mut errs, new);
        // An approval or denial stays.
        let kept = |c: &CertificateSigningRequest| -> Vec<String> {
            c.status
                .iter()
                .flat_map(|s| s.conditions.iter().flatten())
                .filter(|c| is_approval(c) && c.status == "True")
                .map(|c| c.type_.clone())
                .collect()
        };
        for t in kept(old) {
            if !kept(new).contains(&t) {
                errs.push(FieldError::forbidden(
                    "status.conditions",
                    format!("updates may not remove a condition of type {t:?}"),
                ));
            }
        }
        if old
            .status
            .as_ref()
            .and_then(|s| s.certificate.as_ref())
            .is_some_and(|c| !c.0.is_empty())
            && new.status.as_ref().and_then(|s| s.certificate.as_ref())
                != old.status.as_ref().and_then(|s| s.certificate.as_ref())
        {
            errs.push(FieldError::forbidden(
                "status.certificate",
                "updates may not modify existing certificate content",
            ));
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut CertificateSigningRequest, from: &CertificateSigningRequest) {
        to.status = from.status.clone();
    }

    /// The approval writes the Approved and Denied conditions only.
    fn copy_approval(&self, to: &mut CertificateSigningRequest, from: &CertificateSigningRequest) {
        let others: Vec<_> = to
            .status
            .iter()
            .flat_map(|s| s.conditions.iter().flatten())
            .filter(|c| !is_approval(c))
            .cloned()
            .collect();
        let approvals: Vec<_> = from
            .status
            .iter()
            .flat_map(|s| s.conditions.iter().flatten())
            .filter(|c| is_approval(c))
            .cloned()
            .collect();
        let status = to.status.get_or_insert_with(Default::default);
        let all: Vec<_> = approvals.into_iter().chain(others).collect();
        status.conditions = (!all.is_empty()).then_some(all);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn csr(conditions: serde_json::Value) -> CertificateSigningRequest {
        serde_json::from_value(json!({
            "metadata": {"name": "c"},
            "spec": {"request": "", "signerName": "example.com/x", "usages": ["client auth"]},
            "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    #[test]
    fn approval_writes_only_approval_conditions_and_they_stay() {
        let s = CertificateSigningRequestStrategy;
        let mut stored = csr(json!([{"type": "Failed", "status": "True"}]));
        let sent = csr(
            json!([{"type": "Approved", "status": "True"}, {"type": "Failed", "status": "False"}]),
        );
        let old = stored.clone();
        s.copy_approval(&mut stored, &sent);
        let types: Vec<(String, String)> = stored
            .status
            .as_ref()
            .unwrap()
            .conditions
            .iter()
            .flatten()
            .map(|c| (c.type_.clone(), c.status.clone()))
            .collect();
        assert_eq!(
            types,
            [
                ("Approved".into(), "True".into()),
                ("Failed".into(), "True".into())
            ]
        );
        assert!(s.validate_update(&stored, &old).is_empty());
        // Approved and Denied together are refused; an approval cannot be taken back.
        let both = csr(
            json!([{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]),
        );
        assert!(
            s.validate_update(&both, &old)
                .iter()
                .any(|e| e.detail.contains("mutually exclusive"))
        );
        let none = csr(json!([]));
        assert!(!s.validate_update(&none, &stored).is_empty());
    }

    #[test]
    fn the_request_must_be_a_pem_certificate_request() {
        assert_eq!(
            request_organizations(
                b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
            ),
            Err("PEM block type must be CERTIFICATE REQUEST".into())
        );
        assert!(request_organizations(b"junk").is_err());
    }
}
