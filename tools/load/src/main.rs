//! `capstan-load`: drives a running API server with concurrent clients and reports
//! throughput and latency percentiles of StorageClass create, get, update and full list.
//!
//! It reads the server URL, CA and token from a kubeconfig (e.g. the one
//! `capstan-apiserver --write-admin-kubeconfig` writes). Each client has its own TLS
//! connection (HTTP/2 unless `--http1`). Objects it creates carry the label
//! `capstan-load=<run>` and are deleted at the end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use clap::Parser;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};

mod cpu;
mod custom;
mod deletion;
mod fanout;
mod pods;
mod policy;
mod scheduling;
mod webhook;

/// mimalloc rather than the system allocator: the harness shares the machine with the server
/// it measures, so its own CPU per request is part of every rate it reports.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SC: &str = "/apis/storage.k8s.io/v1/storageclasses";

/// Load harness for Kubernetes-compatible API servers.
#[derive(Debug, Parser)]
struct Options {
    /// Kubeconfig with the server URL, its CA and a bearer token.
    #[arg(long)]
    kubeconfig: std::path::PathBuf,
    /// Client counts to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    clients: Vec<usize>,
    /// Operations to measure, in order, comma-separated: create, get, update, list (JSON),
    /// list-protobuf, list-table (the Table kubectl asks for), list-paged (the whole collection
    /// in pages of 500 following the continue tokens, timed as one operation), connect (a new
    /// TLS connection with a full handshake, and one GET /version each time: handshakes per
    /// second), `get:/a/path` (GETs of that path: an aggregated API's object, say).
    #[arg(long, value_delimiter = ',', default_value = "create,get,update,list")]
    ops: Vec<String>,
    /// How long each measurement runs.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// The collection the operations (and `--populate`) work on.
    #[arg(long, value_enum, default_value = "storageclasses")]
    resource: Resource,
    /// Use HTTP/1.1 instead of HTTP/2.
    #[arg(long)]
    http1: bool,
    /// Processes whose CPU time (user and system, read from /proc) each row of `--ops`
    /// counts per request, comma-separated pids: the server's, with its etcd's for an
    /// etcd-backed one. The harness's own is counted too. The other runs (`--watchers`,
    /// `--pods`, `--schedule-nodes`, `--delete-objects`) do not count it.
    #[arg(long, value_delimiter = ',')]
    cpu_of: Vec<u32>,
    /// Bearer token to send instead of the kubeconfig's (e.g. a service-account token from
    /// `kubectl create token`); empty: none.
    #[arg(long)]
    token: Option<String>,
    /// Client certificate (PEM) to present in the TLS handshake, with `--client-key`.
    #[arg(long, requires = "client_key")]
    client_certificate: Option<std::path::PathBuf>,
    /// The client certificate's key (PEM).
    #[arg(long, requires = "client_certificate")]
    client_key: Option<std::path::PathBuf>,
    /// Keep the objects created (by default they are deleted at the end).
    #[arg(long)]
    keep: bool,
    /// Instead of the operations: this many watchers on one collection receive `--events`
    /// creates (watch fan-out).
    #[arg(long)]
    watchers: Option<usize>,
    /// Events of the fan-out run.
    #[arg(long, default_value_t = 10_000)]
    events: usize,
    /// Creates per second of the fan-out run, so that two servers get the same pace (a
    /// server that takes writes faster otherwise queues more events at once); 0: as fast as
    /// the eight writers go.
    #[arg(long, default_value_t = 0)]
    event_rate: u32,
    /// Connections the fan-out watchers share (HTTP/2 streams).
    #[arg(long, default_value_t = 50)]
    watch_connections: usize,
    /// Instead of the operations: create this many ~2 KB pods in a new namespace at the
    /// largest `--clients` count, list them by `spec.nodeName` for `--duration`, then time the
    /// deletion of a namespace holding `--namespace-objects` pods.
    #[arg(long)]
    pods: Option<usize>,
    /// Pods in the namespace whose deletion the `--pods` run times.
    #[arg(long, default_value_t = 5000)]
    namespace_objects: usize,
    /// Instead of the operations: create this many nodes, then `--schedule-pods` pending pods,
    /// and time how fast a running scheduler binds them.
    #[arg(long)]
    schedule_nodes: Option<usize>,
    /// Pods of the `--schedule-nodes` run.
    #[arg(long, default_value_t = 10_000)]
    schedule_pods: usize,
    /// What the `--schedule-nodes` run's pods ask for: `plain` (requests only), `anti-affinity`
    /// (at most one pod of each of 100 groups per node), `spread` (even over the three zones,
    /// and over nodes where it can).
    #[arg(long, value_enum, default_value_t = scheduling::Shape::Plain)]
    schedule_shape: scheduling::Shape,
    /// Instead of the operations: time a deletecollection of this many ConfigMaps, then the
    /// garbage collection of this many dependents of a deleted owner (background and
    /// foreground).
    #[arg(long)]
    delete_objects: Option<usize>,
    /// Before measuring, create this many objects (16 clients; not measured), e.g. to list a
    /// collection of a known size.
    #[arg(long, default_value_t = 0)]
    populate: usize,
    /// Serve a validating admission webhook that allows everything from this process, and
    /// register it for StorageClass creates and updates while measuring.
    #[arg(long)]
    validating_webhook: bool,
    /// Register a ValidatingAdmissionPolicy (two CEL validations and a variable) with a Deny
    /// binding for StorageClass creates and updates while measuring; the server needs the
    /// ValidatingAdmissionPolicy admission plugin.
    #[arg(long)]
    admission_policy: bool,
}

/// A collection the operations can work on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Resource {
    /// Cluster-scoped StorageClasses.
    Storageclasses,
    /// ConfigMaps in `default` (e.g. creates that do not grow the listed StorageClasses).
    Configmaps,
    /// ClusterIP Services in `default`: each create also allocates a cluster IP (start the
    /// server with a range large enough for the run, e.g. 10.96.0.0/12).
    Services,
    /// `autoscaling/v2` HorizontalPodAutoscalers in `default` (the stored version).
    Hpav2,
    /// `autoscaling/v1` HorizontalPodAutoscalers in `default`: each request and answer
    /// converted to and from the stored `v2`.
    Hpav1,
    /// Custom objects (`load.capstan.dev/v1` Widgets) in `default`, pruned, defaulted and
    /// validated by their CRD's schema; the CRD is created first (and its time to
    /// Established printed).
    Widgets,
    /// The same Widgets served in `load.capstan.dev/v2`: every request and answer converted
    /// to and from the stored `v1` by a conversion webhook this process serves.
    #[value(name = "widgets-v2")]
    WidgetsV2,
    /// Pods of about 2 KB in `default` (containers with probes, env, volumes, affinity and
    /// tolerations, as controllers create them), unscheduled.
    Pods,
}

impl Resource {
    fn path(self) -> &'static str {
        match self {
            Self::Storageclasses => SC,
            Self::Configmaps => "/api/v1/namespaces/default/configmaps",
            Self::Services => "/api/v1/namespaces/default/services",
            Self::Hpav2 => "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
            Self::Hpav1 => "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
            Self::Widgets => custom::WIDGETS,
            Self::WidgetsV2 => custom::WIDGETS_V2,
            Self::Pods => "/api/v1/namespaces/default/pods",
        }
    }

    /// The body of an update of `stored` (as listed) to `generation`: a new object of the
    /// collection, except Pods (see [`Resource::pod_update`]).
    fn changed(
        self,
        run: &str,
        stored: &serde_json::Value,
        pod: Option<&pods::Template>,
        generation: u64,
    ) -> Vec<u8> {
        match pod {
            Some(pod) => pod.fill(&[&generation.to_string()]),
            None => self.object(run, name_of(stored), generation),
        }
    }

    /// The updates of Pods, whose spec the server completes on create (the service account's
    /// token volume) and then refuses to change: the stored pod, relabelled, as controllers
    /// write one back (unconditionally: no resourceVersion); a template with the label's
    /// value as its hole, made before the measured time.
    fn pod_update(self, stored: &serde_json::Value) -> Option<pods::Template> {
        (self == Self::Pods).then(|| {
            pods::Template::new(|holes| {
                let mut pod = stored.clone();
                pod["apiVersion"] = "v1".into();
                pod["kind"] = "Pod".into();
                pod["metadata"]["labels"]["generation"] = holes[0].into();
                if let Some(meta) = pod["metadata"].as_object_mut() {
                    meta.remove("resourceVersion");
                }
                pod
            })
        })
    }

    /// A new object of the collection, labelled with the run.
    fn object(self, run: &str, name: &str, generation: u64) -> Vec<u8> {
        match self {
            Self::Storageclasses => object(run, name, generation),
            Self::Pods => pods::pod(name, None, run, generation),
            Self::Configmaps => serde_json::to_vec(&serde_json::json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"capstan-load": run, "generation": generation.to_string()}},
                "data": {"type": "ssd", "iops": "3000"},
            }))
            .expect("JSON"),
            Self::Services => serde_json::to_vec(&serde_json::json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": name, "labels": {"capstan-load": run, "generation": generation.to_string()}},
                "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]},
            }))
            .expect("JSON"),
            Self::Hpav2 => serde_json::to_vec(&serde_json::json!({
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": name, "labels": {"capstan-load": run, "generation": generation.to_string()}},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                    "maxReplicas": 5,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 60}}}]},
            }))
            .expect("JSON"),
            Self::Widgets | Self::WidgetsV2 => serde_json::to_vec(&serde_json::json!({
                "apiVersion": if self == Self::Widgets { "load.capstan.dev/v1" } else { "load.capstan.dev/v2" },
                "kind": "Widget",
                "metadata": {"name": name, "labels": {"capstan-load": run, "generation": generation.to_string()}},
                "spec": {"type": "ssd", "iops": 3000},
            }))
            .expect("JSON"),
            Self::Hpav1 => serde_json::to_vec(&serde_json::json!({
                "apiVersion": "autoscaling/v1",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": name, "labels": {"capstan-load": run, "generation": generation.to_string()}},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                    "maxReplicas": 5, "targetCPUUtilizationPercentage": 60},
            }))
            .expect("JSON"),
        }
    }
}

struct Target {
    resource: Resource,
    host: String,
    port: u16,
    /// `Bearer <token>`, or none for an empty token.
    authorization: Option<http::HeaderValue>,
    connector: tokio_rustls::TlsConnector,
    http1: bool,
    /// The processes whose CPU time is counted (`--cpu-of`).
    cpu_of: Vec<u32>,
}

enum Conn {
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Target {
    fn from_options(options: &Options) -> Result<Self, String> {
        let (path, http1) = (&options.kubeconfig, options.http1);
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let doc: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("the kubeconfig is not JSON: {e}"))?;
        let cluster = &doc["clusters"][0]["cluster"];
        let server = cluster["server"]
            .as_str()
            .ok_or("no server in the kubeconfig")?;
        let ca = cluster["certificate-authority-data"]
            .as_str()
            .ok_or("no certificate-authority-data")?;
        let ca = base64::engine::general_purpose::STANDARD
            .decode(ca)
            .map_err(|e| e.to_string())?;
        let token = match &options.token {
            Some(token) => token.clone(),
            None => doc["users"][0]["user"]["token"]
                .as_str()
                .ok_or("no token in the kubeconfig")?
                .to_string(),
        };
        let authority = server
            .strip_prefix("https://")
            .ok_or("the server URL is not https")?;
        let (host, port) = authority
            .rsplit_once(':')
            .ok_or("the server URL has no port")?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&ca) {
            roots
                .add(cert.map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots);
        let mut config = match (&options.client_certificate, &options.client_key) {
            (Some(cert), Some(key)) => {
                let read = |p: &std::path::Path| {
                    std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()))
                };
                let chain = CertificateDer::pem_slice_iter(&read(cert)?)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("{}: {e}", cert.display()))?;
                let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(&read(key)?)
                    .map_err(|e| format!("{}: {e}", key.display()))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| e.to_string())?
            }
            _ => builder.with_no_client_auth(),
        };
        // Every connection does a full handshake, as a new kubectl process does (the
        // `connect` operation measures handshakes, not session resumption).
        config.resumption = rustls::client::Resumption::disabled();
        config.alpn_protocols = if http1 {
            vec![b"http/1.1".to_vec()]
        } else {
            vec![b"h2".to_vec()]
        };
        Ok(Self {
            resource: options.resource,
            host: host.trim_matches(['[', ']']).to_string(),
            port: port.parse().map_err(|_| "bad port")?,
            authorization: (!token.is_empty())
                .then(|| http::HeaderValue::from_str(&format!("Bearer {token}")))
                .transpose()
                .map_err(|_| "the token is not a header value")?,
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            http1,
            cpu_of: options.cpu_of.clone(),
        })
    }

    async fn connect(&self) -> Result<Conn, String> {
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| e.to_string())?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        let name = ServerName::try_from(self.host.clone()).map_err(|e| e.to_string())?;
        let tls = self
            .connector
            .connect(name, tcp)
            .await
            .map_err(|e| e.to_string())?;
        let io = TokioIo::new(tls);
        if self.http1 {
            let (send, conn) = hyper::client::conn::http1::handshake(io)
                .await
                .map_err(|e| e.to_string())?;
            tokio::spawn(conn);
            Ok(Conn::H1(send))
        } else {
            let (send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                .await
                .map_err(|e| e.to_string())?;
            tokio::spawn(conn);
            Ok(Conn::H2(send))
        }
    }

    /// A bodiless request asking for the representation `accept`.
    fn request_as(&self, method: Method, path: &str, accept: &str) -> Request<Full<Bytes>> {
        let mut req = self.request(method, path, None);
        if let Ok(v) = http::HeaderValue::from_str(accept) {
            req.headers_mut().insert(http::header::ACCEPT, v);
        }
        req
    }

    fn request(&self, method: Method, path: &str, body: Option<Vec<u8>>) -> Request<Full<Bytes>> {
        self.request_to(method, self.uri(path), body)
    }

    /// The URI of `path` on the server. The measured loops make theirs before the measured
    /// time: parsing one per request (with the headers' values) took ~5% of the harness's
    /// CPU in a run of GETs.
    fn uri(&self, path: &str) -> http::Uri {
        format!("https://{}:{}{path}", self.host, self.port)
            .parse()
            .expect("a valid URI")
    }

    /// [`Target::request`] to a URI made beforehand.
    fn request_to(
        &self,
        method: Method,
        uri: http::Uri,
        body: Option<Vec<u8>>,
    ) -> Request<Full<Bytes>> {
        use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
        const JSON: HeaderValue = HeaderValue::from_static("application/json");
        let with_body = body.is_some();
        let mut req = Request::new(Full::new(body.map(Bytes::from).unwrap_or_default()));
        *req.method_mut() = method;
        *req.uri_mut() = uri;
        let headers = req.headers_mut();
        headers.insert(ACCEPT, JSON);
        if let Some(authorization) = &self.authorization {
            headers.insert(AUTHORIZATION, authorization.clone());
        }
        if with_body {
            headers.insert(CONTENT_TYPE, JSON);
        }
        req
    }
}

impl Conn {
    /// Sends a request and returns the response with its body still streaming.
    async fn open(
        &mut self,
        req: Request<Full<Bytes>>,
    ) -> Result<http::Response<hyper::body::Incoming>, String> {
        match self {
            Conn::H1(s) => {
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await
            }
            Conn::H2(s) => {
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await
            }
        }
        .map_err(|e| e.to_string())
    }

    async fn send(&mut self, req: Request<Full<Bytes>>) -> Result<(StatusCode, Bytes), String> {
        self.send_told(req)
            .await
            .map(|(status, _, body)| (status, body))
    }

    /// [`Conn::send`], with how long the server asks the client to wait (`Retry-After`).
    async fn send_told(
        &mut self,
        req: Request<Full<Bytes>>,
    ) -> Result<(StatusCode, Option<Duration>, Bytes), String> {
        let resp = self.open(req).await?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .map(Duration::from_secs);
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, retry_after, body))
    }
}

fn object(run: &str, name: &str, generation: u64) -> Vec<u8> {
    static TEMPLATE: std::sync::OnceLock<pods::Template> = std::sync::OnceLock::new();
    TEMPLATE
        .get_or_init(|| pods::Template::new(|holes| storage_class(holes[0], holes[1], holes[2])))
        .fill(&[name, run, &generation.to_string()])
}

/// [`object`] as a tree.
fn storage_class(name: &str, run: &str, generation: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "labels": {"capstan-load": run, "generation": generation}},
        "provisioner": "example.com/load",
        "parameters": {"type": "ssd", "iops": "3000"},
    })
}

struct Outcome {
    latencies: Vec<Duration>,
    /// CPU microseconds per request: the servers' (`--cpu-of`) and the harness's.
    cpu: (Option<f64>, Option<f64>),
    errors: usize,
    /// 429s, after each of which the worker waited as `Retry-After` asked (as client-go).
    refused: usize,
    elapsed: Duration,
    /// Items and bytes of one list response.
    list_size: Option<(usize, usize)>,
}

/// Runs `clients` workers for `duration`; worker `w` gets the objects it owns, `owned[w]`.
/// The time measured runs from the start to the last worker's last answer: handing out the
/// objects and dropping them are not in it (with thousands of pods, cloning and freeing their
/// JSON took a tenth of a second of the client's CPU on each side of a 5-second run, and more
/// for the server that had created more of them), nor are the connections' handshakes (made
/// before the start). A worker that is done keeps its connection and its objects until every
/// worker is: freeing a share (2.5 ms for 430 StorageClasses) and closing a connection held
/// up the other workers' last answers in this process, by 100 to 250 ms in all, while the
/// server answered another client in time.
async fn measure(
    target: &Arc<Target>,
    op: &str,
    clients: usize,
    duration: Duration,
    run: &str,
    owned: Vec<Vec<serde_json::Value>>,
) -> Outcome {
    let mut owned = owned.into_iter();
    let shares: Vec<Vec<serde_json::Value>> = (0..clients)
        .map(|_| owned.next().unwrap_or_default())
        .collect();
    let connecting: Vec<_> = (0..clients)
        .map(|_| {
            let target = target.clone();
            tokio::spawn(async move { target.connect().await })
        })
        .collect();
    let mut conns = Vec::with_capacity(clients);
    for c in connecting {
        conns.push(
            c.await
                .expect("a connection")
                .expect("connecting to the server"),
        );
    }
    let updates: Vec<Vec<Option<pods::Template>>> = shares
        .iter()
        .map(|mine| match op {
            "update" => mine.iter().map(|s| target.resource.pod_update(s)).collect(),
            _ => Vec::new(),
        })
        .collect();
    // The URIs of each worker's objects, and of the collection.
    let uris: Vec<Vec<http::Uri>> = shares
        .iter()
        .map(|mine| match op {
            "get" | "update" => mine
                .iter()
                .map(|s| target.uri(&format!("{}/{}", target.resource.path(), name_of(s))))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    let collection = target.uri(target.resource.path());
    let cpu_before = cpu::Sample::take(&target.cpu_of);
    let start = Instant::now();
    let mut tasks = Vec::new();
    let workers = shares.into_iter().zip(updates).zip(uris).zip(conns);
    for (w, (((mine, updates), uris), mut conn)) in workers.enumerate() {
        let collection = collection.clone();
        let target = target.clone();
        let op = op.to_string();
        let run = run.to_string();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = 0;
            let mut refused = 0;
            let mut list_size = None;
            let mut i = 0u64;
            while start.elapsed() < duration {
                let (req, expect) = match op.as_str() {
                    "create" => {
                        let name = format!("load-{run}-{clients}-{w}-{i}");
                        let body = target.resource.object(&run, &name, 0);
                        (
                            target.request_to(Method::POST, collection.clone(), Some(body)),
                            StatusCode::CREATED,
                        )
                    }
                    "get" if !mine.is_empty() => {
                        let uri = uris[i as usize % uris.len()].clone();
                        (target.request_to(Method::GET, uri, None), StatusCode::OK)
                    }
                    "update" if !mine.is_empty() => {
                        let at = i as usize % mine.len();
                        let stored = &mine[at];
                        let pod = updates.get(at).and_then(Option::as_ref);
                        let body = target.resource.changed(&run, stored, pod, i + 1);
                        (
                            target.request_to(Method::PUT, uris[at].clone(), Some(body)),
                            StatusCode::OK,
                        )
                    }
                    "list" => (
                        target.request_to(Method::GET, collection.clone(), None),
                        StatusCode::OK,
                    ),
                    // `get:/any/path`: GETs of one path (an aggregated API's object, a
                    // discovery document).
                    path if path.starts_with("get:/") => (
                        target.request(Method::GET, &path["get:".len()..], None),
                        StatusCode::OK,
                    ),
                    "connect" => {
                        // A fresh connection each time: the handshake is what is measured.
                        i += 1;
                        let t = Instant::now();
                        let sent = match target.connect().await {
                            Ok(mut fresh) => fresh
                                .send(target.request(Method::GET, "/version", None))
                                .await
                                .ok(),
                            Err(_) => None,
                        };
                        match sent {
                            Some((StatusCode::OK, _)) => latencies.push(t.elapsed()),
                            _ => errors += 1,
                        }
                        continue;
                    }
                    "list-paged" => {
                        i += 1;
                        let t = Instant::now();
                        match paged_list(&mut conn, &target).await {
                            Ok(pages) => {
                                latencies.push(t.elapsed());
                                list_size.get_or_insert((pages * 500, 0));
                            }
                            Err(_) => errors += 1,
                        }
                        continue;
                    }
                    "list-protobuf" => (
                        target.request_as(
                            Method::GET,
                            target.resource.path(),
                            "application/vnd.kubernetes.protobuf",
                        ),
                        StatusCode::OK,
                    ),
                    "list-table" => (
                        target.request_as(
                            Method::GET,
                            target.resource.path(),
                            "application/json;as=Table;v=v1;g=meta.k8s.io",
                        ),
                        StatusCode::OK,
                    ),
                    _ => break,
                };
                i += 1;
                let t = Instant::now();
                match conn.send_told(req).await {
                    Ok((StatusCode::TOO_MANY_REQUESTS, retry_after, _)) => {
                        refused += 1;
                        let wait = retry_after.unwrap_or(Duration::from_secs(1));
                        tokio::time::sleep(wait.min(duration.saturating_sub(start.elapsed())))
                            .await;
                    }
                    Ok((status, _, body)) if status == expect => {
                        latencies.push(t.elapsed());
                        if op.starts_with("list") && list_size.is_none() {
                            let items = serde_json::from_slice::<serde_json::Value>(&body)
                                .ok()
                                .and_then(|v| {
                                    v.get("items")
                                        .or_else(|| v.get("rows"))
                                        .and_then(|i| i.as_array().map(Vec::len))
                                })
                                .unwrap_or(0);
                            list_size = Some((items, body.len()));
                        }
                    }
                    _ => errors += 1,
                }
            }
            let stopped = start.elapsed();
            (
                latencies,
                errors,
                refused,
                list_size,
                stopped,
                (conn, mine, updates, uris),
            )
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut refused = 0;
    let mut list_size = None;
    let mut elapsed = Duration::ZERO;
    let mut held_back = Vec::with_capacity(clients);
    for t in tasks {
        let (l, e, r, size, stopped, held) = t.await.expect("a worker");
        held_back.push(held);
        latencies.extend(l);
        errors += e;
        refused += r;
        list_size = list_size.or(size);
        elapsed = elapsed.max(stopped);
    }
    let cpu = cpu_before.per_request(&cpu::Sample::take(&target.cpu_of), latencies.len());
    // Connections closed and objects freed only now, outside the measured time.
    drop(held_back);
    Outcome {
        cpu,
        latencies,
        errors,
        refused,
        elapsed,
        list_size,
    }
}

/// The collection read in pages of 500, following each page's continue token: how many pages
/// there were. (The token is found in the list's metadata, which both servers write before
/// the items, without decoding the page: the client's work stays small beside the server's.)
async fn paged_list(conn: &mut Conn, target: &Target) -> Result<usize, String> {
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let mut path = format!("{}?limit=500", target.resource.path());
        if !token.is_empty() {
            path.push_str("&continue=");
            path.push_str(&token);
        }
        let (status, body) = conn.send(target.request(Method::GET, &path, None)).await?;
        if status != StatusCode::OK {
            return Err(format!("page answered {status}"));
        }
        pages += 1;
        let head = &body[..body.len().min(2048)];
        let marker = b"\"continue\":\"";
        let next = head
            .windows(marker.len())
            .position(|w| w == marker)
            .map(|at| &head[at + marker.len()..])
            .and_then(|rest| rest.iter().position(|b| *b == b'"').map(|end| &rest[..end]));
        match next {
            Some(next) if !next.is_empty() => {
                token = String::from_utf8_lossy(next).into_owned();
            }
            _ => return Ok(pages),
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// An object's name.
fn name_of(object: &serde_json::Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// The run's objects as listed.
async fn existing_objects(target: &Target, run: &str) -> Vec<serde_json::Value> {
    let mut conn = target.connect().await.expect("connecting");
    let req = target.request(
        Method::GET,
        &format!(
            "{}?labelSelector=capstan-load%3D{run}",
            target.resource.path()
        ),
        None,
    );
    let (_, body) = conn.send(req).await.expect("listing");
    let mut list: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    match list["items"].take() {
        serde_json::Value::Array(items) => items,
        _ => Vec::new(),
    }
}

#[tokio::main]
async fn main() {
    let options = Options::parse();
    let target = match Target::from_options(&options) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            eprintln!("capstan-load: {e}");
            std::process::exit(2);
        }
    };
    let run = format!(
        "{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs()
    );
    if let Some(watchers) = options.watchers {
        let f = fanout::Fanout {
            watchers,
            events: options.events,
            connections: options.watch_connections,
            writers: 8,
            rate: options.event_rate,
        };
        fanout::run(&target, &run, f).await;
        cleanup(&target, &run, options.keep).await;
        return;
    }
    if let Some(count) = options.pods {
        let clients = options.clients.iter().copied().max().unwrap_or(64);
        pods::run(
            &target,
            &run,
            count,
            clients,
            options.duration,
            options.namespace_objects,
        )
        .await;
        return;
    }
    if let Some(count) = options.delete_objects {
        deletion::run(&target, &run, count).await;
        return;
    }
    if let Some(nodes) = options.schedule_nodes {
        scheduling::run(
            &target,
            &run,
            nodes,
            options.schedule_pods,
            options.schedule_shape,
        )
        .await;
        return;
    }
    let converter = match options.resource {
        Resource::Widgets | Resource::WidgetsV2 => {
            match custom::install(&target, options.resource == Resource::WidgetsV2).await {
                Ok(converter) => converter,
                Err(e) => {
                    eprintln!("capstan-load: {e}");
                    std::process::exit(1);
                }
            }
        }
        _ => None,
    };
    if options.populate > 0 {
        populate(&target, &run, options.populate).await;
    }
    let webhook = if options.validating_webhook {
        match webhook::install(&target, &run).await {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!("capstan-load: {e}");
                std::process::exit(1);
            }
        }
    } else {
        None
    };
    let policy = if options.admission_policy {
        match policy::install(&target, &run).await {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("capstan-load: {e}");
                std::process::exit(1);
            }
        }
    } else {
        None
    };
    println!(
        "| operation | clients | requests | errors | 429s | ops/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | server CPU µs/req | harness CPU µs/req |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &clients in &options.clients {
        for op in &options.ops {
            let objects = existing_objects(&target, &run).await;
            // Each worker gets a disjoint share of the objects, so updates never conflict.
            let mut owned = vec![Vec::new(); clients];
            for (i, o) in objects.into_iter().enumerate() {
                owned[i % clients].push(o);
            }
            let mut out = measure(&target, op, clients, options.duration, &run, owned).await;
            out.latencies.sort();
            let n = out.latencies.len();
            let label = match out.list_size {
                Some((items, bytes)) if items > 0 => {
                    format!("{op} ({items} items, {:.1} MB)", bytes as f64 / 1e6)
                }
                Some((_, bytes)) => format!("{op} ({:.1} MB)", bytes as f64 / 1e6),
                None => op.clone(),
            };
            println!(
                "| {label} | {clients} | {n} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} |",
                out.errors,
                out.refused,
                n as f64 / out.elapsed.as_secs_f64(),
                ms(percentile(&out.latencies, 0.5)),
                ms(percentile(&out.latencies, 0.9)),
                ms(percentile(&out.latencies, 0.99)),
                ms(percentile(&out.latencies, 0.999)),
                ms(out.latencies.last().copied().unwrap_or_default()),
                cpu::cell(out.cpu.0),
                cpu::cell(out.cpu.1),
            );
        }
    }
    if let Some(converter) = converter {
        println!(
            "\nconversion webhook: {} reviews answered",
            converter.calls.load(std::sync::atomic::Ordering::Relaxed)
        );
    }
    if let Some(webhook) = webhook {
        println!(
            "\nvalidating webhook: {} reviews answered",
            webhook.calls.load(std::sync::atomic::Ordering::Relaxed)
        );
        webhook.remove(&target).await;
    }
    if let Some(policy) = policy {
        policy.remove(&target).await;
    }
    cleanup(&target, &run, options.keep).await;
}

/// Creates `count` objects of the run with 16 clients.
async fn populate(target: &Arc<Target>, run: &str, count: usize) {
    const CLIENTS: usize = 16;
    let mut tasks = Vec::new();
    for w in 0..CLIENTS {
        let target = target.clone();
        let run = run.to_string();
        tasks.push(tokio::spawn(async move {
            let mut conn = target.connect().await.expect("connecting");
            for i in (w..count).step_by(CLIENTS) {
                let body = target
                    .resource
                    .object(&run, &format!("populate-{run}-{i}"), 0);
                let req = target.request(Method::POST, target.resource.path(), Some(body));
                let (status, body) = conn.send(req).await.expect("a create");
                assert_eq!(
                    status,
                    StatusCode::CREATED,
                    "populating: {}",
                    String::from_utf8_lossy(&body)
                );
            }
        }));
    }
    for t in tasks {
        t.await.expect("a populating client");
    }
}

/// Deletes the run's objects unless asked to keep them.
async fn cleanup(target: &Target, run: &str, keep: bool) {
    if keep {
        return;
    }
    let mut conn = target.connect().await.expect("connecting");
    let req = target.request(
        Method::DELETE,
        &format!(
            "{}?labelSelector=capstan-load%3D{run}",
            target.resource.path()
        ),
        None,
    );
    if let Err(e) = conn.send(req).await {
        eprintln!("capstan-load: cleanup failed: {e}");
    }
}
