//! An object's JSON as the watch cache keeps it. Long values that many objects hold alike
//! (the `fieldsV1` of managedFields: the same for every pod of a template) are kept once, in
//! [`SharedValues`], and each object's text keeps only the rest and where they go.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

/// Values shorter than this stay in the object's own text: sharing them saves less than the
/// reference costs.
const SHARED_MIN: usize = 64;

/// The key whose object values are shared.
const SHARED_KEY: &[u8] = b"\"fieldsV1\":";

/// An object's JSON text: its own bytes with shared values spliced in. Every shared value is
/// a JSON object (`{` … `}`), so no text without braces runs across a splice.
#[derive(Clone, Default)]
pub struct CachedJson {
    /// The text without the shared values.
    own: Bytes,
    /// The shared values and where each goes in `own`, in order (behind an `Arc`: a list
    /// clones every item's text).
    shared: Arc<[(usize, Arc<[u8]>)]>,
    /// The text's length. Kept, like `type_fields`, so that sizing a list of thousands of
    /// items reads neither their text nor their shared values.
    len: usize,
    /// See [`CachedJson::type_fields_len`].
    type_fields: usize,
}

impl CachedJson {
    fn new(own: Bytes, shared: Arc<[(usize, Arc<[u8]>)]>) -> Self {
        let len = own.len() + shared.iter().map(|(_, v)| v.len()).sum::<usize>();
        let mut json = Self {
            own,
            shared,
            len,
            type_fields: 0,
        };
        json.type_fields = type_fields_len(json.head());
        json
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// How many bytes after the opening brace hold `"apiVersion":"…","kind":"…",` (in either
    /// order, with the comma after them when more follows): what a list item of a built-in
    /// kind leaves out. 0 when the text does not start with both.
    pub fn type_fields_len(&self) -> usize {
        self.type_fields
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes this object holds alone (what it costs beyond the values it shares).
    pub fn own_len(&self) -> usize {
        self.own.len()
    }

    /// The text in pieces, in order.
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> {
        let mut at = 0;
        let mut shared = self.shared.iter();
        let mut pending: Option<&[u8]> = None;
        let mut done = false;
        std::iter::from_fn(move || {
            if let Some(value) = pending.take() {
                return Some(value);
            }
            if done {
                return None;
            }
            match shared.next() {
                Some((offset, value)) => {
                    let own = &self.own[at..*offset];
                    at = *offset;
                    pending = Some(value);
                    Some(own)
                }
                None => {
                    done = true;
                    Some(&self.own[at..])
                }
            }
        })
        .filter(|c| !c.is_empty())
    }

    /// The text from byte `start` on, in pieces.
    pub fn chunks_from(&self, start: usize) -> impl Iterator<Item = &[u8]> {
        let mut skip = start;
        self.chunks().filter_map(move |c| {
            let n = skip.min(c.len());
            skip -= n;
            (n < c.len()).then(|| &c[n..])
        })
    }

    /// Appends the text to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.reserve(self.len());
        for chunk in self.chunks() {
            out.extend_from_slice(chunk);
        }
    }

    /// The text in one buffer (the kept buffer itself when nothing is shared).
    pub fn to_bytes(&self) -> Bytes {
        match self.contiguous() {
            Cow::Borrowed(_) => self.own.clone(),
            Cow::Owned(text) => text.into(),
        }
    }

    /// The text as one slice, assembled only when values are shared.
    pub fn contiguous(&self) -> Cow<'_, [u8]> {
        if self.shared.is_empty() {
            return Cow::Borrowed(&self.own);
        }
        let mut out = Vec::with_capacity(self.len());
        self.write_to(&mut out);
        Cow::Owned(out)
    }

    /// The text before the first shared value.
    pub fn head(&self) -> &[u8] {
        let end = self.shared.first().map_or(self.own.len(), |(at, _)| *at);
        &self.own[..end]
    }

    /// Where `needle` (text without braces) occurs in the text, when it occurs exactly once.
    pub fn find_once(&self, needle: &[u8]) -> Option<usize> {
        let mut found = None;
        let mut at = 0;
        for chunk in self.chunks() {
            for i in memchr::memmem::find_iter(chunk, needle) {
                if found.replace(at + i).is_some() {
                    return None;
                }
            }
            at += chunk.len();
        }
        found
    }

    /// The text with the bytes at `range` replaced by `with`; shared values stay shared
    /// unless the range touches one.
    pub fn replaced(&self, range: Range<usize>, with: &[u8]) -> CachedJson {
        // Where the range lies in `own`: text offsets past a shared value are that much
        // further than their place in `own`.
        let mut before = 0;
        let mut inside_own = true;
        for (offset, value) in self.shared.iter() {
            let start = offset + before;
            if range.end <= start {
                break;
            }
            if range.start < start + value.len() {
                inside_own = false;
                break;
            }
            before += value.len();
        }
        if !inside_own {
            let mut text = self.contiguous().into_owned();
            text.splice(range, with.iter().copied());
            return CachedJson::from(text);
        }
        let own_range = range.start - before..range.end - before;
        let mut own = Vec::with_capacity(self.own.len() - own_range.len() + with.len());
        own.extend_from_slice(&self.own[..own_range.start]);
        own.extend_from_slice(with);
        own.extend_from_slice(&self.own[own_range.end..]);
        let grown = with.len() as isize - own_range.len() as isize;
        let shared = self
            .shared
            .iter()
            .map(|(at, value)| {
                let at = if *at >= own_range.end {
                    at.wrapping_add_signed(grown)
                } else {
                    *at
                };
                (at, value.clone())
            })
            .collect();
        CachedJson::new(own.into(), shared)
    }
}

/// [`CachedJson::type_fields_len`] of an object's text (`text` reaching at least past its
/// `kind`).
fn type_fields_len(text: &[u8]) -> usize {
    /// The length of `"name":"value"` at the start of `text`, for a value without escapes.
    fn field(text: &[u8], name: &[u8]) -> Option<usize> {
        let rest = text
            .strip_prefix(b"\"")?
            .strip_prefix(name)?
            .strip_prefix(b"\":\"")?;
        let end = rest.iter().position(|&c| c == b'"' || c == b'\\')?;
        (rest[end] == b'"').then_some(name.len() + 4 + end + 1)
    }
    let Some(body) = text.strip_prefix(b"{") else {
        return 0;
    };
    let (first, second): (&[u8], &[u8]) = if body.starts_with(b"\"kind\"") {
        (b"kind", b"apiVersion")
    } else {
        (b"apiVersion", b"kind")
    };
    let Some(a) = field(body, first) else {
        return 0;
    };
    let Some(b) = body[a..]
        .strip_prefix(b",")
        .and_then(|rest| field(rest, second))
    else {
        return 0;
    };
    let end = a + 1 + b;
    match body.get(end) {
        Some(b',') => end + 1,
        Some(b'}') => end,
        _ => 0,
    }
}

impl From<Bytes> for CachedJson {
    fn from(own: Bytes) -> Self {
        Self::new(own, Arc::default())
    }
}

impl From<Vec<u8>> for CachedJson {
    fn from(own: Vec<u8>) -> Self {
        Bytes::from(own).into()
    }
}

impl From<String> for CachedJson {
    fn from(own: String) -> Self {
        own.into_bytes().into()
    }
}

impl From<&'static str> for CachedJson {
    fn from(own: &'static str) -> Self {
        Bytes::from_static(own.as_bytes()).into()
    }
}

impl PartialEq for CachedJson {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.contiguous() == other.contiguous()
    }
}

impl Eq for CachedJson {}

impl PartialEq<[u8]> for CachedJson {
    fn eq(&self, other: &[u8]) -> bool {
        self.len() == other.len() && *self.contiguous() == *other
    }
}

impl fmt::Debug for CachedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.contiguous()))
    }
}

/// The values the objects of one cache share, each kept once. Values no object holds any
/// more are dropped as the set grows.
#[derive(Debug, Default)]
pub struct SharedValues {
    values: HashSet<Arc<[u8]>>,
    /// The set's size at which it next drops the values no object holds.
    sweep_at: usize,
}

impl SharedValues {
    /// `json` with its long `fieldsV1` values shared with the other objects that hold them.
    pub fn share(&mut self, json: CachedJson) -> CachedJson {
        if !json.shared.is_empty() {
            return json;
        }
        let text = &json.own;
        let spans: Vec<Range<usize>> = memchr::memmem::find_iter(text, SHARED_KEY)
            .filter_map(|at| object_at(text, at + SHARED_KEY.len()))
            .filter(|span| span.len() >= SHARED_MIN)
            .collect();
        if spans.is_empty() {
            return json;
        }
        let kept: usize = spans.iter().map(|s| s.len()).sum();
        let mut own = Vec::with_capacity(text.len() - kept);
        let mut shared = Vec::with_capacity(spans.len());
        let mut from = 0;
        for span in spans {
            own.extend_from_slice(&text[from..span.start]);
            shared.push((own.len(), self.intern(&text[span.clone()])));
            from = span.end;
        }
        own.extend_from_slice(&text[from..]);
        CachedJson::new(own.into(), shared.into())
    }

    /// The kept copy of `value`, kept now if it was not.
    fn intern(&mut self, value: &[u8]) -> Arc<[u8]> {
        if let Some(kept) = self.values.get(value) {
            return kept.clone();
        }
        if self.values.len() >= self.sweep_at {
            self.values.retain(|v| Arc::strong_count(v) > 1);
            self.sweep_at = (self.values.len() * 2).max(1024);
        }
        let kept: Arc<[u8]> = value.into();
        self.values.insert(kept.clone());
        kept
    }

    /// How many values are kept.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// The span of the JSON object that starts at `start` in `text`, if one does.
fn object_at(text: &[u8], start: usize) -> Option<Range<usize>> {
    if text.get(start) != Some(&b'{') {
        return None;
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &c) in text.iter().enumerate().skip(start) {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return (c == b'}').then_some(start..i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &str = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}}"#;

    fn pod(name: &str, rv: u32) -> String {
        format!(
            r#"{{"kind":"Pod","metadata":{{"name":"{name}","resourceVersion":"{rv}","managedFields":[{{"manager":"m","fieldsType":"FieldsV1","fieldsV1":{FIELDS}}},{{"manager":"n","fieldsV1":{FIELDS}}}]}},"spec":{{}}}}"#
        )
    }

    fn text(json: &CachedJson) -> String {
        String::from_utf8(json.contiguous().into_owned()).unwrap()
    }

    /// Objects holding the same `fieldsV1` keep it once, and each reads back as it was, in
    /// one piece, in pieces, and from any byte on.
    #[test]
    fn alike_values_are_kept_once_and_read_back_whole() {
        let mut values = SharedValues::default();
        let a = values.share(CachedJson::from(pod("a", 7).into_bytes()));
        let b = values.share(CachedJson::from(pod("b", 8).into_bytes()));
        assert_eq!(values.len(), 1);
        assert_eq!(text(&a), pod("a", 7));
        assert_eq!(text(&b), pod("b", 8));
        assert_eq!(a.len(), pod("a", 7).len());
        assert_eq!(a.own_len(), pod("a", 7).len() - 2 * FIELDS.len());
        assert!(Arc::ptr_eq(&a.shared[0].1, &b.shared[1].1));
        assert_eq!(a.to_bytes(), pod("a", 7).as_bytes());
        let full = pod("a", 7);
        for start in [0, 1, 60, 90, full.len() - 1, full.len()] {
            let tail: Vec<u8> = a.chunks_from(start).flatten().copied().collect();
            assert_eq!(tail, &full.as_bytes()[start..], "from {start}");
        }
        assert_eq!(a.head(), &full.as_bytes()[..full.find("{\"f:").unwrap()]);
    }

    /// Short values, values that are not objects and strings that only mention the key stay
    /// in the object's own text.
    #[test]
    fn only_long_object_values_are_shared() {
        let mut values = SharedValues::default();
        for kept in [
            r#"{"fieldsV1":{"f:a":{}}}"#.to_string(),
            r#"{"fieldsV1":"not an object, however long it is, it stays where it is"}"#.into(),
            format!(
                r#"{{"note":"\"fieldsV1\":{}"}}"#,
                FIELDS.replace('"', "\\\"")
            ),
            r#"{"fieldsV1":{"unterminated":"#.into(),
        ] {
            let json = values.share(CachedJson::from(kept.clone().into_bytes()));
            assert!(json.shared.is_empty(), "{kept}");
            assert_eq!(text(&json), kept);
        }
        assert!(values.is_empty());
    }

    /// A value with braces and brackets inside strings ends where the object does.
    #[test]
    fn strings_inside_a_value_do_not_end_it() {
        let odd =
            r#"{"f:x":{"k:{\"a\":\"}]\\\"\"}":{}},"f:y":[{"f:z":{}}],"f:padding-to-be-long":{}}"#;
        let whole = format!(r#"{{"fieldsV1":{odd},"after":1}}"#);
        let json = SharedValues::default().share(CachedJson::from(whole.clone().into_bytes()));
        assert_eq!(&*json.shared[0].1, odd.as_bytes());
        assert_eq!(text(&json), whole);
    }

    /// A replaced range keeps the shared values (shifted) unless it touches one; text found
    /// once is found wherever it lies.
    /// The kept length and type fields are the text's, however the text was made: whole,
    /// with shared values, or replaced in part.
    #[test]
    fn length_and_type_fields_are_kept_with_the_text() {
        let mut values = SharedValues::default();
        let full = format!(
            r#"{{"apiVersion":"v1","kind":"Pod",{}"#,
            &pod("a", 7)["{\"kind\":\"Pod\",".len()..]
        );
        let type_fields = r#""apiVersion":"v1","kind":"Pod","#.len();
        let whole = CachedJson::from(full.clone());
        let shared = values.share(whole.clone());
        assert_eq!(shared.shared.len(), 2);
        let at = full.find("7").unwrap();
        let replaced = shared.replaced(at..at + 1, b"12345");
        for (json, expected) in [(&whole, &full), (&shared, &full)] {
            assert_eq!(json.len(), expected.len());
            assert_eq!(json.type_fields_len(), type_fields);
        }
        assert_eq!(replaced.len(), full.len() + 4);
        assert_eq!(replaced.type_fields_len(), type_fields);
        let cases = [
            (r#"{"kind":"Pod","apiVersion":"v1"}"#, 30),
            (r#"{"apiVersion":"v1","metadata":{}}"#, 0),
            (r#"{"apiVersion":"v\"1","kind":"Pod"}"#, 0),
            ("", 0),
        ];
        for (text, expected) in cases {
            assert_eq!(CachedJson::from(text).type_fields_len(), expected, "{text}");
        }
    }

    #[test]
    fn replacing_keeps_the_shared_values() {
        let mut values = SharedValues::default();
        let full = pod("a", 7);
        let json = values.share(CachedJson::from(full.clone().into_bytes()));
        let at = json.find_once(b"\"resourceVersion\":\"7\"").unwrap();
        assert_eq!(at, full.find("\"resourceVersion\"").unwrap());
        let digit = at + "\"resourceVersion\":\"".len();
        let newer = json.replaced(digit..digit + 1, b"12345");
        assert_eq!(text(&newer), pod("a", 12345));
        assert_eq!(newer.shared.len(), 2);
        let spec = full.rfind("{}").unwrap();
        let later = json.replaced(spec..spec + 2, b"{\"x\":1}");
        assert_eq!(
            text(&later),
            full.replacen("\"spec\":{}", "\"spec\":{\"x\":1}", 1)
        );
        let inside = full.find("f:app").unwrap();
        let touched = json.replaced(inside..inside + 5, b"f:web");
        assert!(touched.shared.is_empty());
        assert_eq!(text(&touched), full.replacen("f:app", "f:web", 1));
        assert_eq!(
            json.find_once(b"f:app"),
            None,
            "twice, in the shared values"
        );
        assert_eq!(
            json.find_once(b"\"manager\":\"n\""),
            full.find("\"manager\":\"n\"")
        );
    }

    /// Values no object holds are dropped once the set has grown.
    #[test]
    fn values_nobody_holds_go() {
        let mut values = SharedValues::default();
        for i in 0..3000 {
            let fields =
                format!(r#"{{"f:metadata":{{"f:labels":{{"f:label-number-{i}":{{}}}}}}}}"#);
            values.share(CachedJson::from(
                format!(r#"{{"fieldsV1":{fields}}}"#).into_bytes(),
            ));
        }
        assert!(values.len() < 2048, "{} kept", values.len());
    }
}
