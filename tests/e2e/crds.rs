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

/// A merge patch of `path` with `body`.
async fn merge_patch(
    raw: &capstan_e2e::RawClient,
    path: &str,
    body: &str,
) -> capstan_e2e::RawResponse {
    raw.request(
        http::Method::PATCH,
        path,
        &[("content-type", "application/merge-patch+json")],
        body.as_bytes().to_vec(),
    )
    .await
}

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

/// The `hash` the OpenAPI v3 index gives each document.
async fn openapi_hashes(
    raw: &capstan_e2e::RawClient,
) -> std::collections::BTreeMap<String, String> {
    let index = raw.get("/openapi/v3").await.json();
    index["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .map(|(key, entry)| {
            let url = entry["serverRelativeURL"].as_str().unwrap_or_default();
            let hash = url.split_once("?hash=").map(|(_, h)| h.to_string());
            (key.clone(), hash.unwrap_or_default())
        })
        .collect()
}

/// A CRD's new schema gives its group version's OpenAPI document a new hash in the index
/// (clients such as kubectl cache documents by it) and the new schema; the other
/// documents keep theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_crd_schema_changes_its_openapi_hash_only() {
    let (server, _dir, _file) = with_crd(SHOP_CRD, "shops.example.com").await;
    let raw = admin(&server);
    let before = openapi_hashes(&raw).await;
    assert!(before.contains_key("apis/example.com/v1"), "{before:?}");
    let doc = raw.get("/openapi/v3/apis/example.com/v1").await.json();
    let spec = &doc["components"]["schemas"]["com.example.v1.Shop"]["properties"]["spec"];
    assert!(spec["properties"]["size"].is_object(), "{doc}");
    assert!(spec["properties"]["owner"].is_null());

    let patch = r#"{"spec": {"versions": [
        {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
         "schema": {"openAPIV3Schema": {"type": "object", "properties": {
           "spec": {"type": "object", "properties": {
             "size": {"type": "integer"}, "owner": {"type": "string"}}}}}}},
        {"name": "v1beta1", "served": true, "storage": false,
         "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
    ]}}"#;
    let r = merge_patch(&raw, &format!("{CRDS}/shops.example.com"), patch).await;
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let after = loop {
        let after = openapi_hashes(&raw).await;
        if after.get("apis/example.com/v1") != before.get("apis/example.com/v1") {
            break after;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the hash did not change: {after:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let changed: Vec<&String> = before
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert_eq!(changed, ["apis/example.com/v1"]);
    let url = format!(
        "/openapi/v3/apis/example.com/v1?hash={}",
        after["apis/example.com/v1"]
    );
    let doc = raw.get(&url).await.json();
    let spec = &doc["components"]["schemas"]["com.example.v1.Shop"]["properties"]["spec"];
    assert_eq!(spec["properties"]["owner"]["type"], "string", "{doc}");
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

    // Deleting the CRD deletes its objects, then the CRD, then the resource. While an
    // object's finalizer holds the CRD back, creates are refused as upstream refuses them.
    ok(kubectl(
        &kc,
        &[
            "patch",
            "shop",
            "corner",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
        ],
    ));
    ok(kubectl(
        &kc,
        &["delete", "crd", "shops.example.com", "--wait=false"],
    ));
    let late = json!({"apiVersion": "example.com/v1", "kind": "Shop",
                      "metadata": {"name": "late"}, "spec": {"size": 1}});
    let mut refused = raw.send_json(http::Method::POST, SHOPS, &late).await;
    for _ in 0..100 {
        if refused.status == 405 {
            break;
        }
        if refused.status == 201 {
            raw.request(http::Method::DELETE, &format!("{SHOPS}/late"), &[], vec![])
                .await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        refused = raw.send_json(http::Method::POST, SHOPS, &late).await;
    }
    assert_eq!(refused.status, 405, "{:?}", refused.body);
    let status = refused.json();
    assert_eq!(status["reason"], "MethodNotAllowed");
    assert_eq!(
        status["message"],
        "create not allowed while custom resource definition is terminating"
    );
    assert_eq!(
        status["details"],
        json!({"group": "example.com", "kind": "shops"})
    );
    let crd = raw.get(&format!("{CRDS}/shops.example.com")).await.json();
    let terminating = crd["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Terminating")
        .cloned()
        .unwrap_or_default();
    assert_eq!(terminating["status"], "True", "{crd}");
    assert_eq!(terminating["reason"], "InstanceDeletionInProgress");
    // Reads and updates go on: the finalizer is taken off, and the CRD goes.
    ok(kubectl(
        &kc,
        &[
            "patch",
            "shop",
            "corner",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
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
    let r = merge_patch(&raw, &format!("{FLEETS}/blue/status"), &status.to_string()).await;
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
                                {"rule": "self == oldSelf", "message": "name is immutable", "reason": "FieldValueForbidden"},
                                {"rule": "!isIP(self) && self.lowerAscii() == self", "message": "names are lower case, not addresses"}
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
    // Kubernetes' CEL libraries are there (here `isIP`, and the strings extension's
    // `lowerAscii`).
    let mut addressed = range(1, 5, 3, "10.0.0.1");
    addressed["metadata"]["name"] = json!("addressed");
    let r = raw.send_json(http::Method::POST, RANGES, &addressed).await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "Range.example.com \"addressed\" is invalid: spec.name: Invalid value: \"string\": names are lower case, not addresses"
    );
}

/// What the test's conversion webhook saw, and how it answers.
#[derive(Default)]
struct Conversions {
    /// Reviews received.
    calls: std::sync::atomic::AtomicUsize,
    /// The most objects one review carried.
    most_objects: std::sync::atomic::AtomicUsize,
    /// How to answer: 0 converts, 1 refuses, 2 renames the objects.
    mode: std::sync::atomic::AtomicUsize,
    /// The last review and the path it came to.
    last: std::sync::Mutex<(String, Value)>,
}

/// A Listener's `spec` in `v1` is `address: host:port`; in `v2` it is `host` and `port`.
fn convert_listener(object: &Value, desired: &str) -> Value {
    let mut out = object.clone();
    out["apiVersion"] = json!(desired);
    let spec = &object["spec"];
    out["spec"] = if desired.ends_with("/v2") {
        let (host, port) = spec["address"]
            .as_str()
            .unwrap_or_default()
            .split_once(':')
            .unwrap_or_default();
        json!({"host": host, "port": port.parse::<i64>().unwrap_or_default()})
    } else {
        json!({"address": format!("{}:{}", spec["host"].as_str().unwrap_or_default(), spec["port"])})
    };
    // The server keeps its own metadata whatever a webhook answers but labels.
    out["metadata"]["resourceVersion"] = json!("999999");
    out["metadata"]["labels"] = json!({"converted-to": desired.rsplit('/').next().unwrap()});
    out
}

fn answer_conversion(state: &Conversions, r: capstan_e2e::Received) -> (http::StatusCode, Value) {
    use std::sync::atomic::Ordering;
    let review: Value = serde_json::from_slice(&r.body).unwrap_or_default();
    let request = &review["request"];
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    state.calls.fetch_add(1, Ordering::SeqCst);
    state
        .most_objects
        .fetch_max(objects.len(), Ordering::SeqCst);
    *state.last.lock().unwrap() = (r.path.clone(), review.clone());
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let response = match state.mode.load(Ordering::SeqCst) {
        0 => json!({
            "uid": request["uid"], "result": {"status": "Success"},
            "convertedObjects": objects.iter().map(|o| convert_listener(o, desired)).collect::<Vec<_>>()
        }),
        1 => json!({
            "uid": request["uid"],
            "result": {"status": "Failure", "message": "v2 is closed today"}
        }),
        _ => json!({
            "uid": request["uid"], "result": {"status": "Success"},
            "convertedObjects": objects.iter().map(|o| {
                let mut o = convert_listener(o, desired);
                o["metadata"]["name"] = json!("someone-else");
                o
            }).collect::<Vec<_>>()
        }),
    };
    (
        http::StatusCode::OK,
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversion_webhook_served_by_the_test_converts_between_versions() {
    use base64::Engine;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    let state = Arc::new(Conversions::default());
    let hook_state = state.clone();
    // Its certificate also names the Service the last part of the test reaches it through.
    let webhook = capstan_e2e::HttpsServer::start_at(
        "127.0.0.1".parse().unwrap(),
        &["converter.default.svc"],
        move |r| {
            let answer = answer_conversion(&hook_state, r);
            Box::pin(async move { answer })
        },
    )
    .await;
    let schema = |props: Value| json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}});
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "listeners.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "listeners", "kind": "Listener"},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": schema(json!({"address": {"type": "string"}}))},
                {"name": "v2", "served": true, "storage": false,
                 "schema": schema(json!({"host": {"type": "string"}, "port": {"type": "integer"}}))}
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": format!("{}/convert", webhook.url),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(&webhook.ca_pem)
                }
            }}
        }
    });
    let (server, _dir, _file) = with_crd(&crd.to_string(), "listeners.example.com").await;
    let kc = server.kubeconfig_path();
    let raw = admin(&server);
    let v1 = "/apis/example.com/v1/namespaces/default/listeners";
    let v2 = "/apis/example.com/v2/namespaces/default/listeners";

    // Written in v2: converted to the storage version by the webhook, and back.
    let web = json!({"apiVersion": "example.com/v2", "kind": "Listener",
                     "metadata": {"name": "web"}, "spec": {"host": "example.org", "port": 8080}});
    let r = raw.send_json(http::Method::POST, v2, &web).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let created = r.json();
    assert_eq!(created["apiVersion"], "example.com/v2");
    assert_eq!(
        created["spec"],
        json!({"host": "example.org", "port": 8080})
    );
    let (path, review) = state.last.lock().unwrap().clone();
    assert_eq!(path, "/convert?timeout=30s");
    assert_eq!(review["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(review["kind"], "ConversionReview");
    assert!(
        review["request"]["uid"]
            .as_str()
            .is_some_and(|u| !u.is_empty())
    );

    // Stored in v1, with the server's resourceVersion (not the webhook's) and the labels
    // the webhook set.
    let stored = raw.get(&format!("{v1}/web")).await.json();
    assert_eq!(stored["spec"], json!({"address": "example.org:8080"}));
    assert_eq!(stored["metadata"]["labels"], json!({"converted-to": "v1"}));
    assert_ne!(stored["metadata"]["resourceVersion"], "999999");
    assert_eq!(
        created["metadata"]["resourceVersion"],
        stored["metadata"]["resourceVersion"]
    );

    // A v1 object read in v2 (kubectl prefers v2); a list converts its items in one review.
    let api = json!({"apiVersion": "example.com/v1", "kind": "Listener",
                     "metadata": {"name": "api"}, "spec": {"address": "api.example.org:443"}});
    assert_eq!(
        raw.send_json(http::Method::POST, v1, &api).await.status,
        201
    );
    let port = ok(kubectl(
        &kc,
        &["get", "listeners", "api", "-o", "jsonpath={.spec.port}"],
    ));
    assert_eq!(port, "443");
    state.most_objects.store(0, Ordering::SeqCst);
    let list = raw.get(v2).await.json();
    assert_eq!(list["apiVersion"], "example.com/v2");
    let hosts: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["spec"]["host"])
        .collect();
    assert_eq!(hosts, [&json!("api.example.org"), &json!("example.org")]);
    assert_eq!(state.most_objects.load(Ordering::SeqCst), 2);
    let before = state.calls.load(Ordering::SeqCst);
    assert_eq!(
        raw.get(v1).await.json()["items"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        state.calls.load(Ordering::SeqCst),
        before,
        "v1 reads need no conversion"
    );

    // Watch events in v2.
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let patch = json!({"spec": {"address": "api.example.org:8443"}});
    let r = merge_patch(&raw, &format!("{v1}/api"), &patch.to_string()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let events = raw
        .get(&format!(
            "{v2}?watch=1&resourceVersion={rv}&timeoutSeconds=1"
        ))
        .await
        .json_lines();
    assert_eq!(events[0]["type"], "MODIFIED");
    assert_eq!(events[0]["object"]["apiVersion"], "example.com/v2");
    assert_eq!(
        events[0]["object"]["spec"],
        json!({"host": "api.example.org", "port": 8443})
    );

    // A webhook that refuses: upstream's Status, code 500 without a reason; v1 still served.
    state.mode.store(1, Ordering::SeqCst);
    let r = raw.get(&format!("{v2}/web")).await;
    assert_eq!(r.status, 500);
    let status = r.json();
    assert_eq!(
        status["message"],
        "conversion webhook for example.com/v1, Kind=Listener failed: v2 is closed today"
    );
    assert!(status.get("reason").is_none_or(|r| r == ""), "{status}");
    let (success, _, err) = kubectl(&kc, &["get", "listeners.v2.example.com", "web"]);
    assert!(!success);
    assert!(
        err.contains("Error from server: conversion webhook for example.com/v1, Kind=Listener failed: v2 is closed today"),
        "{err}"
    );
    let r = raw.send_json(http::Method::POST, v2, &json!({"apiVersion": "example.com/v2", "kind": "Listener", "metadata": {"name": "refused"}, "spec": {"host": "a", "port": 1}})).await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    assert_eq!(
        raw.get(&format!("{v1}/refused")).await.status,
        404,
        "nothing stored"
    );
    assert_eq!(raw.get(&format!("{v1}/web")).await.status, 200);

    // A webhook that renames the object is not believed.
    state.mode.store(2, Ordering::SeqCst);
    let r = raw.get(&format!("{v2}/web")).await;
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json()["message"],
        "conversion webhook for example.com/v1, Kind=Listener returned invalid object: must have the same name: web != someone-else"
    );

    // The webhook named by a Service reference: resolved from the Services at each new
    // connection (an ExternalName naming this machine here), the Service's name in the URL.
    state.mode.store(0, Ordering::SeqCst);
    let port = webhook.url.rsplit(':').next().unwrap();
    let by_service = json!({"spec": {"conversion": {"webhook": {"clientConfig": {"url": null,
        "service": {"namespace": "default", "name": "converter", "port": port.parse::<u16>().unwrap(), "path": "/convert"}}}}}});
    let crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/listeners.example.com";
    let r = merge_patch(&raw, crd_path, &by_service.to_string()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let missing = loop {
        let r = raw.get(&format!("{v2}/web")).await;
        let message = r.json()["message"].as_str().unwrap_or_default().to_string();
        if message.contains("service \"converter\" not found")
            || std::time::Instant::now() > deadline
        {
            break message;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    assert!(
        missing.contains(&format!(
            "https://converter.default.svc:{port}/convert?timeout=30s"
        )),
        "{missing}"
    );
    let service = json!({"metadata": {"name": "converter"},
        "spec": {"type": "ExternalName", "externalName": "localhost"}});
    let r = raw
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/services",
            &service,
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = raw.get(&format!("{v2}/web")).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.json()["spec"],
        json!({"host": "example.org", "port": 8080})
    );
}

/// Polls `path` until it answers 404; false when it is still there after ten seconds.
async fn gone_in_time(raw: &capstan_e2e::RawClient, path: &str) -> bool {
    for _ in 0..200 {
        if raw.get(path).await.status == 404 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_garbage_collector_follows_custom_owners_and_dependents() {
    let (server, _dir, _file) = with_crd(SHOP_CRD, "shops.example.com").await;
    let raw = admin(&server);
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let shop = |name: &str, owners: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Shop",
               "metadata": {"name": name, "ownerReferences": owners}, "spec": {"size": 1}})
    };
    let created = |r: capstan_e2e::RawResponse| {
        assert_eq!(r.status, 201, "{:?}", r.body);
        r.json()
    };
    let reference = |owner: &Value, block: bool| {
        json!([{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                "blockOwnerDeletion": block}])
    };

    // A custom owner (as an operator's ConfigMap is owned by its custom object).
    let owner = created(
        raw.send_json(http::Method::POST, SHOPS, &shop("owner", json!(null)))
            .await,
    );
    let cm = json!({"metadata": {"name": "owned", "ownerReferences": reference(&owner, false)}});
    created(raw.send_json(http::Method::POST, configmaps, &cm).await);
    let r = raw
        .request(http::Method::DELETE, &format!("{SHOPS}/owner"), &[], vec![])
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(
        gone_in_time(&raw, &format!("{configmaps}/owned")).await,
        "the ConfigMap outlived its custom owner"
    );

    // A custom dependent of a built-in owner.
    let parent = created(
        raw.send_json(
            http::Method::POST,
            configmaps,
            &json!({"metadata": {"name": "parent"}}),
        )
        .await,
    );
    created(
        raw.send_json(
            http::Method::POST,
            SHOPS,
            &shop("child", reference(&parent, true)),
        )
        .await,
    );
    let r = raw
        .request(
            http::Method::DELETE,
            &format!("{configmaps}/parent"),
            &[],
            vec![],
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(
        gone_in_time(&raw, &format!("{SHOPS}/child")).await,
        "the custom object outlived its owner"
    );

    // Foreground deletion of a custom owner waits for its blocking dependents.
    let owner = created(
        raw.send_json(http::Method::POST, SHOPS, &shop("fore", json!(null)))
            .await,
    );
    let cm = json!({"metadata": {"name": "blocking", "finalizers": ["example.com/hold"],
                                 "ownerReferences": reference(&owner, true)}});
    created(raw.send_json(http::Method::POST, configmaps, &cm).await);
    let r = raw
        .send_json(
            http::Method::DELETE,
            &format!("{SHOPS}/fore"),
            &json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let mut dependent = Value::Null;
    for _ in 0..200 {
        dependent = raw.get(&format!("{configmaps}/blocking")).await.json();
        if !dependent["metadata"]["deletionTimestamp"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !dependent["metadata"]["deletionTimestamp"].is_null(),
        "{dependent}"
    );
    let waiting = raw.get(&format!("{SHOPS}/fore")).await.json();
    assert_eq!(
        waiting["metadata"]["finalizers"],
        json!(["foregroundDeletion"]),
        "{waiting}"
    );
    let r = merge_patch(
        &raw,
        &format!("{configmaps}/blocking"),
        r#"{"metadata":{"finalizers":null}}"#,
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(
        gone_in_time(&raw, &format!("{SHOPS}/fore")).await,
        "the foreground owner stayed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_quotas_count_custom_objects() {
    let (server, _dir, _file) = with_crd(SHOP_CRD, "shops.example.com").await;
    let raw = admin(&server);
    let quotas = "/api/v1/namespaces/default/resourcequotas";
    let quota = json!({"metadata": {"name": "shops"},
                       "spec": {"hard": {"count/shops.example.com": "1"}}});
    let r = raw.send_json(http::Method::POST, quotas, &quota).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let used = || async {
        raw.get(&format!("{quotas}/shops")).await.json()["status"]["used"]["count/shops.example.com"]
            .clone()
    };
    let until_used = |want: &'static str| async move {
        for _ in 0..300 {
            if used().await == want {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    };
    assert!(until_used("0").await, "the quota was never counted");
    let shop = |name: &str| {
        json!({"apiVersion": "example.com/v1", "kind": "Shop",
               "metadata": {"name": name}, "spec": {"size": 1}})
    };
    let r = raw
        .send_json(http::Method::POST, SHOPS, &shop("first"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = raw
        .send_json(http::Method::POST, SHOPS, &shop("second"))
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "shops.example.com \"second\" is forbidden: exceeded quota: shops, requested: count/shops.example.com=1, used: count/shops.example.com=1, limited: count/shops.example.com=1"
    );
    // The controller's recounts find the custom object (they used to count none of them):
    // a change of the quota's spec makes it recount.
    let r = merge_patch(
        &raw,
        &format!("{quotas}/shops"),
        r#"{"spec":{"hard":{"count/configmaps":"100"}}}"#,
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let mut status = Value::Null;
    for _ in 0..100 {
        status = raw.get(&format!("{quotas}/shops")).await.json()["status"].clone();
        if !status["used"]["count/configmaps"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status["used"]["count/shops.example.com"], "1", "{status}");
    // A deletion releases its charge by the next recount.
    let r = raw
        .request(http::Method::DELETE, &format!("{SHOPS}/first"), &[], vec![])
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(until_used("0").await, "the deletion was never released");
    let r = raw
        .send_json(http::Method::POST, SHOPS, &shop("second"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_added_to_a_schema_apply_to_stored_objects_as_they_are_read() {
    let (server, dir, file) = with_crd(SHOP_CRD, "shops.example.com").await;
    let kc = server.kubeconfig_path();
    let raw = admin(&server);
    let shop = json!({"apiVersion": "example.com/v1", "kind": "Shop",
                      "metadata": {"name": "old"}, "spec": {"size": 2}});
    let r = raw.send_json(http::Method::POST, SHOPS, &shop).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert!(r.json()["spec"].get("opens").is_none());

    // The schema gains a defaulted field: the stored object is not rewritten, but every read
    // shows the default (get, list, watch), as upstream defaults what it reads from storage.
    let yaml = SHOP_CRD.replace(
        "              labels:\n",
        "              opens: {type: string, default: \"09:00\"}\n              labels:\n",
    );
    assert_ne!(yaml, SHOP_CRD);
    std::fs::write(&file, &yaml).unwrap();
    ok(kubectl(&kc, &["apply", "-f", file.to_str().unwrap()]));
    let mut got = Value::Null;
    for _ in 0..100 {
        got = raw.get(&format!("{SHOPS}/old")).await.json();
        if got["spec"]["opens"] == "09:00" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        got["spec"],
        json!({"size": 2, "color": "red", "opens": "09:00"}),
        "{got}"
    );
    let list = raw.get(SHOPS).await.json();
    assert_eq!(list["items"][0]["spec"]["opens"], "09:00", "{list}");
    let rv = got["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let events = raw
        .get(&format!(
            "{SHOPS}?watch=1&resourceVersion=0&timeoutSeconds=1"
        ))
        .await
        .json_lines();
    assert_eq!(events[0]["object"]["spec"]["opens"], "09:00", "{events:?}");
    assert_eq!(
        events[0]["object"]["metadata"]["resourceVersion"],
        rv.as_str(),
        "not rewritten"
    );
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_version_judges_the_writes_made_in_it() {
    // v1 (stored) allows sizes up to 10; v2 up to 5, and a rule of its own.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "boxes.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "boxes", "kind": "Box"},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "maximum": 10}}},
                        "status": {"type": "object", "properties": {"count": {"type": "integer", "maximum": 10}}}}}},
                 "subresources": {"status": {}}},
                {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "self.size != 3", "message": "three is unlucky"}],
                        "properties": {"size": {"type": "integer", "maximum": 5}}},
                        "status": {"type": "object", "properties": {"count": {"type": "integer", "maximum": 5}}}}}},
                 "subresources": {"status": {}}}
            ]
        }
    });
    let (server, _dir, _file) = with_crd(&crd.to_string(), "boxes.example.com").await;
    let raw = admin(&server);
    let v1 = "/apis/example.com/v1/namespaces/default/boxes";
    let v2 = "/apis/example.com/v2/namespaces/default/boxes";
    let object = |version: &str, name: &str, spec: Value| {
        json!({"apiVersion": format!("example.com/{version}"), "kind": "Box",
               "metadata": {"name": name}, "spec": spec})
    };
    let causes = |r: &capstan_e2e::RawResponse| -> Vec<String> {
        r.json()["details"]["causes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{}: {}",
                    c["field"].as_str().unwrap_or(""),
                    c["message"].as_str().unwrap_or("")
                )
            })
            .collect()
    };

    // v2's bound and rule judge v2 writes; v1's bound judges v1 writes.
    let r = raw
        .send_json(
            http::Method::POST,
            v2,
            &object("v2", "seven", json!({"size": 7})),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        causes(&r),
        ["spec.size: Invalid value: 7: spec.size in body should be less than or equal to 5"]
    );
    let r = raw
        .send_json(
            http::Method::POST,
            v2,
            &object("v2", "three", json!({"size": 3})),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "Box.example.com \"three\" is invalid: spec: Invalid value: \"object\": three is unlucky"
    );
    let r = raw
        .send_json(
            http::Method::POST,
            v1,
            &object("v1", "seven", json!({"size": 7})),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = raw
        .send_json(
            http::Method::POST,
            v1,
            &object("v1", "three", json!({"size": 3})),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    // An unknown field is reported once, in the version it was written in.
    let r = raw
        .send_json(
            http::Method::POST,
            v2,
            &object("v2", "four", json!({"size": 4, "extra": true})),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let warnings: Vec<&str> = r
        .headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(warnings, ["299 - \"unknown field \\\"spec.extra\\\"\""]);

    // Updates in v2 are judged by v2 too, against the object read in v2.
    let mut seven = raw.get(&format!("{v2}/seven")).await.json();
    seven["spec"]["size"] = json!(6);
    let r = raw
        .send_json(http::Method::PUT, &format!("{v2}/seven"), &seven)
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    seven["spec"]["size"] = json!(2);
    let r = raw
        .send_json(http::Method::PUT, &format!("{v2}/seven"), &seven)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = merge_patch(
        &raw,
        &format!("{v2}/seven"),
        &json!({"spec": {"size": 3}}).to_string(),
    )
    .await;
    assert_eq!(r.status, 422, "{:?}", r.body);

    // Status writes in v2 are judged by v2's status schema; the spec is left as stored.
    let status = json!({"status": {"count": 7}}).to_string();
    let r = merge_patch(&raw, &format!("{v2}/seven/status"), &status).await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    assert_eq!(
        causes(&r),
        ["status.count: Invalid value: 7: status.count in body should be less than or equal to 5"]
    );
    let r = merge_patch(&raw, &format!("{v1}/seven/status"), &status).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let four = json!({"status": {"count": 4}}).to_string();
    let r = merge_patch(&raw, &format!("{v2}/seven/status"), &four).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.json()["status"]["count"], 4);
}
