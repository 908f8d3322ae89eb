//! Record batches inside a `records` field or a log segment: RecordBatch v2 and
//! the legacy message sets (magic 0 and 1), with compressed payloads decoded
//! into a child tree whose offsets index the decompressed buffer. The batches
//! are walked onto a tape (`super::tape`) and their nodes built from it
//! (`super::nodes`) by the constructors here.

use super::compression::Codec;
use super::layout::{
    ATTRIBUTES, BASE_OFFSET, BASE_TIMESTAMP, CRC, LEGACY_ATTRIBUTES, LEGACY_CRC, LEGACY_LAYOUT,
    LEGACY_TIMESTAMP, MAGIC, MAX_TIMESTAMP, V2_FIELDS,
};
use super::lines::{self, BytesForm, BytesPart, PartDoc, PartLine, PartValue};
use super::payload::PayloadKind;
use super::tape::Walk;
use crate::decode::context::Context;
use crate::decode::tape::{close_slot, push_slot, Id, Slot, Val, Values, NO_KEY};
use crate::decode::tree::{leaf, push_with};
use crate::decode::Warning;
use crate::decode::Wire;
use crate::decode::{DecodeError, Kind, Name, Node, RecordPart, Region, Role, Value};
use crate::schema::{Catalogue, Primitive};
use crate::text::Text;
use bytes::Bytes;

pub struct BatchDecoder<'a, 'c> {
    pub buf: &'a Bytes,
    pub catalogue: &'c Catalogue,
    pub ctx: &'a Context,
    pub warnings: Vec<Warning>,
    /// What is wrong with the record data (checksums, lengths, codecs,
    /// decompression, budgets), each at its offset in [`Self::buf`]: the
    /// frame around it decodes, but these bytes do not hold what they claim.
    pub damage: Vec<DecodeError>,
    /// The index of the first batch or message at the top (a segment's
    /// batches are decoded one at a time and numbered across the segment).
    first_index: usize,
    /// A batch cut short by the end of the data is damage, as in a request's
    /// records ([`Self::as_request`]); by default it is not (a segment may
    /// end inside a batch being written, a fetch at its size limit).
    cut_is_damage: bool,
    /// The offsets and sequence numbers of the top-level batches, checked
    /// as each is built or checked (as in a log, by default).
    pub(super) order: super::order::Batches,
}

impl<'a, 'c> BatchDecoder<'a, 'c> {
    /// A decoder over record data that is part of the input itself.
    pub fn new(buf: &'a Bytes, catalogue: &'c Catalogue, ctx: &'a Context) -> Self {
        BatchDecoder {
            buf,
            catalogue,
            ctx,
            warnings: Vec::new(),
            damage: Vec::new(),
            first_index: 0,
            cut_is_damage: false,
            order: super::order::Batches::new(true),
        }
    }

    /// Read the batches as a request's records, where a batch cut short is
    /// damage (a producer sends whole batches), as the frame decoder does.
    pub fn as_request(self) -> Self {
        BatchDecoder {
            cut_is_damage: true,
            ..self.fetched(false)
        }
    }

    /// Check the batches' offsets as a log's (`fetched`: offsets go on from
    /// batch to batch) or a producer's (each batch starts at offset 0).
    pub(crate) fn fetched(self, fetched: bool) -> Self {
        BatchDecoder {
            order: super::order::Batches::new(fetched),
            ..self
        }
    }

    /// Check the first top-level batch against the last one `order` has
    /// seen: a segment's batches, decoded one at a time, are one log.
    pub(super) fn following(self, order: super::order::Batches) -> Self {
        BatchDecoder { order, ..self }
    }

    /// Number the top-level batches or messages from `first` on.
    pub(crate) fn numbered_from(self, first: usize) -> Self {
        BatchDecoder {
            first_index: first,
            ..self
        }
    }

    /// The nodes of every batch in `start..end` of the buffer: walked onto a
    /// tape of their own (with the context's topic, whose keys and values
    /// may be framed), then built from it.
    pub fn decode_stream(&mut self, start: usize, end: usize, out: &mut Vec<Node>) {
        let mut tape = Values::default();
        let root = push_slot(
            &mut tape.slots,
            NO_KEY,
            Id::Stream,
            Val::Null,
            (start, end.saturating_sub(start), 0),
        );
        let plain = PayloadKind::for_topic(self.ctx.topic.as_deref()) == PayloadKind::Plain;
        let mut walk = Walk::<true> {
            slots: &mut tape.slots,
            buffers: &mut tape.buffers,
            findings: &mut tape.findings,
            budget: &self.ctx.budget,
            plain,
            first_index: self.first_index,
            cut_is_damage: self.cut_is_damage,
        };
        walk.stream(self.buf, (start, end));
        close_slot(&mut tape.slots, root, end);
        self.check_stream(&tape, root as u32);
        self.stream_nodes(&tape, root as u32, out);
    }
}

/// `RecordBatch[index]` at `pos`, `total` bytes.
pub(super) fn push_batch(out: &mut Vec<Node>, index: usize, pos: usize, total: usize) -> &mut Node {
    push_with(out, || batch_line(index, pos, total).into_node(&NO_BYTES))
}

/// [`push_batch`]'s line.
pub(super) fn batch_line(index: usize, pos: usize, total: usize) -> PartLine<'static> {
    let what = (
        Region::RecordBatch,
        Role::Element,
        Kind::Record(RecordPart::Batch),
    );
    let name = Name::own_indexed(&"RecordBatch", index);
    let mut l = PartLine::new(name, "RecordBatch", (pos, total), PartValue::None, what);
    l.note = Some("v2".into());
    l
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

/// Field `field` of a legacy message of `magic` (offset, messageSize, crc,
/// magic, attributes, timestamp) from its slot, a checksum's with the
/// checksum computed.
pub(super) fn legacy_field_node(field: usize, s: &Slot, magic: i64) -> Node {
    // The fields before the key: offset to timestamp.
    let f = LEGACY_LAYOUT[field.min(LEGACY_TIMESTAMP)];
    let (name, ty, part) = (f.name, f.wire, f.part);
    let width = f.wire.fixed_width().unwrap_or(0);
    let (value, v) = match s.value {
        Val::Uint(u) => (Value::Uint(u), u as i64),
        Val::Int(i) => (Value::Int(i), i),
        _ => (Value::Int(0), 0),
    };
    let mut n = leaf(name, ty, s.at as usize, width, value, Region::RecordBatch);
    if let Some(part) = part {
        n.kind = Kind::Record(part);
    }
    match field {
        LEGACY_CRC => {
            let computed = match s.id {
                Id::Checksum { computed } => computed,
                _ => v as u32,
            };
            let stored = v as u32;
            n.kind = if stored == computed {
                Kind::CrcValid
            } else {
                Kind::CrcMismatch
            };
            n.set_note(crc_note(stored, computed, "CRC-32"));
        }
        LEGACY_ATTRIBUTES => {
            let attrs = v as u8;
            let codec = Codec::from_attributes(u16::from(attrs));
            n.set_note(format!(
                "(compression={}{})",
                codec.map_or("unknown", |c| c.name()),
                if magic == 1 && attrs & 0x08 != 0 {
                    ", LogAppendTime"
                } else {
                    ""
                }
            ));
        }
        _ => {}
    }
    n
}

/// Header field `k` of a RecordBatch v2 (see [`V2_FIELDS`]) with value `v` as
/// read; `attrs` the batch's attributes (read before the fields that need them)
/// and `computed` its checksum as computed.
pub(super) fn v2_field_line(
    k: usize,
    at: usize,
    v: i64,
    attrs: u16,
    computed: u32,
) -> PartLine<'static> {
    let (name, ty, width) = V2_FIELDS[k];
    let value = if ty == Primitive::Uint32 {
        PartValue::Uint(v as u32 as u64)
    } else {
        PartValue::Int(v)
    };
    let kind = v2_field_part(k).map_or(Kind::Plain, Kind::Record);
    let what = (Region::RecordBatch, Role::Encoding, kind);
    let mut n = PartLine::new(
        Text::own_words(name).into(),
        ty.as_str(),
        (at, width),
        value,
        what,
    );
    n.wire = Wire::Fixed(ty);
    match k {
        1 => n.doc = Some(PartDoc::Words(lines::LENGTH_DOC)),
        CRC => {
            let stored = v as u32;
            n.kind = if stored == computed {
                Kind::CrcValid
            } else {
                Kind::CrcMismatch
            };
            n.note = Some(crc_note(stored, computed, "CRC-32C").into());
            n.doc = Some(PartDoc::Words(
                "CRC-32C of attributes through the last record",
            ));
        }
        ATTRIBUTES => n.note = Some(attributes_note(attrs).into()),
        // baseTimestamp (the delete horizon when the attributes say so) and maxTimestamp.
        7 | 8 => {
            let when = crate::protocol::meanings::utc_millis_bytes(v);
            let when = when.as_ref().and_then(|t| std::str::from_utf8(t).ok());
            n.note = match (k == 7 && attrs & 0x40 != 0, when) {
                (true, Some(t)) => Some(Text::concat(&["(delete horizon, ", t, ")"])),
                (true, None) => Some("(delete horizon)".into()),
                (false, t) => t.map(|t| Text::concat(&["(", t, ")"])),
            }
            .map(crate::decode::Note::from);
        }
        _ => {}
    }
    n
}

/// The bytes of a batch cut by the end of `pos..end`; `total` is what it declares.
pub(super) fn truncated_node(
    buf: &Bytes,
    (pos, end): (usize, usize),
    total: Option<usize>,
) -> Node {
    let remaining = end - pos;
    let mut n = leaf(
        "truncated batch",
        Wire::Bytes,
        pos,
        remaining,
        Value::Bytes(Some(buf.slice(pos..end))),
        Region::RecordBatch,
    );
    n.kind = Kind::TruncatedBatch;
    n.doc = Some(match total {
        Some(t) => format!(
            "partial batch: declares {t} bytes, {remaining} present (fetch limit or end of file)"
        )
        .into(),
        None => "partial batch header".into(),
    });
    n
}

/// A compressed batch's records, `buf[start..end]`, as bytes.
pub(super) fn compressed_node(buf: &Bytes, range: (usize, usize), c: Codec) -> Node {
    compressed_line(buf, range, c).into_node(buf)
}

/// [`compressed_node`] as a line.
pub(super) fn compressed_line(buf: &[u8], (start, end): (usize, usize), c: Codec) -> PartLine<'_> {
    let what = (Region::RecordBatch, Role::Encoding, Kind::Plain);
    let value = PartValue::Bytes(buf.get(start..end));
    let mut l = PartLine::new(
        Text::own_words("records").into(),
        Wire::Bytes.name(),
        (start, end - start),
        value,
        what,
    );
    l.wire = Wire::Bytes;
    l.note = Some(format!("({} compressed)", c.name()).into());
    l
}

/// The decompressed `data` of the records (or a wrapper message's message set:
/// `ty` and `region` say which) at `start..end`, which its children's offsets index.
pub(super) fn decompressed_node(
    range: (usize, usize),
    data: &Bytes,
    c: Codec,
    what: (&'static str, Region),
) -> Node {
    decompressed_line(range, data, c, what).into_node(data)
}

/// [`decompressed_node`] as a line.
pub(super) fn decompressed_line<'a>(
    (start, end): (usize, usize),
    data: &'a Bytes,
    c: Codec,
    (ty, region): (&'static str, Region),
) -> PartLine<'a> {
    let what = (region, Role::Decompressed, Kind::Plain);
    let name = Text::own_words("decompressed").into();
    let mut l = PartLine::new(
        name,
        ty,
        (start, end - start),
        PartValue::Buffer(data),
        what,
    );
    l.doc = Some(PartDoc::Decompressed {
        len: data.len(),
        codec: c.name(),
    });
    l
}

/// The length of record bytes (`keyLength` …), written as `form` says.
#[inline(always)]
pub(super) fn push_bytes_length(
    out: &mut Vec<Node>,
    name: &'static str,
    form: BytesForm,
    at: usize,
    n: usize,
    len: i32,
) {
    out.push(lines::bytes_length_line(name, form, at, n, len).into_node(&NO_BYTES));
}

/// Record bytes of `part` at `buf[start..start + len]` (`None`: null), in `region`.
#[inline(always)]
pub(super) fn push_bytes<'o>(
    out: &'o mut Vec<Node>,
    buf: &Bytes,
    part: BytesPart,
    region: Region,
    start: usize,
    len: Option<usize>,
) -> &'o mut Node {
    // Its text preview is the views' (`render::notes`), made when shown.
    push_with(out, || {
        lines::bytes_line(buf, part, region, start, len).into_node(buf)
    })
}

/// What a line with no bytes for a value is built into a node with.
const NO_BYTES: Bytes = Bytes::new();

/// `(compression=none, timestamp=CreateTime, transactional)`: a batch's attributes, written piece by piece.
fn attributes_note(a: u16) -> Text {
    let flag = |bit: u16, text: &'static str| if a & bit != 0 { text } else { "" };
    Text::concat(&[
        "(compression=",
        Codec::from_attributes(a).map_or("unknown", |c| c.name()),
        ", timestamp=",
        if a & 0x08 != 0 {
            "LogAppendTime"
        } else {
            "CreateTime"
        },
        flag(0x10, ", transactional"),
        flag(0x20, ", control"),
        flag(0x40, ", delete horizon"),
        ")",
    ])
}

/// `(0x1a2b3c4d, CRC-32C ok)`, or the mismatch with the checksum computed.
fn crc_note(stored: u32, computed: u32, name: &str) -> Text {
    let (s, c) = (
        crate::text::digits::hex8(stored),
        crate::text::digits::hex8(computed),
    );
    let (s, c) = (
        std::str::from_utf8(&s).unwrap_or_default(),
        std::str::from_utf8(&c).unwrap_or_default(),
    );
    match stored == computed {
        true => Text::concat(&["(0x", s, ", ", name, " ok)"]),
        false => Text::concat(&["(0x", s, ", mismatch: computed 0x", c, ")"]),
    }
}
