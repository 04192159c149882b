//! Where Services send traffic: `v1` Endpoints and `discovery.k8s.io/v1` EndpointSlices.

use std::net::IpAddr;

use capstan_meta::validation::{dns1123_label, dns1123_subdomain};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::core::v1::Endpoints;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::describe::Names;

/// The protocols a port may name.
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
/// Most endpoints one slice holds.
const MAX_SLICE_ENDPOINTS: usize = 1000;
/// Most ports one slice holds.
const MAX_SLICE_PORTS: usize = 100;
/// Most addresses of one endpoint.
const MAX_ENDPOINT_ADDRESSES: usize = 100;

/// Why an endpoint address is refused: not an address, or one no Service may send to.
fn endpoint_ip_problem(value: &str) -> Option<&'static str> {
    let Ok(ip) = value.parse::<IpAddr>() else {
        return Some("must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
    };
    if ip.is_unspecified() {
        return Some("may not be unspecified (0.0.0.0)");
    }
    if ip.is_loopback() {
        return Some("may not be in the loopback range (127.0.0.0/8, ::1/128)");
    }
    let link_local = match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    };
    if link_local {
        return Some("may not be in the link-local range (169.254.0.0/16, fe80::/10)");
    }
    let link_local_multicast = match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => (v6.segments()[0] & 0xff0f) == 0xff02,
    };
    if link_local_multicast {
        return Some("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
    }
    None
}

fn validate_port(
    path: &str,
    name: Option<&str>,
    protocol: Option<&str>,
    several: bool,
    errs: &mut FieldErrors,
) {
    match name.unwrap_or("") {
        "" if several => errs.push(FieldError::required(format!("{path}.name"), "")),
        "" => {}
        n => {
            for why in dns1123_label(n) {
                errs.push(FieldError::invalid(format!("{path}.name"), n, why));
            }
        }
    }
    match protocol {
        None => errs.push(FieldError::required(format!("{path}.protocol"), "")),
        Some(p) if !PROTOCOLS.contains(&p) => errs.push(FieldError::not_supported(
            format!("{path}.protocol"),
            p,
            &PROTOCOLS,
        )),
        Some(_) => {}
    }
}

/// The strategy of Endpoints: ports defaulted to TCP; addresses, ports and host names checked
/// as upstream.
#[derive(Debug, Default, Clone, Copy)]
pub struct EndpointsStrategy;

impl Strategy for EndpointsStrategy {
    type Object = Endpoints;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "",
            kind: "Endpoints",
            resource: "endpoints",
            short_names: &["ep"],
            namespaced: true,
        }
        .v1();
        d.deprecation = Some(
            "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice".into(),
        );
        d
    }

    fn default(&self, ep: &mut Endpoints) {
        for subset in ep.subsets.iter_mut().flatten() {
            for port in subset.ports.iter_mut().flatten() {
                port.protocol.get_or_insert_with(|| "TCP".into());
            }
        }
    }

    fn validate(&self, ep: &Endpoints) -> FieldErrors {
        let mut errs = Vec::new();
        for (i, subset) in ep.subsets.iter().flatten().enumerate() {
            let path = format!("subsets[{i}]");
            let ready = subset.addresses.as_deref().unwrap_or_default();
            let not_ready = subset.not_ready_addresses.as_deref().unwrap_or_default();
            if ready.is_empty() && not_ready.is_empty() {
                errs.push(FieldError::required(
                    &path,
                    "must specify `addresses` or `notReadyAddresses`",
                ));
            }
            for (field, list) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
                for (j, address) in list.iter().enumerate() {
                    let at = format!("{path}.{field}[{j}]");
                    if let Some(why) = endpoint_ip_problem(&address.ip) {
                        errs.push(FieldError::invalid(format!("{at}.ip"), &address.ip, why));
                    }
                    if let Some(host) = address.hostname.as_deref().filter(|h| !h.is_empty()) {
                        for why in dns1123_label(host) {
                            errs.push(FieldError::invalid(format!("{at}.hostname"), host, why));
                        }
                    }
                    if let Some(node) = address.node_name.as_deref().filter(|n| !n.is_empty()) {
                        for why in dns1123_subdomain(node) {
                            errs.push(FieldError::invalid(format!("{at}.nodeName"), node, why));
                        }
                    }
                }
            }
            let ports = subset.ports.as_deref().unwrap_or_default();
            for (j, port) in ports.iter().enumerate() {
                let at = format!("{path}.ports[{j}]");
                validate_port(
                    &at,
                    port.name.as_deref(),
                    port.protocol.as_deref(),
                    ports.len() > 1,
                    &mut errs,
                );
                if !(1..=65535).contains(&port.port) {
                    errs.push(FieldError::invalid(
                        format!("{at}.port"),
                        &port.port.to_string(),
                        "must be between 1 and 65535, inclusive",
                    ));
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &Endpoints, _old: &Endpoints) -> FieldErrors {
        self.validate(new)
    }
}

/// The strategy of EndpointSlice: an address type fixed at create, endpoints with
/// addresses of that type, ports, conditions; as upstream.
#[derive(Debug, Default, Clone, Copy)]
pub struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {
    type Object = EndpointSlice;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "discovery.k8s.io",
            kind: "EndpointSlice",
            resource: "endpointslices",
            short_names: &[],
            namespaced: true,
        }
        .v1()
    }

    fn default(&self, slice: &mut EndpointSlice) {
        for port in slice.ports.iter_mut().flatten() {
            port.protocol.get_or_insert_with(|| "TCP".into());
            port.name.get_or_insert_with(String::new);
        }
    }

    fn validate(&self, slice: &EndpointSlice) -> FieldErrors {
        let mut errs = Vec::new();
        let kind = slice.address_type.as_str();
        if !matches!(kind, "IPv4" | "IPv6" | "FQDN") {
            errs.push(FieldError::not_supported(
                "addressType",
                kind,
                &["FQDN", "IPv4", "IPv6"],
            ));
        }
        let endpoints = slice.endpoints.as_deref().unwrap_or_default();
        if endpoints.len() > MAX_SLICE_ENDPOINTS {
            errs.push(FieldError::invalid_raw(
                "endpoints",
                endpoints.len().to_string(),
                format!("must have at most {MAX_SLICE_ENDPOINTS} items"),
            ));
        }
        for (i, endpoint) in endpoints.iter().enumerate() {
            let at = format!("endpoints[{i}]");
            if endpoint.addresses.is_empty() {
                errs.push(FieldError::required(
                    format!("{at}.addresses"),
                    "must contain at least 1 address",
                ));
            } else if endpoint.addresses.len() > MAX_ENDPOINT_ADDRESSES {
                errs.push(FieldError::invalid_raw(
                    format!("{at}.addresses"),
                    endpoint.addresses.len().to_string(),
                    format!("must have at most {MAX_ENDPOINT_ADDRESSES} items"),
                ));
            }
            for (j, address) in endpoint.addresses.iter().enumerate() {
                let path = format!("{at}.addresses[{j}]");
                match kind {
                    "IPv4" | "IPv6" => match address.parse::<IpAddr>() {
                        Ok(ip) if crate::service::family_of(&ip) != kind => {
                            errs.push(FieldError::invalid(
                                path,
                                address,
                                format!("must be an {kind} address"),
                            ))
                        }
                        Ok(_) => {
                            if let Some(why) = endpoint_ip_problem(address) {
                                errs.push(FieldError::invalid(path, address, why));
                            }
                        }
                        Err(_) => errs.push(FieldError::invalid(
                            path,
                            address,
                            format!("must be an {kind} address"),
                        )),
                    },
                    "FQDN" => {
                        for why in dns1123_subdomain(address) {
                            errs.push(FieldError::invalid(path.clone(), address, why));
                        }
                    }
                    _ => {}
                }
            }
            if let Some(host) = endpoint.hostname.as_deref().filter(|h| !h.is_empty()) {
                for why in dns1123_label(host) {
                    errs.push(FieldError::invalid(format!("{at}.hostname"), host, why));
                }
            }
            if let Some(node) = endpoint.node_name.as_deref().filter(|n| !n.is_empty()) {
                for why in dns1123_subdomain(node) {
                    errs.push(FieldError::invalid(format!("{at}.nodeName"), node, why));
                }
            }
        }
        let ports = slice.ports.as_deref().unwrap_or_default();
        if ports.len() > MAX_SLICE_PORTS {
            errs.push(FieldError::invalid_raw(
                "ports",
                ports.len().to_string(),
                format!("must have at most {MAX_SLICE_PORTS} items"),
            ));
        }
        let mut names = Vec::new();
        for (i, port) in ports.iter().enumerate() {
            let at = format!("ports[{i}]");
            let name = port.name.as_deref().unwrap_or("");
            if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{at}.name"), name));
            }
            names.push(name);
            validate_port(&at, Some(name), port.protocol.as_deref(), false, &mut errs);
            if let Some(p) = port.port
                && !(0..=65535).contains(&p)
            {
                errs.push(FieldError::invalid(
                    format!("{at}.port"),
                    &p.to_string(),
                    "must be between 0 and 65535, inclusive",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &EndpointSlice, old: &EndpointSlice) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.address_type != old.address_type {
            errs.push(FieldError::invalid(
                "addressType",
                &new.address_type,
                "field is immutable",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errs: FieldErrors) -> Vec<String> {
        errs.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn endpoints_refuse_addresses_no_service_may_reach() {
        let ep: Endpoints = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e"},
            "subsets": [{"addresses": [{"ip": "10.1.2.3"}, {"ip": "127.0.0.1"}, {"ip": "fe80::1"},
                                       {"ip": "nope"}],
                         "ports": [{"port": 80, "protocol": "TCP"}, {"port": 70000, "protocol": "TCP", "name": "b"}]}],
        }))
        .unwrap();
        assert_eq!(
            fields(EndpointsStrategy.validate(&ep)),
            [
                "subsets[0].addresses[1].ip",
                "subsets[0].addresses[2].ip",
                "subsets[0].addresses[3].ip",
                "subsets[0].ports[0].name",
                "subsets[0].ports[1].port",
            ]
        );
    }

    #[test]
    fn slices_hold_addresses_of_their_type_and_keep_it() {
        let mut slice: EndpointSlice = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "s"}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.5"]}, {"addresses": ["fd00::5"]}, {"addresses": []}],
            "ports": [{"port": 80}, {"port": 81}],
        }))
        .unwrap();
        EndpointSliceStrategy.default(&mut slice);
        assert_eq!(
            fields(EndpointSliceStrategy.validate(&slice)),
            [
                "endpoints[1].addresses[0]",
                "endpoints[2].addresses",
                "ports[1].name"
            ]
        );
        let mut v6 = slice.clone();
        v6.address_type = "IPv6".into();
        assert!(
            fields(EndpointSliceStrategy.validate_update(&v6, &slice))
                .contains(&"addressType".into())
        );
    }
}
