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

/// How one resource's objects are stored: the media type, then encryption at rest.
#[derive(Debug, Clone, Default)]
pub struct StorageCodec {
    /// The form objects are written in.
    pub media_type: StorageMediaType,
    /// Encryption at rest for this resource, if configured.
    pub transformer: Option<capstan_encryption::Transformer>,
}

impl StorageCodec {
    /// The stored value of an object's JSON under `key`.
    pub fn encode(&self, key: &str, json: Vec<u8>) -> Result<Vec<u8>, String> {
        self.encode_exact(key, json).map(|stored| stored.value)
    }

    /// Whether the stored form is made from the JSON tree (protobuf, YAML), so that handing
    /// [`Plain::Document`] spares the bytes.
    pub fn takes_documents(&self) -> bool {
        self.media_type != StorageMediaType::Json
    }

    /// [`StorageCodec::encode`], telling whether the value decodes back to exactly `json`.
    pub fn encode_exact(&self, key: &str, json: impl Into<Plain>) -> Result<Stored, String> {
        let stored = from_json_exact(json, self.media_type)?;
        Ok(Stored {
            value: self.seal(key, stored.value),
            exact: stored.exact,
        })
    }

    /// The stored value of an object's JSON under `key`, or `None` when `current` (a stored
    /// value) already holds exactly that object (encryption aside: its nonces differ).
    pub fn encode_if_changed(
        &self,
        key: &str,
        json: impl Into<Plain>,
        current: &[u8],
    ) -> Result<Option<Stored>, String> {
        let Stored { value, exact } = from_json_exact(json, self.media_type)?;
        let same = match &self.transformer {
            Some(t) => t.decrypt(key, current).is_ok_and(|plain| plain == value),
            None => current == value.as_slice(),
        };
        Ok((!same).then(|| Stored {
            value: self.seal(key, value),
            exact,
        }))
    }

    /// [`StorageCodec::encode_if_changed`] against a value known by its CRC-32 only, for
    /// values stored unsealed (a sealed value differs at every write): `None` when the CRCs
    /// are equal (or the value's is not known), which tells only that the values may be
    /// the same.
    pub fn encode_unless_crc(
        &self,
        key: &str,
        json: impl Into<Plain>,
        crc: Option<u32>,
    ) -> Result<Option<Stored>, String> {
        let stored = self.encode_exact(key, json)?;
        let differs = crc.is_some_and(|crc| crc32fast::hash(&stored.value) != crc);
        Ok(differs.then_some(stored))
    }

    /// Whether values are sealed (encrypted at rest) before they are stored.
    pub fn seals(&self) -> bool {
        self.transformer.is_some()
    }

    fn seal(&self, key: &str, value: Vec<u8>) -> Vec<u8> {
        match &self.transformer {
            Some(t) => t.encrypt(key, &value),
            None => value,
        }
    }

    /// The JSON of the value stored under `key`.
    pub fn decode<'v>(&self, key: &str, value: &'v [u8]) -> Result<Cow<'v, [u8]>, String> {
        match &self.transformer {
            Some(t) => {
                let plain = t.decrypt(key, value).map_err(|e| e.to_string())?;
                to_json(&plain).map(|json| Cow::Owned(json.into_owned()))
            }
            None if value.starts_with(b"k8s:enc:") => {
                Err("the value is encrypted and no encryption is configured for it".into())
            }
            None => to_json(value),
        }
    }
}

/// A stored value as JSON, whichever form wrote it.
pub fn to_json(value: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    if value.starts_with(PROTOBUF_MAGIC) {
        // Straight to JSON when the body is in field order (upstream's and our encoders
        // write it so); through the tree otherwise, which also says what is wrong.
        let codec = Codec::new(Schema::upstream());
        if let Some(json) = codec.decode_object_json(value) {
            return Ok(Cow::Owned(json));
        }
        let doc = codec
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

/// An object's JSON before it is encoded for storage: its bytes, or its tree when the
/// stored form is made from a tree (protobuf), which spares writing and parsing the bytes.
#[derive(Debug)]
pub enum Plain {
    /// The JSON text.
    Bytes(Vec<u8>),
    /// The JSON tree.
    Document(serde_json::Value),
}

impl From<Vec<u8>> for Plain {
    fn from(bytes: Vec<u8>) -> Self {
        Self::Bytes(bytes)
    }
}

/// A stored value, and whether it reads back as exactly the JSON it was made from (a
/// protobuf encoding drops empty lists, for one).
#[derive(Debug)]
pub struct Stored {
    /// The value to store.
    pub value: Vec<u8>,
    /// Whether [`StorageCodec::decode`] gives back the very JSON the value was made from.
    pub exact: bool,
}

/// An object's JSON (with apiVersion and kind) in the stored form of `media`.
pub fn from_json(json: Vec<u8>, media: StorageMediaType) -> Result<Vec<u8>, String> {
    from_json_exact(json, media).map(|stored| stored.value)
}

fn from_json_exact(json: impl Into<Plain>, media: StorageMediaType) -> Result<Stored, String> {
    let json = json.into();
    let doc = || match &json {
        Plain::Bytes(bytes) => serde_json::from_slice(bytes)
            .map(Cow::Owned)
            .map_err(|e| e.to_string()),
        Plain::Document(doc) => Ok(Cow::Borrowed(doc)),
    };
    match media {
        StorageMediaType::Json => Ok(Stored {
            value: match json {
                Plain::Bytes(bytes) => bytes,
                Plain::Document(doc) => serde_json::to_vec(&doc).map_err(|e| e.to_string())?,
            },
            exact: true,
        }),
        StorageMediaType::Yaml => Ok(Stored {
            value: capstan_negotiation::yaml::from_json(&*doc()?).map_err(|e| e.to_string())?,
            exact: false,
        }),
        StorageMediaType::Protobuf => {
            let (value, exact) = Codec::new(Schema::upstream())
                .encode_object_exact(&*doc()?)
                .map_err(|e| format!("protobuf: {e}"))?;
            Ok(Stored { value, exact })
        }
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
        // The tree stores as its bytes do.
        for media in [
            StorageMediaType::Json,
            StorageMediaType::Yaml,
            StorageMediaType::Protobuf,
        ] {
            let from_tree = from_json_exact(Plain::Document(expected.clone()), media).unwrap();
            let from_bytes = from_json_exact(json.to_vec(), media).unwrap();
            let back = |v: &[u8]| -> serde_json::Value {
                serde_json::from_slice(&to_json(v).unwrap()).unwrap()
            };
            assert_eq!(back(&from_tree.value), back(&from_bytes.value), "{media:?}");
            if media == StorageMediaType::Protobuf {
                assert_eq!(from_tree.value, from_bytes.value);
            }
            assert_eq!(from_tree.exact, from_bytes.exact, "{media:?}");
        }
        assert!(protobuf.starts_with(PROTOBUF_MAGIC));
        assert!(to_json(b"k8s\x00garbage").is_err());
    }
}
