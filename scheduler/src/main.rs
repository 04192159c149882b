//! `capstan-scheduler`: parses the options, connects to the API server and schedules pods.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Capstan's scheduler: assigns pending pods to nodes through the API server's binding
/// subresource, with upstream's default filters and scores.
///
/// Not built yet (the scheduler issue): --config and --write-config-to, preemption, the
/// volume and inter-pod plugins, leader election (run one replica), and the secure port with
/// health and metrics.
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
        let scheduler = capstan_scheduler::Scheduler::new(client, profile);
        tokio::select! {
            () = scheduler.run() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    });
    ExitCode::SUCCESS
}
