//! The smallest legal RecordBatch v2 (a 61-byte header with no records),
//! and a file told to start with one.

use super::crc32c::crc32c;

/// Size of a RecordBatch v2 header (and of an empty batch): where its
/// first record starts.
pub(crate) const BATCH_HEADER_LEN: usize = 61;
/// Where the header's batchLength (int32), magic (int8) and crc (uint32) are.
pub(crate) const BATCH_LENGTH_AT: usize = 8;
pub(crate) const MAGIC_AT: usize = 16;
pub(crate) const CRC_AT: usize = 17;
/// Where the CRC-covered part starts: the attributes field.
pub(crate) const CRC_START: usize = 21;
/// Bytes batchLength does not count: baseOffset and batchLength itself.
pub(crate) const LOG_OVERHEAD: usize = 12;

/// Whether a `records` field named `field` holds whole record batches:
/// every one but FetchSnapshot's `UnalignedRecords`, a slice of a snapshot
/// file that may start and end in the middle of a batch.
pub(crate) fn holds_whole_batches(field: &str) -> bool {
    field != "UnalignedRecords"
}

/// An empty batch: numeric fields zero, magic 2, batchLength 49, valid CRC-32C.
pub fn empty_batch() -> Vec<u8> {
    let mut b = vec![0u8; BATCH_HEADER_LEN];
    let length = (BATCH_HEADER_LEN - LOG_OVERHEAD) as i32;
    b[BATCH_LENGTH_AT..BATCH_LENGTH_AT + 4].copy_from_slice(&length.to_be_bytes());
    b[MAGIC_AT] = 2;
    let crc = crc32c(&b[CRC_START..]);
    b[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_be_bytes());
    b
}

/// Whether `bytes` start with a whole RecordBatch v2 whose CRC-32C holds,
/// as a log segment or a file of batches does. Kafka frames do not: a
/// frame's bytes 17 to 21 would have to be the CRC-32C of the rest of its
/// first `batchLength` bytes.
pub fn starts_with_batch(bytes: &[u8]) -> bool {
    let field = |at: usize| -> Option<[u8; 4]> { bytes.get(at..at + 4)?.try_into().ok() };
    let (Some(len), Some(crc)) = (field(BATCH_LENGTH_AT), field(CRC_AT)) else {
        return false;
    };
    let end =
        usize::try_from(i32::from_be_bytes(len)).map_or(0, |l| l.saturating_add(LOG_OVERHEAD));
    bytes.get(MAGIC_AT) == Some(&2)
        && end >= BATCH_HEADER_LEN
        && end <= bytes.len()
        && crc32c(&bytes[CRC_START..end]) == u32::from_be_bytes(crc)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(!starts_with_batch(&wrong), "its CRC-32C does not hold");
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
