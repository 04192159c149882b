use super::*;
use serde_json::json;

fn codec() -> Codec<'static> {
    Codec::default()
}

fn round_trip(doc: Value) {
    let body = codec().encode_object(&doc).unwrap();
    assert!(body.starts_with(MAGIC));
    let back = codec().decode_object(&body).unwrap();
    assert_eq!(back, doc);
    direct_agrees(&body);
}

/// Whether the direct decoder took `body`; when it does, its JSON is the tree's document
/// (and the tree decodes the body without error).
fn direct_agrees(body: &[u8]) -> bool {
    let Some(json) = codec().decode_object_json(body) else {
        return false;
    };
    let direct: Value = serde_json::from_slice(&json).expect("the direct decoder writes JSON");
    let tree = codec().decode_object(body);
    assert!(
        matches!(&tree, Ok(doc) if *doc == direct),
        "direct: {direct}\ntree: {tree:?}"
    );
    true
}

fn big_pod() -> Value {
    json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": "p", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
            "generation": 1,
            "creationTimestamp": "2026-11-22T07:00:00Z",
            "labels": {"app": "web", "node-role.kubernetes.io/control-plane": ""},
            "annotations": {"a": "b"},
            "finalizers": ["example.com/f"],
            "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                "time": "2026-11-22T07:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}}],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                "uid": "u-0", "controller": true, "blockOwnerDeletion": false}]
        },
        "spec": {
            "volumes": [
                {"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420, "optional": true}},
                {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}
            ],
            "containers": [{
                "name": "app", "image": "nginx", "args": ["", "-v"],
                "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
                "env": [{"name": "K", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "2"}},
                "livenessProbe": {"httpGet": {"path": "/", "port": "http", "scheme": "HTTP"},
                    "periodSeconds": 10, "failureThreshold": 3},
                "readinessProbe": {"tcpSocket": {"port": 8080}},
                "securityContext": {"runAsUser": 0, "privileged": false,
                    "capabilities": {"add": ["NET_ADMIN"]}},
                "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg", "readOnly": true}]
            }],
            "terminationGracePeriodSeconds": 30,
            "activeDeadlineSeconds": 0,
            "automountServiceAccountToken": false,
            "nodeName": "n1",
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                "tolerationSeconds": 300}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                    "values": ["a", "b"]}]}]}}},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}}}],
            "priority": 0,
            "overhead": {"memory": "10Mi"}
        },
        "status": {"phase": "Running", "startTime": "2026-11-22T07:00:01Z", "podIP": "10.0.0.5",
            "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": "2026-11-22T07:00:02Z"}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                "image": "nginx", "imageID": "sha256:abc",
                "state": {"running": {"startedAt": "2026-11-22T07:00:03Z"}}}]}
    })
}

#[test]
fn a_pod_survives_every_special_type_and_inline_struct() {
    round_trip(big_pod());
}

#[test]
fn discovery_verbs_are_a_wrapped_list() {
    round_trip(json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1",
        "resources": [{"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod",
            "verbs": ["create", "delete", "get", "list", "watch"], "shortNames": ["po"]}]
    }));
}

#[test]
fn user_extra_values_are_wrapped_lists() {
    round_trip(json!({
        "kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": "2026-11-24T06:00:00Z"},
        "status": {"userInfo": {"username": "u", "groups": ["g"],
            "extra": {"authentication.kubernetes.io/credential-id": ["X509SHA256=ab"]}}}
    }));
}

#[test]
fn other_groups_lists_status_and_micro_times() {
    round_trip(
        json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s"},
        "data": {"k": "aGVsbG8="}, "type": "Opaque", "immutable": true}),
    );
    round_trip(
        json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
        "metadata": {"name": "l"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
            "renewTime": "2026-11-22T07:00:00.123456Z"}}),
    );
    round_trip(
        json!({"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1",
        "metadata": {"name": "fast"}, "provisioner": "p", "allowVolumeExpansion": true,
        "parameters": {"type": "ssd"}, "reclaimPolicy": "Retain",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]}),
    );
    round_trip(
        json!({"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "5Gi"}, "hostPath": {"path": "/data"},
            "accessModes": ["ReadWriteOnce"]}}),
    );
    round_trip(
        json!({"kind": "PodDisruptionBudget", "apiVersion": "policy/v1",
        "metadata": {"name": "pdb"}, "spec": {"minAvailable": "50%"}}),
    );
    round_trip(
        json!({"kind": "PodDisruptionBudget", "apiVersion": "policy/v1",
        "metadata": {"name": "pdb"}, "spec": {"maxUnavailable": 1}}),
    );
    round_trip(
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "nope", "reason": "NotFound", "details": {"name": "x", "kind": "pods"},
        "code": 404}),
    );
    round_trip(json!({"kind": "Event", "apiVersion": "events.k8s.io/v1",
        "metadata": {"name": "e", "namespace": "default"},
        "eventTime": "2026-11-22T07:00:00.000001Z", "reportingController": "c",
        "reportingInstance": "i", "action": "Bind", "reason": "Scheduled", "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p"}, "deprecatedCount": 2}));
}

#[test]
fn lists_encode_item_by_item() {
    let codec = codec();
    let items = [
        br#"{"metadata":{"name":"a"},"provisioner":"p"}"#.as_slice(),
        br#"{"metadata":{"name":"b"},"provisioner":"q"}"#.as_slice(),
    ];
    let meta = json!({"resourceVersion": "9", "continue": "abc", "remainingItemCount": 3});
    let body = codec
        .encode_list(
            "storage.k8s.io/v1",
            "StorageClassList",
            "StorageClass",
            &meta,
            items,
        )
        .unwrap();
    let back = codec.decode_object(&body).unwrap();
    assert_eq!(
        back,
        json!({"kind": "StorageClassList", "apiVersion": "storage.k8s.io/v1",
            "metadata": {"resourceVersion": "9", "continue": "abc", "remainingItemCount": 3},
            "items": [{"metadata": {"name": "a"}, "provisioner": "p"},
                {"metadata": {"name": "b"}, "provisioner": "q"}]})
    );
}

#[test]
fn watch_frames_carry_an_event_around_the_object() {
    let codec = codec();
    let pod = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}});
    let frame = codec.encode_watch_frame("ADDED", &pod).unwrap();
    let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(len, frame.len() - 4);
    // The frame is a bare WatchEvent, as client-go's raw decoder reads it: no magic.
    assert!(!frame[4..].starts_with(MAGIC));
    assert!(codec.decode_object(&frame[4..]).is_err());
    let event = codec.decode_watch_event(&frame[4..]).unwrap();
    assert_eq!(event, json!({"type": "ADDED", "object": pod}));
    // Field 2 (object) holds a RawExtension whose raw is the whole body of the object.
    let body = codec.encode_object(&pod).unwrap();
    let mut expected = Vec::new();
    put_bytes_field(&mut expected, 1, b"ADDED");
    let mut raw_extension = Vec::new();
    put_bytes_field(&mut raw_extension, 1, &body);
    put_bytes_field(&mut expected, 2, &raw_extension);
    assert_eq!(&frame[4..], &expected[..]);
}

#[test]
fn go_style_bodies_drop_empty_strings_and_zero_times() {
    // What a Go client writes for a ConfigMap: every non-pointer field, empty or not.
    let mut meta = Vec::new();
    put_bytes_field(&mut meta, 1, b"cm");
    put_bytes_field(&mut meta, 2, b"");
    put_bytes_field(&mut meta, 3, b"");
    put_key(&mut meta, 7, 0);
    put_varint(&mut meta, 0);
    put_bytes_field(&mut meta, 8, b"");
    let mut raw = Vec::new();
    put_bytes_field(&mut raw, 1, &meta);
    let mut entry = Vec::new();
    put_bytes_field(&mut entry, 1, b"k");
    put_bytes_field(&mut entry, 2, b"");
    put_bytes_field(&mut raw, 2, &entry);
    let body = encode_envelope("v1", "ConfigMap", &raw);
    assert_eq!(
        codec().decode_object(&body).unwrap(),
        json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "cm"}, "data": {"k": ""}})
    );
    assert!(direct_agrees(&body));
}

#[test]
fn the_direct_decoder_leaves_out_of_order_bodies_to_the_tree() {
    // metadata.name given twice (the last wins), and a list split by another field.
    let mut meta = Vec::new();
    put_bytes_field(&mut meta, 1, b"first");
    put_bytes_field(&mut meta, 1, b"second");
    let mut raw = Vec::new();
    put_bytes_field(&mut raw, 1, &meta);
    let body = encode_envelope("v1", "ConfigMap", &raw);
    assert!(codec().decode_object_json(&body).is_none());
    assert_eq!(
        codec().decode_object(&body).unwrap()["metadata"]["name"],
        "second"
    );
    let mut meta = Vec::new();
    put_bytes_field(&mut meta, 1, b"cm");
    put_bytes_field(&mut meta, 14, b"one"); // finalizers
    put_bytes_field(&mut meta, 2, b"gen-");
    put_bytes_field(&mut meta, 14, b"two");
    let mut raw = Vec::new();
    put_bytes_field(&mut raw, 1, &meta);
    let body = encode_envelope("v1", "ConfigMap", &raw);
    assert!(codec().decode_object_json(&body).is_none());
    assert_eq!(
        codec().decode_object(&body).unwrap()["metadata"]["finalizers"],
        json!(["one", "two"])
    );
    // Map entries out of key order.
    let mut raw = Vec::new();
    for key in [b"b", b"a"] {
        let mut entry = Vec::new();
        put_bytes_field(&mut entry, 1, key);
        put_bytes_field(&mut entry, 2, b"v");
        put_bytes_field(&mut raw, 2, &entry);
    }
    let body = encode_envelope("v1", "ConfigMap", &raw);
    assert!(codec().decode_object_json(&body).is_none());
    // In order, the same body is taken.
    let mut raw = Vec::new();
    for key in [b"a", b"b"] {
        let mut entry = Vec::new();
        put_bytes_field(&mut entry, 1, key);
        put_bytes_field(&mut entry, 2, b"v");
        put_bytes_field(&mut raw, 2, &entry);
    }
    assert!(direct_agrees(&encode_envelope("v1", "ConfigMap", &raw)));
}

#[test]
fn malformed_bodies_are_errors() {
    let codec = codec();
    assert!(matches!(
        codec.decode_object(b"{\"kind\":\"Pod\"}"),
        Err(Error::NoMagic)
    ));
    let odd = encode_envelope("example.com/v1", "Widget", b"");
    assert!(matches!(
        codec.decode_object(&odd),
        Err(Error::UnknownKind { .. })
    ));
    let good = codec.encode_object(&big_pod()).unwrap();
    for cut in [5, 20, good.len() / 2, good.len() - 1] {
        assert!(codec.decode_object(&good[..cut]).is_err(), "cut at {cut}");
    }
    // metadata (field 1) sent as a varint instead of a message.
    let wrong = encode_envelope("v1", "Pod", &[0x08, 0x01]);
    assert!(matches!(codec.decode_object(&wrong), Err(Error::Decode(_))));
    let err = codec
        .encode_object(&json!({"kind": "Pod", "apiVersion": "v1", "spec": {"containers": "many"}}))
        .unwrap_err();
    assert_eq!(err.to_string(), "spec.containers: expected an array");
}

/// k8s-rs-pb's generated rust-protobuf types, compiled from the same schemas by another
/// generator and runtime, decode what we write and write what we decode.
mod oracle {
    use super::*;
    use k8s_rs_pb::api::core::v1 as core;
    use protobuf::Message as _;

    fn raw_of(doc: &Value) -> Vec<u8> {
        decode_envelope(&codec().encode_object(doc).unwrap())
            .unwrap()
            .raw
    }

    #[test]
    fn the_independent_decoder_reads_our_pod() {
        let doc = big_pod();
        let pod = core::Pod::parse_from_bytes(&raw_of(&doc)).unwrap();
        let meta = pod.metadata.as_ref().unwrap();
        assert_eq!(meta.name(), "p");
        assert_eq!(
            meta.labels
                .get("node-role.kubernetes.io/control-plane")
                .map(String::as_str),
            Some("")
        );
        assert_eq!(meta.creationTimestamp.seconds(), 1_795_330_800);
        assert!(meta.ownerReferences[0].controller());
        let fields = meta.managedFields[0].fieldsV1.Raw();
        let fields: Value = serde_json::from_slice(fields).unwrap();
        assert_eq!(fields, json!({"f:metadata": {"f:labels": {"f:app": {}}}}));
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.terminationGracePeriodSeconds(), 30);
        assert!(spec.has_activeDeadlineSeconds());
        assert!(!spec.automountServiceAccountToken());
        assert!(spec.has_automountServiceAccountToken());
        let c = &spec.containers[0];
        assert_eq!(c.args, ["", "-v"]);
        assert_eq!(c.ports[0].containerPort(), 80);
        assert_eq!(c.resources.requests["cpu"].string(), "100m");
        let probe = c.livenessProbe.handler.httpGet.port.as_ref().unwrap();
        assert_eq!((probe.type_(), probe.strVal()), (1, "http"));
        assert_eq!(c.readinessProbe.handler.tcpSocket.port.intVal(), 8080);
        let volume = &spec.volumes[0];
        assert_eq!(
            volume.volumeSource.configMap.localObjectReference.name(),
            "settings"
        );
        assert_eq!(volume.volumeSource.configMap.defaultMode(), 420);
        let status = pod.status.as_ref().unwrap();
        assert_eq!(
            status.containerStatuses[0]
                .state
                .running
                .startedAt
                .seconds(),
            1_795_330_803
        );
    }

    #[test]
    fn bytes_the_independent_encoder_writes_decode_to_the_same_json() {
        let doc = big_pod();
        let pod = core::Pod::parse_from_bytes(&raw_of(&doc)).unwrap();
        let theirs = pod.write_to_bytes().unwrap();
        let mut back = codec().decode_raw("v1", "Pod", &theirs).unwrap();
        back["kind"] = json!("Pod");
        back["apiVersion"] = json!("v1");
        assert_eq!(back, doc);
        // The direct decoder agrees or declines (this encoder writes maps in hash order).
        direct_agrees(&encode_envelope("v1", "Pod", &theirs));
    }

    #[test]
    fn an_object_built_field_by_field_decodes() {
        let mut cm = core::ConfigMap::new();
        let meta = cm.metadata.mut_or_insert_default();
        meta.set_name("settings".into());
        meta.set_namespace("default".into());
        meta.labels.insert("app".into(), "web".into());
        meta.creationTimestamp
            .mut_or_insert_default()
            .set_seconds(1_795_330_800);
        cm.data.insert("k".into(), "v".into());
        cm.binaryData.insert("b".into(), vec![0, 1, 2]);
        cm.set_immutable(true);
        let value = codec()
            .decode_raw("v1", "ConfigMap", &cm.write_to_bytes().unwrap())
            .unwrap();
        assert_eq!(
            value,
            json!({"metadata": {"name": "settings", "namespace": "default",
                "labels": {"app": "web"}, "creationTimestamp": "2026-11-22T07:00:00Z"},
                "data": {"k": "v"}, "binaryData": {"b": "AAEC"}, "immutable": true})
        );
    }
}

/// Generated objects survive JSON → protobuf → JSON; hostile bytes never panic the decoder.
mod properties {
    use super::*;
    use proptest::collection::{btree_map, vec};
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> {
        "[a-z][a-z0-9-]{0,20}"
    }

    fn text() -> impl Strategy<Value = String> {
        // Any Unicode, empty strings included (kept inside maps and lists).
        any::<String>()
    }

    fn time() -> impl Strategy<Value = String> {
        (0i64..4_102_444_800).prop_map(|s| {
            jiff::Timestamp::from_second(s)
                .unwrap()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        })
    }

    fn int_or_string() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i32>().prop_map(Value::from),
            name().prop_map(Value::from)
        ]
    }

    fn metadata() -> impl Strategy<Value = Value> {
        (
            name(),
            btree_map("[a-z./-]{1,30}", text(), 0..5),
            btree_map("[a-z./-]{1,30}", text(), 0..3),
            time(),
            1i64..i64::MAX,
            vec(name(), 0..3),
        )
            .prop_map(
                |(name, labels, annotations, created, generation, finalizers)| {
                    let mut m = json!({"name": name, "creationTimestamp": created,
                    "generation": generation, "uid": "u", "resourceVersion": "1"});
                    if !labels.is_empty() {
                        m["labels"] = json!(labels);
                    }
                    if !annotations.is_empty() {
                        m["annotations"] = json!(annotations);
                    }
                    if !finalizers.is_empty() {
                        m["finalizers"] = json!(finalizers);
                    }
                    m
                },
            )
    }

    fn container() -> impl Strategy<Value = Value> {
        (
            name(),
            vec(text(), 0..4),
            vec((1i32..65536, any::<bool>()), 0..3),
            prop_oneof!["[0-9]{1,4}m", "[0-9]{1,3}Gi", "[0-9]{1,4}"],
            int_or_string(),
            any::<i64>(),
            any::<bool>(),
        )
            .prop_map(|(name, args, ports, cpu, probe_port, user, privileged)| {
                let mut c = json!({"name": name, "image": "img",
                    "resources": {"requests": {"cpu": cpu}},
                    "livenessProbe": {"httpGet": {"port": probe_port}, "periodSeconds": 3},
                    "securityContext": {"runAsUser": user, "privileged": privileged}});
                if !args.is_empty() {
                    c["args"] = json!(args);
                }
                if !ports.is_empty() {
                    c["ports"] = ports
                        .iter()
                        .map(|(p, udp)| json!({"containerPort": p, "protocol": if *udp { "UDP" } else { "TCP" }}))
                        .collect();
                }
                c
            })
    }

    fn pod() -> impl Strategy<Value = Value> {
        (
            metadata(),
            vec(container(), 1..3),
            proptest::option::of(0i64..100_000),
            time(),
        )
            .prop_map(|(metadata, containers, grace, started)| {
                let mut spec = json!({"containers": containers});
                if let Some(g) = grace {
                    spec["terminationGracePeriodSeconds"] = json!(g);
                }
                json!({"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "spec": spec,
                    "status": {"phase": "Running", "startTime": started}})
            })
    }

    fn config_map() -> impl Strategy<Value = Value> {
        (
            metadata(),
            btree_map("[A-Za-z0-9._-]{1,20}", text(), 0..6),
            btree_map("[A-Za-z0-9._-]{1,20}", vec(any::<u8>(), 0..20), 0..3),
        )
            .prop_map(|(metadata, data, binary)| {
                let mut cm = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": metadata});
                if !data.is_empty() {
                    cm["data"] = json!(data);
                }
                if !binary.is_empty() {
                    let encoded: std::collections::BTreeMap<_, _> = binary
                        .iter()
                        .map(|(k, v)| (k.clone(), B64.encode(v)))
                        .collect();
                    cm["binaryData"] = json!(encoded);
                }
                cm
            })
    }

    /// An edit of a pod that the encoding may or may not lose, and where it lands.
    fn edit() -> impl Strategy<Value = (u8, String)> {
        (0u8..14, name())
    }

    /// Applies edit `which` (with `word`) to `doc`.
    fn apply(doc: &mut Value, (which, word): &(u8, String)) {
        let spec = &mut doc["spec"];
        let container = &mut spec["containers"][0];
        match which {
            0 => container["args"] = json!([]),
            1 => container["args"] = json!([word, ""]),
            2 => doc["metadata"]["labels"] = json!({}),
            3 => doc["metadata"]["labels"] = json!({word.as_str(): null}),
            4 => doc["metadata"]["annotations"] = Value::Null,
            5 => doc["metadata"]["generateName"] = json!(""),
            6 => doc["metadata"]["generation"] = json!(0),
            7 => container[format!("x{word}")] = json!(1),
            8 => container["resources"]["requests"] = json!({}),
            // Inline structs: a volume's source members sit beside its name.
            9 => spec["volumes"] = json!([{"name": word, "configMap": {"name": word}}]),
            10 => spec["volumes"] = json!([{"name": word, "configMap": {"name": ""}}]),
            11 => spec["volumes"] = json!([{"name": word, "x": 1, "emptyDir": {}}]),
            12 => spec["volumes"] = json!([{"name": word, "emptyDir": {"medium": word}}]),
            _ => doc[format!("x{word}")] = json!("x"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Encoding says it is exact when, and only when, decoding gives the document back.
        #[test]
        fn the_encoding_knows_when_it_is_exact(mut doc in pod(), edits in vec(edit(), 0..3)) {
            for e in &edits {
                apply(&mut doc, e);
            }
            let (body, exact) = codec().encode_object_exact(&doc).unwrap();
            let back = codec().decode_object(&body).unwrap();
            prop_assert_eq!(exact, back == doc, "{}", doc);
        }

        #[test]
        fn pods_round_trip(doc in pod()) {
            let body = codec().encode_object(&doc).unwrap();
            prop_assert_eq!(codec().decode_object(&body).unwrap(), doc);
            prop_assert!(direct_agrees(&body));
        }

        #[test]
        fn config_maps_round_trip(doc in config_map()) {
            let body = codec().encode_object(&doc).unwrap();
            prop_assert_eq!(codec().decode_object(&body).unwrap(), doc);
            prop_assert!(direct_agrees(&body));
        }

        #[test]
        fn random_bytes_never_panic(raw in vec(any::<u8>(), 0..512)) {
            let body = encode_envelope("v1", "Pod", &raw);
            let _ = codec().decode_object(&body);
            direct_agrees(&body);
        }

        #[test]
        fn damaged_bodies_never_panic(doc in pod(), cuts in vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
            let mut body = codec().encode_object(&doc).unwrap();
            for (at, byte) in cuts {
                let i = at.index(body.len());
                body[i] = byte;
            }
            let _ = codec().decode_object(&body);
            direct_agrees(&body);
            let cut = body.len() / 2;
            let _ = codec().decode_object(&body[..cut]);
            direct_agrees(&body[..cut]);
        }
    }
}

#[test]
fn capitalised_proto_fields_keep_their_json_names() {
    // go-to-protobuf names these after the Go fields: `Webhooks`, `Port`.
    round_trip(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "t"},
        "webhooks": [{"name": "t.c.d", "clientConfig": {"url": "https://x/"}, "sideEffects": "None", "admissionReviewVersions": ["v1"]}],
    }));
    round_trip(json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}},
    }));
}

#[test]
fn crd_schemas_round_trip_with_their_either_or_fields() {
    round_trip(json!({
        "kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1",
        "metadata": {"name": "shops.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "shops", "kind": "Shop"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "color": {"type": "string", "default": "red", "enum": ["red", 7, {"x": [1]}]},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "closed": {"type": "object", "additionalProperties": false},
                    "tuple": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
                    "list": {"type": "array", "items": {"type": "string"}},
                    "deps": {"type": "object", "dependencies": {"a": ["b", "c"], "d": {"required": ["e"]}}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                             "x-kubernetes-embedded-resource": true, "x-kubernetes-map-type": "atomic"},
                    "port": {"x-kubernetes-int-or-string": true},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                              "items": {"$ref": "#/x"}},
                    "ruled": {"type": "object", "x-kubernetes-validations": [{"rule": "self.a > 0", "message": "m"}]}
                }
            }}}]
        }
    }));
}

#[test]
fn empty_pointer_strings_are_kept() {
    // `storageClassName: ""` asks for no class; an absent one for the default class.
    let claim = json!({"kind": "PersistentVolumeClaim", "apiVersion": "v1",
        "metadata": {"name": "c"},
        "spec": {"storageClassName": "", "volumeName": "",
            "accessModes": ["ReadWriteOnce"]}});
    let body = codec().encode_object(&claim).unwrap();
    let back = codec().decode_object(&body).unwrap();
    assert_eq!(back["spec"]["storageClassName"], "");
    // A plain string written empty is unset, as a Go client's JSON would omit it.
    assert!(back["spec"].get("volumeName").is_none(), "{back}");
    round_trip(
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}],
            "volumes": [{"name": "h", "hostPath": {"path": "/x", "type": ""}}]}}),
    );
}

/// `round_trips` says yes exactly when decoding the encoding gives the document back.
#[test]
fn round_trips_tells_which_documents_come_back_as_they_are() {
    let codec = Codec::new(Schema::upstream());
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"},
                     "creationTimestamp": "2026-12-02T05:00:00Z", "generation": 1},
        "spec": {"containers": [{"name": "c", "image": "nginx", "args": ["-v"],
                                 "resources": {"requests": {"cpu": "100m"}},
                                 "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
                 "automountServiceAccountToken": false, "priority": 0}
    });
    let back = |doc: &Value| {
        codec
            .decode_object(&codec.encode_object(doc).unwrap())
            .unwrap()
    };
    assert!(codec.round_trips(&pod));
    assert_eq!(back(&pod), pod);
    let changed = |edit: &dyn Fn(&mut Value)| {
        let mut doc = pod.clone();
        edit(&mut doc);
        doc
    };
    for lossy in [
        changed(&|d| d["spec"]["containers"][0]["args"] = json!([])),
        changed(&|d| d["metadata"]["labels"] = json!({})),
        changed(&|d| d["metadata"]["annotations"] = Value::Null),
        changed(&|d| d["metadata"]["generateName"] = json!("")),
        changed(&|d| d["metadata"]["generation"] = json!(0)),
        changed(&|d| d["spec"]["notAField"] = json!("x")),
        changed(&|d| d["spec"]["containers"][0]["resources"]["requests"] = json!({})),
    ] {
        assert!(!codec.round_trips(&lossy), "{lossy}");
        assert_ne!(back(&lossy), lossy, "the encoding does lose it: {lossy}");
    }
    // An empty string where it is a value comes back.
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": "c"}, "spec": {"storageClassName": ""}});
    assert!(codec.round_trips(&pvc));
    assert_eq!(back(&pvc), pvc);
}

/// Fields are written in field-number order in every message (as upstream writes them),
/// whatever the order of the JSON object's keys.
#[test]
fn fields_are_written_in_number_order() {
    fn check(schema: &Schema, index: usize, raw: &[u8]) {
        let message = schema.message(index);
        let mut r = Reader::new(raw);
        let mut last = 0;
        while let Some((number, wire)) = r.key().unwrap() {
            assert!(
                number >= last,
                "{}: field {number} after {last}",
                message.name
            );
            last = number;
            let field = message.field(number).unwrap();
            if wire != 2 {
                r.skip(wire).unwrap();
                continue;
            }
            let bytes = r.bytes().unwrap();
            if let (FieldType::Message(inner), Shape::Single | Shape::Repeated) =
                (field.ty, field.shape)
                && schema.message(inner).special.is_none()
            {
                check(schema, inner, bytes);
            }
        }
    }
    let schema = Schema::upstream();
    let doc = big_pod();
    let raw = decode_envelope(&codec().encode_object(&doc).unwrap())
        .unwrap()
        .raw;
    let pod = schema.kind("v1", "Pod").unwrap();
    check(schema, pod, &raw);
}
/// A message of more than 64 fields (no upstream one has; a schema built by hand may) is
/// written in number order and knows when it is exact, as the others.
#[test]
fn wide_messages_are_written_in_number_order() {
    let mut schema = Schema::upstream().subset(&[]);
    let fields = (1..=70)
        .map(|n| crate::schema::Field {
            name: format!("f{n}"),
            number: n,
            ty: FieldType::String,
            shape: Shape::Single,
            inline: false,
            zero_is_unset: false,
            empty_is_set: false,
            list_type: crate::schema::ListType::Atomic,
            atomic: false,
            patch: Default::default(),
            default: None,
        })
        .collect();
    let index = schema.push(crate::schema::Message {
        name: "test.Wide".into(),
        fields,
        special: None,
        atomic: false,
        members: Default::default(),
    });
    schema.add_kind("test/v1", "Wide", index);
    let codec = Codec::new(&schema);
    let mut doc = json!({"apiVersion": "test/v1", "kind": "Wide"});
    for n in [70, 3, 65, 1, 64, 12] {
        doc[format!("f{n}")] = json!(format!("v{n}"));
    }
    let (body, exact) = codec.encode_object_exact(&doc).unwrap();
    assert!(exact);
    assert_eq!(codec.decode_object(&body).unwrap(), doc);
    let raw = decode_envelope(&body).unwrap().raw;
    let mut r = Reader::new(&raw);
    let mut numbers = Vec::new();
    while let Some((number, wire)) = r.key().unwrap() {
        numbers.push(number);
        r.skip(wire).unwrap();
    }
    assert_eq!(numbers, [1, 3, 12, 64, 65, 70]);
    doc["notAField"] = json!("x");
    let (lossy, exact) = codec.encode_object_exact(&doc).unwrap();
    assert!(!exact);
    assert_eq!(lossy, body);
}
