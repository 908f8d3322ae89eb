//! Making untrusted text safe for terminals and pages: control characters,
//! ANSI escapes and bidi overrides are shown as escapes, never passed through.

use super::copy::push_bytes;

/// Characters that must not reach a terminal raw: C0/C1 controls, DEL, bidi
/// controls and line/paragraph separators.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// The unsafe characters that JSON allows raw and kwire writes as `\uXXXX`
/// anyway (JSON output is read in terminals too); the ASCII controls are
/// escaped by JSON itself, and DEL is left alone (terminals ignore it).
pub fn is_unsafe_in_json(c: char) -> bool {
    !c.is_ascii() && is_unsafe_char(c)
}

/// A string as a quoted literal with escapes: `"a\"b\n\u{1b}"`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    out.push('"');
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if is_unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// Text that is not quoted (docs, notes) with unsafe characters escaped.
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(is_unsafe_char) {
        return s.to_string();
    }
    let mut out = Vec::with_capacity(s.len() + 8);
    sanitize_into(&mut out, s);
    String::from_utf8(out).unwrap_or_default()
}

/// Lines for a terminal: each line [`sanitize`]d, the line breaks between
/// them and tabs kept (standard error's messages name files and input).
pub fn terminal_lines(s: &str) -> std::borrow::Cow<'_, str> {
    if !s
        .chars()
        .any(|c| c != '\n' && c != '\t' && is_unsafe_char(c))
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let lines: Vec<String> = s
        .split('\n')
        .map(|l| l.split('\t').map(sanitize).collect::<Vec<_>>().join("\t"))
        .collect();
    std::borrow::Cow::Owned(lines.join("\n"))
}

/// Whether every byte is printable ASCII (0x20 to 0x7e): eight bytes at a
/// time, as the tree views check every name, value and note they write.
#[inline]
pub(crate) fn is_printable_ascii(b: &[u8]) -> bool {
    printable_ascii_prefix(b) == b.len()
}

/// How many bytes at the start of `b` are printable ASCII: eight at a time,
/// then one at a time within the first word that holds another.
#[inline]
fn printable_ascii_prefix(b: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut n = 0;
    for w in b.chunks_exact(8) {
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        // With every byte below 0x80, adding 0x60 sets a byte's high bit
        // exactly when it is at least 0x20, and adding 1 exactly when it is
        // 0x7f; neither sum carries into the next byte.
        if x & HIGH != 0
            || x.wrapping_add(0x6060_6060_6060_6060) & HIGH != HIGH
            || x.wrapping_add(0x0101_0101_0101_0101) & HIGH != 0
        {
            break;
        }
        n += 8;
    }
    while b.get(n).is_some_and(|c| c.wrapping_sub(0x20) < 0x5f) {
        n += 1;
    }
    n
}

/// [`sanitize`] appended to a byte buffer: printable ASCII is copied as is.
pub fn sanitize_into(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut at = printable_ascii_prefix(bytes);
    if at == bytes.len() {
        push_bytes(out, bytes);
        return;
    }
    // Runs of printable ASCII are skipped eight bytes at a time (a preview's
    // `…` sends a note here); only the rest is decoded.
    let mut start = 0;
    while let Some(c) = s.get(at..).and_then(|rest| rest.chars().next()) {
        if is_unsafe_char(c) {
            push_bytes(out, &bytes[start..at]);
            push_unicode_escape(out, c);
            start = at + c.len_utf8();
        }
        at += c.len_utf8();
        at += printable_ascii_prefix(&bytes[at..]);
    }
    push_bytes(out, &bytes[start..]);
}

/// [`sanitize_into`] for a [`super::Text`]: kwire's own words
/// ([`super::Text::own_words`]) are copied as they are.
#[inline(always)]
pub(crate) fn sanitize_text_into(out: &mut Vec<u8>, t: &super::Text) {
    match t.as_clean() {
        Some(s) => push_bytes(out, s.as_bytes()),
        None => sanitize_into(out, t),
    }
}

/// `\u{1b}`: a character as its escape.
fn push_unicode_escape(out: &mut Vec<u8>, c: char) {
    use std::io::Write;
    let _ = write!(out, "\\u{{{:x}}}", c as u32);
}

/// [`quote`] appended to a byte buffer.
pub(crate) fn quote_into(out: &mut Vec<u8>, s: &str) {
    if !s.bytes().fold(false, |bad, b| {
        bad | !(0x20..0x7f).contains(&b) | (b == b'"') | (b == b'\\')
    }) {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(quote(s).as_bytes());
    }
}

/// Text of many lines (a listing, a diff) with unsafe characters escaped
/// and its line breaks kept.
pub fn sanitize_lines(s: &str) -> String {
    if !s.chars().any(|c| c != '\n' && is_unsafe_char(c)) {
        return s.to_string();
    }
    s.split('\n').map(sanitize).collect::<Vec<_>>().join("\n")
}

/// Bytes that are not UTF-8, as `b"ab\xff"`.
pub(crate) fn quote_bytes(b: &[u8]) -> String {
    let mut out = String::from("b\"");
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_escaped(&mut out, c);
        }
        for x in chunk.invalid() {
            out.push_str(&format!("\\x{x:02x}"));
        }
    }
    out.push('"');
    out
}

/// Escape for HTML text and attribute values.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_unsafe_char(c) => out.push_str(&format!("&#x{:x};", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_are_neutralised() {
        assert_eq!(quote("a\u{1b}[31mb"), "\"a\\u{1b}[31mb\"");
        assert_eq!(quote("q\"\\"), "\"q\\\"\\\\\"");
        assert_eq!(sanitize("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(
            sanitize("\u{85}\u{61c}\u{2028}"),
            "\\u{85}\\u{61c}\\u{2028}"
        );
        assert_eq!(sanitize_lines("a\u{1b}[2J\nb\n"), "a\\u{1b}[2J\nb\n");
        assert_eq!(quote("日本"), "\"日本\"");
        assert_eq!(quote_bytes(b"a\xff\x1b"), "b\"a\\xff\\u{1b}\"");
    }

    #[test]
    fn byte_writers_match_the_strings() {
        for s in [
            "plain",
            "q\"b\\",
            "x\u{202e}y\u{1b}[2J",
            "grüße — ok",
            "\u{7f}\u{85}",
            "",
        ] {
            let mut out = Vec::new();
            sanitize_into(&mut out, s);
            let each: String = s
                .chars()
                .map(|c| {
                    if is_unsafe_char(c) {
                        format!("\\u{{{:x}}}", c as u32)
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            assert_eq!(out, each.as_bytes());
            assert_eq!(sanitize(s), each);
            out.clear();
            quote_into(&mut out, s);
            assert_eq!(out, quote(s).as_bytes());
        }
    }

    #[test]
    fn sanitizing_skips_ascii_runs_and_escapes_what_follows_them() {
        // Unsafe characters after runs of every length, and safe non-ASCII among them.
        for run in 0..20 {
            let a = "a".repeat(run);
            let s = format!("{a}…{a}\u{1b}{a}\u{202e}é{a}");
            let mut out = Vec::new();
            sanitize_into(&mut out, &s);
            let expected: String = s
                .chars()
                .map(|c| {
                    if is_unsafe_char(c) {
                        format!("\\u{{{:x}}}", c as u32)
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            assert_eq!(String::from_utf8(out).unwrap(), expected, "{s:?}");
        }
    }

    #[test]
    fn static_texts_are_escaped_unless_own_words() {
        static UNSAFE: &str = "name\u{1b}[2J";
        for _ in 0..3 {
            let (mut clean, mut escaped) = (Vec::new(), Vec::new());
            sanitize_text_into(
                &mut clean,
                &super::super::Text::from_static("TopicProduceData"),
            );
            sanitize_text_into(&mut escaped, &super::super::Text::from_static(UNSAFE));
            assert_eq!(clean, b"TopicProduceData");
            assert_eq!(String::from_utf8(escaped).unwrap(), "name\\u{1b}[2J");
        }
        // Owned text is checked every time.
        let mut out = Vec::new();
        sanitize_text_into(
            &mut out,
            &super::super::Text::from(String::from("x\u{1b}y")),
        );
        assert_eq!(String::from_utf8(out).unwrap(), "x\\u{1b}y");
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            html("<script>alert('1')</script>&"),
            "&lt;script&gt;alert(&#39;1&#39;)&lt;/script&gt;&amp;"
        );
    }

    #[test]
    fn printable_ascii_is_told_from_every_other_byte_in_every_place() {
        for len in 0..20 {
            assert!(is_printable_ascii(&vec![b'~'; len]) && is_printable_ascii(&vec![b' '; len]));
            for at in 0..len {
                for bad in [0x00u8, 0x1f, 0x7f, 0x80, 0x9f, 0xff] {
                    let mut b = vec![b'a'; len];
                    b[at] = bad;
                    assert!(!is_printable_ascii(&b), "{bad:#x} at {at} of {len}");
                }
            }
        }
        for c in 0u8..=255 {
            assert_eq!(
                is_printable_ascii(&[c; 9]),
                (0x20..0x7f).contains(&c),
                "{c:#x}"
            );
        }
    }
}
