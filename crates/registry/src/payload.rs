//! Response bodies that are sent as they are assembled: a list is its head and its items'
//! JSON (shared with the watch cache), never one buffer the size of the whole list.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use capstan_watch::CachedObject;

/// How a list body ends.
const LIST_TAIL: &[u8] = b"]}";

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
        items: Vec<Bytes>,
        /// The cached objects the items are, when the list comes from the watch cache (in
        /// the same order): they keep other encodings of the items.
        cached: Vec<Arc<CachedObject>>,
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
    /// The body's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Payload::Whole(b) => b.len(),
            Payload::List { head, items, .. } => {
                let items_len: usize = items.iter().map(Bytes::len).sum();
                head.len() + items_len + items.len().saturating_sub(1) + LIST_TAIL.len()
            }
        }
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole body in one buffer.
    pub fn into_bytes(self) -> Bytes {
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

    /// The body as chunks of about `size` bytes (an item larger than `size` makes a larger
    /// chunk), produced one at a time as they are consumed.
    pub fn into_chunks(self, size: usize) -> Chunks {
        match self {
            Payload::Whole(b) => Chunks {
                head: Some(b),
                items: Vec::new().into_iter(),
                first_item: true,
                tail: false,
                size,
            },
            Payload::List { head, items, .. } => Chunks {
                head: Some(head),
                items: items.into_iter(),
                first_item: true,
                tail: true,
                size,
            },
        }
    }
}

/// The chunks of a [`Payload`] (see [`Payload::into_chunks`]).
#[derive(Debug)]
pub struct Chunks {
    head: Option<Bytes>,
    items: std::vec::IntoIter<Bytes>,
    first_item: bool,
    tail: bool,
    size: usize,
}

impl Iterator for Chunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        let mut out = BytesMut::new();
        if let Some(head) = self.head.take() {
            if !self.tail {
                return Some(head);
            }
            out.reserve(self.size.max(head.len()));
            out.extend_from_slice(&head);
        }
        if !self.tail {
            return None;
        }
        while out.len() < self.size {
            match self.items.next() {
                Some(item) => {
                    if !self.first_item {
                        out.extend_from_slice(b",");
                    }
                    self.first_item = false;
                    out.extend_from_slice(&item);
                }
                None => {
                    out.extend_from_slice(LIST_TAIL);
                    self.tail = false;
                    break;
                }
            }
        }
        Some(out.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Payload {
        Payload::List {
            head: Bytes::from_static(b"{\"items\":["),
            items: items.iter().map(|i| Bytes::from(i.to_string())).collect(),
            cached: Vec::new(),
        }
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
