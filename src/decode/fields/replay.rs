//! The annotated tree built from an annotated tape ([`crate::decode::values::decode_annotated`])
//! instead of from the bytes: the tape holds every field's value, offset, length and
//! encoding widths, so building a node is naming it from the definitions and
//! copying what the tape found. The nodes are made by the same functions as
//! when reading ([`FieldDecoder::open_field`], [`FieldDecoder::length_node`], …)
//! and the tests hold both ways to the same tree on every contract case.
//!
//! Only tapes that decoded without an error are replayed: a frame that stops
//! part-way is decoded by reading, whose partial tree shows where and why.

use super::*;
use crate::decode::values::{Slot, SlotKind, Span, Val, Values};
use crate::decode::records::payload::PayloadKind;

impl FieldDecoder<'_, '_> {
    /// The nodes of the struct (declared as `fields`) whose slot on `tape` is `s`.
    pub(crate) fn replay_struct(&mut self, tape: &Values, s: u32, fields: &[FieldSpec], out: &mut Vec<Node>) {
        out.reserve(fields.len().min(MAX_RESERVE) + usize::from(self.flexible));
        for (i, slot) in tape.children(s) {
            match slot.kind {
                SlotKind::Field => {
                    if let Some(f) = fields.get(slot.decl as usize) {
                        self.replay_field(tape, (i, slot), f, false, out);
                    }
                }
                SlotKind::TaggedSection => self.replay_tagged_section(tape, (i, slot), fields, out),
                _ => {}
            }
        }
    }

    fn replay_field(&mut self, tape: &Values, (i, slot): (u32, &Slot), f: &FieldSpec, in_tag: bool, out: &mut Vec<Node>) {
        let node = self.open_field(f, slot.decl as u16, slot.at as usize, out);
        node.len = slot.len as usize;
        let (nullable, compact) = self.forms(f, in_tag);
        match &f.ty {
            FieldType::Primitive(p) => {
                if self.naming == Naming::Header && *p == Primitive::String && nullable {
                    node.ty = "nullable_string".into();
                }
                self.replay_primitive(*p, compact, nullable, f, slot, node);
                // What follows a value (records, consumer protocol bytes) is found from where it ends.
                self.r.seek((slot.at + slot.len) as usize);
                let plain = || PayloadKind::for_topic(self.ctx.topic.as_deref()) == PayloadKind::Plain;
                if slot.end > i + 1 && *p == Primitive::Records && plain() {
                    // Batches on the tape (the tape keeps only plain ones; an internal topic's are read).
                    let mut bd = crate::decode::records::BatchDecoder::new(self.frame, self.catalogue, &self.ctx);
                    bd.replay_stream(tape, i, &mut node.children);
                } else {
                    self.after_primitive(f, *p, node);
                }
            }
            FieldType::Struct(sname) => {
                node.ty = struct_type(f, sname);
                if nullable {
                    let marker = tape.children(i).next().filter(|(_, m)| m.kind == SlotKind::Marker);
                    if let Some((_, m)) = marker {
                        let (m, _) = self.marker_node(m.at as usize, m.len as usize, in_tag, tape_value(m.value));
                        node.children.push(m);
                    }
                }
                node.value = Value::Struct(slot.value == Val::Struct);
                if slot.value == Val::Struct {
                    self.replay_struct(tape, i, &f.fields, &mut node.children);
                }
            }
            FieldType::Array(inner) => self.replay_array(tape, (i, slot), f, inner, compact, nullable, node),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn replay_array(&mut self, tape: &Values, (i, slot): (u32, &Slot), f: &FieldSpec, inner: &FieldType, compact: bool, nullable: bool, node: &mut Node) {
        let count = (slot.value == Val::Array).then(|| tape.children(i).count());
        let raw = match (count, compact) {
            (Some(n), true) => n as i64 + 1,
            (Some(n), false) => n as i64,
            (None, true) => 0,
            (None, false) => -1,
        };
        let len_node = self.length_node(slot.at as usize, usize::from(slot.prefix), compact, raw, count);
        node.children.reserve(1 + count.unwrap_or(0).min(MAX_RESERVE));
        node.children.push(len_node);
        node.value = Value::Array(count);
        if count.is_none() {
            self.null_check(nullable, &f.name, slot.at as usize);
            return;
        }
        let labels = f.labels();
        for (k, (j, el)) in tape.children(i).enumerate() {
            let node = push_with(&mut node.children, || self.element_node(f, labels, inner, k, el.at as usize));
            node.len = el.len as usize;
            match inner {
                FieldType::Struct(_) => self.replay_struct(tape, j, &f.fields, &mut node.children),
                FieldType::Primitive(p) => self.replay_primitive(*p, compact, false, f, el, node),
                FieldType::Array(_) => {}
            }
        }
    }

    /// A primitive's value and note from its slot, as [`FieldDecoder::read_primitive`] makes them.
    fn replay_primitive(&mut self, p: Primitive, compact: bool, nullable: bool, f: &FieldSpec, slot: &Slot, node: &mut Node) {
        let at = slot.at as usize;
        node.value = match p {
            Primitive::Bool => {
                let b = self.frame.get(at).copied().unwrap_or_default();
                if b > 1 {
                    node.note = Some(format!("(non-canonical bool 0x{b:02x})").into());
                }
                Value::Bool(b != 0)
            }
            Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
                let v = tape_value(slot.value);
                if let Value::Int(n) = v {
                    node.note = int_note(meaning(f), n, self.catalogue);
                }
                v
            }
            Primitive::Uuid => match slot.value {
                Val::Uuid(u) => match self.frame.get(u as usize..u as usize + 16).and_then(|b| <[u8; 16]>::try_from(b).ok()) {
                    Some(bytes) => {
                        node.note = self.uuid_note(f, &bytes);
                        Value::Uuid(bytes)
                    }
                    None => Value::None,
                },
                _ => Value::None,
            },
            Primitive::String | Primitive::Bytes | Primitive::Records => {
                let span = match slot.value {
                    Val::Str(s) | Val::Bytes(s) => Some(s),
                    _ => None,
                };
                self.replay_length(p, compact, slot, span, &f.name).mark(node);
                match (span, p) {
                    (None, Primitive::String) => {
                        self.null_check(nullable, &f.name, slot.at as usize);
                        Value::Str(None)
                    }
                    (None, _) => {
                        self.null_check(nullable, &f.name, slot.at as usize);
                        Value::Bytes(None)
                    }
                    (Some(s), Primitive::String) => string_value(self.frame, s.at as usize, s.len as usize),
                    (Some(s), _) => Value::Bytes(Some(self.frame.slice(s.at as usize..(s.at + s.len) as usize))),
                }
            }
            _ => tape_value(slot.value),
        };
    }

    /// How a string's or bytes' length was written, with the warning that reading gives
    /// an over-long varint.
    fn replay_length(&mut self, p: Primitive, compact: bool, slot: &Slot, span: Option<Span>, name: &str) -> LengthForm {
        let n = span.map(|s| s.len);
        if !compact {
            let n = n.map_or(-1, |n| n as i32);
            return if p == Primitive::String { LengthForm::Int16(n) } else { LengthForm::Int32(n) };
        }
        let prefix = usize::from(slot.prefix);
        let at = slot.at as usize;
        if prefix > 1 && self.frame.get(at + prefix - 1) == Some(&0) {
            self.warnings.push(Warning::at(WarningKind::OverlongVarint, at, format_args!("{name} length is an over-long varint")));
        }
        LengthForm::Compact(n.map_or(0, |n| u64::from(n) + 1))
    }

    fn replay_tagged_section(&mut self, tape: &Values, (i, slot): (u32, &Slot), fields: &[FieldSpec], out: &mut Vec<Node>) {
        let at = slot.at as usize;
        let section = push_with(out, || self.tagged_section_node(at));
        section.len = slot.len as usize;
        section.value = tape_value(slot.value);
        let count = match slot.value {
            Val::Uint(n) => n,
            _ => 0,
        };
        self.check_varint(at, usize::from(slot.prefix), "tagged field count");
        if count == 0 {
            return;
        }
        section.children.push(tag_count_node(at, count, usize::from(slot.prefix)));
        let mut last_tag = None;
        for (j, entry) in tape.children(i) {
            let Some((k, payload)) = tape.children(j).next() else { continue };
            let (start, tag_no, tag_len) = (entry.at as usize, entry.decl, usize::from(entry.prefix));
            let size = match entry.value {
                Val::Uint(n) => n,
                _ => 0,
            };
            let size_len = (payload.at as usize).saturating_sub(start + tag_len);
            self.check_tag_order(start, tag_no.into(), &mut last_tag);
            self.check_varint(start, tag_len, "tag");
            self.check_varint(start + tag_len, size_len, "tagged field size");
            let mut node = tag_entry_node(start, (tag_no.into(), tag_len), (size, size_len));
            node.len = entry.len as usize;
            match self.known_tag(fields, tag_no) {
                Some((decl, f)) if payload.kind == SlotKind::Field => {
                    node.note = Some(format!("({}, size {size})", f.name).into());
                    let saved_region = self.region;
                    self.region = Region::TaggedFields;
                    // The slot's declaration index is the tagged field's.
                    debug_assert_eq!(payload.decl as usize, decl);
                    self.replay_field(tape, (k, payload), f, true, &mut node.children);
                    self.region = saved_region;
                    self.check_tag_size(f, tag_no, payload.at as usize, size as usize, payload.len as usize);
                }
                _ => self.unknown_tag(fields, &mut node, start, tag_no, (payload.at as usize, size as usize)),
            }
            section.children.push(node);
        }
    }
}

/// A tape value as a node's value, for the kinds that need nothing from the frame.
fn tape_value(v: Val) -> Value {
    match v {
        Val::Int(n) => Value::Int(n),
        Val::Uint(n) => Value::Uint(n),
        Val::Float(x) => Value::Float(x),
        Val::Bool(b) => Value::Bool(b),
        Val::Null | Val::Str(_) | Val::Bytes(_) | Val::Uuid(_) | Val::Array | Val::Struct => Value::None,
    }
}
