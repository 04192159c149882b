//! `services/{name}/proxy` and `pods/{name}/proxy`: requests forwarded to a pod's address
//! (a small HTTP server of the test on this machine's own address), answers streamed back,
//! credentials kept, loopback refused, and the upstream errors.

use std::net::{IpAddr, SocketAddr};

use capstan_e2e::kubectl;
use capstan_testing::TestServer;
use http::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{admin, ok};

const PODS: &str = "/api/v1/namespaces/default/pods";

/// This machine's address on its default route (no packet is sent).
pub(crate) fn own_address() -> IpAddr {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    socket.connect("192.0.2.1:80").unwrap();
    socket.local_addr().unwrap().ip()
}

/// A backend answering every request with its request head as the body.
async fn echo_backend(ip: IpAddr) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-backend: echo\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    head.len()
                );
                let _ = conn.write_all(response.as_bytes()).await;
                let _ = conn.write_all(&head).await;
            });
        }
    });
    address
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_and_pods_proxy_to_their_pods() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let ip = own_address();
    let backend = echo_backend(ip).await;

    // A pod at the backend's address, and a Service whose endpoints name it.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx",
            "ports": [{"containerPort": backend.port()}]}]}});
    assert_eq!(raw.send_json(Method::POST, PODS, &pod).await.status, 201);
    let mut stored = raw.get(&format!("{PODS}/web")).await.json();
    stored["status"]["podIP"] = json!(ip.to_string());
    stored["status"]["podIPs"] = json!([{"ip": ip.to_string()}]);
    let r = raw
        .send_json(Method::PUT, &format!("{PODS}/web/status"), &stored)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"name": "http", "port": 80, "targetPort": backend.port()}]}});
    assert_eq!(
        raw.send_json(Method::POST, "/api/v1/namespaces/default/services", &svc)
            .await
            .status,
        201
    );
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": ip.to_string(),
                "targetRef": {"kind": "Pod", "name": "web", "namespace": "default"}}],
            "ports": [{"name": "http", "port": backend.port()}]}]});
    assert_eq!(
        raw.send_json(
            Method::POST,
            "/api/v1/namespaces/default/endpoints",
            &endpoints
        )
        .await
        .status,
        201
    );

    // Through the Service (by its port number and by its port name) and through the pod.
    for path in [
        "/api/v1/namespaces/default/services/web:80/proxy/metrics/a?x=1",
        "/api/v1/namespaces/default/services/http:web:http/proxy/metrics/a?x=1",
        "/api/v1/namespaces/default/pods/web/proxy/metrics/a?x=1",
    ] {
        let r = raw.get(path).await;
        assert_eq!(r.status, 200, "{path}: {:?}", r.body);
        assert_eq!(r.headers["x-backend"], "echo");
        let head = String::from_utf8_lossy(&r.body).to_string();
        assert!(
            head.starts_with("GET /metrics/a?x=1 HTTP/1.1\r\n"),
            "{head}"
        );
        assert!(
            !head.to_ascii_lowercase().contains("authorization"),
            "the client's credentials went on: {head}"
        );
    }
    let posted = raw
        .request(
            Method::POST,
            "/api/v1/namespaces/default/services/web:http/proxy/submit",
            &[("content-type", "text/plain")],
            b"payload".to_vec(),
        )
        .await;
    assert_eq!(posted.status, 200);
    assert!(String::from_utf8_lossy(&posted.body).starts_with("POST /submit HTTP/1.1"));

    // kubectl's raw access goes the same way.
    let kc = server.kubeconfig_path();
    let out = ok(kubectl(
        &kc,
        &[
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/web/proxy/healthz",
        ],
    ));
    assert!(out.starts_with("GET /healthz HTTP/1.1"), "{out}");

    // Upstream's errors.
    let r = raw
        .get("/api/v1/namespaces/default/services/web:81/proxy/")
        .await;
    assert_eq!(r.status, 503);
    assert_eq!(r.message(), "no service port 81 found for service \"web\"");
    let lonely = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lonely"},
        "spec": {"ports": [{"port": 80}]}});
    raw.send_json(Method::POST, "/api/v1/namespaces/default/services", &lonely)
        .await;
    let r = raw
        .get("/api/v1/namespaces/default/services/lonely/proxy/")
        .await;
    assert_eq!(r.status, 503);
    assert_eq!(r.message(), "no endpoints available for service \"lonely\"");
    stored = raw.get(&format!("{PODS}/web")).await.json();
    stored["status"]["podIP"] = json!("127.0.0.1");
    stored["status"]["podIPs"] = json!([{"ip": "127.0.0.1"}]);
    raw.send_json(Method::PUT, &format!("{PODS}/web/status"), &stored)
        .await;
    let r = raw.get("/api/v1/namespaces/default/pods/web/proxy/").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "address not allowed");

    // Discovery names the subresources.
    let discovery = raw.get("/api/v1").await.json();
    let names: Vec<&str> = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(names.contains(&"services/proxy") && names.contains(&"pods/proxy"));
}
