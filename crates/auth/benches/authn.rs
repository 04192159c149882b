//! What authentication costs a request: the chain with a static token, with a cached
//! service-account token (the steady state of a client), and a first sight of a
//! service-account token (its signature checked) for RS256 and ES256 keys.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_auth::UserInfo;
use capstan_auth::authn::jwt::{self, SigningKey};
use capstan_auth::authn::serviceaccount::{
    ObjectLookup, ObjectState, Ref, SecretState, ServiceAccountConfig, ServiceAccountTokens,
    TokenSpec,
};
use capstan_auth::authn::{AuthenticatorChain, Credentials, StaticTokens};
use criterion::{Criterion, criterion_group, criterion_main};

const RSA_PEM: &str = include_str!("../src/authn/testdata/rsa-pkcs1.pem");

/// One service account, always there.
struct OneAccount;

#[async_trait]
impl ObjectLookup for OneAccount {
    async fn service_account(&self, _: &str, _: &str) -> Result<Option<ObjectState>, String> {
        Ok(Some(ObjectState {
            uid: "sa-uid".into(),
            deleting_since: None,
        }))
    }
    async fn pod(&self, _: &str, _: &str) -> Result<Option<ObjectState>, String> {
        Ok(None)
    }
    async fn secret(&self, _: &str, _: &str) -> Result<Option<SecretState>, String> {
        Ok(None)
    }
    async fn node(&self, _: &str) -> Result<Option<ObjectState>, String> {
        Ok(None)
    }
}

fn tokens(pem: &str) -> Arc<ServiceAccountTokens> {
    let key = Arc::new(SigningKey::from_pem(pem.as_bytes()).expect("a key"));
    let config = ServiceAccountConfig {
        issuers: vec!["https://kubernetes.default.svc.cluster.local".into()],
        keys: vec![key.public_key().clone()],
        signing_key: Some(key),
        lookup: true,
        ..Default::default()
    };
    Arc::new(ServiceAccountTokens::new(config, Arc::new(OneAccount)))
}

fn issue(tokens: &ServiceAccountTokens) -> String {
    let spec = TokenSpec {
        namespace: "default".into(),
        service_account: Ref {
            name: "default".into(),
            uid: "sa-uid".into(),
        },
        expiration_seconds: 3600,
        ..Default::default()
    };
    tokens.issue(&spec).expect("a token").token
}

fn chain(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let ec = tokens(&SigningKey::generate_pem().expect("a P-256 key"));
    let sa_token = issue(&ec);
    let mut statics = StaticTokens::new();
    let static_token = "x".repeat(43);
    let long_static = "y".repeat(sa_token.len());
    for t in [&static_token, &long_static] {
        statics.insert(
            t.clone(),
            UserInfo {
                name: "admin".into(),
                groups: vec![UserInfo::MASTERS.into()],
                ..Default::default()
            },
        );
    }
    let chain = AuthenticatorChain::new(vec![Arc::new(statics), ec.clone()], false);
    let mut group = c.benchmark_group("authenticate");
    for (name, token) in [
        ("static token (43 bytes)", &static_token),
        ("static token (SA-token length)", &long_static),
        ("service-account token, cached", &sa_token),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(chain.authenticate(&Credentials::bearer(token)))
                    .expect("authenticated")
            })
        });
    }
    group.finish();

    let rsa = tokens(RSA_PEM);
    let mut group = c.benchmark_group("first sight (signature)");
    for (name, tokens) in [("RS256 (2048-bit)", &rsa), ("ES256", &ec)] {
        let token = issue(tokens);
        let keys = &tokens.config().keys;
        group.bench_function(name, |b| {
            b.iter(|| jwt::verify(&token, keys).expect("verified"))
        });
    }
    group.finish();
}

criterion_group!(benches, chain);
criterion_main!(benches);
