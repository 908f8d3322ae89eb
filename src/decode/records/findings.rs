//! A records field read for what is wrong in it without building its nodes
//! (`kwire check`: [`crate::decode::DecodeOptions::findings_only`]).
//! The record walk put its findings on the tape ([`super::tape`]); they are
//! taken in the order the nodes would report them, and the batches' offsets
//! and sequences are checked from their slots ([`super::order`]), as when
//! they are built. Batches whose keys and values are decoded through
//! schemas (control batches, internal topics' records) are still built,
//! into nodes dropped after.

use super::batch::push_batch;
use super::layout::ATTRIBUTES;
use super::order;
use super::payload::PayloadKind;
use super::BatchDecoder;
use crate::decode::tape::{Id, SlotKind, Val, Values};

/// A control batch's attribute bit: its records are control records.
const CONTROL: i64 = 0x20;

impl BatchDecoder<'_, '_> {
    /// The warnings and damage of the batches that are the children of slot
    /// `parent` (a records field), as [`Self::replay_stream`] gives them.
    pub(crate) fn check_stream(&mut self, tape: &Values, parent: u32) {
        if PayloadKind::for_topic(self.ctx.topic.as_deref()) != PayloadKind::Plain {
            // Keys and values decoded through their schemas warn of their own: built, then dropped.
            return self.replay_stream(tape, parent, &mut Vec::new());
        }
        for (i, s) in tape.children(parent) {
            match s.id {
                // A control batch's records are decoded through their schemas too.
                Id::Batch(index) if is_control(tape, i) => {
                    let mut nodes = Vec::with_capacity(1);
                    let node =
                        push_batch(&mut nodes, index as usize, s.at as usize, s.len as usize);
                    self.replay_batch(tape, i, node);
                }
                _ => self.findings_within(tape, i),
            }
            if s.kind() == SlotKind::Batch {
                self.order
                    .add(order::batch_facts(tape, i), &mut self.warnings);
            }
        }
    }

    /// The warnings and damage of the findings in slot `i`'s subtree, in tape order.
    fn findings_within(&mut self, tape: &Values, i: u32) {
        let end = tape.slots.get(i as usize).map_or(i, |s| s.end);
        let range = i as usize..(end as usize).min(tape.slots.len());
        for f in tape.slots[range]
            .iter()
            .filter_map(|s| tape.findings.get(s.finding()?))
        {
            self.take_finding(f);
        }
    }
}

/// Whether the batch at slot `batch` says its records are control records.
fn is_control(tape: &Values, batch: u32) -> bool {
    tape.children(batch)
        .find(|(_, s)| s.id == Id::BatchField(ATTRIBUTES as u8))
        .is_some_and(|(_, s)| matches!(s.value, Val::Int(a) if a & CONTROL != 0))
}
