//! A real etcd for tests: single-member servers or a cluster, each member its own process on
//! free loopback ports with a temporary data directory, killed and removed on drop.
//!
//! The binary is `$ETCD_BIN`, else `etcd` on the `PATH` (Debian's `etcd-server`, which
//! `scripts/test.sh` installs).

use std::hash::BuildHasher;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One etcd member process.
pub struct EtcdMember {
    name: String,
    child: Option<Child>,
    dir: PathBuf,
    client_port: u16,
    args: Vec<String>,
    tls: bool,
    binary: String,
}

/// Server-side TLS files for the client port (PEM), with client certificates required.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// The CA that signs the clients' certificates.
    pub ca_file: PathBuf,
    /// The server certificate (for 127.0.0.1).
    pub cert_file: PathBuf,
    /// Its key.
    pub key_file: PathBuf,
}

/// A running etcd cluster (one member or more).
pub struct EtcdCluster {
    /// The members, in the order they were started.
    pub members: Vec<EtcdMember>,
}

/// Ports below this are left to well-known services ([`free_port`] draws above it).
const LOWEST_DRAWN_PORT: u16 = 10_000;

/// The first of the kernel's ephemeral ports, where there is room to draw ports below it.
fn ephemeral_start() -> Option<u16> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .filter(|start| *start > LOWEST_DRAWN_PORT + 1_000)
}

/// A port nothing listens on now, for a server a test is about to start.
///
/// Chosen at random below the kernel's range of ephemeral ports where there is room: the
/// local ports of the suite's own outgoing connections come from that range, so none of
/// them can take this port before the server binds it, as one could take a port `bind(0)`
/// gave (it lies in the range). Elsewhere (a range that starts low) it is `bind(0)`'s.
pub fn free_port() -> u16 {
    if let Some(start) = ephemeral_start() {
        for _ in 0..64 {
            // Each `RandomState` is seeded anew: its hash of anything is a fresh draw.
            let draw = std::collections::hash_map::RandomState::new().hash_one(());
            let port = LOWEST_DRAWN_PORT + (draw % u64::from(start - LOWEST_DRAWN_PORT)) as u16;
            // Free on every address is free on loopback too.
            if TcpListener::bind(("0.0.0.0", port)).is_ok() {
                return port;
            }
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn binary() -> String {
    if let Ok(bin) = std::env::var("ETCD_BIN") {
        return bin;
    }
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join("etcd").is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "etcd is not installed: run ./scripts/test.sh (it installs Debian's etcd-server) or set ETCD_BIN"
    );
    "etcd".into()
}

impl EtcdCluster {
    /// Starts a cluster of `size` members and waits until it is healthy.
    pub fn start(size: usize) -> Self {
        Self::start_with(size, None, &binary())
    }

    /// Starts one member of the etcd at `binary` (another version than the default's).
    pub fn start_binary(binary: &std::path::Path) -> Self {
        Self::start_with(1, None, &binary.display().to_string())
    }

    /// Starts one member serving clients over TLS, requiring client certificates.
    pub fn start_tls(tls: &ServerTls) -> Self {
        Self::start_with(1, Some(tls), &binary())
    }

    /// Starts the members on free ports. A port found free may be taken by another process
    /// before etcd binds it; then a member exits, and the cluster starts over on new ports.
    fn start_with(size: usize, tls: Option<&ServerTls>, binary: &str) -> Self {
        const ATTEMPTS: usize = 5;
        for attempt in 1..=ATTEMPTS {
            let mut cluster = Self::spawn(size, tls, binary);
            match blocking(|| cluster.wait_all_healthy(Duration::from_secs(30))) {
                Ok(()) => return cluster,
                Err(log) if attempt == ATTEMPTS => {
                    panic!("etcd did not become healthy; the log of a member:\n{log}")
                }
                Err(_) => {}
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    /// Waits until every member is healthy; the log of a member that exited (or of the
    /// first unhealthy one after `timeout`) otherwise.
    fn wait_all_healthy(&mut self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            let mut all = true;
            for member in &mut self.members {
                if member.healthy() {
                    continue;
                }
                all = false;
                if member.exited() || Instant::now() > deadline {
                    return Err(member.log());
                }
            }
            if all {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn spawn(size: usize, tls: Option<&ServerTls>, binary: &str) -> Self {
        let scheme = if tls.is_some() { "https" } else { "http" };
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let run = format!(
            "capstan-etcd-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let peers: Vec<(String, u16, u16)> = (0..size)
            .map(|i| (format!("m{i}"), free_port(), free_port()))
            .collect();
        let initial: Vec<String> = peers
            .iter()
            .map(|(name, _, peer)| format!("{name}=http://127.0.0.1:{peer}"))
            .collect();
        let members = peers
            .iter()
            .map(|(name, client, peer)| {
                let dir = std::env::temp_dir().join(&run).join(name);
                std::fs::create_dir_all(&dir).expect("an etcd data directory");
                let mut args = vec![
                    format!("--name={name}"),
                    format!("--data-dir={}", dir.join("data").display()),
                    format!("--listen-client-urls={scheme}://127.0.0.1:{client}"),
                    format!("--advertise-client-urls={scheme}://127.0.0.1:{client}"),
                    format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
                    format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
                    format!("--initial-cluster={}", initial.join(",")),
                    format!("--initial-cluster-token={run}"),
                    "--logger=zap".into(),
                    "--log-outputs=stderr".into(),
                ];
                if let Some(tls) = tls {
                    args.push(format!("--cert-file={}", tls.cert_file.display()));
                    args.push(format!("--key-file={}", tls.key_file.display()));
                    args.push(format!("--trusted-ca-file={}", tls.ca_file.display()));
                    args.push("--client-cert-auth".into());
                }
                let mut member = EtcdMember {
                    name: name.clone(),
                    child: None,
                    dir,
                    client_port: *client,
                    args,
                    tls: tls.is_some(),
                    binary: binary.to_string(),
                };
                member.spawn();
                member
            })
            .collect();
        Self { members }
    }

    /// The client URLs of every member.
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(EtcdMember::endpoint).collect()
    }

    /// A store on every member, with the default settings (panics when it cannot connect).
    pub async fn store(&self) -> crate::EtcdStore {
        crate::EtcdStore::connect(&crate::EtcdConfig::new(self.endpoints()))
            .await
            .expect("a store on the test cluster")
    }

    /// The index of the member that leads, as the running members report it.
    pub fn leader(&self) -> Option<usize> {
        let statuses: Vec<Option<(String, String)>> =
            self.members.iter().map(EtcdMember::status).collect();
        let leader = statuses
            .iter()
            .flatten()
            .map(|(_, leader)| leader.clone())
            .next()?;
        statuses
            .iter()
            .position(|s| s.as_ref().is_some_and(|(id, _)| *id == leader))
    }
}

impl EtcdMember {
    fn spawn(&mut self) {
        let log = std::fs::File::create(self.dir.join("etcd.log")).expect("an etcd log file");
        let child = Command::new(&self.binary)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("etcd starts");
        self.child = Some(child);
    }

    /// The member's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The member's client URL.
    pub fn endpoint(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.client_port)
    }

    /// Whether this member serves its client port (its own log says so) and, without TLS,
    /// `/health` there answers healthy. The log is what tells this member from another etcd
    /// that took the port first (a test beside this one): that one answers `/health` too,
    /// while this one fails to bind and exits.
    pub fn healthy(&self) -> bool {
        let serving = std::fs::read_to_string(self.dir.join("etcd.log"))
            .is_ok_and(|log| log.contains("serving client traffic"));
        if !serving || self.tls {
            return serving;
        }
        let Ok(mut conn) = TcpStream::connect(("127.0.0.1", self.client_port)) else {
            return false;
        };
        let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
        if conn
            .write_all(b"GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut answer = String::new();
        let _ = conn.read_to_string(&mut answer);
        answer.contains("\"health\":\"true\"")
    }

    /// This member's id and the leader's id, from the maintenance status of the JSON gateway.
    fn status(&self) -> Option<(String, String)> {
        let mut conn = TcpStream::connect(("127.0.0.1", self.client_port)).ok()?;
        let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
        let request = "POST /v3/maintenance/status HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        conn.write_all(request.as_bytes()).ok()?;
        let mut answer = String::new();
        let _ = conn.read_to_string(&mut answer);
        let field = |text: &str, name: &str| -> Option<String> {
            let at = text.find(&format!("\"{name}\":\""))? + name.len() + 4;
            let end = text[at..].find('"')? + at;
            Some(text[at..end].to_string())
        };
        let member = field(&answer, "member_id")?;
        let leader = field(&answer, "leader")?;
        Some((member, leader))
    }

    /// Waits until the member is healthy; panics with its log after `timeout`. Inside a
    /// multi-threaded runtime the wait moves the runtime's other tasks off this thread.
    pub fn wait_healthy(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        blocking(|| {
            while !self.healthy() {
                if Instant::now() > deadline {
                    panic!(
                        "etcd member {} did not become healthy; its log:\n{}",
                        self.name,
                        self.log()
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    }

    /// The member's log so far.
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("etcd.log")).unwrap_or_default()
    }

    /// Whether the process has exited.
    fn exited(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|child| !matches!(child.try_wait(), Ok(None)))
    }

    /// Kills the process (SIGKILL); the data stays for [`EtcdMember::restart`].
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the process (SIGSTOP): it keeps its sockets but answers nothing, as a member cut
    /// off from the network would.
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// Lets a [`pause`](Self::pause)d process go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        if let Some(child) = &self.child {
            let status = Command::new("kill")
                .arg(format!("-{name}"))
                .arg(child.id().to_string())
                .status()
                .expect("kill runs");
            assert!(status.success(), "kill -{name} failed");
        }
    }

    /// Starts the process again on the same data and ports, without waiting for health.
    pub fn restart(&mut self) {
        self.kill();
        for arg in &mut self.args {
            if arg.starts_with("--initial-cluster-state=") {
                *arg = "--initial-cluster-state=existing".into();
            }
        }
        self.spawn();
    }
}

/// Runs `wait`, a blocking wait, without holding up a multi-threaded runtime's other tasks.
fn blocking<T>(wait: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(wait)
        }
        _ => wait(),
    }
}

impl Drop for EtcdMember {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
        // The run's directory goes with its last member (removing a non-empty one fails).
        if let Some(run) = self.dir.parent() {
            let _ = std::fs::remove_dir(run);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member whose port another etcd took first is not taken for healthy because that one
    /// answers `/health`.
    #[test]
    fn a_member_is_healthy_only_when_it_serves_its_port_itself() {
        let cluster = EtcdCluster::start(1);
        let serving = &cluster.members[0];
        assert!(serving.healthy());
        let dir =
            std::env::temp_dir().join(format!("capstan-etcd-impostor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Its process failed to bind the port: its log says so, and nothing about serving.
        std::fs::write(dir.join("etcd.log"), "listen tcp: address already in use\n").unwrap();
        let beaten = EtcdMember {
            name: "beaten".into(),
            child: None,
            dir,
            client_port: serving.client_port,
            args: Vec::new(),
            tls: false,
            binary: binary(),
        };
        assert!(!beaten.healthy());
    }

    /// A free port can be bound on every address, and lies below the ephemeral ports when
    /// the range leaves room (so no outgoing connection holds it meanwhile).
    #[test]
    fn a_free_port_binds_and_lies_below_the_ephemeral_range() {
        let ports: std::collections::HashSet<u16> = (0..20).map(|_| free_port()).collect();
        assert!(ports.len() > 1, "drawn at random: {ports:?}");
        for port in ports {
            TcpListener::bind(("0.0.0.0", port)).expect("the port binds");
            if let Some(start) = ephemeral_start() {
                assert!(
                    (LOWEST_DRAWN_PORT..start).contains(&port),
                    "{port} is not below {start}"
                );
            }
        }
    }
}
