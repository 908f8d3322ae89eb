//! Text at the bottom of every layer: [`Text`], the label type of schema
//! names and tree nodes, the names' snake_case spelling, the escapes that
//! make untrusted text safe to show ([`escape`]) and the spellings of values
//! shared by every view (uuids, floats in JSON).

pub mod copy;
pub mod digits;
pub mod escape;
pub mod name;
pub mod table;
pub mod width;
pub mod wrap;

use serde::Serialize;
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A node's type, doc or string value, or the text of its name or note
/// ([`name::Name`], `decode::Note`): a static string, kwire's
/// own words (static, printable ASCII, written without escaping), a string
/// shared with the catalogue, a short string kept inline, or one of its own, so
/// that most nodes cost no allocation for their labels. Reads as a `str`.
#[derive(Clone)]
pub struct Text(Repr);

/// Longest string kept inside a `Text` without an allocation (the size of the
/// other variants, so a `Text` stays 24 bytes).
const INLINE: usize = 22;

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    /// kwire's own words ([`Text::own_words`]): printable ASCII, written
    /// without escaping or looking it up.
    Clean(&'static str),
    Shared(Arc<str>),
    Inline {
        len: u8,
        buf: [u8; INLINE],
    },
    Owned(Box<str>),
}

impl Text {
    pub const fn from_static(s: &'static str) -> Text {
        Text(Repr::Static(s))
    }

    /// kwire's own words at run time, its literals (the record format's
    /// names and types), or labels from definitions checked plain once when
    /// they were made (`FieldLabels::clean`): printable ASCII, written
    /// without escaping (checked in debug builds). Never for unchecked text
    /// from definitions or input.
    #[inline(always)]
    pub(crate) fn own_words(s: &'static str) -> Text {
        debug_assert!(
            escape::is_printable_ascii(s.as_bytes()),
            "{s:?} is not printable ASCII"
        );
        Text(Repr::Clean(s))
    }

    /// The text when it is kwire's own words ([`Text::own_words`]): shown as it is.
    #[inline(always)]
    pub(crate) fn as_clean(&self) -> Option<&'static str> {
        match &self.0 {
            Repr::Clean(s) => Some(s),
            _ => None,
        }
    }

    /// A copy of `s`, inline when short.
    pub(crate) fn copy_of(s: &str) -> Text {
        if s.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..s.len()].copy_from_slice(s.as_bytes());
            Text(Repr::Inline {
                len: s.len() as u8,
                buf,
            })
        } else {
            Text(Repr::Owned(s.into()))
        }
    }

    /// The pieces one after another, inline when they fit.
    pub fn concat(pieces: &[&str]) -> Text {
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        if len <= INLINE {
            let mut buf = [0u8; INLINE];
            let mut at = 0;
            for p in pieces {
                buf[at..at + p.len()].copy_from_slice(p.as_bytes());
                at += p.len();
            }
            return Text(Repr::Inline {
                len: len as u8,
                buf,
            });
        }
        let mut s = String::with_capacity(len);
        for p in pieces {
            s.push_str(p);
        }
        Text(Repr::Owned(s.into_boxed_str()))
    }

    /// `bytes` as text when they are UTF-8. Short ASCII (most names and ids)
    /// is checked byte by byte, cheaper than the general validator at that size.
    #[inline]
    pub fn from_utf8(bytes: &[u8]) -> Option<Text> {
        if bytes.len() <= INLINE && bytes.iter().all(u8::is_ascii) {
            let mut buf = [0u8; INLINE];
            buf[..bytes.len()].copy_from_slice(bytes);
            return Some(Text(Repr::Inline {
                len: bytes.len() as u8,
                buf,
            }));
        }
        std::str::from_utf8(bytes).ok().map(Text::copy_of)
    }

    /// Formatted text (`Text::format(format_args!("Record[{i}]"))`), inline
    /// when it fits: no allocation for short element names and notes.
    pub fn format(args: fmt::Arguments<'_>) -> Text {
        if let Some(s) = args.as_str() {
            return Text::from_static(s);
        }
        let mut w = InlineWriter {
            len: 0,
            buf: [0u8; INLINE],
        };
        if fmt::Write::write_fmt(&mut w, args).is_ok() {
            Text(Repr::Inline {
                len: w.len as u8,
                buf: w.buf,
            })
        } else {
            Text(Repr::Owned(fmt::format(args).into_boxed_str()))
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) | Repr::Clean(s) => s,
            Repr::Shared(s) => s,
            // SAFETY: `buf[..len]` only ever receives whole `str`s (`copy_of`, and
            // `InlineWriter`, whose partial output is dropped when formatting fails).
            Repr::Inline { len, buf } => unsafe {
                std::str::from_utf8_unchecked(&buf[..usize::from(*len)])
            },
            Repr::Owned(s) => s,
        }
    }
}

/// Formats into a fixed buffer; fails (and the caller allocates) when it is full.
struct InlineWriter {
    len: usize,
    buf: [u8; INLINE],
}

impl fmt::Write for InlineWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > INLINE {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::from_static("")
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl From<&'static str> for Text {
    fn from(s: &'static str) -> Text {
        Text(Repr::Static(s))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        if s.len() <= INLINE {
            Text::copy_of(&s)
        } else {
            Text(Repr::Owned(s.into_boxed_str()))
        }
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::copy_of(s)
    }
}

impl From<Arc<str>> for Text {
    fn from(s: Arc<str>) -> Text {
        Text(Repr::Shared(s))
    }
}

impl From<&Arc<str>> for Text {
    fn from(s: &Arc<str>) -> Text {
        Text(Repr::Shared(s.clone()))
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.as_str().to_string()
    }
}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A duration as people read it, its unit chosen by magnitude: `7 µs`,
/// `0.42 ms`, `250.8 ms`, `3.1 s`, `10.0 min`. Every text view writes
/// latencies and spans through it (JSON keeps microseconds, `latency_us`).
pub fn duration(seconds: f64) -> String {
    let ms = seconds * 1e3;
    if ms < 0.01 {
        format!("{:.0} µs", seconds * 1e6)
    } else if ms < 0.995 {
        // Not past 0.995: that rounds to `1.00 ms`, written `1.0 ms` above.
        format!("{ms:.2} ms")
    } else if ms < 999.95 {
        format!("{ms:.1} ms")
    } else if seconds < 119.95 {
        format!("{seconds:.1} s")
    } else {
        format!("{:.1} min", seconds / 60.0)
    }
}

/// [`duration`] of a whole number of microseconds.
pub fn duration_us(us: u64) -> String {
    duration(us as f64 / 1e6)
}

/// Increasing numbers as ranges, as people write them: `1-3, 5, 7-8`; past
/// `most` ranges the rest are counted (`1, 3, … 2 more`).
pub fn number_ranges(numbers: &[usize], most: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", numbers[i], numbers[j])
        } else {
            numbers[i].to_string()
        });
        i = j + 1;
    }
    if parts.len() > most {
        let rest = parts.len() - most;
        parts.truncate(most);
        parts.push(format!("… {rest} more"));
    }
    parts.join(", ")
}

/// Standard base64 with padding: binary data embedded in a page as text.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A count with its noun in the right number: `1 frame`, `2 frames`,
/// `0 frames`. Every view counts through it, so no line says "1 versions".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `RequestApiKey` → `request_api_key`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A uuid as most tools print it: hyphenated hex.
pub(crate) fn uuid_text(u: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*u).hyphenated().to_string()
}

/// A uuid as Kafka's `Uuid.toString` prints it: URL-safe base64 without padding.
pub(crate) fn kafka_uuid_text(u: &[u8; 16]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(22);
    for chunk in u.chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, b| acc << 8 | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// A float64 in the contract: a JSON number, or `"NaN"`, `"inf"`, `"-inf"`
/// (JSON has no numbers for them).
pub(crate) fn float_json(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or_else(
        || serde_json::json!(v.to_string()),
        serde_json::Value::Number,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_is_rfc_4648s() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"foob"), "Zm9vYg==");
        // RFC 4648's vectors, and the last letters of the alphabet.
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(super::base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn durations_take_the_unit_their_size_asks_for() {
        use super::{duration, duration_us};
        assert_eq!(duration_us(7), "7 µs");
        assert_eq!(duration_us(420), "0.42 ms");
        assert_eq!(duration_us(250_800), "250.8 ms");
        assert_eq!(duration_us(999_960), "1.0 s", "no 1000.0 ms");
        assert_eq!(duration(0.000_999_9), "1.0 ms", "no 1.00 ms");
        assert_eq!(duration(0.000_994), "0.99 ms");
        assert_eq!(duration(3.12), "3.1 s");
        assert_eq!(duration(600.0), "10.0 min");
    }

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(super::count(1, "version", "versions"), "1 version");
        assert_eq!(super::count(0, "version", "versions"), "0 versions");
        assert_eq!(super::count(2, "entry", "entries"), "2 entries");
    }

    use super::*;

    #[test]
    fn own_words_are_written_as_they_are_and_read_as_any_text() {
        let t = Text::own_words("Record[3]");
        let mut out = b"x ".to_vec();
        escape::sanitize_text_into(&mut out, &t);
        assert_eq!(
            (out.as_slice(), t.as_str(), t.as_clean()),
            (&b"x Record[3]"[..], "Record[3]", Some("Record[3]"))
        );
        assert_eq!(t, Text::from_static("Record[3]"));
        // Other static texts are still checked: an escape in one is escaped.
        let mut out = Vec::new();
        escape::sanitize_text_into(&mut out, &Text::from_static("a\x1b[31mb"));
        assert!(!out.contains(&0x1b), "{out:?}");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not printable ASCII")]
    fn own_words_that_are_not_printable_ascii_fail_in_debug_builds() {
        let _ = Text::own_words("a\x1b[31mb");
    }

    #[test]
    fn concat_joins_inline_when_short_and_owned_when_long() {
        let short = Text::concat(&["(text \"", "key-0", "", "\")"]);
        assert_eq!(short, "(text \"key-0\")");
        assert!(matches!(short.0, Repr::Inline { .. }));
        let long = Text::concat(&[
            "(text \"",
            "a value longer than the inline buffer",
            "…",
            "\")",
        ]);
        assert_eq!(long, "(text \"a value longer than the inline buffer…\")");
        assert!(matches!(long.0, Repr::Owned(_)));
        assert_eq!(Text::concat(&[]), "");
        let exactly = "x".repeat(INLINE);
        assert!(matches!(Text::concat(&[&exactly]).0, Repr::Inline { .. }));
        assert!(matches!(Text::concat(&[&exactly, "y"]).0, Repr::Owned(_)));
    }

    #[test]
    fn text_from_utf8_takes_short_ascii_inline_and_checks_the_rest() {
        let short = Text::from_utf8(b"consumer-1").expect("ASCII");
        assert!(matches!(short.0, Repr::Inline { .. }));
        assert_eq!(short, "consumer-1");
        assert_eq!(Text::from_utf8("grüße".as_bytes()).expect("UTF-8"), "grüße");
        let long = "a".repeat(INLINE + 1);
        assert_eq!(
            Text::from_utf8(long.as_bytes()).expect("long ASCII"),
            long.as_str()
        );
        assert!(
            Text::from_utf8(b"ab\xff").is_none(),
            "invalid UTF-8 is refused"
        );
        assert!(
            Text::from_utf8(b"\xc3").is_none(),
            "a cut multi-byte character is refused"
        );
        assert_eq!(Text::from_utf8(b"").expect("empty"), "");
    }

    #[test]
    fn uuids_print_as_kafka_does() {
        assert_eq!(kafka_uuid_text(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        let mut one = [0u8; 16];
        one[15] = 1;
        assert_eq!(kafka_uuid_text(&one), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(kafka_uuid_text(&[0xff; 16]), "_____________________w");
    }
}
