//! Values as text, shared by the tree, grid and TUI renderers.

use super::escape::{quote, quote_bytes};
use crate::decode::{Node, Value};

/// Longest byte value shown in full in one line of text.
const INLINE_BYTES: usize = 32;

pub fn uuid_text(u: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*u).hyphenated().to_string()
}

/// A uuid as Kafka's `Uuid.toString` prints it: URL-safe base64 without padding.
pub fn kafka_uuid_text(u: &[u8; 16]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(22);
    for chunk in u.chunks(3) {
        let n = chunk.iter().fold(0u32, |acc, b| acc << 8 | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_print_as_kafka_does() {
        assert_eq!(kafka_uuid_text(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        let mut one = [0u8; 16];
        one[15] = 1;
        assert_eq!(kafka_uuid_text(&one), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(kafka_uuid_text(&[0xff; 16]), "_____________________w");
    }
}
