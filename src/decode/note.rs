//! A node's note as the decoder knows it: text, or what a view writes when
//! it draws the node: how a string's or bytes' length was written
//! (`(compact, len+1=8)`), an error code's name (`(NOT_COORDINATOR)`), a
//! message's version (`v3`), a record's offset (`(offset 42)`).
//! Decoding formats neither: every string of a frame has a length, and
//! every partition of a response an error code.

use crate::protocol::error_codes::error_name;
use crate::schema::LengthPrefix;
use crate::text::escape::sanitize_text_into;
use crate::text::Text;
use std::fmt;

/// A node's note: [`Note::text`] for a view that keeps it, [`fmt::Display`]
/// for one that writes it.
#[derive(Clone)]
pub struct Note(Repr);

#[derive(Clone)]
enum Repr {
    Text(Text),
    Length(LengthForm),
    /// An int16 error code (its name, or that it has none).
    ErrorCode(i16),
    /// A message's or header's version: `v3`.
    Version(i16),
    /// A record's offset, on its offsetDelta: `(offset 42)`.
    Offset(i64),
}

/// How a string's or bytes' length was written: its prefix and the value
/// written in it (n+1 when compact).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LengthForm {
    pub prefix: LengthPrefix,
    pub written: i64,
}

impl Note {
    /// The note of a string or bytes whose length was written as `form`.
    pub(crate) fn length(form: LengthForm) -> Note {
        Note(Repr::Length(form))
    }

    /// The note of error code `code`: its name.
    pub(crate) fn error_code(code: i16) -> Note {
        Note(Repr::ErrorCode(code))
    }

    /// The note of a message or header at `version`.
    pub(crate) fn version(version: i16) -> Note {
        Note(Repr::Version(version))
    }

    /// The note of a record's offsetDelta: the offset it gives.
    pub(crate) fn offset(offset: i64) -> Note {
        Note(Repr::Offset(offset))
    }

    /// The note as text (formatted here when the decoder left it typed).
    pub fn text(&self) -> Text {
        match &self.0 {
            Repr::Text(t) => t.clone(),
            _ => Text::from(self.to_string()),
        }
    }

    /// The note when it is text, not a typed part.
    pub(crate) fn as_text(&self) -> Option<&Text> {
        match &self.0 {
            Repr::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The note escaped for a terminal, appended to `out`. A typed note is
    /// kwire's own words (numbers and the protocol's error names), written
    /// as it is.
    #[inline(always)]
    pub(crate) fn push_sanitized(&self, out: &mut Vec<u8>) {
        match &self.0 {
            Repr::Text(t) => sanitize_text_into(out, t),
            _ => self.push_own(out),
        }
    }

    /// The note as a JSON string, appended to `out` (`write_str` writes a
    /// string as one). A typed note holds no quote, backslash or control.
    #[inline(always)]
    pub(crate) fn push_json(&self, out: &mut Vec<u8>, write_str: impl FnOnce(&mut Vec<u8>, &str)) {
        match &self.0 {
            Repr::Text(t) => write_str(out, t),
            _ => {
                out.push(b'"');
                self.push_own(out);
                out.push(b'"');
            }
        }
    }

    /// A typed note's text, appended to `out`.
    fn push_own(&self, out: &mut Vec<u8>) {
        use crate::text::digits::push_int;
        let (lead, n): (&str, i64) = match self.0 {
            Repr::Text(_) => return,
            Repr::Length(LengthForm { prefix, written }) => {
                let null = prefix.length(written) == Ok(None);
                match prefix {
                    LengthPrefix::Compact if null => return out.extend_from_slice(COMPACT_NULL),
                    LengthPrefix::Int16 if null => return out.extend_from_slice(INT16_NULL),
                    LengthPrefix::Int32 if null => return out.extend_from_slice(INT32_NULL),
                    LengthPrefix::Compact => ("(compact, len+1=", written),
                    LengthPrefix::Int16 => ("(int16 len=", written),
                    LengthPrefix::Int32 => ("(int32 len=", written),
                }
            }
            Repr::Offset(offset) => ("(offset ", offset),
            Repr::Version(v) => {
                out.push(b'v');
                return push_int(out, v.into());
            }
            Repr::ErrorCode(code) => {
                out.push(b'(');
                out.extend_from_slice(error_name(code).unwrap_or(UNKNOWN_ERROR).as_bytes());
                out.push(b')');
                return;
            }
        };
        out.extend_from_slice(lead.as_bytes());
        push_int(out, n);
        out.push(b')');
    }
}

const COMPACT_NULL: &[u8] = b"(compact, 0=null)";
const INT16_NULL: &[u8] = b"(int16 len=-1, null)";
const INT32_NULL: &[u8] = b"(int32 len=-1, null)";
const UNKNOWN_ERROR: &str = "unknown error code";

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Text(t) => f.pad(t),
            _ => {
                let mut out = Vec::new();
                self.push_own(&mut out);
                // kwire's own words: ASCII.
                f.pad(std::str::from_utf8(&out).unwrap_or_default())
            }
        }
    }
}

impl fmt::Debug for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

impl PartialEq for Note {
    fn eq(&self, other: &Note) -> bool {
        self.to_string() == other.to_string()
    }
}

impl PartialEq<str> for Note {
    fn eq(&self, other: &str) -> bool {
        match &self.0 {
            Repr::Text(t) => t.as_str() == other,
            _ => {
                let mut own = Vec::new();
                self.push_own(&mut own);
                own == other.as_bytes()
            }
        }
    }
}

impl PartialEq<&str> for Note {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl<T: Into<Text>> From<T> for Note {
    fn from(t: T) -> Note {
        Note(Repr::Text(t.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(prefix: LengthPrefix, written: impl Into<i128>) -> LengthForm {
        let written = i64::try_from(written.into()).unwrap();
        LengthForm { prefix, written }
    }

    fn shown(n: &Note) -> (String, String, String) {
        let (mut text, mut json) = (Vec::new(), Vec::new());
        n.push_sanitized(&mut text);
        n.push_json(&mut json, |out, s| {
            out.extend_from_slice(serde_json::to_string(s).unwrap().as_bytes())
        });
        (
            n.to_string(),
            String::from_utf8(text).unwrap(),
            String::from_utf8(json).unwrap(),
        )
    }

    #[test]
    fn a_typed_note_reads_as_the_decoder_used_to_write_it() {
        for (note, text) in [
            (
                Note::length(form(LengthPrefix::Compact, 0)),
                "(compact, 0=null)",
            ),
            (
                Note::length(form(LengthPrefix::Compact, 8)),
                "(compact, len+1=8)",
            ),
            (
                Note::length(form(LengthPrefix::Compact, u64::from(u32::MAX) + 1)),
                "(compact, len+1=4294967296)",
            ),
            (
                Note::length(form(LengthPrefix::Int16, -1)),
                "(int16 len=-1, null)",
            ),
            (Note::length(form(LengthPrefix::Int16, 6)), "(int16 len=6)"),
            (
                Note::length(form(LengthPrefix::Int16, -7)),
                "(int16 len=-7)",
            ),
            (
                Note::length(form(LengthPrefix::Int32, -1)),
                "(int32 len=-1, null)",
            ),
            (
                Note::length(form(LengthPrefix::Int32, 40)),
                "(int32 len=40)",
            ),
            (Note::error_code(0), "(NONE)"),
            (Note::error_code(16), "(NOT_COORDINATOR)"),
            (Note::error_code(-1), "(UNKNOWN_SERVER_ERROR)"),
            (Note::error_code(9999), "(unknown error code)"),
            (Note::version(12), "v12"),
            (Note::version(-1), "v-1"),
        ] {
            assert_eq!(
                shown(&note),
                (text.to_string(), text.to_string(), format!("\"{text}\"")),
            );
            assert_eq!(note.text(), text);
            let as_text = Note::from(text);
            assert!(note == text, "{note:?}");
            assert_eq!((&note, &as_text), (&as_text, &note));
        }
    }

    #[test]
    fn a_text_note_is_escaped_as_any_text() {
        let n = Note::from("(x\u{1b}\"y)".to_string());
        let (plain, text, json) = shown(&n);
        assert_eq!(plain, "(x\u{1b}\"y)");
        assert_eq!(text, "(x\\u{1b}\"y)");
        assert_eq!(json, "\"(x\\u001b\\\"y)\"");
    }

    #[test]
    fn a_note_takes_no_more_room_than_its_text() {
        assert_eq!(
            std::mem::size_of::<Option<Note>>(),
            std::mem::size_of::<Option<Text>>()
        );
    }
}
