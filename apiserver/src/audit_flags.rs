//! The `--audit-*` options, turned into the server's audit configuration.

use std::path::PathBuf;
use std::time::Duration;

use capstan_audit::{
    BackendOptions, BatchOptions, Destination, Format, Mode, Policy, Rotation, TruncateOptions,
};
use clap::{ArgAction, Args};

use crate::parse_duration;

/// The only event version written (upstream v1.33 writes only this one).
const EVENT_VERSION: &str = "audit.k8s.io/v1";

#[derive(Args, Debug)]
#[command(next_help_heading = "Auditing flags")]
pub struct AuditFlags {
    /// The audit policy file (audit.k8s.io/v1 Policy, YAML or JSON; v1beta1 and v1alpha1 read
    /// with a warning). Requests are audited only with a policy and at least one backend.
    #[arg(long)]
    audit_policy_file: Option<PathBuf>,

    /// The audit log file ('-' for standard output); no log backend without it.
    #[arg(long)]
    audit_log_path: Option<PathBuf>,
    /// Format of the log: json (one event per line) or legacy (one text line per event).
    #[arg(long, default_value = "json", value_parser = ["json", "legacy"])]
    audit_log_format: String,
    /// Group and version of the events written to the log.
    #[arg(long, default_value = EVENT_VERSION, value_parser = [EVENT_VERSION])]
    audit_log_version: String,
    /// blocking (each event written before the request goes on), blocking-strict (and the
    /// request fails when its RequestReceived event cannot be written) or batch.
    #[arg(long, default_value = "blocking", value_parser = Mode::parse)]
    audit_log_mode: Mode,
    /// Events buffered before batching (batch mode); beyond it events are dropped and counted.
    #[arg(long, default_value_t = 10000)]
    audit_log_batch_buffer_size: usize,
    /// Events per batch at most (batch mode).
    #[arg(long, default_value_t = 1)]
    audit_log_batch_max_size: usize,
    /// How long a short batch waits before it is written (batch mode).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    audit_log_batch_max_wait: Duration,
    /// Batches written at once when the throttle was idle (batch mode).
    #[arg(long, default_value_t = 0)]
    audit_log_batch_throttle_burst: u32,
    /// Throttle batches (batch mode).
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    audit_log_batch_throttle_enable: bool,
    /// Batches per second at most when throttled (batch mode).
    #[arg(long, default_value_t = 0.0)]
    audit_log_batch_throttle_qps: f32,
    /// Truncate large events and split large batches.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    audit_log_truncate_enabled: bool,
    /// Bytes per batch before it is split (with truncation).
    #[arg(long, default_value_t = 10485760)]
    audit_log_truncate_max_batch_size: usize,
    /// Bytes per event: larger events lose their bodies, then are dropped (with truncation).
    #[arg(long, default_value_t = 102400)]
    audit_log_truncate_max_event_size: usize,
    /// Days to keep rotated log files (by the time in their names); 0 keeps them.
    #[arg(long, default_value_t = 0)]
    audit_log_maxage: u32,
    /// Rotated log files to keep; 0 keeps them all.
    #[arg(long, default_value_t = 0)]
    audit_log_maxbackup: u32,
    /// Megabytes at which the log rotates (0: 100, as upstream).
    #[arg(long, default_value_t = 0)]
    audit_log_maxsize: u32,
    /// Gzip rotated log files.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    audit_log_compress: bool,

    /// A kubeconfig naming the HTTPS server that receives audit events (EventLists POSTed
    /// to its server URL); no webhook backend without it.
    #[arg(long)]
    audit_webhook_config_file: Option<PathBuf>,
    /// blocking, blocking-strict or batch (see --audit-log-mode).
    #[arg(long, default_value = "batch", value_parser = Mode::parse)]
    audit_webhook_mode: Mode,
    /// Group and version of the events sent to the webhook.
    #[arg(long, default_value = EVENT_VERSION, value_parser = [EVENT_VERSION])]
    audit_webhook_version: String,
    /// Events buffered before batching (batch mode).
    #[arg(long, default_value_t = 10000)]
    audit_webhook_batch_buffer_size: usize,
    /// Events per batch at most (batch mode).
    #[arg(long, default_value_t = 400)]
    audit_webhook_batch_max_size: usize,
    /// How long a short batch waits before it is sent (batch mode).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    audit_webhook_batch_max_wait: Duration,
    /// Batches sent at once when the throttle was idle (batch mode).
    #[arg(long, default_value_t = 15)]
    audit_webhook_batch_throttle_burst: u32,
    /// Throttle batches (batch mode).
    #[arg(long, default_value_t = true, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    audit_webhook_batch_throttle_enable: bool,
    /// Batches per second at most when throttled (batch mode).
    #[arg(long, default_value_t = 10.0)]
    audit_webhook_batch_throttle_qps: f32,
    /// Truncate large events and split large batches.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    audit_webhook_truncate_enabled: bool,
    /// Bytes per batch before it is split (with truncation).
    #[arg(long, default_value_t = 10485760)]
    audit_webhook_truncate_max_batch_size: usize,
    /// Bytes per event: larger events lose their bodies, then are dropped (with truncation).
    #[arg(long, default_value_t = 102400)]
    audit_webhook_truncate_max_event_size: usize,
    /// Wait before the first retry of a failed batch (then 1.5 times longer, 5 tries).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    audit_webhook_initial_backoff: Duration,
}

impl AuditFlags {
    /// The policy and the backends; an unreadable or invalid policy is an error naming it.
    pub fn configuration(self) -> Result<Option<capstan_server::AuditConfig>, String> {
        let Some(policy_file) = &self.audit_policy_file else {
            if self.audit_log_path.is_some() || self.audit_webhook_config_file.is_some() {
                tracing::warn!(
                    "audit backends configured without --audit-policy-file: nothing is audited"
                );
            }
            return Ok(None);
        };
        let policy = Policy::load(policy_file).map_err(|e| e.to_string())?;
        let mut backends = Vec::new();
        if let Some(path) = self.audit_log_path {
            backends.push(BackendOptions {
                destination: Destination::Log {
                    path,
                    format: if self.audit_log_format == "legacy" {
                        Format::Legacy
                    } else {
                        Format::Json
                    },
                    rotation: Rotation {
                        max_age_days: self.audit_log_maxage,
                        max_backups: self.audit_log_maxbackup,
                        max_size_mb: self.audit_log_maxsize,
                        compress: self.audit_log_compress,
                    },
                },
                mode: self.audit_log_mode,
                batch: BatchOptions {
                    buffer_size: self.audit_log_batch_buffer_size,
                    max_size: self.audit_log_batch_max_size,
                    max_wait: self.audit_log_batch_max_wait,
                    throttle_enable: self.audit_log_batch_throttle_enable,
                    throttle_qps: self.audit_log_batch_throttle_qps,
                    throttle_burst: self.audit_log_batch_throttle_burst,
                },
                truncate: TruncateOptions {
                    enabled: self.audit_log_truncate_enabled,
                    max_batch_size: self.audit_log_truncate_max_batch_size,
                    max_event_size: self.audit_log_truncate_max_event_size,
                },
            });
        }
        if let Some(config_file) = self.audit_webhook_config_file {
            backends.push(BackendOptions {
                destination: Destination::Webhook {
                    config_file,
                    initial_backoff: self.audit_webhook_initial_backoff,
                },
                mode: self.audit_webhook_mode,
                batch: BatchOptions {
                    buffer_size: self.audit_webhook_batch_buffer_size,
                    max_size: self.audit_webhook_batch_max_size,
                    max_wait: self.audit_webhook_batch_max_wait,
                    throttle_enable: self.audit_webhook_batch_throttle_enable,
                    throttle_qps: self.audit_webhook_batch_throttle_qps,
                    throttle_burst: self.audit_webhook_batch_throttle_burst,
                },
                truncate: TruncateOptions {
                    enabled: self.audit_webhook_truncate_enabled,
                    max_batch_size: self.audit_webhook_truncate_max_batch_size,
                    max_event_size: self.audit_webhook_truncate_max_event_size,
                },
            });
        }
        if backends.is_empty() {
            tracing::warn!(
                "--audit-policy-file without --audit-log-path or --audit-webhook-config-file: nothing is audited"
            );
            return Ok(None);
        }
        for b in &backends {
            if b.mode == Mode::Batch && b.batch.throttle_enable && b.batch.throttle_qps <= 0.0 {
                return Err("audit batch throttling needs a QPS above 0".into());
            }
        }
        Ok(Some(capstan_server::AuditConfig { policy, backends }))
    }
}
