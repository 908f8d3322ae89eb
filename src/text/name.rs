//! A node's name as the decoder knows it: text, or an element's base and
//! index (`Topics[3]`, `Record[12]`) that a view writes when it draws the
//! node. Decoding formats no element name: a Fetch response of 400,000
//! records would otherwise make 400,000 strings nobody may look at.

use super::Text;
use crate::text::escape::{is_printable_ascii, sanitize_into, sanitize_text_into};
use std::fmt;

/// A node's name: [`Name::text`] for a view that keeps it, [`fmt::Display`]
/// for one that writes it.
#[derive(Clone)]
pub struct Name(Repr);

#[derive(Clone)]
enum Repr {
    Text(Text),
    /// Element `index` of `base`, shown `base[index]`; `clean` when `base` is
    /// plain ([`is_plain`]: written as it is in text and JSON). The base behind a thin pointer, so
    /// that a name takes no more room than a [`Text`] (a node's size is
    /// memory traffic).
    Indexed {
        base: &'static &'static str,
        index: u32,
        clean: bool,
    },
}

impl Name {
    /// `base[index]` for an element whose base is kwire's own words (the
    /// record format's names).
    pub(crate) fn own_indexed(base: &'static &'static str, index: usize) -> Name {
        debug_assert!(is_plain(base));
        Name::element(base, index, true)
    }

    /// `base[index]` whose base is known to be plain ([`is_plain`]) or not
    /// (checked once, where its labels are made).
    pub(crate) fn element(base: &'static &'static str, index: usize, clean: bool) -> Name {
        match u32::try_from(index) {
            Ok(index) => Name(Repr::Indexed { base, index, clean }),
            // Past u32 there is no frame: an element count comes from the bytes.
            Err(_) => Name(Repr::Text(Text::format(format_args!("{base}[{index}]")))),
        }
    }

    /// The name as text (formatted here for an element: inline when short).
    pub fn text(&self) -> Text {
        match &self.0 {
            Repr::Text(t) => t.clone(),
            Repr::Indexed { base, index, .. } => Text::format(format_args!("{base}[{index}]")),
        }
    }

    /// The name when it is text, not an element's base and index.
    pub(crate) fn as_text(&self) -> Option<&Text> {
        match &self.0 {
            Repr::Text(t) => Some(t),
            Repr::Indexed { .. } => None,
        }
    }

    /// The name escaped for a terminal, appended to `out`.
    #[inline(always)]
    pub(crate) fn push_sanitized(&self, out: &mut Vec<u8>) {
        match &self.0 {
            Repr::Text(t) => sanitize_text_into(out, t),
            Repr::Indexed { base, index, clean } => {
                if *clean {
                    out.extend_from_slice(base.as_bytes());
                } else {
                    sanitize_into(out, base);
                }
                push_index(out, *index);
            }
        }
    }

    /// The name as a JSON string, appended to `out` (`write_str` writes a
    /// string as one).
    #[inline(always)]
    pub(crate) fn push_json(&self, out: &mut Vec<u8>, write_str: impl FnOnce(&mut Vec<u8>, &str)) {
        match &self.0 {
            Repr::Text(t) => write_str(out, t),
            Repr::Indexed {
                base,
                index,
                clean: true,
            } => {
                out.push(b'"');
                out.extend_from_slice(base.as_bytes());
                push_index(out, *index);
                out.push(b'"');
            }
            Repr::Indexed { .. } => write_str(out, &self.text()),
        }
    }

    /// Whether the name reads `s`.
    pub fn is(&self, s: &str) -> bool {
        match &self.0 {
            Repr::Text(t) => t.as_str() == s,
            Repr::Indexed { base, index, .. } => s
                .strip_prefix(**base)
                .and_then(|rest| rest.strip_prefix('['))
                .and_then(|rest| rest.strip_suffix(']'))
                // Only the spelling the name shows: no sign, no leading zero.
                .is_some_and(|digits| {
                    digits.bytes().all(|b| b.is_ascii_digit())
                        && (digits == "0" || !digits.starts_with('0'))
                        && digits.parse::<u32>().ok() == Some(*index)
                }),
        }
    }
}

/// Whether `s` is printable ASCII without quotes or backslashes: written as
/// it is in a terminal and inside a JSON string.
pub(crate) fn is_plain(s: &str) -> bool {
    is_printable_ascii(s.as_bytes()) && !s.contains(['"', '\\'])
}

/// `[index]` appended to `out`.
#[inline(always)]
fn push_index(out: &mut Vec<u8>, index: u32) {
    out.push(b'[');
    crate::text::digits::push_uint(out, u64::from(index), 0);
    out.push(b']');
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Text(t) => f.pad(t),
            Repr::Indexed { .. } => f.pad(&self.text()),
        }
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.text().as_str(), f)
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        match (&self.0, &other.0) {
            (Repr::Text(a), _) => other.is(a),
            (_, Repr::Text(b)) => self.is(b),
            (
                Repr::Indexed {
                    base: a, index: i, ..
                },
                Repr::Indexed {
                    base: b, index: j, ..
                },
            ) => a == b && i == j,
        }
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.is(other)
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.is(other)
    }
}

impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<T: Into<Text>> From<T> for Name {
    fn from(t: T) -> Name {
        Name(Repr::Text(t.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_element_name_is_written_as_its_base_and_index() {
        let n = Name::element(&"Topics", 12, true);
        assert_eq!(n.to_string(), "Topics[12]");
        assert_eq!(n.text(), "Topics[12]");
        assert!(n.is("Topics[12]") && !n.is("Topics[1]") && !n.is("Topics[12]x"));
        assert!(
            !n.is("Topics[012]") && !n.is("Topics[+12]") && Name::element(&"T", 0, true).is("T[0]")
        );
        assert_eq!(format!("{n:<12}|"), "Topics[12]  |");
        assert_eq!(n, Name::from("Topics[12]"));
        let mut out = Vec::new();
        n.push_sanitized(&mut out);
        assert_eq!(out, b"Topics[12]");
    }

    #[test]
    fn an_element_base_from_the_input_is_escaped() {
        let base: &'static &'static str = Box::leak(Box::new(Box::leak("T\u{1b}[2J\"".into())));
        let n = Name::element(base, 3, is_plain(base));
        let mut out = Vec::new();
        n.push_sanitized(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "T\\u{1b}[2J\"[3]");
        let mut json = Vec::new();
        n.push_json(&mut json, |out, s| {
            out.extend_from_slice(serde_json::to_string(s).unwrap().as_bytes())
        });
        assert_eq!(String::from_utf8(json).unwrap(), r#""T\u001b[2J\"[3]""#);
    }

    #[test]
    fn a_name_takes_no_more_room_than_its_text() {
        assert_eq!(std::mem::size_of::<Name>(), std::mem::size_of::<Text>());
    }
}
