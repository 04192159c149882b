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
