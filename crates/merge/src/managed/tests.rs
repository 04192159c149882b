use capstan_negotiation::schema::Schema;
use serde_json::{Value, json};

use super::*;

fn cm() -> Typed<'static> {
    Typed::for_kind(Schema::upstream(), "v1", "ConfigMap").unwrap()
}

fn writer(manager: &'static str) -> Writer<'static> {
    Writer {
        manager,
        api_version: "v1",
        subresource: "",
        now: "2026-11-23T16:00:00Z",
    }
}

fn fields(managed: &ManagedFields, manager: &str) -> Vec<String> {
    managed
        .entries
        .iter()
        .filter(|e| e.manager == manager)
        .flat_map(|e| e.fields.paths())
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn updates_take_ownership_of_what_they_change() {
    let t = cm();
    let ignored = Ignored::identity();
    let mut managed = ManagedFields::default();
    let created = json!({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"x": "1", "y": "2"}});
    update(
        &t,
        &mut managed,
        None,
        &created,
        &ignored,
        &writer("kubectl-create"),
    )
    .unwrap();
    assert_eq!(
        fields(&managed, "kubectl-create"),
        [
            ".data",
            ".data.x",
            ".data.y",
            ".metadata.labels",
            ".metadata.labels.a"
        ]
    );
    assert_eq!(
        managed.encode().unwrap()[0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:x": {}, "f:y": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}})
    );
    let mut edited = created.clone();
    edited["data"]["x"] = json!("9");
    edited["data"].as_object_mut().unwrap().remove("y");
    update(
        &t,
        &mut managed,
        Some(&created),
        &edited,
        &ignored,
        &writer("editor"),
    )
    .unwrap();
    assert_eq!(fields(&managed, "editor"), [".data.x"]);
    assert_eq!(
        fields(&managed, "kubectl-create"),
        [".data", ".metadata.labels", ".metadata.labels.a"]
    );
    // A write that changes nothing adds no entry.
    update(
        &t,
        &mut managed,
        Some(&edited),
        &edited,
        &ignored,
        &writer("idle"),
    )
    .unwrap();
    assert!(fields(&managed, "idle").is_empty());
}

#[test]
fn apply_conflicts_force_and_removal() {
    let t = cm();
    let ignored = Ignored::identity();
    let mut managed = ManagedFields::default();
    let config_a = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                          "data": {"k": "a", "only-a": "1"}});
    let live = apply(
        &t,
        &mut managed,
        None,
        &config_a,
        &ignored,
        &writer("a"),
        false,
    )
    .unwrap();
    assert_eq!(live["data"], json!({"k": "a", "only-a": "1"}));
    assert_eq!(fields(&managed, "a"), [".data.k", ".data.only-a"]);

    // Applying the same value is shared ownership, not a conflict.
    let same = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "a"}});
    let live = apply(
        &t,
        &mut managed,
        Some(live.clone()),
        &same,
        &ignored,
        &writer("b"),
        false,
    )
    .unwrap();
    assert_eq!(fields(&managed, "b"), [".data.k"]);
    assert_eq!(fields(&managed, "a"), [".data.k", ".data.only-a"]);

    // A different value is a conflict with both owners.
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "c"}});
    let err = apply(
        &t,
        &mut managed.clone(),
        Some(live.clone()),
        &other,
        &ignored,
        &writer("c"),
        false,
    )
    .unwrap_err();
    let Error::Conflicts(conflicts) = &err else {
        panic!("{err}")
    };
    assert_eq!(conflicts.len(), 2);
    assert_eq!(
        err.to_string(),
        "Apply failed with 2 conflicts: conflicts with \"a\":\n- .data.k\nconflicts with \"b\":\n- .data.k"
    );
    let live = apply(
        &t,
        &mut managed,
        Some(live.clone()),
        &other,
        &ignored,
        &writer("c"),
        true,
    )
    .unwrap();
    assert_eq!(live["data"]["k"], "c");
    assert_eq!(fields(&managed, "a"), [".data.only-a"]);
    assert!(fields(&managed, "b").is_empty());

    // `a` stops applying only-a: it is removed, as nobody else owns it.
    let shrunk =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}});
    let live = apply(
        &t,
        &mut managed,
        Some(live.clone()),
        &shrunk,
        &ignored,
        &writer("a"),
        false,
    )
    .unwrap();
    assert_eq!(live["data"], json!({"k": "c"}));
}

#[test]
fn update_conflicts_name_the_version() {
    let t = cm();
    let ignored = Ignored::identity();
    let mut managed = ManagedFields::default();
    let created = json!({"metadata": {"name": "c"}, "data": {"k": "1"}});
    update(
        &t,
        &mut managed,
        None,
        &created,
        &ignored,
        &writer("kubectl-client-side-apply"),
    )
    .unwrap();
    let config = json!({"metadata": {"name": "c"}, "data": {"k": "2"}});
    let err = apply(
        &t,
        &mut managed,
        Some(created.clone()),
        &config,
        &ignored,
        &writer("kubectl"),
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.k"
    );
}

#[test]
fn first_apply_on_an_untracked_object_sees_its_fields_owned() {
    let t = cm();
    let live = json!({"metadata": {"name": "c"}, "data": {"k": "1"}});
    let mut managed = ManagedFields::default();
    let config = json!({"metadata": {"name": "c"}, "data": {"k": "2"}});
    let err = apply(
        &t,
        &mut managed,
        Some(live.clone()),
        &config,
        &Ignored::identity(),
        &writer("x"),
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains(BEFORE_FIRST_APPLY), "{err}");
}

#[test]
fn status_is_not_owned_through_the_resource() {
    let t = Typed::for_kind(Schema::upstream(), "v1", "Pod").unwrap();
    let mut managed = ManagedFields::default();
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]},
                     "status": {"phase": "Pending"}});
    update(
        &t,
        &mut managed,
        None,
        &pod,
        &Ignored::identity().with_top_level(&["status"]),
        &writer("m"),
    )
    .unwrap();
    let owned = fields(&managed, "m");
    assert!(owned.iter().all(|p| !p.starts_with(".status")), "{owned:?}");
    assert!(owned.contains(&r#".spec.containers[name="c"].image"#.to_string()));
    let mut status = ManagedFields::default();
    update(
        &t,
        &mut status,
        Some(&pod),
        &json!({"metadata": {"name": "p"}, "spec": {}, "status": {"phase": "Running"}}),
        &Ignored::identity().keeping_only(&["status"]),
        &writer("kubelet"),
    )
    .unwrap();
    assert_eq!(fields(&status, "kubelet"), [".status.phase"]);
}

#[test]
fn update_entries_are_capped() {
    let t = cm();
    let mut managed = ManagedFields::default();
    let mut old = json!({"metadata": {"name": "c"}});
    for i in 0..12 {
        let mut new = old.clone();
        new["data"] = json!({});
        new["data"][format!("k{i}")] = json!("v");
        for j in 0..i {
            new["data"][format!("k{j}")] = json!("v");
        }
        let name: &'static str = Box::leak(format!("m{i:02}").into_boxed_str());
        let now: &'static str = Box::leak(format!("2026-11-23T16:00:{i:02}Z").into_boxed_str());
        let w = Writer {
            now,
            ..writer(name)
        };
        update(&t, &mut managed, Some(&old), &new, &Ignored::identity(), &w).unwrap();
        old = new;
    }
    assert_eq!(managed.entries.len(), MAX_UPDATE_MANAGERS);
    assert!(managed.entries.iter().any(|e| e.manager == ANCIENT_CHANGES));
    let round: Value = managed.encode().unwrap();
    // The encoding is in upstream's order (the oldest time first): the same entries.
    let decoded = ManagedFields::decode(Some(&round)).unwrap();
    assert_eq!(decoded.encode().unwrap(), round);
    assert_eq!(decoded.entries.len(), managed.entries.len());
    assert!(managed.entries.iter().all(|e| decoded.entries.contains(e)));
    assert_eq!(decoded.entries[0].manager, ANCIENT_CHANGES);
}

/// Entries are written in upstream's order: by operation, time, manager, apiVersion and
/// subresource, whatever order they were recorded in.
#[test]
fn entries_are_encoded_in_upstreams_order() {
    let entry = |manager: &str, operation: &str, time: &str, subresource: &str| {
        json!({"manager": manager, "operation": operation, "apiVersion": "v1",
            "time": time, "fieldsType": "FieldsV1", "subresource": subresource,
            "fieldsV1": {"f:data": {"f:k": {}}}})
    };
    let recorded = json!([
        entry("kubelet", "Update", "2026-11-23T16:00:00Z", "status"),
        entry("kubectl", "Update", "2026-11-23T16:00:05Z", ""),
        entry(
            "debugger",
            "Update",
            "2026-11-23T16:00:00Z",
            "ephemeralcontainers"
        ),
        entry("applier", "Apply", "2026-11-23T16:00:09Z", ""),
        entry("kubelet", "Update", "2026-11-23T16:00:00Z", ""),
    ]);
    let managed = ManagedFields::decode(Some(&recorded)).unwrap();
    let encoded = managed.encode().unwrap();
    let order: Vec<(&str, &str)> = encoded
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap(),
                e.get("subresource").and_then(Value::as_str).unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("applier", ""),
            ("debugger", "ephemeralcontainers"),
            ("kubelet", ""),
            ("kubelet", "status"),
            ("kubectl", ""),
        ]
    );
}

/// [`created`] writes what [`update`] from nothing, then [`ManagedFields::encode`], write.
#[test]
fn a_create_is_recorded_as_an_update_from_nothing_would_be() {
    let pod = Typed::for_kind(Schema::upstream(), "v1", "Pod").unwrap();
    let status_apart = Ignored::identity().with_top_level(&["status"]);
    let status_only = Ignored::identity().keeping_only(&["status"]);
    let through_update = |t: &Typed<'_>, new: &Value, ignored: &Ignored, w: &Writer<'_>| {
        let mut managed = ManagedFields::default();
        update(t, &mut managed, None, new, ignored, w).map(|()| managed.encode())
    };
    let docs = [
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "d", "uid": "u", "generateName": "p-",
                "labels": {"app": "web", "": "empty key"}, "annotations": {},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                    "uid": "r1", "controller": true}],
                "finalizers": ["a", "b", "a"]},
            "spec": {
                "containers": [
                    {"name": "app", "image": "nginx", "args": ["-v", "-v"],
                        "ports": [{"containerPort": 80, "protocol": "TCP"},
                            {"containerPort": 80, "protocol": "UDP"}, {"containerPort": 81}],
                        "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}}},
                            {"name": "A", "value": "dup"}],
                        "resources": {"limits": {"cpu": "1"}, "requests": {}},
                        "securityContext": {}, "volumeMounts": []},
                    {"name": "side", "image": "busybox", "stdin": null}],
                "volumes": [{"name": "v", "projected": {"sources": [{"configMap": {"name": "c",
                    "items": [{"key": "k", "path": "p"}]}}]}}],
                "tolerations": [{"key": "k", "operator": "Exists"}, {"operator": "Exists"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "In",
                        "values": ["a"]}]}]}}},
                "nodeSelector": {"disk": "ssd"},
                "securityContext": {},
                "restartPolicy": "Always"},
            "status": {"phase": "Pending"},
            "unknownTop": {"a": 1}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare"}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": null, "spec": null,
            "status": [], "extra": null}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {},
            "status": {}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": "not a struct", "status": {"conditions": [{"type": "Ready"}]}}),
        json!({"kind": "Pod", "metadata": {}, "spec": {"containers": "not a list"}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": [], "spec": {"containers": []}}),
        json!("not an object"),
    ];
    let writers = [
        writer("kubectl"),
        Writer {
            subresource: "status",
            ..writer("kubelet")
        },
    ];
    for doc in &docs {
        for ignored in [&Ignored::identity(), &status_apart, &status_only] {
            for w in &writers {
                let expected = through_update(&pod, doc, ignored, w).unwrap();
                assert_eq!(created(&pod, doc, ignored, w).unwrap(), expected, "{doc}");
            }
        }
    }
    let t = cm();
    let doc = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
        "data": {"x": "1"}, "binaryData": {}, "immutable": false});
    let w = writer("kubectl");
    let expected = through_update(&t, &doc, &Ignored::identity(), &w).unwrap();
    assert!(expected.is_some());
    assert_eq!(
        created(&t, &doc, &Ignored::identity(), &w).unwrap(),
        expected
    );
    // A list rule broken: both refuse.
    let broken = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"image": "no name"}, 5]}});
    assert_eq!(
        through_update(&pod, &broken, &status_apart, &w).is_err(),
        created(&pod, &broken, &status_apart, &w).is_err()
    );
}

#[test]
fn an_update_worked_out_in_place_matches_the_sets() {
    // Stored entries: a creator owning the pod's spec and labels, a controller owning one
    // annotation and a list item of its own, and the updater's own earlier entry.
    let t = Typed::for_kind(Schema::upstream(), "v1", "Pod").unwrap();
    let ignored = Ignored::identity().with_top_level(&["status"]);
    let stored = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "a", "gen": "1"},
            "annotations": {"owner": "ctl"}},
        "spec": {"containers": [{"name": "web", "image": "i:1"}, {"name": "side", "image": "s:1"}]},
        "status": {"phase": "Pending"}});
    let mut managed = ManagedFields::default();
    let mut creation = stored.clone();
    creation["metadata"]["annotations"] = json!(null);
    creation["spec"]["containers"] = json!([{"name": "web", "image": "i:1"}]);
    update(
        &t,
        &mut managed,
        None,
        &creation,
        &ignored,
        &writer("creator"),
    )
    .unwrap();
    let mut step = creation.clone();
    step["metadata"]["annotations"] = json!({"owner": "ctl"});
    step["spec"]["containers"] = stored["spec"]["containers"].clone();
    update(
        &t,
        &mut managed,
        Some(&creation),
        &step,
        &ignored,
        &writer("ctl"),
    )
    .unwrap();
    let mut own = step.clone();
    own["metadata"]["labels"]["gen"] = json!("0");
    update(
        &t,
        &mut managed,
        Some(&step),
        &own,
        &ignored,
        &writer("updater"),
    )
    .unwrap();
    let entries = managed.encode().unwrap();
    let stored = own;

    let edit = |f: &dyn Fn(&mut Value)| {
        let mut new = stored.clone();
        f(&mut new);
        new
    };
    let cases: Vec<(&str, Value, bool)> = vec![
        (
            "relabel what it owns",
            edit(&|n| n["metadata"]["labels"]["gen"] = json!("2")),
            true,
        ),
        (
            "status only",
            edit(&|n| n["status"]["phase"] = json!("Running")),
            true,
        ),
        ("nothing", stored.clone(), true),
        (
            "a label the creator owns",
            edit(&|n| n["metadata"]["labels"]["app"] = json!("b")),
            false,
        ),
        (
            "a new label",
            edit(&|n| n["metadata"]["labels"]["new"] = json!("x")),
            false,
        ),
        (
            "another's list item",
            edit(&|n| n["spec"]["containers"][1]["image"] = json!("s:2")),
            false,
        ),
        (
            "a removal",
            edit(&|n| n["metadata"]["annotations"] = json!(null)),
            false,
        ),
    ];
    for manager in ["updater", "stranger"] {
        for (what, new, fast) in &cases {
            let w = Writer {
                now: "2026-11-24T00:00:00Z",
                ..writer(manager)
            };
            let changes = Changes::of(&t, Some(&stored), new, &ignored).unwrap();
            let in_place = changes.record_in_place(&entries, &w);
            let mut expected = ManagedFields::decode(Some(&entries)).unwrap();
            Changes::of(&t, Some(&stored), new, &ignored)
                .unwrap()
                .record(&mut expected, &w);
            let expected = expected.encode();
            // The stranger has no entry: only writes changing nothing stay in place.
            let fast = *fast && (manager == "updater" || *new == stored || what == &"status only");
            assert_eq!(in_place.is_some(), fast, "{manager}: {what}");
            if let Some(in_place) = in_place {
                assert_eq!(Some(in_place), expected, "{manager}: {what}");
            }
        }
    }
}

#[test]
fn stripping_drops_identity_type_and_ignored_fields_only() {
    let field = |name: &str| PathElement::Field(name.to_string());
    let set_of = |paths: &[&[&str]]| {
        let mut set = FieldSet::new();
        for path in paths {
            let path: Vec<PathElement> = path.iter().map(|p| field(p)).collect();
            set.insert(&path);
        }
        set
    };
    let paths =
        |set: &FieldSet| -> Vec<String> { set.paths().iter().map(|p| p.to_string()).collect() };
    let all: &[&[&str]] = &[
        &["apiVersion"],
        &["kind"],
        &["metadata"],
        &["metadata", "name"],
        &["metadata", "uid"],
        &["metadata", "managedFields"],
        &["metadata", "labels", "a"],
        &["spec", "x"],
        &["status", "phase"],
    ];
    let mut set = set_of(all);
    Ignored::identity()
        .with_top_level(&["status"])
        .strip(&mut set);
    assert_eq!(
        paths(&set),
        paths(&set_of(&[&["metadata", "labels", "a"], &["spec", "x"]]))
    );

    let mut set = set_of(all);
    Ignored::identity()
        .keeping_only(&["status"])
        .strip(&mut set);
    assert_eq!(paths(&set), paths(&set_of(&[&["status", "phase"]])));

    // Nothing of metadata left but its own membership: it goes.
    let mut set = set_of(&[&["metadata"], &["metadata", "resourceVersion"], &["spec"]]);
    Ignored::identity().strip(&mut set);
    assert_eq!(paths(&set), paths(&set_of(&[&["spec"]])));

    let mut empty = FieldSet::new();
    Ignored::identity().strip(&mut empty);
    assert!(empty.is_empty());
}
