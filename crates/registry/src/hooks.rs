//! Hooks on writes of one resource type that need more than the object itself: checks by
//! the writer (RBAC's escalation rules) and adjustments of new objects (legacy token
//! secrets). Rules across resources are admission plugins (`capstan-admission`).

use async_trait::async_trait;

use crate::error::Result;

/// Refuses a valid write of an object of type `T` by its author (`old` is the stored object
/// of an update), e.g. RBAC's escalation checks.
#[async_trait]
pub trait WriteCheck<T>: Send + Sync + 'static {
    /// `Ok` to let the write go on, or the upstream error refusing it.
    async fn check(&self, new: &T, old: Option<&T>, user: &capstan_auth::UserInfo) -> Result<()>;
}

/// Adjusts or refuses a new object of type `T` after defaulting, before validation.
#[async_trait]
pub trait CreateHook<T>: Send + Sync + 'static {
    /// Changes `obj` as needed (knowing who creates it), or refuses it with an upstream
    /// error.
    async fn on_create(&self, obj: &mut T, user: &capstan_auth::UserInfo) -> Result<()>;
}

/// Notes the namespace of every new object in a set (the admission plugins that read
/// LimitRanges and ResourceQuotas look only where there are some).
pub struct NoteNamespace(pub std::sync::Arc<capstan_admission::plugins::NamespaceSet>);

#[async_trait]
impl<T: capstan_meta::ApiObject> CreateHook<T> for NoteNamespace {
    async fn on_create(&self, obj: &mut T, _user: &capstan_auth::UserInfo) -> Result<()> {
        if let Some(ns) = obj.metadata().namespace.as_deref() {
            self.0.insert(ns);
        }
        Ok(())
    }
}

/// Records who asks for a certificate: a new CertificateSigningRequest's `spec.username`,
/// `uid`, `groups` and `extra` are the requesting user's, whatever the body said.
pub struct CsrRequester;

#[async_trait]
impl CreateHook<k8s_openapi::api::certificates::v1::CertificateSigningRequest> for CsrRequester {
    async fn on_create(
        &self,
        csr: &mut k8s_openapi::api::certificates::v1::CertificateSigningRequest,
        user: &capstan_auth::UserInfo,
    ) -> Result<()> {
        let spec = &mut csr.spec;
        spec.username = Some(user.name.clone()).filter(|n| !n.is_empty());
        spec.uid = Some(user.uid.clone()).filter(|u| !u.is_empty());
        spec.groups = Some(user.groups.clone()).filter(|g| !g.is_empty());
        spec.extra = Some(user.extra.clone()).filter(|e| !e.is_empty());
        Ok(())
    }
}
