//! Limits: requests beyond the in-flight bounds are refused with 429, requests past their
//! deadline answered with 504, and watches are neither counted nor cut short.

use std::time::Duration;

use capstan_e2e::{RawClient, kubectl, read_response};
use capstan_testing::TestServer;
use serde_json::json;

use crate::admin;

const CM: &str = "/api/v1/namespaces/default/configmaps";

/// A server where `bob` and `carol` (not members of system:masters) may do everything.
async fn server_with_bob(configure: impl FnOnce(&mut capstan_server::ServerConfig)) -> TestServer {
    crate::server_with_tokens("bob-token,bob,1002\ncarol-token,carol,1003\n", configure).await
}

/// The value of one sample in the server's metrics (0 when absent).
async fn sample(server: &TestServer, name_and_labels: &str) -> f64 {
    let page = admin(server).get("/metrics").await;
    String::from_utf8_lossy(&page.body)
        .lines()
        .find_map(|l| l.strip_prefix(name_and_labels)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Waits until the sample reaches `value`.
async fn wait_for_sample(server: &TestServer, name_and_labels: &str, value: f64) {
    for _ in 0..500 {
        if sample(server, name_and_labels).await == value {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{name_and_labels} never reached {value}");
}

const MUTATING_IN_FLIGHT: &str = "apiserver_current_inflight_requests{request_kind=\"mutating\"}";
const READ_ONLY_IN_FLIGHT: &str = "apiserver_current_inflight_requests{request_kind=\"readOnly\"}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_beyond_the_in_flight_limits_are_refused_with_429() {
    let server = server_with_bob(|c| {
        c.max_requests_inflight = 1;
        c.max_mutating_requests_inflight = 1;
        c.enable_priority_and_fairness = false;
    })
    .await;
    let bob = RawClient::new(&server.url(), server.ca_pem(), Some("bob-token"));

    // A create whose body never arrives holds the one mutating seat.
    let held = bob.unfinished_request("POST", CM, 100, b"{").await;
    wait_for_sample(&server, MUTATING_IN_FLIGHT, 1.0).await;
    let r = bob
        .send_json(http::Method::POST, CM, &json!({"metadata": {"name": "b"}}))
        .await;
    assert_eq!(r.status, 429, "{:?}", r.body);
    assert_eq!(r.headers["retry-after"], "1");
    let status = r.json();
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(
        status["message"],
        "Too many requests, please try again later."
    );
    assert_eq!(status["details"]["retryAfterSeconds"], 1);
    // Reads have their own bound.
    assert_eq!(bob.get(CM).await.status, 200);
    // Members of system:masters always get an answer.
    let r = admin(&server)
        .send_json(http::Method::POST, CM, &json!({"metadata": {"name": "a"}}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(
        sample(
            &server,
            "apiserver_dropped_requests_total{request_kind=\"mutating\"}"
        )
        .await,
        1.0
    );
    // A client that goes away gives its seat back.
    drop(held);
    wait_for_sample(&server, MUTATING_IN_FLIGHT, 0.0).await;
    let r = bob
        .send_json(http::Method::POST, CM, &json!({"metadata": {"name": "b"}}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    // A read that waits for a future resourceVersion holds the one read-only seat. Reading
    // the metrics takes that seat too, for a moment, so the gauge cannot tell whether the
    // slow read has arrived; the slow read is repeated until it is not refused, and bob's
    // reads of /metrics are refused once it holds the seat.
    let slow = {
        let bob = bob.clone();
        tokio::spawn(async move {
            loop {
                let r = bob
                    .get(&format!(
                        "{CM}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan"
                    ))
                    .await;
                if r.status != 429 {
                    return r;
                }
            }
        })
    };
    for attempt in 0.. {
        if bob.get("/metrics").await.status == 429 {
            break;
        }
        assert!(attempt < 500, "the slow read never took the read-only seat");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(sample(&server, READ_ONLY_IN_FLIGHT).await, 1.0);
    let r = bob.get(CM).await;
    assert_eq!(
        r.status, 429,
        "a second read is refused while the first holds the seat: {:?}",
        r.body
    );
    // Watches are not counted.
    let watch = bob.get(&format!("{CM}?watch=true&timeoutSeconds=1")).await;
    assert_eq!(watch.status, 200, "{:?}", watch.body);
    assert_eq!(slow.await.unwrap().status, 504);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_past_their_deadline_get_504_and_watches_run_on() {
    let server = TestServer::start_with(|c| c.request_timeout = Duration::from_secs(1)).await;
    let raw = admin(&server);

    let mut held = raw.unfinished_request("POST", CM, 100, b"{").await;
    let (code, body) = read_response(&mut held).await;
    assert_eq!(code, 504, "{}", String::from_utf8_lossy(&body));
    let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status["reason"], "Timeout");
    assert_eq!(
        status["message"],
        "Timeout: request did not complete within requested timeout - context deadline exceeded"
    );

    // A client's shorter timeout wins; a malformed one is a 400.
    let mut held = raw
        .unfinished_request("POST", &format!("{CM}?timeout=200ms"), 100, b"{")
        .await;
    assert_eq!(read_response(&mut held).await.0, 504);
    let r = raw.get(&format!("{CM}?timeout=soon")).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .starts_with("invalid timeout specified in the request URL"),
        "{}",
        r.message()
    );

    // A watch outlives the request timeout; timeoutSeconds 0 and values too large for the
    // clock mean the default and the longest wait, not an error.
    let r = raw.get(&format!("{CM}?watch=true&timeoutSeconds=2")).await;
    assert_eq!(r.status, 200);
    for timeout in ["0", "9223372036854775807"] {
        let mut watch = raw
            .unfinished_request(
                "GET",
                &format!("{CM}?watch=true&timeoutSeconds={timeout}"),
                0,
                b"",
            )
            .await;
        assert_eq!(
            read_response(&mut watch).await.0,
            200,
            "timeoutSeconds={timeout}"
        );
    }

    // The server still serves, and the timed-out creates' handlers ended (their bodies
    // never came: nothing was created).
    let list = raw.get(CM).await.json();
    let names: Vec<_> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["kube-root-ca.crt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_patch_bombs_are_refused_and_the_server_stays_responsive() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let r = raw
        .send_json(
            http::Method::POST,
            CM,
            &json!({"metadata": {"name": "bomb"}, "data": {"a": "x".repeat(1000)}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let patch = |ops: Vec<serde_json::Value>| serde_json::to_vec(&ops).unwrap();
    let send = |body: Vec<u8>| {
        let raw = raw.clone();
        async move {
            raw.request(
                http::Method::PATCH,
                &format!("{CM}/bomb"),
                &[("content-type", "application/json-patch+json")],
                body,
            )
            .await
        }
    };
    // Copies that double the document each time: a terabyte after 30 of them.
    let mut ops = vec![json!({"op": "add", "path": "/data/b", "value": ""})];
    ops.extend(
        (0..40).map(|i| json!({"op": "copy", "from": "/data", "path": format!("/data/c{i}")})),
    );
    let r = send(patch(ops)).await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert!(
        r.message()
            .contains("the accumulated size increase of copy"),
        "{}",
        r.message()
    );
    // More operations than upstream allows: 413 before any is applied.
    let ops = (0..10_001)
        .map(|_| json!({"op": "test", "path": "/metadata/name", "value": "bomb"}))
        .collect();
    let r = send(patch(ops)).await;
    assert_eq!(r.status, 413, "{:?}", r.body);
    assert_eq!(
        r.message(),
        "The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
    // Nothing was changed, and the server answers.
    let cm = raw.get(&format!("{CM}/bomb")).await.json();
    assert_eq!(cm["data"]["a"], "x".repeat(1000));
    assert!(cm["data"].get("b").is_none(), "{cm}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_cannot_add_metric_series() {
    let server = TestServer::start().await;
    let anonymous = RawClient::new(&server.url(), server.ca_pem(), None);
    let raw = admin(&server);
    for path in [
        "/api/v1/madeupresource12345",
        "/apis/madeup.example.com/v9/things12345",
        "/api/v1/namespaces/default/configmaps/x/madeupsub12345",
    ] {
        anonymous.get(path).await;
        raw.get(path).await;
    }
    raw.request(
        http::Method::from_bytes(b"BREW").unwrap(),
        "/api/v1/pods",
        &[],
        Vec::new(),
    )
    .await;
    raw.get("/api/v1/namespaces/default/configmaps?dryRun=madeupvalue12345")
        .await;
    let page = String::from_utf8_lossy(&raw.get("/metrics").await.body).to_string();
    for minted in ["madeup", "12345", "BREW"] {
        assert!(
            !page
                .lines()
                .any(|l| l.starts_with("apiserver_request") && l.contains(minted)),
            "a client minted a series with {minted:?}"
        );
    }
    // The requests were counted, under labels the server chose.
    assert!(page.contains("verb=\"other\""), "{page}");
    assert!(page.contains("dry_run=\"invalid\""), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_handshakes_slow_headers_and_idle_connections_are_closed() {
    let server = TestServer::start_with(|c| {
        c.tls_handshake_timeout = Duration::from_millis(300);
        c.request_header_timeout = Duration::from_millis(300);
    })
    .await;
    let raw = admin(&server);
    let patience = Duration::from_secs(10);
    // A client that connects and never starts its handshake.
    let address = server.url().trim_start_matches("https://").to_string();
    let mut tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    assert!(capstan_e2e::closed_within(&mut tcp, patience).await);
    // A client whose headers never end.
    let mut slow = raw.connection().await;
    slow.send(b"GET /api HTTP/1.1\r\nhost: x\r\n").await;
    assert!(slow.closed_within(patience).await);
    // A keep-alive connection left idle after its request.
    let mut idle = raw.connection().await;
    let head = format!(
        "GET /version HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\r\n",
        server.token()
    );
    idle.send(head.as_bytes()).await;
    assert_eq!(read_response(&mut idle).await.0, 200);
    assert!(idle.closed_within(patience).await);
    // Everyone else is served.
    assert_eq!(raw.get("/version").await.status, 200);
}

/// An HTTP/2 connection to `server`, and the task that ends when the server closes it.
async fn h2_connection(
    server: &TestServer,
) -> (
    hyper::client::conn::http2::SendRequest<http_body_util::Empty<bytes::Bytes>>,
    tokio::task::JoinHandle<()>,
) {
    let config = capstan_e2e::tls_config(server.ca_pem(), &[b"h2"]);
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let address = server.url().trim_start_matches("https://").to_string();
    let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let tls = connector.connect(name, tcp).await.unwrap();
    let (send, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tls),
    )
    .await
    .unwrap();
    (send, tokio::spawn(async move { drop(conn.await) }))
}

/// GET `path` with `token` over an HTTP/2 connection; the response body is left unread.
async fn h2_get(
    send: &mut hyper::client::conn::http2::SendRequest<http_body_util::Empty<bytes::Bytes>>,
    path: &str,
    token: &str,
) -> http::Response<hyper::body::Incoming> {
    let req = http::Request::get(format!("https://127.0.0.1{path}"))
        .header("authorization", format!("Bearer {token}"))
        .body(http_body_util::Empty::new())
        .unwrap();
    send.send_request(req).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_open_ones_are_capped() {
    let idle = Duration::from_millis(300);
    let server = TestServer::start_with(|c| {
        c.idle_connection_timeout = idle;
        c.max_connections = Some(2);
    })
    .await;
    let token = server.token().to_string();
    let raw = admin(&server);
    let patience = Duration::from_secs(10);

    // An HTTP/2 connection left idle after its request is closed by the server (the
    // client keeps its side open).
    let (mut quiet, closed) = h2_connection(&server).await;
    assert_eq!(h2_get(&mut quiet, "/version", &token).await.status(), 200);
    tokio::time::timeout(patience, closed)
        .await
        .expect("an idle HTTP/2 connection is closed")
        .unwrap();
    drop(quiet);

    // One with a watch open is not: it holds one of the two places, a request still
    // waiting for its body the other.
    let (mut send, watch_closed) = h2_connection(&server).await;
    let watch = h2_get(&mut send, &format!("{CM}?watch=1"), &token).await;
    assert_eq!(watch.status(), 200);
    let _waiting = raw
        .unfinished_request("POST", CM, 100, b"{\"apiVersion\":")
        .await;

    // A third client is not accepted while both are open: its handshake waits.
    let third = tokio::spawn({
        let raw = raw.clone();
        let head =
            format!("GET /version HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n\r\n");
        async move {
            let mut conn = raw.connection().await;
            conn.send(head.as_bytes()).await;
            read_response(&mut conn).await.0
        }
    });
    tokio::time::sleep(idle * 4).await;
    assert!(
        !watch_closed.is_finished(),
        "a connection with a watch open stays"
    );
    assert!(
        !third.is_finished(),
        "a third connection was served beyond the cap"
    );

    // The watch ends; its connection goes idle and closes, and the third client is served.
    drop(watch);
    tokio::time::timeout(patience, watch_closed)
        .await
        .expect("the watch's connection closes once idle")
        .unwrap();
    let status = tokio::time::timeout(patience, third)
        .await
        .expect("the third client is served once a place is free")
        .unwrap();
    assert_eq!(status, 200);
    drop(send);
}

const FLOWCONTROL: &str = "/apis/flowcontrol.apiserver.k8s.io/v1";

/// The UID of a FlowSchema or PriorityLevelConfiguration.
async fn uid(server: &TestServer, resource: &str, name: &str) -> String {
    let r = admin(server)
        .get(&format!("{FLOWCONTROL}/{resource}/{name}"))
        .await;
    assert_eq!(r.status, 200, "{resource}/{name}: {:?}", r.body);
    r.json()["metadata"]["uid"].as_str().unwrap().to_string()
}

/// Waits until `client`'s requests are classified by the FlowSchema of UID `schema`.
async fn classified_by(client: &RawClient, schema: &str) {
    for _ in 0..500 {
        if client.get(CM).await.headers["x-kubernetes-pf-flowschema-uid"] == schema {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("requests are never classified by FlowSchema {schema}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn priority_and_fairness_classifies_queues_and_takes_new_flow_schemas() {
    // One seat in all: every priority level gets one.
    let server = server_with_bob(|c| {
        c.max_requests_inflight = 1;
        c.max_mutating_requests_inflight = 0;
    })
    .await;
    let bob = RawClient::new(&server.url(), server.ca_pem(), Some("bob-token"));
    let carol = RawClient::new(&server.url(), server.ca_pem(), Some("carol-token"));

    // Every response says where the request was classified.
    let r = admin(&server).get(CM).await;
    assert_eq!(
        r.headers["x-kubernetes-pf-flowschema-uid"],
        uid(&server, "flowschemas", "exempt").await.as_str()
    );
    let r = carol.get(CM).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.headers["x-kubernetes-pf-prioritylevel-uid"],
        uid(&server, "prioritylevelconfigurations", "global-default")
            .await
            .as_str()
    );

    // Bob gets a level of his own that rejects rather than queues, through kubectl.
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("tight.yaml");
    // Levels that do not borrow: with one seat each, they would borrow their neighbours'.
    let level = |name: &str, response: &str| {
        format!(
            "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\n\
             metadata:\n  name: {name}\nspec:\n  type: Limited\n  limited:\n\
             \x20   nominalConcurrencyShares: 1\n    borrowingLimitPercent: 0\n\
             \x20   limitResponse:\n{response}---\n"
        )
    };
    let schema = |name: &str, level: &str, user: &str| {
        format!(
            "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata:\n  name: {name}\n\
             spec:\n  priorityLevelConfiguration:\n    name: {level}\n  matchingPrecedence: 500\n\
             \x20 distinguisherMethod:\n    type: ByUser\n  rules:\n  - subjects:\n    - kind: User\n\
             \x20     user:\n        name: {user}\n    resourceRules:\n    - verbs: ['*']\n\
             \x20     apiGroups: ['*']\n      resources: ['*']\n      namespaces: ['*']\n\
             \x20     clusterScope: true\n---\n"
        )
    };
    std::fs::write(
        &manifest,
        [
            level("tight", "      type: Reject\n"),
            level(
                "patient",
                "      type: Queue\n      queuing:\n        queues: 8\n        handSize: 2\n\
                 \x20       queueLengthLimit: 10\n",
            ),
            schema("bob-is-tight", "tight", "bob"),
            schema("carol-is-patient", "patient", "carol"),
        ]
        .concat(),
    )
    .unwrap();
    let conf = server.kubeconfig_path();
    let (success, _, err) = kubectl(&conf, &["apply", "-f", manifest.to_str().unwrap()]);
    assert!(success, "{err}");
    let tight = uid(&server, "flowschemas", "bob-is-tight").await;
    classified_by(&bob, &tight).await;
    classified_by(
        &carol,
        &uid(&server, "flowschemas", "carol-is-patient").await,
    )
    .await;
    let (success, out, err) = kubectl(&conf, &["get", "flowschema", "bob-is-tight"]);
    assert!(success, "{err}");
    assert!(out.contains("tight") && out.contains("500"), "{out}");

    // A create whose body never arrives holds tight's one seat: bob's next request is
    // refused, carol's is served.
    // The held request takes the seat once the server has read its head; a GET of the poll
    // that holds the seat at that moment gets the held request refused instead (tight does
    // not queue), so the hold is made again.
    let mut refused = None;
    let mut held = None;
    for _ in 0..5 {
        let stalled = bob.unfinished_request("POST", CM, 100, b"{").await;
        // Until the held request has reached its seat (up to 2 s on a loaded machine).
        for _ in 0..400 {
            let r = bob.get(CM).await;
            if r.status == 429 {
                refused = Some(r);
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        held = Some(stalled);
        if refused.is_some() {
            break;
        }
    }
    let refused = refused.expect("bob is refused while his seat is held");
    assert_eq!(refused.headers["retry-after"], "1");
    assert_eq!(
        refused.headers["x-kubernetes-pf-flowschema-uid"],
        tight.as_str()
    );
    assert_eq!(refused.json()["reason"], "TooManyRequests");
    assert_eq!(carol.get(CM).await.status, 200);
    // A watch needs a seat while it sends its initial events, so it is refused too.
    let r = bob.get(&format!("{CM}?watch=true&timeoutSeconds=1")).await;
    assert_eq!(r.status, 429, "{:?}", r.message());
    assert_eq!(r.json()["reason"], "TooManyRequests");
    let rejected = "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"bob-is-tight\",\
                    priority_level=\"tight\",reason=\"concurrency-limit\"}";
    assert!(sample(&server, rejected).await >= 1.0);
    drop(held);
    let mut served = false;
    for _ in 0..200 {
        if bob.get(CM).await.status == 200 {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(served, "the seat comes back when the client goes away");
    // A watch holds its seat only while it initializes: with one open (its client never
    // reading), bob's other requests are served.
    let dispatched = "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"bob-is-tight\",\
                      priority_level=\"tight\"}";
    let before = sample(&server, dispatched).await;
    let watching = bob.stalled_get(&format!("{CM}?watch=true"), 4096).await;
    wait_for_sample(&server, dispatched, before + 1.0).await;
    let executing = "apiserver_flowcontrol_current_executing_requests{flow_schema=\"bob-is-tight\",\
                     priority_level=\"tight\"}";
    wait_for_sample(&server, executing, 0.0).await;
    assert_eq!(
        bob.get(CM).await.status,
        200,
        "the watch gave its seat back"
    );
    drop(watching);

    // Carol's level queues: her second request waits for her first one's seat.
    let held = carol.unfinished_request("POST", CM, 100, b"{").await;
    let executing = "apiserver_flowcontrol_current_executing_requests{flow_schema=\"carol-is-patient\",\
                     priority_level=\"patient\"}";
    wait_for_sample(&server, executing, 1.0).await;
    let waiting = {
        let carol = carol.clone();
        tokio::spawn(async move { carol.get(CM).await.status })
    };
    let mut queued = false;
    for _ in 0..200 {
        let dump = admin(&server)
            .get("/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1")
            .await;
        let text = String::from_utf8_lossy(&dump.body).to_string();
        if text.contains("patient, carol-is-patient, ") && text.contains(", carol, list, ") {
            queued = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(queued, "carol's second request waits in a queue");
    drop(held);
    assert_eq!(waiting.await.unwrap(), 200);

    // Bad configuration is refused with upstream's field errors.
    let r = admin(&server)
        .send_json(
            http::Method::POST,
            &format!("{FLOWCONTROL}/prioritylevelconfigurations"),
            &json!({"metadata": {"name": "bad"}, "spec": {"type": "Limited", "limited": {
                "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 8}}}}}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["details"]["causes"][0]["field"],
        "spec.limited.limitResponse.queuing.handSize"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_takes_a_seat_per_hundred_objects_from_the_start() {
    // The storage count poll would not run again for a minute: the width comes from the
    // watch cache's count.
    let server = server_with_bob(|_| {}).await;
    let raw = admin(&server);
    fill(&raw, 120, 48 << 10).await;
    // A consistent list waits until the cache holds every acknowledged create (the
    // namespace's `kube-root-ca.crt`, written by a controller in its own time, aside).
    let listed = raw.get(CM).await.json();
    let filled = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["metadata"]["name"].as_str().unwrap().starts_with("big-"))
        .count();
    assert_eq!(filled, 120);

    // Bob's list of 120 objects (about 6 MB, never read) holds two seats until it is sent.
    let bob = RawClient::new(&server.url(), server.ca_pem(), Some("bob-token"));
    let listing = bob.stalled_get(CM, 4096).await;
    let seats = "apiserver_flowcontrol_current_executing_seats{flow_schema=\"global-default\",\
                 priority_level=\"global-default\"}";
    wait_for_sample(&server, seats, 2.0).await;
    drop(listing);
    wait_for_sample(&server, seats, 0.0).await;
}

/// Creates `count` config maps named `big-<i>` with `size` bytes of data each.
async fn fill(raw: &RawClient, count: usize, size: usize) {
    let data = "x".repeat(size);
    for start in (0..count).step_by(64) {
        let creates = (start..count.min(start + 64)).map(|i| {
            let body = json!({"metadata": {"name": format!("big-{i}")}, "data": {"d": data}});
            async move { raw.send_json(http::Method::POST, CM, &body).await.status }
        });
        let statuses = futures_util::future::join_all(creates).await;
        assert!(statuses.iter().all(|s| *s == 201), "{statuses:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_lists_are_served_whole_in_every_representation() {
    // 600 objects: produced and rendered on the bulk lane.
    let server = TestServer::start().await;
    let raw = admin(&server);
    fill(&raw, 600, 16).await;
    // The CA map is published a second after the namespace is seen: the creates may be
    // faster.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while raw.get(&format!("{CM}/kube-root-ca.crt")).await.status != 200 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no kube-root-ca.crt"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let list = raw.get(CM).await.json();
    let names: std::collections::BTreeSet<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    // Ours, and the CA map the server publishes.
    assert_eq!(names.len(), 601);
    assert!(names.contains("kube-root-ca.crt"));
    assert!(names.contains("big-0") && names.contains("big-599"));
    let table = raw
        .request(
            http::Method::GET,
            CM,
            &[("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            Vec::new(),
        )
        .await;
    assert_eq!(table.status, 200);
    assert_eq!(table.json()["rows"].as_array().unwrap().len(), 601);
    let protobuf = raw
        .request(
            http::Method::GET,
            CM,
            &[("accept", "application/vnd.kubernetes.protobuf")],
            Vec::new(),
        )
        .await;
    assert_eq!(protobuf.status, 200);
    assert_eq!(
        protobuf.headers["content-type"],
        "application/vnd.kubernetes.protobuf"
    );
    assert!(protobuf.body.starts_with(b"k8s\0"));
    // kubectl reads the Table: one line per object.
    let out = crate::ok(kubectl(
        &server.kubeconfig_path(),
        &["get", "configmaps", "-o", "name"],
    ));
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("configmap/big-"))
            .count(),
        600
    );
    // A list bounded by a limit is still served in chunks.
    let page = raw.get(&format!("{CM}?limit=100")).await.json();
    assert_eq!(page["items"].as_array().unwrap().len(), 100);
    assert!(
        page["metadata"]["continue"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    );
}
