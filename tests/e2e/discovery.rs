//! Discovery, version and OpenAPI documents, as clients read them.

use capstan_testing::TestServer;
use http::Method;

use crate::admin;

#[tokio::test]
async fn discovery_documents() {
    let server = TestServer::start().await;
    let c = admin(&server);
    let groups = c.get("/apis").await.json();
    assert_eq!(groups["kind"], "APIGroupList");
    let storage = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "storage.k8s.io")
        .expect("storage.k8s.io");
    assert_eq!(
        storage["preferredVersion"]["groupVersion"],
        "storage.k8s.io/v1"
    );
    let resources = c.get("/apis/storage.k8s.io/v1").await.json();
    assert_eq!(resources["kind"], "APIResourceList");
    let sc = &resources["resources"][0];
    assert_eq!(
        (
            sc["name"].as_str(),
            sc["singularName"].as_str(),
            sc["kind"].as_str()
        ),
        (
            Some("storageclasses"),
            Some("storageclass"),
            Some("StorageClass")
        )
    );
    assert_eq!(sc["namespaced"], false);
    assert_eq!(sc["shortNames"], serde_json::json!(["sc"]));
    assert!(
        sc["verbs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "deletecollection")
    );
    assert_eq!(
        c.get("/apis/storage.k8s.io").await.json()["kind"],
        "APIGroup"
    );
    assert_eq!(c.get("/version").await.json()["major"], "1");
    assert_eq!(
        c.request(Method::POST, "/version", &[], Vec::new())
            .await
            .status,
        405
    );
}

#[tokio::test]
async fn openapi_documents() {
    let server = TestServer::start().await;
    let c = admin(&server);
    let index = c.get("/openapi/v3").await.json();
    let url = index["paths"]["apis/storage.k8s.io/v1"]["serverRelativeURL"]
        .as_str()
        .expect("a group-version document")
        .to_string();
    let doc = c.get(&url).await.json();
    let schema = &doc["components"]["schemas"]["io.k8s.api.storage.v1.StorageClass"];
    assert_eq!(
        schema["x-kubernetes-group-version-kind"][0]["kind"],
        "StorageClass"
    );
    assert!(schema["properties"]["provisioner"]["description"].is_string());
    let patch = &doc["paths"]["/apis/storage.k8s.io/v1/storageclasses/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["kind"],
        "StorageClass"
    );
    assert!(
        patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
    );

    let v2 = c.get("/openapi/v2").await.json();
    assert_eq!(v2["swagger"], "2.0");
    assert!(v2["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].is_object());
    let pb = c
        .request(
            Method::GET,
            "/openapi/v2",
            &[(
                "accept",
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            )],
            Vec::new(),
        )
        .await;
    assert_eq!(pb.status, 200);
    assert_eq!(
        pb.headers["content-type"],
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    );
    // Field 1 (swagger) = "2.0".
    assert_eq!(&pb.body[..5], &[0x0a, 3, b'2', b'.', b'0']);
    let needle = b"io.k8s.api.storage.v1.StorageClass";
    assert!(pb.body.windows(needle.len()).any(|w| w == needle));
}

/// kubectl's OpenAPI v2 reader (`kubectl explain --output=plaintext-openapiv2`, the only one
/// before kubectl 1.27) follows a field's reference to the type it names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explains_nested_fields_from_openapi_v2() {
    let server = TestServer::start().await;
    let kubeconfig = server.kubeconfig_path();
    let (success, text, errors) = capstan_e2e::kubectl(
        &kubeconfig,
        &["explain", "pods.spec.os", "--output=plaintext-openapiv2"],
    );
    assert!(success, "{text}{errors}");
    assert!(text.contains("RESOURCE: os"), "{text}");
    assert!(
        text.contains("FIELDS:") && text.contains("name\t<string> -required-"),
        "{text}"
    );
}
