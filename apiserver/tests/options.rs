//! The option surface of `capstan-apiserver` against the specification's tables
//! (process-options.md 1.3 and 1.5, with upstream's real names), and the one-line errors of
//! malformed values.

use std::process::Command;

use capstan_e2e::spec_options::{LOGGING_AND_METRICS, missing_from_help};

/// Spec 1.3 (serving, storage and general), "store" and "nodeagent" and the vendor words
/// replaced by upstream's names.
const SERVING_STORAGE_GENERAL: &[&str] = &[
    "bind-address",
    "secure-port",
    "advertise-address",
    "external-hostname",
    "tls-cert-file",
    "tls-private-key-file",
    "tls-sni-cert-key",
    "tls-cipher-suites",
    "tls-min-version",
    "cert-dir",
    "strict-transport-security-directives",
    "cors-allowed-origins",
    "http2-max-streams-per-connection",
    "goaway-chance",
    "permit-address-sharing",
    "permit-port-sharing",
    "shutdown-delay-duration",
    "livez-grace-period",
    "profiling",
    "contention-profiling",
    "storage-backend",
    "storage-media-type",
    "etcd-servers",
    "etcd-servers-overrides",
    "etcd-prefix",
    "etcd-cafile",
    "etcd-certfile",
    "etcd-keyfile",
    "etcd-compaction-interval",
    "etcd-count-metric-poll-period",
    "etcd-db-metric-poll-interval",
    "etcd-healthcheck-timeout",
    "encryption-provider-config",
    "service-cluster-ip-range",
    "service-node-port-range",
    "kubernetes-service-node-port",
    "master-service-namespace",
    "endpoint-reconciler-type",
    "apiserver-count",
    "identity-lease-duration-seconds",
    "identity-lease-renew-interval-seconds",
    "lease-reuse-duration-seconds",
    "enable-garbage-collector",
    "enable-aggregator-routing",
    "egress-selector-config-file",
    "allow-privileged",
    "default-not-ready-toleration-seconds",
    "default-unreachable-toleration-seconds",
    "kubelet-certificate-authority",
    "kubelet-client-certificate",
    "kubelet-client-key",
    "kubelet-preferred-address-types",
    "kubelet-timeout",
    "cloud-provider",
    "cloud-config",
    "cloud-provider-gce-l7lb-src-cidrs",
    "azure-container-registry-config",
    "feature-gates",
    "runtime-config",
    "version",
    "help",
    // Spec 8.1.
    "max-requests-inflight",
    "max-mutating-requests-inflight",
    "enable-priority-and-fairness",
    "request-timeout",
    "min-request-timeout",
    "max-connection-bytes-per-sec",
    "watch-cache",
    "default-watch-cache-size",
    "watch-cache-sizes",
    "event-ttl",
    "delete-collection-workers",
];

/// Spec 5.1, the authenticators built so far.
const AUTHENTICATION: &[&str] = &[
    "anonymous-auth",
    "token-auth-file",
    "client-ca-file",
    "service-account-issuer",
    "service-account-key-file",
    "service-account-signing-key-file",
    "service-account-max-token-expiration",
    "service-account-extend-token-expiration",
    "service-account-lookup",
    "service-account-jwks-uri",
    "api-audiences",
    "enable-bootstrap-token-auth",
    "requestheader-client-ca-file",
    "requestheader-allowed-names",
    "requestheader-username-headers",
    "requestheader-group-headers",
    "requestheader-extra-headers-prefix",
    "proxy-client-cert-file",
    "proxy-client-key-file",
    "authentication-token-webhook-config-file",
    "authentication-token-webhook-version",
    "authentication-token-webhook-cache-ttl",
    "oidc-issuer-url",
    "oidc-client-id",
    "oidc-ca-file",
    "oidc-username-claim",
    "oidc-username-prefix",
    "oidc-groups-claim",
    "oidc-groups-prefix",
    "oidc-required-claim",
    "oidc-signing-algs",
    "authorization-mode",
    "authorization-policy-file",
    "authorization-webhook-config-file",
    "authorization-webhook-version",
    "authorization-webhook-cache-authorized-ttl",
    "authorization-webhook-cache-unauthorized-ttl",
];

fn apiserver(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn help_lists_every_option_of_the_specification() {
    let out = apiserver(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let mut missing = missing_from_help(&help, SERVING_STORAGE_GENERAL);
    missing.extend(missing_from_help(&help, LOGGING_AND_METRICS));
    missing.extend(missing_from_help(&help, AUTHENTICATION));
    assert!(missing.is_empty(), "missing from --help: {missing:?}");
    for heading in [
        "Generic flags:",
        "Etcd flags:",
        "Secure serving flags:",
        "Features flags:",
        "Metrics flags:",
        "Logs flags:",
        "Misc flags:",
        "Authentication flags:",
    ] {
        assert!(help.contains(heading), "{heading}");
    }
    // Options with nothing behind them say so.
    for name in [
        "identity-lease-duration-seconds",
        "cloud-provider",
        "feature-gates",
        "contention-profiling",
    ] {
        let entry = help
            .split(&format!("--{name} "))
            .nth(1)
            .and_then(|rest| rest.split("\n      --").next())
            .unwrap_or_default();
        assert!(entry.contains("No effect"), "--{name}: {entry}");
    }
}

#[test]
fn version_prints_the_kubernetes_version() {
    for args in [&["--version"][..], &["--version=true"]] {
        let out = apiserver(args);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with("Kubernetes v1."), "{text}");
    }
    let raw = apiserver(&["--version=raw"]);
    assert!(String::from_utf8_lossy(&raw.stdout).starts_with("capstan-apiserver "));
    assert!(!apiserver(&["--version=maybe"]).status.success());
}

#[test]
fn each_malformed_value_fails_the_start_with_one_line_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent.yaml");
    let missing = format!("--egress-selector-config-file={}", missing.display());
    for (arg, option) in [
        ("--secure-port=https", "--secure-port"),
        (
            "--shutdown-delay-duration=soon",
            "--shutdown-delay-duration",
        ),
        ("--livez-grace-period=5", "--livez-grace-period"),
        (
            "--service-node-port-range=32767-30000",
            "--service-node-port-range",
        ),
        (
            "--service-node-port-range=lots",
            "--service-node-port-range",
        ),
        (
            "--service-cluster-ip-range=10.0.0.0/8,10.1.0.0/16",
            "--service-cluster-ip-range",
        ),
        (
            "--service-cluster-ip-range=10.0.0.0/33",
            "--service-cluster-ip-range",
        ),
        ("--apiserver-count=0", "--apiserver-count"),
        (
            "--endpoint-reconciler-type=magic",
            "--endpoint-reconciler-type",
        ),
        (
            "--identity-lease-duration-seconds=-1",
            "--identity-lease-duration-seconds",
        ),
        (
            "--kubelet-preferred-address-types=Hostname,Carrier",
            "--kubelet-preferred-address-types",
        ),
        ("--kubelet-timeout=5", "--kubelet-timeout"),
        ("--feature-gates=APIListChunking=maybe", "--feature-gates"),
        ("--feature-gates=APIListChunking", "--feature-gates"),
        // Gone (unknown), locked to its default, another component's, missing a dependency.
        ("--feature-gates=APIListChunking=true", "--feature-gates"),
        ("--feature-gates=SidecarContainers=false", "--feature-gates"),
        ("--feature-gates=wardle:Flunders=true", "--feature-gates"),
        ("--feature-gates=AtomicFIFO=false", "--feature-gates"),
        (
            "--feature-gates=kube:KMSv1=true,WatchList=true",
            "--feature-gates",
        ),
        ("--runtime-config=api/all=sometimes", "--runtime-config"),
        ("--runtime-config=apps/v-1=false", "--runtime-config"),
        ("--runtime-config=api/v1=false", "--runtime-config"),
        (
            "--cloud-provider-gce-l7lb-src-cidrs=1.2.3.4",
            "--cloud-provider-gce-l7lb-src-cidrs",
        ),
        ("--goaway-chance=0.5", "--goaway-chance"),
        ("--profiling=maybe", "--profiling"),
        ("--log-file-max-size=-1", "--log-file-max-size"),
        ("--vmodule=server", "--vmodule"),
        ("--stderrthreshold=9", "--stderrthreshold"),
        (missing.as_str(), "--egress-selector-config-file"),
    ] {
        let out = apiserver(&[arg, "--secure-port=0"]);
        assert!(!out.status.success(), "{arg} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{arg}: {err}");
        assert!(err.contains(option), "{arg}: {err}");
    }
}

#[test]
fn well_formed_values_of_upstream_manifests_parse() {
    // A kubeadm-style command line, with --help so that nothing starts.
    let out = apiserver(&[
        "--service-cluster-ip-range=10.96.0.0/12,fd00:10:96::/112",
        "--service-node-port-range=30000-32767",
        "--allow-privileged=true",
        "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
        "--feature-gates=ImageVolume=true,WatchList=false,SidecarContainers=true",
        "--runtime-config=api/all=true,storage.k8s.io/v1beta1=false",
        "--enable-aggregator-routing",
        "--endpoint-reconciler-type=lease",
        "--profiling=false",
        "--livez-grace-period=30s",
        "--help",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn options_without_effect_say_so_when_given() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
        .args([
            "--bind-address=127.0.0.1",
            "--secure-port=0",
            "--identity-lease-duration-seconds=30",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .arg("--cert-dir")
        .arg(dir.path().join("pki"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut warned = None;
    for line in stderr.lines().map_while(Result::ok) {
        if line.contains("no effect") {
            warned = Some(line);
            break;
        }
        if line.contains("\"serving\"") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let warned = warned.expect("a warning before the server serves");
    assert!(warned.starts_with('W'), "{warned}");
    assert!(
        warned.contains("option=--identity-lease-duration-seconds"),
        "{warned}"
    );
}

#[test]
fn unusable_authentication_options_fail_the_start_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "not a key\n").unwrap();
    let garbage = garbage.display().to_string();
    // A readable certificate (a CA's; any will do for the bundles' parsing).
    let ca = dir.path().join("ca.crt");
    std::fs::write(
        &ca,
        rcgen::generate_simple_self_signed(vec!["ca".into()])
            .unwrap()
            .cert
            .pem(),
    )
    .unwrap();
    let ca = ca.display().to_string();
    let data = format!("--data-dir={}", dir.path().join("data").display());
    let certs = format!("--cert-dir={}", dir.path().join("pki").display());
    let cases: &[(&[&str], &str)] = &[
        (&["--client-ca-file=/absent/ca.crt"], "--client-ca-file"),
        (
            &[&format!("--client-ca-file={garbage}")],
            "--client-ca-file",
        ),
        (
            &["--service-account-key-file=/absent/sa.pub"],
            "--service-account-key-file",
        ),
        (
            &[
                "--service-account-issuer=https://issuer.example",
                &format!("--service-account-signing-key-file={garbage}"),
            ],
            "--service-account-signing-key-file",
        ),
        (
            &["--service-account-issuer=https://issuer.example"],
            "--service-account-signing-key-file",
        ),
        (
            &["--service-account-max-token-expiration=10m"],
            "--service-account-max-token-expiration",
        ),
        (
            &["--service-account-jwks-uri=http://keys.example/jwks"],
            "--service-account-jwks-uri",
        ),
        (
            &["--requestheader-client-ca-file=/absent/front-proxy-ca.crt"],
            "--requestheader-client-ca-file",
        ),
        (
            &[
                &format!("--requestheader-client-ca-file={ca}"),
                "--requestheader-username-headers=X Remote User",
            ],
            "--requestheader-username-headers",
        ),
        (
            &["--authentication-token-webhook-config-file=/absent/webhook.kubeconfig"],
            "--authentication-token-webhook-config-file",
        ),
        (
            &[
                &format!("--authentication-token-webhook-config-file={garbage}"),
                "--authentication-token-webhook-version=v2",
            ],
            "--authentication-token-webhook-version",
        ),
        (
            &["--oidc-issuer-url=http://idp.example"],
            "--oidc-issuer-url",
        ),
        (
            &["--oidc-issuer-url=https://idp.example"],
            "--oidc-client-id",
        ),
        (
            &[
                "--oidc-issuer-url=https://idp.example",
                "--oidc-client-id=capstan",
                "--oidc-signing-algs=HS256",
            ],
            "--oidc-signing-algs",
        ),
        (
            &[
                "--oidc-issuer-url=https://idp.example",
                "--oidc-client-id=capstan",
                "--oidc-ca-file=/absent/ca.crt",
            ],
            "--oidc-ca-file",
        ),
        (&["--authorization-mode=ABAC"], "--authorization-mode"),
        (
            &[
                "--authorization-mode=RBAC",
                "--authorization-policy-file=/absent/abac.jsonl",
            ],
            "--authorization-policy-file",
        ),
        (
            &[
                "--authorization-mode=ABAC",
                &format!("--authorization-policy-file={garbage}"),
            ],
            "--authorization-policy-file",
        ),
        (
            &[
                "--authorization-mode=Webhook",
                "--authorization-webhook-config-file=/absent/authz.kubeconfig",
            ],
            "--authorization-webhook-config-file",
        ),
        (
            &[&format!("--proxy-client-cert-file={ca}")],
            "--proxy-client-key-file",
        ),
        (
            &[
                &format!("--proxy-client-cert-file={ca}"),
                &format!("--proxy-client-key-file={garbage}"),
            ],
            "--proxy-client-key-file",
        ),
    ];
    for (args, option) in cases {
        let mut all = vec!["--secure-port=0", data.as_str(), certs.as_str()];
        all.extend(*args);
        let out = apiserver(&all);
        assert!(!out.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.trim_end().lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!("capstan-apiserver: {option}")),
            "{args:?}: {err}"
        );
    }
}
