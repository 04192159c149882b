//! Authorization decisions against upstream's own authorizers: the same RBAC objects, nodes
//! and pods loaded into both servers (each with Node and RBAC authorization), then thousands
//! of generated SubjectAccessReviews and a set of escalation attempts asked of both. Every
//! disagreement fails the test, with the review that shows it.

use std::time::Duration;

use capstan_e2e::RawClient;
use capstan_testing::TestServer;
use futures_util::StreamExt;
use http::Method;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use super::{Upstream, capstan};

/// Both servers, asked the same questions.
pub(super) struct Pair {
    pub upstream: RawClient,
    pub capstan: RawClient,
}

impl Pair {
    /// Sends the same request to both; (upstream's, Capstan's) status and body.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> [(u16, Value); 2] {
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(body).unwrap()
        };
        let mut headers = headers.to_vec();
        headers.push(("content-type", "application/json"));
        let (theirs, mine) = tokio::join!(
            self.upstream
                .request(method.clone(), path, &headers, bytes.clone()),
            self.capstan.request(method.clone(), path, &headers, bytes)
        );
        [theirs, mine].map(|r| {
            (
                r.status.as_u16(),
                serde_json::from_slice(&r.body).unwrap_or(Value::Null),
            )
        })
    }

    /// Sends the same request to both; (upstream's, Capstan's) status, body and warnings.
    pub async fn send_full(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> [(u16, Value, Vec<String>); 2] {
        let bytes = serde_json::to_vec(body).unwrap();
        let mut headers = headers.to_vec();
        headers.push(("content-type", "application/json"));
        let (theirs, mine) = tokio::join!(
            self.upstream
                .request(method.clone(), path, &headers, bytes.clone()),
            self.capstan.request(method.clone(), path, &headers, bytes)
        );
        [theirs, mine].map(|r| {
            let warnings = r
                .headers
                .get_all("warning")
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .collect();
            (
                r.status.as_u16(),
                serde_json::from_slice(&r.body).unwrap_or(Value::Null),
                warnings,
            )
        })
    }

    /// Creates `object` at `path` in both; panics unless both created it (or had it).
    pub async fn create(&self, path: &str, object: Value) {
        let answers = self.send(Method::POST, path, &[], &object).await;
        for ((status, body), server) in answers.into_iter().zip(["upstream", "capstan"]) {
            assert!(
                status == 201 || status == 409,
                "POST {path} to {server}: {status} {body}"
            );
        }
    }
}

/// Starts upstream's kube-apiserver and a Capstan server, both with `--authorization-mode=Node,RBAC`.
pub(super) async fn start_pair() -> (Pair, Upstream, TestServer) {
    start_pair_allowing_privileged(false).await
}

/// [`start_pair`], both servers with `--allow-privileged` as given.
pub(super) async fn start_pair_allowing_privileged(
    allow_privileged: bool,
) -> (Pair, Upstream, TestServer) {
    let flag = format!("--allow-privileged={allow_privileged}");
    let mut upstream = Upstream::start_with(&[&flag]).await;
    upstream.start_controllers("clusterrole-aggregation");
    let server = TestServer::start_with(|c| {
        c.authorization_modes = vec!["Node".into(), "RBAC".into()];
        // As upstream's flags (`--enable-admission-plugins=NodeRestriction`).
        c.admission.enable = vec!["NodeRestriction".into()];
        c.allow_privileged = allow_privileged;
    })
    .await;
    let pair = Pair {
        upstream: upstream.client.clone(),
        capstan: capstan(&server),
    };
    (pair, upstream, server)
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

fn cluster_role(name: &str, labels: Value, rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels}, "rules": rules})
}

fn role(namespace: &str, name: &str, rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name, "namespace": namespace}, "rules": rules})
}

/// A subject: `User:alice`, `Group:devs` or `ServiceAccount:ns:name`.
fn subject(s: &str) -> Value {
    let (kind, name) = s.split_once(':').expect("kind:name");
    match (kind, name.split_once(':')) {
        ("ServiceAccount", Some((ns, name))) => {
            json!({"kind": "ServiceAccount", "namespace": ns, "name": name})
        }
        _ => json!({"kind": kind, "name": name, "apiGroup": "rbac.authorization.k8s.io"}),
    }
}

fn binding(namespace: Option<&str>, name: &str, role: (&str, &str), subjects: &[&str]) -> Value {
    let mut metadata = json!({"name": name});
    let kind = match namespace {
        Some(ns) => {
            metadata["namespace"] = json!(ns);
            "RoleBinding"
        }
        None => "ClusterRoleBinding",
    };
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role.0, "name": role.1},
        "subjects": subjects.iter().map(|s| subject(s)).collect::<Vec<_>>()})
}

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

/// The RBAC objects, namespaces, nodes, and the pods (with what they use) loaded into both.
async fn load(pair: &Pair) {
    for ns in ["team-a", "team-b"] {
        pair.create(
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await;
    }
    for ns in ["team-a", "team-b", "default"] {
        for sa in ["default", "sa1"] {
            pair.create(
                &format!("/api/v1/namespaces/{ns}/serviceaccounts"),
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa}}),
            )
            .await;
        }
    }
    let cluster_roles = [
        cluster_role(
            "reader",
            json!({}),
            vec![
                rule(
                    &[""],
                    &["pods", "configmaps", "services"],
                    &["get", "list", "watch"],
                ),
                rule(&["apps"], &["deployments"], &["get", "list"]),
            ],
        ),
        cluster_role(
            "one-secret",
            json!({}),
            vec![
                json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "update"],
                "resourceNames": ["allowed"]}),
            ],
        ),
        cluster_role(
            "subresources",
            json!({}),
            vec![
                rule(&[""], &["pods/log", "pods/status"], &["get"]),
                rule(&["apps"], &["deployments/*"], &["get", "update"]),
                rule(&["*"], &["*/scale"], &["patch"]),
                rule(&["batch"], &["*"], &["list"]),
            ],
        ),
        cluster_role(
            "urls",
            json!({}),
            vec![json!({"nonResourceURLs": ["/healthz", "/logs/*", "/metrics"], "verbs": ["get"]})],
        ),
        cluster_role(
            "wild",
            json!({}),
            vec![rule(&["*"], &["*"], &["get", "watch"])],
        ),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "gathered"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"gather": "yes"}}]}}),
        cluster_role(
            "gathered-secrets",
            json!({"gather": "yes"}),
            vec![rule(&[""], &["secrets"], &["list"])],
        ),
        cluster_role(
            "impersonator",
            json!({}),
            vec![
                json!({"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["alice"]}),
                rule(&[""], &["groups", "serviceaccounts"], &["impersonate"]),
                rule(
                    &["authentication.k8s.io"],
                    &["userextras/scopes", "uids"],
                    &["impersonate"],
                ),
            ],
        ),
        cluster_role(
            "csr-approver",
            json!({}),
            vec![
                rule(
                    &["certificates.k8s.io"],
                    &["certificatesigningrequests/approval"],
                    &["update"],
                ),
                json!({"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
                    "resourceNames": ["example.com/*"]}),
            ],
        ),
    ];
    for r in cluster_roles {
        pair.create(&format!("{RBAC}/clusterroles"), r).await;
    }
    pair.create(
        &format!("{RBAC}/namespaces/team-a/roles"),
        role(
            "team-a",
            "cm-editor",
            vec![
                rule(&[""], &["configmaps"], &["create", "update", "patch", "delete"]),
                json!({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "update"],
                    "resourceNames": ["x"]}),
            ],
        ),
    )
    .await;
    let cluster_bindings = [
        binding(
            None,
            "devs-read",
            ("ClusterRole", "reader"),
            &["Group:devs"],
        ),
        binding(
            None,
            "carol-subs",
            ("ClusterRole", "subresources"),
            &["User:carol"],
        ),
        binding(None, "dave-urls", ("ClusterRole", "urls"), &["User:dave"]),
        binding(
            None,
            "gathered",
            ("ClusterRole", "gathered"),
            &["User:gina"],
        ),
        binding(None, "imp", ("ClusterRole", "impersonator"), &["User:ivan"]),
        binding(
            None,
            "csr",
            ("ClusterRole", "csr-approver"),
            &["User:carol"],
        ),
        binding(
            None,
            "sa-view",
            ("ClusterRole", "view"),
            &["ServiceAccount:team-b:sa1"],
        ),
    ];
    for b in cluster_bindings {
        pair.create(&format!("{RBAC}/clusterrolebindings"), b).await;
    }
    let bindings = [
        binding(
            Some("team-a"),
            "alice-secret",
            ("ClusterRole", "one-secret"),
            &["User:alice"],
        ),
        binding(
            Some("team-a"),
            "bob-edit",
            ("ClusterRole", "edit"),
            &["User:bob"],
        ),
        binding(
            Some("team-a"),
            "bob-cm",
            ("Role", "cm-editor"),
            &["User:bob", "Group:ops"],
        ),
        binding(
            Some("team-b"),
            "ops-admin",
            ("ClusterRole", "admin"),
            &["Group:ops"],
        ),
        binding(
            Some("team-b"),
            "wild",
            ("ClusterRole", "wild"),
            &["User:wendy"],
        ),
        binding(
            Some("team-a"),
            "all-sas",
            ("ClusterRole", "reader"),
            &["Group:system:serviceaccounts:team-b"],
        ),
        binding(
            Some("team-a"),
            "missing",
            ("Role", "no-such-role"),
            &["User:eve"],
        ),
    ];
    for b in bindings {
        let ns = b["metadata"]["namespace"].as_str().unwrap().to_string();
        pair.create(&format!("{RBAC}/namespaces/{ns}/rolebindings"), b)
            .await;
    }
    for node in ["n1", "n2"] {
        pair.create(
            "/api/v1/nodes",
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}),
        )
        .await;
    }
    for (name, data) in [
        ("s1", "a"),
        ("s2", "b"),
        ("s3", "c"),
        ("allowed", "d"),
        ("csi", "e"),
    ] {
        pair.create(
            "/api/v1/namespaces/team-a/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                "stringData": {"k": data}}),
        )
        .await;
    }
    for name in ["c1", "c2"] {
        pair.create(
            "/api/v1/namespaces/team-a/configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
        )
        .await;
    }
    pair.create(
        "/api/v1/persistentvolumes",
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "claimRef": {"namespace": "team-a", "name": "claim1"},
                "csi": {"driver": "csi.example.com", "volumeHandle": "h1",
                    "nodePublishSecretRef": {"namespace": "team-a", "name": "csi"}}}}),
    )
    .await;
    pair.create(
        "/api/v1/namespaces/team-a/persistentvolumeclaims",
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "claim1"},
            "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv1",
                "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    let container = json!({"name": "c", "image": "busybox",
        "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "s2", "key": "k"}}}]});
    pair.create(
        "/api/v1/namespaces/team-a/pods",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
            "spec": {"nodeName": "n1", "containers": [container],
                "volumes": [
                    {"name": "s", "secret": {"secretName": "s1"}},
                    {"name": "c", "configMap": {"name": "c1"}},
                    {"name": "v", "persistentVolumeClaim": {"claimName": "claim1"}}]}}),
    )
    .await;
    pair.create(
        "/api/v1/namespaces/team-a/pods",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2"},
            "spec": {"nodeName": "n2", "serviceAccountName": "sa1",
                "containers": [{"name": "c", "image": "busybox"}],
                "volumes": [{"name": "s", "secret": {"secretName": "s3"}},
                    {"name": "c", "configMap": {"name": "c2"}}]}}),
    )
    .await;
}

/// The users asked about, with the groups an authenticator would give them.
const USERS: &[(&str, &[&str])] = &[
    ("alice", &["devs", "system:authenticated"]),
    ("bob", &["system:authenticated"]),
    ("carol", &["ops", "system:authenticated"]),
    ("dave", &["system:authenticated"]),
    ("eve", &[]),
    ("gina", &["system:authenticated"]),
    ("ivan", &["system:authenticated"]),
    ("wendy", &["system:authenticated"]),
    ("system:anonymous", &["system:unauthenticated"]),
    ("system:node:n1", &["system:nodes", "system:authenticated"]),
    ("system:node:n2", &["system:nodes", "system:authenticated"]),
    (
        "system:node:ghost",
        &["system:nodes", "system:authenticated"],
    ),
    ("system:node:n1", &["system:authenticated"]),
    (
        "system:serviceaccount:team-b:sa1",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:team-b",
            "system:authenticated",
        ],
    ),
    (
        "system:serviceaccount:team-a:sa1",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:team-a",
            "system:authenticated",
        ],
    ),
    ("system:kube-scheduler", &["system:authenticated"]),
    ("system:kube-controller-manager", &["system:authenticated"]),
    ("system:kube-proxy", &["system:authenticated"]),
    ("system:volume-scheduler", &["system:authenticated"]),
    (
        "system:serviceaccount:kube-system:deployment-controller",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
        ],
    ),
    (
        "system:serviceaccount:kube-system:namespace-controller",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
        ],
    ),
    (
        "system:serviceaccount:kube-system:node-controller",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
        ],
    ),
    (
        "system:serviceaccount:kube-system:generic-garbage-collector",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
        ],
    ),
    (
        "system:serviceaccount:kube-system:certificate-controller",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
        ],
    ),
    ("system:monitoring", &["system:monitoring"]),
    ("anyone", &["system:bootstrappers", "system:authenticated"]),
];

/// (group, resource, subresources) asked about.
const RESOURCES: &[(&str, &str, &[&str])] = &[
    (
        "",
        "pods",
        &[
            "log",
            "status",
            "eviction",
            "exec",
            "binding",
            "ephemeralcontainers",
            "proxy",
            "resize",
        ],
    ),
    ("", "secrets", &[]),
    ("", "configmaps", &[]),
    ("", "services", &["status", "proxy"]),
    ("", "nodes", &["status", "proxy", "metrics"]),
    ("", "endpoints", &[]),
    ("", "events", &[]),
    ("", "persistentvolumeclaims", &["status"]),
    ("", "persistentvolumes", &[]),
    ("", "serviceaccounts", &["token"]),
    ("", "namespaces", &["finalize", "status"]),
    ("", "resourcequotas", &[]),
    ("", "users", &[]),
    ("", "groups", &[]),
    ("apps", "deployments", &["scale", "status"]),
    ("apps", "daemonsets", &["status"]),
    ("apps", "replicasets", &["scale"]),
    ("batch", "jobs", &["status"]),
    ("coordination.k8s.io", "leases", &[]),
    ("events.k8s.io", "events", &[]),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        &["approval", "status"],
    ),
    ("certificates.k8s.io", "signers", &[]),
    ("storage.k8s.io", "csinodes", &[]),
    ("storage.k8s.io", "volumeattachments", &["status"]),
    ("storage.k8s.io", "csidrivers", &[]),
    ("storage.k8s.io", "storageclasses", &[]),
    ("rbac.authorization.k8s.io", "roles", &[]),
    ("rbac.authorization.k8s.io", "clusterroles", &[]),
    ("rbac.authorization.k8s.io", "rolebindings", &[]),
    ("rbac.authorization.k8s.io", "clusterrolebindings", &[]),
    ("discovery.k8s.io", "endpointslices", &[]),
    ("authentication.k8s.io", "tokenreviews", &[]),
    ("authentication.k8s.io", "userextras", &[]),
    ("authorization.k8s.io", "subjectaccessreviews", &[]),
    ("resource.k8s.io", "resourceslices", &[]),
    ("resource.k8s.io", "resourceclaims", &["status"]),
    ("policy", "poddisruptionbudgets", &[]),
    ("networking.k8s.io", "ingresses", &[]),
    ("example.com", "widgets", &[]),
    ("*", "*", &[]),
];

const VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

const RARE_VERBS: &[&str] = &[
    "impersonate",
    "bind",
    "escalate",
    "approve",
    "sign",
    "use",
    "*",
];

const NAMES: &[&str] = &[
    "", "", "", "s1", "s2", "s3", "csi", "allowed", "c1", "c2", "p1", "p2", "n1", "n2", "ghost",
    "claim1", "pv1", "sa1", "default", "alice", "x", "view",
];

const NAMESPACES: &[&str] = &[
    "",
    "",
    "team-a",
    "team-a",
    "team-b",
    "kube-system",
    "default",
];

const URLS: &[&str] = &[
    "/healthz",
    "/livez",
    "/readyz",
    "/version",
    "/version/",
    "/api",
    "/apis",
    "/apis/apps/v1",
    "/openapi/v2",
    "/openapi/v3/apis/apps/v1",
    "/logs",
    "/logs/x",
    "/metrics",
    "/metrics/slis",
    "/debug/pprof",
    "/.well-known/openid-configuration",
    "/openid/v1/jwks",
    "/foo",
];

/// One generated review's spec.
fn review(rng: &mut StdRng) -> Value {
    let (user, groups) = *USERS.choose(rng).unwrap();
    let mut spec = json!({"user": user, "groups": groups});
    if rng.random_ratio(1, 7) {
        let verb = ["get", "post", "put", "delete", "head"]
            .choose(rng)
            .unwrap();
        spec["nonResourceAttributes"] = json!({"path": URLS.choose(rng).unwrap(), "verb": verb});
        return spec;
    }
    let (group, resource, subresources) = *RESOURCES.choose(rng).unwrap();
    let verb = if rng.random_ratio(1, 10) {
        RARE_VERBS.choose(rng).unwrap()
    } else {
        VERBS.choose(rng).unwrap()
    };
    let mut attributes = json!({"verb": verb, "group": group, "resource": resource});
    if !subresources.is_empty() && rng.random_ratio(1, 3) {
        attributes["subresource"] = json!(subresources.choose(rng).unwrap());
    }
    let namespace = NAMESPACES.choose(rng).unwrap();
    if !namespace.is_empty() {
        attributes["namespace"] = json!(namespace);
    }
    let name = NAMES.choose(rng).unwrap();
    if !name.is_empty() {
        attributes["name"] = json!(name);
    }
    if rng.random_ratio(1, 5) {
        let selector = [
            "spec.nodeName=n1",
            "spec.nodeName=n2",
            "metadata.name=n1",
            "metadata.name=allowed",
            "spec.nodeName!=n1",
            "status.phase=Running",
        ]
        .choose(rng)
        .unwrap();
        attributes["fieldSelector"] = json!({"rawSelector": selector});
    }
    spec["resourceAttributes"] = attributes;
    spec
}

/// One server's answer to a review: (HTTP status, allowed, denied).
type Answer = (u16, bool, bool);

/// Asks both servers about `spec`; their answers.
async fn decide(pair: &Pair, spec: &Value) -> [Answer; 2] {
    let body = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec});
    pair.send(
        Method::POST,
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        &[],
        &body,
    )
    .await
    .map(|(status, answer)| {
        (
            status,
            answer["status"]["allowed"] == true,
            answer["status"]["denied"] == true,
        )
    })
}

/// Waits until both servers answer `spec` with allowed (their node graph and aggregated
/// roles are filled from watches, so they trail the writes).
async fn until_allowed(pair: &Pair, spec: Value) {
    for _ in 0..150 {
        let [theirs, mine] = decide(pair, &spec).await;
        if theirs.1 && mine.1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("never allowed on both: {spec}");
}

/// Thousands of generated reviews get the same decision from both servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subject_access_reviews_are_decided_as_upstream_decides() {
    let (pair, _upstream, _server) = start_pair().await;
    // The fork's extra binding (see FORK_ONLY) lets everyone read the issuer discovery
    // documents; upstream's policy does not.
    let fork_binding = format!("{RBAC}/clusterrolebindings/system:openshift:public-info-viewer");
    let deleted = pair
        .upstream
        .request(Method::DELETE, &fork_binding, &[], Vec::new())
        .await;
    assert_eq!(deleted.status, 200, "{:?}", deleted.body);
    load(&pair).await;
    until_allowed(
        &pair,
        json!({"user": "system:node:n1", "groups": ["system:nodes"], "resourceAttributes":
            {"verb": "get", "resource": "secrets", "namespace": "team-a", "name": "csi"}}),
    )
    .await;
    until_allowed(
        &pair,
        json!({"user": "gina", "resourceAttributes": {"verb": "list", "resource": "secrets"}}),
    )
    .await;
    // `admin` holds `view`'s rules once the aggregation chain view → edit → admin is done.
    until_allowed(
        &pair,
        json!({"user": "carol", "groups": ["ops"], "resourceAttributes":
            {"verb": "watch", "resource": "namespaces", "namespace": "team-b"}}),
    )
    .await;
    let seed = std::env::var("CAPSTAN_SAR_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(38_41);
    let mut rng = StdRng::seed_from_u64(seed);
    let specs: Vec<Value> = (0..4000).map(|_| review(&mut rng)).collect();
    let answers: Vec<(Value, [Answer; 2])> = futures_util::stream::iter(specs)
        .map(|spec| {
            let pair = &pair;
            async move {
                let answer = decide(pair, &spec).await;
                (spec, answer)
            }
        })
        .buffered(8)
        .collect()
        .await;
    let allowed = answers.iter().filter(|(_, [a, _])| a.1).count();
    let disagreements: Vec<String> = answers
        .iter()
        .filter(|(_, [theirs, mine])| theirs != mine)
        .map(|(spec, [theirs, mine])| {
            format!("{spec}\n  upstream (status, allowed, denied) {theirs:?}, capstan {mine:?}")
        })
        .collect();
    assert!(
        disagreements.is_empty(),
        "{} of {} reviews decided differently (seed {seed}; upstream allowed {allowed}):\n{}",
        disagreements.len(),
        answers.len(),
        disagreements
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The corpus is not trivial: a fair share of both answers.
    assert!(
        allowed > 200 && allowed < 3800,
        "upstream allowed {allowed}"
    );
}

/// The objects of an RBAC collection by name, each with its rules in a stable order (the
/// order of rules does not change a decision) and the fields that do.
async fn policy(client: &RawClient, path: &str) -> std::collections::BTreeMap<String, Value> {
    let list = client.get(path).await.json();
    let mut out = std::collections::BTreeMap::new();
    for item in list["items"].as_array().unwrap() {
        let mut rules: Vec<Value> = item["rules"].as_array().cloned().unwrap_or_default();
        rules.sort_by_key(|r| r.to_string());
        let namespace = item["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = item["metadata"]["name"].as_str().unwrap();
        out.insert(
            format!("{namespace}/{name}"),
            json!({"rules": rules, "aggregationRule": item["aggregationRule"],
                "roleRef": item["roleRef"], "subjects": item["subjects"],
                "labels": item["metadata"]["labels"],
                "annotations": item["metadata"]["annotations"]}),
        );
    }
    out
}

/// The default policy objects only the fork of `../shared/k8s/` has (OpenShift's; see its
/// README): not upstream Kubernetes', so not Capstan's.
const FORK_ONLY: &[&str] = &[
    // The fork's extra controller and its public discovery role.
    "/system:controller:service-ca-cert-publisher",
    "/system:openshift:public-info-viewer",
];

/// Whether a rule is the fork's: OpenShift's restricted EndpointSlice addresses.
fn fork_rule(rule: &Value) -> bool {
    rule["resources"]
        .as_array()
        .is_some_and(|r| r.iter().any(|r| r == "endpointslices/restricted"))
}

/// What differs between two policy objects of [`policy`]: the rules only one has, and
/// every other field that differs.
fn difference(theirs: &Value, mine: &Value) -> String {
    let rules = |v: &Value| -> Vec<Value> {
        let all = v["rules"].as_array().cloned().unwrap_or_default();
        all.into_iter().filter(|r| !fork_rule(r)).collect()
    };
    let (a, b) = (rules(theirs), rules(mine));
    let mut out = String::new();
    for r in a.iter().filter(|r| !b.contains(r)) {
        out.push_str(&format!("  only upstream: {r}\n"));
    }
    for r in b.iter().filter(|r| !a.contains(r)) {
        out.push_str(&format!("  only capstan:  {r}\n"));
    }
    for (key, value) in theirs.as_object().unwrap() {
        if key != "rules" && mine[key] != *value {
            out.push_str(&format!(
                "  {key}: upstream {value}, capstan {}\n",
                mine[key]
            ));
        }
    }
    out
}

/// The default roles and bindings upstream bootstraps are Capstan's, rule for rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_roles_and_bindings_are_upstreams() {
    let (pair, _upstream, _server) = start_pair().await;
    // Aggregated roles are filled by controllers (upstream's controller manager, Capstan's
    // server) a moment after the start: compare until both have settled.
    let mut differences = policy_differences(&pair).await;
    for _ in 0..60 {
        if differences.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        differences = policy_differences(&pair).await;
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// Every default policy object that differs between the two servers, and how.
async fn policy_differences(pair: &Pair) -> Vec<String> {
    let mut differences = Vec::new();
    for kind in [
        "clusterroles",
        "clusterrolebindings",
        "roles",
        "rolebindings",
    ] {
        let path = format!("{RBAC}/{kind}");
        let theirs = policy(&pair.upstream, &path).await;
        let mine = policy(&pair.capstan, &path).await;
        for name in theirs
            .keys()
            .chain(mine.keys())
            .collect::<std::collections::BTreeSet<_>>()
        {
            match (theirs.get(name), mine.get(name)) {
                _ if FORK_ONLY.contains(&name.as_str()) => {}
                (Some(a), Some(b)) if a == b => {}
                (Some(a), Some(b)) if difference(a, b).is_empty() => {}
                (Some(a), Some(b)) => {
                    differences.push(format!("{kind} {name}:\n{}", difference(a, b)))
                }
                (a, b) => differences.push(format!(
                    "{kind} {name}: upstream has {}, capstan {}",
                    a.map_or("none".into(), |_| "it".to_string()),
                    b.map_or("none".into(), |_| "it".to_string())
                )),
            }
        }
    }
    differences
}

/// What the escalating user holds: writes of roles and bindings in team-a, of cluster roles
/// and bindings, `bind` on `view`, `escalate` in team-b, and a few permissions to grant on.
async fn load_escalator(pair: &Pair) {
    for ns in ["team-a", "team-b"] {
        pair.create(
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await;
    }
    let write = &["create", "update", "patch"];
    for r in [
        cluster_role(
            "esc-rbac-writer",
            json!({}),
            vec![rule(
                &["rbac.authorization.k8s.io"],
                &["roles", "rolebindings"],
                write,
            )],
        ),
        cluster_role(
            "esc-cluster-writer",
            json!({}),
            vec![rule(
                &["rbac.authorization.k8s.io"],
                &["clusterroles", "clusterrolebindings"],
                write,
            )],
        ),
        cluster_role(
            "bind-view",
            json!({}),
            vec![
                json!({"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                "verbs": ["bind"], "resourceNames": ["view"]}),
            ],
        ),
        cluster_role(
            "escalator",
            json!({}),
            vec![rule(
                &["rbac.authorization.k8s.io"],
                &["roles"],
                &["escalate", "create"],
            )],
        ),
    ] {
        pair.create(&format!("{RBAC}/clusterroles"), r).await;
    }
    pair.create(
        &format!("{RBAC}/namespaces/team-a/roles"),
        role(
            "team-a",
            "cm-reader",
            vec![
                rule(&[""], &["configmaps"], &["get", "list"]),
                rule(&[""], &["pods/log"], &["get"]),
            ],
        ),
    )
    .await;
    for b in [
        binding(
            Some("team-a"),
            "esc-rbac",
            ("ClusterRole", "esc-rbac-writer"),
            &["User:esc"],
        ),
        binding(
            Some("team-a"),
            "esc-cm",
            ("Role", "cm-reader"),
            &["User:esc"],
        ),
        binding(
            Some("team-b"),
            "esc-escalate",
            ("ClusterRole", "escalator"),
            &["User:esc"],
        ),
    ] {
        let ns = b["metadata"]["namespace"].as_str().unwrap().to_string();
        pair.create(&format!("{RBAC}/namespaces/{ns}/rolebindings"), b)
            .await;
    }
    for b in [
        binding(
            None,
            "esc-cluster",
            ("ClusterRole", "esc-cluster-writer"),
            &["User:esc"],
        ),
        binding(
            None,
            "esc-bind-view",
            ("ClusterRole", "bind-view"),
            &["User:esc"],
        ),
    ] {
        pair.create(&format!("{RBAC}/clusterrolebindings"), b).await;
    }
}

/// Role and binding writes by a user trying to grant more than it holds: the same answer
/// (status, reason and message) from both servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escalation_attempts_are_refused_as_upstream_refuses() {
    let (pair, _upstream, _server) = start_pair().await;
    load_escalator(&pair).await;
    let roles_a = format!("{RBAC}/namespaces/team-a/roles");
    let bindings_a = format!("{RBAC}/namespaces/team-a/rolebindings");
    let named = |mut object: Value, name: &str| {
        object["metadata"]["name"] = json!(name);
        object
    };
    let aggregating = |selector: Value| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "gathering"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": selector}]}})
    };
    let attempts: Vec<(Method, String, Value)> = vec![
        (
            Method::POST,
            roles_a.clone(),
            role("team-a", "r1", vec![rule(&[""], &["configmaps"], &["get"])]),
        ),
        (
            Method::POST,
            roles_a.clone(),
            role("team-a", "r2", vec![rule(&[""], &["secrets"], &["get"])]),
        ),
        (
            Method::POST,
            roles_a.clone(),
            role(
                "team-a",
                "r3",
                vec![json!({"apiGroups": [""], "resources": ["configmaps"],
                "verbs": ["get"], "resourceNames": ["c1"]})],
            ),
        ),
        (
            Method::POST,
            roles_a.clone(),
            role("team-a", "r4", vec![rule(&[""], &["configmaps"], &["*"])]),
        ),
        (
            Method::POST,
            roles_a.clone(),
            role("team-a", "r5", vec![rule(&[""], &["pods/*"], &["get"])]),
        ),
        (
            Method::POST,
            roles_a.clone(),
            role("team-a", "r6", vec![rule(&[""], &["pods/log"], &["get"])]),
        ),
        (
            Method::POST,
            roles_a.clone(),
            role(
                "team-a",
                "r7",
                vec![json!({"nonResourceURLs": ["/healthz"], "verbs": ["get"]})],
            ),
        ),
        (
            Method::PUT,
            format!("{roles_a}/cm-reader"),
            role(
                "team-a",
                "cm-reader",
                vec![
                    rule(&[""], &["configmaps"], &["get", "list"]),
                    rule(&[""], &["secrets"], &["list"]),
                ],
            ),
        ),
        (
            Method::POST,
            bindings_a.clone(),
            binding(Some("team-a"), "b1", ("ClusterRole", "view"), &["User:esc"]),
        ),
        (
            Method::POST,
            bindings_a.clone(),
            binding(Some("team-a"), "b2", ("ClusterRole", "edit"), &["User:esc"]),
        ),
        (
            Method::POST,
            bindings_a.clone(),
            binding(Some("team-a"), "b3", ("Role", "cm-reader"), &["User:x"]),
        ),
        (
            Method::POST,
            bindings_a.clone(),
            binding(Some("team-a"), "b4", ("Role", "missing"), &["User:x"]),
        ),
        (
            Method::POST,
            bindings_a.clone(),
            binding(
                Some("team-a"),
                "b5",
                ("ClusterRole", "view"),
                &["Group:system:masters"],
            ),
        ),
        (
            Method::POST,
            bindings_a.clone(),
            binding(
                Some("team-a"),
                "b6",
                ("ClusterRole", "cluster-admin"),
                &["User:esc"],
            ),
        ),
        (
            Method::POST,
            format!("{RBAC}/clusterroles"),
            named(cluster_role("c1", json!({}), vec![]), "c1"),
        ),
        (
            Method::POST,
            format!("{RBAC}/clusterroles"),
            cluster_role(
                "c2",
                json!({}),
                vec![rule(&[""], &["configmaps"], &["get"])],
            ),
        ),
        (
            Method::POST,
            format!("{RBAC}/clusterroles"),
            aggregating(json!({"rbac.authorization.k8s.io/aggregate-to-view": "true"})),
        ),
        (
            Method::POST,
            format!("{RBAC}/clusterroles"),
            aggregating(json!({"nothing": "matches"})),
        ),
        (
            Method::POST,
            format!("{RBAC}/clusterrolebindings"),
            binding(None, "cb1", ("ClusterRole", "view"), &["User:esc"]),
        ),
        (
            Method::POST,
            format!("{RBAC}/clusterrolebindings"),
            binding(None, "cb2", ("ClusterRole", "edit"), &["User:esc"]),
        ),
        (
            Method::POST,
            format!("{RBAC}/namespaces/team-b/roles"),
            role("team-b", "r8", vec![rule(&[""], &["secrets"], &["get"])]),
        ),
        (
            Method::POST,
            format!("{RBAC}/namespaces/team-b/rolebindings"),
            binding(
                Some("team-b"),
                "b7",
                ("ClusterRole", "admin"),
                &["User:esc"],
            ),
        ),
    ];
    let mut differences = Vec::new();
    for (method, path, body) in attempts {
        let path = format!("{path}?dryRun=All");
        let [theirs, mine] = pair
            .send(method.clone(), &path, &[("impersonate-user", "esc")], &body)
            .await;
        let seen = |(status, answer): &(u16, Value)| {
            (*status, answer["reason"].clone(), answer["message"].clone())
        };
        if seen(&theirs) != seen(&mine) {
            differences.push(format!(
                "{method} {path} {body}\n  upstream {:?}\n  capstan  {:?}",
                seen(&theirs),
                seen(&mine)
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

const CLAIMS: &str = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";

/// Request headers (an impersonated identity).
type Headers = Vec<(&'static str, String)>;

/// An allocation on node `n1` of device `x` of `gpu.example.com` and `y` of
/// `other.example.com`.
fn allocation() -> Value {
    json!({"devices": {"results": [
            {"request": "r", "driver": "gpu.example.com", "pool": "p", "device": "x"},
            {"request": "r", "driver": "other.example.com", "pool": "p", "device": "y"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}})
}

/// ResourceClaim status writes by a driver's identities, each allowed only the writes its
/// synthetic-subresource permissions cover (`resourceclaims/binding` for the allocation and
/// reservations, `resourceclaims/driver` with `associated-node:` or `arbitrary-node:` verbs
/// for the devices' status), refused with upstream's field errors; with PUT, merge patch and
/// apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_status_writes_need_upstreams_granular_permissions() {
    let (pair, _upstream, _server) = start_pair().await;
    let claim = |name: &str| {
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}})
    };
    for name in ["fresh", "allocated"] {
        pair.create(CLAIMS, claim(name)).await;
    }
    let roles = [
        (
            "claim-status-writer",
            vec![
                rule(&["resource.k8s.io"], &["resourceclaims"], &["get"]),
                rule(
                    &["resource.k8s.io"],
                    &["resourceclaims/status"],
                    &["update", "patch"],
                ),
            ],
            vec![
                "User:drv",
                "User:binder",
                "ServiceAccount:kube-system:plugin",
            ],
        ),
        (
            "claim-binder",
            vec![rule(
                &["resource.k8s.io"],
                &["resourceclaims/binding"],
                &["update"],
            )],
            vec!["User:binder"],
        ),
        (
            "gpu-driver",
            vec![
                json!({"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims/driver"],
                "verbs": ["associated-node:update", "associated-node:patch"],
                "resourceNames": ["gpu.example.com"]}),
            ],
            vec!["User:drv", "ServiceAccount:kube-system:plugin"],
        ),
    ];
    for (name, rules, subjects) in roles {
        pair.create(
            &format!("{RBAC}/clusterroles"),
            cluster_role(name, json!({}), rules),
        )
        .await;
        pair.create(
            &format!("{RBAC}/clusterrolebindings"),
            binding(None, name, ("ClusterRole", name), &subjects),
        )
        .await;
    }
    // The administrator allocates one claim in both (no check stands in its way).
    let [theirs, mine] = pair
        .send(
            Method::PATCH,
            &format!("{CLAIMS}/allocated/status"),
            &[("content-type", "application/merge-patch+json")],
            &json!({"status": {"allocation": allocation()}}),
        )
        .await;
    assert_eq!((theirs.0, mine.0), (200, 200), "{theirs:?} {mine:?}");
    let user = |name: &str| vec![("impersonate-user", name.to_string())];
    let plugin_on = |node: &str| {
        vec![
            (
                "impersonate-user",
                "system:serviceaccount:kube-system:plugin".to_string(),
            ),
            ("impersonate-group", "system:serviceaccounts".to_string()),
            (
                "impersonate-extra-authentication.kubernetes.io%2fnode-name",
                node.to_string(),
            ),
        ]
    };
    let devices = |driver: &str, device: &str| json!({"allocation": allocation(), "devices": [{"driver": driver, "pool": "p", "device": device}]});
    let allocating = json!({"allocation": allocation()});
    let reserving = json!({"allocation": allocation(),
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]});
    let cases: Vec<(&str, Headers, &str, Value)> = vec![
        (
            "allocation without binding",
            user("drv"),
            "fresh",
            allocating.clone(),
        ),
        (
            "allocation with binding (update only)",
            user("binder"),
            "fresh",
            allocating.clone(),
        ),
        (
            "reservation without binding",
            user("drv"),
            "allocated",
            reserving.clone(),
        ),
        (
            "reservation with binding",
            user("binder"),
            "allocated",
            reserving,
        ),
        (
            "devices by a user",
            user("drv"),
            "allocated",
            devices("gpu.example.com", "x"),
        ),
        (
            "devices by the node's plugin",
            plugin_on("n1"),
            "allocated",
            devices("gpu.example.com", "x"),
        ),
        (
            "devices by another node's plugin",
            plugin_on("n2"),
            "allocated",
            devices("gpu.example.com", "x"),
        ),
        (
            "another driver's devices",
            plugin_on("n1"),
            "allocated",
            devices("other.example.com", "y"),
        ),
        (
            "devices by a binder",
            user("binder"),
            "allocated",
            devices("gpu.example.com", "x"),
        ),
        (
            "allocation and devices by a user",
            user("drv"),
            "fresh",
            devices("gpu.example.com", "x"),
        ),
        (
            "devices not allocated",
            plugin_on("n1"),
            "allocated",
            devices("gpu.example.com", "z"),
        ),
    ];
    let mut differences = Vec::new();
    let mut refused = 0;
    for (name, headers, claim_name, status) in cases {
        for method in ["PUT", "merge patch", "apply"] {
            let mut headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let path = format!("{CLAIMS}/{claim_name}/status?dryRun=All");
            let mut body = claim(claim_name);
            body["status"] = status.clone();
            let [theirs, mine] = match method {
                "PUT" => pair.send(Method::PUT, &path, &headers, &body).await,
                "merge patch" => {
                    headers.push(("content-type", "application/merge-patch+json"));
                    let patch = json!({"status": status});
                    pair.send(Method::PATCH, &path, &headers, &patch).await
                }
                _ => {
                    headers.push(("content-type", "application/apply-patch+yaml"));
                    let path = format!("{path}&fieldManager=driver&force=true");
                    pair.send(Method::PATCH, &path, &headers, &body).await
                }
            };
            let seen = |(code, answer): &(u16, Value)| {
                let causes = answer["details"]["causes"].clone();
                (*code, answer["message"].clone(), causes)
            };
            if theirs.0 == 422 {
                refused += 1;
            }
            if seen(&theirs) != seen(&mine) {
                differences.push(format!(
                    "{name} ({method})\n  upstream {:?}\n  capstan  {:?}",
                    seen(&theirs),
                    seen(&mine)
                ));
            }
        }
    }
    assert!(refused >= 20, "the cases refuse ({refused} refusals)");
    assert!(differences.is_empty(), "{}", differences.join("\n"));

    // The plugin's status, applied for real: the same fields owned in both (the device key
    // without its optional `shareID`).
    let mut body = claim("allocated");
    body["status"] = devices("gpu.example.com", "x");
    let mut headers: Vec<(&str, &str)> = Vec::new();
    let plugin = plugin_on("n1");
    headers.extend(plugin.iter().map(|(k, v)| (*k, v.as_str())));
    headers.push(("content-type", "application/apply-patch+yaml"));
    let path = format!("{CLAIMS}/allocated/status?fieldManager=gpu-plugin");
    let [theirs, mine] = pair.send(Method::PATCH, &path, &headers, &body).await;
    assert_eq!((theirs.0, mine.0), (200, 200), "{theirs:?} {mine:?}");
    let owned = |answer: &Value| {
        answer["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["manager"] == "gpu-plugin")
            .map(|m| m["fieldsV1"].clone())
    };
    assert!(owned(&theirs.1).is_some());
    assert_eq!(owned(&theirs.1), owned(&mine.1));
}

/// Admin access to devices only in namespaces labelled for it, for claims, claim templates
/// and allocations, answered as upstream answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_access_to_devices_needs_the_namespace_label() {
    let (pair, _upstream, _server) = start_pair().await;
    for (name, labels) in [
        ("plain", json!({})),
        (
            "admins",
            json!({"resource.kubernetes.io/admin-access": "true"}),
        ),
    ] {
        pair.create(
            "/api/v1/namespaces",
            json!({"metadata": {"name": name, "labels": labels}}),
        )
        .await;
    }
    let spec = |admin: bool| {
        json!({"devices": {"requests": [
            {"name": "a", "exactly": {"deviceClassName": "gpu"}},
            {"name": "b", "exactly": {"deviceClassName": "gpu", "adminAccess": admin}}]}})
    };
    let claims = |ns: &str| format!("/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims");
    let templates =
        |ns: &str| format!("/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates");
    let mut differences = Vec::new();
    let mut compare = |what: String, [theirs, mine]: [(u16, Value); 2]| {
        let seen = |(code, answer): &(u16, Value)| {
            (
                *code,
                answer["message"].clone(),
                answer["details"]["causes"].clone(),
            )
        };
        if seen(&theirs) != seen(&mine) {
            differences.push(format!(
                "{what}\n  upstream {:?}\n  capstan  {:?}",
                seen(&theirs),
                seen(&mine)
            ));
        }
        theirs.0
    };
    let mut refused = 0;
    for ns in ["plain", "admins"] {
        for admin in [false, true] {
            let claim = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": format!("c-{admin}")}, "spec": spec(admin)});
            let answers = pair.send(Method::POST, &claims(ns), &[], &claim).await;
            refused +=
                usize::from(compare(format!("claim in {ns}, admin {admin}"), answers) == 422);
            let template = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": format!("t-{admin}")}, "spec": {"spec": spec(admin)}});
            let answers = pair
                .send(Method::POST, &templates(ns), &[], &template)
                .await;
            refused +=
                usize::from(compare(format!("template in {ns}, admin {admin}"), answers) == 422);
        }
        // An allocation granting admin access, written by the administrator.
        let status = json!({"status": {"allocation": {"devices": {"results": [
            {"request": "a", "driver": "gpu.example.com", "pool": "p", "device": "x"},
            {"request": "b", "driver": "gpu.example.com", "pool": "p", "device": "x",
             "adminAccess": true}]}}}});
        let answers = pair
            .send(
                Method::PATCH,
                &format!("{}/c-false/status?dryRun=All", claims(ns)),
                &[("content-type", "application/merge-patch+json")],
                &status,
            )
            .await;
        refused += usize::from(compare(format!("allocation in {ns}"), answers) == 422);
    }
    assert!(refused >= 3, "the refusals are exercised ({refused})");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
