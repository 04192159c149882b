//! SPDY/3.1, as Kubernetes uses it for the streams of `exec`, `attach` and `port-forward`
//! between API servers, kubelets and clients: frames with zlib-compressed header blocks
//! ([`frame`]) and a session multiplexing streams over one upgraded connection
//! ([`session`]). No flow control is done, as the Kubernetes peers do none.

pub mod frame;
pub mod session;

pub use frame::{Frame, Headers};
pub use session::{Session, Stream, StreamSender};

/// What can go wrong in a SPDY session.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The peer broke the protocol.
    #[error("SPDY protocol error: {0}")]
    Protocol(String),
    /// A header block could not be (de)compressed.
    #[error("SPDY header compression: {0}")]
    Compression(String),
    /// The session has ended.
    #[error("the SPDY session is closed")]
    Closed,
    /// The peer refused (reset) a stream, or the session ended before it answered.
    #[error("stream {0} was refused")]
    Refused(u32),
}
