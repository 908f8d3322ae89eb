//! The record format, defined once: the RecordBatch v2 header and its
//! fields, the smallest batch of each magic, a record's parts, what their
//! nodes cost against the budget, and the checks that tell a batch stream
//! from other bytes. The walk (`super::tape`), the nodes ([`super::batch`]),
//! the order check and the consumer's view all read it from here.

use crate::decode::tape::{Id, Slot};
use crate::decode::{Node, RecordPart, Wire};
use crate::schema::Primitive;

pub use crate::protocol::record_batch::V2_FIELDS;
pub(crate) use crate::protocol::record_batch::{
    ATTRIBUTES, BASE_OFFSET, BASE_SEQUENCE, BASE_TIMESTAMP, BATCH_HEADER_LEN, CRC,
    LAST_OFFSET_DELTA, MAGIC, MAX_TIMESTAMP, PARTITION_LEADER_EPOCH, PRODUCER_EPOCH, PRODUCER_ID,
    RECORDS_COUNT,
};
use crate::protocol::record_batch::{BATCH_LENGTH_AT, LOG_OVERHEAD, MAGIC_AT};
/// Nested legacy wrapper messages deeper than this are not unpacked.
pub const MAX_NESTING: usize = 4;

/// What one record's nodes cost before its headers (record, length,
/// attributes, timestampDelta, offsetDelta, key and value with their
/// lengths, headers), and what each header adds (header, key and value with
/// their lengths): held against the expanded budget as they are made.
pub(super) const RECORD_COST: u64 = (RECORD_FIELDS as u64 + 1) * NODE_SIZE;
pub(super) const HEADER_COST: u64 = 5 * NODE_SIZE;
/// A legacy message's nodes (message, its fields, a key and a value).
pub(super) const LEGACY_MESSAGE_COST: u64 = 12 * NODE_SIZE;
const NODE_SIZE: u64 = std::mem::size_of::<Node>() as u64;

/// Fields of a record without headers' contents: the children reserved ahead.
pub(super) const RECORD_FIELDS: usize = 9;

/// The smallest size after the batch length field for a magic: legacy
/// messages need crc, magic, attributes, [timestamp,] key and value lengths;
/// a v2 batch its whole header.
pub(super) fn minimum_size(magic: u8) -> usize {
    match magic {
        0 => 14,
        1 => 22,
        _ => BATCH_HEADER_LEN - LOG_OVERHEAD,
    }
}

/// A field of a record, a record's header or a legacy message, in the
/// order they are written: its name, how it is written, which of a
/// record's named parts it is, and for bytes the field before them that
/// holds their length.
#[derive(Clone, Copy, Debug)]
pub struct PartField {
    pub name: &'static str,
    pub wire: Wire,
    pub part: Option<RecordPart>,
    pub sized_by: Option<&'static str>,
}

const fn field(name: &'static str, wire: Wire, part: Option<RecordPart>) -> PartField {
    PartField {
        name,
        wire,
        part,
        sized_by: None,
    }
}

const fn bytes(name: &'static str, sized_by: &'static str, part: Option<RecordPart>) -> PartField {
    PartField {
        name,
        wire: Wire::Bytes,
        part,
        sized_by: Some(sized_by),
    }
}

const INT8: Wire = Wire::Fixed(Primitive::Int8);
const INT32: Wire = Wire::Fixed(Primitive::Int32);
const INT64: Wire = Wire::Fixed(Primitive::Int64);

/// A v2 record's fields, before its headers.
pub const RECORD_LAYOUT: [PartField; RECORD_FIELDS] = [
    field("length", Wire::Varint, None),
    field("attributes", INT8, Some(RecordPart::Attributes)),
    field(
        "timestampDelta",
        Wire::Varlong,
        Some(RecordPart::TimestampDelta),
    ),
    field("offsetDelta", Wire::Varint, Some(RecordPart::OffsetDelta)),
    field("keyLength", Wire::Varint, None),
    bytes("key", "keyLength", None),
    field("valueLength", Wire::Varint, None),
    bytes("value", "valueLength", None),
    field("headers", Wire::Varint, Some(RecordPart::Headers)),
];

/// A record header's fields.
pub const RECORD_HEADER_LAYOUT: [PartField; 4] = [
    field("headerKeyLength", Wire::Varint, None),
    bytes("headerKey", "headerKeyLength", Some(RecordPart::HeaderKey)),
    field("headerValueLength", Wire::Varint, None),
    bytes(
        "headerValue",
        "headerValueLength",
        Some(RecordPart::HeaderValue),
    ),
];

/// A legacy (v0 and v1) message's fields; the timestamp is v1's only.
pub const LEGACY_LAYOUT: [PartField; 10] = [
    field("offset", INT64, Some(RecordPart::Offset)),
    field("messageSize", INT32, None),
    field("crc", Wire::Fixed(Primitive::Uint32), None),
    field("magic", INT8, Some(RecordPart::Magic)),
    field("attributes", INT8, Some(RecordPart::Attributes)),
    field("timestamp", INT64, Some(RecordPart::Timestamp)),
    field("keyLength", INT32, None),
    bytes("key", "keyLength", None),
    field("valueLength", INT32, None),
    bytes("value", "valueLength", None),
];

/// Which field of its v2 batch's header slot `s` is (a child of an
/// `Id::Batch`): its index in [`V2_FIELDS`].
pub(super) fn v2_field(s: &Slot) -> Option<usize> {
    match s.id {
        Id::BatchField(k) => Some(usize::from(k)),
        Id::Checksum { .. } => Some(CRC),
        _ => None,
    }
}

/// A legacy message's fields before its key and value, by their index
/// (`Id::MessageField`; the checksum is an `Id::Checksum` at its place).
pub(super) const LEGACY_OFFSET: usize = 0;
pub(super) const LEGACY_MESSAGE_SIZE: usize = 1;
pub(super) const LEGACY_CRC: usize = 2;
pub(super) const LEGACY_MAGIC: usize = 3;
pub(super) const LEGACY_ATTRIBUTES: usize = 4;
pub(super) const LEGACY_TIMESTAMP: usize = 5;

/// Whether bytes look like a record batch stream (so opaque blobs stay raw).
pub fn plausible(data: &[u8]) -> bool {
    if data.len() <= MAGIC_AT {
        return false;
    }
    let at = BATCH_LENGTH_AT;
    let declared = i32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    match data[MAGIC_AT] {
        2 => declared >= (BATCH_HEADER_LEN - LOG_OVERHEAD) as i32,
        0 | 1 => declared >= 14,
        _ => false,
    }
}

/// CRC-32 (IEEE), the checksum of legacy messages.
pub(crate) fn crc32_ieee(data: &[u8]) -> u32 {
    let mut h = flate2::Crc::new();
    h.update(data);
    h.sum()
}
