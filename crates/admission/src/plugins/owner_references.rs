//! `OwnerReferencesPermissionEnforcement`: setting or changing an object's
//! `ownerReferences` needs the right to delete the object, and a new `blockOwnerDeletion`
//! the right to update the owner's `finalizers` subresource.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_auth::authz::{Attributes as AuthzAttributes, Authorizer, Decision};
use capstan_meta::{ApiError, GroupResource};
use serde_json::Value;

use super::forbidden;
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

/// The `OwnerReferencesPermissionEnforcement` plugin.
pub struct OwnerReferencesPermissionEnforcement {
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) lister: Arc<dyn Lister>,
}

fn references(object: Option<&Value>) -> Vec<&Value> {
    object
        .and_then(|o| o["metadata"]["ownerReferences"].as_array())
        .map(|refs| refs.iter().collect())
        .unwrap_or_default()
}

/// Allowed, or the authorizer's reason.
async fn ask(authorizer: &dyn Authorizer, asked: AuthzAttributes) -> Result<(), String> {
    match authorizer.authorize(&asked).await {
        Decision::Allow => Ok(()),
        Decision::Deny(reason) | Decision::NoOpinion(reason) => Err(reason),
    }
}

#[async_trait]
impl Plugin for OwnerReferencesPermissionEnforcement {
    fn name(&self) -> &'static str {
        "OwnerReferencesPermissionEnforcement"
    }

    fn validates(
        &self,
        operation: Operation,
        _resource: &GroupResource,
        _subresource: &str,
    ) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        let new = references(a.object.as_ref());
        let old = references(a.old_object.as_ref());
        if new == old {
            return Ok(());
        }
        let delete = AuthzAttributes {
            user: a.user.clone(),
            verb: "delete".into(),
            resource_request: true,
            api_group: a.resource.group.clone(),
            api_version: a.version.clone(),
            resource: a.resource.resource.clone(),
            namespace: a.namespace.clone(),
            name: a.name.clone(),
            ..Default::default()
        };
        if let Err(reason) = ask(self.authorizer.as_ref(), delete).await {
            return Err(forbidden(
                a,
                &format!("cannot set an ownerRef on a resource you can't delete: {reason}, <nil>"),
            ));
        }
        // New references that block their owner's deletion.
        let blocking = new
            .iter()
            .filter(|r| r["blockOwnerDeletion"] == true)
            .filter(|r| {
                !old.iter()
                    .any(|o| o["uid"] == r["uid"] && o["blockOwnerDeletion"] == true)
            });
        for owner in blocking {
            let api_version = owner["apiVersion"].as_str().unwrap_or_default();
            let kind = owner["kind"].as_str().unwrap_or_default();
            let (group, version) = match api_version.split_once('/') {
                Some((g, v)) => (g, v),
                None => ("", api_version),
            };
            let Some(resource) = self.lister.resource_for_kind(group, kind) else {
                return Err(forbidden(
                    a,
                    &format!(
                        "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion {api_version} Kind {kind}: no matches for kind {kind:?} in version {api_version:?}"
                    ),
                ));
            };
            let finalizers = AuthzAttributes {
                user: a.user.clone(),
                verb: "update".into(),
                resource_request: true,
                api_group: resource.group.clone(),
                api_version: version.into(),
                resource: resource.resource.clone(),
                subresource: "finalizers".into(),
                namespace: a.namespace.clone(),
                name: owner["name"].as_str().unwrap_or_default().into(),
                ..Default::default()
            };
            if let Err(reason) = ask(self.authorizer.as_ref(), finalizers).await {
                return Err(forbidden(
                    a,
                    &format!(
                        "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: {reason}, <nil>"
                    ),
                ));
            }
        }
        Ok(())
    }
}
