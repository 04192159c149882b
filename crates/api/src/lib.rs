//! The built-in kinds Capstan serves, each as a [`Strategy`](capstan_meta::Strategy):
//! upstream defaulting, validation and update rules over the `k8s-openapi` types. The server
//! registers these strategies; nothing in the server knows a kind by name.

pub mod admission_policy;
pub mod admissionregistration;
pub mod apiregistration;
pub mod apps;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod coordination;
pub mod core;
mod describe;
pub mod endpoints;
pub mod events;
pub mod flowcontrol;
pub mod limits;
pub mod networking;
pub mod node;
pub mod pod;
pub mod pod_references;
mod pod_security_context;
pub mod policy;
pub mod printers;
pub mod quota;
pub mod rbac;
pub mod replication;
pub mod resource;
pub mod scheduling;
pub mod service;
pub mod storage;
pub mod warnings;

pub use admission_policy::{
    MutatingAdmissionPolicyBindingStrategy, MutatingAdmissionPolicyStrategy,
    ValidatingAdmissionPolicyBindingStrategy, ValidatingAdmissionPolicyStrategy,
};
pub use admissionregistration::{
    MutatingWebhookConfigurationStrategy, ValidatingWebhookConfigurationStrategy,
};
pub use apiregistration::ApiServiceStrategy;
pub use apps::{
    ControllerRevisionStrategy, DaemonSetStrategy, DeploymentStrategy, ReplicaSetStrategy,
    StatefulSetStrategy,
};
pub use autoscaling::HorizontalPodAutoscalerStrategy;
pub use batch::{CronJobStrategy, JobStrategy};
pub use certificates::CertificateSigningRequestStrategy;
pub use coordination::LeaseStrategy;
pub use core::{
    ConfigMapStrategy, EventStrategy, NamespaceStrategy, NodeStrategy,
    PersistentVolumeClaimStrategy, PersistentVolumeStrategy, SecretStrategy,
    ServiceAccountStrategy,
};
pub use endpoints::{EndpointSliceStrategy, EndpointsStrategy};
pub use flowcontrol::{FlowSchemaStrategy, PriorityLevelConfigurationStrategy};
pub use limits::LimitRangeStrategy;
pub use networking::{IngressClassStrategy, IngressStrategy, NetworkPolicyStrategy};
pub use node::RuntimeClassStrategy;
pub use pod::PodStrategy;
pub use policy::PodDisruptionBudgetStrategy;
pub use quota::ResourceQuotaStrategy;
pub use rbac::{
    ClusterRoleBindingStrategy, ClusterRoleStrategy, RoleBindingStrategy, RoleStrategy,
};
pub use replication::{PodTemplateStrategy, ReplicationControllerStrategy};
pub use resource::{
    DeviceClassStrategy, ResourceClaimStrategy, ResourceClaimTemplateStrategy,
    ResourceSliceStrategy,
};
pub use scheduling::PriorityClassStrategy;
pub use service::{IpAddressStrategy, ServiceCidrStrategy, ServiceStrategy};
pub use storage::{
    CsiDriverStrategy, CsiNodeStrategy, CsiStorageCapacityStrategy, StorageClassStrategy,
    VolumeAttachmentStrategy, VolumeAttributesClassStrategy,
};
