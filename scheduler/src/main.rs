//! `capstan-scheduler`: parses the options, connects to the API server and schedules pods.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use capstan_scheduler::config::{Configuration, GoDuration, PluginConfig, ProfileConfig, policy};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser};
use k8s_openapi::api::core::v1::ConfigMap;

/// mimalloc rather than glibc's allocator, as the API server: the informers' decoding, the
/// scheduling cycle and the binding tasks run on different threads, and glibc's per-thread
/// arenas held freed memory apart (docs/performance.md, "The scheduler beside upstream's").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Capstan's scheduler: assigns pending pods to nodes through the API server's binding
/// subresource, with upstream's default plugins, profiles and plugin arguments
/// (`--config`). Its secure port authenticates and authorizes requests through the API
/// server (`--authentication-kubeconfig`, `--authorization-kubeconfig`).
#[derive(Debug, Parser)]
#[command(name = "capstan-scheduler")]
struct Options {
    /// Path of a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1 or v1beta1);
    /// the options marked "ignored with --config" are then ignored.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Write the effective configuration (v1, defaults filled in) to this file and exit.
    #[arg(long)]
    write_config_to: Option<PathBuf>,
    /// Path of the kubeconfig with the API server's address and credentials (deprecated in
    /// favour of clientConnection.kubeconfig; ignored with --config).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Address of the API server; overrides the kubeconfig's.
    #[arg(long)]
    master: Option<String>,
    /// Queries per second to the API server (ignored with --config).
    #[arg(long, default_value_t = 50.0)]
    kube_api_qps: f32,
    /// Burst of requests to the API server (ignored with --config).
    #[arg(long, default_value_t = 100)]
    kube_api_burst: u32,
    /// Content type of requests to the API server (ignored with --config).
    #[arg(long, default_value = "application/vnd.kubernetes.protobuf")]
    kube_api_content_type: String,
    /// Deprecated: the name of the single profile (spec.schedulerName of the pods it
    /// schedules); ignored with --config.
    #[arg(long, default_value = "default-scheduler")]
    scheduler_name: String,
    /// Deprecated: DefaultProvider, or ClusterAutoscalerProvider (NodeResourcesFit scores
    /// with MostAllocated, packing pods); ignored with --config.
    #[arg(long, value_parser = ["DefaultProvider", "ClusterAutoscalerProvider"])]
    algorithm_provider: Option<String>,
    /// Deprecated: weight of the implicit preferred term for each required pod affinity
    /// term of placed pods (InterPodAffinityArgs.hardPodAffinityWeight), 0–100; ignored with
    /// --config.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i32).range(0..=100))]
    hard_pod_affinity_symmetric_weight: i32,
    /// Take a Lease before scheduling, so that of several replicas only one schedules.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    leader_elect: bool,
    /// How long other replicas wait after the leader's last renewal before taking over.
    #[arg(long, default_value = "15s", value_parser = capstan_logging::parse_duration)]
    leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up (and exits).
    #[arg(long, default_value = "10s", value_parser = capstan_logging::parse_duration)]
    leader_elect_renew_deadline: Duration,
    /// The wait between attempts to take or renew the lease.
    #[arg(long, default_value = "2s", value_parser = capstan_logging::parse_duration)]
    leader_elect_retry_period: Duration,
    /// The kind of lock object: leases, configmaps, endpoints, or configmapsleases /
    /// endpointsleases (both objects, to migrate to leases). Endpoints locks need a server
    /// that serves Endpoints.
    #[arg(long, default_value = "leases")]
    leader_elect_resource_lock: String,
    /// The lock object's name.
    #[arg(long, default_value = "kube-scheduler")]
    leader_elect_resource_name: String,
    /// The lock object's namespace.
    #[arg(long, default_value = "kube-system")]
    leader_elect_resource_namespace: String,
    /// Deprecated: the lock object's name (use --leader-elect-resource-name); ignored with
    /// --config.
    #[arg(long)]
    lock_object_name: Option<String>,
    /// Deprecated: the lock object's namespace (use --leader-elect-resource-namespace);
    /// ignored with --config.
    #[arg(long)]
    lock_object_namespace: Option<String>,
    /// HTTPS port for /healthz, /livez, /readyz and /metrics; 0 turns HTTPS off.
    #[arg(long, default_value_t = 10259)]
    secure_port: u16,
    /// Address of the secure port (0.0.0.0 or :: for all interfaces).
    #[arg(long, default_value = "0.0.0.0")]
    bind_address: std::net::IpAddr,
    /// Directory of the self-signed serving pair (kube-scheduler.crt, kube-scheduler.key),
    /// generated on first start; when empty, a pair is generated in memory. Ignored when
    /// --tls-cert-file and --tls-private-key-file are given.
    #[arg(long)]
    cert_dir: Option<PathBuf>,
    /// Serving certificate (PEM; intermediates after it).
    #[arg(long)]
    tls_cert_file: Option<PathBuf>,
    /// Serving certificate's private key (PEM).
    #[arg(long)]
    tls_private_key_file: Option<PathBuf>,
    #[command(flatten)]
    delegation: Delegation,
    /// Deprecated: insecure HTTP port serving the same endpoints without authentication or
    /// authorization; 0 turns it off; ignored with --config (a v1beta1 file's
    /// healthzBindAddress sets it).
    #[arg(long, default_value_t = 10251)]
    port: u16,
    /// Deprecated: address of the insecure port; ignored with --config.
    #[arg(long, default_value = "0.0.0.0")]
    address: std::net::IpAddr,
    /// Deprecated: a legacy scheduling Policy file (predicates and priorities, mapped onto
    /// plugins); used when no policy ConfigMap is named or --use-legacy-policy-config is set;
    /// refused with a configuration that sets plugins itself.
    #[arg(long)]
    policy_config_file: Option<PathBuf>,
    /// Deprecated: the ConfigMap holding a legacy Policy under `policy.cfg`; it must exist at
    /// start (unless --use-legacy-policy-config is set).
    #[arg(long)]
    policy_configmap: Option<String>,
    /// Deprecated: the namespace of --policy-configmap.
    #[arg(long, default_value = "kube-system")]
    policy_configmap_namespace: String,
    /// Deprecated: read the policy from --policy-config-file and ignore --policy-configmap.
    #[arg(long)]
    use_legacy_policy_config: bool,
    #[command(flatten)]
    serving: capstan_serving::options::SecureServingTuning,
    /// Deprecated: serve CPU profiles at /debug/pprof/ (pprof format), on the secure port to
    /// authorized users (or with --authorization-always-allow-paths opening /debug/pprof/*);
    /// ignored with --config (enableProfiling).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    profiling: bool,
    /// Deprecated: lock-contention profiling. No effect: Rust has no runtime lock-contention
    /// profile; ignored with --config.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    contention_profiling: bool,
    /// Feature gates, comma-separated [kube:]Name=true|false: kube v1.36's gates, checked as
    /// upstream checks them (unknown gates, locked ones set away from their default, and
    /// enabled ones whose dependencies are disabled are refused). No effect yet: no Capstan
    /// behaviour depends on a gate.
    #[arg(long, value_delimiter = ',', value_parser = capstan_serving::options::parse_feature_gate)]
    feature_gates: Vec<capstan_serving::feature_gates::GateSetting>,
    /// The Azure container registry configuration file. No effect: Capstan has no cloud
    /// providers.
    #[arg(long)]
    azure_container_registry_config: Option<PathBuf>,
    /// Print the version and exit (--version=raw: Capstan's own version too).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_parser = ["true", "false", "raw"])]
    version: Option<String>,
    #[command(flatten)]
    metrics: capstan_serving::options::MetricsFlags,
    #[command(flatten)]
    log: capstan_logging::LogOptions,
}

/// Delegated authentication and authorization of the secure port (upstream's options).
#[derive(Debug, Clone, clap::Args)]
struct Delegation {
    /// Kubeconfig of the API server that reviews bearer tokens (TokenReview) and publishes
    /// the client and front-proxy authorities; when empty, tokens are refused and no client
    /// CA is looked up.
    #[arg(long)]
    authentication_kubeconfig: Option<PathBuf>,
    /// Do not look up missing authorities in kube-system/extension-apiserver-authentication.
    #[arg(long)]
    authentication_skip_lookup: bool,
    /// A failed look-up is not fatal (requests may then all be anonymous).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    authentication_tolerate_lookup_failure: bool,
    /// How long token reviews are cached.
    #[arg(long, default_value = "10s", value_parser = capstan_logging::parse_duration)]
    authentication_token_webhook_cache_ttl: Duration,
    /// Kubeconfig of the API server that authorizes requests (SubjectAccessReview); when
    /// empty, every request but the always-allowed paths is forbidden.
    #[arg(long)]
    authorization_kubeconfig: Option<PathBuf>,
    /// Paths served on the secure port without authorization (exact, or a prefix ending in
    /// `*`).
    #[arg(long, value_delimiter = ',', default_value = "/healthz,/readyz,/livez")]
    authorization_always_allow_paths: Vec<String>,
    /// How long 'authorized' answers are cached.
    #[arg(long, default_value = "10s", value_parser = capstan_logging::parse_duration)]
    authorization_webhook_cache_authorized_ttl: Duration,
    /// How long 'unauthorized' answers are cached.
    #[arg(long, default_value = "10s", value_parser = capstan_logging::parse_duration)]
    authorization_webhook_cache_unauthorized_ttl: Duration,
    /// Authorities of client certificates (the user is the common name, the groups the
    /// organizations); looked up when not given.
    #[arg(long)]
    client_ca_file: Option<PathBuf>,
    /// Authority of the front proxy's client certificate; looked up, with the headers,
    /// when not given.
    #[arg(long)]
    requestheader_client_ca_file: Option<PathBuf>,
    /// Common names of front-proxy certificates allowed to name users (empty: any).
    #[arg(long, value_delimiter = ',')]
    requestheader_allowed_names: Vec<String>,
    /// Headers naming the user.
    #[arg(long, value_delimiter = ',', default_value = "x-remote-user")]
    requestheader_username_headers: Vec<String>,
    /// Headers naming the groups.
    #[arg(long, value_delimiter = ',', default_value = "x-remote-group")]
    requestheader_group_headers: Vec<String>,
    /// Prefixes of headers carrying extra user information.
    #[arg(long, value_delimiter = ',', default_value = "x-remote-extra-")]
    requestheader_extra_headers_prefix: Vec<String>,
}

impl Delegation {
    fn config(&self) -> capstan_auth_remote::DelegatedConfig {
        capstan_auth_remote::DelegatedConfig {
            authentication_kubeconfig: self.authentication_kubeconfig.clone(),
            skip_lookup: self.authentication_skip_lookup,
            tolerate_lookup_failure: self.authentication_tolerate_lookup_failure,
            token_cache_ttl: self.authentication_token_webhook_cache_ttl,
            authorization_kubeconfig: self.authorization_kubeconfig.clone(),
            always_allow_paths: self.authorization_always_allow_paths.clone(),
            authorized_ttl: self.authorization_webhook_cache_authorized_ttl,
            unauthorized_ttl: self.authorization_webhook_cache_unauthorized_ttl,
            client_ca_file: self.client_ca_file.clone(),
            request_header_ca_file: self.requestheader_client_ca_file.clone(),
            request_header: capstan_auth::authn::RequestHeaderConfig {
                allowed_names: self.requestheader_allowed_names.clone(),
                username_headers: self.requestheader_username_headers.clone(),
                group_headers: self.requestheader_group_headers.clone(),
                extra_headers_prefix: self.requestheader_extra_headers_prefix.clone(),
            },
        }
    }
}

/// The options ignored when --config is given.
const IGNORED_WITH_CONFIG: &[&str] = &[
    "port",
    "address",
    "kubeconfig",
    "kube_api_qps",
    "kube_api_burst",
    "kube_api_content_type",
    "scheduler_name",
    "algorithm_provider",
    "hard_pod_affinity_symmetric_weight",
    "lock_object_name",
    "lock_object_namespace",
    "profiling",
    "contention_profiling",
];

/// The configuration the options amount to, with warnings to print.
fn configuration(
    o: &Options,
    given: &dyn Fn(&str) -> bool,
) -> Result<(Configuration, Vec<String>), String> {
    let mut warnings = Vec::new();
    let mut config = match &o.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("--config {}: {e}", path.display()))?;
            let (config, w) = Configuration::load(&text)
                .map_err(|e| format!("--config {}: {e}", path.display()))?;
            warnings.extend(w);
            for id in IGNORED_WITH_CONFIG.iter().filter(|id| given(id)) {
                warnings.push(format!(
                    "--{} is ignored because --config is given",
                    id.replace('_', "-")
                ));
            }
            config
        }
        None => from_flags(o)?,
    };
    let le = &mut config.leader_election;
    if o.config.is_none() || given("leader_elect") {
        le.leader_elect = o.leader_elect;
    }
    if o.config.is_none() || given("leader_elect_lease_duration") {
        le.lease_duration = GoDuration(o.leader_elect_lease_duration);
    }
    if o.config.is_none() || given("leader_elect_renew_deadline") {
        le.renew_deadline = GoDuration(o.leader_elect_renew_deadline);
    }
    if o.config.is_none() || given("leader_elect_retry_period") {
        le.retry_period = GoDuration(o.leader_elect_retry_period);
    }
    if o.config.is_none() || given("leader_elect_resource_lock") {
        le.resource_lock = o.leader_elect_resource_lock.clone();
    }
    if o.config.is_none() || given("leader_elect_resource_name") {
        le.resource_name = o.leader_elect_resource_name.clone();
    }
    if o.config.is_none() || given("leader_elect_resource_namespace") {
        le.resource_namespace = o.leader_elect_resource_namespace.clone();
    }
    if o.config.is_none() {
        // The deprecated lock options apply when the new ones are not given.
        if let Some(name) = o
            .lock_object_name
            .as_ref()
            .filter(|_| !given("leader_elect_resource_name"))
        {
            le.resource_name = name.clone();
        }
        if let Some(ns) = o
            .lock_object_namespace
            .as_ref()
            .filter(|_| !given("leader_elect_resource_namespace"))
        {
            le.resource_namespace = ns.clone();
        }
    }
    config.validate().map_err(|e| e.to_string())?;
    Ok((config, warnings))
}

/// The configuration of the deprecated flags, when no file is given.
fn from_flags(o: &Options) -> Result<Configuration, String> {
    let mut config = Configuration::default();
    config.client_connection.kubeconfig = o
        .kubeconfig
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    config.client_connection.qps = o.kube_api_qps;
    config.client_connection.burst = o.kube_api_burst as i32;
    config.client_connection.content_type = o.kube_api_content_type.clone();
    config.enable_profiling = o.profiling;
    config.enable_contention_profiling = o.contention_profiling;
    let mut plugin_config = vec![PluginConfig {
        name: "InterPodAffinity".into(),
        args: serde_json::json!({"hardPodAffinityWeight": o.hard_pod_affinity_symmetric_weight}),
    }];
    if o.algorithm_provider.as_deref() == Some("ClusterAutoscalerProvider") {
        plugin_config.push(PluginConfig {
            name: "NodeResourcesFit".into(),
            args: serde_json::json!({"scoringStrategy": {"type": "MostAllocated"}}),
        });
    }
    config.profiles.push(ProfileConfig {
        scheduler_name: o.scheduler_name.clone(),
        plugin_config,
        ..Default::default()
    });
    config.complete().map_err(|e| e.to_string())?;
    Ok(config)
}

fn main() -> ExitCode {
    let parsed = Options::command()
        .try_get_matches()
        .and_then(|m| Options::from_arg_matches(&m).map(|o| (o, m)));
    let (options, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // One line: the option and the reason.
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: bad options"));
            return ExitCode::FAILURE;
        }
    };
    if capstan_serving::options::print_version("capstan-scheduler", options.version.as_deref()) {
        return ExitCode::SUCCESS;
    }
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    if let Err(err) = capstan_serving::feature_gates::check_settings(&options.feature_gates) {
        eprintln!("capstan-scheduler: --feature-gates: {err}");
        return ExitCode::FAILURE;
    }
    let _log = match capstan_logging::init("capstan-scheduler", &options.log) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("capstan-scheduler: {e}");
            return ExitCode::FAILURE;
        }
    };
    capstan_serving::options::warn_no_effect(
        &matches,
        &[
            "contention_profiling",
            "feature_gates",
            "azure_container_registry_config",
            "permit_address_sharing",
            "show_hidden_metrics_for_version",
        ],
    );
    capstan_serving::feature_gates::warn_settings(&options.feature_gates);
    match run(options, &given) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("capstan-scheduler: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Where the legacy scheduling policy comes from.
enum PolicySource {
    /// No policy.
    None,
    /// A file's text.
    File(String),
    /// A ConfigMap (namespace, name), read once connected.
    ConfigMap(String, String),
}

/// The policy options, as upstream reads them: the file when --use-legacy-policy-config is
/// set or no ConfigMap is named, else the ConfigMap.
fn policy_source(o: &Options) -> Result<PolicySource, String> {
    let file = |path: &PathBuf| {
        std::fs::read_to_string(path)
            .map(PolicySource::File)
            .map_err(|e| format!("--policy-config-file {}: {e}", path.display()))
    };
    match (&o.policy_config_file, &o.policy_configmap) {
        (Some(path), _) if o.use_legacy_policy_config => file(path),
        (None, _) if o.use_legacy_policy_config => {
            Err("--use-legacy-policy-config needs --policy-config-file".into())
        }
        (_, Some(name)) => Ok(PolicySource::ConfigMap(
            o.policy_configmap_namespace.clone(),
            name.clone(),
        )),
        (Some(path), None) => file(path),
        (None, None) => Ok(PolicySource::None),
    }
}

fn write_config(path: &std::path::Path, config: &Configuration) -> Result<ExitCode, String> {
    std::fs::write(path, config.to_yaml())
        .map_err(|e| format!("--write-config-to {}: {e}", path.display()))?;
    tracing::info!(path = %path.display(), "wrote the configuration");
    Ok(ExitCode::SUCCESS)
}

fn client_for(
    config: &Configuration,
    master: Option<&str>,
) -> Result<capstan_client::Client, String> {
    let cc = &config.client_connection;
    if cc.kubeconfig.is_empty() {
        return Err(
            "no kubeconfig: give --kubeconfig, or clientConnection.kubeconfig in --config".into(),
        );
    }
    let mut client_config =
        capstan_client::Config::from_kubeconfig(std::path::Path::new(&cc.kubeconfig), master)
            .map_err(|e| format!("kubeconfig {}: {e}", cc.kubeconfig))?;
    client_config.qps = cc.qps;
    client_config.burst = cc.burst.max(0) as u32;
    client_config.content_type = capstan_client::ContentType::parse(&cc.content_type)
        .map_err(|e| format!("content type: {e}"))?;
    capstan_client::Client::new(client_config).map_err(|e| e.to_string())
}

fn run(options: Options, given: &dyn Fn(&str) -> bool) -> Result<ExitCode, String> {
    let (mut config, warnings) = configuration(&options, given)?;
    warnings.iter().for_each(|w| tracing::warn!("{w}"));
    let policy = policy_source(&options)?;
    if let PolicySource::File(text) = &policy {
        let warnings = policy::apply_policy(&mut config, text, "--policy-config-file")
            .map_err(|e| e.to_string())?;
        warnings.iter().for_each(|w| tracing::warn!("{w}"));
    }
    let from_config_map = matches!(policy, PolicySource::ConfigMap(..));
    if let Some(path) = options
        .write_config_to
        .as_deref()
        .filter(|_| !from_config_map)
    {
        return write_config(path, &config);
    }
    let client = client_for(&config, options.master.as_deref())?;
    capstan_serving::memory::spawn_allocator_tidy(Duration::from_secs(1))
        .map_err(|e| format!("starting the allocator's tidy thread: {e}"))?;
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| format!("starting the runtime: {e}"))?;
    runtime.block_on(async move {
        if let PolicySource::ConfigMap(ns, name) = &policy {
            let map: ConfigMap = client
                .get(Some(ns), name)
                .await
                .map_err(|e| format!("--policy-configmap {ns}/{name}: {e}"))?;
            let text = map
                .data
                .as_ref()
                .and_then(|d| d.get(policy::CONFIG_MAP_KEY))
                .ok_or_else(|| {
                    format!(
                        "--policy-configmap {ns}/{name}: no {:?} key in its data",
                        policy::CONFIG_MAP_KEY
                    )
                })?;
            let source = format!("--policy-configmap {ns}/{name}");
            let warnings =
                policy::apply_policy(&mut config, text, &source).map_err(|e| e.to_string())?;
            warnings.iter().for_each(|w| tracing::warn!("{w}"));
            if let Some(path) = &options.write_config_to {
                return write_config(path, &config);
            }
        }
        schedule(options, config, client).await
    })
}

/// Serves, takes the lease and schedules until stopped.
async fn schedule(
    options: Options,
    config: Configuration,
    client: capstan_client::Client,
) -> Result<ExitCode, String> {
    // SIGTERM or SIGINT ends the scheduler with success, as upstream's (whose lease then
    // expires); the handlers are in place before it serves.
    let stopped = {
        use tokio::signal::unix::{SignalKind, signal};
        let handler = |kind| signal(kind).map_err(|e| format!("installing a signal handler: {e}"));
        let mut term = handler(SignalKind::terminate())?;
        let mut interrupt = handler(SignalKind::interrupt())?;
        async move {
            tokio::select! {
                _ = term.recv() => tracing::info!("terminated; exiting"),
                _ = interrupt.recv() => tracing::info!("interrupted; exiting"),
            }
        }
    };
    tokio::pin!(stopped);
    let mut profiles = Vec::new();
    for p in &config.profiles {
        let (profile, warnings) =
            capstan_scheduler::plugins::build_profile(&config, p).map_err(|e| e.to_string())?;
        warnings.iter().for_each(|w| tracing::warn!("{w}"));
        profiles.push(profile);
    }
    let queue = capstan_scheduler::queue::Queue::with_backoff(
        Duration::from_secs(config.pod_initial_backoff_seconds as u64),
        Duration::from_secs(config.pod_max_backoff_seconds as u64),
    );
    let le = config.leader_election.clone();
    let insecure = if options.config.is_some() {
        config.insecure_address.clone()
    } else {
        (options.port != 0)
            .then(|| std::net::SocketAddr::new(options.address, options.port).to_string())
    };
    let metrics = Arc::new(capstan_scheduler::metrics::Metrics::new(&le.resource_name));
    let scheduler =
        capstan_scheduler::Scheduler::new(client.clone(), profiles, queue, metrics.clone());
    let endpoints = capstan_scheduler::serving::Endpoints::new(metrics.clone(), scheduler.synced());
    let endpoints = {
        let metrics_flags = options.metrics.clone();
        endpoints.with_metrics_filter(Arc::new(move |page: &str| metrics_flags.filter_text(page)))
    };
    let delegated = capstan_auth_remote::Delegated::new(options.delegation.config())
        .await
        .map_err(|e| e.to_string())?;
    start_serving(
        &options,
        insecure.as_deref(),
        endpoints,
        Arc::new(delegated),
        config.enable_profiling,
    )
    .await?;
    let mut elector = le.leader_elect.then(|| {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "capstan".into());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        capstan_client::LeaderElector::new(
            client.clone(),
            capstan_client::LeaderElection {
                namespace: le.resource_namespace.clone(),
                name: le.resource_name.clone(),
                identity: format!("{host}_{}-{nanos:x}", std::process::id()),
                lease_duration: le.lease_duration.0,
                renew_deadline: le.renew_deadline.0,
                retry_period: le.retry_period.0,
                lock: capstan_client::LockKind::parse(&le.resource_lock)
                    .unwrap_or(capstan_client::LockKind::Leases),
            },
        )
    });
    if let Some(elector) = elector.as_mut() {
        tokio::select! {
            () = elector.acquire() => {
                tracing::info!(identity = %elector.config().identity, "leader election: the lease is ours");
            }
            () = &mut stopped => return Ok(ExitCode::SUCCESS),
        }
    }
    metrics.set_leader(true);
    let lost = async {
        match elector.as_mut() {
            Some(e) => e.hold().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = scheduler.run() => Ok(ExitCode::SUCCESS),
        () = &mut stopped => Ok(ExitCode::SUCCESS),
        () = lost => Err("leader election lost".into()),
    }
}

/// Opens the secure port (and the deprecated insecure one) and serves the endpoints on them.
async fn start_serving(
    o: &Options,
    insecure: Option<&str>,
    endpoints: capstan_scheduler::serving::Endpoints,
    delegated: Arc<capstan_auth_remote::Delegated>,
    profiling: bool,
) -> Result<(), String> {
    use capstan_serving::tls;
    let answer = move |req: http::Request<hyper::body::Incoming>, transport| {
        let endpoints = endpoints.clone();
        let delegated = delegated.clone();
        async move {
            use capstan_scheduler::serving::refusal;
            if transport == capstan_serving::Transport::Tls {
                let peer = req
                    .extensions()
                    .get::<capstan_serving::ClientChain>()
                    .and_then(|c| capstan_auth::authn::PeerCertificates::new(c.0.to_vec()));
                let admitted = delegated
                    .admit(req.method(), req.uri().path(), req.headers(), peer.as_ref())
                    .await;
                match admitted {
                    Ok(_) => {}
                    Err(capstan_auth_remote::Refusal::Unauthorized) => {
                        return refusal(false, "Unauthorized");
                    }
                    Err(capstan_auth_remote::Refusal::Forbidden(message)) => {
                        return refusal(true, &message);
                    }
                }
            }
            let uri_path = req.uri().path();
            if profiling
                && req.method() == http::Method::GET
                && (uri_path == "/debug/pprof" || uri_path.starts_with("/debug/pprof/"))
            {
                let query = req.uri().query().unwrap_or("");
                return capstan_serving::profiling::answer(uri_path, query)
                    .await
                    .into_response();
            }
            let path = req.uri().path_and_query().map_or("/", |p| p.as_str());
            endpoints.answer(req.method(), path)
        }
    };
    let max_streams = o.serving.http2_max_streams_per_connection;
    if o.secure_port != 0 {
        let addr = std::net::SocketAddr::new(o.bind_address, o.secure_port);
        let listener = capstan_serving::listen(addr, o.serving.permit_port_sharing)
            .map_err(|e| format!("--secure-port {addr}: {e}"))?;
        let hosts = vec![o.bind_address.to_string()];
        let cert_dir = o.cert_dir.as_deref().filter(|d| !d.as_os_str().is_empty());
        let cert = match cert_dir {
            None if o.tls_cert_file.is_none() && o.tls_private_key_file.is_none() => {
                tls::generate("kube-scheduler", &hosts)
            }
            _ => tls::load_or_generate(
                "kube-scheduler",
                o.tls_cert_file.as_deref(),
                o.tls_private_key_file.as_deref(),
                cert_dir.unwrap_or(std::path::Path::new(".")),
                &hosts,
            ),
        }
        .map_err(|e| e.to_string())?;
        // Files given (or kept in --cert-dir) are reloaded when they change; a pair
        // generated in memory is fixed.
        let default_files = match (&o.tls_cert_file, &o.tls_private_key_file, cert_dir) {
            (Some(cert), Some(key), _) => Some((cert.clone(), key.clone())),
            (_, _, Some(dir)) => Some((
                dir.join("kube-scheduler.crt"),
                dir.join("kube-scheduler.key"),
            )),
            _ => None,
        };
        let resolver = capstan_serving::sni::CertResolver::new(
            default_files,
            Some((&cert.chain_pem, &cert.key_pem)),
            &o.serving.tls_sni_cert_key,
        )
        .map_err(|e| e.to_string())?;
        resolver.watch(Duration::from_secs(1));
        let tuning = o.serving.tls().map_err(|e| e.to_string())?;
        // Clients are asked for certificates: the delegated authenticators check them.
        let tls_config = tls::server_config_with_resolver(resolver.clone(), &tuning, true)
            .map_err(|e| e.to_string())?;
        let acceptor = capstan_serving::sni::Acceptor::new(tls_config, resolver);
        tracing::info!(%addr, "serving securely");
        tokio::spawn(capstan_serving::serve(
            listener,
            Some(acceptor),
            max_streams,
            answer.clone(),
        ));
    }
    if let Some(addr) = insecure {
        let addr: std::net::SocketAddr = addr
            .parse()
            .map_err(|e| format!("insecure address {addr}: {e}"))?;
        let listener = capstan_serving::listen(addr, o.serving.permit_port_sharing)
            .map_err(|e| format!("insecure port {addr}: {e}"))?;
        tracing::warn!(%addr, "serving insecurely (deprecated --port)");
        tokio::spawn(capstan_serving::serve(listener, None, max_streams, answer));
    }
    Ok(())
}
