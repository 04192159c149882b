//! `certificates.k8s.io/v1` CertificateSigningRequests: a PEM certificate request for a
//! signer, approved or denied through `approval`, answered through `status`.

use std::collections::BTreeSet;

use capstan_meta::validation::dns1123_subdomain;
use capstan_meta::{FieldError, FieldErrors, FieldLabels, ResourceDescriptor, Strategy};
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

/// Reads the subject of a PEM certificate request with `read`, or says why it is not one.
fn with_subject<T>(
    pem: &[u8],
    read: impl FnOnce(&x509_parser::x509::X509Name<'_>) -> T,
) -> Result<T, String> {
    let (_, block) = x509_parser::pem::parse_x509_pem(pem)
        .map_err(|_| "PEM block type must be CERTIFICATE REQUEST".to_string())?;
    if block.label != "CERTIFICATE REQUEST" {
        return Err("PEM block type must be CERTIFICATE REQUEST".into());
    }
    use x509_parser::prelude::FromDer;
    let (_, request) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&block.contents)
            .map_err(|e| format!("the certificate request cannot be read: {e}"))?;
    Ok(read(&request.certification_request_info.subject))
}

/// The organizations (groups) of the subject of a PEM certificate request, or why it is not
/// one.
pub fn request_organizations(pem: &[u8]) -> Result<Vec<String>, String> {
    with_subject(pem, |subject| {
        subject
            .iter_organization()
            .filter_map(|o| o.as_str().ok().map(str::to_string))
            .collect()
    })
}

/// The common name of the subject of a PEM certificate request (empty when it has none), or
/// why it is not one.
pub fn request_common_name(pem: &[u8]) -> Result<String, String> {
    with_subject(pem, |subject| {
        subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .unwrap_or_default()
            .to_string()
    })
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
        let mut d = Names {
            group: "certificates.k8s.io",
            kind: "CertificateSigningRequest",
            resource: "certificatesigningrequests",
            short_names: &["csr"],
            namespaced: false,
        }
        .v1();
        d.field_labels = FieldLabels::of_kind(&["spec.signerName"]).without_namespace();
        d
    }

    fn field(&self, csr: &CertificateSigningRequest, field: &str) -> Option<String> {
        (field == "spec.signerName").then(|| csr.spec.signer_name.clone())
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
        let mut status = from.status.clone();
        if let Some(s) = status.as_mut() {
            stamp_conditions(s.conditions.iter_mut().flatten(), to);
        }
        to.status = status;
    }

    /// The approval writes the conditions, all of them (custom types too, as upstream),
    /// and nothing else of the status.
    fn copy_approval(&self, to: &mut CertificateSigningRequest, from: &CertificateSigningRequest) {
        let mut conditions = from.status.as_ref().and_then(|s| s.conditions.clone());
        stamp_conditions(conditions.iter_mut().flatten(), to);
        let status = to.status.get_or_insert_with(Default::default);
        status.conditions = conditions.filter(|c| !c.is_empty());
    }
}

/// Fills in the times a written condition leaves out, as upstream does: updated now, and
/// changed when the stored condition of its type had another status (or there was none).
fn stamp_conditions<'a>(
    conditions: impl Iterator<Item = &'a mut CertificateSigningRequestCondition>,
    old: &CertificateSigningRequest,
) {
    let now = capstan_meta::time::now();
    let old_conditions = old.status.as_ref().and_then(|s| s.conditions.as_ref());
    for c in conditions {
        c.last_update_time.get_or_insert_with(|| now.clone());
        if c.last_transition_time.is_none() {
            let before = old_conditions
                .into_iter()
                .flatten()
                .find(|o| o.type_ == c.type_ && o.status == c.status)
                .and_then(|o| o.last_transition_time.clone());
            c.last_transition_time = Some(before.unwrap_or_else(|| now.clone()));
        }
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
    fn approval_writes_every_condition_and_approvals_stay() {
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
                ("Failed".into(), "False".into())
            ]
        );
        let approved = &stored.status.as_ref().unwrap().conditions.as_ref().unwrap()[0];
        assert!(approved.last_update_time.is_some() && approved.last_transition_time.is_some());
        // A condition of a type of the caller's own is kept, as upstream keeps it.
        let mut custom = old.clone();
        s.copy_approval(
            &mut custom,
            &csr(json!([{"type": "example.com/Reviewed", "status": "True"}])),
        );
        assert_eq!(
            custom.status.unwrap().conditions.unwrap()[0].type_,
            "example.com/Reviewed"
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
