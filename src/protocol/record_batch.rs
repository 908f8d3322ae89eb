//! The RecordBatch v2 header, defined once: its fields in order with their
//! widths, where each lies (worked out from the widths), and the header and
//! checksum written or patched in place. The decoder reads batches by this
//! table, the pages draw it, and kwire's own batches (the smallest legal
//! one, the pages' examples, replay's patched producer ids) are written by it.

use super::crc32c::crc32c;
use crate::schema::Primitive;

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

/// Indexes in [`V2_FIELDS`] (and of a batch node's first children).
pub(crate) const BASE_OFFSET: usize = 0;
pub(crate) const BATCH_LENGTH: usize = 1;
pub(crate) const PARTITION_LEADER_EPOCH: usize = 2;
pub(crate) const MAGIC: usize = 3;
pub(crate) const CRC: usize = 4;
pub(crate) const ATTRIBUTES: usize = 5;
pub(crate) const LAST_OFFSET_DELTA: usize = 6;
pub(crate) const BASE_TIMESTAMP: usize = 7;
pub(crate) const MAX_TIMESTAMP: usize = 8;
pub(crate) const PRODUCER_ID: usize = 9;
pub(crate) const PRODUCER_EPOCH: usize = 10;
pub(crate) const BASE_SEQUENCE: usize = 11;
pub(crate) const RECORDS_COUNT: usize = 12;

/// Where header field `k` of [`V2_FIELDS`] starts in its batch (`k` = the
/// number of fields: where the header ends).
pub(crate) const fn field_at(k: usize) -> usize {
    let (mut at, mut i) = (0, 0);
    while i < k {
        at += V2_FIELDS[i].2;
        i += 1;
    }
    at
}

/// Size of a RecordBatch v2 header (and of an empty batch): where its
/// first record starts.
pub(crate) const BATCH_HEADER_LEN: usize = field_at(V2_FIELDS.len());
/// Where the header's batchLength (int32), magic (int8) and crc (uint32) are.
pub(crate) const BATCH_LENGTH_AT: usize = field_at(BATCH_LENGTH);
pub(crate) const MAGIC_AT: usize = field_at(MAGIC);
pub(crate) const CRC_AT: usize = field_at(CRC);
/// Where the CRC-covered part starts: the attributes field.
pub(crate) const CRC_START: usize = field_at(ATTRIBUTES);
/// Bytes batchLength does not count: baseOffset and batchLength itself.
pub(crate) const LOG_OVERHEAD: usize = field_at(PARTITION_LEADER_EPOCH);

/// Header field `k` of the batch starting `batch`, as written (the crc as
/// an unsigned number); `None` past the bytes.
pub(crate) fn header_field(batch: &[u8], k: usize) -> Option<i64> {
    let (at, (_, ty, width)) = (field_at(k), *V2_FIELDS.get(k)?);
    Some(field_value(batch.get(at..at + width)?, ty))
}

/// A header field's value from its own bytes (`bytes` as wide as `ty` is:
/// 1, 2, 4 or 8), big-endian, the crc's unsigned.
pub(crate) fn field_value(bytes: &[u8], ty: Primitive) -> i64 {
    let mut be = [0u8; 8];
    let n = bytes.len().min(8);
    be[8 - n..].copy_from_slice(&bytes[..n]);
    let raw = i64::from_be_bytes(be);
    // Sign-extended from the field's width, but for the unsigned crc.
    match (ty, n) {
        (Primitive::Uint32, _) | (_, 8) | (_, 0) => raw,
        (_, n) => {
            let shift = 64 - 8 * n as u32;
            (raw << shift) >> shift
        }
    }
}

/// Header field `k` of the batch starting `batch` set to `v`, in the
/// field's width (its low bytes, big-endian); nothing past the bytes.
pub(crate) fn set_header_field(batch: &mut [u8], k: usize, v: i64) {
    let (at, width) = (field_at(k), V2_FIELDS.get(k).map_or(0, |f| f.2));
    if let Some(b) = batch.get_mut(at..at + width) {
        b.copy_from_slice(&v.to_be_bytes()[8 - width..]);
    }
}

/// A header with each field of [`V2_FIELDS`] set from `values`; the
/// batchLength and crc are made to hold by [`seal`] once its records follow.
pub(crate) fn header(values: [i64; V2_FIELDS.len()]) -> Vec<u8> {
    let mut b = vec![0u8; BATCH_HEADER_LEN];
    for (k, v) in values.into_iter().enumerate() {
        set_header_field(&mut b, k, v);
    }
    b
}

/// The batch that is all of `batch` (a header and its records) made whole:
/// its batchLength counts the bytes after it, and its crc is their
/// CRC-32C from the attributes on. Nothing for fewer bytes than a header.
pub(crate) fn seal(batch: &mut [u8]) {
    if batch.len() < BATCH_HEADER_LEN {
        return;
    }
    let length = (batch.len() - LOG_OVERHEAD) as i64;
    set_header_field(batch, BATCH_LENGTH, length);
    let crc = crc32c(&batch[CRC_START..]);
    set_header_field(batch, CRC, i64::from(crc));
}

/// Whether a `records` field named `field` holds whole record batches:
/// every one but FetchSnapshot's `UnalignedRecords`, a slice of a snapshot
/// file that may start and end in the middle of a batch.
pub(crate) fn holds_whole_batches(field: &str) -> bool {
    field != "UnalignedRecords"
}

/// An empty batch: numeric fields zero, magic 2, batchLength 49, valid CRC-32C.
pub fn empty_batch() -> Vec<u8> {
    let mut values = [0; V2_FIELDS.len()];
    values[MAGIC] = 2;
    let mut b = header(values);
    seal(&mut b);
    b
}

/// Whether `bytes` start as a log segment or a file of batches does: with
/// a whole RecordBatch v2 whose CRC-32C holds, or with one whose checksum
/// does not hold (damage to show, not a reason to read the file as frames)
/// but that no stream of frames starts with: its first four bytes are zero
/// (the high half of a baseOffset below 2^32), and a frame's size is never 0.
/// A frame whose bytes 17 to 21 are the CRC-32C of the rest of its first
/// `batchLength` bytes is not one Kafka writes.
pub fn starts_with_batch(bytes: &[u8]) -> bool {
    let field = |at: usize| -> Option<[u8; 4]> { bytes.get(at..at + 4)?.try_into().ok() };
    let (Some(first), Some(len), Some(crc)) = (field(0), field(BATCH_LENGTH_AT), field(CRC_AT))
    else {
        return false;
    };
    let end =
        usize::try_from(i32::from_be_bytes(len)).map_or(0, |l| l.saturating_add(LOG_OVERHEAD));
    let whole = bytes.get(MAGIC_AT) == Some(&2) && end >= BATCH_HEADER_LEN && end <= bytes.len();
    whole && (first == [0; 4] || crc32c(&bytes[CRC_START..end]) == u32::from_be_bytes(crc))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the protocol puts each field, and each index's name.
    #[test]
    fn the_fields_lie_where_the_protocol_puts_them() {
        let named = [
            (BASE_OFFSET, "baseOffset", 0),
            (BATCH_LENGTH, "batchLength", 8),
            (PARTITION_LEADER_EPOCH, "partitionLeaderEpoch", 12),
            (MAGIC, "magic", 16),
            (CRC, "crc", 17),
            (ATTRIBUTES, "attributes", 21),
            (LAST_OFFSET_DELTA, "lastOffsetDelta", 23),
            (BASE_TIMESTAMP, "baseTimestamp", 27),
            (MAX_TIMESTAMP, "maxTimestamp", 35),
            (PRODUCER_ID, "producerId", 43),
            (PRODUCER_EPOCH, "producerEpoch", 51),
            (BASE_SEQUENCE, "baseSequence", 53),
            (RECORDS_COUNT, "recordsCount", 57),
        ];
        for (k, name, at) in named {
            assert_eq!((V2_FIELDS[k].0, field_at(k)), (name, at));
        }
        assert_eq!(
            (
                BATCH_HEADER_LEN,
                BATCH_LENGTH_AT,
                MAGIC_AT,
                CRC_AT,
                CRC_START,
                LOG_OVERHEAD
            ),
            (61, 8, 16, 17, 21, 12)
        );
    }

    #[test]
    fn a_header_is_written_read_and_sealed_field_by_field() {
        let mut values = [0; V2_FIELDS.len()];
        values[BASE_OFFSET] = 0x0102_0304_0506_0708;
        values[MAGIC] = 2;
        values[ATTRIBUTES] = 0x20;
        values[PRODUCER_ID] = -1;
        values[PRODUCER_EPOCH] = -2;
        values[BASE_SEQUENCE] = i64::from(i32::MAX);
        values[CRC] = 0xfedc_ba98;
        let mut b = header(values);
        assert_eq!(&b[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(
            &b[43..53],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]
        );
        for (k, v) in values.into_iter().enumerate() {
            assert_eq!(header_field(&b, k), Some(v), "{}", V2_FIELDS[k].0);
        }
        b.extend_from_slice(b"records");
        seal(&mut b);
        assert_eq!(header_field(&b, BATCH_LENGTH), Some(49 + 7));
        assert_eq!(header_field(&b, CRC), Some(i64::from(crc32c(&b[21..]))));
        assert!(starts_with_batch(&b));
        assert_eq!(header_field(&b[..60], RECORDS_COUNT), None, "cut short");
        let mut short = b[..20].to_vec();
        seal(&mut short);
        set_header_field(&mut short, PRODUCER_ID, 7);
        assert_eq!(short, b[..20], "nothing written past the bytes");
    }

    #[test]
    fn a_file_that_starts_with_a_whole_batch_is_told_from_frames() {
        let mut b = empty_batch();
        assert!(starts_with_batch(&b));
        b.extend_from_slice(b"more batches");
        assert!(
            starts_with_batch(&b),
            "what follows the first batch is not read"
        );
        assert!(!starts_with_batch(&b[..60]), "cut short");
        let mut wrong = empty_batch();
        wrong[30] ^= 1;
        assert!(
            starts_with_batch(&wrong),
            "damaged, yet no frame stream starts so"
        );
        wrong[3] = 1;
        assert!(
            !starts_with_batch(&wrong),
            "its CRC-32C does not hold and it could be a frame's size"
        );
        wrong[30] ^= 1;
        assert!(
            starts_with_batch(&wrong),
            "at a high offset, its CRC-32C holds"
        );
        let mut magic1 = empty_batch();
        magic1[16] = 1;
        assert!(!starts_with_batch(&magic1));
        // A Kafka request frame: size, api key, version, correlation id, client id.
        let frame = [0, 0, 0, 12, 0, 18, 0, 3, 0, 0, 0, 1, 0, 2, b'i', b'd'];
        assert!(!starts_with_batch(&frame));
        assert!(!starts_with_batch(&[]));
    }

    #[test]
    fn empty_batch_is_61_bytes_with_a_valid_crc() {
        let b = empty_batch();
        assert_eq!(b.len(), 61);
        assert_eq!(i32::from_be_bytes(b[8..12].try_into().unwrap()), 49);
        assert_eq!(
            u32::from_be_bytes(b[17..21].try_into().unwrap()),
            crc32c(&b[21..])
        );
    }
}
