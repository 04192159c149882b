//! OpenAPI v3 documents for the served group versions, generated from the registered types'
//! schemas (the upstream definitions, via `k8s-openapi`'s schemars support) and descriptors.
//! kubectl reads them for `explain`, for server-side field validation support and for apply.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use bytes::Bytes;
use capstan_meta::ResourceDescriptor;
use capstan_registry::{RestStorage, group_versions};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::WatchEvent;
use k8s_openapi::apimachinery::pkg::version::Info;
use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::KUBERNETES_VERSION;

/// The served OpenAPI v3 documents.
pub struct OpenApi {
    /// `/openapi/v3`: the index of group-version documents.
    index: Bytes,
    /// Documents by path after `/openapi/v3/` (e.g. `apis/storage.k8s.io/v1`).
    documents: BTreeMap<String, Bytes>,
}

const REF_PREFIX: &str = "#/components/schemas/";

fn hash_hex(bytes: &[u8]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    format!("{:016X}", h.finish())
}

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

/// The documents beside the group versions': `api`, `apis`, each group's, `version` and
/// the service-account issuer's two.
fn discovery_documents(resources: &[Arc<dyn RestStorage>]) -> Vec<(String, Bytes)> {
    use capstan_meta::v1::{APIGroup, APIGroupList, APIVersions};
    let mut out = Vec::new();
    let mut add = |key: String, paths: Value, mut generator: SchemaGenerator| {
        let schemas = generator.take_definitions(true).into_iter().collect();
        let Value::Object(paths) = paths else {
            return;
        };
        let doc = document(paths, schemas);
        out.push((
            key,
            Bytes::from(serde_json::to_vec(&doc).unwrap_or_default()),
        ));
    };
    let generator = || SchemaSettings::openapi3().into_generator();
    let mut g = generator();
    let versions = ref_name(&g.subschema_for::<APIVersions>()).unwrap_or_default();
    add(
        "api".into(),
        json!({"/api/": discovery_path("getCoreAPIVersions", "core", &versions)}),
        g,
    );
    let mut g = generator();
    let list = ref_name(&g.subschema_for::<APIGroupList>()).unwrap_or_default();
    add(
        "apis".into(),
        json!({"/apis/": discovery_path("getAPIVersions", "apis", &list)}),
        g,
    );
    for (group, _) in group_versions(resources.iter().map(|r| r.descriptor())) {
        if group.is_empty() {
            continue;
        }
        let mut g = generator();
        let api_group = ref_name(&g.subschema_for::<APIGroup>()).unwrap_or_default();
        let (word, tag) = tag_words(&group);
        let path = format!("/apis/{group}/");
        let mut paths = Map::new();
        paths.insert(
            path,
            discovery_path(&format!("get{word}APIGroup"), &tag, &api_group),
        );
        add(format!("apis/{group}"), Value::Object(paths), g);
    }
    let mut g = generator();
    let info = ref_name(&g.subschema_for::<Info>()).unwrap_or_default();
    let mut version = discovery_path("getCodeVersion", "version", &info);
    version["get"]["description"] = "get the version information for this server".into();
    version["get"]["responses"]["200"]["content"] =
        json!({"application/json": {"schema": {"$ref": format!("{REF_PREFIX}{info}")}}});
    add("version".into(), json!({"/version/": version}), g);
    for (key, operation, tag, media) in [
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
    ] {
        let path = json!({"get": {
            "tags": [tag],
            "description": "the service account issuer's discovery document",
            "operationId": operation,
            "responses": {
                "200": {"description": "OK", "content": {media: {"schema": {"type": "string"}}}},
                "401": {"description": "Unauthorized"},
            },
        }});
        let mut paths = Map::new();
        paths.insert(format!("/{key}/"), path);
        add(key.into(), Value::Object(paths), generator());
    }
    out
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
    /// Builds the documents of every served group version.
    pub fn build(resources: &[Arc<dyn RestStorage>]) -> Self {
        let mut docs = BTreeMap::new();
        for (group, versions) in group_versions(resources.iter().map(|r| r.descriptor())) {
            for version in versions {
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
                            "exec" | "attach" | "portforward" | "log" => {
                                stream_paths(d, &mut paths)
                            }
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
                let (group_word, tag) = tag_words(&group);
                paths.insert(
                    format!("{}/", group_version_path(&group, &version)),
                    discovery_path(
                        &format!("get{group_word}{}APIResources", capitalize(&version)),
                        &format!("{tag}_{version}"),
                        &ref_name(&resources_ref).unwrap_or_default(),
                    ),
                );
                let mut schemas: Map<String, Value> =
                    generator.take_definitions(true).into_iter().collect();
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
                let key = if group.is_empty() {
                    format!("api/{version}")
                } else {
                    format!("apis/{group}/{version}")
                };
                docs.insert(
                    key,
                    Bytes::from(serde_json::to_vec(&doc).unwrap_or_default()),
                );
            }
        }
        docs.extend(discovery_documents(resources));
        let mut index = Map::new();
        for (key, doc) in &docs {
            index.insert(
                key.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={}", hash_hex(doc))}),
            );
        }
        let index = Bytes::from(serde_json::to_vec(&json!({"paths": index})).unwrap_or_default());
        Self {
            index,
            documents: docs,
        }
    }

    /// The document at `path` (`/openapi/v3` or `/openapi/v3/<group version>`).
    pub fn get(&self, path: &str) -> Option<Bytes> {
        let rest = path.strip_prefix("/openapi/v3")?.trim_matches('/');
        if rest.is_empty() {
            Some(self.index.clone())
        } else {
            self.documents.get(rest).cloned()
        }
    }
}
