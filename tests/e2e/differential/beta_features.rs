//! Fields and rules of v1.36's beta features that are on by default, written to both servers
//! (dry runs): upstream's answer, accepted or refused with its message, is Capstan's.

use http::Method;
use serde_json::{Value, json};

use super::authorization::start_pair;

fn pod(spec: Value) -> Value {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "app"}]}});
    for (k, v) in spec.as_object().unwrap() {
        pod["spec"][k] = v.clone();
    }
    pod
}

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beta_fields_are_accepted_and_refused_as_upstream() {
    let (pair, _upstream, _server) = start_pair().await;
    pair.create(
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"metadata": {"name": "default"}}),
    )
    .await;
    let ports = json!([{"port": 80}]);
    let cases: Vec<(&str, &str, Value)> = vec![
        (
            "service name starting with a digit",
            "services",
            service("1svc", json!({"ports": ports})),
        ),
        (
            "service name with a dot",
            "services",
            service("a.b", json!({"ports": ports})),
        ),
        (
            "cluster IP with a leading zero",
            "services",
            service("lz", json!({"ports": ports, "clusterIP": "10.96.0.010"})),
        ),
        (
            "external IP with a leading zero",
            "services",
            service(
                "ext",
                json!({"ports": ports, "externalIPs": ["192.168.001.1"]}),
            ),
        ),
        (
            "load balancer source range not canonical",
            "services",
            service(
                "lb",
                json!({"ports": ports, "type": "LoadBalancer",
                "loadBalancerSourceRanges": ["10.0.0.1/8"]}),
            ),
        ),
        (
            "pod hostname override",
            "pods",
            pod(json!({"hostnameOverride": "custom-host"})),
        ),
        (
            "pod hostname override invalid",
            "pods",
            pod(json!({"hostnameOverride": "Not_Valid"})),
        ),
        (
            "pod-level resources",
            "pods",
            pod(json!({"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})),
        ),
        (
            "env from a file",
            "pods",
            pod(json!({
            "containers": [{"name": "c", "image": "app", "env": [{"name": "E", "valueFrom":
                {"fileKeyRef": {"volumeName": "cfg", "path": "env", "key": "E"}}}],
                "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}]}],
            "initContainers": [{"name": "i", "image": "init", "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}]}],
            "volumes": [{"name": "cfg", "emptyDir": {}}]})),
        ),
        (
            "container restart rules",
            "pods",
            pod(json!({
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "app", "restartPolicy": "Never",
                "restartPolicyRules": [{"action": "Restart",
                    "exitCodes": {"operator": "In", "values": [42]}}]}]})),
        ),
        (
            "pod IP with a leading zero in a host alias",
            "pods",
            pod(json!({"hostAliases": [{"ip": "10.0.0.010", "hostnames": ["x"]}]})),
        ),
        (
            "pod-level requests above limits",
            "pods",
            pod(json!({"resources": {
            "requests": {"cpu": "2"}, "limits": {"cpu": "1"}}})),
        ),
        (
            "pod-level resources of an unsupported kind",
            "pods",
            pod(json!({"resources": {
            "limits": {"nvidia.com/gpu": "1"}}})),
        ),
        (
            "env from a file without a key",
            "pods",
            pod(json!({
            "containers": [{"name": "c", "image": "app", "env": [{"name": "E", "valueFrom":
                {"fileKeyRef": {"volumeName": "cfg", "path": "env"}}}]}],
            "volumes": [{"name": "cfg", "emptyDir": {}}]})),
        ),
        (
            "env from a file of a missing volume",
            "pods",
            pod(json!({
            "containers": [{"name": "c", "image": "app", "env": [{"name": "E", "valueFrom":
                {"fileKeyRef": {"volumeName": "nope", "path": "env", "key": "E"}}}]}]})),
        ),
        (
            "restart rule with an unknown action",
            "pods",
            pod(json!({
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "app", "restartPolicy": "Never",
                "restartPolicyRules": [{"action": "Explode",
                    "exitCodes": {"operator": "In", "values": [42]}}]}]})),
        ),
        (
            "restart rules without a container restart policy",
            "pods",
            pod(json!({
            "containers": [{"name": "c", "image": "app",
                "restartPolicyRules": [{"action": "Restart",
                    "exitCodes": {"operator": "In", "values": [42]}}]}]})),
        ),
        (
            "container restart policy Always on a regular container",
            "pods",
            pod(json!({
            "containers": [{"name": "c", "image": "app", "restartPolicy": "Always"}]})),
        ),
        (
            "spread with match label keys",
            "pods",
            pod(json!({
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"a": "b"}},
                "matchLabelKeys": ["a"]}]})),
        ),
    ];
    let mut cases = cases;
    for (name, bad) in [
        ("namespace with a dot", "a.b"),
        ("namespace with an underscore", "a_b"),
        ("namespace starting with a dash", "-ab"),
    ] {
        cases.push((
            name,
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": bad}}),
        ));
    }
    for (name, bad) in [
        ("service name with an underscore", "a_b"),
        ("service name with a capital", "Ab"),
        (
            "service name too long",
            "a123456789012345678901234567890123456789012345678901234567890123",
        ),
    ] {
        cases.push((
            name,
            "services",
            service(bad, json!({"ports": [{"port": 80}]})),
        ));
    }
    let hpa = |behavior: Value| {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"}, "spec": {"maxReplicas": 3,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50}}}],
                "behavior": behavior}})
    };
    let hpas = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
    cases.push((
        "HPA with a tolerance",
        hpas,
        hpa(json!({"scaleUp": {"tolerance": "0.05"}})),
    ));
    cases.push((
        "HPA with a negative tolerance",
        hpas,
        hpa(json!({"scaleDown": {"tolerance": "-1"}})),
    ));
    let services_path = "/api/v1/namespaces/default/services";
    cases.push((
        "traffic distribution to the same node",
        services_path,
        service(
            "tdn",
            json!({"ports": [{"port": 80}], "trafficDistribution": "PreferSameNode"}),
        ),
    ));
    cases.push((
        "traffic distribution unknown",
        services_path,
        service(
            "tdu",
            json!({"ports": [{"port": 80}], "trafficDistribution": "Nearby"}),
        ),
    ));
    let mut differences = Vec::new();
    for (name, resource, body) in cases {
        let path = if resource == "namespaces" {
            "/api/v1/namespaces?dryRun=All".to_string()
        } else if resource.starts_with('/') {
            format!("{resource}?dryRun=All")
        } else {
            format!("/api/v1/namespaces/default/{resource}?dryRun=All")
        };
        let [theirs, mine] = pair.send_full(Method::POST, &path, &[], &body).await;
        let seen = |(code, answer, warnings): &(u16, Value, Vec<String>)| {
            (*code, answer["message"].clone(), warnings.clone())
        };
        let (theirs, mine) = (seen(&theirs), seen(&mine));
        let theirs_msg = if theirs.0 == 201 {
            (theirs.0, Value::Null, theirs.2.clone())
        } else {
            theirs.clone()
        };
        let mine_msg = if mine.0 == 201 {
            (mine.0, Value::Null, mine.2.clone())
        } else {
            mine.clone()
        };
        if theirs_msg != mine_msg {
            differences.push(format!(
                "{name}\n  upstream {theirs_msg:?}\n  capstan  {mine_msg:?}"
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A suspended Job's template may change its resources and scheduling directives (upstream's
/// `MutablePodResourcesForSuspendedJobs` and `MutableSchedulingDirectivesForSuspendedJobs`);
/// a running one's may not. Answers compared with upstream's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suspended_jobs_change_as_upstream_lets_them() {
    let (pair, _upstream, _server) = start_pair().await;
    let jobs = "/apis/batch/v1/namespaces/default/jobs";
    for (name, suspend) in [("paused", true), ("running", false)] {
        pair.create(
            jobs,
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
                "spec": {"suspend": suspend, "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "app",
                        "resources": {"requests": {"cpu": "100m"}}}]}}}}),
        )
        .await;
    }
    let changes = [
        (
            "resources",
            json!({"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "app", "resources": {"requests": {"cpu": "200m"}}}]}}}}),
        ),
        (
            "node selector",
            json!({"spec": {"template": {"spec": {"nodeSelector": {"zone": "a"}}}}}),
        ),
        (
            "tolerations",
            json!({"spec": {"template": {"spec": {"tolerations": [
            {"key": "k", "operator": "Exists"}]}}}}),
        ),
        (
            "image",
            json!({"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "other"}]}}}}),
        ),
    ];
    let mut differences = Vec::new();
    for name in ["paused", "running"] {
        for (what, patch) in &changes {
            let path = format!("{jobs}/{name}?dryRun=All");
            let [theirs, mine] = pair
                .send(
                    Method::PATCH,
                    &path,
                    &[("content-type", "application/strategic-merge-patch+json")],
                    patch,
                )
                .await;
            // Upstream's refusal renders its internal Go struct of the template as the value
            // (field names, nulls, the Job's uid): its code and reason are compared.
            let seen = |(code, answer): &(u16, Value)| (*code, answer["reason"].clone());
            if seen(&theirs) != seen(&mine) {
                differences.push(format!(
                    "{what} of {name}\n  upstream {:?}\n  capstan  {:?}",
                    seen(&theirs),
                    seen(&mine)
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// ResourceSlices with the beta DRA fields on by default in v1.36 (device taints,
/// partitionable devices' counters, consumable capacity), written to both (dry runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dra_beta_fields_are_accepted_and_refused_as_upstream() {
    let (pair, _upstream, _server) = start_pair().await;
    let slice = |devices: Value, extra: Value| {
        let mut spec = json!({"driver": "gpu.example.com", "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}});
        // Null: no `devices` at all.
        if !devices.is_null() {
            spec["devices"] = devices;
        }
        for (k, v) in extra.as_object().unwrap() {
            spec[k] = v.clone();
        }
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "s"}, "spec": spec})
    };
    let cases: Vec<(&str, Value)> = vec![
        (
            "a tainted device",
            slice(
                json!([{"name": "d", "taints": [
            {"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"}]}]),
                json!({}),
            ),
        ),
        (
            "a taint with an unknown effect",
            slice(
                json!([{"name": "d", "taints": [
            {"key": "example.com/broken", "effect": "Explode"}]}]),
                json!({}),
            ),
        ),
        (
            "a taint without a key",
            slice(
                json!([{"name": "d", "taints": [
            {"effect": "NoSchedule"}]}]),
                json!({}),
            ),
        ),
        (
            "shared counters alone",
            slice(
                Value::Null,
                json!({"sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}]}),
            ),
        ),
        (
            "shared counters beside devices",
            slice(
                json!([]),
                json!({"sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}]}),
            ),
        ),
        (
            "a counter set twice",
            slice(
                Value::Null,
                json!({"sharedCounters": [{"name": "a", "counters": {"m": {"value": "1"}}},
                    {"name": "a", "counters": {"m": {"value": "1"}}}]}),
            ),
        ),
        (
            "counters consumed from an unknown set",
            slice(
                json!([{"name": "d", "consumesCounters": [
                    {"counterSet": "nope", "counters": {"memory": {"value": "10Gi"}}}]}]),
                json!({}),
            ),
        ),
        (
            "multiple allocations with capacity",
            slice(
                json!([{"name": "d",
            "allowMultipleAllocations": true,
            "capacity": {"memory": {"value": "40Gi", "requestPolicy": {"default": "1Gi",
                "validRange": {"min": "1Gi", "step": "1Gi"}}}}}]),
                json!({}),
            ),
        ),
        (
            "a capacity policy with a bad default",
            slice(
                json!([{"name": "d",
            "allowMultipleAllocations": true,
            "capacity": {"memory": {"value": "40Gi", "requestPolicy": {"default": "100Gi",
                "validRange": {"min": "1Gi"}}}}}]),
                json!({}),
            ),
        ),
    ];
    let path = "/apis/resource.k8s.io/v1/resourceslices?dryRun=All";
    let differences = create_differences(&pair, path, cases).await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Each of `cases` (name, body) created at `path` on both servers: where the outcome (the
/// code, and the message of a refusal) differs, the name with both outcomes.
async fn create_differences(
    pair: &super::authorization::Pair,
    path: &str,
    cases: impl IntoIterator<Item = (impl std::fmt::Display, Value)>,
) -> Vec<String> {
    let seen = |(code, answer): &(u16, Value)| {
        let message = if *code == 201 {
            Value::Null
        } else {
            answer["message"].clone()
        };
        (*code, message)
    };
    let mut differences = Vec::new();
    for (name, body) in cases {
        let [theirs, mine] = pair.send(Method::POST, path, &[], &body).await;
        if seen(&theirs) != seen(&mine) {
            differences.push(format!(
                "{name}\n  upstream {:?}\n  capstan  {:?}",
                seen(&theirs),
                seen(&mine)
            ));
        }
    }
    differences
}

/// Device selectors are type-checked when a class or claim is written, as upstream's CEL
/// compiler checks them: undeclared names, fields a device does not have, results that are
/// not booleans.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_selectors_are_type_checked_as_upstream() {
    let (pair, _upstream, _server) = start_pair().await;
    let class = |expression: &str| {
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "c"},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}})
    };
    let expressions = [
        "device.driver == 'gpu.example.com'",
        "device.attributes['gpu.example.com'].model == 'a100'",
        "device.capacity['gpu.example.com'].memory.compareTo(quantity('1Gi')) >= 0",
        "device.allowMultipleAllocations",
        "device.driver",
        "device.attributes['gpu.example.com'].model",
        "1 + 2",
        "driver == 'x'",
        "device.nosuch == 'x'",
        "device.driver == 1",
        "device.driver.startsWith('gpu')",
        "size(device.attributes) > 0",
        "'gpu.example.com' in device.attributes",
        "device.attributes.exists(d, d == 'x')",
        "has(device.attributes.x)",
        "device.driver ==",
        "device.attributes['x'].model == 1",
        "device.capacity['x'].memory == 1",
        "device.allowMultipleAllocations ? 'a' : 'b'",
        "x.y == 1 || z",
        "device.driver == 'a' &&\n  device.nope",
    ];
    let cases = expressions.iter().map(|e| (e, class(e)));
    let path = "/apis/resource.k8s.io/v1/deviceclasses?dryRun=All";
    let differences = create_differences(&pair, path, cases).await;
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
