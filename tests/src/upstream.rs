//! Upstream's own components around (or beside) Capstan: the v1.36 binaries of
//! `../shared/k8s/` (kube-apiserver, kube-controller-manager, kube-scheduler, kubemark, etcd),
//! processes that are killed with their guard and whose logs are read for errors, and a PKI
//! from which every component gets its certificate and kubeconfig.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use capstan_etcd::testing::EtcdCluster;

use crate::{TestCa, certificate_kubeconfig};

/// Where upstream's binaries are unpacked: `$CAPSTAN_K8S_BIN` when it holds them, else what
/// `unpack.sh` of the first `shared/k8s` directory found prints (`$CAPSTAN_K8S_DIR`, then
/// `../shared/k8s` beside the workspace, then `/work/shared/k8s`). Panics with what is missing:
/// these tests are part of the suite, not optional.
pub fn binaries() -> PathBuf {
    if let Some(dir) = std::env::var_os("CAPSTAN_K8S_BIN").map(PathBuf::from)
        && dir.join("kube-apiserver").is_file()
    {
        return dir;
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = [
        std::env::var_os("CAPSTAN_K8S_DIR").map(PathBuf::from),
        Some(workspace.join("../shared/k8s")),
        Some(PathBuf::from("/work/shared/k8s")),
    ];
    let shared = candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("unpack.sh").is_file())
        .expect("upstream's binaries: set CAPSTAN_K8S_DIR to the shared/k8s directory");
    let out = Command::new("bash")
        .arg(shared.join("unpack.sh"))
        .output()
        .expect("unpack.sh runs");
    assert!(
        out.status.success(),
        "unpack.sh failed (it needs xz): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

pub use capstan_etcd::testing::free_port;

/// A child process writing its log to a file; killed (and reaped) when dropped.
pub struct Process {
    /// What it is, for messages.
    pub name: String,
    /// Its log (stdout and stderr).
    pub log: PathBuf,
    child: Child,
}

impl Process {
    /// Starts `program` with `args` (and `env`), its output in `<log_dir>/<name>.log`.
    pub fn start(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(&str, &Path)],
        log_dir: &Path,
    ) -> Self {
        let log = log_dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file);
        for (key, value) in env {
            cmd.env(key, value);
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", program.display()));
        Self {
            name: name.to_string(),
            log,
            child,
        }
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills it now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The error lines of its klog log (`E` and a date) that contain none of `allowed`.
    pub fn errors(&self, allowed: &[&str]) -> Vec<String> {
        self.log_text()
            .lines()
            .filter(|l| l.starts_with('E') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
            .filter(|l| !allowed.iter().any(|a| l.contains(a)))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
        if let Some(root) = hollow_kubelet_root(&self.log) {
            let _ = std::fs::remove_dir_all(root);
        }
    }
}

/// The root directory a hollow kubelet (kubemark) made for itself, which its log names: it
/// makes it in `/tmp` whatever `TMPDIR` says, so it outlives the test's own directory.
fn hollow_kubelet_root(log: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(log).ok()?;
    let (_, rest) = text.split_once("Using /tmp/hollow-kubelet.")?;
    let (suffix, _) = rest.split_once(" as root dir")?;
    let digits = !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| PathBuf::from(format!("/tmp/hollow-kubelet.{suffix}")))
}

/// Upstream's etcd (from [`binaries`] in `bin`) on free loopback ports, healthy (started
/// again on other ports when a test beside this one takes one before etcd binds it); the
/// member, removed with its data when dropped, and its client URL.
pub fn start_etcd(bin: &Path) -> (EtcdCluster, String) {
    let etcd = EtcdCluster::start_binary(&bin.join("etcd"));
    let url = etcd.endpoints().remove(0);
    (etcd, url)
}

/// Upstream's kube-apiserver (from [`binaries`] in `bin`) with `pki`'s flags, the pods'
/// `toleration_seconds` and `extra`, its log in `log_dir`, on a free loopback port: the process
/// and the port, once it serves it (see [`start_on_free_port`]).
pub fn start_apiserver(
    bin: &Path,
    pki: &Pki,
    toleration_seconds: u32,
    extra: &[String],
    log_dir: &Path,
) -> (Process, u16) {
    let flags = |port| {
        let mut flags = pki.apiserver_flags(port, toleration_seconds);
        flags.extend_from_slice(extra);
        flags
    };
    let program = bin.join("kube-apiserver");
    start_on_free_port(
        "kube-apiserver",
        &program,
        flags,
        "Serving securely on",
        log_dir,
    )
}

/// A server (`name`, run from `program` with the arguments `args(port)`, its log in
/// `log_dir`) on a free loopback port: the process and the port, once its log has `serving`
/// in it (readiness is the caller's to wait for). A port found free may be taken by a test
/// beside this one before the server binds it: then it starts again on another (three
/// tries). Waits blocking, a minute at most.
pub fn start_on_free_port(
    name: &str,
    program: &Path,
    args: impl Fn(u16) -> Vec<String>,
    serving: &str,
    log_dir: &Path,
) -> (Process, u16) {
    for attempt in 1..=3 {
        let port = free_port();
        let mut server = Process::start(name, program, &args(port), &[], log_dir);
        let deadline = Instant::now() + Duration::from_secs(60);
        while server.running() && Instant::now() < deadline {
            if server.log_text().contains(serving) {
                return (server, port);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = server.log_text();
        assert!(
            log.to_ascii_lowercase().contains("address already in use") && attempt < 3,
            "{name} did not serve its port:\n{log}"
        );
    }
    unreachable!("the last attempt returns or panics")
}

/// A cluster's PKI in a directory: one CA for serving and clients, the API server's serving
/// certificate for 127.0.0.1, and the service-account key pair.
pub struct Pki {
    /// Where the files are.
    pub dir: PathBuf,
    /// The authority.
    pub ca: TestCa,
    /// `ca.crt`.
    pub ca_file: PathBuf,
    /// The serving certificate and key files.
    pub serving: (PathBuf, PathBuf),
    /// The service-account signing key (private, public) files.
    pub service_account: (PathBuf, PathBuf),
}

impl Pki {
    /// Writes a new PKI into `dir`.
    pub fn new(dir: &Path) -> Self {
        use rcgen::{CertificateParams, ExtendedKeyUsagePurpose, KeyPair, SanType};
        std::fs::create_dir_all(dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let ca = TestCa::new("cluster-ca");
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params
            .subject_alt_names
            .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let (crt, key) = ca.sign(params);
        let sa = KeyPair::generate().unwrap();
        Self {
            ca_file: write("ca.crt", &ca.pem),
            serving: (write("apiserver.crt", &crt), write("apiserver.key", &key)),
            service_account: (
                write("sa.key", &sa.serialize_pem()),
                write("sa.pub", &sa.public_key_pem()),
            ),
            dir: dir.to_path_buf(),
            ca,
        }
    }

    /// A kubeconfig for the server at `url` as the client certificate of `user` in `groups`.
    pub fn kubeconfig(&self, url: &str, user: &str, groups: &[&str]) -> PathBuf {
        let name = user.replace(':', "-");
        certificate_kubeconfig(
            &self.dir,
            &name,
            url,
            &self.ca.pem,
            &self.ca.client(user, groups),
        )
    }

    /// The flags an API server (Capstan's or upstream's) of this cluster takes: serving on
    /// 127.0.0.1:`port`, client certificates, service-account tokens, Node and RBAC
    /// authorization with NodeRestriction, and pods' default tolerations of a not-ready or
    /// unreachable node cut to `toleration_seconds`.
    pub fn apiserver_flags(&self, port: u16, toleration_seconds: u32) -> Vec<String> {
        let p = |path: &PathBuf| path.display().to_string();
        vec![
            "--bind-address=127.0.0.1".into(),
            format!("--secure-port={port}"),
            format!("--client-ca-file={}", p(&self.ca_file)),
            format!("--tls-cert-file={}", p(&self.serving.0)),
            format!("--tls-private-key-file={}", p(&self.serving.1)),
            format!("--service-account-key-file={}", p(&self.service_account.1)),
            format!(
                "--service-account-signing-key-file={}",
                p(&self.service_account.0)
            ),
            "--service-account-issuer=https://kubernetes.default.svc".into(),
            "--authorization-mode=Node,RBAC".into(),
            "--enable-admission-plugins=NodeRestriction".into(),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            format!("--default-not-ready-toleration-seconds={toleration_seconds}"),
            format!("--default-unreachable-toleration-seconds={toleration_seconds}"),
        ]
    }
}

/// Polls `check` every 200 ms until it is true; panics with `what` after `timeout`. Returns
/// how long it took.
pub fn wait_until(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
    start.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root directory is read from the line that names it, and nothing else is taken for
    /// one.
    #[test]
    fn a_hollow_kubelets_root_is_read_from_its_log() {
        let dir = std::env::temp_dir().join(format!("capstan-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("hollow-1.log");
        let read = |text: &str| {
            std::fs::write(&log, text).unwrap();
            hollow_kubelet_root(&log)
        };
        assert_eq!(
            read(
                "I1205 hollow_kubelet.go:150] Using /tmp/hollow-kubelet.4008460308 as root dir for hollow-kubelet\n"
            ),
            Some(PathBuf::from("/tmp/hollow-kubelet.4008460308"))
        );
        assert_eq!(read("Using /tmp/hollow-kubelet./.. as root dir\n"), None);
        assert_eq!(read("Using /tmp/hollow-kubelet. as root dir\n"), None);
        assert_eq!(read("nothing about it\n"), None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(hollow_kubelet_root(&log), None, "no log");
    }
}
