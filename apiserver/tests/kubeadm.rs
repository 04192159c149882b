//! Drop-in start: the flags of a kubeadm-generated kube-apiserver static pod manifest, with
//! only the binary name (and the ports) changed, start Capstan on a TLS etcd; kubectl with
//! kubeadm's client-certificate kubeconfigs works, nodes are held by the Node authorizer
//! and NodeRestriction.

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use capstan_e2e::{TestCa, certificate_kubeconfig, kubectl};
use capstan_etcd::testing::{EtcdCluster, ServerTls};
use rcgen::{CertificateParams, ExtendedKeyUsagePurpose, KeyPair, SanType};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// A serving certificate for 127.0.0.1 and localhost, signed by `ca`.
fn serving(ca: &TestCa, cn: &str) -> (String, String) {
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    ca.sign(params)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubeadm_manifests_flags_start_capstan() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    // kubeadm's PKI: the cluster CA, the front-proxy CA, the etcd CA, the SA key pair.
    let ca = TestCa::new("kubernetes");
    let front_proxy_ca = TestCa::new("front-proxy-ca");
    let etcd_ca = TestCa::new("etcd-ca");
    let file = |name: &str, text: &str| write(&pki, name, text).display().to_string();
    let (apiserver_crt, apiserver_key) = serving(&ca, "kube-apiserver");
    let (kubelet_crt, kubelet_key) =
        ca.client("kube-apiserver-kubelet-client", &["kubeadm:cluster-admins"]);
    let (proxy_crt, proxy_key) = front_proxy_ca.client("front-proxy-client", &[]);
    let (etcd_client_crt, etcd_client_key) = etcd_ca.client("kube-apiserver-etcd-client", &[]);
    let (etcd_crt, etcd_key) = serving(&etcd_ca, "etcd");
    let sa = KeyPair::generate().unwrap();
    let etcd = EtcdCluster::start_tls(&ServerTls {
        ca_file: write(&pki, "etcd/ca.crt", &etcd_ca.pem),
        cert_file: write(&pki, "etcd/server.crt", &etcd_crt),
        key_file: write(&pki, "etcd/server.key", &etcd_key),
    });
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let flags = vec![
        "--advertise-address=127.0.0.1".to_string(),
        "--allow-privileged=true".into(),
        "--authorization-mode=Node,RBAC".into(),
        format!("--client-ca-file={}", file("ca.crt", &ca.pem)),
        "--enable-admission-plugins=NodeRestriction".into(),
        "--enable-bootstrap-token-auth=true".into(),
        format!("--etcd-cafile={}", pki.join("etcd/ca.crt").display()),
        format!(
            "--etcd-certfile={}",
            file("apiserver-etcd-client.crt", &etcd_client_crt)
        ),
        format!(
            "--etcd-keyfile={}",
            file("apiserver-etcd-client.key", &etcd_client_key)
        ),
        format!("--etcd-servers={}", etcd.endpoints().join(",")),
        format!(
            "--kubelet-client-certificate={}",
            file("apiserver-kubelet-client.crt", &kubelet_crt)
        ),
        format!(
            "--kubelet-client-key={}",
            file("apiserver-kubelet-client.key", &kubelet_key)
        ),
        "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname".into(),
        format!(
            "--proxy-client-cert-file={}",
            file("front-proxy-client.crt", &proxy_crt)
        ),
        format!(
            "--proxy-client-key-file={}",
            file("front-proxy-client.key", &proxy_key)
        ),
        "--requestheader-allowed-names=front-proxy-client".into(),
        format!(
            "--requestheader-client-ca-file={}",
            file("front-proxy-ca.crt", &front_proxy_ca.pem)
        ),
        "--requestheader-extra-headers-prefix=X-Remote-Extra-".into(),
        "--requestheader-group-headers=X-Remote-Group".into(),
        "--requestheader-username-headers=X-Remote-User".into(),
        format!("--secure-port={port}"),
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
        format!(
            "--service-account-key-file={}",
            file("sa.pub", &sa.public_key_pem())
        ),
        format!(
            "--service-account-signing-key-file={}",
            file("sa.key", &sa.serialize_pem())
        ),
        "--service-cluster-ip-range=10.96.0.0/12".into(),
        format!("--tls-cert-file={}", file("apiserver.crt", &apiserver_crt)),
        format!(
            "--tls-private-key-file={}",
            file("apiserver.key", &apiserver_key)
        ),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_capstan-apiserver"))
        .args(&flags)
        .current_dir(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _server = Killed(child);
    let mut lines = BufReader::new(stderr).lines();
    let mut log = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        log.push_str(&line);
        log.push('\n');
        if line.contains("serving") && line.contains("address=") {
            break;
        }
    }
    assert!(log.contains("serving"), "the server did not start:\n{log}");
    std::thread::spawn(move || lines.for_each(drop));
    let url = format!("https://127.0.0.1:{port}");

    // super-admin.conf (system:masters) creates kubeadm's binding for admin.conf's group.
    let super_admin = certificate_kubeconfig(
        dir.path(),
        "super-admin",
        &url,
        &ca.pem,
        &ca.client("kubernetes-super-admin", &["system:masters"]),
    );
    let admin = certificate_kubeconfig(
        dir.path(),
        "admin",
        &url,
        &ca.pem,
        &ca.client("kubernetes-admin", &["kubeadm:cluster-admins"]),
    );
    let (ok, _, err) = kubectl(&admin, &["get", "namespaces"]);
    assert!(!ok && err.contains("forbidden"), "no binding yet: {err}");
    let (ok, _, err) = kubectl(
        &super_admin,
        &[
            "create",
            "clusterrolebinding",
            "kubeadm:cluster-admins",
            "--clusterrole=cluster-admin",
            "--group=kubeadm:cluster-admins",
        ],
    );
    assert!(ok, "{err}");
    let mut listed = String::new();
    for _ in 0..100 {
        let (ok, out, _) = kubectl(&admin, &["get", "namespaces", "-o", "name"]);
        if ok {
            listed = out;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(listed.contains("namespace/kube-system"), "{listed}");
    let (ok, out, err) = kubectl(
        &admin,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out, "kubernetes-admin");

    // A kubelet's certificate: the node rules, not more.
    let kubelet = certificate_kubeconfig(
        dir.path(),
        "kubelet",
        &url,
        &ca.pem,
        &ca.client("system:node:worker-1", &["system:nodes"]),
    );
    let (ok, _, err) = kubectl(
        &admin,
        &[
            "create",
            "secret",
            "generic",
            "unused",
            "--from-literal=a=b",
        ],
    );
    assert!(ok, "{err}");
    let (_, yes, _) = kubectl(&kubelet, &["auth", "can-i", "get", "nodes/worker-1"]);
    assert_eq!(yes.trim(), "yes");
    // Pods only by the node's own selector, as upstream's authorize-with-selectors.
    let (_, no, _) = kubectl(&kubelet, &["auth", "can-i", "list", "pods"]);
    assert_eq!(
        no.trim(),
        "no - can only list/watch pods with spec.nodeName field selector"
    );
    let (ok, _, err) = kubectl(&kubelet, &["get", "secret", "unused"]);
    assert!(
        !ok && err.contains("no relationship found between node 'worker-1'"),
        "{err}"
    );
    let other = write(
        dir.path(),
        "worker-2.json",
        r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-2"}}"#,
    );
    let (ok, _, err) = kubectl(&admin, &["create", "-f", other.to_str().unwrap()]);
    assert!(ok, "{err}");
    let (ok, _, err) = kubectl(&kubelet, &["label", "node", "worker-2", "a=b"]);
    assert!(!ok, "a kubelet writes only its own node");
    assert!(err.contains("forbidden"), "{err}");
    // The front proxy's authority and names are published for aggregated servers.
    let (ok, out, err) = kubectl(
        &admin,
        &[
            "get",
            "configmap",
            "extension-apiserver-authentication",
            "-n",
            "kube-system",
            "-o",
            "jsonpath={.data.requestheader-allowed-names}",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out, r#"["front-proxy-client"]"#);
}
