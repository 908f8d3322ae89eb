//! The records of a records field one at a time, as typed parts (offset,
//! timestamp, key, value, headers), for readers that ask of records without
//! drawing them (a display filter's `record.key`). The one walk of
//! [`super::tape`] reads the batches (compressed ones decompressed within
//! the budget); the tape's record layout is read here, in the module that
//! writes it.

use super::layout::{ATTRIBUTES, BASE_OFFSET, BASE_TIMESTAMP, MAX_TIMESTAMP};
use super::tape::Walk;
use crate::budget::Budget;
use crate::decode::tape::{SlotKind, Val, Values};

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
pub type HeaderParts<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

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
    match s.kind {
        SlotKind::Batch => {
            let header: Vec<Option<i64>> = tape
                .children(slot)
                .filter(|(_, c)| c.kind == SlotKind::Part)
                .take(super::layout::V2_FIELDS.len())
                .map(|(_, c)| int(c.value))
                .collect();
            let field = |k: usize| header.get(k).copied().flatten();
            let log_append = field(ATTRIBUTES).is_some_and(|a| a & 0x08 != 0);
            let base = Base {
                offset: field(BASE_OFFSET),
                timestamp: field(BASE_TIMESTAMP),
                log_append_time: field(MAX_TIMESTAMP).filter(|_| log_append),
            };
            for (i, c) in tape.children(slot) {
                let ok = match c.kind {
                    SlotKind::Record => record(tape, data, i, base, each),
                    SlotKind::Compressed => match tape.buffers.get(c.decl as usize) {
                        Some(buf) => tape
                            .children(i)
                            .filter(|(_, r)| r.kind == SlotKind::Record)
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

/// The part slots among a slot's children (findings left out), with their values.
fn parts(tape: &Values, slot: u32) -> Vec<(u32, Val)> {
    tape.children(slot)
        .filter(|(_, c)| c.kind == SlotKind::Part)
        .map(|(i, c)| (i, c.value))
        .collect()
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
    let parts = parts(tape, slot);
    let delta = |k: usize| parts.get(k).and_then(|p| int(p.1));
    let mut r = RecordParts {
        timestamp: base
            .log_append_time
            .or_else(|| base.timestamp.zip(delta(1)).map(|(b, d)| b.wrapping_add(d))),
        offset: base.offset.zip(delta(2)).map(|(b, d)| b.wrapping_add(d)),
        key: parts.get(3).and_then(|p| bytes(p.1, data)),
        value: parts.get(4).and_then(|p| bytes(p.1, data)),
        headers: Vec::new(),
    };
    if let Some(&(headers, _)) = parts.get(5) {
        for (h, _) in tape
            .children(headers)
            .filter(|(_, c)| c.kind == SlotKind::Part)
        {
            let kv: Vec<Val> = tape
                .children(h)
                .filter(|(_, c)| c.kind == SlotKind::Part)
                .map(|(_, c)| c.value)
                .collect();
            r.headers.push((
                kv.first().and_then(|v| bytes(*v, data)),
                kv.get(1).and_then(|v| bytes(*v, data)),
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
    let own = parts(tape, slot);
    let magic = match tape.slots.get(slot as usize).map(|s| s.value) {
        Some(Val::Int(m)) => m,
        _ => 0,
    };
    let magic1 = magic == 1;
    let (key_at, value_at) = if magic1 { (6, 7) } else { (5, 6) };
    let offset = own.first().and_then(|p| int(p.1));
    let timestamp = own.get(5).and_then(|p| int(p.1)).filter(|_| magic1);
    if let Some(&(value_slot, _)) = own.get(value_at) {
        let inner: Vec<(u32, u32)> = tape
            .children(value_slot)
            .filter(|(_, c)| c.kind == SlotKind::Compressed)
            .map(|(i, c)| (i, c.decl))
            .collect();
        if let Some(&(compressed, buffer)) = inner.first() {
            let Some(buf) = tape.buffers.get(buffer as usize) else {
                return true;
            };
            let messages: Vec<u32> = tape
                .children(compressed)
                .filter(|(_, m)| m.kind == SlotKind::LegacyMessage)
                .map(|(m, _)| m)
                .collect();
            // Magic 1 wrappers number their messages from 0 and carry the
            // last one's offset (as the records view reads them).
            let last = messages
                .last()
                .and_then(|&m| parts(tape, m).first().and_then(|p| int(p.1)))
                .unwrap_or(0);
            let attributes = own.get(4).and_then(|p| int(p.1)).unwrap_or(0);
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
        key: own.get(key_at).and_then(|p| bytes(p.1, data)),
        value: own.get(value_at).and_then(|p| bytes(p.1, data)),
        headers: Vec::new(),
    };
    each(&r)
}
