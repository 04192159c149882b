use std::sync::Arc;

use capstan_auth::UserInfo;
use capstan_auth::authz::{Attributes, AuthorizerChain};
use capstan_meta::{ApiError, GroupResource, Reason};
use http::{Request, Response};
use tower::ServiceExt;

use super::filter::{Answer, Filter, Next};
use crate::request_info::RequestInfo;
use crate::response::{self, Body};

/// The audit annotation of an authorization decision (`allow` or `forbid`).
pub const DECISION_ANNOTATION: &str = "authorization.k8s.io/decision";
/// The audit annotation of the authorizer's reason.
pub const REASON_ANNOTATION: &str = "authorization.k8s.io/reason";

/// Asks the authorizers whether the authenticated user may make the request; answers 403
/// otherwise.
#[derive(Clone)]
pub struct Authorization {
    chain: Arc<AuthorizerChain>,
}

impl Authorization {
    /// The filter over `chain`.
    pub fn new(chain: Arc<AuthorizerChain>) -> Self {
        Self { chain }
    }
}

/// A copy of the request's facts for `user` (impersonation's checks keep theirs).
pub(crate) fn attributes(user: UserInfo, info: &RequestInfo) -> Attributes {
    Attributes {
        user,
        verb: info.verb.clone(),
        resource_request: info.is_resource_request,
        api_group: info.api_group.clone(),
        api_version: info.api_version.clone(),
        resource: info.resource.clone(),
        subresource: info.subresource.clone(),
        namespace: info.namespace.clone(),
        name: info.name.clone(),
        path: info.path.clone(),
        field_selector: info.field_selector.clone(),
    }
}

/// The request's user and facts lent as the attributes of its decision: they move into
/// the attributes, and [`give_back`] returns them, so nothing is copied. `None` when the
/// request has no user or no request info.
fn lend<B>(req: &mut Request<B>) -> Option<Attributes> {
    use std::mem::take;
    // Looked for before the user is taken, so that a request without it keeps its user.
    req.extensions().get::<RequestInfo>()?;
    let user = take(req.extensions_mut().get_mut::<UserInfo>()?);
    let info = req.extensions_mut().get_mut::<RequestInfo>()?;
    Some(Attributes {
        user,
        verb: take(&mut info.verb),
        resource_request: info.is_resource_request,
        api_group: take(&mut info.api_group),
        api_version: take(&mut info.api_version),
        resource: take(&mut info.resource),
        subresource: take(&mut info.subresource),
        namespace: take(&mut info.namespace),
        name: take(&mut info.name),
        path: take(&mut info.path),
        field_selector: take(&mut info.field_selector),
    })
}

/// Returns to `req` what [`lend`] took from it.
fn give_back<B>(req: &mut Request<B>, attrs: Attributes) {
    if let Some(info) = req.extensions_mut().get_mut::<RequestInfo>() {
        info.verb = attrs.verb;
        info.api_group = attrs.api_group;
        info.api_version = attrs.api_version;
        info.resource = attrs.resource;
        info.subresource = attrs.subresource;
        info.namespace = attrs.namespace;
        info.name = attrs.name;
        info.path = attrs.path;
        info.field_selector = attrs.field_selector;
    }
    if let Some(user) = req.extensions_mut().get_mut::<UserInfo>() {
        *user = attrs.user;
    }
}

/// What becomes of a request once decided.
enum Verdict {
    /// It goes on, with the create check an update or a patch leaves for the store.
    Pass(Option<capstan_registry::CreateCheck>),
    /// It is answered with this refusal.
    Refuse(Response<Body>),
}

impl Verdict {
    /// The verdict of `decision` on `attrs`.
    fn of(
        chain: &Arc<AuthorizerChain>,
        attrs: &Attributes,
        decision: Result<(), ApiError>,
    ) -> Self {
        match decision {
            Ok(()) => Verdict::Pass(create_check(chain, attrs)),
            Err(err) => Verdict::Refuse(super::nosniff(response::error(&err))),
        }
    }
}

pub(crate) fn forbidden(attrs: &Attributes, why: &str) -> ApiError {
    if attrs.resource_request {
        let gr = GroupResource::new(attrs.api_group.clone(), attrs.resource.clone());
        ApiError::forbidden(
            &attrs.user.name,
            &attrs.verb,
            &gr,
            &attrs.subresource,
            &attrs.name,
            &attrs.namespace,
            why,
        )
    } else {
        let mut msg = format!(
            "forbidden: User \"{}\" cannot {} path \"{}\"",
            attrs.user.name, attrs.verb, attrs.path
        );
        if !why.is_empty() {
            msg.push_str(&format!(": {why}"));
        }
        ApiError::new(Reason::Forbidden, msg)
    }
}

/// The create an allowed update or patch may turn into, authorized when the store finds the
/// object missing (verb `create`, the same user, resource and name).
struct CreateOnWrite {
    chain: Arc<AuthorizerChain>,
    attrs: Attributes,
}

#[async_trait::async_trait]
impl capstan_registry::CreateAuthorization for CreateOnWrite {
    async fn check(&self) -> Result<(), ApiError> {
        self.chain
            .authorize(&self.attrs)
            .await
            .map_err(|why| forbidden(&self.attrs, &why))
    }
}

/// The create check an update or a patch of a resource leaves for the store.
fn create_check(
    chain: &Arc<AuthorizerChain>,
    attrs: &Attributes,
) -> Option<capstan_registry::CreateCheck> {
    let writes = matches!(attrs.verb.as_str(), "update" | "patch");
    (attrs.resource_request && writes && attrs.subresource.is_empty()).then(|| {
        let check = CreateOnWrite {
            chain: chain.clone(),
            attrs: Attributes {
                verb: "create".into(),
                ..attrs.clone()
            },
        };
        capstan_registry::CreateCheck(Some(Arc::new(check)))
    })
}

/// Whether the request opens a stream into a pod (exec, attach, port-forward), which needs
/// `create` whatever the method (a WebSocket upgrade is a GET, authorized as `get` first),
/// as upstream's `AuthorizePodWebsocketUpgradeCreatePermission` has it.
fn opens_a_stream(attrs: &Attributes) -> bool {
    attrs.resource_request
        && attrs.verb == "get"
        && attrs.api_group.is_empty()
        && attrs.resource == "pods"
        && matches!(
            attrs.subresource.as_str(),
            "exec" | "attach" | "portforward"
        )
}

/// `attrs`' decision, with the `create` a stream into a pod also needs.
async fn decide(chain: &AuthorizerChain, attrs: &Attributes) -> Result<(), ApiError> {
    chain
        .authorize(attrs)
        .await
        .map_err(|why| forbidden(attrs, &why))?;
    if opens_a_stream(attrs) {
        let create = Attributes {
            verb: "create".into(),
            ..attrs.clone()
        };
        chain
            .authorize(&create)
            .await
            .map_err(|why| forbidden(&create, &why))?;
    }
    Ok(())
}

/// The decision of an audited request: the decision and its reason go into the event, as
/// upstream's.
async fn audited(
    chain: &AuthorizerChain,
    attrs: &Attributes,
    audit: &capstan_audit::RequestContext,
) -> Result<(), ApiError> {
    let verdict = chain.review(attrs).await;
    audit.annotate(
        DECISION_ANNOTATION,
        if verdict.allowed { "allow" } else { "forbid" },
    );
    if !verdict.reason.is_empty() {
        audit.annotate(REASON_ANNOTATION, verdict.reason.clone());
    }
    if !verdict.allowed {
        return Err(forbidden(attrs, &verdict.reason));
    }
    if opens_a_stream(attrs)
        && let Err(err) = decide(chain, attrs).await
    {
        audit.annotate(DECISION_ANNOTATION, "forbid");
        return Err(err);
    }
    Ok(())
}

/// Sends `req` on with its create check, or answers it.
fn carry_out<B>(req: &mut Request<B>, verdict: Verdict) -> Option<Response<Body>> {
    match verdict {
        Verdict::Pass(check) => {
            if let Some(check) = check {
                req.extensions_mut().insert(check);
            }
            None
        }
        Verdict::Refuse(refused) => Some(refused),
    }
}

impl Authorization {
    /// The verdict on `req` when it can be made at once: every authorizer in memory, no
    /// audit event to annotate, no stream into a pod (which needs a second check). `None`
    /// leaves the request to the awaited path.
    fn decide_now<B>(&self, req: &mut Request<B>) -> Option<Verdict> {
        let audited = req
            .extensions()
            .get::<Arc<capstan_audit::RequestContext>>()
            .is_some_and(|a| a.level() != capstan_audit::Level::None);
        if audited {
            return None;
        }
        let attrs = lend(req)?;
        let decision = if opens_a_stream(&attrs) {
            None
        } else {
            self.chain.authorize_now(&attrs)
        };
        let verdict = decision.map(|decision| {
            let decision = decision.map_err(|why| forbidden(&attrs, &why));
            Verdict::of(&self.chain, &attrs, decision)
        });
        give_back(req, attrs);
        verdict
    }
}

impl Filter for Authorization {
    fn filter<S: Next<B>, B: Send + 'static>(&self, mut req: Request<B>, next: &mut S) -> Answer {
        if let Some(verdict) = self.decide_now(&mut req) {
            return match carry_out(&mut req, verdict) {
                None => Box::pin(next.call(req)),
                Some(refused) => Box::pin(std::future::ready(Ok(refused))),
            };
        }
        let inner = next.clone();
        let chain = self.chain.clone();
        Box::pin(async move {
            let audit = req
                .extensions()
                .get::<Arc<capstan_audit::RequestContext>>()
                .filter(|a| a.level() != capstan_audit::Level::None)
                .cloned();
            let Some(attrs) = lend(&mut req) else {
                return Ok(response::error(&ApiError::internal(
                    "the request reached authorization unauthenticated",
                )));
            };
            let decision = match &audit {
                Some(audit) => audited(&chain, &attrs, audit).await,
                None => decide(&chain, &attrs).await,
            };
            let verdict = Verdict::of(&chain, &attrs, decision);
            give_back(&mut req, attrs);
            match carry_out(&mut req, verdict) {
                None => inner.oneshot(req).await,
                Some(refused) => Ok(refused),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use capstan_auth::authz::{AlwaysAllow, AlwaysDeny};
    use http::Method;

    use super::*;

    fn request(method: Method, path: &str) -> Request<()> {
        let mut req = Request::builder()
            .method(method.clone())
            .uri(path)
            .body(())
            .unwrap();
        let user = UserInfo {
            name: "alice".into(),
            groups: vec![UserInfo::AUTHENTICATED.into()],
            ..Default::default()
        };
        req.extensions_mut().insert(user);
        req.extensions_mut()
            .insert(RequestInfo::parse(&method, path, Some("fieldSelector=a=b")));
        req
    }

    /// What the filters below read of a request.
    fn facts(req: &Request<()>) -> (UserInfo, String) {
        let info = req.extensions().get::<RequestInfo>().unwrap();
        let user = req.extensions().get::<UserInfo>().unwrap().clone();
        (user, format!("{info:?}"))
    }

    #[test]
    fn a_decision_made_at_once_leaves_the_request_as_it_was() {
        let path = "/apis/apps/v1/namespaces/ns/deployments/web";
        for (authorizer, allowed) in [
            (
                Arc::new(AlwaysAllow) as Arc<dyn capstan_auth::authz::Authorizer>,
                true,
            ),
            (Arc::new(AlwaysDeny), false),
        ] {
            let filter = Authorization::new(Arc::new(AuthorizerChain::new(vec![authorizer])));
            for method in [Method::GET, Method::PUT] {
                let mut req = request(method.clone(), path);
                let before = facts(&req);
                let verdict = filter.decide_now(&mut req).expect("decided at once");
                assert_eq!(matches!(verdict, Verdict::Pass(_)), allowed);
                assert!(carry_out(&mut req, verdict).is_some() != allowed);
                assert_eq!(facts(&req), before, "{method}");
                assert!(!before.1.contains("verb: \"\""));
                let check = req.extensions().get::<capstan_registry::CreateCheck>();
                assert_eq!(check.is_some(), allowed && method == Method::PUT);
            }
        }
    }
}
