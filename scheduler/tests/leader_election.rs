//! Two `capstan-scheduler` replicas: one holds the Lease and schedules; when it dies the other
//! takes the lease over within the lease duration and schedules what comes next.

use std::time::Duration;

use capstan_client::{Client, Config};
use capstan_testing::TestServer;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;

mod common;

use common::Running;

fn replica(server: &TestServer) -> Running {
    replica_with_lock(server, "leases")
}

fn replica_with_lock(server: &TestServer, lock: &str) -> Running {
    Running(
        std::process::Command::new(env!("CARGO_BIN_EXE_capstan-scheduler"))
            .arg("--kubeconfig")
            .arg(server.kubeconfig_path())
            .args([
                "--leader-elect-lease-duration=2s",
                "--leader-elect-renew-deadline=1500ms",
                "--leader-elect-retry-period=200ms",
                "--secure-port=0",
                "--port=0",
            ])
            .arg(format!("--leader-elect-resource-lock={lock}"))
            .spawn()
            .expect("a replica starts"),
    )
}

async fn holder(client: &Client) -> Option<String> {
    let lease: Lease = client
        .get(Some("kube-system"), "kube-scheduler")
        .await
        .ok()?;
    lease.spec?.holder_identity
}

/// When the lease was last renewed.
async fn renewed(client: &Client) -> Option<k8s_openapi::jiff::Timestamp> {
    let lease: Lease = client
        .get(Some("kube-system"), "kube-scheduler")
        .await
        .ok()?;
    Some(lease.spec?.renew_time?.0)
}

/// Waits until the holder has renewed the lease for longer than its duration (2 s) after
/// now: a standby that was going to take a held lease has had its chance.
async fn renewed_past_a_lease_duration(client: &Client) {
    let from = renewed(client).await.expect("a renewed lease");
    let past = from + k8s_openapi::jiff::SignedDuration::from_millis(2500);
    for _ in 0..200 {
        if renewed(client).await.is_some_and(|at| at >= past) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the lease is not renewed");
}

async fn bound(client: &Client, name: &str) -> bool {
    for _ in 0..200 {
        let p: Pod = client.get(Some("default"), name).await.unwrap();
        if p.spec.and_then(|s| s.node_name).is_some() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_replica_takes_over() {
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "n1"}})).unwrap();
    let created: Node = client.create(None, &node).await.unwrap();
    let mut with_status = created.clone();
    with_status.status = Some(
        serde_json::from_value(
            json!({"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}]}),
        )
        .unwrap(),
    );
    client
        .replace_status(None, "n1", &with_status)
        .await
        .unwrap();

    let mut first = Some(replica(&server));
    let mut leader = None;
    for _ in 0..100 {
        leader = holder(&client).await;
        if leader.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let leader = leader.expect("a replica takes the lease");
    let _second = replica(&server);
    client
        .create(Some("default"), &pod("before"))
        .await
        .unwrap();
    assert!(bound(&client, "before").await);
    // The standby waits: the lease keeps its holder.
    renewed_past_a_lease_duration(&client).await;
    assert_eq!(holder(&client).await.as_deref(), Some(leader.as_str()));

    // The leader dies; the standby takes over after the lease duration and schedules.
    drop(first.take());
    client.create(Some("default"), &pod("after")).await.unwrap();
    assert!(
        bound(&client, "after").await,
        "the standby did not take over"
    );
    let lease: Lease = client
        .get(Some("kube-system"), "kube-scheduler")
        .await
        .unwrap();
    let spec = lease.spec.unwrap();
    assert_ne!(spec.holder_identity.as_deref(), Some(leader.as_str()));
    assert_eq!(spec.lease_transitions, Some(1));
}

#[test]
fn bad_timings_fail_the_start() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan-scheduler"))
        .args([
            "--kubeconfig",
            "/nonexistent",
            "--leader-elect-lease-duration=5s",
            "--leader-elect-renew-deadline=10s",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "leaderElection.leaseDuration (--leader-elect-lease-duration): Invalid value: \"5s\": must be greater than renewDeadline (10s)"
        ),
        "{err}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan-scheduler"))
        .args([
            "--kubeconfig",
            "/nonexistent",
            "--leader-elect-resource-lock=nodes",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--leader-elect-resource-lock"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_migration_lock_keeps_a_config_map_and_a_lease_in_step() {
    use k8s_openapi::api::core::v1::ConfigMap;
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    let _one = replica_with_lock(&server, "configmapsleases");
    let mut record = None;
    for _ in 0..100 {
        if let Ok(map) = client
            .get::<ConfigMap>(Some("kube-system"), "kube-scheduler")
            .await
        {
            record = map
                .metadata
                .annotations
                .and_then(|a| a.get(capstan_client::LEADER_ANNOTATION).cloned());
            if record.is_some() {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let record: serde_json::Value =
        serde_json::from_str(&record.expect("the ConfigMap holds the leader record")).unwrap();
    let holder_id = record["holderIdentity"].as_str().unwrap().to_string();
    assert_eq!(record["leaseDurationSeconds"], 2);
    // Go's metav1.Time: whole seconds.
    let renew = record["renewTime"].as_str().unwrap();
    assert!(renew.ends_with('Z') && !renew.contains('.'), "{renew}");
    // The Lease is written right after the ConfigMap.
    let mut held = None;
    for _ in 0..100 {
        held = holder(&client).await;
        if held.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(held.as_deref(), Some(holder_id.as_str()));
    // A leases-only replica sees the Lease held and stays a standby.
    let _two = replica(&server);
    renewed_past_a_lease_duration(&client).await;
    assert_eq!(holder(&client).await.as_deref(), Some(holder_id.as_str()));
}

/// SIGTERM ends the scheduler with success, as upstream's: the leader while it schedules
/// and a standby while it waits for the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_leader_and_standby_with_success() {
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    let mut leader = replica(&server);
    for _ in 0..100 {
        if holder(&client).await.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(holder(&client).await.is_some(), "a replica takes the lease");
    let mut standby = replica(&server);
    // Let the standby reach its wait for the lease.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (role, running) in [("standby", &mut standby), ("leader", &mut leader)] {
        let status = std::process::Command::new("kill")
            .args(["-TERM", &running.0.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = running.0.wait().unwrap();
        assert!(exit.success(), "the {role} ended with {exit:?}");
    }
}
