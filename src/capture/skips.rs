//! Notes of bytes that are in no frame: why (a gap, a partial frame, a bad
//! size, nothing that starts a frame, the memory cap), where in which
//! stream, and how many. Every byte of a Kafka connection's streams is in a
//! frame or in one of these.

use super::framing::MAX_FRAME;
use crate::decode::Direction;
use std::net::SocketAddr;

/// Why bytes of a stream are in no frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// The capture never saw these bytes (a hole in the TCP stream).
    Gap,
    /// The first bytes of a direction the capture joined mid-stream (no
    /// SYN), up to its first request that decodes: the end of a frame that
    /// started before the capture did.
    MidStream,
    /// The plaintext of TLS records that did not open (damaged; a
    /// `TlsEvent::Skipped` note says which): their most it could be.
    NotOpened,
    /// The start of a frame whose rest never came; `declared` is the frame's
    /// whole length (size prefix included), when its size prefix came.
    Partial {
        declared: Option<u64>,
        cut_by: StreamCut,
    },
    /// A size prefix no frame has (negative, or over [`MAX_FRAME`]), and the
    /// bytes after it up to the next frame.
    BadSize(i32),
    /// Bytes passed over while looking for the next frame after a gap: no
    /// frame starts in them.
    NoFrame,
    /// A partial frame dropped to keep reassembly under its memory cap, and
    /// the rest of it as it came.
    MemoryCap { declared: Option<u64> },
}

/// What cut a partial frame short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamCut {
    /// Data after it never arrived.
    Gap,
    /// The connection was closed (FIN or RST).
    Closed,
    /// The capture ended.
    EndOfCapture,
    /// Decryption of the TLS connection carrying the stream stopped (a
    /// `TlsEvent::Stopped` note says why).
    Decryption,
}

impl SkipReason {
    /// A short name for scripts (the `reason` of a JSON skip record).
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::Gap => "gap",
            SkipReason::NotOpened => "tls_record_not_opened",
            SkipReason::MidStream => "mid_stream",
            SkipReason::Partial { .. } => "partial_frame",
            SkipReason::BadSize(_) => "bad_size",
            SkipReason::NoFrame => "no_frame",
            SkipReason::MemoryCap { .. } => "memory_cap",
        }
    }

    /// The whole length a partial or dropped frame declared, when known.
    pub fn declared(&self) -> Option<u64> {
        match *self {
            SkipReason::Partial { declared, .. } | SkipReason::MemoryCap { declared } => declared,
            _ => None,
        }
    }

    /// What happened, in words.
    pub fn describe(&self) -> String {
        let frame = |declared: Option<u64>| match declared {
            Some(n) => format!("a partial frame (it declares {n} bytes)"),
            None => "the start of a frame (before its whole size prefix)".to_string(),
        };
        match *self {
            SkipReason::Gap => "never captured (missing from the TCP stream)".into(),
            SkipReason::MidStream => "the capture joined the connection mid-stream: the end of a frame that started before it (up to the first request that decodes)".into(),
            SkipReason::NotOpened => "held in TLS records that did not open (damaged); at most this many bytes of plaintext".into(),
            SkipReason::Partial { declared, cut_by } => {
                let by = match cut_by {
                    StreamCut::Gap => "a gap",
                    StreamCut::Closed => "the end of the connection (FIN or RST)",
                    StreamCut::EndOfCapture => "the end of the capture",
                    StreamCut::Decryption => "the end of what TLS decryption gave",
                };
                format!("{}, cut short by {by}", frame(declared))
            }
            SkipReason::BadSize(size) if size < 0 => {
                format!("frame size {size} is negative; passed over up to the next frame")
            }
            SkipReason::BadSize(size) => format!(
                "frame size {size} is over the {} MiB limit; passed over up to the next frame",
                MAX_FRAME >> 20
            ),
            SkipReason::NoFrame => {
                "no frame starts in these bytes (passed over resyncing after a gap)".into()
            }
            SkipReason::MemoryCap { declared } => format!(
                "{}, dropped: the reassembly memory cap was reached",
                frame(declared)
            ),
        }
    }
}

/// Bytes of a stream in no frame, and why.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// When the first of them arrived (or was found missing).
    pub timestamp: f64,
    pub conn: usize,
    pub from: SocketAddr,
    pub to: SocketAddr,
    pub direction: Direction,
    /// Offset in this direction's byte stream (0 is the byte after the SYN, or
    /// the first byte captured).
    pub offset: u64,
    pub bytes: u64,
    pub reason: SkipReason,
}

/// Skipped bytes: a stretch of the stream with one reason.
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    pub(super) offset: u64,
    pub(super) bytes: u64,
    pub(super) reason: SkipReason,
    pub(super) timestamp: f64,
}
