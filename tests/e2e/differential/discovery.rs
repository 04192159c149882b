//! Discovery and OpenAPI side by side: Capstan and upstream's kube-apiserver v1.36, both with
//! their default APIs, are asked for the aggregated and the legacy discovery documents and
//! for OpenAPI v3; each is flattened into facts (`<group/version> <resource> <attribute>`)
//! and the facts compared. A difference must be listed, with its reason, in
//! `discovery-differences.txt`; a listed one that no longer differs must leave the list.
//! The feature gate table is compared with the gates upstream's server reports.

use std::collections::{BTreeMap, BTreeSet};

use capstan_e2e::RawClient;
use capstan_testing::TestServer;
use http::Method;
use serde_json::Value;

use super::{Upstream, capstan};

const KNOWN: &str = include_str!("../discovery-differences.txt");

const AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

/// Facts about one server: a key and its value.
type Facts = BTreeMap<String, String>;

async fn get_json(client: &RawClient, path: &str, accept: &str) -> Value {
    let response = client
        .request(Method::GET, path, &[("accept", accept)], Vec::new())
        .await;
    assert_eq!(response.status, 200, "GET {path}");
    response.json()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn sorted(value: &Value) -> String {
    let mut list = strings(value);
    list.sort();
    list.join(",")
}

fn kind(value: &Value) -> String {
    let group = value["group"].as_str().unwrap_or("");
    let version = value["version"].as_str().unwrap_or("");
    let kind = value["kind"].as_str().unwrap_or("");
    format!("{group}/{version}/{kind}")
}

/// The aggregated documents (`/api` and `/apis`, apidiscovery.k8s.io/v2).
async fn aggregated(client: &RawClient, facts: &mut Facts) {
    let mut order = Vec::new();
    for root in ["/api", "/apis"] {
        let list = get_json(client, root, AGGREGATED).await;
        assert_eq!(list["kind"], "APIGroupDiscoveryList", "{root}");
        for group in list["items"].as_array().into_iter().flatten() {
            let name = group["metadata"]["name"].as_str().unwrap_or("").to_string();
            order.push(name.clone());
            let versions: Vec<&str> = group["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v["version"].as_str())
                .collect();
            facts.insert(format!("{name} versions [aggregated]"), versions.join(","));
            for version in group["versions"].as_array().into_iter().flatten() {
                let gv = group_version(&name, version["version"].as_str().unwrap_or(""));
                facts.insert(format!("{gv} [aggregated]"), "served".into());
                for resource in version["resources"].as_array().into_iter().flatten() {
                    let r = format!("{gv} {}", resource["resource"].as_str().unwrap_or(""));
                    let mut put = |attribute: &str, value: String| {
                        facts.insert(format!("{r} {attribute} [aggregated]"), value);
                    };
                    put("kind", kind(&resource["responseKind"]));
                    put("scope", resource["scope"].as_str().unwrap_or("").into());
                    put(
                        "singular",
                        resource["singularResource"].as_str().unwrap_or("").into(),
                    );
                    put("verbs", sorted(&resource["verbs"]));
                    put("shortNames", strings(&resource["shortNames"]).join(","));
                    put("categories", strings(&resource["categories"]).join(","));
                    for sub in resource["subresources"].as_array().into_iter().flatten() {
                        let s = format!("{r}/{}", sub["subresource"].as_str().unwrap_or(""));
                        facts.insert(format!("{s} kind [aggregated]"), kind(&sub["responseKind"]));
                        facts.insert(format!("{s} verbs [aggregated]"), sorted(&sub["verbs"]));
                        facts.insert(
                            format!("{s} acceptedTypes [aggregated]"),
                            sub["acceptedTypes"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .map(kind)
                                .collect::<Vec<_>>()
                                .join(","),
                        );
                    }
                }
            }
        }
    }
    facts.insert("group order".into(), order.join(","));
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The legacy documents: `/api`, `/apis` and each group version's resource list.
async fn legacy(client: &RawClient, facts: &mut Facts) {
    let core = get_json(client, "/api", "application/json").await;
    let mut gvs: Vec<String> = strings(&core["versions"]);
    facts.insert(" versions [legacy]".into(), gvs.join(","));
    let groups = get_json(client, "/apis", "application/json").await;
    for group in groups["groups"].as_array().into_iter().flatten() {
        let name = group["name"].as_str().unwrap_or("");
        let versions: Vec<String> = group["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["groupVersion"].as_str().map(str::to_string))
            .collect();
        facts.insert(
            format!("{name} versions [legacy]"),
            versions
                .iter()
                .map(|gv| gv.rsplit('/').next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join(","),
        );
        facts.insert(
            format!("{name} preferred [legacy]"),
            group["preferredVersion"]["version"]
                .as_str()
                .unwrap_or("")
                .into(),
        );
        gvs.extend(versions);
    }
    for gv in gvs {
        let path = if gv.contains('/') {
            format!("/apis/{gv}")
        } else {
            format!("/api/{gv}")
        };
        let list = get_json(client, &path, "application/json").await;
        for resource in list["resources"].as_array().into_iter().flatten() {
            let r = format!("{gv} {}", resource["name"].as_str().unwrap_or(""));
            let mut put = |attribute: &str, value: String| {
                facts.insert(format!("{r} {attribute} [legacy]"), value);
            };
            let response = kind(resource);
            // Upstream names a group and version only where they are not the list's own.
            put("kind", response.trim_start_matches('/').to_string());
            put(
                "singular",
                resource["singularName"].as_str().unwrap_or("").into(),
            );
            put("namespaced", resource["namespaced"].to_string());
            put("verbs", sorted(&resource["verbs"]));
            put("shortNames", strings(&resource["shortNames"]).join(","));
            put("categories", strings(&resource["categories"]).join(","));
            put(
                "storageVersionHash",
                resource["storageVersionHash"].as_str().unwrap_or("").into(),
            );
        }
    }
}

/// OpenAPI v3: the documents listed, and in each group version's document the operations of
/// every path and the names of the schemas.
async fn openapi(client: &RawClient, facts: &mut Facts) {
    let index = get_json(client, "/openapi/v3", "application/json").await;
    let paths: Vec<String> = index["paths"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    for path in paths {
        facts.insert(format!("{path} [openapi]"), "listed".into());
        if !(path.starts_with("api/") || path.starts_with("apis/")) {
            continue;
        }
        let doc = get_json(client, &format!("/openapi/v3/{path}"), "application/json").await;
        for (p, item) in doc["paths"].as_object().into_iter().flatten() {
            let mut methods: Vec<&str> = item
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| k.as_str() != "parameters")
                .map(|(k, _)| k.as_str())
                .collect();
            methods.sort();
            facts.insert(format!("{path} path {p} [openapi]"), methods.join(","));
        }
        for name in doc["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            facts.insert(format!("{path} schema {name} [openapi]"), "defined".into());
        }
    }
}

/// How a group version's OpenAPI document answers under the index's hash, another hash, no
/// hash, and a request naming its entity tag: what clients' caches rely on.
async fn openapi_caching(client: &RawClient, facts: &mut Facts) {
    let index = get_json(client, "/openapi/v3", "application/json").await;
    for key in ["api/v1", "apis/storage.k8s.io/v1"] {
        let url = index["paths"][key]["serverRelativeURL"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let hash = url.split_once("?hash=").map(|(_, h)| h).unwrap_or_default();
        let etag = format!("\"{hash}\"");
        let header = |r: &capstan_e2e::RawResponse, name: &str| {
            r.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let get = |path: String, extra: Option<(&'static str, String)>| async move {
            let mut headers = vec![("accept", "application/json".to_string())];
            headers.extend(extra);
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            client
                .request(Method::GET, &path, &headers, Vec::new())
                .await
        };
        let current = get(url.clone(), None).await;
        facts.insert(
            format!("{key} under its hash [openapi caching]"),
            format!(
                "{} cache-control={} etag-is-hash={} expires={}",
                current.status,
                header(&current, "cache-control"),
                header(&current, "etag") == etag,
                !header(&current, "expires").is_empty()
            ),
        );
        let moved = get(format!("/openapi/v3/{key}?hash=0123"), None).await;
        facts.insert(
            format!("{key} under another hash [openapi caching]"),
            format!(
                "{} location-is-index-url={} etag-is-hash={}",
                moved.status,
                header(&moved, "location") == url,
                header(&moved, "etag") == etag
            ),
        );
        let plain = get(format!("/openapi/v3/{key}"), None).await;
        facts.insert(
            format!("{key} without a hash [openapi caching]"),
            format!(
                "{} etag-is-hash={}",
                plain.status,
                header(&plain, "etag") == etag
            ),
        );
        let unchanged = get(
            format!("/openapi/v3/{key}"),
            Some(("if-none-match", etag.clone())),
        )
        .await;
        facts.insert(
            format!("{key} if-none-match its tag [openapi caching]"),
            format!("{}", unchanged.status),
        );
    }
}

/// The headers every answer carries whatever its handler: `Cache-Control` (no shared cache
/// may keep an answer meant for one caller), and `X-Content-Type-Options` on refusals by
/// authorization and on the health endpoints' text.
async fn response_headers(admin: &RawClient, anonymous: &RawClient, facts: &mut Facts) {
    let requests: [(&str, &RawClient, Method, &str, &str); 9] = [
        (
            "object",
            admin,
            Method::GET,
            "/api/v1/namespaces/default",
            "",
        ),
        ("list", admin, Method::GET, "/api/v1/namespaces", ""),
        (
            "missing object",
            admin,
            Method::GET,
            "/api/v1/namespaces/nope",
            "",
        ),
        ("version", admin, Method::GET, "/version", ""),
        ("readyz", admin, Method::GET, "/readyz", ""),
        ("livez check", admin, Method::GET, "/livez/ping", ""),
        ("missing check", admin, Method::GET, "/livez/nope", ""),
        (
            "anonymous list",
            anonymous,
            Method::GET,
            "/api/v1/namespaces",
            "",
        ),
        (
            "malformed create",
            admin,
            Method::POST,
            "/api/v1/namespaces",
            "{",
        ),
    ];
    for (what, client, method, path, body) in requests {
        let r = client
            .request(
                method,
                path,
                &[("content-type", "application/json")],
                body.as_bytes().to_vec(),
            )
            .await;
        let header = |name: &str| header_or_none(&r.headers, name);
        facts.insert(
            format!("{what} [headers]"),
            format!(
                "{} cache-control={} x-content-type-options={}",
                r.status,
                header("cache-control"),
                header("x-content-type-options")
            ),
        );
    }
}

/// The header `name` of an answer as text, `(none)` when it is missing.
fn header_or_none(headers: &http::HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("(none)")
        .to_string()
}

/// Large answers compressed for a client that accepts gzip, as upstream's: which answers
/// (a large object, written and read, a list, not a small Table nor a watch) and what they
/// decompress to.
async fn compression(admin: &RawClient, facts: &mut Facts) {
    use std::io::Read;
    let data = "x".repeat(140 * 1024);
    let body = serde_json::json!({"metadata": {"name": "big"}, "data": {"k": data}});
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let created = admin
        .request(
            Method::POST,
            configmaps,
            &[
                ("content-type", "application/json"),
                ("accept-encoding", "gzip"),
            ],
            serde_json::to_vec(&body).unwrap(),
        )
        .await;
    let requests: [(&str, String, &str, &str); 6] = [
        (
            "large object",
            format!("{configmaps}/big"),
            "gzip",
            "application/json",
        ),
        (
            "large object, gzip refused",
            format!("{configmaps}/big"),
            "deflate, gzip;q=0",
            "application/json",
        ),
        (
            "large list",
            configmaps.to_string(),
            "deflate, gzip",
            "application/json",
        ),
        (
            "large list as protobuf",
            configmaps.to_string(),
            "gzip",
            "application/vnd.kubernetes.protobuf",
        ),
        (
            "small table",
            configmaps.to_string(),
            "gzip",
            "application/json;as=Table;v=v1;g=meta.k8s.io",
        ),
        (
            "watch",
            format!("{configmaps}?watch=1&timeoutSeconds=1"),
            "gzip",
            "application/json",
        ),
    ];
    let mut answers = vec![("large create".to_string(), created)];
    for (what, path, encoding, accept) in requests {
        let r = admin
            .request(
                Method::GET,
                &path,
                &[("accept-encoding", encoding), ("accept", accept)],
                Vec::new(),
            )
            .await;
        answers.push((what.to_string(), r));
    }
    for (what, r) in answers {
        let header = |name: &str| header_or_none(&r.headers, name);
        let encoding = header("content-encoding");
        let mut plain = Vec::new();
        if encoding == "gzip" {
            flate2::read::GzDecoder::new(&r.body[..])
                .read_to_end(&mut plain)
                .expect("a gzip body");
        } else {
            plain = r.body.to_vec();
        }
        // Nothing but the object's data holds this many `x`s.
        let holds_big = plain.iter().filter(|&&b| b == b'x').count() >= data.len();
        facts.insert(
            format!("{what} [compression]"),
            format!(
                "{} content-encoding={encoding} vary={} holds the object={holds_big}",
                r.status,
                header("vary")
            ),
        );
    }
}

/// JSON printed for a human (`pretty=true`, or a curl or browser user agent) as upstream
/// prints it: which requests are indented, the fields in the order of a compact answer, a
/// final newline.
async fn pretty_printing(admin: &RawClient, facts: &mut Facts) {
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let body = serde_json::json!({
        "metadata": {"name": "pretty", "labels": {"b": "1", "a": "2"}},
        "data": {"z": "last", "a": "first \"quoted\" {[,:]}", "empty": ""},
    });
    admin
        .request(
            Method::POST,
            configmaps,
            &[("content-type", "application/json")],
            serde_json::to_vec(&body).unwrap(),
        )
        .await;
    let object = format!("{configmaps}/pretty");
    let list = format!("{configmaps}?fieldSelector=metadata.name%3Dpretty");
    let requests = [
        (
            "object, pretty=true",
            format!("{object}?pretty=true"),
            "capstan-e2e",
        ),
        ("object, curl", object.clone(), "curl/8.14.1"),
        (
            "object, browser",
            object.clone(),
            "Mozilla/5.0 (X11; Linux x86_64)",
        ),
        (
            "object, curl, pretty=false",
            format!("{object}?pretty=false"),
            "curl/8.14.1",
        ),
        (
            "object, kubectl",
            object.clone(),
            "kubectl/v1.36.2 (linux/amd64)",
        ),
        (
            "list, pretty=true",
            format!("{list}&pretty=true"),
            "capstan-e2e",
        ),
    ];
    for (what, path, agent) in requests {
        let r = admin
            .request(
                Method::GET,
                &path,
                &[("accept", "application/json"), ("user-agent", agent)],
                Vec::new(),
            )
            .await;
        let text = String::from_utf8_lossy(&r.body);
        let indented = text.starts_with("{\n  \"");
        // The fields' order at every level, read from the lines of an indented answer.
        let order: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix('"')?.split_once("\": "))
            .map(|(key, _)| key)
            .filter(|key| !key.contains(':'))
            .collect();
        facts.insert(
            format!("{what} [pretty]"),
            format!(
                "{} indented={indented} final newline={}",
                r.status,
                text.ends_with('\n')
            ),
        );
        if indented {
            facts.insert(format!("pretty field order: {what}"), format!("{order:?}"));
        }
    }
}

/// `/openapi/v2`'s caching and encoding headers, in JSON and protobuf, asked for again with
/// the ETag it gave.
async fn openapi_v2_headers(client: &RawClient, facts: &mut Facts) {
    let protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
    for (what, accept) in [("json", "application/json"), ("protobuf", protobuf)] {
        let get = |extra: Vec<(&'static str, String)>| async move {
            let mut headers = vec![
                ("accept", accept.to_string()),
                ("accept-encoding", "gzip".to_string()),
            ];
            headers.extend(extra);
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            client
                .request(Method::GET, "/openapi/v2", &headers, Vec::new())
                .await
        };
        let first = get(Vec::new()).await;
        let header = |r: &capstan_e2e::RawResponse, name: &str| header_or_none(&r.headers, name);
        let etag = header(&first, "etag");
        facts.insert(
            format!("openapi/v2 {what} [headers]"),
            format!(
                "{} content-type={} content-encoding={} vary={} cache-control={} etag-quoted={} last-modified={} expires={}",
                first.status,
                header(&first, "content-type"),
                header(&first, "content-encoding"),
                header(&first, "vary"),
                header(&first, "cache-control"),
                etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
                header(&first, "last-modified") != "(none)",
                header(&first, "expires") != "(none)",
            ),
        );
        let since = get(vec![("if-modified-since", header(&first, "last-modified"))]).await;
        facts.insert(
            format!("openapi/v2 {what} again since it was modified [headers]"),
            format!("{} body bytes={}", since.status, since.body.len()),
        );
        let again = get(vec![("if-none-match", etag.clone())]).await;
        facts.insert(
            format!("openapi/v2 {what} again with its etag [headers]"),
            format!(
                "{} same etag={} body bytes={}",
                again.status,
                header(&again, "etag") == etag,
                again.body.len()
            ),
        );
    }
    // Which other documents are compressed for a client that accepts gzip.
    let aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    for (path, accept) in [
        ("/openapi/v3", "application/json"),
        ("/openapi/v3/api/v1", "application/json"),
        ("/apis", aggregated),
        ("/api/v1", "application/json"),
        ("/version", "application/json"),
        ("/metrics", "text/plain"),
        ("/livez?verbose", "text/plain"),
    ] {
        let r = client
            .request(
                Method::GET,
                path,
                &[("accept", accept), ("accept-encoding", "gzip")],
                Vec::new(),
            )
            .await;
        facts.insert(
            format!("{path} with gzip accepted [headers]"),
            format!(
                "{} content-encoding={} vary={} large={}",
                r.status,
                header_or_none(&r.headers, "content-encoding"),
                header_or_none(&r.headers, "vary"),
                r.body.len() > 128 * 1024
            ),
        );
    }
    for (what, accept) in [
        ("text", None),
        (
            "openmetrics",
            Some("application/openmetrics-text;version=1.0.0"),
        ),
    ] {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("accept", a)).into_iter().collect();
        let metrics = client
            .request(Method::GET, "/metrics", &headers, Vec::new())
            .await;
        facts.insert(
            format!("metrics {what} [headers]"),
            format!(
                "{} content-type={}",
                metrics.status,
                header_or_none(&metrics.headers, "content-type")
            ),
        );
    }
}

/// Whether compact JSON answers end in a newline, as upstream's encoder writes them.
async fn final_newlines(admin: &RawClient, facts: &mut Facts) {
    let json = "application/json";
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let requests = [
        (
            "object",
            "/api/v1/namespaces/default/configmaps/pretty",
            json,
        ),
        ("list", "/api/v1/namespaces/default/configmaps", json),
        ("table", "/api/v1/namespaces/default/configmaps", table),
        (
            "not found",
            "/api/v1/namespaces/default/configmaps/none",
            json,
        ),
        ("core versions", "/api", json),
        ("groups", "/apis", json),
        ("core resources", "/api/v1", json),
        ("group resources", "/apis/apps/v1", json),
        ("version", "/version", json),
        ("health", "/healthz", json),
    ];
    for (what, path, accept) in requests {
        let r = admin
            .request(Method::GET, path, &[("accept", accept)], Vec::new())
            .await;
        let text = String::from_utf8_lossy(&r.body);
        facts.insert(
            format!("{what} [final newline]"),
            format!(
                "{} indented={} final newline={}",
                r.status,
                text.starts_with("{\n"),
                text.ends_with('\n')
            ),
        );
    }
}

async fn facts(client: &RawClient) -> Facts {
    let mut facts = Facts::new();
    aggregated(client, &mut facts).await;
    legacy(client, &mut facts).await;
    openapi(client, &mut facts).await;
    openapi_caching(client, &mut facts).await;
    let version = get_json(client, "/version", "application/json").await;
    let mut fields: Vec<&String> = version.as_object().unwrap().keys().collect();
    fields.sort();
    facts.insert("version fields".into(), format!("{fields:?}"));
    for field in ["major", "minor", "emulationMajor", "emulationMinor"] {
        facts.insert(format!("version {field}"), version[field].to_string());
    }
    facts
}

/// The `group order` fact, reduced to the groups both servers serve.
fn common_order(ours: &mut Facts, theirs: &mut Facts) {
    let groups = |facts: &Facts| -> Vec<String> {
        facts["group order"]
            .split(',')
            .map(str::to_string)
            .collect()
    };
    let (a, b) = (groups(ours), groups(theirs));
    let both: BTreeSet<&String> = a.iter().filter(|g| b.contains(g)).collect();
    let keep = |list: &[String]| {
        list.iter()
            .filter(|g| both.contains(g))
            .cloned()
            .collect::<Vec<_>>()
            .join(",")
    };
    ours.insert("group order".into(), keep(&a));
    theirs.insert("group order".into(), keep(&b));
}

/// The listed difference covering `key`: an entry is a key prefix ending at a word.
fn listed(key: &str) -> Option<&'static str> {
    KNOWN
        .lines()
        .filter_map(|l| l.split('#').next())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .find(|entry| {
            key.strip_prefix(entry)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '/']))
        })
}

/// Gates the OpenShift build of `../shared/k8s/` adds to upstream's (not Kubernetes').
const FORK_ONLY_GATES: &[&str] = &[
    "MinimumKubeletVersion",
    "RouteExternalCertificate",
    "StoragePerformantSecurityPolicy",
];

/// Capstan's feature gate table against the gates upstream's server reports in its
/// `kubernetes_feature_enabled` metric: the same names, stages and defaults.
async fn feature_gates_are_upstreams(upstream: &RawClient) {
    use capstan_serving::feature_gates::{Stage, known};
    let metrics = upstream.get("/metrics").await;
    let text = String::from_utf8_lossy(&metrics.body);
    let theirs: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("kubernetes_feature_enabled{name=\""))
        .filter_map(|l| {
            let (name, rest) = l.split_once('"')?;
            let stage = rest.split('"').nth(1)?;
            let on = rest.rsplit(' ').next()? == "1";
            (!FORK_ONLY_GATES.contains(&name)).then(|| format!("{name} {stage} {on}"))
        })
        .collect();
    let ours: BTreeSet<String> = known()
        .map(|g| {
            let stage = match g.stage {
                Stage::Alpha => "ALPHA",
                Stage::Beta => "BETA",
                Stage::Ga => "",
                Stage::Deprecated => "DEPRECATED",
            };
            format!("{} {stage} {}", g.name, g.default)
        })
        .collect();
    assert!(theirs.len() > 200, "upstream's metrics: {text:.300}");
    let only_ours: Vec<_> = ours.difference(&theirs).collect();
    let only_theirs: Vec<_> = theirs.difference(&ours).collect();
    assert!(
        only_ours.is_empty() && only_theirs.is_empty(),
        "feature gates differ:\ncapstan only: {only_ours:?}\nupstream only: {only_theirs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_and_openapi_are_upstreams() {
    let upstream = Upstream::start().await;
    feature_gates_are_upstreams(&upstream.client).await;
    // Authorized as upstream's is (anonymous requests are then admitted, and refused by RBAC).
    let server = TestServer::start_with(|c| {
        c.authorization_modes = vec!["Node".into(), "RBAC".into()];
    })
    .await;
    let mut ours = facts(&capstan(&server)).await;
    let mut theirs = facts(&upstream.client).await;
    let anonymous = |url: &str, ca: &str| RawClient::new(url, ca, None);
    response_headers(
        &capstan(&server),
        &anonymous(&server.url(), server.ca_pem()),
        &mut ours,
    )
    .await;
    response_headers(
        &upstream.client,
        &anonymous(&upstream.url, &upstream.ca_pem),
        &mut theirs,
    )
    .await;
    compression(&capstan(&server), &mut ours).await;
    compression(&upstream.client, &mut theirs).await;
    pretty_printing(&capstan(&server), &mut ours).await;
    pretty_printing(&upstream.client, &mut theirs).await;
    final_newlines(&capstan(&server), &mut ours).await;
    final_newlines(&upstream.client, &mut theirs).await;
    openapi_v2_headers(&capstan(&server), &mut ours).await;
    openapi_v2_headers(&upstream.client, &mut theirs).await;
    common_order(&mut ours, &mut theirs);
    let keys: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    let mut unexplained = Vec::new();
    let mut used = BTreeSet::new();
    for key in keys {
        let (a, b) = (ours.get(key), theirs.get(key));
        if a == b {
            continue;
        }
        match listed(key) {
            Some(entry) => {
                used.insert(entry);
            }
            None => unexplained.push(format!(
                "{key}\n    capstan:  {}\n    upstream: {}",
                a.map_or("(none)", String::as_str),
                b.map_or("(none)", String::as_str)
            )),
        }
    }
    let stale: Vec<&str> = KNOWN
        .lines()
        .filter_map(|l| l.split('#').next())
        .map(str::trim)
        .filter(|l| !l.is_empty() && !used.contains(l))
        .collect();
    assert!(
        unexplained.is_empty() && stale.is_empty(),
        "{} unexplained differences:\n{}\nlisted but no longer different: {stale:?}",
        unexplained.len(),
        unexplained.join("\n")
    );
}
