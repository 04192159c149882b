//! Reading a watch response: newline-separated JSON events, or length-prefixed protobuf
//! frames (`application/vnd.kubernetes.protobuf;stream=watch`).

use bytes::{Buf, Bytes, BytesMut};
use capstan_negotiation::protobuf::Codec;
use futures_util::Stream;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::WatchEvent;
use crate::error::{Error, Result};

/// Frames larger than this are refused (a broken or hostile stream).
const MAX_FRAME: usize = 64 << 20;

/// The next complete frame in `buffer`, if any.
fn next_frame(buffer: &mut BytesMut, protobuf: bool) -> Result<Option<Bytes>> {
    if protobuf {
        if buffer.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([buffer[0], buffer[1], buffer[2], buffer[3]]) as usize;
        if len > MAX_FRAME {
            return Err(Error::Decode(format!("a watch frame of {len} bytes")));
        }
        if buffer.len() < 4 + len {
            return Ok(None);
        }
        buffer.advance(4);
        return Ok(Some(buffer.split_to(len).freeze()));
    }
    loop {
        let Some(end) = buffer.iter().position(|b| *b == b'\n') else {
            if buffer.len() > MAX_FRAME {
                return Err(Error::Decode("a watch line without end".into()));
            }
            return Ok(None);
        };
        let line = buffer.split_to(end + 1).freeze().slice(..end);
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Some(line));
        }
    }
}

/// The frames of a watch body.
pub(crate) fn frames(body: Incoming, protobuf: bool) -> impl Stream<Item = Result<Bytes>> + Send {
    futures_util::stream::unfold(Some((body, BytesMut::new())), move |state| async move {
        let (mut body, mut buffer) = state?;
        loop {
            match next_frame(&mut buffer, protobuf) {
                Ok(Some(frame)) => return Some((Ok(frame), Some((body, buffer)))),
                Ok(None) => {}
                Err(e) => return Some((Err(e), None)),
            }
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        buffer.extend_from_slice(&data);
                    }
                }
                // A watch cut off midway ends like one that ended: the caller resumes.
                Some(Err(_)) | None => return None,
            }
        }
    })
}

/// One frame as an event.
pub(crate) fn event<K: DeserializeOwned>(frame: &[u8], protobuf: bool) -> Result<WatchEvent<K>> {
    let mut doc: Value = if protobuf {
        Codec::default()
            .decode_watch_event(frame)
            .map_err(|e| Error::Decode(e.to_string()))?
    } else {
        serde_json::from_slice(frame).map_err(|e| Error::Decode(e.to_string()))?
    };
    let object = doc["object"].take();
    let typed = |object: Value| {
        serde_json::from_value::<K>(object).map_err(|e| Error::Decode(e.to_string()))
    };
    Ok(match doc["type"].as_str().unwrap_or("") {
        "ADDED" => WatchEvent::Added(typed(object)?),
        "MODIFIED" => WatchEvent::Modified(typed(object)?),
        "DELETED" => WatchEvent::Deleted(typed(object)?),
        "BOOKMARK" => WatchEvent::Bookmark(
            object["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        ),
        "ERROR" => WatchEvent::Error(Box::new(
            serde_json::from_value(object).map_err(|e| Error::Decode(e.to_string()))?,
        )),
        other => return Err(Error::Decode(format!("unknown watch event type {other:?}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_whole_however_the_bytes_arrive() {
        let mut buf = BytesMut::from(&b"{\"a\":1}\n\n{\"b\""[..]);
        assert_eq!(
            next_frame(&mut buf, false).unwrap().unwrap(),
            &b"{\"a\":1}"[..]
        );
        assert_eq!(next_frame(&mut buf, false).unwrap(), None);
        buf.extend_from_slice(b":2}\n");
        assert_eq!(
            next_frame(&mut buf, false).unwrap().unwrap(),
            &b"{\"b\":2}"[..]
        );
        let mut buf = BytesMut::from(&[0u8, 0, 0, 3, b'x', b'y'][..]);
        assert_eq!(next_frame(&mut buf, true).unwrap(), None);
        buf.extend_from_slice(b"z");
        assert_eq!(next_frame(&mut buf, true).unwrap().unwrap(), &b"xyz"[..]);
        let mut huge = BytesMut::from(&[0xffu8, 0xff, 0xff, 0xff][..]);
        assert!(next_frame(&mut huge, true).is_err());
    }
}
