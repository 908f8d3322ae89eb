//! How bytes make values (`--explain`). Every explanation is worked out from
//! the node's own bytes (`buf[node.offset..node.end()]`) and its type, never
//! copied from the decoder's value, so tests can check one against the other:
//! fixed-width big-endian integers, varint groups and continuation bits,
//! zigzag, length prefixes (n+1 and 0 = null, or -1 = null), tagged sections.

use crate::decode::records::deferred::{Found, Hold};
use crate::decode::{Frame, Kind, Node, Role, Value, Wire};
use crate::protocol::headers::header_for;
use crate::render::text_tree::{push_findings, write_tree_annotated, TreeOptions};
use crate::schema::{Catalogue, LengthPrefix, MessageKind, Primitive};
use crate::text::Text;
use crate::text::{kafka_uuid_text, uuid_text};
use bytes::Bytes;

/// Steps from bytes to value, and the value they arrive at.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    pub lines: Vec<String>,
    /// `Value::None` for nodes explained without a value of their own (tagged entries).
    pub value: Value,
}

/// Payload bytes shown in full up to this many; longer ones are cut.
const SHOWN_BYTES: usize = 16;

/// How a node's bytes are to be read, from its type and its place in the
/// tree: the one reading of the encoding that `--explain` and the explorer's
/// details pane both tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    Fixed(Primitive),
    Uvarint(Use),
    Varint,
    Varlong,
    /// An int32 array count, -1 = null.
    ArrayCount,
    /// KIP-893's int8 marker of a nullable struct.
    PresenceInt8,
    /// A length-prefixed string (`text`) or byte array: compact, or int16/int32 (`wide`).
    Prefixed {
        text: bool,
        wide: bool,
    },
    /// Bytes whose length was given by an earlier field (record keys, unknown tags).
    Raw,
    TaggedSection,
    TaggedEntry,
}

/// What an unsigned varint means where it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    Plain,
    ArrayLength,
    TagCount,
    Tag,
    Size,
    Presence,
}

/// How to read `node`: encoding details by the kind the decoder gave them,
/// values by the wire form it typed them with (never by name or type text).
pub fn reading(node: &Node) -> Option<Reading> {
    Some(match (node.role, node.kind, node.wire) {
        (Role::TaggedSection, ..) => Reading::TaggedSection,
        (Role::TaggedEntry { .. }, ..) => Reading::TaggedEntry,
        (Role::Structure | Role::Decompressed, ..) => return None,
        (_, Kind::TagCount, _) => Reading::Uvarint(Use::TagCount),
        (_, Kind::Tag, _) => Reading::Uvarint(Use::Tag),
        (_, Kind::TagSize, _) => Reading::Uvarint(Use::Size),
        (_, Kind::CompactArrayLength, _) => Reading::Uvarint(Use::ArrayLength),
        (_, Kind::ArrayCount, _) => Reading::ArrayCount,
        // In a tagged field the marker is a uvarint (read unsigned), else an int8.
        (_, Kind::PresenceMarker, _) if matches!(node.value, Value::Uint(_)) => {
            Reading::Uvarint(Use::Presence)
        }
        (_, Kind::PresenceMarker, _) => Reading::PresenceInt8,
        (_, _, Wire::Uvarint) => Reading::Uvarint(Use::Plain),
        (_, _, Wire::Varint) => Reading::Varint,
        (_, _, Wire::Varlong) => Reading::Varlong,
        (Role::Field { .. } | Role::Element, _, Wire::String) => Reading::Prefixed {
            text: true,
            wide: false,
        },
        (Role::Field { .. } | Role::Element, _, Wire::Bytes | Wire::Records) => Reading::Prefixed {
            text: false,
            wide: true,
        },
        (_, _, Wire::Bytes) => Reading::Raw,
        (_, _, Wire::Fixed(p)) if p.fixed_width().is_some() => Reading::Fixed(p),
        _ => return None,
    })
}

/// How `node`'s bytes in `buf` make its value; `None` for containers and for
/// nodes where decoding stopped.
pub fn explain_node(node: &Node, parent: Option<&Node>, buf: &[u8]) -> Option<Explanation> {
    if node.error().is_some() {
        return None;
    }
    let bytes = buf.get(node.offset..node.end())?;
    match reading(node)? {
        Reading::Fixed(p) => fixed(p, bytes),
        Reading::Uvarint(u) => {
            let (v, mut lines) = uvarint_of(node, bytes)?;
            if let Some(meaning) = uvarint_meaning(u, v) {
                lines.push(meaning);
            }
            Some(Explanation {
                lines,
                value: Value::Uint(v),
            })
        }
        Reading::Varint | Reading::Varlong => {
            let (u, mut lines) = uvarint_of(node, bytes)?;
            let v = zigzag(u, &mut lines);
            if v == -1 && node.kind == Kind::BytesLength {
                lines.push("-1: null".into());
            }
            Some(Explanation {
                lines,
                value: Value::Int(v),
            })
        }
        Reading::ArrayCount => {
            let mut e = fixed(Primitive::Int32, bytes)?;
            let Value::Int(n) = e.value else { return None };
            e.lines.push(if n == -1 {
                "int32 count -1: a null array".into()
            } else {
                format!("int32 count: {}", elements(n))
            });
            Some(e)
        }
        Reading::PresenceInt8 => {
            let mut e = fixed(Primitive::Int8, bytes)?;
            let Value::Int(n) = e.value else { return None };
            e.lines.push(format!(
                "nullable struct marker: {}",
                if n < 0 {
                    "-1 = null"
                } else {
                    "1 = present, the struct's fields follow"
                }
            ));
            Some(e)
        }
        Reading::Prefixed { text, wide } => prefixed(bytes, text, wide, node.wire == Wire::Records),
        Reading::Raw => raw(node, parent, buf),
        Reading::TaggedSection => {
            let (count, len) = uvarint_prefix(bytes)?;
            let line = if count == 0 && bytes.len() == 1 {
                "00 → tagged fields: count 0 (a plain count, not n+1), so the whole section is this one byte".to_string()
            } else {
                format!(
                    "tagged fields: count {count} ({}, a plain count, not n+1), then per field a uvarint tag, a uvarint size and that many bytes",
                    spaced(&bytes[..len])
                )
            };
            Some(Explanation {
                lines: vec![line],
                value: Value::Uint(count),
            })
        }
        Reading::TaggedEntry => {
            let (tag, tl) = uvarint_prefix(bytes)?;
            let (size, sl) = uvarint_prefix(&bytes[tl..])?;
            let line = format!(
                "{} → tag {tag}, size {size}, then {} of value (in compact form, like every tagged value)",
                spaced(&bytes[..tl + sl]),
                count_bytes(size as usize)
            );
            Some(Explanation {
                lines: vec![line],
                value: Value::None,
            })
        }
    }
}

/// The explanation lines of one node (empty when there is nothing to explain).
pub fn explain(node: &Node, parent: Option<&Node>, buf: &[u8]) -> Vec<String> {
    explain_node(node, parent, buf)
        .map(|e| e.lines)
        .unwrap_or_default()
}

/// Why a frame's header has its version, from the rule that chose it.
pub fn header_reason(cat: &Catalogue, frame: &Frame, release: Option<&str>) -> Option<String> {
    let kind = if frame.direction == crate::decode::Direction::Response {
        MessageKind::Response
    } else {
        MessageKind::Request
    };
    let (key, version) = (frame.api_key?, frame.api_version?);
    let spec = cat.message(kind, key, version, release)?;
    let (hv, rule) = header_for(kind, spec, version);
    // An ApiVersions v0 fallback or a guessed header says nothing about the rule.
    (frame.header_version == Some(hv)).then(|| rule.reason(hv, spec, version))
}

/// A frame's tree with every node's explanation under it, then its findings.
pub fn render_explained(
    cat: &Catalogue,
    release: Option<&str>,
    frame: &Frame,
    opts: TreeOptions,
) -> String {
    let mut out = Vec::new();
    // Writing into memory does not fail; nothing is left for drawing.
    let _ = explained_tree(&mut out, (cat, release), frame, opts, None);
    let mut out = String::from_utf8(out).unwrap_or_default();
    push_findings(frame, &mut out);
    out
}

/// [`render_explained`] written as it is drawn: a records field the decode
/// left for drawing (`DecodeOptions::defer_records_over`) is walked, explained
/// and drawn a batch at a time, and what its walks find joins the frame's
/// warnings and record damage before they are written.
pub fn write_explained_drawing(
    w: &mut dyn std::io::Write,
    (cat, release): (&Catalogue, Option<&str>),
    frame: &mut Frame,
    opts: TreeOptions,
    budget: &crate::budget::Budget,
) -> std::io::Result<()> {
    write_explained_held(w, (cat, release), frame, opts, (budget, Hold::ByItem))
}

/// [`write_explained_drawing`], what the walks decompress held as `hold`
/// says: with [`Hold::ByFrame`], against the budget until the frame is
/// dropped, as its whole decode holds it (a small frame's: the same batches
/// decoded, or over budget, as in its other views).
pub(crate) fn write_explained_held(
    w: &mut dyn std::io::Write,
    (cat, release): (&Catalogue, Option<&str>),
    frame: &mut Frame,
    opts: TreeOptions,
    (budget, hold): (&crate::budget::Budget, Hold),
) -> std::io::Result<()> {
    let before = budget.expanded();
    let found = explained_tree(w, (cat, release), frame, opts, Some((budget, hold)))?;
    if hold == Hold::ByFrame {
        frame.held.join(crate::budget::Held::since(budget, before));
    }
    crate::decode::records::deferred::join_found(frame, found);
    let mut findings = String::new();
    push_findings(frame, &mut findings);
    w.write_all(findings.as_bytes())
}

/// The frame's explained tree, written to `w`; what walks of deferred
/// records fields found, when `drawing` walks them.
fn explained_tree(
    w: &mut dyn std::io::Write,
    (cat, release): (&Catalogue, Option<&str>),
    frame: &Frame,
    opts: TreeOptions,
    drawing: Option<(&crate::budget::Budget, Hold)>,
) -> std::io::Result<Vec<(crate::decode::DeferredRecords, Found)>> {
    let reason = header_reason(cat, frame, release);
    let annotate = |node: &Node, parent: Option<&Node>, buf: &[u8]| -> Vec<String> {
        if node.role == Role::Structure && node.region == crate::decode::Region::RpcHeader {
            return reason.iter().cloned().collect();
        }
        explain(node, parent, buf)
    };
    let drawing = drawing.map(|(budget, hold)| (cat, budget, &frame.bytes, hold));
    write_tree_annotated(w, &frame.root, &frame.bytes, (opts, &annotate), drawing)
}

/// `ac 02`
pub fn spaced(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Bytes as `spaced`, cut after `SHOWN_BYTES`.
pub fn shown(bytes: &[u8]) -> String {
    if bytes.len() <= SHOWN_BYTES {
        spaced(bytes)
    } else {
        format!(
            "{} … ({} bytes)",
            spaced(&bytes[..SHOWN_BYTES]),
            bytes.len()
        )
    }
}

/// `1 byte`, `2 bytes`
pub fn count_bytes(n: usize) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

fn elements(n: i64) -> String {
    if n == 1 {
        "1 element follows".into()
    } else {
        format!("{n} elements follow")
    }
}

/// Fixed-width big-endian numbers, bools, floats and uuids.
fn fixed(p: Primitive, bytes: &[u8]) -> Option<Explanation> {
    if Some(bytes.len()) != p.fixed_width() {
        return None;
    }
    let hex = spaced(bytes);
    let u = bytes.iter().fold(0u128, |acc, b| acc << 8 | u128::from(*b));
    let bits = 8 * bytes.len() as u32;
    let digits = 2 * bytes.len();
    let (line, value) = match p {
        Primitive::Bool => {
            let b = bytes[0];
            let line = match b {
                0 => "00 → bool: 0 = false".to_string(),
                1 => "01 → bool: 1 = true".to_string(),
                _ => format!("{hex} → bool: not 0, so true (Java reads any non-zero byte as true; only 01 is canonical)"),
            };
            (line, Value::Bool(b != 0))
        }
        Primitive::Uint16 | Primitive::Uint32 => (
            format!("{hex} → {}, big-endian: 0x{u:0digits$x} = {u}", p.as_str()),
            Value::Uint(u as u64),
        ),
        Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
            let negative = u >> (bits - 1) == 1;
            let v = if negative {
                u as i128 - (1i128 << bits)
            } else {
                u as i128
            };
            let line = if negative {
                format!("{hex} → {}, big-endian: 0x{u:0digits$x}; the top bit is set, so it is negative (two's complement): {u} − 2^{bits} = {v}", p.as_str())
            } else {
                format!("{hex} → {}, big-endian: 0x{u:0digits$x} = {v}", p.as_str())
            };
            (line, Value::Int(v as i64))
        }
        Primitive::Float64 => {
            let b = u as u64;
            let (sign, exp, frac) = (b >> 63, (b >> 52) & 0x7ff, b & ((1 << 52) - 1));
            let v = f64::from_bits(b);
            let kind = match exp {
                0 if frac == 0 => "zero".to_string(),
                0 => "subnormal: 0.fraction × 2^-1022".to_string(),
                0x7ff if frac == 0 => "infinity".to_string(),
                0x7ff => "not a number".to_string(),
                e => format!("1.fraction × 2^({e} − 1023 = {})", e as i64 - 1023),
            };
            let line = format!(
                "{hex} → float64 (IEEE-754 double, big-endian): sign {sign}, exponent {exp}, fraction 0x{frac:013x} → {kind} = {}",
                crate::render::values::float_text(v)
            );
            (line, Value::Float(v))
        }
        Primitive::Uuid => {
            let mut a = [0u8; 16];
            a.copy_from_slice(bytes);
            let line = format!(
                "{hex} → uuid: 16 bytes, written 8-4-4-4-12 as {}; Kafka's tools print {}",
                uuid_text(&a),
                kafka_uuid_text(&a)
            );
            (line, Value::Uuid(a))
        }
        Primitive::String | Primitive::Bytes | Primitive::Records => return None,
    };
    Some(Explanation {
        lines: vec![line],
        value,
    })
}

/// The uvarint at the start of `bytes` (up to ten bytes), read as the
/// decoder reads one: (value, length).
fn uvarint_prefix(bytes: &[u8]) -> Option<(u64, usize)> {
    let v = crate::decode::reader::Reader::new(bytes)
        .uvarint_n(10, "uvarint")
        .ok()?;
    Some((v.value, v.len))
}

/// A node's uvarint with its groups spelled out: all of its bytes, or for a
/// count with its items as children (a record's headers), the leading ones.
fn uvarint_of(node: &Node, bytes: &[u8]) -> Option<(u64, Vec<String>)> {
    let (v, len) = uvarint_prefix(bytes)?;
    (len == bytes.len() || !node.children.is_empty()).then(|| (v, uvarint_lines(&bytes[..len], v)))
}

/// `ac 02` → the groups with their continuation bits, and their sum.
fn uvarint_lines(bytes: &[u8], v: u64) -> Vec<String> {
    if let [b] = bytes {
        return vec![format!(
            "{b:02x} → unsigned varint, one byte (top bit 0: the last byte): {v}"
        )];
    }
    let groups: Vec<String> = bytes
        .iter()
        .map(|b| format!("{b:02x} = {}|{:07b}", b >> 7, b & 0x7f))
        .collect();
    let terms: Vec<String> = bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if i == 0 {
                format!("{:07b}", b & 0x7f)
            } else {
                format!("{:07b}<<{}", b & 0x7f, 7 * i)
            }
        })
        .collect();
    let parts: Vec<String> = bytes
        .iter()
        .enumerate()
        .map(|(i, b)| (u64::from(b & 0x7f) << (7 * i)).to_string())
        .collect();
    let mut lines = vec![
        format!("{} → unsigned varint, 7 bits a byte, low group first; top bit 1 = another byte follows: {}", spaced(bytes), groups.join(", ")),
        format!("{} = {} = {v}", terms.join(" + "), parts.join(" + ")),
    ];
    if bytes.last() == Some(&0) {
        lines
            .push("over-long: the last group adds nothing (Java accepts it; not canonical)".into());
    }
    lines
}

fn uvarint_meaning(u: Use, v: u64) -> Option<String> {
    Some(match (u, v) {
        (Use::Plain, _) => return None,
        (Use::ArrayLength, 0) => {
            "compact array length 0: a null array (compact lengths store n+1, leaving 0 for null)"
                .into()
        }
        (Use::ArrayLength, n) => format!(
            "compact array length n+1 = {n}, so {}",
            elements(n as i64 - 1)
        ),
        (Use::TagCount, n) => format!("{n} tagged fields follow (a plain count, not n+1)"),
        (Use::Tag, n) => format!("tag {n}"),
        (Use::Size, n) => format!("the value takes the next {}", count_bytes(n as usize)),
        (Use::Presence, 0) => "nullable struct marker 0: null".into(),
        (Use::Presence, _) => "nullable struct marker: present, the struct's fields follow".into(),
    })
}

/// Zigzag: even numbers are the non-negative ones (n/2), odd the negative (−(n+1)/2).
fn zigzag(u: u64, lines: &mut Vec<String>) -> i64 {
    let u = i128::from(u);
    let v = if u % 2 == 0 { u / 2 } else { -(u + 1) / 2 };
    lines.push(if u % 2 == 0 {
        format!("zigzag: {u} is even, so {u}/2 = {v}")
    } else {
        format!("zigzag: {u} is odd, so −({u}+1)/2 = {v}")
    });
    v as i64
}

/// The length prefix of a string or byte array: compact (n+1, 0 = null) or
/// int16/int32 (-1 = null), whichever accounts for exactly these bytes.
fn prefixed(bytes: &[u8], text: bool, wide: bool, records: bool) -> Option<Explanation> {
    let (mut lines, payload) = compact_prefix(bytes).or_else(|| fixed_prefix(bytes, wide))?;
    let what = if text { "string" } else { "byte array" };
    let value = match payload {
        None => {
            if text {
                Value::Str(None)
            } else {
                Value::Bytes(None)
            }
        }
        Some([]) => {
            lines.push(format!("no bytes follow: the empty {what}"));
            if text {
                Value::Str(Some(Text::default()))
            } else {
                Value::Bytes(Some(Bytes::new()))
            }
        }
        Some(p) if text => match std::str::from_utf8(p) {
            Ok(s) => {
                lines.push(format!(
                    "{} → {} of UTF-8: {}",
                    shown(p),
                    count_bytes(p.len()),
                    crate::text::escape::quote(s)
                ));
                Value::Str(Some(Text::copy_of(s)))
            }
            Err(_) => {
                lines.push(format!(
                    "{} → {} that are not UTF-8",
                    shown(p),
                    count_bytes(p.len())
                ));
                Value::InvalidUtf8(Bytes::copy_from_slice(p))
            }
        },
        Some(p) => {
            lines.push(format!(
                "{} → {}{}",
                shown(p),
                count_bytes(p.len()),
                if records {
                    " of record batches (below)"
                } else {
                    ""
                }
            ));
            Value::Bytes(Some(Bytes::copy_from_slice(p)))
        }
    };
    Some(Explanation { lines, value })
}

type Split<'a> = (Vec<String>, Option<&'a [u8]>);

fn compact_prefix(bytes: &[u8]) -> Option<Split<'_>> {
    let (v, len) = uvarint_prefix(bytes)?;
    let mut lines = uvarint_lines(&bytes[..len], v);
    // A uvarint of 63 bits or more is no length (the decoder reads 32).
    let written = i64::try_from(v).ok()?;
    let Ok(Some(n)) = LengthPrefix::Compact.length(written) else {
        lines.push("compact length 0: null (compact lengths store n+1, leaving 0 for null)".into());
        return (len == bytes.len()).then_some((lines, None));
    };
    lines.push(format!("compact length n+1 = {v}, so n = {n}"));
    (len + n == bytes.len()).then(|| (lines, Some(&bytes[len..])))
}

fn fixed_prefix(bytes: &[u8], wide: bool) -> Option<Split<'_>> {
    let (p, prefix) = if wide {
        (Primitive::Int32, LengthPrefix::Int32)
    } else {
        (Primitive::Int16, LengthPrefix::Int16)
    };
    let width = prefix.width()?;
    let e = fixed(p, bytes.get(..width)?)?;
    let Value::Int(written) = e.value else {
        return None;
    };
    let mut lines = e.lines;
    let name = prefix.name();
    match prefix.length(written).ok()? {
        None => {
            lines.push(format!("{name} length -1: null"));
            (bytes.len() == width).then_some((lines, None))
        }
        Some(n) => {
            lines.push(format!("{name} length {n}"));
            (width + n == bytes.len()).then(|| (lines, Some(&bytes[width..])))
        }
    }
}

/// Bytes measured by an earlier field: a record's varint length, a tag's size.
/// Zero bytes right after a length of -1 (varint `01`, int32 `ff ff ff ff`) are null.
fn raw(node: &Node, parent: Option<&Node>, buf: &[u8]) -> Option<Explanation> {
    let bytes = &buf[node.offset..node.end()];
    let before = parent.and_then(|p| {
        p.children
            .iter()
            .take_while(|c| !std::ptr::eq(*c, node))
            .last()
    });
    let minus_one = |b: &Node| {
        let prefix = buf.get(b.offset..b.end());
        // A varint -1 is the one byte 01, an int32 -1 is ff ff ff ff.
        b.kind == Kind::BytesLength
            && b.end() == node.offset
            && (prefix == Some(&[0x01]) || prefix == Some(&[0xff; 4]))
    };
    if bytes.is_empty() && before.is_some_and(minus_one) {
        return Some(Explanation {
            lines: vec!["no bytes: null (the length before it is -1)".into()],
            value: Value::Bytes(None),
        });
    }
    // What says how many bytes there are: a length or size just before them,
    // the end of the value they are in, or the end of the data.
    let measured = before.is_some_and(|b| {
        b.end() == node.offset && matches!(b.kind, Kind::BytesLength | Kind::TagSize)
    });
    let count = count_bytes(bytes.len());
    let line = match node.kind {
        _ if bytes.is_empty() && measured => "no bytes (the length before it is 0)".to_string(),
        _ if bytes.is_empty() => "no bytes".to_string(),
        // Inside a key or value (Schema Registry framing's payload) the bytes run to the value's end.
        Kind::SchemaRegistryPayload => format!("{} → {count}, the rest of the value", shown(bytes)),
        Kind::TruncatedBatch => format!(
            "{} → {count}: the rest of the records, a batch cut short (its length says more than there is)",
            shown(bytes)
        ),
        _ if measured => format!("{} → {count}, as many as the field before says", shown(bytes)),
        _ => format!("{} → {count}", shown(bytes)),
    };
    Some(Explanation {
        lines: vec![line],
        value: Value::Bytes(Some(Bytes::copy_from_slice(bytes))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Region;

    fn leaf(wire: Wire, bytes: &[u8], role: Role) -> Explanation {
        let mut n = Node::new("x", wire.name(), 0, Region::RequestBody, role);
        (n.len, n.wire) = (bytes.len(), wire);
        explain_node(&n, None, bytes).unwrap()
    }

    #[test]
    fn varint_groups_are_spelled_out() {
        let e = leaf(Wire::Uvarint, &[0xac, 0x02], Role::Encoding);
        assert_eq!(e.value, Value::Uint(300));
        assert_eq!(e.lines[1], "0101100 + 0000010<<7 = 44 + 256 = 300");
        assert!(e.lines[0].contains("ac = 1|0101100, 02 = 0|0000010"));
        let e = leaf(Wire::Varint, &[0x03], Role::Encoding);
        assert_eq!(e.value, Value::Int(-2));
        assert_eq!(e.lines[1], "zigzag: 3 is odd, so −(3+1)/2 = -2");
    }

    #[test]
    fn fixed_width_negative_numbers_show_twos_complement() {
        let e = leaf(Wire::Fixed(Primitive::Int16), &[0xff, 0xfe], Role::Encoding);
        assert_eq!(e.value, Value::Int(-2));
        assert_eq!(e.lines[0], "ff fe → int16, big-endian: 0xfffe; the top bit is set, so it is negative (two's complement): 65534 − 2^16 = -2");
    }

    #[test]
    fn length_prefixes_are_told_apart_by_their_bytes() {
        let field = Role::Field { decl: 0 };
        assert_eq!(
            leaf(Wire::String, &[0x00, 0x01, b'a'], field).value,
            Value::Str(Some("a".into()))
        );
        assert_eq!(
            leaf(Wire::String, &[0x02, b'a'], field).value,
            Value::Str(Some("a".into()))
        );
        assert_eq!(leaf(Wire::String, &[0x00], field).value, Value::Str(None));
        assert_eq!(
            leaf(Wire::String, &[0xff, 0xff], field).value,
            Value::Str(None)
        );
        assert_eq!(
            leaf(Wire::Bytes, &[0xff, 0xff, 0xff, 0xff], field).value,
            Value::Bytes(None)
        );
        assert_eq!(
            leaf(Wire::Bytes, &[0x00, 0x00, 0x00, 0x00], field).value,
            Value::Bytes(Some(Bytes::new()))
        );
    }
}
