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

use super::lines::{Depth, PartLine};
use super::nodes::{shown_in_records, shown_in_stream};
use super::payload::PayloadKind;
use super::tape::Walk;
use super::BatchDecoder;
use crate::budget::Budget;
use crate::decode::context::Context;
use crate::decode::tape::{close_slot, push_slot, Id, Val, Values, NO_KEY};
use crate::decode::tree::{Deferred, DeferredElements, LeftArray};
use crate::decode::{DecodeError, DeferredRecords, Frame, Node, Region, Role, Warning};
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
/// the frame's decode would. With [`Hold::ByItem`], what a batch's
/// decompressed data and nodes hold is given back when they are dropped, so
/// a field whose whole tree would spend the budget for what is held at once
/// (`--max-expanded`) is shown whole, a batch at a time; with
/// [`Hold::ByFrame`] it is held as the whole tree holds it, for what the
/// whole tree would find.
pub fn for_each_item<E>(
    cat: &Catalogue,
    frame: &Bytes,
    d: &DeferredRecords,
    (budget, hold): (&Budget, Hold),
    mut each: impl FnMut(&mut Vec<Node>, Item) -> Result<(), E>,
) -> Result<Found, E> {
    let ctx = field_context(d, budget);
    let mut bd = BatchDecoder::new(frame, cat, &ctx).fetched(!d.cut_is_damage);
    let mut nodes = Vec::new();
    walk_items_into(frame, d, (budget, hold), |tape, root, item| {
        bd.check_stream(tape, root);
        bd.stream_nodes(tape, root, &mut nodes);
        mask_item(&bd, frame, item, &mut nodes);
        let res = each(&mut nodes, item);
        nodes.clear();
        res
    })?;
    Ok(Found {
        warnings: bd.warnings,
        damage: bd.damage,
    })
}

/// How long what a walk's items decompress is held against the expanded
/// budget (`--max-expanded`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Until the item is drawn: a large frame's records, shown whole a
    /// batch at a time.
    ByItem,
    /// Until the caller gives it back: a small frame's, which its whole
    /// decode would hold for the frame's life (the same batches decoded or
    /// over budget as in its other views).
    ByFrame,
}

/// A piece of a deferred records field's tree, as [`for_each_piece`] hands
/// them on: `last` when nothing of the field follows it at its level.
pub enum Piece<'p, 'b> {
    /// Nodes among the field's children (batches, messages, bytes).
    Nodes { nodes: &'p [Node], last: bool },
    /// A line of a v2 batch read from its slots (the batch's own, its
    /// header's fields', its records'), and where it goes in the batch's tree.
    Line { line: &'p PartLine<'b>, at: Depth },
    /// Nodes among the records of the batch before: a record that needs
    /// its nodes, bytes a budget left undecoded. They go at `depth` in the
    /// batch's tree (1, or 3 under its decompressed records); `inner`: their
    /// offsets index the decompressed records.
    RecordNodes {
        nodes: &'p [Node],
        last: bool,
        depth: u8,
        inner: bool,
    },
}

/// Each top-level batch or message of `d` in `frame` walked and handed to
/// `each` a piece at a time, in order: as [`for_each_item`], but a plain
/// topic's uncompressed batch comes as lines read straight from its slots
/// (the text tree draws them so, with no node built): its own, its
/// header's, and each record's where it can be. An item is handed on when the
/// next has been walked, so that the last is known as the last.
pub fn for_each_piece<E>(
    cat: &Catalogue,
    frame: &Bytes,
    d: &DeferredRecords,
    (budget, hold): (&Budget, Hold),
    mut each: impl FnMut(Piece) -> Result<(), E>,
) -> Result<Found, E> {
    let ctx = field_context(d, budget);
    let mut bd = BatchDecoder::new(frame, cat, &ctx).fetched(!d.cut_is_damage);
    // The item walked before, held until the next shows whether it was the last.
    let mut held: Option<(Values, u32, Item)> = None;
    walk_items_into(frame, d, (budget, hold), |tape, root, item| {
        bd.check_stream(tape, root);
        if !tape.children(root).any(|(_, s)| shown_in_stream(s)) {
            return Ok(());
        }
        let before = held.replace((std::mem::take(tape), root, item));
        if let Some((mut t, r, i)) = before {
            pieces_of(&bd, (frame, &t, r, i), false, &mut each)?;
            // The held tape's room is the next item's.
            t.slots.clear();
            *tape = t;
        }
        Ok(())
    })?;
    if let Some((t, r, i)) = held {
        pieces_of(&bd, (frame, &t, r, i), true, &mut each)?;
    }
    Ok(Found {
        warnings: bd.warnings,
        damage: bd.damage,
    })
}

/// The pieces of one item (its root slot `root` on `tape`) handed to
/// `each`; `last_item`: no item after it shows anything.
fn pieces_of<E>(
    bd: &BatchDecoder,
    (frame, tape, root, item): (&Bytes, &Values, u32, Item),
    last_item: bool,
    each: &mut impl FnMut(Piece) -> Result<(), E>,
) -> Result<(), E> {
    let last_shown = tape
        .children(root)
        .filter(|(_, s)| shown_in_stream(s))
        .last();
    let (mut nodes, mut lines) = (Vec::new(), Vec::new());
    for (i, s) in tape.children(root).filter(|(_, s)| shown_in_stream(s)) {
        let last = last_item && last_shown.is_some_and(|(l, _)| l == i);
        lines.clear();
        if let Some(head) = bd.batch_head(tape, (i, s), &mut lines) {
            // The batch's line ends the field's children when it is the last.
            for (k, (line, at)) in lines.drain(..).enumerate() {
                let at = if k == 0 { (0, last) } else { at };
                each(Piece::Line { line: &line, at })?;
            }
            // A compressed batch's records, two levels down, in their buffer.
            let (inner, shift) = (head.data.is_some(), if head.data.is_some() { 2 } else { 0 });
            let within = head
                .data
                .map(|data| BatchDecoder::new(data, bd.catalogue, bd.ctx));
            let rd = within.as_ref().unwrap_or(bd);
            let in_records = || {
                tape.children(head.records)
                    .filter(|(_, r)| shown_in_records(r))
            };
            let last_record = in_records().last().map(|(j, _)| j);
            let mut parent = Node::new("", "", 0, Region::RecordBatch, Role::Element);
            for r in in_records() {
                let last = Some(r.0) == last_record;
                parent.children.clear();
                let mut line = |mut line: PartLine, (depth, ends): Depth| {
                    line.inner = inner;
                    let at = (depth + shift, ends);
                    each(Piece::Line { line: &line, at })
                };
                let drawn =
                    rd.record_piece(tape, r, (&head.header, last), (&mut line, &mut parent));
                match drawn {
                    Some(drawn) => drawn?,
                    None => each(Piece::RecordNodes {
                        nodes: &parent.children,
                        last,
                        depth: 1 + shift,
                        inner,
                    })?,
                }
            }
            continue;
        }
        nodes.clear();
        bd.item_nodes(tape, (i, s), &mut nodes);
        mask_item(bd, frame, item, &mut nodes);
        each(Piece::Nodes {
            nodes: &nodes,
            last,
        })?;
    }
    Ok(())
}

/// Credentials among an item's nodes (a metadata log's SCRAM records)
/// masked as the frame's own decode masks them, in a copy of the bytes they
/// show. A plain topic's records hold none: their nodes are not looked at.
fn mask_item(bd: &BatchDecoder, frame: &Bytes, item: Item, nodes: &mut [Node]) {
    if crate::decode::secrets::hiding()
        && PayloadKind::for_topic(bd.ctx.topic.as_deref()) != PayloadKind::Plain
    {
        let mut shown = frame.slice(item.range.0..item.range.1);
        crate::decode::secrets::redact_tree_at(nodes, &mut shown, item.range.0);
    }
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
/// the item's slots) and where it is, the tape to take: what is left in its
/// place is the next item's tape. What an item's decompressed data held
/// goes back to `budget` after it with [`Hold::ByItem`]. Stops at `each`'s
/// first error.
fn walk_items_into<E>(
    frame: &Bytes,
    d: &DeferredRecords,
    (budget, hold): (&Budget, Hold),
    mut each: impl FnMut(&mut Values, u32, Item) -> Result<(), E>,
) -> Result<(), E> {
    let mut tape = Values::default();
    let (mut pos, end, mut index) = (d.range.0, d.range.1, d.first_item);
    while pos < end {
        let item_end = Walk::<true>::whole_item_end(frame, pos, end).unwrap_or(end);
        let before = budget.spent();
        let held = before.1;
        // Room for the item's slots at once: growing the tape copied it.
        tape.reuse_for(item_end - pos);
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
        each(&mut tape, root as u32, item)?;
        // Its decompressed data and nodes are dropped: what they held goes back.
        if hold == Hold::ByItem {
            budget.release(budget.expanded().saturating_sub(held));
        }
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
    (budget, hold): (&Budget, Hold),
    mut also: impl FnMut(&Values, u32),
) -> Found {
    let ctx = field_context(d, budget);
    let mut bd = BatchDecoder::new(frame, cat, &ctx).fetched(!d.cut_is_damage);
    let _ = walk_items_into(frame, d, (budget, hold), |tape, root, _| {
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
    let left = std::mem::take(&mut frame.deferred);
    check_each(cat, frame, left, (budget, Hold::ByItem));
}

/// Every records field `frame`'s tree left for drawing
/// ([`crate::decode::DecodeOptions::defer_records_over`]), checked as
/// [`check_deferred`] checks a findings-only decode's, but with what they
/// decompress held as the whole tree holds it ([`Hold::ByFrame`]), so that
/// the findings are the whole tree's, budget notes included: `kwire check`
/// of a file holding a frame of 400,000 records, which its tree cannot hold.
/// The nodes stay as they are.
pub fn check_left_records(cat: &Catalogue, frame: &mut Frame, budget: &Budget) {
    let left = left_records(&frame.root);
    check_each(cat, frame, left, (budget, Hold::ByFrame));
}

/// Every records field the decode of the tree under `root` left for
/// drawing, in the frame's order: those its nodes hold, and those within
/// the elements of arrays it left ([`crate::decode::tree::LeftArray::records`]).
pub(crate) fn left_records(root: &Node) -> Vec<DeferredRecords> {
    let mut left = Vec::new();
    root.walk(&mut |n, _| match n.deferred() {
        Some(Deferred::Records(d)) => left.push(d.clone()),
        Some(Deferred::Elements(d)) => left.extend(d.array.records.iter().cloned()),
        None => {}
    });
    left
}

/// The records fields `left` of `frame` (in the fields' order), each
/// walked for its warnings and damage without nodes, joined to the frame's;
/// what they decompress held as `hold` says.
fn check_each(
    cat: &Catalogue,
    frame: &mut Frame,
    left: Vec<DeferredRecords>,
    (budget, hold): (&Budget, Hold),
) {
    let found = left
        .into_iter()
        .map(|d| {
            let f = read_deferred(cat, &frame.bytes, &d, (budget, hold), |_, _| {});
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
/// them as they are. The records fields within a left array's elements are
/// walked so too, for what they find, each marked with what the budget had
/// spent before it, for [`stub_records`] when its element is opened.
pub fn stub_items(cat: &Catalogue, frame: &mut Frame, budget: &Budget) {
    let bytes = frame.bytes.clone();
    let mut found = Vec::new();
    stub_under(cat, &bytes, &mut frame.root, budget, &mut found);
    join_found(frame, found);
}

/// What walks of a frame's deferred records fields found (in the fields'
/// order), put among the frame's warnings and record damage where the
/// whole decode would have put them.
pub fn join_found(frame: &mut Frame, mut found: Vec<(DeferredRecords, Found)>) {
    // In the fields' order, which is their bytes' (a left array's records
    // fields may be walked after the fields that follow the array).
    found.sort_by_key(|(d, _)| d.range.0);
    let (mut warnings, mut damage) = (Vec::new(), Vec::new());
    for (d, f) in found {
        warnings.push((d.warnings_at, f.warnings));
        damage.push((d.damage_at, f.damage));
    }
    merge_at(&mut frame.warnings, warnings);
    merge_at(&mut frame.record_damage, damage);
}

/// `list` with each of `inserts` (places in `list` as it is, in order, and
/// what goes there) put in its place, in one pass: a Fetch of 240,000
/// partitions has as many records fields to join, and inserting each in
/// turn moved the list's tail each time.
fn merge_at<T>(list: &mut Vec<T>, inserts: Vec<(usize, Vec<T>)>) {
    if inserts.iter().all(|(_, items)| items.is_empty()) {
        return;
    }
    let added: usize = inserts.iter().map(|(_, items)| items.len()).sum();
    let mut old = std::mem::take(list).into_iter();
    list.reserve(old.len() + added);
    let mut taken = 0;
    for (at, items) in inserts {
        while taken < at {
            let Some(x) = old.next() else { break };
            list.push(x);
            taken += 1;
        }
        list.extend(items);
    }
    list.extend(old);
}

fn stub_under(
    cat: &Catalogue,
    bytes: &Bytes,
    node: &mut Node,
    budget: &Budget,
    found: &mut Vec<(DeferredRecords, Found)>,
) {
    if let Some(d) = node.clear_deferred_records() {
        let (stubs, f) = stubs_of(cat, bytes, &d, budget);
        node.children = stubs;
        found.push((d, f));
        return;
    }
    if let Some(Deferred::Elements(d)) = node.deferred() {
        if !d.array.records.is_empty() {
            // The records fields within the left elements, walked here in
            // their turn for what they find; each keeps what the budget had
            // spent before it, so that an element opened later makes its
            // stubs within the same room ([`stub_records`]).
            let records = d.array.records.iter().map(|r| {
                let r = DeferredRecords {
                    budget_before: Some(budget.spent()),
                    ..r.clone()
                };
                let f = read_deferred(cat, bytes, &r, (budget, Hold::ByItem), |_, _| {});
                found.push((r.clone(), f));
                r
            });
            let array = LeftArray {
                records: records.collect(),
                ..(*d.array).clone()
            };
            let d = DeferredElements {
                array: std::sync::Arc::new(array),
                ..d.clone()
            };
            node.set_deferred(Deferred::Elements(d));
        }
    }
    for c in &mut node.children {
        stub_under(cat, bytes, c, budget, found);
    }
}

/// Records field `d` as one stub per top-level batch or message (an item
/// that walks into several nodes kept as they are), walked within
/// `budget`, and what the walk found.
fn stubs_of(
    cat: &Catalogue,
    bytes: &Bytes,
    d: &DeferredRecords,
    budget: &Budget,
) -> (Vec<Node>, Found) {
    let mut stubs = Vec::new();
    let walked = for_each_item(cat, bytes, d, (budget, Hold::ByItem), |nodes, item| {
        if let [one] = &mut nodes[..] {
            if !one.children.is_empty() {
                let mut stub = std::mem::replace(one, Node::new("", "", 0, one.region, one.role));
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
    let Ok(f) = walked;
    (stubs, f)
}

/// Every records field under `node` (an element just walked from its stub)
/// as one stub per batch, as [`stub_items`] makes them, walked within the
/// room `budget` had when the frame's were ([`DeferredRecords::budget_before`]);
/// what they find is the frame's already.
pub fn stub_records(cat: &Catalogue, bytes: &Bytes, node: &mut Node, budget: &Budget) {
    if let Some(d) = node.clear_deferred_records() {
        let room = match d.budget_before {
            Some(spent) => budget.as_it_was(spent),
            None => budget.clone(),
        };
        (node.children, _) = stubs_of(cat, bytes, &d, &room);
        return;
    }
    for c in &mut node.children {
        stub_records(cat, bytes, c, budget);
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
    let _ = for_each_item(cat, bytes, d, (&budget, Hold::ByItem), |nodes, _| {
        out = match nodes.len() {
            1 => nodes.pop(),
            _ => None,
        };
        Ok::<(), std::convert::Infallible>(())
    });
    out
}

#[cfg(test)]
mod tests {
    use super::merge_at;

    /// Each insert goes in its place in the list as it was, ties in the
    /// order given, and places past the end after it, in order.
    #[test]
    fn inserts_go_where_the_list_was() {
        let mut list = vec!["a", "b", "c"];
        let inserts = vec![
            (0, vec!["0"]),
            (1, vec!["1x", "1y"]),
            (1, vec!["1z"]),
            (3, vec!["3"]),
            (9, vec!["9"]),
            (9, vec![]),
            (10, vec!["10"]),
        ];
        merge_at(&mut list, inserts);
        assert_eq!(list, ["0", "a", "1x", "1y", "1z", "b", "c", "3", "9", "10"]);
        let mut untouched = vec![1, 2];
        merge_at(&mut untouched, vec![(1, vec![])]);
        assert_eq!(untouched, [1, 2]);
    }
}
