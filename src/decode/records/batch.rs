//! Record batches inside a `records` field or a log segment: RecordBatch v2 and
//! the legacy message sets (magic 0 and 1), with compressed payloads decoded
//! into a child tree whose offsets index the decompressed buffer.

use super::compression::{decompress_within, Codec};
use super::payload::{decode_key_value, schema_registry_framing, schema_registry_id, PayloadKind, FRAMING_COST};
use crate::decode::fields::Context;
use crate::decode::{ErrorKind, Warning, WarningKind};
use crate::decode::reader::Reader;
use crate::decode::tree::push_with;
use crate::decode::{DecodeError, Kind, Node, RecordPart, Region, Role, Value};
use crate::text::Text;
use crate::protocol::crc32c::crc32c;
use crate::schema::Catalogue;
use bytes::Bytes;
use std::sync::OnceLock;

/// Bytes of a RecordBatch v2 header; also the offset of its first record.
pub const V2_HEADER: usize = 61;
/// Nested legacy wrapper messages deeper than this are not unpacked.
pub const MAX_NESTING: usize = 4;

pub struct BatchDecoder<'a, 'c> {
    pub buf: &'a Bytes,
    pub catalogue: &'c Catalogue,
    pub ctx: &'a Context,
    pub warnings: Vec<Warning>,
    /// What is wrong with the record data (checksums, lengths, codecs,
    /// decompression, budgets), each at its offset in [`Self::buf`]: the
    /// frame around it decodes, but these bytes do not hold what they claim.
    pub damage: Vec<DecodeError>,
    /// `buf` is decompressed data: the nodes made from it count against the
    /// input's expanded budget (the input's own bytes bound the rest).
    expanded: bool,
    /// The index of the first batch or message at the top (a segment's
    /// batches are decoded one at a time and numbered across the segment).
    first_index: usize,
}

/// What one record's nodes cost before its headers (record, length,
/// attributes, timestampDelta, offsetDelta, key and value with their
/// lengths, headers), and what each header adds (header, key and value with
/// their lengths): held against the expanded budget as they are made.
pub(super) const RECORD_COST: u64 = (RECORD_FIELDS as u64 + 1) * NODE_SIZE;
pub(super) const HEADER_COST: u64 = 5 * NODE_SIZE;
/// A legacy message's nodes (message, its fields, a key and a value).
const LEGACY_MESSAGE_COST: u64 = 12 * NODE_SIZE;
const NODE_SIZE: u64 = std::mem::size_of::<Node>() as u64;

type Res = Result<(), DecodeError>;

/// A length-prefixed bytes field of a record or legacy message: its name
/// and kind, given together wherever one is built.
pub(super) type BytesPart = (&'static str, Kind);
pub(super) const KEY: BytesPart = ("key", Kind::RecordKey);
pub(super) const VALUE: BytesPart = ("value", Kind::RecordValue);
pub(super) const HEADER_KEY: BytesPart = ("headerKey", Kind::Record(RecordPart::HeaderKey));
pub(super) const HEADER_VALUE: BytesPart = ("headerValue", Kind::Record(RecordPart::HeaderValue));

#[inline(always)]
pub(super) fn leaf(name: impl Into<Text>, ty: &'static str, offset: usize, len: usize, value: Value, region: Region) -> Node {
    let mut n = Node::new(name, ty, offset, region, Role::Encoding);
    n.len = len;
    n.value = value;
    n
}

impl<'a, 'c> BatchDecoder<'a, 'c> {
    /// A decoder over record data that is part of the input itself.
    pub fn new(buf: &'a Bytes, catalogue: &'c Catalogue, ctx: &'a Context) -> Self {
        BatchDecoder { buf, catalogue, ctx, warnings: Vec::new(), damage: Vec::new(), expanded: false, first_index: 0 }
    }

    /// Number the top-level batches or messages from `first` on.
    pub fn numbered_from(self, first: usize) -> Self {
        BatchDecoder { first_index: first, ..self }
    }

    /// A decoder over data decompressed from the input.
    fn over_decompressed(buf: &'a Bytes, catalogue: &'c Catalogue, ctx: &'a Context) -> Self {
        BatchDecoder { expanded: true, ..BatchDecoder::new(buf, catalogue, ctx) }
    }

    /// Damage at `offset` of this decoder's buffer: what was expected, and
    /// the warning line the tree views print.
    fn damaged(&mut self, kind: ErrorKind, offset: usize, expected: String, warning: String) {
        self.warnings.push(Warning::new(WarningKind::RecordDamage, Some(offset), warning));
        self.damage.push(DecodeError { kind, offset, expected });
    }

    /// Hold `cost` bytes of nodes made from decompressed data, or say which
    /// budget ran out at `offset`.
    fn hold_nodes(&self, cost: u64, offset: usize, what: &str) -> Res {
        if !self.expanded || self.ctx.budget.hold(cost) {
            return Ok(());
        }
        Err(DecodeError { kind: ErrorKind::Budget, offset, expected: self.ctx.budget.exhausted_message(crate::budget::Exhausted::Expanded, what) })
    }

    /// Pass on the findings of `inner`, which read the data decompressed from
    /// `from` in this buffer: its damage is placed there, with its offset in
    /// the decompressed data (`d:`) in the text, so that no offset into
    /// decompressed data is ever read as one into the frame.
    fn absorb(&mut self, inner: &mut BatchDecoder, from: usize) {
        self.warnings.append(&mut inner.warnings);
        for e in inner.damage.drain(..) {
            let expected = format!("in the data decompressed from here, at d:0x{:04x}: {}", e.offset, e.expected);
            self.damage.push(DecodeError { kind: e.kind, offset: from, expected });
        }
    }
    /// Whether bytes look like a record batch stream (so opaque blobs stay raw).
    pub fn plausible(data: &[u8]) -> bool {
        if data.len() < 17 {
            return false;
        }
        let declared = i32::from_be_bytes([data[8], data[9], data[10], data[11]]);
        match data[16] {
            2 => declared >= (V2_HEADER - 12) as i32,
            0 | 1 => declared >= 14,
            _ => false,
        }
    }

    /// Decode every batch in `start..end` of the buffer.
    pub fn decode_stream(&mut self, start: usize, end: usize, depth: usize, out: &mut Vec<Node>) {
        let mut pos = start;
        let mut index = if depth == 0 { self.first_index } else { 0 };
        while pos < end {
            let remaining = end - pos;
            let declared = if remaining >= 12 { Some(i32::from_be_bytes(self.buf[pos + 8..pos + 12].try_into().unwrap_or_default())) } else { None };
            let total = declared.filter(|d| *d >= 0).map(|d| 12 + d as usize);
            let magic = self.buf.get(pos + 16).copied().filter(|_| remaining > 16);
            if let (Some(total), Some(m)) = (total, magic) {
                if total < 12 + minimum_size(m) {
                    // Zeros would otherwise pass as one tiny message per 12 bytes.
                    let expected = format!("a batch length of at least {} for magic {m}, found {}", minimum_size(m), total - 12);
                    let node = self.error_node(ErrorKind::BatchLength, pos, remaining, &expected);
                    out.push(node);
                    return;
                }
            }
            if let Err(e) = self.hold_nodes(LEGACY_MESSAGE_COST, pos, "record batches") {
                out.push(self.over_budget_node(pos, remaining, &e.expected));
                return;
            }
            match (total, magic) {
                (Some(total), Some(m)) if total <= remaining => {
                    let node = match m {
                        2 => self.batch_v2(pos, total, index, depth),
                        0 | 1 => self.legacy_message(pos, total, m, index, depth),
                        _ => self.error_node(ErrorKind::Invalid, pos, remaining, &format!("a record batch magic of 0, 1 or 2, found {m}")),
                    };
                    let stop = node.error().is_some() && m > 2;
                    out.push(node);
                    if stop {
                        return;
                    }
                    pos += total;
                }
                (Some(total), _) if total < 12 + 14 => {
                    out.push(self.error_node(ErrorKind::BatchLength, pos, remaining, &format!("a batch length of at least 14, found {}", total as i64 - 12)));
                    return;
                }
                _ => {
                    // Fetch responses may end with a batch cut by the size limit: not an error.
                    out.push(truncated_node(self.buf, (pos, end), total));
                    return;
                }
            }
            index += 1;
        }
    }

    /// The bytes left undecoded where a budget ran out: not damage in the
    /// data, but not shown either, which the input's status says.
    fn over_budget_node(&mut self, pos: usize, len: usize, expected: &str) -> Node {
        let mut n = self.error_node(ErrorKind::Budget, pos, len, expected);
        n.name = "not decoded (over budget)".into();
        n
    }

    fn error_node(&mut self, kind: ErrorKind, pos: usize, len: usize, expected: &str) -> Node {
        let mut n = Node::new("invalid batch", "bytes", pos, Region::RecordBatch, Role::Encoding);
        n.len = len;
        n.value = Value::Bytes(Some(self.buf.slice(pos..pos + len)));
        n.set_error(expected.to_string());
        self.damaged(kind, pos, expected.to_string(), format!("0x{pos:04x}: expected {expected}"));
        n
    }

    /// RecordBatch v2: the 61-byte header, then records (compressed or not).
    fn batch_v2(&mut self, pos: usize, total: usize, index: usize, depth: usize) -> Node {
        let mut node = batch_node(index, pos, total);
        let mut r = Reader::new(self.buf);
        r.seek(pos);
        r.limit(total);
        if let Err(e) = self.batch_v2_fields(&mut r, pos, total, depth, &mut node.children) {
            self.damaged(e.kind, e.offset, e.expected.clone(), format!("RecordBatch at 0x{pos:04x}: {e}"));
            node.set_error(e.to_string());
        }
        node
    }

    fn batch_v2_fields(&mut self, r: &mut Reader, pos: usize, total: usize, depth: usize, out: &mut Vec<Node>) -> Res {
        let mut header = [0i64; V2_FIELDS.len()];
        let mut computed = 0;
        for (k, (name, ty, _)) in V2_FIELDS.iter().enumerate() {
            let at = r.pos();
            let v: i64 = match *ty {
                "int8" => r.i8(name)?.into(),
                "int16" => r.i16(name)?.into(),
                "int32" => r.i32(name)?.into(),
                "uint32" => r.u32(name)?.into(),
                _ => r.i64(name)?,
            };
            header[k] = v;
            if k == CRC {
                let stored = v as u32;
                computed = crc32c(&self.buf[pos + 21..pos + total]);
                if stored != computed {
                    let mismatch = format!("a batch CRC-32C of 0x{computed:08x} (the bytes' checksum), found 0x{stored:08x}");
                    self.damaged(ErrorKind::Crc, at, mismatch, format!("0x{at:04x}: batch CRC mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}"));
                }
            }
            out.push(v2_field_node(k, at, v, header[ATTRIBUTES] as u16, computed));
        }
        let (base_offset, attrs, count) = (header[BASE_OFFSET], header[ATTRIBUTES] as u16, header[RECORDS_COUNT] as i32);
        let reg = Region::RecordBatch;
        let codec = Codec::from_attributes(attrs);
        let control = attrs & 0x20 != 0;
        let body_start = r.pos();
        let body_end = pos + total;
        let kind = if control { PayloadKind::Control } else { PayloadKind::for_topic(self.ctx.topic.as_deref()) };
        match codec {
            Some(Codec::None) => self.records(body_start, body_end, count, base_offset, kind, out),
            Some(c) => {
                let mut comp = compressed_node(self.buf, (body_start, body_end), c);
                match decompress_within(c, &self.buf[body_start..body_end], &self.ctx.budget) {
                    Ok(data) => {
                        let data = Bytes::from(data);
                        let mut d = decompressed_node((body_start, body_end), &data, c);
                        let mut inner = BatchDecoder::over_decompressed(&data, self.catalogue, self.ctx);
                        inner.records(0, data.len(), count, base_offset, kind, &mut d.children);
                        self.absorb(&mut inner, body_start);
                        comp.children.push(d);
                    }
                    Err((kind, e)) => {
                        comp.set_error(e.clone());
                        self.damaged(kind, body_start, e.clone(), format!("0x{body_start:04x}: {e}"));
                    }
                }
                out.push(comp);
            }
            None => {
                let mut n = leaf("records", "bytes", body_start, body_end - body_start, Value::Bytes(Some(self.buf.slice(body_start..body_end))), reg);
                n.set_error(format!("unknown compression codec {}", attrs & 7));
                let expected = format!("a compression codec 0-4, found {}", attrs & 7);
                self.damage.push(DecodeError { kind: ErrorKind::Codec, offset: body_start, expected });
                out.push(n);
            }
        }
        let _ = depth;
        Ok(())
    }

    /// Records of a batch, `count` of them, within `start..end`.
    fn records(&mut self, start: usize, end: usize, count: i32, base_offset: i64, kind: PayloadKind, out: &mut Vec<Node>) {
        let mut r = Reader::new(self.buf);
        r.seek(start);
        r.limit(end - start);
        let mut i = 0;
        while r.pos() < end && (i as i64) < i64::from(count.max(0)) {
            let at = r.pos();
            if let Err(e) = self.hold_nodes(RECORD_COST, at, "records") {
                out.push(self.over_budget_node(at, end - at, &e.expected));
                return;
            }
            let node = push_with(out, || record_node(i as usize, at));
            // length, attributes, timestampDelta, offsetDelta, key and value with their lengths, headers
            node.children.reserve(RECORD_FIELDS);
            let res = self.record(&mut r, base_offset, kind, node);
            node.len = r.pos().max(node.children.last().map_or(at, |c| c.end())) - at;
            if let Err(e) = res {
                node.set_error(e.expected.clone());
                node.len = node.len.max(end - at);
                self.damaged(e.kind, e.offset, e.expected.clone(), format!("Record at 0x{at:04x}: {e}"));
                return;
            }
            i += 1;
        }
        if i64::from(i) != i64::from(count) || r.pos() != end {
            let left = end - r.pos();
            let expected = format!("{count} records, as the batch says, in its bytes: {i} decoded, {left} bytes left");
            self.damaged(ErrorKind::RecordsCount, start, expected, format!("0x{start:04x}: batch says {count} records; {i} decoded, {left} bytes left"));
        }
    }

    fn record(&mut self, r: &mut Reader, base_offset: i64, kind: PayloadKind, node: &mut Node) -> Res {
        let out = &mut node.children;
        let at = r.pos();
        let (len, n) = r.varint("record length")?;
        push_with(out, || length_leaf(at, n, len));
        if len < 0 || len as usize > r.remaining() {
            return Err(DecodeError { kind: ErrorKind::Truncated, offset: at, expected: format!("a record length within the {} bytes left, found {len}", r.remaining()) });
        }
        let outer_end = r.limit(len as usize);
        let res = (|| -> Res {
            let at = r.pos();
            let attributes = r.i8("record attributes")?;
            push_with(out, || record_leaf(RECORD_ATTRIBUTES, at, 1, attributes.into()));
            let at = r.pos();
            let (ts, n) = r.varlong("timestampDelta")?;
            push_with(out, || record_leaf(TIMESTAMP_DELTA, at, n, ts));
            let at = r.pos();
            let (od, n) = r.varint("offsetDelta")?;
            push_with(out, || offset_delta_leaf(at, n, od, base_offset));
            let plain = kind == PayloadKind::Plain;
            let key = self.varint_bytes(r, KEY, out, plain)?;
            let value = self.varint_bytes(r, VALUE, out, plain)?;
            let at = r.pos();
            let (hc, n) = r.varint("headersCount")?;
            let h = push_with(out, || headers_leaf(at, n, hc));
            if hc < 0 || hc as usize > r.remaining() {
                return Err(DecodeError { kind: ErrorKind::Truncated, offset: at, expected: format!("a header count within the {} bytes left, found {hc}", r.remaining()) });
            }
            for j in 0..hc {
                let hat = r.pos();
                self.hold_nodes(HEADER_COST, hat, "record headers")?;
                let hn = push_with(&mut h.children, || header_node(j as usize, hat));
                let res = self.varint_bytes(r, HEADER_KEY, &mut hn.children, false).and_then(|_| self.varint_bytes(r, HEADER_VALUE, &mut hn.children, false).map(|_| ()));
                hn.len = r.pos() - hat;
                if let Err(e) = res {
                    h.len = r.pos() - at;
                    return Err(e);
                }
            }
            h.len = r.pos() - at;
            decode_key_value(self.catalogue, self.buf, kind, self.ctx.topic.as_deref(), key, value, out, &mut self.warnings);
            Ok(())
        })();
        let consumed_to = r.pos();
        r.restore_end(outer_end);
        res?;
        if consumed_to != at + n + len as usize {
            self.warnings.push(Warning::at(WarningKind::RecordLength, at, format_args!("record length {len} but fields used {}", consumed_to - at - n)));
            r.seek(at + n + len as usize);
        }
        Ok(())
    }

    /// A varint length (-1 = null) and that many bytes; returns the bytes' range.
    /// `framed`: a plain topic's key or value, shown in Schema Registry framing when it is.
    fn varint_bytes(&mut self, r: &mut Reader, part: BytesPart, out: &mut Vec<Node>, framed: bool) -> Result<Option<(usize, usize)>, DecodeError> {
        let name = part.0;
        let at = r.pos();
        let (len, n) = r.varint(name)?;
        push_with(out, || bytes_length_leaf(name, at, n, len));
        let start = r.pos();
        if len < 0 {
            push_with(out, || bytes_leaf(self.buf, part, start, None));
            return Ok(None);
        }
        r.take(len as usize, name)?;
        let node = push_with(out, || bytes_leaf(self.buf, part, start, Some(len as usize)));
        if framed && schema_registry_id(&self.buf[start..start + len as usize]).is_some() {
            self.hold_nodes(FRAMING_COST, start, "record keys and values")?;
            schema_registry_framing(self.buf, node);
        }
        Ok(Some((start, start + len as usize)))
    }

    /// A legacy message (magic 0 or 1): offset, size, crc, magic, attributes,
    /// [timestamp], key, value; compressed values hold a nested message set.
    fn legacy_message(&mut self, pos: usize, total: usize, magic: u8, index: usize, depth: usize) -> Node {
        let mut node = Node::new(format!("Message[{index}]"), "Message", pos, Region::RecordBatch, Role::Element);
        node.kind = Kind::Record(RecordPart::Message);
        node.note = Some(format!("v{magic}").into());
        node.len = total;
        let mut r = Reader::new(self.buf);
        r.seek(pos);
        r.limit(total);
        if let Err(e) = self.legacy_fields(&mut r, pos, total, magic, depth, &mut node.children) {
            self.damaged(e.kind, e.offset, e.expected.clone(), format!("Message at 0x{pos:04x}: {e}"));
            node.set_error(e.to_string());
        }
        node
    }

    fn legacy_fields(&mut self, r: &mut Reader, pos: usize, total: usize, magic: u8, depth: usize, out: &mut Vec<Node>) -> Res {
        let reg = Region::RecordBatch;
        let at = r.pos();
        out.push(part_leaf(leaf("offset", "int64", at, 8, Value::Int(r.i64("offset")?), reg), RecordPart::Offset));
        let at = r.pos();
        out.push(leaf("messageSize", "int32", at, 4, Value::Int(r.i32("messageSize")?.into()), reg));
        let at = r.pos();
        let stored = r.u32("crc")?;
        let computed = crc32_ieee(&self.buf[pos + 16..pos + total]);
        let mut n = leaf("crc", "uint32", at, 4, Value::Uint(stored.into()), reg);
        n.kind = if stored == computed { Kind::CrcValid } else { Kind::CrcMismatch };
        n.note = Some(if stored == computed { format!("(0x{stored:08x}, CRC-32 ok)") } else { format!("(0x{stored:08x}, mismatch: computed 0x{computed:08x})") }.into());
        if stored != computed {
            let mismatch = format!("a message CRC-32 of 0x{computed:08x} (the bytes' checksum), found 0x{stored:08x}");
            self.damaged(ErrorKind::Crc, at, mismatch, format!("0x{at:04x}: message CRC mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}"));
        }
        out.push(n);
        let at = r.pos();
        out.push(part_leaf(leaf("magic", "int8", at, 1, Value::Int(r.i8("magic")?.into()), reg), RecordPart::Magic));
        let at = r.pos();
        let attrs = r.i8("attributes")? as u8;
        let mut a = part_leaf(leaf("attributes", "int8", at, 1, Value::Int(i64::from(attrs as i8)), reg), RecordPart::Attributes);
        let codec = Codec::from_attributes(u16::from(attrs));
        a.note = Some(format!("(compression={}{})", codec.map_or("unknown", |c| c.name()), if magic == 1 && attrs & 0x08 != 0 { ", LogAppendTime" } else { "" }).into());
        out.push(a);
        if magic == 1 {
            let at = r.pos();
            out.push(part_leaf(leaf("timestamp", "int64", at, 8, Value::Int(r.i64("timestamp")?), reg), RecordPart::Timestamp));
        }
        for (name, kind) in [KEY, VALUE] {
            let at = r.pos();
            let len = r.i32(name)?;
            let mut l = leaf(length_name(name), "int32", at, 4, Value::Int(len.into()), reg);
            l.kind = Kind::BytesLength;
            out.push(l);
            if len < 0 {
                let mut v = leaf(name, "bytes", r.pos(), 0, Value::Bytes(None), reg);
                v.kind = kind;
                out.push(v);
                continue;
            }
            let start = r.pos();
            r.take(len as usize, name)?;
            let end = start + len as usize;
            let mut v = leaf(name, "bytes", start, len as usize, Value::Bytes(Some(self.buf.slice(start..end))), reg);
            v.kind = kind;
            if kind == Kind::RecordValue && codec.is_some_and(|c| c != Codec::None) {
                let c = codec.unwrap_or(Codec::None);
                v.note = Some(format!("({} compressed message set)", c.name()).into());
                if depth + 1 > MAX_NESTING {
                    v.set_error(format!("wrapper messages nested deeper than {MAX_NESTING}"));
                    self.damage.push(DecodeError { kind: ErrorKind::Invalid, offset: start, expected: format!("wrapper messages nested at most {MAX_NESTING} deep") });
                } else {
                    match decompress_within(c, &self.buf[start..end], &self.ctx.budget) {
                        Ok(data) => {
                            let data = Bytes::from(data);
                            let mut d = Node::new("decompressed", "message set", start, Region::RecordBatch, Role::Decompressed);
                            d.len = len as usize;
                            d.doc = Some(format!("{} bytes after {} decompression; offsets below index this buffer", data.len(), c.name()).into());
                            d.value = Value::Bytes(Some(data.clone()));
                            let mut inner = BatchDecoder::over_decompressed(&data, self.catalogue, self.ctx);
                            inner.decode_stream(0, data.len(), depth + 1, &mut d.children);
                            self.absorb(&mut inner, start);
                            v.children.push(d);
                        }
                        Err((kind, e)) => {
                            v.set_error(e.clone());
                            self.damaged(kind, start, e.clone(), format!("0x{start:04x}: {e}"));
                        }
                    }
                }
            } else {
                v.note = text_preview(&self.buf[start..end]);
                if PayloadKind::for_topic(self.ctx.topic.as_deref()) == PayloadKind::Plain && schema_registry_id(&self.buf[start..end]).is_some() {
                    self.hold_nodes(FRAMING_COST, start, "record keys and values")?;
                    schema_registry_framing(self.buf, &mut v);
                }
            }
            out.push(v);
        }
        Ok(())
    }
}

/// The smallest size after the batch length field for a magic: legacy
/// messages need crc, magic, attributes, [timestamp,] key and value lengths;
/// a v2 batch its whole header.
fn minimum_size(magic: u8) -> usize {
    match magic {
        0 => 14,
        1 => 22,
        _ => V2_HEADER - 12,
    }
}

/// The RecordBatch v2 header's fields: name, type, width.
pub const V2_FIELDS: [(&str, &str, usize); 13] = [
    ("baseOffset", "int64", 8),
    ("batchLength", "int32", 4),
    ("partitionLeaderEpoch", "int32", 4),
    ("magic", "int8", 1),
    ("crc", "uint32", 4),
    ("attributes", "int16", 2),
    ("lastOffsetDelta", "int32", 4),
    ("baseTimestamp", "int64", 8),
    ("maxTimestamp", "int64", 8),
    ("producerId", "int64", 8),
    ("producerEpoch", "int16", 2),
    ("baseSequence", "int32", 4),
    ("recordsCount", "int32", 4),
];
/// Indexes in [`V2_FIELDS`] (and of a batch node's first children).
pub(super) const BASE_OFFSET: usize = 0;
pub(super) const PARTITION_LEADER_EPOCH: usize = 2;
pub(super) const MAGIC: usize = 3;
pub(super) const CRC: usize = 4;
pub(super) const ATTRIBUTES: usize = 5;
pub(super) const LAST_OFFSET_DELTA: usize = 6;
pub(super) const BASE_TIMESTAMP: usize = 7;
pub(super) const MAX_TIMESTAMP: usize = 8;
pub(super) const PRODUCER_ID: usize = 9;
pub(super) const PRODUCER_EPOCH: usize = 10;
pub(super) const BASE_SEQUENCE: usize = 11;
pub(super) const RECORDS_COUNT: usize = 12;

/// `RecordBatch[index]` at `pos`, `total` bytes.
pub(super) fn batch_node(index: usize, pos: usize, total: usize) -> Node {
    let mut node = Node::new(indexed_name(&BATCH_NAMES, "RecordBatch", index), "RecordBatch", pos, Region::RecordBatch, Role::Element);
    node.kind = Kind::Record(RecordPart::Batch);
    node.note = Some("v2".into());
    node.len = total;
    node
}

/// Which part header field `k` of a RecordBatch v2 is, for those views look for.
fn v2_field_part(k: usize) -> Option<RecordPart> {
    Some(match k {
        BASE_OFFSET => RecordPart::BaseOffset,
        MAGIC => RecordPart::Magic,
        ATTRIBUTES => RecordPart::Attributes,
        BASE_TIMESTAMP => RecordPart::BaseTimestamp,
        MAX_TIMESTAMP => RecordPart::MaxTimestamp,
        _ => return None,
    })
}

/// `node`, marked as the record format's `part`.
fn part_leaf(mut node: Node, part: RecordPart) -> Node {
    node.kind = Kind::Record(part);
    node
}

/// A record's field before its key: its name, type and part.
pub(super) type RecordField = (&'static str, &'static str, RecordPart);
pub(super) const RECORD_ATTRIBUTES: RecordField = ("attributes", "int8", RecordPart::Attributes);
pub(super) const TIMESTAMP_DELTA: RecordField = ("timestampDelta", "varlong", RecordPart::TimestampDelta);
const OFFSET_DELTA: RecordField = ("offsetDelta", "varint", RecordPart::OffsetDelta);
const HEADER_COUNT: RecordField = ("headers", "varint", RecordPart::Headers);

/// Record field `f` with value `v`, `len` bytes at `at`.
#[inline(always)]
pub(super) fn record_leaf((name, ty, part): RecordField, at: usize, len: usize, v: i64) -> Node {
    part_leaf(leaf(name, ty, at, len, Value::Int(v), Region::Record), part)
}

/// Header field `k` of a RecordBatch v2 (see [`V2_FIELDS`]) with value `v` as
/// read; `attrs` the batch's attributes (read before the fields that need them)
/// and `computed` its checksum as computed.
pub(super) fn v2_field_node(k: usize, at: usize, v: i64, attrs: u16, computed: u32) -> Node {
    let (name, ty, width) = V2_FIELDS[k];
    let value = if ty == "uint32" { Value::Uint(v as u32 as u64) } else { Value::Int(v) };
    let mut n = leaf(name, ty, at, width, value, Region::RecordBatch);
    if let Some(part) = v2_field_part(k) {
        n.kind = Kind::Record(part);
    }
    match k {
        1 => n.doc = Some("bytes after this field".into()),
        CRC => {
            let stored = v as u32;
            n.kind = if stored == computed { Kind::CrcValid } else { Kind::CrcMismatch };
            n.note = Some(if stored == computed { format!("(0x{stored:08x}, CRC-32C ok)") } else { format!("(0x{stored:08x}, mismatch: computed 0x{computed:08x})") }.into());
            n.doc = Some("CRC-32C of attributes through the last record".into());
        }
        ATTRIBUTES => n.note = Some(attributes_note(attrs).into()),
        // baseTimestamp (the delete horizon when the attributes say so) and maxTimestamp.
        7 | 8 => {
            let when = crate::protocol::meanings::utc_millis(v);
            n.note = match (k == 7 && attrs & 0x40 != 0, when) {
                (true, Some(t)) => Some(format!("(delete horizon, {t})").into()),
                (true, None) => Some("(delete horizon)".into()),
                (false, t) => t.map(|t| format!("({t})").into()),
            };
        }
        _ => {}
    }
    n
}

/// The bytes of a batch cut by the end of `pos..end`; `total` is what it declares.
pub(super) fn truncated_node(buf: &Bytes, (pos, end): (usize, usize), total: Option<usize>) -> Node {
    let remaining = end - pos;
    let mut n = Node::new("truncated batch", "bytes", pos, Region::RecordBatch, Role::Encoding);
    n.kind = Kind::TruncatedBatch;
    n.len = remaining;
    n.value = Value::Bytes(Some(buf.slice(pos..end)));
    n.doc = Some(match total {
        Some(t) => format!("partial batch: declares {t} bytes, {remaining} present (size limits cut fetched data)").into(),
        None => "partial batch header".into(),
    });
    n
}

/// A compressed batch's records, `buf[start..end]`, as bytes.
pub(super) fn compressed_node(buf: &Bytes, (start, end): (usize, usize), c: Codec) -> Node {
    let mut comp = Node::new("records", "bytes", start, Region::RecordBatch, Role::Encoding);
    comp.len = end - start;
    comp.note = Some(format!("({} compressed)", c.name()).into());
    comp.value = Value::Bytes(Some(buf.slice(start..end)));
    comp
}

/// The decompressed `data` of the records at `start..end`, which its children's offsets index.
pub(super) fn decompressed_node((start, end): (usize, usize), data: &Bytes, c: Codec) -> Node {
    let mut d = Node::new("decompressed", "records", start, Region::Record, Role::Decompressed);
    d.len = end - start;
    d.doc = Some(format!("{} bytes after {} decompression; offsets below index this buffer", data.len(), c.name()).into());
    d.value = Value::Bytes(Some(data.clone()));
    d
}

/// `Record[i]` at `at`.
#[inline(always)]
pub(super) fn record_node(i: usize, at: usize) -> Node {
    let mut n = Node::new(indexed_name(&RECORD_NAMES, "Record", i), "Record", at, Region::Record, Role::Element);
    n.kind = Kind::Record(RecordPart::Record);
    n
}

/// A record's length (`n` bytes at `at`).
#[inline(always)]
pub(super) fn length_leaf(at: usize, n: usize, len: i32) -> Node {
    let mut l = leaf("length", "varint", at, n, Value::Int(len.into()), Region::Record);
    l.doc = Some("bytes after this field".into());
    l
}

/// A record's offsetDelta, noted with the offset it gives.
#[inline(always)]
pub(super) fn offset_delta_leaf(at: usize, n: usize, od: i32, base_offset: i64) -> Node {
    let mut o = record_leaf(OFFSET_DELTA, at, n, od.into());
    o.note = Some(Text::format(format_args!("(offset {})", base_offset.wrapping_add(od.into()))));
    o
}

/// A record's header count.
#[inline(always)]
pub(super) fn headers_leaf(at: usize, n: usize, count: i32) -> Node {
    let mut h = record_leaf(HEADER_COUNT, at, n, count.into());
    h.doc = Some("number of headers".into());
    h
}

/// `Header[j]` at `at`.
#[inline(always)]
pub(super) fn header_node(j: usize, at: usize) -> Node {
    Node::new(indexed_name(&HEADER_NAMES, "Header", j), "Header", at, Region::Record, Role::Element)
}

/// The varint length of record bytes `name` (`keyLength` …).
#[inline(always)]
pub(super) fn bytes_length_leaf(name: &'static str, at: usize, n: usize, len: i32) -> Node {
    let mut l = leaf(length_name(name), "varint", at, n, Value::Int(len.into()), Region::Record);
    l.kind = Kind::BytesLength;
    l
}

/// Record bytes `name` at `buf[start..start + len]` (`None`: null), with a text preview.
#[inline(always)]
pub(super) fn bytes_leaf(buf: &Bytes, (name, kind): BytesPart, start: usize, len: Option<usize>) -> Node {
    let mut v = match len {
        None => leaf(name, "bytes", start, 0, Value::Bytes(None), Region::Record),
        Some(len) => {
            let end = start + len;
            let mut v = leaf(name, "bytes", start, len, Value::Bytes(Some(buf.slice(start..end))), Region::Record);
            v.note = text_preview(&buf[start..end]);
            v
        }
    };
    v.kind = kind;
    v
}

fn attributes_note(a: u16) -> String {
    let mut parts = vec![
        format!("compression={}", Codec::from_attributes(a).map_or("unknown", |c| c.name())),
        format!("timestamp={}", if a & 0x08 != 0 { "LogAppendTime" } else { "CreateTime" }),
    ];
    if a & 0x10 != 0 {
        parts.push("transactional".into());
    }
    if a & 0x20 != 0 {
        parts.push("control".into());
    }
    if a & 0x40 != 0 {
        parts.push("delete horizon".into());
    }
    format!("({})", parts.join(", "))
}

/// Printable UTF-8 keys and values get a text preview in their note.
/// The length prefix's name of a record's bytes field.
fn length_name(name: &str) -> Text {
    match name {
        "key" => "keyLength".into(),
        "value" => "valueLength".into(),
        "headerKey" => "headerKeyLength".into(),
        "headerValue" => "headerValueLength".into(),
        _ => format!("{name}Length").into(),
    }
}

pub(super) fn text_preview(b: &[u8]) -> Option<Text> {
    // Printable ASCII (most keys and values) is UTF-8 without control
    // characters, checked eight bytes at a time; and a character is a byte.
    let (s, cut) = if crate::text::escape::is_printable_ascii(b) {
        (std::str::from_utf8(b).ok()?, b.len().min(PREVIEW_CHARS))
    } else {
        let s = std::str::from_utf8(b).ok()?;
        if has_control(b) {
            return None;
        }
        (s, s.char_indices().nth(PREVIEW_CHARS).map_or(s.len(), |(i, _)| i))
    };
    if s.is_empty() {
        return None;
    }
    let more = if cut < s.len() { "…" } else { "" };
    // Built in place (no formatting, inline when short): a note on every record's key and value.
    Some(Text::concat(&["(text \"", &s[..cut], more, "\")"]))
}

/// Characters of a value shown in its text preview note.
const PREVIEW_CHARS: usize = 40;

/// Whether valid UTF-8 holds a control character (C0, DEL or C1), as
/// `char::is_control` says, scanning bytes: C1 controls are U+0080..U+009F,
/// encoded as 0xC2 0x80..0x9F. Chunks are screened with a branch-free fold
/// (vectorised) and only suspicious ones looked at closely.
fn has_control(b: &[u8]) -> bool {
    const CHUNK: usize = 64;
    for (k, chunk) in b.chunks(CHUNK).enumerate() {
        let suspicious = chunk.iter().fold(false, |a, &c| a | (c < 0x20) | (c == 0x7f) | (c == 0xc2));
        if !suspicious {
            continue;
        }
        for (j, &c) in chunk.iter().enumerate() {
            let next = b.get(k * CHUNK + j + 1).copied().unwrap_or(0);
            if c < 0x20 || c == 0x7f || (c == 0xc2 && (0x80..0xa0).contains(&next)) {
                return true;
            }
        }
    }
    false
}

/// Fields of a record without headers' contents: the children reserved ahead.
pub(super) const RECORD_FIELDS: usize = 9;

type NameTable = [OnceLock<&'static str>];
static BATCH_NAMES: [OnceLock<&'static str>; 256] = [const { OnceLock::new() }; 256];
static RECORD_NAMES: [OnceLock<&'static str>; 4096] = [const { OnceLock::new() }; 4096];
static HEADER_NAMES: [OnceLock<&'static str>; 64] = [const { OnceLock::new() }; 64];

/// `Record[12]`: made once per process for the first indexes (a bounded table)
/// and shared, formatted inline beyond it.
fn indexed_name(table: &'static NameTable, base: &'static str, i: usize) -> Text {
    match table.get(i) {
        Some(cell) => Text::from_static(cell.get_or_init(|| format!("{base}[{i}]").leak())),
        None => Text::format(format_args!("{base}[{i}]")),
    }
}

/// CRC-32 (IEEE), the checksum of legacy messages.
pub fn crc32_ieee(data: &[u8]) -> u32 {
    let mut h = flate2::Crc::new();
    h.update(data);
    h.sum()
}

#[cfg(test)]
mod tests {
    use super::{has_control, text_preview};

    /// The byte scan agrees with `char::is_control` for every char, wherever it
    /// falls relative to the scan's chunks (a C1 control split across two).
    #[test]
    fn control_scan_matches_char_is_control() {
        for c in (0u32..0x3000).chain([0xfeff, 0x1_f600]).filter_map(char::from_u32) {
            for pad in [0usize, 62, 63, 64, 127] {
                let s = format!("{}{c}{}", "a".repeat(pad), "b".repeat(3));
                assert_eq!(has_control(s.as_bytes()), c.is_control(), "char U+{:04X} after {pad} bytes", c as u32);
            }
        }
    }

    #[test]
    fn preview_cuts_at_forty_chars() {
        assert_eq!(text_preview("é".repeat(41).as_bytes()).as_deref(), Some(format!("(text \"{}…\")", "é".repeat(40)).as_str()));
        assert_eq!(text_preview(b"hi").as_deref(), Some("(text \"hi\")"));
        assert_eq!(text_preview(b"a\x00b"), None);
        assert_eq!(text_preview(b""), None);
    }
}
