//! The records of a records field one at a time, as typed parts (offset,
//! timestamp, key, value, headers), for readers that ask of records without
//! drawing them (a display filter's `record.key`). The one walk of
//! [`super::tape`] reads the batches (compressed ones decompressed within
//! the budget); the tape's record layout is read here, in the module that
//! writes it.

use super::layout::{BASE_OFFSET, BASE_TIMESTAMP};
use super::tape::Walk;
use crate::budget::Budget;
use crate::decode::tape::{SlotKind, Val, Values};

/// One record's parts: bytes are `None` when null.
#[derive(Debug, Default)]
pub struct RecordParts<'a> {
    /// The batch's base offset plus the record's delta (a legacy message's own offset).
    pub offset: Option<i64>,
    /// The batch's base timestamp plus the record's delta (a v1 message's own).
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
        if !item(&tape, records, at, each) {
            return;
        }
        at = next;
    }
}

/// The records of one top-level slot (a batch or legacy message) of `data`;
/// false when `each` asked to stop.
fn item(
    tape: &Values,
    data: &[u8],
    slot: u32,
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) -> bool {
    let Some(s) = tape.slots.get(slot as usize) else {
        return true;
    };
    match s.kind {
        SlotKind::Batch => {
            let header: Vec<i64> = tape
                .children(slot)
                .filter(|(_, c)| c.kind == SlotKind::Part)
                .take(super::layout::V2_FIELDS.len())
                .map(|(_, c)| int(c.value).unwrap_or(0))
                .collect();
            let base = (
                header.get(BASE_OFFSET).copied(),
                header.get(BASE_TIMESTAMP).copied(),
            );
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
        SlotKind::LegacyMessage => legacy(tape, data, slot, each),
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
    (base_offset, base_time): (Option<i64>, Option<i64>),
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) -> bool {
    let parts = parts(tape, slot);
    let delta = |k: usize| parts.get(k).and_then(|p| int(p.1));
    let mut r = RecordParts {
        timestamp: base_time.zip(delta(1)).map(|(b, d)| b.wrapping_add(d)),
        offset: base_offset.zip(delta(2)).map(|(b, d)| b.wrapping_add(d)),
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
    each: &mut dyn FnMut(&RecordParts<'_>) -> bool,
) -> bool {
    let parts = parts(tape, slot);
    let magic1 = matches!(
        tape.slots.get(slot as usize).map(|s| s.value),
        Some(Val::Int(1))
    );
    let (key_at, value_at) = if magic1 { (6, 7) } else { (5, 6) };
    if let Some(&(value_slot, _)) = parts.get(value_at) {
        let inner: Vec<(u32, u32)> = tape
            .children(value_slot)
            .filter(|(_, c)| c.kind == SlotKind::Compressed)
            .map(|(i, c)| (i, c.decl))
            .collect();
        if let Some(&(compressed, buffer)) = inner.first() {
            let Some(buf) = tape.buffers.get(buffer as usize) else {
                return true;
            };
            return tape
                .children(compressed)
                .all(|(m, _)| item(tape, buf, m, each));
        }
    }
    let r = RecordParts {
        offset: parts.first().and_then(|p| int(p.1)),
        timestamp: if magic1 {
            parts.get(5).and_then(|p| int(p.1))
        } else {
            None
        },
        key: parts.get(key_at).and_then(|p| bytes(p.1, data)),
        value: parts.get(value_at).and_then(|p| bytes(p.1, data)),
        headers: Vec::new(),
    };
    each(&r)
}
