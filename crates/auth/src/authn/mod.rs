//! Authentication: credentials in, a user out.
//!
//! Each [`Authenticator`] understands one kind of credential; the [`AuthenticatorChain`]
//! asks them in upstream's order and adds the groups every authenticated user has.

mod bootstrap;
mod cache;
pub mod jwt;
mod requestheader;
pub mod serviceaccount;
mod tokens;
mod x509;

use std::sync::Arc;

use async_trait::async_trait;

use crate::user::UserInfo;

pub use bootstrap::BootstrapTokens;
pub use cache::TokenCache;
pub use requestheader::{RequestHeader, RequestHeaderConfig};
pub use tokens::StaticTokens;
pub use x509::{CaBundle, ClientCa, PeerCertificates};

/// The credentials a request carries.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct Credentials<'a> {
    /// The bearer token of an `Authorization: Bearer …` header.
    pub bearer_token: Option<&'a str>,
    /// The certificate chain the client presented in the TLS handshake.
    pub client_certificates: Option<&'a PeerCertificates>,
    /// The audiences the credential must be valid for (a TokenReview's); `None`: the
    /// server's own (`--api-audiences`).
    pub audiences: Option<&'a [String]>,
    /// The request's headers (the front proxy names users in them).
    pub headers: Option<&'a http::HeaderMap>,
}

impl<'a> Credentials<'a> {
    /// Credentials with a bearer token.
    pub fn bearer(token: &'a str) -> Self {
        Self {
            bearer_token: Some(token),
            ..Default::default()
        }
    }

    /// These credentials with the request's headers.
    pub fn with_headers(mut self, headers: &'a http::HeaderMap) -> Self {
        self.headers = Some(headers);
        self
    }

    /// Adds the client's certificate chain, if it presented one.
    pub fn with_client_certificates(mut self, certs: Option<&'a PeerCertificates>) -> Self {
        self.client_certificates = certs;
        self
    }

    /// Whether the request carries any credential at all.
    pub fn is_empty(&self) -> bool {
        self.bearer_token.is_none() && self.client_certificates.is_none()
    }
}

/// What one authenticator makes of the credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The credentials identify this user.
    Authenticated {
        /// Who.
        user: UserInfo,
        /// The audiences the credential is valid for, among those asked for; empty for
        /// credentials valid for any audience (static tokens, certificates).
        audiences: Vec<String>,
    },
    /// Nothing this authenticator understands.
    NoOpinion,
    /// A credential of this authenticator's kind that is not valid.
    Rejected(String),
}

impl Outcome {
    /// `user`, for whatever audience.
    pub fn authenticated(user: UserInfo) -> Self {
        Self::Authenticated {
            user,
            audiences: Vec::new(),
        }
    }
}

/// One source of identities. Implementations must be cheap to call concurrently.
#[async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// Identifies the caller, or says why not.
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome;

    /// The outcome of [`Self::authenticate`] when it is known without waiting (credentials
    /// checked in memory, or not this authenticator's kind); `None` when finding it out
    /// means waiting (a lookup in the store, a remote call).
    fn authenticate_now(&self, credentials: &Credentials<'_>) -> Option<Outcome> {
        let _ = credentials;
        None
    }
}

/// The authenticators in order, plus the anonymous fallback.
#[derive(Clone, Default)]
pub struct AuthenticatorChain {
    authenticators: Vec<Arc<dyn Authenticator>>,
    anonymous: bool,
    implicit_audiences: Vec<String>,
}

impl AuthenticatorChain {
    /// A chain; `anonymous` admits requests without credentials as `system:anonymous`.
    pub fn new(authenticators: Vec<Arc<dyn Authenticator>>, anonymous: bool) -> Self {
        Self {
            authenticators,
            anonymous,
            implicit_audiences: Vec::new(),
        }
    }

    /// The audiences of credentials that name none (static and bootstrap tokens, legacy
    /// service-account tokens, ...): the server's own (`--api-audiences`). A TokenReview for
    /// other audiences finds such a credential unauthenticated, as upstream's.
    pub fn with_implicit_audiences(mut self, audiences: Vec<String>) -> Self {
        self.implicit_audiences = audiences;
        self
    }

    /// The user of a request, or the reason it is refused (401).
    pub async fn authenticate(
        &self,
        credentials: &Credentials<'_>,
    ) -> std::result::Result<UserInfo, String> {
        let found = self.identify(credentials).await?;
        self.user_or_anonymous(found, credentials)
    }

    /// [`Self::authenticate`]'s answer when every authenticator it asks can give its
    /// outcome without waiting; `None` otherwise.
    pub fn authenticate_now(
        &self,
        credentials: &Credentials<'_>,
    ) -> Option<std::result::Result<UserInfo, String>> {
        let mut search = Search::default();
        for a in &self.authenticators {
            if let Some(found) =
                self.settle(a.authenticate_now(credentials)?, credentials, &mut search)
            {
                return Some(self.user_or_anonymous(Some(found), credentials));
            }
        }
        Some(
            search
                .end()
                .and_then(|found| self.user_or_anonymous(found, credentials)),
        )
    }

    /// The user found, else the anonymous one when the request carries no token and
    /// anonymous requests are allowed.
    fn user_or_anonymous(
        &self,
        found: Option<(UserInfo, Vec<String>)>,
        credentials: &Credentials<'_>,
    ) -> std::result::Result<UserInfo, String> {
        if let Some((user, _)) = found {
            return Ok(user);
        }
        // A bearer token nobody accepts is refused (as upstream's bearer-token wrapper does);
        // a client certificate nobody maps to a user leaves the request anonymous.
        if credentials.bearer_token.is_some() {
            return Err("invalid bearer token".into());
        }
        if self.anonymous {
            Ok(UserInfo::anonymous())
        } else {
            Err("anonymous requests are not allowed".into())
        }
    }

    /// What a TokenReview answers: the user of `token` and the audiences it is valid for
    /// among `audiences` (empty: the server's own); `None` when no authenticator knows the
    /// token for them; never the anonymous user.
    pub async fn review_token(
        &self,
        token: &str,
        audiences: &[String],
    ) -> std::result::Result<Option<(UserInfo, Vec<String>)>, String> {
        let asked = if audiences.is_empty() && !self.implicit_audiences.is_empty() {
            self.implicit_audiences.as_slice()
        } else {
            audiences
        };
        let credentials = Credentials {
            audiences: (!asked.is_empty()).then_some(asked),
            ..Credentials::bearer(token)
        };
        self.identify(&credentials).await
    }

    /// The first authenticator's user, `None` when none has an opinion, or the last
    /// rejection when some refused and none accepted.
    async fn identify(
        &self,
        credentials: &Credentials<'_>,
    ) -> std::result::Result<Option<(UserInfo, Vec<String>)>, String> {
        let mut search = Search::default();
        for a in &self.authenticators {
            let outcome = a.authenticate(credentials).await;
            if let Some(found) = self.settle(outcome, credentials, &mut search) {
                return Ok(Some(found));
            }
        }
        search.end()
    }

    /// What one authenticator's `outcome` means for the search: the user with the
    /// audiences it is valid for (the search ends), or the search goes on (a rejection is
    /// kept in `search`).
    fn settle(
        &self,
        outcome: Outcome,
        credentials: &Credentials<'_>,
        search: &mut Search,
    ) -> Option<(UserInfo, Vec<String>)> {
        match outcome {
            Outcome::Authenticated {
                mut user,
                mut audiences,
            } => {
                // A credential valid for any audience is valid for the server's own: asked
                // for others, it is not this authenticator's (the next may know it).
                if let Some(asked) = credentials.audiences
                    && audiences.is_empty()
                    && !self.implicit_audiences.is_empty()
                {
                    audiences = asked
                        .iter()
                        .filter(|a| self.implicit_audiences.contains(a))
                        .cloned()
                        .collect();
                    if audiences.is_empty() {
                        return None;
                    }
                }
                if !user.in_group(UserInfo::AUTHENTICATED)
                    && !user.in_group(UserInfo::UNAUTHENTICATED)
                {
                    user.groups.push(UserInfo::AUTHENTICATED.into());
                }
                Some((user, audiences))
            }
            Outcome::Rejected(why) => {
                search.rejection = Some(why);
                None
            }
            Outcome::NoOpinion => None,
        }
    }
}

/// A search through the chain that has found nobody yet.
#[derive(Default)]
struct Search {
    /// The last authenticator's refusal.
    rejection: Option<String>,
}

impl Search {
    /// The end of a search without a user: `None` when no authenticator had an opinion,
    /// else the last refusal.
    fn end<T>(self) -> std::result::Result<Option<T>, String> {
        match self.rejection {
            // An invalid credential is refused even when anonymous requests are allowed.
            Some(why) => Err(why),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::StaticTokens;

    #[tokio::test]
    async fn chain_rules() {
        let tokens = StaticTokens::parse("good,alice,u1,dev").unwrap();
        let chain = AuthenticatorChain::new(vec![Arc::new(tokens.clone())], true);
        let alice = chain
            .authenticate(&Credentials::bearer("good"))
            .await
            .unwrap();
        assert_eq!(alice.groups, ["dev", UserInfo::AUTHENTICATED]);
        assert!(
            chain
                .authenticate(&Credentials::bearer("bad"))
                .await
                .is_err(),
            "invalid token is 401 even with anonymous"
        );
        assert_eq!(
            chain.authenticate(&Credentials::default()).await.unwrap(),
            UserInfo::anonymous()
        );
        let closed = AuthenticatorChain::new(vec![Arc::new(tokens)], false);
        assert!(closed.authenticate(&Credentials::default()).await.is_err());
    }

    /// Knows one token, and only by waiting.
    struct Remote;

    #[async_trait]
    impl Authenticator for Remote {
        async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
            match credentials.bearer_token {
                Some("remote") => Outcome::authenticated(UserInfo {
                    name: "bob".into(),
                    ..Default::default()
                }),
                _ => Outcome::NoOpinion,
            }
        }
    }

    #[tokio::test]
    async fn answers_at_once_agree_with_the_awaited_ones() {
        let tokens = StaticTokens::parse("good,alice,u1,dev").unwrap();
        for anonymous in [true, false] {
            let chain = AuthenticatorChain::new(vec![Arc::new(tokens.clone())], anonymous);
            for credentials in [
                Credentials::bearer("good"),
                Credentials::bearer("bad"),
                Credentials::default(),
            ] {
                let now = chain.authenticate_now(&credentials).expect("in memory");
                assert_eq!(
                    now,
                    chain.authenticate(&credentials).await,
                    "{credentials:?}"
                );
            }
        }
        // An authenticator that must wait is waited for, unless an earlier one decided.
        let chain = AuthenticatorChain::new(vec![Arc::new(tokens), Arc::new(Remote)], false);
        let alice = chain.authenticate_now(&Credentials::bearer("good"));
        assert_eq!(alice.unwrap().unwrap().name, "alice");
        assert!(
            chain
                .authenticate_now(&Credentials::bearer("remote"))
                .is_none()
        );
        assert_eq!(
            chain
                .authenticate(&Credentials::bearer("remote"))
                .await
                .unwrap()
                .groups,
            [UserInfo::AUTHENTICATED]
        );
    }

    #[tokio::test]
    async fn reviews_of_audience_free_tokens_answer_for_the_servers_audiences() {
        let tokens = StaticTokens::parse("good,alice,u1,dev").unwrap();
        let chain = AuthenticatorChain::new(vec![Arc::new(tokens)], false)
            .with_implicit_audiences(vec!["api".into(), "other-api".into()]);
        let review = |auds: &[&str]| {
            let auds: Vec<String> = auds.iter().map(|a| a.to_string()).collect();
            let chain = chain.clone();
            async move {
                chain
                    .review_token("good", &auds)
                    .await
                    .unwrap()
                    .map(|(user, auds)| (user.name, auds))
            }
        };
        let alice = |auds: &[&str]| {
            Some((
                "alice".to_string(),
                auds.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            ))
        };
        assert_eq!(review(&[]).await, alice(&["api", "other-api"]));
        assert_eq!(review(&["vault", "api"]).await, alice(&["api"]));
        assert_eq!(review(&["vault"]).await, None, "not for vault");
        // Requests themselves name no audience: the token works.
        assert!(
            chain
                .authenticate(&Credentials::bearer("good"))
                .await
                .is_ok()
        );
    }
}
