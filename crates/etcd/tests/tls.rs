//! TLS to etcd: the CA, a client certificate, and refusal without them.

use std::net::{IpAddr, Ipv4Addr};

use capstan_etcd::testing::{EtcdCluster, ServerTls};
use capstan_etcd::{EtcdConfig, EtcdStore};
use capstan_storage::Store;
use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, SanType,
};

/// Writes a CA, a server certificate for 127.0.0.1 and a client certificate into `dir`.
fn certificates(dir: &std::path::Path) -> (ServerTls, EtcdConfig) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |usage: ExtendedKeyUsagePurpose| {
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert, server_key) = leaf(ExtendedKeyUsagePurpose::ServerAuth);
    let (client_cert, client_key) = leaf(ExtendedKeyUsagePurpose::ClientAuth);
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let server = ServerTls {
        ca_file: write("ca.pem", &ca.pem()),
        cert_file: write("server.pem", &server_cert),
        key_file: write("server-key.pem", &server_key),
    };
    let mut client = EtcdConfig::new(Vec::new());
    client.ca_file = Some(server.ca_file.clone());
    client.cert_file = Some(write("client.pem", &client_cert));
    client.key_file = Some(write("client-key.pem", &client_key));
    client.request_timeout = std::time::Duration::from_secs(5);
    client.dial_timeout = std::time::Duration::from_secs(2);
    (server, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_client_certificates() {
    let dir = tempfile::tempdir().unwrap();
    let (server, mut client) = certificates(dir.path());
    let cluster = EtcdCluster::start_tls(&server);
    client.endpoints = cluster.endpoints();
    assert!(client.endpoints[0].starts_with("https://"));
    let store = EtcdStore::connect(&client).await.unwrap();
    let kv = store.create("/tls/a", "secured".into()).await.unwrap();
    let (got, _) = store.get("/tls/a").await.unwrap();
    assert_eq!(got.unwrap(), kv);

    // Without a client certificate the server refuses the connection: a clear error.
    let mut anonymous = client.clone();
    anonymous.cert_file = None;
    anonymous.key_file = None;
    let refused = match EtcdStore::connect(&anonymous).await {
        Err(_) => true,
        Ok(store) => store.get("/tls/a").await.is_err(),
    };
    assert!(refused, "etcd served a client without a certificate");
    // A certificate given without its key is a configuration error.
    let mut half = client.clone();
    half.key_file = None;
    let err = EtcdStore::connect(&half).await.unwrap_err().to_string();
    assert!(err.contains("--etcd-certfile and --etcd-keyfile"), "{err}");
    // A missing file names itself.
    let mut missing = client.clone();
    missing.ca_file = Some(dir.path().join("nope.pem"));
    let err = EtcdStore::connect(&missing).await.unwrap_err().to_string();
    assert!(err.contains("nope.pem"), "{err}");
}
