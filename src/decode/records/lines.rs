//! A plain record's tree read straight from its slots, one line at a time:
//! what its nodes would hold (`replay` builds them by the same
//! layout), without building them. The text tree draws a plain topic's
//! uncompressed records so (most of a Produce or Fetch frame's lines), and
//! builds nodes for the rest: records with a finding, in Schema Registry
//! framing, of control batches and internal topics, in compressed batches.

use super::batch::{HEADERS_DOC, HEADER_COUNT, LENGTH_DOC, OFFSET_DELTA, RECORD_BYTES};
use super::layout::{PartField, RECORD_HEADER_LAYOUT, RECORD_LAYOUT};
use crate::decode::tape::{BytesOf, Id, RecordField, Slot, Val, Values};
use crate::decode::Name;
use crate::text::Text;

/// One line of a record's tree: its depth under the record (the record is
/// 0, its fields 1, a header 2, a header's fields 3), and what its node
/// would show.
#[derive(Clone, Debug)]
pub struct PartLine<'a> {
    pub depth: u8,
    pub name: Name,
    /// The type as shown (`varint`, `bytes`, `Record`).
    pub ty: &'static str,
    pub at: usize,
    pub len: usize,
    pub value: PartValue<'a>,
    /// An offsetDelta's offset (the batch's base offset plus the delta).
    pub offset: Option<i64>,
    pub doc: Option<&'static str>,
}

/// A part's value: none (the record, a header), a number, or bytes (`None`:
/// null), whose text preview is the line's note.
#[derive(Clone, Copy, Debug)]
pub enum PartValue<'a> {
    None,
    Int(i64),
    Bytes(Option<&'a [u8]>),
}

/// The lines of record `index` at slot `i` (`rec`) of a plain topic's
/// uncompressed batch with base offset `base_offset`, whose bytes `buf`
/// holds, appended to `out`; false (with `out` as it was) when the record
/// needs its nodes: a finding under it, or a key or value in Schema
/// Registry framing.
pub(crate) fn plain_record_lines<'a>(
    buf: &'a [u8],
    tape: &Values,
    (i, rec): (u32, &Slot),
    index: u32,
    base_offset: i64,
    out: &mut Vec<PartLine<'a>>,
) -> bool {
    let start = out.len();
    let line = |depth, name, ty, (at, len), value| PartLine {
        depth,
        name,
        ty,
        at,
        len,
        value,
        offset: None,
        doc: None,
    };
    out.push(line(
        0,
        Name::own_indexed(&"Record", index as usize),
        "Record",
        (rec.at as usize, rec.len as usize),
        PartValue::None,
    ));
    if let Val::Int(len) = rec.value {
        let f = RECORD_LAYOUT[0];
        let at = (rec.at as usize, usize::from(rec.prefix));
        let mut l = line(1, own(f.name), f.wire.name(), at, int32(len));
        l.doc = Some(LENGTH_DOC);
        out.push(l);
    }
    for (j, s) in tape.children(i) {
        let at = (s.at as usize, s.len as usize);
        let v = super::order::slot_int(s.value);
        match s.id {
            Id::RecordField(RecordField::Attributes) => {
                let f = RECORD_LAYOUT[1];
                out.push(line(1, own(f.name), f.wire.name(), (at.0, 1), int(v)));
            }
            Id::RecordField(RecordField::TimestampDelta) => {
                let f = RECORD_LAYOUT[2];
                out.push(line(1, own(f.name), f.wire.name(), at, int(v)));
            }
            Id::RecordField(RecordField::OffsetDelta) => {
                let (name, wire, _) = OFFSET_DELTA;
                let mut l = line(1, own(name), wire.name(), at, int32(v));
                l.offset = Some(base_offset.wrapping_add(i64::from(v as i32)));
                out.push(l);
            }
            Id::Bytes { framed: true, .. } | Id::Finding(_) => {
                out.truncate(start);
                return false;
            }
            Id::Bytes { of, .. } => {
                let k = if of == BytesOf::Key { 5 } else { 7 };
                bytes_lines(buf, s, (1, RECORD_LAYOUT[k]), out);
            }
            Id::Headers => {
                let (name, wire, _) = HEADER_COUNT;
                // Its line spans the headers after the count.
                let mut l = line(1, own(name), wire.name(), at, int32(v));
                l.doc = Some(HEADERS_DOC);
                out.push(l);
                for (hi, hs) in tape.children(j) {
                    let Id::Header(k) = hs.id else { continue };
                    let range = (hs.at as usize, hs.len as usize);
                    out.push(line(
                        2,
                        Name::own_indexed(&"Header", k as usize),
                        "Header",
                        range,
                        PartValue::None,
                    ));
                    for (_, b) in tape.children(hi) {
                        let k = match b.id {
                            Id::Bytes {
                                of: BytesOf::HeaderKey,
                                ..
                            } => 1,
                            Id::Bytes {
                                of: BytesOf::HeaderValue,
                                ..
                            } => 3,
                            _ => continue,
                        };
                        bytes_lines(buf, b, (3, RECORD_HEADER_LAYOUT[k]), out);
                    }
                }
            }
            _ => {}
        }
    }
    true
}

/// A length and the bytes after it (or null; or the length alone, when the
/// bytes were not all there), at `depth`, as the layout's bytes field `f`.
fn bytes_lines<'a>(
    buf: &'a [u8],
    s: &Slot,
    (depth, f): (u8, PartField),
    out: &mut Vec<PartLine<'a>>,
) {
    let (at, n) = (s.at as usize, usize::from(s.prefix));
    let (written, span) = match s.value {
        Val::Bytes(span) => (span.len as i32, Some(span.len as usize)),
        Val::Int(len) => (len as i32, None),
        _ => (0, None),
    };
    let ty = crate::decode::Wire::Bytes.name();
    out.push(PartLine {
        depth,
        name: own(f.sized_by.unwrap_or_default()),
        ty: RECORD_BYTES.0.name(),
        at,
        len: n,
        value: PartValue::Int(written.into()),
        offset: None,
        doc: None,
    });
    let start = at + n;
    let value = match span {
        Some(len) => PartValue::Bytes(Some(buf.get(start..start + len).unwrap_or_default())),
        None if written < 0 => PartValue::Bytes(None),
        None => return,
    };
    out.push(PartLine {
        depth,
        name: own(f.name),
        ty,
        at: start,
        len: span.unwrap_or(0),
        value,
        offset: None,
        doc: None,
    });
}

/// A name in kwire's own words (the record format's).
fn own(name: &'static str) -> Name {
    Text::own_words(name).into()
}

fn int(v: i64) -> PartValue<'static> {
    PartValue::Int(v)
}

/// A varint field's value as its node holds it (read as an int32).
fn int32(v: i64) -> PartValue<'static> {
    PartValue::Int(i64::from(v as i32))
}
