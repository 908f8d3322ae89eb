//! `kwire records --format dump`: a log segment's batches as kafka-dump-log
//! prints them with `--deep-iteration --print-data-log`, one line per batch
//! and `| ` one per record. The batch's header and records come typed from
//! [`crate::decode::records::view`] (the checksum's validity too, from the
//! decoder); damaged parts get a line each instead of values they do not hold.

use crate::decode::records::view::{self, batch_header};
use crate::decode::{Kind, Node, Role, Value};
use crate::render::values::value_text;
use crate::text::escape::sanitize;
use std::io::{self, Write};

/// The lines of one batch node of a segment, `position` its place in the
/// file (the node's offsets are file positions already).
pub(crate) fn write_batch(out: &mut impl Write, batch: &Node, position: usize) -> io::Result<()> {
    let Some(h) = batch_header(batch) else {
        let mut damaged = Vec::new();
        damaged_nodes(batch, false, &mut damaged);
        if batch.kind == Kind::TruncatedBatch {
            writeln!(
                out,
                "| truncated batch at position {} ({} bytes): the input ends inside it",
                batch.offset, batch.len
            )?;
        } else if damaged.is_empty() {
            writeln!(
                out,
                "| {} at position {} ({} bytes): not a RecordBatch v2; `--format tree` shows it",
                sanitize(&batch.name.text()),
                batch.offset,
                batch.len
            )?;
        }
        for n in damaged {
            write_damage(n, out)?;
        }
        return Ok(());
    };
    let or = |v: Option<i64>| v.unwrap_or(-1);
    let base = or(h.base_offset);
    let attrs = or(h.attributes);
    let codec = ["none", "gzip", "snappy", "lz4", "zstd"]
        .get((attrs & 7) as usize)
        .copied()
        .unwrap_or("unknown");
    let ts_type = if attrs & 0x08 != 0 {
        "LogAppendTime"
    } else {
        "CreateTime"
    };
    let base_seq = or(h.base_sequence);
    let last_delta = or(h.last_offset_delta);
    writeln!(
        out,
        "baseOffset: {base} lastOffset: {} count: {} baseSequence: {base_seq} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} position: {position} {ts_type}: {} size: {} magic: {} compresscodec: {codec} crcValid: {}",
        base + last_delta,
        or(h.records_count),
        if base_seq < 0 { -1 } else { base_seq + last_delta },
        or(h.producer_id),
        or(h.producer_epoch),
        or(h.partition_leader_epoch),
        attrs & 0x10 != 0,
        attrs & 0x20 != 0,
        or(h.max_timestamp),
        batch.len,
        or(h.magic),
        h.crc_valid,
    )?;
    let base_ts = or(h.base_timestamp);
    let mut records = Vec::new();
    view::records(std::slice::from_ref(batch), &mut |r| records.push(r));
    for r in records {
        let od = or(r.offset_delta);
        let size = |p: view::Payload| p.bytes().map_or(-1, |b| b.len() as i64);
        let headers: Vec<String> = r.headers.iter().map(|(k, _)| payload(k.node)).collect();
        writeln!(
            out,
            "| offset: {} {ts_type}: {} keySize: {} valueSize: {} sequence: {} headerKeys: [{}] key: {} payload: {}",
            base + od,
            // Under LogAppendTime every record's is the batch's maxTimestamp.
            r.timestamp.unwrap_or(base_ts + or(r.timestamp_delta)),
            size(r.key),
            size(r.value),
            if base_seq < 0 { -1 } else { base_seq + od },
            headers.join(","),
            payload(r.key.node),
            payload(r.value.node),
        )?;
    }
    let mut damaged = Vec::new();
    damaged_nodes(batch, false, &mut damaged);
    for n in damaged {
        write_damage(n, out)?;
    }
    Ok(())
}

/// The damaged parts of a batch's tree, outermost first: the nodes that carry
/// an error themselves (their children say no more than they do).
/// Each with whether its offset indexes decompressed data.
fn damaged_nodes<'a>(n: &'a Node, in_decompressed: bool, out: &mut Vec<(&'a Node, bool)>) {
    match n.error() {
        Some(_) => out.push((n, in_decompressed)),
        None => {
            let inside = in_decompressed || n.role == Role::Decompressed;
            n.children
                .iter()
                .for_each(|c| damaged_nodes(c, inside, out))
        }
    }
}

/// A damage line of the dump: where, and what was expected (never values read past it).
fn write_damage((n, in_decompressed): (&Node, bool), out: &mut impl Write) -> io::Result<()> {
    let at = if in_decompressed {
        format!("d:{}", n.offset)
    } else {
        n.offset.to_string()
    };
    writeln!(
        out,
        "| damaged {} at position {at}: {}",
        sanitize(&n.name.text()),
        sanitize(n.error().unwrap_or_default())
    )
}

/// Keys and values as kafka-dump-log prints them: UTF-8 text (escaped), else hex.
fn payload(n: &Node) -> String {
    match &n.value {
        Value::Bytes(Some(b)) => match std::str::from_utf8(b) {
            Ok(s) => sanitize(s),
            Err(_) => format!("0x{}", hex::encode(b)),
        },
        Value::Bytes(None) => "null".into(),
        _ => value_text(n).unwrap_or_default(),
    }
}
