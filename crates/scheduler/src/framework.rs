//! The plugin framework: filters decide which nodes can take a pod, scores rank those that
//! can, and a profile runs its plugins in order and picks the node. A pod that fits nowhere
//! gets upstream's summary of why (`0/3 nodes are available: 1 Insufficient cpu, ...`).

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Pod;

use crate::cache::{Cache, HostPort, NodeInfo, PlacedPod, host_ports, pod_key};
use crate::resources::{Resources, pod_requests};

/// The highest score a plugin gives a node.
pub const MAX_NODE_SCORE: i64 = 100;

/// What plugins compute once per scheduling attempt (upstream's CycleState), one value per
/// type: each plugin keeps its own state type.
#[derive(Default)]
pub struct CycleState {
    values: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for CycleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleState")
            .field("values", &self.values.len())
            .finish()
    }
}

/// A plugin's per-attempt state, as PreFilter and PreScore return it.
pub type StateValue = Box<dyn Any + Send + Sync>;

impl CycleState {
    /// Keeps `value` for the rest of the attempt.
    pub fn insert(&mut self, value: StateValue) {
        self.values.insert((*value).type_id(), value);
    }

    /// The value of type `T`, if a plugin stored one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.values.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// The value of type `T`, to change it.
    pub fn get_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.values.get_mut(&TypeId::of::<T>())?.downcast_mut()
    }

    /// Forgets everything (a new attempt).
    pub fn clear(&mut self) {
        self.values.clear();
    }
}

/// A pod with what the plugins read from it often, computed once, and the attempt's state.
#[derive(Debug)]
pub struct PodInfo {
    /// The pod.
    pub pod: Pod,
    /// `namespace/name`.
    pub key: String,
    /// Its requests.
    pub requests: Resources,
    /// The host ports it asks for.
    pub ports: Vec<HostPort>,
    /// What the plugins computed for the current attempt.
    pub state: CycleState,
}

impl PodInfo {
    /// Reads `pod`.
    pub fn new(pod: Pod) -> Self {
        Self {
            key: pod_key(&pod),
            requests: pod_requests(&pod),
            ports: host_ports(&pod),
            state: CycleState::default(),
            pod,
        }
    }

    /// The pod's namespace.
    pub fn namespace(&self) -> &str {
        self.pod.metadata.namespace.as_deref().unwrap_or("")
    }

    /// The pod's labels.
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.pod.metadata.labels.as_ref()
    }
}

/// Why a node cannot take a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The reason as upstream words it (`Insufficient cpu`); most are fixed words, which
    /// a rejection then carries without allocating.
    pub reason: Cow<'static, str>,
    /// Whether preempting other pods could not help.
    pub unresolvable: bool,
    /// Whether the pod waits for something to be created, not for room: it is not an
    /// attempt (no condition, no event), as upstream's PreEnqueue holds such pods.
    pub waiting: bool,
}

impl Rejection {
    /// A rejection preemption might resolve.
    pub fn resolvable(reason: impl Into<Cow<'static, str>>) -> Self {
        Self {
            reason: reason.into(),
            unresolvable: false,
            waiting: false,
        }
    }

    /// A rejection no preemption resolves.
    pub fn unresolvable(reason: impl Into<Cow<'static, str>>) -> Self {
        Self {
            reason: reason.into(),
            unresolvable: true,
            waiting: false,
        }
    }

    /// The pod waits for an object to exist (a PreEnqueue rejection upstream).
    pub fn waiting(reason: impl Into<Cow<'static, str>>) -> Self {
        Self {
            reason: reason.into(),
            unresolvable: true,
            waiting: true,
        }
    }
}

/// A Filter plugin (with its PreFilter stage).
pub trait Filter: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Reads what the filter needs of the whole cluster, once per attempt; the value returned
    /// is kept in the pod's [`CycleState`]. A rejection here rejects every node.
    fn pre_filter(&self, _pod: &PodInfo, _cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        Ok(None)
    }
    /// Ok when `node` can take `pod`.
    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection>;
    /// Updates the PreFilter state for `placed` joining (`added`) or leaving `node`, for
    /// preemption's what-ifs (upstream's AddPod / RemovePod).
    fn update_state(
        &self,
        _pod: &mut PodInfo,
        _placed: &PlacedPod,
        _node: &NodeInfo,
        _added: bool,
    ) {
    }
}

/// A Score plugin (with its PreScore stage).
pub trait Score: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Reads what scoring needs, once per attempt, knowing the feasible nodes; the value
    /// returned is kept in the pod's [`CycleState`].
    fn pre_score(
        &self,
        _pod: &PodInfo,
        _cache: &Cache,
        _feasible: &[&NodeInfo],
    ) -> Option<StateValue> {
        None
    }
    /// The node's raw score for the pod.
    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64;
    /// Brings the raw scores of `nodes` into 0..=MAX_NODE_SCORE (the default: they already
    /// are).
    fn normalize(&self, _pod: &PodInfo, _nodes: &[&NodeInfo], _scores: &mut [i64]) {}
}

/// A pod's priority (0 when unset).
pub fn pod_priority(pod: &Pod) -> i32 {
    pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0)
}

/// A boxed future, for the binding cycle's plugins (called through `dyn`).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// What the binding cycle's plugins reach: the API server and the scheduler's view of the
/// cluster's volumes.
pub trait BindContext: Send + Sync {
    /// The API server's client.
    fn client(&self) -> &capstan_client::Client;
    /// The claims, volumes, classes and CSI nodes as the scheduler knows them now.
    fn volume_index(&self) -> std::sync::Arc<crate::volumes::VolumeIndex>;
    /// The ResourceClaims, DeviceClasses and ResourceSlices as the scheduler knows them now.
    fn dra_index(&self) -> std::sync::Arc<crate::dra::DraIndex>;
    /// Records an event about `pod` (`kind` Normal or Warning) from the scheduler.
    fn record<'a>(
        &'a self,
        pod: &'a Pod,
        kind: &'a str,
        reason: &'a str,
        action: &'a str,
        note: &'a str,
    ) -> BoxFuture<'a, ()>;
}

/// A PostFilter plugin other than preemption (DefaultPreemption is part of the scheduling
/// loop): when no node fits a pod, it may change the cluster so that a later attempt finds
/// one. Its reason joins the pod's unschedulable message, before preemption's.
pub trait PostFilter: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Does its work for `pod`, whose state holds the failed attempt's PreFilter and Filter
    /// results; `Ok` with its reason, `Err` when the work failed.
    fn post_filter<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// A Reserve plugin: once a node is chosen, it claims what the pod needs there (the value
/// returned is kept in the pod's state for the binding cycle); `unreserve` gives it back
/// when the binding cycle fails.
pub trait Reserve: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Claims the pod's needs on `node`; an error fails the attempt.
    fn reserve(&self, pod: &PodInfo, node: &NodeInfo) -> Result<Option<StateValue>, Rejection>;
    /// Gives back what `reserve` claimed.
    fn unreserve(&self, _pod: &PodInfo, _node: &str) {}
    /// Undoes, through the API, what the binding cycle wrote for the pod before it failed
    /// (after `unreserve`).
    fn unreserve_written<'a>(
        &'a self,
        _cx: &'a dyn BindContext,
        _pod: &'a PodInfo,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// What a Permit plugin says about binding a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermitVerdict {
    /// Go on.
    Allow,
    /// Do not bind: the pod goes back to the queue.
    Deny(String),
    /// Ask again (every 100 ms) until it allows or denies, for at most this long.
    Wait(std::time::Duration),
}

/// A Permit plugin: the last word before binding (e.g. waiting for a whole group).
pub trait Permit: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Whether `pod` may be bound to `node` now.
    fn permit(&self, pod: &PodInfo, node: &str) -> PermitVerdict;
}

/// A PreBind plugin: API work that must be done before the pod is bound.
pub trait PreBind: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Does the work; an error fails the binding cycle.
    fn pre_bind<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
        node: &'a str,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// How a Bind plugin ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindOutcome {
    /// The pod is bound.
    Bound,
    /// Not this plugin's pod: the next Bind plugin decides.
    Skip,
    /// The pod is gone, or bound by someone else: nothing more to do.
    Gone,
    /// Binding failed: the pod backs off and is scheduled again.
    Failed(String),
}

/// A Bind plugin.
pub trait Bind: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Binds `pod` to `node`.
    fn bind<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
        node: &'a str,
    ) -> BoxFuture<'a, BindOutcome>;
}

/// A PostBind plugin: told after a pod is bound.
pub trait PostBind: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Learns that `pod` is bound to `node`.
    fn post_bind<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
        node: &'a str,
    ) -> BoxFuture<'a, ()>;
}

/// The plugins of the binding cycle, in order.
#[derive(Default)]
pub struct BindCycle {
    /// Reserve plugins.
    pub reserve: Vec<Box<dyn Reserve>>,
    /// Permit plugins.
    pub permit: Vec<Box<dyn Permit>>,
    /// PreBind plugins.
    pub pre_bind: Vec<Box<dyn PreBind>>,
    /// Bind plugins (the first that does not skip decides).
    pub bind: Vec<Box<dyn Bind>>,
    /// PostBind plugins.
    pub post_bind: Vec<Box<dyn PostBind>>,
}

/// Scales scores so the highest is MAX_NODE_SCORE; `reverse` turns high raw scores into low
/// ones (a count of bad things).
pub fn default_normalize(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().max().unwrap_or(0);
    for s in scores.iter_mut() {
        if max == 0 {
            if reverse {
                *s = MAX_NODE_SCORE;
            }
            continue;
        }
        let scaled = MAX_NODE_SCORE * *s / max;
        *s = if reverse {
            MAX_NODE_SCORE - scaled
        } else {
            scaled
        };
    }
}

/// A pod that fits on no node, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitError {
    /// Nodes considered.
    pub nodes: usize,
    /// Each reason with the number of nodes it rejected.
    pub reasons: BTreeMap<String, usize>,
    /// The nodes rejected only for reasons preemption might resolve.
    pub resolvable_nodes: Vec<String>,
    /// Whether a PreFilter found the pod waiting for an object to exist.
    pub waiting: bool,
}

impl FitError {
    /// `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable.`
    pub fn message(&self) -> String {
        let mut reasons: Vec<String> = self
            .reasons
            .iter()
            .map(|(reason, n)| format!("{n} {reason}"))
            .collect();
        reasons.sort();
        if reasons.is_empty() {
            return format!("0/{} nodes are available.", self.nodes);
        }
        format!(
            "0/{} nodes are available: {}.",
            self.nodes,
            reasons.join(", ")
        )
    }
}

/// Below this many nodes every node is evaluated.
const MIN_FEASIBLE_NODES: usize = 100;

/// How many feasible nodes to find among `all` before scoring (`percentageOfNodesToScore`;
/// 0 is upstream's adaptive default: 50% less 1% per 125 nodes, at least 5%, at least 100).
pub fn feasible_nodes_to_find(percentage: u32, all: usize) -> usize {
    if all < MIN_FEASIBLE_NODES || percentage >= 100 {
        return all;
    }
    let pct = if percentage == 0 {
        (50 - (all / 125) as i64).max(5) as usize
    } else {
        percentage as usize
    };
    (all * pct / 100).max(MIN_FEASIBLE_NODES)
}

/// One scheduling profile: a scheduler name and its plugins.
pub struct Profile {
    /// The `spec.schedulerName` it serves.
    pub scheduler_name: String,
    /// `percentageOfNodesToScore` (0: adaptive).
    pub percentage_of_nodes_to_score: u32,
    /// DefaultPreemption's parameters, when the profile preempts.
    pub preemption: Option<crate::preemption::PreemptionParams>,
    /// The binding cycle's plugins.
    pub bind_cycle: BindCycle,
    /// Whether pods with `spec.schedulingGates` wait (SchedulingGates, PreEnqueue).
    pub scheduling_gates: bool,
    /// PostFilter plugins run before preemption, in order.
    pub post_filters: Vec<Box<dyn PostFilter>>,
    filters: Vec<Box<dyn Filter>>,
    scores: Vec<(Box<dyn Score>, i64)>,
    /// The node the next search for feasible nodes starts at (where the last one stopped).
    next_start: std::sync::Mutex<String>,
}

impl Profile {
    /// A profile running `filters` and weighted `scores`.
    pub fn new(
        scheduler_name: impl Into<String>,
        filters: Vec<Box<dyn Filter>>,
        scores: Vec<(Box<dyn Score>, i64)>,
    ) -> Self {
        Self {
            scheduler_name: scheduler_name.into(),
            percentage_of_nodes_to_score: 0,
            preemption: None,
            bind_cycle: BindCycle {
                bind: vec![Box::new(crate::binding::DefaultBinder)],
                ..Default::default()
            },
            scheduling_gates: true,
            post_filters: Vec::new(),
            filters,
            scores,
            next_start: std::sync::Mutex::default(),
        }
    }

    /// The names of the filter plugins, in order.
    pub fn filter_names(&self) -> Vec<&'static str> {
        self.filters.iter().map(|f| f.name()).collect()
    }

    /// The score plugins with their weights, in order.
    pub fn score_names(&self) -> Vec<(&'static str, i64)> {
        self.scores.iter().map(|(s, w)| (s.name(), *w)).collect()
    }

    /// The node for `pod` among the cache's nodes: PreFilter, then Filter (from where the
    /// previous pod stopped, until enough feasible nodes are found), then PreScore and the
    /// best total weighted score (ties broken at random).
    pub fn select(&self, pod: &mut PodInfo, cache: &Cache) -> Result<String, FitError> {
        pod.state.clear();
        let node_count = cache.node_count();
        for f in &self.filters {
            match f.pre_filter(pod, cache) {
                Ok(Some(value)) => pod.state.insert(value),
                Ok(None) => {}
                Err(r) => {
                    return Err(FitError {
                        nodes: node_count,
                        reasons: [(r.reason.into_owned(), node_count)].into(),
                        resolvable_nodes: Vec::new(),
                        waiting: r.waiting,
                    });
                }
            }
        }
        let wanted = feasible_nodes_to_find(self.percentage_of_nodes_to_score, node_count);
        let start = self
            .next_start
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut next_start = None;
        let mut feasible = Vec::new();
        // Owned only if no node fits (most rejections carry fixed words).
        let mut reasons: BTreeMap<Cow<'static, str>, usize> = BTreeMap::new();
        let mut resolvable_nodes: Vec<&str> = Vec::new();
        for node in cache.nodes_from(&start) {
            if feasible.len() >= wanted {
                next_start = Some(node.name());
                break;
            }
            let verdict = match cache.nominated_on(node.name()) {
                // Pods that preemption nominated here, of at least this pod's priority,
                // count as placed: the room was made for them.
                Some(nominated) => {
                    let mut with = node.clone();
                    for (key, p) in nominated {
                        if *key != pod.key && p.priority >= pod_priority(&pod.pod) {
                            with.add_pod(key.clone(), p.clone());
                        }
                    }
                    self.filter_node(pod, &with)
                }
                None => self.filter_node(pod, node),
            };
            match verdict {
                Ok(()) => feasible.push(node),
                Err(r) => {
                    if !r.unresolvable {
                        resolvable_nodes.push(node.name());
                    }
                    *reasons.entry(r.reason).or_default() += 1;
                }
            }
        }
        if let Some(next) = next_start {
            *self.next_start.lock().unwrap_or_else(|p| p.into_inner()) = next.to_string();
        }
        if feasible.is_empty() {
            return Err(FitError {
                nodes: node_count,
                reasons: reasons
                    .into_iter()
                    .map(|(r, n)| (r.into_owned(), n))
                    .collect(),
                resolvable_nodes: resolvable_nodes.into_iter().map(str::to_string).collect(),
                waiting: false,
            });
        }
        if feasible.len() == 1 {
            return Ok(feasible[0].name().to_string());
        }
        let totals = self.score(pod, cache, &feasible);
        let best = totals.iter().copied().max().unwrap_or(0);
        let tied: Vec<usize> = (0..feasible.len()).filter(|i| totals[*i] == best).collect();
        let pick = tied[rand::random_range(0..tied.len())];
        Ok(feasible[pick].name().to_string())
    }

    /// Runs the Reserve plugins for `node`; on success the pod's state holds what they
    /// reserved (and nothing of the scheduling cycle), on failure what was reserved is given
    /// back.
    pub fn reserve(&self, pod: &mut PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let mut kept = Vec::new();
        for (i, r) in self.bind_cycle.reserve.iter().enumerate() {
            match r.reserve(pod, node) {
                Ok(value) => kept.extend(value),
                Err(e) => {
                    for done in &self.bind_cycle.reserve[..i] {
                        done.unreserve(pod, node.name());
                    }
                    return Err(e);
                }
            }
        }
        pod.state.clear();
        kept.into_iter().for_each(|v| pod.state.insert(v));
        Ok(())
    }

    /// Permit, PreBind, Bind and PostBind for `pod` on `node`: `Ok(true)` when bound,
    /// `Ok(false)` when there is nothing more to do (gone, or bound by someone else), `Err`
    /// when the cycle failed (what was reserved has been given back).
    pub async fn bind(
        &self,
        cx: &dyn BindContext,
        pod: &PodInfo,
        node: &str,
    ) -> Result<bool, String> {
        let outcome = self.bind_steps(cx, pod, node).await;
        if outcome.is_err() {
            for r in &self.bind_cycle.reserve {
                r.unreserve(pod, node);
            }
            for r in &self.bind_cycle.reserve {
                r.unreserve_written(cx, pod).await;
            }
        }
        if outcome == Ok(true) {
            for p in &self.bind_cycle.post_bind {
                p.post_bind(cx, pod, node).await;
            }
        }
        outcome
    }

    async fn bind_steps(
        &self,
        cx: &dyn BindContext,
        pod: &PodInfo,
        node: &str,
    ) -> Result<bool, String> {
        for p in &self.bind_cycle.permit {
            let mut deadline = None;
            loop {
                match p.permit(pod, node) {
                    PermitVerdict::Allow => break,
                    PermitVerdict::Deny(why) => return Err(format!("{}: {why}", p.name())),
                    PermitVerdict::Wait(at_most) => {
                        let until =
                            *deadline.get_or_insert_with(|| std::time::Instant::now() + at_most);
                        if std::time::Instant::now() >= until {
                            return Err(format!("{}: timed out waiting", p.name()));
                        }
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                }
            }
        }
        for p in &self.bind_cycle.pre_bind {
            p.pre_bind(cx, pod, node)
                .await
                .map_err(|e| format!("{}: {e}", p.name()))?;
        }
        for b in &self.bind_cycle.bind {
            match b.bind(cx, pod, node).await {
                BindOutcome::Skip => continue,
                BindOutcome::Bound => return Ok(true),
                BindOutcome::Gone => return Ok(false),
                BindOutcome::Failed(e) => return Err(format!("{}: {e}", b.name())),
            }
        }
        Err("no Bind plugin took the pod".into())
    }

    /// Runs every filter on `node` (the PreFilter state must be in `pod`).
    pub fn filter_node(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        self.filters.iter().try_for_each(|f| f.filter(pod, node))
    }

    /// Tells the filters that `placed` joins (`added`) or leaves `node`.
    pub fn update_state(
        &self,
        pod: &mut PodInfo,
        placed: &PlacedPod,
        node: &NodeInfo,
        added: bool,
    ) {
        for f in &self.filters {
            f.update_state(pod, placed, node, added);
        }
    }

    /// The weighted total score of each of `feasible`.
    fn score(&self, pod: &mut PodInfo, cache: &Cache, feasible: &[&NodeInfo]) -> Vec<i64> {
        let values: Vec<StateValue> = self
            .scores
            .iter()
            .filter_map(|(plugin, _)| plugin.pre_score(pod, cache, feasible))
            .collect();
        values.into_iter().for_each(|v| pod.state.insert(v));
        let mut totals = vec![0i64; feasible.len()];
        for (plugin, weight) in &self.scores {
            let mut scores: Vec<i64> = feasible.iter().map(|n| plugin.score(pod, n)).collect();
            plugin.normalize(pod, feasible, &mut scores);
            for (t, s) in totals.iter_mut().zip(scores) {
                *t += s * weight;
            }
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_reasons_in_order() {
        let err = FitError {
            nodes: 3,
            reasons: [
                ("node(s) were unschedulable".to_string(), 2),
                ("Insufficient cpu".to_string(), 1),
            ]
            .into(),
            resolvable_nodes: Vec::new(),
            waiting: false,
        };
        assert_eq!(
            err.message(),
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable."
        );
    }

    #[test]
    fn the_share_of_nodes_evaluated_follows_upstream() {
        assert_eq!(feasible_nodes_to_find(0, 50), 50);
        assert_eq!(feasible_nodes_to_find(0, 1000), 420);
        assert_eq!(feasible_nodes_to_find(0, 5000), 500);
        assert_eq!(feasible_nodes_to_find(0, 6000), 300);
        assert_eq!(feasible_nodes_to_find(0, 200), 100);
        assert_eq!(feasible_nodes_to_find(10, 5000), 500);
        assert_eq!(feasible_nodes_to_find(100, 5000), 5000);
    }

    /// Lets every node through, noting the nodes it was asked about.
    #[derive(Default)]
    struct Visits(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl Filter for Visits {
        fn name(&self) -> &'static str {
            "Visits"
        }

        fn filter(&self, _: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
            self.0.lock().unwrap().push(node.name().to_string());
            Ok(())
        }
    }

    #[test]
    fn each_search_for_feasible_nodes_starts_where_the_last_one_stopped() {
        use crate::plugins::test_support::{cluster, node, pod};
        let names: Vec<String> = (0..250).map(|i| format!("n{i:03}")).collect();
        let nodes = names
            .iter()
            .map(|n| node(n, serde_json::json!({})))
            .collect();
        let cache = cluster(nodes, Vec::new());
        let visits = Visits::default();
        let seen = visits.0.clone();
        let profile = Profile::new("default-scheduler", vec![Box::new(visits)], Vec::new());
        // 250 nodes: 48% of them, 120, are enough.
        let mut searched = Vec::new();
        for _ in 0..3 {
            let mut info = PodInfo::new(pod("p", serde_json::json!({}), serde_json::json!({})));
            profile.select(&mut info, &cache).unwrap();
            searched.push(std::mem::take(&mut *seen.lock().unwrap()));
        }
        assert_eq!(searched[0], names[..120]);
        assert_eq!(searched[1], names[120..240]);
        assert_eq!(searched[2], [&names[240..], &names[..110]].concat());
    }

    /// Counts reservations; its Permit denies, waits, or allows.
    struct Gate {
        reserved: std::sync::atomic::AtomicI32,
        verdict: PermitVerdict,
    }

    impl Reserve for std::sync::Arc<Gate> {
        fn name(&self) -> &'static str {
            "Gate"
        }
        fn reserve(&self, _: &PodInfo, _: &NodeInfo) -> Result<Option<StateValue>, Rejection> {
            self.reserved
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(None)
        }
        fn unreserve(&self, _: &PodInfo, _: &str) {
            self.reserved
                .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    impl Permit for std::sync::Arc<Gate> {
        fn name(&self) -> &'static str {
            "Gate"
        }
        fn permit(&self, _: &PodInfo, _: &str) -> PermitVerdict {
            self.verdict.clone()
        }
    }

    struct NoServer(capstan_client::Client);

    impl BindContext for NoServer {
        fn client(&self) -> &capstan_client::Client {
            &self.0
        }
        fn volume_index(&self) -> std::sync::Arc<crate::volumes::VolumeIndex> {
            Default::default()
        }
        fn dra_index(&self) -> std::sync::Arc<crate::dra::DraIndex> {
            Default::default()
        }
        fn record<'a>(
            &'a self,
            _: &'a Pod,
            _: &'a str,
            _: &'a str,
            _: &'a str,
            _: &'a str,
        ) -> BoxFuture<'a, ()> {
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn a_denying_or_timed_out_permit_gives_the_reservation_back() {
        use crate::plugins::test_support::{cluster, node, pod};
        let cache = cluster(vec![node("n1", serde_json::json!({}))], vec![]);
        let mut config = capstan_client::Config::new("https://127.0.0.1:1");
        config.insecure = true;
        let cx = NoServer(capstan_client::Client::new(config).unwrap());
        for verdict in [
            PermitVerdict::Deny("not yet".into()),
            PermitVerdict::Wait(std::time::Duration::from_millis(150)),
        ] {
            let gate = std::sync::Arc::new(Gate {
                reserved: Default::default(),
                verdict,
            });
            let mut profile = Profile::new("p", Vec::new(), Vec::new());
            profile.bind_cycle.reserve = vec![Box::new(gate.clone())];
            profile.bind_cycle.permit = vec![Box::new(gate.clone())];
            let mut info = PodInfo::new(pod("p", serde_json::json!({}), serde_json::json!({})));
            profile
                .reserve(&mut info, cache.node("n1").unwrap())
                .unwrap();
            assert_eq!(gate.reserved.load(std::sync::atomic::Ordering::SeqCst), 1);
            let err = profile.bind(&cx, &info, "n1").await.unwrap_err();
            assert!(err.starts_with("Gate: "), "{err}");
            assert_eq!(gate.reserved.load(std::sync::atomic::Ordering::SeqCst), 0);
        }
    }

    #[test]
    fn normalizing_scales_to_the_maximum() {
        let mut s = vec![0, 5, 10];
        default_normalize(&mut s, false);
        assert_eq!(s, [0, 50, 100]);
        let mut s = vec![0, 5, 10];
        default_normalize(&mut s, true);
        assert_eq!(s, [100, 50, 0]);
        let mut s = vec![0, 0];
        default_normalize(&mut s, true);
        assert_eq!(s, [100, 100]);
    }
}
