//! Start a real Capstan API server inside your own tests, in one call: on `127.0.0.1:0`,
//! with a temporary store and certificate, and an admin token. No binaries to download.
//!
//! ```no_run
//! # async fn demo() {
//! let server = capstan_testing::TestServer::start().await;
//! let client = server.client().await; // a kube::Client authenticated as admin
//! # }
//! ```

use std::net::{IpAddr, Ipv4Addr};

use capstan_server::{RunningServer, ServerConfig};

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// A running API server whose data lives in a temporary directory, removed on drop.
pub struct TestServer {
    server: Option<RunningServer>,
    config: ServerConfig,
    dir: tempfile::TempDir,
}

impl TestServer {
    /// Starts a server with the default configuration.
    ///
    /// # Panics
    /// When the server can not start (a test failure).
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Starts a server after `configure` adjusts its configuration (the data directory,
    /// address and admin token are already set).
    ///
    /// # Panics
    /// When the server can not start (a test failure).
    pub async fn start_with(configure: impl FnOnce(&mut ServerConfig)) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut config = ServerConfig::new(
            dir.path(),
            std::sync::Arc::new(capstan_controllers::InProcess),
        );
        config.bind_address = IpAddr::V4(Ipv4Addr::LOCALHOST);
        config.secure_port = 0;
        config.admin_token = true;
        config.admin_token_value = Some(capstan_meta::Redacted(format!(
            "test-{}",
            std::process::id() as u128 * 1_000_003 + nanos()
        )));
        configure(&mut config);
        let server = capstan_server::start(config.clone())
            .await
            .expect("the test server starts");
        Self {
            server: Some(server),
            config,
            dir,
        }
    }

    /// Stops the server gracefully and starts it again on the same port, data, certificate
    /// and admin token, as a daemon restart would.
    ///
    /// # Panics
    /// When the server can not start again within a few seconds (a test failure).
    pub async fn restart(&mut self) {
        let running = self.server.take().expect("the server is running");
        let mut config = self.config.clone();
        config.secure_port = running.local_addr().port();
        running.shutdown().await;
        // The store closes when its last user (cache tasks, in-flight work) lets go.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match capstan_server::start(config.clone()).await {
                Ok(server) => {
                    self.server = Some(server);
                    return;
                }
                Err(err) if std::time::Instant::now() < deadline => {
                    let _ = err;
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                Err(err) => panic!("the test server does not start again: {err}"),
            }
        }
    }

    fn running(&self) -> &RunningServer {
        self.server.as_ref().expect("the server is running")
    }

    /// The `https://127.0.0.1:<port>` URL.
    pub fn url(&self) -> String {
        self.running().url()
    }

    /// The CA certificate to trust (PEM).
    pub fn ca_pem(&self) -> &str {
        self.running().ca_pem()
    }

    /// The admin bearer token (group `system:masters`).
    pub fn token(&self) -> &str {
        self.running()
            .admin_token()
            .expect("test servers have an admin token")
    }

    /// A kubeconfig (JSON) for the admin user.
    pub fn kubeconfig(&self) -> String {
        self.running()
            .admin_kubeconfig()
            .expect("test servers have an admin token")
    }

    /// Writes the admin kubeconfig into the server's temporary directory and returns its path
    /// (for kubectl's `--kubeconfig`).
    ///
    /// The file is replaced whole (written aside, then renamed): a process started by an
    /// earlier call may be reading it while a later call writes it again.
    pub fn kubeconfig_path(&self) -> std::path::PathBuf {
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let path = self.dir.path().join("admin.kubeconfig");
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let aside = self.dir.path().join(format!(".admin.kubeconfig.{n}"));
        std::fs::write(&aside, self.kubeconfig()).expect("writing the kubeconfig");
        std::fs::rename(&aside, &path).expect("putting the kubeconfig in place");
        path
    }

    /// The server's data directory.
    pub fn data_dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// A `kube::Client` authenticated as admin.
    ///
    /// # Panics
    /// When the kubeconfig is rejected by kube (a test failure).
    #[cfg(feature = "kube")]
    pub async fn client(&self) -> kube::Client {
        let kubeconfig =
            kube::config::Kubeconfig::from_yaml(&self.kubeconfig()).expect("a valid kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("a usable kubeconfig");
        kube::Client::try_from(config).expect("a kube client")
    }

    /// Stops the server gracefully (dropping it also stops it, abruptly).
    pub async fn stop(mut self) {
        if let Some(server) = self.server.take() {
            server.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TestServer;

    #[tokio::test(flavor = "multi_thread")]
    async fn a_kubeconfig_written_again_is_never_read_half_written() {
        let server = TestServer::start().await;
        let path = server.kubeconfig_path();
        let whole = server.kubeconfig();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (path, done) = (path.clone(), done.clone());
            std::thread::spawn(move || {
                let mut torn = 0;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    if std::fs::read_to_string(&path).unwrap() != whole {
                        torn += 1;
                    }
                }
                torn
            })
        };
        for _ in 0..2_000 {
            assert_eq!(server.kubeconfig_path(), path);
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(reader.join().unwrap(), 0, "reads saw a partly written file");
    }
}
