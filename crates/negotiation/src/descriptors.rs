//! The parts of a serialized `FileDescriptorSet` the schema reads (packages, messages,
//! fields, map entries), borrowed from its bytes: building upstream's schema at start-up
//! then allocates only what the schema keeps, not every name and option of the set.

/// A message declaration.
#[derive(Debug, Default)]
pub(crate) struct MessageDesc<'a> {
    pub name: &'a str,
    pub fields: Vec<FieldDesc<'a>>,
    pub nested: Vec<MessageDesc<'a>>,
    /// `options.map_entry`: the generated entry type of a map field.
    pub map_entry: bool,
}

/// A field declaration; `label` and `ty` are the `FieldDescriptorProto` enums' numbers.
#[derive(Debug, Default)]
pub(crate) struct FieldDesc<'a> {
    pub name: &'a str,
    pub number: i32,
    pub label: i32,
    pub ty: i32,
    /// The full name of a message or enum type, with its leading dot.
    pub type_name: &'a str,
}

/// `LABEL_REPEATED`.
pub(crate) const LABEL_REPEATED: i32 = 3;

/// Each file's package and top-level messages.
pub(crate) fn read_set(bytes: &[u8]) -> Result<Vec<(&str, Vec<MessageDesc<'_>>)>, String> {
    let mut files = Vec::new();
    for_each_field(bytes, |number, value| {
        if number == 1 {
            files.push(read_file(value.bytes()?)?);
        }
        Ok(())
    })?;
    Ok(files)
}

fn read_file(bytes: &[u8]) -> Result<(&str, Vec<MessageDesc<'_>>), String> {
    let mut package = "";
    let mut messages = Vec::new();
    for_each_field(bytes, |number, value| {
        match number {
            2 => package = value.str()?,
            4 => messages.push(read_message(value.bytes()?)?),
            _ => {}
        }
        Ok(())
    })?;
    Ok((package, messages))
}

fn read_message(bytes: &[u8]) -> Result<MessageDesc<'_>, String> {
    let mut message = MessageDesc::default();
    for_each_field(bytes, |number, value| {
        match number {
            1 => message.name = value.str()?,
            2 => message.fields.push(read_field(value.bytes()?)?),
            3 => message.nested.push(read_message(value.bytes()?)?),
            // MessageOptions: map_entry = 7.
            7 => for_each_field(value.bytes()?, |option, value| {
                if option == 7 {
                    message.map_entry = value.varint()? != 0;
                }
                Ok(())
            })?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(message)
}

fn read_field(bytes: &[u8]) -> Result<FieldDesc<'_>, String> {
    // Unset enums read as their first value, as protobuf's defaults.
    let mut field = FieldDesc {
        label: 1,
        ty: 1,
        ..FieldDesc::default()
    };
    for_each_field(bytes, |number, value| {
        let int = |value: &Value| value.varint().map(|v| v as i32);
        match number {
            1 => field.name = value.str()?,
            3 => field.number = int(&value)?,
            4 => field.label = int(&value)?,
            5 => field.ty = int(&value)?,
            6 => field.type_name = value.str()?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(field)
}

/// One field's value on the wire.
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

impl<'a> Value<'a> {
    fn varint(&self) -> Result<u64, String> {
        match self {
            Value::Varint(v) => Ok(*v),
            _ => Err("a descriptor field has the wrong wire type".into()),
        }
    }

    fn bytes(&self) -> Result<&'a [u8], String> {
        match self {
            Value::Bytes(b) => Ok(b),
            _ => Err("a descriptor field has the wrong wire type".into()),
        }
    }

    fn str(&self) -> Result<&'a str, String> {
        std::str::from_utf8(self.bytes()?).map_err(|e| format!("a descriptor name: {e}"))
    }
}

/// Calls `each` with every field of the message in `bytes`, in order.
fn for_each_field<'a>(
    mut bytes: &'a [u8],
    mut each: impl FnMut(u32, Value<'a>) -> Result<(), String>,
) -> Result<(), String> {
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        let number = u32::try_from(key >> 3).map_err(|_| "a field number out of range")?;
        let value = match key & 7 {
            0 => Value::Varint(varint(&mut bytes)?),
            1 => take(&mut bytes, 8).map(|_| Value::Fixed)?,
            2 => {
                let len = usize::try_from(varint(&mut bytes)?).map_err(|_| "a length")?;
                Value::Bytes(take(&mut bytes, len)?)
            }
            5 => take(&mut bytes, 4).map(|_| Value::Fixed)?,
            other => return Err(format!("unexpected wire type {other} in a descriptor")),
        };
        each(number, value)?;
    }
    Ok(())
}

fn take<'a>(bytes: &mut &'a [u8], len: usize) -> Result<&'a [u8], String> {
    if bytes.len() < len {
        return Err("a descriptor set cut short".into());
    }
    let (head, rest) = bytes.split_at(len);
    *bytes = rest;
    Ok(head)
}

fn varint(bytes: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes
            .split_first()
            .ok_or("a descriptor set cut short in a number")?;
        *bytes = rest;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a number longer than ten bytes in a descriptor set".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    #[test]
    fn reads_what_prost_reads() {
        let bytes: &[u8] = include_bytes!("../schemas/v1_35.pb");
        let theirs = prost_types::FileDescriptorSet::decode(bytes).unwrap();
        let ours = read_set(bytes).unwrap();
        assert_eq!(ours.len(), theirs.file.len());
        fn same(ours: &MessageDesc, theirs: &prost_types::DescriptorProto) {
            assert_eq!(ours.name, theirs.name());
            assert_eq!(
                ours.map_entry,
                theirs.options.as_ref().is_some_and(|o| o.map_entry())
            );
            assert_eq!(ours.fields.len(), theirs.field.len(), "{}", ours.name);
            for (a, b) in ours.fields.iter().zip(&theirs.field) {
                assert_eq!(
                    (a.name, a.number, a.label, a.ty, a.type_name),
                    (
                        b.name(),
                        b.number(),
                        b.label() as i32,
                        b.r#type() as i32,
                        b.type_name()
                    )
                );
            }
            assert_eq!(ours.nested.len(), theirs.nested_type.len());
            for (a, b) in ours.nested.iter().zip(&theirs.nested_type) {
                same(a, b);
            }
        }
        for ((package, messages), file) in ours.iter().zip(&theirs.file) {
            assert_eq!(*package, file.package());
            assert_eq!(messages.len(), file.message_type.len());
            for (a, b) in messages.iter().zip(&file.message_type) {
                same(a, b);
            }
        }
    }

    #[test]
    fn refuses_broken_sets() {
        let bytes: &[u8] = include_bytes!("../schemas/v1_35.pb");
        assert!(read_set(&bytes[..bytes.len() - 3]).is_err());
        assert!(read_set(&[0x0b]).is_err(), "a group's wire type");
        assert!(read_set(&[0x0a, 0xff]).is_err(), "a length cut short");
    }
}
