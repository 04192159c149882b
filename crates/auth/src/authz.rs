//! Authorization: may this user do this.

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::{Error, Result};
use crate::user::UserInfo;

/// What a request asks to do, as upstream's authorizer attributes.
#[derive(Debug, Clone, Default)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// The verb: get, list, watch, create, update, patch, delete, deletecollection; for
    /// non-resource requests the lower-case HTTP method.
    pub verb: String,
    /// Whether this is a request for an API resource (as opposed to e.g. `/version`).
    pub resource_request: bool,
    /// API group (resource requests).
    pub api_group: String,
    /// API version (resource requests).
    pub api_version: String,
    /// Plural resource (resource requests).
    pub resource: String,
    /// Subresource, if any.
    pub subresource: String,
    /// Namespace, if any.
    pub namespace: String,
    /// Object name, if any.
    pub name: String,
    /// The request path (non-resource requests).
    pub path: String,
}

/// An authorizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow,
    /// Denied, and no later authorizer is asked.
    Deny(String),
    /// Neither; ask the next one.
    NoOpinion(String),
}

/// One authorization mode.
#[async_trait]
pub trait Authorizer: Send + Sync + 'static {
    /// Decides on one request.
    async fn authorize(&self, attributes: &Attributes) -> Decision;
}

/// `AlwaysAllow`: everything is allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysAllow;

#[async_trait]
impl Authorizer for AlwaysAllow {
    async fn authorize(&self, _: &Attributes) -> Decision {
        Decision::Allow
    }
}

/// `AlwaysDeny`: nothing is allowed (it has no opinion, so a later mode may still allow).
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysDeny;

#[async_trait]
impl Authorizer for AlwaysDeny {
    async fn authorize(&self, _: &Attributes) -> Decision {
        Decision::NoOpinion("Everything is forbidden.".into())
    }
}

/// Allows members of `system:masters` everything, ahead of every configured mode.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrivilegedGroups;

#[async_trait]
impl Authorizer for PrivilegedGroups {
    async fn authorize(&self, attributes: &Attributes) -> Decision {
        if attributes.user.in_group(UserInfo::MASTERS) {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    }
}

/// The configured modes, asked in order: the first allow or deny decides.
#[derive(Clone)]
pub struct AuthorizerChain {
    authorizers: Vec<Arc<dyn Authorizer>>,
}

impl AuthorizerChain {
    /// A chain of the given authorizers, behind [`PrivilegedGroups`].
    pub fn new(mut authorizers: Vec<Arc<dyn Authorizer>>) -> Self {
        authorizers.insert(0, Arc::new(PrivilegedGroups));
        Self { authorizers }
    }

    /// Builds the chain of `--authorization-mode` (comma-separated mode names).
    pub fn from_modes(modes: &[String]) -> Result<Self> {
        let mut seen: Vec<&str> = Vec::new();
        let mut authorizers: Vec<Arc<dyn Authorizer>> = Vec::new();
        for mode in modes {
            if seen.contains(&mode.as_str()) {
                return Err(Error::DuplicateMode(mode.clone()));
            }
            seen.push(mode);
            authorizers.push(match mode.as_str() {
                "AlwaysAllow" => Arc::new(AlwaysAllow),
                "AlwaysDeny" => Arc::new(AlwaysDeny),
                other => return Err(Error::UnknownMode(other.to_string())),
            });
        }
        Ok(Self::new(authorizers))
    }

    /// Allowed, or the reason it is not (403).
    pub async fn authorize(&self, attributes: &Attributes) -> std::result::Result<(), String> {
        let mut reasons = Vec::new();
        for a in &self.authorizers {
            match a.authorize(attributes).await {
                Decision::Allow => return Ok(()),
                Decision::Deny(why) => return Err(why),
                Decision::NoOpinion(why) if !why.is_empty() => reasons.push(why),
                Decision::NoOpinion(_) => {}
            }
        }
        Err(reasons.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(groups: &[&str]) -> Attributes {
        Attributes {
            user: UserInfo {
                name: "u".into(),
                groups: groups.iter().map(|g| g.to_string()).collect(),
                ..Default::default()
            },
            verb: "get".into(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn modes() {
        let allow = AuthorizerChain::from_modes(&["AlwaysAllow".into()]).unwrap();
        assert!(allow.authorize(&attrs(&[])).await.is_ok());
        let deny = AuthorizerChain::from_modes(&["AlwaysDeny".into()]).unwrap();
        assert_eq!(
            deny.authorize(&attrs(&[])).await.unwrap_err(),
            "Everything is forbidden."
        );
        assert!(
            deny.authorize(&attrs(&[UserInfo::MASTERS])).await.is_ok(),
            "system:masters is always allowed"
        );
        let both =
            AuthorizerChain::from_modes(&["AlwaysDeny".into(), "AlwaysAllow".into()]).unwrap();
        assert!(
            both.authorize(&attrs(&[])).await.is_ok(),
            "a later mode may allow"
        );
        assert!(AuthorizerChain::from_modes(&["RBAC2".into()]).is_err());
        assert!(
            AuthorizerChain::from_modes(&["AlwaysAllow".into(), "AlwaysAllow".into()]).is_err()
        );
    }
}
