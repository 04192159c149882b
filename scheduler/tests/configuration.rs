//! The scheduler's configuration file: `--write-config-to` writes what the options amount
//! to and `--config` reads it back; several profiles schedule the pods that name them; a
//! bad file stops the start with the field named.

use std::process::Command;
use std::time::Duration;

use capstan_client::{Client, Config};
use capstan_testing::TestServer;
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;

fn scheduler() -> Command {
    Command::new(env!("CARGO_BIN_EXE_capstan-scheduler"))
}

mod common;

use common::{Running, free_port, node_of, plain_get};

#[test]
fn write_config_to_writes_what_the_options_amount_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("written.yaml");
    let out = scheduler()
        .args([
            "--kubeconfig=/somewhere/kubeconfig",
            "--scheduler-name=custom",
            "--hard-pod-affinity-symmetric-weight=7",
            "--algorithm-provider=ClusterAutoscalerProvider",
            "--leader-elect=false",
        ])
        .arg("--write-config-to")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let (config, _) = capstan_scheduler::config::Configuration::load(&text).unwrap();
    assert_eq!(config.client_connection.kubeconfig, "/somewhere/kubeconfig");
    assert!(!config.leader_election.leader_elect);
    let profile = &config.profiles[0];
    assert_eq!(profile.scheduler_name, "custom");
    let args = |name: &str| {
        profile
            .plugin_config
            .iter()
            .find(|p| p.name == name)
            .unwrap()
            .args
            .clone()
    };
    assert_eq!(args("InterPodAffinity")["hardPodAffinityWeight"], 7);
    assert_eq!(
        args("NodeResourcesFit")["scoringStrategy"]["type"],
        "MostAllocated"
    );

    // Read back with --config, the deprecated options are ignored (with a warning) and the
    // same configuration comes out.
    let again = dir.path().join("again.yaml");
    let out = scheduler()
        .arg("--config")
        .arg(&path)
        .arg("--scheduler-name=ignored")
        .arg("--write-config-to")
        .arg(&again)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--scheduler-name is ignored because --config is given"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
}

#[test]
fn a_bad_configuration_stops_the_start_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(
        &path,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n  pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeight: 101\n",
    )
    .unwrap();
    let out = scheduler().arg("--config").arg(&path).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]"),
        "{stderr}"
    );
    let out = scheduler()
        .args(["--kubeconfig=x", "--hard-pod-affinity-symmetric-weight=101"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--hard-pod-affinity-symmetric-weight"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_profile_schedules_the_pods_that_name_it() {
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    // Two nodes; "full" already runs a pod that takes most of it.
    for name in ["empty", "full"] {
        let node: Node = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        let created: Node = client.create(None, &node).await.unwrap();
        let mut status = created.clone();
        status.status = Some(
            serde_json::from_value(
                json!({"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}]}),
            )
            .unwrap(),
        );
        client.replace_status(None, name, &status).await.unwrap();
    }
    let pod = |name: &str, scheduler: &str, node: Option<&str>, cpu: &str| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
            "schedulerName": scheduler, "nodeName": node,
            "containers": [{"name": "c", "image": "nginx",
                "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}))
        .unwrap()
    };
    client
        .create(Some("default"), &pod("resident", "none", Some("full"), "3"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    std::fs::write(
        &path,
        format!(
            r#"apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: {}
  qps: 0
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: NodeResourcesFit
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"#,
            server.kubeconfig_path().display()
        ),
    )
    .unwrap();
    let _running = Running(
        scheduler()
            .arg("--config")
            .arg(&path)
            .arg("--secure-port=0")
            .spawn()
            .unwrap(),
    );
    client
        .create(
            Some("default"),
            &pod("spread", "default-scheduler", None, "500m"),
        )
        .await
        .unwrap();
    client
        .create(Some("default"), &pod("packed", "packer", None, "500m"))
        .await
        .unwrap();
    // The default profile spreads (LeastAllocated); the packer packs (MostAllocated).
    assert_eq!(node_of(&client, "spread").await.as_deref(), Some("empty"));
    assert_eq!(node_of(&client, "packed").await.as_deref(), Some("full"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_metrics_are_served_on_both_ports() {
    let server = TestServer::start().await;
    let (secure, insecure) = (free_port(), free_port());
    let _running = Running(
        scheduler()
            .arg("--kubeconfig")
            .arg(server.kubeconfig_path())
            .arg(format!("--secure-port={secure}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--port={insecure}"))
            .arg("--address=127.0.0.1")
            .spawn()
            .unwrap(),
    );
    let mut https = Config::new(format!("https://127.0.0.1:{secure}"));
    https.insecure = true;
    let https = Client::new(https).unwrap();
    let get = |path: &'static str| {
        let https = https.clone();
        async move {
            https
                .send(http::Method::GET, path, None, Default::default())
                .await
        }
    };
    let mut ready = false;
    for _ in 0..100 {
        if let Ok((status, _, body)) = get("/readyz").await
            && status == 200
        {
            assert_eq!(&body[..], b"ok");
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "the scheduler became ready on its secure port");
    let (status, _, body) = get("/healthz").await.unwrap();
    assert_eq!((status.as_u16(), &body[..]), (200, &b"ok"[..]));
    // Without delegated authorization, /metrics is forbidden on the secure port...
    let (status, _, body) = get("/metrics").await.unwrap();
    assert_eq!(status.as_u16(), 403);
    let status_doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status_doc["reason"], "Forbidden");
    // ... and open on the deprecated insecure port, where a scheduled pod shows.
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "n"}})).unwrap();
    let created: Node = client.create(None, &node).await.unwrap();
    let mut status_node = created.clone();
    status_node.status = Some(
        serde_json::from_value(
            json!({"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}]}),
        )
        .unwrap(),
    );
    client
        .replace_status(None, "n", &status_node)
        .await
        .unwrap();
    let pod: Pod = serde_json::from_value(
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
    .unwrap();
    client.create(Some("default"), &pod).await.unwrap();
    assert_eq!(node_of(&client, "p").await.as_deref(), Some("n"));
    let line =
        "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 1";
    let mut found = String::new();
    for _ in 0..50 {
        let (status_line, body) =
            plain_get(insecure, "/metrics").expect("the insecure port answers");
        assert!(status_line.contains("200"), "{status_line}");
        if body.lines().any(|l| l == line) {
            found = body;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        found.contains("leader_election_master_status{name=\"kube-scheduler\"} 1"),
        "{found}"
    );
    let (_, verbose) = plain_get(insecure, "/readyz?verbose").unwrap();
    assert!(verbose.contains("[+]sched-handler-sync ok"), "{verbose}");
}

/// Runs `command` to its end off the test's runtime (the server in this process keeps
/// answering).
async fn output(mut command: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_policy_becomes_plugins() {
    use k8s_openapi::api::core::v1::ConfigMap;
    let server = TestServer::start().await;
    let client =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    let policy = r#"{"kind": "Policy", "apiVersion": "v1",
        "predicates": [{"name": "GeneralPredicates"}],
        "priorities": [{"name": "MostRequestedPriority", "weight": 2}]}"#;
    let map: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "scheduler-policy"},
        "data": {"policy.cfg": policy}}))
    .unwrap();
    client.create(Some("kube-system"), &map).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("written.yaml");
    let kubeconfig = server.kubeconfig_path();
    // From the ConfigMap (read once connected), written out as plugins.
    let mut command = scheduler();
    command
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--policy-configmap=scheduler-policy")
        .arg("--write-config-to")
        .arg(&written);
    let out = output(command).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (config, _) =
        capstan_scheduler::config::Configuration::load(&std::fs::read_to_string(&written).unwrap())
            .unwrap();
    let (built, _) =
        capstan_scheduler::plugins::build_profile(&config, &config.profiles[0]).unwrap();
    assert_eq!(
        built.filter_names(),
        [
            "NodeUnschedulable",
            "TaintToleration",
            "NodeResourcesFit",
            "NodeName",
            "NodePorts",
            "NodeAffinity"
        ]
    );
    assert_eq!(built.score_names(), [("NodeResourcesFit", 2)]);
    // A missing ConfigMap stops the start, naming it.
    let mut command = scheduler();
    command
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--policy-configmap=nope");
    let out = output(command).await;
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--policy-configmap kube-system/nope"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A policy file cannot be combined with a configuration that sets plugins.
    let policy_file = dir.path().join("policy.json");
    std::fs::write(&policy_file, policy).unwrap();
    let config_file = dir.path().join("config.yaml");
    std::fs::write(
        &config_file,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n  plugins:\n    score:\n      disabled:\n      - name: ImageLocality\n",
    )
    .unwrap();
    let out = scheduler()
        .arg("--config")
        .arg(&config_file)
        .arg("--policy-config-file")
        .arg(&policy_file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("cannot be combined with plugin configuration"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn json_logs_are_one_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.yaml");
    let out = scheduler()
        .arg("--write-config-to")
        .arg(&first)
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = scheduler()
        .arg("--logging-format=json")
        .arg("--config")
        .arg(&first)
        .arg("--scheduler-name=ignored")
        .arg("--write-config-to")
        .arg(dir.path().join("again.yaml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["msg"]
            .as_str()
            .is_some_and(|m| m.contains("--scheduler-name is ignored"))),
        "{stderr}"
    );
}
