//! A real cluster on Capstan, as users run one: upstream's kube-controller-manager v1.36
//! (each controller with its own service account), capstan-scheduler, kubemark hollow nodes
//! (the real kubelet code on a fake container runtime) and a hollow kube-proxy, all talking
//! protobuf, with Node and RBAC authorization and NodeRestriction. kubectl drives what users
//! do; the test fails on any error line the server caused in any component's log.
//!
//! The same cluster with upstream's kube-scheduler in place of capstan-scheduler is the second
//! test, and the same scenario with capstan-scheduler on upstream's kube-apiserver the third.

use std::path::{Path, PathBuf};
use std::time::Duration;

use capstan_e2e::kubectl;
use capstan_e2e::upstream::{self, Pki, Process, free_port, wait_until};

/// Error lines allowed when they hold both parts: races between two components over one
/// object (a controller and the garbage collector, the scheduler and a ReplicaSet), whose
/// 404 or 409 is the right answer.
const RACES: &[(&str, &str)] = &[
    // The ReplicaSet controller syncing the deleted Deployment's ReplicaSet as the garbage
    // collector deletes it: its next read or status write finds it gone (seen once in CI;
    // the same race on upstream's server).
    ("failed with replicasets.apps \\\"web-", "not found\""),
    // The scheduler binding a pending pod as its ReplicaSet deletes it: the delete marks the
    // pod first and removes it after (upstream's graceful delete with a zero grace period does
    // the same), so the binding finds it being deleted, then gone, and the scheduler's status
    // write finds it gone too. The same race on upstream's server.
    ("pod web-", "is being deleted, cannot be assigned to a host"),
    ("DefaultBinder", "not found\""),
    ("\"Error updating pod\" err=\"pods \\\"web-", "not found\""),
    // A kubelet's status write (a read, then a patch) for a pod that finished as another
    // component deleted it: a deleted pod that has finished goes at once, between the two.
    (
        "\"Failed to update status for pod\" err=\"failed to patch status",
        "not found\" pod=",
    ),
    // A kubelet's CSI plugin writes its CSINode as soon as the API server answers, on a
    // backoff of its own (15 ms, then six times longer each try, about 140 s in all) beside
    // the node's registration, logging each failed try: on a busy machine the first tries
    // come before the Node exists, whatever the server. The last try's failure ("after
    // retrying", which stops the kubelet) is not allowed.
    (
        "Failed to initialize CSINode: error updating CSINode annotation",
        "not found",
    ),
];

/// Error lines that are not the server's doing, each with why.
const ALLOWED: &[&str] = &[
    // The fake runtime has no image filesystem, cgroups, logs or containers of its own: the
    // hollow kubelet logs these on upstream's API server too.
    "imagefs device is not found",
    "HasDedicatedImageFs",
    "imageFs information is unavailable",
    "failed to read memory cgroup",
    "unimplemented testing mock",
    "ContainerStatus from runtime service failed",
    // The hollow kubelet's log manager asking the fake runtime for a container it removed
    // with its pod a moment before.
    "Failed to get container status",
    "PLEG is not healthy",
    // A kubelet's first pod sync before its (fake) runtime's first status check has run; it
    // syncs at the next tick. Nothing of the server's.
    "container runtime status check may not have completed yet",
    // A kubelet looks its Node up before it has registered it.
    "node is not registered yet",
    "Failed to get node when trying to set owner ref to the node lease",
    "Error getting the current node from lister",
    "Error updating node status, will retry\" err=\"error getting node",
    // client-go's read-after-write check in the controllers: they requeue until their cache
    // has seen their own write (upstream's API server gives the same lines).
    "is not as new as written version",
    // Optimistic concurrency between controllers writing one object (a ReplicaSet's status by
    // its controller, its annotations by the deployment controller; pods marked NotReady
    // while their kubelet writes them): the loser retries, on upstream's server too.
    "the object has been modified; please apply your changes to the latest version",
    // A kubelet's status manager asking for a pod just deleted or moved off the node: the
    // Node authorizer no longer relates them (upstream's answers the same).
    "no relationship found between node",
    // The taint eviction worker deleting a pod someone else (its ReplicaSet, the garbage
    // collector) deleted first: seen on upstream's server too.
    "TaintEvictionController: timed worker failed",
    // A controller finishing the sync of an object in the namespace the test deletes, after
    // the namespace controller removed the object (404 is the right answer).
    "sync \\\"doomed/",
    // An event about the deleted namespace's pods (the taint eviction controller cancelling
    // their deletion) posted after the namespace went: refused as upstream refuses it.
    "Server rejected event (will not retry!)\" err=\"namespaces \\\"doomed\\\" not found",
    // A kubelet whose per-object ConfigMap watch did not sync within its time limit on a busy
    // 2-core machine; it retries (seen on upstream's API server too).
    "failed to sync configmap cache: timed out waiting for the condition",
    // A pod reaching its kubelet before the controller manager's root-ca-cert-publisher has
    // published the new namespace's CA map: the kubelet retries the mount (upstream clusters
    // log the same on a busy machine; the publisher is asynchronous by design).
    "configmap \"kube-root-ca.crt\" not found",
    // A kubelet starting more pods at once than its image pull rate limit (5 per second,
    // burst 10, which hollow nodes cannot change) allows: the pulls over the limit fail, back
    // off and succeed on the next sync. It depends on how many pods a scheduler puts on one
    // node at once, not on the server; the kubelet then notes the failed start's missing
    // pod-level resource record.
    "pull QPS exceeded",
    "Missing actuated pod level resource record",
    // A kubelet still mounting the token or CA map of a pod of the namespace the test
    // deletes, once the namespace is terminating or the pod is gone from the kubelet: its
    // retries end with the pod (seen on upstream's API server too, on a busy machine).
    "in namespace doomed because it is being terminated",
    "object \"doomed\"/\"kube-root-ca.crt\" not registered",
    // The controller manager's empty static manifest path (a flag default).
    "The manifest file is empty",
];

/// Whose API server the cluster runs on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ApiServer {
    Capstan,
    /// Upstream's kube-apiserver, the reference; its own log is not checked.
    Upstream,
}

/// How long pods tolerate a gone node.
const TOLERATION_SECONDS: u32 = 2;

/// The cluster's files and the components' logs; kept after the test when `CAPSTAN_KEEP_LOGS`
/// is set.
struct Cluster {
    /// Declared first, so dropped first: the processes stop (and a hollow kubelet's root
    /// directory, which its log names, goes) before `dir` and their logs are removed.
    processes: Vec<Process>,
    /// Upstream's API server's etcd (after the API server, which stops first).
    _etcd: Option<upstream::EtcdCluster>,
    dir: tempfile::TempDir,
    pki: Pki,
    url: String,
    admin: PathBuf,
    bin: PathBuf,
}

impl Cluster {
    /// An API server (Capstan, or upstream's on its etcd), the controller manager and three
    /// hollow nodes.
    fn start(api: ApiServer) -> Self {
        let bin = upstream::binaries();
        let mut dir = tempfile::tempdir().unwrap();
        if std::env::var_os("CAPSTAN_KEEP_LOGS").is_some() {
            dir.disable_cleanup(true);
            eprintln!(
                "the cluster's files and logs stay in {}",
                dir.path().display()
            );
        }
        let pki = Pki::new(&dir.path().join("pki"));
        // On a port of its own (again on another when a test beside this one took it first).
        let mut etcd = None;
        let (apiserver, port) = match api {
            ApiServer::Capstan => {
                let data = format!("--data-dir={}", dir.path().join("data").display());
                let flags = |port| {
                    let mut flags = pki.apiserver_flags(port, TOLERATION_SECONDS);
                    flags.push(data.clone());
                    flags
                };
                let program = Path::new(env!("CARGO_BIN_EXE_capstan-apiserver"));
                let serving = "\"serving\" address=";
                upstream::start_on_free_port(
                    "capstan-apiserver",
                    program,
                    flags,
                    serving,
                    dir.path(),
                )
            }
            ApiServer::Upstream => {
                let (started, url) = upstream::start_etcd(&bin);
                etcd = Some(started);
                let flags = [format!("--etcd-servers={url}")];
                upstream::start_apiserver(&bin, &pki, TOLERATION_SECONDS, &flags, dir.path())
            }
        };
        let url = format!("https://127.0.0.1:{port}");
        let mut cluster = Self {
            admin: pki.kubeconfig(&url, "admin", &["system:masters"]),
            processes: vec![apiserver],
            _etcd: etcd,
            dir,
            pki,
            url,
            bin,
        };
        wait_until("the API server", Duration::from_secs(60), || {
            kubectl(&cluster.admin, &["get", "--raw", "/readyz"]).0
        });
        let kcm = cluster
            .pki
            .kubeconfig(&cluster.url, "system:kube-controller-manager", &[]);
        let p = |path: &PathBuf| path.display().to_string();
        let kcm_flags = vec![
            format!("--kubeconfig={}", p(&kcm)),
            "--use-service-account-credentials=true".into(),
            format!(
                "--service-account-private-key-file={}",
                p(&cluster.pki.service_account.0)
            ),
            format!("--root-ca-file={}", p(&cluster.pki.ca_file)),
            // The fork's own controller (see ../shared/k8s/README.md): upstream has none, and
            // the fork's API server needs it.
            match api {
                ApiServer::Capstan => "--controllers=*,-service-ca-cert-publisher".into(),
                ApiServer::Upstream => "--controllers=*".into(),
            },
            "--leader-elect=false".into(),
            "--secure-port=0".into(),
            // Twice a kubelet's lease renewal period (10 s): a node that stops renewing turns
            // NotReady within 20 s, and a live one whose renewal comes a little late on a busy
            // machine stays Ready. At 10 s live nodes turned NotReady now and then, on
            // upstream's API server as on Capstan, and the 2-second tolerations evicted
            // their pods mid-scenario.
            "--node-monitor-grace-period=20s".into(),
            "--node-monitor-period=1s".into(),
        ];
        let kcm_bin = cluster.bin.join("kube-controller-manager");
        cluster.start_process("kube-controller-manager", &kcm_bin, &kcm_flags, &[]);
        for i in 1..=3 {
            cluster.start_node(i);
        }
        cluster
    }

    fn start_process(
        &mut self,
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(&str, &Path)],
    ) {
        let process = Process::start(name, program, args, env, self.dir.path());
        self.processes.push(process);
    }

    /// Hollow node `hollow-<i>`, its kubelet on a port of its own.
    fn start_node(&mut self, i: u32) {
        let name = format!("hollow-{i}");
        let kubeconfig =
            self.pki
                .kubeconfig(&self.url, &format!("system:node:{name}"), &["system:nodes"]);
        let root = self.dir.path().join(&name);
        std::fs::create_dir_all(&root).unwrap();
        let args = vec![
            "--morph=kubelet".into(),
            format!("--name={name}"),
            format!("--kubeconfig={}", kubeconfig.display()),
            format!("--kubelet-port={}", free_port()),
            "--kubelet-read-only-port=0".into(),
            "--use-host-image-service=false".into(),
        ];
        let kubemark = self.bin.join("kubemark");
        self.start_process(&name, &kubemark, &args, &[("TMPDIR", &root)]);
    }

    /// The hollow kube-proxy, watching Services and EndpointSlices.
    fn start_proxy(&mut self) {
        let kubeconfig = self.pki.kubeconfig(&self.url, "system:kube-proxy", &[]);
        let root = self.dir.path().join("proxy");
        std::fs::create_dir_all(&root).unwrap();
        let args = vec![
            "--morph=proxy".into(),
            "--name=hollow-1".into(),
            format!("--kubeconfig={}", kubeconfig.display()),
        ];
        let kubemark = self.bin.join("kubemark");
        self.start_process("kube-proxy", &kubemark, &args, &[("TMPDIR", &root)]);
    }

    fn start_scheduler(&mut self, upstream_scheduler: bool) {
        let kubeconfig = self.pki.kubeconfig(&self.url, "system:kube-scheduler", &[]);
        let args = vec![
            format!("--kubeconfig={}", kubeconfig.display()),
            "--leader-elect=false".into(),
            "--secure-port=0".into(),
        ];
        if upstream_scheduler {
            let bin = self.bin.join("kube-scheduler");
            self.start_process("kube-scheduler", &bin, &args, &[]);
        } else {
            let bin = capstan_scheduler();
            let mut args = args;
            args.push("--port=0".into());
            self.start_process("capstan-scheduler", &bin, &args, &[]);
        }
    }

    fn kubectl(&self, args: &[&str]) -> String {
        let (ok, out, err) = kubectl(&self.admin, args);
        assert!(ok, "kubectl {}: {err}", args.join(" "));
        out
    }

    /// `kubectl get` printing `jsonpath`, or "" when it fails.
    fn get(&self, args: &[&str], jsonpath: &str) -> String {
        let mut all = args.to_vec();
        let jsonpath = format!("jsonpath={jsonpath}");
        all.extend(["-o", &jsonpath]);
        kubectl(&self.admin, &all).1
    }

    fn rollout(&self, what: &str, namespace: &str) {
        self.kubectl(&["-n", namespace, "rollout", "status", what, "--timeout=180s"]);
    }

    /// What the nodes say of their readiness, and the last lines of every component's log
    /// but the API server's: why nodes did not turn Ready in time.
    fn node_report(&self) -> String {
        let mut report = self.get(
            &["get", "nodes"],
            r#"{range .items[*]}{.metadata.name}{": "}{.status.conditions[?(@.type=="Ready")].reason}{" "}{.status.conditions[?(@.type=="Ready")].message}{"\n"}{end}"#,
        );
        for p in &self.processes {
            let log = std::fs::read_to_string(&p.log).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            report.push_str(&format!("--- last lines of {}:\n", p.name));
            for line in &lines[lines.len().saturating_sub(15)..] {
                report.push_str(line);
                report.push('\n');
            }
        }
        report
    }

    /// Every component's error lines that are not on the allow-list.
    fn server_caused_errors(&self) -> Vec<String> {
        self.processes
            .iter()
            .filter(|p| p.name != "kube-apiserver")
            .flat_map(|p| {
                p.errors(ALLOWED)
                    .into_iter()
                    .filter(|l| !RACES.iter().any(|(a, b)| l.contains(a) && l.contains(b)))
                    .map(move |l| format!("{}: {l}", p.name))
            })
            .collect()
    }
}

/// The capstan-scheduler binary beside this package's binary (`cargo test --workspace`
/// builds it; built here when this package's tests run alone).
fn capstan_scheduler() -> PathBuf {
    let path =
        Path::new(env!("CARGO_BIN_EXE_capstan-apiserver")).with_file_name("capstan-scheduler");
    if !path.is_file() {
        let mut build = std::process::Command::new(env!("CARGO"));
        build.args(["build", "-p", "capstan-scheduler-bin"]);
        if path.components().any(|c| c.as_os_str() == "release") {
            build.arg("--release");
        }
        assert!(
            build.status().unwrap().success(),
            "building capstan-scheduler"
        );
    }
    path
}

/// The web pods on `node`: a line each, the name and, once marked, the deletion time.
fn web_on(c: &Cluster, node: &str) -> String {
    c.get(
        &[
            "get",
            "pods",
            "-l",
            "app=web",
            &format!("--field-selector=spec.nodeName={node}"),
        ],
        "{range .items[*]}{.metadata.name}{' '}{.metadata.deletionTimestamp}{'\\n'}{end}",
    )
}

fn count_words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Drives the cluster through what users do, then checks the logs.
fn run_scenario(api: ApiServer, upstream_scheduler: bool) {
    // One cluster at a time: two on two cores slow each other into timeouts.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = Cluster::start(api);
    c.start_scheduler(upstream_scheduler);
    c.start_proxy();
    let long = Duration::from_secs(180);

    let start = std::time::Instant::now();
    loop {
        let ready = c.get(
            &["get", "nodes"],
            r#"{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{end}"#,
        );
        if ready.split_whitespace().filter(|s| *s == "True").count() == 3 {
            break;
        }
        assert!(
            start.elapsed() < long,
            "timed out waiting for three Ready nodes\n{}",
            c.node_report()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Node leases, renewed by each kubelet.
    wait_until("three node leases", long, || {
        let leases = c.get(
            &["-n", "kube-node-lease", "get", "leases"],
            "{.items[*].metadata.name}",
        );
        count_words(&leases) == 3
    });

    // A Deployment rolled out, updated, rolled back and scaled.
    c.kubectl(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=30",
    ]);
    c.rollout("deployment/web", "default");
    // Each pod's phase, as the kubelets report it, selected by a field.
    wait_until("30 pods Running", long, || {
        let running = c.get(
            &[
                "get",
                "pods",
                "-l",
                "app=web",
                "--field-selector=status.phase=Running",
            ],
            "{.items[*].metadata.name}",
        );
        count_words(&running) == 30
    });
    c.kubectl(&["set", "image", "deployment/web", "nginx=nginx:2"]);
    c.rollout("deployment/web", "default");
    c.kubectl(&["rollout", "undo", "deployment/web"]);
    c.rollout("deployment/web", "default");
    let image = c.get(
        &["get", "deployment", "web"],
        "{.spec.template.spec.containers[0].image}",
    );
    assert_eq!(image, "nginx");
    c.kubectl(&["scale", "deployment/web", "--replicas=6"]);
    c.rollout("deployment/web", "default");

    // A Service, its EndpointSlice filled by the controller manager from the pods.
    c.kubectl(&["expose", "deployment", "web", "--port=80"]);
    wait_until("the Service's endpoints", long, || {
        let addresses = c.get(
            &[
                "get",
                "endpointslices",
                "-l",
                "kubernetes.io/service-name=web",
            ],
            "{.items[*].endpoints[*].addresses[0]}",
        );
        count_words(&addresses) == 6
    });

    // A StatefulSet and a DaemonSet on every node.
    let workloads = c.dir.path().join("workloads.yaml");
    std::fs::write(&workloads, WORKLOADS).unwrap();
    c.kubectl(&["apply", "-f", &workloads.display().to_string()]);
    c.rollout("statefulset/db", "default");
    c.rollout("daemonset/agent", "default");
    wait_until("an agent available on every node", long, || {
        c.get(&["get", "daemonset", "agent"], "{.status.numberAvailable}") == "3"
    });

    // A namespace with running pods, deleted: its pods end on their nodes and it goes.
    c.kubectl(&["create", "namespace", "doomed"]);
    c.kubectl(&[
        "-n",
        "doomed",
        "create",
        "deployment",
        "d",
        "--image=x",
        "--replicas=3",
    ]);
    c.rollout("deployment/d", "doomed");
    c.kubectl(&["delete", "namespace", "doomed", "--timeout=120s"]);
    let (exists, _, _) = kubectl(&c.admin, &["get", "namespace", "doomed"]);
    assert!(!exists, "the namespace is gone");

    // A node that stops heart-beating turns NotReady (unknown); its pods are evicted and the
    // Deployment's come back on the other nodes.
    // The node of a web pod is stopped.
    let stopped = c.get(
        &["get", "pods", "-l", "app=web"],
        "{.items[0].spec.nodeName}",
    );
    let stopped = stopped.as_str();
    assert!(stopped.starts_with("hollow-"), "{stopped}");
    let index = c.processes.iter().position(|p| p.name == stopped).unwrap();
    c.processes[index].kill();
    wait_until("the stopped node to turn NotReady", long, || {
        c.get(
            &["get", "node", stopped],
            r#"{.status.conditions[?(@.type=="Ready")].status}"#,
        ) == "Unknown"
    });
    wait_until("its pods to be evicted", long, || {
        // Each marked for deletion (the node cannot confirm it any more), or gone.
        web_on(&c, stopped)
            .lines()
            .all(|l| l.split_whitespace().count() == 2)
    });
    wait_until("the Deployment to be whole again", long, || {
        c.get(&["get", "deployment", "web"], "{.status.availableReplicas}") == "6"
    });

    // Garbage collection: the Deployment's ReplicaSets and pods follow it (the stopped node's
    // pods stay, terminating, as on upstream: only their kubelet can confirm them gone).
    c.kubectl(&["delete", "deployment", "web"]);
    wait_until("the Deployment's dependents to go", long, || {
        let left = c.get(
            &["get", "rs,pods", "-l", "app=web"],
            "{range .items[*]}{.kind}:{.spec.nodeName}{' '}{end}",
        );
        let stuck = format!("Pod:{stopped}");
        left.split_whitespace().all(|n| n == stuck)
    });

    // Events were recorded by the components.
    let events = c.get(&["get", "events", "-A"], "{.items[*].reason}");
    for reason in [
        "Scheduled",
        "ScalingReplicaSet",
        "SuccessfulCreate",
        "NodeNotReady",
    ] {
        assert!(events.contains(reason), "no {reason} event: {events}");
    }

    for p in &mut c.processes {
        if p.name != stopped {
            assert!(p.running(), "{} exited:\n{}", p.name, p.log_text());
        }
    }
    let errors = c.server_caused_errors();
    assert!(
        errors.is_empty(),
        "error lines in the components' logs:\n{}",
        errors.join("\n")
    );
}

const WORKLOADS: &str = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: db}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: a, image: agent}]}
"#;

#[test]
fn a_cluster_of_upstream_components_runs_on_capstan() {
    run_scenario(ApiServer::Capstan, false);
}

/// Upstream's kube-scheduler v1.36 on Capstan: it waits for its DeviceClass, ResourceClaim,
/// ResourceSlice and VolumeAttributesClass informers before it schedules anything.
#[test]
fn upstreams_scheduler_runs_a_cluster_on_capstan() {
    run_scenario(ApiServer::Capstan, true);
}

/// capstan-scheduler is a drop-in replacement on upstream's API server too.
#[test]
fn capstan_scheduler_runs_a_cluster_on_upstreams_api_server() {
    run_scenario(ApiServer::Upstream, false);
}
