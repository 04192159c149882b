//! The form objects take in storage (`--storage-media-type`): JSON, YAML, or the Kubernetes
//! protobuf envelope (`k8s\0` + `Unknown{typeMeta, raw}`), as upstream writes them. Reads
//! accept every form whatever the setting, so Capstan serves data an upstream API server
//! wrote and the other way round.

use std::borrow::Cow;

use capstan_negotiation::protobuf::Codec;
use capstan_negotiation::schema::Schema;

/// The protobuf envelope's magic prefix.
const PROTOBUF_MAGIC: &[u8] = b"k8s\x00";

/// How objects are written to storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StorageMediaType {
    /// `application/json`.
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.kubernetes.protobuf` (upstream's default).
    #[default]
    Protobuf,
}

impl StorageMediaType {
    /// The media type named by `--storage-media-type`.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "application/json" => Some(Self::Json),
            "application/yaml" => Some(Self::Yaml),
            "application/vnd.kubernetes.protobuf" => Some(Self::Protobuf),
            _ => None,
        }
    }
}

/// A stored value as JSON, whichever form wrote it.
pub fn to_json(value: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    if value.starts_with(PROTOBUF_MAGIC) {
        let doc = Codec::new(Schema::upstream())
            .decode_object(value)
            .map_err(|e| format!("protobuf: {e}"))?;
        return serde_json::to_vec(&doc)
            .map(Cow::Owned)
            .map_err(|e| e.to_string());
    }
    match value.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') | None => Ok(Cow::Borrowed(value)),
        Some(_) => {
            let doc =
                capstan_negotiation::yaml::to_json(value).map_err(|e| format!("YAML: {e}"))?;
            serde_json::to_vec(&doc)
                .map(Cow::Owned)
                .map_err(|e| e.to_string())
        }
    }
}

/// An object's JSON (with apiVersion and kind) in the stored form of `media`.
pub fn from_json(json: Vec<u8>, media: StorageMediaType) -> Result<Vec<u8>, String> {
    match media {
        StorageMediaType::Json => Ok(json),
        StorageMediaType::Yaml => {
            let doc: serde_json::Value =
                serde_json::from_slice(&json).map_err(|e| e.to_string())?;
            capstan_negotiation::yaml::from_json(&doc).map_err(|e| e.to_string())
        }
        StorageMediaType::Protobuf => Codec::new(Schema::upstream())
            .encode_object_bytes(&json)
            .map_err(|e| format!("protobuf: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_reads_back_as_the_same_json() {
        let json = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":{"k":"v"}}"#;
        let expected: serde_json::Value = serde_json::from_slice(json).unwrap();
        for media in [
            StorageMediaType::Json,
            StorageMediaType::Yaml,
            StorageMediaType::Protobuf,
        ] {
            let stored = from_json(json.to_vec(), media).unwrap();
            let back: serde_json::Value =
                serde_json::from_slice(&to_json(&stored).unwrap()).unwrap();
            assert_eq!(back, expected, "{media:?}");
        }
        let protobuf = from_json(json.to_vec(), StorageMediaType::Protobuf).unwrap();
        assert!(protobuf.starts_with(PROTOBUF_MAGIC));
        assert!(to_json(b"k8s\x00garbage").is_err());
    }
}
