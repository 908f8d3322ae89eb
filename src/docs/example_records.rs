//! The example records of the pages: what they hold, written by the
//! encoder's record writer and the protocol's batch header, both from the
//! record format's one definition; every figure made from them is what
//! kwire's record decoder reads back.

use crate::encode::records::{write_legacy_message, write_record, Put, Record};
use crate::encode::writer::Writer;
use crate::protocol::record_batch::{
    self, ATTRIBUTES, BASE_SEQUENCE, LAST_OFFSET_DELTA, MAGIC, MAX_TIMESTAMP, PRODUCER_EPOCH,
    PRODUCER_ID, RECORDS_COUNT, V2_FIELDS,
};
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
    fn attributes(self) -> i64 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
        }
    }
}

/// `r` as the `i`th record of a batch: its fields by name, for the
/// encoder's record writer.
fn record(r: &ExampleRecord, offset_delta: i32) -> Vec<u8> {
    let bytes = |b: Option<&'static str>| Put::Bytes(b.map(str::as_bytes));
    let fields = [
        ("attributes", Put::Int(0)), // unused in v2 records
        ("timestampDelta", Put::Int(r.timestamp_delta)),
        ("offsetDelta", Put::Int(i64::from(offset_delta))),
        ("key", bytes(r.key)),
        ("value", bytes(r.value)),
    ];
    let headers: Vec<(&[u8], Option<&[u8]>)> = r
        .headers
        .iter()
        .map(|(k, v)| (k.as_bytes(), Some(v.as_bytes())))
        .collect();
    let mut w = Writer::default();
    let record = Record {
        fields: &fields,
        headers: &headers,
    };
    write_record(&mut w, &record);
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
    let mut header = [0; V2_FIELDS.len()];
    header[MAGIC] = 2;
    header[ATTRIBUTES] = compression.attributes();
    header[LAST_OFFSET_DELTA] = RECORDS.len() as i64 - 1;
    header[record_batch::BASE_TIMESTAMP] = BASE_TIMESTAMP;
    header[MAX_TIMESTAMP] = BASE_TIMESTAMP + max_delta;
    // A producer without idempotence.
    header[PRODUCER_ID] = -1;
    header[PRODUCER_EPOCH] = -1;
    header[BASE_SEQUENCE] = -1;
    header[RECORDS_COUNT] = RECORDS.len() as i64;
    let mut batch = record_batch::header(header);
    batch.extend_from_slice(&payload);
    record_batch::seal(&mut batch);
    batch
}

/// A legacy message (magic 0 or 1) holding `r` at `offset`, uncompressed.
fn legacy_message(offset: i64, magic: i8, r: &ExampleRecord) -> Vec<u8> {
    let bytes = |b: Option<&'static str>| Put::Bytes(b.map(str::as_bytes));
    let fields = [
        ("attributes", Put::Int(0)), // no compression, CreateTime
        ("timestamp", Put::Int(BASE_TIMESTAMP + r.timestamp_delta)),
        ("key", bytes(r.key)),
        ("value", bytes(r.value)),
    ];
    let mut w = Writer::default();
    write_legacy_message(&mut w, offset, magic, &fields);
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
    use crate::protocol::crc32c::crc32c;

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
