//! The custom resources served now. A CRD's resources are installed when its names are
//! accepted and removed when it goes; readers (request routing, discovery) see one
//! consistent set, swapped whole, and are told when it changes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use capstan_client::ServiceResolver;
use capstan_meta::columns::{Column, JsonPath};
use capstan_meta::status::Reason;
use capstan_meta::v1::StatusDetails;
use capstan_meta::{ApiError, ResourceDescriptor, STANDARD_VERBS};
use capstan_registry::converted::{ConvertedRest, ServedStrategy};
use capstan_registry::hooks::CreateHook;
use capstan_registry::subresources::{PartRest, ScaleRest};
use capstan_registry::{GenericStore, Registry, RestStorage};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion,
};
use serde_json::Value;

use crate::conversion::{Webhook, converter};
use crate::custom::{CustomObject, CustomScale, CustomStrategy, ScalePaths};
use crate::definition::storage_version;
use crate::schema::Schema;

/// One CRD's served resources.
struct Installed {
    /// The CRD's spec when installed (a status change does not reinstall).
    spec: Value,
    /// The storage version's store: where every version's objects live.
    store: Arc<GenericStore<CustomStrategy>>,
    /// Every served version's resource and subresources, versions by priority.
    routes: Vec<Arc<dyn RestStorage>>,
    /// Set once the CRD is being deleted: creates are refused from then on.
    terminating: Arc<AtomicBool>,
}

/// Refuses creates while the CRD terminates, as upstream's handler does.
struct RefusedWhileTerminating {
    terminating: Arc<AtomicBool>,
    group: String,
    resource: String,
}

#[async_trait::async_trait]
impl CreateHook<CustomObject> for RefusedWhileTerminating {
    async fn on_create(
        &self,
        _: &mut CustomObject,
        _: &capstan_auth::UserInfo,
    ) -> capstan_registry::Result<()> {
        if !self.terminating.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut err = ApiError::new(
            Reason::MethodNotAllowed,
            "create not allowed while custom resource definition is terminating",
        );
        err.details = Some(Box::new(StatusDetails {
            group: Some(self.group.clone()),
            kind: Some(self.resource.clone()),
            ..Default::default()
        }));
        Err(err.into())
    }
}

/// The set readers see.
#[derive(Default)]
struct Snapshot {
    /// Every route, CRDs by name, versions by priority (discovery's order).
    ordered: Vec<Arc<dyn RestStorage>>,
    /// Positions in `ordered` by plural name: every custom resource request looks one up.
    by_name: HashMap<String, Vec<usize>>,
}

/// The custom resources served now.
pub struct CustomResources {
    registry: Arc<Registry>,
    /// Where conversion webhooks named by a `service` reference are.
    services: Option<Arc<dyn ServiceResolver>>,
    installed: std::sync::Mutex<HashMap<String, Installed>>,
    snapshot: RwLock<Arc<Snapshot>>,
    changes: tokio::sync::watch::Sender<u64>,
}

/// The resource descriptor of one version of `crd`.
pub fn descriptor(
    crd: &CustomResourceDefinition,
    version: &CustomResourceDefinitionVersion,
) -> ResourceDescriptor {
    let names = &crd.spec.names;
    ResourceDescriptor {
        group: crd.spec.group.clone(),
        version: version.name.clone(),
        kind: names.kind.clone(),
        resource: names.plural.clone(),
        subresource: String::new(),
        singular: names.singular.clone().unwrap_or_default(),
        short_names: names.short_names.clone().unwrap_or_default(),
        categories: names.categories.clone().unwrap_or_default(),
        namespaced: crd.spec.scope == "Namespaced",
        verbs: STANDARD_VERBS.iter().map(|v| v.to_string()).collect(),
        // Upstream's custom resources refuse other labels with "field label not supported".
        field_labels: capstan_meta::FieldLabels {
            fields: version
                .selectable_fields
                .iter()
                .flatten()
                .map(|f| f.json_path.trim_start_matches('.').to_string())
                .collect(),
            ..capstan_meta::FieldLabels::of_kind(&[])
        },
        columns: columns(version),
        custom: true,
        response_group_version: None,
        deprecation: version.deprecated.unwrap_or(false).then(|| {
            version.deprecation_warning.clone().unwrap_or_else(|| {
                format!(
                    "{}/{} {} is deprecated",
                    crd.spec.group, version.name, names.kind
                )
            })
        }),
    }
}

/// The Table columns of `version`: Name, then its printer columns, or Age when it has none
/// (as upstream prints custom objects).
fn columns(version: &CustomResourceDefinitionVersion) -> Vec<Column> {
    let mut out = vec![Column::name()];
    let declared = version
        .additional_printer_columns
        .as_deref()
        .unwrap_or_default();
    if declared.is_empty() {
        if let Ok(path) = JsonPath::parse(".metadata.creationTimestamp") {
            out.push(Column::at_path(
                "Age".into(),
                "date".into(),
                String::new(),
                "When the object was created.".into(),
                0,
                path,
            ));
        }
        return out;
    }
    for c in declared {
        // The CRD's validation refused paths that do not parse.
        let Ok(path) = JsonPath::parse(&c.json_path) else {
            continue;
        };
        out.push(Column::at_path(
            c.name.clone(),
            c.type_.clone(),
            c.format.clone().unwrap_or_default(),
            c.description.clone().unwrap_or_default(),
            c.priority.unwrap_or(0),
            path,
        ));
    }
    out
}

/// The sort key of a version name in upstream's order: `v2` before `v1` before `v1beta2`
/// before `v1beta1` before `v1alpha1`, then names that are not Kubernetes versions,
/// alphabetically.
fn version_priority(name: &str) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    let parsed = name.strip_prefix('v').and_then(|rest| {
        let split = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..split].parse().ok()?;
        let tail = &rest[split..];
        let (level, minor) = if tail.is_empty() {
            (0, 0)
        } else if let Some(n) = tail.strip_prefix("beta") {
            (1, n.parse().ok()?)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (2, n.parse().ok()?)
        } else {
            return None;
        };
        Some((level, major, minor))
    });
    match parsed {
        Some((level, major, minor)) => (
            level,
            std::cmp::Reverse(major),
            std::cmp::Reverse(minor),
            String::new(),
        ),
        None => (
            3,
            std::cmp::Reverse(0),
            std::cmp::Reverse(0),
            name.to_string(),
        ),
    }
}

/// The OpenAPI description of `version`'s objects: its schema with the type meta and
/// upstream's ObjectMeta, named as upstream names it (`com.example.v1.Shop`).
pub fn openapi_schema(
    crd: &CustomResourceDefinition,
    version: &CustomResourceDefinitionVersion,
) -> impl Fn(&mut schemars::SchemaGenerator) -> schemars::Schema + Send + Sync + 'static {
    let reversed: Vec<&str> = crd.spec.group.split('.').rev().collect();
    let name = format!(
        "{}.{}.{}",
        reversed.join("."),
        version.name,
        crd.spec.names.kind
    );
    let body = version
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or_else(|| serde_json::json!({"type": "object"}));
    move |generator| {
        let meta = generator.subschema_for::<capstan_meta::v1::ObjectMeta>();
        let mut doc = body.clone();
        if !doc["properties"].is_object() {
            doc["properties"] = serde_json::json!({});
        }
        doc["properties"]["apiVersion"] = serde_json::json!({
            "description": "APIVersion defines the versioned schema of this representation of an object.",
            "type": "string"
        });
        doc["properties"]["kind"] = serde_json::json!({
            "description": "Kind is a string value representing the REST resource this object represents.",
            "type": "string"
        });
        doc["properties"]["metadata"] = meta.to_value();
        generator.definitions_mut().insert(name.clone(), doc);
        let path = generator
            .settings()
            .definitions_path
            .trim_end_matches('/')
            .to_string();
        let path = if path.starts_with('#') {
            path
        } else {
            format!("#{path}")
        };
        schemars::Schema::try_from(serde_json::json!({"$ref": format!("{path}/{name}")}))
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for CustomResources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let installed = self.installed.lock().unwrap_or_else(|e| e.into_inner());
        let mut names: Vec<&String> = installed.keys().collect();
        names.sort();
        f.debug_struct("CustomResources")
            .field("served", &names)
            .finish_non_exhaustive()
    }
}

impl CustomResources {
    /// No custom resources yet; stores are made by `registry`.
    pub fn new(registry: Arc<Registry>) -> Self {
        Self {
            registry,
            services: None,
            installed: Default::default(),
            snapshot: Default::default(),
            changes: tokio::sync::watch::channel(0).0,
        }
    }

    /// Conversion webhooks named by a `service` reference are reached where `services`
    /// resolves them (without it, calling them fails).
    pub fn with_services(mut self, services: Arc<dyn ServiceResolver>) -> Self {
        self.services = Some(services);
        self
    }

    /// The resource or subresource served at `group`/`version`/`resource`/`subresource`.
    pub fn get(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
    ) -> Option<Arc<dyn RestStorage>> {
        let snapshot = self.snapshot();
        snapshot
            .by_name
            .get(resource)?
            .iter()
            .map(|&i| &snapshot.ordered[i])
            .find(|r| {
                let d = r.descriptor();
                d.group == group && d.version == version && d.subresource == subresource
            })
            .cloned()
    }

    /// Every served resource and subresource, CRDs by name, versions by priority.
    pub fn resources_and_subresources(&self) -> Vec<Arc<dyn RestStorage>> {
        self.snapshot().ordered.clone()
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The store of every served CRD (its storage version's): every custom object once.
    pub fn stores(&self) -> Vec<Arc<dyn RestStorage>> {
        self.installed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|i| i.store.clone() as Arc<dyn RestStorage>)
            .collect()
    }

    /// Ticks whenever the served set changes.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// How many times the served set has changed: what is built from it (OpenAPI) is
    /// current while this stays the same.
    pub fn generation(&self) -> u64 {
        *self.changes.borrow()
    }

    /// The store holding `crd_name`'s objects, when it is served.
    pub fn store(&self, crd_name: &str) -> Option<Arc<GenericStore<CustomStrategy>>> {
        self.installed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(crd_name)
            .map(|i| i.store.clone())
    }

    /// Serves `crd`'s served versions (replacing what an older spec of it served); a spec
    /// already installed changes nothing.
    pub fn install(&self, crd: &CustomResourceDefinition) {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let spec = serde_json::to_value(&crd.spec).unwrap_or_default();
        let mut installed = self.installed.lock().unwrap_or_else(|e| e.into_inner());
        if installed.get(&name).is_some_and(|i| i.spec == spec) {
            return;
        }
        let Some(storage) = storage_version(crd) else {
            return;
        };
        let Some(stored_schema) = storage
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        else {
            return;
        };
        let has_status = |v: &CustomResourceDefinitionVersion| {
            v.subresources.as_ref().is_some_and(|s| s.status.is_some())
        };
        let stored_d = descriptor(crd, storage);
        let strategy = CustomStrategy::new(
            stored_d.clone(),
            Arc::new(Schema::compile(stored_schema)),
            has_status(storage),
        );
        // Keys as upstream's: `/registry/<group>/<plural>/...`.
        let prefix = format!(
            "{}/{}",
            self.registry.config().prefix.trim_end_matches('/'),
            crd.spec.group
        );
        let terminating = Arc::new(AtomicBool::new(false));
        let merge =
            crate::fields::merge_schema(&stored_d.api_version(), &stored_d.kind, stored_schema);
        let store = Arc::new(
            self.registry
                .build_custom_store(strategy, &prefix)
                .with_field_schema(Arc::new(merge))
                .with_openapi_schema(openapi_schema(crd, storage))
                .with_create_hook(Arc::new(RefusedWhileTerminating {
                    terminating: terminating.clone(),
                    group: crd.spec.group.clone(),
                    resource: crd.spec.names.plural.clone(),
                })),
        );
        let status_store: Arc<dyn RestStorage> = Arc::new(PartRest::status(store.clone()));
        let webhook = Webhook::of(crd, self.services.clone());
        let mut routes: Vec<Arc<dyn RestStorage>> = Vec::new();
        // Discovery lists versions by upstream's priority (GA, then beta, then alpha, newest
        // first): the first is the group's preferred version.
        let mut versions: Vec<&CustomResourceDefinitionVersion> =
            crd.spec.versions.iter().filter(|v| v.served).collect();
        versions.sort_by_key(|v| version_priority(&v.name));
        for version in versions {
            let d = descriptor(crd, version);
            let status_d = d.subresource("status", &d.kind, &["get", "patch", "update"]);
            if version.name == storage.name {
                routes.push(store.clone());
                if has_status(version) {
                    routes.push(status_store.clone());
                }
            } else {
                let to_stored = converter(crd, &webhook, stored_d.api_version());
                let to_served = converter(crd, &webhook, d.api_version());
                // Writes in this version are judged by this version's schema and rules.
                let own = version
                    .schema
                    .as_ref()
                    .and_then(|s| s.open_api_v3_schema.as_ref())
                    .map(|schema| {
                        CustomStrategy::new(
                            d.clone(),
                            Arc::new(Schema::compile(schema)),
                            has_status(version),
                        )
                    });
                let mut rest = ConvertedRest::new(
                    d.clone(),
                    store.clone(),
                    to_stored.clone(),
                    to_served.clone(),
                    openapi_schema(crd, version),
                );
                if let Some(own) = &own {
                    rest = rest.with_served_writes(Arc::new(ServedStrategy::resource(own.clone())));
                }
                routes.push(Arc::new(rest));
                if has_status(version) && has_status(storage) {
                    let mut rest = ConvertedRest::new(
                        status_d,
                        status_store.clone(),
                        to_stored,
                        to_served,
                        openapi_schema(crd, version),
                    );
                    if let Some(own) = own {
                        rest = rest.with_served_writes(Arc::new(ServedStrategy::status(own)));
                    }
                    routes.push(Arc::new(rest));
                }
            }
            if let Some(scale) = version.subresources.as_ref().and_then(|s| s.scale.as_ref()) {
                let access = CustomScale(ScalePaths {
                    spec_replicas: scale.spec_replicas_path.clone(),
                    status_replicas: scale.status_replicas_path.clone(),
                    label_selector: scale.label_selector_path.clone(),
                });
                let rest = ScaleRest::with_access(store.clone(), Arc::new(access))
                    .in_version(&version.name);
                routes.push(Arc::new(rest));
            }
        }
        for route in &routes {
            route.on_served();
        }
        installed.insert(
            name,
            Installed {
                spec,
                store,
                routes,
                terminating,
            },
        );
        self.publish(&installed);
    }

    /// Refuses creates of `crd_name`'s objects from now on: the CRD is being deleted.
    pub fn terminate(&self, crd_name: &str) {
        if let Some(installed) = self
            .installed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(crd_name)
        {
            installed.terminating.store(true, Ordering::Release);
        }
    }

    /// Stops serving `crd_name`'s resources.
    pub fn remove(&self, crd_name: &str) {
        let mut installed = self.installed.lock().unwrap_or_else(|e| e.into_inner());
        if installed.remove(crd_name).is_some() {
            self.publish(&installed);
        }
    }

    fn publish(&self, installed: &HashMap<String, Installed>) {
        let mut names: Vec<&String> = installed.keys().collect();
        names.sort();
        let mut snapshot = Snapshot::default();
        for storage in names.into_iter().flat_map(|n| &installed[n].routes) {
            snapshot
                .by_name
                .entry(storage.descriptor().resource.clone())
                .or_default()
                .push(snapshot.ordered.len());
            snapshot.ordered.push(storage.clone());
        }
        *self.snapshot.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
        self.changes.send_modify(|n| *n += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_as_upstream_prefers_them() {
        let mut names = [
            "v1alpha1", "foo", "v1beta1", "v2", "v1", "v1beta2", "v10", "bar",
        ];
        names.sort_by_key(|n| version_priority(n));
        assert_eq!(
            names,
            [
                "v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "bar", "foo"
            ]
        );
    }
}
