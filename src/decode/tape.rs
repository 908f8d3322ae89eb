//! The tape: the decoder's one representation of a frame. A flat list of
//! small copyable slots (identity, value, offset, length, length-prefix
//! width, over-long varints, where its children end), in the order the bytes
//! are read: what a tree view shows of a field, without reading its length
//! prefix again. The walks that
//! fill it are [`super::values`] (structs, arrays, primitives, tagged
//! sections) and `super::records::tape` (record batches).

use super::problem::DecodeError;
use crate::schema::Primitive;

/// A frame's values: the header's and the body's structs, each a slot
/// followed by its subtree.
#[derive(Clone, Debug, Default)]
pub struct Values {
    pub slots: Vec<Slot>,
    /// The header struct's slot.
    pub header: Option<u32>,
    /// The body struct's slot.
    pub body: Option<u32>,
    /// Annotated tapes: the decompressed data of compressed record batches,
    /// which the children of their [`Id::Compressed`] slots index.
    pub buffers: Vec<bytes::Bytes>,
    /// Annotated tapes: what the record walk found at its [`Id::Finding`] slots.
    pub findings: Vec<Finding>,
    /// Values-only tapes: damage in record data, which the tape keeps as
    /// bytes but checks (`crate::decode::records::tape::check_batches`).
    pub record_damage: Vec<DecodeError>,
    /// Annotated tapes that stopped part-way: where, so that the tree shows it
    /// (boxed: a tape is moved in and out of its cache for every struct).
    pub stopped: Option<Box<Stopped>>,
}

/// Where an annotated tape stopped. The slots up to there are kept; the open
/// ones were closed where decoding stopped, and the failing slot's bytes are
/// those it read before its read failed (a length, a count, a tag and size).
#[derive(Clone, Debug)]
pub struct Stopped {
    /// The innermost slot open when a read failed: the field, element, tagged
    /// section or tagged entry the error belongs to.
    pub slot: u32,
    /// Where the bytes shown with the error end: up to 16 past its offset, within what could be read there.
    pub end: usize,
    pub error: DecodeError,
}

/// One field, array element, tagged entry or record part. Its children are
/// the slots after it, up to `end`.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// The field's name as a JSON key with its colon (`"GroupId":`); empty for
    /// others. Behind a thin pointer, which keeps a slot at 48 bytes.
    pub key: &'static &'static str,
    /// The value; on annotated tapes, a string's or bytes' length as written
    /// (`Val::Int`) when its bytes were not all there.
    pub value: Val,
    /// The index after this slot's subtree.
    pub end: u32,
    /// Where the slot's bytes start in the frame, and how many there are
    /// (length prefixes and markers included). Values-only tapes, which need
    /// neither, may leave a container's `len` and a `prefix` 0.
    pub at: u32,
    pub len: u32,
    /// The bytes of encoding before the value: a string's, bytes' or array's
    /// length prefix, a tagged section's count, a tagged entry's tag.
    pub prefix: u8,
    /// What was marked on the slot: on annotated tapes, which of its varints
    /// were written with more bytes than their value needs (legal, but no
    /// writer needs it: [`OVERLONG_PREFIX`], [`OVERLONG_SIZE`]); on values
    /// tapes, a credential masked in the frame ([`REDACTED`]).
    pub marks: u8,
    /// What the slot is.
    pub id: Id,
}

/// [`Slot::marks`]: the varint of its `prefix` (a compact length or count,
/// a tagged section's count, a tagged entry's tag).
pub const OVERLONG_PREFIX: u8 = 1;
/// [`Slot::marks`]: a tagged entry's size.
pub const OVERLONG_SIZE: u8 = 2;
/// [`Slot::marks`]: a credential, whose bytes were masked in the frame
/// (`crate::decode::secrets`): the contract says so instead of showing them.
pub const REDACTED: u8 = 4;
/// [`Slot::marks`], annotated tapes: an array whose elements were left off
/// the tape for the view that draws it (`super::values::Leave`); its value
/// is still its count, and its bytes all of its elements'.
pub const ELEMENTS_LEFT: u8 = 8;
/// [`Slot::marks`], annotated tapes: a records field whose batches were left
/// off the tape for the view that draws it to walk (`super::values::Leave`):
/// the walk that builds the tree reads this, never decides again.
pub const RECORDS_LEFT: u8 = 16;

/// What a slot is, with what tells it from its siblings (a field's place in
/// its struct's declaration, a tag, an index, a buffer), so that no reader
/// recovers meaning from a number's position or an overloaded integer.
/// Eight bytes: the record parts are flat variants, not a nested enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Id {
    /// A header or body struct.
    Message,
    /// A field: its index in its struct's fields as declared (`FieldPlan::decl`).
    Field(u16),
    Element,
    /// A tagged field the definitions do not know at this version: its tag.
    UnknownTag(u32),
    /// Annotated tapes only ([`super::values::decode_annotated`]): a flexible
    /// struct's tagged section (its value the count), one entry of it (its
    /// tag and how many bytes its size took, the tag's in `prefix`; the
    /// value its size; the field or unknown tag is its child), and a
    /// nullable struct's presence marker (its value as read; the struct's
    /// first child).
    TaggedSection,
    TagEntry {
        tag: u32,
        size_width: u8,
    },
    Marker,
    /// Annotated tapes only: record data, as `super::records::tape` writes
    /// it. A RecordBatch v2 (its index among its stream's batches), a legacy
    /// message (its index; its value the magic), bytes that are not a batch,
    /// bytes a budget left undecoded, a batch cut by the end (its value the
    /// size it declares), a record of a v2 batch (its index; its value the
    /// length, `prefix` the length's width).
    Batch(u32),
    LegacyMessage(u32),
    NotABatch,
    OverBudget,
    PartialBatch,
    Record(u32),
    /// A field of a v2 batch header other than its checksum: its index in
    /// [`super::records::layout::V2_FIELDS`].
    BatchField(u8),
    /// A legacy message's field other than its checksum, key and value: its
    /// index in the message's fields (offset, messageSize, crc, magic,
    /// attributes, timestamp).
    MessageField(u8),
    /// A batch's or message's checksum (the value as stored), with the
    /// checksum its bytes have.
    Checksum {
        computed: u32,
    },
    /// The records of a batch whose codec is unknown, as bytes.
    UnknownCodecRecords,
    /// A record's attributes, timestampDelta or offsetDelta.
    RecordField(RecordField),
    /// A length and its bytes: the value the bytes, or the length as written
    /// (`Val::Int`) when they are null or not all there; `prefix` the
    /// length's width; `framed` when a plain topic's key or value is in
    /// Schema Registry framing.
    Bytes {
        of: BytesOf,
        framed: bool,
    },
    /// A record's headers (their value the count) and one header (its index).
    Headers,
    Header(u32),
    /// A compressed batch's records or a wrapper message's message set,
    /// decompressed: the index of their data in [`Values::buffers`], whose
    /// offsets the children's give.
    Compressed(u32),
    /// The same when it did not decompress (a finding says why).
    NotDecompressed,
    /// What the walk found wrong or worth a warning there: its index in
    /// [`Values::findings`]; its parent's node shows the error, if any.
    Finding(u32),
    /// The root of batches walked on a tape of their own (a log segment's,
    /// one batch of a deferred records field).
    Stream,
}

/// A v2 record's fixed fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordField {
    Attributes,
    TimestampDelta,
    OffsetDelta,
}

/// Which bytes a [`Id::Bytes`] slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BytesOf {
    /// A record's or legacy message's key.
    Key,
    /// A record's or legacy message's value.
    Value,
    HeaderKey,
    HeaderValue,
}

/// The kinds of slot, for readers that ask what a slot is without what
/// tells it from its siblings ([`Slot::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    Message,
    Field,
    Element,
    UnknownTag,
    TaggedSection,
    TagEntry,
    Marker,
    Batch,
    LegacyMessage,
    /// Bytes that are not a batch, or that a budget left undecoded.
    Invalid,
    PartialBatch,
    Record,
    /// A batch header field, a record's field, bytes or headers, a message's field.
    Part,
    /// Compressed data, decompressed or not.
    Compressed,
    Finding,
    Stream,
}

impl Slot {
    pub fn kind(&self) -> SlotKind {
        match self.id {
            Id::Message => SlotKind::Message,
            Id::Field(_) => SlotKind::Field,
            Id::Element => SlotKind::Element,
            Id::UnknownTag(_) => SlotKind::UnknownTag,
            Id::TaggedSection => SlotKind::TaggedSection,
            Id::TagEntry { .. } => SlotKind::TagEntry,
            Id::Marker => SlotKind::Marker,
            Id::Batch(_) => SlotKind::Batch,
            Id::LegacyMessage(_) => SlotKind::LegacyMessage,
            Id::NotABatch | Id::OverBudget => SlotKind::Invalid,
            Id::PartialBatch => SlotKind::PartialBatch,
            Id::Record(_) => SlotKind::Record,
            Id::BatchField(_)
            | Id::MessageField(_)
            | Id::Checksum { .. }
            | Id::UnknownCodecRecords
            | Id::RecordField(_)
            | Id::Bytes { .. }
            | Id::Headers
            | Id::Header(_) => SlotKind::Part,
            Id::Compressed(_) | Id::NotDecompressed => SlotKind::Compressed,
            Id::Finding(_) => SlotKind::Finding,
            Id::Stream => SlotKind::Stream,
        }
    }

    /// A field's index in its struct's fields as declared.
    pub fn decl(&self) -> Option<u16> {
        match self.id {
            Id::Field(d) => Some(d),
            _ => None,
        }
    }

    /// The tag of a tagged entry or an unknown tag.
    pub fn tag(&self) -> Option<u32> {
        match self.id {
            Id::TagEntry { tag, .. } | Id::UnknownTag(tag) => Some(tag),
            _ => None,
        }
    }

    /// The index in [`Values::buffers`] of decompressed data.
    pub fn buffer(&self) -> Option<usize> {
        match self.id {
            Id::Compressed(b) => Some(b as usize),
            _ => None,
        }
    }

    /// The index in [`Values::findings`] of a finding.
    pub fn finding(&self) -> Option<usize> {
        match self.id {
            Id::Finding(f) => Some(f as usize),
            _ => None,
        }
    }
}

/// A finding of the record walk: the error its parent's node shows, the
/// damage it reports (placed in the input, as [`Values::record_damage`]) and
/// the warning the tree views print.
#[derive(Clone, Debug)]
pub struct Finding {
    pub error: Option<String>,
    pub damage: Option<DecodeError>,
    pub warning: Option<super::problem::Warning>,
}

pub(crate) type Key = &'static &'static str;

/// The key of slots that are not fields.
pub(crate) const NO_KEY: Key = &"";

/// A value as bytes of the frame where the frame already holds it (strings,
/// bytes, uuids), so that decoding copies and validates nothing a renderer may not need.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// Null, or nothing read (decoding stopped at this field).
    Null,
    Int(i64),
    Uint(u64),
    Float(f64),
    Bool(bool),
    /// String bytes (UTF-8 is checked when written out).
    Str(Span),
    Bytes(Span),
    /// Offset of the 16 bytes.
    Uuid(u32),
    /// An array of this many elements as written; its elements are the
    /// slot's children (fewer when the tape stopped in them).
    Array(u32),
    /// Values-only tapes: an array of fixed-width primitives whose bytes were
    /// all there, kept as its bytes instead of a slot per element (an array of
    /// replica ids would otherwise cost 48 bytes of tape per 4 bytes of frame).
    /// [`Packed::values`] gives the elements.
    Packed(Packed),
    /// A struct; its fields are the slot's children.
    Struct,
}

/// A range of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub at: u32,
    pub len: u32,
}

/// The elements of a packed array: `count` values of `ty` from `at` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed {
    pub at: u32,
    pub count: u32,
    pub ty: Primitive,
}

impl Packed {
    /// The elements' values, read from `frame` (which holds them all).
    pub fn values<'b>(&self, frame: &'b [u8]) -> impl Iterator<Item = Val> + 'b {
        let (ty, at, w) = (
            self.ty,
            self.at as usize,
            self.ty.fixed_width().unwrap_or(0),
        );
        (0..self.count as usize).map(move |k| fixed_value(ty, frame, at + k * w))
    }
}

impl Val {
    /// A uuid's sixteen bytes, read from `frame` (none for other values).
    pub(crate) fn uuid_in(&self, frame: &[u8]) -> Option<[u8; 16]> {
        let Val::Uuid(at) = *self else { return None };
        frame
            .get(at as usize..)
            .and_then(|b| b.first_chunk::<16>())
            .copied()
    }

    /// An array, with its elements as slots or packed.
    pub(crate) fn is_array(&self) -> bool {
        matches!(self, Val::Array(_) | Val::Packed(_))
    }
}

impl Span {
    pub fn of<'b>(&self, frame: &'b [u8]) -> &'b [u8] {
        let at = self.at as usize;
        frame.get(at..at + self.len as usize).unwrap_or_default()
    }
}

impl Values {
    /// Empty this tape for a frame of `len` bytes (present, not declared), its
    /// memory kept (in place: a tape moved by value cost a copy each time), with
    /// room for that frame's values as fields take a few bytes each (an
    /// annotated tape of a Metadata response, a slot per 2.8 bytes): large
    /// frames then fill their tape without copying it as it grows. Bounded; it
    /// grows past that as needed. Room not used is not touched.
    #[inline(always)]
    pub(crate) fn reuse_for(&mut self, len: usize) {
        (self.header, self.body) = (None, None);
        // Most frames have none of these: no drop to run.
        if self.stopped.is_some() {
            self.stopped = None;
        }
        if !self.buffers.is_empty() || !self.findings.is_empty() || !self.record_damage.is_empty() {
            self.buffers.clear();
            self.findings.clear();
            self.record_damage.clear();
        }
        self.slots.clear();
        let want = (len / 2 + 4).min(MAX_SLOTS_RESERVED);
        if self.slots.capacity() < want {
            // Growing in place would copy all of the old room (the allocator
            // cannot know it is unused): the empty tape starts afresh instead.
            self.slots = Vec::with_capacity(want);
        }
    }

    /// The children of slot `i`, in order.
    pub fn children(&self, i: u32) -> impl Iterator<Item = (u32, &Slot)> + '_ {
        let end = self.slots.get(i as usize).map_or(i, |s| s.end);
        let mut next = i + 1;
        std::iter::from_fn(move || {
            if next >= end {
                return None;
            }
            let at = next;
            let slot = self.slots.get(at as usize)?;
            next = slot.end.max(at + 1);
            Some((at, slot))
        })
    }
}

/// Push a slot with its bytes (`at`, `len`, `prefix`) and no children yet;
/// returns its index.
#[inline(always)]
pub(crate) fn push_slot(
    slots: &mut Vec<Slot>,
    key: Key,
    id: Id,
    value: Val,
    (at, len, prefix): (usize, usize, usize),
) -> usize {
    let end = slots.len() as u32 + 1;
    slots.push(Slot {
        key,
        value,
        end,
        at: at as u32,
        len: len as u32,
        prefix: prefix as u8,
        marks: 0,
        id,
    });
    slots.len() - 1
}

/// Close slot `i`: its children are the slots pushed since, its bytes end at `end_at`.
#[inline]
pub(crate) fn close_slot(slots: &mut [Slot], i: usize, end_at: usize) {
    let end = slots.len() as u32;
    if let Some(s) = slots.get_mut(i) {
        s.end = end;
        s.len = (end_at as u32).saturating_sub(s.at);
    }
}

/// Slots reserved ahead for a frame at most (48 MiB).
const MAX_SLOTS_RESERVED: usize = 1 << 20;

/// The value of fixed-width primitive `p` at `buf[at..]`, whose bytes the caller
/// has checked are there (else null).
#[inline]
pub(crate) fn fixed_value(p: Primitive, buf: &[u8], at: usize) -> Val {
    let Some(b) = buf.get(at..) else {
        return Val::Null;
    };
    fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
        b.first_chunk::<N>().copied()
    }
    let v = match p {
        Primitive::Bool => be::<1>(b).map(|x| Val::Bool(x[0] != 0)),
        Primitive::Int8 => be::<1>(b).map(|x| Val::Int(i8::from_be_bytes(x).into())),
        Primitive::Int16 => be::<2>(b).map(|x| Val::Int(i16::from_be_bytes(x).into())),
        Primitive::Uint16 => be::<2>(b).map(|x| Val::Uint(u16::from_be_bytes(x).into())),
        Primitive::Int32 => be::<4>(b).map(|x| Val::Int(i32::from_be_bytes(x).into())),
        Primitive::Uint32 => be::<4>(b).map(|x| Val::Uint(u32::from_be_bytes(x).into())),
        Primitive::Int64 => be::<8>(b).map(|x| Val::Int(i64::from_be_bytes(x))),
        Primitive::Float64 => be::<8>(b).map(|x| Val::Float(f64::from_be_bytes(x))),
        Primitive::Uuid => (b.len() >= 16).then_some(Val::Uuid(at as u32)),
        Primitive::String | Primitive::Bytes | Primitive::Records => None,
    };
    v.unwrap_or(Val::Null)
}
