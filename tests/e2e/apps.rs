//! `apps/v1` through kubectl and raw HTTP: create, scale, rollout restart, expose, apply of a
//! multi-document manifest, immutable selectors, and the garbage collector's cascade from a
//! Deployment through its ReplicaSet to its Pod.

use std::time::Duration;

use capstan_e2e::kubectl;
use capstan_testing::TestServer;
use serde_json::json;

use crate::{admin, ok};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_scales_restarts_and_exposes_deployments() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let run = |args: &[&str]| kubectl(&kc, args);
    let raw = admin(&server);

    ok(run(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=2",
    ]));
    let table = ok(run(&["get", "deployments"]));
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{table}"
    );
    assert!(
        table.lines().nth(1).unwrap().starts_with("web    0/2"),
        "{table}"
    );
    let d = raw.get(&format!("{DEPLOYMENTS}/web")).await.json();
    assert_eq!(d["metadata"]["generation"], 1);
    assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    assert_eq!(d["spec"]["template"]["spec"]["restartPolicy"], "Always");

    // The scale subresource: an autoscaling/v1 Scale, written through kubectl scale.
    ok(run(&["scale", "deployment", "web", "--replicas=5"]));
    let scale = raw.get(&format!("{DEPLOYMENTS}/web/scale")).await.json();
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(scale["status"]["selector"], "app=web");
    let d = raw.get(&format!("{DEPLOYMENTS}/web")).await.json();
    assert_eq!(
        (
            d["spec"]["replicas"].clone(),
            d["metadata"]["generation"].clone()
        ),
        (json!(5), json!(2))
    );
    let r = raw
        .send_json(
            http::Method::PUT,
            &format!("{DEPLOYMENTS}/web/scale"),
            &json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                    "metadata": {"name": "web", "resourceVersion": "1"}, "spec": {"replicas": 1}}),
        )
        .await;
    assert_eq!(r.status, 409, "{:?}", r.body);
    let discovery = raw.get("/apis/apps/v1").await.json();
    let scale_resource = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .unwrap()
        .clone();
    assert_eq!(
        (
            &scale_resource["group"],
            &scale_resource["version"],
            &scale_resource["kind"]
        ),
        (&json!("autoscaling"), &json!("v1"), &json!("Scale"))
    );

    // rollout restart patches the template: a new generation.
    ok(run(&["rollout", "restart", "deployment", "web"]));
    let d = raw.get(&format!("{DEPLOYMENTS}/web")).await.json();
    assert_eq!(d["metadata"]["generation"], 3);
    assert!(
        d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
            .is_string()
    );

    // expose reads the selector and makes a Service of it.
    ok(run(&[
        "expose",
        "deployment",
        "web",
        "--port=80",
        "--target-port=8080",
    ]));
    let svc = raw
        .get("/api/v1/namespaces/default/services/web")
        .await
        .json();
    assert_eq!(svc["spec"]["selector"], json!({"app": "web"}));
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);

    // The selector is immutable, the upstream 422 with its field.
    let (success, _, err) = run(&[
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"selector":{"matchLabels":{"app":"other"}},"template":{"metadata":{"labels":{"app":"other"}}}}}"#,
    ]);
    assert!(!success);
    assert!(
        err.contains("spec.selector") && err.contains("field is immutable"),
        "{err}"
    );
    // A template its selector does not match.
    let r = raw
        .send_json(
            http::Method::POST,
            DEPLOYMENTS,
            &json!({"metadata": {"name": "bad"}, "spec": {
                "selector": {"matchLabels": {"app": "a"}},
                "template": {"metadata": {"labels": {"app": "b"}},
                             "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["details"]["causes"][0]["field"],
        "spec.template.metadata.labels"
    );
    assert!(
        r.message()
            .contains("`selector` does not match template `labels`"),
        "{}",
        r.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_of_every_workload_applies_and_deletions_cascade() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let manifest = kc.with_file_name("workloads.yaml");
    let template = |app: &str| {
        format!(
            "    metadata:\n      labels:\n        app: {app}\n    spec:\n      containers:\n      - name: c\n        image: busybox\n"
        )
    };
    let selector = |app: &str| format!("  selector:\n    matchLabels:\n      app: {app}\n");
    let docs = [
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n{}  template:\n{}", selector("d"), template("d")),
        format!("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: r\nspec:\n{}  template:\n{}", selector("r"), template("r")),
        format!("apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: s\nspec:\n  serviceName: s\n{}  template:\n{}", selector("s"), template("s")),
        format!("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\nspec:\n{}  template:\n{}", selector("ds"), template("ds")),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  clusterIP: None\n  selector:\n    app: s\n  ports:\n  - port: 80\n".to_string(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n".to_string(),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n".to_string(),
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cj\nspec:\n  schedule: \"*/5 * * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n          containers:\n          - name: c\n            image: busybox\n".to_string(),
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: d\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: d\n  maxReplicas: 4\n  metrics:\n  - type: Resource\n    resource:\n      name: cpu\n      target:\n        type: Utilization\n        averageUtilization: 70\n".to_string(),
        "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: r\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: ReplicaSet\n    name: r\n  maxReplicas: 3\n  targetCPUUtilizationPercentage: 60\n".to_string(),
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: d\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: d\n".to_string(),
        "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: rc\nspec:\n  selector:\n    app: rc\n  template:\n    metadata:\n      labels:\n        app: rc\n    spec:\n      containers:\n      - name: c\n        image: busybox\n".to_string(),
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: i\nspec:\n  rules:\n  - host: example.com\n    http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n          service:\n            name: s\n            port:\n              number: 80\n".to_string(),
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: np\nspec:\n  podSelector:\n    matchLabels:\n      app: d\n  ingress:\n  - ports:\n    - port: 80\n".to_string(),
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get, list]\n".to_string(),
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: reader\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\nsubjects:\n- kind: ServiceAccount\n  name: default\n  namespace: default\n".to_string(),
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: gvisor\nhandler: runsc\n".to_string(),
        "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: example.csi.io\nspec:\n  attachRequired: false\n".to_string(),
    ];
    std::fs::write(&manifest, docs.join("---\n")).unwrap();
    let path = manifest.to_str().unwrap();
    let out = ok(kubectl(&kc, &["apply", "-f", path]));
    for line in [
        "deployment.apps/d created",
        "replicaset.apps/r created",
        "statefulset.apps/s created",
        "daemonset.apps/ds created",
        "service/s created",
        "configmap/c created",
        "job.batch/j created",
        "cronjob.batch/cj created",
        "horizontalpodautoscaler.autoscaling/d created",
        "horizontalpodautoscaler.autoscaling/r created",
        "poddisruptionbudget.policy/d created",
        "replicationcontroller/rc created",
        "ingress.networking.k8s.io/i created",
        "networkpolicy.networking.k8s.io/np created",
        "role.rbac.authorization.k8s.io/reader created",
        "rolebinding.rbac.authorization.k8s.io/reader created",
        "runtimeclass.node.k8s.io/gvisor created",
        "csidriver.storage.k8s.io/example.csi.io created",
    ] {
        assert!(out.contains(line), "{out}");
    }
    // A second apply changes nothing: kubectl's three-way merge needs the merge keys of the
    // OpenAPI schemas (containers by name, ports by port) to see that.
    let out = ok(kubectl(&kc, &["apply", "-f", path]));
    // Except where upstream's kubectl cannot tell either: a PDB's selector is patched by
    // replacing it (so its three-way patch is never empty), and a NetworkPolicy's atomic
    // ingress list differs from the stored one by its defaulted protocol.
    assert_eq!(out.matches(" unchanged").count(), docs.len() - 2, "{out}");
    assert!(
        out.contains("poddisruptionbudget.policy/d configured"),
        "{out}"
    );
    assert!(
        out.contains("networkpolicy.networking.k8s.io/np configured"),
        "{out}"
    );
    let all = ok(kubectl(&kc, &["get", "all"]));
    for name in [
        "deployment.apps/d",
        "replicaset.apps/r",
        "statefulset.apps/s",
        "daemonset.apps/ds",
    ] {
        assert!(all.contains(name), "{all}");
    }

    // Deployment → ReplicaSet → Pod, by ownerReferences: deleting the Deployment takes both.
    let raw = admin(&server);
    let d = raw.get(&format!("{DEPLOYMENTS}/d")).await.json();
    let owner = |kind: &str, name: &str, uid: &serde_json::Value| {
        json!([{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid,
                "controller": true, "blockOwnerDeletion": true}])
    };
    let rs = raw
        .send_json(
            http::Method::POST,
            "/apis/apps/v1/namespaces/default/replicasets",
            &json!({"metadata": {"name": "d-1", "labels": {"app": "d"},
                                 "ownerReferences": owner("Deployment", "d", &d["metadata"]["uid"])},
                    "spec": {"selector": {"matchLabels": {"app": "d"}},
                             "template": {"metadata": {"labels": {"app": "d"}},
                                          "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
        )
        .await;
    assert_eq!(rs.status, 201, "{:?}", rs.body);
    let rs = rs.json();
    let pod = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/pods",
            &json!({"metadata": {"name": "d-1-x", "labels": {"app": "d"},
                                 "ownerReferences": owner("ReplicaSet", "d-1", &rs["metadata"]["uid"])},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}}),
        )
        .await;
    assert_eq!(pod.status, 201, "{:?}", pod.body);
    ok(kubectl(&kc, &["delete", "deployment", "d"]));
    let mut gone = false;
    for _ in 0..300 {
        let rs = raw
            .get("/apis/apps/v1/namespaces/default/replicasets/d-1")
            .await;
        let pod = raw.get("/api/v1/namespaces/default/pods/d-1-x").await;
        if rs.status == 404 && pod.status == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the ReplicaSet and its Pod outlived their Deployment");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_config_turns_group_versions_and_resources_off() {
    let pairs = |list: &[(&str, bool)]| {
        let pairs: Vec<(String, bool)> = list.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        capstan_registry::runtime_config::RuntimeConfig::parse(&pairs).unwrap()
    };
    let config = pairs(&[
        ("api/all", false),
        ("apps/v1", true),
        ("apps/v1/daemonsets", false),
    ]);
    let server = TestServer::start_with(move |c| c.runtime_config = config).await;
    let raw = admin(&server);
    let groups = raw.get("/apis").await.json();
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(names, ["apps"], "{groups}");
    assert_eq!(
        raw.get("/apis/storage.k8s.io/v1/storageclasses")
            .await
            .status,
        404
    );
    assert_eq!(
        raw.get("/apis/apps/v1/namespaces/default/daemonsets")
            .await
            .status,
        404
    );
    assert_eq!(
        raw.get("/apis/apps/v1/namespaces/default/deployments")
            .await
            .status,
        200
    );
    // The core group stays, and the server still works without APF's group.
    assert_eq!(
        raw.get("/api/v1/namespaces/default/configmaps")
            .await
            .status,
        200
    );

    // Naming a group version Capstan does not serve is refused at start.
    let config = pairs(&[("batch/v2alpha1", true)]);
    let dir = tempfile::tempdir().unwrap();
    let refused = capstan_server::start({
        let mut c = capstan_server::ServerConfig::new(
            dir.path(),
            std::sync::Arc::new(capstan_controllers::InProcess),
        );
        c.runtime_config = config;
        c.secure_port = 0;
        c.bind_address = "127.0.0.1".parse().unwrap();
        c
    })
    .await;
    let err = refused
        .err()
        .expect("the server refused to start")
        .to_string();
    assert!(err.contains("batch/v2alpha1 is not served"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_jobs_and_cron_jobs() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let run = |args: &[&str]| kubectl(&kc, args);
    let raw = admin(&server);

    ok(run(&[
        "create",
        "job",
        "pi",
        "--image=perl",
        "--",
        "perl",
        "-e",
        "print 1",
    ]));
    let job = raw
        .get("/apis/batch/v1/namespaces/default/jobs/pi")
        .await
        .json();
    let uid = job["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"]["job-name"],
        "pi"
    );
    assert_eq!(job["spec"]["backoffLimit"], 6);
    let table = ok(run(&["get", "jobs"]));
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
        "{table}"
    );
    assert!(
        table.contains("Running") && table.contains("0/1"),
        "{table}"
    );

    ok(run(&[
        "create",
        "cronjob",
        "hello",
        "--image=busybox",
        "--schedule=*/5 * * * *",
    ]));
    let table = ok(run(&["get", "cronjobs"]));
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"
        ],
        "{table}"
    );
    assert!(
        table.contains("*/5 * * * *") && table.contains("<none>"),
        "{table}"
    );
    // A Job made from the CronJob's template, owned by it.
    ok(run(&["create", "job", "manual", "--from=cronjob/hello"]));
    let manual = raw
        .get("/apis/batch/v1/namespaces/default/jobs/manual")
        .await
        .json();
    assert_eq!(manual["metadata"]["ownerReferences"][0]["kind"], "CronJob");

    let (success, _, err) = run(&[
        "create",
        "cronjob",
        "bad",
        "--image=busybox",
        "--schedule=61 * * * *",
    ]);
    assert!(!success);
    assert!(
        err.contains("spec.schedule") && err.contains("above maximum"),
        "{err}"
    );
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/batch/v1/namespaces/default/jobs",
            &json!({"metadata": {"name": "always"}, "spec": {"template": {"spec": {
                "restartPolicy": "Always", "containers": [{"name": "c", "image": "i"}]}}}}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["details"]["causes"][0]["field"],
        "spec.template.spec.restartPolicy"
    );
    // A pod failure policy naming a container the template does not have, and a CronJob
    // in a time zone the IANA database does not know.
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/batch/v1/namespaces/default/jobs",
            &json!({"metadata": {"name": "policy"}, "spec": {
                "podFailurePolicy": {"rules": [{"action": "FailJob",
                    "onExitCodes": {"containerName": "xyz", "operator": "In", "values": [42]}}]},
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "i"}]}}}}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["details"]["causes"][0]["message"],
        "Invalid value: \"xyz\": must be one of the container or initContainer names in the pod template"
    );
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/batch/v1/namespaces/default/cronjobs",
            &json!({"metadata": {"name": "rome"}, "spec": {"schedule": "0 * * * *",
                "timeZone": "Europe/InvalidRome", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}}}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["details"]["causes"][0]["message"],
        "Invalid value: \"Europe/InvalidRome\": unknown time zone Europe/InvalidRome"
    );
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/batch/v1/namespaces/default/cronjobs",
            &json!({"metadata": {"name": "rome"}, "spec": {"schedule": "0 * * * *",
                "timeZone": "Europe/Rome", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replication_controllers_pod_templates_ingresses_and_network_policies() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let run = |args: &[&str]| kubectl(&kc, args);
    let raw = admin(&server);
    let manifest = kc.with_file_name("core.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: nginx\nspec:\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: c\n        image: nginx\n\
---\napiVersion: v1\nkind: PodTemplate\nmetadata:\n  name: t\ntemplate:\n  metadata:\n    labels:\n      app: t\n  spec:\n    containers:\n    - name: c\n      image: busybox\n\
---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: nginx\n  annotations:\n    ingressclass.kubernetes.io/is-default-class: \"true\"\nspec:\n  controller: example.com/ingress\n\
---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\nspec:\n  podSelector:\n    matchLabels:\n      app: nginx\n  egress:\n  - to:\n    - ipBlock:\n        cidr: 10.0.0.0/8\n",
    )
    .unwrap();
    ok(run(&["apply", "-f", manifest.to_str().unwrap()]));
    // The controller's selector and labels come from its template.
    let rc = raw
        .get("/api/v1/namespaces/default/replicationcontrollers/nginx")
        .await
        .json();
    assert_eq!(rc["spec"]["selector"], json!({"app": "nginx"}));
    assert_eq!(rc["metadata"]["labels"], json!({"app": "nginx"}));
    ok(run(&["scale", "rc", "nginx", "--replicas=3"]));
    let scale = raw
        .get("/api/v1/namespaces/default/replicationcontrollers/nginx/scale")
        .await
        .json();
    assert_eq!(
        (
            scale["spec"]["replicas"].clone(),
            scale["status"]["selector"].clone()
        ),
        (json!(3), json!("app=nginx"))
    );
    let table = ok(run(&["get", "rc,podtemplates"]));
    assert!(table.contains("replicationcontroller/nginx   3"), "{table}");
    assert!(
        table.contains("podtemplate/t") && table.contains("app=t"),
        "{table}"
    );

    // kubectl's ingress, given the default class by the DefaultIngressClass plugin.
    ok(run(&[
        "create",
        "ingress",
        "web",
        "--rule=foo.com/bar*=web:80",
    ]));
    let ing = raw
        .get("/apis/networking.k8s.io/v1/namespaces/default/ingresses/web")
        .await
        .json();
    assert_eq!(ing["spec"]["ingressClassName"], "nginx");
    assert_eq!(
        ing["spec"]["rules"][0]["http"]["paths"][0]["pathType"],
        "Prefix"
    );
    let table = ok(run(&["get", "ingress"]));
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
        "{table}"
    );
    assert!(table.contains("foo.com"), "{table}");
    let (success, _, err) = run(&["create", "ingress", "bad", "--rule=foo.com/x=web:0"]);
    assert!(!success);
    assert!(
        err.contains("port name or number is required") || err.contains("spec.rules[0]"),
        "{err}"
    );

    let np = raw
        .get("/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/deny")
        .await
        .json();
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    let table = ok(run(&["get", "netpol"]));
    assert!(table.contains("app=nginx"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csi_drivers_volume_attachments_and_storage_capacities() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let post = |path: &'static str, body: serde_json::Value| {
        let raw = raw.clone();
        async move { raw.send_json(http::Method::POST, path, &body).await }
    };
    let r = post(
        "/apis/storage.k8s.io/v1/csidrivers",
        json!({"metadata": {"name": "ebs.csi.aws.com"}, "spec": {}}),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.json()["spec"]["fsGroupPolicy"], "ReadWriteOnceWithFSType");
    let attachments = "/apis/storage.k8s.io/v1/volumeattachments";
    let r = post(
        attachments,
        json!({"metadata": {"name": "a"}, "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n1",
               "source": {"persistentVolumeName": "pv1"}}}),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = raw
        .request(
            http::Method::PATCH,
            &format!("{attachments}/a"),
            &[("content-type", "application/merge-patch+json")],
            br#"{"spec":{"nodeName":"n2"}}"#.to_vec(),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(r.json()["details"]["causes"][0]["field"], "spec");
    let r = post(
        "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities",
        json!({"metadata": {"name": "c"}, "storageClassName": "fast", "capacity": "-1Gi"}),
    )
    .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    let table = ok(kubectl(
        &server.kubeconfig_path(),
        &["get", "volumeattachments,csidrivers"],
    ));
    assert!(
        table.contains("ebs.csi.aws.com   pv1   n1") || table.contains("pv1"),
        "{table}"
    );
}
