//! `capstan-scheduler`: parses the options, connects to the API server and schedules pods.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// Capstan's scheduler: assigns pending pods to nodes through the API server's binding
/// subresource, with upstream's default filters and scores.
///
/// Not built yet (the scheduler issue): --config and --write-config-to, preemption, the
/// volume and inter-pod plugins, and the secure port with health and metrics.
#[derive(Debug, Parser)]
#[command(name = "capstan-scheduler", version)]
struct Options {
    /// Path of the kubeconfig with the API server's address and credentials.
    #[arg(long)]
    kubeconfig: PathBuf,
    /// Address of the API server; overrides the kubeconfig's.
    #[arg(long)]
    master: Option<String>,
    /// Queries per second to the API server.
    #[arg(long, default_value_t = 50.0)]
    kube_api_qps: f32,
    /// Burst of requests to the API server.
    #[arg(long, default_value_t = 100)]
    kube_api_burst: u32,
    /// Content type of requests to the API server.
    #[arg(long, default_value = "application/vnd.kubernetes.protobuf")]
    kube_api_content_type: String,
    /// The scheduler's name: it schedules the pods whose spec.schedulerName is this.
    #[arg(long, default_value = "default-scheduler")]
    scheduler_name: String,
    /// Take a Lease before scheduling, so that of several replicas only one schedules.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    leader_elect: bool,
    /// How long other replicas wait after the leader's last renewal before taking over.
    #[arg(long, default_value = "15s", value_parser = humantime::parse_duration)]
    leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up (and exits).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    leader_elect_renew_deadline: Duration,
    /// The wait between attempts to take or renew the lease.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    leader_elect_retry_period: Duration,
    /// The kind of lock object; only `leases` (the endpoints and configmaps locks are gone
    /// upstream too).
    #[arg(long, default_value = "leases")]
    leader_elect_resource_lock: String,
    /// The lock object's name.
    #[arg(long, default_value = "kube-scheduler")]
    leader_elect_resource_name: String,
    /// The lock object's namespace.
    #[arg(long, default_value = "kube-system")]
    leader_elect_resource_namespace: String,
    /// Log verbosity (0–10; 2 logs each scheduling decision).
    #[arg(short = 'v', long = "v", default_value_t = 0)]
    verbosity: u8,
}

fn main() -> ExitCode {
    let options = Options::parse();
    let level = match options.verbosity {
        0 | 1 => "warn,capstan_scheduler=info",
        2..=4 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = check_leader_election(&options) {
        eprintln!("capstan-scheduler: {e}");
        return ExitCode::FAILURE;
    }
    let mut config = match capstan_client::Config::from_kubeconfig(
        &options.kubeconfig,
        options.master.as_deref(),
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("capstan-scheduler: --kubeconfig: {e}");
            return ExitCode::FAILURE;
        }
    };
    config.qps = options.kube_api_qps;
    config.burst = options.kube_api_burst;
    config.content_type = match capstan_client::ContentType::parse(&options.kube_api_content_type) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("capstan-scheduler: --kube-api-content-type: {e}");
            return ExitCode::FAILURE;
        }
    };
    let client = match capstan_client::Client::new(config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("capstan-scheduler: {e}");
            return ExitCode::FAILURE;
        }
    };
    let profile = capstan_scheduler::plugins::default_profile(&options.scheduler_name);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("capstan-scheduler: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let mut elector = options.leader_elect.then(|| {
            let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "capstan".into());
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            capstan_client::LeaderElector::new(
                client.clone(),
                capstan_client::LeaderElection {
                    namespace: options.leader_elect_resource_namespace.clone(),
                    name: options.leader_elect_resource_name.clone(),
                    identity: format!("{host}_{}-{nanos:x}", std::process::id()),
                    lease_duration: options.leader_elect_lease_duration,
                    renew_deadline: options.leader_elect_renew_deadline,
                    retry_period: options.leader_elect_retry_period,
                },
            )
        });
        if let Some(elector) = elector.as_mut() {
            tokio::select! {
                () = elector.acquire() => {
                    tracing::info!(identity = %elector.config().identity, "leader election: the lease is ours");
                }
                _ = tokio::signal::ctrl_c() => return ExitCode::SUCCESS,
            }
        }
        let scheduler = capstan_scheduler::Scheduler::new(client, profile);
        let lost = async {
            match elector.as_mut() {
                Some(e) => e.hold().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = scheduler.run() => ExitCode::SUCCESS,
            _ = tokio::signal::ctrl_c() => ExitCode::SUCCESS,
            () = lost => {
                eprintln!("capstan-scheduler: leader election lost");
                ExitCode::FAILURE
            }
        }
    })
}

/// The timing rules of leader election, as upstream checks them.
fn check_leader_election(o: &Options) -> Result<(), String> {
    if !o.leader_elect {
        return Ok(());
    }
    if o.leader_elect_resource_lock != "leases" {
        return Err(format!(
            "--leader-elect-resource-lock: {:?} is not supported: use leases",
            o.leader_elect_resource_lock
        ));
    }
    if o.leader_elect_lease_duration <= o.leader_elect_renew_deadline {
        return Err(
            "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"
                .into(),
        );
    }
    if o.leader_elect_renew_deadline.as_secs_f64()
        <= o.leader_elect_retry_period.as_secs_f64() * 1.2
    {
        return Err(
            "--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period"
                .into(),
        );
    }
    Ok(())
}
