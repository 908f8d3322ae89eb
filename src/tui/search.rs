//! `/` search: field names and values in the tree, byte patterns in the frame.

use crate::decode::Node;
use crate::render::values::value_text;
use std::collections::HashSet;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub range: Range<usize>,
    /// The matching node; `None` for a byte-pattern match.
    pub path: Option<Vec<usize>>,
}

#[derive(Clone, Debug, Default)]
pub struct Search {
    pub query: String,
    /// Ordered by offset.
    pub hits: Vec<Hit>,
    /// The matching nodes, for marking tree lines.
    pub paths: HashSet<Vec<usize>>,
    pub current: Option<usize>,
}

impl Search {
    pub fn new(root: &Node, bytes: &[u8], query: &str) -> Search {
        let hits = find(root, bytes, query);
        let paths = hits.iter().filter_map(|h| h.path.clone()).collect();
        Search { query: query.to_string(), hits, paths, current: None }
    }

    /// The next hit after `cursor` (or the one after the current hit), wrapping.
    pub fn next(&mut self, cursor: usize, forward: bool) -> Option<&Hit> {
        let n = self.hits.len();
        if n == 0 {
            return None;
        }
        let i = match (self.current, forward) {
            (Some(c), true) => (c + 1) % n,
            (Some(c), false) => (c + n - 1) % n,
            (None, true) => self.hits.iter().position(|h| h.range.start >= cursor).unwrap_or(0),
            (None, false) => self.hits.iter().rposition(|h| h.range.start <= cursor).unwrap_or(n - 1),
        };
        self.current = Some(i);
        self.hits.get(i)
    }
}

/// Nodes whose name, value or note contains `query` (ignoring case), and, when the
/// query reads as hex bytes (`00 55`, `0x0055`), every place those bytes occur.
pub fn find(root: &Node, bytes: &[u8], query: &str) -> Vec<Hit> {
    let needle = query.trim().to_lowercase();
    if needle.is_empty() {
        return Vec::new();
    }
    let mut hits = Vec::new();
    let mut path = Vec::new();
    find_nodes(root, &needle, &mut path, &mut hits);
    if let Some(pat) = hex_pattern(query) {
        // Compare whole windows only where the first byte matches: a call to
        // memcmp for each of 100 million windows took over a second.
        let (first, rest) = (pat[0], &pat[1..]);
        let last = bytes.len().saturating_sub(pat.len() - 1);
        for (i, &b) in bytes[..last].iter().enumerate() {
            if b == first && &bytes[i + 1..i + pat.len()] == rest {
                hits.push(Hit { range: i..i + pat.len(), path: None });
            }
        }
    }
    hits.sort_by_key(|h| h.range.start);
    hits
}

fn find_nodes(node: &Node, needle: &str, path: &mut Vec<usize>, out: &mut Vec<Hit>) {
    // Notes hold decoded text too: a record value's `(text "hello")`, an error's name.
    let value_matches = || value_text(node).is_some_and(|v| contains_lowercase(&v, needle)) || node.note.as_deref().is_some_and(|n| contains_lowercase(n, needle));
    if contains_lowercase(&node.name, needle) || value_matches() {
        out.push(Hit { range: node.offset..node.end(), path: Some(path.clone()) });
    }
    for (i, c) in node.children.iter().enumerate() {
        path.push(i);
        find_nodes(c, needle, path, out);
        path.pop();
    }
}

/// `hay.to_lowercase().contains(needle)` for a lowercase `needle`, without
/// making the lowercase copy when `hay` is ASCII (names and most values).
fn contains_lowercase(hay: &str, needle: &str) -> bool {
    if !hay.is_ascii() {
        return hay.to_lowercase().contains(needle);
    }
    let n = needle.as_bytes();
    n.is_empty() || hay.as_bytes().windows(n.len()).any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

/// Bytes written as hex pairs, spaced or not, with optional `0x` prefixes.
pub fn hex_pattern(query: &str) -> Option<Vec<u8>> {
    let digits: String = query
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|t| t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t))
        .collect();
    if digits.is_empty() || !digits.len().is_multiple_of(2) || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    hex::decode(digits).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Region, Role, Value};

    #[test]
    fn case_is_ignored_as_by_to_lowercase() {
        for (hay, needle) in [("TopicId", "topicid"), ("TopicId", "cid"), ("Topic", "topics"), ("ÄBC", "äb"), ("ÄBC", "bc"), ("x", ""), ("Kelvin \u{212a}", "k")] {
            assert_eq!(contains_lowercase(hay, needle), hay.to_lowercase().contains(needle), "{hay} {needle}");
        }
    }

    #[test]
    fn hex_patterns() {
        assert_eq!(hex_pattern("00 55"), Some(vec![0, 0x55]));
        assert_eq!(hex_pattern("0x0055"), Some(vec![0, 0x55]));
        assert_eq!(hex_pattern("TopicId"), None);
        assert_eq!(hex_pattern("abc"), None);
        assert_eq!(hex_pattern(""), None);
    }

    #[test]
    fn names_values_and_bytes_match_in_offset_order() {
        let mut root = Node::new("Root", "", 0, Region::Frame, Role::Structure);
        root.len = 4;
        let mut a = Node::new("Alpha", "int16", 0, Region::Frame, Role::Structure);
        a.len = 2;
        a.value = Value::Int(85);
        let mut b = Node::new("Beta", "int16", 2, Region::Frame, Role::Structure);
        b.len = 2;
        b.value = Value::Int(7);
        root.children = vec![a, b];
        let by_name = find(&root, &[0, 0x55, 0, 7], "beta");
        assert_eq!(by_name, vec![Hit { range: 2..4, path: Some(vec![1]) }]);
        let by_value = find(&root, &[0, 0x55, 0, 7], "85");
        assert_eq!(by_value.len(), 1);
        let by_bytes = find(&root, &[0, 0x55, 0, 7], "00 55");
        assert_eq!(by_bytes, vec![Hit { range: 0..2, path: None }]);
        assert_eq!(find(&root, &[0, 0x55, 0, 7], "00 07").len(), 1, "a match at the very end");
        assert!(find(&root, &[0, 0x55], "00 55 00").is_empty(), "a pattern longer than the bytes");

        let mut s = Search::new(&root, &[0, 0x55, 0, 0x55], "55");
        assert_eq!(s.hits.len(), 2);
        assert_eq!(s.next(2, true).unwrap().range, 3..4);
        assert_eq!(s.next(2, true).unwrap().range, 1..2, "wraps");
        assert_eq!(s.next(2, false).unwrap().range, 3..4);
    }
}
