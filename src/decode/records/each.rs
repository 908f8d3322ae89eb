//! The records of a records field one at a time, as typed parts (offset,
//! timestamp, key, value, headers), for readers that ask of records without
//! drawing them (a display filter's `record.key`). The one walk of
//! `super::tape` reads the batches (compressed ones decompressed within
//! the budget); the tape's record layout is read here, in the module that
//! writes it.

use super::layout::{
    v2_field, ATTRIBUTES, BASE_OFFSET, BASE_TIMESTAMP, LEGACY_ATTRIBUTES, LEGACY_OFFSET,
    LEGACY_TIMESTAMP, MAX_TIMESTAMP, V2_FIELDS,
};
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
    let mut at = 0u32;
    while (at as usize) < tape.slots.len() {
        let next = tape.slots[at as usize].end.max(at + 1);
        if !item(&tape, records, at, None, each) {
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
}

/// The records of one top-level slot (a batch or legacy message) of `data`;
/// false when `each` asked to stop. A message inside a legacy wrapper has
/// its wrapper's say in `within`.
fn item(
    tape: &Values,
    data: &[u8],
    slot: u32,
    within: Option<Wrapper>,
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) -> bool {
    let Some(s) = tape.slots.get(slot as usize) else {
        return true;
    };
    match s.kind() {
        SlotKind::Batch => {
            let mut header = [None; V2_FIELDS.len()];
            for (_, c) in tape.children(slot) {
                if let Some(k) = v2_field(c) {
                    header[k] = int(c.value);
                }
            }
            let field = |k: usize| header[k];
            let log_append = field(ATTRIBUTES).is_some_and(|a| a & 0x08 != 0);
            let base = Base {
                offset: field(BASE_OFFSET),
                timestamp: field(BASE_TIMESTAMP),
                log_append_time: field(MAX_TIMESTAMP).filter(|_| log_append),
            };
            for (i, c) in tape.children(slot) {
                let ok = match c.id {
                    Id::Record(_) => record(tape, data, i, base, each),
                    Id::Compressed(b) => match tape.buffers.get(b as usize) {
                        Some(buf) => tape
                            .children(i)
                            .filter(|(_, r)| r.kind() == SlotKind::Record)
                            .all(|(r, _)| record(tape, buf, r, base, each)),
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

/// The child of `slot` that is `id`, with its value.
fn part(tape: &Values, slot: u32, id: Id) -> Option<(u32, Val)> {
    tape.children(slot)
        .find(|(_, c)| c.id == id)
        .map(|(i, c)| (i, c.value))
}

/// The value of the bytes child of `slot` that holds `of`.
fn bytes_of<'d>(tape: &Values, slot: u32, of: BytesOf, data: &'d [u8]) -> Option<&'d [u8]> {
    let (_, c) = tape
        .children(slot)
        .find(|(_, c)| matches!(c.id, Id::Bytes { of: o, .. } if o == of))?;
    bytes(c.value, data)
}

fn int(v: Val) -> Option<i64> {
    match v {
        Val::Int(i) => Some(i),
        Val::Uint(u) => i64::try_from(u).ok(),
        _ => None,
    }
}

fn bytes(v: Val, data: &[u8]) -> Option<&[u8]> {
    match v {
        Val::Bytes(s) => Some(s.of(data)),
        _ => None,
    }
}

/// A v2 record: attributes, timestampDelta, offsetDelta, key, value, headers.
fn record(
    tape: &Values,
    data: &[u8],
    slot: u32,
    base: Base,
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) -> bool {
    let delta = |f| part(tape, slot, Id::RecordField(f)).and_then(|p| int(p.1));
    let mut r = RecordParts {
        timestamp: base.log_append_time.or_else(|| {
            let delta = delta(RecordField::TimestampDelta);
            base.timestamp.zip(delta).map(|(b, d)| b.wrapping_add(d))
        }),
        offset: base
            .offset
            .zip(delta(RecordField::OffsetDelta))
            .map(|(b, d)| b.wrapping_add(d)),
        key: bytes_of(tape, slot, BytesOf::Key, data),
        value: bytes_of(tape, slot, BytesOf::Value, data),
        headers: Vec::new(),
    };
    if let Some((headers, _)) = part(tape, slot, Id::Headers) {
        for (h, _) in tape
            .children(headers)
            .filter(|(_, c)| matches!(c.id, Id::Header(_)))
        {
            r.headers.push((
                bytes_of(tape, h, BytesOf::HeaderKey, data),
                bytes_of(tape, h, BytesOf::HeaderValue, data),
            ));
        }
    }
    each(&r)
}

/// A legacy message: offset, messageSize, crc, magic, attributes,
/// [timestamp], key, value; a wrapper's value holds a compressed message set.
fn legacy(
    tape: &Values,
    data: &[u8],
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
    if let Some((value_slot, _)) = value_slot {
        let compressed = tape
            .children(value_slot)
            .find(|(_, c)| c.kind() == SlotKind::Compressed);
        if let Some((compressed, c)) = compressed {
            let Some(buf) = c.buffer().and_then(|b| tape.buffers.get(b)) else {
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
            let attributes = field(LEGACY_ATTRIBUTES).unwrap_or(0);
            let wrapper = Wrapper {
                magic,
                offset: offset.unwrap_or(0).wrapping_sub(last),
                log_append_time: timestamp.filter(|_| magic1 && attributes & 0x08 != 0),
            };
            return messages
                .into_iter()
                .all(|m| item(tape, buf, m, Some(wrapper), each));
        }
    }
    let (offset, timestamp) = match within {
        Some(w) if w.magic == 1 => (
            offset.map(|o| w.offset.wrapping_add(o)),
            w.log_append_time.or(timestamp),
        ),
        _ => (offset, timestamp),
    };
    let r = RecordParts {
        offset,
        timestamp,
        key: bytes_of(tape, slot, BytesOf::Key, data),
        value: bytes_of(tape, slot, BytesOf::Value, data),
        headers: Vec::new(),
    };
    each(&r)
}
