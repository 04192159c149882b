//! `capstan-apiserver`: parses options, starts logging, and runs the server.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use capstan_logging::parse_duration;
use capstan_registry::services::Cidr;
use capstan_server::Reconciler;
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};

mod audit_flags;

/// mimalloc rather than the system allocator: a buffer freed on another thread than the one
/// that allocated it (a list chunk made on the bulk lane and dropped by a connection on the
/// interactive lane) goes back without a lock, where glibc's free waits for the other
/// thread's arena, held by a thread the kernel may not run for milliseconds
/// (docs/performance.md, "The overload benchmark").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A Kubernetes-compatible API server on an embedded, crash-safe store.
#[derive(Debug, Parser)]
#[command(name = "capstan-apiserver", about, long_about = None)]
struct Options {
    /// The address advertised to clients (discovery's serverAddressByClientCIDRs); blank:
    /// the bind address, or loopback for a wildcard bind.
    #[arg(long, help_heading = "Generic flags")]
    advertise_address: Option<IpAddr>,

    /// The host name used in generated URLs (discovery's serverAddressByClientCIDRs),
    /// before --advertise-address.
    #[arg(long, help_heading = "Generic flags")]
    external_hostname: Option<String>,

    /// The fraction of HTTP/2 requests after which the server closes the connection
    /// gracefully (GOAWAY), so that clients behind a load balancer spread again; 0 to 0.02
    /// (0.001 is a good start); not for a single server without a load balancer.
    #[arg(long, default_value_t = 0.0, value_parser = parse_goaway_chance, help_heading = "Generic flags")]
    goaway_chance: f64,

    /// HSTS directives for the Strict-Transport-Security header, comma-separated (e.g.
    /// max-age=31536000,includeSubDomains,preload); empty: no header.
    #[arg(long, value_delimiter = ',', help_heading = "Generic flags")]
    strict_transport_security_directives: Vec<String>,

    /// Origins allowed cross-origin requests, comma-separated regular expressions; empty
    /// disables CORS.
    #[arg(long, value_delimiter = ',', value_parser = parse_regex, help_heading = "Generic flags")]
    cors_allowed_origins: Vec<String>,

    /// On SIGTERM, how long /readyz fails while everything else serves normally, before the
    /// server drains in-flight requests and exits (e.g. 30s).
    #[arg(long, default_value = "0s", value_parser = parse_duration, help_heading = "Generic flags")]
    shutdown_delay_duration: Duration,

    /// A watch without timeoutSeconds ends after a random time between this and twice this.
    #[arg(long, default_value_t = 1800, help_heading = "Generic flags")]
    min_request_timeout: u64,

    /// The most non-mutating requests (get, list) served at once; beyond it a request is
    /// refused with 429 and Retry-After. Watches and other long-running requests, and
    /// members of system:masters, are not counted against it. 0: no limit. With API Priority
    /// and Fairness on, this and --max-mutating-requests-inflight together are the seats
    /// its priority levels share.
    #[arg(long, default_value_t = 400, help_heading = "Generic flags")]
    max_requests_inflight: usize,

    /// The same for mutating requests (every verb but get, list and watch).
    #[arg(long, default_value_t = 200, help_heading = "Generic flags")]
    max_mutating_requests_inflight: usize,

    /// Bytes per second each upgraded connection the server proxies (exec, attach,
    /// port-forward, proxy to pods, services and nodes) carries each way, on the backend's
    /// side (0: no limit).
    #[arg(long, default_value_t = 0, help_heading = "Generic flags")]
    max_connection_bytes_per_sec: u64,

    /// API Priority and Fairness: requests classified by FlowSchemas into priority levels,
    /// queued fairly per flow, instead of the two in-flight limits.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
        require_equals = true, default_missing_value = "true", help_heading = "Generic flags")]
    enable_priority_and_fairness: bool,

    /// How long a request that is not long-running may take before it is answered with a
    /// 504 Timeout; a client's shorter `timeout` query parameter wins. 0: no limit.
    #[arg(long, default_value = "1m0s", value_parser = parse_duration, help_heading = "Generic flags")]
    request_timeout: Duration,

    /// The longest time after start during which /livez reports unfinished start-up work
    /// (the poststarthook/* checks) as healthy (e.g. 30s).
    #[arg(long, default_value = "0s", value_parser = parse_duration, help_heading = "Generic flags")]
    livez_grace_period: Duration,

    /// tolerationSeconds of the node.kubernetes.io/not-ready:NoExecute toleration the
    /// DefaultTolerationSeconds admission plugin adds to pods without one.
    #[arg(long, default_value_t = 300, help_heading = "Generic flags")]
    default_not_ready_toleration_seconds: i64,

    /// tolerationSeconds of the node.kubernetes.io/unreachable:NoExecute toleration the
    /// DefaultTolerationSeconds admission plugin adds to pods without one.
    #[arg(long, default_value_t = 300, help_heading = "Generic flags")]
    default_unreachable_toleration_seconds: i64,

    /// CIDRs opened in the GCE firewall for L7 load balancer traffic and health checks. No
    /// effect (see --cloud-provider); the CIDRs are checked.
    #[arg(long, value_delimiter = ',', default_value = "130.211.0.0/22,35.191.0.0/16",
          value_parser = parse_cidr, help_heading = "Generic flags")]
    cloud_provider_gce_l7lb_src_cidrs: Vec<String>,

    /// Feature gates, comma-separated [kube:]Name=true|false: kube v1.36's gates, checked as
    /// upstream checks them (unknown gates, locked ones set away from their default, and
    /// enabled ones whose dependencies are disabled are refused). No effect yet: no Capstan
    /// behaviour depends on a gate.
    #[arg(long, value_delimiter = ',', value_parser = capstan_serving::options::parse_feature_gate, help_heading = "Generic flags")]
    feature_gates: Vec<capstan_serving::feature_gates::GateSetting>,

    /// Prefix of every storage key.
    #[arg(long, default_value = "/registry", help_heading = "Etcd flags")]
    etcd_prefix: String,

    /// etcd servers to store everything in (comma-separated URLs, e.g.
    /// https://10.0.0.1:2379); when set, etcd is used instead of the embedded store.
    #[arg(long, value_delimiter = ',', value_parser = parse_etcd_url, help_heading = "Etcd flags")]
    etcd_servers: Vec<String>,

    /// Resources kept in other etcd clusters: comma-separated group/resource#servers, servers
    /// separated by ';' (e.g. /events#https://10.0.0.5:2379;https://10.0.0.6:2379).
    #[arg(long, value_delimiter = ',', value_parser = parse_etcd_override, help_heading = "Etcd flags")]
    etcd_servers_overrides: Vec<(String, String, Vec<String>)>,

    /// CA bundle that signed the etcd servers' certificates.
    #[arg(long, help_heading = "Etcd flags")]
    etcd_cafile: Option<PathBuf>,

    /// Client certificate for etcd (with --etcd-keyfile).
    #[arg(long, help_heading = "Etcd flags")]
    etcd_certfile: Option<PathBuf>,

    /// Client key for etcd (with --etcd-certfile).
    #[arg(long, help_heading = "Etcd flags")]
    etcd_keyfile: Option<PathBuf>,

    /// How long the storage check of /healthz, /livez and /readyz may take.
    #[arg(long, default_value = "2s", value_parser = parse_duration, help_heading = "Etcd flags")]
    etcd_healthcheck_timeout: Duration,

    /// The form objects are stored in: application/json, application/yaml or
    /// application/vnd.kubernetes.protobuf. Every form is read whatever this says.
    #[arg(long, default_value = "application/vnd.kubernetes.protobuf",
          value_parser = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
          help_heading = "Etcd flags")]
    storage_media_type: String,

    /// How often stored objects are counted per resource (the apiserver_storage_objects
    /// metric); 0 disables.
    #[arg(long, default_value = "1m0s", value_parser = parse_duration, help_heading = "Etcd flags")]
    etcd_count_metric_poll_period: Duration,

    /// How often the storage database size is read (the apiserver_storage_size_bytes
    /// metric); 0 disables.
    #[arg(long, default_value = "30s", value_parser = parse_duration, help_heading = "Etcd flags")]
    etcd_db_metric_poll_interval: Duration,

    /// File with the EncryptionConfiguration (apiserver.config.k8s.io/v1) of the resources to
    /// encrypt at rest: identity, aescbc, aesgcm and secretbox providers (kms is refused).
    #[arg(long, help_heading = "Etcd flags")]
    encryption_provider_config: Option<PathBuf>,

    /// The storage backend; only etcd3 (the embedded store speaks the same model when
    /// --etcd-servers is not set).
    #[arg(long, default_value = "etcd3", value_parser = ["etcd3"], help_heading = "Etcd flags")]
    storage_backend: String,

    /// How often history older than this interval is compacted away (e.g. 5m0s); 0 disables.
    #[arg(long, default_value = "5m0s", value_parser = parse_duration, help_heading = "Etcd flags")]
    etcd_compaction_interval: Duration,

    /// Serve lists and watches from an in-memory cache of each resource; false serves them
    /// from storage.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Etcd flags")]
    watch_cache: bool,

    /// Changes kept per resource for watches that resume from a resourceVersion; 0 turns the
    /// cache off for resources without their own size.
    #[arg(long, default_value_t = 100, help_heading = "Etcd flags")]
    default_watch_cache_size: usize,

    /// Per-resource cache sizes, comma-separated resource[.group]#size (0 turns the cache off
    /// for that resource).
    #[arg(long, value_delimiter = ',', value_parser = parse_cache_size, help_heading = "Etcd flags")]
    watch_cache_sizes: Vec<(String, usize)>,

    /// Deletes a deletecollection call (and a namespace's cleanup) runs in parallel.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Etcd flags")]
    delete_collection_workers: u32,

    /// Run the garbage collector: delete objects whose owners (metadata.ownerReferences) are
    /// gone, and carry out Orphan and Foreground deletions.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true", help_heading = "Etcd flags")]
    enable_garbage_collector: bool,

    /// Address to serve HTTPS on; 0.0.0.0 or :: means all interfaces.
    #[arg(long, default_value = "0.0.0.0", help_heading = "Secure serving flags")]
    bind_address: IpAddr,

    /// Port to serve HTTPS on (0 picks a free port).
    #[arg(long, default_value_t = 6443, help_heading = "Secure serving flags")]
    secure_port: u16,

    /// x509 certificate for HTTPS (CA certificates appended after the server's). Without it
    /// and --tls-private-key-file, a self-signed CA and certificate are generated into
    /// --cert-dir and reused on later starts.
    #[arg(long, help_heading = "Secure serving flags")]
    tls_cert_file: Option<PathBuf>,

    /// Private key matching --tls-cert-file.
    #[arg(long, help_heading = "Secure serving flags")]
    tls_private_key_file: Option<PathBuf>,

    /// Directory of the generated TLS pair; ignored when --tls-cert-file and
    /// --tls-private-key-file are given.
    #[arg(
        long,
        default_value = "/var/run/kubernetes",
        help_heading = "Secure serving flags"
    )]
    cert_dir: PathBuf,

    #[command(flatten)]
    serving: capstan_serving::options::SecureServingTuning,

    /// Serve CPU profiles at /debug/pprof/ (pprof format; /debug/pprof/profile?seconds=N).
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Features flags")]
    profiling: bool,

    /// Lock-contention profiling. No effect: Rust has no runtime lock-contention profile
    /// (Go's block and mutex profiles); /debug/pprof/block and /mutex answer 404 saying so.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Features flags")]
    contention_profiling: bool,

    /// File of bearer tokens, CSV lines: token,user,uid,"group1,group2".
    #[arg(long, help_heading = "Authentication flags")]
    token_auth_file: Option<PathBuf>,

    /// Admit requests without credentials as system:anonymous (group
    /// system:unauthenticated). Requests with invalid credentials are refused regardless. Off,
    /// whatever is asked, while AlwaysAllow is an authorization mode (the default): everyone
    /// would be allowed everything.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Authentication flags")]
    anonymous_auth: bool,

    /// PEM bundle of authorities for client certificates: a certificate one of them signed
    /// authenticates as its subject's common name, with its organizations as groups. Re-read
    /// when the file changes.
    #[arg(long, help_heading = "Authentication flags")]
    client_ca_file: Option<PathBuf>,

    /// Issuer of service-account tokens (repeatable): the first signs new tokens, all are
    /// accepted. Needs --service-account-signing-key-file. With neither, tokens are issued by
    /// https://kubernetes.default.svc.cluster.local with a P-256 key generated once in
    /// --data-dir (sa.key).
    #[arg(long, action = ArgAction::Append, help_heading = "Authentication flags")]
    service_account_issuer: Vec<String>,

    /// PEM file of public or private RSA/ECDSA keys (or certificates) that verify
    /// service-account tokens (repeatable). Without one, the --tls-private-key-file key
    /// verifies; the signing key always does.
    #[arg(long, action = ArgAction::Append, help_heading = "Authentication flags")]
    service_account_key_file: Vec<PathBuf>,

    /// PEM private key (RSA, ECDSA P-256 or P-384) that signs service-account tokens.
    #[arg(long, help_heading = "Authentication flags")]
    service_account_signing_key_file: Option<PathBuf>,

    /// Longest lifetime of a requested token (1h to 2^32 s); 0: no limit.
    #[arg(long, default_value = "0s", value_parser = parse_duration, help_heading = "Authentication flags")]
    service_account_max_token_expiration: Duration,

    /// Give pod-bound tokens asked for 3607 seconds (the kubelet's default) a year, warning
    /// in the audit log (the warnafter claim) past their requested lifetime.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Authentication flags")]
    service_account_extend_token_expiration: bool,

    /// Check that the service account (and secret) of a legacy token still exist.
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Authentication flags")]
    service_account_lookup: bool,

    /// The jwks_uri of /.well-known/openid-configuration (https); default: this server's
    /// /openid/v1/jwks at its external address.
    #[arg(long, help_heading = "Authentication flags")]
    service_account_jwks_uri: Option<String>,

    /// Comma-separated audiences of the API: tokens without one of them are refused, and
    /// TokenRequests name them by default. Default: the service-account issuers.
    #[arg(long, value_delimiter = ',', help_heading = "Authentication flags")]
    api_audiences: Vec<String>,

    /// Accept bootstrap tokens: Secrets bootstrap-token-<id> of type
    /// bootstrap.kubernetes.io/token in kube-system, user system:bootstrap:<id>.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Authentication flags")]
    enable_bootstrap_token_auth: bool,

    /// Kubeconfig-format file naming the webhook that reviews bearer tokens no other
    /// authenticator accepts: its cluster's server is the URL (https) a TokenReview is posted
    /// to, its user the client certificate or token presented.
    #[arg(long, help_heading = "Authentication flags")]
    authentication_token_webhook_config_file: Option<PathBuf>,

    /// Version of the TokenReview sent to and expected from the webhook: v1beta1 or v1.
    #[arg(long, default_value = "v1beta1", help_heading = "Authentication flags")]
    authentication_token_webhook_version: String,

    /// How long the webhook's answers (authenticated or not) are remembered; 0s: not at all.
    #[arg(long, default_value = "2m0s", value_parser = parse_duration, help_heading = "Authentication flags")]
    authentication_token_webhook_cache_ttl: Duration,

    /// Issuer of an OpenID Connect provider (https): its ID tokens authenticate, verified
    /// with the keys its discovery document names (fetched at start and when a token names a
    /// new key).
    #[arg(long, help_heading = "Authentication flags")]
    oidc_issuer_url: Option<String>,

    /// Client id the ID tokens must be for (their audience); required with --oidc-issuer-url.
    #[arg(long, help_heading = "Authentication flags")]
    oidc_client_id: Option<String>,

    /// PEM authorities of the provider's serving certificate; default: the host's roots.
    #[arg(long, help_heading = "Authentication flags")]
    oidc_ca_file: Option<PathBuf>,

    /// Claim holding the user name. Claims other than sub and email may not be unique or
    /// immutable.
    #[arg(long, default_value = "sub", help_heading = "Authentication flags")]
    oidc_username_claim: String,

    /// Prefix of user names; default: the issuer URL and '#' unless the claim is email;
    /// '-': none.
    #[arg(long, help_heading = "Authentication flags")]
    oidc_username_prefix: Option<String>,

    /// Claim holding the groups (a string or a list of strings).
    #[arg(long, help_heading = "Authentication flags")]
    oidc_groups_claim: Option<String>,

    /// Prefix of group names.
    #[arg(long, default_value = "", help_heading = "Authentication flags")]
    oidc_groups_prefix: String,

    /// key=value claims the ID tokens must carry (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = parse_key_value, help_heading = "Authentication flags")]
    oidc_required_claim: Vec<(String, String)>,

    /// Comma-separated signing algorithms accepted: RS256, RS384, RS512, PS256, PS384,
    /// PS512, ES256, ES384.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "RS256",
        help_heading = "Authentication flags"
    )]
    oidc_signing_algs: Vec<String>,

    /// PEM bundle of authorities for the front proxy's client certificate: a request on a
    /// connection whose certificate one of them signed (and, with --requestheader-allowed-names,
    /// whose common name is allowed) is made by the user its --requestheader-username-headers
    /// name. Checked before any other authenticator; re-read when the file changes; published
    /// with the header options in kube-system/extension-apiserver-authentication.
    #[arg(long, help_heading = "Authentication flags")]
    requestheader_client_ca_file: Option<PathBuf>,

    /// Comma-separated common names the front proxy's certificate may have; empty: any that
    /// --requestheader-client-ca-file verifies.
    #[arg(long, value_delimiter = ',', help_heading = "Authentication flags")]
    requestheader_allowed_names: Vec<String>,

    /// Comma-separated headers naming the user, the first present wins (X-Remote-User is
    /// the common one).
    #[arg(long, value_delimiter = ',', help_heading = "Authentication flags")]
    requestheader_username_headers: Vec<String>,

    /// Comma-separated headers naming groups (X-Remote-Group is suggested).
    #[arg(long, value_delimiter = ',', help_heading = "Authentication flags")]
    requestheader_group_headers: Vec<String>,

    /// Comma-separated header prefixes of extra attributes (X-Remote-Extra- is suggested):
    /// the rest of the header name, percent-decoded and lower-cased, is the key.
    #[arg(long, value_delimiter = ',', help_heading = "Authentication flags")]
    requestheader_extra_headers_prefix: Vec<String>,

    /// Client certificate (PEM) this server presents when it proxies to extension API servers
    /// (APIServices naming a Service), signed by an authority of --requestheader-client-ca-file.
    /// Read and checked at start.
    #[arg(long, help_heading = "Authentication flags")]
    proxy_client_cert_file: Option<PathBuf>,

    /// The private key (PEM) of --proxy-client-cert-file.
    #[arg(long, help_heading = "Authentication flags")]
    proxy_client_key_file: Option<PathBuf>,

    /// Admission plugins to enable besides the defaults (NamespaceLifecycle, PodSecurity,
    /// ValidatingAdmissionPolicy, LimitRanger, ServiceAccount, ResourceQuota, Priority,
    /// RuntimeClass, DefaultTolerationSeconds, DefaultStorageClass, DefaultIngressClass,
    /// TaintNodesByCondition, StorageObjectInUseProtection, PersistentVolumeClaimResize,
    /// MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionWebhook,
    /// CertificateApproval,
    /// CertificateSigning, CertificateSubjectRestriction); the order does not matter. Also
    /// known: AlwaysAdmit, AlwaysDeny, AlwaysPullImages, ClusterTrustBundleAttest,
    /// DenyServiceExternalIPs, EventRateLimit, ExtendedResourceToleration, ImagePolicyWebhook,
    /// LimitPodHardAntiAffinityTopology, NamespaceAutoProvision, NamespaceExists,
    /// NodeRestriction, OwnerReferencesPermissionEnforcement, PersistentVolumeLabel (no
    /// cloud providers: volumes on cloud disks are refused), PodNodeSelector,
    /// PodTolerationRestriction, SecurityContextDeny. Not
    /// accepted: PodSecurityPolicy (removed upstream in v1.25). ClusterTrustBundleAttest has
    /// no effect: ClusterTrustBundles (certificates.k8s.io/v1beta1, off by default upstream)
    /// are not served.
    #[arg(long, value_delimiter = ',', help_heading = "Admission flags")]
    enable_admission_plugins: Vec<String>,

    /// Admission plugins to disable although they are defaults; the order does not matter.
    #[arg(long, value_delimiter = ',', help_heading = "Admission flags")]
    disable_admission_plugins: Vec<String>,

    /// An AdmissionConfiguration file (apiserver.config.k8s.io/v1, YAML or JSON) with each
    /// plugin's configuration, inline or by path.
    #[arg(long, help_heading = "Admission flags")]
    admission_control_config_file: Option<PathBuf>,

    /// Ordered, comma-separated authorization modes: AlwaysAllow, AlwaysDeny, ABAC, Webhook,
    /// RBAC, Node. Members of system:masters are always allowed. The default, AlwaysAllow,
    /// lets every authenticated user do anything (and turns anonymous requests away): use
    /// Node,RBAC for a cluster shared with anyone.
    #[arg(
        long,
        default_value = "AlwaysAllow",
        value_delimiter = ',',
        help_heading = "Authorization flags"
    )]
    authorization_mode: Vec<String>,

    /// ABAC policy file: one JSON policy per line (abac.authorization.kubernetes.io/v1beta1
    /// Policy, or the unversioned form). Needs --authorization-mode=ABAC.
    #[arg(long, help_heading = "Authorization flags")]
    authorization_policy_file: Option<PathBuf>,

    /// Kubeconfig-format file naming the webhook that authorizes requests (a
    /// SubjectAccessReview posted to its cluster's server). Needs --authorization-mode=Webhook.
    #[arg(long, help_heading = "Authorization flags")]
    authorization_webhook_config_file: Option<PathBuf>,

    /// Version of the SubjectAccessReview sent to and expected from the webhook: v1beta1 or v1.
    #[arg(long, default_value = "v1beta1", help_heading = "Authorization flags")]
    authorization_webhook_version: String,

    /// How long the webhook's 'authorized' answers are remembered.
    #[arg(long, default_value = "5m0s", value_parser = parse_duration, help_heading = "Authorization flags")]
    authorization_webhook_cache_authorized_ttl: Duration,

    /// How long the webhook's 'unauthorized' answers are remembered.
    #[arg(long, default_value = "30s", value_parser = parse_duration, help_heading = "Authorization flags")]
    authorization_webhook_cache_unauthorized_ttl: Duration,

    /// The cloud provider; empty for none. No effect: Capstan has no cloud providers.
    #[arg(long, default_value = "", help_heading = "Cloud provider flags")]
    cloud_provider: String,

    /// The cloud provider's configuration file; empty for none. No effect (see
    /// --cloud-provider).
    #[arg(long, default_value = "", help_heading = "Cloud provider flags")]
    cloud_config: String,

    /// APIs to serve or not, comma-separated key=true|false: api/all, api/ga, api/beta,
    /// api/alpha, group/version (v1 or api/v1 for the core group, which cannot be turned
    /// off) or group/version/resource; a bare key means true; narrower keys win.
    #[arg(long, value_delimiter = ',', value_parser = parse_runtime_config, help_heading = "Api enablement flags")]
    runtime_config: Vec<(String, bool)>,

    /// The egress selector configuration file (it must exist). No effect yet: connections to
    /// kubelets, pods and webhooks are made directly, never through an egress proxy.
    #[arg(long, value_parser = parse_existing_file, help_heading = "Egress selector flags")]
    egress_selector_config_file: Option<PathBuf>,

    #[command(flatten)]
    metrics: capstan_serving::options::MetricsFlags,

    #[command(flatten)]
    audit: audit_flags::AuditFlags,

    #[command(flatten)]
    log: capstan_logging::LogOptions,

    /// How long events are kept after their last activity.
    #[arg(long, default_value = "1h0m0s", value_parser = parse_duration, help_heading = "Misc flags")]
    event_ttl: Duration,

    /// Accept pods with privileged containers (securityContext.privileged: true); refused
    /// with a Forbidden field error otherwise.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Misc flags")]
    allow_privileged: bool,

    /// CIDRs Service cluster IPs are allocated from, at most two (one IPv4, one IPv6: dual
    /// stack; the first is the default family). Unset: 10.0.0.0/24.
    #[arg(long, value_parser = parse_service_cidrs, help_heading = "Misc flags")]
    service_cluster_ip_range: Option<ServiceCidrs>,

    /// Ports reserved for NodePort Services, N1-N2 inclusive.
    #[arg(long, default_value = "30000-32767", value_parser = parse_port_range, help_heading = "Misc flags")]
    service_node_port_range: (u16, u16),

    /// Non-zero: the kubernetes Service is of type NodePort with this port (in
    /// --service-node-port-range); 0: ClusterIP.
    #[arg(long, default_value_t = 0, help_heading = "Misc flags")]
    kubernetes_service_node_port: u16,

    /// Deprecated: the namespace of the kubernetes Service (created when missing).
    #[arg(long, default_value = "default", help_heading = "Misc flags")]
    master_service_namespace: String,

    /// How the kubernetes Service's endpoints are kept: lease (each server's address while
    /// it renews its lease), master-count (up to --apiserver-count addresses) or none.
    #[arg(long, default_value = "lease", value_parser = ["master-count", "lease", "none"], help_heading = "Misc flags")]
    endpoint_reconciler_type: String,

    /// The number of API servers (positive), for the master-count reconciler.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Misc flags")]
    apiserver_count: u32,

    /// Seconds the server's identity Lease lasts (positive). No effect yet: Capstan does not
    /// publish identity Leases.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Misc flags")]
    identity_lease_duration_seconds: u32,

    /// Seconds between renewals of the identity Lease (positive). No effect yet.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Misc flags")]
    identity_lease_renew_interval_seconds: u32,

    /// Seconds an etcd lease is reused for TTL keys (positive). No effect: Capstan attaches
    /// no etcd leases (its event controller expires events).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Misc flags")]
    lease_reuse_duration_seconds: u32,

    /// Send requests for extension API servers (APIServices) and webhooks named by a Service
    /// reference (admission, CRD conversion) to an endpoint's address instead of the Service's
    /// cluster IP.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Misc flags")]
    enable_aggregator_routing: bool,

    /// CA bundle for kubelets' serving certificates (logs, exec, attach, port-forward, the
    /// node proxy). Without it kubelets' certificates are not verified, as upstream.
    #[arg(long, value_parser = parse_existing_file, help_heading = "Misc flags")]
    kubelet_certificate_authority: Option<PathBuf>,

    /// Client certificate presented to kubelets (with --kubelet-client-key).
    #[arg(long, value_parser = parse_existing_file, help_heading = "Misc flags")]
    kubelet_client_certificate: Option<PathBuf>,

    /// Key of --kubelet-client-certificate.
    #[arg(long, value_parser = parse_existing_file, help_heading = "Misc flags")]
    kubelet_client_key: Option<PathBuf>,

    /// Node address types tried for kubelet connections, in order (Hostname, InternalDNS,
    /// InternalIP, ExternalDNS, ExternalIP); the port is the Node's
    /// status.daemonEndpoints.kubeletEndpoint.Port (10250 when unset).
    #[arg(long, value_delimiter = ',', default_value = "Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP",
          value_parser = ["Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"],
          help_heading = "Misc flags")]
    kubelet_preferred_address_types: Vec<String>,

    /// How long connecting to a kubelet (TCP and TLS) and waiting for its response headers
    /// may take; a stream, once answered, is not cut.
    #[arg(long, default_value = "5s", value_parser = parse_duration, help_heading = "Misc flags")]
    kubelet_timeout: Duration,

    /// Directory of the embedded store (used whenever no etcd servers are configured).
    #[arg(
        long,
        default_value = "/var/lib/capstan",
        help_heading = "Capstan flags"
    )]
    data_dir: PathBuf,

    /// How long the embedded store may hold a group commit for write requests that have
    /// arrived and not yet reached it, so that they share its sync (0s: never). A write
    /// while no other is on its way is never held.
    #[arg(long, default_value = "1ms", value_parser = parse_duration, help_heading = "Capstan flags")]
    storage_commit_delay: Duration,

    /// At start, generate an admin token (group system:masters) and write a kubeconfig
    /// using it (server URL, serving CA, token) to this path.
    #[arg(long, help_heading = "Capstan flags")]
    write_admin_kubeconfig: Option<PathBuf>,

    /// The Azure container registry configuration file. No effect (see --cloud-provider).
    #[arg(long, help_heading = "Global flags")]
    azure_container_registry_config: Option<PathBuf>,

    /// Print the version and exit (--version=raw: the whole version document).
    #[arg(long, num_args = 0..=1, default_missing_value = "true",
          value_parser = ["true", "false", "raw"], help_heading = "Global flags")]
    version: Option<String>,
}

/// One `--runtime-config` entry: `key=bool`, a bare key meaning true (the keys are checked
/// by `RuntimeConfig::parse`).
fn parse_runtime_config(value: &str) -> Result<(String, bool), String> {
    let (key, enabled) = value.split_once('=').unwrap_or((value, "true"));
    let key = key.trim();
    let enabled = capstan_serving::options::parse_go_bool(enabled.trim())
        .ok_or_else(|| format!("invalid value {enabled:?} for {key}: not a boolean"))?;
    Ok((key.to_string(), enabled))
}

fn parse_cidr(value: &str) -> Result<String, String> {
    let value = value.trim();
    Cidr::parse_network(value)
        .map(|_| value.to_string())
        .map_err(|_| format!("{value:?} is not a CIDR (address/prefix, e.g. 10.96.0.0/12)"))
}

/// The ranges of `--service-cluster-ip-range` (one value to clap, not a list).
#[derive(Debug, Clone)]
struct ServiceCidrs(Vec<Cidr>);

fn parse_service_cidrs(value: &str) -> Result<ServiceCidrs, String> {
    let cidrs = value
        .split(',')
        .map(|c| {
            Cidr::parse_network(c.trim())
                .map_err(|_| format!("{c:?} is not a CIDR (address/prefix, e.g. 10.96.0.0/12)"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    match cidrs.as_slice() {
        [_] => Ok(ServiceCidrs(cidrs)),
        [a, b] if a.family() != b.family() => Ok(ServiceCidrs(cidrs)),
        [_, _] => Err("two ranges must be one IPv4 and one IPv6 (dual-stack)".into()),
        _ => Err(format!(
            "at most two ranges are allowed, got {}",
            cidrs.len()
        )),
    }
}

/// Go's net.ParsePortRange forms: N1-N2, N1+offset, or one port.
fn parse_port_range(value: &str) -> Result<(u16, u16), String> {
    let bad = || format!("{value:?} is not a port range (N1-N2)");
    let port = |p: &str| p.trim().parse::<u16>().map_err(|_| bad());
    let (low, high) = if let Some((a, b)) = value.split_once('-') {
        (port(a)?, port(b)?)
    } else if let Some((a, offset)) = value.split_once('+') {
        let low = port(a)?;
        (low, low.checked_add(port(offset)?).ok_or_else(bad)?)
    } else {
        let p = port(value)?;
        (p, p)
    };
    if low > high {
        return Err(format!("{value:?}: the range ends before it starts"));
    }
    Ok((low, high))
}

fn parse_existing_file(value: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    std::fs::metadata(&path)
        .map_err(|e| format!("{value}: {e}"))
        .and_then(|m| {
            if m.is_file() {
                Ok(path)
            } else {
                Err(format!("{value} is not a file"))
            }
        })
}

fn parse_etcd_url(value: &str) -> Result<String, String> {
    let value = value.trim();
    match value.split_once("://") {
        Some(("http" | "https", rest)) if !rest.is_empty() => Ok(value.to_string()),
        _ => Err(format!(
            "{value:?} is not an etcd URL (http://host:port or https://host:port)"
        )),
    }
}

fn parse_etcd_override(value: &str) -> Result<(String, String, Vec<String>), String> {
    let (target, servers) = value
        .split_once('#')
        .ok_or_else(|| format!("{value:?} is not group/resource#servers"))?;
    let (group, resource) = target
        .split_once('/')
        .filter(|(_, r)| !r.is_empty())
        .ok_or_else(|| format!("{target:?} is not group/resource (/events for the core group)"))?;
    let servers = servers
        .split(';')
        .map(parse_etcd_url)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((group.to_string(), resource.to_string(), servers))
}

fn parse_goaway_chance(value: &str) -> Result<f64, String> {
    let chance: f64 = value
        .parse()
        .map_err(|_| format!("{value:?} is not a number"))?;
    if (0.0..=0.02).contains(&chance) {
        Ok(chance)
    } else {
        Err(format!("{chance} is outside 0 to 0.02"))
    }
}

fn parse_regex(value: &str) -> Result<String, String> {
    regex::Regex::new(value)
        .map(|_| value.to_string())
        .map_err(|e| format!("{value:?} is not a regular expression: {e}"))
}

/// `key=value`.
fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("{s:?} is not key=value")),
    }
}

fn parse_cache_size(value: &str) -> Result<(String, usize), String> {
    let (resource, size) = value.split_once('#').ok_or_else(|| {
        format!("invalid watch cache size {value:?}: expected resource[.group]#size")
    })?;
    if resource.is_empty() {
        return Err(format!(
            "invalid watch cache size {value:?}: the resource is empty"
        ));
    }
    let size = size
        .parse()
        .map_err(|_| format!("invalid watch cache size {value:?}: {size:?} is not a size"))?;
    Ok((resource.to_ascii_lowercase(), size))
}

/// Options accepted and checked that change nothing yet (their help says so); naming one
/// logs a warning at start.
const NO_EFFECT: &[&str] = &[
    "contention_profiling",
    "identity_lease_duration_seconds",
    "identity_lease_renew_interval_seconds",
    "lease_reuse_duration_seconds",
    "egress_selector_config_file",
    "cloud_provider",
    "cloud_config",
    "cloud_provider_gce_l7lb_src_cidrs",
    "azure_container_registry_config",
    "feature_gates",
    "show_hidden_metrics_for_version",
    "permit_address_sharing",
];

/// Parses the command line; a bad value ends the process with clap's first line (the
/// option and the reason), help and version requests print in full.
fn parse_options() -> (Options, clap::ArgMatches) {
    let parsed = Options::command()
        .try_get_matches()
        .and_then(|m| Options::from_arg_matches(&m).map(|o| (o, m)));
    match parsed {
        Ok(parsed) => parsed,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: bad options"));
            std::process::exit(1);
        }
    }
}

fn main() -> ExitCode {
    let (options, matches) = parse_options();
    if capstan_serving::options::print_version("capstan-apiserver", options.version.as_deref()) {
        return ExitCode::SUCCESS;
    }
    // On the other core while the rest of the options are read and the runtime starts.
    capstan_server::prepare();
    if let Err(err) = capstan_serving::feature_gates::check_settings(&options.feature_gates) {
        eprintln!("capstan-apiserver: --feature-gates: {err}");
        return ExitCode::FAILURE;
    }
    let _log = match capstan_logging::init("capstan-apiserver", &options.log) {
        Ok(guard) => guard,
        Err(err) => {
            eprintln!("capstan-apiserver: {err}");
            return ExitCode::FAILURE;
        }
    };
    capstan_serving::options::warn_no_effect(&matches, NO_EFFECT);
    capstan_serving::feature_gates::warn_settings(&options.feature_gates);
    let mut config = capstan_server::ServerConfig::new(
        &options.data_dir,
        std::sync::Arc::new(capstan_controllers::InProcess),
    );
    config.bind_address = options.bind_address;
    config.secure_port = options.secure_port;
    config.cert_dir = options.cert_dir;
    config.tls_cert_file = options.tls_cert_file;
    config.tls_private_key_file = options.tls_private_key_file;
    config.storage_prefix = options.etcd_prefix;
    config.compaction_interval = options.etcd_compaction_interval;
    config.storage_commit_delay = options.storage_commit_delay;
    config.etcd_healthcheck_timeout = options.etcd_healthcheck_timeout;
    if let Some(path) = &options.encryption_provider_config {
        match capstan_encryption::EncryptionConfig::load(path) {
            Ok(encryption) => config.encryption = Some(encryption),
            Err(err) => {
                eprintln!("capstan-apiserver: --encryption-provider-config: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    config.storage_media_type =
        capstan_registry::StorageMediaType::parse(&options.storage_media_type)
            .expect("clap accepts only the known media types");
    if !options.etcd_servers.is_empty() {
        let mut etcd = capstan_etcd::EtcdConfig::new(options.etcd_servers);
        etcd.ca_file = options.etcd_cafile;
        etcd.cert_file = options.etcd_certfile;
        etcd.key_file = options.etcd_keyfile;
        config.etcd = Some(etcd);
    }
    config.etcd_overrides = options.etcd_servers_overrides;
    config.hsts_directives = options.strict_transport_security_directives;
    config.request_log = options.log.verbosity_for("access_log") >= 2;
    config.profiling = options.profiling;
    config.allow_privileged = options.allow_privileged;
    config.livez_grace_period = options.livez_grace_period;
    config.metrics = capstan_server::MetricsOptions {
        disabled: options.metrics.disabled_metrics.clone(),
        allowed_labels: options.metrics.allowed_labels(),
    };
    config.advertise_address = options.advertise_address;
    if let Some(ServiceCidrs(cidrs)) = options.service_cluster_ip_range.clone() {
        config.service_network.cidrs = cidrs;
    }
    let (low, high) = options.service_node_port_range;
    config.service_network.node_ports = low..=high;
    config.runtime_config =
        match capstan_registry::runtime_config::RuntimeConfig::parse(&options.runtime_config) {
            Ok(parsed) => parsed,
            Err(err) => {
                eprintln!("capstan-apiserver: {err}");
                return ExitCode::FAILURE;
            }
        };
    config.master_service_namespace = options.master_service_namespace.clone();
    config.kubernetes_service_node_port = options.kubernetes_service_node_port;
    config.endpoint_reconciler = match options.endpoint_reconciler_type.as_str() {
        "master-count" => Reconciler::MasterCount(options.apiserver_count),
        "none" => Reconciler::None,
        _ => Reconciler::Lease,
    };
    config.external_hostname = options.external_hostname.filter(|h| !h.is_empty());
    config.aggregator_routing = options.enable_aggregator_routing;
    config.tls_sni_cert_key = options.serving.tls_sni_cert_key.clone();
    config.tls = match options.serving.tls() {
        Ok(tls) => tls,
        Err(err) => {
            eprintln!("capstan-apiserver: {err}");
            return ExitCode::FAILURE;
        }
    };
    config.goaway_chance = options.goaway_chance;
    config.permit_port_sharing = options.serving.permit_port_sharing;
    config.http2_max_streams_per_connection = options.serving.http2_max_streams_per_connection;
    config.cors_allowed_origins = options.cors_allowed_origins;
    config.shutdown_delay = options.shutdown_delay_duration;
    config.etcd_count_metric_poll_period = options.etcd_count_metric_poll_period;
    config.etcd_db_metric_poll_interval = options.etcd_db_metric_poll_interval;
    config.token_auth_file = options.token_auth_file;
    config.anonymous_auth = options.anonymous_auth;
    config.client_ca_file = options.client_ca_file;
    config.bootstrap_token_auth = options.enable_bootstrap_token_auth;
    config.requestheader_client_ca_file = options.requestheader_client_ca_file;
    config.requestheader = capstan_server::RequestHeaderConfig {
        allowed_names: options.requestheader_allowed_names,
        username_headers: options.requestheader_username_headers,
        group_headers: options.requestheader_group_headers,
        extra_headers_prefix: options.requestheader_extra_headers_prefix,
    };
    config.token_webhook = options
        .authentication_token_webhook_config_file
        .map(|file| capstan_server::TokenWebhookConfig {
            config_file: file,
            version: options.authentication_token_webhook_version,
            cache_ttl: options.authentication_token_webhook_cache_ttl,
            implicit_audiences: Vec::new(),
        });
    config.oidc = options
        .oidc_issuer_url
        .map(|issuer_url| capstan_server::OidcConfig {
            issuer_url,
            client_id: options.oidc_client_id.unwrap_or_default(),
            ca_file: options.oidc_ca_file,
            username_claim: options.oidc_username_claim,
            username_prefix: options.oidc_username_prefix,
            groups_claim: options.oidc_groups_claim,
            groups_prefix: options.oidc_groups_prefix,
            required_claims: options.oidc_required_claim.into_iter().collect(),
            signing_algs: options.oidc_signing_algs,
        });
    config.proxy_client_cert_file = options.proxy_client_cert_file;
    config.proxy_client_key_file = options.proxy_client_key_file;
    config.max_connection_bytes_per_sec = options.max_connection_bytes_per_sec;
    config.kubelet = capstan_server::KubeletClientConfig {
        preferred_address_types: options.kubelet_preferred_address_types,
        certificate_authority: options.kubelet_certificate_authority,
        client_certificate: options.kubelet_client_certificate,
        client_key: options.kubelet_client_key,
        timeout: options.kubelet_timeout,
    };
    config.service_accounts = capstan_server::ServiceAccountOptions {
        issuers: options.service_account_issuer,
        key_files: options.service_account_key_file,
        signing_key_file: options.service_account_signing_key_file,
        max_token_expiration: Some(options.service_account_max_token_expiration)
            .filter(|d| !d.is_zero()),
        extend_token_expiration: options.service_account_extend_token_expiration,
        lookup: options.service_account_lookup,
        jwks_uri: options.service_account_jwks_uri,
        api_audiences: options.api_audiences,
    };
    config.authorization_modes = options.authorization_mode;
    match options.audit.configuration() {
        Ok(audit) => config.audit = audit,
        Err(err) => {
            eprintln!("capstan-apiserver: {err}");
            return ExitCode::FAILURE;
        }
    }
    config.admission = capstan_admission::AdmissionOptions {
        enable: options.enable_admission_plugins,
        disable: options.disable_admission_plugins,
        config_file: options.admission_control_config_file,
    };
    config.default_not_ready_toleration_seconds = options.default_not_ready_toleration_seconds;
    config.default_unreachable_toleration_seconds = options.default_unreachable_toleration_seconds;
    config.authorization_policy_file = options.authorization_policy_file;
    config.authorization_webhook = options.authorization_webhook_config_file.map(|file| {
        capstan_server::AuthorizationWebhookConfig {
            config_file: file,
            version: options.authorization_webhook_version,
            authorized_ttl: options.authorization_webhook_cache_authorized_ttl,
            unauthorized_ttl: options.authorization_webhook_cache_unauthorized_ttl,
        }
    });
    config.admin_kubeconfig = options.write_admin_kubeconfig;
    config.watch_cache = options.watch_cache;
    config.default_watch_cache_size = options.default_watch_cache_size;
    config.watch_cache_sizes = options.watch_cache_sizes.into_iter().collect();
    config.min_request_timeout = Duration::from_secs(options.min_request_timeout);
    config.max_requests_inflight = options.max_requests_inflight;
    config.max_mutating_requests_inflight = options.max_mutating_requests_inflight;
    config.enable_priority_and_fairness = options.enable_priority_and_fairness;
    config.request_timeout = options.request_timeout;
    config.event_ttl = options.event_ttl;
    config.garbage_collector = options.enable_garbage_collector;
    config.delete_collection_workers = options.delete_collection_workers as usize;

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("capstan-apiserver: starting the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(err) = capstan_serving::memory::spawn_allocator_tidy(Duration::from_secs(1)) {
        eprintln!("capstan-apiserver: starting the allocator's tidy thread: {err}");
        return ExitCode::FAILURE;
    }
    match runtime.block_on(capstan_server::run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("capstan-apiserver: {err}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_style_options() {
        let o = Options::try_parse_from([
            "capstan-apiserver",
            "--anonymous-auth=false",
            "--authorization-mode=AlwaysDeny,AlwaysAllow",
            "--etcd-compaction-interval=2m0s",
        ])
        .unwrap();
        assert!(!o.anonymous_auth);
        assert_eq!(o.authorization_mode, ["AlwaysDeny", "AlwaysAllow"]);
        assert_eq!(o.etcd_compaction_interval, Duration::from_secs(120));
        assert!(
            Options::try_parse_from(["capstan-apiserver", "--anonymous-auth"])
                .unwrap()
                .anonymous_auth
        );
        assert!(Options::try_parse_from(["capstan-apiserver", "--secure-port=http"]).is_err());
        let o = Options::try_parse_from([
            "capstan-apiserver",
            "--watch-cache=false",
            "--watch-cache-sizes=storageclasses.storage.k8s.io#500,pods#0",
        ])
        .unwrap();
        assert!(!o.watch_cache);
        assert_eq!(
            o.watch_cache_sizes,
            [
                ("storageclasses.storage.k8s.io".to_string(), 500),
                ("pods".to_string(), 0)
            ]
        );
        assert!(
            Options::try_parse_from(["capstan-apiserver", "--watch-cache-sizes=pods"]).is_err()
        );
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("1 minute").is_err());
    }

    #[test]
    fn limit_options_have_upstreams_defaults() {
        let o = Options::try_parse_from(["capstan-apiserver"]).unwrap();
        assert_eq!(
            (o.max_requests_inflight, o.max_mutating_requests_inflight),
            (400, 200)
        );
        assert_eq!(o.request_timeout, Duration::from_secs(60));
        let o = Options::try_parse_from([
            "capstan-apiserver",
            "--max-requests-inflight=0",
            "--request-timeout=30s",
        ])
        .unwrap();
        assert_eq!(o.max_requests_inflight, 0);
        assert_eq!(o.request_timeout, Duration::from_secs(30));
    }

    #[test]
    fn metric_options() {
        let o = Options::try_parse_from([
            "capstan-apiserver",
            "--disabled-metrics=apiserver_request_total,process_open_fds",
            "--allow-metric-labels=apiserver_request_total,verb='GET,LIST',apiserver_request_total,code='200'",
            "--show-hidden-metrics-for-version=1.32",
        ])
        .unwrap();
        assert_eq!(
            o.metrics.disabled_metrics,
            ["apiserver_request_total", "process_open_fds"]
        );
        assert_eq!(
            o.metrics.allowed_labels(),
            [
                (
                    ("apiserver_request_total".to_string(), "verb".to_string()),
                    vec!["GET".to_string(), "LIST".to_string()]
                ),
                (
                    ("apiserver_request_total".to_string(), "code".to_string()),
                    vec!["200".to_string()]
                ),
            ]
        );
        for bad in [
            "--allow-metric-labels=apiserver_request_total",
            "--show-hidden-metrics-for-version=1",
        ] {
            assert!(
                Options::try_parse_from(["capstan-apiserver", bad]).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn etcd_options() {
        let o = Options::try_parse_from([
            "capstan-apiserver",
            "--etcd-servers=https://10.0.0.1:2379,https://10.0.0.2:2379",
            "--etcd-servers-overrides=/events#http://10.0.0.5:2379;http://10.0.0.6:2379,storage.k8s.io/csinodes#http://10.0.0.7:2379",
            "--storage-media-type=application/json",
            "--etcd-healthcheck-timeout=5s",
        ])
        .unwrap();
        assert_eq!(o.etcd_servers.len(), 2);
        assert_eq!(
            o.etcd_servers_overrides,
            [
                (
                    "".to_string(),
                    "events".to_string(),
                    vec![
                        "http://10.0.0.5:2379".to_string(),
                        "http://10.0.0.6:2379".to_string()
                    ]
                ),
                (
                    "storage.k8s.io".to_string(),
                    "csinodes".to_string(),
                    vec!["http://10.0.0.7:2379".to_string()]
                ),
            ]
        );
        assert_eq!(o.etcd_healthcheck_timeout, Duration::from_secs(5));
        for bad in [
            "--etcd-servers=10.0.0.1:2379",
            "--etcd-servers-overrides=events#http://x:1",
            "--etcd-servers-overrides=/events",
            "--etcd-servers-overrides=/events#ftp://x",
            "--storage-media-type=text/plain",
            "--storage-backend=etcd2",
        ] {
            let err = Options::try_parse_from(["capstan-apiserver", bad])
                .unwrap_err()
                .to_string();
            assert!(
                err.lines().next().unwrap().contains("invalid value"),
                "{bad}: {err}"
            );
        }
    }
}
