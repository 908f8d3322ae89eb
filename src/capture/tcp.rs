//! TCP reassembly for one direction of a connection: out-of-order segments,
//! retransmissions and overlaps, sequence wraparound, and gaps where data is
//! missing (marked, then skipped, so decoding can resync).

use std::collections::{BTreeMap, VecDeque};

/// Out-of-order data held back before a gap is declared.
pub const MAX_PENDING: usize = 8 << 20;
/// The most recent delivered bytes a direction keeps to compare
/// retransmissions with, once it has retransmitted ([`HalfStream::keep_recent`]).
pub const RECENT: usize = 64 << 10;

/// What the stream hands on, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Data(Vec<u8>),
    /// This many bytes never arrived.
    Gap(u64),
}

#[derive(Default, Debug)]
pub struct HalfStream {
    /// Sequence number of stream offset 0.
    base: Option<u32>,
    /// Next stream offset to deliver.
    next: u64,
    pending: BTreeMap<u64, Vec<u8>>,
    pending_bytes: usize,
    /// Segments whose bytes differed from the copy already held for the
    /// same stream bytes (the copy held first is kept); boxed, as it is rare
    /// and every connection's two directions carry the field.
    pub conflict: Option<Box<Conflict>>,
    /// The last [`RECENT`] bytes delivered, kept from the first segment that
    /// repeated bytes already handed on (a direction that retransmitted once
    /// usually does again); none until then, as copying every byte costs
    /// each connection that never retransmits.
    recent: Option<Box<Recent>>,
}

/// The most recent delivered bytes of a stream, ending at stream offset `end`.
#[derive(Debug, Default)]
struct Recent {
    bytes: VecDeque<u8>,
    end: u64,
}

/// Segments with other bytes than the copy held, and where the first differed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub segments: u32,
    /// The stream offset of the first byte that differed.
    pub first: u64,
    /// Where the last segment counted starts: a segment compared twice
    /// (with delivered bytes, then with held ones) counts once.
    last_segment: u64,
}

impl HalfStream {
    /// Map a 32-bit sequence number to the 64-bit stream offset nearest `next`
    /// (sequence numbers wrap every 4 GiB).
    fn offset(&self, seq: u32) -> u64 {
        const HALF: u64 = 1 << 31;
        let delta = u64::from(seq.wrapping_sub(self.base.unwrap_or(seq)));
        let c = (self.next & !0xffff_ffff) | delta;
        if c + HALF < self.next {
            c + (1 << 32)
        } else if c > self.next + HALF && c >= 1 << 32 {
            c - (1 << 32)
        } else {
            c
        }
    }

    /// Take one segment; returns what became deliverable.
    pub fn push(&mut self, seq: u32, syn: bool, data: &[u8]) -> Vec<Piece> {
        let mut out = Vec::new();
        self.push_each(seq, syn, data, &mut |c| out.push(c.to_piece()));
        out
    }

    /// Take one segment; hand what became deliverable to `each`, in order, without
    /// copying data that arrives in order.
    pub(crate) fn push_each(
        &mut self,
        seq: u32,
        syn: bool,
        data: &[u8],
        each: &mut dyn FnMut(Chunk<'_>),
    ) {
        if syn {
            if self.base.is_none() {
                self.base = Some(seq.wrapping_add(1));
            }
            return;
        }
        if data.is_empty() {
            return;
        }
        if self.base.is_none() {
            self.base = Some(seq); // capture started mid-connection
        }
        let start = self.offset(seq);
        let end = start + data.len() as u64;
        if end <= self.next {
            return; // retransmission of delivered data: the caller compares it
        }
        let segment = start;
        let skip = self.next.saturating_sub(start) as usize;
        let start = start.max(self.next);
        let data = &data[skip..];
        if start == self.next && !self.overlaps_pending(start, end) {
            self.next = end;
            self.remember(data);
            each(Chunk::Data(data));
            self.drain(each);
            return;
        }
        // Out of order, or over bytes held back: what no held segment has yet.
        self.hold(segment, start, data);
        self.drain(each);
        if self.pending_bytes > MAX_PENDING {
            self.skip_gap(each);
        }
    }

    /// Whether a held-back segment overlaps stream bytes `start..end` (held
    /// segments never overlap each other: [`Self::hold`]).
    fn overlaps_pending(&self, start: u64, end: u64) -> bool {
        self.pending
            .range(..end)
            .next_back()
            .is_some_and(|(&s, d)| s + d.len() as u64 > start)
    }

    /// Hold back the parts of `data` (at stream `start`) that no held segment
    /// has: the copy that came first is kept; where this one's bytes differ
    /// from it, that is a conflict ([`Self::note_conflict`]).
    fn hold(&mut self, segment: u64, start: u64, data: &[u8]) {
        let end = start + data.len() as u64;
        // The held segments it overlaps, as ranges, in order.
        let mut covered: Vec<(u64, u64)> = Vec::new();
        let mut differs = None;
        for (&s, d) in self.pending.range(..end).rev() {
            let e = s + d.len() as u64;
            if e <= start {
                break;
            }
            let (from, to) = (s.max(start), e.min(end));
            let ours = &data[(from - start) as usize..(to - start) as usize];
            let held = &d[(from - s) as usize..(to - s) as usize];
            if let Some(i) = ours.iter().zip(held).position(|(a, b)| a != b) {
                let at = from + i as u64;
                differs = Some(differs.map_or(at, |f: u64| f.min(at)));
            }
            covered.push((s, e));
        }
        if let Some(at) = differs {
            self.note_conflict(at, segment);
        }
        covered.reverse();
        let mut at = start;
        for (s, e) in covered.into_iter().chain([(end, end)]) {
            if s > at {
                let piece = data[(at - start) as usize..(s - start) as usize].to_vec();
                self.pending_bytes += piece.len();
                self.pending.insert(at, piece);
            }
            at = at.max(e);
        }
    }

    /// The stream offset of a segment's first byte, once the stream has a start.
    pub(crate) fn stream_offset(&self, seq: u32) -> Option<u64> {
        self.base.map(|_| self.offset(seq))
    }

    /// The stream offsets of a segment's bytes that were delivered already
    /// (a retransmission or an overlap), to be compared with a copy the
    /// caller still holds; `None` when it has none.
    pub(crate) fn already_delivered(&self, seq: u32, len: usize) -> Option<(u64, u64)> {
        self.base?;
        let start = self.offset(seq);
        let end = (start + len as u64).min(self.next);
        (start < end).then_some((start, end))
    }

    /// Keep the most recent delivered bytes from now on, to compare later
    /// retransmissions with.
    pub fn keep_recent(&mut self) {
        if self.recent.is_none() {
            self.recent = Some(Box::new(Recent {
                bytes: VecDeque::new(),
                end: self.next,
            }));
        }
    }

    /// Stop keeping recent bytes; whether any were kept.
    pub(crate) fn drop_recent(&mut self) -> bool {
        self.recent.take().is_some()
    }

    pub(crate) fn keeps_recent(&self) -> bool {
        self.recent.is_some()
    }

    /// Bytes just delivered, which end at `self.next`.
    fn remember(&mut self, data: &[u8]) {
        let Some(r) = &mut self.recent else {
            return;
        };
        let data = &data[data.len().saturating_sub(RECENT)..];
        let over = (r.bytes.len() + data.len()).saturating_sub(RECENT);
        r.bytes.drain(..over);
        r.bytes.extend(data);
        r.end = self.next;
    }

    /// Compare `payload`, the bytes at stream offsets `start..` that were
    /// delivered already, with the recent bytes kept: a difference is a
    /// conflict. The stream offsets compared, if any.
    pub(crate) fn compare_recent(&mut self, start: u64, payload: &[u8]) -> Option<(u64, u64)> {
        let r = self.recent.as_deref()?;
        let kept = r.end - r.bytes.len() as u64;
        let (from, to) = (start.max(kept), (start + payload.len() as u64).min(r.end));
        if from >= to {
            return None;
        }
        let ours = &payload[(from - start) as usize..(to - start) as usize];
        let theirs = r.bytes.range((from - kept) as usize..(to - kept) as usize);
        if let Some(i) = ours.iter().zip(theirs).position(|(a, b)| a != b) {
            self.note_conflict(from + i as u64, start);
        }
        Some((from, to))
    }

    /// The segment starting at stream offset `segment` carried other bytes
    /// than the copy held, the first at stream `offset`.
    pub fn note_conflict(&mut self, offset: u64, segment: u64) {
        if let Some(c) = &mut self.conflict {
            if c.last_segment != segment {
                c.segments = c.segments.saturating_add(1);
                c.last_segment = segment;
            }
            return;
        }
        self.conflict = Some(Box::new(Conflict {
            segments: 1,
            first: offset,
            last_segment: segment,
        }));
    }

    /// Deliver pending segments that have become contiguous.
    fn drain(&mut self, each: &mut dyn FnMut(Chunk<'_>)) {
        while let Some((&s, _)) = self.pending.first_key_value() {
            if s > self.next {
                break;
            }
            let (s, d) = self.pending.pop_first().unwrap_or_default();
            self.pending_bytes -= d.len();
            let end = s + d.len() as u64;
            if end > self.next {
                let skip = (self.next - s) as usize;
                self.next = end;
                self.remember(&d[skip..]);
                each(Chunk::Data(&d[skip..]));
            }
        }
    }

    /// Give up on missing data: jump to the first held-back segment.
    fn skip_gap(&mut self, each: &mut dyn FnMut(Chunk<'_>)) {
        if let Some((&s, _)) = self.pending.first_key_value() {
            each(Chunk::Gap(s - self.next));
            self.next = s;
            if let Some(r) = &mut self.recent {
                // What the gap held is unknown: only bytes after it compare.
                r.bytes.clear();
                r.end = s;
            }
            self.drain(each);
        }
    }

    /// The peer acknowledged everything before `ack`: data missing below it was
    /// sent but not captured, so waiting for it is pointless.
    pub fn acknowledged(&mut self, ack: u32) -> Vec<Piece> {
        let mut out = Vec::new();
        self.acknowledged_each(ack, &mut |c| out.push(c.to_piece()));
        out
    }

    /// `acknowledged`, handing what became deliverable to `each`.
    pub(crate) fn acknowledged_each(&mut self, ack: u32, each: &mut dyn FnMut(Chunk<'_>)) {
        if self.base.is_none() || self.pending.is_empty() {
            return;
        }
        let acked = self.offset(ack);
        while self
            .pending
            .first_key_value()
            .is_some_and(|(&s, _)| s < acked && s > self.next)
        {
            self.skip_gap(each);
        }
    }

    /// Whether `acknowledged` could deliver anything (data is held back).
    pub(crate) fn holds_data(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Bytes of out-of-order segments held back, waiting for the data before them.
    pub(crate) fn held_bytes(&self) -> usize {
        self.pending_bytes
    }

    /// Stream offset of the next byte to deliver: every byte before it was
    /// delivered as data or as a gap.
    pub fn delivered(&self) -> u64 {
        self.next
    }

    /// End of the capture or connection: whatever is held back follows a gap.
    pub fn flush(&mut self) -> Vec<Piece> {
        let mut out = Vec::new();
        self.flush_each(&mut |c| out.push(c.to_piece()));
        out
    }

    /// `flush`, handing what it delivers to `each`.
    pub(crate) fn flush_each(&mut self, each: &mut dyn FnMut(Chunk<'_>)) {
        while !self.pending.is_empty() {
            self.skip_gap(each);
        }
    }
}

/// What the stream hands on, borrowed: in-order data is not copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chunk<'a> {
    Data(&'a [u8]),
    /// This many bytes never arrived.
    Gap(u64),
}

impl Chunk<'_> {
    pub(crate) fn to_piece(self) -> Piece {
        match self {
            Chunk::Data(d) => Piece::Data(d.to_vec()),
            Chunk::Gap(n) => Piece::Gap(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pieces: Vec<Piece>) -> Vec<u8> {
        pieces
            .into_iter()
            .flat_map(|p| if let Piece::Data(d) = p { d } else { vec![] })
            .collect()
    }

    #[test]
    fn in_order_out_of_order_duplicates_and_overlaps() {
        let mut h = HalfStream::default();
        assert!(h.push(99, true, &[]).is_empty());
        let mut got = Vec::new();
        got.extend(data(h.push(100, false, b"abc")));
        got.extend(data(h.push(106, false, b"ghi"))); // ahead: held
        got.extend(data(h.push(100, false, b"abc"))); // duplicate
        got.extend(data(h.push(102, false, b"cdef"))); // overlaps, fills the hole
        assert_eq!(got, b"abcdefghi");
    }

    #[test]
    fn overlaps_with_other_bytes_keep_the_first_copy_and_are_counted() {
        let mut h = HalfStream::default();
        h.push(99, true, b"");
        let mut got = data(h.push(100, false, b"ab"));
        // Held back, then the same bytes again: no conflict.
        got.extend(data(h.push(104, false, b"ef")));
        got.extend(data(h.push(104, false, b"ef")));
        assert_eq!(h.conflict, None);
        // Other bytes over the held segment: counted, the first copy kept.
        got.extend(data(h.push(103, false, b"dXf")));
        let c = h.conflict.as_deref().unwrap();
        assert_eq!((c.segments, c.first), (1, 4));
        // (the first byte that differs: `X` over `e`)
        got.extend(data(h.push(102, false, b"c")));
        assert_eq!(got, b"abcdef");
        // Delivered bytes are for the caller to compare: where they are.
        assert_eq!(h.already_delivered(101, 3), Some((1, 4)));
        assert_eq!(h.already_delivered(106, 3), None);
    }

    #[test]
    fn sequence_wraparound() {
        let mut h = HalfStream::default();
        h.push(u32::MAX - 2, true, &[]);
        let mut got = data(h.push(u32::MAX - 1, false, b"ab"));
        got.extend(data(h.push(0, false, b"cd")));
        assert_eq!(got, b"abcd");
    }

    #[test]
    fn an_acknowledged_hole_becomes_a_gap_at_once() {
        let mut h = HalfStream::default();
        h.push(0, true, &[]);
        h.push(1, false, b"ab");
        assert!(h.push(10, false, b"xy").is_empty(), "held back");
        assert!(
            h.acknowledged(5).iter().all(|p| *p != Piece::Gap(7)),
            "the ack does not reach the held data"
        );
        assert_eq!(
            h.acknowledged(12),
            vec![Piece::Gap(7), Piece::Data(b"xy".to_vec())]
        );
    }

    #[test]
    fn loss_becomes_a_gap_at_flush() {
        let mut h = HalfStream::default();
        h.push(0, true, &[]);
        let mut pieces = h.push(1, false, b"ab");
        pieces.extend(h.push(10, false, b"xy"));
        pieces.extend(h.flush());
        assert_eq!(
            pieces,
            vec![
                Piece::Data(b"ab".to_vec()),
                Piece::Gap(7),
                Piece::Data(b"xy".to_vec())
            ]
        );
    }

    #[test]
    fn recent_bytes_are_the_last_64_kib_delivered_and_none_across_a_gap() {
        let mut h = HalfStream::default();
        h.push(100, true, &[]);
        let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        h.push(101, false, &data[..1000]);
        h.keep_recent();
        for (k, chunk) in data[1000..].chunks(1448).enumerate() {
            h.push(101 + 1000 + (k * 1448) as u32, false, chunk);
        }
        // Kept: the last RECENT bytes delivered.
        let last = 100_000 - RECENT as u64;
        assert_eq!(
            h.compare_recent(99_000, &data[99_000..]),
            Some((99_000, 100_000))
        );
        assert_eq!(h.compare_recent(0, &data[..1000]), None);
        assert_eq!(
            h.compare_recent(last - 10, &data[last as usize - 10..last as usize + 10]),
            Some((last, last + 10))
        );
        assert_eq!(h.conflict, None);
        let mut other = data[99_000..99_010].to_vec();
        other[4] ^= 1;
        h.compare_recent(99_000, &other);
        assert_eq!(h.conflict.as_deref().map(|c| c.first), Some(99_004));
        // A gap: what was kept before it is gone, what follows is kept.
        h.push(101 + 100_500, false, &[7; 10]);
        h.flush();
        assert_eq!(h.compare_recent(99_000, &data[99_000..]), None);
        assert_eq!(
            h.compare_recent(100_500, &[7; 10]),
            Some((100_500, 100_510))
        );
        assert!(h.drop_recent());
        assert_eq!(h.compare_recent(100_500, &[7; 10]), None);
    }
}
