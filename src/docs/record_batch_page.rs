//! The record batch page: RecordBatch v2, its records and headers, compressed
//! batches and the legacy message sets, each with a figure of example records
//! that kwire's record decoder reads back. The definitions do not describe
//! these formats, so the words are kwire's own; the fields, their types and
//! widths are the decoder's (`records::layout`: `V2_FIELDS`, `RECORD_LAYOUT`,
//! `RECORD_HEADER_LAYOUT`, `LEGACY_LAYOUT`).

use super::example_records::{legacy_message_set, record_batch, Compression, BASE_TIMESTAMP};
use super::figure::records_figure;
use super::links::{fixed_anchor, ENCODING, VARINT};
use super::{anchor, Block, Cell, Page, Section, Table};
use crate::decode::records::layout::{
    PartField, LEGACY_LAYOUT, RECORD_HEADER_LAYOUT, RECORD_LAYOUT, V2_FIELDS,
};
use crate::decode::Wire;
use crate::protocol::meanings::utc_millis;
use crate::schema::Catalogue;

pub const PATH: &str = super::links::RECORD_BATCH;

/// Where a record format's type is explained on the encoding page.
fn type_cell(ty: &str) -> Cell {
    match ty {
        "varint" | "varlong" => Cell::link(ty, format!("{ENCODING}#{VARINT}")),
        "bytes" => Cell::text(ty),
        _ => Cell::link(ty, format!("{ENCODING}#{}", fixed_anchor(ty))),
    }
}

/// A field table: name (anchored at `prefix` + name), type, width, what it holds.
fn field_table(prefix: &str, rows: &[(&str, &str, &str, &str)]) -> Block {
    let mut t = Table {
        head: ["field", "type", "bytes", "what it holds"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    };
    for (name, ty, width, what) in rows {
        let id = anchor(prefix, name);
        t.rows.push(vec![
            Cell::link(*name, format!("#{id}")),
            type_cell(ty),
            Cell::text(*width),
            Cell::text(*what),
        ]);
        t.row_ids.push(Some(id));
    }
    Block::Table(t)
}

/// What each RecordBatch v2 header field holds, in kwire's words.
fn batch_field_meaning(name: &str) -> &'static str {
    match name {
        "baseOffset" => "offset of the first record; producers send 0 and the broker assigns it",
        "batchLength" => "bytes after this field, to the end of the batch",
        "partitionLeaderEpoch" => "set by the broker: the leader epoch when the batch was appended",
        "magic" => "2 for this format (0 and 1 are the legacy messages below)",
        "crc" => "CRC-32C (Castagnoli) of everything from attributes to the end",
        "attributes" => {
            "bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control, 6 delete horizon"
        }
        "lastOffsetDelta" => "offsetDelta of the last record",
        "baseTimestamp" => {
            "timestamp of the first record (ms since the epoch), or the delete horizon"
        }
        "maxTimestamp" => "largest timestamp in the batch",
        "producerId" => "idempotent or transactional producer, -1 for none",
        "producerEpoch" => "that producer's epoch, -1 for none",
        "baseSequence" => "sequence number of the first record, -1 for none",
        "recordsCount" => "number of records that follow",
        _ => "",
    }
}

/// What each field of a record and of a record's header holds, in kwire's words.
fn record_field_meaning(name: &str) -> &'static str {
    match name {
        "length" => "bytes of the record after this field",
        "attributes" => "unused: 0",
        "timestampDelta" => "added to the batch's baseTimestamp",
        "offsetDelta" => "added to the batch's baseOffset",
        "keyLength" => "bytes of the key, -1 for a null key",
        "key" => "the key, as the producer's serializer wrote it",
        "valueLength" => "bytes of the value, -1 for null (a tombstone in a compacted topic)",
        "value" => "the value",
        "headers" => "number of headers that follow",
        "headerKeyLength" => "bytes of the header's key",
        "headerKey" => "the header's name, UTF-8",
        "headerValueLength" => "bytes of the header's value, -1 for null",
        "headerValue" => "the header's value",
        _ => "",
    }
}

/// What each field of a legacy message holds, in kwire's words.
fn legacy_field_meaning(name: &str) -> &'static str {
    match name {
        "offset" => "the message's offset (in a compressed wrapper: of its last inner message)",
        "messageSize" => "bytes after this field",
        "crc" => "CRC-32 (IEEE, not Castagnoli) of everything from magic to the end",
        "magic" => "0 or 1",
        "attributes" => "bits 0-2 compression; in magic 1, bit 3 the timestamp type",
        "timestamp" => "magic 1 only: ms since the epoch",
        "keyLength" => "bytes of the key, -1 for null",
        "key" => "the key",
        "valueLength" => "bytes of the value, -1 for null",
        "value" => "the value; in a compressed wrapper, a whole message set, compressed",
        _ => "",
    }
}

/// Rows of a field table for the decoder's layout of a record, a header or
/// a legacy message: each field's name, type, width and what it holds.
fn layout_rows(fields: &[PartField], meaning: fn(&str) -> &'static str) -> Vec<[String; 4]> {
    fields
        .iter()
        .map(|f| {
            let width = match (f.wire, f.sized_by) {
                (_, Some(length)) => length.to_string(),
                (Wire::Varint, _) => "1-5".to_string(),
                (Wire::Varlong, _) => "1-10".to_string(),
                (wire, _) => wire.fixed_width().unwrap_or(0).to_string(),
            };
            [f.name, f.wire.name(), &width, meaning(f.name)].map(String::from)
        })
        .collect()
}

/// [`field_table`] of [`layout_rows`].
fn layout_table(prefix: &str, rows: &[[String; 4]]) -> Block {
    let rows: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|[n, t, w, m]| (n.as_str(), t.as_str(), w.as_str(), m.as_str()))
        .collect();
    field_table(prefix, &rows)
}

pub fn record_batch_page(cat: &Catalogue) -> Page {
    let batch_rows: Vec<(&str, &str, String, &str)> = V2_FIELDS
        .iter()
        .map(|(name, ty, width)| {
            (
                *name,
                ty.as_str(),
                width.to_string(),
                batch_field_meaning(name),
            )
        })
        .collect();
    let batch_rows: Vec<(&str, &str, &str, &str)> = batch_rows
        .iter()
        .map(|(n, t, w, m)| (*n, *t, w.as_str(), *m))
        .collect();
    let header_bytes: usize = V2_FIELDS.iter().map(|f| f.2).sum();
    let when = utc_millis(BASE_TIMESTAMP).unwrap_or_default();
    let plain = records_figure(
        cat,
        "RecordBatch v2, two records, uncompressed".into(),
        record_batch(Compression::None),
    );
    let gzip = records_figure(
        cat,
        "RecordBatch v2, the same two records, gzip".into(),
        record_batch(Compression::Gzip),
    );
    let legacy = records_figure(
        cat,
        "a legacy message set: a magic 0 message, then a magic 1 message".into(),
        legacy_message_set(),
    );
    let codecs = Table {
        head: ["bits 0-2", "compression"].map(String::from).to_vec(),
        rows: [
            ("0", "none"),
            ("1", "gzip"),
            ("2", "snappy (xerial framing from Java clients)"),
            ("3", "lz4 (frame format)"),
            ("4", "zstd"),
        ]
        .iter()
        .map(|(b, c)| vec![Cell::text(*b), Cell::text(*c)])
        .collect(),
        ..Default::default()
    };
    let sections = vec![
        Section::new(
            "RecordBatch v2",
            vec![
                Block::Para(format!(
                    "Since Produce v3 and Fetch v4, a records field holds RecordBatch v2 batches back to back, with no count: the field's length says where they end. Each batch is a {header_bytes}-byte header, then its records. Below, two records written at {when}, each with a value and a header, the first with a key and the second with a null key."
                )),
                field_table("batch-", &batch_rows),
                Block::Figure(Box::new(plain)),
            ],
        )
        .with_id("batch"),
        Section::new(
            "Records and headers",
            vec![
                Block::Para("A record is a varint length, then fields whose lengths are signed varints (zigzag), so a small record costs few bytes; timestamps and offsets are deltas from the batch's. Its headers follow, each a key and a value.".into()),
                layout_table("record-", &layout_rows(&RECORD_LAYOUT, record_field_meaning)),
                layout_table(
                    "header-",
                    &layout_rows(&RECORD_HEADER_LAYOUT, record_field_meaning),
                ),
            ],
        )
        .with_id("record"),
        Section::new(
            "Compressed batches",
            vec![
                Block::Para("The attributes' lowest three bits name the codec. The header stays as it is, and everything after recordsCount is the records compressed as one block. The tree shows the compressed bytes, then the records read from the decompressed data: their offsets index that data, not the bytes above, so the grid does not mark them.".into()),
                Block::Table(codecs),
                Block::Figure(Box::new(gzip)),
            ],
        )
        .with_id("compression"),
        Section::new(
            "Legacy messages (magic 0 and 1)",
            vec![
                Block::Para("Before RecordBatch v2 (Produce v0-2, Fetch v0-3), a records field held a message set: messages back to back, each with its own offset, size and CRC-32, and no headers. Magic 1 added a timestamp. A compressed message set is one wrapper message whose value is the inner message set, compressed.".into()),
                layout_table("message-", &layout_rows(&LEGACY_LAYOUT, legacy_field_meaning)),
                Block::Figure(Box::new(legacy)),
            ],
        )
        .with_id("legacy"),
    ];
    Page {
        path: PATH.into(),
        title: "Record batches".into(),
        blocks: vec![
            Block::Para("How records are laid out inside a records field (Produce requests, Fetch responses) and in log segments. The protocol's definitions describe records fields only as bytes; these formats are kwire's own reading, and every byte below was written for this page and read back by kwire's record decoder.".into()),
            Block::Legend(Vec::new()),
        ],
        sections,
    }
    .fill_legend()
}
