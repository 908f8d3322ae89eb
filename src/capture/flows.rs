//! Connections: TCP reassembly per direction, Kafka frames cut from each byte
//! stream, the client side found by plausibility (or `--port`), responses paired
//! with requests by correlation id, and resync after gaps.

use super::link::Segment;
use super::tcp::{HalfStream, Piece};
use crate::decode::{decode_frame, DecodeOptions, Direction};
use crate::schema::{Catalogue, MessageKind};
use bytes::Bytes;
use std::collections::HashMap;
use std::net::SocketAddr;

/// Frames larger than this are taken for garbage when looking for a frame start.
pub const MAX_FRAME: usize = 100 << 20;

/// One Kafka frame found in a capture.
#[derive(Clone, Debug)]
pub struct CapturedFrame {
    pub index: usize,
    pub timestamp: f64,
    pub conn: usize,
    pub from: SocketAddr,
    pub to: SocketAddr,
    pub direction: Direction,
    pub bytes: Bytes,
    pub correlation_id: Option<i32>,
    /// For requests from the header; for responses from the paired request.
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    /// Data was missing just before this frame (it was found by resyncing).
    pub after_gap: bool,
}

#[derive(Default)]
struct Half {
    tcp: HalfStream,
    buf: Vec<u8>,
    /// After a gap: look for the next plausible frame start.
    resync: bool,
    gap_pending: bool,
}

struct Conn {
    id: usize,
    ends: [SocketAddr; 2],
    halves: [Half; 2],
    /// Index of the half that carries requests, once known.
    client: Option<usize>,
    not_kafka: bool,
    /// Correlation id → (api key, version) of requests awaiting a response.
    outstanding: HashMap<i32, (i16, i16)>,
}

/// Tracks every connection of a capture and emits frames as they complete.
pub struct Flows<'c> {
    cat: &'c Catalogue,
    port: Option<u16>,
    conns: Vec<Conn>,
    index: HashMap<(SocketAddr, SocketAddr), (usize, usize)>,
    emitted: usize,
}

/// What the bytes at a position say about a frame starting there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Candidate {
    No,
    /// The header fits; the frame is not complete yet.
    Maybe,
    /// Complete, and it decodes cleanly.
    Yes,
}

/// Could a request start here? A sane size, a known API and version, a client id
/// that fits, and (once complete) a clean decode, which keeps resync from
/// locking onto bytes inside another frame.
fn request_at(cat: &Catalogue, b: &[u8]) -> Candidate {
    if b.len() < 14 {
        return Candidate::Maybe;
    }
    let size = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let key = i16::from_be_bytes([b[4], b[5]]);
    let ver = i16::from_be_bytes([b[6], b[7]]);
    let client_id = i16::from_be_bytes([b[12], b[13]]);
    if size < 10 || size as usize > MAX_FRAME || cat.message(MessageKind::Request, key, ver, None).is_none() {
        return Candidate::No;
    }
    // Header v0 (ControlledShutdown v0) has no client id; otherwise it must fit.
    let header_v0 = key == 7 && ver == 0;
    if !header_v0 && (client_id < -1 || i32::from(client_id) > size - 10) {
        return Candidate::No;
    }
    complete_and_clean(cat, b, DecodeOptions::default())
}

fn response_at(cat: &Catalogue, b: &[u8], outstanding: &HashMap<i32, (i16, i16)>) -> Candidate {
    if b.len() < 8 {
        return Candidate::Maybe;
    }
    let size = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let corr = i32::from_be_bytes([b[4], b[5], b[6], b[7]]);
    let Some(&(key, ver)) = outstanding.get(&corr) else { return Candidate::No };
    if size < 4 || size as usize > MAX_FRAME {
        return Candidate::No;
    }
    let opts = DecodeOptions { direction: Some(Direction::Response), api_key: Some(key), api_version: Some(ver), ..Default::default() };
    complete_and_clean(cat, b, opts)
}

fn complete_and_clean(cat: &Catalogue, b: &[u8], opts: DecodeOptions) -> Candidate {
    let total = 4 + i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
    if b.len() < total {
        Candidate::Maybe
    } else if decode_frame(cat, Bytes::copy_from_slice(&b[..total]), 0, &opts).error.is_none() {
        Candidate::Yes
    } else {
        Candidate::No
    }
}

impl<'c> Flows<'c> {
    pub fn new(cat: &'c Catalogue, port: Option<u16>) -> Self {
        Flows { cat, port, conns: Vec::new(), index: HashMap::new(), emitted: 0 }
    }

    pub fn connections(&self) -> usize {
        self.conns.iter().filter(|c| !c.not_kafka && c.client.is_some()).count()
    }

    /// Feed one TCP segment; returns the frames it completed.
    pub fn push(&mut self, timestamp: f64, seg: &Segment) -> Vec<CapturedFrame> {
        let from = SocketAddr::new(seg.src, seg.src_port);
        let to = SocketAddr::new(seg.dst, seg.dst_port);
        let (ci, hi) = match self.index.get(&(from, to)) {
            Some(&x) => x,
            None => {
                let id = self.conns.len();
                self.conns.push(Conn { id, ends: [from, to], halves: [Half::default(), Half::default()], client: None, not_kafka: false, outstanding: HashMap::new() });
                self.index.insert((from, to), (id, 0));
                self.index.insert((to, from), (id, 1));
                (id, 0)
            }
        };
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
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(ack) = seg.ack {
            // An ack past a hole in the other direction: that data was lost to the capture.
            let pieces = self.conns[ci].halves[1 - hi].tcp.acknowledged(ack);
            if !pieces.is_empty() {
                out.extend(self.absorb(ci, 1 - hi, pieces, timestamp, false));
            }
        }
        let mut pieces = self.conns[ci].halves[hi].tcp.push(seg.seq, seg.syn, seg.payload);
        if seg.fin || seg.rst {
            pieces.extend(self.conns[ci].halves[hi].tcp.flush());
        }
        out.extend(self.absorb(ci, hi, pieces, timestamp, false));
        out
    }

    /// End of capture: deliver what is held back behind gaps.
    pub fn finish(&mut self, timestamp: f64) -> Vec<CapturedFrame> {
        let mut out = Vec::new();
        for ci in 0..self.conns.len() {
            for hi in 0..2 {
                let pieces = self.conns[ci].halves[hi].tcp.flush();
                out.extend(self.absorb(ci, hi, pieces, timestamp, true));
            }
        }
        out
    }

    fn absorb(&mut self, ci: usize, hi: usize, pieces: Vec<Piece>, timestamp: f64, eof: bool) -> Vec<CapturedFrame> {
        let mut out = Vec::new();
        for p in pieces {
            let half = &mut self.conns[ci].halves[hi];
            match p {
                Piece::Data(d) => half.buf.extend_from_slice(&d),
                Piece::Gap(_) => {
                    // A partial frame before the gap can never complete.
                    half.buf.clear();
                    half.resync = true;
                    half.gap_pending = true;
                }
            }
            self.cut_frames(ci, hi, timestamp, false, &mut out);
        }
        if eof {
            self.cut_frames(ci, hi, timestamp, true, &mut out);
        }
        out
    }

    fn cut_frames(&mut self, ci: usize, hi: usize, timestamp: f64, eof: bool, out: &mut Vec<CapturedFrame>) {
        loop {
            let conn = &mut self.conns[ci];
            if conn.not_kafka {
                conn.halves[hi].buf.clear();
                return;
            }
            // Who is the client? The side whose first bytes look like a request.
            if conn.client.is_none() {
                let [a, b] = &conn.halves;
                // A complete first frame must decode; a partial one only needs a sane header.
                let looks = |h: &Half| h.buf.len() >= 14 && request_at(self.cat, &h.buf) != Candidate::No;
                if looks(a) {
                    conn.client = Some(0);
                } else if looks(b) {
                    conn.client = Some(1);
                } else {
                    // Give up once both sides (or plenty of one) show no request.
                    let seen = |h: &Half| h.buf.len() >= 14;
                    if (seen(a) && seen(b)) || a.buf.len() + b.buf.len() > 1 << 16 {
                        conn.not_kafka = true;
                        conn.halves[0].buf.clear();
                        conn.halves[1].buf.clear();
                    }
                    return;
                }
                // The other side may already hold frames waiting for this decision.
                let other = 1 - hi;
                if conn.client.is_some() && !conn.halves[other].buf.is_empty() {
                    self.cut_frames(ci, other, timestamp, eof, out);
                }
                continue;
            }
            let is_request = conn.client == Some(hi);
            let half = &mut conn.halves[hi];
            if half.resync {
                // The first position where a whole frame decodes cleanly wins; failing
                // that, wait at the first partial candidate (unless the capture ended).
                let mut first_maybe = None;
                let mut found = None;
                for at in 0..half.buf.len() {
                    let b = &half.buf[at..];
                    match if is_request { request_at(self.cat, b) } else { response_at(self.cat, b, &conn.outstanding) } {
                        Candidate::Yes => {
                            found = Some(at);
                            break;
                        }
                        Candidate::Maybe if first_maybe.is_none() && !eof => first_maybe = Some(at),
                        _ => {}
                    }
                }
                match (found, first_maybe) {
                    (Some(at), _) => {
                        half.buf.drain(..at);
                        half.resync = false;
                    }
                    (None, Some(at)) => {
                        half.buf.drain(..at);
                        return;
                    }
                    (None, None) => {
                        half.buf.clear();
                        return;
                    }
                }
            }
            if half.buf.len() < 4 {
                return;
            }
            let size = i32::from_be_bytes([half.buf[0], half.buf[1], half.buf[2], half.buf[3]]);
            if size < 0 || size as usize > MAX_FRAME {
                half.resync = true;
                half.buf.drain(..1);
                continue;
            }
            let total = 4 + size as usize;
            if half.buf.len() < total {
                return;
            }
            // Hand the frame's bytes over without copying; keep only what follows it.
            let rest = half.buf.split_off(total);
            let bytes = Bytes::from(std::mem::replace(&mut half.buf, rest));
            let after_gap = std::mem::take(&mut half.gap_pending);
            let (from, to) = if hi == 0 { (conn.ends[0], conn.ends[1]) } else { (conn.ends[1], conn.ends[0]) };
            let corr_at = if is_request { 8 } else { 4 };
            let correlation_id = bytes.get(corr_at..corr_at + 4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            let (direction, api_key, api_version) = if is_request {
                let key = bytes.get(4..6).map(|b| i16::from_be_bytes([b[0], b[1]]));
                let ver = bytes.get(6..8).map(|b| i16::from_be_bytes([b[0], b[1]]));
                if let (Some(c), Some(k), Some(v)) = (correlation_id, key, ver) {
                    conn.outstanding.insert(c, (k, v));
                }
                (Direction::Request, key, ver)
            } else {
                let paired = correlation_id.and_then(|c| conn.outstanding.remove(&c));
                (Direction::Response, paired.map(|p| p.0), paired.map(|p| p.1))
            };
            out.push(CapturedFrame { index: self.emitted, timestamp, conn: conn.id, from, to, direction, bytes, correlation_id, api_key, api_version, after_gap });
            self.emitted += 1;
        }
    }
}
