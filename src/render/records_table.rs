//! The records of a capture ([`crate::analysis::records_table`]) as a
//! table, one line per record, or as JSON, one object per line; damaged
//! record data as a line or object of its own. Text from the capture is
//! escaped for terminals.

use crate::analysis::records_table::{DamageRow, Data, Decoded, Item, Origin, RecordRow};
use crate::analysis::Topic;
use crate::protocol::meanings::{utc_micros, utc_millis};
use crate::render::json::{struct_object, to_text, value_json};
use crate::schema::Catalogue;
use crate::text::escape::sanitize;
use serde_json::{json, Map, Value as Json};
use std::io::{self, Write};

/// Characters of a header's key or value, and of a key or value decoded
/// through a schema (what an internal topic's record says, never cut to a
/// column).
const HEADER_CHARS: usize = 32;
const DECODED_CHARS: usize = 160;

/// The table's layout: which columns it has and how many characters of
/// each key and value it shows, so that every line's headers start in the
/// same column. The frame's capture time is left out below
/// [`Widths::TIME_FROM`] columns (the frame number finds it in `--list`),
/// the record's timestamp below [`Widths::TIMESTAMP_FROM`]; the headers take
/// what is left and are cut at the line's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Widths {
    /// The frame's capture time column.
    pub time: bool,
    /// The record's timestamp column.
    pub timestamp: bool,
    /// Characters of a key and of a value (`usize::MAX`: whole).
    pub key: usize,
    pub value: usize,
}

impl Default for Widths {
    fn default() -> Self {
        Widths::fit(Some(crate::text::width::DEFAULT_COLUMNS))
    }
}

impl Widths {
    /// A terminal at least this wide shows the frame's capture time.
    pub const TIME_FROM: usize = 160;
    /// A terminal at least this wide shows the record's timestamp.
    pub const TIMESTAMP_FROM: usize = 110;
    /// Columns before the key: frame, conn, direction, topic, partition and
    /// offset, with the spaces after them.
    const LEAD: usize = 6 + 5 + 13 + 17 + 5 + 9;
    const TIME: usize = 28;
    const TIMESTAMP: usize = 25;

    /// The layout for lines of at most `columns` (`None`: everything, whole).
    pub fn fit(columns: Option<usize>) -> Widths {
        let Some(columns) = columns else {
            return Widths {
                time: true,
                timestamp: true,
                key: usize::MAX,
                value: usize::MAX,
            };
        };
        let time = columns >= Self::TIME_FROM;
        let timestamp = columns >= Self::TIMESTAMP_FROM;
        let lead = Self::LEAD
            + if time { Self::TIME } else { 0 }
            + if timestamp { Self::TIMESTAMP } else { 0 };
        // What is left goes 3/10 to the key, half to the value, the rest
        // to the headers.
        let room = columns.saturating_sub(lead);
        let key = (room * 3 / 10).clamp(8, 24);
        let value = (room / 2).clamp(12, 64);
        Widths {
            time,
            timestamp,
            key,
            value,
        }
    }

    /// A column's width in the header line (whole keys and values pad to nothing).
    fn pad(chars: usize) -> usize {
        if chars == usize::MAX {
            0
        } else {
            chars
        }
    }
}

/// The table's first line.
pub(crate) fn write_table_header(out: &mut impl Write, widths: Widths) -> io::Result<()> {
    write!(out, "{:>5} ", "frame")?;
    if widths.time {
        write!(out, "{:<27} ", "time")?;
    }
    write!(
        out,
        "{:>4} {:<12} {:<16} {:>4} {:>8} ",
        "conn", "direction", "topic", "part", "offset"
    )?;
    if widths.timestamp {
        write!(out, "{:<24} ", "timestamp")?;
    }
    writeln!(
        out,
        "{:<kw$} {:<vw$} headers",
        "key",
        "value",
        kw = Widths::pad(widths.key),
        vw = Widths::pad(widths.value),
    )
}

/// One item as a table line: a record, or what is damaged (`!!`).
pub(crate) fn write_table_item(
    out: &mut impl Write,
    cat: &Catalogue,
    item: Item<'_>,
    widths: Widths,
) -> io::Result<()> {
    match item {
        Item::Record(r) => {
            let mut key = preview(&r.key, widths.key);
            if r.control {
                key.insert_str(0, "[control] ");
            }
            let headers: Vec<String> = r
                .headers
                .iter()
                .map(|h| {
                    format!(
                        "{}={}",
                        preview(&h.key, HEADER_CHARS),
                        preview(&h.value, HEADER_CHARS)
                    )
                })
                .collect();
            let timestamp = match r.timestamp {
                Some(ms) => utc_millis(ms).unwrap_or_else(|| ms.to_string()),
                None => "-".into(),
            };
            write_place(out, cat, &r.origin, r.topic.as_ref(), r.partition, widths)?;
            write!(out, " {:>8} ", offset_text(r))?;
            if widths.timestamp {
                write!(out, "{timestamp:<24} ")?;
            }
            writeln!(
                out,
                "{:<kw$} {:<vw$} {}",
                key,
                preview(&r.value, widths.value),
                headers.join(", "),
                kw = Widths::pad(widths.key),
                vw = Widths::pad(widths.value),
            )
        }
        Item::Damage(d) => {
            write_place(out, cat, &d.origin, d.topic.as_ref(), d.partition, widths)?;
            let what = if d.frame {
                "the frame did not decode"
            } else {
                "damaged record data"
            };
            writeln!(out, " !! {what} {}", sanitize(&d.error.to_string()))
        }
    }
}

/// Time, connection, direction, topic and partition.
/// A record's offset: the broker's, or `+N` within its batch when the
/// broker's is not known (a produced record whose response is not in the
/// capture).
pub(crate) fn offset_text(r: &RecordRow) -> String {
    match r.offset_assigned {
        true => r.offset.to_string(),
        false => format!("+{}", r.offset),
    }
}

fn write_place(
    out: &mut impl Write,
    cat: &Catalogue,
    o: &Origin,
    topic: Option<&Topic>,
    partition: Option<i32>,
    widths: Widths,
) -> io::Result<()> {
    let arrow = o.direction.arrow();
    let api = cat.api_name(o.api_key).unwrap_or("?");
    let topic = topic.map_or_else(|| "-".to_string(), |t| sanitize(&t.text()));
    let partition = partition.map_or_else(|| "-".to_string(), |p| p.to_string());
    write!(out, "{:>5} ", o.frame)?;
    if widths.time {
        write!(out, "{:<27} ", time_text(o.time))?;
    }
    write!(
        out,
        "{:>4} {:<12} {:<16} {:>4}",
        o.conn,
        format!("{arrow} {api}"),
        topic,
        partition
    )
}

/// A capture time as a UTC date-time to the microsecond, or as seconds when it cannot be one.
fn time_text(t: f64) -> String {
    let us = (t * 1e6).round();
    if us >= 0.0 && us < u64::MAX as f64 {
        if let Some(text) = utc_micros(us as u64) {
            return text;
        }
    }
    format!("{t:.6}")
}

/// A key, value or header part in at most about `max` characters: text
/// (escaped), `0x` hex when it is not UTF-8, `null`, `[schema N] …` for
/// Schema Registry framing, or what it decoded to.
fn preview(d: &Data, max: usize) -> String {
    if let Some(decoded) = &d.decoded {
        return cut(&decoded_text(decoded), DECODED_CHARS);
    }
    match (&d.bytes, &d.schema) {
        (None, _) => "null".into(),
        (Some(_), Some((id, payload))) => format!("[schema {id}] {}", plain(payload, max)),
        (Some(b), None) => plain(b, max),
    }
}

/// Bytes in at most `max` characters: text escaped, else `0x` hex; `…`
/// (within `max`) where they are cut.
fn plain(b: &[u8], max: usize) -> String {
    if b.is_empty() {
        return "\"\"".into();
    }
    match std::str::from_utf8(b) {
        // Escaped first, so that an escape's characters count too.
        Ok(s) => cut(&sanitize(s), max),
        Err(_) => {
            let whole = 2 + 2 * b.len();
            if whole <= max {
                return format!("0x{}", hex::encode(b));
            }
            let shown = max.saturating_sub(3) / 2;
            format!("0x{}…", hex::encode(&b[..b.len().min(shown)]))
        }
    }
}

/// `s` in at most `max` characters, its last a `…` when cut.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let at = s
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(s.len(), |(at, _)| at);
    format!("{}…", &s[..at])
}

/// `OffsetCommitKey v0 {"group":"billing",…}`, or the prefixes alone.
fn decoded_text(d: &Decoded) -> String {
    let (schema, fields) = decoded_json(d);
    let fields = to_text(&Json::Object(fields));
    match schema {
        Some(s) => format!("{} {fields}", sanitize(s)),
        None => fields,
    }
}

/// What a key or value decoded to, as the JSON contract has its values: the
/// schema it was read with, when it was, and the struct's fields, or the
/// prefixes read when there is no struct.
fn decoded_json(d: &Decoded) -> (Option<&str>, Map<String, Json>) {
    match d {
        Decoded::Struct { schema, node } => (Some(schema), struct_object(node)),
        Decoded::Prefixes(nodes) => (
            None,
            nodes
                .iter()
                .map(|n| (n.name.to_string(), value_json(n)))
                .collect(),
        ),
    }
}

/// One item as a JSON object on a line.
pub(crate) fn write_json_item(
    out: &mut impl Write,
    cat: &Catalogue,
    item: Item<'_>,
) -> io::Result<()> {
    let obj = match item {
        Item::Record(r) => record_json(cat, r),
        Item::Damage(d) => damage_json(cat, d),
    };
    out.write_all(to_text(&Json::Object(obj)).as_bytes())?;
    out.write_all(b"\n")
}

fn origin_json(
    cat: &Catalogue,
    o: &Origin,
    topic: Option<&Topic>,
    partition: Option<i32>,
) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("frame".into(), json!(o.frame));
    m.insert("time".into(), crate::render::json::capture_time(o.time));
    m.insert("conn".into(), json!(o.conn));
    m.insert("api_key".into(), json!(o.api_key));
    m.insert("api_name".into(), json!(cat.api_name(o.api_key)));
    m.insert("direction".into(), json!(o.direction.as_str()));
    m.insert(
        "topic".into(),
        topic.map_or(Json::Null, |t| json!(t.text())),
    );
    m.insert("partition".into(), json!(partition));
    m
}

/// The record's object: `key` and `value` as text when UTF-8, else hex,
/// with `key_hex` and `value_hex` always; the schema id of framed ones
/// (`key_schema_id`, `schema_id`) and what internal topics' decoded to
/// (`key_decoded`, `value_decoded`) when there is one.
pub(crate) fn record_json(cat: &Catalogue, r: &RecordRow) -> Map<String, Json> {
    let mut m = origin_json(cat, &r.origin, r.topic.as_ref(), r.partition);
    m.insert("offset".into(), json!(r.offset));
    m.insert("offset_assigned".into(), json!(r.offset_assigned));
    m.insert("timestamp".into(), json!(r.timestamp));
    for (name, d, schema_key) in [
        ("key", &r.key, "key_schema_id"),
        ("value", &r.value, "schema_id"),
    ] {
        m.insert(name.into(), text_or_hex(d));
        m.insert(format!("{name}_hex"), hex_of(d));
        if let Some((id, _)) = d.schema {
            m.insert(schema_key.into(), json!(id));
        }
        if let Some(dec) = &d.decoded {
            let (schema, fields) = decoded_json(dec);
            m.insert(
                format!("{name}_decoded"),
                json!({"schema": schema, "fields": fields}),
            );
        }
    }
    let headers: Vec<Json> = r.headers.iter().map(|h| json!({"key": text_or_hex(&h.key), "value": text_or_hex(&h.value), "value_hex": hex_of(&h.value)})).collect();
    m.insert("headers".into(), Json::Array(headers));
    if r.control {
        m.insert("control".into(), json!(true));
    }
    m
}

fn damage_json(cat: &Catalogue, d: &DamageRow) -> Map<String, Json> {
    let mut m = origin_json(cat, &d.origin, d.topic.as_ref(), d.partition);
    let key = if d.frame { "error" } else { "record_error" };
    m.insert(
        key.into(),
        json!({"offset": d.error.offset, "expected": d.error.expected}),
    );
    m
}

fn text_or_hex(d: &Data) -> Json {
    match &d.bytes {
        None => Json::Null,
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => json!(s),
            Err(_) => json!(hex::encode(b)),
        },
    }
}

fn hex_of(d: &Data) -> Json {
    d.bytes
        .as_ref()
        .map_or(Json::Null, |b| json!(hex::encode(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_escape_cut_and_mark_what_they_show() {
        let d = |b: &[u8]| Data {
            bytes: Some(bytes::Bytes::copy_from_slice(b)),
            ..Default::default()
        };
        // At most `max` characters, escapes counted, the `…` among them.
        assert_eq!(preview(&d(b"plain"), 10), "plain");
        assert_eq!(preview(&d(b"\x1b[31mred"), 14), "\\u{1b}[31mred");
        assert_eq!(preview(&d(b"\x1b[31mred"), 10), "\\u{1b}[31…");
        assert_eq!(
            preview(&d("é".repeat(12).as_bytes()), 10),
            format!("{}…", "é".repeat(9))
        );
        assert_eq!(preview(&d(&[0xff, 0xfe, 0x00]), 10), "0xfffe00");
        assert_eq!(preview(&d(&[0xff; 8]), 10), "0xffffff…");
        assert_eq!(preview(&d(b""), 10), "\"\"");
        assert_eq!(preview(&Data::default(), 10), "null");
        let framed = Data {
            schema: Some((17, bytes::Bytes::from_static(b"{}"))),
            ..d(b"\x00\x00\x00\x00\x11{}")
        };
        assert_eq!(preview(&framed, 10), "[schema 17] {}");
    }

    #[test]
    fn capture_times_are_utc_to_the_microsecond() {
        assert_eq!(
            time_text(1_700_000_000.001_002),
            "2023-11-14T22:13:20.001002Z"
        );
        assert_eq!(time_text(-1.5), "-1.500000");
    }
}
