//! Candidate frame starts, for finding the client side of a connection and
//! for resyncing after skipped bytes: a header check at each position, then
//! (for a whole candidate) a values-only decode in place that never touches
//! record data, under a decode budget so that the work stays linear.

use super::awaiting::Outstanding;
use super::framing::{complete_prefix, Effort, MAX_FRAME};
use super::skips::SkipReason;
use crate::decode::tape::Values;
use crate::decode::values::{self};
use crate::decode::{decode_frame, DecodeOptions, Direction};
use crate::protocol::headers::API_VERSIONS_KEY;
use crate::schema::{Catalogue, MessageKind};
use bytes::Bytes;
use std::collections::VecDeque;

/// While resyncing, plausible frame starts whose frame has not all arrived wait
/// to be checked when it has; beyond this many one is given up (see
/// `Resync::wait_for`), so bytes full of plausible headers cannot grow the list.
const MAX_WAITING: usize = 16;

/// Bytes resync may decode in candidate frames (as far as each decoding
/// reached): this many per position looked at, plus a start. Candidates
/// complete when first looked at are no longer than the data that just
/// arrived, so without it a stream of overlapping plausible headers could
/// cost up to a segment's length per byte.
const RESYNC_DECODE_PER_POSITION: u64 = 4;
const RESYNC_DECODE_START: u64 = 4 << 20;

/// Looking for the next frame start after skipped bytes, each position once.
pub(super) struct Resync {
    /// What the bytes passed over are noted as.
    pub(super) reason: SkipReason,
    /// Stream offset of the next position to look at.
    pub(super) next: u64,
    /// Plausible starts whose frame has not all arrived: (start, end) stream offsets, in order.
    pub(super) waiting: VecDeque<(u64, u64)>,
    /// Bytes of candidates decoded and positions looked at (the decode budget).
    pub(super) decoded: u64,
    pub(super) looked: u64,
}

impl Resync {
    pub(super) fn new(next: u64, reason: SkipReason) -> Resync {
        Resync {
            reason,
            next,
            waiting: VecDeque::new(),
            decoded: 0,
            looked: 0,
        }
    }

    /// Keep a partial candidate until its frame has arrived. With the list full,
    /// the first candidate stays (after a gap the next frame is most often the
    /// first plausible start); of the others, the one that would complete last
    /// goes (garbage tends to claim large sizes).
    pub(super) fn wait_for(&mut self, start: u64, end: u64) {
        if self.waiting.len() >= MAX_WAITING {
            let Some((farthest, &(_, far_end))) = self
                .waiting
                .iter()
                .enumerate()
                .skip(1)
                .max_by_key(|(_, w)| w.1)
            else {
                return;
            };
            if end >= far_end {
                return;
            }
            self.waiting.remove(farthest);
        }
        self.waiting.push_back((start, end));
    }

    pub(super) fn may_decode(&self) -> bool {
        self.decoded <= RESYNC_DECODE_START + RESYNC_DECODE_PER_POSITION * self.looked
    }
}

/// What the bytes at a position say about a frame starting there.
pub(super) enum Header {
    /// Too few bytes to tell.
    Short,
    /// No frame starts here.
    No,
    /// A plausible header of a frame this long (size prefix included), decoded with these options.
    Frame(usize, DecodeOptions),
}

/// Could a request start here? A sane size, a known API and version, and a
/// client id that fits.
pub(super) fn request_header(cat: &Catalogue, b: &[u8]) -> Header {
    let Some(h) = b.get(..14) else {
        return Header::Short;
    };
    let size = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let key = i16::from_be_bytes([h[4], h[5]]);
    let ver = i16::from_be_bytes([h[6], h[7]]);
    let client_id = i16::from_be_bytes([h[12], h[13]]);
    if size < 10
        || size as usize > MAX_FRAME
        || cat.message(MessageKind::Request, key, ver, None).is_none()
    {
        return Header::No;
    }
    // Header v0 (ControlledShutdown v0) has no client id; otherwise it must fit.
    let header_v0 = key == 7 && ver == 0;
    if !header_v0 && (client_id < -1 || i32::from(client_id) > size - 10) {
        return Header::No;
    }
    Header::Frame(4 + size as usize, DecodeOptions::default())
}

/// A request's shape, looser than [`request_header`]: a sane size, an API
/// key the catalogue knows, a version up to [`NEWER_VERSIONS`] past the
/// newest it knows (a newer client's ApiVersions), and a client id that
/// fits. Its frame length (size prefix included) and correlation id.
pub(super) fn request_shape(cat: &Catalogue, b: &[u8]) -> Option<(usize, i32)> {
    let h = b.get(..14)?;
    let size = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let key = i16::from_be_bytes([h[4], h[5]]);
    let ver = i16::from_be_bytes([h[6], h[7]]);
    let corr = i32::from_be_bytes([h[8], h[9], h[10], h[11]]);
    let client_id = i16::from_be_bytes([h[12], h[13]]);
    if size < 10 || size as usize > MAX_FRAME || ver < 0 {
        return None;
    }
    let newest = *cat.versions(MessageKind::Request, key, None).last()?;
    if i32::from(ver) > i32::from(newest) + NEWER_VERSIONS {
        return None;
    }
    let header_v0 = key == 7 && ver == 0;
    if !header_v0 && (client_id < -1 || i32::from(client_id) > size - 10) {
        return None;
    }
    Some((4 + size as usize, corr))
}

/// Versions past the newest the catalogue knows that a request may carry
/// and still be taken for Kafka (and decoded as far as it goes).
const NEWER_VERSIONS: i32 = 8;

/// Does a direction start with a response to the request with this
/// correlation id (a sane size, then the id)?
pub(super) fn answers(b: &[u8], corr: i32) -> Option<bool> {
    let h = b.get(..8)?;
    let size = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    Some(
        size >= 4
            && size as usize <= MAX_FRAME
            && i32::from_be_bytes([h[4], h[5], h[6], h[7]]) == corr,
    )
}

/// Positions of a direction's first bytes looked at for its first request
/// when the capture joined the connection mid-stream, and whole candidates
/// decoded there; past either, the direction is taken for no Kafka client.
pub(super) const JOIN_WINDOW: usize = 64 << 10;
const JOIN_DECODES: u32 = 256;

/// Where the first request starts in a direction the capture joined
/// mid-stream.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Join {
    /// A request header here whose whole frame decodes cleanly (or a frame
    /// too long to wait for in the window: resync decodes it once it has
    /// all arrived).
    At(usize),
    /// Nothing yet: look again when more has arrived.
    Wait,
    /// No request starts in the window.
    No,
}

/// The search for a direction's first request, each position looked at
/// once however the bytes arrive: the next position, and plausible headers
/// whose frames have not all arrived (start, end).
#[derive(Default)]
pub(super) struct JoinScan {
    next: usize,
    waiting: Vec<(usize, usize)>,
    decodes: u32,
}

impl JoinScan {
    /// Look for the first request in `buf` (which only grows): the first
    /// request header whose whole frame decodes cleanly, as resync finds
    /// frames after a gap.
    pub(super) fn find(&mut self, cat: &Catalogue, buf: &[u8], effort: &mut Effort) -> Join {
        let mut clean = |frame: &[u8], opts, decodes: &mut u32| {
            *decodes += 1;
            decodes_cleanly(cat, frame, opts, effort).0
        };
        // Waiting candidates that have now arrived, first start first.
        let mut i = 0;
        while i < self.waiting.len() {
            let (start, end) = self.waiting[i];
            if end > buf.len() {
                i += 1;
                continue;
            }
            self.waiting.remove(i);
            if let Header::Frame(_, opts) = request_header(cat, &buf[start..]) {
                if self.decodes < JOIN_DECODES && clean(&buf[start..end], opts, &mut self.decodes) {
                    return Join::At(start);
                }
            }
        }
        let end = buf.len().min(JOIN_WINDOW);
        while self.next + 14 <= end && self.decodes < JOIN_DECODES {
            let p = self.next;
            self.next += 1;
            if let Header::Frame(len, opts) = request_header(cat, &buf[p..]) {
                if buf.len() - p < len {
                    if self.waiting.len() < MAX_WAITING {
                        self.waiting.push((p, p + len));
                    }
                } else if clean(&buf[p..p + len], opts, &mut self.decodes) {
                    return Join::At(p);
                }
            }
        }
        match self.waiting.first() {
            // A frame starting the stream (the capture joined between
            // frames), or one too long to wait for in the window.
            Some(&(at, _)) if at == 0 || buf.len() >= JOIN_WINDOW => Join::At(at),
            _ if self.next + 14 <= JOIN_WINDOW && self.decodes < JOIN_DECODES => Join::Wait,
            Some(_) => Join::Wait,
            None => Join::No,
        }
    }
}

/// Could a response start here? A sane size and the correlation id of a request awaiting one.
fn response_header(b: &[u8], outstanding: &Outstanding) -> Header {
    let Some(h) = b.get(..8) else {
        return Header::Short;
    };
    let size = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let corr = i32::from_be_bytes([h[4], h[5], h[6], h[7]]);
    if size < 4 || size as usize > MAX_FRAME {
        return Header::No;
    }
    let Some(&(key, ver)) = outstanding.get(&corr) else {
        return Header::No;
    };
    Header::Frame(
        4 + size as usize,
        DecodeOptions {
            direction: Some(Direction::Response),
            api_key: Some(key),
            api_version: Some(ver),
            ..Default::default()
        },
    )
}

pub(super) fn header_at(
    cat: &Catalogue,
    b: &[u8],
    is_request: bool,
    outstanding: &Outstanding,
) -> Header {
    if is_request {
        request_header(cat, b)
    } else {
        response_header(b, outstanding)
    }
}

/// Bytes of a candidate copied for its header check; a longer header (a long
/// client id) is checked on a copy of the whole frame.
const HEADER_COPY: usize = 512;

/// Does a whole candidate frame decode cleanly? A clean decode keeps resync
/// from locking onto bytes inside another frame. Its header is decoded (header
/// only, from a copy of its first bytes), then its body's values onto a plain
/// tape, in place: record batches stay bytes, never checked or decompressed,
/// and nothing is annotated. Counts the bytes the decoding reached, which
/// stops at the first error.
pub(super) fn decodes_cleanly(
    cat: &Catalogue,
    frame: &[u8],
    opts: DecodeOptions,
    effort: &mut Effort,
) -> (bool, u64) {
    effort.candidate_decodes += 1;
    let header_of = |bytes: Bytes| {
        decode_frame(
            cat,
            bytes,
            0,
            &DecodeOptions {
                header_only: true,
                ..opts.clone()
            },
        )
    };
    let mut head = header_of(complete_prefix(&frame[..frame.len().min(HEADER_COPY)]));
    if head.error.is_some() && frame.len() > HEADER_COPY {
        head = header_of(Bytes::copy_from_slice(frame));
    }
    let reached_header = head.root.children.last().map_or(0, |h| h.end());
    effort.candidate_bytes += reached_header as u64;
    let (None, Some(key), Some(version), Some(header)) = (
        &head.error,
        head.api_key,
        head.api_version,
        head.root.children.last(),
    ) else {
        return (false, reached_header as u64);
    };
    let kind = match head.direction {
        Direction::Request => MessageKind::Request,
        Direction::Response => MessageKind::Response,
    };
    let mut reached = reached_header;
    let mut body_clean = |version: i16| {
        cat.message(kind, key, version, None).is_some_and(|spec| {
            let (_, end, res) = values::decode_message(
                frame,
                header.end(),
                &spec.plan(version),
                &mut Values::default(),
            );
            reached += end - header.end();
            res.is_ok() && end == frame.len()
        })
    };
    // A broker that does not support the requested ApiVersions version answers with a v0 body.
    let clean = body_clean(version)
        || (kind == MessageKind::Response
            && key == API_VERSIONS_KEY
            && version > 0
            && body_clean(0));
    effort.candidate_bytes += (reached - reached_header) as u64;
    (clean, reached as u64)
}
