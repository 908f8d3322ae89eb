//! The example records of the pages, laid out as bytes. kwire's encoder has no
//! record writer (the definitions do not describe records), so the few bytes
//! the pages show are written here, for the examples only; every figure made
//! from them is what kwire's record decoder reads back.

use crate::decode::records::layout::crc32_ieee;
use crate::encode::writer::Writer;
use crate::protocol::crc32c::crc32c;
use std::io::Write;

/// The examples' base timestamp: the same fixed "now" as every other
/// example value (so a record and the request around it agree, and pages do
/// not change from one build to the next).
pub(crate) const BASE_TIMESTAMP: i64 = crate::encode::realistic::NOW_MS;

pub struct ExampleRecord {
    pub key: Option<&'static str>,
    pub value: Option<&'static str>,
    pub headers: &'static [(&'static str, &'static str)],
    pub timestamp_delta: i64,
}

/// Two records, each with a value and a header: the first with a key, the
/// second with a null key (which spreads records over partitions), so both
/// length forms show. They repeat words, as real records do, which gives
/// gzip something to compress.
pub const RECORDS: [ExampleRecord; 2] = [
    ExampleRecord {
        key: Some("order-17"),
        value: Some("{\"qty\":3}"),
        headers: &[("trace", "a1b2")],
        timestamp_delta: 0,
    },
    ExampleRecord {
        key: None,
        value: Some("{\"qty\":5}"),
        headers: &[("trace", "a1b3")],
        timestamp_delta: 5,
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
}

impl Compression {
    /// The codec's bits in a batch's attributes.
    fn attributes(self) -> i16 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
        }
    }
}

/// Varint lengths, -1 for null.
fn varint_bytes(w: &mut Writer, b: Option<&str>) {
    match b {
        None => w.varint(-1),
        Some(b) => {
            w.varint(b.len() as i32);
            w.bytes(b.as_bytes());
        }
    }
}

fn record(r: &ExampleRecord, offset_delta: i32) -> Vec<u8> {
    let mut body = Writer::default();
    body.i8(0); // attributes: unused in v2 records
    body.varlong(r.timestamp_delta);
    body.varint(offset_delta);
    varint_bytes(&mut body, r.key);
    varint_bytes(&mut body, r.value);
    body.varint(r.headers.len() as i32);
    for (k, v) in r.headers {
        varint_bytes(&mut body, Some(k));
        varint_bytes(&mut body, Some(v));
    }
    let mut w = Writer::default();
    w.varint(body.buf.len() as i32);
    w.bytes(&body.buf);
    w.buf
}

/// gzip as Kafka's clients write it: one gzip member around the records.
/// flate2 writes no file name and a zero modification time, so the bytes
/// are the same on every run.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = e.write_all(data);
    e.finish().unwrap_or_default()
}

/// A RecordBatch v2 holding [`RECORDS`] at offset 0, from a producer without
/// idempotence (producer id, epoch and sequence -1).
pub fn record_batch(compression: Compression) -> Vec<u8> {
    let records: Vec<u8> = RECORDS
        .iter()
        .enumerate()
        .flat_map(|(i, r)| record(r, i as i32))
        .collect();
    let payload = match compression {
        Compression::None => records,
        Compression::Gzip => gzip(&records),
    };
    let max_delta = RECORDS.iter().map(|r| r.timestamp_delta).max().unwrap_or(0);
    // From the attributes on: what the CRC-32C covers.
    let mut after_crc = Writer::default();
    after_crc.i16(compression.attributes());
    after_crc.i32(RECORDS.len() as i32 - 1); // lastOffsetDelta
    after_crc.i64(BASE_TIMESTAMP);
    after_crc.i64(BASE_TIMESTAMP + max_delta);
    after_crc.i64(-1); // producerId
    after_crc.i16(-1); // producerEpoch
    after_crc.i32(-1); // baseSequence
    after_crc.i32(RECORDS.len() as i32);
    after_crc.bytes(&payload);
    let mut w = Writer::default();
    w.i64(0); // baseOffset
    w.i32((4 + 1 + 4 + after_crc.buf.len()) as i32); // batchLength: from partitionLeaderEpoch to the end
    w.i32(0); // partitionLeaderEpoch
    w.i8(2); // magic
    w.u32(crc32c(&after_crc.buf));
    w.bytes(&after_crc.buf);
    w.buf
}

/// A legacy message (magic 0 or 1) holding `r` at `offset`, uncompressed.
fn legacy_message(offset: i64, magic: i8, r: &ExampleRecord) -> Vec<u8> {
    // From the magic on: what the CRC-32 covers.
    let mut m = Writer::default();
    m.i8(magic);
    m.i8(0); // attributes: no compression, CreateTime
    if magic == 1 {
        m.i64(BASE_TIMESTAMP + r.timestamp_delta);
    }
    for b in [r.key, r.value] {
        match b {
            None => m.i32(-1),
            Some(b) => {
                m.i32(b.len() as i32);
                m.bytes(b.as_bytes());
            }
        }
    }
    let mut w = Writer::default();
    w.i64(offset);
    w.i32((4 + m.buf.len()) as i32); // messageSize: from the crc to the end
    w.u32(crc32_ieee(&m.buf));
    w.bytes(&m.buf);
    w.buf
}

/// A legacy message set: [`RECORDS`] as a magic 0 message, then a magic 1
/// one (headers did not exist before RecordBatch v2, so they are left out).
pub(crate) fn legacy_message_set() -> Vec<u8> {
    let mut out = legacy_message(0, 0, &RECORDS[0]);
    out.extend(legacy_message(1, 1, &RECORDS[1]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_length_and_checksum_hold() {
        for c in [Compression::None, Compression::Gzip] {
            let b = record_batch(c);
            assert_eq!(
                i32::from_be_bytes(b[8..12].try_into().unwrap()) as usize,
                b.len() - 12
            );
            assert_eq!(
                u32::from_be_bytes(b[17..21].try_into().unwrap()),
                crc32c(&b[21..])
            );
            assert_eq!(b[16], 2);
        }
        assert_eq!(
            record_batch(Compression::Gzip),
            record_batch(Compression::Gzip),
            "the same bytes on every run"
        );
    }
}
