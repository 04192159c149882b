//! Authentication and authorization modes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use capstan_e2e::{RawClient, TestCa, kubectl};
use capstan_testing::TestServer;
use http::Method;
use serde_json::{Value, json};

use crate::{SC, ok};

#[tokio::test]
async fn tokens_anonymous_and_invalid_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "alice-token,alice,1001,\"dev,ops\"\n").unwrap();
    let file = tokens.clone();
    let server = TestServer::start_with(move |c| c.token_auth_file = Some(file)).await;
    // The defaults (AlwaysAllow, anonymous asked for): anonymous requests are refused, or
    // anyone reaching the port could do anything; upstream refuses them too.
    let anon = RawClient::new(&server.url(), server.ca_pem(), None);
    let resp = anon.get(SC).await;
    assert_eq!(resp.status, 401, "no anonymous access with AlwaysAllow");
    assert_eq!(resp.json()["reason"], "Unauthorized");
    assert_eq!(
        anon.send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "by-anyone"}}),
        )
        .await
        .status,
        401
    );
    let alice = anon.with_token(Some("alice-token"));
    assert_eq!(alice.get(SC).await.status, 200);

    // With RBAC, anonymous requests are served as system:anonymous, which may read only the
    // public endpoints; an invalid token is refused all the same.
    let rbac = TestServer::start_with(|c| c.authorization_modes = vec!["RBAC".into()]).await;
    let anon = RawClient::new(&rbac.url(), rbac.ca_pem(), None);
    assert_eq!(anon.get("/version").await.status, 200);
    assert_eq!(anon.get(SC).await.status, 403);
    let resp = anon.with_token(Some("nope")).get("/version").await;
    assert_eq!(
        resp.status, 401,
        "an invalid token is refused even with anonymous access"
    );

    let closed = TestServer::start_with(|c| {
        c.anonymous_auth = false;
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let anon = RawClient::new(&closed.url(), closed.ca_pem(), None);
    assert_eq!(anon.get("/version").await.status, 401);
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

/// A kubeconfig whose user is the client certificate `cert` with `key`.
fn certificate_kubeconfig(
    dir: &Path,
    name: &str,
    server: &TestServer,
    pair: &(String, String),
) -> PathBuf {
    capstan_e2e::certificate_kubeconfig(dir, name, &server.url(), server.ca_pem(), pair)
}

/// `kubectl auth whoami` of `kubeconfig` (plus `args`): user name, groups, extra.
fn whoami(kubeconfig: &Path, args: &[&str]) -> Result<(String, Vec<String>, Value), String> {
    let mut all = vec!["auth", "whoami", "-o", "json"];
    all.extend(args);
    let (success, out, err) = kubectl(kubeconfig, &all);
    if !success {
        return Err(err);
    }
    let review: Value = serde_json::from_str(&out).unwrap();
    let user = &review["status"]["userInfo"];
    let groups = user["groups"]
        .as_array()
        .map(|g| g.iter().map(|g| g.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    Ok((
        user["username"].as_str().unwrap_or_default().to_string(),
        groups,
        user["extra"].clone(),
    ))
}

/// Polls `check` for up to ten seconds.
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_authenticate_kubectl_and_follow_the_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let trusted = TestCa::new("clients");
    let other = TestCa::new("elsewhere");
    let bundle = dir.path().join("client-ca.crt");
    std::fs::write(&bundle, &trusted.pem).unwrap();
    let file = bundle.clone();
    let server = TestServer::start_with(move |c| c.client_ca_file = Some(file)).await;

    let jane = certificate_kubeconfig(
        dir.path(),
        "jane",
        &server,
        &trusted.client("jane", &["dev", "ops"]),
    );
    let (name, groups, extra) = whoami(&jane, &[]).unwrap();
    assert_eq!(name, "jane");
    assert_eq!(groups, ["dev", "ops", "system:authenticated"]);
    let id = extra["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap_or_default();
    assert!(id.starts_with("X509SHA256="), "{extra}");
    ok(kubectl(&jane, &["get", "storageclasses"]));

    let mallory = certificate_kubeconfig(
        dir.path(),
        "mallory",
        &server,
        &other.client("mallory", &["system:masters"]),
    );
    let refused = whoami(&mallory, &[]).unwrap_err();
    assert!(refused.contains("Unauthorized"), "{refused}");

    // The bundle is re-read when it changes: now only the other authority is trusted.
    std::fs::write(&bundle, &other.pem).unwrap();
    eventually("the new bundle is used", async || {
        whoami(&mallory, &[]).is_ok()
    })
    .await;
    assert_eq!(whoami(&mallory, &[]).unwrap().0, "mallory");
    assert!(whoami(&jane, &[]).is_err());
}

/// The claims of a JWT, unverified.
fn claims(token: &str) -> Value {
    use base64::Engine;
    let payload = token.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_request_tokens_work_until_their_account_or_pod_goes() {
    let server = TestServer::start().await;
    let admin_config = server.kubeconfig_path();
    ok(kubectl(
        &admin_config,
        &["create", "serviceaccount", "robot"],
    ));
    let token = ok(kubectl(
        &admin_config,
        &["create", "token", "robot", "--duration", "10m"],
    ))
    .trim()
    .to_string();
    let c = claims(&token);
    assert_eq!(c["sub"], "system:serviceaccount:default:robot");
    assert_eq!(c["iss"], capstan_server::DEFAULT_ISSUER);
    assert_eq!(c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(), 600);

    // The kube crate, authenticated by the token.
    let kubeconfig = server.kubeconfig().replace(server.token(), &token);
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::from_yaml(&kubeconfig).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let accounts: kube::Api<k8s_openapi::api::core::v1::ServiceAccount> =
        kube::Api::default_namespaced(client);
    let names: Vec<String> = accounts
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|a| a.metadata.name)
        .collect();
    assert!(names.contains(&"robot".to_string()), "{names:?}");
    let token_arg = format!("--token={token}");
    let (name, groups, _) = whoami(&admin_config, &[&token_arg]).unwrap();
    assert_eq!(name, "system:serviceaccount:default:robot");
    assert_eq!(
        groups,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]
    );

    // Bound to a pod (running as the account, as upstream requires): valid while it lives.
    ok(kubectl(
        &admin_config,
        &[
            "run",
            "p",
            "--image=busybox",
            r#"--overrides={"spec":{"serviceAccountName":"robot"}}"#,
        ],
    ));
    let bound = ok(kubectl(
        &admin_config,
        &[
            "create",
            "token",
            "robot",
            "--bound-object-kind=Pod",
            "--bound-object-name=p",
        ],
    ))
    .trim()
    .to_string();
    assert_eq!(claims(&bound)["kubernetes.io"]["pod"]["name"], "p");
    let raw = RawClient::new(&server.url(), server.ca_pem(), Some(&bound));
    assert_eq!(raw.get(SC).await.status, 200);
    ok(kubectl(
        &admin_config,
        &["delete", "pod", "p", "--grace-period=0", "--force"],
    ));
    eventually("the pod's token is refused", async || {
        raw.get(SC).await.status == 401
    })
    .await;

    // The account deleted: its tokens are refused.
    let raw = raw.with_token(Some(&token));
    assert_eq!(raw.get(SC).await.status, 200);
    ok(kubectl(
        &admin_config,
        &["delete", "serviceaccount", "robot"],
    ));
    eventually("the account's token is refused", async || {
        raw.get(SC).await.status == 401
    })
    .await;
    ok(kubectl(
        &admin_config,
        &["create", "serviceaccount", "robot"],
    ));
    assert_eq!(
        raw.get(SC).await.status,
        401,
        "a new account of the same name has another uid"
    );
}

const RSA_KEY: &str = include_str!("../../crates/auth/src/authn/testdata/rsa-pkcs1.pem");
const RSA_PUBLIC: &str = include_str!("../../crates/auth/src/authn/testdata/rsa-public.pem");
const EC_KEY: &str = include_str!("../../crates/auth/src/authn/testdata/ec-pkcs8.pem");

#[tokio::test]
async fn tokens_of_an_independent_jwt_library_and_bad_tokens() {
    use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
    const ISSUER: &str = "https://issuer.example";
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("sa.key");
    std::fs::write(&key_file, RSA_KEY).unwrap();
    let server = TestServer::start_with(move |c| {
        c.service_accounts.issuers = vec![ISSUER.into(), "https://old.example".into()];
        c.service_accounts.signing_key_file = Some(key_file);
    })
    .await;
    let admin = crate::admin(&server);
    let account = admin
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/serviceaccounts",
            &serde_json::json!({"metadata": {"name": "robot"}}),
        )
        .await
        .json();
    let uid = account["metadata"]["uid"].as_str().unwrap().to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = |iss: &str, aud: &str, exp: i64| {
        serde_json::json!({
            "iss": iss, "aud": [aud], "sub": "system:serviceaccount:default:robot",
            "iat": now - 10, "nbf": now - 10, "exp": exp,
            "kubernetes.io": {"namespace": "default",
                "serviceaccount": {"name": "robot", "uid": uid}},
        })
    };
    let rsa = EncodingKey::from_rsa_pem(RSA_KEY.as_bytes()).unwrap();
    let sign = |claims: &Value| {
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), claims, &rsa).unwrap()
    };
    let path = "/api/v1/namespaces/default/serviceaccounts";
    let raw = RawClient::new(&server.url(), server.ca_pem(), None);
    for good in [
        sign(&claims(ISSUER, ISSUER, now + 600)),
        sign(&claims("https://old.example", ISSUER, now + 600)),
    ] {
        assert_eq!(raw.with_token(Some(&good)).get(path).await.status, 200);
    }

    // And the other way: the library verifies what the server issued.
    let issued = admin
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/serviceaccounts/robot/token",
            &serde_json::json!({"spec": {"audiences": ["vault"], "expirationSeconds": 3600}}),
        )
        .await
        .json();
    let token = issued["status"]["token"].as_str().unwrap();
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_audience(&["vault"]);
    validation.set_issuer(&[ISSUER]);
    let decoded = jsonwebtoken::decode::<Value>(
        token,
        &DecodingKey::from_rsa_pem(RSA_PUBLIC.as_bytes()).unwrap(),
        &validation,
    )
    .unwrap();
    assert_eq!(
        decoded.claims["kubernetes.io"]["serviceaccount"]["uid"],
        uid
    );
    assert_eq!(
        raw.with_token(Some(token)).get(path).await.status,
        401,
        "a token for another audience is refused here"
    );

    let b64 = |s: &str| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
    };
    let unsigned = format!(
        "{}.{}.",
        b64(r#"{"alg":"none","typ":"JWT"}"#),
        b64(&claims(ISSUER, ISSUER, now + 600).to_string())
    );
    let ec = EncodingKey::from_ec_pem(EC_KEY.as_bytes()).unwrap();
    let foreign = jsonwebtoken::encode(
        &Header::new(Algorithm::ES256),
        &claims(ISSUER, ISSUER, now + 600),
        &ec,
    )
    .unwrap();
    for (why, bad) in [
        ("expired", sign(&claims(ISSUER, ISSUER, now - 3600))),
        (
            "wrong audience",
            sign(&claims(ISSUER, "elsewhere", now + 600)),
        ),
        ("alg none", unsigned),
        ("another key", foreign),
        (
            "garbage",
            "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln".to_string(),
        ),
    ] {
        let resp = raw.with_token(Some(&bad)).get(path).await;
        assert_eq!(resp.status, 401, "{why}");
        assert_eq!(resp.json()["reason"], "Unauthorized", "{why}");
        assert!(
            !String::from_utf8_lossy(&resp.body).contains(&bad),
            "{why}: the token is not echoed"
        );
    }
}

#[tokio::test]
async fn legacy_secrets_token_reviews_and_issuer_discovery() {
    use base64::Engine;
    let server = TestServer::start().await;
    let admin = crate::admin(&server);
    let ns = "/api/v1/namespaces/default";
    admin
        .send_json(
            http::Method::POST,
            &format!("{ns}/serviceaccounts"),
            &serde_json::json!({"metadata": {"name": "robot"}}),
        )
        .await;
    let secret = admin
        .send_json(
            http::Method::POST,
            &format!("{ns}/secrets"),
            &serde_json::json!({"metadata": {"name": "robot-token",
                "annotations": {"kubernetes.io/service-account.name": "robot"}},
                "type": "kubernetes.io/service-account-token"}),
        )
        .await
        .json();
    let data = |key: &str| {
        let text = secret["data"][key].as_str().unwrap_or_default();
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!(data("namespace"), "default");
    assert!(data("ca.crt").contains("BEGIN CERTIFICATE"), "{secret}");
    let token = data("token");
    assert_eq!(claims(&token)["iss"], "kubernetes/serviceaccount");

    let review = |token: String| {
        let admin = admin.clone();
        async move {
            admin
                .send_json(
                    http::Method::POST,
                    "/apis/authentication.k8s.io/v1/tokenreviews",
                    &serde_json::json!({"apiVersion": "authentication.k8s.io/v1",
                        "kind": "TokenReview", "spec": {"token": token}}),
                )
                .await
        }
    };
    let resp = review(token.clone()).await;
    assert_eq!(resp.status, 201);
    let status = &resp.json()["status"];
    assert_eq!(status["authenticated"], true, "{status}");
    assert_eq!(
        status["user"]["username"],
        "system:serviceaccount:default:robot"
    );
    let resp = review("not-a-token".into()).await.json();
    assert_eq!(resp["status"]["authenticated"], false, "{resp}");

    let raw = RawClient::new(&server.url(), server.ca_pem(), Some(&token));
    assert_eq!(raw.get(SC).await.status, 200);
    admin
        .request(
            http::Method::DELETE,
            &format!("{ns}/secrets/robot-token"),
            &[],
            Vec::new(),
        )
        .await;
    eventually("the legacy token is refused", async || {
        raw.get(SC).await.status == 401
    })
    .await;

    // The issuer's discovery document and keys, which verify the bound tokens.
    // (Anonymous requests are refused with the default AlwaysAllow authorizer.)
    let anonymous = admin.clone();
    let discovery = anonymous.get("/.well-known/openid-configuration").await;
    assert_eq!(discovery.status, 200);
    let discovery = discovery.json();
    assert_eq!(discovery["issuer"], capstan_server::DEFAULT_ISSUER);
    assert_eq!(
        discovery["jwks_uri"],
        format!("{}/openid/v1/jwks", server.url())
    );
    let keys = anonymous.get("/openid/v1/jwks").await;
    assert_eq!(keys.headers["content-type"], "application/jwk-set+json");
    let issued = admin
        .send_json(
            http::Method::POST,
            &format!("{ns}/serviceaccounts/robot/token"),
            &serde_json::json!({"spec": {}}),
        )
        .await
        .json();
    let token = issued["status"]["token"].as_str().unwrap();
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token.split('.').next().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(keys.json()["keys"][0]["kid"], header["kid"]);
}

#[tokio::test]
async fn bootstrap_tokens_authenticate_while_valid() {
    use base64::Engine;
    let server = TestServer::start_with(|c| c.bootstrap_token_auth = true).await;
    let admin = crate::admin(&server);
    let secret = |id: &str, expiration: &str| {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        serde_json::json!({
            "metadata": {"name": format!("bootstrap-token-{id}")},
            "type": "bootstrap.kubernetes.io/token",
            "data": {
                "token-id": b64(id), "token-secret": b64("0123456789abcdef"),
                "usage-bootstrap-authentication": b64("true"),
                "auth-extra-groups": b64("system:bootstrappers:kubeadm:default-node-token"),
                "expiration": b64(expiration),
            },
        })
    };
    for (id, expiration) in [
        ("abcdef", "2999-01-01T00:00:00Z"),
        ("expird", "2020-01-01T00:00:00Z"),
    ] {
        let resp = admin
            .send_json(
                http::Method::POST,
                "/api/v1/namespaces/kube-system/secrets",
                &secret(id, expiration),
            )
            .await;
        assert_eq!(resp.status, 201);
    }
    let raw = RawClient::new(
        &server.url(),
        server.ca_pem(),
        Some("abcdef.0123456789abcdef"),
    );
    let review = raw
        .send_json(
            http::Method::POST,
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .await
        .json();
    let user = &review["status"]["userInfo"];
    assert_eq!(user["username"], "system:bootstrap:abcdef", "{review}");
    assert_eq!(
        user["groups"],
        serde_json::json!([
            "system:bootstrappers",
            "system:bootstrappers:kubeadm:default-node-token",
            "system:authenticated"
        ])
    );
    for bad in ["abcdef.0123456789abcdee", "expird.0123456789abcdef"] {
        assert_eq!(raw.with_token(Some(bad)).get(SC).await.status, 401, "{bad}");
    }

    let without = TestServer::start().await;
    let raw = RawClient::new(
        &without.url(),
        without.ca_pem(),
        Some("abcdef.0123456789abcdef"),
    );
    assert_eq!(
        raw.get(SC).await.status,
        401,
        "bootstrap tokens are off by default"
    );
}

/// `POST selfsubjectreviews` through `client`: status, user name, groups, extra.
async fn self_review(client: &RawClient) -> (u16, String, Vec<String>, Value) {
    let body =
        serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let resp = client
        .request(
            http::Method::POST,
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &[("content-type", "application/json")],
            body.to_string().into_bytes(),
        )
        .await;
    let review = resp.json();
    let user = &review["status"]["userInfo"];
    let groups = user["groups"]
        .as_array()
        .map(|g| g.iter().map(|g| g.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    (
        resp.status.as_u16(),
        user["username"].as_str().unwrap_or_default().to_string(),
        groups,
        user["extra"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_front_proxy_names_users_in_headers_and_the_settings_are_published() {
    let dir = tempfile::tempdir().unwrap();
    let proxy_ca = TestCa::new("front-proxy-ca");
    let client_ca = TestCa::new("client-ca");
    let proxy_bundle = dir.path().join("front-proxy-ca.crt");
    let client_bundle = dir.path().join("client-ca.crt");
    std::fs::write(&proxy_bundle, &proxy_ca.pem).unwrap();
    std::fs::write(&client_bundle, &client_ca.pem).unwrap();
    let (pb, cb) = (proxy_bundle.clone(), client_bundle.clone());
    let server = TestServer::start_with(move |c| {
        c.client_ca_file = Some(cb);
        c.requestheader_client_ca_file = Some(pb);
        c.requestheader = capstan_server::RequestHeaderConfig {
            allowed_names: vec!["front-proxy-client".into()],
            username_headers: vec!["X-Remote-User".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_headers_prefix: vec!["X-Remote-Extra-".into()],
        };
    })
    .await;
    let anonymous = RawClient::new(&server.url(), server.ca_pem(), None);
    let identity = [
        ("x-remote-user", "alice"),
        ("x-remote-group", "dev"),
        ("x-remote-extra-scopes", "read"),
        ("x-remote-extra-example.com%2fteam", "blue"),
    ];
    let with_headers = |client: RawClient| async move {
        let body = serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
        let mut headers = vec![("content-type", "application/json")];
        headers.extend(identity);
        let resp = client
            .request(
                http::Method::POST,
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                &headers,
                body.to_string().into_bytes(),
            )
            .await;
        (resp.status.as_u16(), resp.json())
    };

    // The proxy's certificate makes the headers count.
    let (cert, key) = proxy_ca.client("front-proxy-client", &[]);
    let proxy = anonymous.with_client_certificate(server.ca_pem(), &cert, &key);
    let (status, review) = with_headers(proxy.clone()).await;
    assert_eq!(status, 201, "{review}");
    let user = &review["status"]["userInfo"];
    assert_eq!(user["username"], "alice");
    assert_eq!(
        user["groups"],
        serde_json::json!(["dev", "system:authenticated"])
    );
    assert_eq!(user["extra"]["scopes"], serde_json::json!(["read"]));
    assert_eq!(
        user["extra"]["example.com/team"],
        serde_json::json!(["blue"])
    );
    // Without the headers, the proxy's certificate is one the client CA did not sign: refused,
    // as upstream refuses a certificate of an unknown authority.
    let (status, ..) = self_review(&proxy).await;
    assert_eq!(status, 401);

    // The same headers from anyone else count for nothing: without credentials the request is
    // anonymous, which the default AlwaysAllow authorizer does not serve.
    let (status, review) = with_headers(anonymous.clone()).await;
    assert_eq!(status, 401, "{review}");
    let (cert, key) = client_ca.client("bob", &["qa"]);
    let bob = anonymous.with_client_certificate(server.ca_pem(), &cert, &key);
    let (status, review) = with_headers(bob).await;
    assert_eq!(status, 201);
    assert_eq!(
        review["status"]["userInfo"]["username"], "bob",
        "a client certificate of the client CA names its own user, whatever the headers say"
    );
    // A certificate of the proxy authority with a common name not allowed is refused.
    let (cert, key) = proxy_ca.client("impostor", &[]);
    let impostor = anonymous.with_client_certificate(server.ca_pem(), &cert, &key);
    let (status, review) = with_headers(impostor).await;
    assert_eq!(status, 401, "{review}");
    assert_eq!(review["reason"], "Unauthorized");

    // Delegating servers read the trust settings from kube-system.
    let admin = crate::admin(&server);
    let path = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
    let mut data = Value::Null;
    eventually("the authentication info is published", async || {
        let resp = admin.get(path).await;
        data = resp.json()["data"].clone();
        resp.status == 200
    })
    .await;
    assert_eq!(data["client-ca-file"], client_ca.pem.as_str());
    assert_eq!(data["requestheader-client-ca-file"], proxy_ca.pem.as_str());
    assert_eq!(
        data["requestheader-allowed-names"],
        r#"["front-proxy-client"]"#
    );
    assert_eq!(
        data["requestheader-username-headers"],
        r#"["X-Remote-User"]"#
    );
    assert_eq!(data["requestheader-group-headers"], r#"["X-Remote-Group"]"#);
    assert_eq!(
        data["requestheader-extra-headers-prefix"],
        r#"["X-Remote-Extra-"]"#
    );

    // A changed client CA bundle is published again.
    let both = format!("{}{}", client_ca.pem, proxy_ca.pem);
    std::fs::write(&client_bundle, &both).unwrap();
    eventually("the new client CA is published", async || {
        admin.get(path).await.json()["data"]["client-ca-file"] == both.as_str()
    })
    .await;
}

/// A webhook or OIDC kubeconfig/CA file in `dir`.
fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn a_token_webhook_reviews_unknown_tokens_and_its_answers_are_cached() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    let reviews = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(Mutex::new(Value::Null));
    let (count, seen) = (reviews.clone(), last.clone());
    let webhook = capstan_e2e::HttpsServer::start(move |req| {
        if req
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            != Some("Bearer webhook-credential")
        {
            return (http::StatusCode::UNAUTHORIZED, Value::Null);
        }
        count.fetch_add(1, Ordering::SeqCst);
        let review: Value = serde_json::from_slice(&req.body).unwrap();
        *seen.lock().unwrap() = review.clone();
        let status = match review["spec"]["token"].as_str() {
            Some("good-token") => serde_json::json!({"authenticated": true, "user": {
                "username": "webhook-user", "uid": "42", "groups": ["wh-group"],
                "extra": {"team": ["blue"]}}}),
            _ => serde_json::json!({"authenticated": false, "error": "unknown token"}),
        };
        let mut answer = review;
        answer["status"] = status;
        (http::StatusCode::OK, answer)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let ca = write(dir.path(), "webhook-ca.crt", &webhook.ca_pem);
    let config = serde_json::json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "webhook",
        "clusters": [{"name": "webhook", "cluster": {
            "server": format!("{}/authenticate", webhook.url),
            "certificate-authority": ca.display().to_string()}}],
        "users": [{"name": "apiserver", "user": {"token": "webhook-credential"}}],
        "contexts": [{"name": "webhook", "context": {"cluster": "webhook", "user": "apiserver"}}],
    });
    let config_file = write(dir.path(), "webhook.kubeconfig", &config.to_string());
    let server = TestServer::start_with(move |c| {
        c.token_webhook = Some(capstan_server::TokenWebhookConfig {
            config_file,
            version: "v1".into(),
            cache_ttl: Duration::from_secs(120),
            implicit_audiences: Vec::new(),
        });
    })
    .await;
    let good = RawClient::new(&server.url(), server.ca_pem(), Some("good-token"));
    let (status, review) = {
        let body = serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
        let resp = good
            .send_json(
                http::Method::POST,
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                &body,
            )
            .await;
        (resp.status.as_u16(), resp.json())
    };
    assert_eq!(status, 201, "{review}");
    let user = &review["status"]["userInfo"];
    assert_eq!(user["username"], "webhook-user");
    assert_eq!(user["uid"], "42");
    assert_eq!(
        user["groups"],
        serde_json::json!(["wh-group", "system:authenticated"])
    );
    assert_eq!(user["extra"]["team"], serde_json::json!(["blue"]));
    let sent = last.lock().unwrap().clone();
    assert_eq!(sent["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(sent["kind"], "TokenReview");
    assert_eq!(
        sent["spec"]["audiences"],
        serde_json::json!([capstan_server::DEFAULT_ISSUER]),
        "the API's audiences"
    );

    // Answers are remembered: the same token again is not sent.
    let asked = reviews.load(Ordering::SeqCst);
    assert_eq!(good.get(SC).await.status, 200);
    assert_eq!(reviews.load(Ordering::SeqCst), asked);

    // A token the webhook does not know is a 401; so is the admin's, which never reaches it.
    let bad = good.with_token(Some("bad-token"));
    let resp = bad.get(SC).await;
    assert_eq!(resp.status, 401);
    assert_eq!(resp.json()["reason"], "Unauthorized");
    assert!(!resp.body.windows(9).any(|w| w == b"bad-token"));
    let before = reviews.load(Ordering::SeqCst);
    assert_eq!(crate::admin(&server).get(SC).await.status, 200);
    assert_eq!(reviews.load(Ordering::SeqCst), before);

    // A TokenReview for an audience the webhook's answer (the API's, implicitly) lacks.
    let review = crate::admin(&server)
        .send_json(
            http::Method::POST,
            "/apis/authentication.k8s.io/v1/tokenreviews",
            &serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                "spec": {"token": "good-token", "audiences": ["elsewhere"]}}),
        )
        .await
        .json();
    assert_eq!(review["status"]["authenticated"], false, "{review}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oidc_id_tokens_authenticate_with_the_issuers_keys() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    use std::sync::{Arc, OnceLock};
    let issuer: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let mut jwk = capstan_auth::authn::jwt::SigningKey::from_pem(RSA_KEY.as_bytes())
        .unwrap()
        .public_key()
        .jwk();
    jwk["kid"] = "provider-key-1".into();
    let url = issuer.clone();
    let provider = capstan_e2e::HttpsServer::start(move |req| {
        let base = url.get().cloned().unwrap_or_default();
        match req.path.as_str() {
            "/.well-known/openid-configuration" => (
                http::StatusCode::OK,
                serde_json::json!({"issuer": base, "jwks_uri": format!("{base}/keys"),
                    "id_token_signing_alg_values_supported": ["RS256"]}),
            ),
            "/keys" => (
                http::StatusCode::OK,
                serde_json::json!({"keys": [jwk.clone()]}),
            ),
            _ => (http::StatusCode::NOT_FOUND, Value::Null),
        }
    })
    .await;
    issuer.set(provider.url.clone()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = write(dir.path(), "idp-ca.crt", &provider.ca_pem);
    let issuer_url = provider.url.clone();
    let server = TestServer::start_with(move |c| {
        c.oidc = Some(capstan_server::OidcConfig {
            issuer_url,
            client_id: "capstan".into(),
            ca_file: Some(ca),
            username_claim: "email".into(),
            groups_claim: Some("groups".into()),
            groups_prefix: "oidc:".into(),
            required_claims: [("hd".to_string(), "example.com".to_string())].into(),
            signing_algs: vec!["RS256".into()],
            ..Default::default()
        });
    })
    .await;
    let rsa = EncodingKey::from_rsa_pem(RSA_KEY.as_bytes()).unwrap();
    let sign = |claims: &Value| {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("provider-key-1".into());
        jsonwebtoken::encode(&header, claims, &rsa).unwrap()
    };
    let claims = serde_json::json!({
        "iss": provider.url, "aud": ["capstan", "other-client"], "sub": "1234",
        "exp": now() + 600, "iat": now(), "email": "jane@example.com", "email_verified": true,
        "groups": ["dev", "ops"], "hd": "example.com",
    });
    let token = sign(&claims);

    // kubectl with the ID token (the provider's keys arrive within moments of the start).
    let kubeconfig = server.kubeconfig_path();
    let mut who = Err(String::new());
    eventually("the ID token is accepted", async || {
        who = whoami(&kubeconfig, &["--token", &token]);
        who.is_ok()
    })
    .await;
    let (name, groups, _) = who.unwrap();
    assert_eq!(name, "jane@example.com", "no prefix for the email claim");
    assert_eq!(groups, ["oidc:dev", "oidc:ops", "system:authenticated"]);

    let client = RawClient::new(&server.url(), server.ca_pem(), None);
    let refused =
        async |claims: Value| client.with_token(Some(&sign(&claims))).get(SC).await.status;
    let with = |key: &str, value: Value| {
        let mut c = claims.clone();
        c[key] = value;
        c
    };
    assert_eq!(refused(with("aud", "another-client".into())).await, 401);
    assert_eq!(refused(with("exp", (now() - 10).into())).await, 401);
    assert_eq!(refused(with("hd", "evil.example".into())).await, 401);
    assert_eq!(refused(with("email_verified", false.into())).await, 401);
    assert_eq!(
        refused(with("iss", "https://someone-else.example".into())).await,
        401
    );
    // A key the provider does not publish, and an algorithm not allowed.
    let ec = EncodingKey::from_ec_pem(EC_KEY.as_bytes()).unwrap();
    let es256 = jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, &ec).unwrap();
    assert_eq!(client.with_token(Some(&es256)).get(SC).await.status, 401);
    let mut forged = token.clone();
    forged.push('A');
    assert_eq!(client.with_token(Some(&forged)).get(SC).await.status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_reviews_answer_with_the_authorizers_decision() {
    let server =
        TestServer::start_with(|c| c.authorization_modes = vec!["AlwaysDeny".into()]).await;
    let admin = crate::admin(&server);
    let review = |spec: Value| serde_json::json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec});
    let path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
    let bob = admin
        .send_json(
            http::Method::POST,
            path,
            &review(serde_json::json!({"user": "bob", "resourceAttributes": {
                "verb": "list", "resource": "pods", "namespace": "default"}})),
        )
        .await;
    assert_eq!(bob.status, 201);
    let status = &bob.json()["status"];
    assert_eq!(status["allowed"], false, "{status}");
    assert_eq!(status["reason"], "Everything is forbidden.");
    let masters = admin
        .send_json(
            http::Method::POST,
            path,
            &review(
                serde_json::json!({"user": "root", "groups": ["system:masters"],
                "nonResourceAttributes": {"verb": "get", "path": "/metrics"}}),
            ),
        )
        .await;
    assert_eq!(masters.json()["status"]["allowed"], true);

    // Upstream's validation, word for word.
    let bad = admin
        .send_json(
            http::Method::POST,
            path,
            &review(serde_json::json!({"resourceAttributes": {"verb": "get"}})),
        )
        .await;
    assert_eq!(bad.status, 422);
    assert_eq!(
        bad.json()["message"],
        r#"SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified"#
    );
    let local = admin
        .send_json(
            http::Method::POST,
            "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
            &serde_json::json!({"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
                "spec": {"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "other"}}}),
        )
        .await;
    assert_eq!(local.status, 422);
    assert!(
        local.json()["message"]
            .as_str()
            .unwrap()
            .contains("spec.resourceAttributes.namespace: Invalid value: \"other\": must match metadata.namespace"),
        "{}",
        local.json()
    );

    // kubectl asks the same questions for its caller.
    let kubeconfig = server.kubeconfig_path();
    let (ok, out, err) = kubectl(&kubeconfig, &["auth", "can-i", "delete", "nodes"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "yes");
    let (ok, out, err) = kubectl(&kubeconfig, &["auth", "can-i", "--list"]);
    assert!(ok, "{err}");
    assert!(
        out.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["*.*", "[]", "[]", "[*]"]),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonation_needs_the_impersonate_verb_and_switches_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = write(dir.path(), "tokens.csv", "bob-token,bob,1002\n");
    // Under AlwaysAllow anyone may impersonate, and see who they became.
    let open = TestServer::start().await;
    let admin = open.kubeconfig_path();
    let (name, groups, _) = whoami(&admin, &["--as", "alice"]).unwrap();
    assert_eq!(
        (name.as_str(), groups),
        ("alice", vec!["system:authenticated".to_string()])
    );
    let (name, groups, extra) = whoami(
        &admin,
        &[
            "--as",
            "system:serviceaccount:default:robot",
            "--as-group",
            "team-a",
            "--as-uid",
            "u-7",
        ],
    )
    .unwrap();
    assert_eq!(name, "system:serviceaccount:default:robot");
    assert_eq!(groups, ["team-a", "system:authenticated"]);
    assert!(extra.is_null(), "{extra}");

    // The impersonated user is the one authorized.
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["AlwaysDeny".into()];
    })
    .await;
    let root = crate::admin(&server);
    let resp = root
        .request(
            http::Method::GET,
            SC,
            &[("impersonate-user", "alice")],
            Vec::new(),
        )
        .await;
    assert_eq!(resp.status, 403);
    let message = resp.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains(r#"User "alice" cannot list resource "storageclasses""#),
        "{message}"
    );
    let resp = root
        .request(
            http::Method::GET,
            SC,
            &[
                ("impersonate-user", "alice"),
                ("impersonate-group", "system:masters"),
            ],
            Vec::new(),
        )
        .await;
    assert_eq!(resp.status, 200);

    // A caller the authorizers do not allow to impersonate is refused by the first way tried
    // (as upstream v1.36: `user-info`, on the request itself).
    let bob = RawClient::new(&server.url(), server.ca_pem(), Some("bob-token"));
    let resp = bob
        .request(
            http::Method::GET,
            SC,
            &[("impersonate-user", "alice")],
            Vec::new(),
        )
        .await;
    assert_eq!(resp.status, 403);
    assert_eq!(
        resp.json()["message"],
        r#"storageclasses.storage.k8s.io is forbidden: User "bob" cannot impersonate-on:user-info:list resource "storageclasses" in API group "storage.k8s.io" at the cluster scope: Everything is forbidden."#
    );
    let resp = bob
        .request(
            http::Method::GET,
            SC,
            &[("impersonate-group", "system:masters")],
            Vec::new(),
        )
        .await;
    assert_eq!(resp.status, 400, "groups without a user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_grants_what_roles_and_bindings_say() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = write(
        dir.path(),
        "tokens.csv",
        "bob-token,bob,1002\ncarol-token,carol,1003,\"auditors\"\n",
    );
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let admin = server.kubeconfig_path();
    let bob = {
        let path = dir.path().join("bob.kubeconfig");
        let text = server.kubeconfig().replace(server.token(), "bob-token");
        std::fs::write(&path, text).unwrap();
        path
    };

    // The default policy: discovery and the self-reviews for every authenticated user.
    let (ok, out, err) = kubectl(&bob, &["auth", "can-i", "list", "pods"]);
    assert!(!ok, "{out}");
    assert_eq!(out.trim(), "no", "{err}");
    let (ok, _, err) = kubectl(&bob, &["get", "pods"]);
    assert!(!ok);
    assert!(
        err.contains(r#"pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default""#),
        "{err}"
    );
    let anonymous = RawClient::new(&server.url(), server.ca_pem(), None);
    assert_eq!(anonymous.get("/version").await.status, 200, "public info");
    assert_eq!(
        anonymous.get("/api").await.status,
        403,
        "discovery is for users"
    );

    // Components have their upstream roles.
    for (user, verb, resource, expected) in [
        ("system:kube-scheduler", "create", "bindings", "yes"),
        (
            "system:kube-scheduler",
            "update",
            "leases.coordination.k8s.io/kube-scheduler",
            "yes",
        ),
        // Any lease in kube-system, through system::leader-locking-kube-scheduler (as
        // upstream); the cluster role alone names only its own.
        (
            "system:kube-scheduler",
            "update",
            "leases.coordination.k8s.io/other",
            "yes",
        ),
        ("system:kube-scheduler", "delete", "nodes", "no"),
        ("system:kube-controller-manager", "watch", "secrets", "yes"),
        ("system:kube-proxy", "list", "nodes", "yes"),
        ("system:kube-proxy", "delete", "nodes", "no"),
    ] {
        let (_, out, err) = kubectl(
            &admin,
            &[
                "auth",
                "can-i",
                verb,
                resource,
                "--as",
                user,
                "-n",
                "kube-system",
            ],
        );
        assert_eq!(out.trim(), expected, "{user} {verb} {resource}: {err}");
    }

    // A Role and a RoleBinding made with kubectl grant bob reading pods in one namespace.
    for args in [
        &[
            "create",
            "role",
            "pod-reader",
            "--verb=get,list,watch",
            "--resource=pods",
        ][..],
        &[
            "create",
            "rolebinding",
            "read-pods",
            "--role=pod-reader",
            "--user=bob",
        ],
        &[
            "create",
            "clusterrole",
            "node-reader",
            "--verb=get,list",
            "--resource=nodes",
        ],
        &[
            "create",
            "clusterrolebinding",
            "audit-nodes",
            "--clusterrole=node-reader",
            "--group=auditors",
        ],
    ] {
        let (ok, _, err) = kubectl(&admin, args);
        assert!(ok, "{args:?}: {err}");
    }
    eventually("bob may list pods", async || {
        kubectl(&bob, &["auth", "can-i", "list", "pods"]).1.trim() == "yes"
    })
    .await;
    let (ok, _, err) = kubectl(&bob, &["get", "pods"]);
    assert!(ok, "{err}");
    // A ClusterRoleBinding to a group grants its members everywhere.
    let carol = RawClient::new(&server.url(), server.ca_pem(), Some("carol-token"));
    assert_eq!(carol.get("/api/v1/nodes").await.status, 200);
    assert_eq!(
        RawClient::new(&server.url(), server.ca_pem(), Some("bob-token"))
            .get("/api/v1/nodes")
            .await
            .status,
        403
    );
    let (_, out, _) = kubectl(
        &bob,
        &["auth", "can-i", "list", "pods", "-n", "kube-system"],
    );
    assert_eq!(
        out.trim(),
        "no",
        "a RoleBinding grants in its namespace only"
    );
    let (_, out, _) = kubectl(&bob, &["auth", "can-i", "delete", "pods"]);
    assert_eq!(out.trim(), "no");
    let (ok, out, err) = kubectl(&bob, &["auth", "can-i", "--list"]);
    assert!(ok, "{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("pods ") && l.contains("[get list watch]")),
        "{out}"
    );

    // The binding table kubectl prints.
    let (ok, out, err) = kubectl(&admin, &["get", "rolebinding", "read-pods", "-o", "wide"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("Role/pod-reader") && out.contains("bob"),
        "{out}"
    );

    // Taking the binding away takes the permission away.
    let (ok, _, err) = kubectl(&admin, &["delete", "rolebinding", "read-pods"]);
    assert!(ok, "{err}");
    eventually("bob may no longer list pods", async || {
        kubectl(&bob, &["auth", "can-i", "list", "pods"]).1.trim() == "no"
    })
    .await;

    // Bad objects get upstream's errors.
    let raw = crate::admin(&server);
    let bad = raw
        .send_json(
            http::Method::POST,
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &serde_json::json!({"metadata": {"name": "x"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}}),
        )
        .await;
    assert_eq!(bad.status, 422);
    assert!(
        bad.json()["message"].as_str().unwrap().contains(
            r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#
        ),
        "{}",
        bad.json()
    );
}

/// A server authorizing with RBAC that knows one more user, `user`, by the token
/// `<user>-token`; the admin's client and the user's (keep the server and the directory).
async fn rbac_server_with_user(
    user: &str,
) -> (TestServer, RawClient, RawClient, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tokens = write(
        dir.path(),
        "tokens.csv",
        &format!("{user}-token,{user},1100\n"),
    );
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let admin = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    let client = admin.with_token(Some(&format!("{user}-token")));
    (server, admin, client, dir)
}

/// A user who may write and bind cluster roles but holds little cannot gather permissions
/// through an aggregation rule: setting one (on create or by patch) and changing a role that
/// has one need every permission there is, as upstream's escalation check says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aggregation_rule_needs_every_permission() {
    let (_server, admin, eve, _dir) = rbac_server_with_user("eve").await;
    const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    const BINDINGS: &str = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    let binding = |name: &str, role: &str| {
        json!({"metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                "name": role},
            "subjects": [{"kind": "User", "name": "eve"}]})
    };
    let r = admin
        .send_json(
            Method::POST,
            ROLES,
            &json!({"metadata": {"name": "role-writer"}, "rules": [{
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["clusterroles", "clusterrolebindings"],
                "verbs": ["create", "get", "patch", "update", "bind"]}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = admin
        .send_json(
            Method::POST,
            BINDINGS,
            &binding("eve-writes", "role-writer"),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let mut status = 0;
    for _ in 0..50 {
        status = eve
            .send_json(Method::POST, ROLES, &json!({"metadata": {"name": "mine"}}))
            .await
            .status
            .as_u16();
        if status != 403 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 201, "an empty role grants nothing");
    let r = eve
        .send_json(Method::POST, BINDINGS, &binding("eve-mine", "mine"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    let refused = |r: &capstan_e2e::RawResponse, name: &str| {
        assert_eq!(r.status, 403, "{:?}", r.body);
        let status: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            status["message"],
            format!(
                "clusterroles.rbac.authorization.k8s.io \"{name}\" is forbidden: must have cluster-admin privileges to use the aggregationRule"
            )
        );
    };
    let gather_admins =
        br#"{"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"kubernetes.io/bootstrapping":"rbac-defaults"}}]}}"#;
    let merge = [("content-type", "application/merge-patch+json")];
    let r = eve
        .request(
            Method::PATCH,
            &format!("{ROLES}/mine"),
            &merge,
            gather_admins.to_vec(),
        )
        .await;
    refused(&r, "mine");
    let r = eve
        .send_json(
            Method::POST,
            ROLES,
            &json!({"metadata": {"name": "gatherer"}, "aggregationRule": {
                "clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}),
        )
        .await;
    refused(&r, "gatherer");
    // A role that aggregates already (the default `admin`) is out of reach too.
    let r = eve
        .request(
            Method::PATCH,
            &format!("{ROLES}/admin"),
            &merge,
            br#"{"metadata":{"labels":{"a":"b"}}}"#.to_vec(),
        )
        .await;
    refused(&r, "admin");
    // Her own role's labels are hers to change.
    let r = eve
        .request(
            Method::PATCH,
            &format!("{ROLES}/mine"),
            &merge,
            br#"{"metadata":{"labels":{"a":"b"}}}"#.to_vec(),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // And the role gathered nothing: no secrets for eve.
    let role: Value = admin.get(&format!("{ROLES}/mine")).await.json();
    assert!(role["aggregationRule"].is_null(), "{role}");
    assert_eq!(
        eve.get("/api/v1/namespaces/kube-system/secrets")
            .await
            .status,
        403
    );
}

/// An update or a patch that would create its object (an apply of a new ConfigMap, a PUT of
/// a missing Lease) needs `create` as well, as upstream authorizes it; a patch of another
/// kind is a 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_that_create_need_the_create_verb() {
    let (_server, admin, bob, _dir) = rbac_server_with_user("bob").await;
    let role = |verbs: &[&str]| {
        json!({"metadata": {"name": "writer"}, "rules": [{
            "apiGroups": ["", "coordination.k8s.io"], "resources": ["configmaps", "leases"],
            "verbs": verbs}]})
    };
    let roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles";
    let r = admin
        .send_json(Method::POST, roles, &role(&["get", "patch", "update"]))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = admin
        .send_json(
            Method::POST,
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            &json!({"metadata": {"name": "bob"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "writer"},
                "subjects": [{"kind": "User", "name": "bob"}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let apply = |client: RawClient| async move {
        client
            .request(
                Method::PATCH,
                "/api/v1/namespaces/default/configmaps/cm?fieldManager=bob",
                &[("content-type", "application/apply-patch+yaml")],
                br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"b"}}"#
                    .to_vec(),
            )
            .await
    };
    let lease = "/apis/coordination.k8s.io/v1/namespaces/default/leases/l";
    let put_lease = |client: RawClient| async move {
        client
            .send_json(
                Method::PUT,
                lease,
                &json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": "l"}}),
            )
            .await
    };
    let r = apply(bob.clone()).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    let status: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        status["message"],
        r#"configmaps "cm" is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "default""#
    );
    let r = put_lease(bob.clone()).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    // Nothing was created; a merge patch of a missing object stays a 404.
    assert_eq!(
        admin
            .get("/api/v1/namespaces/default/configmaps/cm")
            .await
            .status,
        404
    );
    let r = bob
        .request(
            Method::PATCH,
            "/api/v1/namespaces/default/configmaps/cm",
            &[("content-type", "application/merge-patch+json")],
            br#"{"data":{"a":"b"}}"#.to_vec(),
        )
        .await;
    assert_eq!(r.status, 404, "{:?}", r.body);

    // With `create`, both create.
    let r = admin
        .send_json(
            Method::PUT,
            &format!("{roles}/writer"),
            &role(&["get", "patch", "update", "create"]),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // (The role's change reaches the authorizer within moments.)
    let mut applied = apply(bob.clone()).await.status;
    for _ in 0..50 {
        if applied != 403 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        applied = apply(bob.clone()).await.status;
    }
    assert_eq!(applied, 201);
    assert_eq!(put_lease(bob.clone()).await.status, 201);
}

/// A Role limited to one name gives that object and nothing else: not through a field
/// selector that only looks like it names the object (an escaped comma makes the whole rest
/// one value), and not through a watch of the named object's path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_on_one_name_reaches_only_that_object() {
    let (_server, admin, bob, _dir) = rbac_server_with_user("bob").await;
    let secrets = "/api/v1/namespaces/default/secrets";
    for name in ["allowed", "other", "x"] {
        let r = admin
            .send_json(Method::POST, secrets, &json!({"metadata": {"name": name}}))
            .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
    }
    for (path, body) in [
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            json!({"metadata": {"name": "one-secret"}, "rules": [{"apiGroups": [""],
                "resources": ["secrets"], "resourceNames": ["allowed"],
                "verbs": ["get", "list", "watch"]}]}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            json!({"metadata": {"name": "bob"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "one-secret"},
                "subjects": [{"kind": "User", "name": "bob"}]}),
        ),
    ] {
        let r = admin.send_json(Method::POST, path, &body).await;
        assert_eq!(r.status, 201, "{:?}", r.body);
    }
    let names = |body: &[u8]| -> Vec<String> {
        let list: Value = serde_json::from_slice(body).unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };

    // The one name, by field selector: that object only (once the new binding has reached
    // the authorizer, which follows the roles and bindings as they are written).
    let by_name = format!("{secrets}?fieldSelector=metadata.name%3Dallowed");
    let mut r = bob.get(&by_name).await;
    for _ in 0..50 {
        if r.status != 403 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        r = bob.get(&by_name).await;
    }
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(names(&r.body), ["allowed"]);
    // `metadata.name != "x,metadata.name=allowed"`: one term that names nothing, so a list
    // of the whole collection, which bob may not do.
    for verb in ["", "&watch=1&timeoutSeconds=1"] {
        let r = bob
            .get(&format!(
                "{secrets}?fieldSelector=metadata.name!%3Dx%5C,metadata.name%3Dallowed{verb}"
            ))
            .await;
        assert_eq!(r.status, 403, "{verb}: {:?}", r.body);
    }
    // On the object's path, watch=1 is a get (as upstream); the deprecated `/watch/` prefix
    // watches that object alone.
    let r = bob.get(&format!("{secrets}/allowed?watch=1")).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let got: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(got["kind"], "Secret");
    let prefixed = "/api/v1/watch/namespaces/default/secrets";
    let r = bob
        .get(&format!("{prefixed}/allowed?timeoutSeconds=1"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let watched: Vec<String> = String::from_utf8_lossy(&r.body)
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).unwrap();
            event["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(watched, ["allowed"]);
    assert_eq!(
        bob.get(&format!("{prefixed}?timeoutSeconds=1"))
            .await
            .status,
        403
    );
    // A selector naming another object on that path is refused, as upstream refuses it.
    let r = bob
        .get(&format!(
            "{prefixed}/allowed?timeoutSeconds=1&fieldSelector=metadata.name%3Dother"
        ))
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(
        String::from_utf8_lossy(&r.body)
            .contains("fieldSelector metadata.name doesn't match requested name"),
        "{:?}",
        r.body
    );
    assert_eq!(bob.get(&format!("{secrets}/other")).await.status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_edit_and_view_aggregate_their_parts() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = write(dir.path(), "tokens.csv", "dan-token,dan,1004\n");
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let admin = server.kubeconfig_path();
    let rules_of = |role: &str| {
        let (ok, out, err) = kubectl(&admin, &["get", "clusterrole", role, "-o", "json"]);
        assert!(ok, "{err}");
        let role: Value = serde_json::from_str(&out).unwrap();
        role["rules"].as_array().cloned().unwrap_or_default()
    };
    // view ⊂ edit ⊂ admin, filled in by the aggregation.
    eventually("admin has aggregated edit and view", async || {
        let admin_rules = rules_of("admin");
        let view_rules = rules_of("view");
        !view_rules.is_empty() && view_rules.iter().all(|r| admin_rules.contains(r))
    })
    .await;

    let dan = {
        let path = dir.path().join("dan.kubeconfig");
        std::fs::write(
            &path,
            server.kubeconfig().replace(server.token(), "dan-token"),
        )
        .unwrap();
        path
    };
    let (ok, _, err) = kubectl(
        &admin,
        &[
            "create",
            "rolebinding",
            "dan-edit",
            "--clusterrole=edit",
            "--user=dan",
        ],
    );
    assert!(ok, "{err}");
    eventually("dan may edit", async || {
        kubectl(&dan, &["auth", "can-i", "create", "configmaps"])
            .1
            .trim()
            == "yes"
    })
    .await;
    let (ok, _, err) = kubectl(
        &dan,
        &["create", "configmap", "settings", "--from-literal=a=b"],
    );
    assert!(ok, "{err}");
    assert_eq!(
        kubectl(&dan, &["auth", "can-i", "create", "roles"])
            .1
            .trim(),
        "no",
        "admin only"
    );
    assert_eq!(
        kubectl(&dan, &["auth", "can-i", "list", "nodes"]).1.trim(),
        "no"
    );

    // A new role labelled for view reaches view, edit and admin.
    let (ok, _, err) = kubectl(
        &admin,
        &[
            "create",
            "clusterrole",
            "sc-viewer",
            "--verb=get,list",
            "--resource=storageclasses",
        ],
    );
    assert!(ok, "{err}");
    let (ok, _, err) = kubectl(
        &admin,
        &[
            "label",
            "clusterrole",
            "sc-viewer",
            "rbac.authorization.k8s.io/aggregate-to-view=true",
        ],
    );
    assert!(ok, "{err}");
    eventually("dan may list storage classes through edit", async || {
        kubectl(&dan, &["auth", "can-i", "list", "storageclasses"])
            .1
            .trim()
            == "yes"
    })
    .await;
}

/// A node (`Node,RBAC`, as kubeadm) reads what its pods use, and its own lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_read_only_what_their_pods_use() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = write(
        dir.path(),
        "tokens.csv",
        "n1-token,system:node:n1,uid-n1,system:nodes\nn2-token,system:node:n2,uid-n2,system:nodes\n",
    );
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["Node".into(), "RBAC".into()];
    })
    .await;
    let admin = crate::admin(&server);
    for body in [
        serde_json::json!({"metadata": {"name": "creds"}, "stringData": {"k": "v"}}),
        serde_json::json!({"metadata": {"name": "other"}, "stringData": {"k": "v"}}),
    ] {
        let r = admin
            .send_json(
                http::Method::POST,
                "/api/v1/namespaces/default/secrets",
                &body,
            )
            .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
    }
    let pod = serde_json::json!({"metadata": {"name": "web"}, "spec": {"nodeName": "n1",
        "containers": [{"name": "c", "image": "nginx",
            "env": [{"name": "K", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "k"}}}]}]}});
    let r = admin
        .send_json(http::Method::POST, "/api/v1/namespaces/default/pods", &pod)
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    let kubeconfig = |token: &str| {
        let path = dir.path().join(format!("{token}.kubeconfig"));
        std::fs::write(&path, server.kubeconfig().replace(server.token(), token)).unwrap();
        path
    };
    let (n1, n2) = (kubeconfig("n1-token"), kubeconfig("n2-token"));
    eventually("n1 reads the secret its pod uses", async || {
        kubectl(&n1, &["get", "secret", "creds"]).0
    })
    .await;
    let (read, _, err) = kubectl(&n1, &["get", "secret", "other"]);
    assert!(!read);
    assert!(
        err.contains(r#"secrets "other" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object"#),
        "{err}"
    );
    let (read, _, err) = kubectl(&n2, &["get", "secret", "creds"]);
    assert!(!read, "n2 runs no pod using it");
    assert!(
        err.contains("no relationship found between node 'n2'"),
        "{err}"
    );
    // One object by name through a list, as kubelets watch; never the whole collection.
    ok(kubectl(
        &n1,
        &["get", "secrets", "--field-selector=metadata.name=creds"],
    ));
    assert!(!kubectl(&n1, &["get", "secrets"]).0);
    // Pods only its own (by the spec.nodeName selector, as kubelets list them); its own
    // lease only.
    ok(kubectl(
        &n1,
        &["get", "pods", "-A", "--field-selector=spec.nodeName=n1"],
    ));
    let (listed, _, err) = kubectl(&n1, &["get", "pods", "-A"]);
    assert!(!listed, "a node listed every pod");
    assert!(
        err.contains("can only list/watch pods with spec.nodeName field selector"),
        "{err}"
    );
    let can = |who: &std::path::Path, args: &[&str]| {
        let mut argv = vec!["auth", "can-i"];
        argv.extend_from_slice(args);
        // "no - <reason>" when the authorizer gives one.
        let out = kubectl(who, &argv).1;
        out.split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        can(
            &n1,
            &[
                "update",
                "leases.coordination.k8s.io/n1",
                "-n",
                "kube-node-lease"
            ]
        ),
        "yes"
    );
    assert_eq!(
        can(
            &n1,
            &[
                "update",
                "leases.coordination.k8s.io/n2",
                "-n",
                "kube-node-lease"
            ]
        ),
        "no"
    );
    assert_eq!(can(&n1, &["delete", "nodes/n1"]), "no");

    // The pod moves away: the secret goes with it.
    let r = admin
        .request(
            http::Method::DELETE,
            "/api/v1/namespaces/default/pods/web?gracePeriodSeconds=0",
            &[],
            Vec::new(),
        )
        .await;
    assert!(r.status.is_success(), "{:?}", r.body);
    eventually("n1 no longer reads the secret", async || {
        !kubectl(&n1, &["get", "secret", "creds"]).0
    })
    .await;
}

/// Every start reconciles the default policy: a default role that lost rules gets them back,
/// a deleted default binding is made again, extras are kept, and a role annotated
/// `rbac.authorization.kubernetes.io/autoupdate: "false"` stays as it was edited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_restores_the_default_policy_unless_a_role_opts_out() {
    let mut server = TestServer::start().await;
    let raw = crate::admin(&server);
    const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    const BINDING: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/system::leader-locking-kube-scheduler";
    let extra = json!({"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]});
    const KEPT: &str = "system:kube-scheduler";
    const OPTED_OUT: &str = "system:kube-dns";
    let default_rules = raw.get(&format!("{ROLES}/{KEPT}")).await.json()["rules"].clone();
    assert!(
        default_rules.as_array().unwrap().len() > 3,
        "{default_rules}"
    );
    // One loses all but its first rule and gains one; the other loses its rules and opts out.
    for (name, opt_out) in [(KEPT, false), (OPTED_OUT, true)] {
        let mut role = raw.get(&format!("{ROLES}/{name}")).await.json();
        role["rules"] = if opt_out {
            json!([extra])
        } else {
            json!([role["rules"][0], extra])
        };
        if opt_out {
            role["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] =
                json!("false");
        }
        let r = raw
            .send_json(Method::PUT, &format!("{ROLES}/{name}"), &role)
            .await;
        assert_eq!(r.status, 200, "{}", r.message());
    }
    assert_eq!(raw.get(BINDING).await.status, 200);
    let r = raw.request(Method::DELETE, BINDING, &[], Vec::new()).await;
    assert_eq!(r.status, 200, "{}", r.message());

    // Every default object's version, to see that the restart rewrites none it need not.
    let versions = async |raw: &RawClient| {
        let mut versions = std::collections::BTreeMap::new();
        for kind in [
            "clusterroles",
            "clusterrolebindings",
            "roles",
            "rolebindings",
        ] {
            let list = raw
                .get(&format!("/apis/rbac.authorization.k8s.io/v1/{kind}"))
                .await
                .json();
            for item in list["items"].as_array().unwrap() {
                let meta = &item["metadata"];
                versions.insert(
                    format!("{kind}/{}/{}", meta["namespace"], meta["name"]),
                    meta["resourceVersion"].as_str().unwrap().to_owned(),
                );
            }
        }
        versions
    };
    let before = versions(&raw).await;

    server.restart().await;
    let raw = crate::admin(&server);
    let mut after = versions(&raw).await;
    let restored = format!("clusterroles/null/\"{KEPT}\"");
    assert_ne!(after.remove(&restored), before.get(&restored).cloned());
    let recreated = "rolebindings/\"kube-system\"/\"system::leader-locking-kube-scheduler\"";
    assert!(after.remove(recreated).is_some() && !before.contains_key(recreated));
    let mut unchanged = before.clone();
    unchanged.remove(&restored);
    assert_eq!(
        after, unchanged,
        "a restart rewrote default objects that were in place"
    );
    let kept = raw.get(&format!("{ROLES}/{KEPT}")).await.json();
    let rules = kept["rules"].as_array().unwrap();
    for rule in default_rules.as_array().unwrap() {
        assert!(
            rules.contains(rule),
            "{KEPT} lacks {rule} after the restart"
        );
    }
    assert!(rules.contains(&extra), "{KEPT} lost its extra rule");
    assert_eq!(rules.len(), default_rules.as_array().unwrap().len() + 1);
    let opted_out = raw.get(&format!("{ROLES}/{OPTED_OUT}")).await.json();
    assert_eq!(opted_out["rules"], json!([extra]), "{OPTED_OUT} opted out");
    let binding = raw.get(BINDING).await;
    assert_eq!(binding.status, 200, "the deleted default binding is back");
    assert_eq!(
        binding.json()["roleRef"]["name"],
        "system::leader-locking-kube-scheduler"
    );
}

/// A new cluster's first start writes the default policy while the RBAC index loads beside
/// it: the index loads again after those writes, so the very first requests, as soon as the
/// server serves, are authorized by the whole policy (and again after a restart, which
/// writes nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_requests_of_a_new_cluster_are_authorized_by_the_default_policy() {
    let mut server =
        TestServer::start_with(|c| c.authorization_modes = vec!["Node".into(), "RBAC".into()])
            .await;
    for start in ["first start", "restart"] {
        let raw = crate::admin(&server);
        let asked = [
            // system:discovery, bound to system:authenticated.
            (Method::GET, "/apis", "someone"),
            // system:kube-scheduler's own role, and the bindings of the last kinds listed.
            (Method::GET, "/api/v1/pods", "system:kube-scheduler"),
            (
                Method::GET,
                "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
                "system:kube-scheduler",
            ),
            // A controller's role, through its namespaced binding in kube-system.
            (
                Method::GET,
                "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
                "system:kube-controller-manager",
            ),
        ];
        let headers: Vec<[(&str, &str); 1]> = asked
            .iter()
            .map(|(_, _, user)| [("impersonate-user", *user)])
            .collect();
        let answers = futures_util::future::join_all(asked.iter().zip(&headers).map(
            |((method, path, _), headers)| raw.request(method.clone(), path, headers, Vec::new()),
        ))
        .await;
        for ((_, path, user), answer) in asked.iter().zip(answers) {
            assert_eq!(
                answer.status,
                200,
                "{start}: {user} GET {path}: {}",
                answer.message()
            );
        }
        if start == "first start" {
            server.restart().await;
        }
    }
}

/// The default policy's component, controller and namespaced grants, asked as each subject.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_policy_grants_components_and_controllers_their_parts() {
    let server = TestServer::start_with(|c| c.authorization_modes = vec!["RBAC".into()]).await;
    let admin = server.kubeconfig_path();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "create",
                "pods",
                "-n",
                "apps",
                "--as=system:serviceaccount:kube-system:job-controller",
            ],
            "yes",
        ),
        (
            &[
                "update",
                "persistentvolumes",
                "--subresource=status",
                "--as=system:serviceaccount:kube-system:persistent-volume-binder",
            ],
            "yes",
        ),
        (
            &[
                "get",
                "secrets",
                "-n",
                "apps",
                "--as=system:serviceaccount:kube-system:job-controller",
            ],
            "no",
        ),
        (
            &[
                "deletecollection",
                "pods",
                "-n",
                "apps",
                "--as=system:serviceaccount:kube-system:namespace-controller",
            ],
            "yes",
        ),
        (
            &[
                "create",
                "pods",
                "-n",
                "apps",
                "--as=system:serviceaccount:kube-system:namespace-controller",
            ],
            "no",
        ),
        (
            &[
                "get",
                "configmaps/extension-apiserver-authentication",
                "-n",
                "kube-system",
                "--as=system:kube-scheduler",
            ],
            "yes",
        ),
        (
            &[
                "get",
                "configmaps/other",
                "-n",
                "kube-system",
                "--as=system:kube-scheduler",
            ],
            "no",
        ),
        (
            &[
                "list",
                "leases.coordination.k8s.io",
                "-n",
                "kube-system",
                "--as=system:kube-scheduler",
            ],
            "yes",
        ),
        (
            &[
                "list",
                "leases.coordination.k8s.io",
                "-n",
                "default",
                "--as=system:kube-scheduler",
            ],
            "no",
        ),
        (
            &[
                "create",
                "pods",
                "--subresource=binding",
                "-n",
                "apps",
                "--as=system:kube-scheduler",
            ],
            "yes",
        ),
        (
            &[
                "update",
                "configmaps/cluster-info",
                "-n",
                "kube-public",
                "--as=system:serviceaccount:kube-system:bootstrap-signer",
            ],
            "yes",
        ),
        (
            &[
                "update",
                "configmaps/cluster-info",
                "-n",
                "kube-system",
                "--as=system:serviceaccount:kube-system:bootstrap-signer",
            ],
            "no",
        ),
    ];
    eventually("the namespaced defaults are indexed", async || {
        kubectl(
            &admin,
            &[
                "auth",
                "can-i",
                "get",
                "configmaps/extension-apiserver-authentication",
                "-n",
                "kube-system",
                "--as=system:kube-scheduler",
            ],
        )
        .1
        .trim()
            == "yes"
    })
    .await;
    for (args, want) in cases {
        let mut argv = vec!["auth", "can-i"];
        argv.extend_from_slice(args);
        let (_, out, err) = kubectl(&admin, &argv);
        assert_eq!(out.trim(), *want, "can-i {args:?}: {err}");
    }
    // Anonymous requests: the public information, nothing else.
    let anonymous = RawClient::new(&server.url(), server.ca_pem(), None);
    assert_eq!(anonymous.get("/version").await.status, 200);
    assert_eq!(anonymous.get("/healthz").await.status, 200);
    assert_eq!(anonymous.get("/api").await.status, 403);
    assert_eq!(anonymous.get("/api/v1/pods").await.status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_grants_permissions_they_do_not_hold() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = write(dir.path(), "tokens.csv", "dan-token,dan,1004\n");
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let admin = server.kubeconfig_path();
    let dan = {
        let path = dir.path().join("dan.kubeconfig");
        std::fs::write(
            &path,
            server.kubeconfig().replace(server.token(), "dan-token"),
        )
        .unwrap();
        path
    };
    let (ok, _, err) = kubectl(
        &admin,
        &[
            "create",
            "rolebinding",
            "dan-admin",
            "--clusterrole=admin",
            "--user=dan",
        ],
    );
    assert!(ok, "{err}");
    eventually("dan administers default", async || {
        kubectl(&dan, &["auth", "can-i", "create", "roles"])
            .1
            .trim()
            == "yes"
            && kubectl(&dan, &["auth", "can-i", "get", "pods"]).1.trim() == "yes"
    })
    .await;

    // Rules dan holds may be written into roles and bound; others may not.
    let (ok, _, err) = kubectl(
        &dan,
        &[
            "create",
            "role",
            "pod-reader",
            "--verb=get,list",
            "--resource=pods",
        ],
    );
    assert!(ok, "{err}");
    let (ok, _, err) = kubectl(
        &dan,
        &[
            "create",
            "role",
            "node-admin",
            "--verb=*",
            "--resource=nodes",
        ],
    );
    assert!(!ok);
    assert!(
        err.contains(r#"roles.rbac.authorization.k8s.io "node-admin" is forbidden: user "dan" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:"#)
            && err.contains(r#"{APIGroups:[""], Resources:["nodes"], Verbs:["*"]}"#),
        "{err}"
    );
    let (ok, _, err) = kubectl(
        &dan,
        &[
            "create",
            "rolebinding",
            "others-view",
            "--clusterrole=view",
            "--user=erin",
        ],
    );
    assert!(ok, "binding a role dan holds: {err}");
    let (ok, _, err) = kubectl(
        &dan,
        &[
            "create",
            "rolebinding",
            "dan-root",
            "--clusterrole=cluster-admin",
            "--user=dan",
        ],
    );
    assert!(!ok, "binding cluster-admin");
    assert!(
        err.contains("is attempting to grant RBAC permissions not currently held"),
        "{err}"
    );

    // With the bind verb on cluster-admin, the binding is allowed (upstream's escape hatch).
    let (ok, _, err) = kubectl(
        &admin,
        &[
            "create",
            "clusterrole",
            "bind-root",
            "--verb=bind",
            "--resource=clusterroles",
            "--resource-name=cluster-admin",
        ],
    );
    assert!(ok, "{err}");
    let (ok, _, err) = kubectl(
        &admin,
        &[
            "create",
            "rolebinding",
            "dan-bind-root",
            "--clusterrole=bind-root",
            "--user=dan",
        ],
    );
    assert!(ok, "{err}");
    eventually("dan may bind cluster-admin in default", async || {
        kubectl(
            &dan,
            &[
                "create",
                "rolebinding",
                "dan-root",
                "--clusterrole=cluster-admin",
                "--user=dan",
            ],
        )
        .0
    })
    .await;
}

#[tokio::test]
async fn abac_policies_and_the_authorization_webhook_decide() {
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let tokens = write(
        dir.path(),
        "tokens.csv",
        "alice-token,alice,1\nbob-token,bob,2,\"readers\"\nmallory-token,mallory,3\n",
    );
    let policy = write(
        dir.path(),
        "abac.jsonl",
        concat!(
            "# everything for alice\n",
            r#"{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*", "nonResourcePath": "*"}}"#,
            "\n",
            r#"{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "readers", "readonly": true, "namespace": "default", "resource": "configmaps", "apiGroup": ""}}"#,
            "\n"
        ),
    );
    let (t, p) = (tokens.clone(), policy.clone());
    let abac = TestServer::start_with(move |c| {
        c.token_auth_file = Some(t);
        c.authorization_modes = vec!["ABAC".into()];
        c.authorization_policy_file = Some(p);
    })
    .await;
    let as_user = |server: &TestServer, token: &str| {
        RawClient::new(&server.url(), server.ca_pem(), Some(token))
    };
    let cms = "/api/v1/namespaces/default/configmaps";
    assert_eq!(
        as_user(&abac, "alice-token")
            .get("/api/v1/nodes")
            .await
            .status,
        200
    );
    assert_eq!(as_user(&abac, "bob-token").get(cms).await.status, 200);
    let refused = as_user(&abac, "bob-token")
        .send_json(
            http::Method::POST,
            cms,
            &serde_json::json!({"metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(refused.status, 403);
    assert!(
        refused.json()["message"].as_str().unwrap().ends_with(
            r#"cannot create resource "configmaps" in API group "" in the namespace "default": No policy matched."#
        ),
        "{}",
        refused.json()
    );

    // The webhook: alice allowed, mallory denied outright, bob no opinion.
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    let log = seen.clone();
    let webhook = capstan_e2e::HttpsServer::start(move |req| {
        let mut review: Value = serde_json::from_slice(&req.body).unwrap();
        log.lock().unwrap().push(review.clone());
        review["status"] = match review["spec"]["user"].as_str() {
            Some("alice") => serde_json::json!({"allowed": true}),
            Some("mallory") => {
                serde_json::json!({"allowed": false, "denied": true, "reason": "blocked by policy"})
            }
            _ => serde_json::json!({"allowed": false, "reason": "not mine to say"}),
        };
        (http::StatusCode::OK, review)
    })
    .await;
    let ca = write(dir.path(), "webhook-ca.crt", &webhook.ca_pem);
    let config = serde_json::json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "w",
        "clusters": [{"name": "w", "cluster": {"server": format!("{}/authorize", webhook.url),
            "certificate-authority": ca.display().to_string()}}],
        "contexts": [{"name": "w", "context": {"cluster": "w"}}],
    });
    let file = write(dir.path(), "authz.kubeconfig", &config.to_string());
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["Webhook".into()];
        c.authorization_webhook = Some(capstan_server::AuthorizationWebhookConfig {
            config_file: file,
            version: "v1beta1".into(),
            authorized_ttl: Duration::from_secs(300),
            unauthorized_ttl: Duration::from_secs(30),
        });
    })
    .await;
    assert_eq!(as_user(&server, "alice-token").get(cms).await.status, 200);
    let denied = as_user(&server, "mallory-token").get(cms).await;
    assert_eq!(denied.status, 403);
    assert!(
        denied.json()["message"]
            .as_str()
            .unwrap()
            .ends_with(": blocked by policy"),
        "{}",
        denied.json()
    );
    assert_eq!(as_user(&server, "bob-token").get(cms).await.status, 403);
    let sent = seen.lock().unwrap().clone();
    let alice = sent.iter().find(|r| r["spec"]["user"] == "alice").unwrap();
    assert_eq!(alice["apiVersion"], "authorization.k8s.io/v1beta1");
    assert_eq!(
        alice["spec"]["group"],
        serde_json::json!(["system:authenticated"]),
        "v1beta1 names the groups `group`"
    );
    assert_eq!(
        alice["spec"]["resourceAttributes"]["resource"],
        "configmaps"
    );
    // Answers are cached: asking again sends nothing new.
    let before = seen.lock().unwrap().len();
    assert_eq!(as_user(&server, "alice-token").get(cms).await.status, 200);
    assert_eq!(seen.lock().unwrap().len(), before);
}
