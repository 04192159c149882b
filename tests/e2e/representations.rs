//! Representations: kubectl's Tables and protobuf bodies, every Accept form of the spec with
//! its fallbacks, 406 and 415, protobuf answers read by an independent decoder (k8s-rs-pb's
//! generated types), YAML, PartialObjectMetadata, and Table and protobuf watches.

use capstan_e2e::{RawResponse, kubectl};
use capstan_negotiation::protobuf::{Codec, MAGIC, decode_envelope};
use capstan_testing::TestServer;
use http::Method;
use protobuf::Message as _;
use serde_json::{Value, json};

use crate::{SC, admin, ok};

fn content_type(resp: &RawResponse) -> &str {
    resp.headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

fn storage_class(name: &str) -> Value {
    json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name, "labels": {"tier": "gold"}},
        "provisioner": "example.com/ssd", "allowVolumeExpansion": true,
        "parameters": {"type": "ssd"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_prints_the_servers_columns_and_sends_protobuf() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let dir = server.data_dir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let manifest = dir.join("sc.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: fast\n  annotations:\n    storageclass.kubernetes.io/is-default-class: \"true\"\nprovisioner: example.com/ssd\nreclaimPolicy: Retain\nvolumeBindingMode: WaitForFirstConsumer\nallowVolumeExpansion: true\n",
        )
        .unwrap();
        ok(kubectl(&kc, &["create", "-f", manifest.to_str().unwrap()]));
        let table = ok(kubectl(&kc, &["get", "sc"]));
        let mut lines = table.lines();
        let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(
            header,
            ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]
        );
        let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(
            &row[..6],
            ["fast", "(default)", "example.com/ssd", "Retain", "WaitForFirstConsumer", "true"]
        );
        let wide = ok(kubectl(&kc, &["get", "sc", "-o", "wide"]));
        assert!(wide.starts_with("NAME"), "{wide}");

        // kubectl's typed create commands send protobuf bodies.
        ok(kubectl(&kc, &["create", "namespace", "demo"]));
        ok(kubectl(&kc, &["-n", "demo", "create", "configmap", "settings", "--from-literal=a=1", "--from-literal=b=2"]));
        ok(kubectl(&kc, &["-n", "demo", "create", "secret", "generic", "creds", "--from-literal=user=admin"]));
        ok(kubectl(&kc, &["-n", "demo", "run", "web", "--image=nginx:1.27", "--labels=app=web"]));
        let cm: Value = serde_json::from_str(&ok(kubectl(&kc, &["-n", "demo", "get", "cm", "settings", "-o", "json"]))).unwrap();
        assert_eq!(cm["data"], json!({"a": "1", "b": "2"}));
        assert!(cm["metadata"].get("generation").is_none(), "{cm}");
        assert!(cm["metadata"].get("generateName").is_none(), "{cm}");
        let secret = ok(kubectl(&kc, &["-n", "demo", "get", "secret", "creds", "-o", "jsonpath={.data.user}"]));
        assert_eq!(secret, "YWRtaW4=");
        let pods = ok(kubectl(&kc, &["-n", "demo", "get", "pods", "-o", "wide"]));
        let header: Vec<&str> = pods.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(
            header,
            ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]
        );
        assert!(pods.lines().nth(1).unwrap().starts_with("web "), "{pods}");
        let cms = ok(kubectl(&kc, &["-n", "demo", "get", "cm", "settings"]));
        let row: Vec<&str> = cms.lines().nth(1).unwrap().split_whitespace().collect();
        assert_eq!(&row[..2], ["settings", "2"]);
        let namespaces = ok(kubectl(&kc, &["get", "ns", "demo"]));
        assert!(namespaces.lines().nth(1).unwrap().contains("Active"), "{namespaces}");
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_watches_tables() {
    let server = TestServer::start().await;
    let kc = server.kubeconfig_path();
    let dir = server.data_dir().to_path_buf();
    tokio::task::spawn_blocking(move || {
        use std::io::{BufRead, BufReader};
        let mut child = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .arg("--cache-dir")
            .arg(kc.with_file_name("kubectl-cache"))
            .args(["get", "sc", "--watch"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        for i in 0..3 {
            let manifest = dir.join(format!("sc{i}.yaml"));
            std::fs::write(&manifest, format!("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: w{i}\nprovisioner: example.com/p{i}\n")).unwrap();
            ok(kubectl(&kc, &["create", "-f", manifest.to_str().unwrap()]));
            let mut line = out.next().expect("a watch line").unwrap();
            if line.starts_with("NAME") {
                line = out.next().expect("a watch line").unwrap();
            }
            let cells: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(&cells[..5], [format!("w{i}").as_str(), &format!("example.com/p{i}"), "Delete", "Immediate", "false"]);
        }
        let _ = child.kill();
        let _ = child.wait();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_accept_form_and_its_fallbacks() {
    let server = TestServer::start().await;
    let c = admin(&server);
    assert_eq!(
        c.send_json(Method::POST, SC, &storage_class("fast"))
            .await
            .status,
        201
    );
    let one = format!("{SC}/fast");
    // (Accept, path, status, Content-Type, kind)
    let cases: &[(&str, &str, u16, &str, &str)] = &[
        ("", &one, 200, "application/json", "StorageClass"),
        ("*/*", &one, 200, "application/json", "StorageClass"),
        (
            "application/json",
            SC,
            200,
            "application/json",
            "StorageClassList",
        ),
        (
            "application/json;as=Table;g=meta.k8s.io;v=v1beta1",
            &one,
            200,
            "application/json",
            "Table",
        ),
        (
            "application/json;as=Table;g=meta.k8s.io;v=v1beta1, application/json",
            SC,
            200,
            "application/json",
            "Table",
        ),
        (
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
            SC,
            200,
            "application/json",
            "Table",
        ),
        (
            "application/json;as=Table;g=meta.k8s.io;v=v9, application/json",
            &one,
            200,
            "application/json",
            "StorageClass",
        ),
        (
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
            &one,
            200,
            "application/json",
            "PartialObjectMetadata",
        ),
        (
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
            SC,
            200,
            "application/json",
            "PartialObjectMetadataList",
        ),
        (
            "application/json;q=0.1, application/yaml",
            &one,
            200,
            "application/yaml",
            "",
        ),
        (
            "application/vnd.kubernetes.protobuf, application/json",
            &one,
            200,
            PROTOBUF,
            "",
        ),
        ("application/vnd.kubernetes.protobuf", SC, 200, PROTOBUF, ""),
        ("image/png", &one, 406, "application/json", "Status"),
        (
            "application/json;as=Table;g=meta.k8s.io;v=v9",
            &one,
            406,
            "application/json",
            "Status",
        ),
        (
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
            &one,
            406,
            "application/json",
            "Status",
        ),
    ];
    for (accept, path, status, ct, kind) in cases {
        let headers: Vec<(&str, &str)> = if accept.is_empty() {
            vec![]
        } else {
            vec![("accept", *accept)]
        };
        let resp = c.request(Method::GET, path, &headers, Vec::new()).await;
        assert_eq!(
            resp.status.as_u16(),
            *status,
            "{accept} {path}: {}",
            String::from_utf8_lossy(&resp.body)
        );
        assert_eq!(content_type(&resp), *ct, "{accept} {path}");
        if !kind.is_empty() {
            assert_eq!(resp.json()["kind"], *kind, "{accept} {path}");
        }
        if *status == 406 {
            assert_eq!(resp.json()["reason"], "NotAcceptable");
            // What is offered, protobuf included, even when the client did not name it.
            let message = resp.json()["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            assert!(
                message.contains("application/vnd.kubernetes.protobuf"),
                "{accept}: {message}"
            );
        }
    }
    // A table: columns from the descriptor, rows with metadata (includeObject picks).
    let table = c
        .request(
            Method::GET,
            SC,
            &[("accept", "application/json;as=Table;g=meta.k8s.io;v=v1")],
            Vec::new(),
        )
        .await
        .json();
    let names: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Name",
            "Provisioner",
            "ReclaimPolicy",
            "VolumeBindingMode",
            "AllowVolumeExpansion",
            "Age"
        ]
    );
    assert_eq!(table["rows"][0]["cells"][0], "fast");
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(
        table["rows"][0]["object"]["metadata"]["labels"]["tier"],
        "gold"
    );
    assert!(table["metadata"]["resourceVersion"].is_string());
    for (include, expect) in [("None", Value::Null), ("Object", json!("StorageClass"))] {
        let t = c
            .request(
                Method::GET,
                &format!("{SC}?includeObject={include}"),
                &[("accept", "application/json;as=Table;g=meta.k8s.io;v=v1")],
                Vec::new(),
            )
            .await
            .json();
        assert_eq!(
            t["rows"][0]
                .get("object")
                .map(|o| o["kind"].clone())
                .unwrap_or(Value::Null),
            expect
        );
    }
    let bad = c
        .request(
            Method::GET,
            &format!("{SC}?includeObject=All"),
            &[("accept", "application/json;as=Table;g=meta.k8s.io;v=v1")],
            Vec::new(),
        )
        .await;
    assert_eq!(bad.status, 400);
    // A type without its own columns gets the default table.
    let leases = c
        .request(
            Method::GET,
            "/api/v1/namespaces",
            &[(
                "accept",
                "application/json;as=Table;g=meta.k8s.io;v=v1beta1",
            )],
            Vec::new(),
        )
        .await
        .json();
    assert_eq!(leases["columnDefinitions"][0]["name"], "Name");
    let bindings = c
        .request(
            Method::GET,
            "/apis/coordination.k8s.io/v1/leases",
            &[(
                "accept",
                "application/json;as=Table;g=meta.k8s.io;v=v1beta1",
            )],
            Vec::new(),
        )
        .await
        .json();
    assert_eq!(bindings["columnDefinitions"][1]["name"], "Holder");

    // Request bodies: unknown media types are 415, broken protobuf and YAML are 400.
    let text = c
        .request(
            Method::POST,
            SC,
            &[("content-type", "text/plain")],
            b"name: x".to_vec(),
        )
        .await;
    assert_eq!(text.status, 415);
    assert_eq!(text.json()["reason"], "UnsupportedMediaType");
    let garbage = c
        .request(
            Method::POST,
            SC,
            &[("content-type", PROTOBUF)],
            b"k8s\x00\x0a\xff\xff".to_vec(),
        )
        .await;
    assert_eq!(
        garbage.status,
        400,
        "{}",
        String::from_utf8_lossy(&garbage.body)
    );
    let unprefixed = c
        .request(
            Method::POST,
            SC,
            &[("content-type", PROTOBUF)],
            b"\x0a\x00".to_vec(),
        )
        .await;
    assert_eq!(unprefixed.status, 400);
    let yaml = c
        .request(
            Method::POST,
            SC,
            &[("content-type", "application/yaml")],
            b"kind: [".to_vec(),
        )
        .await;
    assert_eq!(yaml.status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_answers_decode_in_an_independent_decoder() {
    use k8s_rs_pb::api::storage::v1 as storage;
    use k8s_rs_pb::apimachinery::pkg::apis::meta::v1 as meta;
    let server = TestServer::start().await;
    let c = admin(&server);
    let codec = Codec::default();

    // Create with a protobuf body (built by the other encoder), answer in JSON.
    let mut sc = storage::StorageClass::new();
    sc.metadata.mut_or_insert_default().set_name("fast".into());
    sc.metadata
        .mut_or_insert_default()
        .labels
        .insert("tier".into(), "gold".into());
    sc.set_provisioner("example.com/ssd".into());
    sc.parameters.insert("type".into(), "ssd".into());
    sc.set_allowVolumeExpansion(true);
    sc.mountOptions.push("ro".into());
    let body = capstan_negotiation::protobuf::encode_envelope(
        "storage.k8s.io/v1",
        "StorageClass",
        &sc.write_to_bytes().unwrap(),
    );
    let created = c
        .request(
            Method::POST,
            SC,
            &[("content-type", PROTOBUF), ("accept", "application/json")],
            body,
        )
        .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let created = created.json();
    assert_eq!(created["parameters"]["type"], "ssd");
    assert_eq!(created["mountOptions"], json!(["ro"]));
    assert_eq!(created["reclaimPolicy"], "Delete");

    // Get in protobuf: the envelope, and a message the other decoder reads.
    let got = c
        .request(
            Method::GET,
            &format!("{SC}/fast"),
            &[("accept", PROTOBUF)],
            Vec::new(),
        )
        .await;
    assert_eq!(got.status, 200);
    assert!(got.body.starts_with(MAGIC));
    let env = decode_envelope(&got.body).unwrap();
    assert_eq!(
        (env.api_version.as_str(), env.kind.as_str()),
        ("storage.k8s.io/v1", "StorageClass")
    );
    let theirs = storage::StorageClass::parse_from_bytes(&env.raw).unwrap();
    assert_eq!(theirs.metadata.name(), "fast");
    assert_eq!(
        theirs.metadata.uid(),
        created["metadata"]["uid"].as_str().unwrap()
    );
    assert_eq!(
        theirs.metadata.resourceVersion(),
        created["metadata"]["resourceVersion"].as_str().unwrap()
    );
    assert!(theirs.metadata.creationTimestamp.seconds() > 1_700_000_000);
    assert_eq!(theirs.reclaimPolicy(), "Delete");
    assert_eq!(theirs.volumeBindingMode(), "Immediate");
    assert!(theirs.allowVolumeExpansion());
    // Lossless: the protobuf answer is the JSON answer.
    let json_get = c.get(&format!("{SC}/fast")).await.json();
    assert_eq!(codec.decode_object(&got.body).unwrap(), json_get);

    // Lists, in chunks too.
    for i in 0..3 {
        c.send_json(Method::POST, SC, &storage_class(&format!("s{i}")))
            .await;
    }
    let list = c
        .request(
            Method::GET,
            &format!("{SC}?limit=2"),
            &[("accept", PROTOBUF)],
            Vec::new(),
        )
        .await;
    let env = decode_envelope(&list.body).unwrap();
    assert_eq!(env.kind, "StorageClassList");
    let theirs = storage::StorageClassList::parse_from_bytes(&env.raw).unwrap();
    assert_eq!(theirs.items.len(), 2);
    assert!(!theirs.metadata.continue_().is_empty());
    assert_eq!(theirs.metadata.remainingItemCount(), 2);
    // Items carry no kind in protobuf (the list names it); otherwise the same as JSON.
    let mut json_list = c.get(&format!("{SC}?limit=2")).await.json();
    for item in json_list["items"].as_array_mut().unwrap() {
        let item = item.as_object_mut().unwrap();
        item.remove("kind");
        item.remove("apiVersion");
    }
    let ours = codec.decode_object(&list.body).unwrap();
    assert_eq!(ours["items"], json_list["items"]);

    // Errors are Status messages in protobuf.
    let missing = c
        .request(
            Method::GET,
            &format!("{SC}/nope"),
            &[("accept", PROTOBUF)],
            Vec::new(),
        )
        .await;
    assert_eq!(missing.status, 404);
    assert_eq!(content_type(&missing), PROTOBUF);
    let env = decode_envelope(&missing.body).unwrap();
    assert_eq!(env.kind, "Status");
    let status = meta::Status::parse_from_bytes(&env.raw).unwrap();
    assert_eq!((status.code(), status.reason()), (404, "NotFound"));
    assert_eq!(status.details.name(), "nope");

    // PartialObjectMetadataList in protobuf, as metadata-only informers ask for it.
    let metadata = c
        .request(Method::GET, SC, &[("accept", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")], Vec::new())
        .await;
    assert_eq!(metadata.status, 200);
    let env = decode_envelope(&metadata.body).unwrap();
    assert_eq!(
        (env.api_version.as_str(), env.kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
    let theirs = meta::PartialObjectMetadataList::parse_from_bytes(&env.raw).unwrap();
    assert_eq!(theirs.items.len(), 4);
    assert_eq!(theirs.items[0].metadata.labels["tier"], "gold");

    // YAML answers and bodies.
    let yaml = c
        .request(
            Method::GET,
            &format!("{SC}/fast"),
            &[("accept", "application/yaml")],
            Vec::new(),
        )
        .await;
    let text = String::from_utf8(yaml.body.to_vec()).unwrap();
    assert!(
        text.contains("kind: StorageClass\n") && text.contains("provisioner: example.com/ssd\n"),
        "{text}"
    );
    let created = c
        .request(Method::POST, SC, &[("content-type", "application/yaml"), ("accept", "application/yaml")],
            b"apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: from-yaml\nprovisioner: p\nallowVolumeExpansion: yes\n".to_vec())
        .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    assert_eq!(content_type(&created), "application/yaml");
    assert!(String::from_utf8_lossy(&created.body).contains("allowVolumeExpansion: true"));
}

/// The frames of a protobuf watch body: a 4-byte length, then an envelope.
fn frames(mut body: &[u8]) -> Vec<Value> {
    let codec = Codec::default();
    let mut out = Vec::new();
    while body.len() >= 4 {
        let len = u32::from_be_bytes(body[..4].try_into().unwrap()) as usize;
        // A bare WatchEvent, as upstream writes it: no magic, no envelope.
        let frame = &body[4..4 + len];
        assert!(!frame.starts_with(MAGIC), "a frame in an envelope");
        out.push(codec.decode_watch_event(frame).unwrap());
        body = &body[4 + len..];
    }
    assert!(body.is_empty(), "a partial frame");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_in_protobuf_and_as_tables() {
    let server = TestServer::start().await;
    let c = admin(&server);
    let start = c.get(SC).await.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    c.send_json(Method::POST, SC, &storage_class("a")).await;
    c.send_json(Method::POST, SC, &storage_class("b")).await;
    assert_eq!(
        c.request(Method::DELETE, &format!("{SC}/a"), &[], Vec::new())
            .await
            .status,
        200
    );
    let path = format!("{SC}?watch=1&resourceVersion={start}&timeoutSeconds=1");

    let proto = c
        .request(Method::GET, &path, &[("accept", PROTOBUF)], Vec::new())
        .await;
    assert_eq!(
        content_type(&proto),
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let events = frames(&proto.body);
    let seen: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().into(),
                e["object"]["metadata"]["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("ADDED".into(), "a".into()),
            ("ADDED".into(), "b".into()),
            ("DELETED".into(), "a".into())
        ]
    );
    assert_eq!(events[1]["object"]["provisioner"], "example.com/ssd");

    let table = c
        .request(
            Method::GET,
            &path,
            &[("accept", "application/json;as=Table;g=meta.k8s.io;v=v1")],
            Vec::new(),
        )
        .await;
    let events: Vec<Value> = table.json_lines();
    assert_eq!(events.len(), 3);
    assert_eq!(events[0]["object"]["kind"], "Table");
    assert_eq!(
        events[0]["object"]["columnDefinitions"][1]["name"],
        "Provisioner"
    );
    assert_eq!(events[1]["object"]["columnDefinitions"], json!([]));
    assert_eq!(events[2]["type"], "DELETED");
    assert_eq!(events[2]["object"]["rows"][0]["cells"][0], "a");

    let metadata = c
        .request(
            Method::GET,
            &path,
            &[(
                "accept",
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
            )],
            Vec::new(),
        )
        .await;
    let first = &metadata.json_lines()[0];
    assert_eq!(first["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(first["object"]["metadata"]["labels"]["tier"], "gold");

    // YAML has no stream form.
    let yaml = c
        .request(
            Method::GET,
            &path,
            &[("accept", "application/yaml")],
            Vec::new(),
        )
        .await;
    assert_eq!(yaml.status, 406);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bursts_of_events_convert_one_by_one() {
    let server = TestServer::start().await;
    let c = admin(&server);
    let start = c.get(SC).await.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("{SC}?watch=1&resourceVersion={start}&timeoutSeconds=3");
    let proto = {
        let c = c.clone();
        let path = path.clone();
        tokio::spawn(async move {
            c.request(Method::GET, &path, &[("accept", PROTOBUF)], Vec::new())
                .await
        })
    };
    let table = {
        let c = c.clone();
        let path = path.clone();
        tokio::spawn(async move {
            c.request(
                Method::GET,
                &path,
                &[("accept", "application/json;as=Table;g=meta.k8s.io;v=v1")],
                Vec::new(),
            )
            .await
        })
    };
    // Many writes at once: the server sends several events per chunk.
    let writes: Vec<_> = (0..40)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move {
                c.send_json(Method::POST, SC, &storage_class(&format!("burst{i}")))
                    .await
                    .status
            })
        })
        .collect();
    for w in writes {
        assert_eq!(w.await.unwrap(), 201);
    }
    let events = frames(&proto.await.unwrap().body);
    assert_eq!(events.len(), 40);
    let table = table.await.unwrap();
    let lines: Vec<Value> = table.json_lines();
    assert_eq!(lines.len(), 40);
    assert!(lines.iter().all(|e| e["object"]["kind"] == "Table"));
}
