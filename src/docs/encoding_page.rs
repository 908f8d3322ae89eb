//! The encoding page: every primitive of the protocol, each shown with bytes
//! that kwire's own writer and encoder produce and its decoder explains.
//! The example definitions below are kwire's own, written for this page.

use super::figure::{failed, struct_figure};
use super::links::{
    self, fixed_anchor, LENGTHS, REQUEST_HEADERS, RESPONSE_HEADERS, STRUCTS, TAGGED, UVARINT,
    VARINT,
};
use super::{Block, Cell, Page, Section, Table};
use crate::decode::Region;
use crate::encode::writer::{uvarint_bytes, zigzag32, Writer};
use crate::schema::catalogue::parse_one;
use crate::schema::Catalogue;
use serde_json::{json, Value};

pub const PATH: &str = links::ENCODING;

const FIXED: &str = r#"{"type": "data", "name": "FixedWidthExample", "validVersions": "0", "flexibleVersions": "none", "fields": [
  {"name": "Flag", "type": "bool", "versions": "0+"},
  {"name": "Small", "type": "int8", "versions": "0+"},
  {"name": "Count", "type": "int16", "versions": "0+"},
  {"name": "Port", "type": "uint16", "versions": "0+"},
  {"name": "Size", "type": "int32", "versions": "0+"},
  {"name": "Crc", "type": "uint32", "versions": "0+"},
  {"name": "Offset", "type": "int64", "versions": "0+"},
  {"name": "Ratio", "type": "float64", "versions": "0+"},
  {"name": "TopicId", "type": "uuid", "versions": "0+"}]}"#;

const LENGTHS_EXAMPLE: &str = r#"{"type": "data", "name": "LengthsExample", "validVersions": "0-1", "flexibleVersions": "1+", "fields": [
  {"name": "Name", "type": "string", "versions": "0+"},
  {"name": "Empty", "type": "string", "versions": "0+"},
  {"name": "Missing", "type": "string", "versions": "0+", "nullableVersions": "0+"},
  {"name": "Data", "type": "bytes", "versions": "0+"},
  {"name": "NoData", "type": "bytes", "versions": "0+", "nullableVersions": "0+"},
  {"name": "Items", "type": "[]int32", "versions": "0+"},
  {"name": "NoItems", "type": "[]int32", "versions": "0+", "nullableVersions": "0+"}]}"#;

const TAGGED_EXAMPLE: &str = r#"{"type": "data", "name": "TaggedExample", "validVersions": "0", "flexibleVersions": "0+", "fields": [
  {"name": "Id", "type": "int32", "versions": "0+"},
  {"name": "Note", "type": "string", "versions": "0+", "nullableVersions": "0+", "taggedVersions": "0+", "tag": 0, "default": "null"},
  {"name": "Epoch", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 3, "default": "-1"}]}"#;

/// `00 55`: bytes as the grids show them.
pub(crate) fn hex_spaced(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn written(f: impl FnOnce(&mut Writer)) -> String {
    let mut w = Writer::default();
    f(&mut w);
    hex_spaced(&w.buf)
}

fn table(head: &[&str], rows: Vec<Vec<String>>) -> Block {
    Block::Table(Table {
        head: head.iter().map(|s| s.to_string()).collect(),
        rows: rows
            .into_iter()
            .map(|r| r.into_iter().map(Cell::text).collect())
            .collect(),
        ..Default::default()
    })
}

/// A table whose rows are anchored by their first cell (the type's name).
fn anchored_table(head: &[&str], rows: Vec<Vec<String>>) -> Block {
    let row_ids = rows
        .iter()
        .map(|r| r.first().map(|name| fixed_anchor(name)))
        .collect();
    match table(head, rows) {
        Block::Table(t) => Block::Table(Table { row_ids, ..t }),
        other => other,
    }
}

fn example(
    cat: &Catalogue,
    definition: &str,
    version: i16,
    values: Value,
    region: Region,
) -> Block {
    let fig = match (
        parse_one(definition, "kwire encoding page"),
        values.as_object(),
    ) {
        (Ok(spec), Some(values)) => struct_figure(cat, &spec, version, values, region),
        (Err(e), _) => failed("example".into(), e),
        (_, None) => failed("example".into(), "example values are not an object".into()),
    };
    Block::Figure(Box::new(fig))
}

/// A header (RequestHeader, ResponseHeader) at `version`, from the catalogue.
fn header(cat: &Catalogue, name: &str, version: i16, values: Value, used_by: &str) -> Block {
    match (cat.by_name(name, version, None), values.as_object()) {
        (Some(spec), Some(values)) => {
            let mut fig = struct_figure(cat, spec, version, values, Region::RpcHeader);
            fig.caption = format!("{} ({used_by})", fig.caption);
            Block::Figure(Box::new(fig))
        }
        _ => Block::Para(format!("{name} v{version} is not in the catalogue.")),
    }
}

pub fn encoding_page(cat: &Catalogue) -> Page {
    let fixed_rows = vec![
        vec!["bool".into(), "true".into(), written(|w| w.i8(1))],
        vec!["int8".into(), "-1".into(), written(|w| w.i8(-1))],
        vec!["int16".into(), "85".into(), written(|w| w.i16(85))],
        vec!["uint16".into(), "65535".into(), written(|w| w.u16(65535))],
        vec!["int32".into(), "74".into(), written(|w| w.i32(74))],
        vec![
            "uint32".into(),
            "3735928559".into(),
            written(|w| w.u32(3_735_928_559)),
        ],
        vec!["int64".into(), "-2".into(), written(|w| w.i64(-2))],
        vec!["float64".into(), "1.5".into(), written(|w| w.f64(1.5))],
        vec![
            "uuid".into(),
            "00112233-4455-6677-8899-aabbccddeeff".into(),
            written(|w| {
                w.bytes(&[
                    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc,
                    0xdd, 0xee, 0xff,
                ])
            }),
        ],
    ];
    let uvarints = [0u64, 1, 127, 128, 300, 16_383, 16_384, u64::from(u32::MAX)];
    let uvarint_rows = uvarints
        .iter()
        .map(|&v| {
            vec![
                v.to_string(),
                uvarint_bytes(v).len().to_string(),
                hex_spaced(&uvarint_bytes(v)),
            ]
        })
        .collect();
    let varints = [0, -1, 1, -2, 2, 63, -64, 64, -65, i32::MAX, i32::MIN];
    let varint_rows = varints
        .iter()
        .map(|&v| {
            vec![
                v.to_string(),
                zigzag32(v).to_string(),
                written(|w| w.varint(v)),
            ]
        })
        .collect();
    let varlong_rows = [-1i64, 1, i64::MAX, i64::MIN]
        .iter()
        .map(|&v| vec![v.to_string(), written(|w| w.varlong(v))])
        .collect();
    let compact_rows = vec![
        vec!["null".into(), "0".into(), hex_spaced(&uvarint_bytes(0))],
        vec![
            "empty (0)".into(),
            "1".into(),
            hex_spaced(&uvarint_bytes(1)),
        ],
        vec!["5".into(), "6".into(), hex_spaced(&uvarint_bytes(6))],
        vec!["127".into(), "128".into(), hex_spaced(&uvarint_bytes(128))],
    ];
    let lengths = json!({"Name": "kafka", "Empty": "", "Missing": null, "Data": "0102", "NoData": null, "Items": [1, 2], "NoItems": null});
    let sections = vec![
        Section {
            heading: "Fixed-width numbers".into(),
            id: Some("fixed-width".into()),
            blocks: vec![
                Block::Para("Integers are big-endian two's complement (uint16 and uint32 unsigned), float64 is an IEEE 754 double, bool is one byte (0 or 1), and a uuid is its 16 bytes in order. The zero uuid is the usual \"none\".".into()),
                anchored_table(&["type", "value", "bytes"], fixed_rows),
                example(cat, FIXED, 0, json!({"Flag": true, "Small": -1, "Count": 85, "Port": 9092, "Size": 74, "Crc": 3_735_928_559u32, "Offset": -2, "Ratio": 1.5, "TopicId": "00112233-4455-6677-8899-aabbccddeeff"}), Region::RequestBody),
            ],
        },
        Section {
            heading: "Unsigned varints".into(),
            id: Some(UVARINT.into()),
            blocks: vec![
                Block::Para("An unsigned varint holds 7 bits per byte, least significant group first; the high bit of a byte says another byte follows. Lengths in flexible versions, tagged-field counts, tags and sizes are unsigned varints.".into()),
                table(&["value", "bytes used", "bytes"], uvarint_rows),
            ],
        },
        Section {
            heading: "Signed varints and zigzag".into(),
            id: Some(VARINT.into()),
            blocks: vec![
                Block::Para("Signed varints (in records: lengths, deltas, header counts) first map the number by zigzag, so small negative numbers stay short: 0, -1, 1, -2, 2 become 0, 1, 2, 3, 4. The result is written as an unsigned varint. varlong does the same with 64 bits.".into()),
                table(&["varint", "zigzag", "bytes"], varint_rows),
                table(&["varlong", "bytes"], varlong_rows),
            ],
        },
        Section {
            heading: "Strings, bytes and arrays".into(),
            id: Some(LENGTHS.into()),
            blocks: vec![
                Block::Para("Classic (non-flexible) versions prefix a string with an int16 length, and bytes and arrays with an int32 length or element count; null is length -1. Flexible versions use compact forms: an unsigned varint of length + 1, so 0 means null and 1 means empty. The same values encoded both ways:".into()),
                example(cat, LENGTHS_EXAMPLE, 0, lengths.clone(), Region::RequestBody),
                example(cat, LENGTHS_EXAMPLE, 1, lengths, Region::RequestBody),
                table(&["length", "compact prefix (n+1)", "bytes"], compact_rows),
                Block::Para("A nullable field accepts null in the versions its definition says; elsewhere null cannot be encoded. A nullable struct is prefixed by an int8: -1 for null, 1 for present.".into()),
            ],
        },
        Section {
            heading: "Structs".into(),
            id: Some(STRUCTS.into()),
            blocks: vec![Block::Para(
                "A struct (a message body, an element of an array of structs, a field whose type is a struct) is its fields in the order of the definition, each in its own encoding, with no length or count of its own: only the definition says where it ends. In flexible versions it ends with its tagged fields. Fields absent at a version take no bytes at all.".into(),
            )],
        },
        Section {
            heading: "Tagged fields".into(),
            id: Some(TAGGED.into()),
            blocks: vec![
                Block::Para("In flexible versions every struct ends with its tagged fields: an unsigned varint count (a plain count, not n+1), then for each field its tag and its size as unsigned varints, then its bytes, in increasing tag order. A field left at its default is usually not sent, so the smallest instance ends each struct with a single 00.".into()),
                example(cat, TAGGED_EXAMPLE, 0, json!({"Id": 7}), Region::RequestBody),
                example(cat, TAGGED_EXAMPLE, 0, json!({"Id": 7, "Note": "hi", "Epoch": 5}), Region::RequestBody),
            ],
        },
        Section {
            heading: "Request headers".into(),
            id: Some(REQUEST_HEADERS.into()),
            blocks: vec![
                Block::Para("After the int32 size of the frame comes the request header. v0 has the API key, the API version and the correlation id; v1 adds the client id, a nullable string with an int16 length; v2 adds tagged fields but keeps the client id's int16 length. Flexible request versions use v2, others v1 (ControlledShutdown v0 used v0).".into()),
                header(cat, "RequestHeader", 0, json!({"RequestApiKey": 7, "RequestApiVersion": 0, "CorrelationId": 1}), "ControlledShutdown v0"),
                header(cat, "RequestHeader", 1, json!({"RequestApiKey": 3, "RequestApiVersion": 8, "CorrelationId": 1, "ClientId": "kwire"}), "Metadata v8"),
                header(cat, "RequestHeader", 2, json!({"RequestApiKey": 3, "RequestApiVersion": 12, "CorrelationId": 1, "ClientId": "kwire"}), "Metadata v12"),
            ],
        },
        Section {
            heading: "Response headers".into(),
            id: Some(RESPONSE_HEADERS.into()),
            blocks: vec![
                Block::Para("A response header v0 is the correlation id alone; v1 adds tagged fields. Flexible response versions use v1, except ApiVersions, whose responses always use v0 so that any client can read them.".into()),
                header(cat, "ResponseHeader", 0, json!({"CorrelationId": 1}), "non-flexible responses, ApiVersions"),
                header(cat, "ResponseHeader", 1, json!({"CorrelationId": 1}), "flexible responses"),
            ],
        },
    ];
    Page {
        path: PATH.into(),
        title: "Encoding".into(),
        blocks: vec![
            Block::Para("How each primitive of the Kafka protocol is laid out in bytes. Every byte on this page was written by kwire's encoder and is explained by its decoder; the small example definitions are kwire's own.".into()),
            Block::Legend(Vec::new()),
        ],
        sections,
    }
    .fill_legend()
}
