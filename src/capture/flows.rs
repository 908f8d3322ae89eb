//! Connections: TCP reassembly per direction, Kafka frames cut from each byte
//! stream, the client side found by plausibility (or `--port`), responses paired
//! with requests by correlation id, and resync after gaps.
//!
//! Nothing is lost silently: every byte of a Kafka connection's streams ends up
//! in a frame handed on or in a skip note ([`Skipped`]: where, how many bytes,
//! why). Reassembly holds only bytes that arrived and are not yet handed on,
//! frees them when a frame completes or the connection closes, and stays under
//! a cap for the whole capture ([`DEFAULT_MAX_REASSEMBLY`]).

use super::awaiting::Outstanding;
use super::candidates::{
    answers, decodes_cleanly, header_at, request_header, request_shape, Header, Join, JoinScan,
    Resync,
};
use super::framing::{complete_prefix, Effort, MAX_FRAME};
use super::link::Segment;
use super::sasl::Sasl;
use super::skips::Run;
pub use super::skips::{SkipReason, Skipped, StreamCut};
use super::tcp::{Chunk, HalfStream};
use super::tls::detect::{stream_start, Start};
use super::tls::session::{Halt, TlsConn};
use super::tls::{TlsEvent, TlsKeys, TlsNote, TlsProblem};
use crate::decode::{decode_frame, DecodeOptions, Direction, FrameKind};
use crate::schema::Catalogue;
use bytes::{Buf, Bytes, BytesMut};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::{BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;

/// Default cap on what reassembly holds at once, all connections together
/// (partial frames, out-of-order segments, prefixes of cut frames). Over it,
/// the partial frames held longest are dropped, each with a note.
pub const DEFAULT_MAX_REASSEMBLY: usize = 256 << 20;

/// Frames handed out share the stream buffer's allocation, and so does the rest
/// of the stream after them: once this many bytes were split off, a short rest
/// moves to a buffer of its own, so an idle connection never pins a large one.
const REHOME_AFTER: usize = 64 << 10;
const REHOME_BELOW: usize = 4 << 10;

/// Skip runs of a direction whose connection is not yet known to be Kafka wait
/// to be reported; beyond this many, a new one joins the last (they are
/// contiguous: nothing is handed on before the client side is known).
const MAX_DEFERRED_RUNS: usize = 8;

/// How many paired responses a connection remembers, so that a second
/// response to one request (a broker's bug, or `kwire proxy`'s `duplicate`
/// rule) is decoded and named as such: a duplicate comes right after the
/// first, so a few are enough.
const ANSWERED_KEPT: usize = 16;

/// A connection's latest paired responses ([`ANSWERED_KEPT`] at most,
/// oldest first), to tell a second answer to one request.
#[derive(Default)]
struct Answered(VecDeque<AnsweredId>);

/// A paired response: its correlation id, (api key, version), frame index.
struct AnsweredId {
    corr: i32,
    api: (i16, i16),
    frame: usize,
}

impl Answered {
    /// Response `frame` answered the request under `corr`, of `api`.
    fn paired(&mut self, corr: i32, api: (i16, i16), frame: usize) {
        if self.0.len() == ANSWERED_KEPT {
            self.0.pop_front();
        }
        self.0.push_back(AnsweredId { corr, api, frame });
    }

    /// The latest answer under `corr`, which a response no request awaits repeats.
    fn latest(&self, corr: i32) -> Option<&AnsweredId> {
        self.0.iter().rev().find(|a| a.corr == corr)
    }
}

/// One Kafka frame found in a capture.
#[derive(Clone, Debug)]
pub struct CapturedFrame {
    pub index: usize,
    pub timestamp: f64,
    pub conn: usize,
    pub from: SocketAddr,
    pub to: SocketAddr,
    pub direction: Direction,
    /// A Kafka frame, or a SASL token after SaslHandshake v0 (`capture::sasl`),
    /// which has no correlation id, api key or version.
    pub kind: FrameKind,
    pub bytes: Bytes,
    pub correlation_id: Option<i32>,
    /// For requests from the header; for responses from the paired request.
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    /// Bytes just before this frame are in no frame (a [`Skipped`] note says
    /// which and why); it was found by resyncing or after a dropped frame.
    pub after_gap: bool,
    /// Offset of the frame's first byte in this direction's byte stream (as in [`Skipped::offset`]).
    pub offset: u64,
    /// The frame's whole length, size prefix included. Equal to `bytes.len()`
    /// unless bodies are cut (`Flows::cut_bodies`): then `bytes` holds only
    /// a prefix that covers the header (see `complete_prefix`).
    pub len: usize,
    /// The comment of the packet that carried its first byte (pcapng
    /// `opt_comment`): what `kwire proxy --inject` did to it, or a comment a
    /// user wrote in Wireshark.
    pub comment: Option<Arc<String>>,
    /// A response under a correlation id its connection answered already:
    /// the index of the frame that answered it first. Its API and version
    /// are that exchange's, so it decodes; no request is waiting for it.
    pub repeats: Option<usize>,
}

impl CapturedFrame {
    /// The client's and the broker's addresses, whichever way it went.
    pub(crate) fn client_and_server(&self) -> (SocketAddr, SocketAddr) {
        match self.direction {
            Direction::Request => (self.from, self.to),
            Direction::Response => (self.to, self.from),
        }
    }

    /// Whether only a prefix of the frame was kept.
    pub(crate) fn is_cut(&self) -> bool {
        self.bytes.len() < self.len
    }
}

/// What a capture yields: frames, skip notes and notes on TLS connections,
/// in stream order per direction.
#[derive(Clone, Debug)]
pub enum Captured {
    Frame(CapturedFrame),
    Skipped(Skipped),
    /// A TLS connection: where decryption of a direction stopped, and each
    /// connection's summary when it ends (`capture::tls`).
    Tls(TlsNote),
    /// A Kafka connection opened (its SYN) or closed (a FIN or RST, and
    /// which side sent it): [`ConnEvent`].
    Conn(ConnEvent),
}

/// Which end of a connection did something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Broker,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Broker => "broker",
        }
    }
}

/// What happened to a connection at the TCP level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnEventKind {
    /// The client's SYN: the connection started inside the capture.
    Open,
    /// A FIN: that side will send no more.
    Fin(Side),
    /// An RST: that side aborted the connection.
    Reset(Side),
}

impl ConnEventKind {
    /// The TCP flag's name, as listings show it.
    pub fn flag(self) -> &'static str {
        match self {
            ConnEventKind::Open => "SYN",
            ConnEventKind::Fin(_) => "FIN",
            ConnEventKind::Reset(_) => "RST",
        }
    }

    /// The side that sent it (the client for a SYN).
    pub fn side(self) -> Side {
        match self {
            ConnEventKind::Open => Side::Client,
            ConnEventKind::Fin(s) | ConnEventKind::Reset(s) => s,
        }
    }
}

/// A connection's open or close, handed on in capture order with its frames.
/// Only connections known to carry Kafka get events: the open is handed on
/// just before the connection's first frame (with the SYN's time), a close
/// when it is seen (once per side for FIN, once for RST).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConnEvent {
    pub conn: usize,
    pub timestamp: f64,
    pub client: SocketAddr,
    pub broker: SocketAddr,
    pub kind: ConnEventKind,
}

/// Cutting the bodies of large frames (listings need only their header).
#[derive(Clone, Debug)]
pub struct CutBodies {
    /// Frames longer than this (size prefix included) are cut...
    pub above: usize,
    /// ...when their header decodes (header only, as a listing decodes it, with
    /// this release pinned) within the bytes that came so far. Responses are cut
    /// only when their request is known (a guess needs the body). One case is not
    /// covered: a request reusing the correlation id of a response whose body is
    /// being skipped pairs that response with another API than its header was
    /// checked against.
    pub release: Option<String>,
}

/// A large frame being skipped: where it starts, its prefix, and how much of it
/// is still to come.
struct Cutting {
    start: u64,
    prefix: Bytes,
    total: usize,
    remaining: usize,
}

#[derive(Default)]
struct Half {
    tcp: HalfStream,
    /// Stream bytes not yet cut into frames; frames are split off without copying.
    buf: BytesMut,
    /// Stream offset of `buf[0]`: every byte before it is in a frame handed on,
    /// in the frame being cut, or in a skip run.
    at: u64,
    /// Bytes split off `buf` since it last moved to a buffer of its own.
    split: usize,
    /// A large frame whose body is being skipped (`CutBodies`).
    cutting: Option<Cutting>,
    /// Looking for the next frame start.
    resync: Option<Resync>,
    /// Skipped bytes came just before the next frame.
    gap_pending: bool,
    /// Skipped bytes, growing while they go on.
    run: Option<Run>,
    /// Runs that ended, to be reported (they wait while the client side is unknown).
    ended: Vec<Run>,
    /// The rest of a frame dropped at the memory cap, passed over as it comes:
    /// bytes still to come, and the reason they are noted with.
    discarding: Option<(u64, SkipReason)>,
    /// Client detection: the bytes at `buf[0]` are not a request (or, for a
    /// connection joined mid-stream, no request starts in the first bytes).
    not_request: bool,
    /// Client detection mid-stream: the search for the first request, while it goes on.
    join: Option<Box<JoinScan>>,
    /// What the memory cap counts for this half, and since when it holds
    /// anything (the clock of `Flows::tick`).
    counted: usize,
    since: Option<u64>,
    /// A frame was handed on: what is held now is newer than `since`.
    restamp: bool,
    /// While the connection's client side is not known, when each packet's
    /// bytes came: where they end in the stream, and the packet's time. A
    /// frame cut once it is known keeps the time of the packet that
    /// completed it, not the time of the packet that decided.
    stamps: VecDeque<(u64, f64)>,
}

/// Packet comments waiting for their frames: a capture whose every packet
/// has one (a Wireshark user's notes) keeps only the last.
const MAX_COMMENTS: usize = 256;

/// The comment of the packet of this connection's half that carried the
/// first byte of the frame at `offset` (kept for the frames after it that
/// start in the same packet); the half's comments on packets that ended
/// before it are dropped (their bytes are in no frame, or in frames
/// handed on).
fn comment_within(
    comments: &mut VecDeque<(usize, usize, std::ops::Range<u64>, Arc<String>)>,
    half: (usize, usize),
    offset: u64,
) -> Option<Arc<String>> {
    if comments.is_empty() {
        return None;
    }
    let mut found = None;
    comments.retain(|(ci, hi, bytes, text)| {
        if (*ci, *hi) != half {
            return true;
        }
        // Every frame that starts in the packet gets its comment.
        if bytes.contains(&offset) && found.is_none() {
            found = Some(text.clone());
        }
        bytes.end > offset
    });
    found
}

impl Half {
    /// The time of the packet that brought the stream to `end`, when it came
    /// while the client side was not known ([`Half::stamps`]); the stamps of
    /// packets before it are let go.
    fn completed_at(&mut self, end: u64) -> Option<f64> {
        while let Some(&(to, at)) = self.stamps.front() {
            if to >= end {
                if to == end {
                    self.stamps.pop_front();
                }
                return Some(at);
            }
            self.stamps.pop_front();
        }
        None
    }

    /// Memory this direction holds: buffer capacity, held-back segments, a cut frame's prefix.
    fn footprint(&self) -> usize {
        self.buf.capacity()
            + self.tcp.held_bytes()
            + self.cutting.as_ref().map_or(0, |c| c.prefix.len())
            + self.stamps.len() * std::mem::size_of::<(u64, f64)>()
    }

    /// The whole length the frame at `buf[0]` declares, when its size prefix is there.
    fn declared(&self) -> Option<u64> {
        let b = self.buf.get(..4)?;
        u64::try_from(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok()
            .map(|size| size + 4)
    }

    /// Note `n` bytes from stream offset `offset` as skipped.
    fn note(&mut self, offset: u64, n: u64, reason: SkipReason, timestamp: f64) {
        if n == 0 {
            return;
        }
        self.gap_pending = true;
        if let Some(r) = &mut self.run {
            if r.reason == reason && r.offset + r.bytes == offset {
                r.bytes += n;
                return;
            }
        }
        self.end_run();
        self.run = Some(Run {
            offset,
            bytes: n,
            reason,
            timestamp,
        });
    }

    /// Pass over the first `n` bytes of `buf`.
    fn skip(&mut self, n: usize, reason: SkipReason, timestamp: f64) {
        let n = n.min(self.buf.len());
        self.buf.advance(n);
        self.note(self.at, n as u64, reason, timestamp);
        self.at += n as u64;
    }

    fn end_run(&mut self) {
        let Some(r) = self.run.take() else { return };
        let full = self.ended.len() >= MAX_DEFERRED_RUNS;
        match self.ended.last_mut() {
            Some(last) if full && last.offset + last.bytes == r.offset => last.bytes += r.bytes,
            _ => self.ended.push(r),
        }
    }

    /// Give up everything held (`cut_by` says why): the frame being cut, a
    /// partial frame, or what resync had not passed over yet. Frees the buffer.
    /// Whether anything was given up.
    fn give_up(&mut self, cut_by: StreamCut, timestamp: f64) -> bool {
        let held = self.cutting.is_some() || self.discarding.is_some() || !self.buf.is_empty();
        if let Some(c) = self.cutting.take() {
            self.note(
                c.start,
                self.at - c.start,
                SkipReason::Partial {
                    declared: Some(c.total as u64),
                    cut_by,
                },
                timestamp,
            );
        }
        self.discarding = None;
        if let Some(r) = self.resync.take() {
            // Before the first waiting candidate no frame starts; from it on, a frame may have been cut short.
            let end = self.at + self.buf.len() as u64;
            let first = r.waiting.front().copied();
            let passed = first.map_or(end, |w| w.0).saturating_sub(self.at);
            self.skip(passed as usize, r.reason, timestamp);
            let declared = first.map(|(start, end)| end - start);
            self.skip(
                self.buf.len(),
                SkipReason::Partial { declared, cut_by },
                timestamp,
            );
        } else if !self.buf.is_empty() {
            let declared = self.declared();
            self.skip(
                self.buf.len(),
                SkipReason::Partial { declared, cut_by },
                timestamp,
            );
        }
        self.buf = BytesMut::new();
        self.split = 0;
        held
    }
}

struct Conn {
    id: usize,
    ends: [SocketAddr; 2],
    halves: [Half; 2],
    /// Index of the half that carries requests, once known.
    client: Option<usize>,
    not_kafka: bool,
    /// Correlation id → (api key, version) of requests awaiting a response.
    outstanding: Outstanding,
    /// The latest responses paired: a second response under an answered
    /// id is read as that API. Boxed when first needed: a capture may hold
    /// thousands of connections that never see a response
    /// (`tests/capture_budgets.rs`).
    answered: Option<Box<Answered>>,
    /// SASL authentication: whether frames are tokens.
    sasl: Sasl,
    /// Whether the connection is TLS (decided by its first bytes).
    tls: Tls,
    /// When the client's SYN was seen, if it was.
    syn_at: Option<f64>,
    /// A frame of this connection was handed on: it is Kafka, and its
    /// events are handed on too.
    announced: bool,
    /// FIN seen from each half, RST seen: each is handed on once.
    fin_seen: [bool; 2],
    rst_seen: bool,
    /// FINs and RSTs that came before a frame was handed on (the half,
    /// whether a reset, the time): handed on after the frames before them,
    /// once the connection is known to be Kafka.
    closes_held: Vec<(usize, bool, f64)>,
    /// The capture has no SYN for the connection: it joined it mid-stream,
    /// and whether the request side's first request was looked for.
    mid_stream: bool,
    joined: bool,
    /// Bytes of a connection taken for no Kafka (not `--port`'s choice).
    unrecognised_bytes: u64,
}

/// A connection's TLS: not known yet, plaintext, or TLS (its records are
/// read by `tls::session`, and the halves' buffers hold the plaintext).
enum Tls {
    Undecided,
    Plain,
    On(Box<TlsConn>),
}

/// What the first bytes of a connection said.
enum TlsStart {
    /// Too few bytes to tell.
    Wait,
    Plain,
    /// TLS: the bytes went to the TLS layer.
    Tls,
}

/// Tracks every connection of a capture and emits frames as they complete.
pub struct Flows<'c> {
    cat: &'c Catalogue,
    /// The comment of the packet about to be pushed (`comment_next`).
    comment_next: Option<Arc<String>>,
    /// Packet comments waiting for the frame that holds their packet's first
    /// byte: connection, half, stream offset, text (at most `MAX_COMMENTS`,
    /// kept here rather than in every half, which most captures never need).
    comments: VecDeque<(usize, usize, std::ops::Range<u64>, Arc<String>)>,
    port: Option<u16>,
    conns: Vec<Conn>,
    index: HashMap<(SocketAddr, SocketAddr), (usize, usize)>,
    /// The connection of the previous segment (most segments follow one of the same connection).
    last: Option<usize>,
    emitted: usize,
    cut: Option<CutBodies>,
    /// Reassembly memory: the cap, what is held now, and the halves holding
    /// anything, longest first: (since, connection, half).
    max_held: usize,
    held: usize,
    holders: BTreeSet<(u64, usize, usize)>,
    /// Segments taken so far (the clock of `Half::since`).
    tick: u64,
    effort: Effort,
    /// Broker endpoints learned from connections whose client side was found:
    /// a connection that starts mid-stream (its first frame a response) to one
    /// of them is Kafka too, its client the other end.
    brokers: HashSet<SocketAddr>,
    /// Session keys: a key log, and the capture's Decryption Secrets Blocks.
    keys: TlsKeys,
    /// Plaintext of the records of one piece of a TLS stream (reused).
    plain: Vec<u8>,
    /// Directions keeping their recent bytes to compare retransmissions with
    /// (at most [`MAX_RECENT_KEPT`]), and segments that repeated bytes
    /// already handed on that no copy was kept of.
    recent_kept: usize,
    uncompared: Uncompared,
}

/// Directions that keep their last [`super::tcp::RECENT`] bytes at once: 16 MiB.
const MAX_RECENT_KEPT: usize = 256;

/// Segments that repeated stream bytes already decoded when no copy of them
/// was kept to compare with (the first such on each direction, or past
/// 256 directions keeping theirs): the first copy was decoded whatever these held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uncompared {
    pub segments: u64,
    pub bytes: u64,
}

/// Does this direction carry the requests? At a connection's start, its
/// first frame must have a request's header and decode cleanly, or, when it
/// does not decode (a version newer than the catalogue's, trailing bytes),
/// have a request's shape that the other direction's first response (its
/// correlation id) or the next request confirms. Joined mid-stream, a
/// request must start in its first bytes and decode cleanly. A verdict on
/// bytes that have all arrived is kept (`not_request`).
fn first_request(
    cat: &Catalogue,
    h: &mut Half,
    other: &Half,
    mid_stream: bool,
    effort: &mut Effort,
) -> bool {
    if h.not_request {
        return false;
    }
    if mid_stream {
        let scan = h.join.get_or_insert_with(Box::default);
        return match scan.find(cat, &h.buf, effort) {
            Join::At(_) => {
                h.join = None;
                true
            }
            Join::Wait => false,
            Join::No => {
                h.join = None;
                h.not_request = true;
                false
            }
        };
    }
    match request_header(cat, &h.buf) {
        Header::Short => return false,
        Header::Frame(len, _) if h.buf.len() < len => return true,
        Header::Frame(len, opts) => {
            if decodes_cleanly(cat, &h.buf[..len], opts, effort).0 {
                return true;
            }
        }
        Header::No => {}
    }
    let Some((len, corr)) = request_shape(cat, &h.buf) else {
        h.not_request = true;
        return false;
    };
    let next = h.buf.get(len..).and_then(|rest| request_shape(cat, rest));
    match (answers(&other.buf, corr), next) {
        (Some(true), _) | (_, Some(_)) => true,
        (Some(false), None) => {
            h.not_request = true;
            false
        }
        (None, None) => false, // wait for the response, or the next request
    }
}

/// Look for the next frame start in what has arrived, each position once.
/// True when `buf` now starts with a whole frame that decodes cleanly (the
/// bytes before it noted as skipped); otherwise only the bytes a frame may
/// still start in are kept.
fn resync(
    cat: &Catalogue,
    half: &mut Half,
    is_request: bool,
    outstanding: &Outstanding,
    timestamp: f64,
    effort: &mut Effort,
) -> bool {
    let Some(r) = half.resync.as_mut() else {
        return true;
    };
    let at = half.at;
    let end = at + half.buf.len() as u64;
    let mut found = None;
    // Waiting candidates whose frame has now arrived, first start first.
    let mut i = 0;
    while i < r.waiting.len() {
        let (start, stop) = r.waiting[i];
        if stop > end {
            i += 1;
            continue;
        }
        r.waiting.remove(i);
        let b = &half.buf[(start - at) as usize..(stop - at) as usize];
        if let Header::Frame(_, opts) = header_at(cat, b, is_request, outstanding) {
            if r.may_decode() {
                let (clean, reached) = decodes_cleanly(cat, b, opts, effort);
                r.decoded += reached;
                if clean {
                    found = Some(start);
                    break;
                }
            }
        }
    }
    // Then the positions not looked at yet.
    let need = if is_request { 14 } else { 8 };
    while found.is_none() && r.next + need <= end {
        let p = r.next;
        r.next += 1;
        r.looked += 1;
        effort.resync_positions += 1;
        let b = &half.buf[(p - at) as usize..];
        if let Header::Frame(len, opts) = header_at(cat, b, is_request, outstanding) {
            if b.len() < len {
                r.wait_for(p, p + len as u64);
            } else if r.may_decode() {
                let (clean, reached) = decodes_cleanly(cat, &b[..len], opts, effort);
                r.decoded += reached;
                if clean {
                    found = Some(p);
                }
            }
        }
    }
    let reason = r.reason;
    match found {
        Some(p) => {
            half.resync = None;
            half.skip((p - at) as usize, reason, timestamp);
            true
        }
        None => {
            let keep_from = r.waiting.front().map_or(r.next, |w| w.0.min(r.next));
            half.skip((keep_from - at) as usize, reason, timestamp);
            false
        }
    }
}

/// A copy of the rest of a stream in an allocation of its own, with room to grow.
fn rehomed(rest: &[u8]) -> BytesMut {
    let mut b = BytesMut::with_capacity((rest.len() * 2).max(REHOME_BELOW));
    b.extend_from_slice(rest);
    b
}

impl<'c> Flows<'c> {
    pub fn new(cat: &'c Catalogue, port: Option<u16>) -> Self {
        Flows {
            comment_next: None,
            comments: VecDeque::new(),
            cat,
            port,
            conns: Vec::new(),
            index: HashMap::new(),
            last: None,
            emitted: 0,
            cut: None,
            max_held: DEFAULT_MAX_REASSEMBLY,
            held: 0,
            holders: BTreeSet::new(),
            tick: 0,
            effort: Effort::default(),
            brokers: HashSet::new(),
            keys: TlsKeys::default(),
            plain: Vec::new(),
            recent_kept: 0,
            uncompared: Uncompared::default(),
        }
    }

    /// Decrypt TLS connections with these keys (a key log).
    pub(crate) fn tls_keys(&mut self, keys: TlsKeys) {
        self.keys = keys;
    }

    /// Secrets found in the capture (a Decryption Secrets Block's key log),
    /// for the TLS sessions whose ServerHello comes after them.
    pub(crate) fn add_secrets(&mut self, key_log: &[u8]) {
        self.keys.embedded.add(key_log);
    }

    /// Hand on large frames cut to a prefix that holds their header, skipping
    /// their bodies instead of buffering them (see `CutBodies`).
    pub fn cut_bodies(&mut self, cut: CutBodies) {
        self.cut = Some(cut);
    }

    /// Cap what reassembly holds at once, all connections together (default
    /// [`DEFAULT_MAX_REASSEMBLY`]).
    pub fn max_reassembly(&mut self, bytes: usize) {
        self.max_held = bytes;
    }

    pub fn connections(&self) -> usize {
        self.conns
            .iter()
            .filter(|c| !c.not_kafka && c.client.is_some())
            .count()
    }

    /// Connections whose bytes were not taken for Kafka (neither side's
    /// first bytes look like requests, no broker port named them), and those
    /// bytes: said once, so that no connection goes without a word. Neither
    /// counts connections `--port` left out, nor TLS ones (their note says).
    pub fn unrecognised(&self) -> (usize, u64) {
        self.conns
            .iter()
            .filter(|c| !matches!(c.tls, Tls::On(_)))
            .map(|c| {
                let held: u64 = if c.client.is_none() && !c.not_kafka {
                    c.halves.iter().map(|h| h.buf.len() as u64).sum()
                } else {
                    0
                };
                c.unrecognised_bytes + held
            })
            .filter(|&bytes| bytes > 0)
            .fold((0, 0), |(n, b), bytes| (n + 1, b + bytes))
    }

    /// What reading the capture has cost so far.
    pub fn effort(&self) -> Effort {
        self.effort
    }

    /// What reassembly holds now (see [`Effort::peak_held`]).
    pub fn held(&self) -> usize {
        self.held
    }

    /// Feed one TCP segment; returns the frames and skip notes it completed.
    pub fn push(&mut self, timestamp: f64, seg: &Segment) -> Vec<Captured> {
        let mut out = Vec::new();
        self.push_into(timestamp, seg, &mut out);
        out
    }

    /// Feed one TCP segment; the frames and skip notes it completed are appended to `out`.
    /// The comment of the packet whose segment is pushed next (pcapng
    /// `opt_comment`), handed on with the frame that starts in it.
    pub fn comment_next(&mut self, comment: Option<&[u8]>) {
        self.comment_next = comment.map(|c| Arc::new(String::from_utf8_lossy(c).into_owned()));
    }

    pub(crate) fn push_into(&mut self, timestamp: f64, seg: &Segment, out: &mut Vec<Captured>) {
        let from = SocketAddr::new(seg.src, seg.src_port);
        let to = SocketAddr::new(seg.dst, seg.dst_port);
        let cached = self.last.and_then(|ci| {
            let ends = &self.conns[ci].ends;
            if ends[0] == from && ends[1] == to {
                Some((ci, 0))
            } else if ends[1] == from && ends[0] == to {
                Some((ci, 1))
            } else {
                None
            }
        });
        let (ci, hi) = match cached.or_else(|| self.index.get(&(from, to)).copied()) {
            Some(x) => x,
            None => {
                let id = self.conns.len();
                self.conns.push(Conn {
                    id,
                    ends: [from, to],
                    halves: [Half::default(), Half::default()],
                    client: None,
                    not_kafka: false,
                    outstanding: Outstanding::default(),
                    answered: None,
                    sasl: Sasl::Off,
                    tls: Tls::Undecided,
                    syn_at: None,
                    announced: false,
                    fin_seen: [false; 2],
                    rst_seen: false,
                    closes_held: Vec::new(),
                    mid_stream: !seg.syn,
                    joined: false,
                    unrecognised_bytes: 0,
                });
                self.index.insert((from, to), (id, 0));
                self.index.insert((to, from), (id, 1));
                (id, 0)
            }
        };
        self.last = Some(ci);
        self.tick += 1;
        if let (Some(p), None) = (self.port, self.conns[ci].client) {
            // `--port`: the side sending to the broker port carries requests.
            if to.port() == p {
                self.conns[ci].client = Some(hi);
            } else if from.port() == p {
                self.conns[ci].client = Some(1 - hi);
            } else {
                self.conns[ci].not_kafka = true;
            }
        }
        if self.conns[ci].not_kafka {
            return;
        }
        if seg.syn && seg.ack.is_none() && self.conns[ci].syn_at.is_none() {
            self.conns[ci].syn_at = Some(timestamp);
        }
        if let Some(ack) = seg.ack {
            // An ack past a hole in the other direction: that data was lost to the capture.
            if self.conns[ci].halves[1 - hi].tcp.holds_data() {
                self.with_stream(ci, 1 - hi, timestamp, out, |tcp, each| {
                    tcp.acknowledged_each(ack, each)
                });
            }
        }
        if !seg.payload.is_empty() && !matches!(self.conns[ci].tls, Tls::On(_)) {
            self.compare_delivered(ci, hi, seg.seq, seg.payload);
            if let Some(text) = self.comment_next.take() {
                if let Some(at) = self.conns[ci].halves[hi].tcp.stream_offset(seg.seq) {
                    if self.comments.len() == MAX_COMMENTS {
                        self.comments.pop_front();
                    }
                    let bytes = at..at + seg.payload.len() as u64;
                    self.comments.push_back((ci, hi, bytes, text));
                }
            }
        }
        self.comment_next = None;
        self.with_stream(ci, hi, timestamp, out, |tcp, each| {
            tcp.push_each(seg.seq, seg.syn, seg.payload, each)
        });
        // FIN ends the sender's stream; RST both (the peer's data is refused from now on).
        let closed: &[usize] = match (seg.fin, seg.rst) {
            (_, true) => &[0, 1],
            (true, false) => std::slice::from_ref(&hi),
            (false, false) => &[],
        };
        for &h in closed {
            self.with_stream(ci, h, timestamp, out, |tcp, each| tcp.flush_each(each));
            self.close_half(ci, h, StreamCut::Closed, timestamp, out);
        }
        if seg.fin || seg.rst {
            self.closed_event(ci, hi, seg.rst, timestamp, out);
        }
        if self.conns[ci].not_kafka {
            for half in &mut self.conns[ci].halves {
                *half = Half {
                    counted: half.counted,
                    since: half.since,
                    ..Half::default()
                };
            }
        }
        self.account(ci, 0);
        self.account(ci, 1);
        self.enforce_cap(timestamp, out);
    }

    /// A FIN or RST from half `hi` of a Kafka connection, handed on once.
    fn closed_event(
        &mut self,
        ci: usize,
        hi: usize,
        rst: bool,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        let conn = &mut self.conns[ci];
        if conn.not_kafka {
            return;
        }
        if !conn.announced {
            conn.closes_held.push((hi, rst, timestamp));
            return;
        }
        if !conn.closes_held.is_empty() {
            // Those held came first.
            self.closes_before(ci, f64::INFINITY, out);
        }
        let conn = &mut self.conns[ci];
        let Some(client) = conn.client else {
            return;
        };
        let side = if hi == client {
            Side::Client
        } else {
            Side::Broker
        };
        let kind = if rst {
            if std::mem::replace(&mut conn.rst_seen, true) {
                return;
            }
            ConnEventKind::Reset(side)
        } else {
            if std::mem::replace(&mut conn.fin_seen[hi], true) || conn.rst_seen {
                return;
            }
            ConnEventKind::Fin(side)
        };
        out.push(Captured::Conn(ConnEvent {
            conn: conn.id,
            timestamp,
            client: conn.ends[client],
            broker: conn.ends[1 - client],
            kind,
        }));
    }

    /// The FINs and RSTs held back until a frame of the connection was handed
    /// on, those before `before` (a time), handed on now.
    fn closes_before(&mut self, ci: usize, before: f64, out: &mut Vec<Captured>) {
        let conn = &mut self.conns[ci];
        if !conn.announced || conn.closes_held.is_empty() {
            return;
        }
        let held = std::mem::take(&mut conn.closes_held);
        let (now, later): (Vec<_>, Vec<_>) = held.into_iter().partition(|c| c.2 <= before);
        self.conns[ci].closes_held = later;
        for (hi, rst, timestamp) in now {
            self.closed_event(ci, hi, rst, timestamp, out);
        }
    }

    /// End of capture: deliver what is held back behind gaps, and note what
    /// can no longer complete.
    pub fn finish(&mut self, timestamp: f64) -> Vec<Captured> {
        let mut out = Vec::new();
        for ci in 0..self.conns.len() {
            for hi in 0..2 {
                self.with_stream(ci, hi, timestamp, &mut out, |tcp, each| {
                    tcp.flush_each(each)
                });
            }
            // Closing half 1 may decide the client side after half 0 was closed undecided.
            for hi in [0, 1, 0] {
                self.close_half(ci, hi, StreamCut::EndOfCapture, timestamp, &mut out);
            }
            self.tls_session(ci, timestamp, &mut out);
            self.closes_before(ci, f64::INFINITY, &mut out);
            self.account(ci, 0);
            self.account(ci, 1);
        }
        out
    }

    /// No more data will come in one direction: cut what frames there are and
    /// give up the rest, which frees its buffer. A direction whose connection is
    /// not yet known to be Kafka keeps its bytes (the other side may decide).
    fn close_half(
        &mut self,
        ci: usize,
        hi: usize,
        cut_by: StreamCut,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        if let Tls::On(t) = &mut self.conns[ci].tls {
            // A record cut short: its note, then the plaintext's end.
            if let Some((offset, problem)) = t.end(hi, cut_by) {
                self.tls_stopped(ci, hi, offset, problem, timestamp, out);
            }
            self.close_plain(ci, hi, cut_by, timestamp, out);
            if let Tls::On(t) = &self.conns[ci].tls {
                if t.ended(0) && t.ended(1) {
                    self.tls_session(ci, timestamp, out);
                }
            }
            return;
        }
        self.close_plain(ci, hi, cut_by, timestamp, out);
        // Its window goes back for another direction to keep.
        if self.conns[ci].halves[hi].tcp.drop_recent() {
            self.recent_kept -= 1;
        }
    }

    /// The plaintext of a direction ends: cut what frames there are and give up the rest.
    fn close_plain(
        &mut self,
        ci: usize,
        hi: usize,
        cut_by: StreamCut,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        self.cut_frames(ci, hi, timestamp, out);
        let conn = &mut self.conns[ci];
        if conn.client.is_none() || conn.not_kafka {
            return;
        }
        let half = &mut conn.halves[hi];
        if half.give_up(cut_by, timestamp) {
            // Anything more that comes in this direction continues no frame: look for one.
            half.resync = Some(Resync::new(half.at, SkipReason::NoFrame));
        }
        half.end_run();
        self.report(ci, hi, out);
    }

    /// A segment that repeats bytes already delivered (a retransmission, an
    /// overlap) is compared with them where the stream still holds them (the
    /// frame being cut) and with the direction's recent bytes, kept once it
    /// has retransmitted: other bytes are a conflict, and the first copy
    /// stays. Bytes compared with neither are counted ([`Uncompared`]), and
    /// the direction starts keeping its recent bytes. (Not from the start:
    /// a copy of every byte would cost every listing a fifth of its time.)
    fn compare_delivered(&mut self, ci: usize, hi: usize, seq: u32, payload: &[u8]) {
        let half = &mut self.conns[ci].halves[hi];
        let Some((start, end)) = half.tcp.already_delivered(seq, payload.len()) else {
            return;
        };
        let held_end = half.at + half.buf.len() as u64;
        let held = (start.max(half.at), end.min(held_end));
        if held.0 < held.1 {
            let ours = &payload[(held.0 - start) as usize..(held.1 - start) as usize];
            let kept = &half.buf[(held.0 - half.at) as usize..(held.1 - half.at) as usize];
            if let Some(i) = ours.iter().zip(kept).position(|(a, b)| a != b) {
                half.tcp.note_conflict(held.0 + i as u64, start);
            }
        }
        let delivered = &payload[..(end - start) as usize];
        let recent = half.tcp.compare_recent(start, delivered);
        let compared = covered(start, end, &[held, recent.unwrap_or_default()]);
        if compared < end - start {
            self.uncompared.segments += 1;
            self.uncompared.bytes += end - start - compared;
            if !half.tcp.keeps_recent() && self.recent_kept < MAX_RECENT_KEPT {
                half.tcp.keep_recent();
                self.recent_kept += 1;
            }
        }
    }

    /// Segments that repeated bytes no copy was kept of ([`Uncompared`]).
    pub fn uncompared(&self) -> Uncompared {
        self.uncompared
    }

    /// Segments whose bytes differed from the copy already held for the
    /// same stream bytes, and one of them, in the lowest-numbered connection
    /// with any: the connection, the side that sent it (when the client is
    /// known) and its first differing byte's stream offset.
    pub(crate) fn conflicts(&self) -> (u64, Option<(usize, Option<Direction>, u64)>) {
        let mut count = 0;
        let mut first = None;
        for (ci, c) in self.conns.iter().enumerate() {
            for (hi, h) in c.halves.iter().enumerate() {
                let Some(conflict) = h.tcp.conflict.as_deref() else {
                    continue;
                };
                count += u64::from(conflict.segments);
                if first.is_none() {
                    let at = conflict.first;
                    let direction = c.client.map(|client| match client == hi {
                        true => Direction::Request,
                        false => Direction::Response,
                    });
                    first = Some((ci, direction, at));
                }
            }
        }
        (count, first)
    }

    /// Run `f` on one direction's reassembly, absorbing what it delivers piece by
    /// piece (each piece is cut into frames before the next arrives).
    fn with_stream(
        &mut self,
        ci: usize,
        hi: usize,
        timestamp: f64,
        out: &mut Vec<Captured>,
        f: impl FnOnce(&mut HalfStream, &mut dyn FnMut(Chunk<'_>)),
    ) {
        let mut tcp = std::mem::take(&mut self.conns[ci].halves[hi].tcp);
        f(&mut tcp, &mut |c| self.absorb(ci, hi, c, timestamp, out));
        self.conns[ci].halves[hi].tcp = tcp;
    }

    fn absorb(
        &mut self,
        ci: usize,
        hi: usize,
        piece: Chunk<'_>,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        let Tls::On(t) = &mut self.conns[ci].tls else {
            return self.absorb_plain(ci, hi, piece, timestamp, out);
        };
        match piece {
            Chunk::Data(d) => self.feed_tls(ci, hi, d, timestamp, out),
            Chunk::Gap(n) => {
                if let Some((offset, problem)) = t.gap(hi, n) {
                    self.tls_stopped(ci, hi, offset, problem, timestamp, out);
                }
            }
        }
    }

    /// Bytes of a TLS stream: their plaintext goes on as a plaintext
    /// connection's bytes; where records did not open, the plaintext they
    /// held is missing from the stream, as a gap's bytes are.
    fn feed_tls(
        &mut self,
        ci: usize,
        hi: usize,
        mut data: &[u8],
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        loop {
            let Flows {
                conns, keys, plain, ..
            } = self;
            let Tls::On(t) = &mut conns[ci].tls else {
                return;
            };
            plain.clear();
            let halt = t.feed(hi, data, keys, plain);
            let text = std::mem::take(&mut self.plain);
            let split = match &halt {
                Some(Halt::Skipped { at_plain, .. }) => *at_plain,
                _ => text.len(),
            };
            if split > 0 {
                self.absorb_plain(ci, hi, Chunk::Data(&text[..split]), timestamp, out);
            }
            match halt {
                None => {}
                Some(Halt::Stopped(offset, problem)) => {
                    self.tls_stopped(ci, hi, offset, problem, timestamp, out)
                }
                Some(Halt::Skipped {
                    offset,
                    problem,
                    lost,
                    unread,
                    ..
                }) => {
                    self.tls_note(ci, hi, timestamp, out, |direction| TlsEvent::Skipped {
                        direction,
                        offset,
                        problem,
                        lost,
                    });
                    self.lost_plain(ci, hi, lost, SkipReason::NotOpened, timestamp, out);
                    if split < text.len() {
                        self.absorb_plain(ci, hi, Chunk::Data(&text[split..]), timestamp, out);
                    }
                    self.plain = text;
                    data = &data[data.len() - unread..];
                    continue;
                }
            }
            self.plain = text;
            return;
        }
    }

    /// A note on a TLS connection's direction.
    fn tls_note(
        &mut self,
        ci: usize,
        hi: usize,
        timestamp: f64,
        out: &mut Vec<Captured>,
        event: impl FnOnce(Direction) -> TlsEvent,
    ) {
        let conn = &self.conns[ci];
        let Tls::On(t) = &conn.tls else { return };
        let client = t.client().or(conn.client).unwrap_or(0);
        let direction = if hi == client {
            Direction::Request
        } else {
            Direction::Response
        };
        out.push(Captured::Tls(TlsNote {
            timestamp,
            conn: conn.id,
            client: conn.ends[client],
            server: conn.ends[1 - client],
            event: event(direction),
        }));
    }

    /// Decryption of a direction stopped: its note, then the end of its plaintext.
    fn tls_stopped(
        &mut self,
        ci: usize,
        hi: usize,
        offset: u64,
        problem: TlsProblem,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        self.tls_note(ci, hi, timestamp, out, |direction| TlsEvent::Stopped {
            direction,
            offset,
            problem,
        });
        self.close_plain(ci, hi, StreamCut::Decryption, timestamp, out);
    }

    /// A TLS connection's summary, once.
    fn tls_session(&mut self, ci: usize, timestamp: f64, out: &mut Vec<Captured>) {
        let conn = &mut self.conns[ci];
        let Tls::On(t) = &mut conn.tls else { return };
        if t.reported {
            return;
        }
        t.reported = true;
        let client = t.client().or(conn.client).unwrap_or(0);
        let event = TlsEvent::Session(Box::new(t.session(conn.not_kafka)));
        out.push(Captured::Tls(TlsNote {
            timestamp,
            conn: conn.id,
            client: conn.ends[client],
            server: conn.ends[1 - client],
            event,
        }));
    }

    /// Whether a connection is TLS, from the first bytes of the direction
    /// that has some: a TLS connection's buffered bytes go to the TLS layer.
    fn tls_start(
        &mut self,
        ci: usize,
        hi: usize,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) -> TlsStart {
        let Flows { conns, brokers, .. } = self;
        let conn = &mut conns[ci];
        let half = &conn.halves[hi];
        // Only the very start of a stream tells.
        if half.at != 0 || half.run.is_some() || !half.ended.is_empty() {
            conn.tls = Tls::Plain;
            return TlsStart::Plain;
        }
        let client = match stream_start(&half.buf) {
            Start::Short => return TlsStart::Wait,
            Start::NotTls => {
                conn.tls = Tls::Plain;
                return TlsStart::Plain;
            }
            Start::ClientHello => Some(hi),
            Start::ServerHello => Some(1 - hi),
            // After the handshake: `--port`, or a broker seen elsewhere in the capture.
            Start::Record => conn.client.or_else(|| {
                match (
                    brokers.contains(&conn.ends[1]),
                    brokers.contains(&conn.ends[0]),
                ) {
                    (true, _) => Some(0),
                    (_, true) => Some(1),
                    _ => None,
                }
            }),
        };
        conn.tls = Tls::On(Box::new(TlsConn::new(client)));
        let mut held = [BytesMut::new(), BytesMut::new()];
        let mut skipped = [0, 0];
        for ((h, keep), gap) in conn.halves.iter_mut().zip(&mut held).zip(&mut skipped) {
            // The halves start over as plaintext streams; a direction that
            // started after a gap has nothing the TLS layer can read.
            *gap = h.at;
            *keep = if h.at == 0 {
                std::mem::take(&mut h.buf)
            } else {
                BytesMut::new()
            };
            *h = Half {
                tcp: std::mem::take(&mut h.tcp),
                counted: h.counted,
                since: h.since,
                ..Half::default()
            };
        }
        for h in [hi, 1 - hi] {
            if skipped[h] > 0 {
                if let Tls::On(t) = &mut self.conns[ci].tls {
                    if let Some((offset, problem)) = t.gap(h, skipped[h]) {
                        self.tls_stopped(ci, h, offset, problem, timestamp, out);
                    }
                }
            } else if !held[h].is_empty() {
                self.feed_tls(ci, h, &held[h], timestamp, out);
            }
        }
        TlsStart::Tls
    }

    fn absorb_plain(
        &mut self,
        ci: usize,
        hi: usize,
        piece: Chunk<'_>,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        let undecided = self.conns[ci].client.is_none();
        let half = &mut self.conns[ci].halves[hi];
        match piece {
            Chunk::Data(mut d) => {
                if undecided {
                    half.stamps
                        .push_back((half.at + (half.buf.len() + d.len()) as u64, timestamp));
                }
                if let Some(c) = &mut half.cutting {
                    // The body of a cut frame: count it, keep nothing.
                    let n = c.remaining.min(d.len());
                    c.remaining -= n;
                    half.at += n as u64;
                    d = &d[n..];
                }
                if let Some((left, reason)) = half.discarding {
                    // The rest of a frame dropped at the memory cap.
                    let n = left.min(d.len() as u64);
                    half.discarding = (n < left).then_some((left - n, reason));
                    half.note(half.at, n, reason, timestamp);
                    half.at += n;
                    d = &d[n as usize..];
                }
                half.buf.extend_from_slice(d)
            }
            Chunk::Gap(n) => return self.lost_plain(ci, hi, n, SkipReason::Gap, timestamp, out),
        }
        self.cut_frames(ci, hi, timestamp, out);
        self.report(ci, hi, out);
    }

    /// Bytes of a direction's stream that are missing (never captured, or in
    /// TLS records that did not open): what was held before them can never
    /// complete, and a frame is looked for after them.
    fn lost_plain(
        &mut self,
        ci: usize,
        hi: usize,
        n: u64,
        reason: SkipReason,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        let half = &mut self.conns[ci].halves[hi];
        let _ = half.give_up(StreamCut::Gap, timestamp);
        half.not_request = false;
        half.note(half.at, n, reason, timestamp);
        half.at += n;
        half.resync = Some(Resync::new(half.at, SkipReason::NoFrame));
        self.cut_frames(ci, hi, timestamp, out);
        self.report(ci, hi, out);
    }

    fn cut_frames(&mut self, ci: usize, hi: usize, timestamp: f64, out: &mut Vec<Captured>) {
        let cat = self.cat;
        loop {
            let conn = &mut self.conns[ci];
            if conn.not_kafka {
                conn.unrecognised_bytes += conn.halves[hi].buf.len() as u64;
                conn.halves[hi].buf.clear();
                return;
            }
            if matches!(conn.tls, Tls::Undecided) {
                match self.tls_start(ci, hi, timestamp, out) {
                    TlsStart::Wait | TlsStart::Tls => return,
                    TlsStart::Plain => continue,
                }
            }
            // Who is the client? The side whose first bytes look like a request.
            if conn.client.is_none() {
                let effort = &mut self.effort;
                let mid = conn.mid_stream;
                let [a, b] = &mut conn.halves;
                if first_request(cat, a, b, mid, effort) {
                    conn.client = Some(0);
                } else if first_request(cat, b, a, mid, effort) {
                    conn.client = Some(1);
                } else if self.brokers.contains(&conn.ends[1]) {
                    conn.client = Some(0);
                } else if self.brokers.contains(&conn.ends[0]) {
                    conn.client = Some(1);
                } else {
                    // Give up once both sides (or plenty of one) show no request.
                    if (a.not_request && b.not_request) || a.buf.len() + b.buf.len() > 1 << 16 {
                        conn.not_kafka = true;
                        conn.unrecognised_bytes += (a.buf.len() + b.buf.len()) as u64;
                        for h in &mut conn.halves {
                            h.buf = BytesMut::new();
                            h.run = None;
                            h.ended.clear();
                        }
                        // A decrypted connection that is not Kafka: said once, then left alone.
                        self.tls_session(ci, timestamp, out);
                    }
                    return;
                }
                if let Some(client) = self.conns[ci].client {
                    let broker = self.conns[ci].ends[1 - client];
                    self.brokers.insert(broker);
                }
                for h in &mut self.conns[ci].halves {
                    h.join = None;
                }
                // Skips noted while undecided can be reported now; the other side
                // may already hold frames waiting for this decision.
                let other = 1 - hi;
                self.report(ci, hi, out);
                self.report(ci, other, out);
                if !self.conns[ci].halves[other].buf.is_empty() {
                    self.cut_frames(ci, other, timestamp, out);
                    self.report(ci, other, out);
                }
                continue;
            }
            let is_request = conn.client == Some(hi);
            if is_request && conn.mid_stream && !conn.joined {
                // The capture joined the connection mid-stream: its first
                // request is the first that decodes, not whatever the first
                // bytes say (the tail of a frame read as a size prefix would
                // swallow the requests after it).
                let h = &mut conn.halves[hi];
                // A SASL token is a frame to start at too (a capture that
                // began between the handshake and the token: skipped as a
                // frame's end, the token would not be masked as one).
                let starts = super::sasl::token_at_start(&h.buf)
                    || match request_header(cat, &h.buf) {
                        Header::Short if h.resync.is_none() => return, // wait for a header's worth
                        // The capture joined between frames (the commonest case).
                        Header::Frame(len, _) if h.buf.len() < len => true,
                        Header::Frame(len, opts) => {
                            decodes_cleanly(cat, &h.buf[..len], opts, &mut self.effort).0
                        }
                        Header::Short | Header::No => false,
                    };
                conn.joined = true;
                if !starts && h.at == 0 && h.resync.is_none() && h.cutting.is_none() {
                    h.resync = Some(Resync::new(0, SkipReason::MidStream));
                }
            }
            let Conn {
                halves,
                outstanding,
                sasl,
                ..
            } = conn;
            let half = &mut halves[hi];
            if let Some(c) = &half.cutting {
                if c.remaining > 0 {
                    return;
                }
                let Some(c) = half.cutting.take() else { return };
                self.emit(ci, hi, c.prefix, c.total, timestamp, out);
                continue;
            }
            if half.discarding.is_some() {
                return;
            }
            if !resync(
                cat,
                half,
                is_request,
                outstanding,
                timestamp,
                &mut self.effort,
            ) {
                return;
            }
            if half.buf.len() < 4 {
                return;
            }
            let size = i32::from_be_bytes([half.buf[0], half.buf[1], half.buf[2], half.buf[3]]);
            if size < 0 || size as usize > MAX_FRAME {
                // No frame is this long: pass it over, and what follows up to the next frame.
                half.resync = Some(Resync::new(half.at, SkipReason::BadSize(size)));
                continue;
            }
            let total = 4 + size as usize;
            if half.buf.len() < total {
                if let Some(cut) = self.cut.as_ref().filter(|_| !sasl.tokens()) {
                    if total > cut.above && half.buf.len() <= cut.above {
                        // Skip the body if the header is within what came so far.
                        let pair = if is_request {
                            None
                        } else {
                            outstanding.get(&i32_at(&half.buf, 4)).copied()
                        };
                        if (is_request || pair.is_some())
                            && header_within(
                                cat,
                                &half.buf,
                                is_request,
                                pair,
                                cut.release.as_deref(),
                            )
                        {
                            let have = half.buf.len();
                            let prefix = half.buf.split().freeze();
                            half.cutting = Some(Cutting {
                                start: half.at,
                                prefix,
                                total,
                                remaining: total - have,
                            });
                            half.at += have as u64;
                            half.buf = BytesMut::new();
                            half.split = 0;
                            return;
                        }
                    }
                }
                // The buffer grows with what arrives, never by what the size prefix claims.
                return;
            }
            // Hand the frame's bytes over without copying; keep only what follows it.
            let bytes: Bytes = half.buf.split_to(total).freeze();
            half.at += total as u64;
            half.split += total;
            if half.buf.is_empty() {
                // Nothing partial is held: let the allocation go with the frames handed on.
                half.buf = BytesMut::new();
                half.split = 0;
            } else if half.split >= REHOME_AFTER && half.buf.len() < REHOME_BELOW {
                half.buf = rehomed(&half.buf);
                half.split = 0;
            }
            self.emit(ci, hi, bytes, total, timestamp, out);
        }
    }

    /// Hand on a frame cut from the stream (pairing it by correlation id), after
    /// the skip notes before it. Its `len` bytes end at the direction's `at`.
    fn emit(
        &mut self,
        ci: usize,
        hi: usize,
        bytes: Bytes,
        len: usize,
        timestamp: f64,
        out: &mut Vec<Captured>,
    ) {
        self.conns[ci].halves[hi].end_run();
        self.report(ci, hi, out);
        let conn = &mut self.conns[ci];
        if !std::mem::replace(&mut conn.announced, true) {
            if let (Some(syn_at), Some(client)) = (conn.syn_at, conn.client) {
                out.push(Captured::Conn(ConnEvent {
                    conn: conn.id,
                    timestamp: syn_at,
                    client: conn.ends[client],
                    broker: conn.ends[1 - client],
                    kind: ConnEventKind::Open,
                }));
            }
        }
        let timestamp = conn.halves[hi]
            .completed_at(conn.halves[hi].at)
            .unwrap_or(timestamp);
        self.closes_before(ci, timestamp, out);
        let conn = &mut self.conns[ci];
        let is_request = conn.client == Some(hi);
        let half = &mut conn.halves[hi];
        let after_gap = std::mem::take(&mut half.gap_pending);
        let offset = half.at - len as u64;
        let comment = comment_within(&mut self.comments, (ci, hi), offset);
        half.restamp = true;
        let (from, to) = if hi == 0 {
            (conn.ends[0], conn.ends[1])
        } else {
            (conn.ends[1], conn.ends[0])
        };
        if let Some(mechanism) = conn.sasl.token(
            self.cat,
            is_request,
            &bytes,
            bytes.len() < len,
            &conn.outstanding,
            &mut self.effort,
        ) {
            let direction = if is_request {
                Direction::Request
            } else {
                Direction::Response
            };
            let kind = FrameKind::SaslToken { mechanism };
            out.push(Captured::Frame(CapturedFrame {
                index: self.emitted,
                timestamp,
                conn: conn.id,
                from,
                to,
                direction,
                kind,
                bytes,
                correlation_id: None,
                api_key: None,
                api_version: None,
                after_gap,
                offset,
                len,
                comment,
                repeats: None,
            }));
            self.emitted += 1;
            return;
        }
        let corr_at = if is_request { 8 } else { 4 };
        let correlation_id = bytes
            .get(corr_at..corr_at + 4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let (direction, (api_key, api_version), repeats) = if is_request {
            let key = bytes.get(4..6).map(|b| i16::from_be_bytes([b[0], b[1]]));
            let ver = bytes.get(6..8).map(|b| i16::from_be_bytes([b[0], b[1]]));
            if let (Some(c), Some(k), Some(v)) = (correlation_id, key, ver) {
                conn.outstanding.insert(c, (k, v));
            }
            conn.sasl
                .request(self.cat, key.zip(ver), correlation_id, &bytes);
            (Direction::Request, (key, ver), None)
        } else {
            let paired = correlation_id.and_then(|c| conn.outstanding.take(&c));
            conn.sasl.response(self.cat, paired, correlation_id, &bytes);
            let (api, repeats) = match (paired, correlation_id) {
                (Some(api), Some(c)) => {
                    let answered = conn.answered.get_or_insert_default();
                    answered.paired(c, api, self.emitted);
                    (Some(api), None)
                }
                (None, Some(c)) => {
                    let first = conn.answered.as_ref().and_then(|a| a.latest(c));
                    (first.map(|a| a.api), first.map(|a| a.frame))
                }
                _ => (None, None),
            };
            (Direction::Response, api.unzip(), repeats)
        };
        let kind = FrameKind::Kafka;
        out.push(Captured::Frame(CapturedFrame {
            index: self.emitted,
            timestamp,
            conn: conn.id,
            from,
            to,
            direction,
            kind,
            bytes,
            correlation_id,
            api_key,
            api_version,
            after_gap,
            offset,
            len,
            comment,
            repeats,
        }));
        self.emitted += 1;
    }

    /// Report the skip runs that ended in one direction (once its connection is
    /// known to be Kafka; until then they wait).
    fn report(&mut self, ci: usize, hi: usize, out: &mut Vec<Captured>) {
        let conn = &mut self.conns[ci];
        let Some(client) = conn.client else { return };
        if conn.not_kafka || conn.halves[hi].ended.is_empty() {
            return;
        }
        let direction = if client == hi {
            Direction::Request
        } else {
            Direction::Response
        };
        let (from, to) = if hi == 0 {
            (conn.ends[0], conn.ends[1])
        } else {
            (conn.ends[1], conn.ends[0])
        };
        for r in conn.halves[hi].ended.drain(..) {
            out.push(Captured::Skipped(Skipped {
                timestamp: r.timestamp,
                conn: conn.id,
                from,
                to,
                direction,
                offset: r.offset,
                bytes: r.bytes,
                reason: r.reason,
            }));
        }
    }

    /// Bring the memory count of one direction up to date, and its place among
    /// the holders (oldest first).
    fn account(&mut self, ci: usize, hi: usize) {
        let half = &mut self.conns[ci].halves[hi];
        // The stamps of bytes handed on or passed over are done with.
        while half.stamps.front().is_some_and(|&(end, _)| end <= half.at) {
            half.stamps.pop_front();
        }
        let now = half.footprint();
        self.held = self.held - half.counted + now;
        half.counted = now;
        self.effort.peak_held = self.effort.peak_held.max(self.held);
        let since = match now {
            0 => None,
            _ if half.restamp || half.since.is_none() => Some(self.tick),
            _ => half.since,
        };
        half.restamp = false;
        if since != half.since {
            if let Some(s) = half.since {
                self.holders.remove(&(s, ci, hi));
            }
            if let Some(s) = since {
                self.holders.insert((s, ci, hi));
            }
            half.since = since;
        }
    }

    /// Over the memory cap: drop what the directions holding data longest hold,
    /// until under it.
    fn enforce_cap(&mut self, timestamp: f64, out: &mut Vec<Captured>) {
        let mut tries = self.holders.len();
        while self.held > self.max_held && tries > 0 {
            tries -= 1;
            let Some(&(_, ci, hi)) = self.holders.first() else {
                break;
            };
            self.drop_held(ci, hi, timestamp, out);
            self.account(ci, 0);
            self.account(ci, 1);
        }
    }

    /// Drop what one direction holds: held-back segments become a gap (the data
    /// after it is taken in), and the partial frame is dropped with a note; the
    /// rest of that frame is passed over as it comes.
    fn drop_held(&mut self, ci: usize, hi: usize, timestamp: f64, out: &mut Vec<Captured>) {
        if self.conns[ci].halves[hi].tcp.holds_data() {
            self.with_stream(ci, hi, timestamp, out, |tcp, each| tcp.flush_each(each));
        }
        let conn = &mut self.conns[ci];
        let decided = conn.client.is_some();
        let half = &mut conn.halves[hi];
        if let Some(c) = half.cutting.take() {
            let reason = SkipReason::MemoryCap {
                declared: Some(c.total as u64),
            };
            half.note(c.start, half.at - c.start, reason, timestamp);
            half.discarding = (c.remaining > 0).then_some((c.remaining as u64, reason));
        }
        if !half.buf.is_empty() {
            let whole_frame = decided && half.resync.is_none();
            let declared = if whole_frame { half.declared() } else { None };
            let reason = SkipReason::MemoryCap { declared };
            let have = half.buf.len();
            half.skip(have, reason, timestamp);
            match declared.map(|total| total.saturating_sub(have as u64)) {
                Some(0) => {}
                Some(rest) => half.discarding = Some((rest, reason)),
                // Where the next frame starts is not known: look for it.
                None => half.resync = Some(Resync::new(half.at, SkipReason::NoFrame)),
            }
            half.not_request = false;
        }
        half.buf = BytesMut::new();
        half.split = 0;
        half.stamps.clear();
        self.report(ci, hi, out);
    }
}

/// How many of the stream offsets `start..end` two ranges cover together.
fn covered(start: u64, end: u64, ranges: &[(u64, u64); 2]) -> u64 {
    let clip = |(a, b): (u64, u64)| (a.max(start), b.min(end));
    let (a, b) = (clip(ranges[0]), clip(ranges[1]));
    let len = |(x, y): (u64, u64)| y.saturating_sub(x);
    len(a) + len(b) - len((a.0.max(b.0), a.1.min(b.1)))
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    b.get(at..at + 4)
        .map_or(-1, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// A request as a listing needs it: over `above` bytes, only its size and
/// header (a copy, so that the rest is let go), as [`CutBodies`] cuts frames
/// as they arrive; other frames as they are. For what a selection holds
/// until a response decides.
pub(crate) fn cut_for_listing(
    cat: &Catalogue,
    f: CapturedFrame,
    above: usize,
    release: Option<&str>,
) -> CapturedFrame {
    if f.len <= above || f.is_cut() || f.direction != Direction::Request {
        return f;
    }
    let Some((key, version)) = f.api_key.zip(f.api_version) else {
        return f;
    };
    let Some(spec) = cat.message(crate::schema::MessageKind::Request, key, version, release) else {
        return f;
    };
    let hv = crate::protocol::headers::request_header_version(spec, version);
    let Some(header) = cat.header(crate::schema::MessageKind::Request, hv) else {
        return f;
    };
    let mut tape = crate::decode::tape::Values::default();
    let (_, end, read) =
        crate::decode::values::decode_message(&f.bytes, 4, &header.plan(hv), &mut tape);
    if read.is_err() || end > above {
        return f;
    }
    CapturedFrame {
        bytes: Bytes::copy_from_slice(&f.bytes[..end]),
        ..f
    }
}

/// Does the header of the frame starting `prefix` decode within it (header only,
/// as a listing decodes it)?
fn header_within(
    cat: &Catalogue,
    prefix: &[u8],
    is_request: bool,
    pair: Option<(i16, i16)>,
    release: Option<&str>,
) -> bool {
    let opts = DecodeOptions {
        direction: Some(if is_request {
            Direction::Request
        } else {
            Direction::Response
        }),
        api_key: pair.map(|p| p.0),
        api_version: pair.map(|p| p.1),
        release: release.map(str::to_string),
        header_only: true,
        ..Default::default()
    };
    decode_frame(cat, complete_prefix(prefix), 0, &opts)
        .error
        .is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::example::example_frame;
    use crate::encode::FrameSpec;
    use std::net::{IpAddr, Ipv4Addr};

    /// The smallest frame of an API, with this correlation id and `pad` more bytes of body.
    fn frame(direction: Direction, api_key: i16, version: i16, corr: i32, pad: usize) -> Vec<u8> {
        let mut f = example_frame(
            Catalogue::builtin(),
            &FrameSpec {
                direction,
                api_key,
                version,
                release: None,
            },
        )
        .unwrap();
        let at = if direction == Direction::Request {
            8
        } else {
            4
        };
        f[at..at + 4].copy_from_slice(&corr.to_be_bytes());
        f.extend(std::iter::repeat_n(0x5a, pad));
        let size = (f.len() - 4) as i32;
        f[..4].copy_from_slice(&size.to_be_bytes());
        f
    }

    /// Frames in both directions, cut into segments of `mss` bytes: (from client, seq, payload).
    fn segments(frames: &[(bool, Vec<u8>)], mss: usize) -> Vec<(bool, u32, Vec<u8>)> {
        let mut seq = [1000u32, 5000u32];
        let mut out = Vec::new();
        for (client, f) in frames {
            let side = usize::from(!client);
            for chunk in f.chunks(mss) {
                out.push((*client, seq[side], chunk.to_vec()));
                seq[side] = seq[side].wrapping_add(chunk.len() as u32);
            }
        }
        out
    }

    fn run(segs: &[(bool, u32, Vec<u8>)], cut: bool) -> Vec<CapturedFrame> {
        run_all(segs, cut)
            .into_iter()
            .filter_map(|c| {
                if let Captured::Frame(f) = c {
                    Some(f)
                } else {
                    None
                }
            })
            .collect()
    }

    /// Frames and skip notes.
    fn run_all(segs: &[(bool, u32, Vec<u8>)], cut: bool) -> Vec<Captured> {
        run_flows(segs, cut).0
    }

    /// Frames and skip notes, and the flows that cut them.
    fn run_flows(segs: &[(bool, u32, Vec<u8>)], cut: bool) -> (Vec<Captured>, Flows<'static>) {
        let mut flows = Flows::new(Catalogue::builtin(), None);
        if cut {
            flows.cut_bodies(CutBodies {
                above: 16 * 1024,
                release: None,
            });
        }
        let client = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 50000);
        let server = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 9092);
        let mut out = Vec::new();
        for (i, (from_client, seq, payload)) in segs.iter().enumerate() {
            let (src, dst) = if *from_client {
                (client, server)
            } else {
                (server, client)
            };
            let seg = Segment {
                src: src.0,
                dst: dst.0,
                src_port: src.1,
                dst_port: dst.1,
                seq: *seq,
                ack: None,
                syn: false,
                fin: false,
                rst: false,
                payload,
            };
            flows.push_into(i as f64, &seg, &mut out);
            for (hi, half) in flows.conns[0].halves.iter().enumerate() {
                // Every byte delivered is in a frame, the frame being cut, a skip run, or the buffer.
                assert_eq!(
                    half.tcp.delivered(),
                    half.at + half.buf.len() as u64,
                    "segment {i} half {hi}"
                );
            }
        }
        out.extend(flows.finish(segs.len() as f64));
        (out, flows)
    }

    /// Three requests of 117 bytes in segments of 40 (3 a frame), sent in
    /// `order`: a segment's index, and a byte of it to change or none. A
    /// segment sent again after its frame was handed on is a retransmission
    /// of bytes handed on.
    fn retransmitted(order: &[(usize, Option<usize>)]) -> (Vec<Captured>, Flows<'static>) {
        let frames: Vec<(bool, Vec<u8>)> = (1..=3)
            .map(|corr| (true, frame(Direction::Request, 3, 12, corr, 80)))
            .collect();
        let segs = segments(&frames, 40);
        let sent: Vec<_> = order
            .iter()
            .map(|&(i, change)| {
                let mut seg = segs[i].clone();
                if let Some(at) = change {
                    seg.2[at] ^= 0xff;
                }
                seg
            })
            .collect();
        run_flows(&sent, false)
    }

    /// Segments 0 to 8 in order, with `repeats` (after segment, repeated segment, byte changed).
    fn in_order_with(repeats: &[(usize, usize, Option<usize>)]) -> Vec<(usize, Option<usize>)> {
        let mut order = Vec::new();
        for i in 0..9 {
            order.push((i, None));
            for &(after, again, change) in repeats {
                if after == i {
                    order.push((again, change));
                }
            }
        }
        order
    }

    #[test]
    fn a_retransmission_of_bytes_handed_on_is_compared_once_its_side_has_retransmitted() {
        // Frame 1 again after it was handed on: not compared (nothing was
        // kept), but its side keeps its bytes from then on, and frame 2's
        // repeated the same way is compared.
        let (out, flows) = retransmitted(&in_order_with(&[(3, 1, None), (6, 4, None)]));
        assert_eq!(flows.conflicts().0, 0);
        let u = flows.uncompared();
        assert_eq!((u.segments, u.bytes), (1, 40));
        // Other bytes in frame 2's: a conflict at the byte changed.
        let (_, flows) = retransmitted(&in_order_with(&[(3, 1, None), (6, 5, Some(3))]));
        let (n, at) = flows.conflicts();
        assert_eq!(n, 1);
        // Segment 5 is frame 2's last: 117 + 80 bytes in.
        assert_eq!(at.map(|(_, _, offset)| offset), Some(117 + 80 + 3));
        assert_eq!(flows.uncompared().segments, 1);
        // The frames are the first copies'.
        let frames: Vec<i32> = out
            .iter()
            .filter_map(|c| match c {
                Captured::Frame(f) => f.correlation_id,
                _ => None,
            })
            .collect();
        assert_eq!(frames, [1, 2, 3]);
    }

    #[test]
    fn the_first_retransmission_over_bytes_handed_on_is_counted_not_judged() {
        // Nothing kept yet: other bytes in it are neither a conflict nor lost without a count.
        let (_, flows) = retransmitted(&in_order_with(&[(8, 1, Some(0))]));
        assert_eq!(flows.conflicts().0, 0);
        let u = flows.uncompared();
        assert_eq!((u.segments, u.bytes), (1, 40));
    }

    fn traffic() -> Vec<(bool, Vec<u8>)> {
        use Direction::{Request, Response};
        vec![
            (true, frame(Request, 18, 3, 1, 0)), // ApiVersions: small, decides the client side
            (false, frame(Response, 18, 3, 1, 0)),
            (true, frame(Request, 0, 9, 2, 40_000)), // Produce: large
            (true, frame(Request, 1, 12, 3, 0)),
            (false, frame(Response, 1, 12, 3, 50_000)), // Fetch: large
            (false, frame(Response, 0, 9, 2, 0)),
            (true, frame(Request, 12, 4, 4, 20_000)), // Heartbeat, large (header v2)
            (false, frame(Response, 12, 4, 4, 0)),
        ]
    }

    /// The header nodes of a header-only decode, and what identifies the message.
    fn header_of(f: &CapturedFrame, bytes: Bytes) -> String {
        let mut opts = DecodeOptions {
            direction: Some(f.direction),
            header_only: true,
            ..Default::default()
        };
        if f.direction == Direction::Response {
            opts.api_key = f.api_key;
            opts.api_version = f.api_version;
        }
        let d = decode_frame(Catalogue::builtin(), bytes, 0, &opts);
        format!(
            "{:?} {:?} {:?} {:?}",
            d.api_key,
            d.api_version,
            d.error,
            &d.root.children[1..]
        )
    }

    #[test]
    fn what_a_capture_yields_is_no_larger_than_a_frame() {
        assert!(
            std::mem::size_of::<Captured>() <= std::mem::size_of::<CapturedFrame>() + 8,
            "{} {}",
            std::mem::size_of::<Captured>(),
            std::mem::size_of::<CapturedFrame>()
        );
    }

    #[test]
    fn cut_bodies_keep_the_header_and_skip_the_rest() {
        for mss in [1448, 100, 7] {
            let segs = segments(&traffic(), mss);
            let whole = run(&segs, false);
            let cut = run(&segs, true);
            assert_eq!(whole.len(), 8);
            assert_eq!(whole.len(), cut.len());
            let mut cuts = 0;
            for (w, c) in whole.iter().zip(&cut) {
                assert_eq!(
                    (
                        w.index,
                        w.conn,
                        w.direction,
                        w.correlation_id,
                        w.api_key,
                        w.api_version,
                        w.after_gap
                    ),
                    (
                        c.index,
                        c.conn,
                        c.direction,
                        c.correlation_id,
                        c.api_key,
                        c.api_version,
                        c.after_gap
                    )
                );
                assert_eq!((w.len, w.bytes.len()), (c.len, w.len));
                assert!(w.bytes.starts_with(&c.bytes));
                if c.is_cut() {
                    cuts += 1;
                    assert!(c.len > 16 * 1024 && c.bytes.len() <= 16 * 1024);
                    assert_eq!(
                        header_of(w, w.bytes.clone()),
                        header_of(c, complete_prefix(&c.bytes))
                    );
                }
            }
            assert_eq!(cuts, 3, "mss {mss}");
        }
    }

    #[test]
    fn a_gap_inside_a_skipped_body_resyncs_as_without_cutting() {
        let mut segs = segments(&traffic(), 1000);
        // Lose a segment in the middle of the Fetch response's body.
        let fetch_start = segs.iter().position(|s| !s.0 && s.2.len() == 1000).unwrap();
        segs.remove(fetch_start + 10);
        let strip = |v: Vec<CapturedFrame>| {
            v.into_iter()
                .map(|f| {
                    (
                        f.index,
                        f.direction,
                        f.correlation_id,
                        f.api_key,
                        f.len,
                        f.after_gap,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(run(&segs, false)), strip(run(&segs, true)));
    }
}
