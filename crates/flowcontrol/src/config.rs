//! The configuration in effect: FlowSchemas in matching order, priority levels with their
//! seats, computed from the stored objects (the mandatory ones supplied when missing).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::flowcontrol::v1 as api;

use capstan_meta::RequestAttributes;

use crate::Classification;
use crate::classify::{Distinguisher, Rule};
use crate::metrics::{FlowSeries, Metrics};

/// Queuing of a limited level (`limitResponse.type: Queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queuing {
    /// Number of queues.
    pub queues: u32,
    /// Queues dealt to each flow.
    pub hand_size: u32,
    /// Requests one queue may hold.
    pub queue_length_limit: u32,
}

/// A priority level's seats.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelConfig {
    /// The PriorityLevelConfiguration's name.
    pub name: Arc<str>,
    /// Its UID (the `X-Kubernetes-PF-PriorityLevel-UID` header).
    pub uid: Arc<str>,
    /// Exempt levels run every request at once.
    pub exempt: bool,
    /// Nominal concurrency shares.
    pub shares: u32,
    /// Seats of the server's total this level is entitled to.
    pub nominal: u32,
    /// Of those, how many other levels may borrow while idle.
    pub lendable: u32,
    /// How many seats beyond its nominal ones the level may borrow (`None`: no limit).
    pub borrow_limit: Option<u32>,
    /// `None` rejects at once when no seat is free.
    pub queuing: Option<Queuing>,
}

/// A compiled FlowSchema.
pub(crate) struct Schema {
    pub name: Arc<str>,
    pub precedence: i32,
    pub level: usize,
    pub distinguisher: Distinguisher,
    pub rules: Vec<Rule>,
    /// Whether a rule has resource rules, and whether one has non-resource rules.
    pub resource_rules: bool,
    pub non_resource_rules: bool,
    pub series: Arc<FlowSeries>,
    /// What a request classified here is told.
    pub classification: Arc<Classification>,
}

/// The configuration requests are classified and dispatched by.
#[derive(Default)]
pub(crate) struct Config {
    pub schemas: Vec<Schema>,
    pub levels: Vec<LevelConfig>,
    /// The dispatch slot of each level (set when the configuration is installed).
    pub slots: Vec<usize>,
}

/// The outcome of classification.
pub(crate) struct Classified<'c> {
    pub schema: &'c Schema,
    pub level: &'c LevelConfig,
    /// The level's dispatch slot when the configuration was installed.
    pub slot: usize,
}

impl Config {
    /// Compiles `schemas` and `levels` for a server of `server_seats` seats; missing mandatory
    /// objects are taken from [`crate::bootstrap`], dangling schemas are left out.
    pub fn build(
        schemas: &BTreeMap<String, api::FlowSchema>,
        levels: &BTreeMap<String, api::PriorityLevelConfiguration>,
        server_seats: u32,
        metrics: &Metrics,
    ) -> Config {
        let mandatory_levels = crate::bootstrap::mandatory_priority_levels();
        let mut all_levels: Vec<&api::PriorityLevelConfiguration> = levels.values().collect();
        for m in &mandatory_levels {
            if !levels.contains_key(m.metadata.name.as_deref().unwrap_or_default()) {
                all_levels.push(m);
            }
        }
        let mut compiled_levels: Vec<LevelConfig> = all_levels.iter().map(|l| level(l)).collect();
        let total_shares: u64 = compiled_levels.iter().map(|l| u64::from(l.shares)).sum();
        for l in &mut compiled_levels {
            let nominal = if total_shares == 0 {
                0
            } else {
                (u64::from(server_seats) * u64::from(l.shares)).div_ceil(total_shares) as u32
            };
            let lendable_pct = l.lendable;
            let borrow_pct = l.borrow_limit;
            l.nominal = nominal;
            l.lendable = percent(nominal, lendable_pct);
            l.borrow_limit = borrow_pct.map(|p| percent(nominal, p));
        }
        metrics.set_levels(&compiled_levels, server_seats);

        let mandatory_schemas = crate::bootstrap::mandatory_flow_schemas();
        let mut all_schemas: Vec<&api::FlowSchema> = schemas.values().collect();
        for m in &mandatory_schemas {
            if !schemas.contains_key(m.metadata.name.as_deref().unwrap_or_default()) {
                all_schemas.push(m);
            }
        }
        let mut compiled: Vec<Schema> = all_schemas
            .into_iter()
            .filter_map(|fs| {
                let spec = fs.spec.as_ref()?;
                let level = compiled_levels
                    .iter()
                    .position(|l| *l.name == *spec.priority_level_configuration.name)?;
                let name: Arc<str> = fs.metadata.name.as_deref().unwrap_or_default().into();
                let uid: Arc<str> = fs.metadata.uid.as_deref().unwrap_or_default().into();
                let level_config = &compiled_levels[level];
                let series = Arc::new(metrics.flow(&name, &level_config.name));
                let rules: Vec<Rule> = spec.rules.iter().flatten().map(Rule::from_api).collect();
                Some(Schema {
                    classification: Arc::new(Classification {
                        schema: name.clone(),
                        schema_uid: uid.clone(),
                        level: level_config.name.clone(),
                        level_uid: level_config.uid.clone(),
                        exempt: level_config.exempt,
                    }),
                    resource_rules: rules.iter().any(Rule::has_resource_rules),
                    non_resource_rules: rules.iter().any(Rule::has_non_resource_rules),
                    precedence: spec.matching_precedence.unwrap_or(1000),
                    level,
                    distinguisher: match spec
                        .distinguisher_method
                        .as_ref()
                        .map(|d| d.type_.as_str())
                    {
                        Some("ByUser") => Distinguisher::ByUser,
                        Some("ByNamespace") => Distinguisher::ByNamespace,
                        _ => Distinguisher::None,
                    },
                    rules,
                    series,
                    name,
                })
            })
            .collect();
        compiled.sort_by(|a, b| a.precedence.cmp(&b.precedence).then(a.name.cmp(&b.name)));
        Config {
            schemas: compiled,
            levels: compiled_levels,
            slots: Vec::new(),
        }
    }

    /// The schema and level of `req`; `None` only when no schema matches (the mandatory
    /// catch-all matches every user, so only a request without the usual groups).
    pub fn classify(&self, req: &RequestAttributes) -> Option<Classified<'_>> {
        let schema = self.schemas.iter().find(|s| {
            let kind = if req.resource_request {
                s.resource_rules
            } else {
                s.non_resource_rules
            };
            kind && s.rules.iter().any(|r| r.matches(req))
        })?;
        Some(Classified {
            schema,
            level: &self.levels[schema.level],
            slot: self.slots.get(schema.level).copied().unwrap_or(usize::MAX),
        })
    }
}

fn percent(nominal: u32, pct: u32) -> u32 {
    ((u64::from(nominal) * u64::from(pct) + 50) / 100) as u32
}

/// A level with its shares and percentages (turned into seats by [`Config::build`]).
fn level(l: &api::PriorityLevelConfiguration) -> LevelConfig {
    let spec = l.spec.as_ref();
    let name: Arc<str> = l.metadata.name.as_deref().unwrap_or_default().into();
    let uid: Arc<str> = l.metadata.uid.as_deref().unwrap_or_default().into();
    let clamp = |v: Option<i32>, default: u32| v.map_or(default, |v| v.max(0) as u32);
    if spec.is_some_and(|s| s.type_ == "Exempt") {
        let exempt = spec.and_then(|s| s.exempt.as_ref());
        return LevelConfig {
            name,
            uid,
            exempt: true,
            shares: clamp(exempt.and_then(|e| e.nominal_concurrency_shares), 0),
            nominal: 0,
            lendable: clamp(exempt.and_then(|e| e.lendable_percent), 0),
            borrow_limit: Some(0),
            queuing: None,
        };
    }
    let limited = spec.and_then(|s| s.limited.as_ref());
    let response = limited.and_then(|l| l.limit_response.as_ref());
    let queuing = match response {
        Some(r) if r.type_ == "Reject" => None,
        _ => {
            let q = response.and_then(|r| r.queuing.as_ref());
            Some(Queuing {
                queues: clamp(q.and_then(|q| q.queues), 64).max(1),
                hand_size: clamp(q.and_then(|q| q.hand_size), 8).max(1),
                queue_length_limit: clamp(q.and_then(|q| q.queue_length_limit), 50).max(1),
            })
        }
    };
    LevelConfig {
        name,
        uid,
        exempt: false,
        shares: clamp(limited.and_then(|l| l.nominal_concurrency_shares), 30),
        nominal: 0,
        lendable: clamp(limited.and_then(|l| l.lendable_percent), 0),
        borrow_limit: limited
            .and_then(|l| l.borrowing_limit_percent)
            .map(|p| p.max(0) as u32),
        queuing: queuing.map(|mut q| {
            q.hand_size = q.hand_size.min(q.queues);
            q
        }),
    }
}
