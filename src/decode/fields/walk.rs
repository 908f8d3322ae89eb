//! The one walk over a struct's slots on an annotated tape
//! ([`crate::decode::values::decode_annotated`]), generic over what it
//! builds ([`super::sink`]): the annotated tree's nodes, or none when only
//! the warnings are wanted (`kwire check`). The tape holds every field's
//! value, offset, length and encoding widths, so building a node is naming
//! it from the definitions and copying what the tape found; the checks
//! (over-long varints, nulls, tags, record batches) read the same slots
//! whether nodes are built or not. A tape that stopped part-way
//! ([`Stopped`]) gives the partial tree: the nodes up to the failing one,
//! which has the error and covers up to 16 bytes from it, and the nodes
//! around it cover it.

use super::sink::NoNodes;
use super::*;
use crate::decode::tape::{
    Id, Slot, SlotKind, Span, Stopped, Val, Values, ELEMENTS_LEFT, OVERLONG_PREFIX, OVERLONG_SIZE,
    RECORDS_LEFT,
};
use crate::decode::tree::DeferredRecords;
use crate::decode::values::{self};
use crate::schema::plan::StructPlan;
use crate::schema::LengthPrefix;

impl FieldDecoder<'_, '_> {
    /// The nodes of the struct `plan` (declared as `fields`) at the reader's
    /// position, decoded onto an annotated tape and built from it; the reader
    /// is left where the struct ends, or where it stopped. The tape starts
    /// with room for `room` bytes' slots.
    pub(crate) fn decode_struct(
        &mut self,
        room: usize,
        plan: &StructPlan,
        fields: &[FieldSpec],
        out: &mut Vec<Node>,
    ) -> Res {
        let (start, frame) = (
            self.r.pos(),
            self.frame.get(..self.r.end()).unwrap_or_default(),
        );
        // A tape that leaves large arrays' elements off holds far fewer slots
        // than the struct has bytes: it starts small and grows as it needs.
        let room = match self.ctx.defer_elements_over {
            Some(_) => room.min(LEAVING_ROOM),
            None => room,
        };
        let (end, res) = with_tape(room, |tape| {
            let (slot, end, res) = values::decode_annotated_leaving(
                frame,
                start,
                plan,
                tape,
                &self.ctx.budget,
                self.leave(),
            );
            self.walk_struct(tape, slot, fields, out);
            (end, res)
        });
        self.r.seek(end);
        res
    }

    /// The warnings and record damage of the struct (declared as `fields`)
    /// whose slot on `tape` is `s`, found without building its nodes: what
    /// its tree would carry.
    pub(crate) fn check_struct(&mut self, tape: &Values, s: u32, fields: &[FieldSpec]) {
        self.walk_struct(tape, s, fields, &mut NoNodes);
    }

    /// The struct (declared as `fields`) whose slot on `tape` is `s`: its
    /// nodes pushed onto `out`, its warnings onto the decoder's.
    pub(super) fn walk_struct<O: Nodes>(
        &mut self,
        tape: &Values,
        s: u32,
        fields: &[FieldSpec],
        out: &mut O,
    ) {
        out.reserve(fields.len().min(MAX_RESERVE) + usize::from(self.flexible));
        for (i, slot) in tape.children(s) {
            match slot.id {
                Id::Field(decl) => {
                    if let Some(f) = fields.get(usize::from(decl)) {
                        self.walk_field(tape, (i, slot), f, false, out);
                    }
                }
                Id::TaggedSection => self.walk_tagged_section(tape, (i, slot), fields, out),
                _ => {}
            }
        }
    }

    fn walk_field<O: Nodes>(
        &mut self,
        tape: &Values,
        (i, slot): (u32, &Slot),
        f: &FieldSpec,
        in_tag: bool,
        out: &mut O,
    ) {
        let node = self.open_field(f, slot.decl().unwrap_or_default(), slot.at as usize, out);
        if let Some(n) = node.node() {
            n.len = slot.len as usize;
        }
        show_stop(tape, i, node);
        let (nullable, compact) = self.forms(f, in_tag);
        let failed = stops_at(tape, i);
        match &f.ty {
            FieldType::Primitive(p) => {
                if let Some(n) = node.node() {
                    if self.naming == Naming::Header && *p == Primitive::String && nullable {
                        n.ty = "nullable_string".into();
                    }
                }
                self.walk_primitive(*p, (compact, nullable), f, (slot, failed), node);
                if failed {
                    return;
                }
                // What follows a value (records, consumer protocol bytes) is found from where it ends.
                self.r.seek((slot.at + slot.len) as usize);
                if slot.end > i + 1 && *p == Primitive::Records {
                    self.walk_batches(tape, i, node);
                } else if let Some(range) = left_records(slot) {
                    let deferred = self.placed(range).unwrap_or_else(|| DeferredRecords {
                        range,
                        topic: self.ctx.topic.clone(),
                        cut_is_damage: self.region == Region::RequestBody,
                        warnings_at: self.warnings.len(),
                        damage_at: self.record_damage.len(),
                        first_item: 0,
                        budget_before: None,
                    });
                    match node.node() {
                        Some(n) => n.set_deferred_records(deferred),
                        // Walked a batch at a time by its reader, as a view that draws it walks it.
                        None => self.deferred.push(deferred),
                    }
                } else {
                    self.after_value(f, *p, slot, node);
                }
            }
            FieldType::Struct(sname) => {
                if let Some(n) = node.node() {
                    n.ty = struct_type(f.labels(), sname);
                }
                // A struct that fails itself is one whose presence marker could not be read.
                if !failed {
                    self.walk_struct_field(tape, i, slot, f, (nullable, in_tag), node);
                }
            }
            FieldType::Array(inner) => {
                self.walk_array(tape, (i, slot), (f, inner), (compact, nullable), node)
            }
        }
    }

    /// The batches on the tape under records field slot `i` (an internal
    /// topic's keys and values are decoded through their schemas as their
    /// nodes are built).
    fn walk_batches(&mut self, tape: &Values, i: u32, node: &mut impl Built) {
        let mut bd =
            crate::decode::records::BatchDecoder::new(self.frame, self.catalogue, &self.ctx)
                .fetched(self.region != Region::RequestBody);
        bd.check_stream(tape, i);
        if let Some(n) = node.node() {
            bd.stream_nodes(tape, i, &mut n.children);
        }
        self.warnings.append(&mut bd.warnings);
        self.record_damage.append(&mut bd.damage);
    }

    /// A struct field (slot `i`) whose marker, if it has one, was read: the
    /// marker's node, then its fields when it is present.
    fn walk_struct_field(
        &mut self,
        tape: &Values,
        i: u32,
        slot: &Slot,
        f: &FieldSpec,
        (nullable, in_tag): (bool, bool),
        node: &mut impl Built,
    ) {
        if let Some(n) = node.node() {
            if nullable {
                let marker = tape.children(i).next().filter(|(_, m)| m.id == Id::Marker);
                if let Some((_, m)) = marker {
                    n.children.push(self.marker_node(
                        m.at as usize,
                        m.len as usize,
                        in_tag,
                        tape_value(m.value),
                    ));
                }
            }
            n.value = Value::Struct(slot.value == Val::Struct);
        }
        if slot.value == Val::Struct {
            self.walk_struct(tape, i, &f.fields, node.children());
        }
    }

    /// The records field at `range` as the frame's decode left it within a
    /// left array's elements, with its places among the frame's warnings
    /// and damage (`None` outside such elements).
    fn placed(&self, range: (usize, usize)) -> Option<DeferredRecords> {
        let placed = &self.ctx.placed_records;
        let i = placed.binary_search_by_key(&range.0, |d| d.range.0).ok()?;
        placed.get(i).filter(|d| d.range == range).cloned()
    }

    /// Array field `f` (of `inner`) whose slot is `i`: its length, then its
    /// elements.
    fn walk_array(
        &mut self,
        tape: &Values,
        (i, slot): (u32, &Slot),
        (f, inner): (&FieldSpec, &FieldType),
        (compact, nullable): (bool, bool),
        node: &mut impl Built,
    ) {
        // An array that stopped in its length has none to show.
        let Some(raw) = array_written(slot, compact) else {
            return;
        };
        let count = LengthPrefix::of_array(compact).length(raw).ok().flatten();
        self.overlong_varint(slot, OVERLONG_PREFIX, "array length");
        if let Some(n) = node.node() {
            let len_node =
                self.length_node(slot.at as usize, usize::from(slot.prefix), compact, raw);
            // An array that stops part-way holds fewer elements than its count: its bytes bound them.
            reserve_nodes(
                &mut n.children,
                1 + count.unwrap_or(0).min(slot.len as usize).min(MAX_RESERVE),
            );
            n.children.push(len_node);
            n.value = Value::Array(count);
        }
        if count.is_none() {
            self.null_check(nullable, &f.name, slot.at as usize);
            return;
        }
        if slot.marks & ELEMENTS_LEFT != 0 {
            if let Some(count) = count {
                self.walk_left_elements(f, slot, (count, compact), node);
            }
            return;
        }
        let labels = f.labels();
        let elements = node.children();
        for (k, (j, el)) in tape.children(i).enumerate() {
            let node = elements.push(|| self.element_node(f, labels, inner, k, el.at as usize));
            if let Some(n) = node.node() {
                n.len = el.len as usize;
            }
            show_stop(tape, j, node);
            match inner {
                FieldType::Struct(_) => self.walk_struct(tape, j, &f.fields, node.children()),
                FieldType::Primitive(p) => {
                    self.walk_primitive(*p, (compact, false), f, (el, stops_at(tape, j)), node)
                }
                FieldType::Array(_) => {}
            }
        }
    }

    /// A primitive's warnings (an over-long length prefix, a null where the
    /// field is not nullable), then its node's value and note from its slot.
    /// A slot whose read failed holds the bytes read before it failed and
    /// has no value; a string's or bytes' length read before it is noted.
    pub(super) fn walk_primitive(
        &mut self,
        p: Primitive,
        (compact, nullable): (bool, bool),
        f: &FieldSpec,
        (slot, failed): (&Slot, bool),
        node: &mut impl Built,
    ) {
        let prefixed = matches!(p, Primitive::String | Primitive::Bytes | Primitive::Records);
        let form = match prefixed {
            true => self.length_form(p, compact, (slot, failed), &f.name),
            false => None,
        };
        if prefixed && !failed && !matches!(slot.value, Val::Str(_) | Val::Bytes(_)) {
            self.null_check(nullable, &f.name, slot.at as usize);
        }
        let Some(node) = node.node() else {
            return;
        };
        if let Some(form) = form {
            mark_length(form, node);
        }
        if failed {
            return;
        }
        let at = slot.at as usize;
        node.value = match p {
            Primitive::Bool => {
                let b = self.frame.get(at).copied().unwrap_or_default();
                if b > 1 {
                    node.set_note(format!("(non-canonical bool 0x{b:02x})"));
                }
                Value::Bool(b != 0)
            }
            Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
                let v = tape_value(slot.value);
                if let Value::Int(n) = v {
                    node.note = int_note(f.meaning(), n, self.catalogue);
                }
                v
            }
            Primitive::Uuid => match slot.value.uuid_in(self.frame) {
                Some(bytes) => {
                    node.note = self.uuid_note(f, &bytes).map(Note::from);
                    Value::Uuid(bytes)
                }
                None => Value::None,
            },
            Primitive::String | Primitive::Bytes | Primitive::Records => {
                let span = match slot.value {
                    Val::Str(s) | Val::Bytes(s) => Some(s),
                    _ => None,
                };
                match (span, p) {
                    (None, _) => {
                        if p == Primitive::String {
                            Value::Str(None)
                        } else {
                            Value::Bytes(None)
                        }
                    }
                    (Some(s), Primitive::String) => {
                        string_value(self.frame, s.at as usize, s.len as usize)
                    }
                    (Some(s), _) => Value::Bytes(Some(
                        self.frame.slice(s.at as usize..(s.at + s.len) as usize),
                    )),
                }
            }
            _ => tape_value(slot.value),
        };
    }

    /// What a value read whole tells about what follows (the topic of the
    /// records, the group's protocol), and what the bytes it holds are:
    /// records that are not batches, SASL tokens, a credential, consumer
    /// protocol structs (whose warnings are wanted even when no node is).
    fn after_value(&mut self, f: &FieldSpec, p: Primitive, slot: &Slot, node: &mut impl Built) {
        let frame = self.frame;
        let bytes = |s: Span| frame.get(s.at as usize..(s.at + s.len) as usize);
        match (p, slot.value) {
            (Primitive::String, Val::Str(s)) => {
                if let Some(s) = bytes(s).and_then(|b| std::str::from_utf8(b).ok()) {
                    self.learn_string(f, s);
                }
            }
            (Primitive::Uuid, v) => {
                if let Some(u) = v.uuid_in(frame) {
                    self.learn_topic_id(f, &u);
                }
            }
            // Batches are on the tape (and their nodes built from it): what is left is bytes that are not batches.
            (Primitive::Records, Val::Bytes(b)) => {
                let not = bytes(b).is_some_and(|b| self.not_batches(f, slot.at as usize, b));
                if let Some(n) = node.node().filter(|_| not) {
                    n.doc
                        .get_or_insert_with(|| "opaque bytes (not a record batch)".into());
                }
            }
            (Primitive::Bytes, Val::Bytes(b)) => match f.meaning() {
                FieldMeaning::SaslAuthBytes => {
                    if let Some(n) = node.node() {
                        // The mechanism is the connection's (its SaslHandshake): read by shape here.
                        crate::decode::sasl::sasl_parts(
                            n,
                            frame,
                            self.r.pos(),
                            None,
                            self.region == Region::RequestBody,
                        );
                    }
                }
                _ if b.len == 0 => {}
                FieldMeaning::Secret => {
                    if let Some(n) = node.node() {
                        n.set_secret()
                    }
                }
                _ => {
                    if let Some(schema) = self.consumer_protocol(f) {
                        let (at, end) = (b.at as usize, (b.at + b.len) as usize);
                        self.embedded_consumer_protocol(schema, at, end, node);
                    }
                }
            },
            _ => {}
        }
    }

    /// How a string's or bytes' length was written, from its slot (its
    /// value's length, null, or the length kept when the bytes were not all
    /// there), with the warning an over-long varint gets; `None` for a length
    /// whose read failed.
    #[inline]
    fn length_form(
        &mut self,
        p: Primitive,
        compact: bool,
        (slot, failed): (&Slot, bool),
        name: &str,
    ) -> Option<LengthForm> {
        let prefix = LengthPrefix::of(p, compact);
        let written = match slot.value {
            Val::Str(s) | Val::Bytes(s) => prefix.written(Some(s.len as usize)),
            Val::Int(written) => written,
            Val::Null if !failed => prefix.written(None),
            _ => return None,
        };
        if compact && slot.marks & OVERLONG_PREFIX != 0 {
            self.warnings.push(Warning::at(
                WarningKind::OverlongVarint,
                slot.at as usize,
                format_args!("{name} length is an over-long varint"),
            ));
        }
        Some(LengthForm { prefix, written })
    }

    fn walk_tagged_section<O: Nodes>(
        &mut self,
        tape: &Values,
        (i, slot): (u32, &Slot),
        fields: &[FieldSpec],
        out: &mut O,
    ) {
        let at = slot.at as usize;
        let section = out.push(|| self.tagged_section_node(at));
        let count = if let Val::Uint(n) = slot.value { n } else { 0 };
        if let Some(s) = section.node() {
            s.len = slot.len as usize;
            s.value = tape_value(slot.value);
        }
        show_stop(tape, i, section);
        self.overlong_varint(slot, OVERLONG_PREFIX, TAG_COUNT);
        if let Some(s) = section.node().filter(|_| count > 0) {
            s.children
                .push(tag_count_node(at, count, usize::from(slot.prefix)));
        }
        let mut last_tag = None;
        for (j, entry) in tape.children(i) {
            let e = self.tag_entry_checks(tape, (j, entry), &mut last_tag);
            let (start, tag_no, size) = (e.start, e.tag_no, e.size);
            let node = section
                .children()
                .push(|| tag_entry_node(start, (tag_no.into(), e.tag_len), (size, e.size_len)));
            if let Some(n) = node.node() {
                n.len = entry.len as usize;
            }
            show_stop(tape, j, node);
            match (e.payload, self.known_tag(fields, tag_no)) {
                (Some((k, payload)), Some((decl, f))) if payload.kind() == SlotKind::Field => {
                    if let Some(n) = node.node() {
                        n.set_note(format!("({}, size {size})", f.name));
                    }
                    let saved_region = self.region;
                    self.region = Region::TaggedFields;
                    // The slot's declaration index is the tagged field's.
                    debug_assert_eq!(payload.decl().map(usize::from), Some(decl));
                    self.walk_field(tape, (k, payload), f, true, node.children());
                    self.region = saved_region;
                    self.check_tag_size(tape, (k, payload), f, tag_no, size);
                }
                (Some((_, payload)), _) => self.unknown_tag(
                    fields,
                    node,
                    start,
                    tag_no,
                    (payload.at as usize, size as usize),
                ),
                (None, _) => {}
            }
        }
    }
}

/// What the tag check calls a tagged section's count.
const TAG_COUNT: &str = "tagged field count";

/// A tagged entry's slot read for its tag, size and their widths.
struct TagEntry<'t> {
    /// The slot of its field or unknown tag, when it has one.
    payload: Option<(u32, &'t Slot)>,
    start: usize,
    tag_no: u32,
    tag_len: usize,
    size: u64,
    size_len: usize,
}

impl FieldDecoder<'_, '_> {
    /// Tagged entry `j` read from its slot, with the warnings its tag and
    /// size get (order, over-long varints); `last_tag` is the tag before it.
    fn tag_entry_checks<'t>(
        &mut self,
        tape: &'t Values,
        (j, entry): (u32, &Slot),
        last_tag: &mut Option<u64>,
    ) -> TagEntry<'t> {
        let payload = tape.children(j).next();
        let (start, tag_no, tag_len) = (
            entry.at as usize,
            entry.tag().unwrap_or_default(),
            usize::from(entry.prefix),
        );
        let size = if let Val::Uint(n) = entry.value { n } else { 0 };
        let size_len = match entry.id {
            Id::TagEntry { size_width, .. } => usize::from(size_width),
            _ => 0,
        };
        self.check_tag_order(start, tag_no.into(), last_tag);
        self.overlong_varint(entry, OVERLONG_PREFIX, "tag");
        if entry.marks & OVERLONG_SIZE != 0 {
            self.overlong_warning(start + tag_len, size_len, "tagged field size");
        }
        TagEntry {
            payload,
            start,
            tag_no,
            tag_len,
            size,
            size_len,
        }
    }
}

/// An array's length as written (n+1 when compact, n otherwise; null as 0
/// or -1), from its slot on an annotated tape (whose `prefix` says the
/// length was read): its elements as written, or null; `None` when its read
/// failed.
fn array_written(slot: &Slot, compact: bool) -> Option<i64> {
    let prefix = LengthPrefix::of_array(compact);
    match slot.value {
        Val::Array(n) => Some(prefix.written(Some(n as usize))),
        Val::Packed(p) => Some(prefix.written(Some(p.count as usize))),
        // The length was read: the array is null.
        Val::Null if slot.prefix > 0 => Some(prefix.written(None)),
        _ => None,
    }
}

/// Whether the tape stopped in slot `i`'s own read.
pub(super) fn stops_at(tape: &Values, i: u32) -> bool {
    tape.stopped.as_ref().is_some_and(|s| s.slot == i)
}

/// Whether the tape stopped in slot `i` or under it.
pub(super) fn stops_within(tape: &Values, i: u32) -> bool {
    let end = tape.slots.get(i as usize).map_or(i, |s| s.end);
    tape.stopped
        .as_ref()
        .is_some_and(|s| (i..end.max(i + 1)).contains(&s.slot))
}

/// On a tape that stopped part-way, slot `i`'s node as the partial tree shows
/// it, set when the node is made, before its children: the failing slot's
/// node has the error, and it and every node around it cover the bytes shown
/// with the error.
pub(super) fn show_stop(tape: &Values, i: u32, node: &mut impl Built) {
    let Some(node) = node.node() else {
        return;
    };
    let Some(Stopped {
        slot,
        end: shown_end,
        error,
    }) = tape.stopped.as_deref()
    else {
        return;
    };
    // Only a node whose subtree holds the stop shows it.
    if !stops_within(tape, i) {
        return;
    }
    if *slot == i {
        node.set_error(error.expected.clone());
    }
    node.len = node.end().max(*shown_end) - node.offset;
}

/// The bytes a tape that leaves large arrays' elements off starts with room
/// for (slots for 128 KiB: 3 MiB).
const LEAVING_ROOM: usize = 1 << 17;

/// `f` with an empty tape, with room for `len` bytes' slots.
fn with_tape<R>(len: usize, f: impl FnOnce(&mut Values) -> R) -> R {
    let mut tape = Values::default();
    tape.reuse_for(len);
    f(&mut tape)
}

/// A tape value as a node's value, for the kinds that need nothing from the frame.
fn tape_value(v: Val) -> Value {
    match v {
        Val::Int(n) => Value::Int(n),
        Val::Uint(n) => Value::Uint(n),
        Val::Float(x) => Value::Float(x),
        Val::Bool(b) => Value::Bool(b),
        Val::Null
        | Val::Str(_)
        | Val::Bytes(_)
        | Val::Uuid(_)
        | Val::Array(_)
        | Val::Packed(_)
        | Val::Struct => Value::None,
    }
}

/// The bytes of a records field that the annotated decode left off the
/// tape for its view to walk when drawn ([`RECORDS_LEFT`]).
fn left_records(slot: &Slot) -> Option<(usize, usize)> {
    let Val::Bytes(span) = slot.value else {
        return None;
    };
    (slot.marks & RECORDS_LEFT != 0).then_some((span.at as usize, (span.at + span.len) as usize))
}
