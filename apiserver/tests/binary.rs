//! The real `capstan-apiserver` binary: start-up, the admin kubeconfig, and crash safety.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use capstan_e2e::RawClient;
use tokio::sync::Mutex;

const SC: &str = "/apis/storage.k8s.io/v1/storageclasses";

struct Daemon {
    child: Child,
    url: String,
    ca: String,
    client: RawClient,
}

/// The binary on loopback, a free port, its data and certificates in `data`.
fn server_command(data: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"));
    command
        .args(["--bind-address", "127.0.0.1", "--secure-port", "0"])
        .arg("--data-dir")
        .arg(data)
        .arg("--cert-dir")
        .arg(data.join("pki"));
    command
}

/// Starts the binary on a free port with its data in `data`, and waits until it serves.
fn start(data: &Path) -> Daemon {
    start_with(data, &[])
}

/// [`start`] with more options.
fn start_with(data: &Path, extra: &[&str]) -> Daemon {
    let kubeconfig = data.join("admin.kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let mut child = server_command(data)
        .arg("--write-admin-kubeconfig")
        .arg(&kubeconfig)
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    // The log line "serving address=127.0.0.1:PORT" names the port.
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut address = None;
    for line in stderr.by_ref() {
        let line = line.expect("a log line");
        if let Some(rest) = line.split("address=").nth(1)
            && line.contains("serving")
        {
            address = Some(
                rest.split_whitespace()
                    .next()
                    .expect("an address")
                    .to_string(),
            );
            break;
        }
    }
    let address = address.expect("the server logs its address");
    // Keep draining the log so that the server never writes into a closed pipe.
    std::thread::spawn(move || stderr.for_each(drop));
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&kubeconfig).expect("the kubeconfig")).unwrap();
    let token = config["users"][0]["user"]["token"]
        .as_str()
        .expect("a token");
    let ca = config["clusters"][0]["cluster"]["certificate-authority-data"]
        .as_str()
        .expect("a CA");
    let ca = base64_decode(ca);
    let url = format!("https://{address}");
    assert_eq!(config["clusters"][0]["cluster"]["server"], url.as_str());
    Daemon {
        client: RawClient::new(&url, &ca, Some(token)),
        url,
        ca,
        child,
    }
}

fn base64_decode(s: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = ALPHABET.iter().position(|a| *a == c).expect("base64") as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    String::from_utf8(out).expect("PEM text")
}

/// The storage classes of `names` the server does not list.
async fn missing<'a>(daemon: &Daemon, names: &'a [String]) -> Vec<&'a String> {
    let list = daemon.client.get(SC).await.json();
    let present: std::collections::HashSet<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    names
        .iter()
        .filter(|n| !present.contains(n.as_str()))
        .collect()
}

fn sc(name: &str) -> serde_json::Value {
    serde_json::json!({"metadata": {"name": name}, "provisioner": "example.com/p"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_create_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = start(dir.path());
    assert!(daemon.url.starts_with("https://127.0.0.1:"));

    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..16 {
        let client = daemon.client.clone();
        let acknowledged = acknowledged.clone();
        let stop = stop.clone();
        writers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let name = format!("w{w}-{i}");
                i += 1;
                let body = serde_json::to_vec(&sc(&name)).unwrap();
                let sent = client.try_request(
                    http::Method::POST,
                    SC,
                    &[("content-type", "application/json")],
                    body,
                );
                match tokio::time::timeout(Duration::from_secs(10), sent).await {
                    Ok(Ok(resp)) if resp.status == 201 => acknowledged.lock().await.push(name),
                    Ok(Ok(resp)) => panic!("create failed before the crash: {}", resp.status),
                    // Refused, reset or stuck once the server is killed.
                    _ => break,
                }
            }
        }));
    }
    // Kill in the middle of the burst, once a good number of creates are acknowledged.
    let deadline = Instant::now() + Duration::from_secs(60);
    while acknowledged.lock().await.len() < 300 {
        assert!(
            Instant::now() < deadline,
            "creates are not being acknowledged"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    daemon.child.kill().expect("SIGKILL");
    daemon.child.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        let _ = w.await;
    }
    let acknowledged = acknowledged.lock().await.clone();

    let mut restarted = start(dir.path());
    let lost = missing(&restarted, &acknowledged).await;
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged creates were lost: {:?}",
        lost.len(),
        acknowledged.len(),
        &lost[..lost.len().min(10)]
    );
    assert_eq!(
        restarted.ca, daemon.ca,
        "the generated certificate is reused on restart"
    );
    let _ = restarted.child.kill();
    let _ = restarted.child.wait();
}

/// The records of the write-ahead log's current round: offset, length and keys of each.
fn log_records(wal: &[u8]) -> Vec<(usize, usize, Vec<String>)> {
    let u32_at = |at: usize| u32::from_le_bytes(wal[at..at + 4].try_into().unwrap()) as usize;
    let mut records = Vec::new();
    let mut at = 0;
    let epoch = &wal[12..20];
    while &wal[at..at + 4] == b"CWA2" && &wal[at + 12..at + 20] == epoch {
        let len = u32_at(at + 4);
        let mut keys = Vec::new();
        let mut p = at + 24;
        for _ in 0..u32_at(at + 20) {
            let klen = u32_at(p + 17);
            keys.push(String::from_utf8(wal[p + 21..p + 21 + klen].to_vec()).unwrap());
            p += 21 + klen;
            p += 4 + u32_at(p);
        }
        records.push((at, 12 + len, keys));
        at += 12 + len;
    }
    records
}

/// How many batches of its log `capstan-storeutl check` says a restart replays.
fn batches_to_replay(report: &str) -> usize {
    report
        .lines()
        .find_map(|line| line.trim().split_once(" batches to replay"))
        .and_then(|(count, _)| count.parse().ok())
        .unwrap_or_else(|| panic!("no count of batches to replay in {report}"))
}

/// Runs the binary on `data` expecting it to exit on its own; returns its stderr.
fn start_expecting_failure(data: &Path) -> String {
    let mut child = server_command(data).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server started on a damaged store");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn storeutl(command: &str, data: &Path) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_capstan-storeutl"))
        .arg(command)
        .arg("--data-dir")
        .arg(data)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), text)
}

/// A record damaged in the middle of the log (a media fault, not a crash's torn write): the
/// server refuses to start and names the tool; `capstan-storeutl check` reports the damage,
/// `salvage` rebuilds the store from every intact record, and the server then starts with
/// every acknowledged write but the damaged record's, never reusing a resourceVersion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_log_refuses_the_start_until_capstan_storeutl_salvages_it() {
    let dir = tempfile::tempdir().unwrap();
    let wal_path = dir.path().join("capstan.wal");
    let mut acknowledged = Vec::new();
    let mut newest = 0u64;
    // Writes until the kill leave a round of several records, all still to replay. A
    // checkpoint right before the kill makes the database durable past them and starts a new
    // round whose first record is not written yet: the old round's records stay in the file,
    // and a restart rightly ignores them (damaged or not). Then write and kill again.
    let records = loop {
        let mut daemon = start(dir.path());
        for i in 0..60 {
            let name = format!("sc-{}-{i}", acknowledged.len());
            let created = daemon
                .client
                .send_json(http::Method::POST, SC, &sc(&name))
                .await;
            assert_eq!(created.status, 201);
            let rv = created.json()["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse::<u64>()
                .unwrap();
            newest = newest.max(rv);
            acknowledged.push(name);
        }
        daemon.child.kill().unwrap();
        daemon.child.wait().unwrap();
        let records = log_records(&std::fs::read(&wal_path).unwrap());
        let (code, report) = storeutl("check", dir.path());
        assert_eq!(code, 0, "{report}");
        if records.len() >= 8 && batches_to_replay(&report) == records.len() {
            break records;
        }
    };
    let (index, (offset, len, lost_keys)) = records
        .iter()
        .enumerate()
        .take(records.len() - 3)
        .find(|(_, (_, _, keys))| keys.iter().any(|k| k.contains("/storageclasses/")))
        .expect("a storage class's record with records after it");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&wal_path)
        .unwrap();
    let mut byte = [0u8];
    use std::os::unix::fs::FileExt;
    let at = (offset + len - 3) as u64;
    file.read_exact_at(&mut byte, at).unwrap();
    file.write_all_at(&[!byte[0]], at).unwrap();

    let stderr = start_expecting_failure(dir.path());
    assert!(
        stderr.contains(&format!("damaged at offset {offset}"))
            && stderr.contains("capstan-storeutl"),
        "{stderr}"
    );
    let (code, report) = storeutl("check", dir.path());
    assert_eq!(code, 2, "{report}");
    assert!(report.contains("DAMAGED"), "{report}");
    let after = &records[index + 1].2[0];
    assert!(report.contains(after.as_str()), "{after} in {report}");
    let (code, report) = storeutl("salvage", dir.path());
    assert_eq!(code, 0, "{report}");
    assert!(report.contains("salvaged"), "{report}");
    let (code, report) = storeutl("check", dir.path());
    assert_eq!(code, 0, "{report}");

    let mut restarted = start(dir.path());
    let lost = missing(&restarted, &acknowledged).await;
    let expected: Vec<&String> = acknowledged
        .iter()
        .filter(|n| lost_keys.iter().any(|k| k.ends_with(&format!("/{n}"))))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(lost, expected, "only the damaged record's writes are lost");
    let created = restarted
        .client
        .send_json(http::Method::POST, SC, &sc("after-salvage"))
        .await;
    assert_eq!(created.status, 201);
    let rv: u64 = created.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        rv > newest,
        "resourceVersion {rv} reused (had reached {newest})"
    );
    let _ = restarted.child.kill();
    let _ = restarted.child.wait();
}

#[test]
fn bad_options_fail_the_start_with_one_clear_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
        .args([
            "--authorization-mode",
            "Telepathy",
            "--secure-port",
            "0",
            "--data-dir",
        ])
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown authorization mode \"Telepathy\""),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
        .arg("--secure-port=x")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let out = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
        .args([
            "--enable-admission-plugins=NodeRestriction,Telepathy",
            "--secure-port=0",
            "--data-dir",
        ])
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--enable-admission-plugins: unknown admission plugin \"Telepathy\""),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

#[test]
fn a_bad_encryption_configuration_fails_the_start_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("encryption.yaml");
    std::fs::write(
        &config,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys: [{name: k1, secret: c2hvcnQ=}]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
        .arg("--encryption-provider-config")
        .arg(&config)
        .args(["--secure-port", "0", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resources[0].providers[0].aescbc.keys[0].secret")
            && err.contains("this one is 5"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_shutdown_delay_fails_readyz_and_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = start_with(dir.path(), &["--shutdown-delay-duration=3s"]);
    let client = daemon.client.clone();
    // A watch that outlives the signal: it must see writes made during the delay (as
    // changes, or in its initial state should it start late) and end cleanly when the
    // server drains.
    let watcher = client.clone();
    let watch = tokio::spawn(async move {
        watcher
            .get(&format!("{SC}?watch=true&timeoutSeconds=60"))
            .await
    });
    let ready = client.get("/readyz?verbose").await;
    assert_eq!(ready.status.as_u16(), 200);

    let status = Command::new("kill")
        .args(["-TERM", &daemon.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let ready = loop {
        let ready = client.get("/readyz").await;
        if ready.status.as_u16() != 200 || Instant::now() > deadline {
            break ready;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(ready.status.as_u16(), 500);
    assert!(
        String::from_utf8_lossy(&ready.body).contains("[-]shutdown failed"),
        "{}",
        String::from_utf8_lossy(&ready.body)
    );
    assert_eq!(client.get("/healthz").await.status.as_u16(), 200);
    assert_eq!(client.get("/livez").await.status.as_u16(), 200);
    let created = client
        .send_json(http::Method::POST, SC, &sc("during-the-delay"))
        .await;
    assert_eq!(created.status.as_u16(), 201, "writes still served");

    let events = tokio::time::timeout(Duration::from_secs(30), watch)
        .await
        .expect("the watch ends when the server drains")
        .unwrap();
    let lines = events.json_lines();
    assert!(
        lines
            .iter()
            .any(|e| e["object"]["metadata"]["name"] == "during-the-delay"),
        "{lines:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(exit) = daemon.child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            Instant::now() < deadline,
            "the server exits after the delay"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn tls_options_rustls_cannot_honour_fail_the_start_saying_so() {
    for (option, expected) in [
        (
            "--tls-min-version=VersionTLS10",
            "TLS 1.0 and 1.1 are not offered",
        ),
        (
            "--tls-cipher-suites=TLS_RSA_WITH_RC4_128_SHA",
            "TLS_RSA_WITH_RC4_128_SHA is not supported",
        ),
        (
            "--tls-cipher-suites=TLS_MADE_UP",
            "is not a cipher suite name",
        ),
        ("--goaway-chance=0.5", "outside 0 to 0.02"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
            .args([option, "--secure-port=0", "--data-dir"])
            .arg(tempfile::tempdir().unwrap().path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{option}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{option}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_with_a_line_per_request_and_no_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("admin.kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
        .args([
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            "0",
            "--logging-format=json",
            "-v=2",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .arg("--write-admin-kubeconfig")
        .arg(&kubeconfig)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let address = loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a log line");
        let doc: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("a log line is not JSON ({e}): {line}"));
        lines.push(line);
        if doc["msg"] == "serving" {
            break doc["address"].as_str().unwrap().to_string();
        }
    };
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&kubeconfig).unwrap()).unwrap();
    let token = config["users"][0]["user"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let ca = base64_decode(
        config["clusters"][0]["cluster"]["certificate-authority-data"]
            .as_str()
            .unwrap(),
    );
    let client = RawClient::new(&format!("https://{address}"), &ca, Some(&token));
    let secret =
        serde_json::json!({"metadata": {"name": "s"}, "stringData": {"password": "do-not-log-me"}});
    let res = client
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/secrets",
            &secret,
        )
        .await;
    assert_eq!(res.status.as_u16(), 201);
    assert_eq!(client.get("/api?x=1").await.status.as_u16(), 200);
    let request_line = loop {
        let line = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the request's log line");
        let doc: serde_json::Value = serde_json::from_str(&line).unwrap();
        lines.push(line);
        if doc["msg"] == "HTTP" && doc["URI"] == "/api?x=1" {
            break doc;
        }
    };
    assert_eq!(request_line["verb"], "GET");
    assert_eq!(request_line["resp"], 200);
    assert!(
        request_line["srcIP"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:")
    );
    assert!(request_line["latency"].as_str().unwrap().ends_with('s'));
    assert!(request_line["userAgent"].is_string());
    assert!(
        request_line["caller"]
            .as_str()
            .unwrap()
            .starts_with("access_log.rs:")
    );
    child.kill().unwrap();
    let _ = child.wait();
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
        lines.push(line);
    }
    let all = lines.join("\n");
    assert!(!all.contains(&token), "the bearer token reached the log");
    assert!(
        !all.contains("do-not-log-me"),
        "a secret's value reached the log"
    );
}

/// A SIGTERM the moment the server says it serves is a graceful shutdown (exit 0), not the
/// signal's default action: the handlers are in place before the port answers.
#[test]
fn a_sigterm_right_after_start_is_a_graceful_shutdown() {
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let mut child = server_command(dir.path())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut lines = stderr.lines();
        assert!(
            lines
                .by_ref()
                .map_while(Result::ok)
                .any(|line| line.contains("\"serving\"")),
            "the server says it serves"
        );
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::spawn(move || lines.for_each(drop));
        let exit = child.wait().unwrap();
        assert!(exit.success(), "{exit:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_files_per_severity_written_out_at_exit() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let log_dir = format!("--log-dir={}", logs.display());
    let mut daemon = start_with(
        dir.path(),
        &[
            "--logtostderr=false",
            "--alsologtostderr",
            &log_dir,
            "--vmodule=access_log=2",
            "--log-flush-frequency=1h",
        ],
    );
    let res = daemon.client.get("/api?from=the-log-test").await;
    assert_eq!(res.status.as_u16(), 200);
    let info = logs.join("capstan-apiserver.INFO");
    let target = std::fs::read_link(&info).expect("a link to the newest INFO file");
    let name = target.to_string_lossy().into_owned();
    assert!(
        name.starts_with("capstan-apiserver.") && name.contains(".log.INFO."),
        "{name}"
    );
    // Buffered for an hour, so the request's line reaches the file only at exit.
    let status = Command::new("kill")
        .args(["-TERM", &daemon.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = daemon.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let text = std::fs::read_to_string(&info).unwrap();
    assert!(text.starts_with("Log file created at: "), "{text}");
    let serving = text
        .lines()
        .find(|l| l.contains("\"serving\""))
        .expect("the serving line");
    assert!(serving.starts_with('I'), "{serving}");
    assert!(serving.contains(" server.rs:"), "{serving}");
    let request = text
        .lines()
        .find(|l| l.contains(r#"URI="/api?from=the-log-test""#))
        .unwrap_or_else(|| panic!("the request's line is in the file: {text}"));
    assert!(
        request.contains(r#" verb="GET" "#) && request.contains(" resp=200"),
        "{request}"
    );
    assert!(logs.join("capstan-apiserver.WARNING").exists());
    assert!(logs.join("capstan-apiserver.ERROR").exists());
}

#[test]
fn a_bad_audit_policy_fails_the_start_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("audit.yaml");
    let run = |text: &str| {
        std::fs::write(&policy, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
            .arg("--audit-policy-file")
            .arg(&policy)
            .args(["--audit-log-path", "-", "--secure-port", "0", "--data-dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        err
    };
    let head = "apiVersion: audit.k8s.io/v1\nkind: Policy\n";
    let err = run(&format!("{head}rules:\n- level: Everything\n"));
    assert!(
        err.contains("rules[0].level: Unsupported value: \"Everything\""),
        "{err}"
    );
    let err = run(&format!("{head}rules:\n- level: Metadata\n  verb: [get]\n"));
    assert!(
        err.contains("audit policy file") && err.contains("verb"),
        "{err}"
    );
}
