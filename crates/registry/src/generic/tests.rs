use std::sync::Arc;

use capstan_api::StorageClassStrategy;
use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig, Store};
use serde_json::{Value, json};

use super::*;
use crate::options::ListQuery;

struct Fixture {
    _dir: tempfile::TempDir,
    sc: GenericStore<StorageClassStrategy>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap();
    Fixture {
        sc: GenericStore::new(StorageClassStrategy, Arc::new(store), "/registry", None),
        _dir: dir,
    }
}

fn body(v: Value) -> Vec<u8> {
    serde_json::to_vec(&v).unwrap()
}

fn json_of(e: &Encoded) -> Value {
    serde_json::from_slice(&e.body.clone().into_bytes()).unwrap()
}

fn sc(name: &str) -> Vec<u8> {
    body(
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}, "provisioner": "example.com/p"}),
    )
}

/// The names of a list's items, in order.
fn item_names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn code(err: Error) -> u16 {
    ApiError::from(err).code()
}

fn list(q: ListQuery<'_>) -> ListOptions {
    ListOptions::parse(&q).unwrap()
}

#[tokio::test]
async fn create_stamps_metadata_and_defaults() {
    let f = fixture();
    let out =
        f.sc.create("", &sc("fast"), &WriteOptions::default())
            .await
            .unwrap();
    assert_eq!(out.status, ResponseStatus::Created);
    let v = json_of(&out);
    assert_eq!(v["reclaimPolicy"], "Delete");
    assert_eq!(v["volumeBindingMode"], "Immediate");
    assert_eq!(v["metadata"]["uid"].as_str().unwrap().len(), 36);
    assert!(
        v["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    let rv = v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let got = json_of(&f.sc.get("", "fast", &GetOptions::default()).await.unwrap());
    assert_eq!(got, v);
    assert_eq!(got["metadata"]["resourceVersion"], rv.as_str());
    let err =
        f.sc.create("", &sc("fast"), &WriteOptions::default())
            .await
            .unwrap_err();
    assert_eq!(code(err), 409);
}

#[tokio::test]
async fn generate_name_and_dry_run() {
    let f = fixture();
    let b = body(json!({"metadata": {"generateName": "gen-"}, "provisioner": "p"}));
    let v = json_of(&f.sc.create("", &b, &WriteOptions::default()).await.unwrap());
    let name = v["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    let dry = WriteOptions {
        dry_run: true,
        ..Default::default()
    };
    f.sc.create("", &sc("ghost"), &dry).await.unwrap();
    assert_eq!(
        code(
            f.sc.get("", "ghost", &GetOptions::default())
                .await
                .unwrap_err()
        ),
        404
    );
    let missing = body(json!({"metadata": {}, "provisioner": "p"}));
    assert_eq!(
        code(
            f.sc.create("", &missing, &WriteOptions::default())
                .await
                .unwrap_err()
        ),
        422
    );
}

#[tokio::test]
async fn update_conflicts_and_immutable_fields() {
    let f = fixture();
    let created = json_of(
        &f.sc
            .create("", &sc("a"), &WriteOptions::default())
            .await
            .unwrap(),
    );
    let mut next = created.clone();
    next["allowVolumeExpansion"] = json!(true);
    let updated = json_of(
        &f.sc
            .update("", "a", &body(next.clone()), &WriteOptions::default())
            .await
            .unwrap(),
    );
    assert_ne!(
        updated["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
    // The same stale version again: conflict.
    assert_eq!(
        code(
            f.sc.update("", "a", &body(next.clone()), &WriteOptions::default())
                .await
                .unwrap_err()
        ),
        409
    );
    // Without a version: unconditional.
    let mut unconditional = next.clone();
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    unconditional["mountOptions"] = json!(["ro"]);
    f.sc.update(
        "",
        "a",
        &body(unconditional.clone()),
        &WriteOptions::default(),
    )
    .await
    .unwrap();
    // A no-op update keeps the version.
    let current = json_of(&f.sc.get("", "a", &GetOptions::default()).await.unwrap());
    let same = json_of(
        &f.sc
            .update("", "a", &body(current.clone()), &WriteOptions::default())
            .await
            .unwrap(),
    );
    assert_eq!(
        same["metadata"]["resourceVersion"],
        current["metadata"]["resourceVersion"]
    );
    let mut changed = current.clone();
    changed["provisioner"] = json!("other.io/p");
    assert_eq!(
        code(
            f.sc.update("", "a", &body(changed), &WriteOptions::default())
                .await
                .unwrap_err()
        ),
        422
    );
    assert_eq!(
        code(
            f.sc.update("", "b", &body(current.clone()), &WriteOptions::default())
                .await
                .unwrap_err()
        ),
        400
    );
    assert_eq!(
        code(
            f.sc.update("", "missing", &sc("missing"), &WriteOptions::default())
                .await
                .unwrap_err()
        ),
        404
    );
}

#[tokio::test]
async fn patches() {
    let f = fixture();
    f.sc.create("", &sc("p"), &WriteOptions::default())
        .await
        .unwrap();
    let o = WriteOptions::default();
    let v = json_of(
        &f.sc
            .patch(
                "",
                "p",
                PatchType::Merge,
                br#"{"metadata":{"labels":{"tier":"fast"}}}"#,
                &o,
            )
            .await
            .unwrap(),
    );
    assert_eq!(v["metadata"]["labels"]["tier"], "fast");
    let v = json_of(
        &f.sc
            .patch(
                "",
                "p",
                PatchType::Json,
                br#"[{"op":"add","path":"/mountOptions","value":["ro"]}]"#,
                &o,
            )
            .await
            .unwrap(),
    );
    assert_eq!(v["mountOptions"], json!(["ro"]));
    let v = json_of(
        &f.sc
            .patch(
                "",
                "p",
                PatchType::Strategic,
                br#"{"metadata":{"labels":{"tier":null}}}"#,
                &o,
            )
            .await
            .unwrap(),
    );
    assert!(v["metadata"].get("labels").is_none() || v["metadata"]["labels"].get("tier").is_none());
    let stale = br#"{"metadata":{"resourceVersion":"1"},"allowVolumeExpansion":true}"#;
    assert_eq!(
        code(
            f.sc.patch("", "p", PatchType::Merge, stale, &o)
                .await
                .unwrap_err()
        ),
        409
    );
    assert_eq!(
        code(
            f.sc.patch(
                "",
                "p",
                PatchType::Merge,
                br#"{"reclaimPolicy":"Retain"}"#,
                &o
            )
            .await
            .unwrap_err()
        ),
        422
    );
    assert_eq!(
        code(
            f.sc.patch("", "p", PatchType::Merge, br#"{"kind":"Pod"}"#, &o)
                .await
                .unwrap_err()
        ),
        400
    );
    assert_eq!(
        code(
            f.sc.patch("", "nope", PatchType::Merge, b"{}", &o)
                .await
                .unwrap_err()
        ),
        404
    );
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let f = fixture();
    let b = body(
        json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "provisioner": "p"}),
    );
    f.sc.create("", &b, &WriteOptions::default()).await.unwrap();
    // 200 with the marked object, as upstream (202 only for `orphanDependents: false`).
    let out =
        f.sc.delete("", "held", &DeleteOptions::default())
            .await
            .unwrap();
    assert_eq!(out.status, ResponseStatus::Ok);
    let again = DeleteOptions {
        orphan_dependents: Some(false),
        ..Default::default()
    };
    let repeated = f.sc.delete("", "held", &again).await.unwrap();
    assert_eq!(repeated.status, ResponseStatus::Accepted);
    let v = json_of(&out);
    assert!(v["metadata"]["deletionTimestamp"].is_string());
    // Still there; no finalizer may be added now.
    let add = br#"{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}"#;
    assert_eq!(
        code(
            f.sc.patch("", "held", PatchType::Merge, add, &WriteOptions::default())
                .await
                .unwrap_err()
        ),
        422
    );
    f.sc.patch(
        "",
        "held",
        PatchType::Merge,
        br#"{"metadata":{"finalizers":null}}"#,
        &WriteOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        code(
            f.sc.get("", "held", &GetOptions::default())
                .await
                .unwrap_err()
        ),
        404
    );
}

#[tokio::test]
async fn delete_preconditions_and_dry_run() {
    let f = fixture();
    f.sc.create("", &sc("d"), &WriteOptions::default())
        .await
        .unwrap();
    let wrong = DeleteOptions {
        precondition_uid: Some("nope".into()),
        ..Default::default()
    };
    assert_eq!(code(f.sc.delete("", "d", &wrong).await.unwrap_err()), 409);
    let dry = DeleteOptions {
        dry_run: true,
        ..Default::default()
    };
    f.sc.delete("", "d", &dry).await.unwrap();
    f.sc.get("", "d", &GetOptions::default()).await.unwrap();
    let deleted = json_of(
        &f.sc
            .delete("", "d", &DeleteOptions::default())
            .await
            .unwrap(),
    );
    assert_eq!(deleted["metadata"]["name"], "d");
    assert_eq!(
        code(
            f.sc.delete("", "d", &DeleteOptions::default())
                .await
                .unwrap_err()
        ),
        404
    );
}

#[tokio::test]
async fn chunked_lists_with_selectors() {
    let f = fixture();
    for i in 0..10 {
        let tier = if i % 2 == 0 { "even" } else { "odd" };
        let b = body(
            json!({"metadata": {"name": format!("sc-{i}"), "labels": {"tier": tier}}, "provisioner": "p"}),
        );
        f.sc.create("", &b, &WriteOptions::default()).await.unwrap();
    }
    let first = json_of(
        &f.sc
            .list(
                "",
                &list(ListQuery {
                    limit: Some("3"),
                    label_selector: Some("tier=even"),
                    ..Default::default()
                }),
            )
            .await
            .unwrap(),
    );
    let names = item_names(&first);
    assert_eq!(names, ["sc-0", "sc-2", "sc-4"]);
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    let rv = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    // A change between chunks is not visible in later chunks.
    f.sc.delete("", "sc-6", &DeleteOptions::default())
        .await
        .unwrap();
    let second = json_of(
        &f.sc
            .list(
                "",
                &list(ListQuery {
                    limit: Some("3"),
                    label_selector: Some("tier=even"),
                    continue_token: Some(&token),
                    ..Default::default()
                }),
            )
            .await
            .unwrap(),
    );
    let names = item_names(&second);
    assert_eq!(names, ["sc-6", "sc-8"]);
    assert_eq!(second["metadata"]["resourceVersion"], rv.as_str());
    assert!(second["metadata"].get("continue").is_none());
    let by_name = json_of(
        &f.sc
            .list(
                "",
                &list(ListQuery {
                    field_selector: Some("metadata.name=sc-3"),
                    ..Default::default()
                }),
            )
            .await
            .unwrap(),
    );
    assert_eq!(by_name["items"].as_array().unwrap().len(), 1);
    let bad =
        f.sc.list(
            "",
            &list(ListQuery {
                field_selector: Some("spec.x=1"),
                ..Default::default()
            }),
        )
        .await
        .unwrap_err();
    assert_eq!(code(bad), 400);
    let deleted = json_of(
        &f.sc
            .delete_collection(
                "",
                &list(ListQuery {
                    label_selector: Some("tier=odd"),
                    ..Default::default()
                }),
                &DeleteOptions::default(),
            )
            .await
            .unwrap(),
    );
    // The answer lists what was deleted, as upstream's.
    assert_eq!(deleted["kind"], "StorageClassList");
    let gone = deleted["items"].as_array().unwrap();
    assert!(!gone.is_empty());
    assert!(
        gone.iter()
            .all(|i| i["metadata"]["labels"]["tier"] == "odd")
    );
    let rest = json_of(&f.sc.list("", &ListOptions::default()).await.unwrap());
    assert_eq!(rest["items"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn too_large_resource_version() {
    let f = fixture();
    let err = ApiError::from(
        f.sc.get("", "x", &GetOptions::parse(Some("999999")).unwrap())
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code(), err.retry_after_seconds), (504, Some(1)));
    assert!(err.message.starts_with("Too large resource version"));
}

#[tokio::test]
async fn an_expired_continue_token_offers_a_fresh_one() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap());
    let sc_store = GenericStore::new(StorageClassStrategy, store.clone(), "/registry", None);
    for i in 0..5 {
        sc_store
            .create("", &sc(&format!("c{i}")), &WriteOptions::default())
            .await
            .unwrap();
    }
    let first = json_of(
        &sc_store
            .list(
                "",
                &list(ListQuery {
                    limit: Some("2"),
                    ..Default::default()
                }),
            )
            .await
            .unwrap(),
    );
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    sc_store
        .delete("", "c0", &DeleteOptions::default())
        .await
        .unwrap();
    store
        .compact(store.current_revision().await.unwrap())
        .await
        .unwrap();
    let err = ApiError::from(
        sc_store
            .list(
                "",
                &list(ListQuery {
                    limit: Some("2"),
                    continue_token: Some(&token),
                    ..Default::default()
                }),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code(), 410);
    let fresh = err.continue_token.clone().expect("a fresh token");
    assert_eq!(
        err.to_status().metadata.continue_.as_deref(),
        Some(fresh.as_str())
    );
    let rest = json_of(
        &sc_store
            .list(
                "",
                &list(ListQuery {
                    limit: Some("10"),
                    continue_token: Some(&fresh),
                    ..Default::default()
                }),
            )
            .await
            .unwrap(),
    );
    let names = item_names(&rest);
    assert_eq!(names, ["c2", "c3", "c4"]);
}

#[tokio::test]
async fn cached_chunks_report_remaining_items() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap());
    let cached = GenericStore::new(
        StorageClassStrategy,
        store.clone(),
        "/registry",
        Some(Default::default()),
    );
    let mut last = Value::Null;
    for i in 0..5 {
        last = json_of(
            &cached
                .create("", &sc(&format!("r{i}")), &WriteOptions::default())
                .await
                .unwrap(),
        );
    }
    let rv = last["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let query = ListQuery {
        limit: Some("2"),
        resource_version: Some(&rv),
        resource_version_match: Some("NotOlderThan"),
        ..Default::default()
    };
    let first = json_of(&cached.list("", &list(query)).await.unwrap());
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    assert_eq!(first["metadata"]["remainingItemCount"], 3);
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    // Later chunks come from storage at the first chunk's revision.
    cached
        .create("", &sc("r9"), &WriteOptions::default())
        .await
        .unwrap();
    let rest = json_of(
        &cached
            .list(
                "",
                &list(ListQuery {
                    limit: Some("10"),
                    continue_token: Some(&token),
                    ..Default::default()
                }),
            )
            .await
            .unwrap(),
    );
    assert_eq!(rest["items"].as_array().unwrap().len(), 3);
    assert_eq!(
        rest["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
}

/// The embedded store, counting how often the current revision and single keys are read;
/// whether it says it knows its current revision is the test's choice. Its watches hold
/// their changes back while `flowing` is false, its lists wait while `listing` is false.
struct CountingReads {
    inner: EmbeddedStore,
    reads: std::sync::atomic::AtomicUsize,
    gets: std::sync::atomic::AtomicUsize,
    lists: std::sync::atomic::AtomicUsize,
    watches: std::sync::atomic::AtomicUsize,
    knows_revision: bool,
    flowing: tokio::sync::watch::Sender<bool>,
    listing: tokio::sync::watch::Sender<bool>,
}

impl CountingReads {
    fn open(dir: &std::path::Path, knows_revision: bool) -> Arc<Self> {
        Arc::new(Self {
            inner: EmbeddedStore::open(EmbeddedStoreConfig::new(dir.join("db"))).unwrap(),
            reads: Default::default(),
            gets: Default::default(),
            lists: Default::default(),
            watches: Default::default(),
            knows_revision,
            flowing: tokio::sync::watch::Sender::new(true),
            listing: tokio::sync::watch::Sender::new(true),
        })
    }
}

#[async_trait::async_trait]
impl Store for CountingReads {
    async fn get(&self, key: &str) -> capstan_storage::Result<(Option<KeyValue>, Revision)> {
        self.gets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.get(key).await
    }
    fn knows_current_revision(&self) -> bool {
        self.knows_revision
    }
    async fn list(
        &self,
        request: ListRequest<'_>,
    ) -> capstan_storage::Result<capstan_storage::ListResponse> {
        self.lists
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _ = self.listing.subscribe().wait_for(|l| *l).await;
        self.inner.list(request).await
    }
    async fn create(&self, key: &str, value: Bytes) -> capstan_storage::Result<KeyValue> {
        self.inner.create(key, value).await
    }
    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> capstan_storage::Result<KeyValue> {
        self.inner.update(key, value, expected).await
    }
    async fn delete(
        &self,
        key: &str,
        expected: Option<Revision>,
    ) -> capstan_storage::Result<KeyValue> {
        self.inner.delete(key, expected).await
    }
    async fn current_revision(&self) -> capstan_storage::Result<Revision> {
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.current_revision().await
    }
    async fn watch(
        &self,
        prefix: &str,
        from: Revision,
    ) -> capstan_storage::Result<capstan_storage::WatchStream> {
        self.watches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let flowing = self.flowing.subscribe();
        let changes = self.inner.watch(prefix, from).await?;
        Ok(Box::pin(changes.then(move |change| {
            let mut flowing = flowing.clone();
            async move {
                let _ = flowing.wait_for(|f| *f).await;
                change
            }
        })))
    }
    async fn compact(&self, revision: Revision) -> capstan_storage::Result<()> {
        self.inner.compact(revision).await
    }
    async fn compacted_revision(&self) -> capstan_storage::Result<Revision> {
        self.inner.compacted_revision().await
    }
}

/// A read at a resourceVersion storage has not reached waits on the watch cache, which a
/// write elsewhere advances, instead of polling storage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_ahead_of_storage_waits_on_the_cache_without_polling() {
    let dir = tempfile::tempdir().unwrap();
    let counting = CountingReads::open(dir.path(), false);
    let store: Arc<dyn Store> = counting.clone();
    let cached = Arc::new(GenericStore::new(
        StorageClassStrategy,
        store.clone(),
        "/registry",
        Some(Default::default()),
    ));
    let made = json_of(
        &cached
            .create("", &sc("here"), &WriteOptions::default())
            .await
            .unwrap(),
    );
    let rv: u64 = made["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // Wait until the cache has the object, so that the read below waits on a ready cache.
    json_of(&cached.list("", &ListOptions::default()).await.unwrap());
    let ahead = (rv + 2).to_string();
    let reads_before = counting.reads.load(std::sync::atomic::Ordering::Relaxed);
    let read = tokio::spawn({
        let cached = cached.clone();
        async move {
            cached
                .get("", "here", &GetOptions::parse(Some(&ahead)).unwrap())
                .await
        }
    });
    // Two writes to keys the cache does not hold bring storage to the revision.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    for key in ["/elsewhere/a", "/elsewhere/b"] {
        store.create(key, Bytes::from_static(b"x")).await.unwrap();
    }
    let got = json_of(&read.await.unwrap().unwrap());
    assert_eq!(got["metadata"]["name"], "here");
    let reads = counting.reads.load(std::sync::atomic::Ordering::Relaxed) - reads_before;
    assert!(reads <= 2, "storage was read {reads} times while waiting");
}

/// A read of one object without a resourceVersion comes from the watch cache when the store
/// knows its current revision without a round trip, and still sees every write acknowledged
/// before it; a store that does not know it is read instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_of_one_object_comes_from_the_cache_and_sees_each_acknowledged_write() {
    for knows_revision in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let counting = CountingReads::open(dir.path(), knows_revision);
        let store: Arc<dyn Store> = counting.clone();
        let cached = GenericStore::new(
            StorageClassStrategy,
            store,
            "/registry",
            Some(Default::default()),
        );
        cached
            .create("", &sc("read"), &WriteOptions::default())
            .await
            .unwrap();
        for round in 0..40 {
            let updated = json_of(
                &cached
                    .update(
                        "",
                        "read",
                        &body(
                            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                            "metadata": {"name": "read", "labels": {"round": round.to_string()}},
                            "provisioner": "example.com/p"}),
                        ),
                        &WriteOptions::default(),
                    )
                    .await
                    .unwrap(),
            );
            let gets = counting.gets.load(std::sync::atomic::Ordering::Relaxed);
            let read = json_of(
                &cached
                    .get("", "read", &GetOptions::default())
                    .await
                    .unwrap(),
            );
            let storage_reads = counting.gets.load(std::sync::atomic::Ordering::Relaxed) - gets;
            assert_eq!(read, updated, "round {round}");
            assert_eq!(storage_reads, usize::from(!knows_revision), "round {round}");
        }
        let missing = cached.get("", "ghost", &GetOptions::default()).await;
        assert_eq!(code(missing.unwrap_err()), 404);
    }
}

/// An update or a patch starts from the watch cache's copy, reading nothing from the store
/// when the copy is current; from a copy that is behind (the cache held back while the store
/// moved on) it comes to what it would from the store: an explicit resourceVersion of the
/// newest state passes, a JSON patch testing the newest state passes, and a change back to
/// the copy's very value is still written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_start_from_the_cached_copy_and_never_from_one_behind() {
    use std::sync::atomic::Ordering::Relaxed;
    let dir = tempfile::tempdir().unwrap();
    let counting = CountingReads::open(dir.path(), true);
    let cached = GenericStore::new(
        StorageClassStrategy,
        counting.clone(),
        "/registry",
        Some(Default::default()),
    );
    let cache = cached.kind.core.cache.as_ref().unwrap();
    let labelled = |round: &str, rv: Option<&str>| {
        let mut meta = json!({"name": "s", "labels": {"round": round}});
        if let Some(rv) = rv {
            meta["resourceVersion"] = json!(rv);
        }
        body(
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": meta, "provisioner": "example.com/p"}),
        )
    };
    let rv = |o: &Value| -> u64 {
        o["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    let round = |o: &Value| {
        o["metadata"]["labels"]["round"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let caught_up = |o: &Value| {
        let at = Revision(rv(o));
        async move {
            cache
                .wait_for(at, std::time::Duration::from_secs(10))
                .await
                .unwrap()
        }
    };
    let options = WriteOptions::default();
    let update = |round: &'static str, rv: Option<String>| {
        let body = labelled(round, rv.as_deref());
        let cached = &cached;
        let options = &options;
        async move { json_of(&cached.update("", "s", &body, options).await.unwrap()) }
    };

    let made = json_of(
        &cached
            .create("", &labelled("0", None), &options)
            .await
            .unwrap(),
    );
    caught_up(&made).await;
    let gets = counting.gets.load(Relaxed);
    let first = update("1", None).await;
    assert_eq!(round(&first), "1");
    assert_eq!(
        counting.gets.load(Relaxed),
        gets,
        "a current copy is not read again"
    );
    caught_up(&first).await;

    // The cache stops at `first`; the store goes on.
    counting.flowing.send_replace(false);
    let second = update("2", None).await;
    assert!(rv(&second) > rv(&first));
    let gets = counting.gets.load(Relaxed);
    let third = update("3", Some(rv(&second).to_string())).await;
    assert_eq!(round(&third), "3", "the newest resourceVersion is taken");
    assert!(counting.gets.load(Relaxed) > gets, "the store was read");

    let patch = br#"[{"op": "test", "path": "/metadata/labels/round", "value": "3"},
        {"op": "replace", "path": "/metadata/labels/round", "value": "4"}]"#;
    let fourth = json_of(
        &cached
            .patch("", "s", PatchType::Json, patch, &options)
            .await
            .unwrap(),
    );
    assert_eq!(round(&fourth), "4", "the patch tested the newest state");
    assert!(rv(&fourth) > rv(&third));

    // Back to what the cache's copy holds: a change all the same.
    let back = update("1", None).await;
    assert_eq!(round(&back), "1");
    assert!(
        rv(&back) > rv(&fourth),
        "written, not taken for unchanged: {back}"
    );
    let (stored, _) = counting.get("/registry/storageclasses/s").await.unwrap();
    assert_eq!(stored.unwrap().mod_revision, Revision(rv(&back)));

    counting.flowing.send_replace(true);
    caught_up(&back).await;
    let held = cache.get("/registry/storageclasses/s").unwrap().unwrap();
    assert_eq!(held.revision, Revision(rv(&back)));
}

/// An update from a cached copy of an object deleted since is made again from the store: a
/// kind that creates on update (a Lease) creates it, as it would without the copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_over_a_copy_of_a_deleted_object_creates_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let counting = CountingReads::open(dir.path(), true);
    let leases = GenericStore::new(
        capstan_api::LeaseStrategy,
        counting.clone(),
        "/registry",
        Some(Default::default()),
    );
    let cache = leases.kind.core.cache.as_ref().unwrap();
    let lease = body(
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "node-1", "namespace": "default"},
        "spec": {"holderIdentity": "node-1"}}),
    );
    let options = WriteOptions::default();
    let made = json_of(&leases.create("default", &lease, &options).await.unwrap());
    let rv: u64 = made["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let soon = std::time::Duration::from_secs(10);
    cache.wait_for(Revision(rv), soon).await.unwrap();
    counting.flowing.send_replace(false);
    leases
        .delete("default", "node-1", &DeleteOptions::default())
        .await
        .unwrap();
    // A change (the same lease again would tell nothing: equal CRCs go to the store).
    let changed = body(
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "node-1", "namespace": "default"},
        "spec": {"holderIdentity": "node-2"}}),
    );
    let again = leases
        .update("default", "node-1", &changed, &options)
        .await
        .unwrap();
    assert_eq!(again.status, ResponseStatus::Created);
    let again = json_of(&again);
    assert_ne!(again["metadata"]["uid"], made["metadata"]["uid"]);
    assert_eq!(again["spec"]["holderIdentity"], "node-2");
    counting.flowing.send_replace(true);
}

fn rules(grace: i64) -> DeletionRules {
    DeletionRules {
        awaits_finalization: false,
        grace,
        graceful: false,
        own_rules: false,
        finalizers_change: false,
    }
}

#[test]
fn deletion_plans_follow_finalizers_grace_and_marks() {
    // Nothing holds it: removed at once, metadata untouched.
    let mut meta = ObjectMeta::default();
    assert_eq!(
        plan_deletion(&mut meta, &rules(0)),
        (DeletionStep::Remove { mark_first: false }, false)
    );
    assert!(meta.deletion_timestamp.is_none());

    // A graceful kind (pods) is stored marked before it goes.
    let graceful = DeletionRules {
        graceful: true,
        ..rules(0)
    };
    assert_eq!(
        plan_deletion(&mut meta, &graceful),
        (DeletionStep::Remove { mark_first: true }, true)
    );
    assert!(meta.deletion_timestamp.is_some());
    assert_eq!(meta.deletion_grace_period_seconds, Some(0));

    // A finalizer keeps it; the generation moves with the new intent.
    let mut meta = ObjectMeta {
        finalizers: Some(vec!["example.com/hold".into()]),
        generation: Some(3),
        ..Default::default()
    };
    assert_eq!(
        plan_deletion(&mut meta, &rules(0)),
        (DeletionStep::Keep, true)
    );
    assert_eq!(meta.generation, Some(4));
    // Deleting it again changes nothing.
    assert_eq!(
        plan_deletion(&mut meta, &rules(0)),
        (DeletionStep::Unchanged, false)
    );
    assert_eq!(meta.generation, Some(4));

    // A grace period keeps it; a shorter one later moves the mark, a longer one does not.
    let mut meta = ObjectMeta::default();
    assert_eq!(plan_deletion(&mut meta, &rules(30)).0, DeletionStep::Keep);
    assert_eq!(meta.deletion_grace_period_seconds, Some(30));
    assert_eq!(
        plan_deletion(&mut meta, &rules(60)).0,
        DeletionStep::Unchanged
    );
    assert_eq!(meta.deletion_grace_period_seconds, Some(30));
    assert_eq!(
        plan_deletion(&mut meta, &rules(5)),
        (DeletionStep::Keep, false)
    );
    assert_eq!(meta.deletion_grace_period_seconds, Some(5));

    // Kinds with their own rules (namespaces) get the timestamp only.
    let mut meta = ObjectMeta {
        generation: Some(1),
        ..Default::default()
    };
    let own = DeletionRules {
        awaits_finalization: true,
        own_rules: true,
        ..rules(0)
    };
    assert_eq!(plan_deletion(&mut meta, &own), (DeletionStep::Keep, true));
    assert!(meta.deletion_timestamp.is_some());
    assert_eq!(meta.deletion_grace_period_seconds, None);
    assert_eq!(meta.generation, Some(1));
}

#[test]
fn propagation_policies_set_the_collectors_finalizers() {
    let mut meta = ObjectMeta {
        finalizers: Some(vec!["example.com/hold".into()]),
        ..Default::default()
    };
    let orphan = DeleteOptions {
        propagation_policy: Some("Orphan".into()),
        ..Default::default()
    };
    assert!(set_propagation_finalizers(&mut meta, &orphan, false));
    assert_eq!(
        meta.finalizers.as_deref(),
        Some(&["example.com/hold".to_string(), ORPHAN_FINALIZER.to_string()][..])
    );
    assert!(!set_propagation_finalizers(&mut meta, &orphan, false));
    let background = DeleteOptions {
        propagation_policy: Some("Background".into()),
        ..Default::default()
    };
    assert!(set_propagation_finalizers(&mut meta, &background, false));
    assert_eq!(
        meta.finalizers.as_deref(),
        Some(&["example.com/hold".to_string()][..])
    );
}

#[test]
fn a_failed_delete_precondition_names_both_values() {
    let gr = GroupResource::new("storage.k8s.io", "storageclasses");
    let meta = ObjectMeta {
        uid: Some("u-1".into()),
        resource_version: Some("7".into()),
        ..Default::default()
    };
    let refused =
        |options: DeleteOptions| match check_delete_preconditions(&gr, "d", &meta, &options)
            .unwrap_err()
        {
            Error::Api(e) => (e.code(), e.message),
            other => panic!("not an API error: {other}"),
        };
    let (code, message) = refused(DeleteOptions {
        precondition_uid: Some("u-2".into()),
        ..Default::default()
    });
    assert_eq!(code, 409);
    assert!(
        message.ends_with("Precondition failed: UID in precondition: u-2, UID in object meta: u-1"),
        "{message}"
    );
    let (_, message) = refused(DeleteOptions {
        precondition_uid: Some("u-1".into()),
        precondition_resource_version: Some("6".into()),
        ..Default::default()
    });
    assert!(
        message.ends_with(
            "Precondition failed: ResourceVersion in precondition: 6, ResourceVersion in object meta: 7"
        ),
        "{message}"
    );
    let holding = DeleteOptions {
        precondition_uid: Some("u-1".into()),
        precondition_resource_version: Some("7".into()),
        ..Default::default()
    };
    check_delete_preconditions(&gr, "d", &meta, &holding).unwrap();
}

/// Typed managedFields made by moving each entry's tree are those a round trip through bytes
/// gives.
#[test]
fn managed_entries_are_those_the_bytes_decode_to() {
    let fields = json!([
        {"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
         "time": "2026-12-02T05:00:00Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {}}},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
         "subresource": "status", "fieldsType": "FieldsV1", "fieldsV1": null},
        {"manager": "bare", "operation": "Apply"},
        // Strings moved, a null left out; an unknown member takes the decoder's way.
        {"manager": "m", "operation": null, "time": null, "subresource": ""},
        {"manager": "m", "extra": {"x": 1}, "time": "2026-12-02T05:00:01Z"},
        {}
    ]);
    let expected: Vec<ManagedFieldsEntry> = codec::from_document(&fields).unwrap();
    assert_eq!(managed_entries(fields).unwrap(), expected);
    assert_eq!(
        expected[0].fields_v1.as_ref().unwrap().0["f:spec"],
        json!({})
    );
    assert_eq!(expected[3].subresource.as_deref(), Some(""));
    for bad in [
        json!([{"manager": 3}]),
        json!([{"manager": "m", "time": "yesterday"}]),
        json!([{"time": 5}]),
        json!([5]),
        json!({"manager": "m"}),
    ] {
        let decoded: std::result::Result<Vec<ManagedFieldsEntry>, _> = codec::from_document(&bad);
        assert!(decoded.is_err(), "{bad}");
        assert!(managed_entries(bad.clone()).is_err(), "{bad}");
    }
}

/// Entries are the same as their JSON only when every field is.
#[test]
fn same_entries_compares_every_field() {
    let fields = json!([
        {"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
         "time": "2026-12-02T05:00:00Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
         "subresource": "status", "fieldsType": "FieldsV1"}
    ]);
    let entries = managed_entries(fields.clone()).unwrap();
    assert!(same_entries(Some(&entries), &fields));
    for (pointer, changed) in [
        ("/0/time", json!("2026-12-02T05:00:01Z")),
        ("/0/fieldsV1/f:metadata", json!({})),
        ("/1/subresource", json!("resize")),
        ("/1/operation", json!("Apply")),
    ] {
        let mut other = fields.clone();
        *other.pointer_mut(pointer).unwrap() = changed;
        assert!(!same_entries(Some(&entries), &other), "{pointer}");
    }
    let mut extra = fields.clone();
    extra[1]["unknown"] = json!(1);
    assert!(!same_entries(Some(&entries), &extra));
    assert!(!same_entries(Some(&entries[..1]), &fields));
    assert!(same_entries(None, &json!([])));
}

/// The (type, name) of every event line a watch sends until its timeout.
async fn watched(
    store: &GenericStore<StorageClassStrategy>,
    query: ListQuery<'_>,
) -> Vec<(String, String)> {
    let options = WatchOptions {
        list: list(query),
        allow_bookmarks: false,
        timeout: std::time::Duration::from_millis(300),
        initialization: None,
        connection: 0,
    };
    let chunks: Vec<Bytes> = store.watch("", &options).await.unwrap().collect().await;
    chunks
        .iter()
        .flat_map(|c| c.split(|b| *b == b'\n').filter(|l| !l.is_empty()))
        .map(|line| {
            let e: Value = serde_json::from_slice(line).unwrap();
            let name = e["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string();
            (e["type"].as_str().unwrap().to_string(), name)
        })
        .collect()
}

/// A watch opened while the watch cache is still loading (a control loop's, as the server
/// starts) waits for the load and is served by the cache, not by a watch of its own on
/// storage that would decode every change again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_opened_while_the_cache_loads_is_served_by_the_cache() {
    // The unset resourceVersion, and "0" (what a list answers on a new store).
    for version in [None, Some("0")] {
        let dir = tempfile::tempdir().unwrap();
        let counting = CountingReads::open(dir.path(), true);
        counting.listing.send_replace(false);
        let cached = Arc::new(GenericStore::new(
            StorageClassStrategy,
            counting.clone(),
            "/registry",
            Some(Default::default()),
        ));
        let opening = tokio::spawn({
            let cached = cached.clone();
            async move {
                let options = WatchOptions {
                    list: list(ListQuery {
                        resource_version: version,
                        ..Default::default()
                    }),
                    allow_bookmarks: false,
                    timeout: std::time::Duration::from_secs(10),
                    initialization: None,
                    connection: 0,
                };
                cached.watch("", &options).await.unwrap()
            }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        counting.listing.send_replace(true);
        let mut lines = opening.await.unwrap();
        let cache = cached.kind.core.cache.as_ref().unwrap();
        assert!(cache.wait_ready(std::time::Duration::from_secs(10)).await);
        let watches = counting.watches.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(watches, 1, "only the cache watches storage ({version:?})");
        cached
            .create("", &sc("later"), &WriteOptions::default())
            .await
            .unwrap();
        let chunk = lines.next().await.unwrap();
        let event: Value = serde_json::from_slice(&chunk).unwrap();
        assert_eq!(event["type"], "ADDED");
        assert_eq!(event["object"]["metadata"]["name"], "later");
    }
}

/// Without a watch cache, a watch from a resourceVersion and without selectors reads nothing
/// before its start (it holds no copy of the collection): a put that created its key is
/// ADDED, re-creations included. With a selector, the objects matching at the start are
/// read once, so that updates crossing it become ADDED and DELETED.
#[tokio::test]
async fn storage_watches_hold_no_copy_of_the_collection() {
    let dir = tempfile::tempdir().unwrap();
    let counting = CountingReads::open(dir.path(), true);
    let sc_store = GenericStore::new(StorageClassStrategy, counting.clone(), "/registry", None);
    let labeled = |tier: &str| {
        body(json!({"metadata": {"name": "a", "labels": {"tier": tier}}, "provisioner": "p"}))
    };
    let made = json_of(
        &sc_store
            .create("", &labeled("gold"), &WriteOptions::default())
            .await
            .unwrap(),
    );
    let start = made["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    sc_store
        .delete("", "a", &DeleteOptions::default())
        .await
        .unwrap();
    sc_store
        .create("", &labeled("gold"), &WriteOptions::default())
        .await
        .unwrap();
    let merge = br#"{"metadata":{"labels":{"tier":"bronze"}}}"#;
    sc_store
        .patch("", "a", PatchType::Merge, merge, &WriteOptions::default())
        .await
        .unwrap();
    let lists = || counting.lists.load(std::sync::atomic::Ordering::Relaxed);

    let before = lists();
    let all = watched(
        &sc_store,
        ListQuery {
            resource_version: Some(&start),
            ..Default::default()
        },
    )
    .await;
    let expected = [("DELETED", "a"), ("ADDED", "a"), ("MODIFIED", "a")];
    assert_eq!(all, expected.map(|(t, n)| (t.to_string(), n.to_string())));
    assert_eq!(
        lists(),
        before,
        "an unselective watch from a revision lists nothing"
    );

    let gold = watched(
        &sc_store,
        ListQuery {
            resource_version: Some(&start),
            label_selector: Some("tier=gold"),
            ..Default::default()
        },
    )
    .await;
    let expected = [("DELETED", "a"), ("ADDED", "a"), ("DELETED", "a")];
    assert_eq!(gold, expected.map(|(t, n)| (t.to_string(), n.to_string())));
    assert_eq!(
        lists(),
        before + 1,
        "a selective watch reads its start once"
    );
}

/// A mutating plugin that labels every StorageClass it admits, remembers the managedFields
/// it was shown and, when asked, leaves them invalid.
struct Labeler {
    seen: std::sync::Mutex<Vec<Value>>,
    corrupt: bool,
}

#[async_trait::async_trait]
impl capstan_admission::Plugin for Labeler {
    fn name(&self) -> &'static str {
        "Labeler"
    }
    fn admits(&self, _: Operation, resource: &GroupResource, _: &str) -> bool {
        resource.resource == "storageclasses"
    }
    async fn admit(&self, a: &mut capstan_admission::Attributes) -> Result<(), ApiError> {
        let object = a.object.as_mut().unwrap();
        self.seen
            .lock()
            .unwrap()
            .push(object["metadata"]["managedFields"].clone());
        object["metadata"]["labels"]["added-by"] = json!("plugin");
        if self.corrupt {
            object["metadata"]["managedFields"][0]["operation"] = json!("Bogus");
        }
        Ok(())
    }
}

/// The fields a managedFields entry owns, as `a.b.c` paths.
fn owned(entry: &Value) -> Vec<String> {
    fn walk(v: &Value, prefix: &str, out: &mut Vec<String>) {
        for (k, child) in v.as_object().into_iter().flatten() {
            let path = format!("{prefix}{}", k.trim_start_matches("f:"));
            out.push(path.clone());
            walk(child, &format!("{path}."), out);
        }
    }
    let mut out = Vec::new();
    walk(&entry["fieldsV1"], "", &mut out);
    out
}

/// As upstream's, a write's managedFields entry is recorded before mutating admission: the
/// plugins see it, and what they set belongs to no entry; managedFields a plugin leaves
/// invalid go back to those recorded, with upstream's warning.
#[tokio::test]
async fn managed_fields_are_recorded_before_mutating_admission() {
    for corrupt in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap();
        let labeler = Arc::new(Labeler {
            seen: Default::default(),
            corrupt,
        });
        let chain = capstan_admission::Chain::new(vec![labeler.clone()]);
        let sc_store = GenericStore::new(StorageClassStrategy, Arc::new(store), "/registry", None)
            .with_admission(Arc::new(chain));
        let options = WriteOptions {
            field_manager: Some("writer".into()),
            ..Default::default()
        };
        let body = body(
            json!({"metadata": {"name": "a", "labels": {"tier": "gold"}},
            "provisioner": "example.com/p"}),
        );
        let made = sc_store.create("", &body, &options).await.unwrap();
        let object = json_of(&made);
        assert_eq!(object["metadata"]["labels"]["added-by"], "plugin");

        let seen = labeler.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0][0]["manager"], "writer", "the plugin saw the entry");
        let entry = &object["metadata"]["managedFields"][0];
        assert_eq!(entry["operation"], "Update", "{object}");
        let fields = owned(entry);
        assert!(
            fields.contains(&"metadata.labels.tier".to_string()),
            "{fields:?}"
        );
        assert!(
            !fields.contains(&"metadata.labels.added-by".to_string()),
            "{fields:?}"
        );
        let warned = made.warnings.iter().any(|w| {
            w.starts_with(".metadata.managedFields was in an invalid state after admission")
        });
        assert_eq!(warned, corrupt, "{:?}", made.warnings);
    }
}

/// Updates move the fields they change to their manager; entries a client sends that differ
/// from the stored ones replace them, and sending the stored ones back changes nothing.
#[tokio::test]
async fn updates_record_their_managers_over_the_stored_or_the_given_entries() {
    let f = fixture();
    let by = |manager: &str| WriteOptions {
        field_manager: Some(manager.into()),
        ..Default::default()
    };
    let managers = |obj: &Value| -> Vec<(String, Vec<String>)> {
        obj["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| (e["manager"].as_str().unwrap().to_string(), owned(e)))
            .collect()
    };
    let labelled = |obj: &Value, value: &str| {
        let mut next = obj.clone();
        next["metadata"]["labels"]["tier"] = json!(value);
        body(next)
    };
    let created = body(
        json!({"metadata": {"name": "a", "labels": {"tier": "gold", "keep": "x"}},
        "provisioner": "example.com/p"}),
    );
    let created = json_of(&f.sc.create("", &created, &by("creator")).await.unwrap());

    // The label moves to the editor; a second change of it keeps the entries' fields.
    let first = json_of(
        &f.sc
            .update("", "a", &labelled(&created, "silver"), &by("editor"))
            .await
            .unwrap(),
    );
    let moved = managers(&first);
    assert_eq!(moved[0].0, "creator");
    assert!(!moved[0].1.contains(&"metadata.labels.tier".to_string()));
    assert!(moved[0].1.contains(&"metadata.labels.keep".to_string()));
    assert_eq!(moved[1].0, "editor");
    assert!(moved[1].1.contains(&"metadata.labels.tier".to_string()));
    let second = json_of(
        &f.sc
            .update("", "a", &labelled(&first, "bronze"), &by("editor"))
            .await
            .unwrap(),
    );
    assert_eq!(managers(&second), moved);

    // Entries given that differ from the stored ones replace them.
    let mut renamed = second.clone();
    renamed["metadata"]["managedFields"][0]["manager"] = json!("renamed");
    let handed = json_of(
        &f.sc
            .update("", "a", &labelled(&renamed, "iron"), &by("editor"))
            .await
            .unwrap(),
    );
    let mut names: Vec<String> = managers(&handed).into_iter().map(|(m, _)| m).collect();
    names.sort();
    assert_eq!(names, ["editor", "renamed"]);

    // An empty list clears them: only what this update changed is owned, by its manager.
    let mut cleared = handed.clone();
    cleared["metadata"]["managedFields"] = json!([]);
    let reset = json_of(
        &f.sc
            .update("", "a", &labelled(&cleared, "tin"), &by("other"))
            .await
            .unwrap(),
    );
    assert_eq!(
        managers(&reset),
        [(
            "other".to_string(),
            vec![
                "metadata".to_string(),
                "metadata.labels".to_string(),
                "metadata.labels.tier".to_string()
            ]
        )]
    );
}

/// What [`EntryEditor`] does to the managedFields mutating admission shows it.
#[derive(Clone, Copy, Debug)]
enum EntryEdit {
    Leave,
    Rename,
    AddNull,
    Corrupt,
}

struct EntryEditor(EntryEdit);

#[async_trait::async_trait]
impl capstan_admission::Plugin for EntryEditor {
    fn name(&self) -> &'static str {
        "EntryEditor"
    }
    fn admits(&self, _: Operation, resource: &GroupResource, _: &str) -> bool {
        resource.resource == "pods"
    }
    async fn admit(&self, a: &mut capstan_admission::Attributes) -> Result<(), ApiError> {
        let entry = &mut a.object.as_mut().unwrap()["metadata"]["managedFields"][0];
        match self.0 {
            EntryEdit::Leave => {}
            EntryEdit::Rename => entry["manager"] = json!("renamed"),
            EntryEdit::AddNull => entry["subresource"] = json!(null),
            EntryEdit::Corrupt => entry["operation"] = json!("Bogus"),
        }
        Ok(())
    }
}

/// Pods keep one tree through a write (`reading_trees`): whatever mutating admission does to
/// the managedFields, the tree that is stored carries the entries the answer shows (debug
/// builds also compare the tree with the object at each step).
#[tokio::test]
async fn a_pods_tree_keeps_the_entries_admission_left() {
    for edit in [
        EntryEdit::Leave,
        EntryEdit::Rename,
        EntryEdit::AddNull,
        EntryEdit::Corrupt,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap();
        let chain = capstan_admission::Chain::new(vec![Arc::new(EntryEditor(edit))]);
        let pods = GenericStore::new(
            capstan_api::PodStrategy {
                allow_privileged: false,
            },
            Arc::new(store),
            "/registry",
            None,
        )
        .reading_trees()
        .with_admission(Arc::new(chain));
        let options = WriteOptions {
            field_manager: Some("writer".into()),
            ..Default::default()
        };
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        let made = json_of(
            &pods
                .create("default", &body(pod), &options)
                .await
                .unwrap_or_else(|e| panic!("{edit:?}: {e:?}")),
        );
        let entries = &made["metadata"]["managedFields"];
        let manager = match edit {
            EntryEdit::Rename => "renamed",
            _ => "writer",
        };
        assert_eq!(entries[0]["manager"], manager, "{edit:?}: {made}");
        assert_eq!(entries[0]["operation"], "Update", "{edit:?}");
        assert!(entries[0].get("subresource").is_none(), "{edit:?}");
        let stored = json_of(
            &pods
                .get("default", "p", &GetOptions::default())
                .await
                .unwrap(),
        );
        assert_eq!(stored["metadata"]["managedFields"], *entries, "{edit:?}");

        // An update through the same steps.
        let mut next = made.clone();
        next["metadata"]["labels"] = json!({"a": "b"});
        let updated = json_of(
            &pods
                .update("default", "p", &body(next), &options)
                .await
                .unwrap_or_else(|e| panic!("{edit:?}: {e:?}")),
        );
        let stored = json_of(
            &pods
                .get("default", "p", &GetOptions::default())
                .await
                .unwrap(),
        );
        assert_eq!(
            stored["metadata"]["managedFields"], updated["metadata"]["managedFields"],
            "{edit:?}"
        );
    }
}

#[test]
fn own_json_reads_as_from_slice_reads_it() {
    let text = r#"{"a":"\u00e9t\u00e9 \"x\" é","b":[1,2.5,{"c":null,"d":true}]}"#.as_bytes();
    assert_eq!(
        parse_own_json(text).unwrap(),
        serde_json::from_slice::<Value>(text).unwrap()
    );
    // Not UTF-8: from_slice's error, where it finds it.
    let bad = b"{\"a\":\"ok\",\n\"b\":\"\xff\"}";
    assert_eq!(
        parse_own_json(bad).unwrap_err().to_string(),
        serde_json::from_slice::<Value>(bad)
            .unwrap_err()
            .to_string()
    );
}
