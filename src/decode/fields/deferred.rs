//! An array of primitives or plain structs drawn an element at a time. The tree's decode
//! left its elements off the tape once they had taken more than
//! [`crate::decode::DecodeOptions::defer_elements_over`] bytes
//! ([`crate::decode::values::Leave`]); the walk then decodes each element
//! onto a small tape of its own and walks it without nodes, for the
//! warnings and what it teaches the decoder (a topic's id and name), and
//! marks the array's node ([`DeferredElements`]). The view that draws the
//! array walks each element so again, into its nodes, draws them and drops
//! them ([`for_each_element`]): a Metadata response of 200,000 partitions
//! is never held as nodes at once.
//!
//! Primitives and structs that hold no credential are left (their nodes
//! need no masking the frame's later walk adds); structs that hold records
//! only for views that draw records within the elements
//! ([`crate::decode::DecodeOptions::defer_record_arrays`]). Every records
//! field within such elements is left for drawing: the walk without nodes
//! hands it on with its place among the frame's warnings and damage, the
//! array keeps those ([`LeftArray::records`]), and an element walked later
//! takes its records fields' places from there. The explorer makes a stub
//! of each struct element ([`stub_elements`]); a primitive one is its own
//! node already.

use super::sink::{Built, NoNodes, Nodes};
use super::walk::show_stop;
use super::{FieldDecoder, Naming};
use crate::decode::context::Context;
use crate::decode::reader::Reader;
use crate::decode::tape::{Slot, Values};
use crate::decode::tree::{DeferredElements, LeftArray, Node};
use crate::decode::values::{self, Leave};
use crate::schema::plan::{SharedPlan, StructPlan};
use crate::schema::{Catalogue, FieldSpec, FieldType};
use bytes::Bytes;
use std::sync::Arc;

impl FieldDecoder<'_, '_> {
    /// What the tape leaves off for drawing, from the context.
    pub(super) fn leave(&self) -> Leave {
        Leave {
            records_over: self.ctx.defer_records_over.unwrap_or(usize::MAX),
            elements_over: self.ctx.defer_elements_over.unwrap_or(usize::MAX),
            damaged_whole: !self.ctx.fits_only,
            record_arrays: self.ctx.defer_record_arrays,
        }
    }

    /// Array field `f` (slot `slot`, `count` elements) whose elements the
    /// tape left off: each walked now without nodes, from its bytes (but
    /// fixed-width values, which have nothing to warn of or teach), and
    /// the array's node marked to walk them into nodes when it is drawn.
    pub(super) fn walk_left_elements(
        &mut self,
        f: &FieldSpec,
        slot: &Slot,
        (count, compact): (usize, bool),
        node: &mut impl Built,
    ) {
        let plan = match &f.ty {
            FieldType::Array(inner) if matches!(**inner, FieldType::Struct(_)) => Some(
                SharedPlan::new(StructPlan::compile(&f.fields, self.version, self.flexible)),
            ),
            _ => None,
        };
        let mut array = LeftArray {
            limit: self.r.end(),
            field: f.clone(),
            compact,
            plan,
            version: self.version,
            flexible: self.flexible,
            region: self.region,
            header_naming: self.naming == Naming::Header,
            topic: self.ctx.topic.clone(),
            topic_forced: self.ctx.topic_forced,
            protocol_type: self.ctx.protocol_type.clone(),
            topic_ids: self.ctx.topic_ids.clone(),
            budget: self.ctx.budget.clone(),
            elements_over: self.ctx.defer_elements_over,
            record_arrays: self.ctx.defer_record_arrays,
            records: Arc::new([]),
        };
        let first = (slot.at + u32::from(slot.prefix)) as usize;
        let fixed = matches!(&f.ty, FieldType::Array(inner)
            if matches!(**inner, FieldType::Primitive(p) if p.fixed_width().is_some()));
        let left_before = self.deferred.len();
        if !fixed {
            let mut tape = Values::default();
            let mut at = first;
            for k in 0..count {
                at = self.element_from_bytes(&array, (k, at), &mut tape, &mut NoNodes);
            }
        }
        if let Some(n) = node.node() {
            // The elements' records fields, walked without nodes, were left
            // (with their places in the frame's lists) for the frame's reader;
            // the array's node is what walks them now, element by element.
            array.records = self.deferred.drain(left_before..).collect();
            n.set_deferred_elements(DeferredElements {
                first,
                first_index: 0,
                count,
                array: Arc::new(array),
            });
        }
        self.r.seek((slot.at + slot.len) as usize);
    }

    /// Element `k` of `array`, at `at`: decoded onto `tape`, its node
    /// pushed onto `out` with its value, or its fields walked under it.
    /// Returns where it ends.
    fn element_from_bytes<O: Nodes>(
        &mut self,
        array: &LeftArray,
        (k, at): (usize, usize),
        tape: &mut Values,
        out: &mut O,
    ) -> usize {
        let (field, compact) = (&array.field, array.compact);
        let FieldType::Array(inner) = &field.ty else {
            return array.limit;
        };
        tape.reuse_for(0);
        let frame = self.frame.get(..array.limit).unwrap_or_default();
        let (root, end, read) = match (&**inner, &array.plan) {
            (FieldType::Struct(_), Some(plan)) => {
                let mut leave = self.leave();
                if plan.holds_records {
                    // As the frame's decode left them ([`Leave::record_arrays`]).
                    leave.records_over = 0;
                }
                let budget = &self.ctx.budget;
                let (root, end, res) =
                    values::decode_annotated_leaving(frame, at, plan, tape, budget, leave);
                (root, end, res.is_ok())
            }
            (FieldType::Primitive(p), _) => {
                let read = (*p, compact, field.name.as_str());
                values::decode_primitive_element(frame, at, read, tape)
            }
            _ => return array.limit,
        };
        let node = out.push(|| self.element_node(field, field.labels(), inner, k, at));
        if let Some(n) = node.node() {
            n.len = end - at;
        }
        // Each element decoded whole before it was left: this shows nothing
        // unless the bytes changed.
        show_stop(tape, root, node);
        match &**inner {
            FieldType::Primitive(p) => {
                if let Some(slot) = tape.slots.get(root as usize).copied() {
                    self.walk_primitive(*p, (compact, false), field, (&slot, !read), node);
                }
            }
            _ => self.walk_struct(tape, root, &field.fields, node.children()),
        }
        end
    }
}

/// Each element of the array `d` in `frame`, as the one node (with its
/// subtree) the frame's whole tree holds for it under the array's node,
/// handed to `each` with whether it is the last (the list is cleared
/// after); stops at `each`'s first error. The elements' warnings are not
/// given again: they are the frame's already.
pub(crate) fn for_each_element<E>(
    cat: &Catalogue,
    frame: &Bytes,
    d: &DeferredElements,
    mut each: impl FnMut(&mut Vec<Node>, bool) -> Result<(), E>,
) -> Result<(), E> {
    let array = &*d.array;
    let mut decoder = FieldDecoder {
        r: Reader::over(frame, (d.first, array.limit)),
        frame,
        version: array.version,
        flexible: array.flexible,
        region: array.region,
        naming: match array.header_naming {
            true => Naming::Header,
            false => Naming::Schema,
        },
        catalogue: cat,
        warnings: Vec::new(),
        record_damage: Vec::new(),
        deferred: Vec::new(),
        ctx: Context {
            topic: array.topic.clone(),
            topic_forced: array.topic_forced,
            protocol_type: array.protocol_type.clone(),
            budget: array.budget.clone(),
            topic_ids: array.topic_ids.clone(),
            defer_elements_over: array.elements_over,
            defer_record_arrays: array.record_arrays,
            placed_records: array.records.clone(),
            ..Context::default()
        },
    };
    let (mut tape, mut nodes) = (Values::default(), Vec::new());
    let mut at = d.first;
    for k in 0..d.count {
        let index = d.first_index + k;
        at = decoder.element_from_bytes(array, (index, at), &mut tape, &mut nodes);
        decoder.warnings.clear();
        each(&mut nodes, k + 1 == d.count)?;
        nodes.clear();
    }
    Ok(())
}

/// Every array under `node` whose elements were left, as one stub per
/// element: the element's own node (its name, range and value) without its
/// children, marked to walk it when it is opened ([`open_element_stub`]).
/// What holds a Metadata response of 200,000 partitions as a node a
/// partition (the explorer). An element with no children stays as it is;
/// `seen` sees each element whole before it becomes a stub.
pub fn stub_elements(cat: &Catalogue, bytes: &Bytes, node: &mut Node, seen: &mut dyn FnMut(&Node)) {
    let Some(d) = node.deferred_elements().cloned() else {
        for c in &mut node.children {
            stub_elements(cat, bytes, c, seen);
        }
        return;
    };
    node.take_deferred();
    let mut index = d.first_index;
    let stubbed = for_each_element(cat, bytes, &d, |nodes, _| {
        for mut element in nodes.drain(..) {
            if !element.children.is_empty() {
                seen(&element);
                element.children = Vec::new();
                element.set_deferred_elements(DeferredElements {
                    first: element.offset,
                    first_index: index,
                    count: 1,
                    array: Arc::clone(&d.array),
                });
            }
            node.children.push(element);
            index += 1;
        }
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(()) = stubbed;
}

/// The element a stub of [`stub_elements`] stands for, walked from the
/// frame's `bytes` into its node, the arrays within it left as stubs in
/// turn (`seen` as [`stub_elements`] has it); `None` for a node that is no
/// such stub.
pub fn open_element_stub(
    cat: &Catalogue,
    bytes: &Bytes,
    stub: &Node,
    seen: &mut dyn FnMut(&Node),
) -> Option<Node> {
    let d = stub.deferred_elements().filter(|d| d.count == 1)?;
    let mut out = None;
    let walked = for_each_element(cat, bytes, d, |nodes, _| {
        out = nodes.pop();
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(()) = walked;
    let mut node = out?;
    stub_elements(cat, bytes, &mut node, seen);
    Some(node)
}
