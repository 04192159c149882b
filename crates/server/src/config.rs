use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Everything the server needs to start, as the binary's options produce it.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on (`--bind-address`).
    pub bind_address: IpAddr,
    /// Port to listen on (`--secure-port`); 0 picks a free port.
    pub secure_port: u16,
    /// Directory of the embedded store (`--data-dir`).
    pub data_dir: PathBuf,
    /// Store in this etcd cluster instead of the embedded store (`--etcd-servers`, TLS files).
    pub etcd: Option<capstan_etcd::EtcdConfig>,
    /// How long the storage health check may take (`--etcd-healthcheck-timeout`).
    pub etcd_healthcheck_timeout: Duration,
    /// Resources kept in other etcd clusters (`--etcd-servers-overrides`): group, resource,
    /// client URLs (TLS files as for `etcd`).
    pub etcd_overrides: Vec<(String, String, Vec<String>)>,
    /// How often stored objects are counted for `apiserver_storage_objects`
    /// (`--etcd-count-metric-poll-period`); zero disables.
    pub etcd_count_metric_poll_period: Duration,
    /// How often the database size is read for `apiserver_storage_size_bytes`
    /// (`--etcd-db-metric-poll-interval`); zero disables.
    pub etcd_db_metric_poll_interval: Duration,
    /// Bind with `SO_REUSEPORT`: several instances on one port (`--permit-port-sharing`).
    pub permit_port_sharing: bool,
    /// Streams an HTTP/2 client may open at once (`--http2-max-streams-per-connection`); 0:
    /// Capstan's default, 1000.
    pub http2_max_streams_per_connection: u32,
    /// The fraction of HTTP/2 requests after which the connection is closed gracefully
    /// (`--goaway-chance`, 0 to 0.02 from the command line).
    pub goaway_chance: f64,
    /// Certificates served by SNI name (`--tls-sni-cert-key`, repeatable).
    pub tls_sni_cert_key: Vec<capstan_serving::sni::SniCertKey>,
    /// TLS versions and suites (`--tls-min-version`, `--tls-cipher-suites`).
    pub tls: capstan_serving::tls::TlsTuning,
    /// The address advertised to clients and cluster members (`--advertise-address`).
    pub advertise_address: Option<IpAddr>,
    /// The components `componentstatuses` reports besides etcd, each with the health URL it is
    /// probed at: upstream's, the scheduler at `https://127.0.0.1:10259/healthz` and the
    /// controller manager at `https://127.0.0.1:10257/healthz`.
    pub component_health_urls: Vec<(String, String)>,
    /// The ranges of Service cluster IPs and node ports (`--service-cluster-ip-range`,
    /// `--service-node-port-range`).
    pub service_network: capstan_registry::services::ServiceNetwork,
    /// Which group versions and resources are served (`--runtime-config`).
    pub runtime_config: capstan_registry::runtime_config::RuntimeConfig,
    /// The namespace of the `kubernetes` Service (`--master-service-namespace`).
    pub master_service_namespace: String,
    /// Non-zero: the `kubernetes` Service is a NodePort one with this port
    /// (`--kubernetes-service-node-port`).
    pub kubernetes_service_node_port: u16,
    /// How the `kubernetes` Service's endpoints are kept (`--endpoint-reconciler-type`,
    /// `--apiserver-count`).
    pub endpoint_reconciler: capstan_control::Reconciler,
    /// The host name put in generated URLs, before the advertised address
    /// (`--external-hostname`).
    pub external_hostname: Option<String>,
    /// Webhooks named by a `service` reference are called at an endpoint's address rather
    /// than the cluster IP (`--enable-aggregator-routing`).
    pub aggregator_routing: bool,
    /// Disabled metrics and label allow-lists (`--disabled-metrics`, `--allow-metric-labels`).
    pub metrics: crate::metrics::MetricsOptions,
    /// Log one line per request (`-v=2` and above).
    pub request_log: bool,
    /// Serve CPU profiles at `/debug/pprof/` (`--profiling`).
    pub profiling: bool,
    /// Accept pods with privileged containers (`--allow-privileged`).
    pub allow_privileged: bool,
    /// The admission plugins and their configuration (`--enable-admission-plugins`,
    /// `--disable-admission-plugins`, `--admission-control-config-file`).
    pub admission: capstan_admission::AdmissionOptions,
    /// Audit (`--audit-policy-file` with the log and webhook backends); none audits nothing.
    pub audit: Option<AuditConfig>,
    /// `--default-not-ready-toleration-seconds` (DefaultTolerationSeconds).
    pub default_not_ready_toleration_seconds: i64,
    /// `--default-unreachable-toleration-seconds` (DefaultTolerationSeconds).
    pub default_unreachable_toleration_seconds: i64,
    /// How long after start `/livez` reports unfinished start-up work as healthy
    /// (`--livez-grace-period`).
    pub livez_grace_period: Duration,
    /// HSTS directives (`--strict-transport-security-directives`); empty: no header.
    pub hsts_directives: Vec<String>,
    /// Origins allowed cross-origin requests, as regular expressions
    /// (`--cors-allowed-origins`); empty: CORS off.
    pub cors_allowed_origins: Vec<String>,
    /// On SIGTERM, how long `/readyz` fails while everything else still serves before the
    /// drain (`--shutdown-delay-duration`).
    pub shutdown_delay: Duration,
    /// Encryption at rest (`--encryption-provider-config`).
    pub encryption: Option<capstan_encryption::EncryptionConfig>,
    /// The form objects are written to storage in (`--storage-media-type`).
    pub storage_media_type: capstan_registry::StorageMediaType,
    /// Prefix of all storage keys (`--etcd-prefix`).
    pub storage_prefix: String,
    /// How often old history is compacted away (`--etcd-compaction-interval`); zero disables.
    pub compaction_interval: Duration,
    /// How long the embedded store may hold a group commit while write requests that have
    /// arrived are still on their way to it (`--storage-commit-delay`; zero: never).
    pub storage_commit_delay: Duration,
    /// Serving certificate (`--tls-cert-file`), with `tls_private_key_file`.
    pub tls_cert_file: Option<PathBuf>,
    /// Serving key (`--tls-private-key-file`).
    pub tls_private_key_file: Option<PathBuf>,
    /// Where a self-signed pair is generated and kept (`--cert-dir`).
    pub cert_dir: PathBuf,
    /// Bearer tokens file (`--token-auth-file`).
    pub token_auth_file: Option<PathBuf>,
    /// Admit requests without credentials as `system:anonymous` (`--anonymous-auth`).
    pub anonymous_auth: bool,
    /// Authorities whose client certificates identify users (`--client-ca-file`).
    pub client_ca_file: Option<PathBuf>,
    /// Service-account tokens (`--service-account-*`, `--api-audiences`).
    pub service_accounts: ServiceAccountOptions,
    /// Accept bootstrap tokens (`--enable-bootstrap-token-auth`).
    pub bootstrap_token_auth: bool,
    /// Authorities of the front proxy's client certificate (`--requestheader-client-ca-file`).
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// What the front proxy's headers are (`--requestheader-*`).
    pub requestheader: capstan_auth::authn::RequestHeaderConfig,
    /// ID tokens of an OpenID Connect issuer (`--oidc-*`).
    pub oidc: Option<capstan_auth_remote::OidcConfig>,
    /// Tokens reviewed by a webhook (`--authentication-token-webhook-*`); its implicit
    /// audiences are filled in by the server.
    pub token_webhook: Option<capstan_auth_remote::TokenWebhookConfig>,
    /// The client certificate for calling out (`--proxy-client-cert-file`).
    pub proxy_client_cert_file: Option<PathBuf>,
    /// Its key (`--proxy-client-key-file`).
    pub proxy_client_key_file: Option<PathBuf>,
    /// How kubelets are reached (`--kubelet-*`).
    pub kubelet: crate::KubeletClientConfig,
    /// Bytes per second each upgraded proxied connection (exec, attach, port-forward,
    /// proxy) carries each way; 0 for no limit (`--max-connection-bytes-per-sec`).
    pub max_connection_bytes_per_sec: u64,
    /// Authorization modes in order (`--authorization-mode`).
    pub authorization_modes: Vec<String>,
    /// ABAC's policies (`--authorization-policy-file`).
    pub authorization_policy_file: Option<PathBuf>,
    /// The authorization webhook (`--authorization-webhook-*`).
    pub authorization_webhook: Option<capstan_auth_remote::AuthorizationWebhookConfig>,
    /// Write an admin kubeconfig here at start (`--write-admin-kubeconfig`).
    pub admin_kubeconfig: Option<PathBuf>,
    /// Generate an admin token (implied by `admin_kubeconfig`).
    pub admin_token: bool,
    /// Use this admin token instead of a random one (tests that restart a server keep theirs).
    pub admin_token_value: Option<capstan_meta::Redacted<String>>,
    /// Largest accepted request body.
    pub max_request_body_bytes: usize,
    /// Serve lists and watches from the watch cache (`--watch-cache`).
    pub watch_cache: bool,
    /// Changes kept per resource for resuming watches whatever their age
    /// (`--default-watch-cache-size`).
    pub default_watch_cache_size: usize,
    /// Changes younger than this are kept too (upstream's 75 s; tests shorten it).
    pub watch_cache_fresh: std::time::Duration,
    /// Per-resource sizes, keyed `resource[.group]` (`--watch-cache-sizes`).
    pub watch_cache_sizes: std::collections::HashMap<String, usize>,
    /// A watch without `timeoutSeconds` ends after a random time between this and twice this
    /// (`--min-request-timeout`).
    pub min_request_timeout: Duration,
    /// Read-only requests served at once; 0: no bound (`--max-requests-inflight`).
    pub max_requests_inflight: usize,
    /// Mutating requests served at once; 0: no bound (`--max-mutating-requests-inflight`).
    pub max_mutating_requests_inflight: usize,
    /// How long a request that is not long-running may take; zero: no bound
    /// (`--request-timeout`).
    pub request_timeout: Duration,
    /// API Priority and Fairness in place of the two in-flight limits
    /// (`--enable-priority-and-fairness`).
    pub enable_priority_and_fairness: bool,
    /// How long a client may take to finish the TLS handshake (32 s: what upstream's Go
    /// server allows, its header timeout).
    pub tls_handshake_timeout: Duration,
    /// How long a client may take to send a request's headers, on a new connection or an
    /// idle HTTP/1.1 one (32 s, upstream's).
    pub request_header_timeout: Duration,
    /// How long a connection with no request in flight stays open, HTTP/2 ones included
    /// (90 s, upstream's).
    pub idle_connection_timeout: Duration,
    /// The most client connections open at once; beyond them the server stops accepting
    /// until one closes. None: the open-file limit (raised to its hard limit at start) less
    /// a reserve.
    pub max_connections: Option<usize>,
    /// How long events are kept after their last activity (`--event-ttl`).
    pub event_ttl: Duration,
    /// Whether the garbage collector runs (`--enable-garbage-collector`).
    pub garbage_collector: bool,
    /// Deletes one deletecollection (and so a namespace's cleanup) runs at once
    /// (`--delete-collection-workers`).
    pub delete_collection_workers: usize,
    /// The control loops started with the server (`capstan_controllers::InProcess` in
    /// `capstan-apiserver`).
    pub control_loops: Arc<dyn capstan_control::ControlLoops>,
}

impl ServerConfig {
    /// The upstream defaults, with the store under `data_dir` and certificates in
    /// `data_dir/pki` unless set otherwise, running `control_loops`.
    pub fn new(
        data_dir: impl Into<PathBuf>,
        control_loops: Arc<dyn capstan_control::ControlLoops>,
    ) -> Self {
        let data_dir = data_dir.into();
        Self {
            control_loops,
            bind_address: IpAddr::from([0, 0, 0, 0]),
            secure_port: 6443,
            cert_dir: data_dir.join("pki"),
            data_dir,
            etcd: None,
            encryption: None,
            etcd_overrides: Vec::new(),
            hsts_directives: Vec::new(),
            request_log: false,
            profiling: true,
            allow_privileged: false,
            admission: Default::default(),
            audit: None,
            default_not_ready_toleration_seconds: 300,
            default_unreachable_toleration_seconds: 300,
            livez_grace_period: Duration::ZERO,
            metrics: Default::default(),
            advertise_address: None,
            component_health_urls: crate::component_status::DEFAULT_COMPONENTS
                .iter()
                .map(|(name, url)| (name.to_string(), url.to_string()))
                .collect(),
            service_network: Default::default(),
            runtime_config: Default::default(),
            master_service_namespace: "default".into(),
            kubernetes_service_node_port: 0,
            endpoint_reconciler: Default::default(),
            external_hostname: None,
            aggregator_routing: false,
            tls: Default::default(),
            tls_sni_cert_key: Vec::new(),
            goaway_chance: 0.0,
            permit_port_sharing: false,
            http2_max_streams_per_connection: 0,
            cors_allowed_origins: Vec::new(),
            shutdown_delay: Duration::ZERO,
            etcd_count_metric_poll_period: Duration::from_secs(60),
            etcd_db_metric_poll_interval: Duration::from_secs(30),
            storage_media_type: capstan_registry::StorageMediaType::default(),
            etcd_healthcheck_timeout: Duration::from_secs(2),
            storage_prefix: "/registry".into(),
            compaction_interval: Duration::from_secs(300),
            storage_commit_delay: Duration::from_millis(1),
            tls_cert_file: None,
            tls_private_key_file: None,
            token_auth_file: None,
            anonymous_auth: true,
            client_ca_file: None,
            service_accounts: ServiceAccountOptions::default(),
            bootstrap_token_auth: false,
            requestheader_client_ca_file: None,
            requestheader: Default::default(),
            oidc: None,
            token_webhook: None,
            proxy_client_cert_file: None,
            proxy_client_key_file: None,
            kubelet: Default::default(),
            max_connection_bytes_per_sec: 0,
            authorization_modes: vec!["AlwaysAllow".into()],
            authorization_policy_file: None,
            authorization_webhook: None,
            admin_kubeconfig: None,
            admin_token: false,
            admin_token_value: None,
            max_request_body_bytes: 3 * 1024 * 1024,
            watch_cache: true,
            default_watch_cache_size: 100,
            watch_cache_fresh: std::time::Duration::from_secs(75),
            watch_cache_sizes: Default::default(),
            min_request_timeout: Duration::from_secs(1800),
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            enable_priority_and_fairness: true,
            request_timeout: Duration::from_secs(60),
            tls_handshake_timeout: Duration::from_secs(32),
            request_header_timeout: Duration::from_secs(32),
            idle_connection_timeout: capstan_serving::IDLE_TIMEOUT,
            max_connections: None,
            event_ttl: Duration::from_secs(3600),
            garbage_collector: true,
            delete_collection_workers: 1,
        }
    }
}

/// The service-account token options, as given.
#[derive(Debug, Clone)]
pub struct ServiceAccountOptions {
    /// `--service-account-issuer` (the first signs). With no issuer and no signing key, the
    /// server signs as `https://kubernetes.default.svc.cluster.local` with a P-256 key it
    /// generates and keeps in `--data-dir` (`sa.key`).
    pub issuers: Vec<String>,
    /// `--service-account-key-file`: verification keys.
    pub key_files: Vec<PathBuf>,
    /// `--service-account-signing-key-file`.
    pub signing_key_file: Option<PathBuf>,
    /// `--service-account-max-token-expiration`.
    pub max_token_expiration: Option<Duration>,
    /// `--service-account-extend-token-expiration`.
    pub extend_token_expiration: bool,
    /// `--service-account-lookup`.
    pub lookup: bool,
    /// `--service-account-jwks-uri`.
    pub jwks_uri: Option<String>,
    /// `--api-audiences`; empty: the issuers.
    pub api_audiences: Vec<String>,
}

impl Default for ServiceAccountOptions {
    fn default() -> Self {
        Self {
            issuers: Vec::new(),
            key_files: Vec::new(),
            signing_key_file: None,
            max_token_expiration: None,
            extend_token_expiration: true,
            lookup: true,
            jwks_uri: None,
            api_audiences: Vec::new(),
        }
    }
}

/// The audit policy and its backends.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// `--audit-policy-file`, parsed.
    pub policy: capstan_audit::Policy,
    /// The log and webhook backends (at least one).
    pub backends: Vec<capstan_audit::BackendOptions>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_keeps_the_admin_token_secret() {
        let mut config = ServerConfig::new(
            "/tmp/capstan-data",
            Arc::new(capstan_controllers::InProcess),
        );
        config.admin_token_value = Some(capstan_meta::Redacted("s3cret-admin".into()));
        let printed = format!("{config:?}");
        assert!(!printed.contains("s3cret-admin"), "{printed}");
        assert!(printed.contains("admin_token_value: Some(<redacted>)"));
    }
}
