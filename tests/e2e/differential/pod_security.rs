//! Pod Security admission against upstream's: a generated corpus of pods (host namespaces,
//! privileges, capabilities, users, seccomp, AppArmor, SELinux, volumes, ports, sysctls,
//! proc mounts; in pods, containers and init containers) created with dry-run in namespaces
//! enforcing and warning at each level, the answers compared: status, message and warnings.

use http::Method;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use super::authorization::{Pair, start_pair_allowing_privileged};

/// One random change to a pod (its spec, a container's, or its annotations).
fn harden_or_loosen(pod: &mut Value, rng: &mut StdRng) {
    let containers = if pod["spec"]["initContainers"].is_array() && rng.random_ratio(1, 3) {
        "initContainers"
    } else {
        "containers"
    };
    let count = pod["spec"][containers].as_array().map_or(0, Vec::len);
    let index = rng.random_range(0..count);
    let on_pod = rng.random_bool(0.5);
    let context = |pod: &mut Value| -> Value {
        if on_pod {
            pod["spec"]["securityContext"].take()
        } else {
            pod["spec"][containers][index]["securityContext"].take()
        }
    };
    let put = |pod: &mut Value, mut ctx: Value| {
        if ctx.is_null() {
            ctx = json!({});
        }
        if on_pod {
            pod["spec"]["securityContext"] = ctx;
        } else {
            pod["spec"][containers][index]["securityContext"] = ctx;
        }
    };
    fn at<'a>(pod: &'a mut Value, containers: &str, index: usize) -> &'a mut Value {
        &mut pod["spec"][containers][index]
    }
    match rng.random_range(0..22) {
        0 => pod["spec"]["hostNetwork"] = json!(true),
        1 => pod["spec"]["hostPID"] = json!(true),
        2 => pod["spec"]["hostIPC"] = json!(true),
        3 => {
            at(pod, containers, index)["securityContext"]["privileged"] =
                json!(rng.random_bool(0.7))
        }
        4 => {
            let caps = [
                "NET_ADMIN",
                "NET_BIND_SERVICE",
                "CHOWN",
                "SYS_ADMIN",
                "KILL",
                "AUDIT_WRITE",
                "ALL",
            ];
            let cap = caps.choose(rng).unwrap();
            at(pod, containers, index)["securityContext"]["capabilities"]["add"] = json!([cap]);
        }
        5 => {
            let drop = [json!(["ALL"]), json!(["NET_RAW"]), json!(["all"])];
            at(pod, containers, index)["securityContext"]["capabilities"]["drop"] =
                drop.choose(rng).unwrap().clone();
        }
        6 => {
            let mut ctx = context(pod);
            ctx["runAsNonRoot"] = json!(rng.random_bool(0.7));
            put(pod, ctx);
        }
        7 => {
            let mut ctx = context(pod);
            ctx["runAsUser"] = json!([0, 1000, 65534].choose(rng).unwrap());
            put(pod, ctx);
        }
        8 => {
            at(pod, containers, index)["securityContext"]["allowPrivilegeEscalation"] =
                json!(!rng.random_bool(0.6));
        }
        9 => {
            let profiles = [
                json!({"type": "RuntimeDefault"}),
                json!({"type": "Unconfined"}),
                json!({"type": "Localhost", "localhostProfile": "p.json"}),
            ];
            let mut ctx = context(pod);
            ctx["seccompProfile"] = profiles.choose(rng).unwrap().clone();
            put(pod, ctx);
        }
        10 => {
            let volumes = [
                json!({"name": "h", "hostPath": {"path": "/var/log"}}),
                json!({"name": "e", "emptyDir": {}}),
                json!({"name": "c", "configMap": {"name": "c"}}),
                json!({"name": "n", "nfs": {"server": "nfs.example.com", "path": "/x"}}),
                json!({"name": "i", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:x", "lun": 0}}),
                json!({"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}),
                json!({"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}),
            ];
            let volume = volumes.choose(rng).unwrap().clone();
            let list = pod["spec"]["volumes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if !list.iter().any(|v| v["name"] == volume["name"]) {
                let mut list = list;
                list.push(volume);
                pod["spec"]["volumes"] = json!(list);
            }
        }
        11 => {
            at(pod, containers, index)["ports"] = {
                let host_port = [8080, 0].choose(rng).unwrap();
                json!([{"containerPort": 80, "hostPort": host_port}])
            };
        }
        12 => {
            at(pod, containers, index)["securityContext"]["procMount"] =
                json!(["Unmasked", "Default"].choose(rng).unwrap())
        }
        13 => {
            let sysctls = [
                "kernel.shm_rmid_forced",
                "net.ipv4.ip_local_port_range",
                "net.core.somaxconn",
                "net.ipv4.ip_unprivileged_port_start",
                "kernel.msgmax",
                "net.ipv4.tcp_keepalive_time",
            ];
            pod["spec"]["securityContext"]["sysctls"] =
                json!([{"name": sysctls.choose(rng).unwrap(), "value": "1"}]);
        }
        14 => {
            let options = [
                json!({"type": "container_t"}),
                json!({"type": "spc_t"}),
                json!({"type": "bad_t"}),
                json!({"user": "u"}),
                json!({"role": "r"}),
                json!({"level": "s0:c1,c2"}),
            ];
            let mut ctx = context(pod);
            ctx["seLinuxOptions"] = options.choose(rng).unwrap().clone();
            put(pod, ctx);
        }
        15 => {
            let profiles = [
                json!({"type": "RuntimeDefault"}),
                json!({"type": "Unconfined"}),
                json!({"type": "Localhost", "localhostProfile": "p"}),
            ];
            let mut ctx = context(pod);
            ctx["appArmorProfile"] = profiles.choose(rng).unwrap().clone();
            put(pod, ctx);
        }
        16 => {
            let name = pod["spec"][containers][index]["name"]
                .as_str()
                .unwrap()
                .to_string();
            let value = ["unconfined", "runtime/default", "localhost/p"]
                .choose(rng)
                .unwrap();
            pod["metadata"]["annotations"]
                [format!("container.apparmor.security.beta.kubernetes.io/{name}")] = json!(value);
        }
        17 => {
            let mut ctx = context(pod);
            ctx["windowsOptions"] = json!({"hostProcess": true});
            put(pod, ctx);
            pod["spec"]["hostNetwork"] = json!(true);
        }
        18 => {
            let mut ctx = context(pod);
            ctx["runAsGroup"] = json!([0, 1000].choose(rng).unwrap());
            put(pod, ctx);
        }
        19 => {
            at(pod, containers, index)["securityContext"]["capabilities"]["add"] =
                json!(["NET_BIND_SERVICE", "SETUID"])
        }
        20 => {
            let os = ["linux", "windows"].choose(rng).unwrap();
            pod["spec"]["os"] = json!({"name": os});
        }
        _ => pod["spec"]["securityContext"]["seccompProfile"] = json!({"type": "RuntimeDefault"}),
    }
}

/// A generated pod: one to three containers (sometimes an init container), mostly
/// hardened as the restricted standard asks, then changed at random a few times.
fn pod(rng: &mut StdRng) -> Value {
    let hardened = || {
        json!({"allowPrivilegeEscalation": false, "runAsNonRoot": true,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}})
    };
    let container = |name: &str, hardened_one: bool| {
        let mut c = json!({"name": name, "image": "busybox"});
        if hardened_one {
            c["securityContext"] = hardened();
        }
        c
    };
    let mut spec = json!({"containers": [container("c", rng.random_bool(0.7))]});
    if rng.random_ratio(1, 3) {
        spec["containers"]
            .as_array_mut()
            .unwrap()
            .push(container("d", rng.random_bool(0.7)));
    }
    if rng.random_ratio(1, 4) {
        spec["initContainers"] = json!([container("init", rng.random_bool(0.7))]);
    }
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {}}, "spec": spec});
    for _ in 0..rng.random_range(0..4) {
        harden_or_loosen(&mut pod, rng);
    }
    pod
}

/// The namespaces tried: enforcing each level, and warning at restricted.
const NAMESPACES: &[(&str, &str, &str)] = &[
    ("ps-baseline", "baseline", "privileged"),
    ("ps-restricted", "restricted", "privileged"),
    ("ps-warn", "privileged", "restricted"),
];

async fn load(pair: &Pair) {
    for (name, enforce, warn) in NAMESPACES {
        pair.create(
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {
                "pod-security.kubernetes.io/enforce": enforce,
                "pod-security.kubernetes.io/warn": warn}}}),
        )
        .await;
        pair.create(
            &format!("/api/v1/namespaces/{name}/serviceaccounts"),
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}),
        )
        .await;
    }
}

/// Every generated pod is admitted or refused alike, with the same words (privileged
/// containers refused by validation first, as both servers' default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_are_judged_as_upstreams_pod_security_judges_them() {
    judge_alike(false, 10).await;
}

/// The same with `--allow-privileged` on both: privileged and host-process pods reach Pod
/// Security.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn privileged_pods_are_judged_as_upstreams_pod_security_judges_them() {
    judge_alike(true, 20).await;
}

async fn judge_alike(allow_privileged: bool, default_seed: u64) {
    let (pair, _upstream, _server) = start_pair_allowing_privileged(allow_privileged).await;
    load(&pair).await;
    let seed = std::env::var("CAPSTAN_PSA_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_seed);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut differences = Vec::new();
    let mut refused = 0;
    let total = 500;
    for _ in 0..total {
        let pod = pod(&mut rng);
        for (namespace, _, _) in NAMESPACES {
            let path = format!("/api/v1/namespaces/{namespace}/pods?dryRun=All");
            let [theirs, mine] = pair.send_full(Method::POST, &path, &[], &pod).await;
            if theirs.0 == 403 {
                refused += 1;
            }
            // Every warning: the pod's own (deprecated fields, likely mistakes), then Pod
            // Security's.
            let seen =
                |a: &(u16, Value, Vec<String>)| (a.0, a.1["message"].clone(), format!("{:?}", a.2));
            if seen(&theirs) != seen(&mine) {
                differences.push(format!(
                    "{namespace} {pod}\n  upstream {:?}\n  capstan  {:?}",
                    seen(&theirs),
                    seen(&mine)
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} answers differ (seed {seed}):\n{}",
        differences.len(),
        total * NAMESPACES.len(),
        differences
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(refused > total / 4, "upstream refused only {refused}");
}
