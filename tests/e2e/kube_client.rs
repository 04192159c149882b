//! The kube crate as a typed client.

use std::collections::BTreeMap;

use capstan_testing::TestServer;
use k8s_openapi::api::core::v1::{TopologySelectorLabelRequirement, TopologySelectorTerm};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference,
};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};

fn storage_class(name: &str) -> StorageClass {
    StorageClass {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        provisioner: "example.com/fast".into(),
        ..Default::default()
    }
}

fn api_status(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(status) => (status.code, status.reason),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn typed_crud_round_trips_every_field() {
    let server = TestServer::start().await;
    let api: Api<StorageClass> = Api::all(server.client().await);
    let mut sc = storage_class("full");
    sc.metadata.labels = Some(BTreeMap::from([("tier".into(), "gold".into())]));
    sc.metadata.annotations = Some(BTreeMap::from([("example.com/note".into(), "kept".into())]));
    sc.metadata.finalizers = Some(vec!["example.com/keep".into()]);
    // An owner of a kind Capstan does not serve: the garbage collector leaves it be (an
    // absent ConfigMap owner would get the object collected).
    sc.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "example.com/v1".into(),
        kind: "Owner".into(),
        name: "owner".into(),
        uid: "8f2c0e9e-0000-4000-8000-000000000001".into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    sc.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some("tester".into()),
        operation: Some("Update".into()),
        api_version: Some("storage.k8s.io/v1".into()),
        fields_type: Some("FieldsV1".into()),
        ..Default::default()
    }]);
    sc.parameters = Some(BTreeMap::from([("type".into(), "ssd".into())]));
    sc.reclaim_policy = Some("Retain".into());
    sc.volume_binding_mode = Some("WaitForFirstConsumer".into());
    sc.allow_volume_expansion = Some(true);
    sc.mount_options = Some(vec!["ro".into(), "soft".into()]);
    sc.allowed_topologies = Some(vec![TopologySelectorTerm {
        match_label_expressions: Some(vec![TopologySelectorLabelRequirement {
            key: "topology.kubernetes.io/zone".into(),
            values: vec!["a".into(), "b".into()],
        }]),
    }]);

    let created = api.create(&PostParams::default(), &sc).await.unwrap();
    let uid = created.metadata.uid.clone().expect("a uid");
    assert!(created.metadata.creation_timestamp.is_some());
    let got = api.get("full").await.unwrap();
    assert_eq!(got, created);
    let mut expected = sc.clone();
    expected.metadata.uid = Some(uid);
    expected.metadata.creation_timestamp = got.metadata.creation_timestamp.clone();
    expected.metadata.resource_version = got.metadata.resource_version.clone();
    // The create is recorded in managedFields (the given entry owned nothing, so it goes).
    let entries = got.metadata.managed_fields.clone().expect("managedFields");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].operation.as_deref(), Some("Update"));
    let owned = &entries[0].fields_v1.as_ref().expect("fieldsV1").0;
    assert!(
        owned["f:provisioner"].is_object() && owned["f:metadata"]["f:labels"]["f:tier"].is_object(),
        "{owned}"
    );
    expected.metadata.managed_fields = got.metadata.managed_fields.clone();
    assert_eq!(got, expected, "every field survives the round trip");

    // Replace with a stale resourceVersion: 409.
    let mut stale = got.clone();
    stale.allow_volume_expansion = Some(false);
    api.replace("full", &PostParams::default(), &stale)
        .await
        .unwrap();
    let (code, reason) = api_status(
        api.replace("full", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (409, "Conflict"));

    // Immutable fields: 422.
    let mut changed = api.get("full").await.unwrap();
    changed.provisioner = "example.com/other".into();
    let (code, reason) = api_status(
        api.replace("full", &PostParams::default(), &changed)
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"));

    // Delete with a finalizer only marks the object; removing the finalizer removes it.
    api.delete("full", &DeleteParams::default()).await.unwrap();
    let marked = api.get("full").await.unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());
    let patch = serde_json::json!({"metadata": {"finalizers": null}});
    api.patch("full", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let (code, _) = api_status(api.get("full").await.unwrap_err());
    assert_eq!(code, 404);
}

#[tokio::test]
async fn list_select_patch_and_delete() {
    let server = TestServer::start().await;
    let api: Api<StorageClass> = Api::all(server.client().await);
    for (name, tier) in [("a", "gold"), ("b", "silver"), ("c", "gold")] {
        let mut sc = storage_class(name);
        sc.metadata.labels = Some(BTreeMap::from([("tier".into(), tier.into())]));
        api.create(&PostParams::default(), &sc).await.unwrap();
    }
    let gold = api
        .list(&ListParams::default().labels("tier=gold"))
        .await
        .unwrap();
    let names: Vec<_> = gold
        .items
        .iter()
        .map(|s| s.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["a", "c"]);
    assert!(gold.metadata.resource_version.is_some());
    let by_field = api
        .list(&ListParams::default().fields("metadata.name!=a"))
        .await
        .unwrap();
    assert_eq!(by_field.items.len(), 2);
    let page = api.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let token = page.metadata.continue_.clone().expect("a continue token");
    let rest = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);

    let patch = serde_json::json!({"metadata": {"labels": {"tier": "bronze"}}});
    let patched = api
        .patch("b", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .unwrap();
    assert_eq!(patched.metadata.labels.unwrap()["tier"], "bronze");
    let generated = api
        .create(
            &PostParams::default(),
            &StorageClass {
                metadata: ObjectMeta {
                    generate_name: Some("gen-".into()),
                    ..Default::default()
                },
                provisioner: "p".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(generated.metadata.name.unwrap().starts_with("gen-"));

    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    api.create(&dry, &storage_class("dry")).await.unwrap();
    assert_eq!(
        api_status(api.get("dry").await.unwrap_err()).0,
        404,
        "dry run persists nothing"
    );

    let gone = api.delete("a", &DeleteParams::default()).await.unwrap();
    assert!(gone.is_left(), "delete returns the object");
    api.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("tier=gold"),
    )
    .await
    .unwrap();
    let left: Vec<_> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|s| s.metadata.name.unwrap())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&"b".to_string()));
    let version = server.client().await.apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
}
