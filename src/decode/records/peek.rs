//! The fixed-place header of each RecordBatch v2 in a records field, read
//! without checking checksums or decompressing anything: what the
//! conversation analysis needs of a batch (its producer, sequence and
//! offsets) at the cost of 61 bytes a batch. Legacy message sets (magic 0
//! and 1) carry no producer and are passed over; a batch cut short ends the
//! walk.

/// A RecordBatch v2 header's fields that say who wrote the batch and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchPeek {
    /// Where the batch starts in the records field.
    pub at: usize,
    pub base_offset: i64,
    pub last_offset_delta: i32,
    pub attributes: i16,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

impl BatchPeek {
    /// A transactional batch (attributes bit 4).
    pub fn is_transactional(&self) -> bool {
        self.attributes & 0x10 != 0
    }

    /// A control batch: commit and abort markers (attributes bit 5).
    pub fn is_control(&self) -> bool {
        self.attributes & 0x20 != 0
    }

    /// Written by an idempotent or transactional producer.
    pub fn has_producer(&self) -> bool {
        self.producer_id >= 0
    }
}

const HEADER: usize = 61;
const MAGIC_AT: usize = 16;

/// The v2 batch headers of `records`, in order, at most `limit` of them.
pub fn batches(records: &[u8], limit: usize) -> Vec<BatchPeek> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while out.len() < limit {
        let Some(head) = records.get(at..at + HEADER) else {
            break;
        };
        let i64_at = |o: usize| i64::from_be_bytes(head[o..o + 8].try_into().unwrap_or([0; 8]));
        let i32_at = |o: usize| i32::from_be_bytes(head[o..o + 4].try_into().unwrap_or([0; 4]));
        let i16_at = |o: usize| i16::from_be_bytes([head[o], head[o + 1]]);
        let Ok(length) = usize::try_from(i32_at(8)) else {
            break;
        };
        if head[MAGIC_AT] == 2 {
            out.push(BatchPeek {
                at,
                base_offset: i64_at(0),
                attributes: i16_at(21),
                last_offset_delta: i32_at(23),
                producer_id: i64_at(43),
                producer_epoch: i16_at(51),
                base_sequence: i32_at(53),
                records_count: i32_at(57),
            });
        }
        // The batch length counts from after itself (offset 12).
        match at.checked_add(12).and_then(|a| a.checked_add(length)) {
            Some(next) if next > at => at = next,
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(
        base_offset: i64,
        producer_id: i64,
        epoch: i16,
        seq: i32,
        count: i32,
        attrs: i16,
    ) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&base_offset.to_be_bytes());
        b.extend_from_slice(&49i32.to_be_bytes()); // 61 - 12: a header with no records
        b.extend_from_slice(&0i32.to_be_bytes());
        b.push(2);
        b.extend_from_slice(&0u32.to_be_bytes());
        b.extend_from_slice(&attrs.to_be_bytes());
        b.extend_from_slice(&(count - 1).to_be_bytes());
        b.extend_from_slice(&0i64.to_be_bytes());
        b.extend_from_slice(&0i64.to_be_bytes());
        b.extend_from_slice(&producer_id.to_be_bytes());
        b.extend_from_slice(&epoch.to_be_bytes());
        b.extend_from_slice(&seq.to_be_bytes());
        b.extend_from_slice(&count.to_be_bytes());
        b
    }

    #[test]
    fn reads_each_header_at_its_place() {
        let mut records = batch(0, 7, 1, 10, 3, 0x10);
        records.extend(batch(3, 7, 1, 13, 2, 0x20));
        let got = batches(&records, 10);
        assert_eq!(got.len(), 2);
        assert_eq!(
            (
                got[0].at,
                got[0].producer_id,
                got[0].producer_epoch,
                got[0].base_sequence,
                got[0].records_count
            ),
            (0, 7, 1, 10, 3)
        );
        assert!(got[0].is_transactional() && !got[0].is_control());
        assert_eq!(
            (
                got[1].at,
                got[1].base_offset,
                got[1].base_sequence,
                got[1].last_offset_delta
            ),
            (61, 3, 13, 1)
        );
        assert!(got[1].is_control());
    }

    #[test]
    fn a_cut_or_hostile_length_ends_the_walk() {
        let mut records = batch(0, 7, 1, 10, 3, 0);
        records.extend_from_slice(&[0; 30]);
        assert_eq!(batches(&records, 10).len(), 1);
        let mut bad = batch(0, 7, 1, 10, 3, 0);
        // A negative length: the header cannot be trusted, and nothing after it.
        bad[8..12].copy_from_slice(&(-5i32).to_be_bytes());
        assert_eq!(batches(&bad, 10).len(), 0);
        assert_eq!(batches(&records, 0).len(), 0);
    }
}
