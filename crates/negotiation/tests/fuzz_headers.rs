//! Fuzzing the headers every client sends before it is authenticated: `Accept` and
//! `Content-Type`. The Accept headers real clients send (kept in `corpus/accept.txt`) and
//! headers generated from their parts must be answered consistently; any other text must be
//! answered without a panic. The run is bounded (`PROPTEST_CASES` raises it).

use capstan_negotiation::media::{
    Choice, Endpoint, Format, Offer, Transform, body_format, negotiate,
};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const ENDPOINTS: [Endpoint; 4] = [
    Endpoint::Object,
    Endpoint::List,
    Endpoint::Watch,
    Endpoint::Document,
];

/// One Accept entry built from parts, and whether an endpoint should be able to serve it.
#[derive(Debug, Clone)]
struct Entry {
    media: &'static str,
    transform: Option<(&'static str, &'static str)>,
    watch: bool,
    quality: Option<&'static str>,
}

impl Entry {
    fn text(&self) -> String {
        let mut out = self.media.to_string();
        if let Some((kind, version)) = self.transform {
            out.push_str(&format!(";as={kind};g=meta.k8s.io;v={version}"));
        }
        if self.watch {
            out.push_str(";stream=watch");
        }
        if let Some(q) = self.quality {
            out.push_str(&format!(";q={q}"));
        }
        out
    }

    fn quality(&self) -> f32 {
        self.quality.map_or(1.0, |q| q.parse().unwrap())
    }

    /// The format this entry asks for, when `offer` can serve it.
    fn served(&self, offer: Offer) -> Option<Format> {
        let format = match self.media {
            "application/json" | "*/*" | "application/*" => Format::Json,
            "application/yaml" => Format::Yaml,
            "application/vnd.kubernetes.protobuf" => Format::Protobuf,
            _ => return None,
        };
        let watch = offer.endpoint == Endpoint::Watch;
        if (self.watch && !watch) || (watch && format == Format::Yaml) {
            return None;
        }
        if matches!(self.transform, Some((_, v)) if v != "v1" && v != "v1beta1") {
            return None;
        }
        match self.transform {
            None if format == Format::Protobuf && !offer.protobuf => None,
            None => Some(format),
            Some(_) if offer.endpoint == Endpoint::Document => None,
            Some(("Table", _)) if format == Format::Protobuf => None,
            Some(("Table", _)) => Some(format),
            Some(("PartialObjectMetadata", _)) if offer.endpoint != Endpoint::List => Some(format),
            Some(("PartialObjectMetadataList", _)) if offer.endpoint == Endpoint::List => {
                Some(format)
            }
            Some(_) => None,
        }
    }
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        prop::sample::select(vec![
            "application/json",
            "application/yaml",
            "application/vnd.kubernetes.protobuf",
            "*/*",
            "application/*",
            "text/html",
            "application/xml",
        ]),
        prop::option::of(prop::sample::select(vec![
            ("Table", "v1"),
            ("Table", "v1beta1"),
            ("PartialObjectMetadata", "v1"),
            ("PartialObjectMetadataList", "v1"),
            ("Table", "v2"),
        ])),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec![
            "1", "0.9", "0.5", "0.1", "0", "1.0",
        ])),
    )
        .prop_map(|(media, transform, watch, quality)| Entry {
            media,
            transform,
            watch,
            quality,
        })
}

fn offer() -> impl Strategy<Value = Offer> {
    (prop::sample::select(ENDPOINTS.to_vec()), any::<bool>())
        .prop_map(|(endpoint, protobuf)| Offer { endpoint, protobuf })
}

/// Text made of what Accept and Content-Type headers are made of, and a little else.
fn header_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "application/",
        "json",
        "yaml",
        "vnd.kubernetes.protobuf",
        "*",
        "/",
        ";",
        ",",
        "=",
        "q",
        "as",
        "Table",
        "g",
        "meta.k8s.io",
        "v",
        "v1",
        "stream",
        "watch",
        "pretty",
        "1",
        "0.",
        "NaN",
        "inf",
        "-1",
        "\"",
        " ",
        "\t",
        "é",
        "🦀",
        "",
    ]);
    prop::collection::vec(pieces, 0..24).prop_map(|p| p.concat())
}

fn corpus() -> Vec<String> {
    let path = format!("{}/tests/corpus/accept.txt", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn real_clients_accept_headers_get_what_they_ask_for_first() {
    let list = Offer {
        endpoint: Endpoint::List,
        protobuf: true,
    };
    for accept in corpus() {
        let choice =
            negotiate(Some(&accept), list).unwrap_or_else(|e| panic!("{accept}: refused: {e}"));
        let first = accept.split(',').next().unwrap();
        let expected = if first.contains("protobuf") {
            Format::Protobuf
        } else if first.contains("yaml") {
            Format::Yaml
        } else {
            Format::Json
        };
        assert_eq!(choice.format, expected, "{accept}");
        assert_eq!(
            matches!(choice.transform, Transform::Table(_)),
            first.contains("as=Table"),
            "{accept}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Failures are kept beside this file and replayed first.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::with_cases(2000)
    })]

    /// The highest-quality entry the endpoint can serve wins; ties go to the earlier entry;
    /// when none can be served the answer is 406, never a guess.
    #[test]
    fn the_best_servable_entry_wins(entries in prop::collection::vec(entry(), 1..5), offer in offer()) {
        let accept = entries.iter().map(Entry::text).collect::<Vec<_>>().join(", ");
        let mut ranked: Vec<&Entry> = entries.iter().filter(|e| e.quality() > 0.0).collect();
        ranked.sort_by(|a, b| b.quality().total_cmp(&a.quality()));
        let expected = ranked.iter().find_map(|e| e.served(offer));
        match negotiate(Some(&accept), offer) {
            Ok(Choice { format, .. }) => prop_assert_eq!(Some(format), expected, "{}", accept),
            Err(_) => prop_assert_eq!(None, expected, "{}", accept),
        }
    }

    #[test]
    fn any_accept_header_is_answered(accept in header_text(), offer in offer()) {
        if let Ok(choice) = negotiate(Some(&accept), offer) {
            // Whatever was chosen can be named in the answer's Content-Type.
            let content_type = choice.content_type(offer.endpoint);
            prop_assert!(body_format(Some(&content_type)).is_ok(), "{}", content_type);
        }
    }

    #[test]
    fn any_content_type_is_answered(content_type in header_text()) {
        if let Ok(format) = body_format(Some(&content_type)) {
            let essence = content_type.split(';').next().unwrap().trim().to_ascii_lowercase();
            prop_assert!(essence.is_empty() || essence == format.media_type(), "{}", content_type);
        }
    }
}
