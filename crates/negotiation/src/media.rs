//! Content negotiation: which representation answers a request, from its Accept header, and
//! which request bodies are understood, from their Content-Type.
//!
//! Accept entries are tried by quality (`q`, default 1; ties keep their order). An entry names
//! a media type (`application/json`, `application/yaml`, `application/vnd.kubernetes.protobuf`,
//! or a wildcard, which means JSON) and may ask for the object in another form with
//! `as=Table|PartialObjectMetadata|PartialObjectMetadataList;g=meta.k8s.io;v=v1|v1beta1`,
//! for a watch stream with `stream=watch`, and for indentation with `pretty=1`. An entry the
//! endpoint cannot serve is passed over; when none fits the answer is 406.

use crate::error::{Error, Result};
use crate::protobuf;

/// The serialization of a response or a request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/json`.
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

impl Format {
    /// The media type without parameters.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Yaml => "application/yaml",
            Format::Protobuf => protobuf::MEDIA_TYPE,
        }
    }
}

/// The form the object takes in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transform {
    /// The object itself.
    Object,
    /// A `meta.k8s.io` Table of the given version (`v1` or `v1beta1`).
    Table(&'static str),
    /// `PartialObjectMetadata` (or its list) of the given version: the object's metadata only.
    Metadata(&'static str),
}

/// What kind of answer the endpoint gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// One object (get, create, update, patch, delete).
    Object,
    /// A list (list, deletecollection).
    List,
    /// A watch stream.
    Watch,
    /// A document that is neither (discovery, OpenAPI, Status-only answers): JSON, YAML and
    /// protobuf where the document has a protobuf form, no transforms.
    Document,
}

/// What the endpoint can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// The kind of answer.
    pub endpoint: Endpoint,
    /// Whether the objects have a protobuf form.
    pub protobuf: bool,
}

/// The negotiated representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The serialization.
    pub format: Format,
    /// The object's form.
    pub transform: Transform,
    /// `pretty=1` was asked for in the media type.
    pub pretty: bool,
}

impl Choice {
    /// Plain JSON.
    pub const JSON: Choice = Choice {
        format: Format::Json,
        transform: Transform::Object,
        pretty: false,
    };

    /// The response's Content-Type: the serialization's media type only (upstream names no
    /// `as=` transformation in it), `stream=watch` on protobuf watches.
    pub fn content_type(&self, endpoint: Endpoint) -> String {
        let mut out = self.format.media_type().to_string();
        if endpoint == Endpoint::Watch && self.format == Format::Protobuf {
            out.push_str(";stream=watch");
        }
        out
    }
}

/// One entry of an Accept header.
#[derive(Debug, Clone, PartialEq)]
struct Range<'a> {
    media: String,
    params: Vec<(String, &'a str)>,
    quality: f32,
}

fn parse_accept(accept: &str) -> Vec<Range<'_>> {
    let mut ranges: Vec<Range<'_>> = accept
        .split(',')
        .filter_map(|entry| {
            let mut parts = entry.split(';');
            let media = parts.next()?.trim().to_ascii_lowercase();
            if media.is_empty() {
                return None;
            }
            let mut quality = 1.0;
            let mut params = Vec::new();
            for p in parts {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let key = k.trim().to_ascii_lowercase();
                let value = v.trim().trim_matches('"');
                if key == "q" {
                    quality = value.parse().unwrap_or(0.0);
                } else {
                    params.push((key, value));
                }
            }
            Some(Range {
                media,
                params,
                quality,
            })
        })
        .collect();
    ranges.sort_by(|a, b| b.quality.total_cmp(&a.quality));
    ranges
}

/// Picks the representation for `accept` (the Accept header, if any) among what `offer`
/// allows; 406 when nothing fits.
pub fn negotiate(accept: Option<&str>, offer: Offer) -> Result<Choice> {
    let accept = accept.map(str::trim).unwrap_or("");
    if accept.is_empty() {
        return Ok(Choice::JSON);
    }
    for range in parse_accept(accept) {
        if range.quality <= 0.0 {
            continue;
        }
        if let Some(choice) = fits(&range, offer) {
            return Ok(choice);
        }
    }
    let mut offered = vec![Format::Json.media_type(), Format::Yaml.media_type()];
    if offer.protobuf {
        offered.push(protobuf::MEDIA_TYPE);
    }
    Err(Error::NotAcceptable(
        offered.iter().map(|s| s.to_string()).collect(),
    ))
}

/// The choice `range` makes, if the endpoint can serve it.
fn fits(range: &Range<'_>, offer: Offer) -> Option<Choice> {
    let format = match range.media.as_str() {
        "application/json" | "application/*" | "*/*" => Format::Json,
        "application/yaml" => Format::Yaml,
        m if m == protobuf::MEDIA_TYPE => Format::Protobuf,
        _ => return None,
    };
    let param = |key: &str| range.params.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    let watch = offer.endpoint == Endpoint::Watch;
    match param("stream") {
        None | Some("") => {}
        Some("watch") if watch => {}
        Some(_) => return None,
    }
    // YAML has no stream form.
    if watch && format == Format::Yaml {
        return None;
    }
    let transform = match param("as") {
        None | Some("") => Transform::Object,
        Some(kind) => {
            if param("g") != Some("meta.k8s.io") || offer.endpoint == Endpoint::Document {
                return None;
            }
            let version = match param("v") {
                Some("v1") => "v1",
                Some("v1beta1") => "v1beta1",
                _ => return None,
            };
            let list = offer.endpoint == Endpoint::List;
            match kind {
                // Tables have no protobuf form upstream either.
                "Table" if format != Format::Protobuf => Transform::Table(version),
                "PartialObjectMetadata" if !list => Transform::Metadata(version),
                "PartialObjectMetadataList" if list => Transform::Metadata(version),
                _ => return None,
            }
        }
    };
    if format == Format::Protobuf && !offer.protobuf && transform == Transform::Object {
        return None;
    }
    Some(Choice {
        format,
        transform,
        pretty: param("pretty") == Some("1"),
    })
}

/// The format of a request body from its Content-Type (no Content-Type means JSON); 415 for
/// anything else.
pub fn body_format(content_type: Option<&str>) -> Result<Format> {
    let essence = content_type
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "" | "application/json" => Ok(Format::Json),
        "application/yaml" => Ok(Format::Yaml),
        m if m == protobuf::MEDIA_TYPE => Ok(Format::Protobuf),
        _ => Err(Error::UnsupportedMediaType {
            content_type: content_type.unwrap_or("").to_string(),
            supported: vec![
                Format::Json.media_type().into(),
                Format::Yaml.media_type().into(),
                protobuf::MEDIA_TYPE.into(),
            ],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBJECT: Offer = Offer {
        endpoint: Endpoint::Object,
        protobuf: true,
    };
    const LIST: Offer = Offer {
        endpoint: Endpoint::List,
        protobuf: true,
    };
    const WATCH: Offer = Offer {
        endpoint: Endpoint::Watch,
        protobuf: true,
    };

    fn pick(accept: &str, offer: Offer) -> Option<(Format, Transform)> {
        negotiate(Some(accept), offer)
            .ok()
            .map(|c| (c.format, c.transform))
    }

    #[test]
    fn the_spec_fallback_lists_pick_their_first_servable_entry() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            pick(kubectl, LIST),
            Some((Format::Json, Transform::Table("v1")))
        );
        assert_eq!(
            pick(
                "application/json;as=Table;g=meta.k8s.io;v=v1beta1, application/json",
                OBJECT
            ),
            Some((Format::Json, Transform::Table("v1beta1")))
        );
        assert_eq!(
            pick(
                "application/vnd.kubernetes.protobuf, application/json",
                OBJECT
            ),
            Some((Format::Protobuf, Transform::Object))
        );
        let no_proto = Offer {
            protobuf: false,
            ..OBJECT
        };
        assert_eq!(
            pick(
                "application/vnd.kubernetes.protobuf, application/json",
                no_proto
            ),
            Some((Format::Json, Transform::Object))
        );
        assert_eq!(pick("application/vnd.kubernetes.protobuf", no_proto), None);
    }

    #[test]
    fn wildcards_quality_and_bad_transforms() {
        assert_eq!(pick("*/*", OBJECT), Some((Format::Json, Transform::Object)));
        assert_eq!(
            pick("application/*", OBJECT),
            Some((Format::Json, Transform::Object))
        );
        assert_eq!(pick("text/html", OBJECT), None);
        assert_eq!(
            pick("application/json;q=0.5, application/yaml", OBJECT),
            Some((Format::Yaml, Transform::Object))
        );
        assert_eq!(pick("application/json;q=0", OBJECT), None);
        // Unknown group, version or kind: passed over.
        assert_eq!(
            pick("application/json;as=Table;g=example.com;v=v1", OBJECT),
            None
        );
        assert_eq!(
            pick("application/json;as=Table;g=meta.k8s.io;v=v2", OBJECT),
            None
        );
        assert_eq!(
            pick("application/json;as=Widget;g=meta.k8s.io;v=v1", OBJECT),
            None
        );
        // Tables are JSON or YAML only; metadata lists only on lists.
        assert_eq!(
            pick(
                "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
                OBJECT
            ),
            None
        );
        let metadata_list =
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
        assert_eq!(
            pick(metadata_list, LIST),
            Some((Format::Protobuf, Transform::Metadata("v1")))
        );
        assert_eq!(pick(metadata_list, OBJECT), None);
        assert_eq!(
            pick(
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
                WATCH
            ),
            Some((Format::Json, Transform::Metadata("v1")))
        );
    }

    #[test]
    fn watch_streams() {
        assert_eq!(
            pick("application/vnd.kubernetes.protobuf;stream=watch", WATCH),
            Some((Format::Protobuf, Transform::Object))
        );
        assert_eq!(pick("application/json;stream=watch", OBJECT), None);
        assert_eq!(pick("application/yaml", WATCH), None);
        let choice = negotiate(Some("application/vnd.kubernetes.protobuf"), WATCH).unwrap();
        assert_eq!(
            choice.content_type(Endpoint::Watch),
            "application/vnd.kubernetes.protobuf;stream=watch"
        );
    }

    #[test]
    fn no_accept_means_json_and_nothing_servable_is_406() {
        assert_eq!(negotiate(None, OBJECT).unwrap(), Choice::JSON);
        assert_eq!(negotiate(Some(" "), OBJECT).unwrap(), Choice::JSON);
        let err = negotiate(Some("image/png"), OBJECT).unwrap_err();
        assert!(matches!(err, Error::NotAcceptable(_)));
    }

    #[test]
    fn body_formats() {
        assert_eq!(body_format(None).unwrap(), Format::Json);
        assert_eq!(
            body_format(Some("application/json; charset=utf-8")).unwrap(),
            Format::Json
        );
        assert_eq!(body_format(Some("application/yaml")).unwrap(), Format::Yaml);
        assert_eq!(
            body_format(Some("application/vnd.kubernetes.protobuf")).unwrap(),
            Format::Protobuf
        );
        assert!(matches!(
            body_format(Some("text/plain")),
            Err(Error::UnsupportedMediaType { .. })
        ));
    }
}
