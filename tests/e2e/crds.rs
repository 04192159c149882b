//! CustomResourceDefinitions: a CRD applied with kubectl is established and its resource
//! served at once (discovery, short names), objects are pruned, defaulted and validated by
//! the schema with upstream's causes, a second version shares the objects, the status
//! subresource keeps status apart, and deleting the CRD deletes its objects first.

use std::time::Duration;

use capstan_e2e::kubectl;
use capstan_testing::TestServer;
use serde_json::{Value, json};

use crate::{admin, ok};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const SHOPS: &str = "/apis/example.com/v1/namespaces/default/shops";

const SHOP_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: shops.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: shops
    kind: Shop
    shortNames: [sh]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
              color: {type: string, enum: [red, blue], default: red}
              labels:
                type: object
                additionalProperties: {type: string}
          status:
            type: object
            properties:
              open: {type: boolean}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

/// Waits until the CRD `name` is Established, with kubectl as users do.
fn wait_established(kc: &std::path::Path, name: &str) {
    ok(kubectl(
        kc,
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=20s",
            &format!("crd/{name}"),
        ],
    ));
}

/// A server with the CRD `yaml` applied by kubectl and Established; the file stays in the
/// directory returned.
async fn with_crd(yaml: &str, name: &str) -> (TestServer, tempfile::TempDir, std::path::PathBuf) {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crd.yaml");
    std::fs::write(&file, yaml).unwrap();
    let kc = server.kubeconfig_path();
    ok(kubectl(&kc, &["apply", "-f", file.to_str().unwrap()]));
    wait_established(&kc, name);
    (server, dir, file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_serves_its_resource_with_schema_pruning_defaults_and_validation() {
    let (server, dir, file) = with_crd(SHOP_CRD, "shops.example.com").await;
    let kc = server.kubeconfig_path();

    let raw = admin(&server);
    let crd = raw.get(&format!("{CRDS}/shops.example.com")).await.json();
    assert_eq!(crd["spec"]["names"]["singular"], "shop");
    assert_eq!(crd["spec"]["names"]["listKind"], "ShopList");
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Shop");
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    assert_eq!(
        crd["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );

    // Served, and discovered: kubectl finds it by its short name.
    let shop = json!({
        "apiVersion": "example.com/v1", "kind": "Shop",
        "metadata": {"name": "corner"},
        "spec": {"size": 3, "junk": true, "labels": {"a": "b"}},
        "status": {"open": true}
    });
    let r = raw.send_json(http::Method::POST, SHOPS, &shop).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(
        r.headers.get("warning").map(|v| v.to_str().unwrap()),
        Some("299 - \"unknown field \\\"spec.junk\\\"\"")
    );
    let created = r.json();
    assert_eq!(
        created["spec"],
        json!({"size": 3, "color": "red", "labels": {"a": "b"}})
    );
    assert!(
        created.get("status").is_none(),
        "status comes through its subresource: {created}"
    );
    assert_eq!(created["metadata"]["generation"], 1);
    let out = ok(kubectl(&kc, &["get", "sh", "-o", "name"]));
    assert_eq!(out.trim(), "shop.example.com/corner");
    // OpenAPI has the schema at once: kubectl explain reads it.
    let explained = ok(kubectl(&kc, &["explain", "shops.spec"]));
    let line = |field: &str| {
        explained
            .lines()
            .find(|l| l.trim_start().starts_with(field))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("KIND:").ends_with("Shop"), "{explained}");
    assert!(line("size").contains("<integer>"), "{explained}");
    assert!(
        line("labels").contains("<map[string]string>"),
        "{explained}"
    );

    // kubectl apply, twice: created, then configured (kubectl patches custom objects
    // with a merge patch).
    let manifest = dir.path().join("shop.yaml");
    let write = |size: u32| {
        std::fs::write(
            &manifest,
            format!("apiVersion: example.com/v1\nkind: Shop\nmetadata:\n  name: applied\nspec:\n  size: {size}\n"),
        )
        .unwrap()
    };
    write(2);
    let out = ok(kubectl(&kc, &["apply", "-f", manifest.to_str().unwrap()]));
    assert_eq!(out.trim(), "shop.example.com/applied created");
    write(6);
    let out = ok(kubectl(&kc, &["apply", "-f", manifest.to_str().unwrap()]));
    assert_eq!(out.trim(), "shop.example.com/applied configured");
    let applied = raw.get(&format!("{SHOPS}/applied")).await.json();
    assert_eq!(applied["spec"], json!({"size": 6, "color": "red"}));

    // Strict field validation refuses what would be pruned.
    let r = raw
        .send_json(
            http::Method::POST,
            &format!("{SHOPS}?fieldValidation=Strict"),
            &json!({"apiVersion": "example.com/v1", "kind": "Shop", "metadata": {"name": "strict"}, "spec": {"size": 1, "junk": 1}}),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "strict decoding error: unknown field \"spec.junk\""
    );

    // Schema violations: a 422 with upstream's causes.
    let r = raw
        .send_json(
            http::Method::POST,
            SHOPS,
            &json!({"apiVersion": "example.com/v1", "kind": "Shop", "metadata": {"name": "bad"}, "spec": {"size": 11, "color": "pink"}}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    let status = r.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["kind"], "Shop");
    assert_eq!(status["details"]["group"], "example.com");
    assert_eq!(
        status["message"],
        "Shop.example.com \"bad\" is invalid: [spec.color: Unsupported value: \"pink\": supported values: \"red\", \"blue\", spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10]"
    );
    assert_eq!(
        status["details"]["causes"][1],
        json!({"reason": "FieldValueInvalid", "message": "Invalid value: 11: spec.size in body should be less than or equal to 10", "field": "spec.size"})
    );

    // The status subresource writes status, and only status.
    let mut current = raw.get(&format!("{SHOPS}/corner")).await.json();
    current["status"] = json!({"open": true});
    current["spec"]["size"] = json!(5);
    let r = raw
        .send_json(
            http::Method::PUT,
            &format!("{SHOPS}/corner/status"),
            &current,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let after = r.json();
    assert_eq!(after["status"], json!({"open": true}));
    assert_eq!(after["spec"]["size"], 3);
    assert_eq!(after["metadata"]["generation"], 1);

    // The second version: the same object, in its own apiVersion.
    let v1beta1 = raw
        .get("/apis/example.com/v1beta1/namespaces/default/shops/corner")
        .await
        .json();
    assert_eq!(v1beta1["apiVersion"], "example.com/v1beta1");
    assert_eq!(v1beta1["spec"]["size"], 3);
    assert_eq!(
        v1beta1["metadata"]["resourceVersion"],
        after["metadata"]["resourceVersion"]
    );

    // kubectl patch (merge) and label; a strategic merge patch is refused as upstream.
    ok(kubectl(
        &kc,
        &[
            "patch",
            "shop",
            "corner",
            "--type=merge",
            "-p",
            r#"{"spec":{"size":4}}"#,
        ],
    ));
    ok(kubectl(&kc, &["label", "shop", "corner", "tier=gold"]));
    let got = raw.get(&format!("{SHOPS}/corner")).await.json();
    assert_eq!(got["spec"]["size"], 4);
    assert_eq!(got["metadata"]["labels"]["tier"], "gold");
    assert_eq!(got["metadata"]["generation"], 2);
    let r = raw
        .request(
            http::Method::PATCH,
            &format!("{SHOPS}/corner"),
            &[("content-type", "application/strategic-merge-patch+json")],
            br#"{"spec":{"size":2}}"#.to_vec(),
        )
        .await;
    assert_eq!(r.status, 415, "{:?}", r.body);

    // Deleting the CRD deletes its objects, then the CRD, then the resource.
    ok(kubectl(
        &kc,
        &["delete", "crd", "shops.example.com", "--timeout=30s"],
    ));
    let mut gone = 0;
    for _ in 0..100 {
        gone = raw.get(SHOPS).await.status.as_u16();
        if gone == 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(gone, 404);
    let r = raw.get(&format!("{CRDS}/shops.example.com")).await;
    assert_eq!(r.status, 404);
    // Its objects went with it: a new CRD of the same names starts empty.
    ok(kubectl(&kc, &["apply", "-f", file.to_str().unwrap()]));
    wait_established(&kc, "shops.example.com");
    let list: Value = raw.get(SHOPS).await.json();
    assert_eq!(list["items"], json!([]), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_definitions_are_refused_with_upstream_causes() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com", "scope": "Cluster",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"properties": {"a": {"type": "string"}}}}
            }}}]
        }
    });
    let r = raw.send_json(http::Method::POST, CRDS, &crd).await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"things.example.com\" is invalid: spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
    );

    // A name that is not plural.group.
    let mut misnamed = crd.clone();
    misnamed["metadata"]["name"] = json!("thing.example.com");
    misnamed["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "object"});
    let r = raw.send_json(http::Method::POST, CRDS, &misnamed).await;
    assert_eq!(r.status, 422);
    assert_eq!(
        r.json()["details"]["causes"][0],
        json!({"reason": "FieldValueInvalid", "message": "Invalid value: \"thing.example.com\": must be spec.names.plural+\".\"+spec.group", "field": "metadata.name"})
    );

    // Names another CRD of the group holds: stored, but not accepted nor served.
    let mut first = misnamed.clone();
    first["metadata"]["name"] = json!("things.example.com");
    assert_eq!(
        raw.send_json(http::Method::POST, CRDS, &first).await.status,
        201
    );
    let mut second = first.clone();
    second["metadata"]["name"] = json!("items.example.com");
    second["spec"]["names"] = json!({"plural": "items", "kind": "Thing"});
    assert_eq!(
        raw.send_json(http::Method::POST, CRDS, &second)
            .await
            .status,
        201
    );
    let mut status = Value::Null;
    for _ in 0..100 {
        status = raw.get(&format!("{CRDS}/items.example.com")).await.json()["status"].clone();
        if status["conditions"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let condition = |t: &str| {
        status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == t)
            .cloned()
            .unwrap()
    };
    assert_eq!(condition("NamesAccepted")["status"], "False", "{status}");
    // The singular name, defaulted from the kind, is the first that clashes.
    assert_eq!(
        condition("NamesAccepted")["message"],
        "\"thing\" is already in use"
    );
    assert_eq!(condition("Established")["status"], "False");
    assert_eq!(raw.get("/apis/example.com/v1/items").await.status, 404);
    assert_eq!(raw.get("/apis/example.com/v1/things").await.status, 200);
}

/// A custom resource as operator authors declare it, with the kube crate's derive.
#[derive(
    kube::CustomResource,
    Clone,
    Debug,
    PartialEq,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Gadget",
    namespaced,
    status = "GadgetStatus",
    shortname = "gd"
)]
pub struct GadgetSpec {
    size: i32,
    #[serde(default)]
    owner: Option<String>,
}

/// The status of a Gadget.
#[derive(
    Clone, Debug, Default, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
pub struct GadgetStatus {
    ready: bool,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kube_crate_serves_a_derived_custom_resource() {
    use futures_util::StreamExt;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::CustomResourceExt;
    use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};

    let server = TestServer::start().await;
    let client = server.client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Gadget::crd())
        .await
        .unwrap();
    let established = kube::runtime::wait::await_condition(
        crds.clone(),
        "gadgets.example.com",
        kube::runtime::wait::conditions::is_crd_established(),
    );
    tokio::time::timeout(Duration::from_secs(10), established)
        .await
        .expect("established in time")
        .unwrap();

    let gadgets: Api<Gadget> = Api::namespaced(client.clone(), "default");
    let mut watch = gadgets
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    let created = gadgets
        .create(
            &PostParams::default(),
            &Gadget::new(
                "g1",
                GadgetSpec {
                    size: 2,
                    owner: None,
                },
            ),
        )
        .await
        .unwrap();
    assert_eq!(created.spec.size, 2);
    match watch.next().await.unwrap().unwrap() {
        WatchEvent::Added(g) => assert_eq!(g.metadata.name.as_deref(), Some("g1")),
        other => panic!("expected ADDED, got {other:?}"),
    }

    // The status subresource, through the typed client.
    let status = serde_json::json!({"status": {"ready": true}});
    let patched = gadgets
        .patch_status("g1", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    assert_eq!(patched.status, Some(GadgetStatus { ready: true }));

    // Server-side apply: two managers, a conflict on the field the first owns, forced away.
    let apply = |size: i32, owner: &str| {
        serde_json::json!({
            "apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g2"},
            "spec": {"size": size, "owner": owner}
        })
    };
    let first = PatchParams::apply("alice");
    gadgets
        .patch("g2", &first, &Patch::Apply(apply(1, "alice")))
        .await
        .unwrap();
    let err = gadgets
        .patch(
            "g2",
            &PatchParams::apply("bob"),
            &Patch::Apply(apply(5, "alice")),
        )
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409);
            assert!(
                status.message.contains("conflict with \"alice\"")
                    && status.message.contains(".spec.size"),
                "{}",
                status.message
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let forced = gadgets
        .patch(
            "g2",
            &PatchParams::apply("bob").force(),
            &Patch::Apply(apply(5, "alice")),
        )
        .await
        .unwrap();
    assert_eq!(forced.spec.size, 5);
    let managers: Vec<String> = forced
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert_eq!(managers, ["alice", "bob"]);

    let list = gadgets.list(&Default::default()).await.unwrap();
    let names: Vec<String> = list
        .items
        .iter()
        .filter_map(|g| g.metadata.name.clone())
        .collect();
    assert_eq!(names, ["g1", "g2"]);
}

const FLEET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: fleets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: fleets, kind: Fleet}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Region, type: string, jsonPath: .spec.region, priority: 1}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              region: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn printer_columns_and_the_scale_subresource() {
    let (server, _dir, file) = with_crd(FLEET_CRD, "fleets.example.com").await;
    let kc = server.kubeconfig_path();
    let raw = admin(&server);
    const FLEETS: &str = "/apis/example.com/v1/namespaces/default/fleets";
    let fleet = json!({"apiVersion": "example.com/v1", "kind": "Fleet", "metadata": {"name": "blue"},
                       "spec": {"replicas": 2, "region": "north"}});
    assert_eq!(
        raw.send_json(http::Method::POST, FLEETS, &fleet)
            .await
            .status,
        201
    );
    let status = json!({"status": {"replicas": 1, "selector": "app=blue",
                        "conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}});
    let r = raw
        .request(
            http::Method::PATCH,
            &format!("{FLEETS}/blue/status"),
            &[("content-type", "application/merge-patch+json")],
            serde_json::to_vec(&status).unwrap(),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);

    let table = ok(kubectl(&kc, &["get", "fleets"]));
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "REPLICAS", "READY"], "{table}");
    assert_eq!(rows[1], ["blue", "2", "True"], "{table}");
    let wide = ok(kubectl(&kc, &["get", "fleets", "-o", "wide"]));
    assert!(wide.lines().next().unwrap().ends_with("REGION"), "{wide}");
    assert!(wide.lines().nth(1).unwrap().ends_with("north"), "{wide}");

    // The scale subresource, as kubectl scale and the HPA use it.
    let scale = raw.get(&format!("{FLEETS}/blue/scale")).await.json();
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 2);
    assert_eq!(
        scale["status"],
        json!({"replicas": 1, "selector": "app=blue"})
    );
    ok(kubectl(&kc, &["scale", "fleet", "blue", "--replicas=5"]));
    let after = raw.get(&format!("{FLEETS}/blue")).await.json();
    assert_eq!(after["spec"]["replicas"], 5);
    assert_eq!(after["metadata"]["generation"], 2);

    // A deleted namespace takes its custom objects with it.
    ok(kubectl(&kc, &["create", "namespace", "harbour"]));
    let r = raw
        .send_json(
            http::Method::POST,
            "/apis/example.com/v1/namespaces/harbour/fleets",
            &json!({"apiVersion": "example.com/v1", "kind": "Fleet", "metadata": {"name": "red"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    ok(kubectl(
        &kc,
        &["delete", "namespace", "harbour", "--timeout=30s"],
    ));
    let left = raw.get("/apis/example.com/v1/fleets").await.json();
    let names: Vec<&str> = left["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["blue"]);

    // A printer column path that does not parse is refused with the CRD.
    let bad = FLEET_CRD
        .replace("fleets", "navies")
        .replace("Fleet", "Navy")
        .replace("jsonPath: .spec.region", "jsonPath: spec.region");
    std::fs::write(&file, bad).unwrap();
    let (success, _, err) = kubectl(&kc, &["apply", "-f", file.to_str().unwrap()]);
    assert!(!success);
    assert!(
        err.contains("spec.versions[0].additionalPrinterColumns[2].jsonPath: Invalid value: \"spec.region\": must be a simple json path starting with ."),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cel_rules_judge_writes_and_transitions() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let crd = |rule: &str| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ranges.example.com"},
            "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"plural": "ranges", "kind": "Range"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object",
                        "x-kubernetes-validations": [
                            {"rule": rule, "message": "min must not exceed max"},
                            {"rule": "self.size >= oldSelf.size", "messageExpression": "'size cannot shrink below ' + string(oldSelf.size)"}
                        ],
                        "properties": {
                            "min": {"type": "integer"}, "max": {"type": "integer"}, "size": {"type": "integer"},
                            "name": {"type": "string", "x-kubernetes-validations": [
                                {"rule": "self == oldSelf", "message": "name is immutable", "reason": "FieldValueForbidden"}
                            ]}
                        }
                    }}
                }}}]
            }
        })
    };
    // A rule that does not compile is refused with the CRD.
    let r = raw
        .send_json(http::Method::POST, CRDS, &crd("self.min <="))
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    let cause = &r.json()["details"]["causes"][0];
    assert_eq!(
        cause["field"],
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    );
    assert!(
        cause["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid value: \"self.min <=\": compilation failed: "),
        "{cause}"
    );

    let r = raw
        .send_json(http::Method::POST, CRDS, &crd("self.min <= self.max"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let kc = server.kubeconfig_path();
    wait_established(&kc, "ranges.example.com");
    const RANGES: &str = "/apis/example.com/v1/namespaces/default/ranges";
    let range = |min: i64, max: i64, size: i64, name: &str| {
        json!({"apiVersion": "example.com/v1", "kind": "Range", "metadata": {"name": "r"},
               "spec": {"min": min, "max": max, "size": size, "name": name}})
    };
    let r = raw
        .send_json(http::Method::POST, RANGES, &range(5, 1, 3, "a"))
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "Range.example.com \"r\" is invalid: spec: Invalid value: \"object\": min must not exceed max"
    );
    // Transition rules judge updates only.
    let r = raw
        .send_json(http::Method::POST, RANGES, &range(1, 5, 3, "a"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = raw
        .send_json(
            http::Method::PUT,
            &format!("{RANGES}/r"),
            &range(1, 5, 2, "b"),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "Range.example.com \"r\" is invalid: [spec: Invalid value: \"object\": size cannot shrink below 3, spec.name: Forbidden: name is immutable]"
    );
    let r = raw
        .send_json(
            http::Method::PUT,
            &format!("{RANGES}/r"),
            &range(1, 5, 4, "a"),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}
