//! The search page: an index of every API, field, record type, record format
//! field, error code and type, searched in the browser by a few lines of script
//! over JSON inlined in the page (nothing is fetched at view time).

use super::errors_page::{error_anchor, PATH as ERRORS};
use super::links::RECORD_BATCH;
use super::links::{fixed_anchor, ENCODING, LENGTHS, STRUCTS, TAGGED, UVARINT, VARINT};
use super::{anchor, Block, Page};
use crate::decode::records::layout::V2_FIELDS;
use crate::protocol::error_codes::ERROR_CODES;

pub const PATH: &str = "search";

/// One thing to find: the text searched and shown, what kind of thing it is,
/// and where it is (a page path, with an anchor after `#`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub text: String,
    pub kind: String,
    pub path: String,
}

impl Entry {
    pub fn new(text: impl Into<String>, kind: impl Into<String>, path: impl Into<String>) -> Entry {
        Entry {
            text: text.into(),
            kind: kind.into(),
            path: path.into(),
        }
    }
}

/// What the site's own pages explain, beyond the definitions: the types, the
/// record formats' fields and the error codes.
pub(crate) fn fixed_entries() -> Vec<Entry> {
    let mut out = vec![
        Entry::new("Encoding", "page", ENCODING),
        Entry::new("Record batches", "page", RECORD_BATCH),
        Entry::new("Error codes", "page", ERRORS),
        Entry::new("Display filters", "page", super::filters_page::PATH),
        Entry::new("Export tables", "page", super::export_page::PATH),
    ];
    for ty in [
        "bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid",
    ] {
        out.push(Entry::new(
            ty,
            "type",
            format!("{ENCODING}#{}", fixed_anchor(ty)),
        ));
    }
    for (text, at) in [
        ("uvarint", UVARINT),
        ("varint varlong zigzag", VARINT),
        ("string bytes array compact nullable", LENGTHS),
        ("struct", STRUCTS),
        ("tagged fields", TAGGED),
    ] {
        out.push(Entry::new(text, "type", format!("{ENCODING}#{at}")));
    }
    for (name, _, _) in V2_FIELDS {
        out.push(Entry::new(
            format!("RecordBatch {name}"),
            "RecordBatch field",
            format!("{RECORD_BATCH}#{}", anchor("batch-", name)),
        ));
    }
    for name in [
        "length",
        "attributes",
        "timestampDelta",
        "offsetDelta",
        "keyLength",
        "key",
        "valueLength",
        "value",
        "headers",
    ] {
        out.push(Entry::new(
            format!("Record {name}"),
            "Record field",
            format!("{RECORD_BATCH}#{}", anchor("record-", name)),
        ));
    }
    for name in [
        "headerKeyLength",
        "headerKey",
        "headerValueLength",
        "headerValue",
    ] {
        out.push(Entry::new(
            format!("Header {name}"),
            "Record header field",
            format!("{RECORD_BATCH}#{}", anchor("header-", name)),
        ));
    }
    for name in [
        "offset",
        "messageSize",
        "crc",
        "magic",
        "attributes",
        "timestamp",
        "keyLength",
        "key",
        "valueLength",
        "value",
    ] {
        out.push(Entry::new(
            format!("Message {name}"),
            "legacy message field",
            format!("{RECORD_BATCH}#{}", anchor("message-", name)),
        ));
    }
    for &(code, name) in ERROR_CODES {
        out.push(Entry::new(
            format!("{name} {code}"),
            "error code",
            format!("{ERRORS}#{}", error_anchor(code)),
        ));
    }
    out
}

pub fn search_page(entries: Vec<Entry>) -> Page {
    Page {
        path: PATH.into(),
        title: "Search".into(),
        blocks: vec![
            Block::Para(format!("An index of {} names: APIs and their fields, record types and theirs, the record formats' fields, types and error codes. Each word typed must appear in a name, in any case.", entries.len())),
            Block::Search(entries),
        ],
        sections: Vec::new(),
    }
}
