//! Bounded decompression of record payloads: gzip, snappy (raw and the xerial
//! framing Java clients write), lz4 (Kafka's LZ4 frame) and zstd. Output never
//! exceeds the limit, whatever the compressed data claims.

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
    pub fn from_attributes(bits: u16) -> Option<Codec> {
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

/// Decompress `data`, failing once the output would pass `limit` bytes.
pub fn decompress(codec: Codec, data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    match codec {
        Codec::None => Ok(data.to_vec()),
        Codec::Gzip => read_bounded(flate2::read::GzDecoder::new(data), limit),
        Codec::Lz4 => read_bounded(lz4_flex::frame::FrameDecoder::new(data), limit),
        Codec::Zstd => {
            let dec = ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| format!("zstd: {e}"))?;
            read_bounded(dec, limit)
        }
        Codec::Snappy => {
            if data.starts_with(XERIAL_MAGIC) {
                xerial(data, limit)
            } else {
                raw_snappy(data, limit)
            }
        }
    }
}

fn read_bounded(r: impl Read, limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    // One byte past the limit tells "exactly at the limit" from "over it".
    r.take(limit as u64 + 1).read_to_end(&mut out).map_err(|e| e.to_string())?;
    if out.len() > limit {
        return Err(format!("decompressed data exceeds the limit of {limit} bytes"));
    }
    Ok(out)
}

fn raw_snappy(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let len = snap::raw::decompress_len(data).map_err(|e| format!("snappy: {e}"))?;
    if len > limit {
        return Err(format!("snappy block declares {len} bytes, over the limit of {limit}"));
    }
    snap::raw::Decoder::new().decompress_vec(data).map_err(|e| format!("snappy: {e}"))
}

/// xerial framing: 16-byte header, then blocks of int32 length + raw snappy.
fn xerial(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut pos = 16;
    if data.len() < pos {
        return Err("snappy: xerial header cut short".into());
    }
    let mut out = Vec::new();
    while pos < data.len() {
        let Some(len) = data.get(pos..pos + 4) else { return Err("snappy: xerial block length cut short".into()) };
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        pos += 4;
        let block = data.get(pos..pos.saturating_add(len)).ok_or("snappy: xerial block runs past the data")?;
        pos += len;
        let room = limit.saturating_sub(out.len());
        out.extend(raw_snappy(block, room)?);
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
        assert_eq!(decompress(Codec::Gzip, &gz, 1 << 20).unwrap().len(), 1 << 20);
        let err = decompress(Codec::Gzip, &gz, 1000).unwrap_err();
        assert!(err.contains("exceeds the limit"), "{err}");
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
}
