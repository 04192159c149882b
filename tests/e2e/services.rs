//! Services: cluster IPs and node ports allocated from the configured ranges, unique under
//! concurrent creates, across restarts and across two API servers on one etcd; given back
//! when a Service goes; refused with upstream's 422s when taken or out of range.

use std::collections::HashSet;
use std::net::IpAddr;

use capstan_e2e::kubectl;
use capstan_registry::services::{Cidr, ServiceNetwork};
use capstan_testing::TestServer;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::IPAddress;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde_json::json;

use crate::admin;

const SVC: &str = "/api/v1/namespaces/default/services";

/// 10.96.0.0/24 and node ports 30000-30099 (small, so that collisions are likely).
fn network() -> ServiceNetwork {
    ServiceNetwork {
        cidrs: vec![Cidr::parse("10.96.0.0/24").unwrap()],
        node_ports: 30000..=30099,
    }
}

fn node_port_service(name: &str) -> Service {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"type": "NodePort", "selector": {"app": name},
                 "ports": [{"port": 80, "targetPort": 8080}]},
    }))
    .unwrap()
}

/// Every Service's cluster IP and node port, checked unique.
async fn allocations(api: &Api<Service>) -> (HashSet<IpAddr>, HashSet<i32>) {
    let (mut ips, mut ports) = (HashSet::new(), HashSet::new());
    let range = Cidr::parse("10.96.0.0/24").unwrap();
    for svc in api.list(&ListParams::default()).await.unwrap() {
        let spec = svc.spec.unwrap();
        // The API servers' own Service holds the range's first address, no node port.
        if svc.metadata.name.as_deref() == Some("kubernetes") {
            assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.1"));
            assert!(ips.insert("10.96.0.1".parse().unwrap()));
            continue;
        }
        if spec.type_.as_deref() == Some("ExternalName") {
            continue;
        }
        let ip: IpAddr = spec.cluster_ip.unwrap().parse().unwrap();
        assert!(range.offset_of(&ip).is_some(), "{ip} is outside the range");
        assert!(ips.insert(ip), "{ip} was handed out twice");
        assert_eq!(spec.cluster_ips.unwrap(), vec![ip.to_string()]);
        for port in spec.ports.unwrap() {
            let n = port.node_port.unwrap();
            assert!((30000..=30099).contains(&n), "{n} is outside the range");
            assert!(ports.insert(n), "node port {n} was handed out twice");
        }
    }
    (ips, ports)
}

/// Waits until the API servers' own Service is there (it is created in the background).
async fn wait_for_kubernetes_service(api: &Api<Service>) {
    for _ in 0..500 {
        if api.get_opt("kubernetes").await.unwrap().is_some() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the kubernetes Service never came");
}

/// The status of a create.
async fn create_status(server: &TestServer, body: serde_json::Value) -> (u16, serde_json::Value) {
    let r = admin(server)
        .send_json(http::Method::POST, SVC, &body)
        .await;
    (
        r.status.as_u16(),
        serde_json::from_slice(&r.body).unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ips_and_node_ports_are_unique_given_back_and_survive_restarts() {
    let mut server = TestServer::start_with(|c| c.service_network = network()).await;
    let api: Api<Service> = Api::namespaced(server.client().await, "default");

    let creates = (0..64).map(|i| {
        let api = api.clone();
        async move {
            api.create(&PostParams::default(), &node_port_service(&format!("s{i}")))
                .await
                .unwrap()
        }
    });
    let created = futures_util::future::join_all(creates).await;
    wait_for_kubernetes_service(&api).await;
    let (ips, ports) = allocations(&api).await;
    assert_eq!((ips.len(), ports.len()), (65, 64));
    // Each address is recorded as an IPAddress naming its Service.
    let addresses: Api<IPAddress> = Api::all(server.client().await);
    let first = &created[0];
    let ip = first.spec.as_ref().unwrap().cluster_ip.clone().unwrap();
    let record = addresses.get(&ip).await.unwrap();
    let parent = record.spec.parent_ref;
    assert_eq!(
        (parent.resource.as_str(), parent.name.as_str()),
        ("services", "s0")
    );
    assert_eq!(
        record.metadata.labels.unwrap()["ipaddress.kubernetes.io/ip-family"],
        "IPv4"
    );

    // A taken address, an address outside the range and a taken node port are refused.
    let (code, status) = create_status(
        &server,
        json!({"metadata": {"name": "dup"}, "spec": {"clusterIP": ip, "ports": [{"port": 80}]}}),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["details"]["causes"][0]["field"], "spec.clusterIPs");
    assert!(
        status["message"].as_str().unwrap().contains(&format!(
            "failed to allocate IP {ip}: provided IP is already allocated"
        )),
        "{status}"
    );
    let (code, status) = create_status(
        &server,
        json!({"metadata": {"name": "far"}, "spec": {"clusterIP": "10.97.0.5", "ports": [{"port": 80}]}}),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert!(
        status["message"].as_str().unwrap().contains(
            "the provided IP (10.97.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/24"
        ),
        "{status}"
    );
    let taken_port = *ports.iter().next().unwrap();
    let (code, status) = create_status(
        &server,
        json!({"metadata": {"name": "np"}, "spec": {"type": "NodePort",
               "ports": [{"port": 80, "nodePort": taken_port}]}}),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.ports[0].nodePort"
    );
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("provided port is already allocated"),
        "{status}"
    );
    // A refused create leaves nothing taken: its node port is still free to use.
    let (code, status) = create_status(
        &server,
        json!({"metadata": {"name": "np2"}, "spec": {"type": "NodePort",
               "ports": [{"port": 80, "nodePort": 30100}]}}),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert!(status["message"].as_str().unwrap().contains(
        "provided port is not in the valid range. The range of valid ports is 30000-30099"
    ));

    // A dry run takes nothing.
    let r = admin(&server)
        .send_json(
            http::Method::POST,
            &format!("{SVC}?dryRun=All"),
            &json!({"metadata": {"name": "dry"}, "spec": {"clusterIP": "10.96.0.3", "ports": [{"port": 80}]}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.json()["spec"]["clusterIP"], "10.96.0.3");
    assert!(addresses.get_opt("10.96.0.3").await.unwrap().is_none());

    // A deleted Service gives its address and port back at once.
    let port = first.spec.as_ref().unwrap().ports.as_ref().unwrap()[0]
        .node_port
        .unwrap();
    api.delete("s0", &DeleteParams::default()).await.unwrap();
    assert!(addresses.get_opt(&ip).await.unwrap().is_none());
    let (code, status) = create_status(
        &server,
        json!({"metadata": {"name": "again"}, "spec": {"type": "NodePort", "clusterIP": ip,
               "ports": [{"port": 80, "nodePort": port}]}}),
    )
    .await;
    assert_eq!(code, 201, "{status}");

    // A replacement without the allocated values keeps them, as upstream's.
    let kept = admin(&server)
        .send_json(
            http::Method::PUT,
            &format!("{SVC}/again"),
            &json!({"metadata": {"name": "again"}, "spec": {"type": "NodePort",
                    "ports": [{"port": 80}]}}),
        )
        .await;
    assert_eq!(kept.status, 200, "{:?}", kept.body);
    assert_eq!(kept.json()["spec"]["clusterIP"], ip.as_str());
    assert_eq!(kept.json()["spec"]["ports"][0]["nodePort"], port);

    // Switching to ClusterIP gives the node port back; to ExternalName, the address too.
    let mut again = api.get("again").await.unwrap();
    let spec = again.spec.as_mut().unwrap();
    spec.type_ = Some("ExternalName".into());
    spec.external_name = Some("example.com".into());
    spec.external_traffic_policy = None;
    for p in spec.ports.iter_mut().flatten() {
        p.node_port = None;
    }
    let changed = api
        .replace("again", &PostParams::default(), &again)
        .await
        .unwrap();
    assert_eq!(changed.spec.unwrap().cluster_ip, None);
    assert!(addresses.get_opt(&ip).await.unwrap().is_none());

    // After a restart, the records are where they were and new Services get new values.
    server.restart().await;
    let api: Api<Service> = Api::namespaced(server.client().await, "default");
    for i in 64..74 {
        api.create(&PostParams::default(), &node_port_service(&format!("s{i}")))
            .await
            .unwrap();
    }
    let (ips, ports) = allocations(&api).await;
    assert_eq!((ips.len(), ports.len()), (74, 73));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_record_is_repaired_at_start() {
    let mut server = TestServer::start_with(|c| c.service_network = network()).await;
    let api: Api<Service> = Api::namespaced(server.client().await, "default");
    let svc = api
        .create(&PostParams::default(), &node_port_service("kept"))
        .await
        .unwrap();
    let ip = svc.spec.unwrap().cluster_ip.unwrap();
    let addresses: Api<IPAddress> = Api::all(server.client().await);
    addresses
        .delete(&ip, &DeleteParams::default())
        .await
        .unwrap();
    server.restart().await;
    // The repair is the post-start hook `start-service-ip-repair-controllers`.
    crate::wait_ready(&server).await;
    let addresses: Api<IPAddress> = Api::all(server.client().await);
    let record = addresses.get(&ip).await.unwrap();
    assert_eq!(record.spec.parent_ref.name, "kept");
    // And the repaired address is not handed out again.
    let (code, _) = create_status(
        &server,
        json!({"metadata": {"name": "dup"}, "spec": {"clusterIP": ip, "ports": [{"port": 80}]}}),
    )
    .await;
    assert_eq!(code, 422);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_lists_and_describes_services() {
    let server = TestServer::start().await;
    let config = server.kubeconfig_path();
    let run = |args: &[&str]| kubectl(&config, args);

    let (ok, out, err) = run(&["create", "service", "nodeport", "web", "--tcp=80:8080"]);
    assert!(ok, "{out}{err}");
    let (ok, out, err) = run(&[
        "create",
        "service",
        "clusterip",
        "db",
        "--clusterip=None",
        "--tcp=5432",
    ]);
    assert!(ok, "{out}{err}");
    let (_, table, _) = run(&["get", "services", "-o", "wide"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ],
        "{table}"
    );
    let web = table.lines().find(|l| l.starts_with("web ")).unwrap();
    assert!(web.contains("NodePort"), "{table}");
    assert!(web.contains("10.0.0."), "{table}");
    assert!(web.contains("80:3"), "{table}");
    assert!(web.contains("app=web"), "{table}");
    let db = table.lines().find(|l| l.starts_with("db ")).unwrap();
    assert!(db.contains("None") && db.contains("5432/TCP"), "{table}");

    // The default ServiceCIDR, from the (default) flag.
    let (_, table, _) = run(&["get", "servicecidrs"]);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("kubernetes") && l.contains("10.0.0.0/24")),
        "{table}"
    );
    let (_, table, _) = run(&["get", "ipaddresses"]);
    assert!(table.contains("services/default/web"), "{table}");

    // An immutable cluster IP, the upstream 422 with its field.
    let (ok, _, err) = run(&[
        "patch",
        "service",
        "web",
        "-p",
        r#"{"spec":{"clusterIP":"10.0.0.200","clusterIPs":["10.0.0.200"]}}"#,
    ]);
    assert!(!ok);
    assert!(
        err.contains("spec.clusterIPs[0]") && err.contains("may not change once set"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_etcd_hand_out_no_address_twice() {
    let cluster = capstan_etcd::testing::EtcdCluster::start(1);
    let start = || {
        let endpoints = cluster.endpoints();
        TestServer::start_with(move |config| {
            config.etcd = Some(capstan_etcd::EtcdConfig::new(endpoints));
            config.service_network = ServiceNetwork {
                // 14 addresses (one the kubernetes Service's) and 16 ports for 13
                // Services: every value is contested.
                cidrs: vec![Cidr::parse("10.96.0.0/28").unwrap()],
                node_ports: 30000..=30015,
            };
        })
    };
    let a = start().await;
    let b = start().await;
    let on_a: Api<Service> = Api::namespaced(a.client().await, "default");
    let on_b: Api<Service> = Api::namespaced(b.client().await, "default");
    wait_for_kubernetes_service(&on_a).await;
    let creates = (0..13).map(|i| {
        let api = if i % 2 == 0 {
            on_a.clone()
        } else {
            on_b.clone()
        };
        async move {
            api.create(&PostParams::default(), &node_port_service(&format!("e{i}")))
                .await
        }
    });
    for created in futures_util::future::join_all(creates).await {
        created.unwrap();
    }
    let mut ips = HashSet::new();
    let mut ports = HashSet::new();
    for svc in on_b.list(&ListParams::default()).await.unwrap() {
        let spec = svc.spec.unwrap();
        if svc.metadata.name.as_deref() == Some("kubernetes") {
            continue;
        }
        assert!(ips.insert(spec.cluster_ip.unwrap()));
        assert!(ports.insert(spec.ports.unwrap()[0].node_port.unwrap()));
    }
    assert_eq!((ips.len(), ports.len()), (13, 13));
    // The range is full now, on both servers.
    let err = on_a
        .create(&PostParams::default(), &node_port_service("full"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("range is full"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubernetes_service_and_its_endpoints_name_the_server() {
    let server = TestServer::start_with(|c| {
        c.advertise_address = Some("192.0.2.10".parse().unwrap());
        c.kubernetes_service_node_port = 30443;
    })
    .await;
    let port = server
        .url()
        .rsplit(':')
        .next()
        .unwrap()
        .parse::<i64>()
        .unwrap();
    let raw = admin(&server);
    let wait_for = |path: &'static str| {
        let raw = raw.clone();
        async move {
            for _ in 0..500 {
                let r = raw.get(path).await;
                if r.status == 200 {
                    return r.json();
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            panic!("{path} never came");
        }
    };
    let svc = wait_for("/api/v1/namespaces/default/services/kubernetes").await;
    assert_eq!(svc["metadata"]["labels"]["provider"], "kubernetes");
    assert_eq!(svc["spec"]["clusterIP"], "10.0.0.1");
    assert_eq!(svc["spec"]["type"], "NodePort");
    let ports = &svc["spec"]["ports"][0];
    assert_eq!(
        (
            &ports["name"],
            &ports["port"],
            &ports["targetPort"],
            &ports["nodePort"]
        ),
        (&json!("https"), &json!(443), &json!(port), &json!(30443))
    );
    assert!(svc["spec"].get("selector").is_none(), "{svc}");

    let ep = wait_for("/api/v1/namespaces/default/endpoints/kubernetes").await;
    assert_eq!(
        ep["subsets"],
        json!([{"addresses": [{"ip": "192.0.2.10"}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}])
    );
    let slice =
        wait_for("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes").await;
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(slice["endpoints"][0]["addresses"], json!(["192.0.2.10"]));
    assert_eq!(
        slice["metadata"]["labels"]["kubernetes.io/service-name"],
        "kubernetes"
    );
    let (_, table, warnings) = kubectl(
        &server.kubeconfig_path(),
        &["get", "endpoints", "kubernetes"],
    );
    assert!(table.contains(&format!("192.0.2.10:{port}")), "{table}");
    // v1 Endpoints are deprecated in v1.33: every request hears so; EndpointSlices do not.
    assert!(
        warnings.contains(
            "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
        ),
        "{warnings}"
    );
    let (_, _, warnings) = kubectl(
        &server.kubeconfig_path(),
        &["get", "endpointslices", "kubernetes"],
    );
    assert!(!warnings.contains("deprecated"), "{warnings}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotas_count_services_node_ports_and_load_balancers() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "q"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let quotas = "/api/v1/namespaces/q/resourcequotas";
    let hard = json!({"services": "2", "services.nodeports": "1", "services.loadbalancers": "0"});
    let r = raw
        .send_json(
            http::Method::POST,
            quotas,
            &json!({"metadata": {"name": "svc"}, "spec": {"hard": hard}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    for _ in 0..200 {
        let quota = raw.get(&format!("{quotas}/svc")).await.json();
        if !quota["status"]["used"].is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let services = "/api/v1/namespaces/q/services";
    let service = |name: &str, kind: &str| json!({"metadata": {"name": name}, "spec": {"type": kind, "ports": [{"port": 80}]}});
    let create = |body: serde_json::Value| {
        let raw = raw.clone();
        async move { raw.send_json(http::Method::POST, services, &body).await }
    };
    assert_eq!(create(service("a", "NodePort")).await.status, 201);
    let r = create(service("b", "NodePort")).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "services \"b\" is forbidden: exceeded quota: svc, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1"
    );
    let r = create(service("c", "LoadBalancer")).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(create(service("d", "ClusterIP")).await.status, 201);
    // A type change that needs a node port is judged too.
    let r = raw
        .request(
            http::Method::PATCH,
            &format!("{services}/d"),
            &[("content-type", "application/merge-patch+json")],
            br#"{"spec":{"type":"NodePort"}}"#.to_vec(),
        )
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
}

/// The addresses of the kubernetes Endpoints, as `raw` reads them (empty when there are none).
async fn endpoint_addresses(raw: &capstan_e2e::RawClient) -> Vec<String> {
    let ep = raw
        .get("/api/v1/namespaces/default/endpoints/kubernetes")
        .await;
    if ep.status != 200 {
        return Vec::new();
    }
    let mut ips: Vec<String> = ep.json()["subsets"][0]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["ip"].as_str().map(String::from))
        .collect();
    ips.sort();
    ips
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_server_leaves_the_kubernetes_endpoints() {
    let cluster = capstan_etcd::testing::EtcdCluster::start(1);
    let start = |address: &'static str| {
        let endpoints = cluster.endpoints();
        TestServer::start_with(move |config| {
            config.etcd = Some(capstan_etcd::EtcdConfig::new(endpoints));
            config.advertise_address = Some(address.parse().unwrap());
        })
    };
    let a = start("192.0.2.10").await;
    let b = start("192.0.2.11").await;
    let raw = admin(&a);
    // Each server's lease is seen by the other's next pass (every 10 s).
    let both = vec!["192.0.2.10".to_string(), "192.0.2.11".to_string()];
    let mut seen = Vec::new();
    for _ in 0..250 {
        seen = endpoint_addresses(&raw).await;
        if seen == both {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(seen, both);

    // B takes itself out as it stops, without waiting for its lease to expire.
    b.stop().await;
    assert_eq!(endpoint_addresses(&raw).await, ["192.0.2.10"]);
    // The last server leaves the endpoints as they are rather than empty them.
    let on_etcd =
        capstan_etcd::EtcdStore::connect(&capstan_etcd::EtcdConfig::new(cluster.endpoints()))
            .await
            .unwrap();
    a.stop().await;
    let (lease, _) = capstan_storage::Store::get(&on_etcd, "/registry/masterleases/192.0.2.10")
        .await
        .unwrap();
    assert!(lease.is_none(), "the lease record stays: {lease:?}");
    let (ep, _) = capstan_storage::Store::get(&on_etcd, "/registry/endpoints/default/kubernetes")
        .await
        .unwrap();
    let ep = ep.expect("the endpoints stay");
    assert!(
        String::from_utf8_lossy(&ep.value).contains("192.0.2.10"),
        "{:?}",
        ep.value
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_cidrs_users_create_add_addresses() {
    let server = TestServer::start_with(|config| {
        config.service_network = ServiceNetwork {
            // Six usable addresses, one the kubernetes Service's.
            cidrs: vec![Cidr::parse("10.96.0.0/29").unwrap()],
            node_ports: 30000..=32767,
        };
    })
    .await;
    let raw = admin(&server);
    let cidrs = "/apis/networking.k8s.io/v1/servicecidrs";
    let cluster_ip = |name: &str, ip: Option<&str>| {
        let mut spec = json!({"selector": {"app": name}, "ports": [{"port": 80}]});
        if let Some(ip) = ip {
            spec["clusterIP"] = json!(ip);
        }
        json!({"metadata": {"name": name}, "spec": spec})
    };
    // Outside every range: upstream's 422.
    let r = raw
        .send_json(
            http::Method::POST,
            SVC,
            &cluster_ip("early", Some("10.97.0.3")),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert!(
        r.message().contains("is not in the valid range"),
        "{}",
        r.message()
    );

    let extra = json!({"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.97.0.0/29"]}});
    let r = raw.send_json(http::Method::POST, cidrs, &extra).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // An address of the new range may be asked for ...
    let r = raw
        .send_json(
            http::Method::POST,
            SVC,
            &cluster_ip("chosen", Some("10.97.0.3")),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // ... and when the configured range is full, new Services take the new range's.
    let mut ips = Vec::new();
    for i in 0..7 {
        let r = raw
            .send_json(http::Method::POST, SVC, &cluster_ip(&format!("s{i}"), None))
            .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        ips.push(r.json()["spec"]["clusterIP"].as_str().unwrap().to_string());
    }
    let (first, beyond): (Vec<&String>, Vec<&String>) =
        ips.iter().partition(|ip| ip.starts_with("10.96.0."));
    assert_eq!(first.len(), 5, "{ips:?}");
    assert_eq!(beyond.len(), 2, "{ips:?}");
    assert!(
        beyond
            .iter()
            .all(|ip| ip.starts_with("10.97.0.") && *ip != "10.97.0.3")
    );
    let address = raw
        .get(&format!(
            "/apis/networking.k8s.io/v1/ipaddresses/{}",
            beyond[0]
        ))
        .await;
    assert_eq!(address.status, 200);
    // A range marked not Ready takes no new Services.
    let mut cidr = raw.get(&format!("{cidrs}/extra")).await.json();
    cidr["status"] = json!({"conditions": [{"type": "Ready", "status": "False",
        "reason": "Terminating", "message": "", "lastTransitionTime": "2026-11-26T00:00:00Z"}]});
    let r = raw
        .send_json(http::Method::PUT, &format!("{cidrs}/extra/status"), &cidr)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = raw
        .send_json(http::Method::POST, SVC, &cluster_ip("late", None))
        .await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    assert!(r.message().contains("range is full"), "{}", r.message());
}

/// Capstan next to upstream's kube-apiserver v1.36 on one etcd (upstream's 3.6), both with the
/// lease reconciler: each reads the other's master lease (upstream's format: an Endpoints in
/// protobuf under an etcd lease), neither deletes it, so the kubernetes Endpoints hold both
/// addresses for longer than a lease lasts; when Capstan stops, upstream's address stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn master_leases_are_shared_with_upstreams_kube_apiserver() {
    use capstan_e2e::upstream::{self, Pki};
    let bin = upstream::binaries();
    let dir = tempfile::tempdir().unwrap();
    let (_etcd, etcd_url) = upstream::start_etcd(&bin);
    let pki = Pki::new(&dir.path().join("pki"));
    let flags = [
        format!("--etcd-servers={etcd_url}"),
        "--advertise-address=192.0.2.20".into(),
        "--endpoint-reconciler-type=lease".into(),
    ];
    let (apiserver, _) = upstream::start_apiserver(&bin, &pki, 300, &flags, dir.path());
    let capstan = TestServer::start_with(move |config| {
        config.etcd = Some(capstan_etcd::EtcdConfig::new(vec![etcd_url]));
        config.advertise_address = Some("192.0.2.10".parse().unwrap());
    })
    .await;
    let raw = admin(&capstan);
    let both = vec!["192.0.2.10".to_string(), "192.0.2.20".to_string()];
    let mut seen = Vec::new();
    // kube-apiserver starts its endpoint reconciler about a minute after it serves.
    for _ in 0..1500 {
        seen = endpoint_addresses(&raw).await;
        if seen == both {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(seen, both, "kube-apiserver:\n{}", apiserver.log_text());
    // Steady for longer than a lease lasts (15 s) and two passes of each reconciler.
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(endpoint_addresses(&raw).await, both);
    }
    capstan.stop().await;
    let on_etcd =
        capstan_etcd::EtcdStore::connect(&capstan_etcd::EtcdConfig::new(vec![etcd_endpoint(
            &flags,
        )]))
        .await
        .unwrap();
    let (ep, _) = capstan_storage::Store::get(&on_etcd, "/registry/endpoints/default/kubernetes")
        .await
        .unwrap();
    let value = String::from_utf8_lossy(&ep.expect("the endpoints").value).into_owned();
    assert!(
        value.contains("192.0.2.20") && !value.contains("192.0.2.10"),
        "{value:?}"
    );
}

fn etcd_endpoint(flags: &[String]) -> String {
    flags
        .iter()
        .find_map(|f| f.strip_prefix("--etcd-servers="))
        .expect("the etcd flag")
        .to_string()
}
