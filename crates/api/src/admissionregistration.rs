//! `admissionregistration.k8s.io/v1`: Mutating- and ValidatingWebhookConfigurations, the
//! admission webhooks the API server calls, with upstream's defaults and validation.

use std::collections::BTreeSet;

use capstan_meta::labels::LabelSelector as Selector;
use capstan_meta::validation::{dns1123_label, dns1123_subdomain, qualified_name};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MutatingWebhookConfiguration, RuleWithOperations,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::describe::Names;

/// The AdmissionReview versions the server can send.
pub const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
/// Most match conditions per webhook.
const MAX_CONDITIONS: usize = 64;

/// The fields mutating and validating webhooks share, borrowed for validation.
struct Hook<'a> {
    name: &'a str,
    client: &'a WebhookClientConfig,
    rules: &'a [RuleWithOperations],
    failure_policy: Option<&'a str>,
    match_policy: Option<&'a str>,
    namespace_selector: Option<&'a LabelSelector>,
    object_selector: Option<&'a LabelSelector>,
    side_effects: &'a str,
    timeout_seconds: Option<i32>,
    review_versions: &'a [String],
    conditions: &'a [MatchCondition],
}

macro_rules! hook {
    ($w:expr) => {
        Hook {
            name: &$w.name,
            client: &$w.client_config,
            rules: $w.rules.as_deref().unwrap_or_default(),
            failure_policy: $w.failure_policy.as_deref(),
            match_policy: $w.match_policy.as_deref(),
            namespace_selector: $w.namespace_selector.as_ref(),
            object_selector: $w.object_selector.as_ref(),
            side_effects: &$w.side_effects,
            timeout_seconds: $w.timeout_seconds,
            review_versions: &$w.admission_review_versions,
            conditions: $w.match_conditions.as_deref().unwrap_or_default(),
        }
    };
}

/// Upstream's defaults of one webhook (both kinds).
macro_rules! default_hook {
    ($w:expr) => {{
        let w = $w;
        w.failure_policy.get_or_insert_with(|| "Fail".into());
        w.match_policy.get_or_insert_with(|| "Equivalent".into());
        w.namespace_selector.get_or_insert_with(Default::default);
        w.object_selector.get_or_insert_with(Default::default);
        w.timeout_seconds.get_or_insert(10);
        for rule in w.rules.iter_mut().flatten() {
            rule.scope.get_or_insert_with(|| "*".into());
        }
        if let Some(service) = &mut w.client_config.service {
            service.port.get_or_insert(443);
        }
    }};
}

pub(crate) fn one_of(errs: &mut FieldErrors, path: String, value: Option<&str>, allowed: &[&str]) {
    if let Some(v) = value
        && !allowed.contains(&v)
    {
        errs.push(FieldError::not_supported(path, v, allowed));
    }
}

/// The URL of a webhook: https, a host, no user, query or fragment.
fn validate_url(errs: &mut FieldErrors, path: &str, url: &str) {
    let Ok(uri) = url.parse::<http::Uri>() else {
        errs.push(FieldError::invalid(path, url, "must be a valid URL"));
        return;
    };
    if uri.scheme_str() != Some("https") {
        errs.push(FieldError::invalid(
            path,
            url,
            "'https' is the only allowed URL scheme",
        ));
    }
    let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
    if uri.host().unwrap_or_default().is_empty() {
        errs.push(FieldError::invalid(path, url, "host must be specified"));
    }
    if authority.contains('@') {
        errs.push(FieldError::invalid(
            path,
            url,
            "user information is not permitted in the URL",
        ));
    }
    if url.contains('#') {
        errs.push(FieldError::invalid(
            path,
            url,
            "fragments are not permitted in the URL",
        ));
    }
    if uri.query().is_some() {
        errs.push(FieldError::invalid(
            path,
            url,
            "query parameters are not permitted in the URL",
        ));
    }
}

fn validate_client(errs: &mut FieldErrors, path: &str, client: &WebhookClientConfig) {
    match (&client.url, &client.service) {
        (Some(_), Some(_)) | (None, None) => errs.push(FieldError::required(
            path,
            "exactly one of url or service is required",
        )),
        (Some(url), None) => validate_url(errs, &format!("{path}.url"), url),
        (None, Some(service)) => {
            let path = format!("{path}.service");
            if service.name.is_empty() {
                errs.push(FieldError::required(
                    format!("{path}.name"),
                    "service name is required",
                ));
            } else {
                for why in dns1123_label(&service.name) {
                    errs.push(FieldError::invalid(
                        format!("{path}.name"),
                        &service.name,
                        why,
                    ));
                }
            }
            if service.namespace.is_empty() {
                errs.push(FieldError::required(
                    format!("{path}.namespace"),
                    "service namespace is required",
                ));
            } else {
                for why in dns1123_label(&service.namespace) {
                    errs.push(FieldError::invalid(
                        format!("{path}.namespace"),
                        &service.namespace,
                        why,
                    ));
                }
            }
            if let Some(p) = &service.path
                && !p.starts_with('/')
            {
                errs.push(FieldError::invalid(
                    format!("{path}.path"),
                    p,
                    "must start with a '/'",
                ));
            }
            if let Some(port) = service.port
                && !(1..=65535).contains(&port)
            {
                errs.push(FieldError::invalid(
                    format!("{path}.port"),
                    &port.to_string(),
                    "port is not valid: must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
}

/// One `resources` entry: `*`, `*/*`, `name`, `name/sub`, `name/*`, `*/sub`.
fn validate_resources(errs: &mut FieldErrors, path: &str, resources: &[String]) {
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    let mut with_sub = BTreeSet::new();
    let mut plain = BTreeSet::new();
    for (i, r) in resources.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if r.is_empty() {
            errs.push(FieldError::required(at, ""));
            continue;
        }
        let (res, sub) = match r.split_once('/') {
            Some((res, sub)) => (res, Some(sub)),
            None => (r.as_str(), None),
        };
        if res.is_empty() || sub == Some("") || sub.is_some_and(|s| s.contains('/')) {
            errs.push(FieldError::invalid(
                at,
                r,
                "must be a resource or resource/subresource",
            ));
            continue;
        }
        match sub {
            Some(_) => with_sub.insert(r.as_str()),
            None => plain.insert(r.as_str()),
        };
    }
    if plain.contains("*") && plain.len() > 1 {
        errs.push(FieldError::invalid(
            path,
            &resources.join(","),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    if with_sub.contains("*/*") && with_sub.len() > 1 {
        errs.push(FieldError::invalid(
            path,
            &resources.join(","),
            "if '*/*' is present, must not specify other resources",
        ));
    }
}

/// A list with `*` alone, or without `*`.
fn validate_list(errs: &mut FieldErrors, path: &str, values: &[String], allow_empty_items: bool) {
    if values.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    if values.len() > 1 && values.iter().any(|v| v == "*") {
        errs.push(FieldError::invalid(
            path,
            &values.join(","),
            "if '*' is present, must not specify other values",
        ));
    }
    if !allow_empty_items {
        for (i, v) in values.iter().enumerate() {
            if v.is_empty() {
                errs.push(FieldError::required(format!("{path}[{i}]"), ""));
            }
        }
    }
}

pub(crate) fn validate_rule(errs: &mut FieldErrors, path: &str, rule: &RuleWithOperations) {
    let operations = rule.operations.as_deref().unwrap_or_default();
    validate_list(errs, &format!("{path}.operations"), operations, false);
    for (i, op) in operations.iter().enumerate() {
        one_of(
            errs,
            format!("{path}.operations[{i}]"),
            Some(op.as_str()).filter(|o| !o.is_empty()),
            &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"],
        );
    }
    // The core group is the empty string.
    validate_list(
        errs,
        &format!("{path}.apiGroups"),
        rule.api_groups.as_deref().unwrap_or_default(),
        true,
    );
    validate_list(
        errs,
        &format!("{path}.apiVersions"),
        rule.api_versions.as_deref().unwrap_or_default(),
        false,
    );
    validate_resources(
        errs,
        &format!("{path}.resources"),
        rule.resources.as_deref().unwrap_or_default(),
    );
    one_of(
        errs,
        format!("{path}.scope"),
        rule.scope.as_deref(),
        &["*", "Cluster", "Namespaced"],
    );
}

pub(crate) fn validate_selector(
    errs: &mut FieldErrors,
    path: &str,
    selector: Option<&LabelSelector>,
) {
    if let Some(s) = selector
        && let Err(e) = Selector::from_api(s)
    {
        errs.push(FieldError::invalid(path, "", e.to_string()));
    }
}

pub(crate) fn validate_conditions(
    errs: &mut FieldErrors,
    path: &str,
    conditions: &[MatchCondition],
) {
    if conditions.len() > MAX_CONDITIONS {
        errs.push(FieldError::invalid(
            path,
            &conditions.len().to_string(),
            format!("must have at most {MAX_CONDITIONS} items"),
        ));
    }
    let mut names = BTreeSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if c.name.is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        } else {
            for why in qualified_name(&c.name) {
                errs.push(FieldError::invalid(format!("{at}.name"), &c.name, why));
            }
            if !names.insert(c.name.as_str()) {
                errs.push(FieldError::duplicate(format!("{at}.name"), &c.name));
            }
        }
        if c.expression.trim().is_empty() {
            errs.push(FieldError::required(format!("{at}.expression"), ""));
        } else if let Err(why) = capstan_cel::Program::compile(&c.expression) {
            errs.push(FieldError::invalid(
                format!("{at}.expression"),
                &c.expression,
                format!("compilation failed: {why}"),
            ));
        }
    }
}

fn validate_hook(
    errs: &mut FieldErrors,
    path: &str,
    hook: &Hook<'_>,
    names: &mut BTreeSet<String>,
) {
    if hook.name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    } else {
        for why in dns1123_subdomain(hook.name) {
            errs.push(FieldError::invalid(format!("{path}.name"), hook.name, why));
        }
        if hook.name.split('.').count() < 3 {
            errs.push(FieldError::invalid(
                format!("{path}.name"),
                hook.name,
                "should be a domain with at least three segments separated by dots",
            ));
        }
        if !names.insert(hook.name.to_string()) {
            errs.push(FieldError::duplicate(format!("{path}.name"), hook.name));
        }
    }
    for (i, rule) in hook.rules.iter().enumerate() {
        validate_rule(errs, &format!("{path}.rules[{i}]"), rule);
    }
    one_of(
        errs,
        format!("{path}.failurePolicy"),
        hook.failure_policy,
        &["Fail", "Ignore"],
    );
    one_of(
        errs,
        format!("{path}.matchPolicy"),
        hook.match_policy,
        &["Equivalent", "Exact"],
    );
    if hook.side_effects.is_empty() {
        errs.push(FieldError::required(format!("{path}.sideEffects"), ""));
    } else {
        one_of(
            errs,
            format!("{path}.sideEffects"),
            Some(hook.side_effects),
            &["None", "NoneOnDryRun"],
        );
    }
    if let Some(t) = hook.timeout_seconds
        && !(1..=30).contains(&t)
    {
        errs.push(FieldError::invalid(
            format!("{path}.timeoutSeconds"),
            &t.to_string(),
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    let versions_path = format!("{path}.admissionReviewVersions");
    if hook.review_versions.is_empty() {
        errs.push(FieldError::required(
            &versions_path,
            format!("must specify one of {}", REVIEW_VERSIONS.join(", ")),
        ));
    } else {
        let mut seen = BTreeSet::new();
        for (i, v) in hook.review_versions.iter().enumerate() {
            if v.is_empty() {
                errs.push(FieldError::required(format!("{versions_path}[{i}]"), ""));
            } else if !seen.insert(v.as_str()) {
                errs.push(FieldError::duplicate(format!("{versions_path}[{i}]"), v));
            }
        }
        if !hook
            .review_versions
            .iter()
            .any(|v| REVIEW_VERSIONS.contains(&v.as_str()))
        {
            errs.push(FieldError::invalid(
                &versions_path,
                &hook.review_versions.join(","),
                format!(
                    "must include at least one of {}",
                    REVIEW_VERSIONS.join(", ")
                ),
            ));
        }
    }
    validate_selector(
        errs,
        &format!("{path}.namespaceSelector"),
        hook.namespace_selector,
    );
    validate_selector(
        errs,
        &format!("{path}.objectSelector"),
        hook.object_selector,
    );
    validate_client(errs, &format!("{path}.clientConfig"), hook.client);
    validate_conditions(errs, &format!("{path}.matchConditions"), hook.conditions);
}

/// The strategy of MutatingWebhookConfiguration.
#[derive(Debug, Default, Clone, Copy)]
pub struct MutatingWebhookConfigurationStrategy;

/// The strategy of ValidatingWebhookConfiguration.
#[derive(Debug, Default, Clone, Copy)]
pub struct ValidatingWebhookConfigurationStrategy;

fn descriptor(kind: &str, resource: &str) -> ResourceDescriptor {
    let mut d = Names {
        group: "admissionregistration.k8s.io",
        kind,
        resource,
        short_names: &[],
        namespaced: false,
    }
    .v1();
    d.categories = vec!["api-extensions".into()];
    d
}

impl Strategy for MutatingWebhookConfigurationStrategy {
    type Object = MutatingWebhookConfiguration;

    fn descriptor(&self) -> ResourceDescriptor {
        descriptor(
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        )
    }

    fn default(&self, obj: &mut MutatingWebhookConfiguration) {
        for w in obj.webhooks.iter_mut().flatten() {
            default_hook!(&mut *w);
            w.reinvocation_policy.get_or_insert_with(|| "Never".into());
        }
    }

    fn validate(&self, obj: &MutatingWebhookConfiguration) -> FieldErrors {
        let mut errs = Vec::new();
        let mut names = BTreeSet::new();
        for (i, w) in obj.webhooks.iter().flatten().enumerate() {
            let path = format!("webhooks[{i}]");
            validate_hook(&mut errs, &path, &hook!(w), &mut names);
            one_of(
                &mut errs,
                format!("{path}.reinvocationPolicy"),
                w.reinvocation_policy.as_deref(),
                &["IfNeeded", "Never"],
            );
        }
        errs
    }

    fn validate_update(
        &self,
        new: &MutatingWebhookConfiguration,
        _old: &MutatingWebhookConfiguration,
    ) -> FieldErrors {
        self.validate(new)
    }
}

impl Strategy for ValidatingWebhookConfigurationStrategy {
    type Object = ValidatingWebhookConfiguration;

    fn descriptor(&self) -> ResourceDescriptor {
        descriptor(
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        )
    }

    fn default(&self, obj: &mut ValidatingWebhookConfiguration) {
        for w in obj.webhooks.iter_mut().flatten() {
            default_hook!(&mut *w);
        }
    }

    fn validate(&self, obj: &ValidatingWebhookConfiguration) -> FieldErrors {
        let mut errs = Vec::new();
        let mut names = BTreeSet::new();
        for (i, w) in obj.webhooks.iter().flatten().enumerate() {
            validate_hook(&mut errs, &format!("webhooks[{i}]"), &hook!(w), &mut names);
        }
        errs
    }

    fn validate_update(
        &self,
        new: &ValidatingWebhookConfiguration,
        _old: &ValidatingWebhookConfiguration,
    ) -> FieldErrors {
        self.validate(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validating(webhook: serde_json::Value) -> ValidatingWebhookConfiguration {
        serde_json::from_value(json!({"metadata": {"name": "c"}, "webhooks": [webhook]})).unwrap()
    }

    fn fields(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(|e| e.field.clone()).collect()
    }

    #[test]
    fn a_complete_webhook_passes_and_gets_the_defaults() {
        let s = ValidatingWebhookConfigurationStrategy;
        let mut c = validating(json!({
            "name": "deny.example.com",
            "clientConfig": {"url": "https://127.0.0.1:9443/validate"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods", "pods/status"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "matchConditions": [{"name": "not-system", "expression": "!request.userInfo.username.startsWith('system:')"}]
        }));
        s.default(&mut c);
        assert!(s.validate(&c).is_empty(), "{:?}", s.validate(&c));
        let w = &c.webhooks.as_ref().unwrap()[0];
        assert_eq!(w.failure_policy.as_deref(), Some("Fail"));
        assert_eq!(w.match_policy.as_deref(), Some("Equivalent"));
        assert_eq!(w.timeout_seconds, Some(10));
        assert_eq!(w.rules.as_ref().unwrap()[0].scope.as_deref(), Some("*"));
    }

    #[test]
    fn upstream_refusals_name_their_fields() {
        let s = ValidatingWebhookConfigurationStrategy;
        let c = validating(json!({
            "name": "short.name",
            "clientConfig": {"url": "http://example.com/x?y=1"},
            "rules": [{"operations": ["CREATE", "*"], "apiGroups": [], "apiVersions": ["v1"], "resources": ["*", "pods"]}],
            "sideEffects": "Some",
            "timeoutSeconds": 31,
            "admissionReviewVersions": ["v2"],
            "matchConditions": [{"name": "c", "expression": "object.metadata.name =="}]
        }));
        let errs = s.validate(&c);
        let fields = fields(&errs);
        for expected in [
            "webhooks[0].name",
            "webhooks[0].clientConfig.url",
            "webhooks[0].rules[0].operations",
            "webhooks[0].rules[0].apiGroups",
            "webhooks[0].rules[0].resources",
            "webhooks[0].sideEffects",
            "webhooks[0].timeoutSeconds",
            "webhooks[0].admissionReviewVersions",
            "webhooks[0].matchConditions[0].expression",
        ] {
            assert!(
                fields.iter().any(|f| f == expected),
                "{expected} missing from {fields:?}"
            );
        }
        let url: Vec<_> = errs
            .iter()
            .filter(|e| e.field == "webhooks[0].clientConfig.url")
            .map(|e| e.detail.clone())
            .collect();
        assert!(
            url.iter()
                .any(|d| d.contains("'https' is the only allowed URL scheme"))
        );
        assert!(url.iter().any(|d| d.contains("query parameters")));
    }

    #[test]
    fn both_url_and_service_or_neither_is_refused() {
        let s = MutatingWebhookConfigurationStrategy;
        for client in [
            json!({}),
            json!({"url": "https://a.b/", "service": {"namespace": "ns", "name": "svc"}}),
        ] {
            let c: MutatingWebhookConfiguration = serde_json::from_value(json!({
                "metadata": {"name": "c"},
                "webhooks": [{"name": "a.b.c", "clientConfig": client, "sideEffects": "None", "admissionReviewVersions": ["v1"]}]
            }))
            .unwrap();
            let errs = s.validate(&c);
            assert_eq!(fields(&errs), ["webhooks[0].clientConfig"], "{errs:?}");
        }
    }

    #[test]
    fn duplicate_webhook_names_are_refused() {
        let s = MutatingWebhookConfigurationStrategy;
        let hook = json!({"name": "a.b.c", "clientConfig": {"url": "https://a.b/"}, "sideEffects": "None", "admissionReviewVersions": ["v1"], "reinvocationPolicy": "Sometimes"});
        let c: MutatingWebhookConfiguration = serde_json::from_value(json!({
            "metadata": {"name": "c"}, "webhooks": [hook.clone(), hook]
        }))
        .unwrap();
        let errs = s.validate(&c);
        assert!(
            fields(&errs).contains(&"webhooks[1].name".to_string()),
            "{errs:?}"
        );
        assert!(fields(&errs).contains(&"webhooks[0].reinvocationPolicy".to_string()));
    }
}
