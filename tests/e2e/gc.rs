//! The garbage collector: dependents of a deleted owner go (background), stay without the
//! reference (orphan), or go first while the owner waits (foreground); chains are followed;
//! owners of kinds Capstan does not serve are never judged gone.

use std::time::{Duration, Instant};

use capstan_testing::TestServer;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};

fn owned_by(owner: &ConfigMap, block: bool) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: owner.metadata.name.clone().unwrap(),
        uid: owner.metadata.uid.clone().unwrap(),
        block_owner_deletion: Some(block),
        ..Default::default()
    }
}

fn config_map(name: &str, owners: Vec<OwnerReference>, finalizers: Vec<String>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: Some(owners).filter(|o| !o.is_empty()),
            finalizers: Some(finalizers).filter(|f| !f.is_empty()),
            ..Default::default()
        },
        ..Default::default()
    }
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check().await {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn gone(api: &Api<ConfigMap>, name: &str) -> bool {
    matches!(api.get_opt(name).await, Ok(None))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dependents_follow_their_owners_as_the_propagation_policy_says() {
    let server = TestServer::start().await;
    let client = server.client().await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client, "default");
    let pp = PostParams::default();

    // Background (the default): a chain of three goes, and a Secret with it.
    let top = maps
        .create(&pp, &config_map("top", vec![], vec![]))
        .await
        .unwrap();
    let middle = maps
        .create(
            &pp,
            &config_map("middle", vec![owned_by(&top, false)], vec![]),
        )
        .await
        .unwrap();
    maps.create(
        &pp,
        &config_map("bottom", vec![owned_by(&middle, false)], vec![]),
    )
    .await
    .unwrap();
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("top-secret".into()),
            owner_references: Some(vec![owned_by(&top, false)]),
            ..Default::default()
        },
        ..Default::default()
    };
    secrets.create(&pp, &secret).await.unwrap();
    maps.delete("top", &DeleteParams::default()).await.unwrap();
    eventually("the chain is collected", || async {
        gone(&maps, "middle").await
            && gone(&maps, "bottom").await
            && matches!(secrets.get_opt("top-secret").await, Ok(None))
    })
    .await;

    // Orphan: the owner goes once its dependent has lost the reference; the dependent stays.
    let parent = maps
        .create(&pp, &config_map("parent", vec![], vec![]))
        .await
        .unwrap();
    maps.create(
        &pp,
        &config_map("orphan", vec![owned_by(&parent, false)], vec![]),
    )
    .await
    .unwrap();
    maps.delete("parent", &DeleteParams::orphan())
        .await
        .unwrap();
    eventually("the orphaning owner goes", || gone(&maps, "parent")).await;
    let orphan = maps.get("orphan").await.unwrap();
    assert!(
        orphan
            .metadata
            .owner_references
            .is_none_or(|o| o.is_empty())
    );

    // Foreground: the owner waits, marked, until its blocking dependent is gone.
    let boss = maps
        .create(&pp, &config_map("boss", vec![], vec![]))
        .await
        .unwrap();
    maps.create(
        &pp,
        &config_map(
            "worker",
            vec![owned_by(&boss, true)],
            vec!["example.com/hold".into()],
        ),
    )
    .await
    .unwrap();
    maps.delete("boss", &DeleteParams::foreground())
        .await
        .unwrap();
    eventually("the dependent is being deleted", || async {
        maps.get("worker")
            .await
            .is_ok_and(|w| w.metadata.deletion_timestamp.is_some())
    })
    .await;
    let waiting = maps.get("boss").await.unwrap();
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert!(
        waiting
            .metadata
            .finalizers
            .unwrap_or_default()
            .contains(&"foregroundDeletion".to_string())
    );
    maps.patch(
        "worker",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    eventually("the owner goes after its dependent", || gone(&maps, "boss")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owners_of_kinds_not_served_and_live_owners_keep_their_dependents() {
    let server = TestServer::start().await;
    let maps: Api<ConfigMap> = Api::namespaced(server.client().await, "default");
    let pp = PostParams::default();
    let live = maps
        .create(&pp, &config_map("live", vec![], vec![]))
        .await
        .unwrap();
    let unserved = OwnerReference {
        api_version: "widgets.example.com/v1".into(),
        kind: "Widget".into(),
        name: "web-123".into(),
        uid: "00000000-0000-0000-0000-000000000001".into(),
        ..Default::default()
    };
    let gone_owner = OwnerReference {
        uid: "00000000-0000-0000-0000-000000000002".into(),
        name: "never-was".into(),
        ..owned_by(&live, false)
    };
    maps.create(
        &pp,
        &config_map("kept", vec![unserved, owned_by(&live, false)], vec![]),
    )
    .await
    .unwrap();
    // A dependent of a live owner and of a ConfigMap that does not exist: the dangling
    // reference is removed, the object stays.
    maps.create(
        &pp,
        &config_map("half", vec![owned_by(&live, false), gone_owner], vec![]),
    )
    .await
    .unwrap();
    eventually("the dangling reference is dropped", || async {
        maps.get("half")
            .await
            .is_ok_and(|h| h.metadata.owner_references.is_some_and(|o| o.len() == 1))
    })
    .await;
    let kept = maps.get("kept").await.unwrap();
    assert_eq!(kept.metadata.owner_references.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_cascades_and_waits_for_deletion() {
    use capstan_e2e::kubectl;

    use crate::ok;
    let server = TestServer::start().await;
    let maps: Api<ConfigMap> = Api::namespaced(server.client().await, "default");
    let pp = PostParams::default();
    for (owner, dependent) in [("fg", "fg-dep"), ("or", "or-dep")] {
        let o = maps
            .create(&pp, &config_map(owner, vec![], vec![]))
            .await
            .unwrap();
        maps.create(
            &pp,
            &config_map(dependent, vec![owned_by(&o, true)], vec![]),
        )
        .await
        .unwrap();
    }
    let kc = server.kubeconfig_path();
    tokio::task::spawn_blocking(move || {
        // Foreground: kubectl returns once the owner is marked; wait sees both go.
        ok(kubectl(
            &kc,
            &[
                "delete",
                "configmap",
                "fg",
                "--cascade=foreground",
                "--wait=false",
            ],
        ));
        ok(kubectl(
            &kc,
            &[
                "wait",
                "--for=delete",
                "configmap/fg",
                "configmap/fg-dep",
                "--timeout=20s",
            ],
        ));
        // Orphan: the dependent stays, without its owner reference.
        ok(kubectl(
            &kc,
            &["delete", "configmap", "or", "--cascade=orphan"],
        ));
        ok(kubectl(
            &kc,
            &["wait", "--for=delete", "configmap/or", "--timeout=20s"],
        ));
        let refs = ok(kubectl(
            &kc,
            &[
                "get",
                "configmap",
                "or-dep",
                "-o",
                "jsonpath={.metadata.ownerReferences}",
            ],
        ));
        assert_eq!(refs.trim(), "");
    })
    .await
    .unwrap();
}

/// A Job or ReplicationController deleted with no propagation policy orphans its dependents
/// (upstream's default for `batch/v1` Jobs and core `v1` ReplicationControllers): it goes, its
/// dependents stay without the reference. kubectl asks for Background and cascades.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_orphan_their_dependents_by_default() {
    use k8s_openapi::api::batch::v1::Job;
    let server = TestServer::start().await;
    let client = server.client().await;
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    let job: Job = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}}
    }))
    .unwrap();
    let job = jobs.create(&PostParams::default(), &job).await.unwrap();
    let owner = OwnerReference {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        name: "j".into(),
        uid: job.metadata.uid.clone().unwrap(),
        ..Default::default()
    };
    maps.create(
        &PostParams::default(),
        &config_map("dep", vec![owner], vec![]),
    )
    .await
    .unwrap();
    // The answer is the Job, marked and holding the orphan finalizer.
    let answer = jobs.delete("j", &DeleteParams::default()).await.unwrap();
    let marked = answer.left().expect("the Job, not a Status");
    assert_eq!(marked.metadata.finalizers, Some(vec!["orphan".to_string()]));
    assert!(marked.metadata.deletion_timestamp.is_some());
    eventually("the job goes", || async {
        matches!(jobs.get_opt("j").await, Ok(None))
    })
    .await;
    eventually("the dependent loses its reference", || async {
        maps.get("dep")
            .await
            .is_ok_and(|m| m.metadata.owner_references.is_none_or(|o| o.is_empty()))
    })
    .await;
}
