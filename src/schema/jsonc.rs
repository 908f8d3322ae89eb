//! Kafka's definition files are JSON with `//` and `/* */` comments.

/// Remove comments outside string literals, keeping line structure so that
/// serde_json's error positions still point at the original text.
pub(crate) fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    let mut start = 0; // start of the pending run of kept text
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                i += 1;
            }
            (b'/', Some(b'/')) => {
                out.push_str(&text[start..i]);
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                start = i;
            }
            (b'/', Some(b'*')) => {
                out.push_str(&text[start..i]);
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i = (i + 2).min(bytes.len());
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[start.min(text.len())..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_both_comment_styles_but_not_inside_strings() {
        let src = "// head\n{ \"a\": \"x // y\", /* block\n more */ \"b\": 1 } // tail";
        let out = strip_comments(src);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["a"], "x // y");
        assert_eq!(v["b"], 1);
        assert_eq!(out.lines().count(), src.lines().count());
    }

    #[test]
    fn keeps_escaped_quotes_in_strings() {
        let out = strip_comments(r#"{"a": "q\" // not a comment"}"#);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["a"], "q\" // not a comment");
    }

    #[test]
    fn unterminated_block_comment_does_not_panic() {
        assert_eq!(strip_comments("{} /* open"), "{} ");
    }
}
