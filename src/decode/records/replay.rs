//! Batch and record nodes built from an annotated tape's slots
//! ([`super::tape`]) by the same functions as when reading
//! ([`super::batch`]); `tests/replay.rs` holds both ways to the same tree.

use super::batch::{
    batch_node, bytes_leaf, bytes_length_leaf, compressed_node, decompressed_node, header_node, headers_leaf, length_leaf, offset_delta_leaf, record_node, truncated_node,
    v2_field_node, record_leaf, BytesPart, RECORD_ATTRIBUTES, TIMESTAMP_DELTA, ATTRIBUTES, HEADER_KEY, HEADER_VALUE, KEY, RECORD_FIELDS, VALUE,
};
use super::compression::Codec;
use super::payload::schema_registry_framing;
use super::BatchDecoder;
use crate::decode::tree::push_with;
use crate::decode::values::{Slot, SlotKind, Val, Values};
use crate::decode::Node;

impl BatchDecoder<'_, '_> {
    /// The nodes of the batches that are the children of slot `field` (a records field).
    pub(crate) fn replay_stream(&mut self, tape: &Values, field: u32, out: &mut Vec<Node>) {
        for (i, s) in tape.children(field) {
            match s.kind {
                SlotKind::Batch => {
                    let node = push_with(out, || batch_node(s.decl as usize, s.at as usize, s.len as usize));
                    self.replay_batch(tape, i, &mut node.children);
                }
                SlotKind::PartialBatch => {
                    let total = match s.value {
                        Val::Int(t) => Some(t as usize),
                        _ => None,
                    };
                    out.push(truncated_node(self.buf, (s.at as usize, (s.at + s.len) as usize), total));
                }
                _ => {}
            }
        }
    }

    fn replay_batch(&mut self, tape: &Values, batch: u32, out: &mut Vec<Node>) {
        let mut header = [0i64; super::batch::V2_FIELDS.len()];
        let mut k = 0;
        for (j, s) in tape.children(batch) {
            match s.kind {
                SlotKind::Part if k < header.len() => {
                    header[k] = int(s.value);
                    // The tape holds only batches whose checksum is right.
                    out.push(v2_field_node(k, s.at as usize, header[k], header[ATTRIBUTES] as u16, header[k] as u32));
                    k += 1;
                }
                SlotKind::Record => {
                    self.replay_records(tape, batch, header[0], out);
                    return;
                }
                SlotKind::Compressed => {
                    let (Some(data), Some(codec)) = (tape.buffers.get(s.decl as usize), Codec::from_attributes(header[ATTRIBUTES] as u16)) else { return };
                    let range = (s.at as usize, (s.at + s.len) as usize);
                    let comp = push_with(out, || compressed_node(self.buf, range, codec));
                    let d = push_with(&mut comp.children, || decompressed_node(range, data, codec));
                    let inner = BatchDecoder::new(data, self.catalogue, self.ctx);
                    inner.replay_records(tape, j, header[0], &mut d.children);
                    return;
                }
                _ => {}
            }
        }
    }

    /// The records among the children of slot `parent`, their offsets in this decoder's buffer.
    fn replay_records(&self, tape: &Values, parent: u32, base_offset: i64, out: &mut Vec<Node>) {
        for (n, (j, s)) in tape.children(parent).filter(|(_, s)| s.kind == SlotKind::Record).enumerate() {
            let node = push_with(out, || record_node(n, s.at as usize));
            node.len = s.len as usize;
            self.replay_record(tape, (j, s), base_offset, &mut node.children);
        }
    }

    fn replay_record(&self, tape: &Values, (i, rec): (u32, &Slot), base_offset: i64, out: &mut Vec<Node>) {
        out.reserve(RECORD_FIELDS);
        out.push(length_leaf(rec.at as usize, usize::from(rec.prefix), int(rec.value) as i32));
        for (n, (j, s)) in tape.children(i).enumerate() {
            let (at, len) = (s.at as usize, s.len as usize);
            match n {
                0 => out.push(record_leaf(RECORD_ATTRIBUTES, at, 1, int(s.value))),
                1 => out.push(record_leaf(TIMESTAMP_DELTA, at, len, int(s.value))),
                2 => out.push(offset_delta_leaf(at, len, int(s.value) as i32, base_offset)),
                3 => self.replay_bytes(KEY, s, out, true),
                4 => self.replay_bytes(VALUE, s, out, true),
                _ => {
                    let h = push_with(out, || headers_leaf(at, usize::from(s.prefix), int(s.value) as i32));
                    h.len = len;
                    for (k, (hi, hs)) in tape.children(j).enumerate() {
                        let hn = push_with(&mut h.children, || header_node(k, hs.at as usize));
                        hn.len = hs.len as usize;
                        let mut parts = tape.children(hi);
                        if let (Some((_, key)), Some((_, value))) = (parts.next(), parts.next()) {
                            self.replay_bytes(HEADER_KEY, key, &mut hn.children, false);
                            self.replay_bytes(HEADER_VALUE, value, &mut hn.children, false);
                        }
                    }
                }
            }
        }
    }

    /// A varint length and its bytes (or null), from their part; `framed`
    /// as when reading (the tape holds plain topics' records only).
    fn replay_bytes(&self, part: BytesPart, s: &Slot, out: &mut Vec<Node>, framed: bool) {
        let (at, n) = (s.at as usize, usize::from(s.prefix));
        out.push(bytes_length_leaf(part.0, at, n, s.decl as i32));
        let len = match s.value {
            Val::Bytes(span) => Some(span.len as usize),
            _ => None,
        };
        let node = push_with(out, || bytes_leaf(self.buf, part, at + n, len));
        if framed {
            schema_registry_framing(self.buf, node);
        }
    }
}

fn int(v: Val) -> i64 {
    match v {
        Val::Int(n) => n,
        Val::Uint(n) => n as i64,
        _ => 0,
    }
}
