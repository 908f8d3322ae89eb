//! Connections: TCP reassembly per direction, Kafka frames cut from each byte
//! stream, the client side found by plausibility (or `--port`), responses paired
//! with requests by correlation id, and resync after gaps.

use super::link::Segment;
use super::tcp::{Chunk, HalfStream};
use crate::decode::{decode_frame, DecodeOptions, Direction};
use crate::schema::{Catalogue, MessageKind};
use bytes::{Buf, Bytes, BytesMut};
use std::collections::HashMap;
use std::net::SocketAddr;

/// Frames larger than this are taken for garbage when looking for a frame start.
pub const MAX_FRAME: usize = 100 << 20;

/// Room made at once for a frame whose size is known (more grows as it arrives).
const RESERVE_AHEAD: usize = 8 << 20;

/// Frames handed out share the stream buffer's allocation, and so does the rest
/// of the stream after them: once this many bytes were split off, a short rest
/// moves to a buffer of its own, so an idle connection never pins a large one.
const REHOME_AFTER: usize = 64 << 10;
const REHOME_BELOW: usize = 4 << 10;

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
    /// The frame's whole length, size prefix included. Equal to `bytes.len()`
    /// unless bodies are cut (`Flows::cut_bodies`): then `bytes` holds only
    /// a prefix that covers the header (see `complete_prefix`).
    pub len: usize,
}

impl CapturedFrame {
    /// Whether only a prefix of the frame was kept.
    pub fn is_cut(&self) -> bool {
        self.bytes.len() < self.len
    }
}

/// A cut frame's prefix as a frame of its own (the size prefix rewritten to
/// match), for decoding its header: `header_only` decoding gives what it gives
/// on the whole frame, since the header lies within the prefix.
pub fn complete_prefix(prefix: &[u8]) -> Bytes {
    let mut b = prefix.to_vec();
    if b.len() >= 4 {
        let size = (b.len() - 4) as i32;
        b[..4].copy_from_slice(&size.to_be_bytes());
    }
    Bytes::from(b)
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

/// A large frame being skipped: its prefix, and how much of it is still to come.
struct Cutting {
    prefix: Bytes,
    total: usize,
    remaining: usize,
}

#[derive(Default)]
struct Half {
    tcp: HalfStream,
    /// Stream bytes not yet cut into frames; frames are split off without copying.
    buf: BytesMut,
    /// Bytes split off `buf` since it last moved to a buffer of its own.
    split: usize,
    /// A large frame whose body is being skipped (`CutBodies`).
    cutting: Option<Cutting>,
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
    /// The connection of the previous segment (most segments follow one of the same connection).
    last: Option<usize>,
    emitted: usize,
    cut: Option<CutBodies>,
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

/// A copy of the rest of a stream in an allocation of its own, with room to grow.
fn rehomed(rest: &[u8]) -> BytesMut {
    let mut b = BytesMut::with_capacity((rest.len() * 2).max(REHOME_BELOW));
    b.extend_from_slice(rest);
    b
}

impl<'c> Flows<'c> {
    pub fn new(cat: &'c Catalogue, port: Option<u16>) -> Self {
        Flows { cat, port, conns: Vec::new(), index: HashMap::new(), last: None, emitted: 0, cut: None }
    }

    /// Hand on large frames cut to a prefix that holds their header, skipping
    /// their bodies instead of buffering them (see `CutBodies`).
    pub fn cut_bodies(&mut self, cut: CutBodies) {
        self.cut = Some(cut);
    }

    pub fn connections(&self) -> usize {
        self.conns.iter().filter(|c| !c.not_kafka && c.client.is_some()).count()
    }

    /// Feed one TCP segment; returns the frames it completed.
    pub fn push(&mut self, timestamp: f64, seg: &Segment) -> Vec<CapturedFrame> {
        let mut out = Vec::new();
        self.push_into(timestamp, seg, &mut out);
        out
    }

    /// Feed one TCP segment; the frames it completed are appended to `out`.
    pub fn push_into(&mut self, timestamp: f64, seg: &Segment, out: &mut Vec<CapturedFrame>) {
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
                self.conns.push(Conn { id, ends: [from, to], halves: [Half::default(), Half::default()], client: None, not_kafka: false, outstanding: HashMap::new() });
                self.index.insert((from, to), (id, 0));
                self.index.insert((to, from), (id, 1));
                (id, 0)
            }
        };
        self.last = Some(ci);
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
        if let Some(ack) = seg.ack {
            // An ack past a hole in the other direction: that data was lost to the capture.
            if self.conns[ci].halves[1 - hi].tcp.holds_data() {
                self.with_stream(ci, 1 - hi, timestamp, out, |tcp, each| tcp.acknowledged_each(ack, each));
            }
        }
        self.with_stream(ci, hi, timestamp, out, |tcp, each| {
            tcp.push_each(seg.seq, seg.syn, seg.payload, each);
            if seg.fin || seg.rst {
                tcp.flush_each(each);
            }
        });
    }

    /// End of capture: deliver what is held back behind gaps.
    pub fn finish(&mut self, timestamp: f64) -> Vec<CapturedFrame> {
        let mut out = Vec::new();
        for ci in 0..self.conns.len() {
            for hi in 0..2 {
                self.with_stream(ci, hi, timestamp, &mut out, |tcp, each| tcp.flush_each(each));
                self.cut_frames(ci, hi, timestamp, true, &mut out);
            }
        }
        out
    }

    /// Run `f` on one direction's reassembly, absorbing what it delivers piece by
    /// piece (each piece is cut into frames before the next arrives).
    fn with_stream(&mut self, ci: usize, hi: usize, timestamp: f64, out: &mut Vec<CapturedFrame>, f: impl FnOnce(&mut HalfStream, &mut dyn FnMut(Chunk<'_>))) {
        let mut tcp = std::mem::take(&mut self.conns[ci].halves[hi].tcp);
        f(&mut tcp, &mut |c| self.absorb(ci, hi, c, timestamp, out));
        self.conns[ci].halves[hi].tcp = tcp;
    }

    fn absorb(&mut self, ci: usize, hi: usize, piece: Chunk<'_>, timestamp: f64, out: &mut Vec<CapturedFrame>) {
        let half = &mut self.conns[ci].halves[hi];
        match piece {
            Chunk::Data(mut d) => {
                if let Some(c) = &mut half.cutting {
                    // The body of a cut frame: count it, keep nothing.
                    let n = c.remaining.min(d.len());
                    c.remaining -= n;
                    d = &d[n..];
                }
                half.buf.extend_from_slice(d)
            }
            Chunk::Gap(_) => {
                // A partial frame before the gap can never complete.
                half.cutting = None;
                half.buf.clear();
                half.resync = true;
                half.gap_pending = true;
            }
        }
        self.cut_frames(ci, hi, timestamp, false, out);
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
            if let Some(c) = &half.cutting {
                if c.remaining > 0 {
                    return;
                }
                let Some(c) = half.cutting.take() else { return };
                self.emit(ci, hi, c.prefix, c.total, timestamp, out);
                continue;
            }
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
                        half.buf.advance(at);
                        half.resync = false;
                    }
                    (None, Some(at)) => {
                        half.buf.advance(at);
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
                half.buf.advance(1);
                continue;
            }
            let total = 4 + size as usize;
            if half.buf.len() < total {
                if let Some(cut) = &self.cut {
                    if total > cut.above && half.buf.len() <= cut.above {
                        // Skip the body if the header is within what came so far.
                        let pair = if is_request { None } else { conn.outstanding.get(&i32_at(&half.buf, 4)).copied() };
                        if (is_request || pair.is_some()) && header_within(self.cat, &half.buf, is_request, pair, cut.release.as_deref()) {
                            let have = half.buf.len();
                            let prefix = half.buf.split().freeze();
                            half.cutting = Some(Cutting { prefix, total, remaining: total - have });
                            half.buf = BytesMut::new();
                            half.split = 0;
                            return;
                        }
                    }
                }
                // Room for the rest of the frame at once, rather than growing segment by segment.
                half.buf.reserve((total - half.buf.len()).min(RESERVE_AHEAD));
                return;
            }
            // Hand the frame's bytes over without copying; keep only what follows it.
            let bytes: Bytes = half.buf.split_to(total).freeze();
            half.split += total;
            if half.split >= REHOME_AFTER && half.buf.len() < REHOME_BELOW {
                half.buf = if half.buf.is_empty() { BytesMut::new() } else { rehomed(&half.buf) };
                half.split = 0;
            }
            self.emit(ci, hi, bytes, total, timestamp, out);
        }
    }

    /// Hand on a frame cut from the stream (pairing it by correlation id).
    fn emit(&mut self, ci: usize, hi: usize, bytes: Bytes, len: usize, timestamp: f64, out: &mut Vec<CapturedFrame>) {
        let conn = &mut self.conns[ci];
        let is_request = conn.client == Some(hi);
        let half = &mut conn.halves[hi];
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
        out.push(CapturedFrame { index: self.emitted, timestamp, conn: conn.id, from, to, direction, bytes, correlation_id, api_key, api_version, after_gap, len });
        self.emitted += 1;
    }
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    b.get(at..at + 4).map_or(-1, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Does the header of the frame starting `prefix` decode within it (header only,
/// as a listing decodes it)?
fn header_within(cat: &Catalogue, prefix: &[u8], is_request: bool, pair: Option<(i16, i16)>, release: Option<&str>) -> bool {
    let opts = DecodeOptions {
        direction: Some(if is_request { Direction::Request } else { Direction::Response }),
        api_key: pair.map(|p| p.0),
        api_version: pair.map(|p| p.1),
        release: release.map(str::to_string),
        header_only: true,
        ..Default::default()
    };
    decode_frame(cat, complete_prefix(prefix), 0, &opts).error.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::example::example_frame;
    use crate::encode::FrameSpec;
    use std::net::{IpAddr, Ipv4Addr};

    /// The smallest frame of an API, with this correlation id and `pad` more bytes of body.
    fn frame(direction: Direction, api_key: i16, version: i16, corr: i32, pad: usize) -> Vec<u8> {
        let mut f = example_frame(Catalogue::builtin(), &FrameSpec { direction, api_key, version, release: None }).unwrap();
        let at = if direction == Direction::Request { 8 } else { 4 };
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
        let mut flows = Flows::new(Catalogue::builtin(), None);
        if cut {
            flows.cut_bodies(CutBodies { above: 16 * 1024, release: None });
        }
        let client = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 50000);
        let server = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 9092);
        let mut out = Vec::new();
        for (i, (from_client, seq, payload)) in segs.iter().enumerate() {
            let (src, dst) = if *from_client { (client, server) } else { (server, client) };
            let seg = Segment { src: src.0, dst: dst.0, src_port: src.1, dst_port: dst.1, seq: *seq, ack: None, syn: false, fin: false, rst: false, payload };
            flows.push_into(i as f64, &seg, &mut out);
        }
        out.extend(flows.finish(segs.len() as f64));
        out
    }

    fn traffic() -> Vec<(bool, Vec<u8>)> {
        use Direction::{Request, Response};
        vec![
            (true, frame(Request, 18, 3, 1, 0)),      // ApiVersions: small, decides the client side
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
        let mut opts = DecodeOptions { direction: Some(f.direction), header_only: true, ..Default::default() };
        if f.direction == Direction::Response {
            opts.api_key = f.api_key;
            opts.api_version = f.api_version;
        }
        let d = decode_frame(Catalogue::builtin(), bytes, 0, &opts);
        format!("{:?} {:?} {:?} {:?}", d.api_key, d.api_version, d.error, &d.root.children[1..])
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
                assert_eq!((w.index, w.conn, w.direction, w.correlation_id, w.api_key, w.api_version, w.after_gap), (c.index, c.conn, c.direction, c.correlation_id, c.api_key, c.api_version, c.after_gap));
                assert_eq!((w.len, w.bytes.len()), (c.len, w.len));
                assert!(w.bytes.starts_with(&c.bytes));
                if c.is_cut() {
                    cuts += 1;
                    assert!(c.len > 16 * 1024 && c.bytes.len() <= 16 * 1024);
                    assert_eq!(header_of(w, w.bytes.clone()), header_of(c, complete_prefix(&c.bytes)));
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
        let strip = |v: Vec<CapturedFrame>| v.into_iter().map(|f| (f.index, f.direction, f.correlation_id, f.api_key, f.len, f.after_gap)).collect::<Vec<_>>();
        assert_eq!(strip(run(&segs, false)), strip(run(&segs, true)));
    }
}
