//! Impersonation (`Impersonate-User`, `-Uid`, `-Group`, `-Extra-<key>`; `kubectl --as`): a
//! caller allowed to act as the user the headers name does so from here on (audit records the
//! caller too). As upstream v1.36 (constrained impersonation, KEP-5284, beta and on by
//! default), there are five ways to be allowed, tried in this order, the one that last worked
//! for the caller first:
//! - `associated-node`: a service account acting as the node its token is bound to;
//! - `arbitrary-node`: acting as any node (`system:node:<name>`, nothing else asked);
//! - `serviceaccount`: acting as a service account (its name only);
//! - `user-info`: acting as any other user, with groups, uid and extras;
//! - legacy: the `impersonate` verb on each thing asked for.
//!
//! A constrained way needs `impersonate-on:<mode>:<verb>` on the request itself (the caller
//! may be bob only to list pods, say) and `impersonate:<mode>` on each thing asked for
//! (`users`, `nodes`, `serviceaccounts`, `groups`, `uids`, `userextras` in
//! `authentication.k8s.io`); it never grants `system:masters`. When no way works, the refusal
//! is the first one met.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use capstan_auth::UserInfo;
use capstan_auth::authz::{Attributes, AuthorizerChain};
use capstan_meta::ApiError;
use http::{HeaderMap, Request};
use tower::ServiceExt;

use super::authorization::{attributes, forbidden};
use super::filter::{Answer, Filter, Next};
use crate::request_info::RequestInfo;
use crate::response;

/// What every impersonation header's name begins with.
const PREFIX: &str = "impersonate-";
const USER: &str = "impersonate-user";
const UID: &str = "impersonate-uid";
const GROUP: &str = "impersonate-group";
const EXTRA: &str = "impersonate-extra-";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
const NODE_PREFIX: &str = "system:node:";
const AUTHENTICATION: &str = "authentication.k8s.io";
/// The token claim naming the node a service account's token is bound to.
const NODE_NAME: &str = "authentication.kubernetes.io/node-name";
/// Callers whose last working way is remembered, at most.
const REMEMBERED_CALLERS: usize = 10_000;
/// Groups (or extra values) from which one wildcard check is tried before one check each.
const MANY: usize = 4;

/// Switches the request's user to the one its impersonation headers name, once the
/// authorizers allow the caller to.
#[derive(Clone)]
pub struct Impersonation {
    chain: Arc<AuthorizerChain>,
    /// The way that last worked, by caller name.
    last_mode: Arc<Mutex<HashMap<String, Mode>>>,
}

impl Impersonation {
    /// The filter, asking `chain`.
    pub fn new(chain: Arc<AuthorizerChain>) -> Self {
        Self {
            chain,
            last_mode: Arc::default(),
        }
    }

    fn remembered(&self, caller: &str) -> Option<Mode> {
        let modes = self.last_mode.lock().unwrap_or_else(|e| e.into_inner());
        modes.get(caller).copied()
    }

    fn remember(&self, caller: &str, mode: Mode) {
        let mut modes = self.last_mode.lock().unwrap_or_else(|e| e.into_inner());
        if modes.len() >= REMEMBERED_CALLERS && !modes.contains_key(caller) {
            // Only the order of the tries depends on it: forgetting is safe.
            modes.clear();
        }
        modes.insert(caller.to_string(), mode);
    }

    /// The user `caller` acts as when asking for `wanted` in `request`, or the refusal.
    async fn impersonate(
        &self,
        caller: &UserInfo,
        wanted: &UserInfo,
        request: Option<&RequestInfo>,
    ) -> Result<UserInfo, ApiError> {
        let remembered = self.remembered(&caller.name);
        let order = remembered
            .into_iter()
            .chain(Mode::ALL.into_iter().filter(|m| Some(*m) != remembered));
        let mut first_refusal = None;
        for mode in order {
            match mode.check(&self.chain, caller, wanted, request).await {
                Ok(Some(acting)) => {
                    if remembered != Some(mode) {
                        self.remember(&caller.name, mode);
                    }
                    return Ok(settle(acting));
                }
                Ok(None) => {}
                Err(refusal) => {
                    first_refusal.get_or_insert(refusal);
                }
            }
        }
        Err(first_refusal.unwrap_or_else(|| ApiError::internal("no impersonation mode applied")))
    }
}

/// A way of being allowed to act as someone else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    AssociatedNode,
    ArbitraryNode,
    ServiceAccount,
    UserInfo,
    Legacy,
}

impl Mode {
    const ALL: [Mode; 5] = [
        Mode::AssociatedNode,
        Mode::ArbitraryNode,
        Mode::ServiceAccount,
        Mode::UserInfo,
        Mode::Legacy,
    ];

    fn name(self) -> &'static str {
        match self {
            Mode::AssociatedNode => "associated-node",
            Mode::ArbitraryNode => "arbitrary-node",
            Mode::ServiceAccount => "serviceaccount",
            Mode::UserInfo => "user-info",
            Mode::Legacy => "",
        }
    }

    /// The verb of the checks on the things asked for.
    fn verb(self) -> String {
        match self {
            Mode::Legacy => "impersonate".into(),
            mode => format!("impersonate:{}", mode.name()),
        }
    }

    /// Whether this way can give `wanted` to `caller` at all.
    fn applies(self, wanted: &UserInfo, caller: &UserInfo) -> bool {
        let name_only =
            wanted.uid.is_empty() && wanted.groups.is_empty() && wanted.extra.is_empty();
        match self {
            Mode::AssociatedNode => {
                name_only
                    && node_name(&wanted.name).is_some_and(|node| {
                        service_account(&caller.name).is_some()
                            && matches!(caller.extra.get(NODE_NAME).map(Vec::as_slice),
                                Some([bound]) if bound == node)
                    })
            }
            Mode::ArbitraryNode => name_only && node_name(&wanted.name).is_some(),
            Mode::ServiceAccount => name_only && service_account(&wanted.name).is_some(),
            Mode::UserInfo => {
                node_name(&wanted.name).is_none() && service_account(&wanted.name).is_none()
            }
            Mode::Legacy => true,
        }
    }

    /// The caller as the checks of this way see it: a service account acting as its node is
    /// judged without its extras' values (only their keys), whatever pod or node they name.
    fn judged(self, caller: &UserInfo) -> UserInfo {
        let mut judged = caller.clone();
        if self == Mode::AssociatedNode {
            let keys = caller.extra.keys().cloned().collect();
            judged.extra = BTreeMap::from([(
                "authentication.kubernetes.io/associated-node-keys".to_string(),
                keys,
            )]);
        }
        judged
    }

    /// The user acting, when this way allows it; `None` when it does not apply; the first
    /// refusal met otherwise.
    async fn check(
        self,
        chain: &AuthorizerChain,
        caller: &UserInfo,
        wanted: &UserInfo,
        request: Option<&RequestInfo>,
    ) -> Result<Option<UserInfo>, ApiError> {
        if !self.applies(wanted, caller) {
            return Ok(None);
        }
        let judged = self.judged(caller);
        let allowed = |attrs: Attributes| async move {
            match chain.authorize(&attrs).await {
                Ok(()) => Ok(()),
                Err(why) => Err(forbidden(&attrs, &why)),
            }
        };
        if self != Mode::Legacy {
            let Some(request) = request else {
                return Err(ApiError::internal("the request was not described"));
            };
            let mut on = attributes(judged.clone(), request);
            on.verb = format!("impersonate-on:{}:{}", self.name(), request.verb);
            allowed(on).await?;
        }
        let constrained = self != Mode::Legacy;
        let group = if constrained { AUTHENTICATION } else { "" };
        let check =
            |group: &str, resource: &str, subresource: &str, namespace: &str, name: &str| {
                Attributes {
                    user: judged.clone(),
                    verb: self.verb(),
                    resource_request: true,
                    api_group: group.into(),
                    api_version: "v1".into(),
                    resource: resource.into(),
                    subresource: subresource.into(),
                    namespace: namespace.into(),
                    name: name.into(),
                    ..Default::default()
                }
            };
        let mut acting = wanted.clone();
        // The name.
        let named = match (node_name(&wanted.name), service_account(&wanted.name)) {
            (Some(node), _) if constrained => {
                acting.groups = vec!["system:nodes".into()];
                let node = if self == Mode::AssociatedNode {
                    "*"
                } else {
                    node
                };
                check(group, "nodes", "", "", node)
            }
            // (Its groups, when none are asked for, are added by `settle`.)
            (_, Some((namespace, name))) => check(group, "serviceaccounts", "", namespace, name),
            _ => check(group, "users", "", "", &wanted.name),
        };
        allowed(named).await?;
        if !wanted.uid.is_empty() {
            allowed(check(AUTHENTICATION, "uids", "", "", &wanted.uid)).await?;
        }
        if !wanted.groups.is_empty() {
            if constrained {
                for (refused, why) in [
                    ("", "impersonating the empty string group is not allowed"),
                    (
                        UserInfo::MASTERS,
                        "impersonating the system:masters group is not allowed",
                    ),
                ] {
                    if wanted.groups.iter().any(|g| g == refused) {
                        return Err(forbidden(&check(group, "groups", "", "", refused), why));
                    }
                }
            }
            let all = constrained
                && wanted.groups.len() >= MANY
                && chain
                    .authorize(&check(group, "groups", "", "", "*"))
                    .await
                    .is_ok();
            if !all {
                for g in &wanted.groups {
                    allowed(check(group, "groups", "", "", g)).await?;
                }
            }
        }
        if !wanted.extra.is_empty() {
            if constrained && let Err(why) = valid_extra(&wanted.extra) {
                return Err(forbidden(
                    &check(AUTHENTICATION, "userextras", "", "", ""),
                    &why,
                ));
            }
            let values: usize = wanted.extra.values().map(Vec::len).sum();
            let all = constrained
                && (wanted.extra.len() >= MANY || values >= MANY)
                && chain
                    .authorize(&check(AUTHENTICATION, "userextras", "*", "", "*"))
                    .await
                    .is_ok();
            if !all {
                for (key, values) in &wanted.extra {
                    for value in values {
                        allowed(check(AUTHENTICATION, "userextras", key, "", value)).await?;
                    }
                }
            }
        }
        Ok(Some(acting))
    }
}

/// The node a `system:node:<name>` user names (a valid node name).
fn node_name(user: &str) -> Option<&str> {
    let name = user.strip_prefix(NODE_PREFIX)?;
    capstan_meta::validation::dns1123_subdomain(name)
        .is_empty()
        .then_some(name)
}

/// The namespace and name a `system:serviceaccount:<ns>:<name>` user names (both valid).
fn service_account(user: &str) -> Option<(&str, &str)> {
    let (namespace, name) = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?.split_once(':')?;
    let valid = !name.contains(':')
        && capstan_meta::validation::dns1123_label(namespace).is_empty()
        && capstan_meta::validation::dns1123_subdomain(name).is_empty();
    valid.then_some((namespace, name))
}

/// Extras a constrained way accepts: keys are lower-case domain-prefixed paths, values
/// present and non-empty.
fn valid_extra(extra: &BTreeMap<String, Vec<String>>) -> Result<(), String> {
    for (key, values) in extra {
        if key.is_empty() {
            return Err("impersonating the empty string key in extra is not allowed".into());
        }
        let well_formed = key.split_once('/').is_some_and(|(domain, path)| {
            capstan_meta::validation::dns1123_subdomain(domain).is_empty()
                && !path.is_empty()
                && path
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c))
        });
        if !well_formed {
            return Err(format!(
                "impersonating an invalid key in extra is not allowed: extra.key: Invalid value: {}: must be a domain-prefixed path (such as \"acme.io/foo\")",
                serde_json::Value::from(key.as_str())
            ));
        }
        if *key != key.to_lowercase() {
            return Err(format!(
                "impersonating a non-lowercase key in extra is not allowed: {}",
                serde_json::Value::from(key.as_str())
            ));
        }
        if values.is_empty() {
            return Err("impersonating empty values in extra is not allowed".into());
        }
        if values.iter().any(String::is_empty) {
            return Err("impersonating the empty string value in extra is not allowed".into());
        }
    }
    Ok(())
}

/// The user the headers ask for, unchecked; `None` without impersonation headers.
fn requested(headers: &HeaderMap) -> Result<Option<UserInfo>, ApiError> {
    let text = |v: &http::HeaderValue| {
        v.to_str()
            .map(String::from)
            .map_err(|_| ApiError::bad_request("impersonation headers must be ASCII"))
    };
    let name = headers.get(USER).map(text).transpose()?;
    let uid = headers.get(UID).map(text).transpose()?;
    let groups = headers
        .get_all(GROUP)
        .iter()
        .map(text)
        .collect::<Result<Vec<_>, _>>()?;
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (header, value) in headers {
        if let Some(key) = header.as_str().strip_prefix(EXTRA) {
            extra.entry(unescape(key)).or_default().push(text(value)?);
        }
    }
    let Some(name) = name else {
        if uid.is_some() || !groups.is_empty() || !extra.is_empty() {
            return Err(ApiError::bad_request(
                "requested impersonation of groups, a uid or extra values without impersonating a user",
            ));
        }
        return Ok(None);
    };
    Ok(Some(UserInfo {
        name,
        uid: uid.unwrap_or_default(),
        groups,
        extra,
    }))
}

/// Extra keys travel percent-encoded in header names.
fn unescape(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = key.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The impersonated user as later filters see it: a service account's groups, and
/// `system:authenticated` (or `system:unauthenticated` for the anonymous user) as upstream.
fn settle(mut user: UserInfo) -> UserInfo {
    if let Some((namespace, _)) = user
        .name
        .strip_prefix(SERVICE_ACCOUNT_PREFIX)
        .and_then(|rest| rest.split_once(':'))
        && user.groups.is_empty()
    {
        user.groups = vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
        ];
    }
    if user.name == UserInfo::ANONYMOUS {
        if !user.in_group(UserInfo::UNAUTHENTICATED) {
            user.groups.push(UserInfo::UNAUTHENTICATED.into());
        }
    } else if !user.in_group(UserInfo::AUTHENTICATED) && !user.in_group(UserInfo::UNAUTHENTICATED) {
        user.groups.push(UserInfo::AUTHENTICATED.into());
    }
    user
}

impl Filter for Impersonation {
    fn filter<S: Next<B>, B: Send + 'static>(&self, mut req: Request<B>, next: &mut S) -> Answer {
        // Most requests impersonate no one: one look over the header names, and the rest of
        // the chain is called as it is.
        let asks = req.headers().keys().any(|h| h.as_str().starts_with(PREFIX));
        if !asks {
            return Box::pin(next.call(req));
        }
        let inner = next.clone();
        let this = self.clone();
        Box::pin(async move {
            let wanted = match requested(req.headers()) {
                Ok(Some(wanted)) => wanted,
                Ok(None) => return inner.oneshot(req).await,
                Err(e) => return Ok(response::error(&e)),
            };
            let Some(caller) = req.extensions().get::<UserInfo>().cloned() else {
                return Ok(response::error(&ApiError::internal(
                    "the request reached impersonation unauthenticated",
                )));
            };
            let request = req.extensions().get::<RequestInfo>();
            let acting = match this.impersonate(&caller, &wanted, request).await {
                Ok(acting) => acting,
                Err(refusal) => return Ok(response::error(&refusal)),
            };
            let headers = req.headers_mut();
            headers.remove(USER);
            headers.remove(UID);
            headers.remove(GROUP);
            let extras: Vec<_> = headers
                .keys()
                .filter(|h| h.as_str().starts_with(EXTRA))
                .cloned()
                .collect();
            for h in extras {
                headers.remove(h);
            }
            if let Some(audit) = req.extensions().get::<Arc<capstan_audit::RequestContext>>() {
                audit.set_impersonated(capstan_audit::User::from(&acting));
            }
            req.extensions_mut().insert(acting);
            inner.oneshot(req).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_accounts_and_groups_as_upstream() {
        let sa = settle(UserInfo {
            name: "system:serviceaccount:ns:robot".into(),
            ..Default::default()
        });
        assert_eq!(
            sa.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                "system:authenticated"
            ]
        );
        let anonymous = settle(UserInfo {
            name: UserInfo::ANONYMOUS.into(),
            ..Default::default()
        });
        assert_eq!(anonymous.groups, [UserInfo::UNAUTHENTICATED]);
        let given = settle(UserInfo {
            name: "bob".into(),
            groups: vec!["system:unauthenticated".into()],
            ..Default::default()
        });
        assert_eq!(given.groups, ["system:unauthenticated"]);
    }

    #[test]
    fn headers_name_the_wanted_user() {
        let mut headers = HeaderMap::new();
        headers.insert(USER, "system:serviceaccount:ns:robot".parse().unwrap());
        headers.append(GROUP, "dev".parse().unwrap());
        headers.insert(UID, "u-1".parse().unwrap());
        headers.append(
            "impersonate-extra-example.com%2fscopes",
            "read".parse().unwrap(),
        );
        let wanted = requested(&headers).unwrap().unwrap();
        assert_eq!(wanted.extra["example.com/scopes"], ["read"]);
        assert_eq!(
            (wanted.uid.as_str(), wanted.groups.as_slice()),
            ("u-1", &["dev".to_string()][..])
        );
        let mut groups_only = HeaderMap::new();
        groups_only.append(GROUP, "dev".parse().unwrap());
        assert!(requested(&groups_only).is_err());
    }

    #[test]
    fn each_way_applies_to_its_own_users() {
        let user = |name: &str| UserInfo {
            name: name.into(),
            ..Default::default()
        };
        let agent = UserInfo {
            name: "system:serviceaccount:kube-system:agent".into(),
            extra: [(NODE_NAME.to_string(), vec!["n1".to_string()])].into(),
            ..Default::default()
        };
        let applying = |wanted: &UserInfo, caller: &UserInfo| -> Vec<&'static str> {
            Mode::ALL
                .into_iter()
                .filter(|m| m.applies(wanted, caller))
                .map(|m| {
                    if m == Mode::Legacy {
                        "legacy"
                    } else {
                        m.name()
                    }
                })
                .collect()
        };
        let node = user("system:node:n1");
        assert_eq!(
            applying(&node, &agent),
            ["associated-node", "arbitrary-node", "legacy"]
        );
        assert_eq!(applying(&node, &user("dave")), ["arbitrary-node", "legacy"]);
        let robot = user("system:serviceaccount:default:robot");
        assert_eq!(
            applying(&robot, &user("erin")),
            ["serviceaccount", "legacy"]
        );
        assert_eq!(
            applying(&user("bob"), &user("carol")),
            ["user-info", "legacy"]
        );
        // A node asked for with groups is only for the legacy way.
        let mut grouped = node.clone();
        grouped.groups = vec!["system:nodes".into()];
        assert_eq!(applying(&grouped, &user("dave")), ["legacy"]);
        // Not a valid node name: an ordinary user.
        assert_eq!(
            applying(&user("system:node:Not_Valid"), &user("dave")),
            ["user-info", "legacy"]
        );
    }

    #[test]
    fn constrained_extras_are_well_formed() {
        let extra = |key: &str, values: &[&str]| {
            BTreeMap::from([(
                key.to_string(),
                values.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
            )])
        };
        assert!(valid_extra(&extra("example.com/scopes", &["read"])).is_ok());
        assert!(
            valid_extra(&extra("scopes", &["read"]))
                .unwrap_err()
                .contains("must be a domain-prefixed path")
        );
        assert!(
            valid_extra(&extra("example.com/Scopes", &["read"]))
                .unwrap_err()
                .contains("non-lowercase")
        );
        assert!(
            valid_extra(&extra("example.com/scopes", &[""]))
                .unwrap_err()
                .contains("empty string value")
        );
    }
}
