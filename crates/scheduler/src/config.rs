//! `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`, and the older `v1beta1`,
//! converted on reading): decoding (strict, as upstream: unknown fields are errors),
//! defaulting, validation with field paths, and the effective plugin set of each profile.

use std::time::Duration;

use capstan_meta::duration::{go_duration, parse_go_duration};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};

/// The configuration's API group.
pub const GROUP: &str = "kubescheduler.config.k8s.io";
/// The current version.
pub const V1: &str = "kubescheduler.config.k8s.io/v1";
/// The version of the spec's era, read and converted to v1.
pub const V1BETA1: &str = "kubescheduler.config.k8s.io/v1beta1";
/// The configuration's kind.
pub const KIND: &str = "KubeSchedulerConfiguration";
/// The default profile's scheduler name.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// A duration in Go's text form (`15s`, `1m0s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoDuration(pub Duration);

impl Serialize for GoDuration {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&go_duration(self.0.as_nanos() as i64))
    }
}

impl<'de> Deserialize<'de> for GoDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match parse_go_duration(&text) {
            Some(n) if n >= 0 => Ok(Self(Duration::from_nanos(n as u64))),
            _ => Err(serde::de::Error::custom(format!(
                "{text:?} is not a duration (e.g. 15s, 1m0s)"
            ))),
        }
    }
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Configuration {
    /// `kubescheduler.config.k8s.io/v1`.
    pub api_version: String,
    /// `KubeSchedulerConfiguration`.
    pub kind: String,
    /// How many nodes are evaluated at once (upstream's worker count; Capstan evaluates
    /// on the scheduling thread and only validates it).
    pub parallelism: i32,
    /// Leader election.
    pub leader_election: LeaderElection,
    /// The connection to the API server.
    pub client_connection: ClientConnection,
    /// Serve `/debug/pprof` (with the serving options).
    pub enable_profiling: bool,
    /// Contention profiling.
    pub enable_contention_profiling: bool,
    /// Share of nodes to evaluate (0 or unset: adaptive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentage_of_nodes_to_score: Option<i32>,
    /// First backoff of a pod whose attempt failed.
    pub pod_initial_backoff_seconds: i64,
    /// Longest backoff.
    pub pod_max_backoff_seconds: i64,
    /// The profiles, one per scheduler name.
    pub profiles: Vec<ProfileConfig>,
    /// Scheduler extenders (not supported: must be empty).
    pub extenders: Vec<Value>,
    /// Whether informers start only once leader (accepted; Capstan starts them on leading).
    pub delay_cache_until_active: bool,
    /// The insecure serving address of a v1beta1 file (`healthzBindAddress`); v1 has none.
    #[serde(skip)]
    pub insecure_address: Option<String>,
}

/// `leaderElection`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LeaderElection {
    /// Take the lease before scheduling.
    pub leader_elect: bool,
    /// How long others wait after the last renewal.
    pub lease_duration: GoDuration,
    /// How long the leader tries to renew.
    pub renew_deadline: GoDuration,
    /// Wait between attempts.
    pub retry_period: GoDuration,
    /// The lock kind (`leases`).
    pub resource_lock: String,
    /// The lock's name.
    pub resource_name: String,
    /// The lock's namespace.
    pub resource_namespace: String,
}

impl Default for LeaderElection {
    fn default() -> Self {
        Self {
            leader_elect: true,
            lease_duration: GoDuration(Duration::from_secs(15)),
            renew_deadline: GoDuration(Duration::from_secs(10)),
            retry_period: GoDuration(Duration::from_secs(2)),
            resource_lock: "leases".into(),
            resource_name: "kube-scheduler".into(),
            resource_namespace: "kube-system".into(),
        }
    }
}

/// `clientConnection`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ClientConnection {
    /// The kubeconfig's path.
    pub kubeconfig: String,
    /// The Accept header (empty: the content type's default).
    pub accept_content_types: String,
    /// The content type of requests.
    pub content_type: String,
    /// Queries per second.
    pub qps: f32,
    /// Burst.
    pub burst: i32,
}

impl Default for ClientConnection {
    fn default() -> Self {
        Self {
            kubeconfig: String::new(),
            accept_content_types: String::new(),
            content_type: "application/vnd.kubernetes.protobuf".into(),
            qps: 50.0,
            burst: 100,
        }
    }
}

/// One profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ProfileConfig {
    /// The `spec.schedulerName` the profile serves.
    pub scheduler_name: String,
    /// The profile's own share of nodes to evaluate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentage_of_nodes_to_score: Option<i32>,
    /// Plugins enabled and disabled, on top of the defaults.
    pub plugins: Plugins,
    /// Arguments of plugins.
    pub plugin_config: Vec<PluginConfig>,
}

impl Default for ProfileConfig {
    fn default() -> Self {
        Self {
            scheduler_name: DEFAULT_SCHEDULER_NAME.into(),
            percentage_of_nodes_to_score: None,
            plugins: Plugins::default(),
            plugin_config: Vec::new(),
        }
    }
}

/// The plugins of each extension point.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct Plugins {
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub pre_enqueue: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub queue_sort: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub pre_filter: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub filter: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub post_filter: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub pre_score: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub score: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub reserve: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub permit: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub pre_bind: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub bind: PluginSet,
    #[serde(skip_serializing_if = "PluginSet::is_empty")]
    pub post_bind: PluginSet,
    pub multi_point: PluginSet,
}

impl Plugins {
    /// Each extension point's set with its field name.
    fn points(&self) -> [(&'static str, &PluginSet); 13] {
        [
            ("preEnqueue", &self.pre_enqueue),
            ("queueSort", &self.queue_sort),
            ("preFilter", &self.pre_filter),
            ("filter", &self.filter),
            ("postFilter", &self.post_filter),
            ("preScore", &self.pre_score),
            ("score", &self.score),
            ("reserve", &self.reserve),
            ("permit", &self.permit),
            ("preBind", &self.pre_bind),
            ("bind", &self.bind),
            ("postBind", &self.post_bind),
            ("multiPoint", &self.multi_point),
        ]
    }
}

/// Plugins enabled and disabled at one extension point.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PluginSet {
    /// Enabled, in order (after the defaults).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enabled: Vec<PluginRef>,
    /// Disabled defaults (`*`: all of them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<PluginRef>,
}

impl PluginSet {
    fn is_empty(&self) -> bool {
        self.enabled.is_empty() && self.disabled.is_empty()
    }

    fn disables(&self, name: &str) -> bool {
        self.disabled
            .iter()
            .any(|p| p.name == name || p.name == "*")
    }

    fn enabled(&self, name: &str) -> Option<&PluginRef> {
        self.enabled.iter().find(|p| p.name == name)
    }
}

/// A plugin named in a set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PluginRef {
    /// The plugin's name.
    pub name: String,
    /// Its score weight (0: the default).
    #[serde(skip_serializing_if = "is_zero")]
    pub weight: i32,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// Arguments of one plugin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PluginConfig {
    /// The plugin's name.
    pub name: String,
    /// Its arguments (`kind: <Plugin>Args`).
    pub args: Value,
}

/// The extension points a plugin implements, in the sense of [`DEFAULT_PLUGINS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Points {
    /// Filter (with PreFilter).
    pub filter: bool,
    /// Score (with PreScore).
    pub score: bool,
    /// PostFilter (preemption).
    pub post_filter: bool,
    /// PreEnqueue (scheduling gates).
    pub pre_enqueue: bool,
    /// Reserve.
    pub reserve: bool,
    /// PreBind.
    pub pre_bind: bool,
    /// Bind.
    pub bind: bool,
}

/// Every upstream in-tree plugin of the default set, with its multiPoint weight, the points
/// Capstan runs it at, and whether Capstan has built it. Plugins that act at other points
/// (PrioritySort, DefaultBinder) are built into the scheduling loop.
pub const DEFAULT_PLUGINS: &[(&str, i32, Points, bool)] = &[
    ("SchedulingGates", 0, PRE_ENQUEUE, true),
    ("PrioritySort", 0, NONE, true),
    ("NodeUnschedulable", 0, FILTER, true),
    ("NodeName", 0, FILTER, true),
    ("TaintToleration", 3, BOTH, true),
    ("NodeAffinity", 2, BOTH, true),
    ("NodePorts", 0, FILTER, true),
    ("NodeResourcesFit", 1, BOTH, true),
    ("VolumeRestrictions", 0, FILTER, true),
    ("NodeVolumeLimits", 0, FILTER, true),
    ("VolumeBinding", 0, VOLUME_BINDING, true),
    ("VolumeZone", 0, FILTER, true),
    ("PodTopologySpread", 2, BOTH, true),
    ("InterPodAffinity", 2, BOTH, true),
    ("DynamicResources", 0, DYNAMIC_RESOURCES, true),
    ("DefaultPreemption", 0, POST_FILTER, true),
    ("NodeResourcesBalancedAllocation", 1, SCORE, true),
    ("ImageLocality", 1, SCORE, true),
    ("DefaultBinder", 0, BIND, true),
];

const NONE: Points = Points {
    filter: false,
    score: false,
    post_filter: false,
    pre_enqueue: false,
    reserve: false,
    pre_bind: false,
    bind: false,
};
const VOLUME_BINDING: Points = Points {
    filter: true,
    reserve: true,
    pre_bind: true,
    ..NONE
};
/// DynamicResources' PreEnqueue is not built: pods waiting for their claims are held by its
/// PreFilter.
const DYNAMIC_RESOURCES: Points = Points {
    filter: true,
    post_filter: true,
    reserve: true,
    pre_bind: true,
    ..NONE
};
const BIND: Points = Points { bind: true, ..NONE };
const PRE_ENQUEUE: Points = Points {
    pre_enqueue: true,
    ..NONE
};
const FILTER: Points = Points {
    filter: true,
    ..NONE
};
const SCORE: Points = Points {
    score: true,
    ..NONE
};
const BOTH: Points = Points {
    filter: true,
    score: true,
    ..NONE
};
const POST_FILTER: Points = Points {
    post_filter: true,
    ..NONE
};

fn known(name: &str) -> Option<&'static (&'static str, i32, Points, bool)> {
    DEFAULT_PLUGINS.iter().find(|p| p.0 == name)
}

/// The plugins a profile runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EffectivePlugins {
    /// Filter plugins, in order.
    pub filter: Vec<String>,
    /// Score plugins with their weights, in order.
    pub score: Vec<(String, i64)>,
    /// PostFilter plugins, in order.
    pub post_filter: Vec<String>,
    /// PreEnqueue plugins, in order.
    pub pre_enqueue: Vec<String>,
    /// Reserve plugins, in order.
    pub reserve: Vec<String>,
    /// PreBind plugins, in order.
    pub pre_bind: Vec<String>,
    /// Bind plugins, in order.
    pub bind: Vec<String>,
    /// Enabled plugins Capstan has not built yet (they are skipped, with a warning).
    pub not_built: Vec<String>,
}

impl Default for Configuration {
    fn default() -> Self {
        Self {
            api_version: V1.into(),
            kind: KIND.into(),
            parallelism: 16,
            leader_election: LeaderElection::default(),
            client_connection: ClientConnection::default(),
            enable_profiling: true,
            enable_contention_profiling: true,
            percentage_of_nodes_to_score: None,
            pod_initial_backoff_seconds: 1,
            pod_max_backoff_seconds: 10,
            profiles: Vec::new(),
            extenders: Vec::new(),
            delay_cache_until_active: false,
            insecure_address: None,
        }
    }
}

impl Configuration {
    /// Reads a configuration file (YAML or JSON, v1 or v1beta1), fills in the defaults and
    /// validates it; also returns warnings about what was converted or dropped.
    pub fn load(text: &str) -> Result<(Self, Vec<String>)> {
        let doc: Value = serde_saphyr::from_str(text)
            .map_err(|e| Error::Decode(format!("the configuration is not YAML: {e}")))?;
        let Value::Object(_) = doc else {
            return Err(Error::Decode(
                "the configuration must be a KubeSchedulerConfiguration object".into(),
            ));
        };
        let kind = doc["kind"].as_str().unwrap_or("");
        let api_version = doc["apiVersion"].as_str().unwrap_or("");
        if kind != KIND {
            return Err(Error::Decode(format!(
                "kind: {kind:?} is not {KIND} (apiVersion {api_version:?})"
            )));
        }
        let mut warnings = Vec::new();
        let mut insecure_address = None;
        let doc = match api_version {
            V1 => doc,
            V1BETA1 => convert_v1beta1(doc, &mut insecure_address, &mut warnings)?,
            other => {
                return Err(Error::Decode(format!(
                    "apiVersion: no {KIND} is known for version {other:?} (use {V1} or {V1BETA1})"
                )));
            }
        };
        let mut config: Self = serde_json::from_value(doc)
            .map_err(|e| Error::Decode(format!("strict decoding error: {e}")))?;
        config.insecure_address = insecure_address;
        config.complete()?;
        config.validate()?;
        Ok((config, warnings))
    }

    /// The configuration in YAML, as `--write-config-to` writes it.
    pub fn to_yaml(&self) -> String {
        let doc = serde_json::to_value(self).unwrap_or(Value::Null);
        serde_saphyr::to_string(&doc).unwrap_or_default()
    }

    /// Fills in what upstream's defaulting fills in: one default profile, and every default
    /// plugin's arguments with their defaults.
    pub fn complete(&mut self) -> Result<()> {
        self.api_version = V1.into();
        self.kind = KIND.into();
        if self.profiles.is_empty() {
            self.profiles.push(ProfileConfig::default());
        }
        for (i, profile) in self.profiles.iter_mut().enumerate() {
            for (j, pc) in profile.plugin_config.iter_mut().enumerate() {
                let field = format!("profiles[{i}].pluginConfig[{j}].args");
                pc.args = args::complete(&pc.name, &pc.args, &field)?;
            }
            for name in args::WITH_ARGS {
                let enabled = profile.plugins.multi_point.enabled(name).is_some()
                    || known(name).is_some() && !profile.plugins.multi_point.disables(name);
                if enabled && !profile.plugin_config.iter().any(|pc| pc.name == *name) {
                    profile.plugin_config.push(PluginConfig {
                        name: name.to_string(),
                        args: args::complete(name, &Value::Null, "")?,
                    });
                }
            }
        }
        Ok(())
    }

    /// Checks the configuration as upstream's validation does; the error names the field.
    pub fn validate(&self) -> Result<()> {
        if self.parallelism <= 0 {
            return Err(Error::invalid(
                "parallelism",
                format!(
                    "Invalid value: {}: should be an integer value greater than zero",
                    self.parallelism
                ),
            ));
        }
        check_percentage(
            "percentageOfNodesToScore",
            self.percentage_of_nodes_to_score,
        )?;
        if self.pod_initial_backoff_seconds <= 0 {
            return Err(Error::invalid(
                "podInitialBackoffSeconds",
                format!(
                    "Invalid value: {}: must be greater than 0",
                    self.pod_initial_backoff_seconds
                ),
            ));
        }
        if self.pod_max_backoff_seconds < self.pod_initial_backoff_seconds {
            return Err(Error::invalid(
                "podMaxBackoffSeconds",
                format!(
                    "Invalid value: {}: must be greater than or equal to PodInitialBackoffSeconds",
                    self.pod_max_backoff_seconds
                ),
            ));
        }
        if self.client_connection.qps < 0.0 || self.client_connection.burst < 0 {
            return Err(Error::invalid(
                "clientConnection",
                "qps and burst must not be negative",
            ));
        }
        let le = &self.leader_election;
        if le.leader_elect {
            check_leader_election(le)?;
        }
        if !self.extenders.is_empty() {
            return Err(Error::invalid(
                "extenders",
                "scheduler extenders are not supported by Capstan",
            ));
        }
        let mut names = std::collections::HashSet::new();
        for (i, p) in self.profiles.iter().enumerate() {
            let field = format!("profiles[{i}]");
            if p.scheduler_name.is_empty() {
                return Err(Error::invalid(
                    format!("{field}.schedulerName"),
                    "Required value",
                ));
            }
            if !names.insert(&p.scheduler_name) {
                return Err(Error::invalid(
                    format!("{field}.schedulerName"),
                    format!("Duplicate value: {:?}", p.scheduler_name),
                ));
            }
            check_percentage(
                &format!("{field}.percentageOfNodesToScore"),
                p.percentage_of_nodes_to_score,
            )?;
            effective_plugins(&p.plugins, &field)?;
            let mut seen = std::collections::HashSet::new();
            for (j, pc) in p.plugin_config.iter().enumerate() {
                if !seen.insert(&pc.name) {
                    return Err(Error::invalid(
                        format!("{field}.pluginConfig[{j}]"),
                        format!("Duplicate value: {:?}", pc.name),
                    ));
                }
                args::validate(
                    &pc.name,
                    &pc.args,
                    &format!("{field}.pluginConfig[{j}].args"),
                )?;
            }
        }
        Ok(())
    }

    /// The share of nodes to evaluate for `profile` (0: adaptive).
    pub fn percentage_for(&self, profile: &ProfileConfig) -> u32 {
        profile
            .percentage_of_nodes_to_score
            .or(self.percentage_of_nodes_to_score)
            .unwrap_or(0)
            .clamp(0, 100) as u32
    }
}

/// Upstream's leader-election timing rules.
pub fn check_leader_election(le: &LeaderElection) -> Result<()> {
    if capstan_client::LockKind::parse(&le.resource_lock).is_none() {
        return Err(Error::invalid(
            "leaderElection.resourceLock (--leader-elect-resource-lock)",
            format!(
                "Unsupported value: {:?}: supported values: \"leases\", \"endpoints\", \"configmaps\", \"endpointsleases\", \"configmapsleases\"",
                le.resource_lock
            ),
        ));
    }
    let text = |d: &GoDuration| go_duration(d.0.as_nanos() as i64);
    if le.lease_duration.0 <= le.renew_deadline.0 {
        return Err(Error::invalid(
            "leaderElection.leaseDuration (--leader-elect-lease-duration)",
            format!(
                "Invalid value: {:?}: must be greater than renewDeadline ({})",
                text(&le.lease_duration),
                text(&le.renew_deadline)
            ),
        ));
    }
    if le.renew_deadline.0.as_secs_f64() <= le.retry_period.0.as_secs_f64() * 1.2 {
        return Err(Error::invalid(
            "leaderElection.renewDeadline (--leader-elect-renew-deadline)",
            format!(
                "Invalid value: {:?}: must be greater than 1.2 × retryPeriod ({})",
                text(&le.renew_deadline),
                text(&le.retry_period)
            ),
        ));
    }
    if le.resource_name.is_empty() || le.resource_namespace.is_empty() {
        return Err(Error::invalid(
            "leaderElection.resourceName",
            "the lock's name and namespace are required",
        ));
    }
    Ok(())
}

fn check_percentage(field: &str, value: Option<i32>) -> Result<()> {
    match value {
        Some(v) if !(0..=100).contains(&v) => Err(Error::invalid(
            field,
            format!("Invalid value: {v}: not in valid range [0-100]"),
        )),
        _ => Ok(()),
    }
}

/// The filter and score plugins `plugins` amount to, on top of the default multiPoint set:
/// a point's own enabled entries that override multiPoint ones come first, then multiPoint
/// plugins not disabled at the point, then the point's other entries.
pub fn effective_plugins(plugins: &Plugins, field: &str) -> Result<EffectivePlugins> {
    for (point, set) in plugins.points() {
        for (k, p) in set.enabled.iter().enumerate() {
            let Some((_, _, points, _)) = known(&p.name) else {
                return Err(Error::invalid(
                    format!("{field}.plugins.{point}.enabled[{k}]"),
                    format!("plugin {:?} does not exist", p.name),
                ));
            };
            let fits = match point {
                "filter" | "preFilter" => points.filter,
                "score" | "preScore" => points.score,
                "postFilter" => points.post_filter,
                "preEnqueue" => points.pre_enqueue,
                "reserve" => points.reserve,
                "preBind" => points.pre_bind,
                "bind" => points.bind,
                "multiPoint" => true,
                // Points Capstan runs only through built-in plugins: accept the defaults'
                // own names there.
                _ => DEFAULT_PLUGINS.iter().any(|d| d.0 == p.name),
            };
            if !fits {
                return Err(Error::invalid(
                    format!("{field}.plugins.{point}.enabled[{k}]"),
                    format!("plugin {:?} does not extend the {point} point", p.name),
                ));
            }
            if !(0..=100).contains(&p.weight) {
                return Err(Error::invalid(
                    format!("{field}.plugins.{point}.enabled[{k}].weight"),
                    format!("Invalid value: {}: not in valid range [0-100]", p.weight),
                ));
            }
        }
    }
    // The defaults, less what multiPoint disables, with multiPoint's own entries replacing
    // or following them.
    let multi = &plugins.multi_point;
    let mut multi_enabled: Vec<(String, i32)> = DEFAULT_PLUGINS
        .iter()
        .filter(|(name, ..)| !multi.disables(name))
        .map(|(name, weight, ..)| {
            let weight = multi
                .enabled(name)
                .map_or(*weight, |p| if p.weight > 0 { p.weight } else { *weight });
            (name.to_string(), weight)
        })
        .collect();
    for p in &multi.enabled {
        if !multi_enabled.iter().any(|(n, _)| *n == p.name) {
            multi_enabled.push((p.name.clone(), p.weight));
        }
    }
    let expand = |set: &PluginSet, capable: fn(&Points) -> bool| -> Vec<(String, i32)> {
        let in_multi = |name: &str| multi_enabled.iter().any(|(n, _)| n == name);
        let mut out: Vec<(String, i32)> = set
            .enabled
            .iter()
            .filter(|p| in_multi(&p.name))
            .map(|p| {
                let weight = if p.weight > 0 {
                    p.weight
                } else {
                    multi_enabled
                        .iter()
                        .find(|(n, _)| *n == p.name)
                        .map_or(0, |(_, w)| *w)
                };
                (p.name.clone(), weight)
            })
            .collect();
        for (name, weight) in &multi_enabled {
            let capable = known(name).is_some_and(|k| capable(&k.2));
            if capable && !set.disables(name) && set.enabled(name).is_none() {
                out.push((name.clone(), *weight));
            }
        }
        for p in &set.enabled {
            if !in_multi(&p.name) {
                out.push((p.name.clone(), p.weight));
            }
        }
        out
    };
    let filter = expand(&plugins.filter, |p| p.filter);
    let score = expand(&plugins.score, |p| p.score);
    let post_filter = expand(&plugins.post_filter, |p| p.post_filter);
    let pre_enqueue = expand(&plugins.pre_enqueue, |p| p.pre_enqueue);
    let names = |list: Vec<(String, i32)>| -> Vec<String> {
        list.into_iter()
            .map(|(n, _)| n)
            .filter(|n| known(n).is_some_and(|k| k.3))
            .collect()
    };
    let reserve = names(expand(&plugins.reserve, |p| p.reserve));
    let pre_bind = names(expand(&plugins.pre_bind, |p| p.pre_bind));
    let bind = names(expand(&plugins.bind, |p| p.bind));
    if bind.is_empty() {
        return Err(Error::invalid(
            format!("{field}.plugins.bind"),
            "at least one bind plugin is needed",
        ));
    }
    let mut effective = EffectivePlugins::default();
    for (name, _) in filter.iter().chain(&score).chain(&multi_enabled) {
        let built = known(name).is_some_and(|k| k.3);
        if !built && !effective.not_built.contains(name) {
            effective.not_built.push(name.clone());
        }
    }
    let built = |name: &String| known(name).is_some_and(|k| k.3);
    effective.filter = filter.into_iter().map(|(n, _)| n).filter(built).collect();
    effective.reserve = reserve;
    effective.pre_bind = pre_bind;
    effective.bind = bind;
    effective.pre_enqueue = pre_enqueue
        .into_iter()
        .map(|(n, _)| n)
        .filter(built)
        .collect();
    effective.post_filter = post_filter
        .into_iter()
        .map(|(n, _)| n)
        .filter(built)
        .collect();
    effective.score = score
        .into_iter()
        .filter(|(n, _)| built(n))
        // A weight of 0 means the default weight of 1, as upstream.
        .map(|(n, w)| (n, i64::from(w.max(1))))
        .collect();
    Ok(effective)
}

/// Converts a v1beta1 document into v1: the resource-scoring plugins of that era become
/// NodeResourcesFit scoring strategies, each profile's plugin sets keep their meaning on top
/// of that era's default weights, and the insecure serving address (gone from v1) is kept
/// aside.
fn convert_v1beta1(
    mut doc: Value,
    insecure_address: &mut Option<String>,
    warnings: &mut Vec<String>,
) -> Result<Value> {
    let top = doc.as_object_mut().expect("checked to be an object");
    top.insert("apiVersion".into(), V1.into());
    let healthz = top.remove("healthzBindAddress");
    let metrics = top.remove("metricsBindAddress");
    *insecure_address = healthz
        .as_ref()
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    if metrics.is_some() && metrics != healthz {
        warnings.push(format!(
            "metricsBindAddress ({}) differs from healthzBindAddress: both are served on healthzBindAddress",
            metrics.unwrap_or_default()
        ));
    }
    let profiles = top
        .entry("profiles")
        .or_insert_with(|| json!([{"schedulerName": DEFAULT_SCHEDULER_NAME}]));
    let Some(profiles) = profiles.as_array_mut() else {
        return Err(Error::Decode("profiles: expected a list".into()));
    };
    for profile in profiles {
        convert_v1beta1_profile(profile, warnings)?;
    }
    Ok(doc)
}

/// v1beta1's default score weights (they differ from v1's multiPoint weights).
const V1BETA1_SCORE_WEIGHTS: &[(&str, i32)] = &[
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("InterPodAffinity", 1),
    ("NodeResourcesFit", 1),
    ("NodeAffinity", 1),
    ("PodTopologySpread", 2),
    ("TaintToleration", 1),
];

/// Resource-scoring plugins of v1beta1 and the NodeResourcesFit strategy each became.
const V1BETA1_SCORING: &[(&str, &str)] = &[
    ("NodeResourcesLeastAllocated", "LeastAllocated"),
    ("NodeResourcesMostAllocated", "MostAllocated"),
    ("RequestedToCapacityRatio", "RequestedToCapacityRatio"),
];

/// v1beta1 plugins that v1 removed: dropped with a warning.
const V1BETA1_REMOVED: &[&str] = &[
    "NodePreferAvoidPods",
    "SelectorSpread",
    "NodeLabel",
    "ServiceAffinity",
];

fn convert_v1beta1_profile(profile: &mut Value, warnings: &mut Vec<String>) -> Result<()> {
    let Some(profile) = profile.as_object_mut() else {
        return Err(Error::Decode("profiles[]: expected an object".into()));
    };
    let mut strategy: Option<(&str, Value)> = None;
    let mut plugins = profile.remove("plugins").unwrap_or_else(|| json!({}));
    if let Some(points) = plugins.as_object_mut() {
        for (point, set) in points.iter_mut() {
            for list in ["enabled", "disabled"] {
                let Some(entries) = set.get_mut(list).and_then(Value::as_array_mut) else {
                    continue;
                };
                let mut kept = Vec::new();
                for mut entry in std::mem::take(entries) {
                    let name = entry["name"].as_str().unwrap_or("").to_string();
                    if let Some((_, kind)) = V1BETA1_SCORING.iter().find(|(n, _)| *n == name) {
                        if list == "enabled" {
                            strategy = Some((kind, entry["weight"].clone()));
                        }
                        entry["name"] = "NodeResourcesFit".into();
                        if list == "disabled" && point == "score" {
                            // Disabling the scoring plugin of that era disables scoring
                            // by resources.
                            kept.push(entry);
                        } else if list == "enabled" {
                            kept.push(entry);
                        }
                        continue;
                    }
                    if V1BETA1_REMOVED.contains(&name.as_str()) {
                        warnings.push(format!(
                            "plugins.{point}.{list}: {name} was removed after v1beta1 and is ignored"
                        ));
                        continue;
                    }
                    kept.push(entry);
                }
                *entries = kept;
            }
        }
    }
    // That era's score weights, expressed as score-point entries, before the profile's own.
    let score = plugins
        .as_object_mut()
        .map(|p| p.entry("score").or_insert_with(|| json!({})));
    if let Some(score) = score {
        let disabled: Vec<String> = score["disabled"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["name"].as_str().map(str::to_string))
            .collect();
        let all_disabled = disabled.iter().any(|n| n == "*");
        let own: Vec<Value> = score["enabled"].as_array().cloned().unwrap_or_default();
        let mut enabled: Vec<Value> = Vec::new();
        if !all_disabled {
            for (name, weight) in V1BETA1_SCORE_WEIGHTS {
                if !disabled.iter().any(|d| d == name) && !own.iter().any(|p| p["name"] == *name) {
                    enabled.push(json!({"name": name, "weight": weight}));
                }
            }
        }
        enabled.extend(own);
        score["enabled"] = Value::Array(enabled);
        // Everything else of the v1 multiPoint set is disabled at the score point, so that
        // only v1beta1's score plugins run.
        score["disabled"] = json!([{"name": "*"}]);
    }
    profile.insert("plugins".into(), plugins);
    // Plugin arguments: the scoring plugins' become NodeResourcesFit's scoringStrategy.
    let mut configs: Vec<Value> = profile
        .remove("pluginConfig")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let mut fit_strategy: Map<String, Value> = Map::new();
    if let Some((kind, _)) = strategy {
        fit_strategy.insert("type".into(), kind.into());
    }
    configs.retain(|pc| {
        let name = pc["name"].as_str().unwrap_or("");
        let Some((_, kind)) = V1BETA1_SCORING.iter().find(|(n, _)| *n == name) else {
            return true;
        };
        fit_strategy.insert("type".into(), (*kind).into());
        if let Some(resources) = pc["args"].get("resources") {
            fit_strategy.insert("resources".into(), resources.clone());
        }
        if let Some(shape) = pc["args"].get("shape") {
            fit_strategy.insert("requestedToCapacityRatio".into(), json!({"shape": shape}));
        }
        false
    });
    for pc in &mut configs {
        if let Some(args) = pc.get_mut("args").and_then(Value::as_object_mut) {
            args.remove("apiVersion");
        }
    }
    if !fit_strategy.is_empty() {
        match configs
            .iter_mut()
            .find(|pc| pc["name"] == "NodeResourcesFit")
        {
            Some(pc) => {
                if !pc["args"].is_object() {
                    pc["args"] = json!({});
                }
                pc["args"]["scoringStrategy"] = Value::Object(fit_strategy);
            }
            None => configs.push(json!({"name": "NodeResourcesFit",
                "args": {"scoringStrategy": Value::Object(fit_strategy)}})),
        }
    }
    profile.insert("pluginConfig".into(), Value::Array(configs));
    Ok(())
}

pub mod args;
pub mod policy;

#[cfg(test)]
mod tests;
