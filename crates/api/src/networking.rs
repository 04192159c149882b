//! `networking.k8s.io/v1`: IngressClass, naming the controller that implements a class of
//! Ingresses (the DefaultIngressClass admission plugin picks the default one); Ingresses;
//! NetworkPolicies.

use capstan_meta::validation::dns1123_subdomain;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::networking::v1::IngressClass;

use crate::describe::Names;

/// Longest controller name.
const MAX_CONTROLLER: usize = 250;

/// The strategy of IngressClass: `spec.controller` a domain-prefixed path, immutable;
/// parameters with a kind and name, and a namespace exactly when their scope is `Namespace`.
#[derive(Debug, Default, Clone, Copy)]
pub struct IngressClassStrategy;

/// Why `value` is not a domain-prefixed path (`acme.io/foo`), if it is not.
pub(crate) fn domain_prefixed_path(value: &str) -> Option<String> {
    let Some((domain, path)) = value.split_once('/') else {
        return Some("must be a domain-prefixed path (such as \"acme.io/foo\")".into());
    };
    if domain.is_empty() || path.is_empty() || !dns1123_subdomain(domain).is_empty() {
        return Some("must be a domain-prefixed path (such as \"acme.io/foo\")".into());
    }
    None
}

impl Strategy for IngressClassStrategy {
    type Object = IngressClass;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "networking.k8s.io",
            kind: "IngressClass",
            resource: "ingressclasses",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn validate(&self, class: &IngressClass) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = class.spec.clone().unwrap_or_default();
        let controller = spec.controller.unwrap_or_default();
        if controller.is_empty() {
            errs.push(FieldError::required("spec.controller", ""));
        } else if controller.len() > MAX_CONTROLLER {
            errs.push(FieldError::too_long("spec.controller", MAX_CONTROLLER));
        } else if let Some(why) = domain_prefixed_path(&controller) {
            errs.push(FieldError::invalid("spec.controller", &controller, why));
        }
        if let Some(p) = spec.parameters {
            if p.kind.is_empty() {
                errs.push(FieldError::required("spec.parameters.kind", ""));
            }
            if p.name.is_empty() {
                errs.push(FieldError::required("spec.parameters.name", ""));
            }
            match p.scope.as_deref() {
                Some("Cluster") | None if p.namespace.is_some() => {
                    errs.push(FieldError::forbidden(
                        "spec.parameters.namespace",
                        "`parameters.scope` is set to 'Cluster'",
                    ))
                }
                Some("Namespace") if p.namespace.as_deref().unwrap_or("").is_empty() => {
                    errs.push(FieldError::required(
                        "spec.parameters.namespace",
                        "`parameters.scope` is set to 'Namespace'",
                    ))
                }
                Some("Cluster" | "Namespace") | None => {}
                Some(other) => errs.push(FieldError::not_supported(
                    "spec.parameters.scope",
                    other,
                    &["Cluster", "Namespace"],
                )),
            }
        }
        errs
    }

    fn validate_update(&self, new: &IngressClass, old: &IngressClass) -> FieldErrors {
        let mut errs = self.validate(new);
        let controller = |c: &IngressClass| c.spec.as_ref().and_then(|s| s.controller.clone());
        if controller(new) != controller(old) {
            errs.push(FieldError::invalid(
                "spec.controller",
                controller(new).as_deref().unwrap_or(""),
                "field is immutable",
            ));
        }
        errs
    }
}

/// Checks a host name of an Ingress: a DNS subdomain, optionally with a leading `*.`.
fn validate_host(errs: &mut FieldErrors, field: String, host: &str) {
    if host.parse::<std::net::IpAddr>().is_ok() {
        errs.push(FieldError::invalid(
            field,
            host,
            "must be a DNS name, not an IP address",
        ));
        return;
    }
    let name = host.strip_prefix("*.").unwrap_or(host);
    for why in dns1123_subdomain(name) {
        errs.push(FieldError::invalid(field.clone(), host, why));
    }
}

/// Checks a backend: a service (a name and a port by number or name) or a resource, one of
/// the two.
fn validate_backend(
    errs: &mut FieldErrors,
    path: &str,
    backend: &k8s_openapi::api::networking::v1::IngressBackend,
) {
    match (&backend.service, &backend.resource) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (None, None) => errs.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
        (Some(service), None) => {
            for why in capstan_meta::validation::dns1035_label(&service.name) {
                errs.push(FieldError::invalid(
                    format!("{path}.service.name"),
                    &service.name,
                    why,
                ));
            }
            let port = service.port.clone().unwrap_or_default();
            match (port.name.as_deref().filter(|n| !n.is_empty()), port.number) {
                (Some(_), Some(n)) if n != 0 => errs.push(FieldError::invalid(
                    format!("{path}.service.port"),
                    "",
                    "cannot set both port name & port number",
                )),
                (None, None | Some(0)) => errs.push(FieldError::invalid(
                    format!("{path}.service.port"),
                    "",
                    "port name or number is required",
                )),
                (None, Some(n)) if !(1..=65535).contains(&n) => errs.push(FieldError::invalid(
                    format!("{path}.service.port.number"),
                    &n.to_string(),
                    "must be between 1 and 65535, inclusive",
                )),
                _ => {}
            }
        }
        (None, Some(resource)) => {
            if resource.kind.is_empty() {
                errs.push(FieldError::required(format!("{path}.resource.kind"), ""));
            }
            if resource.name.is_empty() {
                errs.push(FieldError::required(format!("{path}.resource.name"), ""));
            }
        }
    }
}

/// The strategy of Ingress: hosts, paths (`Exact`, `Prefix` or `ImplementationSpecific`,
/// absolute for the first two), backends, TLS hosts, as upstream.
#[derive(Debug, Default, Clone, Copy)]
pub struct IngressStrategy;

impl Strategy for IngressStrategy {
    type Object = k8s_openapi::api::networking::v1::Ingress;

    fn warnings(
        &self,
        new: &k8s_openapi::api::networking::v1::Ingress,
        _old: Option<&k8s_openapi::api::networking::v1::Ingress>,
    ) -> Vec<String> {
        let annotated = new
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key("kubernetes.io/ingress.class"));
        if annotated {
            vec!["annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead".into()]
        } else {
            Vec::new()
        }
    }

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "networking.k8s.io",
            kind: "Ingress",
            resource: "ingresses",
            short_names: &["ing"],
            namespaced: true,
        }
        .v1()
    }

    fn prepare_for_create(&self, ing: &mut Self::Object) {
        ing.metadata.generation = Some(1);
        ing.status = Some(Default::default());
    }

    fn prepare_for_update(&self, new: &mut Self::Object, old: &Self::Object) {
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, ing: &Self::Object) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = ing.spec.clone().unwrap_or_default();
        let rules = spec.rules.clone().unwrap_or_default();
        if rules.is_empty() && spec.default_backend.is_none() {
            errs.push(FieldError::invalid(
                "spec.rules",
                "",
                "either `defaultBackend` or `rules` must be specified",
            ));
        }
        if let Some(backend) = &spec.default_backend {
            validate_backend(&mut errs, "spec.defaultBackend", backend);
        }
        if let Some(class) = spec.ingress_class_name.as_deref() {
            for why in dns1123_subdomain(class) {
                errs.push(FieldError::invalid("spec.ingressClassName", class, why));
            }
        }
        for (i, rule) in rules.iter().enumerate() {
            let at = format!("spec.rules[{i}]");
            if let Some(host) = rule.host.as_deref().filter(|h| !h.is_empty()) {
                validate_host(&mut errs, format!("{at}.host"), host);
            }
            let Some(http) = &rule.http else { continue };
            for (j, path) in http.paths.iter().enumerate() {
                let p = format!("{at}.http.paths[{j}]");
                let value = path.path.as_deref().unwrap_or("");
                match path.path_type.as_str() {
                    "Exact" | "Prefix" => {
                        if !value.starts_with('/') {
                            errs.push(FieldError::invalid(
                                format!("{p}.path"),
                                value,
                                "must be an absolute path",
                            ));
                        } else if value.contains("//") {
                            errs.push(FieldError::invalid(
                                format!("{p}.path"),
                                value,
                                "must not contain '//'",
                            ));
                        }
                    }
                    "ImplementationSpecific" => {
                        if !value.is_empty() && !value.starts_with('/') {
                            errs.push(FieldError::invalid(
                                format!("{p}.path"),
                                value,
                                "must be an absolute path",
                            ));
                        }
                    }
                    "" => errs.push(FieldError::required(
                        format!("{p}.pathType"),
                        "pathType must be specified",
                    )),
                    other => errs.push(FieldError::not_supported(
                        format!("{p}.pathType"),
                        other,
                        &["Exact", "ImplementationSpecific", "Prefix"],
                    )),
                }
                validate_backend(&mut errs, &format!("{p}.backend"), &path.backend);
            }
        }
        for (i, tls) in spec.tls.iter().flatten().enumerate() {
            for (j, host) in tls.hosts.iter().flatten().enumerate() {
                validate_host(&mut errs, format!("spec.tls[{i}].hosts[{j}]"), host);
            }
        }
        errs
    }

    fn validate_update(&self, new: &Self::Object, _old: &Self::Object) -> FieldErrors {
        self.validate(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut Self::Object, from: &Self::Object) {
        to.status = from.status.clone();
    }
}

/// The strategy of NetworkPolicy: `policyTypes` defaulted from the rules, selectors, ports
/// and IP blocks checked as upstream.
#[derive(Debug, Default, Clone, Copy)]
pub struct NetworkPolicyStrategy;

impl Strategy for NetworkPolicyStrategy {
    type Object = k8s_openapi::api::networking::v1::NetworkPolicy;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "networking.k8s.io",
            kind: "NetworkPolicy",
            resource: "networkpolicies",
            short_names: &["netpol"],
            namespaced: true,
        }
        .v1()
    }

    fn default(&self, np: &mut Self::Object) {
        let spec = np.spec.get_or_insert_with(Default::default);
        spec.pod_selector.get_or_insert_with(Default::default);
        if spec.policy_types.as_ref().is_none_or(|t| t.is_empty()) {
            let mut types = vec!["Ingress".to_string()];
            if spec.egress.as_ref().is_some_and(|e| !e.is_empty()) {
                types.push("Egress".into());
            }
            spec.policy_types = Some(types);
        }
        let ports = spec
            .ingress
            .iter_mut()
            .flatten()
            .flat_map(|r| r.ports.iter_mut().flatten())
            .chain(
                spec.egress
                    .iter_mut()
                    .flatten()
                    .flat_map(|r| r.ports.iter_mut().flatten()),
            );
        for port in ports {
            port.protocol.get_or_insert_with(|| "TCP".into());
        }
    }

    fn prepare_for_create(&self, np: &mut Self::Object) {
        np.metadata.generation = Some(1);
    }

    fn prepare_for_update(&self, new: &mut Self::Object, old: &Self::Object) {
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, np: &Self::Object) -> FieldErrors {
        validate_network_policy(np, &[])
    }

    fn validate_update(&self, new: &Self::Object, old: &Self::Object) -> FieldErrors {
        let blocks = ip_blocks(old);
        validate_network_policy(new, &blocks)
    }
}

/// Every CIDR a NetworkPolicy's peers name (blocks and their exceptions).
fn ip_blocks(np: &k8s_openapi::api::networking::v1::NetworkPolicy) -> Vec<&str> {
    let spec = np.spec.as_ref();
    let ingress = spec
        .and_then(|s| s.ingress.as_ref())
        .into_iter()
        .flatten()
        .flat_map(|r| r.from.iter().flatten());
    let egress = spec
        .and_then(|s| s.egress.as_ref())
        .into_iter()
        .flatten()
        .flat_map(|r| r.to.iter().flatten());
    ingress
        .chain(egress)
        .filter_map(|peer| peer.ip_block.as_ref())
        .flat_map(|b| {
            std::iter::once(b.cidr.as_str()).chain(b.except.iter().flatten().map(String::as_str))
        })
        .collect()
}

/// A NetworkPolicy's rules; CIDRs in `old_blocks` (the stored policy's) keep the looser
/// rule they were accepted under.
fn validate_network_policy(
    np: &k8s_openapi::api::networking::v1::NetworkPolicy,
    old_blocks: &[&str],
) -> FieldErrors {
    use crate::admissionregistration::validate_selector;
    let mut errs = Vec::new();
    let spec = np.spec.clone().unwrap_or_default();
    validate_selector(&mut errs, "spec.podSelector", spec.pod_selector.as_ref());
    let types = spec.policy_types.clone().unwrap_or_default();
    for (i, t) in types.iter().enumerate() {
        if !matches!(t.as_str(), "Ingress" | "Egress") {
            errs.push(FieldError::not_supported(
                format!("spec.policyTypes[{i}]"),
                t,
                &["Egress", "Ingress"],
            ));
        }
    }
    if types.len() > 2 {
        errs.push(FieldError::invalid(
            "spec.policyTypes",
            &types.join(","),
            "may not specify more than two policyTypes",
        ));
    }
    let rules = spec
        .ingress
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, r)| {
            (
                format!("spec.ingress[{i}]"),
                r.ports.clone(),
                r.from.clone(),
                "from",
            )
        })
        .chain(spec.egress.iter().flatten().enumerate().map(|(i, r)| {
            (
                format!("spec.egress[{i}]"),
                r.ports.clone(),
                r.to.clone(),
                "to",
            )
        }));
    for (at, ports, peers, peer_field) in rules {
        for (j, port) in ports.iter().flatten().enumerate() {
            let p = format!("{at}.ports[{j}]");
            if let Some(protocol) = port.protocol.as_deref()
                && !matches!(protocol, "TCP" | "UDP" | "SCTP")
            {
                errs.push(FieldError::not_supported(
                    format!("{p}.protocol"),
                    protocol,
                    &["SCTP", "TCP", "UDP"],
                ));
            }
            match &port.port {
                Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n)) => {
                    if !(1..=65535).contains(n) {
                        errs.push(FieldError::invalid(
                            format!("{p}.port"),
                            &n.to_string(),
                            "must be between 1 and 65535, inclusive",
                        ));
                    } else if let Some(end) = port.end_port
                        && end < *n
                    {
                        errs.push(FieldError::invalid(
                            format!("{p}.endPort"),
                            &end.to_string(),
                            "must be greater than or equal to `port`",
                        ));
                    }
                }
                Some(_) if port.end_port.is_some() => errs.push(FieldError::invalid(
                    format!("{p}.endPort"),
                    "",
                    "may not be specified when `port` is non-numeric",
                )),
                None if port.end_port.is_some() => errs.push(FieldError::invalid(
                    format!("{p}.endPort"),
                    "",
                    "may not be specified when `port` is not specified",
                )),
                _ => {}
            }
        }
        for (j, peer) in peers.iter().flatten().enumerate() {
            let p = format!("{at}.{peer_field}[{j}]");
            let set = [
                peer.pod_selector.is_some(),
                peer.namespace_selector.is_some(),
                peer.ip_block.is_some(),
            ];
            if !set.iter().any(|s| *s) {
                errs.push(FieldError::required(&p, "must specify a peer"));
            }
            if peer.ip_block.is_some() && (set[0] || set[1]) {
                errs.push(FieldError::forbidden(
                    &p,
                    "may not specify more than 1 peer type",
                ));
            }
            validate_selector(
                &mut errs,
                &format!("{p}.podSelector"),
                peer.pod_selector.as_ref(),
            );
            validate_selector(
                &mut errs,
                &format!("{p}.namespaceSelector"),
                peer.namespace_selector.as_ref(),
            );
            if let Some(block) = &peer.ip_block {
                let strict = crate::service::strict_cidr_problem;
                match crate::service::Cidr::parse_network(&block.cidr) {
                    Err(why) => errs.push(FieldError::invalid(
                        format!("{p}.ipBlock.cidr"),
                        &block.cidr,
                        why,
                    )),
                    Ok(_) if strict(&block.cidr, old_blocks).is_some() => {
                        errs.push(FieldError::invalid(
                            format!("{p}.ipBlock.cidr"),
                            &block.cidr,
                            strict(&block.cidr, old_blocks).unwrap_or_default(),
                        ))
                    }
                    Ok(outer) => {
                        for (k, except) in block.except.iter().flatten().enumerate() {
                            let field = format!("{p}.ipBlock.except[{k}]");
                            match crate::service::Cidr::parse_network(except) {
                                Err(why) => errs.push(FieldError::invalid(field, except, why)),
                                Ok(_) if strict(except, old_blocks).is_some() => {
                                    errs.push(FieldError::invalid(
                                        field,
                                        except,
                                        strict(except, old_blocks).unwrap_or_default(),
                                    ))
                                }
                                Ok(inner)
                                    if inner.prefix <= outer.prefix
                                        || outer.offset_of(&inner.base).is_none() =>
                                {
                                    errs.push(FieldError::invalid(
                                        field,
                                        except,
                                        "must be a strict subset of `cidr`",
                                    ))
                                }
                                Ok(_) => {}
                            }
                        }
                    }
                }
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(errs: FieldErrors) -> Vec<String> {
        errs.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn ingresses_need_absolute_paths_typed_and_one_backend() {
        let ing: k8s_openapi::api::networking::v1::Ingress = serde_json::from_value(json!({
            "metadata": {"name": "i"},
            "spec": {"rules": [{"host": "*.example.com", "http": {"paths": [
                {"path": "/ok", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "rel", "pathType": "Exact", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "/x", "pathType": "Regex", "backend": {"service": {"name": "web", "port": {}}}}]}},
                {"host": "10.0.0.1"}]},
        }))
        .unwrap();
        assert_eq!(
            fields(IngressStrategy.validate(&ing)),
            [
                "spec.rules[0].http.paths[1].path",
                "spec.rules[0].http.paths[2].pathType",
                "spec.rules[0].http.paths[2].backend.service.port",
                "spec.rules[1].host"
            ]
        );
    }

    #[test]
    fn network_policies_default_their_types_and_check_blocks() {
        let mut np: k8s_openapi::api::networking::v1::NetworkPolicy = serde_json::from_value(json!({
            "metadata": {"name": "n"},
            "spec": {"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16", "10.1.0.0/16"]}}],
                                                     "ports": [{"port": 80, "endPort": 70}]}]},
        }))
        .unwrap();
        NetworkPolicyStrategy.default(&mut np);
        assert_eq!(
            np.spec.as_ref().unwrap().policy_types.as_deref().unwrap(),
            ["Ingress", "Egress"]
        );
        assert_eq!(
            fields(NetworkPolicyStrategy.validate(&np)),
            [
                "spec.egress[0].ports[0].endPort",
                "spec.egress[0].to[0].ipBlock.except[0]"
            ]
        );
    }
}
