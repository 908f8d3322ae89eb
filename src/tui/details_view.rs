//! The details pane: everything known about the selected node, in words.

use super::theme::Theme;
use crate::decode::{Frame, Kind, Node, Role, Value};
use crate::render::values::value_text;
use crate::schema::Primitive;
use crate::teach::explain::{reading, Reading};
use crate::text::escape::sanitize;
use ratatui::text::{Line, Span};

/// Raw bytes beyond this many are summarised.
const SHOWN_BYTES: usize = 48;

/// The lines for the node at `path` of `frame`, whose offsets index `bytes`
/// (the frame's, or when `decompressed` the decompressed data the node is
/// in: its offsets are then written `d:0x…`, as the tree writes them).
pub(crate) fn details_lines(
    frame: &Frame,
    (bytes, decompressed): (&[u8], bool),
    path: &[usize],
    theme: Theme,
) -> Vec<Line<'static>> {
    let Some(node) = frame.root.at_path(path) else {
        return Vec::new();
    };
    let raw = bytes
        .get(node.offset..node.end().min(bytes.len()))
        .unwrap_or(&[]);
    let ty = if node.ty.is_empty() {
        "-".into()
    } else {
        sanitize(&node.ty)
    };
    // Most telling first: small terminals show only the first few lines.
    let mut lines = vec![field(theme, "path", field_path(&frame.root, path))];
    if let Some(e) = node.error() {
        lines.push(error_line(theme, sanitize(e)));
    }
    let held = match node.deferred() {
        Some(crate::decode::tree::Deferred::Records(_)) => Some("its records field"),
        Some(crate::decode::tree::Deferred::Elements(_)) => Some("its array"),
        None => None,
    };
    if let Some(what) = held {
        lines.push(field(
            theme,
            "held",
            format!("not walked yet ({what} is too big to hold): Enter walks it"),
        ));
    }
    lines.push(field(
        theme,
        "type",
        format!(
            "{ty}  offset {}0x{:04x} ({})  length {}",
            if decompressed { "d:" } else { "" },
            node.offset,
            node.offset,
            node.len
        ),
    ));
    let value = [
        value_text(node),
        crate::render::notes::note(node).map(|n| sanitize(&n)),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    if !value.is_empty() {
        lines.push(field(theme, "value", value.join(" ")));
    }
    lines.push(field(theme, "bytes", bytes_hex(raw)));
    // A compound node (a count with its elements, a record, a struct) is
    // explained by its own prefix and then by its parts, never as if all its
    // bytes were one value.
    let own = match node.children.first() {
        Some(c) if c.offset >= node.offset && !matches!(node.value, Value::Array(_)) => {
            &raw[..(c.offset - node.offset).min(raw.len())]
        }
        _ => raw,
    };
    if let Some(e) = encoding(node, own).filter(|_| !own.is_empty()) {
        lines.push(field(theme, "encoding", e));
    }
    if !node.children.is_empty() {
        lines.push(field(theme, "parts", parts(node)));
    }
    if let Some(doc) = node.doc() {
        lines.push(field(theme, "about", sanitize(&doc)));
    }
    if path.is_empty() {
        for w in &frame.warnings {
            lines.push(field(theme, "warning", sanitize(&w.text)));
        }
        if let Some(e) = &frame.error {
            lines.push(error_line(theme, sanitize(&e.to_string())));
        }
    }
    lines
}

/// Most parts listed; the rest are counted.
const SHOWN_PARTS: usize = 8;

/// `length varint 1 B, attributes int8 1 B, … (+3 more)`.
fn parts(node: &Node) -> String {
    let mut out: Vec<String> = node
        .children
        .iter()
        .take(SHOWN_PARTS)
        .map(|c| {
            format!(
                "{} {} {} B",
                sanitize(&c.name.text()),
                sanitize(&c.ty),
                c.len
            )
        })
        .collect();
    if node.children.len() > SHOWN_PARTS {
        out.push(format!("… (+{} more)", node.children.len() - SHOWN_PARTS));
    }
    format!("{}: {}", node.children.len(), out.join(", "))
}

fn error_line(theme: Theme, text: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{:<9}", "error"), theme.error_text()),
        Span::styled(text, theme.error_text()),
    ])
}

fn field(theme: Theme, label: &str, text: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<9}"), theme.label()),
        Span::raw(text),
    ])
}

/// Names from the top of the tree down to the node, array elements as
/// indexes: `WriteShareGroupStateRequest.Topics[0].TopicId`.
pub(crate) fn field_path(root: &Node, path: &[usize]) -> String {
    if path.is_empty() {
        return sanitize(&root.name.text());
    }
    let mut out = String::new();
    let mut node = root;
    for &i in path {
        let child = &node.children[i];
        if child.role == Role::Element {
            let index = node.children[..i]
                .iter()
                .filter(|c| c.role == Role::Element)
                .count();
            out.push_str(&format!("[{index}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&sanitize(&child.name.text()));
        }
        node = child;
    }
    out
}

fn bytes_hex(raw: &[u8]) -> String {
    if raw.is_empty() {
        return "(none)".into();
    }
    let shown: Vec<String> = raw
        .iter()
        .take(SHOWN_BYTES)
        .map(|b| format!("{b:02x}"))
        .collect();
    let more = raw.len().saturating_sub(SHOWN_BYTES);
    if more > 0 {
        format!("{} … (+{more} bytes)", shown.join(" "))
    } else {
        shown.join(" ")
    }
}

/// How the node's bytes encode its value: varint groups, length prefixes,
/// widths, told from the reading `--explain` makes of the node.
pub fn encoding(node: &Node, raw: &[u8]) -> Option<String> {
    let fixed = |p| match p {
        Primitive::Int8 => Some("1 byte, two's complement".into()),
        Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
            Some(format!("{} bytes, big-endian two's complement", raw.len()))
        }
        Primitive::Uint16 | Primitive::Uint32 => {
            Some(format!("{} bytes, big-endian unsigned", raw.len()))
        }
        Primitive::Float64 => Some("8 bytes, IEEE 754 double, big-endian".into()),
        Primitive::Bool => Some("1 byte: 00 false, 01 true".into()),
        Primitive::Uuid => Some("16 bytes, as is (shown hyphenated)".into()),
        Primitive::String | Primitive::Bytes | Primitive::Records => None,
    };
    let mut text = match reading(node) {
        Some(Reading::Uvarint(_)) => Some(varint(false, raw)),
        Some(Reading::Varint | Reading::Varlong) => Some(varint(true, raw)),
        // An empty tagged section is its count alone; a section with fields
        // shows its count on a node of its own.
        Some(Reading::TaggedSection) if node.children.is_empty() => Some(varint(false, raw)),
        Some(Reading::Fixed(p)) => fixed(p),
        Some(Reading::PresenceInt8) => fixed(Primitive::Int8),
        Some(Reading::ArrayCount) => fixed(Primitive::Int32),
        // An array's value is its count, its first child the prefix.
        _ if matches!(node.value, Value::Array(_)) => Some(array_prefix(node)),
        _ => length_prefix(node),
    };
    let extra = match node.role {
        Role::TaggedSection => {
            Some("then each tagged field: uvarint tag, uvarint size, size bytes")
        }
        Role::TaggedEntry { .. } => Some("uvarint tag, uvarint size, then size bytes of the field"),
        _ if node.kind == Kind::CompactArrayLength && node.value != Value::Uint(0) => {
            Some("compact n+1 prefix: n = value - 1 elements, 0 = null")
        }
        _ if matches!(node.value, Value::Struct(true)) => {
            Some("its fields in declaration order, no prefix of its own")
        }
        _ => None,
    };
    if let Some(extra) = extra {
        text = Some(match text {
            Some(t) => format!("{t}; {extra}"),
            None => extra.to_string(),
        });
    }
    text
}

/// A varint's bytes: 7 bits each, least significant group first, high bit =
/// more; a signed one's value zigzag-encoded.
fn varint(signed: bool, raw: &[u8]) -> String {
    let groups: Vec<String> = raw
        .iter()
        .map(|b| {
            format!(
                "{b:02x} = {} {:07b}",
                if b & 0x80 != 0 { "more" } else { "last" },
                b & 0x7f
            )
        })
        .collect();
    let zigzag = if signed {
        "; zigzag: (u >> 1) ^ -(u & 1)"
    } else {
        ""
    };
    format!(
        "varint, 7 bits a byte, low group first: {}{zigzag}",
        groups.join(", ")
    )
}

fn array_prefix(node: &Node) -> String {
    match node.children.first() {
        // The first child of an array is its length prefix: compact (a uvarint of n+1) or a signed count.
        Some(c) if c.role == Role::Encoding && matches!(c.value, Value::Uint(_)) => {
            "compact array: uvarint n+1 prefix (0 = null), then the elements".into()
        }
        Some(c) if c.role == Role::Encoding && matches!(c.value, Value::Int(_)) => format!(
            "{} count prefix (-1 = null), then the elements",
            sanitize(&c.ty)
        ),
        _ => "the elements".into(),
    }
}

/// Strings and bytes: the length prefix the decoder noted, and its bytes.
fn length_prefix(node: &Node) -> Option<String> {
    let payload = match &node.value {
        Value::Str(Some(s)) => s.len(),
        Value::InvalidUtf8(b) => b.len(),
        Value::Bytes(Some(b)) => b.len(),
        Value::Str(None) | Value::Bytes(None) => 0,
        _ => return None,
    };
    let prefix = node.len.checked_sub(payload)?;
    let kind = match node.kind {
        Kind::CompactPrefixed => "compact: uvarint length+1 (0 = null)",
        Kind::Int16Prefixed => "int16 length (-1 = null)",
        Kind::Int32Prefixed => "int32 length (-1 = null)",
        _ => return None,
    };
    Some(format!(
        "{kind}; prefix {}, then {} of data",
        crate::text::count(prefix, "byte", "bytes"),
        crate::text::count(payload, "byte", "bytes")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Region;

    #[test]
    fn varint_groups_are_spelled_out() {
        let mut n = Node::new("length", "uvarint", 0, Region::RequestBody, Role::Encoding);
        n.len = 2;
        n.note = Some("(compact, n+1)".into());
        (n.kind, n.wire) = (Kind::CompactArrayLength, crate::decode::Wire::Uvarint);
        let e = encoding(&n, &[0x96, 0x01]).unwrap();
        assert!(e.contains("96 = more 0010110, 01 = last 0000001"), "{e}");
        assert!(e.contains("compact n+1 prefix"), "{e}");
    }

    #[test]
    fn paths_index_array_elements() {
        let mut root = Node::new("Request", "", 0, Region::Frame, Role::Structure);
        let mut body = Node::new("Body", "struct", 0, Region::RequestBody, Role::Structure);
        let mut topics = Node::new(
            "Topics",
            "[]T",
            0,
            Region::RequestBody,
            Role::Field { decl: 0 },
        );
        topics.children.push(Node::new(
            "length",
            "uvarint",
            0,
            Region::RequestBody,
            Role::Encoding,
        ));
        for i in 0..2 {
            let mut el = Node::new(
                format!("T[{i}]"),
                "T",
                1,
                Region::RequestBody,
                Role::Element,
            );
            el.children.push(Node::new(
                "Id",
                "uuid",
                1,
                Region::RequestBody,
                Role::Field { decl: 0 },
            ));
            topics.children.push(el);
        }
        body.children.push(topics);
        root.children.push(body);
        assert_eq!(field_path(&root, &[0, 0, 2, 0]), "Body.Topics[1].Id");
        assert_eq!(field_path(&root, &[0, 0, 0]), "Body.Topics.length");
        assert_eq!(field_path(&root, &[]), "Request");
    }

    #[test]
    fn string_prefixes_are_measured() {
        let mut n = Node::new(
            "GroupId",
            "string",
            0,
            Region::RequestBody,
            Role::Field { decl: 0 },
        );
        n.len = 3;
        n.value = Value::Str(Some("ab".into()));
        n.note = Some("(compact, len+1=3)".into());
        n.kind = Kind::CompactPrefixed;
        assert_eq!(
            encoding(&n, b"\x03ab").unwrap(),
            "compact: uvarint length+1 (0 = null); prefix 1 byte, then 2 bytes of data"
        );
    }
}
