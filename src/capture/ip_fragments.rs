//! IP fragments put back together, IPv4 and IPv6, so that a TCP segment a
//! host sent in fragments (a path MTU below the segment size, jumbo frames
//! captured on a smaller link) reaches TCP reassembly like any other. What
//! never completes is counted ([`FragmentCounts::lost`]), never dropped silently.
//!
//! Budgets: a datagram is at most 65,535 bytes of payload; at most
//! [`MAX_PENDING`] datagrams wait for their missing pieces, the oldest
//! given up (and counted) beyond that.

use super::link::{ip_datagram, ip_packet};
use std::collections::VecDeque;
use std::net::IpAddr;

/// Datagrams waiting for pieces at once.
pub const MAX_PENDING: usize = 256;
/// The most payload a datagram can have (an IPv4 total length's range less its header).
const MAX_PAYLOAD: usize = 65_515;

/// One fragment of a datagram, as read from its packet.
struct Piece<'a> {
    key: Key,
    /// Where its bytes go in the datagram's payload.
    offset: usize,
    more: bool,
    data: &'a [u8],
}

/// What names one datagram: addresses, protocol and identification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    src: IpAddr,
    dst: IpAddr,
    protocol: u8,
    id: u32,
}

struct Pending {
    key: Key,
    /// The pieces in the order they came (the first to cover a byte wins).
    pieces: Vec<(usize, Vec<u8>)>,
    /// The payload's length, known from the last piece.
    total: Option<usize>,
    held: usize,
}

/// What a packet was to the reassembler.
pub enum Defragmented {
    /// Not a fragment: the packet as it is.
    Whole,
    /// A fragment held until its datagram is whole.
    Held,
    /// The last missing piece: the datagram as a raw IP packet (link type raw).
    Complete(Vec<u8>),
}

/// Datagrams being put back together, and the counts the capture reports.
#[derive(Default)]
pub struct Fragments {
    pending: VecDeque<Pending>,
    pub counts: FragmentCounts,
}

/// What the fragments of a capture came to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FragmentCounts {
    /// Fragments read, and datagrams they made whole.
    pub seen: usize,
    pub reassembled: usize,
    /// Fragments of datagrams that never completed (or went over a budget),
    /// and their bytes.
    pub lost: usize,
    pub lost_bytes: u64,
}

impl Fragments {
    /// Take one captured packet.
    pub fn take(&mut self, link_type: u32, data: &[u8]) -> Defragmented {
        let Some(piece) = ip_packet(link_type, data).and_then(fragment) else {
            return Defragmented::Whole;
        };
        self.counts.seen += 1;
        let end = piece.offset + piece.data.len();
        if end > MAX_PAYLOAD {
            self.lose(1, piece.data.len());
            return Defragmented::Held;
        }
        let at = match self.pending.iter().position(|p| p.key == piece.key) {
            Some(at) => at,
            None => {
                if self.pending.len() >= MAX_PENDING {
                    if let Some(old) = self.pending.pop_front() {
                        self.lose(old.pieces.len(), old.held);
                    }
                }
                self.pending.push_back(Pending {
                    key: piece.key,
                    pieces: Vec::new(),
                    total: None,
                    held: 0,
                });
                self.pending.len() - 1
            }
        };
        let p = &mut self.pending[at];
        if !piece.more {
            p.total = Some(end);
        }
        p.held += piece.data.len();
        p.pieces.push((piece.offset, piece.data.to_vec()));
        let Some(total) = p.total.filter(|&t| covers(&p.pieces, t)) else {
            return Defragmented::Held;
        };
        let Some(p) = self.pending.remove(at) else {
            return Defragmented::Held;
        };
        self.counts.reassembled += 1;
        let mut payload = vec![0; total];
        // Later pieces first, so that the first to cover a byte is what stays.
        for (offset, bytes) in p.pieces.iter().rev().filter(|(o, _)| *o < total) {
            let n = bytes.len().min(total - offset);
            payload[*offset..*offset + n].copy_from_slice(&bytes[..n]);
        }
        Defragmented::Complete(raw_packet(&p.key, &payload))
    }

    /// The capture ended: what still waits is lost.
    pub fn finish(&mut self) {
        while let Some(p) = self.pending.pop_front() {
            self.lose(p.pieces.len(), p.held);
        }
    }

    fn lose(&mut self, pieces: usize, bytes: usize) {
        self.counts.lost += pieces;
        self.counts.lost_bytes += bytes as u64;
    }
}

/// Whether the pieces cover `0..total` with no hole.
fn covers(pieces: &[(usize, Vec<u8>)], total: usize) -> bool {
    let mut spans: Vec<(usize, usize)> = pieces.iter().map(|(o, b)| (*o, o + b.len())).collect();
    spans.sort_unstable();
    let mut reached = 0;
    for (start, end) in spans {
        if reached >= total {
            break;
        }
        if start > reached {
            return false;
        }
        reached = reached.max(end);
    }
    reached >= total
}

/// The fragment an IP packet is, if it is one.
fn fragment(ip: &[u8]) -> Option<Piece<'_>> {
    let d = ip_datagram(ip)?;
    let f = d.fragment?;
    Some(Piece {
        key: Key {
            src: d.src,
            dst: d.dst,
            protocol: d.protocol,
            id: f.id,
        },
        offset: f.offset,
        more: f.more,
        data: d.payload,
    })
}

/// The whole datagram as an IP packet of its own, header made anew.
fn raw_packet(key: &Key, payload: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(40 + payload.len());
    match (key.src, key.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            p.extend_from_slice(&[0x45, 0]);
            p.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
            p.extend_from_slice(&(key.id as u16).to_be_bytes());
            p.extend_from_slice(&[0, 0, 64, key.protocol, 0, 0]);
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
        }
        (s, d) => {
            let octets = |a: IpAddr| match a {
                IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
                IpAddr::V6(a) => a.octets(),
            };
            p.extend_from_slice(&[0x60, 0, 0, 0]);
            p.extend_from_slice(&(payload.len() as u16).to_be_bytes());
            p.extend_from_slice(&[key.protocol, 64]);
            p.extend_from_slice(&octets(s));
            p.extend_from_slice(&octets(d));
        }
    }
    p.extend_from_slice(payload);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 fragment of datagram `id` (raw link type): `data` at `offset`.
    fn v4(id: u16, offset: usize, more: bool, data: &[u8]) -> Vec<u8> {
        let mut p = vec![
            0x45, 0, 0, 0, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        p[2..4].copy_from_slice(&((20 + data.len()) as u16).to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        let field = (offset / 8) as u16 | (u16::from(more) << 13);
        p[6..8].copy_from_slice(&field.to_be_bytes());
        p.extend_from_slice(data);
        p
    }

    fn payload(d: Defragmented) -> Option<Vec<u8>> {
        match d {
            Defragmented::Complete(ip) => Some(ip[20..].to_vec()),
            _ => None,
        }
    }

    #[test]
    fn overlaps_keep_the_first_bytes_and_pieces_past_the_end_are_ignored() {
        let mut f = Fragments::default();
        let raw = super::super::link::LINKTYPE_RAW;
        assert!(payload(f.take(raw, &v4(1, 0, true, &[1; 16]))).is_none());
        // Overlaps the first piece's last 8 bytes, and a piece beyond the end.
        assert!(payload(f.take(raw, &v4(1, 8, true, &[2; 16]))).is_none());
        assert!(payload(f.take(raw, &v4(1, 64, true, &[3; 8]))).is_none());
        let whole = payload(f.take(raw, &v4(1, 24, false, &[4; 8]))).unwrap();
        assert_eq!(
            whole,
            [[1; 16], [2; 16]].concat()[..16]
                .iter()
                .chain(&[2; 8])
                .chain(&[4; 8])
                .copied()
                .collect::<Vec<_>>()
        );
        assert_eq!(
            (f.counts.seen, f.counts.reassembled, f.counts.lost),
            (4, 1, 0)
        );
    }

    #[test]
    fn datagrams_never_completed_are_counted_and_pending_ones_bounded() {
        let mut f = Fragments::default();
        let raw = super::super::link::LINKTYPE_RAW;
        for id in 0..(MAX_PENDING as u16 + 10) {
            assert!(payload(f.take(raw, &v4(id, 8, false, &[0; 8]))).is_none());
        }
        assert_eq!((f.counts.lost, f.counts.lost_bytes), (10, 80));
        f.finish();
        assert_eq!(f.counts.lost, MAX_PENDING + 10);
        // A fragment that would end past the largest datagram is lost at once.
        assert!(payload(f.take(raw, &v4(9, 65_528, false, &[0; 8]))).is_none());
        assert_eq!(f.counts.lost, MAX_PENDING + 11);
    }
}
