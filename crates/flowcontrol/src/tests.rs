use std::time::Duration;

use serde_json::json;

use super::*;

fn level(name: &str, shares: i32, queuing: serde_json::Value) -> api::PriorityLevelConfiguration {
    serde_json::from_value(json!({
        "metadata": {"name": name, "uid": format!("uid-{name}")},
        "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": shares, "lendablePercent": 0,
            "limitResponse": queuing,
        }},
    }))
    .unwrap()
}

fn schema(name: &str, level: &str, precedence: i32, user: &str) -> api::FlowSchema {
    serde_json::from_value(json!({
        "metadata": {"name": name, "uid": format!("uid-{name}")},
        "spec": {
            "priorityLevelConfiguration": {"name": level},
            "matchingPrecedence": precedence,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{
                "subjects": [{"kind": "User", "user": {"name": user}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                   "namespaces": ["*"], "clusterScope": true}],
            }],
        },
    }))
    .unwrap()
}

fn get<'a>(user: &'a str, groups: &'a [String]) -> RequestAttributes<'a> {
    RequestAttributes {
        user,
        groups,
        verb: "get",
        resource_request: true,
        resource: "configmaps",
        namespace: "default",
        path: "/api/v1/namespaces/default/configmaps/x",
        ..RequestAttributes::default()
    }
}

/// The metric labels of the `tiny` schema at its level.
fn tiny_labels() -> Labels {
    vec![
        ("flow_schema".to_string(), "tiny".to_string()),
        ("priority_level".to_string(), "tiny".to_string()),
    ]
}

/// A request of `user` (authenticated) admitted at once.
async fn seated(fc: &Arc<FlowControl>, user: &str) -> Ticket {
    let groups = authenticated();
    let pending = fc.admit(&get(user, &groups), 1).expect("classified");
    pending.admitted().await.expect("a free seat")
}

fn authenticated() -> Vec<String> {
    vec!["system:authenticated".to_string()]
}

/// A server of 2 seats: `tiny` (5 shares) gets 1, catch-all (5) the other.
fn tiny(queuing: serde_json::Value, wait: Duration) -> Arc<FlowControl> {
    let fc = FlowControl::new(2, wait, Metrics::default());
    fc.put_level(&level("tiny", 5, queuing));
    fc.put_schema(&schema("tiny", "tiny", 100, "alice"));
    fc.put_schema(&schema("tiny-too", "tiny", 100, "bob"));
    fc
}

fn queue(queues: i32, hand: i32, length: i32) -> serde_json::Value {
    json!({"type": "Queue", "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": length}})
}

#[test]
fn the_suggested_configuration_classifies_as_upstream() {
    let fc = FlowControl::new(600, Duration::from_secs(15), Metrics::default());
    for l in bootstrap::suggested_priority_levels() {
        fc.put_level(&l);
    }
    for s in bootstrap::suggested_flow_schemas() {
        fc.put_schema(&s);
    }
    let groups = authenticated();
    let of = |req: &RequestAttributes| {
        let c = fc.classify(req).expect("classified");
        (c.schema.to_string(), c.level.to_string())
    };
    let masters = vec![
        "system:masters".to_string(),
        "system:authenticated".to_string(),
    ];
    assert_eq!(
        of(&get("admin", &masters)),
        ("exempt".into(), "exempt".into())
    );
    assert_eq!(
        of(&get("alice", &groups)),
        ("global-default".into(), "global-default".into())
    );
    let probe = RequestAttributes {
        user: "system:anonymous",
        groups: &["system:unauthenticated".to_string()],
        verb: "get",
        path: "/readyz",
        ..RequestAttributes::default()
    };
    assert_eq!(of(&probe), ("probes".into(), "exempt".into()));
    let nodes = vec![
        "system:nodes".to_string(),
        "system:authenticated".to_string(),
    ];
    let mut node_status = get("system:node:n1", &nodes);
    node_status.resource = "nodes";
    node_status.subresource = "status";
    node_status.namespace = "";
    assert_eq!(
        of(&node_status),
        ("system-node-high".into(), "node-high".into())
    );
    assert_eq!(
        of(&get("system:node:n1", &nodes)),
        ("system-nodes".into(), "system".into())
    );
    let sa = vec![
        "system:serviceaccounts".to_string(),
        "system:serviceaccounts:kube-system".to_string(),
        "system:authenticated".to_string(),
    ];
    let mut lease = get("system:serviceaccount:kube-system:ctrl", &sa);
    lease.api_group = "coordination.k8s.io";
    lease.resource = "leases";
    assert_eq!(
        of(&lease),
        ("system-leader-election".into(), "leader-election".into())
    );
    assert_eq!(
        of(&get("system:serviceaccount:kube-system:ctrl", &sa)),
        ("workload-leader-election".into(), "leader-election".into())
    );
    let mut list = get("system:serviceaccount:kube-system:ctrl", &sa);
    list.verb = "list";
    assert_eq!(
        of(&list),
        (
            "kube-system-service-accounts".into(),
            "workload-high".into()
        )
    );
    assert_eq!(
        of(&get("system:serviceaccount:apps:web", &sa)),
        ("service-accounts".into(), "workload-low".into())
    );
    // Seats by shares: 600 seats over 245 shares (exempt has none).
    assert!(
        fc.dump_priority_levels()
            .contains("global-default, 0, true")
    );
}

#[test]
fn a_deleted_mandatory_object_is_still_in_effect_and_dangling_schemas_are_skipped() {
    let fc = FlowControl::new(10, Duration::from_secs(1), Metrics::default());
    let groups = authenticated();
    assert_eq!(
        &*fc.classify(&get("alice", &groups)).unwrap().schema,
        "catch-all"
    );
    fc.put_schema(&schema("early", "missing", 50, "alice"));
    assert!(!fc.level_exists("missing"));
    assert_eq!(
        &*fc.classify(&get("alice", &groups)).unwrap().schema,
        "catch-all"
    );
    fc.put_level(&level("missing", 10, queue(8, 2, 10)));
    let c = fc.classify(&get("alice", &groups)).unwrap();
    assert_eq!(
        (&*c.schema, &*c.schema_uid, &*c.level_uid),
        ("early", "uid-early", "uid-missing")
    );
}

#[tokio::test]
async fn requests_beyond_the_seats_wait_then_run_or_time_out() {
    let fc = tiny(queue(4, 2, 2), Duration::from_millis(200));
    let groups = authenticated();
    let first = fc.admit(&get("alice", &groups), 1).unwrap();
    assert_eq!(&*first.classification().schema, "tiny");
    let running = first.admitted().await.expect("a free seat");
    // The second waits until the first ends.
    let second = fc.admit(&get("alice", &groups), 1).unwrap();
    let waiter = tokio::spawn(second.admitted());
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(fc.dump_requests(true).contains("tiny, tiny, "));
    drop(running);
    let running = waiter.await.unwrap().expect("the freed seat");
    // A third times out while the seat is held.
    let third = fc.admit(&get("alice", &groups), 1).unwrap();
    assert_eq!(third.admitted().await.err(), Some(Rejection::TimedOut));
    assert!(
        fc.dump_priority_levels()
            .contains("tiny, 1, false, false, 0, 1, 2, 1, 1, 0")
    );
    drop(running);
    let metrics = fc.metrics();
    let labels = tiny_labels();
    assert_eq!(metrics.dispatched.get_or_create(&labels).get(), 2);
    assert_eq!(metrics.executing.get_or_create(&labels).get(), 0);
}

#[tokio::test]
async fn full_queues_and_rejecting_levels_refuse_at_once() {
    let fc = tiny(queue(1, 1, 1), Duration::from_secs(5));
    let groups = authenticated();
    let _running = seated(&fc, "alice").await;
    let _waiting = fc.admit(&get("alice", &groups), 1).unwrap();
    let full = fc.admit(&get("alice", &groups), 1).unwrap();
    assert_eq!(full.admitted().await.err(), Some(Rejection::QueueFull));

    // The catch-all level rejects rather than queues: 1 seat.
    let carol = fc.admit(&get("carol", &groups), 1).unwrap();
    assert_eq!(&*carol.classification().level, "catch-all");
    let _held = carol.admitted().await.unwrap();
    let dave = fc.admit(&get("dave", &groups), 1).unwrap();
    assert_eq!(
        dave.admitted().await.err(),
        Some(Rejection::ConcurrencyLimit)
    );
}

#[tokio::test]
async fn a_request_that_goes_away_leaves_its_queue_and_its_seat() {
    let fc = tiny(queue(4, 2, 5), Duration::from_secs(5));
    let groups = authenticated();
    let running = seated(&fc, "alice").await;
    let gone = tokio::spawn(fc.admit(&get("alice", &groups), 1).unwrap().admitted());
    tokio::time::sleep(Duration::from_millis(20)).await;
    gone.abort();
    let _ = gone.await;
    let dump = fc.dump_priority_levels();
    assert!(
        dump.contains("tiny, 1, false, false, 0, 1, 1, 0, 0, 1"),
        "{dump}"
    );
    drop(running);
    // The seat is free again: nothing holds it.
    let again = fc.admit(&get("alice", &groups), 1).unwrap();
    tokio::time::timeout(Duration::from_millis(100), again.admitted())
        .await
        .expect("admitted at once")
        .unwrap();
}

#[tokio::test]
async fn a_quiet_flow_is_served_before_a_noisy_flows_backlog() {
    // 64 queues, hands of 1: alice's and bob's flows land in their own queues (when their
    // hashes differ), and fair queuing alternates between them.
    let fc = tiny(queue(64, 1, 100), Duration::from_secs(5));
    let groups = authenticated();
    let running = seated(&fc, "alice").await;
    let mut noisy = Vec::new();
    for _ in 0..20 {
        noisy.push(tokio::spawn(
            fc.admit(&get("alice", &groups), 1).unwrap().admitted(),
        ));
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let quiet = tokio::spawn(fc.admit(&get("bob", &groups), 1).unwrap().admitted());
    tokio::time::sleep(Duration::from_millis(20)).await;
    // The held seat goes to one of the two queues: hand it on a few times.
    drop(running);
    tokio::time::sleep(Duration::from_millis(10)).await;
    let mut served_before_quiet = 0;
    let mut pending = noisy.into_iter();
    let quiet_ticket = loop {
        if quiet.is_finished() {
            break quiet.await.unwrap().unwrap();
        }
        let next = pending
            .next()
            .unwrap_or_else(|| panic!("the quiet request waits: {}", fc.dump_queues()));
        let ticket = next.await.unwrap().unwrap();
        served_before_quiet += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
        drop(ticket);
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert!(
        served_before_quiet <= 2,
        "{served_before_quiet} of alice's went first"
    );
    drop(quiet_ticket);
}

#[tokio::test]
async fn a_request_wider_than_its_level_runs_on_the_seats_the_level_has() {
    // tiny has one seat: a request asking for ten takes that one, and does not wait forever
    // for seats it could only borrow.
    let fc = tiny(queue(4, 2, 5), Duration::from_millis(500));
    let groups = authenticated();
    let wide = fc.admit(&get("alice", &groups), 10).unwrap();
    let ticket = tokio::time::timeout(Duration::from_millis(100), wide.admitted())
        .await
        .expect("admitted at once")
        .unwrap();
    let labels = tiny_labels();
    assert_eq!(fc.metrics().executing_seats.get_or_create(&labels).get(), 1);
    drop(ticket);
}
