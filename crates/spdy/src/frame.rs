//! SPDY/3.1 frames on the wire: an 8-byte header (control frames: version 3, a type, flags
//! and a 24-bit length; data frames: a 31-bit stream id, flags and a length) and the frame's
//! body. Header blocks are zlib-compressed with the SPDY/3 dictionary, one compression
//! context per direction of a connection ([`HeaderCodec`]).

use bytes::{Buf, BufMut, Bytes, BytesMut};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::Error;

/// The last frame of its stream in this direction.
pub const FLAG_FIN: u8 = 0x01;
/// A SYN_STREAM the receiver must not answer with data.
pub const FLAG_UNIDIRECTIONAL: u8 = 0x02;

const VERSION: u16 = 3;
const SYN_STREAM: u16 = 1;
const SYN_REPLY: u16 = 2;
const RST_STREAM: u16 = 3;
const SETTINGS: u16 = 4;
const PING: u16 = 6;
const GOAWAY: u16 = 7;
const HEADERS: u16 = 8;
const WINDOW_UPDATE: u16 = 9;

/// The largest frame body accepted (the length field holds 24 bits).
pub const MAX_FRAME_BODY: usize = (1 << 24) - 1;

/// Header names and values (names lowercase on the wire; several values of one name are
/// joined with NUL bytes).
pub type Headers = Vec<(String, String)>;

/// One frame. Stream ids are 31 bits; `flags` holds [`FLAG_FIN`] and
/// [`FLAG_UNIDIRECTIONAL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Opens a stream.
    SynStream {
        /// The new stream.
        stream_id: u32,
        /// The stream it belongs with (0: none).
        associated_to: u32,
        /// 0 (highest) to 7.
        priority: u8,
        /// FIN, UNIDIRECTIONAL.
        flags: u8,
        /// The stream's headers.
        headers: Headers,
    },
    /// Accepts a stream.
    SynReply {
        /// The stream accepted.
        stream_id: u32,
        /// FIN.
        flags: u8,
        /// The reply's headers.
        headers: Headers,
    },
    /// Ends a stream abnormally.
    RstStream {
        /// The stream.
        stream_id: u32,
        /// Why (5: cancelled).
        status: u32,
    },
    /// Connection settings, ignored here.
    Settings {
        /// Whether to clear persisted settings.
        flags: u8,
        /// (id, value) pairs.
        entries: Vec<(u32, u32)>,
    },
    /// A ping, echoed by the side that did not send it.
    Ping {
        /// Odd from the client, even from the server.
        id: u32,
    },
    /// The sender will open no more streams.
    GoAway {
        /// The last stream the sender handled.
        last_good_stream_id: u32,
        /// Why (0: normal).
        status: u32,
    },
    /// More headers for a stream.
    Headers {
        /// The stream.
        stream_id: u32,
        /// FIN.
        flags: u8,
        /// The headers.
        headers: Headers,
    },
    /// Flow-control credit (ignored here: the Kubernetes peers do no flow control).
    WindowUpdate {
        /// The stream (0: the connection).
        stream_id: u32,
        /// Bytes of credit.
        delta: u32,
    },
    /// A stream's bytes.
    Data {
        /// The stream.
        stream_id: u32,
        /// FIN.
        flags: u8,
        /// The bytes.
        data: Bytes,
    },
}

/// The SPDY/3 header-compression dictionary: the length-prefixed words, then the raw tail,
/// as the protocol defines it (1,423 bytes).
pub fn dictionary() -> Vec<u8> {
    const WORDS: &[&str] = &[
        "options",
        "head",
        "post",
        "put",
        "delete",
        "trace",
        "accept",
        "accept-charset",
        "accept-encoding",
        "accept-language",
        "accept-ranges",
        "age",
        "allow",
        "authorization",
        "cache-control",
        "connection",
        "content-base",
        "content-encoding",
        "content-language",
        "content-length",
        "content-location",
        "content-md5",
        "content-range",
        "content-type",
        "date",
        "etag",
        "expect",
        "expires",
        "from",
        "host",
        "if-match",
        "if-modified-since",
        "if-none-match",
        "if-range",
        "if-unmodified-since",
        "last-modified",
        "location",
        "max-forwards",
        "pragma",
        "proxy-authenticate",
        "proxy-authorization",
        "range",
        "referer",
        "retry-after",
        "server",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "user-agent",
        "vary",
        "via",
        "warning",
        "www-authenticate",
        "method",
        "get",
        "status",
        "200 OK",
        "version",
        "HTTP/1.1",
        "url",
        "public",
        "set-cookie",
        "keep-alive",
        "origin",
    ];
    const TAIL: &str = concat!(
        "100101201202205206300302303304305306307402405406407408409410411412413414415416417",
        "502504505",
        "203 Non-Authoritative Information",
        "204 No Content",
        "301 Moved Permanently",
        "400 Bad Request",
        "401 Unauthorized",
        "403 Forbidden",
        "404 Not Found",
        "500 Internal Server Error",
        "501 Not Implemented",
        "503 Service Unavailable",
        "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ",
        "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT",
        "chunked,text/html,image/png,image/jpg,image/gif,application/xml,",
        "application/xhtml+xml,text/plain,text/javascript,public",
        "privatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.",
    );
    let mut out = Vec::with_capacity(1423);
    for word in WORDS {
        out.extend_from_slice(&(word.len() as u32).to_be_bytes());
        out.extend_from_slice(word.as_bytes());
    }
    out.extend_from_slice(TAIL.as_bytes());
    out
}

/// The header-block compression state of one connection: a compressor for what it sends and
/// a decompressor for what it receives, each primed with the dictionary on first use.
pub struct HeaderCodec {
    dictionary: Vec<u8>,
    compress: Compress,
    compress_primed: bool,
    decompress: Decompress,
}

impl Default for HeaderCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl HeaderCodec {
    /// Fresh contexts.
    pub fn new() -> Self {
        Self {
            dictionary: dictionary(),
            compress: Compress::new(Compression::default(), true),
            compress_primed: false,
            decompress: Decompress::new(true),
        }
    }

    /// `headers` as a compressed header block.
    pub fn encode(&mut self, headers: &Headers) -> Result<Vec<u8>, Error> {
        let mut plain = Vec::new();
        plain.put_u32(headers.len() as u32);
        for (name, value) in headers {
            plain.put_u32(name.len() as u32);
            plain.extend_from_slice(name.to_ascii_lowercase().as_bytes());
            plain.put_u32(value.len() as u32);
            plain.extend_from_slice(value.as_bytes());
        }
        if !self.compress_primed {
            self.compress
                .set_dictionary(&self.dictionary)
                .map_err(|e| Error::Compression(e.to_string()))?;
            self.compress_primed = true;
        }
        let mut out = Vec::with_capacity(plain.len() + 64);
        let mut input = &plain[..];
        loop {
            out.reserve(256);
            let before_in = self.compress.total_in();
            self.compress
                .compress_vec(input, &mut out, FlushCompress::Sync)
                .map_err(|e| Error::Compression(e.to_string()))?;
            let used = (self.compress.total_in() - before_in) as usize;
            input = &input[used..];
            // A sync flush is complete once the input is used and room was left over.
            if input.is_empty() && out.len() < out.capacity() {
                return Ok(out);
            }
        }
    }

    /// The headers of a compressed header block.
    pub fn decode(&mut self, block: &[u8]) -> Result<Headers, Error> {
        let mut plain = Vec::with_capacity(block.len() * 4 + 64);
        let mut input = block;
        loop {
            plain.reserve(1024);
            let before_in = self.decompress.total_in();
            let status = self
                .decompress
                .decompress_vec(input, &mut plain, FlushDecompress::Sync);
            let used = (self.decompress.total_in() - before_in) as usize;
            input = &input[used..];
            let status = match status {
                Err(e) if e.needs_dictionary().is_some() => {
                    self.decompress
                        .set_dictionary(&self.dictionary)
                        .map_err(|e| Error::Compression(e.to_string()))?;
                    continue;
                }
                other => other.map_err(|e| Error::Compression(e.to_string()))?,
            };
            if input.is_empty() && plain.len() < plain.capacity() {
                break;
            }
            if status == Status::StreamEnd {
                break;
            }
        }
        parse_headers(&plain)
    }
}

fn parse_headers(mut plain: &[u8]) -> Result<Headers, Error> {
    let bad = || Error::Protocol("malformed header block".into());
    if plain.remaining() < 4 {
        return Err(bad());
    }
    let count = plain.get_u32() as usize;
    let mut headers = Vec::with_capacity(count.min(64));
    for _ in 0..count {
        let mut field = || -> Result<String, Error> {
            if plain.remaining() < 4 {
                return Err(bad());
            }
            let len = plain.get_u32() as usize;
            if plain.remaining() < len {
                return Err(bad());
            }
            let text = String::from_utf8_lossy(&plain[..len]).into_owned();
            plain.advance(len);
            Ok(text)
        };
        let name = field()?;
        let value = field()?;
        headers.push((name, value));
    }
    Ok(headers)
}

fn control(out: &mut BytesMut, kind: u16, flags: u8, body: &[u8]) {
    out.put_u16(0x8000 | VERSION);
    out.put_u16(kind);
    out.put_u8(flags);
    out.put_uint(body.len() as u64, 3);
    out.extend_from_slice(body);
}

impl Frame {
    /// Appends the frame's bytes to `out`, compressing header blocks with `codec`.
    pub fn encode(&self, codec: &mut HeaderCodec, out: &mut BytesMut) -> Result<(), Error> {
        match self {
            Frame::SynStream {
                stream_id,
                associated_to,
                priority,
                flags,
                headers,
            } => {
                let mut body = Vec::new();
                body.put_u32(stream_id & 0x7fff_ffff);
                body.put_u32(associated_to & 0x7fff_ffff);
                body.put_u8((priority & 0x7) << 5);
                body.put_u8(0);
                body.extend_from_slice(&codec.encode(headers)?);
                control(out, SYN_STREAM, *flags, &body);
            }
            Frame::SynReply {
                stream_id,
                flags,
                headers,
            } => {
                let mut body = Vec::new();
                body.put_u32(stream_id & 0x7fff_ffff);
                body.extend_from_slice(&codec.encode(headers)?);
                control(out, SYN_REPLY, *flags, &body);
            }
            Frame::Headers {
                stream_id,
                flags,
                headers,
            } => {
                let mut body = Vec::new();
                body.put_u32(stream_id & 0x7fff_ffff);
                body.extend_from_slice(&codec.encode(headers)?);
                control(out, HEADERS, *flags, &body);
            }
            Frame::RstStream { stream_id, status } => {
                let mut body = Vec::new();
                body.put_u32(stream_id & 0x7fff_ffff);
                body.put_u32(*status);
                control(out, RST_STREAM, 0, &body);
            }
            Frame::Settings { flags, entries } => {
                let mut body = Vec::new();
                body.put_u32(entries.len() as u32);
                for (id, value) in entries {
                    body.put_u32(id & 0x00ff_ffff);
                    body.put_u32(*value);
                }
                control(out, SETTINGS, *flags, &body);
            }
            Frame::Ping { id } => control(out, PING, 0, &id.to_be_bytes()),
            Frame::GoAway {
                last_good_stream_id,
                status,
            } => {
                let mut body = Vec::new();
                body.put_u32(last_good_stream_id & 0x7fff_ffff);
                body.put_u32(*status);
                control(out, GOAWAY, 0, &body);
            }
            Frame::WindowUpdate { stream_id, delta } => {
                let mut body = Vec::new();
                body.put_u32(stream_id & 0x7fff_ffff);
                body.put_u32(delta & 0x7fff_ffff);
                control(out, WINDOW_UPDATE, 0, &body);
            }
            Frame::Data {
                stream_id,
                flags,
                data,
            } => {
                if data.len() > MAX_FRAME_BODY {
                    return Err(Error::Protocol("data frame too large".into()));
                }
                out.put_u32(stream_id & 0x7fff_ffff);
                out.put_u8(*flags);
                out.put_uint(data.len() as u64, 3);
                out.extend_from_slice(data);
            }
        }
        Ok(())
    }

    /// The first whole frame at the start of `buf` (removed from it), or `None` when more
    /// bytes are needed. Unknown control frames are skipped.
    pub fn decode(buf: &mut BytesMut, codec: &mut HeaderCodec) -> Result<Option<Frame>, Error> {
        loop {
            if buf.len() < 8 {
                return Ok(None);
            }
            let length = ((buf[5] as usize) << 16) | ((buf[6] as usize) << 8) | buf[7] as usize;
            if buf.len() < 8 + length {
                buf.reserve(8 + length - buf.len());
                return Ok(None);
            }
            let mut frame = buf.split_to(8 + length).freeze();
            let first = frame.get_u32();
            let flags = frame.get_u8();
            frame.advance(3);
            if first & 0x8000_0000 == 0 {
                return Ok(Some(Frame::Data {
                    stream_id: first & 0x7fff_ffff,
                    flags,
                    data: frame,
                }));
            }
            let version = ((first >> 16) & 0x7fff) as u16;
            if version != VERSION {
                return Err(Error::Protocol(format!(
                    "unsupported SPDY version {version}"
                )));
            }
            let kind = (first & 0xffff) as u16;
            let short = || Error::Protocol(format!("control frame {kind} too short"));
            let decoded = match kind {
                SYN_STREAM => {
                    if frame.remaining() < 10 {
                        return Err(short());
                    }
                    let stream_id = frame.get_u32() & 0x7fff_ffff;
                    let associated_to = frame.get_u32() & 0x7fff_ffff;
                    let priority = frame.get_u8() >> 5;
                    frame.advance(1);
                    Frame::SynStream {
                        stream_id,
                        associated_to,
                        priority,
                        flags,
                        headers: codec.decode(&frame)?,
                    }
                }
                SYN_REPLY | HEADERS => {
                    if frame.remaining() < 4 {
                        return Err(short());
                    }
                    let stream_id = frame.get_u32() & 0x7fff_ffff;
                    let headers = codec.decode(&frame)?;
                    if kind == SYN_REPLY {
                        Frame::SynReply {
                            stream_id,
                            flags,
                            headers,
                        }
                    } else {
                        Frame::Headers {
                            stream_id,
                            flags,
                            headers,
                        }
                    }
                }
                RST_STREAM | GOAWAY | WINDOW_UPDATE => {
                    if frame.remaining() < 8 {
                        return Err(short());
                    }
                    let id = frame.get_u32() & 0x7fff_ffff;
                    let value = frame.get_u32();
                    match kind {
                        RST_STREAM => Frame::RstStream {
                            stream_id: id,
                            status: value,
                        },
                        GOAWAY => Frame::GoAway {
                            last_good_stream_id: id,
                            status: value,
                        },
                        _ => Frame::WindowUpdate {
                            stream_id: id,
                            delta: value & 0x7fff_ffff,
                        },
                    }
                }
                SETTINGS => {
                    if frame.remaining() < 4 {
                        return Err(short());
                    }
                    let count = frame.get_u32() as usize;
                    if frame.remaining() < count * 8 {
                        return Err(short());
                    }
                    let entries = (0..count)
                        .map(|_| (frame.get_u32() & 0x00ff_ffff, frame.get_u32()))
                        .collect();
                    Frame::Settings { flags, entries }
                }
                PING => {
                    if frame.remaining() < 4 {
                        return Err(short());
                    }
                    Frame::Ping {
                        id: frame.get_u32(),
                    }
                }
                _ => continue,
            };
            return Ok(Some(decoded));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_has_the_protocols_length_and_checksum() {
        let d = dictionary();
        assert_eq!(d.len(), 1423);
        assert_eq!(&d[..11], b"\0\0\0\x07options");
        assert!(d.ends_with(b",*,enq=0."));
    }

    #[test]
    fn frames_round_trip_with_header_compression_across_frames() {
        let (mut sender, mut receiver) = (HeaderCodec::new(), HeaderCodec::new());
        let frames = vec![
            Frame::SynStream {
                stream_id: 1,
                associated_to: 0,
                priority: 0,
                flags: 0,
                headers: vec![("streamtype".into(), "error".into())],
            },
            Frame::SynStream {
                stream_id: 3,
                associated_to: 0,
                priority: 0,
                flags: FLAG_FIN,
                headers: vec![
                    ("streamtype".into(), "stdin".into()),
                    ("port".into(), "8080".into()),
                ],
            },
            Frame::SynReply {
                stream_id: 3,
                flags: 0,
                headers: vec![],
            },
            Frame::Data {
                stream_id: 3,
                flags: FLAG_FIN,
                data: Bytes::from_static(b"hello"),
            },
            Frame::Ping { id: 7 },
            Frame::RstStream {
                stream_id: 5,
                status: 5,
            },
            Frame::WindowUpdate {
                stream_id: 1,
                delta: 65536,
            },
            Frame::Settings {
                flags: 0,
                entries: vec![(7, 65536)],
            },
            Frame::GoAway {
                last_good_stream_id: 3,
                status: 0,
            },
        ];
        let mut wire = BytesMut::new();
        for f in &frames {
            f.encode(&mut sender, &mut wire).unwrap();
        }
        // Arriving a byte at a time changes nothing.
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for b in wire.iter() {
            buf.put_u8(*b);
            while let Some(f) = Frame::decode(&mut buf, &mut receiver).unwrap() {
                got.push(f);
            }
        }
        assert_eq!(got, frames);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut codec = HeaderCodec::new();
        let mut buf = BytesMut::from(&[0x80, 0x02, 0, 1, 0, 0, 0, 0][..]);
        assert!(Frame::decode(&mut buf, &mut codec).is_err());
        let mut buf = BytesMut::from(
            &[
                0x80, 0x03, 0, 1, 0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 2,
            ][..],
        );
        assert!(Frame::decode(&mut buf, &mut codec).is_err());
    }
}
