//! The two plugins: which webhooks a request reaches, the call, and what the answer does.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use capstan_admission::{Attributes, Form, Lister, Operation, Plugin};
use capstan_meta::status::Reason;
use capstan_meta::{ApiError, GroupResource};
use futures_util::future::join_all;
use http::Method;
use serde_json::Value;
use tracing::warn;

use crate::index::{Kind, Webhook, WebhookIndex};
use crate::matching::{Versioned, invocation, labels, namespace_labels, namespaced};
use crate::review::{self, Answer};

/// What both plugins share: the index and the lister of namespaces.
#[derive(Clone)]
struct Dispatcher {
    index: Arc<WebhookIndex>,
    lister: Arc<dyn Lister>,
    kind: Kind,
}

/// Why a webhook was not (or could not be) asked.
enum Outcome {
    /// It answered, having seen the request as given.
    Answered(Box<(Answer, Versioned)>),
    /// It does not look at this request.
    Skipped,
}

/// The denial of webhook `name`, with the webhook's own code (at least 400) and reason.
fn denied(name: &str, status: &review::Status) -> ApiError {
    let by = format!("admission webhook \"{name}\" denied the request");
    let message = if !status.message.is_empty() {
        format!("{by}: {}", status.message)
    } else if !status.reason.is_empty() {
        format!("{by}: {}", status.reason)
    } else {
        format!("{by} without explanation")
    };
    let mut err = ApiError::new(Reason::parse(&status.reason), message);
    err.status_code = Some(
        status
            .code
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| (400..600).contains(c))
            .unwrap_or(400),
    );
    err
}

impl Dispatcher {
    fn prefix(&self) -> &'static str {
        match self.kind {
            Kind::Mutating => "mutation",
            Kind::Validating => "validating",
        }
    }

    /// Whether any webhook's rules may cover the request.
    fn may_match(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        if crate::matching::exempt(resource) {
            return false;
        }
        // Until the configurations are listed, every request waits for them (and is refused
        // if they do not come).
        if !self.index.is_loaded() {
            return true;
        }
        self.index.snapshot(self.kind).iter().any(|w| {
            w.rules
                .iter()
                .any(|r| r.may_match(operation, &resource.group, &resource.resource, subresource))
        })
    }

    /// The form in which `hook` looks at `a` (rules and match policy, then selectors), or
    /// `None`; an error reading the namespace is the webhook's failure.
    async fn matches(&self, hook: &Webhook, a: &Attributes) -> Result<Option<Form>, String> {
        let in_namespace = namespaced(a);
        let Some(form) = invocation(a, hook.equivalent, |form| {
            hook.rules
                .iter()
                .any(|r| r.matches_form(a.operation, form, in_namespace))
        }) else {
            return Ok(None);
        };
        let is_namespace = a.resource.group.is_empty() && a.resource.resource == "namespaces";
        if !hook.namespace_selector.is_empty() && (in_namespace || is_namespace) {
            let labels = namespace_labels(self.lister.as_ref(), a)
                .await
                .map_err(|e| format!("could not read the namespace: {}", e.message))?;
            if !hook.namespace_selector.matches(labels.as_ref()) {
                return Ok(None);
            }
        }
        if !hook.object_selector.is_empty()
            && !hook
                .object_selector
                .matches(labels(a.object.as_ref()).as_ref())
            && !hook
                .object_selector
                .matches(labels(a.old_object.as_ref()).as_ref())
        {
            return Ok(None);
        }
        Ok(Some(form))
    }

    /// Whether `hook`'s match conditions hold for the request seen as `v` (an error in
    /// one is the webhook's failure).
    fn conditions_hold(hook: &Webhook, a: &Attributes, v: &Versioned) -> Result<bool, String> {
        if hook.conditions.is_empty() {
            return Ok(true);
        }
        let request = review::request_variable(a, v);
        let null = Value::Null;
        let variables = [
            ("object", v.object(a).unwrap_or(&null)),
            ("oldObject", v.old_object(a).unwrap_or(&null)),
            ("request", &request),
        ];
        let mut failed = None;
        for condition in &hook.conditions {
            let verdict = match &condition.program {
                Ok(program) => program.evaluate_bool(&variables).map_err(|e| e.to_string()),
                Err(e) => Err(e.clone()),
            };
            match verdict {
                // One false condition skips the webhook, whatever the others' errors.
                Ok(false) => return Ok(false),
                Ok(true) => {}
                Err(e) => {
                    failed.get_or_insert_with(|| {
                        format!(
                            "failed to evaluate match condition \"{}\": {e}",
                            condition.name
                        )
                    });
                }
            }
        }
        match failed {
            Some(why) => Err(why),
            None => Ok(true),
        }
    }

    /// Asks `hook` about `a`: the answer, or `Skipped` when it does not match or failed
    /// open; failing closed is an error, as is a dry run reaching a webhook with side
    /// effects.
    async fn ask(
        &self,
        hook: &Webhook,
        position: usize,
        a: &Attributes,
    ) -> Result<Outcome, ApiError> {
        let failure = |reason: String| {
            if hook.fail_open {
                warn!(webhook = %hook.name, %reason, "admission webhook failed; ignored (failurePolicy Ignore)");
                a.feedback.annotate(
                    format!(
                        "failed-open.{}.webhook.admission.k8s.io/round_{}_index_{position}",
                        self.prefix(),
                        a.reinvocation.round
                    ),
                    hook.name.clone(),
                );
                Ok(Outcome::Skipped)
            } else {
                Err(ApiError::internal(format!(
                    "failed calling webhook \"{}\": {reason}",
                    hook.name
                )))
            }
        };
        let form = match self.matches(hook, a).await {
            Ok(Some(form)) => form,
            Ok(None) => return Ok(Outcome::Skipped),
            Err(reason) => return failure(reason),
        };
        // The objects in the version the webhook asked for.
        let versioned = Versioned::of(a, form).await?;
        match Self::conditions_hold(hook, a, &versioned) {
            Ok(true) => {}
            Ok(false) => return Ok(Outcome::Skipped),
            Err(reason) => return failure(reason),
        }
        if a.dry_run && !hook.dry_run_safe {
            return Err(ApiError::bad_request(format!(
                "admission webhook \"{}\" does not support dry run",
                hook.name
            )));
        }
        let endpoint = match &hook.endpoint {
            Ok(endpoint) => endpoint,
            Err(reason) => return failure(reason.clone()),
        };
        let uid = capstan_meta::names::uid();
        let body = review::encode(a, &versioned, &uid, hook.review_version);
        let url = format!("{}?timeout={}s", endpoint.url, hook.timeout.as_secs());
        let sent = endpoint.client.request(
            Method::POST,
            &url,
            Some("application/json"),
            Bytes::from(body),
        );
        let (status, answer) = match tokio::time::timeout(hook.timeout, sent).await {
            Ok(Ok(answered)) => answered,
            Ok(Err(e)) => return failure(format!("failed to call webhook: {e}")),
            Err(_) => {
                return failure(format!(
                    "failed to call webhook: Post \"{url}\": context deadline exceeded"
                ));
            }
        };
        if !status.is_success() {
            let text = String::from_utf8_lossy(&answer);
            let text: String = text.chars().take(256).collect();
            return failure(format!(
                "failed to call webhook: the server responded with status {status}: {text}"
            ));
        }
        let answer = match review::decode(&answer, &uid, hook.review_version) {
            Ok(answer) => answer,
            Err(reason) => return failure(format!("received invalid webhook response: {reason}")),
        };
        for warning in &answer.warnings {
            a.feedback.warn(warning.clone());
        }
        for (key, value) in &answer.audit_annotations {
            a.feedback
                .annotate(format!("{}/{key}", hook.name), value.clone());
        }
        if !answer.allowed {
            return Err(denied(&hook.name, &answer.status));
        }
        Ok(Outcome::Answered(Box::new((answer, versioned))))
    }
}

/// The `MutatingAdmissionWebhook` plugin.
pub struct MutatingWebhooks(Dispatcher);

impl MutatingWebhooks {
    /// The plugin over `index`; namespaces for `namespaceSelector` read through `lister`.
    pub fn new(index: Arc<WebhookIndex>, lister: Arc<dyn Lister>) -> Self {
        Self(Dispatcher {
            index,
            lister,
            kind: Kind::Mutating,
        })
    }
}

/// The state key of reinvocation: the webhooks to call again.
const REINVOKE: &str = "MutatingAdmissionWebhook";

#[async_trait]
impl Plugin for MutatingWebhooks {
    fn name(&self) -> &'static str {
        "MutatingAdmissionWebhook"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        self.0.may_match(operation, resource, subresource)
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        crate::wait_ready(self.0.index.wait_loaded(), a).await?;
        let hooks = self.0.index.snapshot(Kind::Mutating);
        let again: Option<BTreeSet<String>> = (a.reinvocation.round > 0).then(|| {
            a.reinvocation
                .state
                .remove(REINVOKE)
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default()
        });
        // Webhooks that asked to see later changes, and where the last change came from.
        let mut watching: Vec<(usize, &str)> = Vec::new();
        let mut last_change = None;
        for (position, hook) in hooks.iter().enumerate() {
            if again
                .as_ref()
                .is_some_and(|names| !names.contains(&hook.name))
            {
                continue;
            }
            let Outcome::Answered(answered) = self.0.ask(hook, position, a).await? else {
                continue;
            };
            let (answer, versioned) = *answered;
            if hook.reinvoke {
                watching.push((position, &hook.name));
            }
            let mutated = match &answer.patch {
                Some(patch) => apply_patch(a, versioned, patch, &hook.name).await?,
                None => false,
            };
            if mutated {
                last_change = Some(position);
            }
            a.feedback.annotate(
                format!(
                    "mutation.webhook.admission.k8s.io/round_{}_index_{position}",
                    a.reinvocation.round
                ),
                serde_json::json!({
                    "configuration": hook.configuration,
                    "webhook": hook.name,
                    "mutated": mutated,
                })
                .to_string(),
            );
        }
        if again.is_none()
            && let Some(last) = last_change
        {
            let names: Vec<&str> = watching
                .iter()
                .filter(|(position, _)| *position < last)
                .map(|(_, name)| *name)
                .collect();
            if !names.is_empty() {
                a.reinvocation.requested = true;
                a.reinvocation
                    .state
                    .insert(REINVOKE, serde_json::json!(names));
            }
        }
        Ok(())
    }
}

/// Applies a webhook's `patch` to the object it saw (in its own version), the result back
/// in `a` in the stored form; whether the object changed.
async fn apply_patch(
    a: &mut Attributes,
    mut versioned: Versioned,
    patch: &json_patch::Patch,
    hook: &str,
) -> Result<bool, ApiError> {
    let unappliable = |e: json_patch::PatchError| {
        ApiError::internal(format!(
            "admission webhook \"{hook}\" returned a patch that cannot be applied: {e}"
        ))
    };
    if versioned.is_stored() {
        let Some(object) = a.object.as_mut() else {
            return Ok(false);
        };
        let before = object.clone();
        capstan_merge::json_patch::apply(object, &patch.0).map_err(unappliable)?;
        return Ok(*object != before);
    }
    let Some(mut object) = versioned.take_object() else {
        return Ok(false);
    };
    let before = object.clone();
    capstan_merge::json_patch::apply(&mut object, &patch.0).map_err(unappliable)?;
    if object == before {
        return Ok(false);
    }
    if let Some(forms) = &a.forms {
        a.object = Some(forms.back_from_form(object, &versioned.form).await?);
    }
    Ok(true)
}

/// The `ValidatingAdmissionWebhook` plugin.
pub struct ValidatingWebhooks(Dispatcher);

impl ValidatingWebhooks {
    /// The plugin over `index`; namespaces for `namespaceSelector` read through `lister`.
    pub fn new(index: Arc<WebhookIndex>, lister: Arc<dyn Lister>) -> Self {
        Self(Dispatcher {
            index,
            lister,
            kind: Kind::Validating,
        })
    }
}

#[async_trait]
impl Plugin for ValidatingWebhooks {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionWebhook"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        self.0.may_match(operation, resource, subresource)
    }

    /// Every matching webhook at once; the first refusal in webhook order wins.
    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        crate::wait_ready(self.0.index.wait_loaded(), a).await?;
        let hooks = self.0.index.snapshot(Kind::Validating);
        let asked = hooks
            .iter()
            .enumerate()
            .map(|(position, hook)| self.0.ask(hook, position, a));
        for outcome in join_all(asked).await {
            outcome?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_admission::MemoryLister;
    use capstan_auth::UserInfo;
    use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
    use serde_json::json;

    /// Validating webhooks at an address nobody listens on.
    fn plugin(side_effects: &str, failure_policy: &str) -> ValidatingWebhooks {
        let index = Arc::new(WebhookIndex::new());
        let config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
            "metadata": {"name": "c"},
            "webhooks": [{
                "name": "effects.capstan.test",
                "clientConfig": {"url": "https://127.0.0.1:1/"},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"], "scope": "*"}],
                "sideEffects": side_effects,
                "failurePolicy": failure_policy,
                "admissionReviewVersions": ["v1"],
            }]
        }))
        .unwrap();
        index.put_validating(&config, 1);
        index.listed(Kind::Mutating, 1);
        index.listed(Kind::Validating, 1);
        ValidatingWebhooks::new(index, Arc::new(MemoryLister::new()))
    }

    fn create(dry_run: bool) -> Attributes {
        let mut a = Attributes::new(
            Operation::Create,
            GroupResource::new("", "configmaps"),
            UserInfo::default(),
        );
        a.version = "v1".into();
        a.kind = "ConfigMap".into();
        a.namespace = "default".into();
        a.name = "c".into();
        a.object = Some(json!({"metadata": {"name": "c"}}));
        a.dry_run = dry_run;
        a
    }

    /// Until the configurations have been listed, a request waits for them and is refused
    /// after the wait (upstream's "not yet ready to handle request") instead of passing
    /// without any webhook.
    #[tokio::test(start_paused = true)]
    async fn nothing_is_admitted_before_the_configurations_are_listed() {
        let index = Arc::new(WebhookIndex::new());
        let plugin = ValidatingWebhooks::new(index.clone(), Arc::new(MemoryLister::new()));
        let resource = GroupResource::new("", "configmaps");
        assert!(plugin.validates(Operation::Create, &resource, ""));
        let err = plugin.validate(&create(false)).await.unwrap_err();
        assert_eq!(err.code(), 403);
        assert_eq!(
            err.message,
            "configmaps \"c\" is forbidden: not yet ready to handle request"
        );
        // Listed meanwhile: the waiting request goes on.
        let waiting = tokio::spawn(async move { plugin.validate(&create(false)).await });
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        index.listed(Kind::Mutating, 1);
        index.listed(Kind::Validating, 1);
        waiting.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_dry_run_never_reaches_a_webhook_with_side_effects() {
        for effects in ["Some", "Unknown"] {
            let err = plugin(effects, "Ignore")
                .validate(&create(true))
                .await
                .unwrap_err();
            assert_eq!(err.code(), 400);
            assert_eq!(
                err.message,
                "admission webhook \"effects.capstan.test\" does not support dry run"
            );
        }
        // Without side effects, the dry run is sent (and here fails to arrive: closed).
        let err = plugin("NoneOnDryRun", "Fail")
            .validate(&create(true))
            .await
            .unwrap_err();
        assert_eq!(err.code(), 500);
        assert!(
            err.message
                .contains("failed calling webhook \"effects.capstan.test\""),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn an_unreachable_webhook_fails_by_its_policy() {
        assert!(
            plugin("None", "Fail")
                .validate(&create(false))
                .await
                .is_err()
        );
        let a = create(false);
        plugin("None", "Ignore").validate(&a).await.unwrap();
        assert_eq!(
            a.feedback
                .annotations()
                .get("failed-open.validating.webhook.admission.k8s.io/round_0_index_0")
                .map(String::as_str),
            Some("effects.capstan.test")
        );
    }

    #[test]
    fn denials_keep_the_webhooks_code_and_reason() {
        let e = denied(
            "w.x.y",
            &review::Status {
                code: Some(422),
                message: "bad".into(),
                reason: "Invalid".into(),
            },
        );
        assert_eq!((e.code(), e.reason), (422, Reason::Invalid));
        assert_eq!(
            e.message,
            "admission webhook \"w.x.y\" denied the request: bad"
        );
        let e = denied(
            "w.x.y",
            &review::Status {
                code: Some(200),
                ..Default::default()
            },
        );
        assert_eq!(e.code(), 400);
        assert_eq!(
            e.message,
            "admission webhook \"w.x.y\" denied the request without explanation"
        );
    }
}
