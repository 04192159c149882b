//! `apiextensions.k8s.io/v1` CustomResourceDefinitions: defaulting, validation (names,
//! versions, structural schemas, subresources, printer columns, conversion) and the update
//! rules upstream applies.

use capstan_meta::validation::{dns1035_label, dns1123_subdomain};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionVersion,
};

/// The finalizer that holds a deleted CRD until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The printer column types upstream accepts.
const COLUMN_TYPES: [&str; 5] = ["integer", "number", "string", "boolean", "date"];
/// The printer column formats upstream accepts.
const COLUMN_FORMATS: [&str; 8] = [
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
    "password",
];

/// The strategy of CustomResourceDefinition.
#[derive(Debug, Default, Clone, Copy)]
pub struct CustomResourceDefinitionStrategy;

/// The version objects are stored in.
pub fn storage_version(crd: &CustomResourceDefinition) -> Option<&CustomResourceDefinitionVersion> {
    crd.spec.versions.iter().find(|v| v.storage)
}

/// Whether the CRD's `Established` condition is true.
pub fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Established" && c.status == "True")
}

impl Strategy for CustomResourceDefinitionStrategy {
    fn own_deletion_rules(&self) -> bool {
        true
    }

    /// Marked deleting: the `Terminating` condition is written with the deletion, as
    /// upstream's handler does, before its objects are removed.
    fn prepare_for_delete(&self, crd: &mut CustomResourceDefinition) {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionCondition;
        let status = crd.status.get_or_insert_with(Default::default);
        let conditions = status.conditions.get_or_insert_with(Vec::new);
        conditions.retain(|c| c.type_ != "Terminating");
        conditions.push(CustomResourceDefinitionCondition {
            type_: "Terminating".into(),
            status: "True".into(),
            reason: Some("InstanceDeletionPending".into()),
            message: Some(
                "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
                    .into(),
            ),
            last_transition_time: Some(capstan_meta::time::now()),
            ..Default::default()
        });
    }

    type Object = CustomResourceDefinition;

    fn descriptor(&self) -> ResourceDescriptor {
        ResourceDescriptor {
            group: "apiextensions.k8s.io".into(),
            version: "v1".into(),
            kind: "CustomResourceDefinition".into(),
            resource: "customresourcedefinitions".into(),
            singular: "customresourcedefinition".into(),
            short_names: vec!["crd".into(), "crds".into()],
            categories: vec!["api-extensions".into()],
            namespaced: false,
            verbs: capstan_meta::STANDARD_VERBS
                .iter()
                .map(|v| v.to_string())
                .collect(),
            ..Default::default()
        }
    }

    fn default(&self, crd: &mut CustomResourceDefinition) {
        let names = &mut crd.spec.names;
        if names.singular.as_deref().is_none_or(str::is_empty) {
            names.singular = Some(names.kind.to_lowercase());
        }
        if names.list_kind.as_deref().is_none_or(str::is_empty) && !names.kind.is_empty() {
            names.list_kind = Some(format!("{}List", names.kind));
        }
        let conversion = crd.spec.conversion.get_or_insert_with(Default::default);
        if conversion.strategy.is_empty() {
            conversion.strategy = "None".into();
        }
        if conversion.strategy == "Webhook"
            && let Some(webhook) = &mut conversion.webhook
            && let Some(service) = &mut webhook
                .client_config
                .as_mut()
                .and_then(|c| c.service.as_mut())
            && service.port.is_none()
        {
            service.port = Some(443);
        }
    }

    fn prepare_for_create(&self, crd: &mut CustomResourceDefinition) {
        crd.metadata.generation = Some(1);
        let stored = storage_version(crd).map(|v| v.name.clone());
        crd.status = Some(Default::default());
        if let Some(status) = &mut crd.status {
            status.stored_versions = stored.map(|v| vec![v]);
        }
        let finalizers = crd.metadata.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.into());
        }
    }

    fn prepare_for_update(
        &self,
        new: &mut CustomResourceDefinition,
        old: &CustomResourceDefinition,
    ) {
        new.status = old.status.clone();
        let before = old.metadata.generation.unwrap_or(1);
        new.metadata.generation = Some(if new.spec != old.spec {
            before + 1
        } else {
            before
        });
        if let Some(v) = storage_version(new).map(|v| v.name.clone()) {
            let status = new.status.get_or_insert_with(Default::default);
            let stored = status.stored_versions.get_or_insert_with(Vec::new);
            if !stored.contains(&v) {
                stored.push(v);
            }
        }
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut CustomResourceDefinition, from: &CustomResourceDefinition) {
        to.status = from.status.clone();
    }

    fn validate(&self, crd: &CustomResourceDefinition) -> FieldErrors {
        let mut errs = Vec::new();
        let name = crd.metadata.name.as_deref().unwrap_or("");
        let want = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
        if !name.is_empty() && name != want {
            errs.push(FieldError::invalid(
                "metadata.name",
                name,
                "must be spec.names.plural+\".\"+spec.group",
            ));
        }
        errs.extend(validate_spec(crd));
        errs.extend(validate_stored_versions(crd));
        errs
    }

    fn validate_update(
        &self,
        new: &CustomResourceDefinition,
        old: &CustomResourceDefinition,
    ) -> FieldErrors {
        let mut errs = self.validate(new);
        let immutable = |field: &str, a: &str, b: &str, errs: &mut FieldErrors| {
            if a != b {
                errs.push(FieldError::invalid(field, a, "field is immutable"));
            }
        };
        if established(old) {
            immutable("spec.scope", &new.spec.scope, &old.spec.scope, &mut errs);
            immutable(
                "spec.names.kind",
                &new.spec.names.kind,
                &old.spec.names.kind,
                &mut errs,
            );
        }
        immutable("spec.group", &new.spec.group, &old.spec.group, &mut errs);
        immutable(
            "spec.names.plural",
            &new.spec.names.plural,
            &old.spec.names.plural,
            &mut errs,
        );
        errs
    }
}

fn validate_spec(crd: &CustomResourceDefinition) -> FieldErrors {
    let spec = &crd.spec;
    let mut errs = Vec::new();
    if spec.group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else if let Some(e) = Some(dns1123_subdomain(&spec.group)).filter(|e| !e.is_empty()) {
        errs.push(FieldError::invalid("spec.group", &spec.group, e.join(",")));
    } else if !spec.group.contains('.') {
        errs.push(FieldError::invalid(
            "spec.group",
            &spec.group,
            "should be a domain with at least one dot",
        ));
    }
    match spec.scope.as_str() {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    if spec.versions.is_empty() {
        errs.push(FieldError::required("spec.versions", ""));
    }
    let mut seen = std::collections::HashSet::new();
    let mut unique = true;
    for (i, v) in spec.versions.iter().enumerate() {
        let path = format!("spec.versions[{i}]");
        unique &= seen.insert(v.name.as_str());
        let e = dns1035_label(&v.name);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.name"),
                &v.name,
                e.join(","),
            ));
        }
        errs.extend(validate_version(v, &path));
    }
    let shown = || serde_json::to_string(&spec.versions).unwrap_or_default();
    if !unique {
        errs.push(FieldError::invalid_raw(
            "spec.versions",
            shown(),
            "must contain unique version names",
        ));
    }
    if !spec.versions.is_empty() && spec.versions.iter().filter(|v| v.storage).count() != 1 {
        errs.push(FieldError::invalid_raw(
            "spec.versions",
            shown(),
            "must have exactly one version marked as storage version",
        ));
    }
    if spec.preserve_unknown_fields == Some(true) {
        errs.push(FieldError::invalid_raw(
            "spec.preserveUnknownFields",
            "true",
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    errs.extend(validate_names(&spec.names, "spec.names", true));
    if let Some(conversion) = &spec.conversion {
        errs.extend(validate_conversion(conversion));
    }
    errs
}

fn validate_version(v: &CustomResourceDefinitionVersion, path: &str) -> FieldErrors {
    let mut errs = Vec::new();
    match v
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
    {
        None => errs.push(FieldError::required(
            format!("{path}.schema.openAPIV3Schema"),
            "schemas are required",
        )),
        Some(schema) => errs.extend(crate::structural::check(
            schema,
            &format!("{path}.schema.openAPIV3Schema"),
        )),
    }
    if let Some(scale) = v.subresources.as_ref().and_then(|s| s.scale.as_ref()) {
        let sub = format!("{path}.subresources.scale");
        let under = |field: &str, value: &str, root: &str, errs: &mut FieldErrors| {
            if value.is_empty() {
                errs.push(FieldError::required(format!("{sub}.{field}"), ""));
            } else if !value.starts_with(&format!(".{root}")) {
                errs.push(FieldError::invalid(
                    format!("{sub}.{field}"),
                    value,
                    format!("should be a json path under .{root}"),
                ));
            }
        };
        under(
            "specReplicasPath",
            &scale.spec_replicas_path,
            "spec",
            &mut errs,
        );
        under(
            "statusReplicasPath",
            &scale.status_replicas_path,
            "status",
            &mut errs,
        );
        if let Some(selector) = &scale.label_selector_path
            && !selector.starts_with(".spec")
            && !selector.starts_with(".status")
        {
            errs.push(FieldError::invalid(
                format!("{sub}.labelSelectorPath"),
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    for (i, c) in v.additional_printer_columns.iter().flatten().enumerate() {
        let col = format!("{path}.additionalPrinterColumns[{i}]");
        if c.name.is_empty() {
            errs.push(FieldError::required(format!("{col}.name"), ""));
        }
        if c.type_.is_empty() {
            errs.push(FieldError::required(
                format!("{col}.type"),
                format!("must be one of {}", COLUMN_TYPES.join(", ")),
            ));
        } else if !COLUMN_TYPES.contains(&c.type_.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{col}.type"),
                &c.type_,
                &COLUMN_TYPES,
            ));
        }
        if let Some(format) = &c.format
            && !format.is_empty()
            && !COLUMN_FORMATS.contains(&format.as_str())
        {
            errs.push(FieldError::not_supported(
                format!("{col}.format"),
                format,
                &COLUMN_FORMATS,
            ));
        }
        if c.json_path.is_empty() {
            errs.push(FieldError::required(format!("{col}.jsonPath"), ""));
        } else if let Err(e) = capstan_meta::columns::JsonPath::parse(&c.json_path) {
            errs.push(FieldError::invalid(
                format!("{col}.jsonPath"),
                &c.json_path,
                e,
            ));
        }
    }
    errs
}

/// The names of a CRD (`spec.names`, or `status.acceptedNames` without the required ones).
pub fn validate_names(
    names: &CustomResourceDefinitionNames,
    path: &str,
    spec: bool,
) -> FieldErrors {
    let mut errs = Vec::new();
    let label = |field: &str, value: &str, errs: &mut FieldErrors| {
        let e = dns1035_label(value);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                value,
                e.join(","),
            ));
        }
    };
    let singular = names.singular.as_deref().unwrap_or("");
    let list_kind = names.list_kind.as_deref().unwrap_or("");
    if spec {
        for (field, value) in [
            ("plural", names.plural.as_str()),
            ("singular", singular),
            ("kind", names.kind.as_str()),
            ("listKind", list_kind),
        ] {
            if value.is_empty() {
                errs.push(FieldError::required(format!("{path}.{field}"), ""));
            }
        }
    }
    if !names.plural.is_empty() {
        label("plural", &names.plural, &mut errs);
    }
    if !singular.is_empty() {
        label("singular", singular, &mut errs);
    }
    if !names.kind.is_empty() {
        let e = dns1035_label(&names.kind.to_lowercase());
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.kind"),
                &names.kind,
                "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
            ));
        }
    }
    if !list_kind.is_empty() {
        if !dns1035_label(&list_kind.to_lowercase()).is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.listKind"),
                list_kind,
                "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
            ));
        }
        if list_kind == names.kind {
            errs.push(FieldError::invalid(
                format!("{path}.listKind"),
                list_kind,
                "kind and listKind may not be the same or parsing become ambiguous",
            ));
        }
    }
    for (i, short) in names.short_names.iter().flatten().enumerate() {
        let e = dns1035_label(short);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.shortNames[{i}]"),
                short,
                e.join(","),
            ));
        }
    }
    for (i, category) in names.categories.iter().flatten().enumerate() {
        let e = dns1035_label(category);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.categories[{i}]"),
                category,
                e.join(","),
            ));
        }
    }
    errs
}

fn validate_conversion(
    conversion: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceConversion,
) -> FieldErrors {
    let mut errs = Vec::new();
    match conversion.strategy.as_str() {
        "None" => {
            if conversion.webhook.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.conversion.webhook",
                    "should not be set when strategy is not set to Webhook",
                ));
            }
        }
        "Webhook" => {
            let Some(webhook) = &conversion.webhook else {
                errs.push(FieldError::required(
                    "spec.conversion.webhook",
                    "must not be empty if spec.conversion.strategy is set to Webhook",
                ));
                return errs;
            };
            let review = &webhook.conversion_review_versions;
            if review.is_empty() {
                errs.push(FieldError::required(
                    "spec.conversion.webhook.conversionReviewVersions",
                    "must include at least one of v1, v1beta1",
                ));
            } else if !review.iter().any(|v| v == "v1" || v == "v1beta1") {
                errs.push(FieldError::invalid_raw(
                    "spec.conversion.webhook.conversionReviewVersions",
                    format!("{review:?}"),
                    "must include at least one of v1, v1beta1",
                ));
            }
            match &webhook.client_config {
                Some(cc) if cc.url.is_some() == cc.service.is_some() => {
                    errs.push(FieldError::required(
                        "spec.conversion.webhook.clientConfig",
                        "exactly one of url or service is required",
                    ));
                }
                Some(cc) => {
                    if let Some(url) = &cc.url
                        && !url.starts_with("https://")
                    {
                        errs.push(FieldError::invalid(
                            "spec.conversion.webhook.clientConfig.url",
                            url,
                            "'https' is the only allowed URL scheme",
                        ));
                    }
                }
                None => errs.push(FieldError::required(
                    "spec.conversion.webhook.clientConfig",
                    "",
                )),
            }
        }
        "" => errs.push(FieldError::required("spec.conversion.strategy", "")),
        other => errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            other,
            &["None", "Webhook"],
        )),
    }
    errs
}

fn validate_stored_versions(crd: &CustomResourceDefinition) -> FieldErrors {
    let stored: Vec<String> = crd
        .status
        .as_ref()
        .and_then(|s| s.stored_versions.clone())
        .unwrap_or_default();
    let mut errs = Vec::new();
    if stored.is_empty() {
        errs.push(FieldError::invalid_raw(
            "status.storedVersions",
            "[]",
            "must have at least one stored version",
        ));
        return errs;
    }
    for v in &crd.spec.versions {
        if v.storage && !stored.contains(&v.name) {
            errs.push(FieldError::invalid_raw(
                "status.storedVersions",
                format!("{stored:?}"),
                format!("must have the storage version {}", v.name),
            ));
        }
    }
    for (i, s) in stored.iter().enumerate() {
        if !crd.spec.versions.iter().any(|v| &v.name == s) {
            errs.push(FieldError::invalid(
                format!("status.storedVersions[{i}]"),
                s,
                "must appear in spec.versions",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn crd(doc: Value) -> CustomResourceDefinition {
        let mut crd: CustomResourceDefinition = serde_json::from_value(doc).unwrap();
        let s = CustomResourceDefinitionStrategy;
        s.default(&mut crd);
        s.prepare_for_create(&mut crd);
        crd
    }

    fn shop() -> Value {
        json!({
            "metadata": {"name": "shops.example.com"},
            "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"plural": "shops", "kind": "Shop"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                              "schema": {"openAPIV3Schema": {"type": "object"}}}]
            }
        })
    }

    fn messages(errs: FieldErrors) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaults_and_status_at_create() {
        let c = crd(shop());
        assert_eq!(c.spec.names.singular.as_deref(), Some("shop"));
        assert_eq!(c.spec.names.list_kind.as_deref(), Some("ShopList"));
        assert_eq!(c.spec.conversion.as_ref().unwrap().strategy, "None");
        assert_eq!(
            c.status.as_ref().unwrap().stored_versions.as_deref(),
            Some(&["v1".to_string()][..])
        );
        assert_eq!(
            c.metadata.finalizers.as_deref(),
            Some(&[CLEANUP_FINALIZER.to_string()][..])
        );
        assert!(CustomResourceDefinitionStrategy.validate(&c).is_empty());
    }

    #[test]
    fn bad_definitions_get_upstream_causes() {
        let mut doc = shop();
        doc["metadata"]["name"] = json!("shop.example.com");
        doc["spec"]["group"] = json!("example");
        doc["spec"]["scope"] = json!("Global");
        doc["spec"]["versions"][0]["schema"] = json!(null);
        doc["spec"]["versions"][0]["storage"] = json!(false);
        let c = crd(doc);
        let got = messages(CustomResourceDefinitionStrategy.validate(&c));
        assert_eq!(
            got[..4],
            [
                "metadata.name: Invalid value: \"shop.example.com\": must be spec.names.plural+\".\"+spec.group",
                "spec.group: Invalid value: \"example\": should be a domain with at least one dot",
                "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"",
                "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
            ]
        );
        assert!(
            got[4].starts_with("spec.versions: Invalid value: ")
                && got[4].ends_with("must have exactly one version marked as storage version"),
            "{got:?}"
        );
    }

    #[test]
    fn updates_keep_status_bump_generation_and_hold_names() {
        let old = crd(shop());
        let mut new = old.clone();
        new.spec.versions[0].name = "v2".into();
        new.spec.names.plural = "stores".into();
        new.status = None;
        CustomResourceDefinitionStrategy.prepare_for_update(&mut new, &old);
        assert_eq!(new.metadata.generation, Some(2));
        assert_eq!(
            new.status.as_ref().unwrap().stored_versions.as_deref(),
            Some(&["v1".to_string(), "v2".to_string()][..])
        );
        let got = messages(CustomResourceDefinitionStrategy.validate_update(&new, &old));
        assert!(
            got.contains(
                &"status.storedVersions[0]: Invalid value: \"v1\": must appear in spec.versions"
                    .to_string()
            ),
            "{got:?}"
        );
        assert!(
            got.contains(
                &"spec.names.plural: Invalid value: \"stores\": field is immutable".to_string()
            ),
            "{got:?}"
        );
    }
}
