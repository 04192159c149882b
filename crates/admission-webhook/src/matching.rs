//! Which requests a webhook's rules cover.

use std::collections::BTreeMap;

use capstan_admission::{Attributes, Form, Lister, Operation};
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::admissionregistration::v1::RuleWithOperations;
use serde_json::Value;

/// One rule: operations, groups, versions, resources (with subresources) and scope.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    operations: Vec<String>,
    groups: Vec<String>,
    versions: Vec<String>,
    resources: Vec<String>,
    scope: Scope,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Any,
    Cluster,
    Namespaced,
}

fn covers(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

impl Rule {
    pub(crate) fn new(rule: &RuleWithOperations) -> Self {
        let list = |l: &Option<Vec<String>>| l.clone().unwrap_or_default();
        Self {
            operations: list(&rule.operations),
            groups: list(&rule.api_groups),
            versions: list(&rule.api_versions),
            resources: list(&rule.resources),
            scope: match rule.scope.as_deref() {
                Some("Cluster") => Scope::Cluster,
                Some("Namespaced") => Scope::Namespaced,
                _ => Scope::Any,
            },
        }
    }

    /// Whether the rule may cover `operation` on this resource and subresource (whatever
    /// the version and scope): the cheap test that spares most requests the rest.
    pub(crate) fn may_match(
        &self,
        operation: Operation,
        group: &str,
        resource: &str,
        subresource: &str,
    ) -> bool {
        covers(&self.operations, operation.as_str())
            && covers(&self.groups, group)
            && self
                .resources
                .iter()
                .any(|r| resource_matches(r, resource, subresource))
    }

    /// Whether the rule covers `operation` on this resource and subresource, in a
    /// namespace (`namespaced`) or not.
    pub(crate) fn matches(
        &self,
        operation: Operation,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
        namespaced: bool,
    ) -> bool {
        covers(&self.operations, operation.as_str())
            && covers(&self.groups, group)
            && covers(&self.versions, version)
            && self
                .resources
                .iter()
                .any(|r| resource_matches(r, resource, subresource))
            && match self.scope {
                Scope::Any => true,
                Scope::Cluster => !namespaced,
                Scope::Namespaced => namespaced,
            }
    }
}

impl Rule {
    /// [`Rule::matches`] for the request seen in `form`.
    pub(crate) fn matches_form(&self, operation: Operation, form: &Form, namespaced: bool) -> bool {
        self.matches(
            operation,
            &form.group,
            &form.version,
            &form.resource,
            &form.subresource,
            namespaced,
        )
    }
}

/// Whether two forms are the same group, version and resource.
fn same_version(one: &Form, other: &Form) -> bool {
    one.group == other.group && one.version == other.version && one.resource == other.resource
}

/// The form in which `covers` holds for the request: the form the client used, else (with
/// `equivalent`, upstream's `matchPolicy: Equivalent`) the first other form the resource is
/// served in.
pub(crate) fn invocation(
    a: &Attributes,
    equivalent: bool,
    covers: impl Fn(&Form) -> bool,
) -> Option<Form> {
    let requested = a.requested();
    if covers(&requested) {
        return Some(requested);
    }
    if !equivalent {
        return None;
    }
    a.forms
        .as_ref()?
        .served(&a.subresource)
        .into_iter()
        .find(|form| !same_version(form, &requested) && covers(form))
}

/// A request as one webhook or policy sees it: in the form its rules named, with the
/// objects converted to that form when it is not the stored one.
pub(crate) struct Versioned {
    /// The form.
    pub form: Form,
    /// The objects in `form`, when it is not the stored form (else the attributes' own).
    converted: Option<(Option<Value>, Option<Value>)>,
}

impl Versioned {
    /// `a` in `form`: its objects converted when `form` is not the stored form.
    pub(crate) async fn of(a: &Attributes, form: Form) -> Result<Self, ApiError> {
        let converted = match &a.forms {
            Some(forms) if !same_version(&form, &a.stored_form()) => {
                let object = match &a.object {
                    Some(o) => Some(forms.to_form(o.clone(), &form).await?),
                    None => None,
                };
                let old = match &a.old_object {
                    Some(o) => Some(forms.to_form(o.clone(), &form).await?),
                    None => None,
                };
                Some((object, old))
            }
            _ => None,
        };
        Ok(Self { form, converted })
    }

    /// `a` as admission has it: the stored form.
    #[cfg(test)]
    pub(crate) fn stored(a: &Attributes) -> Self {
        Self {
            form: a.stored_form(),
            converted: None,
        }
    }

    /// Whether the objects are the attributes' own (the stored form).
    pub(crate) fn is_stored(&self) -> bool {
        self.converted.is_none()
    }

    /// The new object in this form.
    pub(crate) fn object<'a>(&'a self, a: &'a Attributes) -> Option<&'a Value> {
        match &self.converted {
            Some((object, _)) => object.as_ref(),
            None => a.object.as_ref(),
        }
    }

    /// The old object in this form.
    pub(crate) fn old_object<'a>(&'a self, a: &'a Attributes) -> Option<&'a Value> {
        match &self.converted {
            Some((_, old)) => old.as_ref(),
            None => a.old_object.as_ref(),
        }
    }

    /// The new object in this form, taken (converted ones only).
    pub(crate) fn take_object(&mut self) -> Option<Value> {
        self.converted
            .as_mut()
            .and_then(|(object, _)| object.take())
    }
}

/// `*/*` is everything; `*` and `name` the resources themselves; `name/sub`, `name/*` and
/// `*/sub` subresources.
fn resource_matches(entry: &str, resource: &str, subresource: &str) -> bool {
    match entry.split_once('/') {
        None => subresource.is_empty() && (entry == "*" || entry == resource),
        Some(("*", "*")) => true,
        Some((res, sub)) => {
            !subresource.is_empty()
                && (res == "*" || res == resource)
                && (sub == "*" || sub == subresource)
        }
    }
}

/// Whether the request is about an object in a namespace (a Namespace itself is not).
pub(crate) fn namespaced(a: &Attributes) -> bool {
    let is_namespace = a.resource.group.is_empty() && a.resource.resource == "namespaces";
    !a.namespace.is_empty() && !is_namespace
}

/// An object's labels.
pub(crate) fn labels(object: Option<&Value>) -> Option<BTreeMap<String, String>> {
    let labels = object?.get("metadata")?.get("labels")?;
    serde_json::from_value(labels.clone()).ok()
}

/// The namespace of the request, or the Namespace the request is about.
pub(crate) async fn namespace_object(
    lister: &dyn Lister,
    a: &Attributes,
) -> Result<Option<Value>, ApiError> {
    if a.resource.group.is_empty() && a.resource.resource == "namespaces" {
        return Ok(a.object.clone().or_else(|| a.old_object.clone()));
    }
    if a.namespace.is_empty() {
        return Ok(None);
    }
    lister
        .get(&GroupResource::new("", "namespaces"), "", &a.namespace)
        .await
}

/// The labels `namespaceSelector` is matched against: the namespace's, or a Namespace's own.
pub(crate) async fn namespace_labels(
    lister: &dyn Lister,
    a: &Attributes,
) -> Result<Option<BTreeMap<String, String>>, ApiError> {
    if a.resource.group.is_empty() && a.resource.resource == "namespaces" {
        return Ok(labels(a.object.as_ref().or(a.old_object.as_ref())));
    }
    Ok(labels(namespace_object(lister, a).await?.as_ref()))
}

/// The admission configuration objects no webhook and no policy is asked about (their
/// subresources included), as upstream exempts them: a broken catch-all webhook or policy
/// could otherwise never be removed.
pub(crate) fn exempt(resource: &GroupResource) -> bool {
    resource.group == "admissionregistration.k8s.io"
        && matches!(
            resource.resource.as_str(),
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(ops: &[&str], resources: &[&str], scope: &str) -> Rule {
        let v = |l: &[&str]| Some(l.iter().map(|s| s.to_string()).collect());
        Rule::new(&RuleWithOperations {
            operations: v(ops),
            api_groups: v(&[""]),
            api_versions: v(&["v1"]),
            resources: v(resources),
            scope: Some(scope.into()),
        })
    }

    #[test]
    fn resources_and_subresources() {
        let pods = rule(&["CREATE"], &["pods"], "*");
        assert!(pods.matches(Operation::Create, "", "v1", "pods", "", true));
        assert!(!pods.matches(Operation::Create, "", "v1", "pods", "binding", true));
        assert!(!pods.matches(Operation::Update, "", "v1", "pods", "", true));
        assert!(!pods.matches(Operation::Create, "apps", "v1", "pods", "", true));
        let subs = rule(&["*"], &["pods/*"], "*");
        assert!(subs.matches(Operation::Update, "", "v1", "pods", "status", true));
        assert!(!subs.matches(Operation::Update, "", "v1", "pods", "", true));
        let all = rule(&["*"], &["*/*"], "*");
        assert!(all.matches(Operation::Delete, "", "v1", "configmaps", "", true));
        assert!(all.matches(Operation::Create, "", "v1", "pods", "binding", true));
        let status = rule(&["UPDATE"], &["*/status"], "*");
        assert!(status.matches(Operation::Update, "", "v1", "nodes", "status", false));
        assert!(!status.matches(Operation::Update, "", "v1", "nodes", "", false));
    }

    #[test]
    fn scope() {
        let cluster = rule(&["*"], &["*"], "Cluster");
        assert!(cluster.matches(Operation::Create, "", "v1", "nodes", "", false));
        assert!(!cluster.matches(Operation::Create, "", "v1", "pods", "", true));
        let namespaced = rule(&["*"], &["*"], "Namespaced");
        assert!(namespaced.matches(Operation::Create, "", "v1", "pods", "", true));
        assert!(!namespaced.matches(Operation::Create, "", "v1", "nodes", "", false));
    }
}
