//! Input bytes: hex text in the shapes people paste, or raw binary.

pub mod framing;
pub mod hex_text;
pub mod stoppable;

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
            let text = std::str::from_utf8(&raw).map_err(|e| {
                format!(
                    "input is not text (UTF-8 error at byte {}); use --binary for raw bytes",
                    e.valid_up_to()
                )
            })?;
            hex_text::parse_hex_text(text)
                .map(Bytes::from)
                .map_err(|e| format!("not hex: {e}"))
        }
        InputKind::Auto => match std::str::from_utf8(&raw) {
            Ok(text) if !text.contains('\0') => match hex_text::parse_hex_text(text) {
                Ok(b) => Ok(Bytes::from(without_packet_headers(b))),
                // A damaged word dump is all letters and digits, so it often
                // decodes as base64 too; its own error is the useful one.
                Err(e) if hex_text::looks_like_word_dump(text) => Err(format!("not hex: {e}")),
                Err(e) => match base64_decode(text) {
                    Some(b) if !b.is_empty() => Ok(Bytes::from(b)),
                    _ => Err(format!("not hex: {e} (use --binary for raw bytes)")),
                },
            },
            _ => Ok(Bytes::from(raw)),
        },
    }
}

/// `tcpdump -X` / `-XX` and Wireshark packet dumps include the IP (and Ethernet)
/// headers: when the bytes are not a size-prefixed frame but a TCP packet, keep
/// the TCP payload.
pub(crate) fn without_packet_headers(b: Vec<u8>) -> Vec<u8> {
    let framed = b.len() >= 4
        && i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as i64 + 4 <= b.len() as i64
        && i32::from_be_bytes([b[0], b[1], b[2], b[3]]) >= 0;
    if framed {
        return b;
    }
    use crate::capture::link::{tcp_segment, LINKTYPE_ETHERNET, LINKTYPE_RAW};
    for link in [LINKTYPE_RAW, LINKTYPE_ETHERNET] {
        if let Some(seg) = tcp_segment(link, &b) {
            if !seg.payload.is_empty() {
                return seg.payload.to_vec();
            }
        }
    }
    b
}

/// Standard or URL-safe base64 in whole 4-character groups (padded, as tools
/// print it), whitespace ignored; anything else is not taken for base64.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let chars = text.chars().filter(|c| !c.is_whitespace()).count();
    if chars == 0 || chars % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut saw_pad = false;
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        let v = match c {
            'A'..='Z' => c as u32 - 'A' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 26,
            '0'..='9' => c as u32 - '0' as u32 + 52,
            '+' | '-' => 62,
            '/' | '_' => 63,
            '=' => {
                saw_pad = true;
                continue;
            }
            _ => return None,
        };
        if saw_pad {
            return None;
        }
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Read a file, or standard input for `-`.
pub fn read_source(path: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| format!("standard input: {e}"))?;
        Ok(buf)
    } else {
        std::fs::read(path).map_err(|e| format!("{path}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_in_both_alphabets() {
        assert_eq!(
            base64_decode("AAAAGQASAAM=").unwrap(),
            vec![0, 0, 0, 0x19, 0, 0x12, 0, 3]
        );
        assert_eq!(base64_decode("-_8=").unwrap(), vec![0xfb, 0xff]);
        assert!(base64_decode("hello world").is_none(), "not whole groups");
        assert!(base64_decode("not base64!").is_none());
    }

    #[test]
    fn pasted_base64_and_packets_reach_the_frame() {
        let frame = vec![0, 0, 0, 4, 0, 0x12, 0, 3];
        let b64 = "AAAABAASAAM=";
        assert_eq!(
            to_bytes(b64.as_bytes().to_vec(), InputKind::Auto)
                .unwrap()
                .to_vec(),
            frame
        );
        // An IPv4/TCP packet around the frame, as `tcpdump -X` prints it.
        let mut ip = vec![
            0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1,
        ];
        let total = (20 + 20 + frame.len()) as u16;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        let mut tcp = vec![
            0xc3, 0x50, 0x23, 0x84, 0, 0, 0, 1, 0, 0, 0, 1, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
        ];
        tcp.extend_from_slice(&frame);
        ip.extend(tcp);
        assert_eq!(without_packet_headers(ip), frame);
        // A real frame stays as it is.
        assert_eq!(without_packet_headers(frame.clone()), frame);
    }
}
