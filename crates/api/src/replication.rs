//! The core group's pod templates and ReplicationControllers (with `scale`).

use capstan_meta::{FieldError, FieldErrors, FieldLabels, ResourceDescriptor, Strategy};
use k8s_openapi::api::core::v1::{PodTemplate, ReplicationController};
use serde_json::json;

use crate::apps::{Scalable, non_negative};
use crate::describe::Names;
use crate::pod::{default_template, validate_template};

/// The strategy of PodTemplate: a pod template, defaulted and validated as a pod's.
#[derive(Debug, Default, Clone, Copy)]
pub struct PodTemplateStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

impl Strategy for PodTemplateStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = PodTemplate;

    fn warnings(&self, new: &PodTemplate, _old: Option<&PodTemplate>) -> Vec<String> {
        crate::warnings::template_warnings(new.template.as_ref(), "template.")
    }

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "",
            kind: "PodTemplate",
            resource: "podtemplates",
            short_names: &[],
            namespaced: true,
        }
        .v1()
    }

    fn default(&self, t: &mut PodTemplate) {
        if let Some(template) = t.template.as_mut() {
            default_template(template);
            // Written as `metadata: {}` when empty, as upstream's struct field is.
            template.metadata.get_or_insert_with(Default::default);
        }
    }

    fn prepare_for_create(&self, t: &mut PodTemplate) {
        t.metadata.generation = Some(1);
    }

    fn prepare_for_update(&self, new: &mut PodTemplate, old: &PodTemplate) {
        crate::apps::bump_generation(
            &mut new.metadata,
            &old.metadata,
            new.template != old.template,
        );
    }

    fn validate(&self, t: &PodTemplate) -> FieldErrors {
        validate_template(t.template.as_ref(), "template", self.allow_privileged)
    }

    fn validate_update(&self, new: &PodTemplate, _old: &PodTemplate) -> FieldErrors {
        self.validate(new)
    }
}

/// The strategy of ReplicationController: the selector defaults to the template's labels
/// (and the labels to the template's), and must match the template; it may change.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReplicationControllerStrategy {
    /// Whether templates may have privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
}

impl Strategy for ReplicationControllerStrategy {
    fn orphans_by_default(&self) -> bool {
        true
    }

    type Object = ReplicationController;

    fn warnings(
        &self,
        new: &ReplicationController,
        old: Option<&ReplicationController>,
    ) -> Vec<String> {
        // On update, only when the spec changed (its generation moved), as upstream.
        if old.is_some_and(|old| old.metadata.generation == new.metadata.generation) {
            return Vec::new();
        }
        crate::warnings::template_warnings(
            new.spec.as_ref().and_then(|s| s.template.as_ref()),
            "spec.template.",
        )
    }

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "",
            kind: "ReplicationController",
            resource: "replicationcontrollers",
            short_names: &["rc"],
            namespaced: true,
        }
        .v1_in_all();
        d.field_labels = FieldLabels::of_kind(&["status.replicas"]);
        d
    }

    fn field(&self, rc: &ReplicationController, field: &str) -> Option<String> {
        let replicas = rc.status.as_ref().map_or(0, |s| s.replicas);
        (field == "status.replicas").then(|| replicas.to_string())
    }

    fn default(&self, rc: &mut ReplicationController) {
        let template_labels = rc
            .spec
            .as_ref()
            .and_then(|s| s.template.as_ref())
            .and_then(|t| t.metadata.as_ref())
            .and_then(|m| m.labels.clone())
            .unwrap_or_default();
        let spec = rc.spec.get_or_insert_with(Default::default);
        if spec.selector.as_ref().is_none_or(|s| s.is_empty()) && !template_labels.is_empty() {
            spec.selector = Some(template_labels.clone());
        }
        if rc.metadata.labels.as_ref().is_none_or(|l| l.is_empty()) && !template_labels.is_empty() {
            rc.metadata.labels = Some(template_labels);
        }
        spec.replicas.get_or_insert(1);
        if let Some(t) = spec.template.as_mut() {
            default_template(t);
        }
    }

    fn prepare_for_create(&self, rc: &mut ReplicationController) {
        rc.metadata.generation = Some(1);
        rc.status = Some(Default::default());
    }

    fn prepare_for_update(&self, new: &mut ReplicationController, old: &ReplicationController) {
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, rc: &ReplicationController) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = rc.spec.clone().unwrap_or_default();
        let selector = spec.selector.clone().unwrap_or_default();
        if selector.is_empty() {
            errs.push(FieldError::required("spec.selector", ""));
        } else {
            errs.extend(capstan_meta::validation::labels("spec.selector", &selector));
        }
        errs.extend(validate_template(
            spec.template.as_ref(),
            "spec.template",
            self.allow_privileged,
        ));
        if let Some(template) = &spec.template {
            let labels = template
                .metadata
                .as_ref()
                .and_then(|m| m.labels.clone())
                .unwrap_or_default();
            if !selector.is_empty() && !selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                errs.push(FieldError::invalid_raw(
                    "spec.template.metadata.labels",
                    json!(labels).to_string(),
                    "`selector` does not match template `labels`",
                ));
            }
            if let Some(policy) = template
                .spec
                .as_ref()
                .and_then(|s| s.restart_policy.as_deref())
                && policy != "Always"
            {
                errs.push(FieldError::not_supported(
                    "spec.template.spec.restartPolicy",
                    policy,
                    &["Always"],
                ));
            }
        }
        non_negative(&mut errs, "spec.replicas", spec.replicas);
        non_negative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
        errs
    }

    fn validate_update(
        &self,
        new: &ReplicationController,
        _old: &ReplicationController,
    ) -> FieldErrors {
        self.validate(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut ReplicationController, from: &ReplicationController) {
        to.status = from.status.clone();
    }
}

impl Scalable for ReplicationController {
    fn desired(&self) -> i32 {
        self.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
    }

    fn set_desired(&mut self, replicas: i32) {
        self.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
    }

    fn current(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.replicas)
    }

    fn selector(&self) -> String {
        let selector = self
            .spec
            .as_ref()
            .and_then(|s| s.selector.clone())
            .unwrap_or_default();
        selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RCS: ReplicationControllerStrategy = ReplicationControllerStrategy {
        allow_privileged: false,
    };

    #[test]
    fn the_selector_and_labels_default_to_the_templates() {
        let mut rc: ReplicationController = serde_json::from_value(json!({
            "metadata": {"name": "nginx"},
            "spec": {"template": {"metadata": {"labels": {"app": "nginx"}},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        }))
        .unwrap();
        RCS.default(&mut rc);
        assert_eq!(
            rc.spec.as_ref().unwrap().selector.as_ref().unwrap()["app"],
            "nginx"
        );
        assert_eq!(rc.metadata.labels.as_ref().unwrap()["app"], "nginx");
        assert!(RCS.validate(&rc).is_empty(), "{:?}", RCS.validate(&rc));
        assert_eq!(rc.selector(), "app=nginx");
        rc.spec.as_mut().unwrap().selector = Some([("app".into(), "other".into())].into());
        let fields: Vec<String> = RCS.validate(&rc).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["spec.template.metadata.labels"]);
    }
}
