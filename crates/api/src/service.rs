//! Services (`v1`) and the objects that record their cluster IPs (`networking.k8s.io/v1`
//! IPAddresses, from the ranges of ServiceCIDRs). Defaulting and validation here are the
//! parts that need nothing but the object; the cluster IPs and node ports themselves are
//! allocated by the registry, which knows the configured ranges.

use std::net::IpAddr;

use capstan_meta::validation::{dns1123_label, dns1123_subdomain};
use capstan_meta::{FieldError, FieldErrors, FieldLabels, ResourceDescriptor, Strategy};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceStatus};
use k8s_openapi::api::networking::v1::{IPAddress, ServiceCIDR};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::describe::Names;

/// `spec.clusterIP` of a headless Service.
pub const NONE: &str = "None";
/// The Service types.
pub const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
/// The IP family policies.
pub const FAMILY_POLICIES: [&str; 3] = ["SingleStack", "PreferDualStack", "RequireDualStack"];
/// Seconds a ClientIP session sticks by default (three hours).
const DEFAULT_AFFINITY_TIMEOUT: i32 = 10800;

/// The Service's type, `ClusterIP` when unset.
pub fn service_type(svc: &Service) -> &str {
    svc.spec
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .unwrap_or("ClusterIP")
}

/// Whether the type exposes ports on every node.
pub fn has_node_ports(svc: &Service) -> bool {
    matches!(service_type(svc), "NodePort" | "LoadBalancer")
}

/// Whether a LoadBalancer Service keeps client addresses (`externalTrafficPolicy: Local`),
/// and so needs a health check node port.
pub fn needs_health_check(svc: &Service) -> bool {
    service_type(svc) == "LoadBalancer"
        && svc
            .spec
            .as_ref()
            .and_then(|s| s.external_traffic_policy.as_deref())
            == Some("Local")
}

/// The family of an address: `IPv4` or `IPv6`.
pub fn family_of(ip: &IpAddr) -> &'static str {
    if ip.is_ipv4() { "IPv4" } else { "IPv6" }
}

/// Parses an address as upstream accepts it in a Service (no leading zeros, no zone).
pub fn parse_ip(value: &str) -> Option<IpAddr> {
    value.parse().ok()
}

/// The strategy of Service: upstream's defaults (type, session affinity, protocols, target
/// ports, traffic policies) and validation of everything but the allocated values.
#[derive(Debug, Default, Clone, Copy)]
pub struct ServiceStrategy;

/// A Service's own rules (the strict address checks apart: they depend on the old object).
fn validate_service(svc: &Service) -> FieldErrors {
    let mut errs = Vec::new();
    let spec = svc.spec.clone().unwrap_or_default();
    let kind = service_type(svc);
    if !TYPES.contains(&kind) {
        errs.push(FieldError::not_supported("spec.type", kind, &TYPES));
    }
    let cluster_ip = spec.cluster_ip.as_deref().unwrap_or("");
    let headless = cluster_ip == NONE;
    let ports = spec.ports.as_deref().unwrap_or_default();
    if ports.is_empty() && !headless && kind != "ExternalName" {
        errs.push(FieldError::required("spec.ports", ""));
    }
    validate_ports(ports, kind, &mut errs);
    if kind == "ExternalName" {
        let name = spec.external_name.as_deref().unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required("spec.externalName", ""));
        } else {
            let trimmed = name.strip_suffix('.').unwrap_or(name);
            for why in dns1123_subdomain(trimmed) {
                errs.push(FieldError::invalid("spec.externalName", name, why));
            }
        }
        if !cluster_ip.is_empty() {
            errs.push(FieldError::forbidden(
                "spec.clusterIPs",
                "may not be set for ExternalName services",
            ));
        }
    }
    validate_cluster_ips(&spec, &mut errs);
    if let Some(selector) = &spec.selector {
        errs.extend(capstan_meta::validation::labels("spec.selector", selector));
    }
    let affinity = spec.session_affinity.as_deref().unwrap_or("None");
    if !matches!(affinity, "None" | "ClientIP") {
        errs.push(FieldError::not_supported(
            "spec.sessionAffinity",
            affinity,
            &["ClientIP", "None"],
        ));
    }
    if let Some(timeout) = spec
        .session_affinity_config
        .as_ref()
        .and_then(|c| c.client_ip.as_ref())
        .and_then(|c| c.timeout_seconds)
        && !(1..=86400).contains(&timeout)
    {
        errs.push(FieldError::invalid(
            "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
            &timeout.to_string(),
            "must be greater than 0 and less than 86400",
        ));
    }
    for (field, value, allowed) in [
        (
            "spec.externalTrafficPolicy",
            spec.external_traffic_policy.as_deref(),
            ["Cluster", "Local"],
        ),
        (
            "spec.internalTrafficPolicy",
            spec.internal_traffic_policy.as_deref(),
            ["Cluster", "Local"],
        ),
    ] {
        if let Some(v) = value
            && !allowed.contains(&v)
        {
            errs.push(FieldError::not_supported(field, v, &allowed));
        }
    }
    const TRAFFIC_DISTRIBUTIONS: &[&str] = &["PreferClose", "PreferSameZone", "PreferSameNode"];
    if let Some(v) = spec.traffic_distribution.as_deref()
        && !TRAFFIC_DISTRIBUTIONS.contains(&v)
    {
        errs.push(FieldError::not_supported(
            "spec.trafficDistribution",
            v,
            TRAFFIC_DISTRIBUTIONS,
        ));
    }
    if spec.external_traffic_policy.is_some() && !has_node_ports(svc) {
        errs.push(FieldError::invalid(
            "spec.externalTrafficPolicy",
            spec.external_traffic_policy.as_deref().unwrap_or(""),
            "may only be set for externally-accessible services",
        ));
    }
    if spec.health_check_node_port.unwrap_or(0) != 0 && !needs_health_check(svc) {
        errs.push(FieldError::invalid(
            "spec.healthCheckNodePort",
            &spec.health_check_node_port.unwrap_or(0).to_string(),
            "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        ));
    }
    if spec.allocate_load_balancer_node_ports.is_some() && kind != "LoadBalancer" {
        errs.push(FieldError::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    errs
}

/// The external IPs and a load balancer's source ranges, checked strictly where new.
fn strict_addresses(svc: &Service, old: Option<&Service>, errs: &mut FieldErrors) {
    let spec = svc.spec.clone().unwrap_or_default();
    let old_spec = old.and_then(|o| o.spec.clone()).unwrap_or_default();
    let old_ips: Vec<&str> = old_spec
        .external_ips
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    for (i, ip) in spec.external_ips.iter().flatten().enumerate() {
        if let Some(why) = strict_ip_problem(ip, &old_ips) {
            errs.push(FieldError::invalid(
                format!("spec.externalIPs[{i}]"),
                ip,
                why,
            ));
        }
    }
    if service_type(svc) == "LoadBalancer" {
        let old_ranges: Vec<&str> = old_spec
            .load_balancer_source_ranges
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        for (i, range) in spec
            .load_balancer_source_ranges
            .iter()
            .flatten()
            .enumerate()
        {
            if let Some(why) = strict_cidr_problem(range, &old_ranges) {
                // Upstream's path names the Go field.
                errs.push(FieldError::invalid(
                    format!("spec.LoadBalancerSourceRanges[{i}]"),
                    range,
                    why,
                ));
            }
        }
    }
}

impl Strategy for ServiceStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = Service;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "",
            kind: "Service",
            resource: "services",
            short_names: &["svc"],
            namespaced: true,
        }
        .v1_in_all();
        d.field_labels = FieldLabels::of_kind(&["spec.clusterIP", "spec.type"]);
        d
    }

    fn field(&self, svc: &Service, field: &str) -> Option<String> {
        let spec = svc.spec.as_ref();
        let value = match field {
            "spec.clusterIP" => spec.and_then(|s| s.cluster_ip.clone()),
            "spec.type" => spec.and_then(|s| s.type_.clone()),
            _ => return None,
        };
        Some(value.unwrap_or_default())
    }

    fn default(&self, svc: &mut Service) {
        let spec = svc.spec.get_or_insert_with(Default::default);
        let kind = spec.type_.get_or_insert_with(|| "ClusterIP".into()).clone();
        let affinity = spec.session_affinity.get_or_insert_with(|| "None".into());
        if affinity == "ClientIP" {
            let config = spec
                .session_affinity_config
                .get_or_insert_with(Default::default);
            let client = config.client_ip.get_or_insert_with(Default::default);
            client
                .timeout_seconds
                .get_or_insert(DEFAULT_AFFINITY_TIMEOUT);
        }
        for port in spec.ports.iter_mut().flatten() {
            port.protocol.get_or_insert_with(|| "TCP".into());
            let unset = match &port.target_port {
                None => true,
                Some(IntOrString::Int(0)) => true,
                Some(IntOrString::String(s)) => s.is_empty(),
                Some(IntOrString::Int(_)) => false,
            };
            if unset {
                port.target_port = Some(IntOrString::Int(port.port));
            }
        }
        if kind != "ExternalName" {
            spec.internal_traffic_policy
                .get_or_insert_with(|| "Cluster".into());
        }
        if matches!(kind.as_str(), "NodePort" | "LoadBalancer") {
            spec.external_traffic_policy
                .get_or_insert_with(|| "Cluster".into());
        }
        if kind == "LoadBalancer" {
            spec.allocate_load_balancer_node_ports.get_or_insert(true);
        }
        // clusterIP and clusterIPs say the same; whichever is given fills the other.
        let first = spec
            .cluster_ips
            .as_ref()
            .and_then(|ips| ips.first())
            .cloned();
        match (spec.cluster_ip.as_deref().unwrap_or(""), first) {
            ("", Some(ip)) => spec.cluster_ip = Some(ip),
            (ip, None) if !ip.is_empty() => spec.cluster_ips = Some(vec![ip.to_string()]),
            _ => {}
        }
    }

    fn prepare_for_create(&self, svc: &mut Service) {
        svc.status = Some(ServiceStatus {
            load_balancer: Some(Default::default()),
            ..Default::default()
        });
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        // A DNS-1123 label, digits first allowed (upstream's RelaxedServiceNameValidation,
        // beta and on by default in v1.36).
        dns1123_label
    }

    fn validate(&self, svc: &Service) -> FieldErrors {
        let mut errs = validate_service(svc);
        strict_addresses(svc, None, &mut errs);
        errs
    }

    fn validate_update(&self, new: &Service, old: &Service) -> FieldErrors {
        let mut errs = validate_service(new);
        strict_addresses(new, Some(old), &mut errs);
        // A load balancer's addresses are written only for a LoadBalancer Service.
        let ingress = |s: &Service| {
            s.status
                .as_ref()
                .and_then(|s| s.load_balancer.as_ref())
                .and_then(|lb| lb.ingress.clone())
                .unwrap_or_default()
        };
        if service_type(new) != "LoadBalancer"
            && !ingress(new).is_empty()
            && ingress(new) != ingress(old)
        {
            errs.push(FieldError::forbidden(
                "status.loadBalancer.ingress",
                "may only be used when `spec.type` is 'LoadBalancer'",
            ));
        }
        let ips = |s: &Service| {
            s.spec
                .as_ref()
                .and_then(|s| s.cluster_ips.clone())
                .unwrap_or_default()
        };
        let external = |s: &Service| service_type(s) == "ExternalName";
        let (before, after) = (ips(old), ips(new));
        // The primary cluster IP stays, unless the type moves to or from ExternalName.
        if !external(old)
            && !external(new)
            && let (Some(b), Some(a)) = (before.first(), after.first())
            && a != b
        {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                a,
                "may not change once set",
            ));
        }
        if !external(old) && !external(new) && !before.is_empty() && after.is_empty() {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                "",
                "may not change once set",
            ));
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut Service, from: &Service) {
        to.status = from.status.clone();
    }
}

/// Problems of a port name as an IANA service name (as named target ports are).
fn iana_service_name(name: &str) -> Vec<&'static str> {
    let mut why = Vec::new();
    if name.len() > 15 {
        why.push("must be no more than 15 characters");
    }
    if !name
        .bytes()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    {
        why.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if name.contains("--") {
        why.push("must not contain consecutive hyphens");
    }
    if !name.bytes().any(|c| c.is_ascii_lowercase()) {
        why.push("must contain at least one letter (a-z)");
    }
    if name.starts_with('-') || name.ends_with('-') {
        why.push("must not begin or end with a hyphen");
    }
    why
}

fn validate_ports(ports: &[ServicePort], kind: &str, errs: &mut FieldErrors) {
    let mut names = Vec::new();
    let mut seen: Vec<(i32, &str)> = Vec::new();
    let mut seen_node_ports: Vec<(i32, &str)> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let path = |f: &str| format!("spec.ports[{i}].{f}");
        let name = port.name.as_deref().unwrap_or("");
        if name.is_empty() {
            if ports.len() > 1 {
                errs.push(FieldError::required(path("name"), ""));
            }
        } else {
            for why in dns1123_label(name) {
                errs.push(FieldError::invalid(path("name"), name, why));
            }
            if names.contains(&name) {
                errs.push(FieldError::duplicate(path("name"), name));
            }
            names.push(name);
        }
        if !(1..=65535).contains(&port.port) {
            errs.push(FieldError::invalid(
                path("port"),
                &port.port.to_string(),
                "must be between 1 and 65535, inclusive",
            ));
        }
        let protocol = port.protocol.as_deref().unwrap_or("TCP");
        if !matches!(protocol, "TCP" | "UDP" | "SCTP") {
            errs.push(FieldError::not_supported(
                path("protocol"),
                protocol,
                &["SCTP", "TCP", "UDP"],
            ));
        }
        match &port.target_port {
            Some(IntOrString::Int(p)) if !(1..=65535).contains(p) => {
                errs.push(FieldError::invalid(
                    path("targetPort"),
                    &p.to_string(),
                    "must be between 1 and 65535, inclusive",
                ))
            }
            Some(IntOrString::String(s)) => {
                for why in iana_service_name(s) {
                    errs.push(FieldError::invalid(path("targetPort"), s, why));
                }
            }
            _ => {}
        }
        let node_port = port.node_port.unwrap_or(0);
        if node_port != 0 {
            if kind == "ClusterIP" {
                errs.push(FieldError::forbidden(
                    path("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            } else if !(1..=65535).contains(&node_port) {
                errs.push(FieldError::invalid(
                    path("nodePort"),
                    &node_port.to_string(),
                    "must be between 1 and 65535, inclusive",
                ));
            } else if seen_node_ports.contains(&(node_port, protocol)) {
                errs.push(FieldError::duplicate(
                    path("nodePort"),
                    &node_port.to_string(),
                ));
            }
            seen_node_ports.push((node_port, protocol));
        }
        if seen.contains(&(port.port, protocol)) {
            errs.push(FieldError::duplicate(
                format!("spec.ports[{i}]"),
                &format!("{}/{protocol}", port.port),
            ));
        }
        seen.push((port.port, protocol));
    }
}

fn validate_cluster_ips(spec: &k8s_openapi::api::core::v1::ServiceSpec, errs: &mut FieldErrors) {
    let cluster_ip = spec.cluster_ip.as_deref().unwrap_or("");
    let ips = spec.cluster_ips.as_deref().unwrap_or_default();
    if let Some(first) = ips.first()
        && !cluster_ip.is_empty()
        && first != cluster_ip
    {
        errs.push(FieldError::invalid(
            "spec.clusterIPs[0]",
            first,
            "must match `clusterIP` if specified",
        ));
    }
    if ips.len() > 2 {
        errs.push(FieldError::invalid(
            "spec.clusterIPs",
            &ips.join(","),
            "may only hold up to 2 values",
        ));
    }
    let mut families = Vec::new();
    for (i, ip) in ips.iter().enumerate() {
        if ip == NONE {
            if i > 0 || ips.len() > 1 {
                errs.push(FieldError::invalid(
                    format!("spec.clusterIPs[{i}]"),
                    ip,
                    "must be empty when the first value is 'None'",
                ));
            }
            continue;
        }
        match parse_ip(ip) {
            Some(addr) => families.push(family_of(&addr)),
            None => errs.push(FieldError::invalid(
                format!("spec.clusterIPs[{i}]"),
                ip,
                if has_leading_zeros(ip) {
                    "must not have leading 0s"
                } else {
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
                },
            )),
        }
    }
    if families.len() == 2 && families[0] == families[1] {
        errs.push(FieldError::invalid(
            "spec.clusterIPs[1]",
            &ips[1],
            "may not have the same family as spec.clusterIPs[0]",
        ));
    }
    let declared = spec.ip_families.as_deref().unwrap_or_default();
    for (i, family) in declared.iter().enumerate() {
        if !matches!(family.as_str(), "IPv4" | "IPv6") {
            errs.push(FieldError::not_supported(
                format!("spec.ipFamilies[{i}]"),
                family,
                &["IPv4", "IPv6"],
            ));
        } else if declared[..i].contains(family) {
            errs.push(FieldError::duplicate(
                format!("spec.ipFamilies[{i}]"),
                family,
            ));
        } else if let Some(ip_family) = families.get(i)
            && ip_family != family
        {
            errs.push(FieldError::invalid(
                format!("spec.ipFamilies[{i}]"),
                family,
                format!("must match the family of spec.clusterIPs[{i}]"),
            ));
        }
    }
    if declared.len() > 2 {
        errs.push(FieldError::invalid(
            "spec.ipFamilies",
            &declared.join(","),
            "may only hold up to 2 values",
        ));
    }
    if let Some(policy) = spec.ip_family_policy.as_deref()
        && !FAMILY_POLICIES.contains(&policy)
    {
        errs.push(FieldError::not_supported(
            "spec.ipFamilyPolicy",
            policy,
            &FAMILY_POLICIES,
        ));
    }
}

/// The strategy of IPAddress: named by the address in canonical form, with a parent.
#[derive(Debug, Default, Clone, Copy)]
pub struct IpAddressStrategy;

impl Strategy for IpAddressStrategy {
    type Object = IPAddress;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "networking.k8s.io",
            kind: "IPAddress",
            resource: "ipaddresses",
            short_names: &["ip"],
            namespaced: false,
        }
        .v1()
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        |name| match parse_ip(name) {
            Some(ip) if ip.to_string() == name => Vec::new(),
            Some(ip) => vec![format!("must be in canonical form ({ip:?})")],
            None => vec!["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".into()],
        }
    }

    fn validate(&self, ip: &IPAddress) -> FieldErrors {
        let mut errs = Vec::new();
        let parent = Some(&ip.spec.parent_ref).filter(|p| **p != Default::default());
        match parent {
            None => errs.push(FieldError::required("spec.parentRef", "")),
            Some(p) => {
                if p.resource.is_empty() {
                    errs.push(FieldError::required("spec.parentRef.resource", ""));
                }
                if p.name.is_empty() {
                    errs.push(FieldError::required("spec.parentRef.name", ""));
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &IPAddress, old: &IPAddress) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.spec != old.spec {
            errs.push(FieldError::invalid(
                "spec.parentRef",
                "",
                "field is immutable",
            ));
        }
        errs
    }
}

/// The strategy of ServiceCIDR: one or two ranges (one per family), immutable once set.
#[derive(Debug, Default, Clone, Copy)]
pub struct ServiceCidrStrategy;

impl Strategy for ServiceCidrStrategy {
    type Object = ServiceCIDR;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "networking.k8s.io",
            kind: "ServiceCIDR",
            resource: "servicecidrs",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn validate(&self, cidr: &ServiceCIDR) -> FieldErrors {
        let mut errs = Vec::new();
        let cidrs = cidr
            .spec
            .as_ref()
            .and_then(|s| s.cidrs.clone())
            .unwrap_or_default();
        if cidrs.is_empty() {
            errs.push(FieldError::required("spec.cidrs", ""));
        }
        if cidrs.len() > 2 {
            errs.push(FieldError::invalid(
                "spec.cidrs",
                &cidrs.join(","),
                "may only hold up to 2 values",
            ));
        }
        let mut families = Vec::new();
        for (i, c) in cidrs.iter().enumerate() {
            match Cidr::parse(c) {
                Ok(parsed) => families.push(parsed.family()),
                Err(why) => errs.push(FieldError::invalid(format!("spec.cidrs[{i}]"), c, why)),
            }
        }
        if families.len() == 2 && families[0] == families[1] {
            errs.push(FieldError::invalid(
                "spec.cidrs",
                &cidrs.join(","),
                "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &ServiceCIDR, old: &ServiceCIDR) -> FieldErrors {
        let mut errs = self.validate(new);
        let cidrs = |c: &ServiceCIDR| c.spec.as_ref().and_then(|s| s.cidrs.clone());
        if cidrs(new) != cidrs(old) {
            errs.push(FieldError::invalid(
                "spec.cidrs",
                &cidrs(new).unwrap_or_default().join(","),
                "field is immutable",
            ));
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut ServiceCIDR, from: &ServiceCIDR) {
        to.status = from.status.clone();
    }
}

/// An IPv4 address written with a leading zero in an octet (`010.1.2.3`), which Go's old
/// parser read as decimal and other parsers as octal.
fn has_leading_zeros(address: &str) -> bool {
    let octets: Vec<&str> = address.split('.').collect();
    octets.len() == 4
        && octets
            .iter()
            .all(|o| !o.is_empty() && o.len() <= 3 && o.bytes().all(|b| b.is_ascii_digit()))
        && octets.iter().any(|o| o.len() > 1 && o.starts_with('0'))
}

/// Upstream's strict check (v1.33+) of an address in a field that once took looser forms;
/// a value the object already had (`old`) keeps the old rule. `None` when it passes.
pub(crate) fn strict_ip_problem(value: &str, old: &[&str]) -> Option<&'static str> {
    if old.contains(&value) {
        return None;
    }
    if has_leading_zeros(value) {
        return Some("must not have leading 0s");
    }
    match value.parse::<IpAddr>() {
        Err(_) => Some("must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
        Ok(IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_some() => {
            Some("must not be an IPv4-mapped IPv6 address")
        }
        Ok(_) => None,
    }
}

/// The same for a CIDR value: a valid range, no leading zeros, no host bits set.
pub(crate) fn strict_cidr_problem(value: &str, old: &[&str]) -> Option<&'static str> {
    if old.contains(&value) {
        return None;
    }
    let invalid = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
    let Some((address, _)) = value.split_once('/') else {
        return Some(invalid);
    };
    if has_leading_zeros(address) {
        return Some("must not have leading 0s");
    }
    match Cidr::parse_network(value) {
        Err(_) => Some(invalid),
        Ok(cidr) if address.parse::<IpAddr>().ok() != Some(cidr.base) => {
            Some("must not have bits set beyond the prefix length")
        }
        Ok(_) => None,
    }
}

/// An address range in CIDR notation, its host bits zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The first address.
    pub base: IpAddr,
    /// The prefix length.
    pub prefix: u8,
}

impl Cidr {
    /// Parses `a.b.c.d/n` or `x::/n`; host bits must be zero, as upstream's ServiceCIDRs.
    pub fn parse(value: &str) -> Result<Self, String> {
        let cidr = Self::parse_network(value)?;
        let given: Option<IpAddr> = value.split_once('/').and_then(|(a, _)| a.parse().ok());
        if given != Some(cidr.base) {
            return Err(format!(
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64): the address has host bits set, did you mean {cidr}?"
            ));
        }
        Ok(cidr)
    }

    /// Parses `address/prefix` as the network holding the address (host bits dropped), as
    /// upstream's flags do.
    pub fn parse_network(value: &str) -> Result<Self, String> {
        let bad = || "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)".to_string();
        let (addr, prefix) = value.split_once('/').ok_or_else(bad)?;
        let base: IpAddr = addr.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        let bits = if base.is_ipv4() { 32 } else { 128 };
        if prefix > bits {
            return Err(bad());
        }
        let cidr = Self { base, prefix };
        Ok(Self {
            base: cidr.nth_unchecked(0),
            prefix,
        })
    }

    /// `IPv4` or `IPv6`.
    pub fn family(&self) -> &'static str {
        family_of(&self.base)
    }

    fn bits(&self) -> u32 {
        if self.base.is_ipv4() { 32 } else { 128 }
    }

    /// How many addresses the range holds (saturating at `u128::MAX`).
    pub fn size(&self) -> u128 {
        let host = self.bits() - u32::from(self.prefix);
        1u128.checked_shl(host).unwrap_or(u128::MAX)
    }

    fn as_number(ip: &IpAddr) -> u128 {
        match ip {
            IpAddr::V4(v4) => u128::from(u32::from(*v4)),
            IpAddr::V6(v6) => u128::from(*v6),
        }
    }

    fn mask(&self) -> u128 {
        let host = self.bits() - u32::from(self.prefix);
        let all = if self.bits() == 32 {
            u128::from(u32::MAX)
        } else {
            u128::MAX
        };
        all & !(1u128.checked_shl(host).unwrap_or(0).wrapping_sub(1))
    }

    fn nth_unchecked(&self, n: u128) -> IpAddr {
        let start = Self::as_number(&self.base) & self.mask();
        let value = start.wrapping_add(n);
        match self.base {
            IpAddr::V4(_) => IpAddr::V4((value as u32).into()),
            IpAddr::V6(_) => IpAddr::V6(value.into()),
        }
    }

    /// The `n`th address of the range.
    pub fn nth(&self, n: u128) -> Option<IpAddr> {
        (n < self.size()).then(|| self.nth_unchecked(n))
    }

    /// Where `ip` is in the range, if it is.
    pub fn offset_of(&self, ip: &IpAddr) -> Option<u128> {
        if ip.is_ipv4() != self.base.is_ipv4() {
            return None;
        }
        let n = Self::as_number(ip);
        let start = Self::as_number(&self.base) & self.mask();
        (n & self.mask() == start).then(|| n - start)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.base, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_addresses_are_checked_strictly_and_stored_ones_keep_their_rule() {
        assert_eq!(strict_ip_problem("10.1.2.3", &[]), None);
        assert_eq!(
            strict_ip_problem("010.1.2.3", &[]),
            Some("must not have leading 0s")
        );
        assert_eq!(strict_ip_problem("010.1.2.3", &["010.1.2.3"]), None);
        assert_eq!(
            strict_ip_problem("::ffff:1.2.3.4", &[]),
            Some("must not be an IPv4-mapped IPv6 address")
        );
        assert_eq!(strict_cidr_problem("10.0.0.0/8", &[]), None);
        assert_eq!(
            strict_cidr_problem("10.0.0.1/8", &[]),
            Some("must not have bits set beyond the prefix length")
        );
        assert_eq!(strict_cidr_problem("10.0.0.1/8", &["10.0.0.1/8"]), None);
        assert_eq!(
            strict_cidr_problem("10.0.0.0", &[]),
            Some("must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")
        );
    }

    fn svc(v: serde_json::Value) -> Service {
        let mut s: Service = serde_json::from_value(v).unwrap();
        ServiceStrategy.default(&mut s);
        s
    }

    fn fields(errs: FieldErrors) -> Vec<String> {
        errs.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn defaults_fill_type_protocols_target_ports_and_policies() {
        let s = svc(serde_json::json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}}));
        let spec = s.spec.unwrap();
        assert_eq!(spec.session_affinity.as_deref(), Some("None"));
        let port = &spec.ports.unwrap()[0];
        assert_eq!(port.protocol.as_deref(), Some("TCP"));
        assert_eq!(port.target_port, Some(IntOrString::Int(80)));
        assert_eq!(spec.external_traffic_policy.as_deref(), Some("Cluster"));
        assert_eq!(spec.internal_traffic_policy.as_deref(), Some("Cluster"));
        let s = svc(serde_json::json!({"spec": {"clusterIP": "10.0.0.9", "ports": [{"port": 1}]}}));
        assert_eq!(s.spec.unwrap().cluster_ips, Some(vec!["10.0.0.9".into()]));
    }

    #[test]
    fn bad_services_are_refused_with_field_paths() {
        let s = svc(serde_json::json!({"spec": {"type": "Bogus",
            "ports": [{"port": 0, "name": "a"}, {"port": 0, "name": "a", "protocol": "ICMP",
                       "targetPort": "--x"}]}}));
        let f = fields(ServiceStrategy.validate(&s));
        for want in [
            "spec.type",
            "spec.ports[0].port",
            "spec.ports[1].name",
            "spec.ports[1].protocol",
            "spec.ports[1].targetPort",
        ] {
            assert!(f.contains(&want.to_string()), "{want} in {f:?}");
        }
        let s = svc(
            serde_json::json!({"spec": {"ports": [{"port": 80, "nodePort": 30000}],
            "clusterIP": "10.0.0.300"}}),
        );
        let f = fields(ServiceStrategy.validate(&s));
        assert!(f.contains(&"spec.ports[0].nodePort".to_string()), "{f:?}");
        assert!(f.contains(&"spec.clusterIPs[0]".to_string()), "{f:?}");
        let s = svc(serde_json::json!({"spec": {"type": "ExternalName"}}));
        assert_eq!(fields(ServiceStrategy.validate(&s)), ["spec.externalName"]);
    }

    #[test]
    fn the_primary_cluster_ip_is_immutable() {
        let old =
            svc(serde_json::json!({"spec": {"clusterIP": "10.0.0.9", "ports": [{"port": 1}]}}));
        let new =
            svc(serde_json::json!({"spec": {"clusterIP": "10.0.0.8", "ports": [{"port": 1}]}}));
        assert_eq!(
            fields(ServiceStrategy.validate_update(&new, &old)),
            ["spec.clusterIPs[0]"]
        );
        assert!(ServiceStrategy.validate_update(&old, &old).is_empty());
    }

    #[test]
    fn cidrs_parse_count_and_locate_addresses() {
        let c = Cidr::parse("10.0.0.0/24").unwrap();
        assert_eq!(c.size(), 256);
        assert_eq!(c.nth(1), Some("10.0.0.1".parse().unwrap()));
        assert_eq!(c.nth(256), None);
        assert_eq!(c.offset_of(&"10.0.0.7".parse().unwrap()), Some(7));
        assert_eq!(c.offset_of(&"10.0.1.7".parse().unwrap()), None);
        let v6 = Cidr::parse("fd00::/64").unwrap();
        assert_eq!(v6.size(), 1 << 64);
        assert_eq!(v6.nth(1), Some("fd00::1".parse().unwrap()));
        assert!(
            Cidr::parse("10.0.0.1/24")
                .unwrap_err()
                .contains("10.0.0.0/24")
        );
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert_eq!(Cidr::parse("::/0").unwrap().size(), u128::MAX);
    }
}
