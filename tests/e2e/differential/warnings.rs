//! The warnings a write of a pod or a pod template gets, against upstream's: deprecated node
//! labels, annotations and volume plugins, duplicates, fractional byte quantities, ambiguous
//! ports, null selectors, negative grace periods; on pods and on every workload's template,
//! on create and on update, with the write refused or not.

use http::Method;
use serde_json::{Value, json};

use super::authorization::Pair;
use super::{Upstream, capstan};
use capstan_testing::TestServer;

fn container(name: &str, extra: Value) -> Value {
    let mut c = json!({"name": name, "image": "busybox"});
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

/// A pod spec with one of each warning (each name a different key so no map order matters).
fn noisy_spec() -> Value {
    json!({
        "nodeSelector": {"beta.kubernetes.io/arch": "amd64"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference":
                    {"matchExpressions": [{"key": "node-role.kubernetes.io/master", "operator": "Exists"}]}}],
            },
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone"}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": {"topologyKey": "zone"}}]},
        },
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "failure-domain.beta.kubernetes.io/region",
            "whenUnsatisfiable": "DoNotSchedule"}],
        "terminationGracePeriodSeconds": -5,
        "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}, {"ip": "10.0.0.1", "hostnames": ["b"]}],
        "imagePullSecrets": [{"name": "pull"}, {"name": "pull"}, {"name": ""}],
        "volumes": [
            {"name": "repo", "gitRepo": {"repository": "https://example.com/r.git"}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
            {"name": "more", "projected": {"sources": [
                {"configMap": {"name": "c", "items": [{"key": "k", "path": "token"}]}},
                {"downwardAPI": {"items": [{"path": "token2", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            ]}},
            {"name": "downward", "projected": {"sources": [
                {"downwardAPI": {"items": [{"path": "token", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            ]}},
        ],
        "initContainers": [container("init", json!({"resources": {"requests": {"ephemeral-storage": "1500m"}}}))],
        "containers": [
            container("app", json!({
                "env": [
                    {"name": "A", "value": "1"}, {"name": "A", "value": "$(A)-2"},
                    {"name": "B", "value": "1"}, {"name": "B", "value": "2"},
                    {"name": "C", "value": "1"}, {"name": "C", "value": "$(C)"},
                ],
                "resources": {"limits": {"memory": "500m"}},
                "ports": [
                    {"containerPort": 80},
                    {"containerPort": 80, "hostPort": 8080},
                    {"containerPort": 81, "hostIP": "127.0.0.1"},
                    {"containerPort": 82, "hostPort": 9090, "hostIP": "127.0.0.1"},
                ],
            })),
            container("side", json!({"ports": [{"containerPort": 82, "hostPort": 9090}, {"containerPort": 80}]})),
        ],
    })
}

fn noisy_metadata(name: &str) -> Value {
    json!({"name": name, "labels": {"app": name}, "annotations": {
        "scheduler.alpha.kubernetes.io/critical-pod": "",
        "seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
        "container.seccomp.security.alpha.kubernetes.io/app": "runtime/default",
        "container.apparmor.security.beta.kubernetes.io/side": "runtime/default",
    }})
}

fn template(name: &str) -> Value {
    json!({"metadata": noisy_metadata(name), "spec": noisy_spec()})
}

/// (path, body) of each create, every one carrying the same noisy pod spec.
fn creates() -> Vec<(&'static str, Value)> {
    let selector = |name: &str| json!({"matchLabels": {"app": name}});
    let mut job_template = template("job");
    job_template["spec"]["restartPolicy"] = json!("Never");
    let mut rc_template = template("rc");
    rc_template["spec"]["restartPolicy"] = json!("Always");
    vec![
        (
            "/api/v1/namespaces/default/pods",
            json!({"metadata": noisy_metadata("pod"), "spec": noisy_spec()}),
        ),
        (
            "/api/v1/namespaces/default/podtemplates",
            json!({"metadata": {"name": "pt"}, "template": template("pt")}),
        ),
        (
            "/api/v1/namespaces/default/replicationcontrollers",
            json!({"metadata": {"name": "rc"},
            "spec": {"selector": {"app": "rc"}, "template": rc_template}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/deployments",
            json!({"metadata": {"name": "dep"},
            "spec": {"selector": selector("dep"), "template": template("dep")}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/replicasets",
            json!({"metadata": {"name": "rs"},
            "spec": {"selector": selector("rs"), "template": template("rs")}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/statefulsets",
            json!({"metadata": {"name": "sts"},
            "spec": {"selector": selector("sts"), "serviceName": "sts", "template": template("sts")}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/daemonsets",
            json!({"metadata": {"name": "ds"},
            "spec": {"selector": selector("ds"), "template": template("ds")}}),
        ),
        (
            "/apis/batch/v1/namespaces/default/jobs",
            json!({"metadata": {"name": "job"},
            "spec": {"template": job_template.clone()}}),
        ),
        (
            "/apis/batch/v1/namespaces/default/cronjobs",
            json!({"metadata": {"name": "cj"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": job_template}}}}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warnings_on_pods_and_templates_are_upstreams() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let pair = Pair {
        upstream: upstream.client.clone(),
        capstan: capstan(&server),
    };
    // Upstream runs no controller here to make the namespace's default ServiceAccount.
    pair.send(
        Method::POST,
        "/api/v1/namespaces/default/serviceaccounts",
        &[],
        &json!({"metadata": {"name": "default"}}),
    )
    .await;
    let mut compared = 0;
    for (path, body) in creates() {
        let [theirs, mine] = pair.send_full(Method::POST, path, &[], &body).await;
        assert_eq!(theirs.0, 201, "upstream: POST {path}: {}", theirs.1);
        assert!(
            theirs.2.len() > 20,
            "upstream warned little: {:?}",
            theirs.2
        );
        let first_difference = (0..theirs.2.len().max(mine.2.len()))
            .find(|&i| theirs.2.get(i) != mine.2.get(i))
            .map(|i| {
                format!(
                    "#{i}: upstream {:?}, capstan {:?}",
                    theirs.2.get(i),
                    mine.2.get(i)
                )
            });
        assert_eq!(
            (mine.0, first_difference),
            (theirs.0, None),
            "POST {path}: status and warnings ({})",
            mine.1
        );
        compared += theirs.2.len();
    }
    assert!(compared > 200, "{compared} warnings compared");

    // An update warns when the spec changed (a workload: when its generation moved).
    let deployment = "/apis/apps/v1/namespaces/default/deployments/dep";
    let merge = [("content-type", "application/merge-patch+json")];
    for (patch, warned) in [
        (json!({"metadata": {"labels": {"touched": "yes"}}}), false),
        (json!({"spec": {"replicas": 2}}), true),
    ] {
        let [theirs, mine] = pair
            .send_full(Method::PATCH, deployment, &merge, &patch)
            .await;
        assert_eq!(theirs.0, 200, "{}", theirs.1);
        assert_eq!(!theirs.2.is_empty(), warned, "upstream: {patch}");
        assert_eq!((mine.0, &mine.2), (theirs.0, &theirs.2), "PATCH {patch}");
    }
    let [theirs, mine] = pair
        .send_full(
            Method::PATCH,
            "/api/v1/namespaces/default/pods/pod",
            &merge,
            &json!({"metadata": {"labels": {"touched": "yes"}}}),
        )
        .await;
    assert_eq!((mine.0, &mine.2), (theirs.0, &theirs.2), "PATCH pod");

    // A refused write keeps the warnings gathered before the refusal.
    let mut invalid = json!({"metadata": noisy_metadata("bad"), "spec": noisy_spec()});
    invalid["spec"]["containers"][0]["image"] = json!("");
    let [theirs, mine] = pair
        .send_full(
            Method::POST,
            "/api/v1/namespaces/default/pods",
            &[],
            &invalid,
        )
        .await;
    assert_eq!(theirs.0, 422);
    assert_eq!((mine.0, &mine.2), (theirs.0, &theirs.2), "an invalid pod");
}

/// Volumes, claims, Ingresses, RuntimeClasses (their warnings), and addresses upstream's
/// strict IP and CIDR parsing refuses: dry-run creates, answers and warnings compared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warnings_and_refusals_of_other_kinds_are_upstreams() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let pair = Pair {
        upstream: upstream.client.clone(),
        capstan: capstan(&server),
    };
    let beta_class = json!({"volume.beta.kubernetes.io/storage-class": "slow"});
    let writes = [
        (
            "/api/v1/persistentvolumes",
            json!({"metadata": {"name": "pv1", "annotations": beta_class},
            "spec": {"capacity": {"storage": "1500m"}, "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Recycle", "hostPath": {"path": "/tmp/x"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "beta.kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}}}),
        ),
        (
            "/api/v1/persistentvolumes",
            json!({"metadata": {"name": "pv2"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "cephfs": {"monitors": ["a"]},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "failure-domain.beta.kubernetes.io/zone", "operator": "Exists"}]}]}}}}),
        ),
        (
            "/api/v1/namespaces/default/persistentvolumeclaims",
            json!({"metadata": {"name": "pvc1", "annotations": beta_class},
            "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1500m"}, "limits": {"storage": "2500m"}}}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
            json!({"metadata": {"name": "ing",
            "annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}}),
        ),
        (
            "/apis/node.k8s.io/v1/runtimeclasses",
            json!({"metadata": {"name": "rc1"}, "handler": "h",
            "scheduling": {"nodeSelector": {"beta.kubernetes.io/arch": "amd64"}}}),
        ),
        (
            "/api/v1/namespaces/default/services",
            json!({"metadata": {"name": "svc1"}, "spec": {
            "type": "LoadBalancer", "ports": [{"port": 80}], "externalIPs": ["010.1.2.3"],
            "loadBalancerSourceRanges": ["10.0.0.1/8"]}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
            json!({"metadata": {"name": "np"},
            "spec": {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.1/8"}}]}]}}),
        ),
        (
            "/api/v1/nodes",
            json!({"metadata": {"name": "n1"}, "spec": {"podCIDR": "10.0.0.1/24"}}),
        ),
    ];
    let mut differences = Vec::new();
    for (path, body) in writes {
        let path = format!("{path}?dryRun=All");
        let [theirs, mine] = pair.send_full(Method::POST, &path, &[], &body).await;
        let seen = |a: &(u16, Value, Vec<String>)| (a.0, a.1["message"].clone(), a.2.clone());
        if seen(&theirs) != seen(&mine) {
            differences.push(format!(
                "POST {path}\n  upstream {:?}\n  capstan  {:?}",
                seen(&theirs),
                seen(&mine)
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
