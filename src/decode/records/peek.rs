//! The fixed-place header of each RecordBatch v2 in a records field, read
//! without checking checksums or decompressing anything: what the
//! conversation analysis needs of a batch (its producer, sequence and
//! offsets) at the cost of 61 bytes a batch. Legacy message sets (magic 0
//! and 1) carry no producer and are passed over; a batch cut short ends the
//! walk.

use super::layout::minimum_size;
use crate::protocol::record_batch::{
    header_field, ATTRIBUTES, BASE_OFFSET, BASE_SEQUENCE, BATCH_HEADER_LEN, BATCH_LENGTH,
    LAST_OFFSET_DELTA, LOG_OVERHEAD, MAGIC_AT, PRODUCER_EPOCH, PRODUCER_ID, RECORDS_COUNT,
};

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
    pub(crate) fn is_transactional(&self) -> bool {
        self.attributes & 0x10 != 0
    }

    /// A control batch: commit and abort markers (attributes bit 5).
    pub fn is_control(&self) -> bool {
        self.attributes & 0x20 != 0
    }

    /// Written by an idempotent or transactional producer.
    pub(crate) fn has_producer(&self) -> bool {
        self.producer_id >= 0
    }
}

/// The v2 batch headers of `records`, in order, at most `limit` of them.
pub fn batches(records: &[u8], limit: usize) -> Vec<BatchPeek> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while out.len() < limit {
        let Some(head) = records.get(at..at + BATCH_HEADER_LEN) else {
            break;
        };
        // All within the header: none is `None`.
        let field = |k: usize| header_field(head, k).unwrap_or_default();
        let Ok(length) = usize::try_from(field(BATCH_LENGTH)) else {
            break;
        };
        if head[MAGIC_AT] == 2 {
            out.push(BatchPeek {
                at,
                base_offset: field(BASE_OFFSET),
                attributes: field(ATTRIBUTES) as i16,
                last_offset_delta: field(LAST_OFFSET_DELTA) as i32,
                producer_id: field(PRODUCER_ID),
                producer_epoch: field(PRODUCER_EPOCH) as i16,
                base_sequence: field(BASE_SEQUENCE) as i32,
                records_count: field(RECORDS_COUNT) as i32,
            });
        }
        // The batch length counts from after itself.
        match at
            .checked_add(LOG_OVERHEAD)
            .and_then(|a| a.checked_add(length))
        {
            Some(next) if next > at => at = next,
            _ => break,
        }
    }
    out
}

/// What a records field's batch headers count, read header to header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    /// v2 record batches, and the records their headers count.
    pub batches: u32,
    pub records: i64,
    /// Messages of the older formats (magic 0 and 1): a compressed one holds
    /// more inside, so they are counted apart.
    pub legacy: u32,
    /// Bytes after the last whole batch: a batch cut short (a Fetch response
    /// ends where its size limit fell), or damage.
    pub tail: usize,
}

/// Count the batches of `records` by their headers alone.
pub fn count(records: &[u8]) -> Counted {
    let mut c = Counted::default();
    let mut at = 0usize;
    // The batch length and the magic lie where a v2 header has them in every format.
    while let Some(head) = records.get(at..at + MAGIC_AT + 1) {
        let length = header_field(head, BATCH_LENGTH).unwrap_or_default();
        let next = usize::try_from(length)
            .ok()
            .and_then(|l| at.checked_add(LOG_OVERHEAD)?.checked_add(l))
            .filter(|&next| next <= records.len());
        // The smallest entry of its format (v2: its header after the
        // length); any other magic is held to the smallest message, v0's.
        let least = minimum_size(if head[MAGIC_AT] == 2 { 2 } else { 0 });
        let Some(next) = next.filter(|&next| next - at - LOG_OVERHEAD >= least) else {
            break;
        };
        match head[MAGIC_AT] {
            2 => {
                c.batches += 1;
                if let Some(n) = records
                    .get(at..)
                    .and_then(|b| header_field(b, RECORDS_COUNT))
                {
                    c.records += n.max(0);
                }
            }
            _ => c.legacy += 1,
        }
        at = next;
    }
    c.tail = records.len() - at.min(records.len());
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_reads_every_header_and_names_a_cut_tail() {
        let mut records = batch(0, -1, -1, -1, 3, 0);
        records.extend(batch(3, -1, -1, -1, 2, 0));
        let whole = count(&records);
        assert_eq!(
            (whole.batches, whole.records, whole.legacy, whole.tail),
            (2, 5, 0, 0)
        );
        records.extend_from_slice(&[0; 20]);
        let cut = count(&records);
        assert_eq!((cut.batches, cut.records, cut.tail), (2, 5, 20));
        assert_eq!(count(&[]), Counted::default());
    }

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
