//! Subresources served beside a resource: `status` (for every type that has one), and the two
//! actions of the core group that write outside the update rules: a pod's `binding` (also
//! served as the `bindings` resource) and a namespace's `finalize`; and the workloads'
//! `scale`.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::HasMetadata;
use capstan_meta::resource::Strategy;
use capstan_meta::{ApiError, FieldError, GroupResource, ResourceDescriptor};
use k8s_openapi::api::core::v1::{Binding, Namespace, Pod, PodCondition};

use crate::codec::decode;
use crate::error::{Error, Result};
use crate::generic::{GenericStore, Target};
use crate::options::{GetOptions, WriteOptions};
use crate::patch::PatchType;
use crate::rest::{Encoded, ResponseStatus, RestStorage};

/// A subresource that reads the whole object and writes one part of it: `status` (every type
/// that has one), a CertificateSigningRequest's `approval` conditions, a pod's
/// `ephemeralcontainers` and `resize`.
pub struct PartRest<S: Strategy> {
    main: Arc<GenericStore<S>>,
    descriptor: ResourceDescriptor,
    target: Target,
}

impl<S> PartRest<S>
where
    S: Strategy,
    S::Object: schemars::JsonSchema,
{
    fn new(main: Arc<GenericStore<S>>, target: Target) -> Self {
        let d = main.descriptor();
        let descriptor = d.subresource(target.subresource(), &d.kind, &["get", "patch", "update"]);
        Self {
            main,
            descriptor,
            target,
        }
    }

    /// The status subresource of `main`.
    pub fn status(main: Arc<GenericStore<S>>) -> Self {
        Self::new(main, Target::Status)
    }

    /// The approval subresource of `main` (CertificateSigningRequests).
    pub fn approval(main: Arc<GenericStore<S>>) -> Self {
        Self::new(main, Target::Approval)
    }

    /// The resize subresource of `main` (pods).
    pub fn resize(main: Arc<GenericStore<S>>) -> Self {
        Self::new(main, Target::Resize)
    }

    /// The ephemeralcontainers subresource of `main` (pods).
    pub fn ephemeral_containers(main: Arc<GenericStore<S>>) -> Self {
        Self::new(main, Target::EphemeralContainers)
    }
}

#[async_trait]
impl<S> RestStorage for PartRest<S>
where
    S: Strategy,
    S::Object: schemars::JsonSchema,
{
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn forms(&self) -> Option<Arc<crate::forms::StoreForms>> {
        self.main.forms()
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        self.main.schema(generator)
    }

    async fn get(&self, namespace: &str, name: &str, options: &GetOptions) -> Result<Encoded> {
        self.main.get(namespace, name, options).await
    }

    async fn update(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.main
            .update_target(self.target, namespace, name, body, options)
            .await
    }

    async fn patch(
        &self,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.main
            .patch_target(self.target, namespace, name, patch_type, body, options)
            .await
    }
}

/// `POST pods/{name}/binding` and `POST bindings`: assigns a pod to a node, once.
pub struct BindingRest<S: Strategy<Object = Pod>> {
    pods: Arc<GenericStore<S>>,
    descriptor: ResourceDescriptor,
}

impl<S> BindingRest<S>
where
    S: Strategy<Object = Pod>,
{
    /// The `pods/binding` subresource.
    pub fn subresource(pods: Arc<GenericStore<S>>) -> Self {
        let descriptor = pods
            .descriptor()
            .subresource("binding", "Binding", &["create"]);
        Self { pods, descriptor }
    }

    /// The `bindings` resource (the same action, the pod named by the body).
    pub fn resource(pods: Arc<GenericStore<S>>) -> Self {
        let d = pods.descriptor();
        let descriptor = ResourceDescriptor {
            group: d.group.clone(),
            version: d.version.clone(),
            kind: "Binding".into(),
            resource: "bindings".into(),
            singular: "binding".into(),
            namespaced: true,
            verbs: vec!["create".into()],
            ..Default::default()
        };
        Self { pods, descriptor }
    }

    async fn bind(
        &self,
        namespace: &str,
        binding: Binding,
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let name = binding.metadata.name.clone().unwrap_or_default();
        let mut errors = Vec::new();
        if name.is_empty() {
            errors.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
        let target = &binding.target;
        if target.name.as_deref().unwrap_or("").is_empty() {
            errors.push(FieldError::required("target.name", ""));
        }
        if let Some(kind) = target.kind.as_deref()
            && !kind.is_empty()
            && kind != "Node"
        {
            errors.push(FieldError::not_supported("target.kind", kind, &["Node"]));
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid("", "Binding", &name, &errors).into());
        }
        let binding = self
            .pods
            .admit_subresource(
                "binding", "Binding", None, namespace, &name, binding, options,
            )
            .await?;
        let target = &binding.target;
        let node = target.name.clone().unwrap_or_default();
        let gr = GroupResource::new("", "pods/binding");
        let uid = binding.metadata.uid.clone().filter(|u| !u.is_empty());
        let annotations = binding.metadata.annotations.clone().unwrap_or_default();
        self.pods
            .update_with(namespace, &name, options.dry_run, |pod| {
                let conflict = |why: String| Error::from(ApiError::conflict(&gr, &name, &why));
                let meta = pod.metadata();
                if meta.deletion_timestamp.is_some() {
                    return Err(conflict(format!(
                        "pod {name} is being deleted, cannot be assigned to a host"
                    )));
                }
                if let Some(uid) = &uid
                    && meta.uid.as_ref() != Some(uid)
                {
                    return Err(conflict(format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        meta.uid.as_deref().unwrap_or("")
                    )));
                }
                let spec = pod.spec.get_or_insert_with(Default::default);
                if let Some(assigned) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
                    return Err(conflict(format!(
                        "pod {name} is already assigned to node \"{assigned}\""
                    )));
                }
                spec.node_name = Some(node.clone());
                if !annotations.is_empty() {
                    let own = pod
                        .metadata
                        .annotations
                        .get_or_insert_with(Default::default);
                    own.extend(annotations.clone());
                }
                let status = pod.status.get_or_insert_with(Default::default);
                let conditions = status.conditions.get_or_insert_with(Vec::new);
                match conditions.iter_mut().find(|c| c.type_ == "PodScheduled") {
                    Some(c) => {
                        c.status = "True".into();
                        c.reason = None;
                        c.message = None;
                    }
                    None => conditions.push(PodCondition {
                        type_: "PodScheduled".into(),
                        status: "True".into(),
                        ..Default::default()
                    }),
                }
                Ok(())
            })
            .await?;
        Encoded::created_success()
    }
}

#[async_trait]
impl<S> RestStorage for BindingRest<S>
where
    S: Strategy<Object = Pod>,
{
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<Binding>()
    }

    async fn create(
        &self,
        namespace: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (binding, _) = decode::<Binding>(body, &self.descriptor, options.field_validation)?;
        self.bind(namespace, binding, options).await
    }

    async fn create_for(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (mut binding, _) = decode::<Binding>(body, &self.descriptor, options.field_validation)?;
        match binding.metadata.name.as_deref() {
            None | Some("") => binding.metadata.name = Some(name.to_string()),
            Some(given) if given != name => {
                return Err(ApiError::bad_request(
                    "name in URL does not match name in Binding object",
                )
                .into());
            }
            Some(_) => {}
        }
        self.bind(namespace, binding, options).await
    }
}

/// `PUT namespaces/{name}/finalize`: replaces `spec.finalizers`, the only way to change them.
pub struct FinalizeRest<S: Strategy<Object = Namespace>> {
    namespaces: Arc<GenericStore<S>>,
    descriptor: ResourceDescriptor,
}

impl<S> FinalizeRest<S>
where
    S: Strategy<Object = Namespace>,
{
    /// The `namespaces/finalize` subresource.
    pub fn new(namespaces: Arc<GenericStore<S>>) -> Self {
        let descriptor = namespaces
            .descriptor()
            .subresource("finalize", "Namespace", &["update"]);
        Self {
            namespaces,
            descriptor,
        }
    }
}

#[async_trait]
impl<S> RestStorage for FinalizeRest<S>
where
    S: Strategy<Object = Namespace>,
{
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<Namespace>()
    }

    async fn update(
        &self,
        _namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (given, _) = decode::<Namespace>(body, &self.descriptor, options.field_validation)?;
        let body_name = given.metadata.name.as_deref().unwrap_or("");
        if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            ))
            .into());
        }
        let finalizers = given.spec.and_then(|s| s.finalizers).unwrap_or_default();
        let errors: Vec<FieldError> = finalizers
            .iter()
            .enumerate()
            .flat_map(|(i, f)| {
                capstan_meta::validation::qualified_name(f)
                    .into_iter()
                    .map(move |why| FieldError::invalid(format!("spec.finalizers[{i}]"), f, why))
            })
            .collect();
        if !errors.is_empty() {
            return Err(ApiError::invalid("", "Namespace", name, &errors).into());
        }
        let expected = given.metadata.resource_version.filter(|v| !v.is_empty());
        let gr = self.namespaces.group_resource().clone();
        let ns = self
            .namespaces
            .update_with("", name, options.dry_run, |ns| {
                if let Some(rv) = &expected
                    && ns.metadata.resource_version.as_ref() != Some(rv)
                {
                    return Err(ApiError::conflict(&gr, name, ApiError::MODIFIED).into());
                }
                ns.spec.get_or_insert_with(Default::default).finalizers =
                    (!finalizers.is_empty()).then(|| finalizers.clone());
                Ok(())
            })
            .await?;
        Ok(Encoded {
            body: serde_json::to_vec(&ns).map_err(Error::Encode)?.into(),
            warnings: Vec::new(),
            status: ResponseStatus::Ok,
        })
    }
}

/// Where a kind keeps what its Scale shows: the replicas asked for and seen, and the
/// selector. Workloads implement [`Scalable`](capstan_api::apps::Scalable); a custom resource
/// reads the paths its CRD names.
pub trait ScaleAccess<O>: Send + Sync + 'static {
    /// The replicas asked for.
    fn desired(&self, obj: &O) -> i32;
    /// Sets the replicas asked for.
    fn set_desired(&self, obj: &mut O, replicas: i32);
    /// The replicas seen.
    fn current(&self, obj: &O) -> i32;
    /// The selector, as text.
    fn selector(&self, obj: &O) -> String;
}

/// [`ScaleAccess`] through the object's own [`Scalable`](capstan_api::apps::Scalable).
struct Workload;

impl<O: capstan_api::apps::Scalable> ScaleAccess<O> for Workload {
    fn desired(&self, obj: &O) -> i32 {
        obj.desired()
    }
    fn set_desired(&self, obj: &mut O, replicas: i32) {
        obj.set_desired(replicas)
    }
    fn current(&self, obj: &O) -> i32 {
        obj.current()
    }
    fn selector(&self, obj: &O) -> String {
        obj.selector()
    }
}

/// `<resource>/scale`: the replicas of a Deployment, ReplicaSet, StatefulSet, replication
/// controller or custom resource as an `autoscaling/v1` Scale. A write changes the object's
/// replicas through the object's own update (its validation, admission and generation).
pub struct ScaleRest<S: Strategy> {
    main: Arc<GenericStore<S>>,
    descriptor: ResourceDescriptor,
    access: Arc<dyn ScaleAccess<S::Object>>,
}

impl<S> ScaleRest<S>
where
    S: Strategy,
    S::Object: schemars::JsonSchema + capstan_api::apps::Scalable,
{
    /// The scale subresource of a workload's `main`.
    pub fn new(main: Arc<GenericStore<S>>) -> Self {
        Self::with_access(main, Arc::new(Workload))
    }
}

impl<S> ScaleRest<S>
where
    S: Strategy,
    S::Object: schemars::JsonSchema,
{
    /// The scale subresource of `main`, reading and writing replicas through `access`.
    pub fn with_access(
        main: Arc<GenericStore<S>>,
        access: Arc<dyn ScaleAccess<S::Object>>,
    ) -> Self {
        let mut descriptor =
            main.descriptor()
                .subresource("scale", "Scale", &["get", "patch", "update"]);
        descriptor.response_group_version = Some(("autoscaling".into(), "v1".into()));
        Self {
            main,
            descriptor,
            access,
        }
    }

    /// The same subresource served in another version of the resource (a Scale is the
    /// same in every version).
    pub fn in_version(mut self, version: &str) -> Self {
        self.descriptor.version = version.to_string();
        self
    }

    async fn object(&self, namespace: &str, name: &str) -> Result<S::Object> {
        let found = self
            .main
            .get(namespace, name, &GetOptions::default())
            .await?;
        serde_json::from_slice(&found.body.into_bytes()).map_err(Error::Encode)
    }

    fn scale(&self, obj: &S::Object) -> serde_json::Value {
        let meta = obj.metadata();
        serde_json::json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": meta.name, "namespace": meta.namespace, "uid": meta.uid,
                "resourceVersion": meta.resource_version,
                "creationTimestamp": meta.creation_timestamp,
            },
            "spec": {"replicas": self.access.desired(obj)},
            "status": {"replicas": self.access.current(obj), "selector": self.access.selector(obj)},
        })
    }

    fn encoded(&self, obj: &S::Object, warnings: Vec<String>) -> Result<Encoded> {
        let body = serde_json::to_vec(&self.scale(obj)).map_err(Error::Encode)?;
        Ok(Encoded {
            body: body.into(),
            warnings,
            status: Default::default(),
        })
    }

    /// Writes `scale` (a Scale's JSON) to the workload: its replicas, guarded by its
    /// resourceVersion when it names one.
    async fn write(
        &self,
        namespace: &str,
        name: &str,
        scale: &serde_json::Value,
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let Some(replicas) = scale["spec"]["replicas"].as_i64() else {
            return Err(ApiError::invalid(
                "autoscaling",
                "Scale",
                name,
                &[FieldError::required("spec.replicas", "")],
            )
            .into());
        };
        let Ok(replicas) = i32::try_from(replicas) else {
            return Err(ApiError::invalid(
                "autoscaling",
                "Scale",
                name,
                &[FieldError::invalid_raw(
                    "spec.replicas",
                    replicas.to_string(),
                    "must be a 32-bit integer",
                )],
            )
            .into());
        };
        if replicas < 0 {
            return Err(ApiError::invalid(
                "autoscaling",
                "Scale",
                name,
                &[FieldError::negative("spec.replicas", i64::from(replicas))],
            )
            .into());
        }
        let given = scale["metadata"]["resourceVersion"]
            .as_str()
            .filter(|v| !v.is_empty());
        let mut obj = self.object(namespace, name).await?;
        if let Some(rv) = given
            && obj.metadata().resource_version.as_deref() != Some(rv)
        {
            return Err(
                ApiError::conflict(self.main.group_resource(), name, ApiError::MODIFIED).into(),
            );
        }
        // Admission sees the Scale (kind autoscaling/v1 Scale, subresource scale), as
        // upstream's: mutating plugins may change its replicas.
        let old_scale = self.scale(&obj);
        let mut new_scale = old_scale.clone();
        new_scale["spec"]["replicas"] = replicas.into();
        let admitted = self
            .main
            .admit_subresource_update(
                "scale",
                "Scale",
                Some(("autoscaling", "v1")),
                namespace,
                name,
                new_scale,
                old_scale,
                options,
            )
            .await?;
        let replicas = admitted["spec"]["replicas"]
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(replicas);
        self.access.set_desired(&mut obj, replicas);
        let body = serde_json::to_vec(&obj).map_err(Error::Encode)?;
        let written = self
            .main
            .update_target(Target::Scale, namespace, name, &body, options)
            .await?;
        let warnings = written.warnings;
        let obj: S::Object =
            serde_json::from_slice(&written.body.into_bytes()).map_err(Error::Encode)?;
        self.encoded(&obj, warnings)
    }
}

#[async_trait]
impl<S> RestStorage for ScaleRest<S>
where
    S: Strategy,
    S::Object: schemars::JsonSchema,
{
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<k8s_openapi::api::autoscaling::v1::Scale>()
    }

    async fn get(&self, namespace: &str, name: &str, _options: &GetOptions) -> Result<Encoded> {
        let obj = self.object(namespace, name).await?;
        self.encoded(&obj, Vec::new())
    }

    async fn update(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let scale: serde_json::Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the body is not a Scale: {e}")))?;
        self.write(namespace, name, &scale, options).await
    }

    async fn patch(
        &self,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        if patch_type == PatchType::Apply {
            return Err(ApiError::unsupported_media_type(&[
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
            ])
            .into());
        }
        let obj = self.object(namespace, name).await?;
        let mut doc = self.scale(&obj);
        crate::patch::apply(patch_type, None, &mut doc, body)?;
        self.write(namespace, name, &doc, options).await
    }
}
