//! The admission chain: the default plugins' effects, plugins switched on and off by the
//! options, NodeRestriction for node identities, and an admission configuration file.

use capstan_e2e::kubectl;
use capstan_testing::TestServer;
use serde_json::{Value, json};

use crate::admin;

fn plugins(enable: &[&str], disable: &[&str]) -> capstan_admission::AdmissionOptions {
    capstan_admission::AdmissionOptions {
        enable: enable.iter().map(|s| s.to_string()).collect(),
        disable: disable.iter().map(|s| s.to_string()).collect(),
        config_file: None,
    }
}

fn pod(name: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

const PODS: &str = "/api/v1/namespaces/default/pods";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_plugins_default_pods_and_nodes() {
    let server = TestServer::start_with(|c| {
        c.default_not_ready_toleration_seconds = 120;
    })
    .await;
    let raw = admin(&server);
    let created = raw.send_json(http::Method::POST, PODS, &pod("p")).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let p = created.json();
    assert_eq!(
        p["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 120},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
    );
    assert_eq!(p["spec"]["priority"], 0);
    // Nodes start tainted not-ready; the taint goes once they report ready.
    let node = raw
        .send_json(
            http::Method::POST,
            "/api/v1/nodes",
            &json!({"metadata": {"name": "n1"}}),
        )
        .await
        .json();
    assert_eq!(
        node["spec"]["taints"],
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );
    let mut status = node.clone();
    status["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    let r = raw
        .send_json(http::Method::PUT, "/api/v1/nodes/n1/status", &status)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let mut untainted = false;
    for _ in 0..100 {
        let n = raw.get("/api/v1/nodes/n1").await.json();
        if n["spec"]["taints"].is_null() {
            untainted = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(untainted, "the not-ready taint went");
    // Namespaces: creating in a missing one is 404, deleting a system one 403.
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/nowhere/configmaps",
            &json!({"metadata": {"name": "c"}}),
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["message"], "namespaces \"nowhere\" not found");
    let r = raw
        .request(
            http::Method::DELETE,
            "/api/v1/namespaces/kube-system",
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "namespaces \"kube-system\" is forbidden: this namespace may not be deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_are_switched_on_and_off_by_the_options() {
    let server = TestServer::start_with(|c| {
        c.admission = plugins(
            &["AlwaysPullImages", "LimitPodHardAntiAffinityTopology"],
            &[
                "DefaultTolerationSeconds",
                "NamespaceLifecycle",
                "TaintNodesByCondition",
            ],
        );
    })
    .await;
    let raw = admin(&server);
    let mut p = pod("pulls");
    p["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent".into();
    let created = raw.send_json(http::Method::POST, PODS, &p).await.json();
    assert_eq!(
        created["spec"]["containers"][0]["imagePullPolicy"], "Always",
        "{created}"
    );
    assert!(
        created["spec"]["tolerations"].is_null(),
        "{}",
        created["spec"]
    );
    let mut zonal = pod("zonal");
    zonal["spec"]["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"a": "b"}}}]}});
    let r = raw.send_json(http::Method::POST, PODS, &zonal).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"zonal\" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed"
    );
    // Without NamespaceLifecycle, a namespace need not exist (as upstream).
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/nowhere/configmaps",
            &json!({"metadata": {"name": "c"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let node = raw
        .send_json(
            http::Method::POST,
            "/api/v1/nodes",
            &json!({"metadata": {"name": "n1"}}),
        )
        .await
        .json();
    assert!(node["spec"]["taints"].is_null());

    let deny = TestServer::start_with(|c| c.admission = plugins(&["AlwaysDeny"], &[])).await;
    let admin_conf = deny.kubeconfig_path();
    for args in [
        vec!["create", "configmap", "x"],
        vec!["create", "configmap", "x", "--dry-run=server"],
    ] {
        let (success, _, err) = kubectl(&admin_conf, &args);
        assert!(!success);
        assert!(
            err.contains(
                "configmaps \"x\" is forbidden: admission control is denying all modifications"
            ),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_restriction_holds_nodes_to_their_own_objects() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "n1-token,system:node:n1,uid-n1,system:nodes\n").unwrap();
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["Node".into(), "RBAC".into()];
        c.admission = plugins(&["NodeRestriction"], &[]);
    })
    .await;
    let raw = admin(&server);
    for name in ["n1", "n2"] {
        let r = raw
            .send_json(
                http::Method::POST,
                "/api/v1/nodes",
                &json!({"metadata": {"name": name}}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let n1 = capstan_e2e::RawClient::new(&server.url(), server.ca_pem(), Some("n1-token"));
    // Its own node's status, not another's.
    let mut own = raw.get("/api/v1/nodes/n1").await.json();
    own["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    own["metadata"]["resourceVersion"] = Value::Null;
    let r = n1
        .send_json(http::Method::PUT, "/api/v1/nodes/n1/status", &own)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let mut other = raw.get("/api/v1/nodes/n2").await.json();
    other["metadata"]["resourceVersion"] = Value::Null;
    let r = n1
        .send_json(http::Method::PUT, "/api/v1/nodes/n2/status", &other)
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""
    );
    // ResourceSlices: its own devices only (a slice for another node would let it steer
    // the scheduler's allocations there).
    let slice = |name: &str, node: &str| {
        json!({"metadata": {"name": name}, "spec": {"driver": "gpu.example.com",
            "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}]}})
    };
    const SLICES: &str = "/apis/resource.k8s.io/v1/resourceslices";
    let r = n1
        .send_json(http::Method::POST, SLICES, &slice("n2-gpus", "n2"))
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "resourceslices.resource.k8s.io \"n2-gpus\" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node"
    );
    let r = n1
        .send_json(http::Method::POST, SLICES, &slice("n1-gpus", "n1"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = raw
        .send_json(http::Method::POST, SLICES, &slice("n2-gpus", "n2"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // One slice read or written only when it lists the node's devices (the Node
    // authorizer's graph follows slices); another node's cannot be deleted either.
    let r = n1.get(&format!("{SLICES}/n2-gpus")).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    let delete = |name: &str| {
        let path = format!("{SLICES}/{name}");
        let n1 = &n1;
        async move {
            n1.request(http::Method::DELETE, &path, &[], Vec::new())
                .await
        }
    };
    let r = delete("n2-gpus").await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    let mut status = http::StatusCode::FORBIDDEN;
    for _ in 0..50 {
        status = delete("n1-gpus").await.status;
        if status != 403 {
            break;
        }
        // The graph follows the watch: the slice may not be in it yet.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "its own slice, once the graph has it");
    // Pods: mirror pods bound to itself only.
    let r = n1.send_json(http::Method::POST, PODS, &pod("plain")).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"plain\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create mirror pods"
    );
    let mut mirror = pod("static-web");
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
    mirror["spec"]["nodeName"] = "n2".into();
    let r = n1.send_json(http::Method::POST, PODS, &mirror).await;
    assert_eq!(r.status, 403);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .ends_with("node \"n1\" can only create pods with spec.nodeName set to itself")
    );
    mirror["spec"]["nodeName"] = "n1".into();
    // Naming a secret anywhere a pod can (here a CSI volume's publish secret, which the Node
    // authorizer would then let the node read) is refused to a mirror pod.
    let mut greedy = mirror.clone();
    greedy["metadata"]["name"] = "greedy".into();
    greedy["spec"]["volumes"] = json!([{"name": "v", "csi": {"driver": "csi.example.com",
        "nodePublishSecretRef": {"name": "someone-elses"}}}]);
    let r = n1.send_json(http::Method::POST, PODS, &greedy).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .ends_with("a mirror pod may not reference secrets"),
        "{:?}",
        r.body
    );
    let r = n1.send_json(http::Method::POST, PODS, &mirror).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // Tokens only for pods bound to itself (the Node authorizer lets it ask for the
    // account its own pod uses; NodeRestriction checks the pod the token is bound to).
    let mut own_pod = pod("own");
    own_pod["spec"]["nodeName"] = "n1".into();
    let own_pod = raw
        .send_json(http::Method::POST, PODS, &own_pod)
        .await
        .json();
    let mut away = pod("away");
    away["spec"]["nodeName"] = "n2".into();
    let away = raw.send_json(http::Method::POST, PODS, &away).await.json();
    // The audience of the pod's own token volume (none given: the server's).
    let token_for = |p: &Value| {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": [], "boundObjectRef": {"apiVersion": "v1", "kind": "Pod",
                "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}}})
    };
    let tokens = "/api/v1/namespaces/default/serviceaccounts/default/token";
    let mut issued = false;
    for _ in 0..100 {
        let r = n1
            .send_json(http::Method::POST, tokens, &token_for(&own_pod))
            .await;
        if r.status == 201 {
            issued = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(issued, "a token for its own pod");
    // Not for an audience the pod does not use.
    let mut other_audience = token_for(&own_pod);
    other_audience["spec"]["audiences"] = json!(["vault"]);
    let r = n1
        .send_json(http::Method::POST, tokens, &other_audience)
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "serviceaccounts \"default\" is forbidden: audience \"vault\" not found in pod spec volume, system:node:n1 is not authorized to request tokens for this audience"
    );
    let r = n1
        .send_json(http::Method::POST, tokens, &token_for(&away))
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "serviceaccounts \"default\" is forbidden: node requested token bound to a pod scheduled on a different node"
    );
    // Deleting a pod on another node.
    let mut elsewhere = pod("elsewhere");
    elsewhere["spec"]["nodeName"] = "n2".into();
    assert_eq!(
        raw.send_json(http::Method::POST, PODS, &elsewhere)
            .await
            .status,
        201
    );
    let r = n1
        .request(
            http::Method::DELETE,
            &format!("{PODS}/elsewhere"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"elsewhere\" is forbidden: node \"n1\" can only delete pods with spec.nodeName set to itself"
    );
    // Kubelet certificates in its own name only; other signers are not the plugin's concern.
    let binding = json!({"metadata": {"name": "n1-csrs"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-bootstrapper"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:node:n1"}]});
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &binding,
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    let kubelet_csr = |name: &str, cn: &str, signer: &str| {
        let mut body = csr(name, &certificate_request(cn, &["system:nodes"]));
        body["spec"]["signerName"] = signer.into();
        body
    };
    let serving = "kubernetes.io/kubelet-serving";
    let client = "kubernetes.io/kube-apiserver-client-kubelet";
    let own = kubelet_csr("own", "system:node:n1", serving);
    let mut r = n1.send_json(http::Method::POST, CSRS, &own).await;
    for _ in 0..100 {
        if r.status != 403 {
            break;
        }
        // The RBAC index follows the new binding.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        r = n1.send_json(http::Method::POST, CSRS, &own).await;
    }
    assert_eq!(r.status, 201, "{:?}", r.body);
    for (name, signer) in [("as-n2-serving", serving), ("as-n2-client", client)] {
        let r = n1
            .send_json(
                http::Method::POST,
                CSRS,
                &kubelet_csr(name, "system:node:n2", signer),
            )
            .await;
        assert_eq!(r.status, 403, "{:?}", r.body);
        assert_eq!(
            r.json()["message"],
            format!(
                "certificatesigningrequests.certificates.k8s.io \"{name}\" is forbidden: can only create a node CSR with CN=system:node:n1"
            )
        );
    }
    let other = kubelet_csr("other-signer", "system:node:n2", "example.com/signer");
    let r = n1.send_json(http::Method::POST, CSRS, &other).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admission_configuration_file_is_read_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("admission.yaml");
    std::fs::write(
        &file,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  path: missing.yaml\n",
    )
    .unwrap();
    let mut config = capstan_server::ServerConfig::new(
        dir.path(),
        std::sync::Arc::new(capstan_controllers::InProcess),
    );
    config.bind_address = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    config.secure_port = 0;
    config.admission = capstan_admission::AdmissionOptions {
        config_file: Some(file.clone()),
        ..Default::default()
    };
    let err = capstan_server::start(config.clone())
        .await
        .err()
        .expect("a bad file fails the start")
        .to_string();
    assert!(err.starts_with("--admission-control-config-file "), "{err}");
    assert!(err.contains("missing.yaml"), "{err}");
    assert!(!err.contains('\n'), "one line: {err}");
    config.admission = plugins(&["Telepathy"], &[]);
    let err = capstan_server::start(config)
        .await
        .err()
        .expect("an unknown plugin fails the start")
        .to_string();
    assert_eq!(
        err,
        "--enable-admission-plugins: unknown admission plugin \"Telepathy\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_get_the_default_class_and_grow_only_where_it_may() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let classes = "/apis/storage.k8s.io/v1/storageclasses";
    for (name, default, expand) in [
        ("slow", false, false),
        ("fast", true, false),
        ("elastic", false, true),
    ] {
        let mut sc = json!({"metadata": {"name": name}, "provisioner": "example.com/disk",
            "allowVolumeExpansion": expand});
        if default {
            sc["metadata"]["annotations"] =
                json!({"storageclass.kubernetes.io/is-default-class": "true"});
        }
        assert_eq!(
            raw.send_json(http::Method::POST, classes, &sc).await.status,
            201
        );
    }
    let claims = "/api/v1/namespaces/default/persistentvolumeclaims";
    let claim = |name: &str, class: Option<&str>| {
        let mut c = json!({"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}});
        if let Some(class) = class {
            c["spec"]["storageClassName"] = class.into();
        }
        c
    };
    let created = raw
        .send_json(http::Method::POST, claims, &claim("data", None))
        .await
        .json();
    assert_eq!(
        created["spec"]["storageClassName"], "fast",
        "the default class"
    );
    let none = raw
        .send_json(http::Method::POST, claims, &claim("static", Some("")))
        .await
        .json();
    assert_eq!(
        none["spec"]["storageClassName"], "",
        "an empty class asks for none"
    );

    // Growing: refused for a class without expansion, allowed for one with it.
    let grow = |mut c: Value| {
        c["spec"]["resources"]["requests"]["storage"] = "2Gi".into();
        c
    };
    let r = raw
        .send_json(http::Method::PUT, &format!("{claims}/data"), &grow(created))
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
    );
    let elastic = raw
        .send_json(
            http::Method::POST,
            claims,
            &claim("elastic", Some("elastic")),
        )
        .await
        .json();
    let r = raw
        .send_json(
            http::Method::PUT,
            &format!("{claims}/elastic"),
            &grow(elastic),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optional_plugins_for_namespaces_and_scheduling() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("admission.yaml");
    std::fs::write(
        &file,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n\
         - name: PodNodeSelector\n  configuration:\n    podNodeSelectorPluginConfig:\n      clusterDefaultNodeSelector: tier=general\n",
    )
    .unwrap();
    let server = TestServer::start_with(move |c| {
        c.admission = capstan_admission::AdmissionOptions {
            enable: [
                "NamespaceAutoProvision",
                "ExtendedResourceToleration",
                "PodNodeSelector",
                "PodTolerationRestriction",
            ]
            .map(String::from)
            .to_vec(),
            disable: vec!["NamespaceLifecycle".into()],
            config_file: Some(file),
        };
    })
    .await;
    let raw = admin(&server);
    // A create in a missing namespace creates it.
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/fresh/configmaps",
            &json!({"metadata": {"name": "c"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(raw.get("/api/v1/namespaces/fresh").await.status, 200);
    // Extended resources bring their toleration; the cluster's default node selector joins.
    let mut gpu = pod("trainer");
    gpu["spec"]["containers"][0]["resources"] =
        json!({"limits": {"example.com/gpu": "1", "cpu": "1"}});
    let created = raw.send_json(http::Method::POST, PODS, &gpu).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let created = created.json();
    let tolerations = created["spec"]["tolerations"].as_array().unwrap();
    assert!(
        tolerations.contains(
            &json!({"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
        ),
        "{tolerations:?}"
    );
    assert_eq!(created["spec"]["nodeSelector"], json!({"tier": "general"}));
    // A namespace's own selector wins over the default, and a pod may not contradict it.
    let ns = json!({"metadata": {"name": "batch",
        "annotations": {"scheduler.alpha.kubernetes.io/node-selector": "tier=batch"}}});
    assert_eq!(
        raw.send_json(http::Method::POST, "/api/v1/namespaces", &ns)
            .await
            .status,
        201
    );
    let mut p = pod("job");
    p["spec"]["nodeSelector"] = json!({"tier": "gpu"});
    let r = raw
        .send_json(http::Method::POST, "/api/v1/namespaces/batch/pods", &p)
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"job\" is forbidden: pod node label selector conflicts with its namespace node label selector"
    );
    // A namespace's default tolerations join its pods'; its whitelist bounds them.
    let ns = json!({"metadata": {"name": "restricted", "annotations": {
        "scheduler.alpha.kubernetes.io/defaultTolerations":
            r#"[{"key": "dedicated", "operator": "Equal", "value": "team-a", "effect": "NoSchedule"}]"#,
        "scheduler.alpha.kubernetes.io/tolerationsWhitelist":
            r#"[{"key": "dedicated", "operator": "Exists"}, {"operator": "Exists", "effect": "NoExecute"}, {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists"}]"#}}});
    assert_eq!(
        raw.send_json(http::Method::POST, "/api/v1/namespaces", &ns)
            .await
            .status,
        201
    );
    let pods = "/api/v1/namespaces/restricted/pods";
    let created = raw
        .send_json(http::Method::POST, pods, &pod("teamed"))
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let tolerations = created.json()["spec"]["tolerations"].clone();
    assert!(
        tolerations.as_array().unwrap().contains(
            &json!({"key": "dedicated", "operator": "Equal", "value": "team-a", "effect": "NoSchedule"})
        ),
        "{tolerations}"
    );
    let mut outsider = pod("outsider");
    outsider["spec"]["tolerations"] =
        json!([{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]);
    let r = raw.send_json(http::Method::POST, pods, &outsider).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"outsider\" is forbidden: pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_in_use_are_kept_until_their_pods_go() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let claims = "/api/v1/namespaces/default/persistentvolumeclaims";
    let claim = json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
        "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}});
    let created = raw
        .send_json(http::Method::POST, claims, &claim)
        .await
        .json();
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    let mut user = pod("user");
    user["spec"]["volumes"] =
        json!([{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]);
    assert_eq!(
        raw.send_json(http::Method::POST, PODS, &user).await.status,
        201
    );
    let delete = |path: String| {
        let raw = raw.clone();
        async move {
            raw.request(http::Method::DELETE, &path, &[], Vec::new())
                .await
        }
    };
    let r = delete(format!("{claims}/data")).await;
    assert_eq!(r.status, 200);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let kept = raw.get(&format!("{claims}/data")).await;
    assert_eq!(kept.status, 200, "a pod still uses it");
    assert!(kept.json()["metadata"]["deletionTimestamp"].is_string());
    assert!(
        delete(format!("{PODS}/user?gracePeriodSeconds=0"))
            .await
            .status
            .is_success()
    );
    let mut gone = false;
    for _ in 0..100 {
        if raw.get(&format!("{claims}/data")).await.status == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(gone, "the claim went with its last user");

    // A volume that is not bound goes at once.
    let volume = json!({"metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/pv1"}}});
    let created = raw
        .send_json(http::Method::POST, "/api/v1/persistentvolumes", &volume)
        .await
        .json();
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );
    assert_eq!(
        delete("/api/v1/persistentvolumes/pv1".into()).await.status,
        200
    );
    let mut gone = false;
    for _ in 0..100 {
        if raw.get("/api/v1/persistentvolumes/pv1").await.status == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(gone, "an unbound volume is released");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_classes_give_pods_their_overhead_and_placement() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("gvisor.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: gvisor\nhandler: runsc\n\
         overhead:\n  podFixed:\n    cpu: 250m\n    memory: 64Mi\n\
         scheduling:\n  nodeSelector:\n    sandbox: gvisor\n  tolerations:\n  - key: sandbox\n    operator: Exists\n    effect: NoSchedule\n",
    )
    .unwrap();
    let admin_conf = server.kubeconfig_path();
    let (success, _, err) = kubectl(&admin_conf, &["apply", "-f", manifest.to_str().unwrap()]);
    assert!(success, "{err}");
    let (success, out, err) = kubectl(&admin_conf, &["get", "runtimeclasses"]);
    assert!(success, "{err}");
    assert!(
        out.lines().next().unwrap().starts_with("NAME") && out.contains("runsc"),
        "{out}"
    );
    // An invalid handler is the upstream 422.
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/node.k8s.io/v1/runtimeclasses",
            &json!({"metadata": {"name": "bad"}, "handler": "Not_A_Label"}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);

    let mut sandboxed = pod("sandboxed");
    sandboxed["spec"]["runtimeClassName"] = "gvisor".into();
    let created = raw.send_json(http::Method::POST, PODS, &sandboxed).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let spec = created.json()["spec"].clone();
    assert_eq!(spec["overhead"], json!({"cpu": "250m", "memory": "64Mi"}));
    assert_eq!(spec["nodeSelector"], json!({"sandbox": "gvisor"}));
    assert!(
        spec["tolerations"]
            .as_array()
            .unwrap()
            .contains(&json!({"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"})),
        "{spec}"
    );
    let mut missing = pod("nowhere");
    missing["spec"]["runtimeClassName"] = "kata".into();
    let r = raw.send_json(http::Method::POST, PODS, &missing).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"nowhere\" is forbidden: pod rejected: RuntimeClass \"kata\" not found"
    );
    let mut elsewhere = pod("elsewhere");
    elsewhere["spec"]["runtimeClassName"] = "gvisor".into();
    elsewhere["spec"]["nodeSelector"] = json!({"sandbox": "none"});
    let r = raw.send_json(http::Method::POST, PODS, &elsewhere).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"elsewhere\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = none"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingress_classes_are_served_with_upstream_validation() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let classes = "/apis/networking.k8s.io/v1/ingressclasses";
    let class = json!({"metadata": {"name": "nginx",
            "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "k8s.io/ingress-nginx",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}});
    assert_eq!(
        raw.send_json(http::Method::POST, classes, &class)
            .await
            .status,
        201
    );
    let (success, out, err) = kubectl(&server.kubeconfig_path(), &["get", "ingressclasses"]);
    assert!(success, "{err}");
    assert!(
        out.contains("k8s.io/ingress-nginx")
            && out.contains("IngressParameters.k8s.example.com/external-lb"),
        "{out}"
    );
    let r = raw
        .send_json(
            http::Method::POST,
            classes,
            &json!({"metadata": {"name": "bad"}, "spec": {"controller": "nginx"}}),
        )
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["details"]["causes"][0]["field"], "spec.controller");
    let mut changed = raw.get(&format!("{classes}/nginx")).await.json();
    changed["spec"]["controller"] = "example.com/other".into();
    let r = raw
        .send_json(http::Method::PUT, &format!("{classes}/nginx"), &changed)
        .await;
    assert_eq!(r.status, 422, "the controller is immutable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_run_as_existing_service_accounts_with_their_credentials() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    // A pod in a namespace made a moment ago: its `default` account is waited for.
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "fresh"}}),
        )
        .await;
    assert_eq!(r.status, 201);
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/fresh/pods",
            &pod("p"),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let p = r.json();
    assert_eq!(p["spec"]["serviceAccountName"], "default");
    assert_eq!(p["spec"]["serviceAccount"], "default");
    let volume = &p["spec"]["volumes"][0];
    let name = volume["name"].as_str().unwrap();
    assert!(
        name.starts_with("kube-api-access-") && name.len() == 21,
        "{name}"
    );
    assert_eq!(
        volume["projected"]["sources"],
        json!([
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ])
    );
    assert_eq!(
        p["spec"]["containers"][0]["volumeMounts"],
        json!([{"name": name, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
    );
    // The CA the volume reads is published in every namespace.
    let mut ca = Value::Null;
    for _ in 0..100 {
        let r = raw
            .get("/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt")
            .await;
        if r.status == 200 {
            ca = r.json()["data"]["ca.crt"].clone();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(ca.as_str(), Some(server.ca_pem()));

    // Another account: its image pull secrets; no token when the pod says so.
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/serviceaccounts",
            &json!({"metadata": {"name": "builder"}, "imagePullSecrets": [{"name": "registry"}]}),
        )
        .await;
    assert_eq!(r.status, 201);
    let mut quiet = pod("quiet");
    quiet["spec"]["serviceAccountName"] = json!("builder");
    quiet["spec"]["automountServiceAccountToken"] = json!(false);
    let p = raw.send_json(http::Method::POST, PODS, &quiet).await.json();
    assert_eq!(p["spec"]["imagePullSecrets"], json!([{"name": "registry"}]));
    assert!(p["spec"]["volumes"].is_null(), "{}", p["spec"]);

    // A missing account, and a mirror pod naming one, are refused.
    let mut lost = pod("lost");
    lost["spec"]["serviceAccountName"] = json!("nobody");
    let r = raw.send_json(http::Method::POST, PODS, &lost).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"lost\" is forbidden: error looking up service account default/nobody: serviceaccount \"nobody\" not found"
    );
    let mut mirror = pod("mirror");
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
    mirror["spec"]["serviceAccountName"] = json!("builder");
    let r = raw.send_json(http::Method::POST, PODS, &mirror).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"mirror\" is forbidden: a mirror pod may not reference service accounts"
    );
    // An account that enforces its mountable secrets.
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/serviceaccounts",
            &json!({"metadata": {"name": "strict", "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}}, "secrets": [{"name": "allowed"}]}),
        )
        .await;
    assert_eq!(r.status, 201);
    let mut strict = pod("strict");
    strict["spec"]["serviceAccountName"] = json!("strict");
    strict["spec"]["volumes"] = json!([{"name": "s", "secret": {"secretName": "other"}}]);
    let r = raw.send_json(http::Method::POST, PODS, &strict).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"strict\" is forbidden: volume with secret.secretName=\"other\" is not allowed because service account strict does not reference that secret"
    );

    // Switched off: no account, no volume.
    let off = TestServer::start_with(|c| c.admission = plugins(&[], &["ServiceAccount"])).await;
    let p = admin(&off)
        .send_json(http::Method::POST, PODS, &pod("bare"))
        .await
        .json();
    assert!(p["spec"]["serviceAccountName"].is_null(), "{}", p["spec"]);
    assert!(p["spec"]["volumes"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_ranges_default_and_bound_container_resources() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    const RANGES: &str = "/api/v1/namespaces/default/limitranges";
    let r = raw
        .send_json(
            http::Method::POST,
            RANGES,
            &json!({"metadata": {"name": "bad"}, "spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["details"]["causes"][0]["field"],
        "spec.limits[0].min[cpu]"
    );
    let r = raw
        .send_json(
            http::Method::POST,
            RANGES,
            &json!({"metadata": {"name": "limits"}, "spec": {"limits": [
                {"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}, "max": {"memory": "1Gi"}},
            ]}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // The maximum became the default limit too (upstream's defaulting).
    assert_eq!(
        r.json()["spec"]["limits"][0]["default"],
        json!({"cpu": "500m", "memory": "1Gi"})
    );
    let out = crate::ok(kubectl(&server.kubeconfig_path(), &["get", "limits"]));
    assert!(
        out.starts_with("NAME") && out.contains("CREATED AT") && out.contains("limits"),
        "{out}"
    );

    let mut p = pod("defaulted");
    p["spec"]["containers"][0]["resources"] = json!({"limits": {"memory": "512Mi"}});
    let r = raw.send_json(http::Method::POST, PODS, &p).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let created = r.json();
    assert_eq!(
        created["spec"]["containers"][0]["resources"],
        json!({"requests": {"cpu": "100m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}})
    );
    assert_eq!(
        created["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container c; cpu limit for container c"
    );
    let mut big = pod("big");
    big["spec"]["containers"][0]["resources"] = json!({"limits": {"memory": "2Gi"}});
    let r = raw.send_json(http::Method::POST, PODS, &big).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "pods \"big\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_quotas_charge_creates_and_release_deletions() {
    let mut server = TestServer::start().await;
    let raw = admin(&server);
    const QUOTAS: &str = "/api/v1/namespaces/default/resourcequotas";
    // The namespace's CA map comes a moment after the start (the publisher's grace).
    for _ in 0..100 {
        let ca = "/api/v1/namespaces/default/configmaps/kube-root-ca.crt";
        if raw.get(ca).await.status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let r = raw
        .send_json(
            http::Method::POST,
            QUOTAS,
            &json!({"metadata": {"name": "compute"}, "spec": {"hard": {"pods": "5", "requests.cpu": "1", "count/configmaps": "2"}}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // The controller fills the status in.
    let mut quota = Value::Null;
    for _ in 0..100 {
        quota = raw.get(&format!("{QUOTAS}/compute")).await.json();
        if !quota["status"]["used"].is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        quota["status"]["hard"],
        json!({"pods": "5", "requests.cpu": "1", "count/configmaps": "2"})
    );
    assert_eq!(quota["status"]["used"]["pods"], "0");
    // The CA map the controller publishes counts as one config map.
    assert_eq!(quota["status"]["used"]["count/configmaps"], "1");

    let sized = |name: &str, cpu: &str| {
        let mut p = pod(name);
        p["spec"]["containers"][0]["resources"] = json!({"requests": {"cpu": cpu}});
        p
    };
    // Without a cpu request, the pod cannot be charged.
    let r = raw.send_json(http::Method::POST, PODS, &pod("bare")).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"bare\" is forbidden: failed quota: compute: must specify requests.cpu"
    );
    const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";
    let r = raw
        .send_json(
            http::Method::POST,
            CONFIG_MAPS,
            &json!({"metadata": {"name": "spare"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // Twenty concurrent creates of 100m: the quota's five pods, not one more. A deletion
    // among them makes the controller recount, which must still count every pod (whether
    // it lands while a create is in flight is up to timing; the controller's unit tests
    // cover that case).
    let creates = (0..20).map(|i| {
        let raw = raw.clone();
        let body = sized(&format!("p{i}"), "100m");
        async move { raw.send_json(http::Method::POST, PODS, &body).await }
    });
    let spare = format!("{CONFIG_MAPS}/spare");
    let delete = raw.request(http::Method::DELETE, &spare, &[], Vec::new());
    let (results, deleted) = tokio::join!(futures_util::future::join_all(creates), delete);
    assert_eq!(deleted.status, 200, "{:?}", deleted.body);
    let created = results.iter().filter(|r| r.status == 201).count();
    assert_eq!(
        created,
        5,
        "{:?}",
        results.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    let refused = results.iter().find(|r| r.status == 403).unwrap().json();
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.ends_with("is forbidden: exceeded quota: compute, requested: pods=1, used: pods=5, limited: pods=5"),
        "{message}"
    );
    // Once the recount the deletion caused is written, the pods are still all counted.
    let mut quota = Value::Null;
    for _ in 0..100 {
        quota = raw.get(&format!("{QUOTAS}/compute")).await.json();
        if quota["status"]["used"]["count/configmaps"] == "1" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(quota["status"]["used"]["count/configmaps"], "1");
    assert_eq!(quota["status"]["used"]["pods"], "5");
    assert_eq!(quota["status"]["used"]["requests.cpu"], "500m");
    let out = crate::ok(kubectl(&server.kubeconfig_path(), &["get", "quota"]));
    assert!(
        out.contains("REQUEST") && out.contains("pods: 5/5"),
        "{out}"
    );

    // A deleted pod gives its share back.
    let name = results
        .iter()
        .find(|r| r.status == 201)
        .map(|r| r.json()["metadata"]["name"].as_str().unwrap().to_string())
        .unwrap();
    let r = raw
        .request(
            http::Method::DELETE,
            &format!("{PODS}/{name}?gracePeriodSeconds=0"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let mut again = 0;
    for _ in 0..100 {
        again = raw
            .send_json(http::Method::POST, PODS, &sized("again", "100m"))
            .await
            .status
            .as_u16();
        if again == 201 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(again, 201);
    // count/<resource>: one more config map, then no more.
    let cm = |n: &str| json!({"metadata": {"name": n}});
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &cm("one"),
        )
        .await;
    assert_eq!(r.status, 201);
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &cm("two"),
        )
        .await;
    assert_eq!(r.status, 403);
    // Dry runs are judged too.
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/configmaps?dryRun=All",
            &cm("three"),
        )
        .await;
    assert_eq!(r.status, 403);
    // After a restart the quota holds from the first request on: the server serves once it
    // knows which namespaces hold quotas.
    server.restart().await;
    let raw = admin(&server);
    let r = raw
        .send_json(http::Method::POST, CONFIG_MAPS, &cm("four"))
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("exceeded quota: compute"),
        "{:?}",
        r.body
    );
}

/// A PEM certificate request for `cn` in `orgs`.
fn certificate_request(cn: &str, orgs: &[&str]) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    for o in orgs {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *o);
    }
    params.serialize_request(&key).unwrap().pem().unwrap()
}

fn csr(name: &str, request: &str) -> Value {
    use base64::Engine;
    json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64::engine::general_purpose::STANDARD.encode(request),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "expirationSeconds": 86400,
            "usages": ["client auth"],
        },
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_requests_need_their_signers_verbs() {
    const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "bob-token,bob,1002\n").unwrap();
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let raw = admin(&server);
    let bob = raw.with_token(Some("bob-token"));
    let bob_conf = dir.path().join("bob.kubeconfig");
    std::fs::write(
        &bob_conf,
        server.kubeconfig().replace(server.token(), "bob-token"),
    )
    .unwrap();
    // Bob may create, read and approve requests, but holds no signer's `approve`.
    let role = json!({"metadata": {"name": "csr-approver"}, "rules": [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status"], "verbs": ["create", "get", "list", "update"]},
    ]});
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            &role,
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let binding = json!({"metadata": {"name": "bob"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csr-approver"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]});
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &binding,
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    // The requester is whoever created the request, whatever the body says.
    let mut body = csr("alice", &certificate_request("alice", &["devs"]));
    body["spec"]["username"] = json!("someone-else");
    let mut r = bob.send_json(http::Method::POST, CSRS, &body).await;
    for _ in 0..100 {
        if r.status != 403 {
            break;
        }
        // The RBAC index follows the new binding.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        r = bob.send_json(http::Method::POST, CSRS, &body).await;
    }
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.json()["spec"]["username"], "bob");

    // No certificates for system:masters from the client signer.
    let r = raw
        .send_json(
            http::Method::POST,
            CSRS,
            &csr("root", &certificate_request("root", &["system:masters"])),
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "certificatesigningrequests.certificates.k8s.io \"root\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    );
    // Not a certificate request: 422.
    let r = raw
        .send_json(
            http::Method::POST,
            CSRS,
            &csr("junk", "-----BEGIN NONSENSE-----\n"),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(r.json()["details"]["causes"][0]["field"], "spec.request");

    // Bob may write the approval but not approve for this signer.
    let (ok, _, err) = kubectl(&bob_conf, &["certificate", "approve", "alice"]);
    assert!(!ok);
    assert!(
        err.contains("user not permitted to approve requests with signerName \"kubernetes.io/kube-apiserver-client\""),
        "{err}"
    );
    // The administrator may.
    crate::ok(kubectl(
        &server.kubeconfig_path(),
        &["certificate", "approve", "alice"],
    ));
    let out = crate::ok(kubectl(&server.kubeconfig_path(), &["get", "csr", "alice"]));
    assert!(
        out.contains("SIGNERNAME")
            && out.contains("Approved")
            && out.contains("24h")
            && out.contains("bob"),
        "{out}"
    );
    // Issuing needs `sign`: bob may write the status, but signs for no signer.
    let mut issued = raw.get(&format!("{CSRS}/alice")).await.json();
    use base64::Engine;
    issued["status"]["certificate"] =
        json!(base64::engine::general_purpose::STANDARD.encode(server.ca_pem()));
    let r = bob
        .send_json(http::Method::PUT, &format!("{CSRS}/alice/status"), &issued)
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "certificatesigningrequests.certificates.k8s.io \"alice\" is forbidden: user not permitted to sign requests with signerName \"kubernetes.io/kube-apiserver-client\""
    );
    let r = raw
        .send_json(http::Method::PUT, &format!("{CSRS}/alice/status"), &issued)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let out = crate::ok(kubectl(&server.kubeconfig_path(), &["get", "csr", "alice"]));
    assert!(out.contains("Approved,Issued"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn security_context_deny_refuses_the_fields_it_guards() {
    let server =
        TestServer::start_with(|c| c.admission = plugins(&["SecurityContextDeny"], &[])).await;
    let raw = admin(&server);
    let mut root = pod("root");
    root["spec"]["securityContext"] = json!({"runAsUser": 0});
    let r = raw.send_json(http::Method::POST, PODS, &root).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods \"root\" is forbidden: pod.Spec.SecurityContext.RunAsUser is forbidden"
    );
    let mut fine = pod("fine");
    fine["spec"]["securityContext"] = json!({"runAsNonRoot": true});
    let r = raw.send_json(http::Method::POST, PODS, &fine).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_security_enforces_and_warns_by_namespace_labels() {
    let server = TestServer::start_with(|c| c.admission = plugins(&["PodSecurity"], &[])).await;
    let raw = admin(&server);
    let ns = |name: &str, labels: Value| json!({"metadata": {"name": name, "labels": labels}});
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces",
            &ns(
                "bad",
                json!({"pod-security.kubernetes.io/enforce": "strict"}),
            ),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces",
            &ns("locked", json!({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"})),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let pods = "/api/v1/namespaces/locked/pods";
    let mut host = pod("host");
    host["spec"]["hostNetwork"] = json!(true);
    let r = raw.send_json(http::Method::POST, pods, &host).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "pods \"host\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)"
    );
    // Baseline passes; restricted is only warned about.
    let r = raw.send_json(http::Method::POST, pods, &pod("plain")).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let warning = r
        .headers
        .get("warning")
        .expect("a warning")
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        warning.starts_with("299 - \"would violate PodSecurity \\\"restricted:latest\\\": allowPrivilegeEscalation != false"),
        "{warning}"
    );
    // Namespaces without labels are privileged (the default).
    let r = raw.send_json(http::Method::POST, PODS, &host).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_references_need_delete_and_finalizer_rights() {
    let server = crate::server_with_tokens("bob-token,bob,1002\n", |c| {
        c.authorization_modes = vec!["RBAC".into()];
        c.admission = plugins(&["OwnerReferencesPermissionEnforcement"], &[]);
    })
    .await;
    let raw = admin(&server);
    let bob = raw.with_token(Some("bob-token"));
    let grant = |verbs: &[&str]| json!({"metadata": {"name": "bob-configmaps"}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]});
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    let r = raw
        .send_json(http::Method::POST, roles, &grant(&["create", "get"]))
        .await;
    assert_eq!(r.status, 201);
    let binding = json!({"metadata": {"name": "bob"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bob-configmaps"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]});
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &binding,
        )
        .await;
    assert_eq!(r.status, 201);
    const CMS: &str = "/api/v1/namespaces/default/configmaps";
    let owner = raw
        .send_json(
            http::Method::POST,
            CMS,
            &json!({"metadata": {"name": "owner"}}),
        )
        .await
        .json();
    let owned = |name: &str, block: bool| json!({"metadata": {"name": name, "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block}]}});
    // Plain objects are fine; an owner reference needs the right to delete.
    let mut r = bob
        .send_json(
            http::Method::POST,
            CMS,
            &json!({"metadata": {"name": "plain"}}),
        )
        .await;
    for _ in 0..100 {
        if r.status == 201 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        r = bob
            .send_json(
                http::Method::POST,
                CMS,
                &json!({"metadata": {"name": "plain"}}),
            )
            .await;
    }
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = bob
        .send_json(http::Method::POST, CMS, &owned("child", false))
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with("configmaps \"child\" is forbidden: cannot set an ownerRef on a resource you can't delete: "),
        "{message}"
    );
    // With delete, the reference goes in; blocking the owner's deletion needs its finalizers.
    let r = raw
        .send_json(
            http::Method::PUT,
            &format!("{roles}/bob-configmaps"),
            &grant(&["create", "get", "delete"]),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let mut r = bob
        .send_json(http::Method::POST, CMS, &owned("child", false))
        .await;
    for _ in 0..100 {
        if r.status == 201 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        r = bob
            .send_json(http::Method::POST, CMS, &owned("child", false))
            .await;
    }
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = bob
        .send_json(http::Method::POST, CMS, &owned("blocking", true))
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on"),
        "{message}"
    );
    let r = raw
        .send_json(http::Method::POST, CMS, &owned("blocking", true))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_rate_limit_throttles_event_creates_per_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let limits = dir.path().join("limits.yaml");
    std::fs::write(
        &limits,
        "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n- type: Namespace\n  qps: 1\n  burst: 3\n",
    )
    .unwrap();
    let file = dir.path().join("admission.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  path: {}\n",
            limits.display()
        ),
    )
    .unwrap();
    let server = TestServer::start_with(move |c| {
        c.admission = capstan_admission::AdmissionOptions {
            enable: vec!["EventRateLimit".into()],
            config_file: Some(file),
            ..Default::default()
        };
    })
    .await;
    let raw = admin(&server);
    let event = |ns: &str, i: usize| {
        json!({"metadata": {"name": format!("e{i}"), "namespace": ns},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns}, "reason": "Test", "message": "m"})
    };
    let statuses: Vec<u16> = {
        let mut out = Vec::new();
        for i in 0..4 {
            let r = raw
                .send_json(
                    http::Method::POST,
                    "/api/v1/namespaces/default/events",
                    &event("default", i),
                )
                .await;
            out.push(r.status.as_u16());
            if r.status == 429 {
                assert_eq!(
                    r.json()["message"],
                    "Too many requests: limit reached on type Namespace for key default"
                );
            }
        }
        out
    };
    // A burst of three; the fourth comes within the same second.
    assert_eq!(statuses, [201, 201, 201, 429]);
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/kube-system/events",
            &event("kube-system", 0),
        )
        .await;
    assert_eq!(r.status, 201, "another namespace has its own bucket");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_policy_webhook_reviews_images_and_caches_answers() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let backend = capstan_e2e::HttpsServer::start(move |req| {
        counted.fetch_add(1, Ordering::SeqCst);
        let mut review: Value = serde_json::from_slice(&req.body).unwrap();
        let evil = review["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["image"].as_str().unwrap().contains("evil"));
        review["status"] = if evil {
            json!({"allowed": false, "reason": "evil images are refused"})
        } else {
            json!({"allowed": true})
        };
        (http::StatusCode::OK, review)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("backend-ca.crt"), &backend.ca_pem).unwrap();
    let kubeconfig = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": format!("{}/review", backend.url), "certificate-authority": dir.path().join("backend-ca.crt")}}],
        "users": [{"name": "u", "user": {}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    });
    std::fs::write(
        dir.path().join("backend.kubeconfig"),
        kubeconfig.to_string(),
    )
    .unwrap();
    let file = dir.path().join("admission.yaml");
    std::fs::write(
        &file,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  configuration:\n    imagePolicy:\n      kubeConfigFile: backend.kubeconfig\n      allowTTL: 50\n      denyTTL: 50\n      retryBackoff: 100\n      defaultAllow: false\n",
    )
    .unwrap();
    let server = TestServer::start_with(move |c| {
        c.admission = capstan_admission::AdmissionOptions {
            enable: vec!["ImagePolicyWebhook".into()],
            config_file: Some(file),
            ..Default::default()
        };
    })
    .await;
    let raw = admin(&server);
    let r = raw.send_json(http::Method::POST, PODS, &pod("good")).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The same images again: answered from the cache.
    let r = raw
        .send_json(http::Method::POST, PODS, &pod("good-again"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let mut bad = pod("bad");
    bad["spec"]["containers"][0]["image"] = json!("registry.example/evil:1");
    let r = raw.send_json(http::Method::POST, PODS, &bad).await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "pods \"bad\" is forbidden: image policy webhook backend denied one or more images: evil images are refused"
    );
    // Break glass.
    bad["metadata"]["annotations"] = json!({"alpha.image-policy.k8s.io/break-glass": "true"});
    let r = raw.send_json(http::Method::POST, PODS, &bad).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}
