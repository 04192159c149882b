//! OpenAPI v3 documents for the served group versions, generated from the registered types'
//! schemas (the upstream definitions, via `k8s-openapi`'s schemars support) and descriptors.
//! kubectl reads them for `explain`, for server-side field validation support and for apply.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use capstan_meta::ResourceDescriptor;
use capstan_registry::{RestStorage, group_versions};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::WatchEvent;
use k8s_openapi::apimachinery::pkg::version::Info;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::KUBERNETES_VERSION;

/// The served OpenAPI v3 documents.
pub struct OpenApi {
    /// `/openapi/v3`: the index of group-version documents.
    index: Bytes,
    /// Documents by path after `/openapi/v3/` (e.g. `apis/storage.k8s.io/v1`).
    documents: BTreeMap<String, Lazy>,
    /// What the documents are made from: the resources served when the index was made.
    resources: Vec<Arc<dyn RestStorage>>,
}

const REF_PREFIX: &str = "#/components/schemas/";

fn query_param(name: &str, kind: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": kind, "uniqueItems": true}})
}

fn write_params() -> Vec<Value> {
    vec![
        query_param(
            "dryRun",
            "string",
            "When present, indicates that modifications should not be persisted. Valid value: All.",
        ),
        query_param(
            "fieldManager",
            "string",
            "A name associated with the actor or entity that is making these changes.",
        ),
        query_param(
            "fieldValidation",
            "string",
            "How the server treats unknown or duplicate fields in the body: Ignore, Warn (default) or Strict.",
        ),
    ]
}

fn delete_params() -> Vec<Value> {
    vec![
        query_param(
            "dryRun",
            "string",
            "When present, indicates that modifications should not be persisted.",
        ),
        query_param(
            "gracePeriodSeconds",
            "integer",
            "The duration in seconds before the object should be deleted.",
        ),
        query_param(
            "propagationPolicy",
            "string",
            "Whether and how garbage collection will be performed.",
        ),
    ]
}

fn list_params() -> Vec<Value> {
    vec![
        query_param(
            "allowWatchBookmarks",
            "boolean",
            "Requests watch events with type BOOKMARK.",
        ),
        query_param(
            "continue",
            "string",
            "The continue token of the previous chunk of a chunked list.",
        ),
        query_param("fieldSelector", "string", "Restricts the list by fields."),
        query_param("labelSelector", "string", "Restricts the list by labels."),
        query_param("limit", "integer", "The maximum number of items to return."),
        query_param(
            "resourceVersion",
            "string",
            "Constrains which resource versions the request may be served from.",
        ),
        query_param(
            "resourceVersionMatch",
            "string",
            "How resourceVersion is applied: Exact or NotOlderThan.",
        ),
        query_param(
            "sendInitialEvents",
            "boolean",
            "Whether a watch starts with synthetic events for the current state.",
        ),
        query_param(
            "timeoutSeconds",
            "integer",
            "Timeout of the list or watch call.",
        ),
        query_param("watch", "boolean", "Watch for changes instead of listing."),
    ]
}

fn op_name(verb: &str, d: &ResourceDescriptor, namespaced: bool, collection: bool) -> String {
    let mut group_word = tag_words(&d.group).0;
    group_word.push_str(&capitalize(&d.version));
    let scope = if namespaced { "Namespaced" } else { "" };
    let coll = if collection { "Collection" } else { "" };
    let what = if d.subresource.is_empty() {
        d.kind.clone()
    } else {
        format!("{}{}", capitalize(&d.singular), capitalize(&d.subresource))
    };
    format!("{verb}{group_word}{coll}{scope}{what}")
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn content(schema_ref: &str, types: &[&str]) -> Value {
    let mut m = Map::new();
    for t in types {
        m.insert(
            t.to_string(),
            json!({"schema": {"$ref": format!("{REF_PREFIX}{schema_ref}")}}),
        );
    }
    Value::Object(m)
}

fn response(schema_ref: &str, codes: &[&str]) -> Value {
    let mut m = Map::new();
    for code in codes {
        m.insert(code.to_string(), json!({"description": "OK", "content": content(schema_ref, &["application/json", "application/yaml"])}));
    }
    m.insert("401".into(), json!({"description": "Unauthorized"}));
    Value::Object(m)
}

fn paths_for(
    d: &ResourceDescriptor,
    kind_ref: &str,
    list_ref: &str,
    paths: &mut Map<String, Value>,
) {
    let gvk = json!({"group": d.group, "version": d.version, "kind": d.kind});
    let base = group_version_path(&d.group, &d.version);
    let scoped_base = scoped_path(d);
    let mut common = vec![query_param(
        "pretty",
        "string",
        "If 'true', the output is pretty printed.",
    )];
    if d.namespaced {
        common.push(json!({"name": "namespace", "in": "path", "required": true, "description": "object name and auth scope", "schema": {"type": "string", "uniqueItems": true}}));
    }
    let status_ref = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
    let delete_body =
        json!({"content": content("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", &["*/*"])});
    let json_types = ["application/json", "application/yaml"];
    let all_patch_types = [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ];
    // Custom resources take no strategic merge patch (kubectl reads this to choose its
    // client-side apply patch).
    let patch_types: Vec<&str> = all_patch_types
        .into_iter()
        .filter(|t| !d.custom || !t.starts_with("application/strategic"))
        .collect();
    let ns = d.namespaced;
    let op = |verb: &str,
              action: &str,
              coll: bool,
              params: Vec<Value>,
              body: Option<Value>,
              resp: Value| {
        let mut o = json!({
            "tags": [format!("{}_{}", tag_words(&d.group).1, d.version)],
            "description": format!("{verb} {}", d.kind),
            "operationId": op_name(verb, d, ns, coll),
            "parameters": params,
            "responses": resp,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        });
        if let Some(b) = body {
            o["requestBody"] = b;
        }
        o
    };
    let mut collection = Map::new();
    collection.insert(
        "get".into(),
        op(
            "list",
            "list",
            false,
            list_params(),
            None,
            response(list_ref, &["200"]),
        ),
    );
    let create_body = json!({"required": true, "content": content(kind_ref, &json_types)});
    collection.insert(
        "post".into(),
        op(
            "create",
            "post",
            false,
            write_params(),
            Some(create_body),
            response(kind_ref, &["200", "201", "202"]),
        ),
    );
    let mut dc_params = list_params();
    dc_params.extend(delete_params());
    collection.insert(
        "delete".into(),
        op(
            "delete",
            "deletecollection",
            true,
            dc_params,
            Some(delete_body.clone()),
            response(status_ref, &["200"]),
        ),
    );
    collection.insert("parameters".into(), Value::Array(common.clone()));
    for (method, verb) in [
        ("get", "list"),
        ("post", "create"),
        ("delete", "deletecollection"),
    ] {
        if !d.serves(verb) {
            collection.remove(method);
        }
    }
    let subresource = !d.subresource.is_empty();
    let item_path = if subresource {
        format!("{scoped_base}/{}/{{name}}/{}", d.resource, d.subresource)
    } else {
        format!("{scoped_base}/{}/{{name}}", d.resource)
    };
    let post = collection.remove("post");
    if !subresource {
        if let Some(post) = post.clone() {
            collection.insert("post".into(), post);
        }
        if collection.len() > 1 {
            paths.insert(
                format!("{scoped_base}/{}", d.resource),
                Value::Object(collection),
            );
        }
    }

    let mut item = Map::new();
    item.insert(
        "get".into(),
        op(
            "read",
            "get",
            false,
            vec![],
            None,
            response(kind_ref, &["200"]),
        ),
    );
    let replace_body = json!({"required": true, "content": content(kind_ref, &json_types)});
    item.insert(
        "put".into(),
        op(
            "replace",
            "put",
            false,
            write_params(),
            Some(replace_body),
            response(kind_ref, &["200", "201"]),
        ),
    );
    let mut patch_params = write_params();
    patch_params.push(query_param(
        "force",
        "boolean",
        "Force is going to \"force\" Apply requests.",
    ));
    let patch_body = json!({"required": true, "content": content("io.k8s.apimachinery.pkg.apis.meta.v1.Patch", &patch_types)});
    item.insert(
        "patch".into(),
        op(
            "patch",
            "patch",
            false,
            patch_params,
            Some(patch_body),
            response(kind_ref, &["200", "201"]),
        ),
    );
    let del_params = delete_params();
    item.insert(
        "delete".into(),
        op(
            "delete",
            "delete",
            false,
            del_params,
            Some(delete_body),
            response(kind_ref, &["200", "202"]),
        ),
    );
    let mut item_params = common.clone();
    item_params.push(json!({"name": "name", "in": "path", "required": true, "description": format!("name of the {}", d.kind), "schema": {"type": "string", "uniqueItems": true}}));
    item.insert("parameters".into(), Value::Array(item_params));
    for (method, verb) in [
        ("get", "get"),
        ("put", "update"),
        ("patch", "patch"),
        ("delete", "delete"),
    ] {
        if !d.serves(verb) {
            item.remove(method);
        }
    }
    if subresource && let Some(post) = post {
        item.insert("post".into(), post);
    }
    if item.len() > 1 {
        paths.insert(item_path, Value::Object(item));
    }

    if !subresource && d.serves("watch") {
        watch_paths(d, &base, &common, &op, paths);
    }

    if d.namespaced && !subresource && d.serves("list") {
        let mut all = Map::new();
        all.insert(
            "get".into(),
            op(
                "list",
                "list",
                false,
                list_params(),
                None,
                response(list_ref, &["200"]),
            ),
        );
        all.insert(
            "parameters".into(),
            json!([query_param(
                "pretty",
                "string",
                "If 'true', the output is pretty printed."
            )]),
        );
        paths.insert(format!("{base}/{}", d.resource), Value::Object(all));
    }
}

/// A document of `paths` with the `schemas` they reach (upstream's documents hold no others).
fn document(paths: Map<String, Value>, mut schemas: Map<String, Value>) -> Value {
    fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("$ref", Value::String(r)) => out.extend(r.strip_prefix(REF_PREFIX)),
                        _ => refs(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let paths = Value::Object(paths);
    let mut pending = Vec::new();
    refs(&paths, &mut pending);
    let mut reached = std::collections::BTreeSet::new();
    while let Some(name) = pending.pop() {
        if reached.insert(name.to_string())
            && let Some(schema) = schemas.get(name)
        {
            refs(schema, &mut pending);
        }
    }
    schemas.retain(|name, _| reached.contains(name));
    let (major, minor, patch) = KUBERNETES_VERSION;
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": format!("v{major}.{minor}.{patch}")},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// The words a group gives operation ids and tags: `Core`/`core`, `Apps`/`apps`,
/// `RbacAuthorization`/`rbacAuthorization` (dots and dashes end words; `.k8s.io` and `.io`
/// dropped).
fn tag_words(group: &str) -> (String, String) {
    if group.is_empty() {
        return ("Core".into(), "core".into());
    }
    let trimmed = group
        .strip_suffix(".k8s.io")
        .or_else(|| group.strip_suffix(".io"))
        .unwrap_or(group);
    let word: String = trimmed.split(['.', '-']).map(capitalize).collect();
    let mut tag = word.clone();
    if let Some(first) = tag.get_mut(..1) {
        first.make_ascii_lowercase();
    }
    (word, tag)
}

/// A path answering one discovery document of `schema` (JSON, YAML or protobuf).
fn discovery_path(operation: &str, tag: &str, schema: &str) -> Value {
    let types = [
        "application/json",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
    ];
    json!({"get": {
        "tags": [tag],
        "description": "get available resources",
        "operationId": operation,
        "responses": {
            "200": {"description": "OK", "content": content(schema, &types)},
            "401": {"description": "Unauthorized"},
        },
    }})
}

/// The issuer's two documents: the path after `/openapi/v3/`, the operation, the tag and the
/// media type.
const ISSUER_DOCUMENTS: [(&str, &str, &str, &str); 2] = [
    (
        ".well-known/openid-configuration",
        "getServiceAccountIssuerOpenIDConfiguration",
        "WellKnown",
        "application/json",
    ),
    (
        "openid/v1/jwks",
        "getServiceAccountIssuerOpenIDKeyset",
        "openid",
        "application/jwk-set+json",
    ),
];

/// The documents beside the group versions': `api`, `apis`, each group's, `version` and
/// the service-account issuer's two.
fn discovery_keys(resources: &[Arc<dyn RestStorage>]) -> Vec<String> {
    let mut keys = vec!["api".to_string(), "apis".to_string()];
    for (group, _) in group_versions(resources.iter().map(|r| r.descriptor())) {
        if !group.is_empty() {
            keys.push(format!("apis/{group}"));
        }
    }
    keys.push("version".into());
    keys.extend(ISSUER_DOCUMENTS.iter().map(|(key, ..)| key.to_string()));
    keys
}

/// The discovery document `key` names (one of [`discovery_keys`]).
fn discovery_document(key: &str) -> Bytes {
    use capstan_meta::v1::{APIGroup, APIGroupList, APIVersions};
    let mut g = SchemaSettings::openapi3().into_generator();
    let paths = match key {
        "api" => {
            let versions = ref_name(&g.subschema_for::<APIVersions>()).unwrap_or_default();
            json!({"/api/": discovery_path("getCoreAPIVersions", "core", &versions)})
        }
        "apis" => {
            let list = ref_name(&g.subschema_for::<APIGroupList>()).unwrap_or_default();
            json!({"/apis/": discovery_path("getAPIVersions", "apis", &list)})
        }
        "version" => {
            let info = ref_name(&g.subschema_for::<Info>()).unwrap_or_default();
            let mut version = discovery_path("getCodeVersion", "version", &info);
            version["get"]["description"] = "get the version information for this server".into();
            version["get"]["responses"]["200"]["content"] =
                json!({"application/json": {"schema": {"$ref": format!("{REF_PREFIX}{info}")}}});
            json!({"/version/": version})
        }
        _ => match (
            key.strip_prefix("apis/"),
            ISSUER_DOCUMENTS.iter().find(|(k, ..)| *k == key),
        ) {
            (_, Some((_, operation, tag, media))) => {
                let path = json!({"get": {
                    "tags": [tag],
                    "description": "the service account issuer's discovery document",
                    "operationId": operation,
                    "responses": {
                        "200": {"description": "OK", "content": {*media: {"schema": {"type": "string"}}}},
                        "401": {"description": "Unauthorized"},
                    },
                }});
                let mut paths = Map::new();
                paths.insert(format!("/{key}/"), path);
                Value::Object(paths)
            }
            (Some(group), None) => {
                let api_group = ref_name(&g.subschema_for::<APIGroup>()).unwrap_or_default();
                let (word, tag) = tag_words(group);
                let mut paths = Map::new();
                paths.insert(
                    format!("/apis/{group}/"),
                    discovery_path(&format!("get{word}APIGroup"), &tag, &api_group),
                );
                Value::Object(paths)
            }
            (None, None) => Value::Object(Map::new()),
        },
    };
    let Value::Object(paths) = paths else {
        unreachable!("paths are an object")
    };
    let schemas = g.take_definitions(true).into_iter().collect();
    Bytes::from(serde_json::to_vec(&document(paths, schemas)).unwrap_or_default())
}

/// The path of a group version: `/api/v1`, `/apis/apps/v1`.
fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// The path `d`'s objects sit under: its group version's, and `namespaces/{namespace}` below
/// it when they are namespaced.
fn scoped_path(d: &ResourceDescriptor) -> String {
    let base = group_version_path(&d.group, &d.version);
    if d.namespaced {
        format!("{base}/namespaces/{{namespace}}")
    } else {
        base
    }
}

/// A `proxy` subresource's paths: the object's and any path below it, every method passed
/// through (`connect` operations upstream).
fn proxy_paths(d: &ResourceDescriptor, paths: &mut Map<String, Value>) {
    let item = format!(
        "{}/{}/{{name}}/{}",
        scoped_path(d),
        d.resource,
        d.subresource
    );
    let (group_word, tag) = tag_words(&d.group);
    let scope = if d.namespaced { "Namespaced" } else { "" };
    let what = format!("{}{}", capitalize(&d.singular), capitalize(&d.subresource));
    let path_param = |name: &str, description: &str| {
        json!({"name": name, "in": "path", "required": true, "description": description,
            "schema": {"type": "string", "uniqueItems": true}})
    };
    for (path, suffix) in [(item.clone(), ""), (format!("{item}/{{path}}"), "WithPath")] {
        let mut entry = Map::new();
        for method in ["delete", "get", "head", "options", "patch", "post", "put"] {
            let verb = capitalize(method);
            entry.insert(
                method.into(),
                json!({
                    "tags": [format!("{tag}_{}", d.version)],
                    "description": format!("connect {method} requests to proxy of {}", d.kind),
                    "operationId": format!("connect{group_word}{}{verb}{scope}{what}{suffix}", capitalize(&d.version)),
                    "responses": {
                        "200": {"description": "OK", "content": {"*/*": {"schema": {"type": "string"}}}},
                        "401": {"description": "Unauthorized"},
                    },
                    "x-kubernetes-action": "connect",
                    "x-kubernetes-group-version-kind": {"group": d.group, "version": d.version, "kind": d.kind},
                }),
            );
        }
        let mut params = vec![path_param("name", &format!("name of the {}", d.kind))];
        if d.namespaced {
            params.push(path_param("namespace", "object name and auth scope"));
        }
        if !suffix.is_empty() {
            params.push(path_param("path", "path to the resource"));
        }
        entry.insert("parameters".into(), Value::Array(params));
        paths.insert(path, Value::Object(entry));
    }
}

/// The query parameters of a kubelet subresource, with their types.
fn stream_parameters(subresource: &str) -> &'static [(&'static str, &'static str, &'static str)] {
    const STREAMS: [(&str, &str, &str); 4] = [
        (
            "stderr",
            "boolean",
            "Redirect the standard error stream of the pod for this call.",
        ),
        (
            "stdin",
            "boolean",
            "Redirect the standard input stream of the pod for this call.",
        ),
        (
            "stdout",
            "boolean",
            "Redirect the standard output stream of the pod for this call.",
        ),
        ("tty", "boolean", "Allocate a terminal for this call."),
    ];
    match subresource {
        "exec" => &[
            (
                "command",
                "string",
                "Command is the remote command to execute; argv array, not run in a shell.",
            ),
            (
                "container",
                "string",
                "Container in which to execute the command; defaults to the only container if there is one.",
            ),
            STREAMS[0],
            STREAMS[1],
            STREAMS[2],
            STREAMS[3],
        ],
        "attach" => &[
            (
                "container",
                "string",
                "The container in which to execute the command; defaults to the only container if there is one.",
            ),
            STREAMS[0],
            STREAMS[1],
            STREAMS[2],
            STREAMS[3],
        ],
        "portforward" => &[("ports", "integer", "List of ports to forward.")],
        _ => &[
            (
                "container",
                "string",
                "The container for which to stream logs; defaults to the only container if there is one.",
            ),
            ("follow", "boolean", "Follow the log stream of the pod."),
            (
                "insecureSkipTLSVerifyBackend",
                "boolean",
                "Do not verify the serving certificate of the backend (the kubelet) for this request.",
            ),
            (
                "limitBytes",
                "integer",
                "The number of bytes to read from the server before terminating the log output.",
            ),
            (
                "previous",
                "boolean",
                "Return the logs of the previous terminated container.",
            ),
            (
                "sinceSeconds",
                "integer",
                "A relative time in seconds before the current time from which to show logs.",
            ),
            (
                "stream",
                "string",
                "The stream to return (All, Stdout or Stderr).",
            ),
            (
                "tailLines",
                "integer",
                "The number of lines from the end of the logs to show.",
            ),
            (
                "timestamps",
                "boolean",
                "Add an RFC3339 timestamp at the beginning of every line of output.",
            ),
        ],
    }
}

/// The path of a kubelet subresource (`pods/{name}/exec`, …): `get` for logs, `get` and
/// `post` (`connect` operations) for the streams.
fn stream_paths(d: &ResourceDescriptor, paths: &mut Map<String, Value>) {
    let path = format!(
        "{}/{}/{{name}}/{}",
        scoped_path(d),
        d.resource,
        d.subresource
    );
    let (group_word, tag) = tag_words(&d.group);
    let what = format!("{}{}", capitalize(&d.singular), capitalize(&d.subresource));
    let version = capitalize(&d.version);
    let mut entry = Map::new();
    let methods: &[&str] = if d.subresource == "log" {
        &["get"]
    } else {
        &["get", "post"]
    };
    for method in methods {
        let (operation, action, content) = if d.subresource == "log" {
            (
                format!("read{group_word}{version}Namespaced{what}"),
                "get",
                "text/plain",
            )
        } else {
            (
                format!(
                    "connect{group_word}{version}{}Namespaced{what}",
                    capitalize(method)
                ),
                "connect",
                "*/*",
            )
        };
        let parameters: Vec<Value> = stream_parameters(&d.subresource)
            .iter()
            .map(|(name, kind, description)| {
                json!({"name": name, "in": "query", "description": description,
                    "schema": {"type": kind, "uniqueItems": true}})
            })
            .collect();
        entry.insert(
            (*method).into(),
            json!({
                "tags": [format!("{tag}_{}", d.version)],
                "description": format!("{action} {method} requests to {} of {}", d.subresource, d.kind),
                "operationId": operation,
                "parameters": parameters,
                "responses": {
                    "200": {"description": "OK", "content": {content: {"schema": {"type": "string"}}}},
                    "401": {"description": "Unauthorized"},
                },
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": {"group": d.group, "version": d.version, "kind": d.kind},
            }),
        );
    }
    entry.insert(
        "parameters".into(),
        json!([
            {"name": "name", "in": "path", "required": true, "description": format!("name of the {}", d.kind), "schema": {"type": "string", "uniqueItems": true}},
            {"name": "namespace", "in": "path", "required": true, "description": "object name and auth scope", "schema": {"type": "string", "uniqueItems": true}},
        ]),
    );
    paths.insert(path, Value::Object(entry));
}

/// The deprecated `/watch/` paths upstream still documents: one object, a namespace's
/// collection (or the cluster's) and, for namespaced resources, every namespace's.
fn watch_paths(
    d: &ResourceDescriptor,
    base: &str,
    common: &[Value],
    op: &OperationBuilder<'_>,
    paths: &mut Map<String, Value>,
) {
    let watch = response(WATCH_EVENT, &["200"]);
    let scoped = if d.namespaced {
        format!("{base}/watch/namespaces/{{namespace}}/{}", d.resource)
    } else {
        format!("{base}/watch/{}", d.resource)
    };
    let with_id = |mut o: Value, suffix: &str| {
        let id = format!("{}{suffix}", o["operationId"].as_str().unwrap_or(""));
        o["operationId"] = id.into();
        o
    };
    let mut list = Map::new();
    list.insert(
        "get".into(),
        with_id(
            op(
                "watch",
                "watchlist",
                false,
                list_params(),
                None,
                watch.clone(),
            ),
            "List",
        ),
    );
    list.insert("parameters".into(), Value::Array(common.to_vec()));
    paths.insert(scoped.clone(), Value::Object(list));
    let mut one = Map::new();
    one.insert(
        "get".into(),
        op("watch", "watch", false, list_params(), None, watch.clone()),
    );
    let mut one_params = common.to_vec();
    one_params.push(json!({"name": "name", "in": "path", "required": true, "description": format!("name of the {}", d.kind), "schema": {"type": "string", "uniqueItems": true}}));
    one.insert("parameters".into(), Value::Array(one_params));
    paths.insert(format!("{scoped}/{{name}}"), Value::Object(one));
    if d.namespaced {
        let mut all = Map::new();
        let mut o = op("watch", "watchlist", false, list_params(), None, watch);
        o["operationId"] = (op_name("watch", d, false, false) + "ListForAllNamespaces").into();
        all.insert("get".into(), o);
        all.insert("parameters".into(), Value::Array(common[..1].to_vec()));
        paths.insert(format!("{base}/watch/{}", d.resource), Value::Object(all));
    }
}

/// Builds one operation of a resource: (verb, action, collection, parameters, body,
/// responses).
type OperationBuilder<'a> =
    dyn Fn(&str, &str, bool, Vec<Value>, Option<Value>, Value) -> Value + 'a;

const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";

fn ref_name(schema: &schemars::Schema) -> Option<String> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix(REF_PREFIX))
        .map(str::to_string)
}

/// Puts upstream's merge extensions on the definitions (`x-kubernetes-patch-merge-key`,
/// `-patch-strategy`, `-list-type`, `-list-map-keys`, `-map-type`), from the markers of the
/// upstream types: kubectl's client-side apply and strategic merge patches read them.
pub(crate) fn add_merge_extensions(schemas: &mut Map<String, Value>) {
    for (message, field, markers) in capstan_negotiation::schema::upstream_markers() {
        let Some(Value::Object(def)) = schemas.get_mut(&format!("io.k8s.{message}")) else {
            continue;
        };
        let target = if field.is_empty() {
            def
        } else {
            match def.get_mut("properties").and_then(|p| p.get_mut(field)) {
                Some(Value::Object(property)) => property,
                _ => continue,
            }
        };
        let mut map_keys = Vec::new();
        for marker in markers {
            let Some((key, value)) = marker.split_once('=') else {
                continue;
            };
            let extension = match key {
                "patchMergeKey" => "x-kubernetes-patch-merge-key",
                "patchStrategy" => "x-kubernetes-patch-strategy",
                "listType" => "x-kubernetes-list-type",
                "mapType" | "structType" => "x-kubernetes-map-type",
                "listMapKey" => {
                    map_keys.push(Value::String(value.into()));
                    continue;
                }
                _ => continue,
            };
            target.insert(extension.into(), Value::String(value.into()));
        }
        if !map_keys.is_empty() {
            target.insert("x-kubernetes-list-map-keys".into(), Value::Array(map_keys));
        }
    }
}

fn set_gvk(schemas: &mut Map<String, Value>, name: &str, gvks: Value) {
    if let Some(Value::Object(def)) = schemas.get_mut(name) {
        def.insert("x-kubernetes-group-version-kind".into(), gvks);
    }
}

impl OpenApi {
    /// The documents of every served group version, and the others the index lists. Only
    /// the index is made here: each document is built the first time it is asked for.
    pub fn new(resources: Vec<Arc<dyn RestStorage>>) -> Self {
        let mut documents = BTreeMap::new();
        for (group, versions) in group_versions(resources.iter().map(|r| r.descriptor())) {
            for version in versions {
                let key = if group.is_empty() {
                    format!("api/{version}")
                } else {
                    format!("apis/{group}/{version}")
                };
                let source = Source::GroupVersion {
                    group: group.clone(),
                    version,
                };
                let hash = fingerprint(&key, &source, &resources);
                documents.insert(key, Lazy::new(source, hash));
            }
        }
        for key in discovery_keys(&resources) {
            let hash = fingerprint(&key, &Source::Discovery, &resources);
            documents.insert(key, Lazy::new(Source::Discovery, hash));
        }
        let mut index = Map::new();
        for (key, doc) in &documents {
            index.insert(
                key.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={}", doc.hash)}),
            );
        }
        let index = Bytes::from(serde_json::to_vec(&json!({"paths": index})).unwrap_or_default());
        Self {
            resources,
            index,
            documents,
        }
    }

    /// The document at `path` (`/openapi/v3` or `/openapi/v3/<group version>`), built now if
    /// it was not yet (on a thread of its own, see [`capstan_serving::memory::on_own_thread`]).
    pub fn get(&self, path: &str) -> Option<Bytes> {
        let rest = path.strip_prefix("/openapi/v3")?.trim_matches('/');
        if rest.is_empty() {
            return Some(self.index.clone());
        }
        let doc = self.documents.get(rest)?;
        let built = doc.built.get_or_init(|| {
            capstan_serving::memory::on_own_thread(|| match &doc.source {
                Source::GroupVersion { group, version } => {
                    group_version_document(&self.resources, group, version)
                }
                Source::Discovery => discovery_document(rest),
            })
        });
        Some(built.clone())
    }

    /// The hash the index gives the document at `path` (`None` for the index itself and
    /// for paths the index does not list).
    pub fn hash(&self, path: &str) -> Option<&str> {
        let rest = path.strip_prefix("/openapi/v3")?.trim_matches('/');
        self.documents.get(rest).map(|d| d.hash.as_str())
    }

    /// How many documents were built so far.
    #[cfg(test)]
    fn built(&self) -> usize {
        self.documents
            .values()
            .filter(|d| d.built.get().is_some())
            .count()
    }
}

/// A document the index lists, built on first use.
struct Lazy {
    source: Source,
    /// What the index publishes as the document's `hash`.
    hash: String,
    built: OnceLock<Bytes>,
}

impl Lazy {
    fn new(source: Source, hash: String) -> Self {
        Self {
            source,
            hash,
            built: OnceLock::new(),
        }
    }
}

/// What a document is made from.
enum Source {
    /// The paths and schemas of one group version's resources.
    GroupVersion { group: String, version: String },
    /// A discovery endpoint's (`api`, `apis`, a group's, `version`, the issuer's).
    Discovery,
}

/// The `hash` the index gives a document: it changes whenever the document could, without
/// building it. A document is made from the executable (the built-in types' schemas, the
/// shapes of paths) and its group version's resources: their descriptors, and for custom
/// resources the schema their CRD gives, which the descriptor does not tell.
fn fingerprint(key: &str, source: &Source, resources: &[Arc<dyn RestStorage>]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    executable_identity().hash(&mut h);
    key.hash(&mut h);
    if let Source::GroupVersion { group, version } = source {
        for storage in resources {
            let d = storage.descriptor();
            if d.group != *group || d.version != *version {
                continue;
            }
            format!("{d:?}").hash(&mut h);
            if d.custom {
                let mut generator = SchemaSettings::openapi3().into_generator();
                let schema = storage.schema(&mut generator);
                serde_json::to_string(&schema)
                    .unwrap_or_default()
                    .hash(&mut h);
                for (name, definition) in generator.take_definitions(true) {
                    name.hash(&mut h);
                    serde_json::to_string(&definition)
                        .unwrap_or_default()
                        .hash(&mut h);
                }
            }
        }
    }
    format!("{:016X}", h.finish())
}

/// What tells this build of the server from another: the crate's version and the
/// executable file's size and modification time.
fn executable_identity() -> &'static (String, u64, u128) {
    static IDENTITY: OnceLock<(String, u64, u128)> = OnceLock::new();
    IDENTITY.get_or_init(|| {
        let file = std::env::current_exe().and_then(std::fs::metadata).ok();
        let size = file.as_ref().map_or(0, |m| m.len());
        let modified = file
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        (env!("CARGO_PKG_VERSION").to_string(), size, modified)
    })
}

/// The document of one group version: its resources' paths and the schemas they reach.
fn group_version_document(resources: &[Arc<dyn RestStorage>], group: &str, version: &str) -> Bytes {
    let mut generator = SchemaSettings::openapi3().into_generator();
    let status_ref = generator.subschema_for::<capstan_meta::v1::Status>();
    generator.subschema_for::<capstan_meta::v1::DeleteOptions>();
    let list_meta = generator.subschema_for::<capstan_meta::v1::ListMeta>();
    let mut paths = Map::new();
    let mut extra_schemas = Map::new();
    let mut kinds = Vec::new();
    for storage in resources {
        let d = storage.descriptor();
        if d.group != group || d.version != version {
            continue;
        }
        let kind_schema = storage.schema(&mut generator);
        let Some(kind_ref) = ref_name(&kind_schema) else {
            match d.subresource.as_str() {
                "proxy" => proxy_paths(d, &mut paths),
                "exec" | "attach" | "portforward" | "log" => stream_paths(d, &mut paths),
                _ => {}
            }
            continue;
        };
        let list_ref = format!("{kind_ref}List");
        let listed = d.subresource.is_empty() && d.serves("list");
        if listed {
            extra_schemas.insert(
                list_ref.clone(),
                json!({
                    "description": format!("{}List is a list of {} objects.", d.kind, d.kind),
                    "type": "object",
                    "required": ["items"],
                    "properties": {
                        "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object.", "type": "string"},
                        "items": {"description": format!("items is the list of {} objects.", d.kind), "type": "array", "items": {"$ref": format!("{REF_PREFIX}{kind_ref}")}},
                        "kind": {"description": "Kind is a string value representing the REST resource this object represents.", "type": "string"},
                        "metadata": list_meta.clone(),
                    },
                    "x-kubernetes-group-version-kind": [{"group": d.group, "kind": d.list_kind(), "version": d.version}],
                }),
            );
        }
        paths_for(d, &kind_ref, &list_ref, &mut paths);
        kinds.push((kind_ref, d.clone()));
    }
    generator.subschema_for::<WatchEvent<()>>();
    let resources_ref = generator.subschema_for::<capstan_meta::v1::APIResourceList>();
    let (group_word, tag) = tag_words(group);
    paths.insert(
        format!("{}/", group_version_path(group, version)),
        discovery_path(
            &format!("get{group_word}{}APIResources", capitalize(version)),
            &format!("{tag}_{version}"),
            &ref_name(&resources_ref).unwrap_or_default(),
        ),
    );
    let mut schemas: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    schemas.extend(extra_schemas);
    schemas.insert(
            "io.k8s.apimachinery.pkg.apis.meta.v1.Patch".into(),
            json!({"description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.", "type": "object"}),
        );
    add_merge_extensions(&mut schemas);
    for (name, d) in &kinds {
        set_gvk(
            &mut schemas,
            name,
            json!([{"group": d.group, "kind": d.kind, "version": d.version}]),
        );
    }
    if let Some(name) = ref_name(&status_ref) {
        set_gvk(
            &mut schemas,
            &name,
            json!([{"group": "", "kind": "Status", "version": "v1"}]),
        );
    }
    let doc = document(paths, schemas);
    Bytes::from(serde_json::to_vec(&doc).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A served resource whose schema is `schema` under `name` (a custom one's, when the
    /// descriptor says custom).
    struct Served {
        descriptor: ResourceDescriptor,
        name: &'static str,
        schema: Value,
    }

    #[async_trait::async_trait]
    impl RestStorage for Served {
        fn descriptor(&self) -> &ResourceDescriptor {
            &self.descriptor
        }

        fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
            let schema = schemars::Schema::try_from(self.schema.clone()).expect("an object");
            generator
                .definitions_mut()
                .insert(self.name.into(), schema.to_value());
            schemars::json_schema!({"$ref": format!("{REF_PREFIX}{}", self.name)})
        }
    }

    fn served(group: &str, kind: &str, custom: bool, schema: Value) -> Arc<dyn RestStorage> {
        let name = Box::leak(format!("com.example.{group}.v1.{kind}").into_boxed_str());
        Arc::new(Served {
            descriptor: ResourceDescriptor {
                group: group.into(),
                version: "v1".into(),
                kind: kind.into(),
                resource: format!("{}s", kind.to_lowercase()),
                namespaced: true,
                verbs: vec!["get".into(), "list".into(), "create".into()],
                custom,
                ..Default::default()
            },
            name,
            schema,
        })
    }

    fn hashes(openapi: &OpenApi) -> BTreeMap<String, String> {
        let index: Value = serde_json::from_slice(&openapi.get("/openapi/v3").unwrap()).unwrap();
        index["paths"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(key, entry)| {
                let url = entry["serverRelativeURL"].as_str().unwrap();
                let (path, hash) = url.split_once("?hash=").unwrap();
                assert_eq!(path, format!("/openapi/v3/{key}"));
                (key.clone(), hash.to_string())
            })
            .collect()
    }

    #[test]
    fn documents_are_built_when_first_asked_for() {
        let openapi = OpenApi::new(vec![
            served("", "Widget", false, json!({"type": "object"})),
            served("example.com", "Gadget", true, json!({"type": "object"})),
        ]);
        let keys: Vec<String> = hashes(&openapi).into_keys().collect();
        assert_eq!(
            keys,
            [
                ".well-known/openid-configuration",
                "api",
                "api/v1",
                "apis",
                "apis/example.com",
                "apis/example.com/v1",
                "openid/v1/jwks",
                "version"
            ]
        );
        assert_eq!(openapi.built(), 0, "the index builds no document");
        let doc: Value =
            serde_json::from_slice(&openapi.get("/openapi/v3/apis/example.com/v1").unwrap())
                .unwrap();
        assert_eq!(openapi.built(), 1);
        assert!(
            doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/gadgets"].is_object(),
            "{doc}"
        );
        assert!(doc["components"]["schemas"]["com.example.example.com.v1.Gadget"].is_object());
        let again = openapi.get("/openapi/v3/apis/example.com/v1/").unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&again).unwrap(), doc);
        assert_eq!(openapi.built(), 1, "built once");
        let group: Value =
            serde_json::from_slice(&openapi.get("/openapi/v3/apis/example.com").unwrap()).unwrap();
        assert!(group["paths"]["/apis/example.com/"].is_object(), "{group}");
        assert!(openapi.get("/openapi/v3/apis/example.com/v2").is_none());
    }

    #[test]
    fn hashes_change_with_what_documents_are_made_of() {
        let widget = || served("", "Widget", false, json!({"type": "object"}));
        let gadget = |description: &str| {
            served(
                "example.com",
                "Gadget",
                true,
                json!({"type": "object", "description": description}),
            )
        };
        let first = hashes(&OpenApi::new(vec![widget(), gadget("one")]));
        assert_eq!(first, hashes(&OpenApi::new(vec![widget(), gadget("one")])));
        // A CRD's new schema: its group version's document only.
        let changed = hashes(&OpenApi::new(vec![widget(), gadget("two")]));
        let differ: Vec<&String> = first.keys().filter(|k| first[*k] != changed[*k]).collect();
        assert_eq!(differ, ["apis/example.com/v1"]);
        // Another resource in a group version: that document only.
        let more = hashes(&OpenApi::new(vec![
            widget(),
            served("", "Sprocket", false, json!({"type": "object"})),
            gadget("one"),
        ]));
        let differ: Vec<&String> = first.keys().filter(|k| first[*k] != more[*k]).collect();
        assert_eq!(differ, ["api/v1"]);
    }
}
