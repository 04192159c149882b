//! Authentication and authorization modes.

use capstan_e2e::RawClient;
use capstan_testing::TestServer;

use crate::SC;

#[tokio::test]
async fn tokens_anonymous_and_invalid_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "alice-token,alice,1001,\"dev,ops\"\n").unwrap();
    let file = tokens.clone();
    let server = TestServer::start_with(move |c| c.token_auth_file = Some(file)).await;
    let anon = RawClient::new(&server.url(), server.ca_pem(), None);
    assert_eq!(
        anon.get(SC).await.status,
        200,
        "anonymous is allowed by default"
    );
    let alice = anon.with_token(Some("alice-token"));
    assert_eq!(alice.get(SC).await.status, 200);
    let bad = anon.with_token(Some("nope"));
    let resp = bad.get(SC).await;
    assert_eq!(
        resp.status, 401,
        "an invalid token is refused even with anonymous access"
    );
    assert_eq!(resp.json()["reason"], "Unauthorized");

    let closed = TestServer::start_with(|c| c.anonymous_auth = false).await;
    let anon = RawClient::new(&closed.url(), closed.ca_pem(), None);
    assert_eq!(anon.get(SC).await.status, 401);
}

#[tokio::test]
async fn always_deny_spares_system_masters() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "bob-token,bob,1002\n").unwrap();
    let file = tokens.clone();
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(file);
        c.authorization_modes = vec!["AlwaysDeny".into()];
    })
    .await;
    let bob = RawClient::new(&server.url(), server.ca_pem(), Some("bob-token"));
    let resp = bob.get(&format!("{SC}/x")).await;
    assert_eq!(resp.status, 403);
    let status = resp.json();
    assert_eq!(status["reason"], "Forbidden");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains(r#"User "bob" cannot get resource "storageclasses""#),
        "{status}"
    );
    let admin = crate::admin(&server);
    assert_eq!(
        admin.get(SC).await.status,
        200,
        "system:masters is always allowed"
    );
}
