//! Values as text, shared by the tree, grid and TUI renderers.

use crate::text::escape::{quote, quote_bytes};
use crate::decode::{Node, Value};
use crate::text::uuid_text;

/// Longest byte value shown in full in one line of text.
const INLINE_BYTES: usize = 32;


/// The value part of a tree line, or `None` for containers without one.
pub fn value_text(node: &Node) -> Option<String> {
    Some(match &node.value {
        Value::None => return None,
        Value::Int(v) => v.to_string(),
        Value::Uint(v) => v.to_string(),
        Value::Float(v) => float_text(*v),
        Value::Bool(b) => b.to_string(),
        Value::Str(None) | Value::Bytes(None) | Value::Array(None) | Value::Struct(false) => "null".into(),
        Value::Str(Some(s)) => quote(s),
        Value::InvalidUtf8(b) => format!("{} (invalid UTF-8)", quote_bytes(b)),
        Value::Bytes(Some(b)) => bytes_text(b),
        Value::Uuid(u) => uuid_text(u),
        Value::Array(Some(1)) => "1 element".into(),
        Value::Array(Some(n)) => format!("{n} elements"),
        Value::Struct(true) => "struct".into(),
    })
}

pub fn float_text(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        v.to_string()
    }
}

pub fn bytes_text(b: &[u8]) -> String {
    if b.is_empty() {
        return "0x (empty)".into();
    }
    if b.len() <= INLINE_BYTES {
        format!("0x{}", hex::encode(b))
    } else {
        format!("0x{}… ({} bytes)", hex::encode(&b[..INLINE_BYTES]), b.len())
    }
}
