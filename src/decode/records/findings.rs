//! What is wrong in a records field, read from its tape: the warnings and
//! damage of every batch, whether its nodes are built or not (`kwire check`,
//! [`crate::decode::DecodeOptions::findings_only`], builds none). The record
//! walk put its findings on the tape ([`super::tape`]); they are taken in
//! tape order, which is the order of the nodes they are about. The batches'
//! offsets and sequences are checked from their slots ([`super::order`]),
//! and keys and values that decode through schemas (control records,
//! internal topics' records) are decoded here for what that decoding warns
//! of, at their record's place.

use super::layout::ATTRIBUTES;
use super::order;
use super::payload::PayloadKind;
use super::BatchDecoder;
use crate::decode::tape::{Id, SlotKind, Val, Values};
use bytes::Bytes;

/// A control batch's attribute bit: its records are control records.
const CONTROL: i64 = 0x20;

impl BatchDecoder<'_, '_> {
    /// The warnings and damage of the batches that are the children of slot
    /// `parent` (a records field), in the order of their nodes.
    pub(crate) fn check_stream(&mut self, tape: &Values, parent: u32) {
        let topic = PayloadKind::for_topic(self.ctx.topic.as_deref());
        for (i, s) in tape.children(parent) {
            let batch = s.kind() == SlotKind::Batch;
            let payloads = match batch && is_control(tape, i) {
                true => PayloadKind::Control,
                false => topic,
            };
            self.findings_within(tape, i, batch.then_some(payloads));
            if batch {
                self.order
                    .add(order::batch_facts(tape, i), &mut self.warnings);
            }
        }
    }

    /// The warnings and damage of the findings in slot `i`'s subtree, in tape
    /// order; under a v2 batch whose records' keys and values are of
    /// `payloads`, what decoding each record's warns of, before its own.
    fn findings_within(&mut self, tape: &Values, i: u32, payloads: Option<PayloadKind>) {
        let end = tape.slots.get(i as usize).map_or(i, |s| s.end);
        let range = i as usize..(end as usize).min(tape.slots.len());
        let decoded = payloads.filter(|p| *p != PayloadKind::Plain);
        // Nothing to take: no finding on the tape, no key or value to decode.
        // (The common case; the pass over the slots was 1% of `kwire
        // capture`'s text tree of the Produce benchmark capture.)
        if tape.findings.is_empty() && decoded.is_none() {
            return;
        }
        // The decompressed data the slots being read lie in, and where it ends.
        let mut data: Option<(usize, &Bytes)> = None;
        for (k, s) in tape.slots[range].iter().enumerate() {
            let k = i as usize + k;
            if data.is_some_and(|(until, _)| k >= until) {
                data = None;
            }
            if let (Some(_), Id::Compressed(b)) = (decoded, s.id) {
                data = tape.buffers.get(b as usize).map(|d| (s.end as usize, d));
            }
            if let (Some(kind), SlotKind::Record) = (decoded, s.kind()) {
                let buf = data.map_or(self.buf, |(_, d)| d);
                self.key_value_warnings(tape, k as u32, kind, buf);
            }
            if let Some(f) = s.finding().and_then(|f| tape.findings.get(f)) {
                self.warnings.extend(f.warning.clone());
                self.damage.extend(f.damage.clone());
            }
        }
    }

    /// What decoding the key and value of the record at slot `rec` (in
    /// `buf`) through their schemas warns of, as its nodes decode them.
    fn key_value_warnings(&mut self, tape: &Values, rec: u32, kind: PayloadKind, buf: &Bytes) {
        let mut warnings = Vec::new();
        self.decoded_key_value(tape, rec, (kind, buf), &mut warnings);
        self.warnings.append(&mut warnings);
    }
}

/// Whether the batch at slot `batch` says its records are control records.
fn is_control(tape: &Values, batch: u32) -> bool {
    tape.children(batch)
        .find(|(_, s)| matches!(s.id, Id::BatchField(k) if usize::from(k) == ATTRIBUTES))
        .is_some_and(|(_, s)| matches!(s.value, Val::Int(a) if a & CONTROL != 0))
}
