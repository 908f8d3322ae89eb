//! The note a view shows beside a node's value: the decoder's own
//! ([`Node::note`]: `(compact, len+1=1)`, an error code's name), or one the
//! views work out from what the node is when they show it: the text preview
//! of a record's key, value or header, `(text "order-17")`. Made for every
//! record when it was decoded, the preview was most of the work of building
//! a record's nodes; a view that does not show a record does not make it.

use crate::decode::{Kind, Node, RecordPart, Value};
use crate::text::copy::push_bytes;
use crate::text::escape::{is_printable_ascii, sanitize_into};
use std::borrow::Cow;

/// The note of `node` as the views show it (before escaping).
pub fn note(node: &Node) -> Option<Cow<'_, str>> {
    match &node.note {
        Some(n) => Some(match n.as_text() {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(n.to_string()),
        }),
        None => previewed(node).and_then(text_preview).map(Cow::Owned),
    }
}

/// [`note`] escaped and appended to `out` after a space and `code` (a
/// terminal's colour); false, with nothing written, when there is none. A
/// preview of printable ASCII (most keys and values) is copied as it is.
#[inline(always)]
pub fn push_note(out: &mut Vec<u8>, node: &Node, code: &str) -> bool {
    match &node.note {
        Some(n) => {
            out.push(b' ');
            out.extend_from_slice(code.as_bytes());
            n.push_sanitized(out);
            true
        }
        None => previewed(node).is_some_and(|b| push_preview(out, b, code)),
    }
}

/// A preview's part of [`push_note`], out of line (most nodes have none).
#[inline(never)]
pub(crate) fn push_preview(out: &mut Vec<u8>, b: &[u8], code: &str) -> bool {
    let Some((shown, more)) = preview_parts(b) else {
        return false;
    };
    out.push(b' ');
    out.extend_from_slice(code.as_bytes());
    out.extend_from_slice(b"(text \"");
    match shown {
        // Printable ASCII needs no escaping: copied as it is.
        Shown::Ascii(a) => push_bytes(out, a),
        Shown::Text(t) => sanitize_into(out, t),
    }
    out.extend_from_slice(more.as_bytes());
    out.extend_from_slice(b"\")");
    true
}

/// The preview of `b` when it is printable ASCII without quotes or
/// backslashes (most keys and values): its bytes and the `…` when cut,
/// which a JSON writer can copy as they are.
pub(crate) fn plain_ascii_preview(b: &[u8]) -> Option<(&[u8], &'static str)> {
    match preview_parts(b)? {
        (Shown::Ascii(a), more) if !a.iter().any(|&c| c == b'"' || c == b'\\') => Some((a, more)),
        _ => None,
    }
}

/// The bytes whose text preview is `node`'s note: a record's (or legacy
/// message's) key or value, a header's key or value, a Schema Registry payload.
#[inline(always)]
pub(crate) fn previewed(node: &Node) -> Option<&[u8]> {
    match (node.kind, &node.value) {
        (
            Kind::RecordKey
            | Kind::RecordValue
            | Kind::SchemaRegistryPayload
            | Kind::Record(RecordPart::HeaderKey | RecordPart::HeaderValue),
            Value::Bytes(Some(b)),
        ) => Some(b),
        _ => None,
    }
}

/// `(text "…")`: bytes that read as text without control characters, cut
/// at [`PREVIEW_CHARS`] characters.
pub(crate) fn text_preview(b: &[u8]) -> Option<String> {
    let (shown, more) = preview_parts(b)?;
    let shown = match shown {
        Shown::Ascii(a) => std::str::from_utf8(a).ok()?,
        Shown::Text(t) => t,
    };
    Some(["(text \"", shown, more, "\")"].concat())
}

/// What a preview shows: printable ASCII (no escaping needed), or other text.
enum Shown<'a> {
    Ascii(&'a [u8]),
    Text(&'a str),
}

/// What a preview of `b` shows, and the `…` when it was cut; none when `b`
/// is empty or not text.
#[inline]
fn preview_parts(b: &[u8]) -> Option<(Shown<'_>, &'static str)> {
    if b.is_empty() {
        return None;
    }
    // Printable ASCII (most keys and values) is UTF-8 with no control
    // characters, and a character is a byte.
    let (shown, len) = match is_printable_ascii(b) {
        true => {
            let a = &b[..b.len().min(PREVIEW_CHARS)];
            (Shown::Ascii(a), a.len())
        }
        false => {
            let s = std::str::from_utf8(b).ok()?;
            if has_control(b) {
                return None;
            }
            let t = &s[..s
                .char_indices()
                .nth(PREVIEW_CHARS)
                .map_or(s.len(), |(i, _)| i)];
            (Shown::Text(t), t.len())
        }
    };
    Some((shown, if len < b.len() { "…" } else { "" }))
}

/// Characters of a value shown in its text preview note.
const PREVIEW_CHARS: usize = 40;

/// Whether valid UTF-8 holds a control character (C0, DEL or C1), as
/// `char::is_control` says, scanning bytes: C1 controls are U+0080..U+009F,
/// encoded as 0xC2 0x80..0x9F. Chunks are screened with a branch-free fold
/// (vectorised) and only suspicious ones looked at closely.
fn has_control(b: &[u8]) -> bool {
    const CHUNK: usize = 64;
    for (k, chunk) in b.chunks(CHUNK).enumerate() {
        let suspicious = chunk
            .iter()
            .fold(false, |a, &c| a | (c < 0x20) | (c == 0x7f) | (c == 0xc2));
        if !suspicious {
            continue;
        }
        for (j, &c) in chunk.iter().enumerate() {
            let next = b.get(k * CHUNK + j + 1).copied().unwrap_or(0);
            if c < 0x20 || c == 0x7f || (c == 0xc2 && (0x80..0xa0).contains(&next)) {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::decode::{Region, Role};

    /// The byte scan agrees with `char::is_control` for every char, wherever it
    /// falls relative to the scan's chunks (a C1 control split across two).
    #[test]
    fn control_scan_matches_char_is_control() {
        for c in (0u32..0x3000)
            .chain([0xfeff, 0x1_f600])
            .filter_map(char::from_u32)
        {
            for pad in [0usize, 62, 63, 64, 127] {
                let s = format!("{}{c}{}", "a".repeat(pad), "b".repeat(3));
                assert_eq!(
                    has_control(s.as_bytes()),
                    c.is_control(),
                    "char U+{:04X} after {pad} bytes",
                    c as u32
                );
            }
        }
    }

    #[test]
    fn preview_cuts_at_forty_chars() {
        assert_eq!(
            text_preview("é".repeat(41).as_bytes()).as_deref(),
            Some(format!("(text \"{}…\")", "é".repeat(40)).as_str())
        );
        assert_eq!(text_preview(b"hi").as_deref(), Some("(text \"hi\")"));
        assert_eq!(
            text_preview(&[b'v'; 60]).as_deref(),
            Some(format!("(text \"{}…\")", "v".repeat(40)).as_str())
        );
        assert_eq!(
            text_preview(&[b'v'; 40]).as_deref(),
            Some(format!("(text \"{}\")", "v".repeat(40)).as_str())
        );
        assert_eq!(text_preview(b"caf\xc3\xa9 \xff"), None, "not UTF-8");
        assert_eq!(text_preview(b"a\x00b"), None);
        assert_eq!(text_preview(b""), None);
    }

    /// A record value's node, as the record decoder makes it.
    pub(crate) fn value_node(bytes: &[u8]) -> Node {
        let mut n = Node::new("value", "bytes", 0, Region::Record, Role::Encoding);
        n.kind = Kind::RecordValue;
        n.value = Value::Bytes(Some(bytes::Bytes::copy_from_slice(bytes)));
        n
    }

    /// Record values a preview is made of: ASCII, long, other text, control
    /// bytes, nothing, quotes and backslashes.
    pub(crate) const VALUES: [&[u8]; 6] = [
        b"order-17",
        &[b'v'; 60],
        "caf\u{e9} \u{202e}x".as_bytes(),
        b"\x01\x02",
        b"",
        b"say \"hi\" \\ back",
    ];

    #[test]
    fn a_records_bytes_show_their_preview_and_a_decoders_note_comes_first() {
        for b in VALUES {
            let n = value_node(b);
            let mut pushed = Vec::new();
            let shown = push_note(&mut pushed, &n, "");
            let want = note(&n).map(|t| {
                let mut w = b" ".to_vec();
                sanitize_into(&mut w, &t);
                w
            });
            assert_eq!(
                (shown, pushed),
                (want.is_some(), want.unwrap_or_default()),
                "{b:?}"
            );
        }
        assert_eq!(
            note(&value_node(b"order-17")).as_deref(),
            Some("(text \"order-17\")")
        );
        let mut n = value_node(b"order-17");
        n.note = Some("(holds redacted bytes)".into());
        assert_eq!(note(&n).as_deref(), Some("(holds redacted bytes)"));
        n.kind = Kind::Plain;
        n.note = None;
        assert_eq!(note(&n), None, "only record bytes are previewed");
    }
}
