//! The one walk over record batches, onto an annotated tape (a records
//! field's, or one of its own for a log segment's batch), from which
//! `super::nodes` builds every batch, message and record node. What is
//! wrong (checksums, counts, lengths, codecs, decompression, budgets) is an
//! [`Id::Finding`] where it was found, its parent the slot whose node shows it.
//!
//! The slots, each with its typed [`Id`]: an [`Id::Batch`] holds its 13 header
//! fields ([`Id::BatchField`]s and the [`Id::Checksum`] with the checksum
//! computed), then its records, or an [`Id::Compressed`] (the index of the
//! data in `buffers`, which its records' offsets index), or an unknown
//! codec's bytes ([`Id::UnknownCodecRecords`]). An [`Id::LegacyMessage`]
//! (value its magic) holds its fields ([`Id::MessageField`]s, the checksum,
//! key and value), a wrapper's value a `Compressed` message set.
//! [`Id::NotABatch`] and [`Id::OverBudget`]: bytes that are not a batch or
//! that a budget left; [`Id::PartialBatch`]: a batch cut by the end (value
//! its declared size). An [`Id::Record`] (value its length, `prefix` the
//! length's width) holds its [`Id::RecordField`]s, key and value
//! ([`Id::Bytes`]) and [`Id::Headers`] (value their count; an [`Id::Header`]
//! per header with its key and value). Bytes carry the length's width in
//! `prefix` and their bytes as the value, or the length as written when they
//! are null or cut short.

use super::compression::{decompress_within, Codec};
use super::layout::{
    crc32_ieee, minimum_size, plausible, ATTRIBUTES, BATCH_HEADER_LEN, CRC, HEADER_COST,
    LEGACY_ATTRIBUTES, LEGACY_MAGIC, LEGACY_MESSAGE_COST, LEGACY_MESSAGE_SIZE, LEGACY_OFFSET,
    LEGACY_TIMESTAMP, MAX_NESTING, RECORDS_COUNT, RECORD_COST, V2_FIELDS,
};
use super::payload::{schema_registry_id, FRAMING_COST};
use crate::budget::Budget;
use crate::decode::reader::Reader;
use crate::decode::tape::{
    close_slot, push_slot, BytesOf, Finding, Id, RecordField, Slot, Span, Val, NO_KEY,
};
use crate::decode::{DecodeError, ErrorKind, Warning, WarningKind};
use crate::protocol::crc32c::crc32c;
use crate::protocol::record_batch::{field_value, CRC_START};
use crate::schema::Primitive;
use bytes::Bytes;

/// The index a walk without slots gives every slot it does not keep.
const NONE: usize = usize::MAX;

type Res = Result<(), DecodeError>;

/// Where the walk writes, and what it draws on. `SLOTS`: the walk keeps its
/// slots (the tree views'); without, it only finds what is wrong (the JSON
/// contract's check of record data it prints as bytes), and `slots` stays empty.
pub(crate) struct Walk<'t, const SLOTS: bool> {
    pub slots: &'t mut Vec<Slot>,
    pub buffers: &'t mut Vec<Bytes>,
    pub findings: &'t mut Vec<Finding>,
    pub budget: &'t Budget,
    /// Keys and values are a plain topic's, which may be in Schema Registry
    /// framing (the framing's nodes are held against the budget).
    pub plain: bool,
    /// The index of the first batch or message at the top.
    pub first_index: usize,
    /// A batch cut short by the end of the records is damage (a request's:
    /// producers send whole batches), not a fetch limit's cut.
    pub cut_is_damage: bool,
}

/// The bytes walked: the input's, or data decompressed from it, whose nodes
/// count against the input's expanded budget (the input's own bytes bound the rest).
#[derive(Clone, Copy)]
struct Data<'b> {
    buf: &'b [u8],
    expanded: bool,
}

impl<const SLOTS: bool> Walk<'_, SLOTS> {
    /// The batches in `buf[start..end]`, after the slots there are.
    pub(crate) fn stream(&mut self, buf: &[u8], range: (usize, usize)) {
        self.stream_in(
            Data {
                buf,
                expanded: false,
            },
            range,
            0,
        );
    }

    /// A slot's index; without `SLOTS`, [`NONE`] (which [`Self::slot`] finds nothing at).
    #[inline(always)]
    fn push(&mut self, id: Id, value: Val, bytes: (usize, usize, usize)) -> usize {
        if !SLOTS {
            return NONE;
        }
        push_slot(self.slots, NO_KEY, id, value, bytes)
    }

    #[inline(always)]
    fn slot(&mut self, i: usize) -> Option<&mut Slot> {
        if !SLOTS {
            return None;
        }
        self.slots.get_mut(i)
    }

    #[inline(always)]
    fn close(&mut self, slot: usize, end: usize) {
        if SLOTS {
            close_slot(self.slots, slot, end);
        }
    }

    /// A field read by `read` at the reader's position, as part `id` holding its value.
    #[inline(always)]
    fn part<T: Copy + Into<i64>>(
        &mut self,
        r: &mut Reader,
        id: Id,
        read: impl FnOnce(&mut Reader) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        let at = r.pos();
        let v = read(r)?;
        self.push(id, Val::Int(v.into()), (at, r.pos() - at, 0));
        Ok(v)
    }

    fn finding(
        &mut self,
        at: usize,
        error: Option<String>,
        damage: Option<DecodeError>,
        warning: Option<Warning>,
    ) {
        self.push(
            Id::Finding(self.findings.len() as u32),
            Val::Null,
            (at, 0, 0),
        );
        self.findings.push(Finding {
            error,
            damage,
            warning,
        });
    }

    /// Damage at `offset`, the error its node shows (if any) and the warning line the tree views print.
    fn damaged(&mut self, error: Option<String>, e: DecodeError, warning: String) {
        let w = Warning::new(WarningKind::RecordDamage(e.kind), Some(e.offset), warning);
        self.finding(e.offset, error, Some(e), Some(w));
    }

    /// [`Walk::damaged`] whose warning line is led by the damage's offset
    /// (`0x0011: batch CRC mismatch …`), `detail` after it.
    fn damaged_at(
        &mut self,
        error: Option<String>,
        e: DecodeError,
        detail: std::fmt::Arguments<'_>,
    ) {
        let w = Warning::at(WarningKind::RecordDamage(e.kind), e.offset, detail);
        self.finding(e.offset, error, Some(e), Some(w));
    }

    /// Hold `cost` bytes of nodes made from decompressed data, or say which
    /// budget ran out at `offset`.
    fn hold_nodes(&self, d: Data, cost: u64, offset: usize, what: &str) -> Res {
        if !d.expanded || self.budget.hold(cost) {
            return Ok(());
        }
        Err(DecodeError {
            kind: ErrorKind::Budget,
            offset,
            expected: self
                .budget
                .exhausted_message(crate::budget::Exhausted::Expanded, what),
        })
    }

    /// The findings since `first` were in the data decompressed from `from`:
    /// their damage and warnings are placed there, with their offset in the
    /// decompressed data (`d:`) in the text, so that no offset into
    /// decompressed data is ever read as one into the input.
    fn absorb(&mut self, first: usize, from: usize) {
        for f in self.findings.iter_mut().skip(first) {
            if let Some(e) = f.damage.as_mut() {
                e.expected = format!(
                    "in the data decompressed from here, at d:0x{:04x}: {}",
                    e.offset, e.expected
                );
                e.offset = from;
            }
            // A warning led by its offset is led by the compressed bytes' instead.
            if let Some(w) = f.warning.as_mut() {
                if let Some(placed) = w.decompressed_from(from) {
                    *w = placed;
                }
            }
        }
    }

    /// Data decompressed from `buf[start..end]` with `codec` (an error: the
    /// finding), walked by `inner` under an [`Id::Compressed`] slot.
    fn decompressed(
        &mut self,
        d: Data,
        (start, end): (usize, usize),
        codec: Codec,
        inner: impl FnOnce(&mut Self, Data),
    ) {
        let slot = self.push(Id::NotDecompressed, Val::Null, (start, end - start, 0));
        match decompress_within(
            codec,
            d.buf.get(start..end).unwrap_or_default(),
            self.budget,
        ) {
            Ok(data) => {
                let data = Bytes::from(data);
                let buffer = self.buffers.len() as u32;
                if let Some(s) = self.slot(slot) {
                    s.id = Id::Compressed(buffer);
                }
                if SLOTS {
                    // A walk without slots has nothing that indexes the data: it is not kept.
                    self.buffers.push(data.clone());
                }
                let first = self.findings.len();
                inner(
                    self,
                    Data {
                        buf: &data,
                        expanded: true,
                    },
                );
                self.absorb(first, start);
            }
            Err((kind, e)) => self.damaged_at(
                Some(e.clone()),
                DecodeError {
                    kind,
                    offset: start,
                    expected: e.clone(),
                },
                format_args!("{e}"),
            ),
        }
        self.close(slot, end);
    }

    fn stream_in(&mut self, d: Data, (start, end): (usize, usize), depth: usize) {
        let mut pos = start;
        let mut index = if depth == 0 { self.first_index } else { 0 };
        while pos < end {
            let remaining = end - pos;
            let declared = d
                .buf
                .get(pos + 8..pos + 12)
                .filter(|_| remaining >= 12)
                .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            let total = declared.filter(|d| *d >= 0).map(|d| 12 + d as usize);
            let magic = d.buf.get(pos + 16).copied().filter(|_| remaining > 16);
            if let (Some(total), Some(m)) = (total, magic) {
                if total < 12 + minimum_size(m) {
                    // Zeros would otherwise pass as one tiny message per 12 bytes.
                    let expected = format!(
                        "a batch length of at least {} for magic {m}, found {}",
                        minimum_size(m),
                        total - 12
                    );
                    return self.invalid(ErrorKind::BatchLength, pos, remaining, expected);
                }
            }
            if let Err(e) = self.hold_nodes(d, LEGACY_MESSAGE_COST, pos, "record batches") {
                return self.invalid(ErrorKind::Budget, pos, remaining, e.expected);
            }
            match (total, magic) {
                (Some(total), Some(2)) if total <= remaining => self.batch_v2(d, pos, total, index),
                (Some(total), Some(m @ (0 | 1))) if total <= remaining => {
                    self.legacy_message(d, (pos, total), m, index, depth)
                }
                (Some(total), Some(m)) if total <= remaining => {
                    return self.invalid(
                        ErrorKind::Invalid,
                        pos,
                        remaining,
                        format!("a record batch magic of 0, 1 or 2, found {m}"),
                    )
                }
                (Some(total), _) if total < 12 + 14 => {
                    return self.invalid(
                        ErrorKind::BatchLength,
                        pos,
                        remaining,
                        format!("a batch length of at least 14, found {}", total as i64 - 12),
                    )
                }
                _ if self.cut_is_damage && depth == 0 => {
                    let declared = total.map_or_else(
                        || "its length".to_string(),
                        |t| format!("the {t} bytes it declares"),
                    );
                    return self.invalid(
                        ErrorKind::BatchLength,
                        pos,
                        remaining,
                        format!("a whole record batch ({declared}; {remaining} are here): a producer sends whole batches, so a request's batch is never cut"),
                    );
                }
                _ => {
                    // Fetch responses may end with a batch cut by the size limit: not an error.
                    let value = total.map_or(Val::Null, |t| Val::Int(t as i64));
                    self.push(Id::PartialBatch, value, (pos, remaining, 0));
                    return;
                }
            }
            // Only a batch or message walked whole gets here: `total` is its length.
            pos += total.unwrap_or(remaining);
            index += 1;
        }
    }

    /// Where the top-level batch or message at `pos` ends when [`Self::stream`]
    /// walks it whole and goes on after it; `None` when the stream ends
    /// there (bytes that are not a batch, a batch cut short), so that walking
    /// `pos..end` alone gives what the whole stream's walk gives from `pos`.
    pub(crate) fn whole_item_end(buf: &[u8], pos: usize, end: usize) -> Option<usize> {
        let remaining = end.checked_sub(pos).filter(|r| *r > 16)?;
        let b = buf.get(pos + 8..pos + 12)?;
        let declared = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let total = 12 + usize::try_from(declared).ok()?;
        let magic = *buf.get(pos + 16)?;
        (magic <= 2 && total >= 12 + minimum_size(magic) && total <= remaining)
            .then_some(pos + total)
    }

    /// `len` bytes at `pos` that are not a batch, or that a budget left undecoded (the kind says which).
    fn invalid(&mut self, kind: ErrorKind, pos: usize, len: usize, expected: String) {
        let slot = self.push(
            if kind == ErrorKind::Budget {
                Id::OverBudget
            } else {
                Id::NotABatch
            },
            Val::Bytes(Span {
                at: pos as u32,
                len: len as u32,
            }),
            (pos, len, 0),
        );
        let warning = format!("expected {expected}");
        self.damaged_at(
            Some(expected.clone()),
            DecodeError {
                kind,
                offset: pos,
                expected,
            },
            format_args!("{warning}"),
        );
        self.close(slot, pos + len);
    }

    /// RecordBatch v2: the 61-byte header, then records (compressed or not).
    fn batch_v2(&mut self, d: Data, pos: usize, total: usize, index: usize) {
        let batch = self.push(Id::Batch(index as u32), Val::Null, (pos, total, 0));
        let mut header = [0i64; V2_FIELDS.len()];
        let bytes = d.buf.get(pos..pos + total).unwrap_or_default();
        let mut at = pos;
        for (k, (_, ty, width)) in V2_FIELDS.iter().enumerate() {
            // All there: the batch's length was checked.
            let v = field_value(
                bytes.get(at - pos..at - pos + width).unwrap_or_default(),
                *ty,
            );
            header[k] = v;
            let value = if *ty == Primitive::Uint32 {
                Val::Uint(v as u64)
            } else {
                Val::Int(v)
            };
            let computed = (k == CRC).then(|| crc32c(bytes.get(CRC_START..).unwrap_or_default()));
            let id = match computed {
                Some(computed) => Id::Checksum { computed },
                None => Id::BatchField(k as u8),
            };
            self.push(id, value, (at, *width, 0));
            if let Some(computed) = computed.filter(|c| *c != v as u32) {
                let stored = v as u32;
                let e = DecodeError { kind: ErrorKind::Crc, offset: at, expected: format!("a batch CRC-32C of 0x{computed:08x} (the bytes' checksum), found 0x{stored:08x}") };
                self.damaged_at(
                    None,
                    e,
                    format_args!(
                        "batch CRC mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}"
                    ),
                );
            }
            at += width;
        }
        let (attrs, count) = (header[ATTRIBUTES] as u16, header[RECORDS_COUNT] as i32);
        // A control batch's keys and values are control records, never framed.
        let framing = self.plain && attrs & 0x20 == 0;
        let body = (pos + BATCH_HEADER_LEN, pos + total);
        match Codec::from_attributes(attrs) {
            Some(Codec::None) => self.records(d, body, count, framing),
            Some(c) => self.decompressed(d, body, c, |w, data| {
                w.records(data, (0, data.buf.len()), count, framing)
            }),
            None => {
                let slot = self.push(
                    Id::UnknownCodecRecords,
                    Val::Null,
                    (body.0, body.1 - body.0, 0),
                );
                let e = DecodeError {
                    kind: ErrorKind::Codec,
                    offset: body.0,
                    expected: format!("a compression codec 0-4, found {}", attrs & 7),
                };
                self.finding(
                    body.0,
                    Some(format!("unknown compression codec {}", attrs & 7)),
                    Some(e),
                    None,
                );
                self.close(slot, body.1);
            }
        }
        self.close(batch, pos + total);
    }

    /// Records of a batch, `count` of them, within `start..end`.
    fn records(&mut self, d: Data, (start, end): (usize, usize), count: i32, framing: bool) {
        let mut r = Reader::over(d.buf, (start, end));
        let mut i = 0;
        while r.pos() < end && (i as i64) < i64::from(count.max(0)) {
            let at = r.pos();
            if let Err(e) = self.hold_nodes(d, RECORD_COST, at, "records") {
                return self.invalid(ErrorKind::Budget, at, end - at, e.expected);
            }
            let rec = self.push(Id::Record(i), Val::Null, (at, 0, 0));
            let res = self.record(d, &mut r, framing, rec);
            if let Err(e) = res {
                let warning = format!("Record at 0x{at:04x}: {e}");
                self.damaged(Some(e.expected.clone()), e, warning);
                // The record's node covers the rest of the batch.
                self.close(rec, r.pos().max(end));
                return;
            }
            self.close(rec, r.pos());
            i += 1;
        }
        if i64::from(i) != i64::from(count) || r.pos() != end {
            let left = end - r.pos();
            let expected = format!(
                "{count} records, as the batch says, in its bytes: {i} decoded, {left} bytes left"
            );
            self.damaged_at(
                None,
                DecodeError {
                    kind: ErrorKind::RecordsCount,
                    offset: start,
                    expected,
                },
                format_args!("batch says {count} records; {i} decoded, {left} bytes left"),
            );
        }
    }

    /// One record's length (the value of its slot `rec`, the length's width its
    /// `prefix`) and parts; a length other than what its fields use is a warning.
    fn record(&mut self, d: Data, r: &mut Reader, framing: bool, rec: usize) -> Res {
        let at = r.pos();
        let (len, n) = r.varint("record length")?;
        if let Some(s) = self.slot(rec) {
            (s.value, s.prefix) = (Val::Int(len.into()), n as u8);
        }
        if len < 0 || len as usize > r.remaining() {
            return Err(DecodeError {
                kind: ErrorKind::Truncated,
                offset: at,
                expected: format!(
                    "a record length within the {} bytes left, found {len}",
                    r.remaining()
                ),
            });
        }
        let outer_end = r.limit(len as usize);
        let res = self.record_fields(d, r, framing);
        let consumed_to = r.pos();
        r.restore_end(outer_end);
        res?;
        if consumed_to != at + n + len as usize {
            // The fields read, so the record is shown whole; the batch is damaged all the same.
            let used = consumed_to - at - n;
            let e = DecodeError {
                kind: ErrorKind::RecordLength,
                offset: at,
                expected: format!("a record length of {used} (what its fields used), found {len}"),
            };
            self.damaged_at(
                None,
                e,
                format_args!("record length {len} but fields used {used}"),
            );
            r.seek(at + n + len as usize);
        }
        Ok(())
    }

    fn record_fields(&mut self, d: Data, r: &mut Reader, framing: bool) -> Res {
        let field = |f| Id::RecordField(f);
        self.part(r, field(RecordField::Attributes), |r| {
            r.i8("record attributes")
        })?;
        self.part(r, field(RecordField::TimestampDelta), |r| {
            Ok(r.varlong("timestampDelta")?.0)
        })?;
        self.part(r, field(RecordField::OffsetDelta), |r| {
            Ok(r.varint("offsetDelta")?.0)
        })?;
        self.varint_bytes(d, r, (BytesOf::Key, "key"), framing)?;
        self.varint_bytes(d, r, (BytesOf::Value, "value"), framing)?;
        let at = r.pos();
        let (hc, n) = r.varint("headersCount")?;
        let headers = self.push(Id::Headers, Val::Int(hc.into()), (at, 0, n));
        if hc < 0 || hc as usize > r.remaining() {
            self.close(headers, at + n);
            return Err(DecodeError {
                kind: ErrorKind::Truncated,
                offset: at,
                expected: format!(
                    "a header count within the {} bytes left, found {hc}",
                    r.remaining()
                ),
            });
        }
        for j in 0..hc {
            let hat = r.pos();
            if let Err(e) = self.hold_nodes(d, HEADER_COST, hat, "record headers") {
                // Stopped before a header, the headers' node covers their count alone.
                self.close(headers, at + n);
                return Err(e);
            }
            let h = self.push(Id::Header(j as u32), Val::Null, (hat, 0, 0));
            let res = self
                .varint_bytes(d, r, (BytesOf::HeaderKey, "headerKey"), false)
                .and_then(|()| {
                    self.varint_bytes(d, r, (BytesOf::HeaderValue, "headerValue"), false)
                });
            self.close(h, r.pos());
            if res.is_err() {
                self.close(headers, r.pos());
                return res;
            }
        }
        self.close(headers, r.pos());
        Ok(())
    }

    /// A varint length (negative: null) and that many bytes, `of` named `name`;
    /// `framing`: a plain topic's key or value, shown in Schema Registry framing when it is.
    fn varint_bytes(
        &mut self,
        d: Data,
        r: &mut Reader,
        (of, name): (BytesOf, &str),
        framing: bool,
    ) -> Res {
        let at = r.pos();
        let (len, n) = r.varint(name)?;
        let unframed = Id::Bytes { of, framed: false };
        let slot = self.push(unframed, Val::Int(len.into()), (at, n, n));
        let Ok(len) = usize::try_from(len) else {
            return Ok(());
        };
        let start = r.pos();
        r.take(len, name)?;
        let framed = framing
            && schema_registry_id(d.buf.get(start..start + len).unwrap_or_default()).is_some();
        if let Some(s) = self.slot(slot) {
            (s.value, s.len) = (
                Val::Bytes(Span {
                    at: start as u32,
                    len: len as u32,
                }),
                (n + len) as u32,
            );
        }
        if framed {
            self.hold_nodes(d, FRAMING_COST, start, "record keys and values")?;
            if let Some(s) = self.slot(slot) {
                s.id = Id::Bytes { of, framed: true };
            }
        }
        Ok(())
    }

    /// A legacy message (magic 0 or 1) of `total` bytes at `pos`; a failed read is its error.
    fn legacy_message(
        &mut self,
        d: Data,
        (pos, total): (usize, usize),
        magic: u8,
        index: usize,
        depth: usize,
    ) {
        let slot = self.push(
            Id::LegacyMessage(index as u32),
            Val::Int(magic.into()),
            (pos, total, 0),
        );
        let mut r = Reader::over(d.buf, (pos, pos + total));
        if let Err(e) = self.legacy_fields(d, &mut r, (pos, total), magic, depth) {
            let warning = format!("Message at 0x{pos:04x}: {e}");
            self.damaged(Some(e.to_string()), e, warning);
        }
        self.close(slot, pos + total);
    }

    /// offset, messageSize, crc (with the checksum computed), magic,
    /// attributes, [timestamp], key, value; a compressed value holds a nested message set.
    fn legacy_fields(
        &mut self,
        d: Data,
        r: &mut Reader,
        (pos, total): (usize, usize),
        magic: u8,
        depth: usize,
    ) -> Res {
        let field = |k: usize| Id::MessageField(k as u8);
        self.part(r, field(LEGACY_OFFSET), |r| r.i64("offset"))?;
        self.part(r, field(LEGACY_MESSAGE_SIZE), |r| r.i32("messageSize"))?;
        let at = r.pos();
        let stored = r.u32("crc")?;
        let computed = crc32_ieee(d.buf.get(pos + 16..pos + total).unwrap_or_default());
        self.push(
            Id::Checksum { computed },
            Val::Uint(stored.into()),
            (at, 4, 0),
        );
        if stored != computed {
            let e = DecodeError { kind: ErrorKind::Crc, offset: at, expected: format!("a message CRC-32 of 0x{computed:08x} (the bytes' checksum), found 0x{stored:08x}") };
            self.damaged_at(
                None,
                e,
                format_args!(
                    "message CRC mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}"
                ),
            );
        }
        self.part(r, field(LEGACY_MAGIC), |r| r.i8("magic"))?;
        let attrs = self.part(r, field(LEGACY_ATTRIBUTES), |r| r.i8("attributes"))?;
        if magic == 1 {
            self.part(r, field(LEGACY_TIMESTAMP), |r| r.i64("timestamp"))?;
        }
        let codec = Codec::from_attributes(u16::from(attrs as u8)).filter(|c| *c != Codec::None);
        for (of, name, wrapper) in [
            (BytesOf::Key, "key", None),
            (BytesOf::Value, "value", codec),
        ] {
            let at = r.pos();
            let len = r.i32(name)?;
            let unframed = Id::Bytes { of, framed: false };
            let slot = self.push(unframed, Val::Int(len.into()), (at, 4, 4));
            let Ok(len) = usize::try_from(len) else {
                continue;
            };
            let start = r.pos();
            r.take(len, name)?;
            let end = start + len;
            let framed = wrapper.is_none()
                && self.plain
                && schema_registry_id(d.buf.get(start..end).unwrap_or_default()).is_some();
            if framed {
                // Over budget, the bytes are not shown at all.
                self.hold_nodes(d, FRAMING_COST, start, "record keys and values")?;
            }
            if let Some(s) = self.slot(slot) {
                (s.value, s.id) = (
                    Val::Bytes(Span {
                        at: start as u32,
                        len: len as u32,
                    }),
                    Id::Bytes { of, framed },
                );
            }
            match wrapper {
                Some(_) if depth + 1 > MAX_NESTING => {
                    let e = DecodeError {
                        kind: ErrorKind::Invalid,
                        offset: start,
                        expected: format!("wrapper messages nested at most {MAX_NESTING} deep"),
                    };
                    self.finding(
                        start,
                        Some(format!("wrapper messages nested deeper than {MAX_NESTING}")),
                        Some(e),
                        None,
                    );
                }
                Some(c) => self.decompressed(d, (start, end), c, |w, data| {
                    w.stream_in(data, (0, data.buf.len()), depth + 1)
                }),
                None => {}
            }
            self.close(slot, end);
        }
        Ok(())
    }
}

/// Damage in the record batches of `buf[start..end]` for the views that show
/// record data as bytes (the JSON contract): the same walk as for the tree,
/// without its slots. Decompression counts against `budget`; what the check
/// held is given back.
pub(crate) fn check_batches(
    buf: &[u8],
    (start, end): (usize, usize),
    budget: &Budget,
    cut_is_damage: bool,
    damage: &mut Vec<DecodeError>,
) {
    if !plausible(buf.get(start..end).unwrap_or_default()) {
        return;
    }
    let held = budget.expanded();
    let mut findings = Vec::new();
    Walk::<false> {
        slots: &mut Vec::new(),
        buffers: &mut Vec::new(),
        findings: &mut findings,
        budget,
        plain: true,
        first_index: 0,
        cut_is_damage,
    }
    .stream(buf, (start, end));
    damage.extend(findings.into_iter().filter_map(|f| f.damage));
    budget.release(budget.expanded().saturating_sub(held));
}
