//! What the volume plugins read of the cluster: claims, volumes, storage classes and CSI
//! nodes, kept in one index shared (copy-on-write) with the attempts that read it; and the
//! volumes of pods, as the cache keeps them for placed pods.

use std::collections::HashMap;

use capstan_meta::quantity;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};

/// The claims, volumes, classes and CSI nodes of the cluster.
#[derive(Debug, Clone, Default)]
pub struct VolumeIndex {
    /// Claims by (namespace, name).
    pub claims: HashMap<(String, String), PersistentVolumeClaim>,
    /// Volumes by name.
    pub volumes: HashMap<String, PersistentVolume>,
    /// Storage classes by name.
    pub classes: HashMap<String, StorageClass>,
    /// CSI nodes by (node) name.
    pub csi_nodes: HashMap<String, CSINode>,
}

impl VolumeIndex {
    /// The claim `name` in `namespace`.
    pub fn claim(&self, namespace: &str, name: &str) -> Option<&PersistentVolumeClaim> {
        self.claims.get(&(namespace.to_string(), name.to_string()))
    }

    /// The volume a claim is bound to (`spec.volumeName`), if bound and known.
    pub fn bound_volume(&self, claim: &PersistentVolumeClaim) -> Option<&PersistentVolume> {
        let name = claim.spec.as_ref()?.volume_name.as_deref()?;
        self.volumes.get(name)
    }

    /// A claim's storage class name (`""`: none).
    pub fn class_name(claim: &PersistentVolumeClaim) -> &str {
        claim
            .spec
            .as_ref()
            .and_then(|s| s.storage_class_name.as_deref())
            .unwrap_or("")
    }

    /// Whether an unbound claim waits for its first consumer (its class says
    /// `WaitForFirstConsumer`).
    pub fn waits_for_consumer(&self, claim: &PersistentVolumeClaim) -> bool {
        self.classes
            .get(Self::class_name(claim))
            .and_then(|c| c.volume_binding_mode.as_deref())
            == Some("WaitForFirstConsumer")
    }
}

/// A volume of a pod, as far as the volume plugins care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodVolume {
    /// A PersistentVolumeClaim, by name (in the pod's namespace).
    Claim(String),
    /// A GCE persistent disk.
    GcePd {
        /// `pdName`.
        name: String,
        /// `readOnly`.
        read_only: bool,
    },
    /// An AWS EBS volume.
    AwsEbs {
        /// `volumeID`.
        id: String,
    },
    /// A Ceph RBD image.
    Rbd {
        /// `monitors`.
        monitors: Vec<String>,
        /// `pool` (default `rbd`).
        pool: String,
        /// `image`.
        image: String,
        /// `readOnly`.
        read_only: bool,
    },
    /// An iSCSI target.
    Iscsi {
        /// `iqn`.
        iqn: String,
        /// `readOnly`.
        read_only: bool,
    },
}

impl PodVolume {
    /// Whether two pods using these volumes cannot share a node (upstream's disk conflicts).
    pub fn conflicts_with(&self, other: &PodVolume) -> bool {
        match (self, other) {
            (
                PodVolume::GcePd { name, read_only },
                PodVolume::GcePd {
                    name: n2,
                    read_only: r2,
                },
            ) => name == n2 && !(*read_only && *r2),
            (PodVolume::AwsEbs { id }, PodVolume::AwsEbs { id: id2 }) => id == id2,
            (
                PodVolume::Rbd {
                    monitors,
                    pool,
                    image,
                    read_only,
                },
                PodVolume::Rbd {
                    monitors: m2,
                    pool: p2,
                    image: i2,
                    read_only: r2,
                },
            ) => {
                monitors.iter().any(|m| m2.contains(m))
                    && pool == p2
                    && image == i2
                    && !(*read_only && *r2)
            }
            (
                PodVolume::Iscsi { iqn, read_only },
                PodVolume::Iscsi {
                    iqn: q2,
                    read_only: r2,
                },
            ) => iqn == q2 && !(*read_only && *r2),
            _ => false,
        }
    }
}

/// The volumes of `pod` the volume plugins look at.
pub fn pod_volumes(pod: &Pod) -> Vec<PodVolume> {
    let mut out = Vec::new();
    for v in pod.spec.iter().flat_map(|s| s.volumes.iter().flatten()) {
        if let Some(c) = &v.persistent_volume_claim {
            out.push(PodVolume::Claim(c.claim_name.clone()));
        } else if let Some(d) = &v.gce_persistent_disk {
            out.push(PodVolume::GcePd {
                name: d.pd_name.clone(),
                read_only: d.read_only == Some(true),
            });
        } else if let Some(d) = &v.aws_elastic_block_store {
            out.push(PodVolume::AwsEbs {
                id: d.volume_id.clone(),
            });
        } else if let Some(d) = &v.rbd {
            out.push(PodVolume::Rbd {
                monitors: d.monitors.clone(),
                pool: d.pool.clone().unwrap_or_else(|| "rbd".into()),
                image: d.image.clone(),
                read_only: d.read_only == Some(true),
            });
        } else if let Some(d) = &v.iscsi {
            out.push(PodVolume::Iscsi {
                iqn: d.iqn.clone(),
                read_only: d.read_only == Some(true),
            });
        }
    }
    out
}

/// Bytes of a `storage` quantity (0 when absent or unreadable).
pub fn storage_bytes(
    list: Option<
        &std::collections::BTreeMap<
            String,
            k8s_openapi::apimachinery::pkg::api::resource::Quantity,
        >,
    >,
) -> i64 {
    list.and_then(|l| l.get("storage"))
        .and_then(|q| quantity::parse(&q.0))
        .map_or(0, |m| i64::try_from(m.units_ceil()).unwrap_or(i64::MAX))
}
