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
use crate::decode::tape::{close_slot, push_slot, Id, Val, Values, NO_KEY};
use crate::decode::{DecodeError, DeferredRecords, Frame, Node, Warning};
use crate::schema::Catalogue;
use bytes::Bytes;

/// What drawing a deferred records field found, for the frame's lists.
#[derive(Debug, Default)]
pub struct Found {
    pub warnings: Vec<Warning>,
    pub damage: Vec<DecodeError>,
}

/// Where a top-level batch or message is: its bytes in the frame and its
/// number among the field's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    pub range: (usize, usize),
    pub index: usize,
    /// What the budget had spent before the item's walk ([`Budget::spent`]).
    pub budget_before: (u64, u64),
}

/// Each top-level batch or message of `d` in `frame`, as the nodes the
/// frame's tree would hold under its records node, handed to `each` in
/// order (to take or leave: the list is cleared after); stops at `each`'s
/// first error. Decompression draws on `budget` as
/// the frame's decode would; what a batch's decompressed data and nodes hold
/// is given back when they are dropped, so a field whose whole tree would
/// spend the budget for what is held at once (`--max-expanded`) is shown
/// whole, a batch at a time.
pub fn for_each_item<E>(
    cat: &Catalogue,
    frame: &Bytes,
    d: &DeferredRecords,
    budget: &Budget,
    mut each: impl FnMut(&mut Vec<Node>, Item) -> Result<(), E>,
) -> Result<Found, E> {
    let ctx = field_context(d, budget);
    let mut bd = BatchDecoder::new(frame, cat, &ctx).fetched(!d.cut_is_damage);
    let mut nodes = Vec::new();
    walk_items(frame, d, budget, |tape, root, item| {
        bd.check_stream(tape, root);
        bd.replay_stream(tape, root, &mut nodes);
        // Credentials in records (a metadata log's SCRAM records) are masked as
        // the frame's own decode masks them, in a copy of the bytes they show.
        if crate::decode::secrets::hiding() {
            let mut shown = frame.slice(item.range.0..item.range.1);
            crate::decode::secrets::redact_tree_at(&mut nodes, &mut shown, item.range.0);
        }
        let res = each(&mut nodes, item);
        nodes.clear();
        res
    })?;
    Ok(Found {
        warnings: bd.warnings,
        damage: bd.damage,
    })
}

/// What a deferred field's batches are decoded within: its topic (for
/// internal topics' keys and values) and the input's budget.
fn field_context(d: &DeferredRecords, budget: &Budget) -> Context {
    Context {
        topic: d.topic.clone(),
        topic_forced: d.topic.is_some(),
        budget: budget.clone(),
        ..Context::default()
    }
}

/// Each top-level batch or message of `d` in `frame` walked onto a small
/// tape of its own, handed to `each` with its root slot (whose children are
/// the item's slots) and where it is; what its decompressed data held goes
/// back to `budget` after. Stops at `each`'s first error.
pub(crate) fn walk_items<E>(
    frame: &Bytes,
    d: &DeferredRecords,
    budget: &Budget,
    mut each: impl FnMut(&Values, u32, Item) -> Result<(), E>,
) -> Result<(), E> {
    let mut tape = Values::default();
    let (mut pos, end, mut index) = (d.range.0, d.range.1, d.first_item);
    while pos < end {
        let item_end = Walk::<true>::whole_item_end(frame, pos, end).unwrap_or(end);
        let before = budget.spent();
        let held = before.1;
        tape.slots.clear();
        tape.buffers.clear();
        tape.findings.clear();
        let root = push_slot(
            &mut tape.slots,
            NO_KEY,
            Id::Stream,
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
        let item = Item {
            range: (pos, item_end),
            index,
            budget_before: before,
        };
        each(&tape, root as u32, item)?;
        // Its decompressed data and nodes are dropped: what they held goes back.
        budget.release(budget.expanded().saturating_sub(held));
        (pos, index) = (item_end, index + 1);
    }
    Ok(())
}

/// The warnings and damage of a records field a findings-only decode left
/// off its tape ([`Frame::deferred`]), found a top-level batch or message at
/// a time, the batches' order carried from one to the next: what walking
/// the whole field with the frame finds, in its order. `also` reads each
/// item's tape as it goes (the records table reads its rows), so that the
/// field is walked, and decompressed, once.
pub fn read_deferred(
    cat: &Catalogue,
    frame: &Bytes,
    d: &DeferredRecords,
    budget: &Budget,
    mut also: impl FnMut(&Values, u32),
) -> Found {
    let ctx = field_context(d, budget);
    let mut bd = BatchDecoder::new(frame, cat, &ctx).fetched(!d.cut_is_damage);
    let _ = walk_items(frame, d, budget, |tape, root, _| {
        bd.check_stream(tape, root);
        also(tape, root);
        Ok::<(), std::convert::Infallible>(())
    });
    Found {
        warnings: bd.warnings,
        damage: bd.damage,
    }
}

/// Every records field a findings-only decode of `frame` left off its tape,
/// checked ([`read_deferred`]): their warnings and damage join the frame's
/// where the whole decode would have put them (`kwire check`).
pub fn check_deferred(cat: &Catalogue, frame: &mut Frame, budget: &Budget) {
    let found = std::mem::take(&mut frame.deferred)
        .into_iter()
        .map(|d| {
            let f = read_deferred(cat, &frame.bytes, &d, budget, |_, _| {});
            (d, f)
        })
        .collect();
    join_found(frame, found);
}

/// Every records field `frame`'s decode left for drawing, as one stub per
/// top-level batch or message: the item's own node (its name, range and
/// value) without its children, marked with the item's bytes so that
/// [`open_stub`] walks them when it is opened. What holds a field of 400,000
/// records as a few thousand nodes (the explorer). Every item is walked
/// once here, each dropped before the next: what the walks find joins the
/// frame's warnings and record damage where the whole decode would have put
/// them. An item that walks into several nodes (no batch of its own) keeps
/// them as they are.
pub fn stub_items(cat: &Catalogue, frame: &mut Frame, budget: &Budget) {
    let bytes = frame.bytes.clone();
    let mut found = Vec::new();
    stub_under(cat, &bytes, &mut frame.root, budget, &mut found);
    join_found(frame, found);
}

/// What walks of a frame's deferred records fields found (in the fields'
/// order), put among the frame's warnings and record damage where the
/// whole decode would have put them.
pub fn join_found(frame: &mut Frame, found: Vec<(DeferredRecords, Found)>) {
    // Later fields' places first, so that earlier places still hold.
    for (d, f) in found.into_iter().rev() {
        let at = d.warnings_at.min(frame.warnings.len());
        frame.warnings.splice(at..at, f.warnings);
        let at = d.damage_at.min(frame.record_damage.len());
        frame.record_damage.splice(at..at, f.damage);
    }
}

fn stub_under(
    cat: &Catalogue,
    bytes: &Bytes,
    node: &mut Node,
    budget: &Budget,
    found: &mut Vec<(DeferredRecords, Found)>,
) {
    if let Some(d) = node.clear_deferred_records() {
        let mut stubs = Vec::new();
        let walked = for_each_item(cat, bytes, &d, budget, |nodes, item| {
            if let [one] = &mut nodes[..] {
                if !one.children.is_empty() {
                    let mut stub =
                        std::mem::replace(one, Node::new("", "", 0, one.region, one.role));
                    stub.children = Vec::new();
                    stub.set_deferred_records(DeferredRecords {
                        range: item.range,
                        first_item: item.index,
                        budget_before: Some(item.budget_before),
                        ..d.clone()
                    });
                    stubs.push(stub);
                    return Ok(());
                }
            }
            stubs.append(nodes);
            Ok::<(), std::convert::Infallible>(())
        });
        node.children = stubs;
        let Ok(f) = walked;
        found.push((d, f));
        return;
    }
    for c in &mut node.children {
        stub_under(cat, bytes, c, budget, found);
    }
}

/// The item a stub of [`stub_items`] stands for, walked from the frame's
/// `bytes` as the frame's decode walks it, within the room `budget` had
/// then (its findings are the frame's already; nothing is spent twice);
/// `None` when the stub's bytes no longer walk into one node.
pub fn open_stub(cat: &Catalogue, bytes: &Bytes, stub: &Node, budget: &Budget) -> Option<Node> {
    let d = stub.deferred_records()?;
    let budget = match d.budget_before {
        Some(spent) => budget.as_it_was(spent),
        None => budget.clone(),
    };
    let mut out = None;
    let _ = for_each_item(cat, bytes, d, &budget, |nodes, _| {
        out = match nodes.len() {
            1 => nodes.pop(),
            _ => None,
        };
        Ok::<(), std::convert::Infallible>(())
    });
    out
}
