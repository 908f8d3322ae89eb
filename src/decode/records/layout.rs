//! The record format, defined once: the RecordBatch v2 header and its
//! fields, the smallest batch of each magic, a record's parts, what their
//! nodes cost against the budget, and the checks that tell a batch stream
//! from other bytes. The walk (`super::tape`), the nodes ([`super::batch`]),
//! the order check and the consumer's view all read it from here.

use crate::decode::tape::{Id, Slot};
use crate::decode::{Node, RecordPart, Wire};
use crate::schema::Primitive;

pub(crate) use crate::protocol::record_batch::BATCH_HEADER_LEN;
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

/// The RecordBatch v2 header's fields: name, type, width.
pub const V2_FIELDS: [(&str, Primitive, usize); 13] = [
    ("baseOffset", Primitive::Int64, 8),
    ("batchLength", Primitive::Int32, 4),
    ("partitionLeaderEpoch", Primitive::Int32, 4),
    ("magic", Primitive::Int8, 1),
    ("crc", Primitive::Uint32, 4),
    ("attributes", Primitive::Int16, 2),
    ("lastOffsetDelta", Primitive::Int32, 4),
    ("baseTimestamp", Primitive::Int64, 8),
    ("maxTimestamp", Primitive::Int64, 8),
    ("producerId", Primitive::Int64, 8),
    ("producerEpoch", Primitive::Int16, 2),
    ("baseSequence", Primitive::Int32, 4),
    ("recordsCount", Primitive::Int32, 4),
];
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

/// Indexes in [`V2_FIELDS`] (and of a batch node's first children).
pub(super) const BASE_OFFSET: usize = 0;
pub(super) const PARTITION_LEADER_EPOCH: usize = 2;
pub(super) const MAGIC: usize = 3;
pub(super) const CRC: usize = 4;
pub(super) const ATTRIBUTES: usize = 5;
pub(super) const LAST_OFFSET_DELTA: usize = 6;
pub(super) const BASE_TIMESTAMP: usize = 7;
pub(super) const MAX_TIMESTAMP: usize = 8;
pub(super) const PRODUCER_ID: usize = 9;
pub(super) const PRODUCER_EPOCH: usize = 10;
pub(super) const BASE_SEQUENCE: usize = 11;
pub(super) const RECORDS_COUNT: usize = 12;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record_batch::{CRC_AT, CRC_START};

    /// The header's field table and the protocol's offsets are one layout.
    #[test]
    fn the_header_fields_lie_where_the_protocol_says() {
        let at = |k: usize| V2_FIELDS[..k].iter().map(|f| f.2).sum::<usize>();
        assert_eq!(at(V2_FIELDS.len()), BATCH_HEADER_LEN);
        assert_eq!(V2_FIELDS[1].0, "batchLength");
        assert_eq!(at(1), BATCH_LENGTH_AT);
        assert_eq!(at(2), LOG_OVERHEAD);
        assert_eq!(at(MAGIC), MAGIC_AT);
        assert_eq!(at(CRC), CRC_AT);
        assert_eq!(at(ATTRIBUTES), CRC_START);
    }
}
