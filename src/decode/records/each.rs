//! The records of a records field one at a time, as typed parts (offset,
//! timestamp, key, value, headers), for readers that ask of records without
//! drawing them (a display filter's `record.key`). The one walk of
//! `super::tape` reads the batches (compressed ones decompressed within
//! the budget); the tape's record layout is read here, in the module that
//! writes it.

use super::layout::{
    v2_field, ATTRIBUTES, BASE_OFFSET, BASE_SEQUENCE, BASE_TIMESTAMP, LAST_OFFSET_DELTA,
    LEGACY_ATTRIBUTES, LEGACY_OFFSET, LEGACY_TIMESTAMP, MAGIC, MAX_TIMESTAMP,
    PARTITION_LEADER_EPOCH, PRODUCER_EPOCH, PRODUCER_ID, RECORDS_COUNT, V2_FIELDS,
};
use super::order::has_error;
use super::tape::Walk;
use crate::budget::Budget;
use crate::decode::tape::{BytesOf, Id, RecordField, SlotKind, Val, Values};

/// One record's parts: bytes are `None` when null.
#[derive(Debug, Default)]
pub struct RecordParts<'a> {
    /// The batch's base offset plus the record's delta; a legacy message's
    /// own offset (inside a magic 1 wrapper: counted from the wrapper's).
    pub offset: Option<i64>,
    /// The batch's base timestamp plus the record's delta, or its
    /// maxTimestamp under LogAppendTime; a magic 1 message's own, or its
    /// wrapper's under LogAppendTime; none for magic 0.
    pub timestamp: Option<i64>,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// Each header's key and value.
    pub headers: Vec<HeaderParts<'a>>,
    /// From a control batch (transaction markers, KRaft control records).
    pub control: bool,
    /// Its RecordBatch v2's header (`None` for legacy messages).
    pub batch: Option<BatchHeader>,
    /// A v2 record's offsetDelta as written (`None` for legacy messages).
    pub offset_delta: Option<i64>,
    /// Read to its end: views that list records leave the others out (the
    /// damage is said where it is, as the frame's record damage).
    pub whole: bool,
    /// Where the key and the value lie.
    pub key_at: PayloadAt,
    pub value_at: PayloadAt,
}

/// Where a record's key or value lies: in the records' own bytes or in a
/// buffer of decompressed data ([`Values::buffers`]), at which range; and
/// whether the walk found it in Schema Registry framing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PayloadAt {
    /// `None`: the records' own bytes.
    pub buffer: Option<usize>,
    /// `None` for null.
    pub range: Option<(usize, usize)>,
    pub framed: bool,
}

/// A RecordBatch v2's header fields as read (each `None` past where the
/// batch stopped), and whether its stored checksum is the bytes' checksum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: Option<i64>,
    pub partition_leader_epoch: Option<i64>,
    pub magic: Option<i64>,
    pub attributes: Option<i64>,
    pub last_offset_delta: Option<i64>,
    pub base_timestamp: Option<i64>,
    pub max_timestamp: Option<i64>,
    pub producer_id: Option<i64>,
    pub producer_epoch: Option<i64>,
    pub base_sequence: Option<i64>,
    pub records_count: Option<i64>,
    pub crc_valid: bool,
}

/// A record header's key and value (`None` when null).
pub(crate) type HeaderParts<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// Hand each record of the batches in `records` to `each`, in order, until it
/// returns false. Damaged batches give the records read before the damage;
/// what a budget left undecompressed gives none. Decompression draws on
/// `budget`; the nodes' share is given back.
pub fn for_each_record(
    records: &[u8],
    budget: &Budget,
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) {
    if !super::layout::plausible(records) {
        return;
    }
    let held = budget.expanded();
    let mut tape = Values::default();
    Walk::<true> {
        slots: &mut tape.slots,
        buffers: &mut tape.buffers,
        findings: &mut tape.findings,
        budget,
        plain: false,
        first_index: 0,
        cut_is_damage: false,
    }
    .stream(records, (0, records.len()));
    budget.release(budget.expanded().saturating_sub(held));
    let top = (0, tape.slots.len() as u32);
    for_each_record_on(&tape, top, records, each);
}

/// [`for_each_record`] over batches already on `tape`: the top-level slots
/// (batches and legacy messages) in `slots` (a records field's children on
/// a frame's annotated tape), their offsets into `records`.
pub(crate) fn for_each_record_on(
    tape: &Values,
    (first, end): (u32, u32),
    records: &[u8],
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) {
    let mut at = first;
    while at < end && (at as usize) < tape.slots.len() {
        let next = tape.slots[at as usize].end.max(at + 1);
        if !item(tape, (records, None), at, None, each) {
            return;
        }
        at = next;
    }
}

/// A legacy wrapper message's say over the messages it holds.
#[derive(Clone, Copy)]
struct Wrapper {
    magic: i64,
    /// Added to each inner message's offset (magic 1 numbers them from 0).
    offset: i64,
    /// The wrapper's timestamp, when it says LogAppendTime (magic 1).
    log_append_time: Option<i64>,
}

/// What a v2 record's offset and timestamp are computed from.
#[derive(Clone, Copy)]
struct Base {
    offset: Option<i64>,
    timestamp: Option<i64>,
    /// Under LogAppendTime every record's timestamp is the batch's maxTimestamp.
    log_append_time: Option<i64>,
    control: bool,
    header: BatchHeader,
}

/// Bytes records are read from: the records' own, or a buffer of data
/// decompressed from them (its index in [`Values::buffers`]).
type Data<'d> = (&'d [u8], Option<usize>);

/// The records of one top-level slot (a batch or legacy message) of `data`;
/// false when `each` asked to stop. A message inside a legacy wrapper has
/// its wrapper's say in `within`.
fn item(
    tape: &Values,
    data: Data<'_>,
    slot: u32,
    within: Option<Wrapper>,
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) -> bool {
    let Some(s) = tape.slots.get(slot as usize) else {
        return true;
    };
    match s.kind() {
        SlotKind::Batch => {
            let header = batch_header(tape, slot);
            let log_append = header.attributes.is_some_and(|a| a & 0x08 != 0);
            let base = Base {
                offset: header.base_offset,
                timestamp: header.base_timestamp,
                log_append_time: header.max_timestamp.filter(|_| log_append),
                control: header.attributes.is_some_and(|a| a & 0x20 != 0),
                header,
            };
            for (i, c) in tape.children(slot) {
                let ok = match c.id {
                    Id::Record(_) => record(tape, data, i, base, each),
                    Id::Compressed(b) => match tape.buffers.get(b as usize) {
                        Some(buf) => tape
                            .children(i)
                            .filter(|(_, r)| r.kind() == SlotKind::Record)
                            .all(|(r, _)| record(tape, (buf, Some(b as usize)), r, base, each)),
                        _ => true,
                    },
                    _ => true,
                };
                if !ok {
                    return false;
                }
            }
            true
        }
        SlotKind::LegacyMessage => legacy(tape, data, slot, within, each),
        _ => true,
    }
}

/// The header of the v2 batch at `slot`: its fields as read, and whether
/// its checksum is its bytes'.
pub(crate) fn batch_header(tape: &Values, slot: u32) -> BatchHeader {
    let mut field = [None; V2_FIELDS.len()];
    let mut crc_valid = false;
    for (_, c) in tape.children(slot) {
        if let Some(k) = v2_field(c) {
            field[k] = int(c.value);
        }
        if let Id::Checksum { computed } = c.id {
            crc_valid = int(c.value) == Some(i64::from(computed));
        }
    }
    BatchHeader {
        base_offset: field[BASE_OFFSET],
        partition_leader_epoch: field[PARTITION_LEADER_EPOCH],
        magic: field[MAGIC],
        attributes: field[ATTRIBUTES],
        last_offset_delta: field[LAST_OFFSET_DELTA],
        base_timestamp: field[BASE_TIMESTAMP],
        max_timestamp: field[MAX_TIMESTAMP],
        producer_id: field[PRODUCER_ID],
        producer_epoch: field[PRODUCER_EPOCH],
        base_sequence: field[BASE_SEQUENCE],
        records_count: field[RECORDS_COUNT],
        crc_valid,
    }
}

/// The child of `slot` that is `id`, with its value.
fn part(tape: &Values, slot: u32, id: Id) -> Option<(u32, Val)> {
    tape.children(slot)
        .find(|(_, c)| c.id == id)
        .map(|(i, c)| (i, c.value))
}

/// The bytes child of `slot` that holds `of`: its bytes (`None` when null
/// or not there) and where they lie.
fn bytes_of<'d>(
    tape: &Values,
    slot: u32,
    of: BytesOf,
    data: Data<'d>,
) -> (Option<&'d [u8]>, PayloadAt) {
    let found = tape.children(slot).find_map(|(_, c)| match c.id {
        Id::Bytes { of: o, framed } if o == of => Some((c.value, framed)),
        _ => None,
    });
    // A null key or value lies in the same bytes as the rest of its record
    // (its other part is read from them).
    let mut at = PayloadAt {
        buffer: data.1,
        ..PayloadAt::default()
    };
    let Some((Val::Bytes(span), framed)) = found else {
        return (None, at);
    };
    let range = (span.at as usize, (span.at + span.len) as usize);
    (at.range, at.framed) = (Some(range), framed);
    (data.0.get(range.0..range.1), at)
}

fn int(v: Val) -> Option<i64> {
    match v {
        Val::Int(i) => Some(i),
        Val::Uint(u) => i64::try_from(u).ok(),
        _ => None,
    }
}

/// Whether `slot` was read to its end: no finding under it says it stopped.
fn whole(tape: &Values, slot: u32) -> bool {
    !tape.children(slot).any(|(_, c)| has_error(tape, c))
}

/// A v2 record: attributes, timestampDelta, offsetDelta, key, value, headers.
fn record(
    tape: &Values,
    data: Data<'_>,
    slot: u32,
    base: Base,
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) -> bool {
    let delta = |f| part(tape, slot, Id::RecordField(f)).and_then(|p| int(p.1));
    let offset_delta = delta(RecordField::OffsetDelta);
    let (key, key_at) = bytes_of(tape, slot, BytesOf::Key, data);
    let (value, value_at) = bytes_of(tape, slot, BytesOf::Value, data);
    let mut r = RecordParts {
        timestamp: base.log_append_time.or_else(|| {
            let delta = delta(RecordField::TimestampDelta);
            base.timestamp.zip(delta).map(|(b, d)| b.wrapping_add(d))
        }),
        offset: base
            .offset
            .zip(offset_delta)
            .map(|(b, d)| b.wrapping_add(d)),
        key,
        value,
        headers: Vec::new(),
        control: base.control,
        batch: Some(base.header),
        offset_delta,
        whole: whole(tape, slot),
        key_at,
        value_at,
    };
    if let Some((headers, _)) = part(tape, slot, Id::Headers) {
        for (h, _) in tape
            .children(headers)
            .filter(|(_, c)| matches!(c.id, Id::Header(_)))
        {
            r.headers.push((
                bytes_of(tape, h, BytesOf::HeaderKey, data).0,
                bytes_of(tape, h, BytesOf::HeaderValue, data).0,
            ));
        }
    }
    each(&r)
}

/// A legacy message: offset, messageSize, crc, magic, attributes,
/// [timestamp], key, value; a wrapper's value holds a compressed message set.
fn legacy(
    tape: &Values,
    data: Data<'_>,
    slot: u32,
    within: Option<Wrapper>,
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) -> bool {
    let magic = match tape.slots.get(slot as usize).map(|s| s.value) {
        Some(Val::Int(m)) => m,
        _ => 0,
    };
    let magic1 = magic == 1;
    let field = |k: usize| part(tape, slot, Id::MessageField(k as u8)).and_then(|p| int(p.1));
    let offset = field(LEGACY_OFFSET);
    let timestamp = field(LEGACY_TIMESTAMP).filter(|_| magic1);
    let value_slot = tape.children(slot).find(|(_, c)| {
        matches!(
            c.id,
            Id::Bytes {
                of: BytesOf::Value,
                ..
            }
        )
    });
    let attributes = field(LEGACY_ATTRIBUTES).unwrap_or(0);
    // A wrapper (its codec set) holds messages, not a record of its own:
    // when its data does not decompress, it lists none (its damage says why).
    if attributes & 0x07 != 0 {
        let compressed = value_slot.and_then(|(value_slot, _)| {
            tape.children(value_slot)
                .find(|(_, c)| c.kind() == SlotKind::Compressed)
        });
        if let Some((compressed, c)) = compressed {
            let Some((b, buf)) = c.buffer().and_then(|b| Some((b, tape.buffers.get(b)?))) else {
                return true;
            };
            let messages: Vec<u32> = tape
                .children(compressed)
                .filter(|(_, m)| m.kind() == SlotKind::LegacyMessage)
                .map(|(m, _)| m)
                .collect();
            // Magic 1 wrappers number their messages from 0 and carry the
            // last one's offset (as the records view reads them).
            let last = messages
                .last()
                .and_then(|&m| part(tape, m, Id::MessageField(LEGACY_OFFSET as u8)))
                .and_then(|p| int(p.1))
                .unwrap_or(0);
            let wrapper = Wrapper {
                magic,
                offset: offset.unwrap_or(0).wrapping_sub(last),
                log_append_time: timestamp.filter(|_| magic1 && attributes & 0x08 != 0),
            };
            return messages
                .into_iter()
                .all(|m| item(tape, (buf, Some(b)), m, Some(wrapper), each));
        }
        return true;
    }
    let (offset, timestamp) = match within {
        Some(w) if w.magic == 1 => (
            offset.map(|o| w.offset.wrapping_add(o)),
            w.log_append_time.or(timestamp),
        ),
        _ => (offset, timestamp),
    };
    let (key, key_at) = bytes_of(tape, slot, BytesOf::Key, data);
    let (value, value_at) = bytes_of(tape, slot, BytesOf::Value, data);
    let r = RecordParts {
        offset,
        timestamp,
        key,
        value,
        headers: Vec::new(),
        control: false,
        batch: None,
        offset_delta: None,
        whole: whole(tape, slot),
        key_at,
        value_at,
    };
    each(&r)
}
