//! The webhooks of every configuration, compiled once per change of the configuration and
//! read per request as an immutable snapshot.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use capstan_cel::Program;
use capstan_client::{HttpsClient, ServiceResolver, WebhookTarget};
use capstan_meta::labels::LabelSelector;
use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MutatingWebhookConfiguration, RuleWithOperations,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};

use crate::matching::Rule;

/// Which plugin a configuration belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// MutatingWebhookConfiguration.
    Mutating,
    /// ValidatingWebhookConfiguration.
    Validating,
}

/// The longest a webhook may take (its `timeoutSeconds` is at most 30).
const MAX_TIMEOUT: Duration = Duration::from_secs(30);

/// One webhook, ready to match and call.
pub(crate) struct Webhook {
    /// The webhook's name (`deny.example.com`).
    pub name: String,
    /// The configuration that holds it.
    pub configuration: String,
    /// Its rules (none: it matches nothing).
    pub rules: Vec<Rule>,
    /// `matchPolicy: Equivalent` (the default): a request in another version of a
    /// resource the rules name reaches it, converted.
    pub equivalent: bool,
    /// `failurePolicy: Ignore`.
    pub fail_open: bool,
    /// `namespaceSelector`.
    pub namespace_selector: LabelSelector,
    /// `objectSelector`.
    pub object_selector: LabelSelector,
    /// `sideEffects` is `None` or `NoneOnDryRun`: dry runs may reach it.
    pub dry_run_safe: bool,
    /// `timeoutSeconds`.
    pub timeout: Duration,
    /// The AdmissionReview version sent: the first of its list the server speaks.
    pub review_version: &'static str,
    /// `matchConditions`, compiled (an expression that does not compile fails at match).
    pub conditions: Vec<Condition>,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub reinvoke: bool,
    /// Where to send reviews, or why it cannot be reached.
    pub endpoint: Result<Endpoint, String>,
}

/// One match condition.
pub(crate) struct Condition {
    pub name: String,
    pub program: Result<Program, String>,
}

/// An HTTPS endpoint with its client.
pub(crate) struct Endpoint {
    pub client: HttpsClient,
    pub url: String,
}

/// The fields both webhook kinds have.
struct Fields<'a> {
    name: &'a str,
    client: &'a WebhookClientConfig,
    rules: &'a [RuleWithOperations],
    match_policy: Option<&'a str>,
    failure_policy: Option<&'a str>,
    namespace_selector: Option<&'a k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    object_selector: Option<&'a k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    side_effects: &'a str,
    timeout_seconds: Option<i32>,
    review_versions: &'a [String],
    conditions: &'a [MatchCondition],
    reinvocation: Option<&'a str>,
}

macro_rules! fields {
    ($w:expr, $reinvocation:expr) => {
        Fields {
            name: &$w.name,
            client: &$w.client_config,
            rules: $w.rules.as_deref().unwrap_or_default(),
            match_policy: $w.match_policy.as_deref(),
            failure_policy: $w.failure_policy.as_deref(),
            namespace_selector: $w.namespace_selector.as_ref(),
            object_selector: $w.object_selector.as_ref(),
            side_effects: &$w.side_effects,
            timeout_seconds: $w.timeout_seconds,
            review_versions: &$w.admission_review_versions,
            conditions: $w.match_conditions.as_deref().unwrap_or_default(),
            reinvocation: $reinvocation,
        }
    };
}

pub(crate) fn selector(
    s: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
) -> LabelSelector {
    // Validation refused bad selectors; one stored by another server matches nothing.
    s.map_or_else(|| Ok(LabelSelector::default()), LabelSelector::from_api)
        .unwrap_or_else(|_| LabelSelector::parse("capstan.invalid/never").unwrap_or_default())
}

fn endpoint(
    client: &WebhookClientConfig,
    services: &Option<Arc<dyn ServiceResolver>>,
) -> Result<Endpoint, String> {
    let service = client.service.as_ref();
    let target = WebhookTarget::of(
        client.url.as_deref(),
        service.map(|s| (&*s.namespace, &*s.name, s.port, s.path.as_deref())),
    )?;
    let ca_bundle = client.ca_bundle.as_ref().map(|b| b.0.as_slice());
    let (client, url) = HttpsClient::for_webhook(target, ca_bundle, MAX_TIMEOUT, services.clone())?;
    Ok(Endpoint { client, url })
}

fn compile(
    configuration: &str,
    f: Fields<'_>,
    services: &Option<Arc<dyn ServiceResolver>>,
) -> Webhook {
    Webhook {
        name: f.name.to_string(),
        configuration: configuration.to_string(),
        rules: f.rules.iter().map(Rule::new).collect(),
        equivalent: f.match_policy != Some("Exact"),
        fail_open: f.failure_policy == Some("Ignore"),
        namespace_selector: selector(f.namespace_selector),
        object_selector: selector(f.object_selector),
        dry_run_safe: matches!(f.side_effects, "None" | "NoneOnDryRun"),
        timeout: f
            .timeout_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(Duration::from_secs(10), Duration::from_secs)
            .clamp(Duration::from_secs(1), MAX_TIMEOUT),
        review_version: f
            .review_versions
            .iter()
            .find_map(|v| match v.as_str() {
                "v1" => Some("v1"),
                "v1beta1" => Some("v1beta1"),
                _ => None,
            })
            .unwrap_or("v1"),
        conditions: f
            .conditions
            .iter()
            .map(|c| Condition {
                name: c.name.clone(),
                program: Program::compile(&c.expression).map_err(|e| e.to_string()),
            })
            .collect(),
        reinvoke: f.reinvocation == Some("IfNeeded"),
        endpoint: endpoint(f.client, services),
    }
}

/// The configurations of one kind.
#[derive(Default)]
struct Side {
    /// Compiled webhooks by configuration name, with the list generation they were seen in.
    configurations: BTreeMap<String, (u64, Vec<Arc<Webhook>>)>,
    /// Every webhook in order, rebuilt at each change.
    snapshot: Arc<Vec<Arc<Webhook>>>,
}

impl Side {
    /// The snapshot anew from the configurations.
    fn rebuild(&mut self) {
        let all = self
            .configurations
            .values()
            .flat_map(|(_, hooks)| hooks.iter().cloned())
            .collect();
        self.snapshot = Arc::new(all);
    }
}

/// Every webhook of both kinds, kept current by whoever follows the configurations (the
/// server's controllers, from the watch cache).
#[derive(Default)]
pub struct WebhookIndex {
    mutating: RwLock<Side>,
    validating: RwLock<Side>,
    /// Whether each kind (mutating, validating) has been listed once.
    loaded: capstan_auth::loaded::Loaded<2>,
    /// Where webhooks named by a `service` reference are (none: they cannot be called).
    services: Option<Arc<dyn ServiceResolver>>,
}

impl std::fmt::Debug for WebhookIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookIndex")
            .field("mutating", &self.snapshot(Kind::Mutating).len())
            .field("validating", &self.snapshot(Kind::Validating).len())
            .finish()
    }
}

impl WebhookIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty index whose webhooks named by a `service` reference are reached where
    /// `services` resolves them.
    pub fn with_services(services: Arc<dyn ServiceResolver>) -> Self {
        Self {
            services: Some(services),
            ..Self::default()
        }
    }

    fn side(&self, kind: Kind) -> &RwLock<Side> {
        match kind {
            Kind::Mutating => &self.mutating,
            Kind::Validating => &self.validating,
        }
    }

    fn put(&self, kind: Kind, name: String, generation: u64, hooks: Vec<Arc<Webhook>>) {
        let mut side = self.side(kind).write().unwrap_or_else(|e| e.into_inner());
        side.configurations.insert(name, (generation, hooks));
        side.rebuild();
    }

    /// Adds or replaces a MutatingWebhookConfiguration seen in list `generation`.
    pub fn put_mutating(&self, config: &MutatingWebhookConfiguration, generation: u64) {
        let name = config.metadata.name.clone().unwrap_or_default();
        let hooks = config
            .webhooks
            .iter()
            .flatten()
            .map(|w| {
                let f = fields!(w, w.reinvocation_policy.as_deref());
                Arc::new(compile(&name, f, &self.services))
            })
            .collect();
        self.put(Kind::Mutating, name, generation, hooks);
    }

    /// Adds or replaces a ValidatingWebhookConfiguration seen in list `generation`.
    pub fn put_validating(&self, config: &ValidatingWebhookConfiguration, generation: u64) {
        let name = config.metadata.name.clone().unwrap_or_default();
        let hooks = config
            .webhooks
            .iter()
            .flatten()
            .map(|w| Arc::new(compile(&name, fields!(w, None), &self.services)))
            .collect();
        self.put(Kind::Validating, name, generation, hooks);
    }

    /// Removes a deleted configuration.
    pub fn remove(&self, kind: Kind, name: &str) {
        let mut side = self.side(kind).write().unwrap_or_else(|e| e.into_inner());
        if side.configurations.remove(name).is_some() {
            side.rebuild();
        }
    }

    /// A full list of generation `generation` ended: configurations it did not hold are
    /// gone; the index of `kind` is loaded.
    pub fn listed(&self, kind: Kind, generation: u64) {
        let mut side = self.side(kind).write().unwrap_or_else(|e| e.into_inner());
        let before = side.configurations.len();
        side.configurations.retain(|_, (g, _)| *g >= generation);
        if side.configurations.len() != before {
            side.rebuild();
        }
        drop(side);
        self.loaded.set(match kind {
            Kind::Mutating => 0,
            Kind::Validating => 1,
        });
    }

    /// Whether both kinds were listed once.
    pub fn is_loaded(&self) -> bool {
        self.loaded.is_loaded()
    }

    /// Returns once both kinds have been listed once.
    pub async fn wait_loaded(&self) {
        self.loaded.wait().await
    }

    /// The webhooks of `kind` in order.
    pub(crate) fn snapshot(&self, kind: Kind) -> Arc<Vec<Arc<Webhook>>> {
        self.side(kind)
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .snapshot
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(name: &str, hooks: &[&str]) -> ValidatingWebhookConfiguration {
        let webhooks: Vec<_> = hooks
            .iter()
            .map(|h| {
                json!({
                    "name": h,
                    "clientConfig": {"url": "https://127.0.0.1:1/x"},
                    "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1beta1", "v1"],
                    "timeoutSeconds": 3,
                })
            })
            .collect();
        serde_json::from_value(json!({"metadata": {"name": name}, "webhooks": webhooks})).unwrap()
    }

    fn names(index: &WebhookIndex) -> Vec<String> {
        index
            .snapshot(Kind::Validating)
            .iter()
            .map(|w| w.name.clone())
            .collect()
    }

    #[test]
    fn configurations_in_name_order_and_relists_drop_the_missing() {
        let index = WebhookIndex::new();
        index.put_validating(&config("b", &["b1.x.y", "b2.x.y"]), 1);
        index.put_validating(&config("a", &["a1.x.y"]), 1);
        assert_eq!(names(&index), ["a1.x.y", "b1.x.y", "b2.x.y"]);
        assert!(!index.is_loaded());
        let hook = index.snapshot(Kind::Validating)[0].clone();
        assert_eq!(hook.timeout, Duration::from_secs(3));
        assert_eq!(hook.review_version, "v1beta1");
        assert!(hook.endpoint.is_ok(), "{:?}", hook.endpoint.as_ref().err());
        index.put_validating(&config("a", &["a1.x.y"]), 2);
        index.listed(Kind::Validating, 2);
        assert_eq!(names(&index), ["a1.x.y"]);
        index.remove(Kind::Validating, "a");
        assert!(names(&index).is_empty());
        index.listed(Kind::Mutating, 1);
        assert!(index.is_loaded());
    }
}
