//! Operating the server: CPU profiles, post-start hooks in the health checks, and the
//! cluster policy on privileged pods.

use std::io::Read as _;

use capstan_testing::TestServer;

fn privileged_pod(name: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": {"name": name},
        "spec": {"containers": [{
            "name": "c", "image": "busybox",
            "securityContext": {"privileged": true}
        }]}
    })
}

const PODS: &str = "/api/v1/namespaces/default/pods";

#[tokio::test]
async fn privileged_pods_need_allow_privileged() {
    let server = TestServer::start().await;
    let c = crate::admin(&server);
    let res = c
        .send_json(http::Method::POST, PODS, &privileged_pod("p"))
        .await;
    assert_eq!(res.status.as_u16(), 422);
    let status = res.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.containers[0].securityContext.privileged"
    );
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "FieldValueForbidden"
    );
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("disallowed by cluster policy"),
        "{status}"
    );

    let allowing = TestServer::start_with(|c| c.allow_privileged = true).await;
    let c = crate::admin(&allowing);
    let res = c
        .send_json(http::Method::POST, PODS, &privileged_pod("p"))
        .await;
    assert_eq!(res.status.as_u16(), 201);
}

#[tokio::test]
async fn readyz_reports_the_post_start_hooks() {
    let server = TestServer::start().await;
    let c = crate::admin(&server);
    let res = c.get("/readyz?verbose").await;
    assert_eq!(res.status.as_u16(), 200);
    let body = String::from_utf8_lossy(&res.body).into_owned();
    for check in [
        "[+]poststarthook/start-system-namespaces-controller ok",
        "[+]poststarthook/scheduling/bootstrap-system-priority-classes ok",
        "[+]poststarthook/rbac/bootstrap-roles ok",
        "[+]poststarthook/start-cluster-authentication-info-controller ok",
        "[+]poststarthook/priority-and-fairness-config-producer ok",
        "[+]poststarthook/start-service-ip-repair-controllers ok",
        "[+]poststarthook/apiservice-registration-controller ok",
    ] {
        assert!(body.contains(check), "{body}");
    }
    let res = c
        .get("/livez/poststarthook/start-system-namespaces-controller")
        .await;
    assert_eq!(res.status.as_u16(), 200);
    // What the hooks made is there.
    assert_eq!(
        c.get("/api/v1/namespaces/kube-node-lease")
            .await
            .status
            .as_u16(),
        200
    );
    assert_eq!(
        c.get("/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical")
            .await
            .status
            .as_u16(),
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cpu_profile_in_the_pprof_format() {
    let server = TestServer::start().await;
    let c = crate::admin(&server);
    let index = c.get("/debug/pprof/").await;
    assert_eq!(index.status.as_u16(), 200);
    assert!(String::from_utf8_lossy(&index.body).contains("profile"));
    // Keep the server busy while it samples itself.
    let busy = {
        let c = c.clone();
        tokio::spawn(async move {
            for i in 0.. {
                let cm = serde_json::json!({"metadata": {"name": format!("load-{i}")},
                    "data": {"k": "v".repeat(512)}});
                let path = "/api/v1/namespaces/default/configmaps";
                c.send_json(http::Method::POST, path, &cm).await;
                c.get(path).await;
            }
        })
    };
    let res = c.get("/debug/pprof/profile?seconds=2").await;
    busy.abort();
    assert_eq!(
        res.status.as_u16(),
        200,
        "{}",
        String::from_utf8_lossy(&res.body)
    );
    assert_eq!(&res.body[..2], [0x1f, 0x8b], "gzip, as Go serves profiles");
    let mut profile = Vec::new();
    flate2::read::GzDecoder::new(&res.body[..])
        .read_to_end(&mut profile)
        .expect("gzip data");
    let text = String::from_utf8_lossy(&profile);
    // The string table names the sample types and, with samples taken, Capstan's functions.
    for needle in ["samples", "count", "cpu", "nanoseconds", "capstan_"] {
        assert!(text.contains(needle), "{needle} is not in the profile");
    }
    let bad = c.get("/debug/pprof/profile?seconds=x").await;
    assert_eq!(bad.status.as_u16(), 400);
    assert_eq!(c.get("/debug/pprof/heap").await.status.as_u16(), 404);

    let quiet = TestServer::start_with(|c| c.profiling = false).await;
    let c = crate::admin(&quiet);
    assert_eq!(c.get("/debug/pprof/").await.status.as_u16(), 404);
}

/// Under RBAC the profiling endpoints need `get` on their path, as upstream's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_need_the_get_verb_on_their_path() {
    let server = crate::server_with_tokens("bob-token,bob,1002\n", |c| {
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let admin = crate::admin(&server);
    let bob = capstan_e2e::RawClient::new(&server.url(), server.ca_pem(), Some("bob-token"));
    let refused = bob.get("/debug/pprof/").await;
    assert_eq!(refused.status.as_u16(), 403);
    assert_eq!(
        refused.json()["message"],
        "forbidden: User \"bob\" cannot get path \"/debug/pprof/\""
    );
    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    let role = serde_json::json!({"metadata": {"name": "profiler"},
        "rules": [{"nonResourceURLs": ["/debug/pprof", "/debug/pprof/*"], "verbs": ["get"]}]});
    let created = admin
        .send_json(http::Method::POST, &format!("{rbac}/clusterroles"), &role)
        .await;
    assert_eq!(created.status.as_u16(), 201);
    let binding = serde_json::json!({"metadata": {"name": "bob-profiles"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "profiler"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"}]});
    let created = admin
        .send_json(
            http::Method::POST,
            &format!("{rbac}/clusterrolebindings"),
            &binding,
        )
        .await;
    assert_eq!(created.status.as_u16(), 201);
    // The authorizer sees the binding through its informer, shortly.
    let mut status = 0;
    for _ in 0..200 {
        status = bob.get("/debug/pprof/").await.status.as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(status, 200);
    let index = bob.get("/debug/pprof/").await;
    assert!(String::from_utf8_lossy(&index.body).contains("profile"));
}

/// The admin kubeconfig written at start keeps working after a restart: its token is kept in
/// the data directory (mode 0600), and the file is replaced whole with mode 0600.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_kubeconfig_survives_a_restart() {
    use std::os::unix::fs::PermissionsExt as _;
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = conf_dir.path().join("admin.conf");
    std::fs::write(&conf, "a stale file anyone could read").unwrap();
    std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o644)).unwrap();
    let written = conf.clone();
    let mut server = TestServer::start_with(move |c| {
        c.admin_token_value = None;
        c.admin_kubeconfig = Some(written);
    })
    .await;
    let first = server.token().to_string();
    let kubeconfig = std::fs::read_to_string(&conf).unwrap();
    assert!(kubeconfig.contains(&first));
    assert_eq!(
        std::fs::metadata(&conf).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let stored = server.data_dir().join("admin-token");
    assert_eq!(std::fs::read_to_string(&stored).unwrap(), first);
    assert_eq!(
        std::fs::metadata(&stored).unwrap().permissions().mode() & 0o777,
        0o600
    );

    server.restart().await;
    assert_eq!(server.token(), first, "the same token after the restart");
    let old = capstan_e2e::RawClient::new(&server.url(), server.ca_pem(), Some(&first));
    assert_eq!(old.get("/api/v1/namespaces").await.status, 200);
}
