//! `--resource widgets`: a CustomResourceDefinition for the run's custom objects, created
//! before measuring; how long it takes to be Established and served is printed.

use std::time::{Duration, Instant};

use http::{Method, StatusCode};

use crate::Target;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
/// The CRD's name.
const NAME: &str = "widgets.load.capstan.dev";
/// Where the run's custom objects live.
pub(crate) const WIDGETS: &str = "/apis/load.capstan.dev/v1/namespaces/default/widgets";

/// Creates the CRD (unless it exists) and waits until its objects are served; prints the
/// time from the create's answer to `Established`, and to the first list answered.
pub(crate) async fn install(target: &Target) -> Result<(), String> {
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "load.capstan.dev", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "type": {"type": "string", "enum": ["ssd", "hdd"]},
                        "iops": {"type": "integer", "minimum": 0, "maximum": 100000},
                        "zones": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
                    }},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}}}]
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
            return Ok(());
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
    Ok(())
}
