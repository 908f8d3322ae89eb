//! A record's part as a tree line: what [`PartLine`] holds (read from the
//! record tape), written as its node's line would be.

use super::digits::{push_int, push_uint};
use super::text_tree::LinePieces;
use super::values::push_bytes_text;
use crate::decode::records::lines::{PartDoc, PartLine, PartValue};
use crate::text::escape::sanitize_text_into;

impl LinePieces for PartLine<'_> {
    #[inline(always)]
    fn push_name(&self, out: &mut Vec<u8>) {
        self.name.push_sanitized(out)
    }
    #[inline(always)]
    fn push_type(&self, out: &mut Vec<u8>) -> bool {
        // The record format's own words: printable ASCII, written as they are.
        out.extend_from_slice(self.ty.as_bytes());
        true
    }
    #[inline(always)]
    fn push_value(&self, out: &mut Vec<u8>) -> bool {
        match self.value {
            PartValue::None => return false,
            PartValue::Int(v) => push_int(out, v),
            PartValue::Uint(v) => push_uint(out, v, 0),
            PartValue::Bytes(None) => out.extend_from_slice(b"null"),
            PartValue::Bytes(Some(b)) => push_bytes_text(out, b),
            PartValue::Buffer(b) => push_bytes_text(out, b),
        }
        true
    }
    #[inline(always)]
    fn push_note(&self, out: &mut Vec<u8>, code: &str) -> bool {
        if let Some(n) = &self.note {
            out.push(b' ');
            out.extend_from_slice(code.as_bytes());
            n.push_sanitized(out);
            return true;
        }
        match self.value {
            // Bytes' text, as a key's or value's node shows it.
            PartValue::Bytes(Some(b)) => super::notes::push_preview(out, b, code),
            _ => false,
        }
    }
    #[inline(always)]
    fn range(&self) -> (usize, usize) {
        (self.at, self.len)
    }
    #[inline(always)]
    fn has_doc(&self) -> bool {
        self.doc.is_some()
    }
    #[inline(always)]
    fn push_doc(&self, out: &mut Vec<u8>) {
        match self.doc {
            // The record format's own words: printable ASCII, written as they are.
            Some(PartDoc::Words(w)) => out.extend_from_slice(w.as_bytes()),
            Some(d) => sanitize_text_into(out, &d.text()),
            None => {}
        }
    }
    #[inline(always)]
    fn error(&self) -> Option<&str> {
        None
    }
}
