//! Values as text, shared by the tree, grid and TUI renderers.

use super::digits::{push_int, push_uint};
use crate::decode::{Node, Value};
use crate::text::escape::{quote_bytes, quote_into};
use crate::text::uuid_text;

/// Longest byte value shown in full in one line of text.
const INLINE_BYTES: usize = 32;

/// The value part of a tree line, or `None` for containers without one.
pub fn value_text(node: &Node) -> Option<String> {
    let mut out = Vec::new();
    push_value_text(&mut out, node).then(|| String::from_utf8(out).unwrap_or_default())
}

/// [`value_text`] appended to a byte buffer; false (nothing written) for containers without one.
#[inline]
pub(crate) fn push_value_text(out: &mut Vec<u8>, node: &Node) -> bool {
    match &node.value {
        Value::None => return false,
        Value::Int(v) => push_int(out, *v),
        Value::Uint(v) => push_uint(out, *v, 0),
        Value::Float(v) => out.extend_from_slice(float_text(*v).as_bytes()),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Str(None) | Value::Bytes(None) | Value::Array(None) | Value::Struct(false) => {
            out.extend_from_slice(b"null")
        }
        Value::Str(Some(s)) => quote_into(out, s),
        Value::InvalidUtf8(b) => {
            out.extend_from_slice(quote_bytes(b).as_bytes());
            out.extend_from_slice(b" (invalid UTF-8)");
        }
        Value::Bytes(Some(b)) => push_bytes_text(out, b),
        Value::Uuid(u) => out.extend_from_slice(uuid_text(u).as_bytes()),
        Value::Array(Some(1)) => out.extend_from_slice(b"1 element"),
        Value::Array(Some(n)) => {
            push_uint(out, *n as u64, 0);
            out.extend_from_slice(b" elements");
        }
        Value::Struct(true) => out.extend_from_slice(b"struct"),
    }
    true
}

pub(crate) fn float_text(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        // The shortest text that reads back the same, with an exponent for
        // the very small and large (`5e-324`, `1e300`) as the JSON has them:
        // whole decimals of those run to hundreds of digits, cut to `0.000…`.
        format!("{v:?}")
    }
}

pub fn bytes_text(b: &[u8]) -> String {
    let mut out = Vec::new();
    push_bytes_text(&mut out, b);
    String::from_utf8(out).unwrap_or_default()
}

/// [`bytes_text`] appended to a byte buffer.
pub(crate) fn push_bytes_text(out: &mut Vec<u8>, b: &[u8]) {
    if b.is_empty() {
        out.extend_from_slice(b"0x (empty)");
        return;
    }
    let shown = &b[..b.len().min(INLINE_BYTES)];
    out.extend_from_slice(b"0x");
    super::digits::push_hex(out, shown);
    if b.len() > INLINE_BYTES {
        out.extend_from_slice("… (".as_bytes());
        push_uint(out, b.len() as u64, 0);
        out.extend_from_slice(b" bytes)");
    }
}

#[cfg(test)]
mod tests {
    use super::float_text;

    #[test]
    fn floats_are_the_shortest_text_that_reads_back() {
        for (v, text) in [
            (2.0, "2.0"),
            (0.1, "0.1"),
            (-1.5, "-1.5"),
            (5e-324, "5e-324"),
            (1e300, "1e300"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(float_text(v), text);
            if v.is_finite() {
                assert_eq!(text.parse::<f64>(), Ok(v));
            }
        }
    }
}
