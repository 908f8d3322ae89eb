//! A record's parts, defined once: each part as a line (its name, type,
//! range, value, note and description, and what its node is), which the
//! nodes are built from (`PartLine::into_node`, for the views that hold
//! nodes) and which the text tree draws straight from the record tape
//! with no node (`plain_record_lines`: a plain topic's uncompressed
//! records, most of a Produce or Fetch frame's lines). The batch's own
//! line and its header's fields are lines too (`batch.rs`).

use super::layout::{PartField, RECORD_HEADER_LAYOUT, RECORD_LAYOUT};
use crate::decode::tape::{BytesOf, Id, RecordField as Field, Slot, Val, Values};
use crate::decode::{Kind, Name, Node, Note, RecordPart, Region, Role, Value, Wire};
use crate::schema::Primitive;
use crate::text::Text;
use bytes::Bytes;

/// A length-prefixed bytes field of a record or legacy message: its name,
/// its length's name (as the layout has them) and its kind, given together
/// wherever one is built.
pub(crate) type BytesPart = (&'static str, &'static str, Kind);

/// The bytes field `f` of the layout, of `kind`.
const fn bytes_part(f: PartField, kind: Kind) -> BytesPart {
    match f.sized_by {
        Some(length) => (f.name, length, kind),
        None => panic!("a bytes field without its length"),
    }
}

pub(super) const KEY: BytesPart = bytes_part(RECORD_LAYOUT[5], Kind::RecordKey);
pub(super) const VALUE: BytesPart = bytes_part(RECORD_LAYOUT[7], Kind::RecordValue);
pub(super) const HEADER_KEY: BytesPart =
    bytes_part(RECORD_HEADER_LAYOUT[1], Kind::Record(RecordPart::HeaderKey));
pub(super) const HEADER_VALUE: BytesPart = bytes_part(
    RECORD_HEADER_LAYOUT[3],
    Kind::Record(RecordPart::HeaderValue),
);
/// How a bytes field's length is written (its type) and the region of its nodes: a record's, or a legacy message's.
pub(super) type BytesForm = (Wire, Region);
pub(super) const RECORD_BYTES: BytesForm = (Wire::Varint, Region::Record);
pub(super) const LEGACY_BYTES: BytesForm = (Wire::Fixed(Primitive::Int32), Region::RecordBatch);

/// A record's field before its key, as the layout has it: its name, type and part.
pub(super) type RecordField = (&'static str, Wire, RecordPart);

/// What a record's length and its header count say (their descriptions).
pub(super) const LENGTH_DOC: &str = "bytes after this field";
const HEADERS_DOC: &str = "number of headers";

/// One line of a batch's tree: what it shows, and what its node is.
#[derive(Clone, Debug)]
pub struct PartLine<'a> {
    pub name: Name,
    /// The type as shown (`varint`, `bytes`, `Record`).
    pub ty: &'static str,
    pub at: usize,
    pub len: usize,
    pub value: PartValue<'a>,
    /// Its note: an offsetDelta's offset, a batch header field's meaning
    /// (keys' and values' text previews are the views' own).
    pub note: Option<Note>,
    pub doc: Option<PartDoc>,
    pub region: Region,
    pub role: Role,
    pub kind: Kind,
    pub wire: Wire,
    /// Its offsets index a batch's decompressed records, not the frame.
    pub inner: bool,
}

/// What a part's line says it is: the record format's own words, or what
/// a batch's records decompressed to (their bytes and codec).
#[derive(Clone, Copy, Debug)]
pub enum PartDoc {
    Words(&'static str),
    Decompressed { len: usize, codec: &'static str },
}

impl PartDoc {
    /// The description as text.
    pub fn text(self) -> Text {
        match self {
            PartDoc::Words(w) => Text::own_words(w),
            PartDoc::Decompressed { len, codec } => {
                format!("{len} bytes after {codec} decompression; offsets below index this buffer")
                    .into()
            }
        }
    }
}

/// A part's value: none (the record, a header), a number, bytes (`None`:
/// null), whose text preview is the line's note, or a decompressed buffer.
#[derive(Clone, Copy, Debug)]
pub enum PartValue<'a> {
    None,
    Int(i64),
    /// A checksum.
    Uint(u64),
    Bytes(Option<&'a [u8]>),
    /// A batch's records decompressed, whole (no preview).
    Buffer(&'a Bytes),
}

impl<'a> PartLine<'a> {
    pub(super) fn new(
        name: Name,
        ty: &'static str,
        (at, len): (usize, usize),
        value: PartValue<'a>,
        (region, role, kind): (Region, Role, Kind),
    ) -> Self {
        PartLine {
            name,
            ty,
            at,
            len,
            value,
            note: None,
            doc: None,
            region,
            role,
            kind,
            wire: Wire::Other,
            inner: false,
        }
    }

    /// Its node, for the views that hold nodes; bytes are sliced from
    /// `buf`, the buffer its offsets index.
    #[inline(always)]
    pub(super) fn into_node(self, buf: &Bytes) -> Node {
        let value = match self.value {
            PartValue::None => Value::None,
            PartValue::Int(v) => Value::Int(v),
            PartValue::Uint(v) => Value::Uint(v),
            PartValue::Bytes(None) => Value::Bytes(None),
            PartValue::Buffer(b) => Value::Bytes(Some(b.clone())),
            PartValue::Bytes(Some(_)) => {
                let range = self.at..self.at + self.len;
                Value::Bytes(buf.get(range.clone()).map(|_| buf.slice(range)))
            }
        };
        let mut n = Node::of(
            self.name,
            Text::own_words(self.ty),
            (self.at, self.len),
            value,
            self.region,
            (self.role, self.kind),
        );
        n.wire = self.wire;
        n.doc = self.doc.map(PartDoc::text);
        n.note = self.note;
        n
    }
}

/// `Record[i]`, `len` bytes at `at`.
pub(super) fn record_line((i, at, len): (usize, usize, usize)) -> PartLine<'static> {
    let what = (
        Region::Record,
        Role::Element,
        Kind::Record(RecordPart::Record),
    );
    let name = Name::own_indexed(&"Record", i);
    PartLine::new(name, "Record", (at, len), PartValue::None, what)
}

/// A record's length (`n` bytes at `at`).
pub(super) fn length_line(at: usize, n: usize, len: i32) -> PartLine<'static> {
    let PartField { name, wire, .. } = RECORD_LAYOUT[0];
    let what = (Region::Record, Role::Encoding, Kind::Plain);
    let mut l = PartLine::new(own(name), wire.name(), (at, n), int(len.into()), what);
    (l.wire, l.doc) = (wire, Some(PartDoc::Words(LENGTH_DOC)));
    l
}

/// Record field `f` with value `v`, `len` bytes at `at`.
pub(super) fn field_line(
    (name, wire, part): RecordField,
    at: usize,
    len: usize,
    v: i64,
) -> PartLine<'static> {
    let what = (Region::Record, Role::Encoding, Kind::Record(part));
    let mut l = PartLine::new(own(name), wire.name(), (at, len), int(v), what);
    l.wire = wire;
    l
}

/// A record's offsetDelta, noted with the offset it gives.
pub(super) fn offset_delta_line(
    at: usize,
    n: usize,
    od: i32,
    base_offset: i64,
) -> PartLine<'static> {
    let mut l = field_line(record_field(3), at, n, od.into());
    l.note = Some(Note::offset(base_offset.wrapping_add(od.into())));
    l
}

/// A record's header count (`n` bytes at `at`), whose line spans the
/// `len` bytes of the headers after it too.
pub(super) fn headers_line((at, n): (usize, usize), count: i32, len: usize) -> PartLine<'static> {
    let mut l = field_line(record_field(8), at, n, count.into());
    (l.doc, l.len) = (Some(PartDoc::Words(HEADERS_DOC)), len);
    l
}

/// `Header[j]` at `at`.
pub(super) fn header_line(j: usize, (at, len): (usize, usize)) -> PartLine<'static> {
    let what = (Region::Record, Role::Element, Kind::Plain);
    let name = Name::own_indexed(&"Header", j);
    PartLine::new(name, "Header", (at, len), PartValue::None, what)
}

/// The length of record bytes (`keyLength` …), written as `form` says.
pub(super) fn bytes_length_line(
    name: &'static str,
    (wire, region): BytesForm,
    at: usize,
    n: usize,
    len: i32,
) -> PartLine<'static> {
    let what = (region, Role::Encoding, Kind::BytesLength);
    let mut l = PartLine::new(own(name), wire.name(), (at, n), int(len.into()), what);
    l.wire = wire;
    l
}

/// Record bytes of `part` at `buf[start..start + len]` (`None`: null), in `region`.
pub(super) fn bytes_line<'a>(
    buf: &'a [u8],
    (name, _, kind): BytesPart,
    region: Region,
    start: usize,
    len: Option<usize>,
) -> PartLine<'a> {
    // Bytes not in `buf` (no walk makes such a slot) are null, as their node has them.
    let value = PartValue::Bytes(len.and_then(|len| buf.get(start..start + len)));
    let what = (region, Role::Encoding, kind);
    let mut l = PartLine::new(
        own(name),
        Wire::Bytes.name(),
        (start, len.unwrap_or(0)),
        value,
        what,
    );
    l.wire = Wire::Bytes;
    l
}

/// The record field at `k` in [`RECORD_LAYOUT`], which names its part.
const fn record_field(k: usize) -> RecordField {
    let f = RECORD_LAYOUT[k];
    match f.part {
        Some(part) => (f.name, f.wire, part),
        None => panic!("a record field without a part"),
    }
}

pub(super) const RECORD_ATTRIBUTES: RecordField = record_field(1);
pub(super) const TIMESTAMP_DELTA: RecordField = record_field(2);

/// Where a line goes in its batch's tree: its depth under the batch (the
/// batch is 0, its header's fields and its records 1, a record's fields 2,
/// a header 3, a header's fields 4), and whether it ends its parent's
/// children (said of the lines with children).
pub type Depth = (u8, bool);

/// Each line of record `index` at slot `i` (`rec`) of a plain topic's
/// uncompressed batch with base offset `base_offset`, whose bytes `buf`
/// holds, handed to `each` in order with where it goes (`last`: the record
/// ends its batch's children). `None`, with
/// nothing handed on, when the record needs its nodes: a finding under
/// it, or a key or value in Schema Registry framing. The nodes of the
/// same record (`nodes`) are built from the same lines.
pub(crate) fn plain_record_lines<'a, E>(
    buf: &'a [u8],
    tape: &Values,
    (i, rec): (u32, &Slot),
    (index, base_offset, last): (u32, i64, bool),
    each: &mut impl FnMut(PartLine<'a>, Depth) -> Result<(), E>,
) -> Option<Result<(), E>> {
    let needs_nodes = |s: &Slot| matches!(s.id, Id::Finding(_) | Id::Bytes { framed: true, .. });
    if tape.children(i).any(|(_, s)| needs_nodes(s)) {
        return None;
    }
    Some(record_lines(
        buf,
        tape,
        (i, rec),
        (index, base_offset, last),
        each,
    ))
}

/// [`plain_record_lines`] for any record, framed or with a finding: what
/// its lines say; the nodes built from them (`nodes`) add the rest.
pub(super) fn record_lines<'a, E>(
    buf: &'a [u8],
    tape: &Values,
    (i, rec): (u32, &Slot),
    (index, base_offset, last): (u32, i64, bool),
    each: &mut impl FnMut(PartLine<'a>, Depth) -> Result<(), E>,
) -> Result<(), E> {
    let record = (index as usize, rec.at as usize, rec.len as usize);
    each(record_line(record), (1, last))?;
    if let Val::Int(len) = rec.value {
        let line = length_line(rec.at as usize, usize::from(rec.prefix), len as i32);
        each(line, (2, false))?;
    }
    for (j, s) in tape.children(i) {
        let (at, len) = (s.at as usize, s.len as usize);
        let v = super::order::slot_int(s.value);
        let line = match s.id {
            Id::RecordField(Field::Attributes) => field_line(RECORD_ATTRIBUTES, at, 1, v),
            Id::RecordField(Field::TimestampDelta) => field_line(TIMESTAMP_DELTA, at, len, v),
            Id::RecordField(Field::OffsetDelta) => {
                offset_delta_line(at, len, v as i32, base_offset)
            }
            Id::Bytes { of, .. } => {
                let part = match of {
                    BytesOf::Key => KEY,
                    _ => VALUE,
                };
                bytes_lines(buf, s, (part, 2), each)?;
                continue;
            }
            Id::Headers => {
                // The record's last part: its headers end the record's children.
                let count = headers_line((at, usize::from(s.prefix)), v as i32, len);
                each(count, (2, true))?;
                let headers = || {
                    tape.children(j)
                        .filter(|(_, h)| matches!(h.id, Id::Header(_)))
                };
                let last_header = headers().last().map(|(h, _)| h);
                for (hi, hs) in headers() {
                    let Id::Header(k) = hs.id else { continue };
                    let header = header_line(k as usize, (hs.at as usize, hs.len as usize));
                    each(header, (3, Some(hi) == last_header))?;
                    for (_, b) in tape.children(hi) {
                        let part = match b.id {
                            Id::Bytes {
                                of: BytesOf::HeaderKey,
                                ..
                            } => HEADER_KEY,
                            Id::Bytes {
                                of: BytesOf::HeaderValue,
                                ..
                            } => HEADER_VALUE,
                            _ => continue,
                        };
                        bytes_lines(buf, b, (part, 4), each)?;
                    }
                }
                continue;
            }
            _ => continue,
        };
        each(line, (2, false))?;
    }
    Ok(())
}

/// A length and the bytes after it (or null; or the length alone, when
/// the bytes were not all there) of a record's `part` at slot `s`, at `depth`.
fn bytes_lines<'a, E>(
    buf: &'a [u8],
    s: &Slot,
    (part, depth): (BytesPart, u8),
    each: &mut impl FnMut(PartLine<'a>, Depth) -> Result<(), E>,
) -> Result<(), E> {
    let (at, n) = (s.at as usize, usize::from(s.prefix));
    let (len, span) = written(s);
    each(
        bytes_length_line(part.1, RECORD_BYTES, at, n, len),
        (depth, false),
    )?;
    let start = at + n;
    let bytes = match span {
        Some(len) => bytes_line(buf, part, RECORD_BYTES.1, start, Some(len)),
        None if len < 0 => bytes_line(buf, part, RECORD_BYTES.1, start, None),
        None => return Ok(()),
    };
    each(bytes, (depth, false))
}

/// The length of bytes as written, and the bytes' count when they are there.
pub(super) fn written(s: &Slot) -> (i32, Option<usize>) {
    match s.value {
        Val::Bytes(span) => (span.len as i32, Some(span.len as usize)),
        Val::Int(len) => (len as i32, None),
        _ => (0, None),
    }
}

/// A name in kwire's own words (the record format's).
fn own(name: &'static str) -> Name {
    Text::own_words(name).into()
}

fn int(v: i64) -> PartValue<'static> {
    PartValue::Int(v)
}
