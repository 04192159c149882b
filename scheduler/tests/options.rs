//! The option surface of `capstan-scheduler` against the specification's tables
//! (process-options.md 1.4 and 1.5, with upstream's names), one-line errors for malformed
//! values, and the serving, profiling and metric options seen from outside.

use std::process::Command;

use capstan_e2e::spec_options::{LOGGING_AND_METRICS, missing_from_help};
use std::time::Duration;

use capstan_testing::TestServer;

mod common;

use common::{Running, free_port, plain_get};

/// Spec 1.4, "cluster-api" written `kube-api`, vendor words as upstream.
const SERVING_AND_GENERAL: &[&str] = &[
    "config",
    "write-config-to",
    "secure-port",
    "bind-address",
    "address",
    "port",
    "cert-dir",
    "tls-cert-file",
    "tls-private-key-file",
    "tls-sni-cert-key",
    "tls-cipher-suites",
    "tls-min-version",
    "http2-max-streams-per-connection",
    "permit-address-sharing",
    "permit-port-sharing",
    "scheduler-name",
    "algorithm-provider",
    "policy-config-file",
    "policy-configmap",
    "policy-configmap-namespace",
    "use-legacy-policy-config",
    "hard-pod-affinity-symmetric-weight",
    "master",
    "kubeconfig",
    "kube-api-burst",
    "kube-api-qps",
    "kube-api-content-type",
    "contention-profiling",
    "profiling",
    "leader-elect",
    "leader-elect-lease-duration",
    "leader-elect-renew-deadline",
    "leader-elect-retry-period",
    "leader-elect-resource-lock",
    "leader-elect-resource-name",
    "leader-elect-resource-namespace",
    "lock-object-name",
    "lock-object-namespace",
    "feature-gates",
    "azure-container-registry-config",
    "version",
    "help",
];

fn scheduler() -> Command {
    Command::new(env!("CARGO_BIN_EXE_capstan-scheduler"))
}

#[test]
fn help_lists_every_option_of_the_specification() {
    let out = scheduler().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let mut missing = missing_from_help(&help, SERVING_AND_GENERAL);
    missing.extend(missing_from_help(&help, LOGGING_AND_METRICS));
    assert!(missing.is_empty(), "missing from --help: {missing:?}");
    let version = scheduler().arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("Kubernetes v1."));
}

#[test]
fn each_malformed_value_fails_the_start_with_one_line_naming_the_option() {
    for (arg, option) in [
        ("--secure-port=x", "--secure-port"),
        (
            "--http2-max-streams-per-connection=-1",
            "--http2-max-streams-per-connection",
        ),
        ("--tls-sni-cert-key=only-a-cert", "--tls-sni-cert-key"),
        ("--feature-gates=A=perhaps", "--feature-gates"),
        ("--profiling=sometimes", "--profiling"),
        ("--allow-metric-labels=x", "--allow-metric-labels"),
        (
            "--show-hidden-metrics-for-version=one",
            "--show-hidden-metrics-for-version",
        ),
        ("--log-flush-frequency=often", "--log-flush-frequency"),
        ("--version=perhaps", "--version"),
    ] {
        let out = scheduler().arg(arg).output().unwrap();
        assert!(!out.status.success(), "{arg} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{arg}: {err}");
        assert!(err.contains(option), "{arg}: {err}");
    }
    // TLS versions rustls cannot offer stop the start saying so.
    let server = std::thread::spawn(|| {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let server = rt.block_on(TestServer::start());
        let out = scheduler()
            .arg("--kubeconfig")
            .arg(server.kubeconfig_path())
            .args([
                "--tls-min-version=VersionTLS10",
                "--port=0",
                "--leader-elect=false",
            ])
            .args(["--bind-address=127.0.0.1", "--secure-port"])
            .arg(free_port().to_string())
            .output()
            .unwrap();
        drop(server);
        out
    })
    .join()
    .unwrap();
    assert!(!server.status.success());
    let err = String::from_utf8_lossy(&server.stderr);
    assert!(err.contains("VersionTLS10"), "{err}");
}

/// Waits until `port` answers `path` over plain HTTP with a 200.
async fn wait_for(port: u16, path: &str) -> String {
    for _ in 0..100 {
        if let Some((status, body)) = plain_get(port, path)
            && status.contains("200")
        {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{path} on port {port} never answered 200");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_metric_options_and_port_sharing() {
    let server = TestServer::start().await;
    let (secure, insecure) = (free_port(), free_port());
    let start = |extra: &[&str]| {
        Running(
            scheduler()
                .arg("--kubeconfig")
                .arg(server.kubeconfig_path())
                .args(["--bind-address=127.0.0.1", "--address=127.0.0.1"])
                .arg(format!("--secure-port={secure}"))
                .arg("--leader-elect=false")
                .arg("--permit-port-sharing")
                .args(extra)
                .spawn()
                .unwrap(),
        )
    };
    let _first = start(&[
        &format!("--port={insecure}"),
        "--disabled-metrics=scheduler_pending_pods",
        "--allow-metric-labels=scheduler_schedule_attempts_total,result='scheduled'",
        "--tls-min-version=VersionTLS13",
        "--http2-max-streams-per-connection=50",
    ]);
    wait_for(insecure, "/readyz").await;
    // No nodes: the pod's attempt is "unschedulable", a value outside the allow-list.
    let client = capstan_client::Client::new(
        capstan_client::Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap(),
    )
    .unwrap();
    let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    }))
    .unwrap();
    client.create(Some("default"), &pod).await.unwrap();
    let mut metrics = String::new();
    for _ in 0..100 {
        metrics = wait_for(insecure, "/metrics").await;
        if metrics.contains("scheduler_schedule_attempts_total{") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        metrics.contains(
            "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unexpected\"} 1"
        ),
        "{metrics}"
    );
    assert!(
        !metrics
            .lines()
            .any(|l| l.starts_with("scheduler_schedule_attempts_total{")
                && l.contains("unschedulable")),
        "{metrics}"
    );
    // The allow-list is per metric: the histogram keeps its values.
    assert!(metrics.contains("scheduler_scheduling_attempt_duration_seconds_count{profile=\"default-scheduler\",result=\"unschedulable\"} 1"));
    assert!(!metrics.contains("scheduler_pending_pods"), "{metrics}");
    // Profiles on the insecure port; the secure one has no authorization for them.
    let index = wait_for(insecure, "/debug/pprof/").await;
    assert!(index.contains("profile"));
    let cmdline = wait_for(insecure, "/debug/pprof/cmdline").await;
    assert!(cmdline.contains("--disabled-metrics=scheduler_pending_pods"));

    // A second scheduler binds the same secure port (it would fail without port sharing),
    // with profiling off.
    let quiet_port = free_port();
    let mut second = start(&[&format!("--port={quiet_port}"), "--profiling=false"]);
    wait_for(quiet_port, "/healthz").await;
    assert!(
        second.0.try_wait().unwrap().is_none(),
        "the second instance runs"
    );
    let (status, _) = plain_get(quiet_port, "/debug/pprof/").unwrap();
    assert!(status.contains("404"), "{status}");
}
