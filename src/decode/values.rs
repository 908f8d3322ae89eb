//! The schema-driven decoder onto a tape: a frame's fields in a flat list of
//! small copyable slots (value, offset, length, length-prefix width) instead
//! of a tree of nodes.
//!
//! It follows the message's [`StructPlan`] at the frame's version and stops
//! at the first read that fails, with its error. Two tapes:
//! - values only ([`decode_message`], a frame's header and body by
//!   [`decode_header_and_body`]), for the JSON contract (`--format json`):
//!   record batches and consumer-protocol bytes stay bytes, printed as hex;
//! - annotated ([`decode_annotated`]): also every tagged section, tagged entry
//!   and presence marker, plain record batches (`crate::decode::records::tape`)
//!   and where decoding stopped ([`Stopped`]), so that the tree views' nodes,
//!   a partial tree's included, are built from it ([`super::fields`]' walk).
//!
//! An annotated decode for a view that draws as it goes may leave parts off
//! its tape ([`Leave`]): large records fields' batches, and the elements of
//! large arrays of primitives and of plain structs, which the view walks
//! one at a time.

use super::problem::{DecodeError, ErrorKind};
use super::reader::Reader;
use super::tape::{
    close_slot, fixed_value, push_slot, Finding, Id, Key, Packed, Slot, Span, Stopped, Val, Values,
    ELEMENTS_LEFT, NO_KEY, OVERLONG_PREFIX, OVERLONG_SIZE, RECORDS_LEFT,
};
use crate::budget::Budget;
use crate::schema::plan::{Element, FieldPlan, Op, Shape, StructPlan};
use crate::schema::LengthPrefix;
use crate::schema::Primitive;

type Res = Result<(), DecodeError>;

/// A struct decoded onto a tape: its slot, where reading stopped, and the
/// error if it did not finish.
pub type Decoded = (u32, usize, Res);

/// Decode the struct `plan` from `frame[start..]` onto `values` as one
/// message slot.
pub fn decode_message(
    frame: &[u8],
    start: usize,
    plan: &StructPlan,
    values: &mut Values,
) -> Decoded {
    let (slot, _, end, res) =
        decode_onto::<false>(frame, start, (plan, None), values, None, Leave::NOTHING);
    (slot, end, res)
}

/// What an annotated decode leaves off its tape for the view that draws it
/// to walk as it draws: what a frame's whole tree would hold at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leave {
    /// Records fields of more than this many bytes: their slot holds their
    /// bytes and no batches
    /// ([`crate::decode::DecodeOptions::defer_records_over`]).
    pub records_over: usize,
    /// An array of primitives, or of structs that hold no credential (and
    /// no records, unless `record_arrays`), once its elements have taken
    /// more than this many bytes
    /// (fixed-width ones: when they would): its slot keeps its
    /// count and bytes, marked [`ELEMENTS_LEFT`], and no elements
    /// ([`crate::decode::DecodeOptions::defer_elements_over`]). An array
    /// with an element that does not decode is kept whole, so that a
    /// partial tree shows where it stopped, unless `damaged_whole` is off.
    pub elements_over: usize,
    /// Whether a left array with an element that does not decode is read
    /// again whole; when not, the tape stops at the array, with the
    /// element's error ([`crate::decode::DecodeOptions::fits_only`]).
    pub damaged_whole: bool,
    /// Whether arrays of structs that hold records (a Fetch response's
    /// partitions) are left too, under `elements_over`; every records field
    /// in their elements is then left whatever its size, so that no batch
    /// of theirs is decompressed before it is drawn
    /// ([`crate::decode::DecodeOptions::defer_record_arrays`]).
    pub record_arrays: bool,
}

impl Leave {
    /// Everything on the tape.
    pub(crate) const NOTHING: Leave = Leave {
        records_over: usize::MAX,
        elements_over: usize::MAX,
        damaged_whole: true,
        record_arrays: false,
    };
}

/// [`decode_message`] onto an annotated tape: the same slots, plus one for every tagged
/// section, tagged entry and presence marker, so that the tree views can be
/// built from the tape alone. A compressed batch's data is decompressed into
/// [`Values::buffers`] within `budget`.
pub fn decode_annotated(
    frame: &[u8],
    start: usize,
    plan: &StructPlan,
    values: &mut Values,
    budget: &Budget,
) -> Decoded {
    decode_annotated_leaving(frame, start, plan, values, budget, Leave::NOTHING)
}

/// [`decode_annotated`], leaving off the tape what `leave` says, for the
/// view that draws it to walk as it draws.
pub fn decode_annotated_leaving(
    frame: &[u8],
    start: usize,
    plan: &StructPlan,
    values: &mut Values,
    budget: &Budget,
    leave: Leave,
) -> Decoded {
    let (slot, _, end, res) =
        decode_onto::<true>(frame, start, (plan, None), values, Some(budget), leave);
    (slot, end, res)
}

/// One element of an array of `p` (compact or not, as its array: `name`)
/// at `at` in `frame`, as its own slot on the annotated tape `values`: the
/// slot, where the element ends (where it stopped when it did not read),
/// and whether it read.
pub(crate) fn decode_primitive_element(
    frame: &[u8],
    at: usize,
    (p, compact, name): (Primitive, bool, &str),
    values: &mut Values,
) -> (u32, usize, bool) {
    let mut d = ValueDecoder::<true>::over(frame, at, values, (None, Leave::NOTHING, false));
    let e = d.open(NO_KEY, Id::Element);
    let read = d.read_primitive(p, compact, name).map(|(v, prefix)| {
        d.set(e, v);
        d.set_prefix(e, prefix);
    });
    d.close(e);
    (e as u32, d.r.pos(), read.is_ok())
}

/// A frame's header struct and, if given and when the header decoded whole,
/// its body struct right after it, each a message slot ([`Values::header`],
/// [`Values::body`]), in one decode: values only with the record batches of
/// `records` fields checked within `budget` (their damage in
/// [`Values::record_damage`]), or `annotated` (`Some`: records fields of
/// more than that many bytes left unwalked, as [`decode_annotated_leaving`]
/// leaves them; every array's elements kept: analyses read them). Returns where decoding ended, and why if it stopped (in
/// the body when the body has a slot).
#[inline]
pub fn decode_header_and_body(
    frame: &[u8],
    start: usize,
    plans: (&StructPlan, Option<&StructPlan>),
    values: &mut Values,
    annotated: Option<usize>,
    budget: &Budget,
) -> (usize, Res) {
    let (header, body, end, res) = match annotated {
        Some(records_over) => {
            let leave = Leave {
                records_over,
                ..Leave::NOTHING
            };
            decode_onto::<true>(frame, start, plans, values, Some(budget), leave)
        }
        None => decode_onto::<false>(frame, start, plans, values, Some(budget), Leave::NOTHING),
    };
    (values.header, values.body) = (Some(header), body);
    (end, res)
}

/// `plans.0` as a message slot, then `plans.1` (if any) after it when the
/// first decoded whole: their slots, where decoding ended, and why if it stopped.
#[inline(always)]
fn decode_onto<const ANNOTATED: bool>(
    frame: &[u8],
    start: usize,
    plans: (&StructPlan, Option<&StructPlan>),
    values: &mut Values,
    budget: Option<&Budget>,
    leave: Leave,
) -> (u32, Option<u32>, usize, Res) {
    let cut_is_damage = plans.1.unwrap_or(plans.0).cut_batches_are_damage;
    let mut d =
        ValueDecoder::<ANNOTATED>::over(frame, start, values, (budget, leave, cut_is_damage));
    let (first, mut stopped) = d.message(plans.0);
    let second = match plans.1 {
        Some(plan) if !stopped => {
            let (slot, s) = d.message(plan);
            stopped = s;
            Some(slot)
        }
        _ => None,
    };
    let end = d.r.pos();
    let res = match stopped {
        false => Ok(()),
        true => Err(d.error.take().unwrap_or_else(|| DecodeError {
            kind: ErrorKind::Invalid,
            offset: end,
            expected: "a value (decoding stopped without a reason)".into(),
        })),
    };
    if let (Some((slot, shown_end)), Err(error)) = (d.stopped, &res) {
        values.stopped = Some(Box::new(Stopped {
            slot,
            end: shown_end,
            error: error.clone(),
        }));
    }
    (first, second, end, res)
}

/// Decoding stopped; the reason is in [`ValueDecoder::error`]. Small, so that
/// every read's result stays in registers.
struct Stop;

type Step<T = ()> = Result<T, Stop>;

/// `ANNOTATED`: also the slots of [`decode_annotated`].
struct ValueDecoder<'a, 's, const ANNOTATED: bool> {
    r: Reader<'a>,
    slots: &'s mut Vec<Slot>,
    /// Decompressed record data, and the budget it is drawn from (annotated tapes).
    buffers: &'s mut Vec<bytes::Bytes>,
    findings: &'s mut Vec<Finding>,
    budget: Option<&'s Budget>,
    record_damage: &'s mut Vec<DecodeError>,
    /// A batch cut by the end of its records field is damage (a request's body).
    cut_is_damage: bool,
    /// Annotated tapes: what is left off the tape ([`decode_annotated_leaving`]).
    leave: Leave,
    /// Why decoding stopped.
    error: Option<DecodeError>,
    /// Annotated tapes: the slot decoding stopped in, and where the bytes shown with the error end ([`Stopped`]).
    stopped: Option<(u32, usize)>,
}

impl<'a, 's, const ANNOTATED: bool> ValueDecoder<'a, 's, ANNOTATED> {
    /// A decoder of `frame` from `start` onto `values`, within `budget`,
    /// leaving what `leave` says; `cut_is_damage`: a batch cut by the end
    /// of its records field is damage.
    #[inline(always)]
    fn over(
        frame: &'a [u8],
        start: usize,
        values: &'s mut Values,
        (budget, leave, cut_is_damage): (Option<&'s Budget>, Leave, bool),
    ) -> Self {
        let mut r = Reader::new(frame);
        r.seek(start);
        ValueDecoder {
            r,
            slots: &mut values.slots,
            buffers: &mut values.buffers,
            findings: &mut values.findings,
            budget,
            record_damage: &mut values.record_damage,
            cut_is_damage,
            leave,
            error: None,
            stopped: None,
        }
    }
}

impl<const ANNOTATED: bool> ValueDecoder<'_, '_, ANNOTATED> {
    /// The struct `plan` as a message slot from the reader's position: its
    /// slot, and whether decoding stopped in it (the reason in `error`).
    #[inline(always)]
    fn message(&mut self, plan: &StructPlan) -> (u32, bool) {
        let i = push_slot(
            self.slots,
            NO_KEY,
            Id::Message,
            Val::Struct,
            (self.r.pos(), 0, 0),
        );
        let res = self.read_struct(plan);
        self.close(i);
        (i as u32, res.is_err())
    }

    /// A read's value, or [`Stop`] with its error kept.
    #[inline]
    fn ok<T>(&mut self, read: Result<T, DecodeError>) -> Step<T> {
        read.map_err(|e| self.stop(e))
    }

    #[cold]
    fn stop(&mut self, e: DecodeError) -> Stop {
        self.error = Some(e);
        Stop
    }

    #[inline]
    fn open(&mut self, key: Key, id: Id) -> usize {
        let at = self.r.pos() as u32;
        self.slots.push(Slot {
            key,
            value: Val::Null,
            end: 0,
            at,
            len: 0,
            prefix: 0,
            marks: 0,
            id,
        });
        self.slots.len() - 1
    }

    /// A slot whose value and bytes are known: it has no children.
    #[inline(always)]
    fn leaf(&mut self, key: Key, id: Id, value: Val, bytes: (usize, usize, usize)) {
        push_slot(self.slots, key, id, value, bytes);
    }

    #[inline]
    fn close(&mut self, i: usize) {
        if ANNOTATED {
            if self.error.is_some() && self.stopped.is_none() {
                self.stopped_in(i);
            }
            close_slot(self.slots, i, self.r.pos());
        } else {
            // Values-only tapes need no lengths.
            let end = self.slots.len() as u32;
            if let Some(s) = self.slots.get_mut(i) {
                s.end = end;
            }
        }
    }

    /// The first slot closed after a read failed is the one that read failed in.
    #[cold]
    fn stopped_in(&mut self, i: usize) {
        let at = self.error.as_ref().map_or(self.r.pos(), |e| e.offset);
        self.stopped = Some((i as u32, at + self.r.end().saturating_sub(at).min(16)));
    }

    /// Annotated tapes: a records field's batches as the children of its slot
    /// `i` ([`crate::decode::records::tape`]), whatever they hold; the tree's
    /// nodes for them are built from these slots.
    #[inline]
    fn batches(&mut self, i: usize, f: &FieldPlan) {
        if !matches!(f.shape, Shape::Primitive(Primitive::Records))
            || !crate::protocol::record_batch::holds_whole_batches(f.name)
        {
            return;
        }
        let (Some(Val::Bytes(span)), Some(budget)) =
            (self.slots.get(i).map(|s| s.value), self.budget)
        else {
            return;
        };
        let range = (span.at as usize, (span.at + span.len) as usize);
        if !ANNOTATED {
            return crate::decode::records::tape::check_batches(
                self.r.buf(),
                range,
                budget,
                self.cut_is_damage,
                self.record_damage,
            );
        }
        let plausible = crate::decode::records::layout::plausible(
            self.r.buf().get(range.0..range.1).unwrap_or_default(),
        );
        if range.1 - range.0 > self.leave.records_over && plausible {
            if let Some(s) = self.slots.get_mut(i) {
                s.marks |= RECORDS_LEFT;
            }
            return;
        }
        if !plausible {
            return;
        }
        // The topic is not known here: keys and values may be framed as a plain topic's (its nodes show it only for one).
        let mut walk = crate::decode::records::tape::Walk::<true> {
            slots: self.slots,
            buffers: self.buffers,
            findings: self.findings,
            budget,
            plain: true,
            first_index: 0,
            cut_is_damage: self.cut_is_damage,
        };
        walk.stream(self.r.buf(), range);
        let end = self.slots.len() as u32;
        if let Some(s) = self.slots.get_mut(i) {
            s.end = end;
        }
    }

    #[inline]
    fn set_prefix(&mut self, i: usize, prefix: usize) {
        if !ANNOTATED {
            return;
        }
        if let Some(s) = self.slots.get_mut(i) {
            s.prefix = prefix as u8;
        }
    }

    #[inline]
    fn set(&mut self, i: usize, value: Val) {
        if let Some(s) = self.slots.get_mut(i) {
            s.value = value;
        }
    }

    fn read_struct(&mut self, plan: &StructPlan) -> Step {
        let fields = &plan.regular;
        let mut i = 0;
        loop {
            i = self.quick_fields(fields, i);
            let Some(f) = fields.get(i) else { break };
            i += 1;
            self.read_field(f)?;
        }
        match &plan.tagged {
            // The usual tagged section: empty, a single zero byte.
            Some(_) if self.r.remaining() > 0 && self.r.buf().get(self.r.pos()) == Some(&0) => {
                let at = self.r.pos();
                if ANNOTATED {
                    self.leaf(NO_KEY, Id::TaggedSection, Val::Uint(0), (at, 1, 1));
                }
                self.r.seek(at + 1);
                Ok(())
            }
            Some(tagged) => self.read_tagged(tagged),
            None => Ok(()),
        }
    }

    /// [`quick_fields`] from the reader's position on.
    #[inline(always)]
    fn quick_fields(&mut self, fields: &[FieldPlan], i: usize) -> usize {
        let (i, pos) = quick_fields::<ANNOTATED>(
            fields,
            i,
            self.r.buf(),
            (self.r.pos(), self.r.end()),
            (self.slots, self.leave.elements_over),
        );
        self.r.seek(pos);
        i
    }

    fn read_field(&mut self, f: &FieldPlan) -> Step {
        let i = self.open(f.json_key, Id::Field(f.decl));
        let res = match &f.shape {
            Shape::Primitive(p) => self
                .read_primitive(*p, f.compact, f.name)
                .map(|(v, prefix)| {
                    self.set(i, v);
                    self.set_prefix(i, prefix);
                    self.batches(i, f);
                }),
            Shape::Struct(plan) => self.read_struct_value(f, plan, i),
            Shape::Array(el) => self.read_array(f, el, i),
        };
        self.close(i);
        res
    }

    /// A primitive's value and the width of its length prefix.
    #[inline]
    fn read_primitive(&mut self, p: Primitive, compact: bool, name: &str) -> Step<(Val, usize)> {
        let at = self.r.pos();
        let value = match p {
            Primitive::String | Primitive::Bytes | Primitive::Records => {
                let prefix = LengthPrefix::of(p, compact);
                match self.read_length(prefix, name)? {
                    None => Val::Null,
                    Some(n) => {
                        let span = self.take_value(n, prefix, name)?;
                        match p {
                            Primitive::String => Val::Str(span),
                            _ => Val::Bytes(span),
                        }
                    }
                }
            }
            fixed => {
                let width = fixed.fixed_width().unwrap_or(0);
                // Read through the reader for its error when the bytes are not all there.
                let read = self.r.take(width, name);
                self.ok(read)?;
                return Ok((fixed_value(fixed, self.r.buf(), at), 0));
            }
        };
        let prefix = match value {
            Val::Str(s) | Val::Bytes(s) => s.at as usize - at,
            _ => self.r.pos() - at,
        };
        Ok((value, prefix))
    }

    /// A string's or bytes' `n` bytes. When they are not all there, an
    /// annotated tape keeps the length as written as the value of the slot
    /// being read, for the tree to show.
    #[inline]
    fn take_value(&mut self, n: usize, prefix: LengthPrefix, name: &str) -> Step<Span> {
        let taken = self.take(n, name);
        if ANNOTATED && taken.is_err() {
            let written = Val::Int(prefix.written(Some(n)));
            self.set(self.reading(), written);
        }
        taken
    }

    /// The slot being read: the last one pushed (a primitive's, a tagged
    /// section's, before any child).
    #[inline]
    fn reading(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// Annotated tapes: slot `i` has an over-long varint (`which`, an
    /// `OVERLONG_*` flag).
    #[inline]
    fn mark_overlong(&mut self, i: usize, overlong: bool, which: u8) {
        if ANNOTATED && overlong {
            if let Some(s) = self.slots.get_mut(i) {
                s.marks |= which;
            }
        }
    }

    #[inline]
    fn take(&mut self, n: usize, name: &str) -> Step<Span> {
        let at = self.r.pos() as u32;
        let read = self.r.take(n, name);
        self.ok(read)?;
        Ok(Span { at, len: n as u32 })
    }

    /// A string's or bytes' length, read as `prefix` writes it (`None`: null).
    #[inline]
    fn read_length(&mut self, prefix: LengthPrefix, name: &str) -> Step<Option<usize>> {
        let at = self.r.pos();
        let written = self.read_prefix(prefix, (name, false), self.reading())?;
        prefix.length(written).map_err(|_| {
            self.stop(DecodeError {
                kind: ErrorKind::Invalid,
                offset: at,
                expected: format!("{name}: a length >= -1, found {written}"),
            })
        })
    }

    /// A length or count prefix as written, its over-long varint marked on
    /// slot `i`. A reading that fails names the field's length, or for a
    /// fixed-width length of a string or bytes (not `count`) the field.
    #[inline]
    fn read_prefix(
        &mut self,
        prefix: LengthPrefix,
        (name, count): (&str, bool),
        i: usize,
    ) -> Step<i64> {
        Ok(match prefix {
            LengthPrefix::Compact => {
                let read = self.r.uvarint_or_else(|| format!("{name} length"));
                let u = self.ok(read)?;
                self.mark_overlong(i, u.overlong, OVERLONG_PREFIX);
                u.value as i64
            }
            LengthPrefix::Int16 => {
                let read = self.r.i16(name);
                i64::from(self.ok(read)?)
            }
            LengthPrefix::Int32 if count => {
                let read = self.r.i32_or_else(|| format!("{name} length"));
                i64::from(self.ok(read)?)
            }
            LengthPrefix::Int32 => {
                let read = self.r.i32(name);
                i64::from(self.ok(read)?)
            }
        })
    }

    fn read_struct_value(&mut self, f: &FieldPlan, plan: &StructPlan, i: usize) -> Step {
        if f.nullable {
            // KIP-893: an int8 marker, -1 null, 1 present; tagged structs use a uvarint marker.
            let at = self.r.pos();
            let (present, marker) = if f.in_tag {
                let read = self.r.uvarint("struct presence marker");
                let v = self.ok(read)?.value;
                (v > 0, Val::Uint(v))
            } else {
                let read = self.r.i8("struct presence marker");
                let v = self.ok(read)?;
                (v >= 0, Val::Int(v.into()))
            };
            if ANNOTATED {
                self.leaf(NO_KEY, Id::Marker, marker, (at, self.r.pos() - at, 0));
            }
            if !present {
                return Ok(());
            }
        }
        self.set(i, Val::Struct);
        self.read_struct(plan)
    }

    fn read_array(&mut self, f: &FieldPlan, el: &Element, i: usize) -> Step {
        let at = self.r.pos();
        let name = f.name;
        let written = self.read_prefix(f.prefix, (name, true), i)?;
        let count = f.prefix.length(written).map_err(|_| {
            self.stop(DecodeError {
                kind: ErrorKind::Invalid,
                offset: at,
                expected: format!("{name}: an array length >= -1, found {written}"),
            })
        })?;
        self.set_prefix(i, self.r.pos() - at);
        let Some(count) = count else {
            return Ok(());
        };
        // The count as written, kept when the tape stops at it (a varint of
        // more than 32 bits does not read, so it fits).
        self.set(i, Val::Array(count as u32));
        // Every element takes at least one byte, except structs whose fields are all
        // absent at this version; either way a longer count cannot be honest.
        if count > self.r.remaining() {
            let e = DecodeError {
                kind: ErrorKind::Truncated,
                offset: at,
                expected: format!(
                    "{name}: {count} elements, but only {} bytes remain",
                    self.r.remaining()
                ),
            };
            return Err(self.stop(e));
        }
        if count > 0 && matches!(el, Element::Array) {
            let e = DecodeError {
                kind: ErrorKind::Invalid,
                offset: self.r.pos(),
                expected: "arrays of arrays are not part of the schema language".into(),
            };
            return Err(self.stop(e));
        }
        if let Element::Primitive(p) = el {
            if let Some(w) = p
                .fixed_width()
                .filter(|w| count.saturating_mul(*w) <= self.r.remaining())
            {
                // Fixed-width elements whose bytes are all there: no check per element.
                let at = self.r.pos();
                match ANNOTATED {
                    // So many that they are left: all of them are there.
                    true if count * w > self.leave.elements_over => leave_elements(self.slots, i),
                    true => push_elements(self.slots, self.r.buf(), (*p, w), at, count),
                    false => self.set(i, packed(*p, at, count)),
                }
                self.r.seek(at + count * w);
                return Ok(());
            }
        }
        let leaves = ANNOTATED
            && self.leave.elements_over != usize::MAX
            && match el {
                Element::Struct(p) => {
                    (!p.holds_records || self.leave.record_arrays) && !p.holds_secrets
                }
                Element::Primitive(p) => *p != Primitive::Records,
                Element::Array => false,
            };
        if !leaves {
            return self.read_elements(f, el, count, None);
        }
        let first = self.r.pos();
        // Records in elements that may be left are left whatever their size:
        // walked when drawn, never decompressed for a tape that drops them.
        let records_over = self.leave.records_over;
        if matches!(el, Element::Struct(p) if p.holds_records) {
            self.leave.records_over = 0;
        }
        let read = self.read_elements(f, el, count, Some((i, first)));
        self.leave.records_over = records_over;
        match read {
            Err(Stop) if elements_left(self.slots, i) && !self.leave.damaged_whole => {
                // Only whether the frame fits is wanted: it stops at the array.
                self.slots.truncate(i + 1);
                if let Some(s) = self.slots.get_mut(i) {
                    s.marks &= !ELEMENTS_LEFT;
                }
                self.stopped = None;
                Err(Stop)
            }
            Err(Stop) if elements_left(self.slots, i) => {
                // An element that does not decode is shown where it stops, as the
                // whole tree shows it: the array is read again, whole, and the
                // arrays within it too (else each level would read its own again).
                (self.error, self.stopped) = (None, None);
                self.slots.truncate(i + 1);
                if let Some(s) = self.slots.get_mut(i) {
                    s.marks &= !ELEMENTS_LEFT;
                }
                self.r.seek(first);
                let leave = std::mem::replace(&mut self.leave.elements_over, usize::MAX);
                let read = self.read_elements(f, el, count, None);
                self.leave.elements_over = leave;
                read
            }
            read => read,
        }
    }

    /// `count` elements of array field `f` (of `el`), each a slot; given
    /// `leaving` (the array's slot and where its first element starts), the
    /// elements are taken off the tape again as soon as they have taken more
    /// than [`Leave::elements_over`] bytes, and the array's slot is marked
    /// [`ELEMENTS_LEFT`].
    fn read_elements(
        &mut self,
        f: &FieldPlan,
        el: &Element,
        count: usize,
        leaving: Option<(usize, usize)>,
    ) -> Step {
        let name = f.name;
        self.slots.reserve(count.min(MAX_RESERVE));
        for _ in 0..count {
            let e = self.open(NO_KEY, Id::Element);
            let res = match el {
                Element::Struct(plan) => {
                    self.set(e, Val::Struct);
                    self.read_struct(plan)
                }
                Element::Primitive(p) => {
                    self.read_primitive(*p, f.compact, name).map(|(v, prefix)| {
                        self.set(e, v);
                        self.set_prefix(e, prefix);
                    })
                }
                Element::Array => Ok(()),
            };
            self.close(e);
            res?;
            let Some((i, first)) = leaving else {
                continue;
            };
            if elements_left(self.slots, i) || self.r.pos() - first > self.leave.elements_over {
                leave_elements(self.slots, i);
            }
        }
        Ok(())
    }

    /// KIP-482 tagged fields: uvarint count, then per field uvarint tag, uvarint size, payload.
    fn read_tagged(&mut self, tagged: &[FieldPlan]) -> Step {
        if !ANNOTATED {
            return self.read_tagged_entries(tagged);
        }
        let section = self.open(NO_KEY, Id::TaggedSection);
        let res = self.read_tagged_entries(tagged);
        self.close(section);
        res
    }

    fn read_tagged_entries(&mut self, tagged: &[FieldPlan]) -> Step {
        let at = self.r.pos();
        let read = self.r.uvarint("tagged field count");
        let count = self.ok(read)?;
        if ANNOTATED {
            if let Some(s) = self.slots.last_mut() {
                (s.value, s.prefix) = (Val::Uint(count.value), count.len as u8);
            }
            self.mark_overlong(self.reading(), count.overlong, OVERLONG_PREFIX);
        }
        let count = count.value;
        if count == 0 {
            return Ok(());
        }
        // Each entry needs at least a tag byte and a size byte.
        if count as usize > self.r.remaining() / 2 {
            let e = DecodeError {
                kind: ErrorKind::Truncated,
                offset: at,
                expected: format!(
                    "{count} tagged fields, but only {} bytes remain",
                    self.r.remaining()
                ),
            };
            return Err(self.stop(e));
        }
        for _ in 0..count {
            let start = self.r.pos();
            let read = self.r.uvarint("tag");
            let tag = self.ok(read)?;
            let read = self.r.uvarint("tagged field size");
            let size = self.ok(read)?;
            let (size, size_overlong, size_width) = (size.value as usize, size.overlong, size.len);
            let tag_no = tag.value as u32;
            let payload_at = self.r.pos();
            let entry = ANNOTATED.then(|| {
                let e = self.slots.len();
                self.leaf(
                    NO_KEY,
                    Id::TagEntry {
                        tag: tag_no,
                        size_width: size_width as u8,
                    },
                    Val::Uint(size as u64),
                    (start, 0, tag.len),
                );
                self.mark_overlong(e, tag.overlong, OVERLONG_PREFIX);
                self.mark_overlong(e, size_overlong, OVERLONG_SIZE);
                e
            });
            let res = match tagged.iter().find(|f| f.tag == tag_no) {
                // An entry larger than what remains stops in the entry, after its tag and size.
                _ if size > self.r.remaining() => {
                    let e = DecodeError {
                        kind: ErrorKind::Truncated,
                        offset: start + tag.len,
                        expected: format!(
                            "tag {tag_no}: size {size}, but only {} bytes remain",
                            self.r.remaining()
                        ),
                    };
                    Err(self.stop(e))
                }
                Some(f) => {
                    let old_end = self.r.limit(size);
                    let res = self.read_field(f);
                    self.r.restore_end(old_end);
                    // A value shorter than its declared size: the rest is skipped.
                    res.map(|()| self.r.seek(payload_at + size))
                }
                None => self.take(size, "unknown tagged field").map(|data| {
                    self.leaf(
                        NO_KEY,
                        Id::UnknownTag(tag_no),
                        Val::Bytes(data),
                        (payload_at, size, 0),
                    );
                }),
            };
            if let Some(e) = entry {
                self.close(e);
            }
            res?;
        }
        Ok(())
    }
}

/// The usual fields from `fields[i]` on, whose lengths and bytes are all
/// there: runs of fixed-width fields (one check a run), strings and bytes
/// with a one-byte compact or a fixed-width length, and arrays of
/// fixed-width primitives (packed on values-only tapes). Returns the index
/// of the first field it did not read, and where it stopped. Over its
/// arguments, not the reader's fields: a slot written then cannot make the
/// compiler read the reader again.
#[inline(always)]
fn quick_fields<const ANNOTATED: bool>(
    fields: &[FieldPlan],
    mut i: usize,
    buf: &[u8],
    (mut pos, end): (usize, usize),
    (slots, elements_over): (&mut Vec<Slot>, usize),
) -> (usize, usize) {
    while let Some(f) = fields.get(i) {
        let (value, used, prefix) = match f.op {
            Op::Fixed if f.run.1 as usize <= end - pos => {
                let n = usize::from(f.run.0);
                for g in fields.get(i..i + n).unwrap_or_default() {
                    if let Shape::Primitive(p) = g.shape {
                        let w = p.fixed_width().unwrap_or(0);
                        push_slot(
                            slots,
                            g.json_key,
                            Id::Field(g.decl),
                            fixed_value(p, buf, pos),
                            (pos, w, 0),
                        );
                        pos += w;
                    }
                }
                i += n;
                continue;
            }
            Op::String | Op::Bytes => match f.prefix.peek(buf, pos, end) {
                Some((None, prefix)) => (Val::Null, prefix, prefix),
                Some((Some(n), prefix)) if n <= end - pos - prefix => (
                    string_or_bytes(
                        f.op,
                        Span {
                            at: (pos + prefix) as u32,
                            len: n as u32,
                        },
                    ),
                    prefix + n,
                    prefix,
                ),
                _ => break,
            },
            Op::FixedArray => {
                let Shape::Array(Element::Primitive(p)) = f.shape else {
                    break;
                };
                let w = p.fixed_width().unwrap_or(1);
                match f.prefix.peek(buf, pos, end) {
                    Some((None, prefix)) => (Val::Null, prefix, prefix),
                    Some((Some(count), prefix)) if count <= (end - pos - prefix) / w => {
                        let (at, used) = (pos + prefix, prefix + count * w);
                        if !ANNOTATED {
                            (packed(p, at, count), used, prefix)
                        } else {
                            let array = push_slot(
                                slots,
                                f.json_key,
                                Id::Field(f.decl),
                                Val::Array(count as u32),
                                (pos, used, prefix),
                            );
                            // So many that they are left (`Leave`): all of them are there.
                            match count * w > elements_over {
                                true => leave_elements(slots, array),
                                false => push_elements(slots, buf, (p, w), at, count),
                            }
                            close_slot(slots, array, pos + used);
                            (pos, i) = (pos + used, i + 1);
                            continue;
                        }
                    }
                    _ => break,
                }
            }
            _ => break,
        };
        push_slot(
            slots,
            f.json_key,
            Id::Field(f.decl),
            value,
            (pos, used, prefix),
        );
        pos += used;
        i += 1;
    }
    (i, pos)
}

/// Values-only tapes: `count` elements of fixed-width `p` at `at` as one
/// packed value (an array of replica ids would otherwise cost 48 bytes of
/// tape per 4 bytes of frame).
#[inline(always)]
fn packed(p: Primitive, at: usize, count: usize) -> Val {
    Val::Packed(Packed {
        at: at as u32,
        count: count as u32,
        ty: p,
    })
}

/// The elements of the array whose slot is `i` taken off the tape (the
/// slots after it are theirs), and the array marked [`ELEMENTS_LEFT`].
fn leave_elements(slots: &mut Vec<Slot>, i: usize) {
    slots.truncate(i + 1);
    if let Some(s) = slots.get_mut(i) {
        s.marks |= ELEMENTS_LEFT;
    }
}

/// Whether the array whose slot is `i` has its elements left.
fn elements_left(slots: &[Slot], i: usize) -> bool {
    slots.get(i).is_some_and(|s| s.marks & ELEMENTS_LEFT != 0)
}

/// Annotated tapes: a slot for each of `count` elements of fixed-width `p`
/// (`w` bytes each) at `at`, whose bytes the caller has checked are all there.
fn push_elements(
    slots: &mut Vec<Slot>,
    buf: &[u8],
    (p, w): (Primitive, usize),
    at: usize,
    count: usize,
) {
    for k in 0..count {
        push_slot(
            slots,
            NO_KEY,
            Id::Element,
            fixed_value(p, buf, at + k * w),
            (at + k * w, w, 0),
        );
    }
}

/// A string's or bytes' value, as `op` reads it.
#[inline(always)]
fn string_or_bytes(op: Op, span: Span) -> Val {
    match op {
        Op::String => Val::Str(span),
        _ => Val::Bytes(span),
    }
}

/// Capacity reserved ahead for an array's elements at most.
const MAX_RESERVE: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Catalogue, MessageKind};

    /// A Heartbeat v4 body (flexible): GroupId "g", GenerationId 7, MemberId "m",
    /// GroupInstanceId null, then a tagged section holding one unknown tag.
    const BODY: &[u8] = &[
        0x02, b'g', 0, 0, 0, 7, 0x02, b'm', 0x00, 0x01, 0x05, 0x02, 0xab, 0xcd,
    ];

    fn decode(bytes: &[u8]) -> (Values, usize, Res) {
        let cat = Catalogue::builtin();
        let spec = cat
            .message(MessageKind::Request, 12, 4, None)
            .expect("Heartbeat v4");
        let mut values = Values::default();
        let (end, res) = decode_header_and_body(
            bytes,
            0,
            (&spec.plan(4), None),
            &mut values,
            None,
            &Budget::default(),
        );
        (values, end, res)
    }

    #[test]
    fn fields_follow_the_plan_with_their_values_as_frame_ranges() {
        let (v, end, res) = decode(BODY);
        assert!(res.is_ok());
        assert_eq!(end, BODY.len());
        let fields: Vec<(&str, Val, Id)> = v
            .children(0)
            .map(|(_, s)| (*s.key, s.value, s.id))
            .collect();
        assert_eq!(
            fields,
            [
                (
                    "\"GroupId\":",
                    Val::Str(Span { at: 1, len: 1 }),
                    Id::Field(0)
                ),
                ("\"GenerationId\":", Val::Int(7), Id::Field(1)),
                (
                    "\"MemberId\":",
                    Val::Str(Span { at: 7, len: 1 }),
                    Id::Field(2)
                ),
                ("\"GroupInstanceId\":", Val::Null, Id::Field(3)),
                ("", Val::Bytes(Span { at: 12, len: 2 }), Id::UnknownTag(5)),
            ],
            "each field by its declaration index; an unknown tag keeps its number"
        );
        assert_eq!(Span { at: 12, len: 2 }.of(BODY), [0xab, 0xcd]);
    }

    #[test]
    fn a_slot_stays_48_bytes() {
        // Slots are the tape's bulk: 8 bytes more each is 17% more memory traffic.
        assert_eq!(std::mem::size_of::<Slot>(), 48);
    }

    #[test]
    fn the_annotated_tape_keeps_every_fields_bytes_and_the_tagged_section() {
        let cat = Catalogue::builtin();
        let spec = cat
            .message(MessageKind::Request, 12, 4, None)
            .expect("Heartbeat v4");
        let mut v = Values::default();
        let (slot, end, res) = decode_annotated(BODY, 0, &spec.plan(4), &mut v, &Budget::default());
        assert!(res.is_ok());
        assert_eq!((slot, end), (0, BODY.len()));
        let s = |i: usize| {
            (
                v.slots[i].id,
                v.slots[i].at,
                v.slots[i].len,
                v.slots[i].prefix,
                v.slots[i].value,
            )
        };
        assert_eq!(s(0), (Id::Message, 0, 14, 0, Val::Struct));
        assert_eq!(
            s(1),
            (Id::Field(0), 0, 2, 1, Val::Str(Span { at: 1, len: 1 })),
            "GroupId: 1-byte length, 1 byte"
        );
        assert_eq!(s(2), (Id::Field(1), 2, 4, 0, Val::Int(7)));
        assert_eq!(
            s(4),
            (Id::Field(3), 8, 1, 1, Val::Null),
            "GroupInstanceId: a null is its length alone"
        );
        // The section (count 1, 1 byte), its entry (tag 5, 1-byte tag, size 2) and the raw value.
        assert_eq!(s(5), (Id::TaggedSection, 9, 5, 1, Val::Uint(1)));
        let entry = Id::TagEntry {
            tag: 5,
            size_width: 1,
        };
        assert_eq!(s(6), (entry, 10, 4, 1, Val::Uint(2)));
        assert_eq!(
            s(7),
            (
                Id::UnknownTag(5),
                12,
                2,
                0,
                Val::Bytes(Span { at: 12, len: 2 })
            )
        );
        assert_eq!(
            (v.slots[6].tag(), v.slots[5].end, v.slots[0].end),
            (Some(5), 8, 8)
        );
        // The values-only tape of the same bytes has no section or entry.
        let (plain, _, _) = decode(BODY);
        assert_eq!(plain.slots.len(), 6);
    }

    #[test]
    fn a_short_frame_keeps_what_was_read_and_names_the_failing_read() {
        let (v, _, res) = decode(&BODY[..5]);
        let e = res.unwrap_err();
        assert_eq!(e.offset, 2);
        assert!(
            e.expected.starts_with("GenerationId: needs 4 bytes"),
            "{}",
            e.expected
        );
        let values: Vec<Val> = v.children(0).map(|(_, s)| s.value).collect();
        assert_eq!(values, [Val::Str(Span { at: 1, len: 1 }), Val::Null]);
        assert!(
            v.slots.iter().all(|s| s.end as usize <= v.slots.len()),
            "every slot is closed"
        );
    }

    #[test]
    fn an_annotated_tape_that_stops_names_the_slot_whose_read_failed() {
        let cat = Catalogue::builtin();
        let spec = cat
            .message(MessageKind::Request, 12, 4, None)
            .expect("Heartbeat v4");
        let mut v = Values::default();
        // GroupId, then 3 of GenerationId's 4 bytes.
        let (_, end, res) =
            decode_annotated(&BODY[..5], 0, &spec.plan(4), &mut v, &Budget::default());
        let stopped = v.stopped.expect("stopped");
        assert_eq!(
            (stopped.slot, v.slots[2].key, v.slots[2].len),
            (2, &"\"GenerationId\":", 0),
            "GenerationId read nothing"
        );
        assert_eq!(
            (end, stopped.end, Some(stopped.error)),
            (2, 5, res.err()),
            "the bytes shown run to the end of what could be read"
        );
        assert_eq!(
            (v.slots[0].len, v.slots[0].end),
            (2, 3),
            "the message slot closes where decoding stopped"
        );
    }
}
