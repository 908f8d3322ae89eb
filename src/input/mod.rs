//! Input bytes: hex text in the shapes people paste, or raw binary.

pub mod hex_text;

use bytes::Bytes;

/// How to read the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// Decide from the content: text that parses as hex is hex, anything else binary.
    Auto,
    Hex,
    Binary,
}

/// Turn the raw input into message bytes.
pub fn to_bytes(raw: Vec<u8>, kind: InputKind) -> Result<Bytes, String> {
    match kind {
        InputKind::Binary => Ok(Bytes::from(raw)),
        InputKind::Hex => {
            let text = std::str::from_utf8(&raw).map_err(|e| format!("input is not text (UTF-8 error at byte {}); use --binary for raw bytes", e.valid_up_to()))?;
            hex_text::parse_hex_text(text).map(Bytes::from).map_err(|e| format!("not hex: {e}"))
        }
        InputKind::Auto => match std::str::from_utf8(&raw) {
            Ok(text) if !text.contains('\0') => {
                hex_text::parse_hex_text(text).map(Bytes::from).map_err(|e| format!("not hex: {e} (use --binary for raw bytes)"))
            }
            _ => Ok(Bytes::from(raw)),
        },
    }
}

/// Read a file, or standard input for `-`.
pub fn read_source(path: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map_err(|e| format!("standard input: {e}"))?;
        Ok(buf)
    } else {
        std::fs::read(path).map_err(|e| format!("{path}: {e}"))
    }
}
