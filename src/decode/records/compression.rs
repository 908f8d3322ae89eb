//! Bounded decompression of record payloads: gzip, snappy (raw and the xerial
//! framing Java clients write), lz4 (Kafka's LZ4 frame) and zstd. Output never
//! exceeds the limit, whatever the compressed data claims.

use crate::budget::{Budget, Exhausted};
use crate::decode::ErrorKind;
use std::io::Read;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl Codec {
    pub(crate) fn from_attributes(bits: u16) -> Option<Codec> {
        Some(match bits & 0x07 {
            0 => Codec::None,
            1 => Codec::Gzip,
            2 => Codec::Snappy,
            3 => Codec::Lz4,
            4 => Codec::Zstd,
            _ => return None,
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Gzip => "gzip",
            Codec::Snappy => "snappy",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }
}

/// The xerial snappy-java stream header: magic, version, compatible version.
const XERIAL_MAGIC: &[u8] = &[0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];

/// Why data did not decompress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecompressError {
    /// The output would pass the limit (which a caller's budget set).
    OverLimit { limit: usize },
    /// The data is not valid for its codec.
    Corrupt(String),
}

impl std::fmt::Display for DecompressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecompressError::OverLimit { limit } => {
                write!(f, "decompressed data exceeds the limit of {limit} bytes")
            }
            DecompressError::Corrupt(why) => f.write_str(why),
        }
    }
}

impl From<String> for DecompressError {
    fn from(why: String) -> Self {
        DecompressError::Corrupt(why)
    }
}

/// Decompress `data`, failing once the output would pass `limit` bytes.
pub fn decompress(codec: Codec, data: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    match codec {
        Codec::None => Ok(data.to_vec()),
        Codec::Gzip => read_bounded(flate2::read::GzDecoder::new(data), limit, gzip_size(data)),
        Codec::Lz4 => read_bounded(lz4_flex::frame::FrameDecoder::new(data), limit, None),
        Codec::Zstd => {
            // The decoder allocates the window the frame header declares before
            // producing a byte: a declared window over the limit is refused unread.
            if zstd_window_size(data)
                .is_some_and(|window| window > limit as u64 && window > MIN_ZSTD_WINDOW)
            {
                return Err(DecompressError::OverLimit { limit });
            }
            let dec =
                ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| format!("zstd: {e}"))?;
            read_bounded(dec, limit, zstd_content_size(data))
        }
        Codec::Snappy if data.starts_with(XERIAL_MAGIC) => xerial(data, limit),
        Codec::Snappy => raw_snappy(data, limit),
    }
}

/// Windows this small are always allowed: every encoder's smallest. (A
/// frame decoded ahead of its turn has a room no larger, so that a window
/// it accepts is accepted in its turn: `pipeline::capture`.)
pub(crate) const MIN_ZSTD_WINDOW: u64 = 1 << 20;

/// The window size a zstd frame header declares (RFC 8878, 3.1.1.1), when
/// `data` starts with one; a single-segment frame's window is its content size.
fn zstd_window_size(data: &[u8]) -> Option<u64> {
    if data.get(..4)? != [0x28, 0xb5, 0x2f, 0xfd] {
        return None;
    }
    let descriptor = *data.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    if !single_segment {
        let w = *data.get(5)?;
        let exponent = u64::from(w >> 3);
        let base = 1u64 << (10 + exponent);
        return Some(base + (base / 8) * u64::from(w & 7));
    }
    let dict_id_bytes = [0usize, 1, 2, 4][usize::from(descriptor & 3)];
    let fcs_bytes = [1usize, 2, 4, 8][usize::from(descriptor >> 6)];
    let at = 5 + dict_id_bytes;
    let size = data
        .get(at..at + fcs_bytes)?
        .iter()
        .enumerate()
        .fold(0u64, |size, (i, b)| size | u64::from(*b) << (8 * i));
    Some(if fcs_bytes == 2 { size + 256 } else { size })
}

/// [`decompress`] within `budget`: the output counts against both its
/// budgets and is held until the tree that shows it is dropped. An error says
/// what was expected and, over a budget, which option raises it.
pub(crate) fn decompress_within(
    codec: Codec,
    data: &[u8],
    budget: &Budget,
) -> Result<Vec<u8>, (ErrorKind, String)> {
    let (room, by) = budget.decompress_room();
    match decompress(codec, data, room) {
        Ok(mut out) => {
            // The budget counts bytes held: a vector grown by doubling may hold twice as many.
            out.shrink_to_fit();
            budget.spend_decompressed(out.len() as u64);
            if !budget.hold(out.len() as u64) {
                return Err((
                    ErrorKind::Budget,
                    budget.exhausted_message(Exhausted::Expanded, "decompressed data"),
                ));
            }
            Ok(out)
        }
        Err(DecompressError::OverLimit { limit }) => {
            // The work was done up to the limit: it counts.
            budget.spend_decompressed(limit as u64);
            Err((
                ErrorKind::Budget,
                budget.exhausted_message(by, &format!("{} data that decompresses", codec.name())),
            ))
        }
        Err(DecompressError::Corrupt(why)) => {
            // Data damaged past what a smaller room would have read is over
            // that room instead: with a room of its own, the outcome is unsure.
            budget.outcome_depends_on_room();
            Err((ErrorKind::Decompression, why))
        }
    }
}

/// The size a gzip stream's trailer gives (ISIZE: the input size modulo 2^32,
/// of the last member): a hint, never trusted past the limit.
fn gzip_size(data: &[u8]) -> Option<u64> {
    let t = data.len().checked_sub(4).and_then(|at| data.get(at..))?;
    Some(u64::from(u32::from_le_bytes([t[0], t[1], t[2], t[3]])))
}

/// The content size a zstd single-segment frame header declares: a hint.
fn zstd_content_size(data: &[u8]) -> Option<u64> {
    let single_segment = data.get(4).is_some_and(|d| d & 0x20 != 0);
    single_segment.then(|| zstd_window_size(data)).flatten()
}

/// Everything `r` gives, failing once it passes `limit` bytes. With a size
/// hint the output is allocated once (at most `limit` + 1 bytes, whatever the
/// hint claims): growing by doubling would touch up to three times the data,
/// and what the allocator keeps of the smaller buffers stays resident.
fn read_bounded(r: impl Read, limit: usize, hint: Option<u64>) -> Result<Vec<u8>, DecompressError> {
    let cap = hint.map_or(0, |h| {
        usize::try_from(h)
            .unwrap_or(usize::MAX)
            .min(limit)
            .saturating_add(1)
    });
    let mut out = Vec::with_capacity(cap);
    // One byte past the limit tells "exactly at the limit" from "over it"
    // (saturating: a limit of usize::MAX must not wrap to nothing).
    r.take((limit as u64).saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() > limit {
        return Err(DecompressError::OverLimit { limit });
    }
    Ok(out)
}

fn raw_snappy(data: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    let len = snap::raw::decompress_len(data).map_err(snappy_error)?;
    if len > limit {
        return Err(DecompressError::OverLimit { limit });
    }
    Ok(snap::raw::Decoder::new()
        .decompress_vec(data)
        .map_err(snappy_error)?)
}

/// The snap crate's error, named once: its own text starts `snappy: `.
fn snappy_error(e: snap::Error) -> String {
    let text = e.to_string();
    match text.starts_with("snappy") {
        true => text,
        false => format!("snappy: {text}"),
    }
}

/// xerial framing: 16-byte header, then blocks of int32 length + raw snappy.
fn xerial(data: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    let mut pos = 16;
    if data.len() < pos {
        return Err(DecompressError::Corrupt(
            "snappy: xerial header cut short".into(),
        ));
    }
    let mut out = Vec::new();
    while pos < data.len() {
        let Some(len) = data.get(pos..pos + 4) else {
            return Err(DecompressError::Corrupt(
                "snappy: xerial block length cut short".into(),
            ));
        };
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        pos += 4;
        let block = data.get(pos..pos.saturating_add(len)).ok_or_else(|| {
            DecompressError::Corrupt("snappy: xerial block runs past the data".into())
        })?;
        pos += len;
        let room = limit.saturating_sub(out.len());
        out.extend(raw_snappy(block, room).map_err(|e| match e {
            DecompressError::OverLimit { .. } => DecompressError::OverLimit { limit },
            corrupt => corrupt,
        })?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_round_trip_and_bomb() {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&vec![0u8; 1 << 20]).unwrap();
        let gz = e.finish().unwrap();
        assert_eq!(
            decompress(Codec::Gzip, &gz, 1 << 20).unwrap().len(),
            1 << 20
        );
        let err = decompress(Codec::Gzip, &gz, 1000).unwrap_err();
        assert_eq!(err, DecompressError::OverLimit { limit: 1000 });
    }

    #[test]
    fn data_cut_short_is_over_a_small_room_and_damaged_in_a_large_one() {
        // Whether a stream cut short reads as damaged or as over the budget
        // depends on the room: a frame decoded ahead of its turn, with a
        // room of its own, is then decoded again in its turn.
        use crate::budget::{Budget, Limits};
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        e.write_all(&text).unwrap();
        let gz = e.finish().unwrap();
        let cut = &gz[..gz.len() / 2];
        let budget = |decompressed| {
            Budget::new(Limits {
                decompressed,
                expanded: 1 << 30,
            })
        };
        let small = budget(1000);
        let over = decompress_within(Codec::Gzip, cut, &small).unwrap_err();
        assert_eq!(over.0, ErrorKind::Budget, "{}", over.1);
        let large = budget(1 << 30);
        let damaged = decompress_within(Codec::Gzip, cut, &large).unwrap_err();
        assert_eq!(damaged.0, ErrorKind::Decompression, "{}", damaged.1);
        assert!(large.was_asked());
        assert_eq!(
            large.spent_ahead(),
            None,
            "its outcome depended on its room"
        );
    }

    #[test]
    fn the_largest_limit_does_not_wrap_to_nothing() {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"records").unwrap();
        let gz = e.finish().unwrap();
        assert_eq!(
            decompress(Codec::Gzip, &gz, usize::MAX).unwrap(),
            b"records"
        );
    }

    #[test]
    fn zstd_window_over_the_limit_is_refused_before_allocating() {
        // Frame header: magic, descriptor 0 (window descriptor follows), window 2^(10+21) = 2 GiB.
        let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3];
        frame.extend_from_slice(&[0x01, 0x00, 0x00]);
        assert_eq!(zstd_window_size(&frame), Some(1 << 31));
        assert_eq!(
            decompress(Codec::Zstd, &frame, 64 << 20),
            Err(DecompressError::OverLimit { limit: 64 << 20 })
        );
        // Single segment with a 2-byte content size: 256 + value.
        assert_eq!(
            zstd_window_size(&[0x28, 0xb5, 0x2f, 0xfd, 0x60, 0x10, 0x00]),
            Some(256 + 16)
        );
    }

    #[test]
    fn snappy_raw_and_xerial() {
        let data = b"hello hello hello hello".repeat(10);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(Codec::Snappy, &raw, 10_000).unwrap(), data);
        let mut x = XERIAL_MAGIC.to_vec();
        x.extend_from_slice(&1i32.to_be_bytes());
        x.extend_from_slice(&1i32.to_be_bytes());
        for chunk in data.chunks(100) {
            let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
            x.extend_from_slice(&(c.len() as i32).to_be_bytes());
            x.extend_from_slice(&c);
        }
        assert_eq!(decompress(Codec::Snappy, &x, 10_000).unwrap(), data);
        assert!(decompress(Codec::Snappy, &x, 50).is_err());
    }

    #[test]
    fn lz4_frame() {
        let data = b"kafka kafka kafka kafka".repeat(20);
        let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
        e.write_all(&data).unwrap();
        let f = e.finish().unwrap();
        assert_eq!(decompress(Codec::Lz4, &f, 10_000).unwrap(), data);
        assert!(decompress(Codec::Lz4, &f, 10).is_err());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for codec in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
            assert!(decompress(codec, &[0xff; 40], 1000).is_err(), "{codec:?}");
        }
    }

    #[test]
    fn a_snappy_error_names_its_codec_once() {
        // A raw block that says 3 bytes follow and holds a copy of nothing.
        let e = decompress(Codec::Snappy, &[3, 0x01, 0x00], 1000).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("snappy: "), "{text}");
        assert_eq!(text.matches("snappy").count(), 1, "{text}");
    }
}
