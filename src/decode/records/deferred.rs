//! A records field drawn a batch at a time: the tree's decode left it
//! unwalked ([`crate::decode::DecodeOptions::defer_records_over`]), and the
//! view that draws it walks each top-level batch or message onto a small
//! tape of its own, builds its nodes, hands them on and drops them. What the
//! walk finds (warnings, damage) is what walking the whole field with the
//! frame finds, in the same order, but for the budget of what is held at
//! once, whose share each batch gives back when drawn; credentials among
//! them are masked as the frame's decode masks them (the records field's
//! own line, drawn before its batches are walked, does not say it holds
//! redacted bytes).

use super::tape::Walk;
use super::BatchDecoder;
use crate::budget::Budget;
use crate::decode::context::Context;
use crate::decode::tape::{close_slot, push_slot, SlotKind, Val, Values, NO_KEY};
use crate::decode::{DecodeError, DeferredRecords, Node, Warning};
use crate::schema::Catalogue;
use bytes::Bytes;

/// What drawing a deferred records field found, for the frame's lists.
#[derive(Debug, Default)]
pub struct Found {
    pub warnings: Vec<Warning>,
    pub damage: Vec<DecodeError>,
}

/// Each top-level batch or message of `d` in `frame`, as the nodes the
/// frame's tree would hold under its records node, handed to `each` in
/// order; stops at `each`'s first error. Decompression draws on `budget` as
/// the frame's decode would; what a batch's decompressed data and nodes hold
/// is given back when they are dropped, so a field whose whole tree would
/// spend the budget for what is held at once (`--max-expanded`) is shown
/// whole, a batch at a time.
pub fn for_each_item<E>(
    cat: &Catalogue,
    frame: &Bytes,
    d: &DeferredRecords,
    budget: &Budget,
    mut each: impl FnMut(&[Node]) -> Result<(), E>,
) -> Result<Found, E> {
    let ctx = Context {
        topic: d.topic.clone(),
        topic_forced: d.topic.is_some(),
        budget: budget.clone(),
        ..Context::default()
    };
    let mut bd = BatchDecoder::new(frame, cat, &ctx);
    let (mut tape, mut nodes) = (Values::default(), Vec::new());
    let (mut pos, end, mut index) = (d.range.0, d.range.1, 0);
    while pos < end {
        let item_end = Walk::<true>::whole_item_end(frame, pos, end).unwrap_or(end);
        let held = budget.expanded();
        tape.slots.clear();
        tape.buffers.clear();
        tape.findings.clear();
        let root = push_slot(
            &mut tape.slots,
            NO_KEY,
            SlotKind::Part,
            0,
            Val::Null,
            (pos, item_end - pos, 0),
        );
        // The frame's walk looks for Schema Registry framing as a plain topic's.
        Walk::<true> {
            slots: &mut tape.slots,
            buffers: &mut tape.buffers,
            findings: &mut tape.findings,
            budget,
            plain: true,
            first_index: index,
            cut_is_damage: d.cut_is_damage,
        }
        .stream(frame, (pos, item_end));
        close_slot(&mut tape.slots, root, item_end);
        bd.replay_stream(&tape, root as u32, &mut nodes);
        // Credentials in records (a metadata log's SCRAM records) are masked as
        // the frame's own decode masks them, in a copy of the bytes they show.
        if crate::decode::secrets::hiding() {
            let mut shown = frame.slice(pos..item_end);
            crate::decode::secrets::redact_tree_at(&mut nodes, &mut shown, pos);
        }
        each(&nodes)?;
        nodes.clear();
        // Its decompressed data and nodes are dropped: what they held goes back.
        budget.release(budget.expanded().saturating_sub(held));
        (pos, index) = (item_end, index + 1);
    }
    Ok(Found {
        warnings: bd.warnings,
        damage: bd.damage,
    })
}
