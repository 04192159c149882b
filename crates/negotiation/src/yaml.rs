//! YAML (`application/yaml`): responses are the JSON form written as YAML (keys in JSON
//! order); request bodies are read as YAML 1.1 manifests are read by kubectl (`0644` is octal,
//! `yes` is true) and turned into JSON.

use serde_json::Value;

use crate::error::{Error, Result};

/// The YAML form of a JSON document.
pub fn from_json(doc: &Value) -> Result<Vec<u8>> {
    serde_saphyr::to_string(doc)
        .map(String::into_bytes)
        .map_err(|e| Error::Yaml(e.to_string()))
}

/// A YAML request body as JSON.
pub fn to_json(body: &[u8]) -> Result<Value> {
    let text =
        std::str::from_utf8(body).map_err(|_| Error::Yaml("the body is not UTF-8".into()))?;
    let options = serde_saphyr::options! {
        legacy_octal_numbers: true,
    };
    serde_saphyr::from_str_with_options(text, options).map_err(|e| Error::Yaml(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documents_go_both_ways() {
        let doc = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"a": "true"}},
            "data": {"n": "0644", "empty": ""}, "items": [1, 2.5, null, true]});
        let yaml = from_json(&doc).unwrap();
        assert_eq!(to_json(&yaml).unwrap(), doc);
    }

    #[test]
    fn manifests_read_as_kubectl_reads_them() {
        let doc = to_json(
            b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nimmutable: yes\nmode: 0644\n",
        )
        .unwrap();
        assert_eq!(doc["immutable"], json!(true));
        assert_eq!(doc["mode"], json!(420));
        assert!(to_json(b"a: [1, 2").is_err());
    }
}
