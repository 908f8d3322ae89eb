//! What the frame finders of a byte stream share: the largest frame taken
//! for a real one, a cut frame's prefix made a frame of its own, and what
//! looking for frames cost.

use bytes::Bytes;

/// Frames larger than this are taken for garbage when looking for a frame start.
pub const MAX_FRAME: usize = 100 << 20;

/// What reading a capture cost, for budgets and their tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effort {
    /// Candidate frames decoded (header, then body values) to find the client side or to resync.
    pub candidate_decodes: u64,
    /// Bytes those decodings reached (each stops at its first error).
    pub candidate_bytes: u64,
    /// Positions looked at as possible frame starts while resyncing.
    pub resync_positions: u64,
    /// The most reassembly held after a segment: buffer capacity, held-back
    /// segments and prefixes of cut frames, all connections together.
    pub peak_held: usize,
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
