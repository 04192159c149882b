//! Claims and volumes: `DefaultStorageClass` (a claim naming no class gets the default one),
//! `PersistentVolumeClaimResize` (a claim grows only when its class allows expansion) and
//! `StorageObjectInUseProtection` (new claims and volumes get the finalizers that keep them
//! while in use), and `PersistentVolumeLabel` (volumes of a cloud's disks labelled by the
//! cloud provider: with no cloud provider, as in Capstan, such volumes are refused, as
//! upstream refuses them when it cannot build the provider).

use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::quantity;
use capstan_meta::{ApiError, GroupResource};
use serde_json::Value;

use super::forbidden;
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

const DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
const DEFAULT_CLASS_BETA: &str = "storageclass.beta.kubernetes.io/is-default-class";
const CLASS_ANNOTATION_BETA: &str = "volume.beta.kubernetes.io/storage-class";

fn classes() -> GroupResource {
    GroupResource::new("storage.k8s.io", "storageclasses")
}

fn is_claims(resource: &GroupResource, subresource: &str) -> bool {
    resource.group.is_empty()
        && resource.resource == "persistentvolumeclaims"
        && subresource.is_empty()
}

/// The class a claim names (the beta annotation first, as upstream reads it).
fn claim_class(claim: &Value) -> Option<&str> {
    claim["metadata"]["annotations"][CLASS_ANNOTATION_BETA]
        .as_str()
        .or_else(|| claim["spec"]["storageClassName"].as_str())
}

/// `DefaultStorageClass`.
pub struct DefaultStorageClass {
    lister: Arc<dyn Lister>,
}

impl DefaultStorageClass {
    /// Reads StorageClasses through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self { lister }
    }
}

#[async_trait]
impl Plugin for DefaultStorageClass {
    fn name(&self) -> &'static str {
        "DefaultStorageClass"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create && is_claims(resource, subresource)
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        let Some(claim) = &a.object else {
            return Ok(());
        };
        // Only a claim that says nothing about its class (`""` asks for none).
        if claim_class(claim).is_some() {
            return Ok(());
        }
        let default = self
            .lister
            .list(&classes(), "")
            .await?
            .into_iter()
            .filter(|c| {
                let annotations = &c["metadata"]["annotations"];
                annotations[DEFAULT_CLASS] == "true" || annotations[DEFAULT_CLASS_BETA] == "true"
            })
            // Several defaults: the newest, then the first by name (as upstream).
            .max_by(|x, y| {
                let created = |c: &Value| {
                    c["metadata"]["creationTimestamp"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                };
                let name = |c: &Value| {
                    c["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                };
                created(x)
                    .cmp(&created(y))
                    .then_with(|| name(y).cmp(&name(x)))
            });
        if let Some(name) = default
            .as_ref()
            .and_then(|c| c["metadata"]["name"].as_str())
            && let Some(spec) = a.object.as_mut().and_then(|c| c["spec"].as_object_mut())
        {
            spec.insert("storageClassName".into(), name.into());
        }
        Ok(())
    }
}

/// `PersistentVolumeClaimResize`.
pub struct PersistentVolumeClaimResize {
    lister: Arc<dyn Lister>,
}

impl PersistentVolumeClaimResize {
    /// Reads StorageClasses through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self { lister }
    }
}

fn requested(claim: &Value) -> Option<quantity::Milli> {
    quantity::parse(claim["spec"]["resources"]["requests"]["storage"].as_str()?)
}

#[async_trait]
impl Plugin for PersistentVolumeClaimResize {
    fn name(&self) -> &'static str {
        "PersistentVolumeClaimResize"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Update && is_claims(resource, subresource)
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        let (Some(new), Some(old)) = (&a.object, &a.old_object) else {
            return Ok(());
        };
        let (Some(size), Some(before)) = (requested(new), requested(old)) else {
            return Ok(());
        };
        if size <= before {
            return Ok(());
        }
        let class = claim_class(new).unwrap_or_default();
        let allowed = !class.is_empty()
            && claim_class(old).unwrap_or_default() == class
            && self
                .lister
                .get(&classes(), "", class)
                .await?
                .is_some_and(|c| c["allowVolumeExpansion"] == true);
        if allowed {
            Ok(())
        } else {
            Err(forbidden(
                a,
                "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            ))
        }
    }
}

/// `StorageObjectInUseProtection`: new claims get `kubernetes.io/pvc-protection`, new
/// volumes `kubernetes.io/pv-protection` (the server's protection controller removes them
/// once a deleted object is no longer in use).
pub struct StorageObjectInUseProtection;

const CLAIM_FINALIZER: &str = "kubernetes.io/pvc-protection";
const VOLUME_FINALIZER: &str = "kubernetes.io/pv-protection";

#[async_trait]
impl Plugin for StorageObjectInUseProtection {
    fn name(&self) -> &'static str {
        "StorageObjectInUseProtection"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create
            && subresource.is_empty()
            && resource.group.is_empty()
            && matches!(
                resource.resource.as_str(),
                "persistentvolumeclaims" | "persistentvolumes"
            )
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        let finalizer = if a.resource.resource == "persistentvolumes" {
            VOLUME_FINALIZER
        } else {
            CLAIM_FINALIZER
        };
        let Some(meta) = a.object.as_mut().map(|o| &mut o["metadata"]) else {
            return Ok(());
        };
        if !meta["finalizers"].is_array() {
            meta["finalizers"] = Value::Array(Vec::new());
        }
        if let Some(list) = meta["finalizers"].as_array_mut()
            && !list.iter().any(|f| f == finalizer)
        {
            list.push(finalizer.into());
        }
        Ok(())
    }
}

/// `PersistentVolumeLabel`: upstream asks the cloud provider for the zone and region of a
/// new volume on a cloud disk. Capstan has no cloud providers, so such a volume is refused
/// as upstream refuses it when the provider cannot be built; other volumes pass untouched.
pub struct PersistentVolumeLabel;

/// The cloud disk sources: field, upstream's volume name, provider, the disk's name field.
const CLOUD_DISKS: [(&str, &str, &str, &str); 3] = [
    ("gcePersistentDisk", "GCE PD", "GCE", "pdName"),
    ("awsElasticBlockStore", "AWS EBS", "AWS", "volumeID"),
    ("azureDisk", "Azure disk", "Azure", "diskName"),
];

#[async_trait]
impl Plugin for PersistentVolumeLabel {
    fn name(&self) -> &'static str {
        "PersistentVolumeLabel"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create
            && resource.group.is_empty()
            && resource.resource == "persistentvolumes"
            && subresource.is_empty()
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        let Some(spec) = a.object.as_ref().map(|v| &v["spec"]) else {
            return Ok(());
        };
        for (field, volume, provider, name) in CLOUD_DISKS {
            if let Some(source) = spec.get(field) {
                let disk = source[name].as_str().unwrap_or_default();
                return Err(forbidden(
                    a,
                    &format!(
                        "error querying {volume} volume {disk}: unable to build {provider} cloud provider for {volume}"
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_auth::UserInfo;
    use serde_json::json;

    #[tokio::test]
    async fn cloud_disks_cannot_be_labelled_without_a_cloud_provider() {
        let volume = |spec: Value| {
            let mut a = Attributes::new(
                Operation::Create,
                GroupResource::new("", "persistentvolumes"),
                UserInfo::default(),
            );
            a.name = "pv".into();
            a.object = Some(json!({"metadata": {"name": "pv"}, "spec": spec}));
            a
        };
        let err = PersistentVolumeLabel
            .admit(&mut volume(
                json!({"gcePersistentDisk": {"pdName": "disk-1"}}),
            ))
            .await
            .unwrap_err();
        assert_eq!(err.code(), 403);
        assert_eq!(
            err.message,
            "persistentvolumes \"pv\" is forbidden: error querying GCE PD volume disk-1: unable to build GCE cloud provider for GCE PD"
        );
        PersistentVolumeLabel
            .admit(&mut volume(json!({"hostPath": {"path": "/data"}})))
            .await
            .unwrap();
    }
}
