//! Record batches onto an annotated tape ([`crate::decode::values::decode_annotated`]):
//! the plain case, RecordBatch v2 (compressed or not, decompression bounded)
//! whose checksum and counts hold, as slots that keep every header field,
//! record field and header with its bytes, so that the tree's batch and
//! record nodes are built from the tape ([`super::BatchDecoder::replay_stream`]).
//!
//! Anything else (legacy message sets, control batches, a bad checksum, data
//! that does not decompress, a malformed record) is left to
//! [`super::BatchDecoder`], which reads the bytes and shows what is wrong:
//! [`batches_onto_tape`] then says no.

use super::batch::{BatchDecoder, HEADER_COST, RECORD_COST, V2_FIELDS, V2_HEADER};
use super::compression::{decompress_within, Codec};
use super::payload::{schema_registry_id, FRAMING_COST};
use crate::budget::Budget;
use crate::decode::reader::Reader;
use crate::decode::values::{close_slot as close, push_slot, Slot, SlotKind, Span, Val, NO_KEY};
use crate::protocol::crc32c::crc32c;

/// Slots of the batches in `buf[start..end]` after `slots`' end, or `false`
/// (the slots pushed are then to be dropped) when they are not all plain.
///
/// The slots: a [`SlotKind::Batch`] per batch (`decl` its index) whose
/// children are its 13 header fields and then a [`SlotKind::Record`] per
/// record (for a compressed batch, a [`SlotKind::Compressed`] whose `decl` is
/// the index of the decompressed data in `buffers` and whose children are the
/// records, their ranges in that data); a [`SlotKind::PartialBatch`] for a batch cut by the end (`value`
/// the size it declares). A record's value is its length (`prefix` the
/// length's width) and its children are [`SlotKind::Part`]s: attributes,
/// timestampDelta, offsetDelta, key, value, headers. Key, value, header
/// keys and values are bytes (or null) with their varint length's width in
/// `prefix` and the length as written in `decl`; headers' value is their
/// count, and each header a part with its key and value.
pub(crate) fn batches_onto_tape(buf: &[u8], (start, end): (usize, usize), slots: &mut Vec<Slot>, decompressed: (&mut Vec<bytes::Bytes>, &Budget)) -> bool {
    let (buffers, budget) = decompressed;
    if !BatchDecoder::plausible(buf.get(start..end).unwrap_or_default()) {
        return false;
    }
    let mut pos = start;
    let mut index = 0u32;
    while pos < end {
        let remaining = end - pos;
        let declared = buf.get(pos + 8..pos + 12).filter(|_| remaining >= 12).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let total = declared.filter(|d| *d >= 0).map(|d| 12 + d as usize);
        let magic = buf.get(pos + 16).copied().filter(|_| remaining > 16);
        match (total, magic) {
            (Some(total), Some(2)) if total <= remaining => {
                if !batch_v2(buf, pos, total, index, slots, (&mut *buffers, budget)) {
                    return false;
                }
                pos += total;
            }
            (Some(total), Some(_)) if total <= remaining => return false,
            (Some(total), _) if total < 12 + 14 => return false,
            _ => {
                // A batch cut by a fetch's size limit: shown as bytes, not an error.
                let value = total.map_or(Val::Null, |t| Val::Int(t as i64));
                push(slots, SlotKind::PartialBatch, 0, value, (pos, remaining, 0));
                return true;
            }
        }
        index += 1;
    }
    true
}

#[inline(always)]
fn push(slots: &mut Vec<Slot>, kind: SlotKind, decl: u32, value: Val, bytes: (usize, usize, usize)) -> usize {
    push_slot(slots, NO_KEY, kind, decl, value, bytes)
}

fn batch_v2(buf: &[u8], pos: usize, total: usize, index: u32, slots: &mut Vec<Slot>, (buffers, budget): (&mut Vec<bytes::Bytes>, &Budget)) -> bool {
    if total < V2_HEADER {
        return false;
    }
    let batch = push(slots, SlotKind::Batch, index, Val::Null, (pos, total, 0));
    let mut at = pos;
    let mut header = [0i64; V2_FIELDS.len()];
    for (k, (_, ty, width)) in V2_FIELDS.iter().enumerate() {
        let b = &buf[at..at + width];
        let v = match *ty {
            "int8" => i64::from(b[0] as i8),
            "int16" => i64::from(i16::from_be_bytes([b[0], b[1]])),
            "int32" => i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            "uint32" => i64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            _ => i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        };
        header[k] = v;
        let value = if *ty == "uint32" { Val::Uint(v as u64) } else { Val::Int(v) };
        push(slots, SlotKind::Part, k as u32, value, (at, *width, 0));
        at += width;
    }
    let (crc, attrs, count) = (header[4] as u32, header[5] as u16, header[12]);
    // Control batches, unknown codecs and bad checksums are read, which says what they are.
    let Some(codec) = Codec::from_attributes(attrs).filter(|_| attrs & 0x20 == 0) else { return false };
    if crc32c(&buf[pos + 21..pos + total]) != crc {
        return false;
    }
    let body = (pos + V2_HEADER, pos + total);
    if codec == Codec::None {
        if !records(buf, body, count, slots, None) {
            return false;
        }
    } else {
        // Records the batch says it holds that cannot fit are left to reading
        // (which shows where the budget ran out) before anything is decompressed twice.
        if (count.max(0) as u64).saturating_mul(RECORD_COST) > budget.expanded_room() {
            return false;
        }
        let Ok(data) = decompress_within(codec, &buf[body.0..body.1], budget) else { return false };
        let comp = push(slots, SlotKind::Compressed, buffers.len() as u32, Val::Null, (body.0, body.1 - body.0, 0));
        if !records(&data, (0, data.len()), count, slots, Some(budget)) {
            return false;
        }
        close(slots, comp, body.1);
        buffers.push(data.into());
    }
    close(slots, batch, pos + total);
    true
}

/// The `count` records of `buf[start..end]`; false when they are not exactly
/// that, or (for decompressed data, `expanded`) when the nodes they become do
/// not fit the budget: reading them then says where it ran out.
fn records(buf: &[u8], (start, end): (usize, usize), count: i64, slots: &mut Vec<Slot>, expanded: Option<&Budget>) -> bool {
    let mut r = Reader::new(buf);
    r.seek(start);
    r.limit(end - start);
    let mut records = 0i64;
    while r.pos() < end && records < count.max(0) {
        let Some(cost) = record(&mut r, slots) else { return false };
        // What reading holds for the same record's nodes.
        if expanded.is_some_and(|b| !b.hold(cost)) {
            return false;
        }
        records += 1;
    }
    // A count that does not match the records is a warning, which reading gives.
    records == count && r.pos() == end
}

/// One record's slots and what its nodes will cost (as reading holds it:
/// the record, its headers, Schema Registry framing of its key and value);
/// `None` where reading would report an error or a warning.
fn record(r: &mut Reader, slots: &mut Vec<Slot>) -> Option<u64> {
    let at = r.pos();
    let (len, n) = r.varint("record length").ok()?;
    if len < 0 || len as usize > r.remaining() {
        return None;
    }
    let end = at + n + len as usize;
    let outer_end = r.limit(len as usize);
    let rec = push(slots, SlotKind::Record, 0, Val::Int(len.into()), (at, n + len as usize, n));
    let a = r.pos();
    let attributes = r.i8("record attributes").ok()?;
    push(slots, SlotKind::Part, 0, Val::Int(attributes.into()), (a, 1, 0));
    let a = r.pos();
    let (ts, w) = r.varlong("timestampDelta").ok()?;
    push(slots, SlotKind::Part, 0, Val::Int(ts), (a, w, 0));
    let a = r.pos();
    let (od, w) = r.varint("offsetDelta").ok()?;
    push(slots, SlotKind::Part, 0, Val::Int(od.into()), (a, w, 0));
    let framed = u64::from(varint_bytes(r, slots)?) + u64::from(varint_bytes(r, slots)?);
    let a = r.pos();
    let (hc, w) = r.varint("headersCount").ok()?;
    if hc < 0 || hc as usize > r.remaining() {
        return None;
    }
    let headers = push(slots, SlotKind::Part, 0, Val::Int(hc.into()), (a, w, w));
    for _ in 0..hc {
        let h = push(slots, SlotKind::Part, 0, Val::Null, (r.pos(), 0, 0));
        varint_bytes(r, slots)?;
        varint_bytes(r, slots)?;
        close(slots, h, r.pos());
    }
    close(slots, headers, r.pos());
    if r.pos() != end {
        return None;
    }
    r.restore_end(outer_end);
    close(slots, rec, end);
    Some(RECORD_COST + hc as u64 * HEADER_COST + framed * FRAMING_COST)
}

/// A varint length (negative: null) and that many bytes; whether they are
/// in Schema Registry framing (which a plain topic's key or value shows).
fn varint_bytes(r: &mut Reader, slots: &mut Vec<Slot>) -> Option<bool> {
    let at = r.pos();
    let (len, n) = r.varint("bytes length").ok()?;
    let (value, framed) = match usize::try_from(len) {
        Ok(len) => {
            r.take(len, "bytes").ok()?;
            let framed = r.buf().get(at + n..at + n + len).and_then(schema_registry_id).is_some();
            (Val::Bytes(Span { at: (at + n) as u32, len: len as u32 }), framed)
        }
        Err(_) => (Val::Null, false),
    };
    push(slots, SlotKind::Part, len as u32, value, (at, r.pos() - at, n));
    Some(framed)
}

thread_local! {
    /// Scratch slots for [`check_batches`], reused between records fields.
    static SCRATCH: std::cell::Cell<Vec<Slot>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Damage in the record batches of `buf[start..end]` for the views that show
/// record data as bytes (the JSON contract): the same findings, at the same
/// offsets, as reading them into a tree. Plain batches are checked on a
/// scratch tape; anything else is read into nodes that are then dropped.
/// Decompression counts against `budget`; what the check held is given back.
pub(crate) fn check_batches(buf: &[u8], (start, end): (usize, usize), budget: &Budget, damage: &mut Vec<crate::decode::DecodeError>) {
    if !BatchDecoder::plausible(buf.get(start..end).unwrap_or_default()) {
        return;
    }
    let held = budget.expanded();
    let mut slots = SCRATCH.take();
    let mut buffers = Vec::new();
    let plain = batches_onto_tape(buf, (start, end), &mut slots, (&mut buffers, budget));
    slots.clear();
    SCRATCH.set(slots);
    drop(buffers);
    budget.release(budget.expanded().saturating_sub(held));
    if plain {
        return;
    }
    let bytes = bytes::Bytes::copy_from_slice(buf);
    let ctx = crate::decode::fields::Context { budget: budget.clone(), ..Default::default() };
    let mut reader = BatchDecoder::new(&bytes, crate::schema::Catalogue::builtin(), &ctx);
    let mut nodes = Vec::new();
    reader.decode_stream(start, end, 0, &mut nodes);
    drop(nodes);
    damage.append(&mut reader.damage);
    budget.release(budget.expanded().saturating_sub(held));
}
