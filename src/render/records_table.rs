//! The records of a capture ([`crate::analysis::records_table`]) as a
//! table, one line per record, or as JSON, one object per line; damaged
//! record data as a line or object of its own. Text from the capture is
//! escaped for terminals.

use crate::analysis::records_table::{DamageRow, Data, Decoded, Item, Origin, RecordRow};
use crate::analysis::Topic;
use crate::protocol::meanings::{utc_micros, utc_millis};
use crate::render::digits::{push_hex, push_int, push_uint};
use crate::render::json::{to_text, write_json_str, write_struct_values};
use crate::schema::Catalogue;
use crate::text::escape::sanitize;
use crate::text::width::Padded;
use std::io::{self, Write};

/// Characters of a header's key or value, and of a key or value decoded
/// through a schema (what an internal topic's record says, never cut to a
/// column).
const HEADER_CHARS: usize = 32;
const DECODED_CHARS: usize = 160;

/// The table's layout: which columns it has and how many terminal cells of
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
    /// Terminal cells of a key and of a value (`usize::MAX`: whole).
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
        "{} {} headers",
        Padded("key", widths.key),
        Padded("value", widths.value),
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
                "{} {} {}",
                Padded(&key, widths.key),
                Padded(&preview(&r.value, widths.value), widths.value),
                headers.join(", "),
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
        "{:>4} {:<12} {} {:>4}",
        o.conn,
        format!("{arrow} {api}"),
        Padded(&topic, 16),
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

/// A key, value or header part in at most about `max` terminal cells: text
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

/// Bytes in at most `max` cells: text escaped, else `0x` hex; `…`
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

/// `s` in at most `max` terminal cells, its last a `…` when cut.
fn cut(s: &str, max: usize) -> String {
    match max {
        usize::MAX => s.to_string(),
        max => crate::text::width::fit(s, max),
    }
}

/// `OffsetCommitKey v0 {"group":"billing",…}`, or the prefixes alone.
fn decoded_text(d: &Decoded) -> String {
    let mut fields = Vec::new();
    write_decoded_fields(&mut fields, d);
    let fields = String::from_utf8_lossy(&fields);
    match d {
        Decoded::Struct(v) => format!("{} {fields}", sanitize(&v.schema)),
        Decoded::Prefixes(_) => fields.into_owned(),
    }
}

/// What a key or value decoded to, as the JSON contract has its values:
/// the struct's fields (written by the contract's writer), or the prefixes
/// read when there is no struct.
fn write_decoded_fields(out: &mut Vec<u8>, d: &Decoded) {
    match d {
        Decoded::Struct(v) => write_struct_values(v, out),
        Decoded::Prefixes(prefixes) => {
            out.push(b'{');
            for (i, (name, v)) in prefixes.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_str(out, name);
                out.push(b':');
                push_int(out, *v);
            }
            out.push(b'}');
        }
    }
}

/// One item as a JSON object on a line.
pub(crate) fn write_json_item(
    out: &mut impl Write,
    cat: &Catalogue,
    item: Item<'_>,
) -> io::Result<()> {
    let mut line = Vec::with_capacity(256);
    match item {
        Item::Record(r) => write_record(&mut line, cat, r),
        Item::Damage(d) => write_damage(&mut line, cat, d),
    }
    line.extend_from_slice(b"}\n");
    out.write_all(&line)
}

/// The members every object starts with, after its `{`: where the frame came from.
fn write_origin(
    out: &mut Vec<u8>,
    cat: &Catalogue,
    o: &Origin,
    topic: Option<&Topic>,
    partition: Option<i32>,
) {
    out.extend_from_slice(b"{\"frame\":");
    push_uint(out, o.frame as u64, 0);
    out.extend_from_slice(b",\"time\":");
    out.extend_from_slice(to_text(&crate::render::json::capture_time(o.time)).as_bytes());
    out.extend_from_slice(b",\"conn\":");
    push_uint(out, o.conn as u64, 0);
    out.extend_from_slice(b",\"api_key\":");
    push_int(out, o.api_key.into());
    out.extend_from_slice(b",\"api_name\":");
    write_opt_str(out, cat.api_name(o.api_key));
    out.extend_from_slice(b",\"direction\":");
    write_json_str(out, o.direction.as_str());
    out.extend_from_slice(b",\"topic\":");
    write_opt_str(out, topic.map(Topic::text).as_deref());
    out.extend_from_slice(b",\"partition\":");
    match partition {
        Some(p) => push_int(out, p.into()),
        None => out.extend_from_slice(b"null"),
    }
}

fn write_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => write_json_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// The record's object, but its closing `}`: `key` and `value` as text when
/// UTF-8, else hex, with `key_hex` and `value_hex` always; the schema id of
/// framed ones (`key_schema_id`, `schema_id`) and what internal topics'
/// decoded to (`key_decoded`, `value_decoded`) when there is one.
fn write_record(out: &mut Vec<u8>, cat: &Catalogue, r: &RecordRow) {
    write_origin(out, cat, &r.origin, r.topic.as_ref(), r.partition);
    out.extend_from_slice(b",\"offset\":");
    push_int(out, r.offset);
    out.extend_from_slice(if r.offset_assigned {
        b",\"offset_assigned\":true"
    } else {
        b",\"offset_assigned\":false"
    });
    out.extend_from_slice(b",\"timestamp\":");
    match r.timestamp {
        Some(t) => push_int(out, t),
        None => out.extend_from_slice(b"null"),
    }
    for (name, d, schema_key) in [
        ("key", &r.key, "key_schema_id"),
        ("value", &r.value, "schema_id"),
    ] {
        write_member(out, name);
        write_text_or_hex(out, d);
        out.extend_from_slice(b",\"");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"_hex\":");
        write_hex(out, d);
        if let Some((id, _)) = d.schema {
            write_member(out, schema_key);
            push_int(out, id.into());
        }
        if let Some(dec) = &d.decoded {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"_decoded\":{\"schema\":");
            match dec {
                Decoded::Struct(v) => write_json_str(out, &v.schema),
                Decoded::Prefixes(_) => out.extend_from_slice(b"null"),
            }
            out.extend_from_slice(b",\"fields\":");
            write_decoded_fields(out, dec);
            out.push(b'}');
        }
    }
    out.extend_from_slice(b",\"headers\":[");
    for (i, h) in r.headers.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"{\"key\":" } else { b",{\"key\":" });
        write_text_or_hex(out, &h.key);
        out.extend_from_slice(b",\"value\":");
        write_text_or_hex(out, &h.value);
        out.extend_from_slice(b",\"value_hex\":");
        write_hex(out, &h.value);
        out.push(b'}');
    }
    out.push(b']');
    if r.control {
        out.extend_from_slice(b",\"control\":true");
    }
}

/// `,"name":`
fn write_member(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

fn write_damage(out: &mut Vec<u8>, cat: &Catalogue, d: &DamageRow) {
    write_origin(out, cat, &d.origin, d.topic.as_ref(), d.partition);
    out.extend_from_slice(if d.frame {
        b",\"error\":{\"offset\":"
    } else {
        b",\"record_error\":{\"offset\":"
    });
    push_uint(out, d.error.offset as u64, 0);
    out.extend_from_slice(b",\"expected\":");
    write_json_str(out, &d.error.expected);
    out.push(b'}');
}

/// Bytes as text when they are UTF-8, else as hex; `null` for null.
fn write_text_or_hex(out: &mut Vec<u8>, d: &Data) {
    match &d.bytes {
        None => out.extend_from_slice(b"null"),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => write_json_str(out, s),
            Err(_) => write_hex_str(out, b),
        },
    }
}

fn write_hex(out: &mut Vec<u8>, d: &Data) {
    match &d.bytes {
        None => out.extend_from_slice(b"null"),
        Some(b) => write_hex_str(out, b),
    }
}

fn write_hex_str(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    push_hex(out, b);
    out.push(b'"');
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
    fn wide_and_zero_width_characters_are_cut_and_padded_by_cells() {
        let d = |s: &str| Data {
            bytes: Some(bytes::Bytes::copy_from_slice(s.as_bytes())),
            ..Default::default()
        };
        // Ten CJK characters are twenty cells: cut to twelve, `…` among them.
        let key = preview(&d(&"鍵".repeat(10)), 12);
        assert_eq!(key, format!("{}…", "鍵".repeat(5)));
        assert_eq!(Padded(&key, 12).to_string(), format!("{key} "));
        // A combining mark takes no cell: padded as if it were not there.
        assert_eq!(Padded("e\u{301}", 4).to_string(), "e\u{301}   ");
        assert_eq!(Padded("abc", usize::MAX).to_string(), "abc");
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
