use super::*;

const K32: &str = "c2VjcmV0IGlzIHNlY3VyZSwgdGhpcyBpcyBhIDMyIGI="; // 32 bytes
const K32B: &str = "YW5vdGhlciBzZWNyZXQga2V5IG9mIDMyIGJ5dGVzISE="; // 32 bytes
const K16: &str = "MTIzNDU2Nzg5MDEyMzQ1Ng=="; // 16 bytes

fn config(providers: &str) -> EncryptionConfig {
    EncryptionConfig::parse(&format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets, '*.storage.k8s.io']\n  providers:\n{providers}"
    ))
    .unwrap()
}

#[test]
fn every_provider_round_trips_with_upstreams_prefix() {
    for (name, providers) in [
        (
            "aescbc",
            format!("  - aescbc:\n      keys: [{{name: k1, secret: {K32}}}]\n"),
        ),
        (
            "aesgcm",
            format!("  - aesgcm:\n      keys: [{{name: k1, secret: {K16}}}]\n"),
        ),
        (
            "secretbox",
            format!("  - secretbox:\n      keys: [{{name: k1, secret: {K32}}}]\n"),
        ),
    ] {
        let t = config(&providers).for_resource("", "secrets").unwrap();
        let stored = t.encrypt("/registry/secrets/default/s", b"plain secret value");
        let prefix = format!("k8s:enc:{name}:v1:k1:");
        assert!(stored.starts_with(prefix.as_bytes()), "{name}");
        assert!(
            !stored.windows(5).any(|w| w == b"plain"),
            "{name}: the plaintext shows"
        );
        assert_eq!(
            t.decrypt("/registry/secrets/default/s", &stored).unwrap(),
            b"plain secret value"
        );
        // Tampering is detected (GCM, secretbox) or at least never yields the original (CBC has
        // no tag: a garbled last block usually fails the padding check, not always).
        let mut bad = stored.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        match t.decrypt("/registry/secrets/default/s", &bad) {
            Err(_) => {}
            Ok(plain) if name == "aescbc" => assert_ne!(plain, b"plain secret value"),
            Ok(_) => panic!("{name}: tampering went unnoticed"),
        }
    }
}

#[test]
fn aesgcm_binds_the_value_to_its_key() {
    let t = config(&format!(
        "  - aesgcm:\n      keys: [{{name: k1, secret: {K32}}}]\n"
    ))
    .for_resource("", "secrets")
    .unwrap();
    let stored = t.encrypt("/registry/secrets/a/s", b"x");
    assert!(t.decrypt("/registry/secrets/b/s", &stored).is_err());
}

#[test]
fn rotation_reads_old_keys_and_writes_with_the_first() {
    let old = config(&format!(
        "  - aescbc:\n      keys: [{{name: old, secret: {K32}}}]\n  - identity: {{}}\n"
    ))
    .for_resource("", "secrets")
    .unwrap();
    let written_before = old.encrypt("/k", b"v1");
    let plain_before = b"{\"kind\":\"Secret\"}".to_vec();
    let rotated = config(&format!(
        "  - aescbc:\n      keys:\n      - {{name: new, secret: {K32B}}}\n      - {{name: old, secret: {K32}}}\n  - identity: {{}}\n"
    ))
    .for_resource("", "secrets")
    .unwrap();
    assert_eq!(rotated.decrypt("/k", &written_before).unwrap(), b"v1");
    assert_eq!(rotated.decrypt("/k", &plain_before).unwrap(), plain_before);
    assert!(
        rotated
            .encrypt("/k", b"v2")
            .starts_with(b"k8s:enc:aescbc:v1:new:")
    );
    // Without the old key, its values give a clear error naming the key.
    let without = config(&format!(
        "  - aescbc:\n      keys: [{{name: new, secret: {K32B}}}]\n"
    ))
    .for_resource("", "secrets")
    .unwrap();
    let err = without
        .decrypt("/registry/secrets/default/s", &written_before)
        .unwrap_err();
    assert!(err.to_string().contains("k8s:enc:aescbc:v1:old"), "{err}");
    assert!(
        without.decrypt("/k", &plain_before).is_err(),
        "identity is not listed"
    );
    // A key of the right name but the wrong secret fails to decrypt, clearly (an
    // authenticated provider: CBC's padding check cannot always tell).
    let gcm = |secret: &str| {
        config(&format!(
            "  - aesgcm:\n      keys: [{{name: old, secret: {secret}}}]\n"
        ))
        .for_resource("", "secrets")
        .unwrap()
    };
    let written_gcm = gcm(K32).encrypt("/k", b"v1");
    let err = gcm(K32B).decrypt("/k", &written_gcm).unwrap_err();
    assert!(
        err.to_string().contains("\"old\" cannot decrypt it"),
        "{err}"
    );
}

#[test]
fn resources_match_by_group() {
    let c = config(&format!(
        "  - secretbox:\n      keys: [{{name: k, secret: {K32}}}]\n"
    ));
    assert!(c.for_resource("", "secrets").is_some());
    assert!(c.for_resource("storage.k8s.io", "storageclasses").is_some());
    assert!(c.for_resource("", "configmaps").is_none());
    let all = EncryptionConfig::parse(&format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: ['*.']\n  providers: [{{identity: {{}}}}]\n- resources: ['*.*']\n  providers: [{{secretbox: {{keys: [{{name: k, secret: {K32}}}]}}}}]\n"
    ))
    .unwrap();
    let core = all.for_resource("", "configmaps").unwrap();
    assert_eq!(core.encrypt("/k", b"x"), b"x", "the core group is identity");
    assert!(
        all.for_resource("coordination.k8s.io", "leases")
            .unwrap()
            .encrypt("/k", b"x")
            .starts_with(b"k8s:enc:secretbox:")
    );
}

#[test]
fn bad_files_name_the_problem() {
    let cases = [
        (
            "apiVersion: v1\nkind: EncryptionConfiguration\n",
            "apiVersion",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: Nope\n",
            "kind",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers: []\n",
            "resources[0].providers",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: [{name: a, secret: 'bm90IDMyIGJ5dGVz'}]}}]\n",
            "resources[0].providers[0].aescbc.keys[0].secret: aescbc keys are 16 or 24 or 32 bytes long, this one is 12",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers: [{aesgcm: {keys: [{name: a, secret: '!!'}]}}]\n",
            "not base64",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers: [{kms: {name: x}}]\n",
            "KMS providers are not supported",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers: [{identity: {}, aescbc: {keys: []}}]\n",
            "exactly one of",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: ['se*crets']\n  providers: [{identity: {}}]\n",
            "is not a resource",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresourcez: []\n",
            "unknown field",
        ),
    ];
    for (text, expected) in cases {
        let err = EncryptionConfig::parse(text).unwrap_err().to_string();
        assert!(err.contains(expected), "{expected:?} not in {err:?}");
    }
}
