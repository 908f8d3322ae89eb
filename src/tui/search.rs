//! `/` search: field names and values in the tree, byte patterns in the frame
//! and in the decompressed record data inside it.

use crate::decode::{Node, Role, Value};
use crate::render::values::value_text;
use std::collections::HashSet;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The bytes matched, in the frame or in the buffer `buffer` names.
    pub range: Range<usize>,
    /// The matching node; `None` for a byte-pattern match.
    pub path: Option<Vec<usize>>,
    /// The decompressed node whose data `range` indexes; `None`: the frame's own bytes.
    pub buffer: Option<Vec<usize>>,
    /// Where the hit is in the frame, for their order: its own offset, or
    /// (in decompressed data) its buffer's compressed bytes' offset.
    pub at: usize,
}

/// Where a node lies: the decompressed data it is in (its node's path and
/// offset in the frame), or the frame's bytes.
#[derive(Clone, Default)]
struct Within {
    buffer: Option<(Vec<usize>, usize)>,
}

impl Within {
    fn hit(&self, range: Range<usize>, path: Option<Vec<usize>>) -> Hit {
        match &self.buffer {
            Some((b, at)) => Hit {
                at: *at,
                range,
                path,
                buffer: Some(b.clone()),
            },
            None => Hit {
                at: range.start,
                range,
                path,
                buffer: None,
            },
        }
    }
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
    pub fn new(root: &Node, bytes: &[u8], query: &str, open: &Opener) -> Search {
        let hits = find(root, bytes, query, open);
        let paths = hits.iter().filter_map(|h| h.path.clone()).collect();
        Search {
            query: query.to_string(),
            hits,
            paths,
            current: None,
        }
    }

    /// The next hit after frame byte `cursor` (or the one after the current hit), wrapping.
    pub fn next(&mut self, cursor: usize, forward: bool) -> Option<&Hit> {
        let n = self.hits.len();
        if n == 0 {
            return None;
        }
        let i = match (self.current, forward) {
            (Some(c), true) => (c + 1) % n,
            (Some(c), false) => (c + n - 1) % n,
            (None, true) => self.hits.iter().position(|h| h.at >= cursor).unwrap_or(0),
            (None, false) => self
                .hits
                .iter()
                .rposition(|h| h.at <= cursor)
                .unwrap_or(n - 1),
        };
        self.current = Some(i);
        self.hits.get(i)
    }
}

/// What walks a batch held as a stub for the search (`None`: it cannot be
/// walked, or the search does not open stubs).
pub(crate) type Opener<'a> = dyn Fn(&Node) -> Option<Node> + 'a;

/// Nodes whose name, value or note contains `query` (ignoring case), and, when the
/// query reads as hex bytes (`00 55`, `0x0055`), every place those bytes occur,
/// in the frame and in each decompressed buffer. A batch held as a stub is
/// searched as `open` walks it, and dropped after: its hits' paths go
/// through the stub, which is opened when one is selected.
pub fn find(root: &Node, bytes: &[u8], query: &str, open: &Opener) -> Vec<Hit> {
    let needle = query.trim().to_lowercase();
    if needle.is_empty() {
        return Vec::new();
    }
    let mut hits = Vec::new();
    let mut path = Vec::new();
    let pattern = hex_pattern(query);
    if let Some(pat) = &pattern {
        find_bytes(bytes, pat, &Within::default(), &mut hits);
    }
    find_nodes(
        root,
        (&needle, pattern.as_deref()),
        &mut path,
        &Within::default(),
        &mut hits,
        open,
    );
    // In the frame's order; decompressed data after the compressed bytes it came from.
    hits.sort_by_key(|h| (h.at, h.buffer.is_some(), h.range.start));
    hits
}

/// Every place `pat` occurs in `bytes`.
fn find_bytes(bytes: &[u8], pat: &[u8], within: &Within, out: &mut Vec<Hit>) {
    // Compare whole windows only where the first byte matches: a call to
    // memcmp for each of 100 million windows took over a second.
    let (first, rest) = (pat[0], &pat[1..]);
    let last = bytes.len().saturating_sub(pat.len() - 1);
    for (i, &b) in bytes[..last].iter().enumerate() {
        if b == first && &bytes[i + 1..i + pat.len()] == rest {
            out.push(within.hit(i..i + pat.len(), None));
        }
    }
}

fn find_nodes(
    node: &Node,
    (needle, pattern): (&str, Option<&[u8]>),
    path: &mut Vec<usize>,
    within: &Within,
    out: &mut Vec<Hit>,
    open: &Opener,
) {
    if node.deferred().is_some() {
        if let Some(opened) = open(node) {
            return find_nodes(&opened, (needle, pattern), path, within, out, open);
        }
    }
    // Notes hold decoded text too: a record value's `(text "hello")`, an error's name.
    let value_matches = || {
        value_text(node).is_some_and(|v| contains_lowercase(&v, needle))
            || crate::render::notes::note(node).is_some_and(|n| contains_lowercase(&n, needle))
    };
    if contains_lowercase(&node.name.text(), needle) || value_matches() {
        out.push(within.hit(node.offset..node.end(), Some(path.clone())));
    }
    // Below a decompressed node, offsets index its data.
    let inner;
    let within = match (&node.role, &node.value) {
        (Role::Decompressed, Value::Bytes(Some(data))) => {
            inner = Within {
                buffer: Some((path.clone(), node.offset)),
            };
            if let Some(pat) = pattern {
                find_bytes(data, pat, &inner, out);
            }
            &inner
        }
        _ => within,
    };
    for (i, c) in node.children.iter().enumerate() {
        path.push(i);
        find_nodes(c, (needle, pattern), path, within, out, open);
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
    n.is_empty()
        || hay
            .as_bytes()
            .windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

/// Bytes written as hex pairs, spaced or not, with optional `0x` prefixes.
pub(crate) fn hex_pattern(query: &str) -> Option<Vec<u8>> {
    let digits: String = query
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|t| {
            t.strip_prefix("0x")
                .or_else(|| t.strip_prefix("0X"))
                .unwrap_or(t)
        })
        .collect();
    if digits.is_empty()
        || !digits.len().is_multiple_of(2)
        || !digits.chars().all(|c| c.is_ascii_hexdigit())
    {
        return None;
    }
    hex::decode(digits).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Region;

    #[test]
    fn case_is_ignored_as_by_to_lowercase() {
        for (hay, needle) in [
            ("TopicId", "topicid"),
            ("TopicId", "cid"),
            ("Topic", "topics"),
            ("ÄBC", "äb"),
            ("ÄBC", "bc"),
            ("x", ""),
            ("Kelvin \u{212a}", "k"),
        ] {
            assert_eq!(
                contains_lowercase(hay, needle),
                hay.to_lowercase().contains(needle),
                "{hay} {needle}"
            );
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
        let by_name = find(&root, &[0, 0x55, 0, 7], "beta", &|_| None);
        assert_eq!(
            by_name,
            vec![Hit {
                range: 2..4,
                path: Some(vec![1]),
                buffer: None,
                at: 2
            }]
        );
        let by_value = find(&root, &[0, 0x55, 0, 7], "85", &|_| None);
        assert_eq!(by_value.len(), 1);
        let by_bytes = find(&root, &[0, 0x55, 0, 7], "00 55", &|_| None);
        assert_eq!(
            by_bytes,
            vec![Hit {
                range: 0..2,
                path: None,
                buffer: None,
                at: 0
            }]
        );
        assert_eq!(
            find(&root, &[0, 0x55, 0, 7], "00 07", &|_| None).len(),
            1,
            "a match at the very end"
        );
        assert!(
            find(&root, &[0, 0x55], "00 55 00", &|_| None).is_empty(),
            "a pattern longer than the bytes"
        );

        let mut s = Search::new(&root, &[0, 0x55, 0, 0x55], "55", &|_| None);
        assert_eq!(s.hits.len(), 2);
        assert_eq!(s.next(2, true).unwrap().range, 3..4);
        assert_eq!(s.next(2, true).unwrap().range, 1..2, "wraps");
        assert_eq!(s.next(2, false).unwrap().range, 3..4);
    }

    #[test]
    fn bytes_in_decompressed_data_are_found_in_their_buffer() {
        let mut root = Node::new("Root", "", 0, Region::Frame, Role::Structure);
        root.len = 8;
        let mut d = Node::new(
            "decompressed",
            "records",
            4,
            Region::Record,
            Role::Decompressed,
        );
        d.len = 4;
        d.value = Value::Bytes(Some(bytes::Bytes::from_static(&[
            1, 0xca, 0xfe, 2, 0xca, 0xfe,
        ])));
        root.children = vec![d];
        let hits = find(&root, &[0xca, 0xfe, 0, 0, 9, 9, 9, 9], "ca fe", &|_| None);
        let places: Vec<(Option<Vec<usize>>, Range<usize>, usize)> = hits
            .into_iter()
            .map(|h| (h.buffer, h.range, h.at))
            .collect();
        assert_eq!(
            places,
            vec![
                (None, 0..2, 0),
                (Some(vec![0]), 1..3, 4),
                (Some(vec![0]), 4..6, 4)
            ]
        );
    }
}
