//! `--resource widgets`: a CustomResourceDefinition for the run's custom objects, created
//! before measuring; how long it takes to be Established and served is printed.
//! `--resource widgets-v2`: the same objects served in a second version, `v2`, converted to
//! and from the stored `v1` by a conversion webhook this process serves.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use base64::Engine;

use http::{Method, StatusCode};

use crate::Target;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
/// The CRD's name.
const NAME: &str = "widgets.load.capstan.dev";
/// Where the run's custom objects live.
pub(crate) const WIDGETS: &str = "/apis/load.capstan.dev/v1/namespaces/default/widgets";
/// Where they are served in `v2`.
pub(crate) const WIDGETS_V2: &str = "/apis/load.capstan.dev/v2/namespaces/default/widgets";

/// The conversion webhook's answer: every object in the desired version (the versions'
/// schemas are the same, so only `apiVersion` changes), as a webhook that converts cheaply.
fn convert(review: &serde_json::Value) -> serde_json::Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].clone();
    let objects: Vec<serde_json::Value> = request["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let mut o = o.clone();
            o["apiVersion"] = desired.clone();
            o
        })
        .collect();
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {"uid": request["uid"], "result": {"status": "Success"}, "convertedObjects": objects},
    })
}

/// Creates the CRD (unless it exists) and waits until its objects are served; prints the
/// time from the create's answer to `Established`, and to the first list answered.
pub(crate) async fn install(target: &Target, webhook: bool) -> Result<Option<Converter>, String> {
    let schema = serde_json::json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "type": {"type": "string", "enum": ["ssd", "hdd"]},
            "iops": {"type": "integer", "minimum": 0, "maximum": 100000},
            "zones": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
        }},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
    }}});
    let mut versions = vec![
        serde_json::json!({"name": "v1", "served": true, "storage": true,
        "subresources": {"status": {}}, "schema": schema}),
    ];
    let mut conversion = serde_json::json!({"strategy": "None"});
    let mut converter = None;
    if webhook {
        let calls = Arc::new(AtomicU64::new(0));
        let (url, ca_pem, task) = crate::webhook::serve(calls.clone(), "/convert", convert).await?;
        versions.push(
            serde_json::json!({"name": "v2", "served": true, "storage": false,
            "subresources": {"status": {}}, "schema": schema}),
        );
        conversion = serde_json::json!({"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": url, "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem)}
        }});
        converter = Some(Converter { calls, task });
    }
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "load.capstan.dev", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": versions,
            "conversion": conversion,
        }
    });
    let mut conn = target.connect().await?;
    let (status, answer) = conn
        .send(target.request(Method::POST, CRDS, Some(crd.to_string().into_bytes())))
        .await?;
    let created = Instant::now();
    match status {
        StatusCode::CREATED => {}
        StatusCode::CONFLICT => {
            println!("crd {NAME}: exists");
            return Ok(converter);
        }
        _ => {
            return Err(format!(
                "creating the CRD: {status} {}",
                String::from_utf8_lossy(&answer)
            ));
        }
    }
    let mut established = None;
    while established.is_none() {
        if created.elapsed() > Duration::from_secs(30) {
            return Err("the CRD was not Established within 30 s".into());
        }
        let (_, body) = conn
            .send(target.request(Method::GET, &format!("{CRDS}/{NAME}"), None))
            .await?;
        let doc: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let is_established = doc["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        if is_established {
            established = Some(created.elapsed());
        }
    }
    loop {
        let (status, _) = conn
            .send(target.request(Method::GET, WIDGETS, None))
            .await?;
        if status == StatusCode::OK {
            break;
        }
    }
    let served = created.elapsed();
    println!(
        "crd {NAME}: Established {:.1} ms, objects served {:.1} ms after the create's answer",
        established.unwrap_or_default().as_secs_f64() * 1e3,
        served.as_secs_f64() * 1e3
    );
    Ok(converter)
}

/// The running conversion webhook.
pub(crate) struct Converter {
    /// Reviews answered.
    pub calls: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Converter {
    fn drop(&mut self) {
        self.task.abort();
    }
}
