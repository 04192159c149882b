//! Bad input gets an upstream `Status` with the right code and reason, and never takes the
//! server down.

use capstan_testing::TestServer;
use http::Method;
use serde_json::json;

use crate::{SC, admin};

fn sc(name: &str) -> serde_json::Value {
    json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}, "provisioner": "example.com/p"})
}

fn assert_status(resp: &capstan_e2e::RawResponse, code: u16, reason: &str) -> serde_json::Value {
    assert_eq!(
        resp.status.as_u16(),
        code,
        "{}",
        String::from_utf8_lossy(&resp.body)
    );
    let status = resp.json();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["apiVersion"], "v1");
    assert_eq!(status["status"], "Failure");
    assert_eq!(status["code"], code);
    assert_eq!(status["reason"], reason);
    assert!(!status["message"].as_str().unwrap_or("").is_empty());
    status
}

#[tokio::test]
async fn each_bad_request_has_its_status() {
    let server = TestServer::start().await;
    let c = admin(&server);
    let json_ct = [("content-type", "application/json")];

    let r = c
        .request(Method::POST, SC, &json_ct, b"{\"metadata\": ".to_vec())
        .await;
    assert_status(&r, 400, "BadRequest");

    let mut wrong_kind = sc("x");
    wrong_kind["apiVersion"] = json!("v1");
    wrong_kind["kind"] = json!("Pod");
    assert_status(
        &c.send_json(Method::POST, SC, &wrong_kind).await,
        400,
        "BadRequest",
    );

    assert_eq!(
        c.send_json(Method::POST, SC, &sc("named")).await.status,
        201
    );
    let r = c
        .send_json(Method::PUT, &format!("{SC}/other"), &sc("named"))
        .await;
    let s = assert_status(&r, 400, "BadRequest");
    assert!(
        s["message"]
            .as_str()
            .unwrap()
            .contains("does not match the name on the URL")
    );

    let r = c
        .send_json(
            Method::POST,
            SC,
            &json!({"metadata": {}, "provisioner": "p"}),
        )
        .await;
    let s = assert_status(&r, 422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
    assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueRequired");

    let mut invalid = sc("Bad_Name");
    invalid["reclaimPolicy"] = json!("Recycle");
    invalid["provisioner"] = json!("");
    let s = assert_status(
        &c.send_json(Method::POST, SC, &invalid).await,
        422,
        "Invalid",
    );
    let fields: Vec<&str> = s["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["metadata.name", "provisioner", "reclaimPolicy"]);
    assert_eq!(s["details"]["kind"], "StorageClass");
    assert_eq!(s["details"]["group"], "storage.k8s.io");

    let mut big = sc("big");
    big["metadata"]["annotations"] = json!({"x": "y".repeat(3 * 1024 * 1024)});
    assert_status(
        &c.send_json(Method::POST, SC, &big).await,
        413,
        "RequestEntityTooLarge",
    );

    assert_status(
        &c.get("/apis/nope.example.com/v1/things").await,
        404,
        "NotFound",
    );
    assert_status(&c.get(&format!("{SC}/missing")).await, 404, "NotFound");
    assert_status(&c.get(&format!("{SC}/named/status")).await, 404, "NotFound");
    assert_status(
        &c.send_json(Method::POST, &format!("{SC}/named"), &sc("named"))
            .await,
        405,
        "MethodNotAllowed",
    );
    assert_status(
        &c.send_json(Method::PUT, SC, &sc("named")).await,
        405,
        "MethodNotAllowed",
    );
    assert_status(
        &c.request(Method::OPTIONS, SC, &[], Vec::new()).await,
        405,
        "MethodNotAllowed",
    );

    let r = c
        .request(
            Method::PATCH,
            &format!("{SC}/named"),
            &[("content-type", "text/plain")],
            b"{}".to_vec(),
        )
        .await;
    assert_status(&r, 415, "UnsupportedMediaType");
    let r = c
        .request(
            Method::POST,
            SC,
            &[("content-type", "application/xml")],
            b"<x/>".to_vec(),
        )
        .await;
    assert_status(&r, 415, "UnsupportedMediaType");
    let r = c
        .request(Method::GET, SC, &[("accept", "text/html")], Vec::new())
        .await;
    assert_status(&r, 406, "NotAcceptable");

    assert_status(
        &c.get(&format!("{SC}?labelSelector=tier+in+gold")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &c.get(&format!("{SC}?fieldSelector=spec.nope%3D1")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &c.get(&format!("{SC}?resourceVersion=abc")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &c.get(&format!("{SC}?resourceVersionMatch=Exact")).await,
        422,
        "Invalid",
    );

    let path = format!("{SC}/named");
    let merge = [("content-type", "application/merge-patch+json")];
    let old_rv = c.get(&path).await.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let r = c
        .request(
            Method::PATCH,
            &path,
            &merge,
            br#"{"mountOptions":["ro"]}"#.to_vec(),
        )
        .await;
    assert_eq!(r.status, 200);
    let stale = format!(r#"{{"metadata":{{"resourceVersion":"{old_rv}"}},"mountOptions":["rw"]}}"#);
    assert_status(
        &c.request(Method::PATCH, &path, &merge, stale.into_bytes())
            .await,
        409,
        "Conflict",
    );
    let r = c.send_json(Method::POST, SC, &sc("named")).await;
    let s = assert_status(&r, 409, "AlreadyExists");
    assert_eq!(s["details"]["name"], "named");

    // Unknown fields: a warning by default, a 400 when strict.
    let mut extra = sc("extra");
    extra["bogus"] = json!(1);
    let r = c.send_json(Method::POST, SC, &extra).await;
    assert_eq!(r.status, 201);
    let warning = r
        .headers
        .get("warning")
        .expect("a Warning header")
        .to_str()
        .unwrap();
    assert_eq!(warning, r#"299 - "unknown field \"bogus\"""#);
    extra["metadata"]["name"] = json!("extra2");
    assert_status(
        &c.send_json(
            Method::POST,
            &format!("{SC}?fieldValidation=Strict"),
            &extra,
        )
        .await,
        400,
        "BadRequest",
    );
    assert_status(
        &c.send_json(Method::POST, &format!("{SC}?dryRun=Maybe"), &sc("d"))
            .await,
        400,
        "BadRequest",
    );
}

#[tokio::test]
async fn garbage_never_breaks_the_server() {
    let server = TestServer::start().await;
    let c = admin(&server);
    let bodies: Vec<Vec<u8>> = vec![
        vec![],
        b"null".to_vec(),
        b"[]".to_vec(),
        b"\"str\"".to_vec(),
        b"{\"metadata\":[]}".to_vec(),
        b"{\"metadata\":{\"name\":5}}".to_vec(),
        b"{\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":1}}}".to_vec(),
        b"{\"metadata\":{\"name\":\"x\",\"creationTimestamp\":\"yesterday\"}}".to_vec(),
        vec![0xff, 0xfe, 0x00, 0x7b],
        b"{\"a\":".repeat(10_000),
    ];
    for body in &bodies {
        for (method, path) in [
            (Method::POST, SC.to_string()),
            (Method::PUT, format!("{SC}/x")),
        ] {
            let r = c
                .request(
                    method,
                    &path,
                    &[("content-type", "application/json")],
                    body.clone(),
                )
                .await;
            assert!(
                r.status.is_client_error(),
                "{} for {:?}",
                r.status,
                String::from_utf8_lossy(body)
            );
            assert_eq!(r.json()["kind"], "Status");
        }
        for ct in [
            "application/merge-patch+json",
            "application/json-patch+json",
            "application/strategic-merge-patch+json",
        ] {
            let r = c
                .request(
                    Method::PATCH,
                    &format!("{SC}/x"),
                    &[("content-type", ct)],
                    body.clone(),
                )
                .await;
            assert!(r.status.is_client_error(), "{} for {ct}", r.status);
        }
    }
    for path in [
        "/apis/storage.k8s.io/v1/storageclasses/%ff%fe",
        "/api/v1/../../etc/passwd",
        "/apis//v1",
        &format!("{SC}?limit=-1&continue=%%%"),
    ] {
        let r = c.get(path).await;
        assert!(r.status.as_u16() < 500, "{path}: {}", r.status);
    }
    assert_eq!(c.get("/healthz").await.status, 200, "still serving");
}
