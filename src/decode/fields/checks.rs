//! What is wrong in a struct on an annotated tape, found without building
//! its nodes (`kwire check`: [`crate::decode::DecodeOptions::findings_only`]).
//! The walk follows [`super::replay`]'s over the same slots and calls the
//! same checks in the same order, so a frame's warnings and record damage
//! are those its tree would carry; `tests/findings_only.rs` holds the two
//! walks to that over every shipped frame and thousands of damaged ones.

use super::replay::{array_written, stops_at, TagEntry, TAG_COUNT};
use super::*;
use crate::decode::tape::{elements_written, Id, Slot, SlotKind, Val, Values, OVERLONG_PREFIX};

impl FieldDecoder<'_, '_> {
    /// The warnings and record damage of the struct (declared as `fields`)
    /// whose slot on `tape` is `s`.
    pub(crate) fn check_struct(&mut self, tape: &Values, s: u32, fields: &[FieldSpec]) {
        for (i, slot) in tape.children(s) {
            match slot.id {
                Id::Field(decl) => {
                    if let Some(f) = fields.get(usize::from(decl)) {
                        self.check_field(tape, (i, slot), f, false);
                    }
                }
                Id::TaggedSection => self.check_tagged_section(tape, (i, slot), fields),
                _ => {}
            }
        }
    }

    fn check_field(&mut self, tape: &Values, (i, slot): (u32, &Slot), f: &FieldSpec, in_tag: bool) {
        let (nullable, compact) = self.forms(f, in_tag);
        let failed = stops_at(tape, i);
        match &f.ty {
            FieldType::Primitive(p) => {
                self.primitive_checks(*p, (compact, nullable), f, (slot, failed));
                if failed {
                    return;
                }
                self.r.seek((slot.at + slot.len) as usize);
                if slot.end > i + 1 && *p == Primitive::Records {
                    let mut bd = crate::decode::records::BatchDecoder::new(
                        self.frame,
                        self.catalogue,
                        &self.ctx,
                    );
                    bd.check_stream(tape, i, self.region == Region::ResponseBody);
                    self.warnings.append(&mut bd.warnings);
                    self.record_damage.append(&mut bd.damage);
                } else {
                    self.after_value(f, *p, slot);
                }
            }
            FieldType::Struct(_) => {
                if !failed && slot.value == Val::Struct {
                    self.check_struct(tape, i, &f.fields);
                }
            }
            FieldType::Array(inner) => {
                let Some(raw) = array_written(slot, compact) else {
                    return;
                };
                self.overlong_varint(slot, OVERLONG_PREFIX, "array length");
                if elements_written(raw, compact).is_none() {
                    return self.null_check(nullable, &f.name, slot.at as usize);
                }
                for (j, el) in tape.children(i) {
                    match &**inner {
                        FieldType::Struct(_) => self.check_struct(tape, j, &f.fields),
                        FieldType::Primitive(p) => {
                            self.primitive_checks(*p, (compact, false), f, (el, stops_at(tape, j)));
                        }
                        FieldType::Array(_) => {}
                    }
                }
            }
        }
    }

    /// [`Self::after_primitive`]'s reading of a value, from its slot: what it
    /// tells about later fields, and the warnings of the bytes it holds.
    fn after_value(&mut self, f: &FieldSpec, p: Primitive, slot: &Slot) {
        let frame = self.frame;
        let bytes = |at: u32, len: u32| frame.get(at as usize..(at + len) as usize);
        match (p, slot.value) {
            (Primitive::String, Val::Str(s)) => {
                if let Some(s) = bytes(s.at, s.len).and_then(|b| std::str::from_utf8(b).ok()) {
                    self.learn_string(f, s);
                }
            }
            (Primitive::Uuid, Val::Uuid(u)) => {
                if let Some(u) = bytes(u, 16).and_then(|b| <[u8; 16]>::try_from(b).ok()) {
                    self.learn_topic_id(f, &u);
                }
            }
            (Primitive::Records, Val::Bytes(b)) => {
                if let Some(b) = bytes(b.at, b.len) {
                    self.not_batches(f, slot.at as usize, b);
                }
            }
            (Primitive::Bytes, Val::Bytes(b))
                if b.len > 0
                    && !matches!(
                        meaning(f),
                        FieldMeaning::SaslAuthBytes | FieldMeaning::Secret
                    ) =>
            {
                if let Some(schema) = self.consumer_protocol(f) {
                    // Its warnings are wanted; the nodes are dropped (a group's few members).
                    let mut scratch = Node::new("", "", 0, self.region, Role::Structure);
                    let (at, end) = (b.at as usize, (b.at + b.len) as usize);
                    self.embedded_consumer_protocol(schema, at, end, &mut scratch);
                }
            }
            _ => {}
        }
    }

    fn check_tagged_section(
        &mut self,
        tape: &Values,
        (i, slot): (u32, &Slot),
        fields: &[FieldSpec],
    ) {
        self.overlong_varint(slot, OVERLONG_PREFIX, TAG_COUNT);
        let mut last_tag = None;
        for (j, entry) in tape.children(i) {
            let TagEntry {
                payload,
                start,
                tag_no,
                size,
                ..
            } = self.tag_entry_checks(tape, (j, entry), &mut last_tag);
            match (payload, self.known_tag(fields, tag_no)) {
                (Some((k, payload)), Some((_, f))) if payload.kind() == SlotKind::Field => {
                    let saved_region = self.region;
                    self.region = Region::TaggedFields;
                    self.check_field(tape, (k, payload), f, true);
                    self.region = saved_region;
                    self.check_tag_size(tape, (k, payload), f, tag_no, size);
                }
                (Some(_), _) => self.tag_version(fields, start, tag_no),
                (None, _) => {}
            }
        }
    }
}
