//! HorizontalPodAutoscalers in `autoscaling/v2` (stored) and `autoscaling/v1` (converted):
//! `kubectl autoscale`, the Table, one object read and written through both versions, and the
//! upstream 422s.

use capstan_e2e::kubectl;
use capstan_testing::TestServer;
use serde_json::json;

use crate::{admin, ok};

const V2: &str = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
const V1: &str = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_autoscales_and_both_versions_share_one_object() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let run = |args: &[&str]| kubectl(&kc, args);
    let raw = admin(&server);

    ok(run(&["create", "deployment", "web", "--image=nginx"]));
    ok(run(&[
        "autoscale",
        "deployment",
        "web",
        "--max=5",
        "--cpu-percent=60",
    ]));
    let table = ok(run(&["get", "hpa"]));
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "REFERENCE",
            "TARGETS",
            "MINPODS",
            "MAXPODS",
            "REPLICAS",
            "AGE"
        ]
    );
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        row[..7],
        [
            "web",
            "Deployment/web",
            "cpu:",
            "<unknown>/60%",
            "1",
            "5",
            "0"
        ],
        "{table}"
    );

    // The v1 form of the same object.
    let v1 = raw.get(&format!("{V1}/web")).await.json();
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    assert_eq!(v1["spec"]["minReplicas"], 1);

    // A v2 object with a metric v1 cannot express keeps it through a v1 read and write.
    let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "qps"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 10,
            "metrics": [{"type": "Pods", "pods": {"metric": {"name": "requests"},
                "target": {"type": "AverageValue", "averageValue": "100"}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
    let created = raw.send_json(http::Method::POST, V2, &hpa).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let created = created.json();
    let down = &created["spec"]["behavior"]["scaleDown"];
    assert_eq!(down["stabilizationWindowSeconds"], 60);
    assert_eq!(
        down["policies"],
        json!([{"type": "Percent", "value": 100, "periodSeconds": 15}])
    );
    assert_eq!(
        created["spec"]["behavior"]["scaleUp"]["policies"][0]["value"],
        4
    );

    let mut v1 = raw.get(&format!("{V1}/qps")).await.json();
    assert!(v1["spec"].get("targetCPUUtilizationPercentage").is_none());
    let metrics = v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(metrics.contains("\"metricName\":\"requests\""), "{metrics}");
    v1["spec"]["maxReplicas"] = json!(12);
    let put = raw
        .send_json(http::Method::PUT, &format!("{V1}/qps"), &v1)
        .await;
    assert_eq!(put.status, 200, "{:?}", put.body);
    assert!(put.json()["metadata"]["annotations"].is_object());
    let back = raw.get(&format!("{V2}/qps")).await.json();
    assert_eq!(back["spec"]["maxReplicas"], 12);
    assert_eq!(back["spec"]["metrics"], created["spec"]["metrics"]);
    assert_eq!(back["spec"]["behavior"], created["spec"]["behavior"]);
    assert!(back["metadata"].get("annotations").is_none(), "{back}");

    // The status subresource in v1: the CPU figure lands in v2's current metrics.
    let mut status = raw.get(&format!("{V1}/web/status")).await.json();
    status["status"]["currentReplicas"] = json!(2);
    status["status"]["currentCPUUtilizationPercentage"] = json!(45);
    let put = raw
        .send_json(http::Method::PUT, &format!("{V1}/web/status"), &status)
        .await;
    assert_eq!(put.status, 200, "{:?}", put.body);
    let table = ok(run(&["get", "hpa", "web"]));
    assert!(table.contains("cpu: 45%/60%"), "{table}");

    // Upstream's 422s, with field paths.
    let bad = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "bad"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "minReplicas": 3, "maxReplicas": 2}});
    let r = raw.send_json(http::Method::POST, V2, &bad).await;
    assert_eq!(r.status, 422);
    assert_eq!(
        r.json()["details"]["causes"][0],
        json!({"reason": "FieldValueInvalid", "field": "spec.maxReplicas",
            "message": "Invalid value: 2: must be greater than or equal to `minReplicas`"})
    );
    let r = raw
        .send_json(
            http::Method::POST,
            V1,
            &json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "bad"},
                "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
                    "maxReplicas": 2, "targetCPUUtilizationPercentage": 0}}),
        )
        .await;
    assert_eq!(r.status, 422);
    assert!(
        r.message()
            .contains("spec.metrics[0].resource.target.averageUtilization: Invalid value: 0"),
        "{}",
        r.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_works_through_the_converted_version() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let raw = admin(&server);
    let manifest = kc.with_file_name("hpa-v1.yaml");
    let write = |max: u32| {
        std::fs::write(
            &manifest,
            format!(
                "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  maxReplicas: {max}\n  targetCPUUtilizationPercentage: 50\n"
            ),
        )
        .unwrap();
    };
    let path = manifest.to_str().unwrap().to_string();
    write(4);
    let out = ok(kubectl(&kc, &["apply", "--server-side", "-f", &path]));
    assert!(out.contains("serverside-applied"), "{out}");
    write(6);
    ok(kubectl(&kc, &["apply", "--server-side", "-f", &path]));
    let v2 = raw.get(&format!("{V2}/web")).await.json();
    assert_eq!(v2["spec"]["maxReplicas"], 6);
    assert_eq!(
        v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        50
    );
    let managers = v2["metadata"]["managedFields"].as_array().unwrap().clone();
    assert!(
        managers
            .iter()
            .any(|m| m["manager"] == "kubectl" && m["operation"] == "Apply"),
        "{managers:?}"
    );
    // Another manager changing the applied field conflicts, in either version.
    let r = raw
        .request(
            http::Method::PATCH,
            &format!("{V2}/web?fieldManager=other"),
            &[("content-type", "application/apply-patch+yaml")],
            serde_json::to_vec(&json!({"apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
                "spec": {"maxReplicas": 9}}))
            .unwrap(),
        )
        .await;
    assert_eq!(r.status, 409, "{:?}", r.body);
    assert!(r.message().contains("conflict"), "{}", r.message());
    // An apply without its type says so.
    let r = raw
        .request(
            http::Method::PATCH,
            &format!("{V1}/web?fieldManager=kubectl"),
            &[("content-type", "application/apply-patch+yaml")],
            b"{\"metadata\": {\"name\": \"web\"}}".to_vec(),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
}
