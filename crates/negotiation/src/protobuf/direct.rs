//! Protobuf bodies written straight as JSON bytes, without the tree [`Codec::decode_object`]
//! builds: for stored objects read back in bulk (a watch cache's first load, reads from etcd),
//! whose JSON is parsed into a typed object right after.
//!
//! The tree merges what protobuf allows to come in any order: a field given twice (the last
//! wins), a repeated field's items split apart, an inline struct's fields. Upstream's encoder
//! and this crate's write every message's fields in field-number order, each repeated field's
//! items together and map entries by key, so the direct path takes those bodies only and
//! declines the rest (`None`), which the tree then reads: the JSON both give parses to the
//! same document.

use std::io::Write;

use serde::de::IgnoredAny;
use serde_json::Value;

use super::{Codec, MAGIC, MAX_DEPTH, Reader, decode_envelope, decode_special, zero_value};
use crate::schema::{Field, FieldType, Message, Shape, Special};

impl Codec<'_> {
    /// A whole protobuf body as the object's JSON bytes, with apiVersion and kind; None when
    /// the body is not in field order (or does not decode): [`Self::decode_object`] reads
    /// those.
    pub fn decode_object_json(&self, body: &[u8]) -> Option<Vec<u8>> {
        let env = decode_envelope(body).ok()?;
        let index = self.message_for(&env.api_version, &env.kind).ok()?;
        let message = self.schema.message(index);
        if message.special.is_some()
            || message
                .fields
                .iter()
                .any(|f| f.name == "kind" || f.name == "apiVersion")
        {
            return None;
        }
        let mut out = Vec::with_capacity(env.raw.len() * 2 + 64);
        out.extend_from_slice(b"{\"apiVersion\":");
        write_json(&mut out, env.api_version.as_str())?;
        out.extend_from_slice(b",\"kind\":");
        write_json(&mut out, env.kind.as_str())?;
        self.write_fields(message, &env.raw, 0, &mut out, false)?;
        out.push(b'}');
        Some(out)
    }

    /// `{...}` of a plain message.
    fn write_message(
        &self,
        message: &Message,
        bytes: &[u8],
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Option<()> {
        out.push(b'{');
        self.write_fields(message, bytes, depth, out, true)?;
        out.push(b'}');
        Some(())
    }

    /// The members of a plain message's object, each after a comma unless `first`; whether
    /// none was written.
    fn write_fields(
        &self,
        message: &Message,
        bytes: &[u8],
        depth: usize,
        out: &mut Vec<u8>,
        mut first: bool,
    ) -> Option<bool> {
        if depth > MAX_DEPTH || message.special.is_some() {
            return None;
        }
        let mut r = Reader::new(bytes);
        let mut last = 0u32;
        // The repeated or map field whose items are being written, and the last map key.
        let mut open: Option<(&Field, u8)> = None;
        let mut last_key = String::new();
        while let Some((number, wire)) = r.key().ok()? {
            let Some(field) = message.field(number) else {
                r.skip(wire).ok()?;
                continue;
            };
            if let Some((f, close)) = open {
                if f.number == number {
                    out.push(b',');
                    self.write_item(field, wire, &mut r, depth, message, out, &mut last_key)?;
                    continue;
                }
                out.push(close);
                open = None;
            }
            if number <= last {
                return None;
            }
            last = number;
            if field.inline {
                // An embedded struct: its members sit in this object.
                let FieldType::Message(index) = field.ty else {
                    return None;
                };
                let inner = self.schema.message(index);
                if wire != 2 || field.shape != Shape::Single {
                    return None;
                }
                first = self.write_fields(inner, r.bytes().ok()?, depth + 1, out, first)?;
                continue;
            }
            let mark = out.len();
            if !first {
                out.push(b',');
            }
            write_json(out, field.name.as_str())?;
            out.push(b':');
            match field.shape {
                Shape::Single => {
                    if self.write_single(field, wire, &mut r, depth, message, out)? {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
                Shape::Repeated => {
                    out.push(b'[');
                    self.write_item(field, wire, &mut r, depth, message, out, &mut last_key)?;
                    open = Some((field, b']'));
                    first = false;
                }
                Shape::Map(..) => {
                    out.push(b'{');
                    last_key.clear();
                    self.write_item(field, wire, &mut r, depth, message, out, &mut last_key)?;
                    open = Some((field, b'}'));
                    first = false;
                }
            }
        }
        if let Some((_, close)) = open {
            out.push(close);
        }
        Some(first)
    }

    /// One value of a single field; false when the decoded document leaves the field out.
    fn write_single(
        &self,
        field: &Field,
        wire: u8,
        r: &mut Reader<'_>,
        depth: usize,
        parent: &Message,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        if wire != field.ty.wire_type() {
            return None;
        }
        let value = match field.ty {
            FieldType::Message(index) => {
                let message = self.schema.message(index);
                let bytes = r.bytes().ok()?;
                match message.special {
                    None => {
                        self.write_message(message, bytes, depth + 1, out)?;
                        return Some(true);
                    }
                    Some(Special::RawExtension | Special::FieldsV1) => {
                        return write_raw(field, raw_json(bytes)?, out);
                    }
                    Some(special) => decode_special(special, bytes, self, depth + 1).ok()?,
                }
            }
            FieldType::String => {
                let text = std::str::from_utf8(r.bytes().ok()?).ok()?;
                if text.is_empty() && !field.empty_is_set {
                    return Some(false);
                }
                write_json(out, text)?;
                return Some(true);
            }
            _ => self.decode_value(field.ty, wire, r, depth, parent).ok()?,
        };
        let left_out = match &value {
            Value::Null => true,
            Value::String(s) => s.is_empty() && !field.empty_is_set,
            v => field.zero_is_unset && *v == 0,
        };
        if left_out {
            return Some(false);
        }
        write_json(out, &value)?;
        Some(true)
    }

    /// One item of a repeated field (a packed run of them), or one entry of a map field.
    #[allow(clippy::too_many_arguments)]
    fn write_item(
        &self,
        field: &Field,
        wire: u8,
        r: &mut Reader<'_>,
        depth: usize,
        parent: &Message,
        out: &mut Vec<u8>,
        last_key: &mut String,
    ) -> Option<()> {
        match field.shape {
            Shape::Single => None,
            Shape::Repeated => {
                let packable = !matches!(
                    field.ty,
                    FieldType::String | FieldType::Bytes | FieldType::Message(_)
                );
                if packable && wire == 2 {
                    // A packed run: its items, or none (an empty list stays a list).
                    let mut packed = Reader::new(r.bytes().ok()?);
                    let mut first = true;
                    while !packed.done() {
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        let value = self
                            .decode_value(
                                field.ty,
                                field.ty.wire_type(),
                                &mut packed,
                                depth,
                                parent,
                            )
                            .ok()?;
                        write_json(out, &value)?;
                    }
                    if first {
                        // Nothing was written: the comma before this run must go.
                        if out.last() == Some(&b',') {
                            out.pop();
                        }
                    }
                    return Some(());
                }
                self.write_value(field.ty, wire, r, depth, parent, false, out)
            }
            Shape::Map(key_ty, value_ty) => {
                if wire != 2 {
                    return None;
                }
                let mut entry = Reader::new(r.bytes().ok()?);
                let mut key = Value::Null;
                let mut value: Option<(&[u8], u8)> = None;
                while let Some((n, w)) = entry.key().ok()? {
                    match n {
                        1 => {
                            key = self
                                .decode_value(key_ty, w, &mut entry, depth, parent)
                                .ok()?
                        }
                        2 => {
                            // Kept to be written after the key.
                            let start = entry.pos;
                            entry.skip(w).ok()?;
                            value = Some((&entry.bytes[start..entry.pos], w));
                        }
                        _ => entry.skip(w).ok()?,
                    }
                }
                let key = match key {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                // Entries in key order, each once: anything else is the tree's to merge.
                let first_entry = out.last() == Some(&b'{');
                if !first_entry && key <= *last_key {
                    return None;
                }
                write_json(out, key.as_str())?;
                out.push(b':');
                *last_key = key;
                match value {
                    Some((bytes, w)) => {
                        let mut r = Reader::new(bytes);
                        self.write_value(value_ty, w, &mut r, depth, parent, true, out)
                    }
                    None => write_json(out, &zero_value(value_ty)),
                }
            }
        }
    }

    /// One value as the tree has it in a list or a map (nothing left out; a special that
    /// decodes to nothing is null in a list, its type's zero value in a map: `null_as_zero`).
    #[allow(clippy::too_many_arguments)]
    fn write_value(
        &self,
        ty: FieldType,
        wire: u8,
        r: &mut Reader<'_>,
        depth: usize,
        parent: &Message,
        null_as_zero: bool,
        out: &mut Vec<u8>,
    ) -> Option<()> {
        match ty {
            FieldType::Message(index) if self.schema.message(index).special.is_none() => {
                if wire != 2 {
                    return None;
                }
                let bytes = r.bytes().ok()?;
                self.write_message(self.schema.message(index), bytes, depth + 1, out)
            }
            _ => {
                let value = self.decode_value(ty, wire, r, depth, parent).ok()?;
                if value.is_null() && null_as_zero {
                    return write_json(out, &zero_value(ty));
                }
                write_json(out, &value)
            }
        }
    }
}

/// The raw JSON of a RawExtension or FieldsV1 message (field 1), when it is JSON.
fn raw_json(bytes: &[u8]) -> Option<&[u8]> {
    let mut r = Reader::new(bytes);
    let mut raw: &[u8] = &[];
    while let Some((number, wire)) = r.key().ok()? {
        match (number, wire) {
            (1 | 3, 2) => raw = r.bytes().ok()?,
            _ => r.skip(wire).ok()?,
        }
    }
    // A nested protobuf object: the tree reads it.
    (!raw.starts_with(MAGIC)).then_some(raw)
}

/// A single RawExtension or FieldsV1 field's raw JSON, checked to be one JSON value and
/// copied as it is; false when the tree leaves the field out (empty, `null`, `""`, a zero
/// that means unset).
fn write_raw(field: &Field, raw: &[u8], out: &mut Vec<u8>) -> Option<bool> {
    if raw.is_empty() {
        return Some(false);
    }
    serde_json::from_slice::<IgnoredAny>(raw).ok()?;
    let trimmed = raw.trim_ascii();
    let left_out = trimmed == b"null"
        || (trimmed == b"\"\"" && !field.empty_is_set)
        || (field.zero_is_unset && trimmed == b"0");
    if !left_out {
        out.extend_from_slice(trimmed);
    }
    Some(!left_out)
}

/// `value` as JSON.
fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Option<()> {
    serde_json::to_writer(out.by_ref(), value).ok()
}
