//! Bootstrap tokens (`--enable-bootstrap-token-auth`): `<id>.<secret>` tokens kept in
//! `bootstrap-token-<id>` Secrets of `kube-system`, with which new nodes join a cluster.

use std::sync::Arc;

use async_trait::async_trait;

use super::serviceaccount::ObjectLookup;
use super::{Authenticator, Credentials, Outcome};
use crate::user::UserInfo;

/// The namespace bootstrap-token Secrets live in.
const NAMESPACE: &str = "kube-system";
/// Their type.
const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
/// The group of every bootstrap token's user.
pub const BOOTSTRAPPERS: &str = "system:bootstrappers";

/// Authenticates bootstrap tokens against their Secrets.
pub struct BootstrapTokens {
    lookup: Arc<dyn ObjectLookup>,
}

impl BootstrapTokens {
    /// Reads the Secrets through `lookup`.
    pub fn new(lookup: Arc<dyn ObjectLookup>) -> Self {
        Self { lookup }
    }
}

/// `<id>.<secret>`: 6 and 16 characters of `[a-z0-9]`.
fn split(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let ok = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    (ok(id, 6) && ok(secret, 16)).then_some((id, secret))
}

/// Extra groups must be `system:bootstrappers:` and then `[a-z0-9:-]`, ending alphanumeric.
fn valid_group(group: &str) -> bool {
    let Some(rest) = group.strip_prefix("system:bootstrappers:") else {
        return false;
    };
    !rest.is_empty()
        && rest.len() <= 256
        && rest
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':' || b == b'-')
        && rest
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// Compares without stopping at the first difference (no timing hint of how much matched).
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[async_trait]
impl Authenticator for BootstrapTokens {
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
        // Every mismatch is "not mine": a token that looks like a bootstrap token may still
        // be another authenticator's, and the chain refuses bearer tokens nobody accepts.
        let Some((id, secret)) = credentials.bearer_token.and_then(split) else {
            return Outcome::NoOpinion;
        };
        let name = format!("bootstrap-token-{id}");
        let found = match self.lookup.secret(NAMESPACE, &name).await {
            Ok(Some(found)) => found,
            Ok(None) => return Outcome::NoOpinion,
            Err(why) => return Outcome::Rejected(why),
        };
        let data = |key: &str| {
            found
                .data
                .get(key)
                .and_then(|v| std::str::from_utf8(v).ok())
                .unwrap_or_default()
        };
        if found.type_ != SECRET_TYPE || found.object.deleting_since.is_some() {
            return Outcome::NoOpinion;
        }
        let stored = data("token-secret");
        if data("token-id") != id || !same_secret(stored.as_bytes(), secret.as_bytes()) {
            return Outcome::NoOpinion;
        }
        let expiration = data("expiration");
        if !expiration.is_empty() {
            match expiration.parse::<jiff::Timestamp>() {
                Ok(t) if t > jiff::Timestamp::now() => {}
                _ => return Outcome::NoOpinion,
            }
        }
        if data("usage-bootstrap-authentication") != "true" {
            return Outcome::NoOpinion;
        }
        let mut groups = vec![BOOTSTRAPPERS.to_string()];
        for group in data("auth-extra-groups")
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
        {
            if !valid_group(group) {
                return Outcome::NoOpinion;
            }
            if !groups.iter().any(|g| g == group) {
                groups.push(group.to_string());
            }
        }
        Outcome::authenticated(UserInfo {
            name: format!("system:bootstrap:{id}"),
            groups,
            ..Default::default()
        })
    }

    /// Known at once for tokens not shaped as bootstrap tokens; one that is needs its
    /// secret looked up.
    fn authenticate_now(&self, credentials: &Credentials<'_>) -> Option<Outcome> {
        match credentials.bearer_token.and_then(split) {
            None => Some(Outcome::NoOpinion),
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::serviceaccount::{ObjectState, SecretState};

    struct OneSecret(SecretState);

    #[async_trait]
    impl ObjectLookup for OneSecret {
        async fn service_account(&self, _: &str, _: &str) -> Result<Option<ObjectState>, String> {
            Ok(None)
        }
        async fn pod(&self, _: &str, _: &str) -> Result<Option<ObjectState>, String> {
            Ok(None)
        }
        async fn secret(&self, ns: &str, name: &str) -> Result<Option<SecretState>, String> {
            Ok((ns == NAMESPACE && name == "bootstrap-token-abcdef").then(|| self.0.clone()))
        }
        async fn node(&self, _: &str) -> Result<Option<ObjectState>, String> {
            Ok(None)
        }
    }

    fn secret(pairs: &[(&str, &str)]) -> SecretState {
        SecretState {
            type_: SECRET_TYPE.into(),
            data: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
                .collect(),
            ..Default::default()
        }
    }

    const GOOD: &[(&str, &str)] = &[
        ("token-id", "abcdef"),
        ("token-secret", "0123456789abcdef"),
        ("usage-bootstrap-authentication", "true"),
        (
            "auth-extra-groups",
            "system:bootstrappers:kubeadm:default-node-token",
        ),
        ("expiration", "2999-01-01T00:00:00Z"),
    ];

    async fn check(pairs: &[(&str, &str)], token: &str) -> Outcome {
        BootstrapTokens::new(Arc::new(OneSecret(secret(pairs))))
            .authenticate(&Credentials::bearer(token))
            .await
    }

    #[tokio::test]
    async fn a_valid_token_joins_its_groups() {
        let Outcome::Authenticated { user, .. } = check(GOOD, "abcdef.0123456789abcdef").await
        else {
            panic!("not authenticated")
        };
        assert_eq!(user.name, "system:bootstrap:abcdef");
        assert_eq!(
            user.groups,
            [
                "system:bootstrappers",
                "system:bootstrappers:kubeadm:default-node-token"
            ]
        );
    }

    #[tokio::test]
    async fn anything_else_is_not_a_bootstrap_token() {
        let with = |key: &str, value: &str| -> Vec<(&'static str, String)> {
            GOOD.iter()
                .map(|(k, v)| {
                    (
                        *k,
                        if *k == key {
                            value.to_string()
                        } else {
                            v.to_string()
                        },
                    )
                })
                .collect()
        };
        let cases = [
            with("expiration", "2001-01-01T00:00:00Z"),
            with("usage-bootstrap-authentication", "false"),
            with("auth-extra-groups", "system:masters"),
            with("token-secret", "ffffffffffffffff"),
        ];
        for case in cases {
            let pairs: Vec<(&str, &str)> = case.iter().map(|(k, v)| (*k, v.as_str())).collect();
            assert_eq!(
                check(&pairs, "abcdef.0123456789abcdef").await,
                Outcome::NoOpinion,
                "{pairs:?}"
            );
        }
        assert_eq!(
            check(GOOD, "abcdef.0123456789ABCDEF").await,
            Outcome::NoOpinion
        );
        assert_eq!(
            check(GOOD, "zzzzzz.0123456789abcdef").await,
            Outcome::NoOpinion
        );
    }
}
