//! Impersonation (`Impersonate-User`, `-Uid`, `-Group`, `-Extra-<key>`; `kubectl --as`): a
//! caller allowed the `impersonate` verb on each thing it asks for acts as that user from
//! here on (audit, when it lands, records the caller too).

use std::collections::BTreeMap;
use std::sync::Arc;

use capstan_auth::UserInfo;
use capstan_auth::authz::{Attributes, AuthorizerChain};
use capstan_meta::ApiError;
use http::{HeaderMap, Request};
use tower::ServiceExt;

use super::authorization::forbidden;
use super::filter::{Answer, Filter, Next};
use crate::response;

const USER: &str = "impersonate-user";
const UID: &str = "impersonate-uid";
const GROUP: &str = "impersonate-group";
const EXTRA: &str = "impersonate-extra-";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// Switches the request's user to the one its impersonation headers name, once the
/// authorizers allow the caller to.
#[derive(Clone)]
pub struct Impersonation {
    chain: Arc<AuthorizerChain>,
}

impl Impersonation {
    /// The filter, asking `chain`.
    pub fn new(chain: Arc<AuthorizerChain>) -> Self {
        Self { chain }
    }
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

/// The `impersonate` checks a request needs, one per thing it asks for.
fn checks(caller: &UserInfo, wanted: &UserInfo) -> Vec<Attributes> {
    let check =
        |group: &str, resource: &str, subresource: &str, namespace: &str, name: &str| Attributes {
            user: caller.clone(),
            verb: "impersonate".into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            ..Default::default()
        };
    let mut all = Vec::new();
    match wanted
        .name
        .strip_prefix(SERVICE_ACCOUNT_PREFIX)
        .and_then(|rest| rest.split_once(':'))
    {
        Some((namespace, name)) => all.push(check("", "serviceaccounts", "", namespace, name)),
        None => all.push(check("", "users", "", "", &wanted.name)),
    }
    for group in &wanted.groups {
        all.push(check("", "groups", "", "", group));
    }
    if !wanted.uid.is_empty() {
        all.push(check("authentication.k8s.io", "uids", "", "", &wanted.uid));
    }
    for (key, values) in &wanted.extra {
        for value in values {
            all.push(check("authentication.k8s.io", "userextras", key, "", value));
        }
    }
    all
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
        let inner = next.clone();
        let chain = self.chain.clone();
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
            for attrs in checks(&caller, &wanted) {
                if let Err(why) = chain.authorize(&attrs).await {
                    return Ok(response::error(&forbidden(&attrs, &why)));
                }
            }
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
            let acting = settle(wanted);
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
    fn every_asked_thing_is_checked() {
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
        let caller = UserInfo {
            name: "alice".into(),
            ..Default::default()
        };
        let asked: Vec<_> = checks(&caller, &wanted)
            .into_iter()
            .map(|a| (a.api_group, a.resource, a.subresource, a.namespace, a.name))
            .collect();
        let s = |v: &str| v.to_string();
        assert_eq!(
            asked,
            [
                (s(""), s("serviceaccounts"), s(""), s("ns"), s("robot")),
                (s(""), s("groups"), s(""), s(""), s("dev")),
                (
                    s("authentication.k8s.io"),
                    s("uids"),
                    s(""),
                    s(""),
                    s("u-1")
                ),
                (
                    s("authentication.k8s.io"),
                    s("userextras"),
                    s("example.com/scopes"),
                    s(""),
                    s("read")
                ),
            ]
        );
        let mut groups_only = HeaderMap::new();
        groups_only.append(GROUP, "dev".parse().unwrap());
        assert!(requested(&groups_only).is_err());
    }
}
