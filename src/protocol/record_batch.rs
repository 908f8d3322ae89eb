//! The smallest legal RecordBatch v2: a 61-byte header with no records.

use super::crc32c::crc32c;

/// Size of a RecordBatch v2 header (and of an empty batch).
pub(crate) const BATCH_HEADER_LEN: usize = 61;
/// Where the CRC-covered part starts: the attributes field.
pub(crate) const CRC_START: usize = 21;

/// Whether a `records` field named `field` holds whole record batches:
/// every one but FetchSnapshot's `UnalignedRecords`, a slice of a snapshot
/// file that may start and end in the middle of a batch.
pub(crate) fn holds_whole_batches(field: &str) -> bool {
    field != "UnalignedRecords"
}

/// An empty batch: numeric fields zero, magic 2, batchLength 49, valid CRC-32C.
pub fn empty_batch() -> Vec<u8> {
    let mut b = vec![0u8; BATCH_HEADER_LEN];
    b[8..12].copy_from_slice(&((BATCH_HEADER_LEN - 12) as i32).to_be_bytes());
    b[16] = 2; // magic
    let crc = crc32c(&b[CRC_START..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;

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
