//! ValidatingAdmissionPolicies through kubectl: a policy with parameters and a message
//! expression denying, a Warn binding, bad CEL refused at create, and the tables.

use capstan_e2e::kubectl;
use capstan_testing::TestServer;
use http::Method;
use serde_json::json;

use crate::{admin, ok};

const POLICY: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: default}
data: {maxKeys: "2"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: small-configmaps
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
  matchConditions:
  - name: not-the-limits
    expression: object.metadata.name != 'limits'
  variables:
  - name: keys
    expression: "has(object.data) ? size(object.data) : 0"
  validations:
  - expression: variables.keys <= int(params.data.maxKeys)
    messageExpression: "'at most ' + params.data.maxKeys + ' keys, not ' + string(variables.keys)"
    reason: Forbidden
  auditAnnotations:
  - key: keys
    valueExpression: string(variables.keys)
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: small-configmaps-default
spec:
  policyName: small-configmaps
  validationActions: [Deny]
  paramRef: {name: limits, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: default}

"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_policies_deny_warn_and_refuse_bad_rules() {
    let server = TestServer::start_with(|c| {
        c.admission.enable = vec!["ValidatingAdmissionPolicy".into()];
    })
    .await;
    let kubeconfig = server.kubeconfig_path();
    let manifest = server.data_dir().join("policy.yaml");
    std::fs::write(&manifest, POLICY).unwrap();
    ok(kubectl(
        &kubeconfig,
        &["apply", "-f", manifest.to_str().unwrap()],
    ));
    let raw = admin(&server);
    let configmap = |name: &str, keys: usize| {
        let data: serde_json::Map<String, serde_json::Value> =
            (0..keys).map(|i| (format!("k{i}"), json!("v"))).collect();
        json!({"metadata": {"name": name}, "data": data})
    };
    let configmaps = "/api/v1/namespaces/default/configmaps";
    // The index follows the objects through the watch cache: wait until it denies.
    let mut denied = None;
    for _ in 0..200 {
        let r = raw
            .send_json(Method::POST, configmaps, &configmap("big", 3))
            .await;
        if r.status != 201 {
            denied = Some(r);
            break;
        }
        raw.request(
            Method::DELETE,
            &format!("{configmaps}/big"),
            &[],
            Vec::new(),
        )
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let r = denied.expect("the policy took effect");
    assert_eq!(r.status, 403, "{:?}", r.body);
    let status = r.json();
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps \"big\" is forbidden: ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps-default' denied request: at most 2 keys, not 3"
    );
    let r = raw
        .send_json(Method::POST, configmaps, &configmap("small", 2))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    // Other namespaces are outside the binding.
    let r = raw
        .send_json(
            Method::POST,
            "/api/v1/namespaces/kube-public/configmaps",
            &configmap("big", 3),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    // kubectl shows the refusal; a Warn binding turns it into a warning.
    let (success, _, err) = kubectl(
        &kubeconfig,
        &[
            "create",
            "configmap",
            "three",
            "--from-literal=a=1",
            "--from-literal=b=2",
            "--from-literal=c=3",
        ],
    );
    assert!(!success);
    assert!(
        err.contains("denied request: at most 2 keys, not 3"),
        "{err}"
    );
    ok(kubectl(
        &kubeconfig,
        &[
            "patch",
            "validatingadmissionpolicybinding",
            "small-configmaps-default",
            "--type=merge",
            "-p",
            r#"{"spec":{"validationActions":["Warn"]}}"#,
        ],
    ));
    let mut warned = String::new();
    for _ in 0..200 {
        let (success, _, err) = kubectl(
            &kubeconfig,
            &[
                "create",
                "configmap",
                "warned",
                "--from-literal=a=1",
                "--from-literal=b=2",
                "--from-literal=c=3",
            ],
        );
        if success {
            warned = err;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        warned.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps-default': at most 2 keys, not 3"),
        "{warned}"
    );

    // A rule that does not compile is refused with its field path.
    let mut bad: serde_json::Value = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "broken"},
        "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]},
            "validations": [{"expression": "object.spec.containers.all(c, "}],
        },
    });
    let r = raw
        .send_json(
            Method::POST,
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            &bad,
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["details"]["causes"][0]["field"],
        "spec.validations[0].expression"
    );
    bad["spec"]["validations"] = json!([]);
    let r = raw
        .send_json(
            Method::POST,
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            &bad,
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);

    // The tables.
    let out = ok(kubectl(
        &kubeconfig,
        &["get", "validatingadmissionpolicies"],
    ));
    assert!(
        out.starts_with("NAME") && out.contains("PARAMKIND"),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("small-configmaps ")
            && l.split_whitespace().nth(1) == Some("1")
            && l.contains("v1, Kind=ConfigMap")),
        "{out}"
    );
    let out = ok(kubectl(
        &kubeconfig,
        &["get", "validatingadmissionpolicybindings"],
    ));
    assert!(
        out.lines()
            .any(|l| l.starts_with("small-configmaps-default ")
                && l.split_whitespace().nth(1) == Some("small-configmaps")
                && l.split_whitespace().nth(2) == Some("limits")),
        "{out}"
    );
}
