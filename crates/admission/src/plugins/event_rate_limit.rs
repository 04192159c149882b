//! `EventRateLimit`: token buckets on the creation of core Events, per server, namespace,
//! user, or event source and object, as its configuration
//! (`eventratelimit.admission.k8s.io/v1alpha1` `Configuration`) says; beyond a bucket, 429.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use async_trait::async_trait;
use capstan_meta::status::Reason;
use capstan_meta::{ApiError, GroupResource};
use serde::Deserialize;
use serde_json::Value;

use crate::attributes::{Attributes, Operation};
use crate::chain::Plugin;
use crate::error::{Error, Result};

/// Keys each keyed limit remembers unless configured otherwise.
const DEFAULT_CACHE_SIZE: usize = 4096;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Configuration {
    #[serde(rename = "apiVersion")]
    _api_version: Option<String>,
    #[serde(rename = "kind")]
    _kind: Option<String>,
    limits: Vec<LimitConfig>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct LimitConfig {
    #[serde(rename = "type")]
    kind: String,
    qps: i64,
    burst: i64,
    #[serde(default)]
    cache_size: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LimitType {
    Server,
    Namespace,
    User,
    SourceAndObject,
}

impl LimitType {
    fn name(self) -> &'static str {
        match self {
            Self::Server => "Server",
            Self::Namespace => "Namespace",
            Self::User => "User",
            Self::SourceAndObject => "SourceAndObject",
        }
    }
}

/// A token bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// One limit: its buckets by key, the oldest forgotten beyond the cache size.
struct Limit {
    kind: LimitType,
    qps: f64,
    burst: f64,
    cache_size: usize,
    buckets: Mutex<(HashMap<String, Bucket>, VecDeque<String>)>,
}

impl Limit {
    /// Takes a token from the key's bucket; false when it is empty.
    fn take(&self, key: &str, now: Instant) -> bool {
        let mut guard = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let (buckets, order) = &mut *guard;
        if !buckets.contains_key(key) {
            if buckets.len() >= self.cache_size
                && let Some(oldest) = order.pop_front()
            {
                buckets.remove(&oldest);
            }
            order.push_back(key.to_string());
        }
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        let refill = now.saturating_duration_since(bucket.at).as_secs_f64() * self.qps;
        bucket.tokens = (bucket.tokens + refill).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The `EventRateLimit` plugin.
pub struct EventRateLimit {
    limits: Vec<Limit>,
}

fn invalid(reason: String) -> Error {
    Error::Plugin {
        plugin: "EventRateLimit",
        reason,
    }
}

impl EventRateLimit {
    /// The plugin with its configuration (required: at least one limit).
    pub fn new(config: Option<&Value>) -> Result<Self> {
        let Some(config) = config else {
            return Err(invalid(
                "a configuration is required (limits by Server, Namespace, User or SourceAndObject)".into(),
            ));
        };
        let config: Configuration =
            serde_json::from_value(config.clone()).map_err(|e| invalid(e.to_string()))?;
        if config.limits.is_empty() {
            return Err(invalid("limits: must not be empty".into()));
        }
        let mut limits = Vec::new();
        for (i, l) in config.limits.iter().enumerate() {
            let kind = match l.kind.as_str() {
                "Server" => LimitType::Server,
                "Namespace" => LimitType::Namespace,
                "User" => LimitType::User,
                "SourceAndObject" => LimitType::SourceAndObject,
                other => {
                    return Err(invalid(format!(
                        "limits[{i}].type: {other:?} is not one of Server, Namespace, User, SourceAndObject"
                    )));
                }
            };
            if l.qps <= 0 || l.burst <= 0 {
                return Err(invalid(format!(
                    "limits[{i}]: qps and burst must be positive"
                )));
            }
            let cache_size = match l.cache_size {
                None => DEFAULT_CACHE_SIZE,
                Some(n) if n > 0 => n as usize,
                Some(_) => return Err(invalid(format!("limits[{i}].cacheSize: must be positive"))),
            };
            limits.push(Limit {
                kind,
                qps: l.qps as f64,
                burst: l.burst as f64,
                cache_size,
                buckets: Mutex::default(),
            });
        }
        Ok(Self { limits })
    }
}

/// The key of `a` for a limit of `kind`.
fn key(kind: LimitType, a: &Attributes) -> String {
    match kind {
        LimitType::Server => String::new(),
        LimitType::Namespace => a.namespace.clone(),
        LimitType::User => a.user.name.clone(),
        LimitType::SourceAndObject => {
            let e = a.object.as_ref().unwrap_or(&Value::Null);
            let o = &e["involvedObject"];
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            [
                s(&e["source"]["component"]),
                s(&e["source"]["host"]),
                s(&o["kind"]),
                s(&o["namespace"]),
                s(&o["name"]),
                s(&o["uid"]),
                s(&o["apiVersion"]),
            ]
            .join("")
        }
    }
}

#[async_trait]
impl Plugin for EventRateLimit {
    fn name(&self) -> &'static str {
        "EventRateLimit"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create
            && resource.group.is_empty()
            && resource.resource == "events"
            && subresource.is_empty()
    }

    fn validation_reads_objects(&self) -> bool {
        self.limits
            .iter()
            .any(|l| l.kind == LimitType::SourceAndObject)
    }

    async fn validate(&self, a: &Attributes) -> std::result::Result<(), ApiError> {
        if a.dry_run {
            return Ok(());
        }
        let now = Instant::now();
        for limit in &self.limits {
            let key = key(limit.kind, a);
            if !limit.take(&key, now) {
                return Err(ApiError::new(
                    Reason::TooManyRequests,
                    format!(
                        "Too many requests: limit reached on type {} for key {key}",
                        limit.kind.name()
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn buckets_refill_at_their_rate_and_forget_old_keys() {
        let limit = Limit {
            kind: LimitType::Namespace,
            qps: 2.0,
            burst: 3.0,
            cache_size: 2,
            buckets: Mutex::default(),
        };
        let t0 = Instant::now();
        assert!((0..3).all(|_| limit.take("a", t0)));
        assert!(!limit.take("a", t0));
        assert!(limit.take("a", t0 + std::time::Duration::from_millis(500)));
        assert!(!limit.take("a", t0 + std::time::Duration::from_millis(500)));
        // Two more keys push "a" out; it comes back with a full bucket.
        assert!(limit.take("b", t0) && limit.take("c", t0));
        assert!((0..3).all(|_| limit.take("a", t0)));
    }

    #[test]
    fn the_configuration_is_checked() {
        assert!(EventRateLimit::new(None).is_err());
        let bad = json!({"limits": [{"type": "Cluster", "qps": 1, "burst": 1}]});
        let err = EventRateLimit::new(Some(&bad)).err().expect("refused");
        assert!(err.to_string().contains("limits[0].type"), "{err}");
        let ok = json!({"apiVersion": "eventratelimit.admission.k8s.io/v1alpha1", "kind": "Configuration",
            "limits": [{"type": "Server", "qps": 10, "burst": 20}, {"type": "SourceAndObject", "qps": 1, "burst": 5, "cacheSize": 100}]});
        let plugin = EventRateLimit::new(Some(&ok)).unwrap();
        assert!(plugin.validation_reads_objects());
    }
}
