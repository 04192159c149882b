//! Hooks on writes of one resource type that need more than the object itself: checks by
//! the writer (RBAC's escalation rules) and adjustments of new objects (legacy token
//! secrets). Rules across resources are admission plugins (`capstan-admission`).

use async_trait::async_trait;

use crate::error::Result;
use crate::kind::{Obj, typed, typed_mut};

/// Refuses a valid write of an object of type `T` by its author (`old` is the stored object
/// of an update), e.g. RBAC's escalation checks.
#[async_trait]
pub trait WriteCheck<T>: Send + Sync + 'static {
    /// `Ok` to let the write go on, or the upstream error refusing it.
    async fn check(&self, new: &T, old: Option<&T>, user: &capstan_auth::UserInfo) -> Result<()>;
}

/// Field errors of an update of an object of type `T` that depend on who writes it, as
/// upstream's validation reports them (a ResourceClaim's status needs permissions on
/// synthetic subresources): listed before the object's own validation errors, in one
/// `Invalid` answer.
#[async_trait]
pub trait UpdateFieldCheck<T>: Send + Sync + 'static {
    /// The refused fields of the update from `old` to `new` by `writer`; empty to let it go on.
    async fn field_errors(
        &self,
        new: &T,
        old: &T,
        writer: &crate::options::WriteOptions,
    ) -> Vec<capstan_meta::FieldError>;
}

/// Adjusts or refuses a new object of type `T` after defaulting, before validation.
#[async_trait]
pub trait CreateHook<T>: Send + Sync + 'static {
    /// Changes `obj` as needed (knowing who creates it), or refuses it with an upstream
    /// error.
    async fn on_create(&self, obj: &mut T, user: &capstan_auth::UserInfo) -> Result<()>;
}

/// What a write reserved from a pool shared between objects, settled once it is known
/// whether the write landed (see [`Allocations`]). The entries name what is held, in the
/// allocator's own terms.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reserved {
    /// Newly taken for the new object: given back when the write fails.
    pub taken: Vec<String>,
    /// Held by the old object and not by the new one: given back once the write lands.
    pub freed: Vec<String>,
}

/// Takes what objects of type `T` claim from pools shared between them (a Service's cluster
/// IPs and node ports) as they are written, and gives it back when a write fails or an
/// object is removed. A crash between the two leaves a leak for the allocator's repair to
/// find, never a value held twice.
#[async_trait]
pub trait Allocations<T>: Send + Sync + 'static {
    /// Fills in and reserves what `new` claims (`old`: the stored object of an update), or
    /// refuses it with the upstream error. A dry run takes nothing but checks the same.
    async fn reserve(&self, new: &mut T, old: Option<&T>, dry_run: bool) -> Result<Reserved>;

    /// Settles a reservation: `written` keeps what was taken and gives back what was freed;
    /// otherwise what was taken goes back.
    async fn settle(&self, reserved: Reserved, written: bool);

    /// Gives back everything an object removed from storage held.
    async fn release(&self, removed: &T);
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

/// A hook on objects of type `T`, run on a store's objects (`T`s in [`Obj`]s).
pub(crate) struct OnKind<H: ?Sized>(pub(crate) std::sync::Arc<H>);

#[async_trait]
impl<T: 'static> WriteCheck<Obj> for OnKind<dyn WriteCheck<T>> {
    async fn check(
        &self,
        new: &Obj,
        old: Option<&Obj>,
        user: &capstan_auth::UserInfo,
    ) -> Result<()> {
        self.0.check(typed(new), old.map(typed), user).await
    }
}

#[async_trait]
impl<T: 'static> UpdateFieldCheck<Obj> for OnKind<dyn UpdateFieldCheck<T>> {
    async fn field_errors(
        &self,
        new: &Obj,
        old: &Obj,
        writer: &crate::options::WriteOptions,
    ) -> Vec<capstan_meta::FieldError> {
        self.0.field_errors(typed(new), typed(old), writer).await
    }
}

#[async_trait]
impl<T: 'static> CreateHook<Obj> for OnKind<dyn CreateHook<T>> {
    async fn on_create(&self, obj: &mut Obj, user: &capstan_auth::UserInfo) -> Result<()> {
        self.0.on_create(typed_mut(obj), user).await
    }
}

#[async_trait]
impl<T: 'static> Allocations<Obj> for OnKind<dyn Allocations<T>> {
    async fn reserve(&self, new: &mut Obj, old: Option<&Obj>, dry_run: bool) -> Result<Reserved> {
        self.0
            .reserve(typed_mut(new), old.map(typed), dry_run)
            .await
    }

    async fn settle(&self, reserved: Reserved, written: bool) {
        self.0.settle(reserved, written).await
    }

    async fn release(&self, removed: &Obj) {
        self.0.release(typed(removed)).await
    }
}
