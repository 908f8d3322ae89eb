//! Offsets and sequence numbers of the record batches in one records field:
//! what one batch's checksum cannot vouch for. Read from the record walk's
//! slots (`records::tape`: the v2 header fields by their place in
//! [`V2_FIELDS`], then the records, plain or decompressed) as each batch is
//! walked, whether its nodes are built or not, so a tree and `kwire check`
//! warn alike.

use super::layout::{
    v2_field, BASE_OFFSET, BASE_SEQUENCE, LAST_OFFSET_DELTA, MAGIC, PRODUCER_EPOCH, PRODUCER_ID,
    RECORDS_COUNT, V2_FIELDS,
};
use crate::decode::tape::{Id, RecordField, Slot, SlotKind, Val, Values};
use crate::decode::{Warning, WarningKind};
use crate::protocol::record_batch::field_at;

/// The kinds of warning this module gives, and only it.
pub const KINDS: [WarningKind; 3] = [
    WarningKind::RecordOffsets,
    WarningKind::LastOffsetDelta,
    WarningKind::RecordSequence,
];

/// What one RecordBatch v2 says of its offsets and sequence numbers.
pub(super) struct BatchFacts {
    at: usize,
    header: [i64; V2_FIELDS.len()],
    /// Each record's offsetDelta with where to point at it: the field's own
    /// offset for plain records; the batch's records for compressed ones,
    /// whose offsets index the decompressed data.
    deltas: Vec<(usize, i64)>,
}

/// The batches of one records field, checked one at a time as they come
/// (their facts read from the tape by [`batch_facts`]).
pub(super) struct Batches {
    fetched: bool,
    prev: Option<BatchFacts>,
}

impl Batches {
    pub(super) fn new(fetched: bool) -> Self {
        Batches {
            fetched,
            prev: None,
        }
    }

    /// The next batch's facts (none for a batch that is not a whole RecordBatch v2).
    pub(super) fn add(&mut self, b: Option<BatchFacts>, out: &mut Vec<Warning>) {
        let Some(b) = b else { return };
        within(&b, self.fetched, out);
        if let Some(p) = &self.prev {
            across(p, &b, self.fetched, out);
        }
        self.prev = Some(b);
    }
}

/// The facts of the batch at slot `batch` of an annotated tape when it is a
/// RecordBatch v2 that decoded: a batch with an error of its own, or whose
/// header is not whole, gives none; a record with an error gives no
/// offsetDelta.
pub(super) fn batch_facts(tape: &Values, batch: u32) -> Option<BatchFacts> {
    let mut header = [0i64; V2_FIELDS.len()];
    let (mut k, mut deltas) = (0, Vec::new());
    for (j, s) in tape.children(batch) {
        if let Some(field) = v2_field(s) {
            header[field] = slot_int(s.value);
            k += 1;
            continue;
        }
        match s.kind() {
            SlotKind::Finding if has_error(tape, s) => return None,
            SlotKind::Record => deltas.extend(record_delta(tape, (j, s))),
            // Compressed records' offsets index the decompressed data: they are pointed at by the batch's records.
            SlotKind::Compressed if s.buffer().is_some_and(|b| b < tape.buffers.len()) => {
                for r in tape
                    .children(j)
                    .filter(|(_, r)| r.kind() == SlotKind::Record)
                {
                    deltas.extend(record_delta(tape, r).map(|(_, d)| (s.at as usize, d)));
                }
            }
            _ => {}
        }
    }
    if k < header.len() || header[MAGIC] != 2 {
        return None;
    }
    Some(BatchFacts {
        at: tape.slots.get(batch as usize)?.at as usize,
        header,
        deltas,
    })
}

/// Record offsets inside one batch: each offsetDelta above the one before,
/// and the last one the batch's lastOffsetDelta. Compaction removes records
/// but keeps the batch's offsets, so a fetched batch may end past its last
/// record; a batch the producer wrote may not.
fn within(b: &BatchFacts, fetched: bool, out: &mut Vec<Warning>) {
    for pair in b.deltas.windows(2) {
        let ((_, before), (at, now)) = (pair[0], pair[1]);
        if now <= before {
            out.push(Warning::at(
                WarningKind::RecordOffsets,
                at,
                format_args!(
                    "offsetDelta {now} after {before}: the records of a batch have rising offsets"
                ),
            ));
        }
    }
    let all_read = b.deltas.len() as i64 == b.header[RECORDS_COUNT];
    if let (true, Some(&(at, last))) = (all_read, b.deltas.last()) {
        let says = b.header[LAST_OFFSET_DELTA];
        if last > says || (last < says && !fetched) {
            out.push(Warning::at(
                WarningKind::LastOffsetDelta,
                at,
                format_args!("the last record's offsetDelta is {last}, but its batch's lastOffsetDelta (at 0x{:04x}) says {says}", b.at + field_at(LAST_OFFSET_DELTA)),
            ));
        }
    }
}

/// Two batches in a row: offsets that go on from the one before (fetched
/// data), and a producer's sequence numbers that go on from its last batch
/// (in fetched data, that do not go back).
fn across(p: &BatchFacts, b: &BatchFacts, fetched: bool, out: &mut Vec<Warning>) {
    let next_offset = p.header[BASE_OFFSET]
        .saturating_add(p.header[LAST_OFFSET_DELTA])
        .saturating_add(1);
    if fetched && b.header[BASE_OFFSET] < next_offset {
        out.push(Warning::at(
            WarningKind::RecordOffsets,
            b.at,
            format_args!(
                "baseOffset {} after a batch that ends at offset {}: offsets go backwards",
                b.header[BASE_OFFSET],
                next_offset - 1
            ),
        ));
    }
    let same_producer = p.header[PRODUCER_ID] >= 0
        && p.header[PRODUCER_ID] == b.header[PRODUCER_ID]
        && p.header[PRODUCER_EPOCH] == b.header[PRODUCER_EPOCH];
    if !same_producer || p.header[BASE_SEQUENCE] < 0 || b.header[BASE_SEQUENCE] < 0 {
        return;
    }
    // Sequence numbers wrap from i32::MAX to 0: how far `got` is past what
    // was expected is counted around the wrap, and less than half the way
    // round is ahead (a skip), more is behind.
    const SEQUENCES: i64 = i32::MAX as i64 + 1;
    let expected = (p.header[BASE_SEQUENCE] + p.header[LAST_OFFSET_DELTA] + 1) % SEQUENCES;
    let got = b.header[BASE_SEQUENCE];
    let skips = (got - expected).rem_euclid(SEQUENCES) < SEQUENCES / 2;
    // Compaction may remove a producer's whole batch from a log (it keeps
    // only each producer's last one), so fetched data may skip numbers;
    // backwards it never goes.
    if got != expected && !(fetched && skips) {
        let how = if skips { "skips" } else { "goes backwards" };
        out.push(Warning::at(
            WarningKind::RecordSequence,
            b.at + field_at(BASE_SEQUENCE),
            format_args!(
                "producer {} epoch {}: baseSequence {got} {how}; the batch before ends at {}",
                b.header[PRODUCER_ID],
                b.header[PRODUCER_EPOCH],
                expected - 1
            ),
        ));
    }
}

/// A record's offsetDelta with where it is, unless the record has an error.
fn record_delta(tape: &Values, (r, rec): (u32, &Slot)) -> Option<(usize, i64)> {
    if !matches!(rec.value, Val::Int(_)) || tape.children(r).any(|(_, s)| has_error(tape, s)) {
        return None;
    }
    let (_, s) = tape
        .children(r)
        .find(|(_, s)| matches!(s.id, Id::RecordField(RecordField::OffsetDelta)))?;
    let delta = slot_int(s.value) as i32;
    Some((s.at as usize, i64::from(delta)))
}

/// A finding of the record walk that puts an error on its parent.
pub(super) fn has_error(tape: &Values, s: &Slot) -> bool {
    s.finding()
        .and_then(|f| tape.findings.get(f))
        .is_some_and(|f| f.error.is_some())
}

/// A slot's integer as the batch and record nodes take it (0 when it is none).
pub(super) fn slot_int(v: Val) -> i64 {
    match v {
        Val::Int(n) => n,
        Val::Uint(n) => n as i64,
        _ => 0,
    }
}
