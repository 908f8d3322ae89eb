//! The details pane: everything known about the selected node, in words.

use super::theme::Theme;
use crate::decode::{Frame, Kind, Node, Role, Value};
use crate::render::values::value_text;
use crate::teach::explain::explain_node;
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
    // The node's bytes in `--explain`'s words: one teacher for both.
    let parent = path.split_last().and_then(|(_, up)| frame.root.at_path(up));
    for line in encoding(node, parent, bytes) {
        lines.push(field(theme, "encoding", sanitize(&line)));
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

/// How the node's bytes make its value, as `kwire decode --explain` says it
/// (a compound node, a count with its elements, is explained by its own
/// prefix); an array or a struct, which `--explain` leaves to its parts, by
/// how those parts are laid out.
fn encoding(node: &Node, parent: Option<&Node>, bytes: &[u8]) -> Vec<String> {
    if let Some(e) = explain_node(node, parent, bytes) {
        return e.lines;
    }
    let laid_out = match node.value {
        // An array's first part is its count, typed by its kind.
        Value::Array(_) => match node.children.first().map(|c| c.kind) {
            Some(Kind::CompactArrayLength) => {
                "a compact array: a uvarint of n+1 (0 = null), then the elements"
            }
            Some(Kind::ArrayCount) => "an int32 count (-1 = null), then the elements",
            _ => "the elements",
        },
        Value::Struct(true) => "its fields in declaration order, no prefix of its own",
        _ => return Vec::new(),
    };
    vec![laid_out.to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Region;

    #[test]
    fn the_encoding_is_explain_s() {
        let mut n = Node::new("length", "uvarint", 0, Region::RequestBody, Role::Encoding);
        n.len = 2;
        n.note = Some("(compact, n+1)".into());
        (n.kind, n.wire) = (Kind::CompactArrayLength, crate::decode::Wire::Uvarint);
        let bytes = [0x96, 0x01];
        let e = encoding(&n, None, &bytes);
        assert_eq!(e, explain_node(&n, None, &bytes).unwrap().lines);
        assert_eq!(
            e[0],
            "96 01 → unsigned varint, 7 bits a byte, low group first; top bit 1 = another byte follows: 96 = 1|0010110, 01 = 0|0000001"
        );
        assert_eq!(
            e[2],
            "compact array length n+1 = 150, so 149 elements follow"
        );
    }

    #[test]
    fn an_array_is_told_by_its_count_s_kind() {
        let mut a = Node::new(
            "Topics",
            "[]T",
            0,
            Region::RequestBody,
            Role::Field { decl: 0 },
        );
        a.value = Value::Array(Some(0));
        let mut count = Node::new("length", "int32", 0, Region::RequestBody, Role::Encoding);
        count.kind = Kind::ArrayCount;
        a.children.push(count);
        assert_eq!(
            encoding(&a, None, &[0, 0, 0, 0]),
            ["an int32 count (-1 = null), then the elements"]
        );
        a.children[0].kind = Kind::CompactArrayLength;
        assert_eq!(
            encoding(&a, None, &[1]),
            ["a compact array: a uvarint of n+1 (0 = null), then the elements"]
        );
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
        (n.kind, n.wire) = (Kind::CompactPrefixed, crate::decode::Wire::String);
        assert_eq!(
            encoding(&n, None, b"\x03ab"),
            [
                "03 → unsigned varint, one byte (top bit 0: the last byte): 3",
                "compact length n+1 = 3, so n = 2",
                "61 62 → 2 bytes of UTF-8: \"ab\""
            ]
        );
    }
}
