//! Batch, message and record nodes built from the slots of the record walk
//! ([`super::tape`]), with the errors of its findings on the nodes they stop;
//! internal topics' keys and values are decoded from their bytes here
//! ([`key_value_nodes`]), as the view nests them. Each node is whole (its
//! error, note and secrecy set) before its first child is built, and each
//! child before the next: what a view that draws as it goes will need.
//! Building nodes reports
//! nothing: the warnings and damage of the same slots are taken by
//! [`BatchDecoder::check_stream`] alone, whether nodes are built or not.

use super::batch::{
    batch_line, compressed_line, compressed_node, decompressed_line, decompressed_node,
    legacy_field_node, push_batch, push_bytes, push_bytes_length, truncated_node, v2_field_line,
};
use super::compression::Codec;
use super::layout::{
    v2_field, ATTRIBUTES, BASE_OFFSET, LEGACY_ATTRIBUTES, LEGACY_CRC, RECORD_FIELDS, V2_FIELDS,
};
use super::lines::{written, BytesForm, BytesPart, Depth, PartLine, KEY, LEGACY_BYTES, VALUE};
use super::order::{has_error, slot_int as int};
use super::payload::{
    key_value_nodes, schema_registry_framing, Embedding, KeyValue, KeyValueNodes, PayloadKind,
};
use super::BatchDecoder;
use crate::decode::tape::{BytesOf, Id, Slot, SlotKind, Val, Values};
use crate::decode::tree::{leaf, push_with};
use crate::decode::Wire;
use crate::decode::{Kind, Name, Node, RecordPart, Region, Role, Value};
use bytes::Bytes;

/// A v2 batch whose records [`BatchDecoder::batch_head`] found can be drawn
/// from their slots.
pub(crate) struct BatchHead<'t> {
    /// Its header's fields as read.
    pub header: [i64; V2_FIELDS.len()],
    /// The slot whose children are its records: the batch's, or its
    /// compressed records'.
    pub records: u32,
    /// The buffer its records decompressed into, whose offsets theirs index.
    pub data: Option<&'t Bytes>,
}

impl BatchDecoder<'_, '_> {
    /// The nodes of the batches that are the children of slot `parent` (a records field).
    pub(crate) fn stream_nodes(&self, tape: &Values, parent: u32, out: &mut Vec<Node>) {
        for (i, s) in tape.children(parent) {
            self.item_nodes(tape, (i, s), out);
        }
    }

    /// The node of slot `i` (`s`), a child of a records field: a batch, a
    /// legacy message, bytes that are not one; none for other slots
    /// ([`shown_in_stream`] says which).
    pub(crate) fn item_nodes(&self, tape: &Values, (i, s): (u32, &Slot), out: &mut Vec<Node>) {
        match s.id {
            Id::Batch(index) => {
                let node = push_batch(out, index as usize, s.at as usize, s.len as usize);
                self.batch_nodes(tape, i, node);
            }
            Id::LegacyMessage(index) => self.message_nodes(tape, (i, s), index, out),
            Id::NotABatch | Id::OverBudget => self.invalid_nodes(tape, (i, s), out),
            Id::PartialBatch => {
                let total = if let Val::Int(t) = s.value {
                    Some(t as usize)
                } else {
                    None
                };
                out.push(truncated_node(
                    self.buf,
                    (s.at as usize, (s.at + s.len) as usize),
                    total,
                ));
            }
            _ => {}
        }
    }

    /// The lines of v2 batch slot `batch` (`s`) and of its header's fields
    /// onto `out` (the batch's first), each with where it goes, and the
    /// header as read, when its records can be drawn from their slots too
    /// ([`super::lines`]): a plain topic's batch that is not a control
    /// batch, with no finding of its own, uncompressed or decompressed
    /// whole (the compressed records' line and the decompressed buffer's
    /// come last). Also handed back: the slot whose children are its
    /// records (the batch's, or the compressed records'), and the buffer
    /// their offsets index when not the frame. `None` otherwise (and `out`
    /// as it was).
    pub(crate) fn batch_head<'t>(
        &'t self,
        tape: &'t Values,
        (batch, s): (u32, &Slot),
        out: &mut Vec<(PartLine<'t>, Depth)>,
    ) -> Option<BatchHead<'t>> {
        let Id::Batch(index) = s.id else {
            return None;
        };
        if PayloadKind::for_topic(self.ctx.topic.as_deref()) != PayloadKind::Plain {
            return None;
        }
        let start = out.len();
        out.push((
            batch_line(index as usize, s.at as usize, s.len as usize),
            (0, false),
        ));
        let mut head = BatchHead {
            header: [0i64; V2_FIELDS.len()],
            records: batch,
            data: None,
        };
        for (j, s) in tape.children(batch) {
            if let Some(line) = header_field(s, &mut head.header) {
                out.push((line, (1, false)));
                continue;
            }
            let decompressed = match s.id {
                Id::Compressed(_) if head.data.is_none() => {
                    let data = s.buffer().and_then(|b| tape.buffers.get(b));
                    let codec = Codec::from_attributes(head.header[ATTRIBUTES] as u16);
                    // A finding about the data (its node's error) needs the nodes.
                    let found = tape.children(j).any(|(_, f)| f.finding().is_some());
                    data.zip(codec).filter(|_| !found)
                }
                Id::UnknownCodecRecords
                | Id::Compressed(_)
                | Id::NotDecompressed
                | Id::Finding(_) => None,
                _ => continue,
            };
            let Some((data, codec)) = decompressed else {
                out.truncate(start);
                return None;
            };
            // The batch's last child, and the compressed records' only one.
            let range = (s.at as usize, (s.at + s.len) as usize);
            out.push((compressed_line(self.buf, range, codec), (1, true)));
            let what = ("records", Region::Record);
            out.push((decompressed_line(range, data, codec, what), (2, true)));
            (head.records, head.data) = (j, Some(data));
        }
        // A control batch's records are control records, decoded by their schemas.
        if head.header[ATTRIBUTES] & 0x20 != 0 {
            out.truncate(start);
            return None;
        }
        Some(head)
    }

    /// A slot among the records of a batch [`Self::batch_head`] took: a
    /// record's lines handed to `each` when they can be read from its slots
    /// (`last`: it ends the batch), else its nodes (or the bytes' a budget
    /// left undecoded) onto `nodes` (`None` handed back).
    pub(crate) fn record_piece<'b, E>(
        &'b self,
        tape: &Values,
        (j, s): (u32, &Slot),
        (header, last): (&[i64], bool),
        (each, nodes): (
            &mut impl FnMut(PartLine<'b>, Depth) -> Result<(), E>,
            &mut Node,
        ),
    ) -> Option<Result<(), E>> {
        if let Id::Record(index) = s.id {
            let record = (index, header[BASE_OFFSET], last);
            let drawn = super::lines::plain_record_lines(self.buf, tape, (j, s), record, each);
            if drawn.is_some() {
                return drawn;
            }
        }
        self.in_records_nodes(tape, (j, s), header, nodes);
        None
    }

    /// What slot `s` says if it is a finding: its error, on `node`.
    fn found(&self, tape: &Values, s: &Slot, node: &mut Node) {
        let Some(f) = s.finding().and_then(|k| tape.findings.get(k)) else {
            return;
        };
        if let Some(e) = &f.error {
            node.set_error(e.clone());
        }
    }

    /// The findings among the children of slot `i`, on `node`.
    fn found_under(&self, tape: &Values, i: u32, node: &mut Node) {
        tape.children(i)
            .for_each(|(_, f)| self.found(tape, f, node));
    }

    /// Bytes that are not a batch, or that a budget left undecoded (not damage in the data, but not shown either).
    fn invalid_nodes(&self, tape: &Values, (i, s): (u32, &Slot), out: &mut Vec<Node>) {
        let (at, len) = (s.at as usize, s.len as usize);
        let name = if s.id == Id::OverBudget {
            "not decoded (over budget)"
        } else {
            "invalid batch"
        };
        let n = push_with(out, || {
            leaf(
                name,
                Wire::Bytes,
                at,
                len,
                Value::Bytes(
                    self.buf
                        .get(at..at + len)
                        .map(|_| self.buf.slice(at..at + len)),
                ),
                Region::RecordBatch,
            )
        });
        self.found_under(tape, i, n);
    }

    pub(super) fn batch_nodes(&self, tape: &Values, batch: u32, node: &mut Node) {
        self.found_under(tape, batch, node);
        // Room for the header fields and the records (growing it copied every record's node, again and again).
        node.children = Vec::with_capacity(tape.children(batch).count());
        let mut header = [0i64; V2_FIELDS.len()];
        for (j, s) in tape.children(batch) {
            let (at, len) = (s.at as usize, s.len as usize);
            if let Some(line) = header_field(s, &mut header) {
                node.children.push(line.into_node(self.buf));
                continue;
            }
            match s.id {
                Id::UnknownCodecRecords => {
                    // An unknown codec's records: bytes, and the finding that says so.
                    let n = push_with(&mut node.children, || {
                        leaf(
                            "records",
                            Wire::Bytes,
                            at,
                            len,
                            Value::Bytes(Some(self.buf.slice(at..at + len))),
                            Region::RecordBatch,
                        )
                    });
                    self.found_under(tape, j, n);
                }
                Id::Compressed(_) | Id::NotDecompressed => {
                    self.compressed_nodes(tape, (j, s), &header, &mut node.children)
                }
                _ => self.in_records_nodes(tape, (j, s), &header, node),
            }
        }
    }

    /// A compressed batch's records: bytes, and under them the decompressed data's records (or why there are none).
    fn compressed_nodes(
        &self,
        tape: &Values,
        (j, s): (u32, &Slot),
        header: &[i64],
        out: &mut Vec<Node>,
    ) {
        let Some(codec) = Codec::from_attributes(header[ATTRIBUTES] as u16) else {
            return;
        };
        let range = (s.at as usize, (s.at + s.len) as usize);
        let comp = push_with(out, || compressed_node(self.buf, range, codec));
        let Some(data) = s.buffer().and_then(|b| tape.buffers.get(b)) else {
            self.found_under(tape, j, comp);
            // Data not decompressed (damaged, or over budget) cannot be read
            // for the metadata log's credentials, and a codec keeps random
            // bytes (salts, keys) as they are: taken for one whole.
            if PayloadKind::for_topic(self.ctx.topic.as_deref()) == PayloadKind::ClusterMetadata {
                comp.set_secret();
            }
            return;
        };
        let d = push_with(&mut comp.children, || {
            decompressed_node(range, data, codec, ("records", Region::Record))
        });
        self.found_under(tape, j, d);
        d.children = Vec::with_capacity(tape.children(j).count());
        self.within(data, |inner| {
            tape.children(j)
                .for_each(|r| inner.in_records_nodes(tape, r, header, d))
        });
    }

    /// What the key and value of the record at slot `rec` (in `buf`) decode
    /// to through their schemas (`kind`): none for a plain topic's, or a
    /// record not read whole to its headers. What decoding them warns of
    /// goes to `warnings`. The nodes and the check both read records so.
    pub(super) fn decoded_key_value(
        &self,
        tape: &Values,
        rec: u32,
        (kind, buf): (PayloadKind, &Bytes),
        warnings: &mut Vec<crate::decode::Warning>,
    ) -> Option<KeyValueNodes> {
        if kind == PayloadKind::Plain {
            return None;
        }
        let failed = tape.children(rec).any(|(_, s)| has_error(tape, s));
        let headers = tape.children(rec).any(|(_, s)| s.id == Id::Headers);
        if failed || !headers {
            return None;
        }
        let range_of = |of: BytesOf| {
            tape.children(rec).find_map(|(_, s)| match s.id {
                Id::Bytes { of: o, .. } if o == of => bytes_range(s),
                _ => None,
            })
        };
        let record = KeyValue {
            kind,
            topic: self.ctx.topic.as_deref(),
            key: range_of(BytesOf::Key),
            value: range_of(BytesOf::Value),
        };
        let embedding = Embedding {
            decode: self.ctx.embedded,
            cat: self.catalogue,
            buf,
        };
        key_value_nodes(embedding, record, warnings)
    }

    /// `build` over decompressed `data` (whose offsets its slots give).
    fn within(&self, data: &Bytes, build: impl FnOnce(&BatchDecoder)) {
        build(&BatchDecoder::new(data, self.catalogue, self.ctx));
    }

    /// A slot among a batch's records, which go into `parent`: a record, or
    /// the bytes a budget left undecoded (a finding about the batch is on
    /// `parent` already).
    fn in_records_nodes(
        &self,
        tape: &Values,
        (j, s): (u32, &Slot),
        header: &[i64],
        parent: &mut Node,
    ) {
        match s.id {
            Id::Record(index) => {
                self.record_nodes(tape, (j, s), index, header, &mut parent.children)
            }
            Id::NotABatch | Id::OverBudget => {
                self.invalid_nodes(tape, (j, s), &mut parent.children)
            }
            _ => {}
        }
    }

    /// Record `index` at slot `i` (`rec`) and its parts, built from the
    /// lines the text tree draws ([`super::lines`]), then what lines do not
    /// say: where it failed, a key's or value's Schema Registry framing, what
    /// an internal topic's or control record's key and value decode to, and
    /// what is secret.
    fn record_nodes(
        &self,
        tape: &Values,
        (i, rec): (u32, &Slot),
        index: u32,
        header: &[i64],
        out: &mut Vec<Node>,
    ) {
        // Each node goes under the last node of the depth above it, as made.
        let mut record: Option<Node> = None;
        let lines = (index, header[BASE_OFFSET], false);
        let _ = super::lines::record_lines(self.buf, tape, (i, rec), lines, &mut |line, (d, _)| {
            let node = line.into_node(self.buf);
            // Depth 1 is the record's own (0 is its batch's).
            let Some(parent) = record.as_mut() else {
                let mut node = node;
                // Room for its parts (growing it copied them).
                node.children = Vec::with_capacity(RECORD_FIELDS);
                record = Some(node);
                return Ok::<(), std::convert::Infallible>(());
            };
            let depth = usize::from(d).saturating_sub(2);
            last_at(parent, depth).children.push(node);
            Ok(())
        });
        let Some(mut node) = record else {
            return;
        };
        // A control batch's keys and values are control records; a plain topic's may be framed.
        let kind = if header[ATTRIBUTES] & 0x20 != 0 {
            PayloadKind::Control
        } else {
            PayloadKind::for_topic(self.ctx.topic.as_deref())
        };
        self.found_under(tape, i, &mut node);
        // A damaged record of the metadata log may hold a credential its
        // schema would have marked: the whole record is taken for one.
        if node.error().is_some() && kind == PayloadKind::ClusterMetadata {
            node.set_secret();
        }
        if kind == PayloadKind::Plain {
            for (_, s) in tape.children(i) {
                let Id::Bytes { of, framed: true } = s.id else {
                    continue;
                };
                let part = if of == BytesOf::Key {
                    Kind::RecordKey
                } else {
                    Kind::RecordValue
                };
                if let Some(n) = node.children.iter_mut().find(|n| n.kind == part) {
                    schema_registry_framing(self.buf, n);
                }
            }
        }
        // What the key and value decode to, under their nodes (what decoding
        // warns of, the check of the same slots says).
        if let Some(d) = self.decoded_key_value(tape, i, (kind, self.buf), &mut Vec::new()) {
            attach(&mut node.children, Kind::RecordKey, d.key, (false, false));
            let marks = (d.value_secret, d.tombstone);
            attach(&mut node.children, Kind::RecordValue, d.value, marks);
        }
        out.push(node);
    }

    /// A length written as `form` says and its bytes (or null; or nothing,
    /// when they were not all there), from their part; `framing` where a plain
    /// topic's key or value may be framed. Returns the bytes' range.
    fn bytes_nodes(
        &self,
        part: BytesPart,
        form: BytesForm,
        s: &Slot,
        out: &mut Vec<Node>,
        framing: bool,
    ) -> Option<(usize, usize)> {
        let (at, n) = (s.at as usize, usize::from(s.prefix));
        let (len, span) = written(s);
        push_bytes_length(out, part.1, form, at, n, len);
        let start = at + n;
        match span {
            Some(len) => {
                let node = push_bytes(out, self.buf, part, form.1, start, Some(len));
                if framing && matches!(s.id, Id::Bytes { framed: true, .. }) {
                    schema_registry_framing(self.buf, node);
                }
                Some((start, start + len))
            }
            None if len < 0 => {
                push_bytes(out, self.buf, part, form.1, start, None);
                None
            }
            None => None,
        }
    }

    /// A legacy message (magic 0 or 1) and its fields; a wrapper's value holds the messages decompressed from it.
    fn message_nodes(&self, tape: &Values, (i, m): (u32, &Slot), index: u32, out: &mut Vec<Node>) {
        let magic = int(m.value);
        let node = push_with(out, || {
            let mut n = Node::new(
                Name::own_indexed(&"Message", index as usize),
                "Message",
                m.at as usize,
                Region::RecordBatch,
                Role::Element,
            );
            n.kind = Kind::Record(RecordPart::Message);
            n.set_note(format!("v{magic}"));
            n.len = m.len as usize;
            n
        });
        self.found_under(tape, i, node);
        let mut attrs = 0u8;
        for (j, s) in tape.children(i) {
            match s.id {
                Id::Bytes {
                    of: BytesOf::Key, ..
                } => self.message_bytes_nodes(tape, (j, s), KEY, None, &mut node.children),
                Id::Bytes {
                    of: BytesOf::Value, ..
                } => self.message_bytes_nodes(
                    tape,
                    (j, s),
                    VALUE,
                    Codec::from_attributes(u16::from(attrs)).filter(|c| *c != Codec::None),
                    &mut node.children,
                ),
                Id::Checksum { .. } => node.children.push(legacy_field_node(LEGACY_CRC, s, magic)),
                Id::MessageField(field) => {
                    let field = usize::from(field);
                    if field == LEGACY_ATTRIBUTES {
                        attrs = int(s.value) as u8;
                    }
                    node.children.push(legacy_field_node(field, s, magic));
                }
                _ => {}
            }
        }
    }

    /// A legacy message's key or value (`wrapper`: the codec of a wrapper's
    /// value, a compressed message set, which the walk never marks framed).
    fn message_bytes_nodes(
        &self,
        tape: &Values,
        (j, s): (u32, &Slot),
        part: BytesPart,
        wrapper: Option<Codec>,
        out: &mut Vec<Node>,
    ) {
        // The topic is looked at only for bytes the walk found framed.
        let framing = matches!(s.id, Id::Bytes { framed: true, .. })
            && PayloadKind::for_topic(self.ctx.topic.as_deref()) == PayloadKind::Plain;
        let Some(range) = self.bytes_nodes(part, LEGACY_BYTES, s, out, framing) else {
            return;
        };
        let (Some(c), Some(v)) = (wrapper, out.last_mut()) else {
            return;
        };
        v.set_note(format!("({} compressed message set)", c.name()));
        // Why the message set is not there, on its node before its children.
        for (ci, cs) in tape.children(j) {
            match (cs.kind(), cs.buffer().and_then(|b| tape.buffers.get(b))) {
                (SlotKind::Compressed, Some(_)) => {}
                (SlotKind::Compressed, None) => self.found_under(tape, ci, v),
                _ => self.found(tape, cs, v),
            }
        }
        for (ci, cs) in tape.children(j) {
            if let (SlotKind::Compressed, Some(data)) =
                (cs.kind(), cs.buffer().and_then(|b| tape.buffers.get(b)))
            {
                let d = push_with(&mut v.children, || {
                    decompressed_node(range, data, c, ("message set", Region::RecordBatch))
                });
                self.within(data, |inner| inner.stream_nodes(tape, ci, &mut d.children));
            }
        }
    }
}

/// When slot `s` is a field of its v2 batch's header: its value into
/// `header`, and its line.
#[inline(always)]
fn header_field(s: &Slot, header: &mut [i64; V2_FIELDS.len()]) -> Option<PartLine<'static>> {
    let k = v2_field(s)?;
    header[k] = int(s.value);
    // Only the checksum's line reads it.
    let computed = match s.id {
        Id::Checksum { computed } => computed,
        _ => 0,
    };
    let attributes = header[ATTRIBUTES] as u16;
    Some(v2_field_line(
        k,
        s.at as usize,
        header[k],
        attributes,
        computed,
    ))
}

/// The last node `depth` levels under `node` (or as deep as its last
/// children go).
fn last_at(node: &mut Node, depth: usize) -> &mut Node {
    if depth == 0 || node.children.is_empty() {
        return node;
    }
    let last = node.children.len() - 1;
    last_at(&mut node.children[last], depth - 1)
}

/// Whether slot `s`, a child of a records field, has a node ([`BatchDecoder::item_nodes`]).
pub(crate) fn shown_in_stream(s: &Slot) -> bool {
    matches!(
        s.id,
        Id::Batch(_) | Id::LegacyMessage(_) | Id::NotABatch | Id::OverBudget | Id::PartialBatch
    )
}

/// Whether slot `s`, a child of a v2 batch, is drawn among its records
/// ([`BatchDecoder::record_piece`]).
pub(crate) fn shown_in_records(s: &Slot) -> bool {
    matches!(s.id, Id::Record(_) | Id::NotABatch | Id::OverBudget)
}

/// Under a record's key or value node (`kind`; none when its bytes were
/// cut short), what it decoded to; marked when the value is taken for a
/// credential whole, or is a coordinator's tombstone.
fn attach(out: &mut [Node], kind: Kind, mut decoded: Vec<Node>, (secret, tombstone): (bool, bool)) {
    let Some(n) = out.iter_mut().find(|n| n.kind == kind) else {
        return;
    };
    n.children.append(&mut decoded);
    if secret {
        n.set_secret();
    }
    if tombstone {
        n.set_note("(tombstone)");
    }
}

/// Where the bytes a length-prefixed slot holds lie (none when null or cut
/// short), as their nodes have them.
fn bytes_range(s: &Slot) -> Option<(usize, usize)> {
    match s.value {
        Val::Bytes(span) => {
            let start = s.at as usize + usize::from(s.prefix);
            Some((start, start + span.len as usize))
        }
        _ => None,
    }
}
