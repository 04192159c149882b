//! Service cluster IPs and node ports: allocated as Services are written, given back when
//! they go, and repaired from the Services themselves.
//!
//! Each cluster IP is an `IPAddress` object named by the address (as upstream's allocator
//! keeps them since v1.33), each node port a key of its own under `ranges/servicenodeports/`.
//! Taking one is a create that fails when it exists, so several API servers on one etcd
//! never hand out the same value, and no bitmap is rewritten per allocation.

use std::net::IpAddr;
use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
pub use capstan_api::service::Cidr;
use capstan_api::service::{
    NONE, family_of, has_node_ports, needs_health_check, parse_ip, service_type,
};
use capstan_api::{IpAddressStrategy, ServiceCidrStrategy, ServiceStrategy};
use capstan_meta::{ApiError, FieldError, Reason};
use capstan_storage::{ListRequest, Store};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::IPAddress;
use rand::Rng;
use serde_json::{Value, json};
use tracing::{info, warn};

use crate::error::{Error, Result};
use crate::generic::GenericStore;
use crate::hooks::{Allocations, Reserved};
use crate::options::{DeleteOptions, ListOptions, WriteOptions};
use crate::rest::RestStorage;

/// The label naming an IPAddress's family.
const FAMILY_LABEL: &str = "ipaddress.kubernetes.io/ip-family";
/// The label naming who manages an IPAddress, and the value this allocator sets.
const MANAGED_BY_LABEL: &str = "ipaddress.kubernetes.io/managed-by";
const MANAGED_BY: &str = "ipallocator.k8s.io";
/// How long an allocation without an owner is left alone by the repair (its Service may be
/// on its way to storage, through another API server).
const REPAIR_GRACE: Duration = Duration::from_secs(60);
/// How often the repair runs after the first time (upstream's interval).
pub const REPAIR_INTERVAL: Duration = Duration::from_secs(180);
/// Most candidates one dynamic allocation tries before the range counts as full.
const MAX_PROBES: u128 = 65_536;

/// The ranges Services take their cluster IPs and node ports from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceNetwork {
    /// `--service-cluster-ip-range`: one range, or one per family; the first is the
    /// cluster's default family.
    pub cidrs: Vec<Cidr>,
    /// `--service-node-port-range`, both ends included.
    pub node_ports: RangeInclusive<u16>,
}

impl Default for ServiceNetwork {
    /// Upstream's defaults: 10.0.0.0/24 and 30000-32767.
    fn default() -> Self {
        Self {
            cidrs: vec![Cidr::parse("10.0.0.0/24").expect("a valid range")],
            node_ports: 30000..=32767,
        }
    }
}

impl ServiceNetwork {
    fn cidr_of(&self, family: &str) -> Option<&Cidr> {
        self.cidrs.iter().find(|c| c.family() == family)
    }

    /// The addresses of a range that may be handed out: not an IPv4 range's network and
    /// broadcast addresses, not an IPv6 range's subnet-router address.
    fn usable(cidr: &Cidr) -> (u128, u128) {
        let size = cidr.size();
        match (cidr.family(), size) {
            ("IPv4", s) if s >= 4 => (1, s - 1),
            ("IPv6", s) if s >= 2 => (1, s),
            (_, s) => (0, s),
        }
    }

    /// The first address the server's own `kubernetes` Service takes.
    pub fn first_address(&self) -> Option<IpAddr> {
        let cidr = self.cidrs.first()?;
        cidr.nth(Self::usable(cidr).0)
    }

    fn range_text(&self) -> String {
        format!("{}-{}", self.node_ports.start(), self.node_ports.end())
    }
}

/// What a Service holds, in [`Reserved`] terms.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Held {
    Ip(String),
    Port(i32),
}

impl Held {
    fn encode(&self) -> String {
        match self {
            Self::Ip(ip) => format!("ip/{ip}"),
            Self::Port(port) => format!("port/{port}"),
        }
    }

    fn decode(entry: &str) -> Option<Self> {
        match entry.split_once('/')? {
            ("ip", ip) => Some(Self::Ip(ip.into())),
            ("port", port) => port.parse().ok().map(Self::Port),
            _ => None,
        }
    }
}

/// The cluster IPs (with `None` for a headless Service: none) a Service holds.
fn held_ips(svc: &Service) -> Vec<String> {
    if service_type(svc) == "ExternalName" {
        return Vec::new();
    }
    let ips = svc
        .spec
        .as_ref()
        .and_then(|s| s.cluster_ips.clone())
        .unwrap_or_default();
    ips.into_iter()
        .filter(|ip| !ip.is_empty() && ip != NONE)
        .collect()
}

/// The node ports (and health check node port) a Service holds.
fn held_ports(svc: &Service) -> Vec<i32> {
    let Some(spec) = svc.spec.as_ref() else {
        return Vec::new();
    };
    let mut ports: Vec<i32> = spec
        .ports
        .iter()
        .flatten()
        .filter_map(|p| p.node_port)
        .filter(|p| *p != 0)
        .collect();
    if let Some(hc) = spec.health_check_node_port.filter(|p| *p != 0) {
        ports.push(hc);
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

fn invalid(svc: &Service, errors: Vec<FieldError>) -> Error {
    let name = svc.metadata.name.clone().unwrap_or_default();
    ApiError::invalid("", "Service", &name, &errors).into()
}

/// Allocates Service cluster IPs (as IPAddress objects) and node ports (as storage keys).
pub struct ServiceAllocator {
    network: ServiceNetwork,
    addresses: Arc<GenericStore<IpAddressStrategy>>,
    cidrs: Option<Arc<GenericStore<ServiceCidrStrategy>>>,
    store: Arc<dyn Store>,
    ports_prefix: String,
}

impl ServiceAllocator {
    /// An allocator over `network`, keeping addresses in `addresses` and node ports under
    /// `<registry_prefix>/ranges/servicenodeports/` of `store`.
    pub fn new(
        network: ServiceNetwork,
        addresses: Arc<GenericStore<IpAddressStrategy>>,
        store: Arc<dyn Store>,
        registry_prefix: &str,
    ) -> Self {
        Self {
            network,
            addresses,
            cidrs: None,
            store,
            ports_prefix: format!(
                "{}/ranges/servicenodeports/",
                registry_prefix.trim_end_matches('/')
            ),
        }
    }

    /// Also allocates from the ServiceCIDRs in `cidrs` (as upstream since v1.33): those not
    /// being deleted and not marked not `Ready` (a ServiceCIDR without the condition counts
    /// as ready, as upstream's allocator takes it when no controller manager runs).
    pub fn with_service_cidrs(mut self, cidrs: Arc<GenericStore<ServiceCidrStrategy>>) -> Self {
        self.cidrs = Some(cidrs);
        self
    }

    /// The ranges allocated from at start.
    pub fn network(&self) -> &ServiceNetwork {
        &self.network
    }

    /// The ServiceCIDRs' ranges of `family` beyond the configured one, in name order.
    async fn more_ranges(&self, family: &str) -> Vec<Cidr> {
        let Some(store) = &self.cidrs else {
            return Vec::new();
        };
        let Ok(listed) = store.list("", &ListOptions::default()).await else {
            return Vec::new();
        };
        let Ok(doc) = serde_json::from_slice::<Value>(&listed.body.into_bytes()) else {
            return Vec::new();
        };
        let configured = self.network.cidr_of(family).copied();
        let mut out = Vec::new();
        for item in doc["items"].as_array().into_iter().flatten() {
            let not_ready = item["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] != "True");
            if item["metadata"]["deletionTimestamp"].is_string() || not_ready {
                continue;
            }
            let ranges = item["spec"]["cidrs"].as_array().into_iter().flatten();
            for cidr in ranges.filter_map(|c| Cidr::parse_network(c.as_str()?).ok()) {
                if cidr.family() == family && Some(cidr) != configured && !out.contains(&cidr) {
                    out.push(cidr);
                }
            }
        }
        out
    }

    /// Whether `addr` may be handed out: in the usable part of the configured range of its
    /// family, or of a ServiceCIDR's.
    async fn in_ranges(&self, addr: &IpAddr) -> bool {
        let usable = |c: &Cidr| {
            let (low, high) = ServiceNetwork::usable(c);
            c.offset_of(addr).is_some_and(|o| o >= low && o < high)
        };
        let family = family_of(addr);
        self.network.cidr_of(family).is_some_and(usable)
            || self.more_ranges(family).await.iter().any(usable)
    }

    fn port_key(&self, port: i32) -> String {
        format!("{}{port}", self.ports_prefix)
    }

    /// Settles `ipFamilyPolicy` and `ipFamilies` as upstream: from the old object, the given
    /// cluster IPs and the cluster's families; refuses what the cluster cannot serve.
    fn init_families(&self, svc: &mut Service, old: Option<&Service>) -> Result<()> {
        if service_type(svc) == "ExternalName" {
            return Ok(());
        }
        let configured: Vec<&str> = self.network.cidrs.iter().map(Cidr::family).collect();
        let spec = svc.spec.get_or_insert_with(Default::default);
        let selectorless = spec.selector.as_ref().is_none_or(|s| s.is_empty());
        let headless = spec.cluster_ip.as_deref() == Some(NONE);
        if spec.ip_family_policy.is_none() {
            let from_old = old.and_then(|o| o.spec.as_ref()?.ip_family_policy.clone());
            spec.ip_family_policy = Some(from_old.unwrap_or_else(|| {
                if headless && selectorless {
                    "RequireDualStack".into()
                } else {
                    "SingleStack".into()
                }
            }));
        }
        let policy = spec.ip_family_policy.clone().unwrap_or_default();
        let mut families = spec.ip_families.clone().unwrap_or_default();
        let ips = spec.cluster_ips.clone().unwrap_or_default();
        let mut errors = Vec::new();
        if policy == "SingleStack" {
            if ips.len() == 2 {
                errors.push(FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    &policy,
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
                ));
            }
            if families.len() == 2 {
                errors.push(FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    &policy,
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
                ));
            }
        }
        for (i, ip) in ips.iter().enumerate() {
            if ip == NONE {
                break;
            }
            let Some(addr) = parse_ip(ip) else {
                // Validation reports it.
                return Ok(());
            };
            if i >= families.len() {
                let family = family_of(&addr);
                if configured.contains(&family) {
                    families.push(family.to_string());
                } else {
                    errors.push(FieldError::invalid(
                        format!("spec.clusterIPs[{i}]"),
                        ip,
                        format!("{family} is not configured on this cluster"),
                    ));
                }
            }
        }
        if !errors.is_empty() {
            return Err(invalid(svc, errors));
        }
        let other = |f: &str| if f == "IPv4" { "IPv6" } else { "IPv4" };
        if headless && selectorless {
            if families.is_empty() {
                families.push(configured[0].to_string());
            }
            if families.len() < 2 && policy != "SingleStack" {
                families.push(other(&families[0]).to_string());
            }
            svc.spec.get_or_insert_with(Default::default).ip_families = Some(families);
            return Ok(());
        }
        if policy == "RequireDualStack" && configured.len() < 2 {
            errors.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                &policy,
                "this cluster is not configured for dual-stack services",
            ));
        }
        for (i, family) in families.iter().enumerate() {
            if !configured.contains(&family.as_str()) {
                errors.push(FieldError::invalid(
                    format!("spec.ipFamilies[{i}]"),
                    family,
                    "not configured on this cluster",
                ));
            }
        }
        if !errors.is_empty() {
            return Err(invalid(svc, errors));
        }
        if families.is_empty() {
            families.push(configured[0].to_string());
        }
        if policy != "SingleStack" && families.len() == 1 && configured.len() == 2 {
            families.push(other(&families[0]).to_string());
        }
        svc.spec.get_or_insert_with(Default::default).ip_families = Some(families);
        Ok(())
    }

    /// Whether `ip` is taken (the watch cache's view, then storage's).
    async fn ip_taken(&self, ip: &str) -> bool {
        !matches!(self.addresses.cached_json("", ip).await, Ok(None))
    }

    /// Creates the IPAddress of `ip` for `svc`; `Ok(false)` when it exists.
    async fn take_ip(&self, svc: &Service, ip: &IpAddr) -> Result<bool> {
        let object = json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IPAddress",
            "metadata": {
                "name": ip.to_string(),
                "labels": {FAMILY_LABEL: family_of(ip), MANAGED_BY_LABEL: MANAGED_BY},
            },
            "spec": {"parentRef": {
                "group": "",
                "resource": "services",
                "namespace": svc.metadata.namespace.clone().unwrap_or_default(),
                "name": svc.metadata.name.clone().unwrap_or_default(),
            }},
        });
        let body = serde_json::to_vec(&object).map_err(Error::Encode)?;
        match self
            .addresses
            .create("", &body, &WriteOptions::server())
            .await
        {
            Ok(_) => Ok(true),
            Err(Error::Api(e)) if e.reason == Reason::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn give_back_ip(&self, ip: &str) {
        match self
            .addresses
            .delete("", ip, &DeleteOptions::default())
            .await
        {
            Ok(_) => {}
            Err(Error::Api(e)) if e.reason == Reason::NotFound => {}
            Err(err) => warn!(%err, ip, "releasing a cluster IP failed; the repair will"),
        }
    }

    /// Takes a specific address for the `i`th family of `svc` (checks only on dry runs).
    async fn take_given_ip(
        &self,
        svc: &Service,
        ip: &str,
        dry_run: bool,
        taken: &mut Vec<String>,
    ) -> Result<()> {
        let all = svc
            .spec
            .as_ref()
            .and_then(|s| s.cluster_ips.clone())
            .unwrap_or_default();
        let refuse = |why: String| {
            invalid(
                svc,
                vec![FieldError::invalid_raw(
                    "spec.clusterIPs",
                    json!(all).to_string(),
                    format!("failed to allocate IP {ip}: {why}"),
                )],
            )
        };
        let Some(addr) = parse_ip(ip) else {
            return Ok(()); // validation reports it
        };
        if !self.in_ranges(&addr).await {
            let cidr = self.network.cidr_of(family_of(&addr));
            let range = cidr.map(ToString::to_string).unwrap_or_default();
            return Err(refuse(format!(
                "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {range}"
            )));
        }
        let free = if dry_run {
            !self.ip_taken(ip).await
        } else {
            self.take_ip(svc, &addr).await?
        };
        if !free {
            return Err(refuse("provided IP is already allocated".into()));
        }
        if !dry_run {
            taken.push(Held::Ip(addr.to_string()).encode());
        }
        Ok(())
    }

    /// Takes a free address of `family`: from the configured range, a random one from its
    /// upper part first (the lower part is kept for addresses clients choose, as upstream's),
    /// then any; when it is full, from the ServiceCIDRs' ranges in turn.
    async fn take_next_ip(
        &self,
        svc: &Service,
        family: &str,
        dry_run: bool,
        taken: &mut Vec<String>,
    ) -> Result<String> {
        let Some(configured) = self.network.cidr_of(family) else {
            return Err(ApiError::internal(format!(
                "failed to allocate a serviceIP: {family} is not configured"
            ))
            .into());
        };
        if let Some(ip) = self.take_ip_in(svc, configured, dry_run, taken).await? {
            return Ok(ip);
        }
        for cidr in self.more_ranges(family).await {
            if let Some(ip) = self.take_ip_in(svc, &cidr, dry_run, taken).await? {
                return Ok(ip);
            }
        }
        Err(ApiError::internal("failed to allocate a serviceIP: range is full").into())
    }

    /// A free address of `cidr` taken for `svc`; `None` when the range is full.
    async fn take_ip_in(
        &self,
        svc: &Service,
        cidr: &Cidr,
        dry_run: bool,
        taken: &mut Vec<String>,
    ) -> Result<Option<String>> {
        let (low, high) = ServiceNetwork::usable(cidr);
        let count = high.saturating_sub(low);
        let band = (count / 16).clamp(16, 256).min(count);
        for ip in probe_order(low, high, band).filter_map(|n| cidr.nth(n)) {
            let text = ip.to_string();
            if self.ip_taken(&text).await {
                continue;
            }
            if dry_run {
                return Ok(Some(text));
            }
            if self.take_ip(svc, &ip).await? {
                taken.push(Held::Ip(text.clone()).encode());
                return Ok(Some(text));
            }
        }
        Ok(None)
    }

    async fn port_taken(&self, port: i32) -> Result<bool> {
        Ok(self.store.get(&self.port_key(port)).await?.0.is_some())
    }

    /// Creates the key of `port` for `svc`; `Ok(false)` when it exists.
    async fn take_port(&self, svc: &Service, port: i32) -> Result<bool> {
        let owner = json!({
            "namespace": svc.metadata.namespace,
            "name": svc.metadata.name,
            "uid": svc.metadata.uid,
            "created": jiff::Timestamp::now().as_second(),
        });
        let value = Bytes::from(serde_json::to_vec(&owner).map_err(Error::Encode)?);
        match self.store.create(&self.port_key(port), value).await {
            Ok(_) => Ok(true),
            Err(capstan_storage::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    async fn give_back_port(&self, port: i32) {
        match self.store.delete(&self.port_key(port), None).await {
            Ok(_) | Err(capstan_storage::Error::NotFound { .. }) => {}
            Err(err) => warn!(%err, port, "releasing a node port failed; the repair will"),
        }
    }

    /// Takes `port` (checks only on dry runs), refusing it at `field`.
    async fn take_given_port(
        &self,
        svc: &Service,
        port: i32,
        field: &str,
        dry_run: bool,
        taken: &mut Vec<String>,
    ) -> Result<()> {
        let refuse = |why: String| {
            invalid(
                svc,
                vec![FieldError::invalid_raw(field, port.to_string(), why)],
            )
        };
        let in_range = u16::try_from(port).is_ok_and(|p| self.network.node_ports.contains(&p));
        if !in_range {
            return Err(refuse(format!(
                "provided port is not in the valid range. The range of valid ports is {}",
                self.network.range_text()
            )));
        }
        let free = if dry_run {
            !self.port_taken(port).await?
        } else {
            self.take_port(svc, port).await?
        };
        if !free {
            return Err(refuse("provided port is already allocated".into()));
        }
        if !dry_run {
            taken.push(Held::Port(port).encode());
        }
        Ok(())
    }

    /// Takes a free node port: from the upper part of the range first, as upstream's.
    async fn take_next_port(
        &self,
        svc: &Service,
        dry_run: bool,
        taken: &mut Vec<String>,
    ) -> Result<i32> {
        let low = u128::from(*self.network.node_ports.start());
        let high = u128::from(*self.network.node_ports.end()) + 1;
        let band = ((high - low) / 32).clamp(16, 128).min(high - low);
        for port in probe_order(low, high, band) {
            let port = port as i32;
            if dry_run {
                if !self.port_taken(port).await? {
                    return Ok(port);
                }
                continue;
            }
            if self.take_port(svc, port).await? {
                taken.push(Held::Port(port).encode());
                return Ok(port);
            }
        }
        Err(ApiError::internal("failed to allocate a nodePort: range is full").into())
    }

    /// Keeps what an update leaves out but the type still needs: the cluster IPs, the node
    /// port of a port (by number and protocol) and the health check node port, as upstream
    /// does for PUTs of objects without them.
    fn keep_allocated(new: &mut Service, old: &Service) {
        let external = |s: &Service| service_type(s) == "ExternalName";
        let old_spec = old.spec.clone().unwrap_or_default();
        let both_node_ports = has_node_ports(old) && has_node_ports(new);
        let both_health = needs_health_check(old) && needs_health_check(new);
        let keep_ips = !external(old) && !external(new);
        let spec = new.spec.get_or_insert_with(Default::default);
        if keep_ips {
            if spec.cluster_ip.as_deref().unwrap_or("").is_empty() {
                spec.cluster_ip = old_spec.cluster_ip.clone();
            }
            if spec.cluster_ips.as_ref().is_none_or(|ips| ips.is_empty()) {
                spec.cluster_ips = old_spec.cluster_ips.clone();
            }
        }
        if both_node_ports {
            let old_ports = old_spec.ports.clone().unwrap_or_default();
            for port in spec.ports.iter_mut().flatten() {
                if port.node_port.unwrap_or(0) != 0 {
                    continue;
                }
                let protocol = |p: &k8s_openapi::api::core::v1::ServicePort| {
                    p.protocol.clone().unwrap_or_else(|| "TCP".into())
                };
                if let Some(was) = old_ports
                    .iter()
                    .find(|o| o.port == port.port && protocol(o) == protocol(port))
                {
                    port.node_port = was.node_port;
                }
            }
        }
        if both_health && spec.health_check_node_port.unwrap_or(0) == 0 {
            spec.health_check_node_port = old_spec.health_check_node_port;
        }
    }

    async fn reserve_ips(
        &self,
        svc: &mut Service,
        old: Option<&Service>,
        dry_run: bool,
        reserved: &mut Reserved,
    ) -> Result<()> {
        let before = old.map(held_ips).unwrap_or_default();
        if service_type(svc) == "ExternalName" {
            // Nothing is held any more; fields left from the old type are dropped, as
            // upstream does for values the client did not change.
            let spec = svc.spec.get_or_insert_with(Default::default);
            let old_spec = old.and_then(|o| o.spec.clone()).unwrap_or_default();
            if spec.cluster_ip == old_spec.cluster_ip {
                spec.cluster_ip = None;
            }
            if spec.cluster_ips == old_spec.cluster_ips {
                spec.cluster_ips = None;
            }
            if spec.ip_families == old_spec.ip_families {
                spec.ip_families = None;
            }
            if spec.ip_family_policy == old_spec.ip_family_policy {
                spec.ip_family_policy = None;
            }
            reserved
                .freed
                .extend(before.iter().map(|ip| Held::Ip(ip.clone()).encode()));
            return Ok(());
        }
        self.init_families(svc, old)?;
        let spec = svc.spec.get_or_insert_with(Default::default);
        if spec.cluster_ip.as_deref() == Some(NONE) {
            spec.cluster_ips = Some(vec![NONE.into()]);
            reserved
                .freed
                .extend(before.iter().map(|ip| Held::Ip(ip.clone()).encode()));
            return Ok(());
        }
        let families = spec.ip_families.clone().unwrap_or_default();
        let mut ips = spec.cluster_ips.clone().unwrap_or_default();
        ips.resize(families.len().max(ips.len()), String::new());
        for (i, family) in families.iter().enumerate() {
            let ip = ips[i].clone();
            if !ip.is_empty() && before.contains(&ip) {
                continue;
            }
            if ip.is_empty() {
                ips[i] = self
                    .take_next_ip(svc, family, dry_run, &mut reserved.taken)
                    .await?;
            } else {
                self.take_given_ip(svc, &ip, dry_run, &mut reserved.taken)
                    .await?;
            }
        }
        let spec = svc.spec.get_or_insert_with(Default::default);
        spec.cluster_ip = ips.first().cloned();
        reserved.freed.extend(
            before
                .iter()
                .filter(|ip| !ips.contains(ip))
                .map(|ip| Held::Ip(ip.clone()).encode()),
        );
        spec.cluster_ips = Some(ips);
        Ok(())
    }

    async fn reserve_ports(
        &self,
        svc: &mut Service,
        old: Option<&Service>,
        dry_run: bool,
        reserved: &mut Reserved,
    ) -> Result<()> {
        let before = old.map(held_ports).unwrap_or_default();
        let allocate = match service_type(svc) {
            "NodePort" => true,
            "LoadBalancer" => svc
                .spec
                .as_ref()
                .and_then(|s| s.allocate_load_balancer_node_ports)
                .unwrap_or(true),
            _ => false,
        };
        if has_node_ports(svc) {
            let mut ports = svc
                .spec
                .as_ref()
                .and_then(|s| s.ports.clone())
                .unwrap_or_default();
            let mut by_port: Vec<(i32, i32)> = Vec::new();
            let mut mine: Vec<i32> = Vec::new();
            for (i, port) in ports.iter_mut().enumerate() {
                let wanted = port.node_port.unwrap_or(0);
                if wanted == 0 && !allocate {
                    continue;
                }
                if wanted != 0 {
                    if !before.contains(&wanted) && !mine.contains(&wanted) {
                        let field = format!("spec.ports[{i}].nodePort");
                        self.take_given_port(svc, wanted, &field, dry_run, &mut reserved.taken)
                            .await?;
                    }
                    mine.push(wanted);
                    by_port.push((port.port, wanted));
                    continue;
                }
                // Ports of one number (TCP and UDP) share their node port.
                let shared = by_port.iter().find(|(p, _)| *p == port.port).map(|x| x.1);
                let node_port = match shared {
                    Some(n) => n,
                    None => {
                        self.take_next_port(svc, dry_run, &mut reserved.taken)
                            .await?
                    }
                };
                port.node_port = Some(node_port);
                mine.push(node_port);
                by_port.push((port.port, node_port));
            }
            svc.spec.get_or_insert_with(Default::default).ports = Some(ports);
        } else if let Some(spec) = svc.spec.as_mut() {
            // Node ports left from a NodePort or LoadBalancer type go with it.
            for port in spec.ports.iter_mut().flatten() {
                if port.node_port.is_some_and(|n| before.contains(&n)) {
                    port.node_port = None;
                }
            }
        }
        if needs_health_check(svc) {
            let wanted = svc
                .spec
                .as_ref()
                .and_then(|s| s.health_check_node_port)
                .unwrap_or(0);
            if wanted == 0 {
                let port = self
                    .take_next_port(svc, dry_run, &mut reserved.taken)
                    .await?;
                svc.spec
                    .get_or_insert_with(Default::default)
                    .health_check_node_port = Some(port);
            } else if !before.contains(&wanted) {
                self.take_given_port(
                    svc,
                    wanted,
                    "spec.healthCheckNodePort",
                    dry_run,
                    &mut reserved.taken,
                )
                .await?;
            }
        } else if let Some(spec) = svc.spec.as_mut()
            && spec
                .health_check_node_port
                .is_some_and(|n| before.contains(&n))
        {
            spec.health_check_node_port = None;
        }
        let after = held_ports(svc);
        reserved.freed.extend(
            before
                .iter()
                .filter(|p| !after.contains(p))
                .map(|p| Held::Port(*p).encode()),
        );
        Ok(())
    }

    async fn give_back(&self, entries: &[String]) {
        for entry in entries {
            match Held::decode(entry) {
                Some(Held::Ip(ip)) => self.give_back_ip(&ip).await,
                Some(Held::Port(port)) => self.give_back_port(port).await,
                None => {}
            }
        }
    }

    /// Makes the allocations match the Services: an address or port a Service holds without
    /// its record gets one; a record no Service holds, older than a minute, goes. Returns
    /// how many records were created and removed.
    pub async fn repair(&self, services: &GenericStore<ServiceStrategy>) -> Result<(usize, usize)> {
        #[derive(serde::Deserialize)]
        struct Items<T> {
            items: Vec<T>,
        }
        let listed = services.list("", &ListOptions::default()).await?;
        let services: Items<Service> =
            serde_json::from_slice(&listed.body.into_bytes()).map_err(Error::Encode)?;
        let listed = self.addresses.list("", &ListOptions::default()).await?;
        let addresses: Items<IPAddress> =
            serde_json::from_slice(&listed.body.into_bytes()).map_err(Error::Encode)?;
        let now = jiff::Timestamp::now();
        let old_enough = |created: Option<jiff::Timestamp>| {
            created.is_none_or(|c| now.duration_since(c).unsigned_abs() >= REPAIR_GRACE)
        };
        let (mut created, mut removed) = (0, 0);

        let mut claimed_ips = std::collections::HashMap::new();
        let mut claimed_ports = std::collections::HashMap::new();
        for svc in &services.items {
            for ip in held_ips(svc) {
                claimed_ips.insert(ip, svc);
            }
            for port in held_ports(svc) {
                claimed_ports.insert(port, svc);
            }
        }
        for address in &addresses.items {
            let name = address.metadata.name.clone().unwrap_or_default();
            let ours = address
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(MANAGED_BY_LABEL))
                .is_some_and(|v| v == MANAGED_BY);
            let stamp = address.metadata.creation_timestamp.as_ref().map(|t| t.0);
            if ours && !claimed_ips.contains_key(&name) && old_enough(stamp) {
                info!(ip = %name, "repair: releasing a cluster IP no Service holds");
                self.give_back_ip(&name).await;
                removed += 1;
            }
        }
        let recorded: std::collections::HashSet<String> = addresses
            .items
            .iter()
            .filter_map(|a| a.metadata.name.clone())
            .collect();
        for (ip, svc) in &claimed_ips {
            if recorded.contains(ip) {
                continue;
            }
            let Some(addr) = parse_ip(ip) else { continue };
            if !self.in_ranges(&addr).await {
                warn!(%ip, "repair: a Service's cluster IP is outside the service ranges");
                continue;
            }
            if self.take_ip(svc, &addr).await? {
                info!(%ip, "repair: recorded a cluster IP a Service held without its record");
                created += 1;
            }
        }

        let keys = self
            .store
            .list(ListRequest {
                prefix: &self.ports_prefix,
                ..Default::default()
            })
            .await?;
        let mut recorded_ports = std::collections::HashSet::new();
        for kv in keys.items {
            let Some(port) = kv
                .key
                .strip_prefix(&self.ports_prefix)
                .and_then(|p| p.parse().ok())
            else {
                continue;
            };
            recorded_ports.insert(port);
            #[derive(serde::Deserialize)]
            struct Owner {
                created: Option<i64>,
            }
            let created_at = serde_json::from_slice::<Owner>(&kv.value)
                .ok()
                .and_then(|o| o.created)
                .and_then(|s| jiff::Timestamp::from_second(s).ok());
            if !claimed_ports.contains_key(&port) && old_enough(created_at) {
                info!(port, "repair: releasing a node port no Service holds");
                self.give_back_port(port).await;
                removed += 1;
            }
        }
        for (port, svc) in &claimed_ports {
            if !recorded_ports.contains(port) && self.take_port(svc, *port).await? {
                info!(
                    port,
                    "repair: recorded a node port a Service held without its record"
                );
                created += 1;
            }
        }
        Ok((created, removed))
    }
}

/// Candidates `low..high`: from a random point of the upper part `low + band..high`
/// around to its start, then the lower part likewise; at most [`MAX_PROBES`].
fn probe_order(low: u128, high: u128, band: u128) -> impl Iterator<Item = u128> {
    let split = (low + band).min(high);
    let mut rng = rand::rng();
    let start_upper = if high > split {
        rng.random_range(split..high)
    } else {
        split
    };
    let start_lower = if split > low {
        rng.random_range(low..split)
    } else {
        low
    };
    let upper = (start_upper..high).chain(split..start_upper);
    let lower = (start_lower..split).chain(low..start_lower);
    upper.chain(lower).take(MAX_PROBES as usize)
}

#[async_trait]
impl Allocations<Service> for ServiceAllocator {
    async fn reserve(
        &self,
        new: &mut Service,
        old: Option<&Service>,
        dry_run: bool,
    ) -> Result<Reserved> {
        let mut reserved = Reserved::default();
        if let Some(old) = old {
            Self::keep_allocated(new, old);
        }
        let outcome = async {
            self.reserve_ips(new, old, dry_run, &mut reserved).await?;
            self.reserve_ports(new, old, dry_run, &mut reserved).await
        }
        .await;
        match outcome {
            Ok(()) => Ok(reserved),
            Err(e) => {
                self.give_back(&reserved.taken).await;
                Err(e)
            }
        }
    }

    async fn settle(&self, reserved: Reserved, written: bool) {
        if written {
            self.give_back(&reserved.freed).await;
        } else {
            self.give_back(&reserved.taken).await;
        }
    }

    async fn release(&self, removed: &Service) {
        for ip in held_ips(removed) {
            self.give_back_ip(&ip).await;
        }
        for port in held_ports(removed) {
            self.give_back_port(port).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_cover_the_range_once_upper_part_first() {
        let order: Vec<u128> = probe_order(1, 255, 16).collect();
        assert_eq!(order.len(), 254);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, (1..255).collect::<Vec<_>>());
        assert!(order[..238].iter().all(|n| *n >= 17), "{order:?}");
        assert_eq!(probe_order(0, 1 << 64, 256).count(), MAX_PROBES as usize);
    }

    #[test]
    fn usable_addresses_skip_network_broadcast_and_subnet_router() {
        let v4 = Cidr::parse("10.0.0.0/24").unwrap();
        assert_eq!(ServiceNetwork::usable(&v4), (1, 255));
        let v6 = Cidr::parse("fd00::/120").unwrap();
        assert_eq!(ServiceNetwork::usable(&v6), (1, 256));
        assert_eq!(
            ServiceNetwork::default().first_address(),
            Some("10.0.0.1".parse().unwrap())
        );
    }

    #[test]
    fn held_entries_round_trip() {
        for held in [Held::Ip("fd00::1".into()), Held::Port(30001)] {
            assert_eq!(Held::decode(&held.encode()), Some(held));
        }
    }
}
