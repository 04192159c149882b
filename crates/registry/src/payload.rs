//! Response bodies that are sent as they are assembled: a list is its head and its items'
//! JSON (shared with the watch cache), never one buffer the size of the whole list.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use capstan_watch::{CachedJson, CachedObject};

/// How a list body ends.
const LIST_TAIL: &[u8] = b"]}";

/// Bytes a chunk is allotted beyond its size: most items end within them.
const CHUNK_SLACK: usize = 8 * 1024;

/// A JSON response body.
#[derive(Debug, Clone)]
pub enum Payload {
    /// A complete body.
    Whole(Bytes),
    /// A list: `head` (everything up to and including `"items":[`), the items separated by
    /// commas, then `]}`.
    List {
        /// The list's opening, up to the items.
        head: Bytes,
        /// Each item's JSON.
        items: Vec<CachedJson>,
        /// The cached objects the items are, when the list comes from the watch cache (in
        /// the same order): they keep other encodings of the items.
        cached: Vec<Arc<CachedObject>>,
        /// Whether clients get the items without their `apiVersion` and `kind`, as upstream
        /// sends the items of built-in kinds (custom objects keep theirs). The items hold
        /// them; [`len`](Payload::len), [`into_chunks`](Payload::into_chunks) and
        /// [`into_sent_bytes`](Payload::into_sent_bytes) leave them out.
        bare_items: bool,
    },
}

impl Default for Payload {
    fn default() -> Self {
        Payload::Whole(Bytes::new())
    }
}

impl From<Vec<u8>> for Payload {
    fn from(body: Vec<u8>) -> Self {
        Payload::Whole(body.into())
    }
}

impl Payload {
    /// The length in bytes of the body as clients get it.
    pub fn len(&self) -> usize {
        match self {
            Payload::Whole(b) => b.len(),
            Payload::List {
                head,
                items,
                bare_items,
                ..
            } => list_len(head, items, *bare_items),
        }
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole body in one buffer, every item with its `apiVersion` and `kind` (what the
    /// server's own readers and the Table and metadata transforms take).
    pub fn into_bytes(self) -> Bytes {
        match self {
            Payload::Whole(b) => b,
            Payload::List {
                head,
                items,
                cached,
                ..
            } => Payload::List {
                head,
                items,
                cached,
                bare_items: false,
            }
            .into_sent_bytes(),
        }
    }

    /// The whole body in one buffer, as clients get it.
    pub fn into_sent_bytes(self) -> Bytes {
        match self {
            Payload::Whole(b) => b,
            list => {
                let len = list.len();
                let mut out = BytesMut::with_capacity(len);
                for chunk in list.into_chunks(len.max(1)) {
                    out.extend_from_slice(&chunk);
                }
                out.freeze()
            }
        }
    }

    /// The body as clients get it, in chunks of about `size` bytes (an item larger than
    /// `size` makes a larger chunk), produced one at a time as they are consumed.
    pub fn into_chunks(self, size: usize) -> Chunks {
        match self {
            Payload::Whole(b) => Chunks {
                left: b.len(),
                head: Some(b),
                items: Vec::new().into_iter(),
                first_item: true,
                tail: false,
                bare_items: false,
                size,
            },
            Payload::List {
                head,
                items,
                bare_items,
                ..
            } => Chunks {
                left: list_len(&head, &items, bare_items),
                head: Some(head),
                items: items.into_iter(),
                first_item: true,
                tail: true,
                bare_items,
                size,
            },
        }
    }
}

/// The length of a list's body as clients get it (its items' lengths are kept: their text
/// is not read).
fn list_len(head: &[u8], items: &[CachedJson], bare: bool) -> usize {
    let items_len: usize = items.iter().map(|i| i.len() - skipped(i, bare)).sum();
    head.len() + items_len + items.len().saturating_sub(1) + LIST_TAIL.len()
}

/// How many bytes after an item's opening brace are left out: its `apiVersion` and `kind`
/// when `bare` asks for that (0 when it does not start with them: it is sent as it is).
fn skipped(item: &CachedJson, bare: bool) -> usize {
    if bare { item.type_fields_len() } else { 0 }
}

/// The chunks of a [`Payload`] (see [`Payload::into_chunks`]).
#[derive(Debug)]
pub struct Chunks {
    head: Option<Bytes>,
    items: std::vec::IntoIter<CachedJson>,
    first_item: bool,
    tail: bool,
    bare_items: bool,
    size: usize,
    /// Bytes not yet given out.
    left: usize,
}

impl Iterator for Chunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if !self.tail {
            return self.head.take();
        }
        // Room for the chunk and the item that ends it (or what is left), so that it is not
        // grown and copied item by item.
        let mut out = BytesMut::with_capacity(self.left.min(self.size + CHUNK_SLACK));
        if let Some(head) = self.head.take() {
            out.extend_from_slice(&head);
        }
        while out.len() < self.size {
            match self.items.next() {
                Some(item) => {
                    if !self.first_item {
                        out.extend_from_slice(b",");
                    }
                    self.first_item = false;
                    let from = match skipped(&item, self.bare_items) {
                        0 => 0,
                        n => {
                            out.extend_from_slice(b"{");
                            1 + n
                        }
                    };
                    for piece in item.chunks_from(from) {
                        out.extend_from_slice(piece);
                    }
                }
                None => {
                    out.extend_from_slice(LIST_TAIL);
                    self.tail = false;
                    break;
                }
            }
        }
        self.left = self.left.saturating_sub(out.len());
        Some(out.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Payload {
        Payload::List {
            head: Bytes::from_static(b"{\"items\":["),
            items: items.iter().map(|i| i.to_string().into()).collect(),
            cached: Vec::new(),
            bare_items: false,
        }
    }

    /// Clients get built-in kinds' items without `apiVersion` and `kind`, whatever their
    /// order; items that do not start with both go as they are; the server's own readers
    /// keep them.
    #[test]
    fn bare_items_leave_out_their_type() {
        let items = [
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}"#,
            r#"{"kind":"Pod","apiVersion":"v1","spec":{}}"#,
            r#"{"apiVersion":"v1","kind":"Pod"}"#,
            r#"{"apiVersion":"v1","metadata":{}}"#,
            r#"{"apiVersion":"v\"1","kind":"Pod","x":1}"#,
        ];
        let sent = r#"{"items":[{"metadata":{"name":"a"}},{"spec":{}},{},{"apiVersion":"v1","metadata":{}},{"apiVersion":"v\"1","kind":"Pod","x":1}]}"#;
        let bare = || match list(&items) {
            Payload::List {
                head,
                items,
                cached,
                ..
            } => Payload::List {
                head,
                items,
                cached,
                bare_items: true,
            },
            whole => whole,
        };
        assert_eq!(bare().len(), sent.len());
        assert_eq!(bare().into_sent_bytes(), sent.as_bytes());
        for size in [1, 7, 1 << 16] {
            let joined: Vec<u8> = bare().into_chunks(size).flatten().collect();
            assert_eq!(joined, sent.as_bytes(), "chunk size {size}");
        }
        let typed = format!("{{\"items\":[{}]}}", items.join(","));
        assert_eq!(bare().into_bytes(), typed.as_bytes());
    }

    #[test]
    fn a_list_is_its_head_items_and_tail_at_any_chunk_size() {
        for items in [vec![], vec!["{}"], vec!["{\"a\":1}", "{}", "{\"b\":[1,2]}"]] {
            let expected = format!("{{\"items\":[{}]}}", items.join(","));
            assert_eq!(list(&items).len(), expected.len());
            assert_eq!(list(&items).into_bytes(), expected.as_bytes());
            for size in [1, 3, 8, 1 << 16] {
                let joined: Vec<u8> = list(&items).into_chunks(size).flatten().collect();
                assert_eq!(joined, expected.as_bytes(), "chunk size {size}");
            }
        }
    }

    #[test]
    fn chunks_stay_near_the_requested_size() {
        let items: Vec<String> = (0..1000).map(|i| format!("{{\"n\":{i}}}")).collect();
        let refs: Vec<&str> = items.iter().map(String::as_str).collect();
        let chunks: Vec<Bytes> = list(&refs).into_chunks(100).collect();
        assert!(chunks.len() > 50, "{} chunks", chunks.len());
        assert!(chunks.iter().all(|c| c.len() < 100 + 16));
    }

    #[test]
    fn a_whole_body_is_one_chunk() {
        let p = Payload::Whole(Bytes::from_static(b"{\"kind\":\"Status\"}"));
        assert_eq!(p.len(), 17);
        assert_eq!(p.clone().into_chunks(4).collect::<Vec<_>>().len(), 1);
        assert_eq!(p.into_bytes(), &b"{\"kind\":\"Status\"}"[..]);
    }
}
