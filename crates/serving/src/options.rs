//! Command-line options both daemons share, with upstream's names: TLS and HTTP tuning of
//! the secure port, and the metric options.

use std::collections::BTreeMap;

use clap::ArgAction;

use crate::sni::SniCertKey;
use crate::tls::TlsTuning;

/// TLS and HTTP tuning of the secure port.
#[derive(Debug, Clone, clap::Args)]
pub struct SecureServingTuning {
    /// A certificate and key served to clients asking for the names that follow it:
    /// certfile,keyfile[:name,name...] (names may be wildcards like *.example.com; without
    /// names, the certificate's own names); repeatable. Exact names beat wildcards, given
    /// names beat the certificate's. Files are reloaded when they change. A client that
    /// connects by IP address sends no name: the address it reached is matched against IP
    /// patterns (and IP SANs) instead.
    #[arg(long, value_parser = SniCertKey::parse, help_heading = "Secure serving flags")]
    pub tls_sni_cert_key: Vec<SniCertKey>,

    /// The oldest TLS version accepted: VersionTLS12 or VersionTLS13 (rustls does not offer
    /// VersionTLS10 or VersionTLS11; naming them is an error that says so).
    #[arg(long, help_heading = "Secure serving flags")]
    pub tls_min_version: Option<String>,

    /// TLS 1.2 cipher suites offered, comma-separated upstream names (ECDHE with AES-GCM or
    /// ChaCha20-Poly1305; other names are refused at start); TLS 1.3 suites are always on.
    #[arg(long, value_delimiter = ',', help_heading = "Secure serving flags")]
    pub tls_cipher_suites: Vec<String>,

    /// Streams an HTTP/2 client may open at once on one connection; 0 uses Capstan's
    /// default (1000).
    #[arg(long, default_value_t = 0, help_heading = "Secure serving flags")]
    pub http2_max_streams_per_connection: u32,

    /// Bind with address reuse (SO_REUSEADDR). Capstan always binds so on Linux, as the Go
    /// listener of upstream does: the flag is accepted and changes nothing.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Secure serving flags")]
    pub permit_address_sharing: bool,

    /// Bind with port reuse (SO_REUSEPORT), so that several instances share one address and
    /// port.
    #[arg(long, default_value_t = false, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Secure serving flags")]
    pub permit_port_sharing: bool,
}

impl SecureServingTuning {
    /// The TLS version and cipher suites, checked.
    pub fn tls(&self) -> crate::Result<TlsTuning> {
        let tuning = TlsTuning {
            min_version: self.tls_min_version.clone(),
            cipher_suites: self.tls_cipher_suites.clone(),
        };
        tuning.validate()?;
        Ok(tuning)
    }
}

/// (metric, label) → the values kept; others become `unexpected`.
pub type LabelAllowList = Vec<((String, String), Vec<String>)>;

/// `--disabled-metrics`, `--allow-metric-labels`, `--show-hidden-metrics-for-version`.
#[derive(Debug, Clone, clap::Args)]
pub struct MetricsFlags {
    /// Metrics not to serve, comma-separated exposed names (e.g. apiserver_request_total).
    #[arg(long, value_delimiter = ',', help_heading = "Metrics flags")]
    pub disabled_metrics: Vec<String>,

    /// Label values allowed per metric: metric,label='value1,value2' (repeatable, or several
    /// separated by commas); other values are reported as "unexpected".
    #[arg(long, value_parser = parse_allowed_labels, help_heading = "Metrics flags")]
    pub allow_metric_labels: Vec<LabelAllowList>,

    /// Show metrics hidden since this version (major.minor). Capstan hides none, so this
    /// changes nothing; the value is still checked.
    #[arg(long, value_parser = parse_minor_version, help_heading = "Metrics flags")]
    pub show_hidden_metrics_for_version: Option<String>,
}

impl MetricsFlags {
    /// The allow-lists of every `--allow-metric-labels`, in order.
    pub fn allowed_labels(&self) -> LabelAllowList {
        self.allow_metric_labels.iter().flatten().cloned().collect()
    }

    /// Applies the options to a page in the Prometheus text format: disabled families
    /// removed, label values outside their allow-list replaced by `unexpected` (samples
    /// that then share labels are summed).
    pub fn filter_text(&self, page: &str) -> String {
        let allowed = self.allowed_labels();
        if self.disabled_metrics.is_empty() && allowed.is_empty() {
            return page.to_string();
        }
        let family_of = |name: &str| -> String {
            let base = name
                .strip_suffix("_bucket")
                .or_else(|| name.strip_suffix("_sum"));
            let base = base.or_else(|| name.strip_suffix("_count")).unwrap_or(name);
            base.to_string()
        };
        let disabled = |name: &str| {
            self.disabled_metrics
                .iter()
                .any(|d| d == name || *d == family_of(name))
        };
        let mut out = String::with_capacity(page.len());
        // Samples whose labels were rewritten, summed by their new text (in page order).
        let mut merged: BTreeMap<usize, (String, f64)> = BTreeMap::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        let flush = |out: &mut String,
                     merged: &mut BTreeMap<usize, (String, f64)>,
                     index: &mut BTreeMap<String, usize>| {
            for (_, (series, value)) in std::mem::take(merged) {
                out.push_str(&format!("{series} {value}\n"));
            }
            index.clear();
        };
        for line in page.lines() {
            if let Some(rest) = line
                .strip_prefix("# HELP ")
                .or_else(|| line.strip_prefix("# TYPE "))
            {
                flush(&mut out, &mut merged, &mut index);
                let name = rest.split_whitespace().next().unwrap_or_default();
                if !disabled(name) {
                    out.push_str(line);
                    out.push('\n');
                }
                continue;
            }
            let Some((series, value)) = line.rsplit_once(' ') else {
                out.push_str(line);
                out.push('\n');
                continue;
            };
            let name = series.split('{').next().unwrap_or(series);
            if disabled(name) {
                continue;
            }
            let family = family_of(name);
            let rules: Vec<_> = allowed.iter().filter(|((m, _), _)| *m == family).collect();
            if rules.is_empty() || line.starts_with('#') {
                out.push_str(line);
                out.push('\n');
                continue;
            }
            let rewritten = rewrite_labels(series, &rules);
            let value: f64 = value.parse().unwrap_or(f64::NAN);
            match index.get(&rewritten) {
                Some(i) => merged.get_mut(i).expect("indexed").1 += value,
                None => {
                    let i = merged.len();
                    index.insert(rewritten.clone(), i);
                    merged.insert(i, (rewritten, value));
                }
            }
        }
        flush(&mut out, &mut merged, &mut index);
        out
    }
}

/// `name{a="x",b="y"}` with values outside `rules` replaced by `unexpected`.
fn rewrite_labels(series: &str, rules: &[&((String, String), Vec<String>)]) -> String {
    let Some((name, labels)) = series.split_once('{') else {
        return series.to_string();
    };
    let labels = labels.strip_suffix('}').unwrap_or(labels);
    let mut parts = Vec::new();
    let mut rest = labels;
    while let Some((key, after)) = rest.split_once("=\"") {
        // Values are escaped Prometheus strings: find the closing quote.
        let mut end = 0;
        let bytes = after.as_bytes();
        while end < bytes.len() && bytes[end] != b'"' {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        let value = &after[..end.min(after.len())];
        let key = key.trim_start_matches(',').trim();
        let keep = rules
            .iter()
            .find(|((_, label), _)| label == key)
            .is_none_or(|(_, values)| values.iter().any(|v| v == value));
        let shown = if keep { value } else { "unexpected" };
        parts.push(format!("{key}=\"{shown}\""));
        rest = after.get(end + 1..).unwrap_or("");
    }
    format!("{name}{{{}}}", parts.join(","))
}

/// Parses `metric,label='v1,v2'[,metric,label='v3']`.
pub fn parse_allowed_labels(value: &str) -> Result<LabelAllowList, String> {
    let mut rest = value.trim();
    let mut out = Vec::new();
    let bad = |at: &str| format!("{at:?} is not metric,label='value1,value2'");
    while !rest.is_empty() {
        let (metric, after) = rest.split_once(',').ok_or_else(|| bad(rest))?;
        let (label, after) = after.split_once("='").ok_or_else(|| bad(rest))?;
        let (values, after) = after.split_once('\'').ok_or_else(|| bad(rest))?;
        let name_ok = |s: &str, colon: bool| {
            let mut chars = s.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
        };
        let (metric, label) = (metric.trim(), label.trim());
        if !name_ok(metric, true) || !name_ok(label, false) {
            return Err(bad(rest));
        }
        let values = values.split(',').map(|v| v.trim().to_string()).collect();
        out.push(((metric.to_string(), label.to_string()), values));
        rest = after.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    Ok(out)
}

/// Logs a warning for each option of `ids` (clap ids: names with `_`) given on the command
/// line: they are accepted and checked but change nothing yet.
pub fn warn_no_effect(matches: &clap::ArgMatches, ids: &[&str]) {
    for id in ids {
        if matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
            tracing::warn!(
                option = %format!("--{}", id.replace('_', "-")),
                "the option is accepted but has no effect in Capstan yet (see --help)"
            );
        }
    }
}

pub use crate::feature_gates::{parse_feature_gate, parse_go_bool};

/// The Kubernetes version Capstan's API matches (major, minor, patch).
pub const KUBERNETES_VERSION: (u32, u32, u32) = (1, 36, 0);

/// Handles `--version[=true|false|raw]`: prints `Kubernetes vX.Y.Z` as upstream (with
/// `raw`, Capstan's own version and platform too) and returns true when the process should
/// exit.
pub fn print_version(program: &str, flag: Option<&str>) -> bool {
    let (major, minor, patch) = KUBERNETES_VERSION;
    let kubernetes = format!("v{major}.{minor}.{patch}");
    match flag {
        Some("raw") => println!(
            "{program} {} (Kubernetes {kubernetes}, {}/{})",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
        Some("true") => println!("Kubernetes {kubernetes}"),
        _ => return false,
    }
    true
}

/// Checks `major.minor`.
pub fn parse_minor_version(value: &str) -> Result<String, String> {
    match value.split_once('.') {
        Some((major, minor)) if major.parse::<u32>().is_ok() && minor.parse::<u32>().is_ok() => {
            Ok(value.to_string())
        }
        _ => Err(format!("{value:?} is not major.minor (e.g. 1.32)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(disabled: &[&str], allowed: &str) -> MetricsFlags {
        MetricsFlags {
            disabled_metrics: disabled.iter().map(|s| s.to_string()).collect(),
            allow_metric_labels: vec![parse_allowed_labels(allowed).unwrap()],
            show_hidden_metrics_for_version: None,
        }
    }

    #[test]
    fn allow_lists_parse() {
        let list = parse_allowed_labels(
            "apiserver_request_total,verb='GET,LIST',apiserver_request_total,code='200'",
        )
        .unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].1, ["GET", "LIST"]);
        assert_eq!(list[1].0.1, "code");
        for bad in ["apiserver_request_total", "m,l=x", "9m,l='x'", "m,l='x"] {
            assert!(parse_allowed_labels(bad).is_err(), "{bad}");
        }
        assert!(parse_minor_version("1.32").is_ok());
        assert!(parse_minor_version("1").is_err());
    }

    #[test]
    fn a_text_page_filtered() {
        let page = "# HELP a_total A.\n# TYPE a_total counter\n\
                    a_total{result=\"ok\",profile=\"x\"} 3\n\
                    a_total{result=\"error\",profile=\"x\"} 2\n\
                    a_total{result=\"odd\",profile=\"x\"} 4\n\
                    # HELP b_seconds B.\n# TYPE b_seconds histogram\n\
                    b_seconds_bucket{le=\"1\"} 1\nb_seconds_sum 0.5\nb_seconds_count 1\n\
                    # HELP c C.\n# TYPE c gauge\nc 7\n";
        let filtered = flags(&["b_seconds"], "a_total,result='ok'").filter_text(page);
        assert!(!filtered.contains("b_seconds"), "{filtered}");
        assert!(
            filtered.contains("a_total{result=\"ok\",profile=\"x\"} 3\n"),
            "{filtered}"
        );
        assert!(
            filtered.contains("a_total{result=\"unexpected\",profile=\"x\"} 6\n"),
            "{filtered}"
        );
        assert!(filtered.contains("c 7\n"));
        assert!(!filtered.contains("odd"));
    }
}
