//! Lining up two decoded frames by field path (`body.Topics[0].Name`): nodes
//! with the same path are compared byte for byte, so every byte of either
//! frame is marked same, changed, added or removed.

use crate::decode::{decode_frame, DecodeOptions, Frame, Node, Region, Role, Value};
use crate::encode::FrameSpec;
use crate::render::text_tree::label;
use crate::schema::Catalogue;
use crate::teach::explain::spaced;
use bytes::Bytes;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    Same,
    Changed,
    Added,
    Removed,
}

impl Mark {
    /// The marker printed before a line or a byte.
    pub fn symbol(&self) -> char {
        match self {
            Mark::Same => ' ',
            Mark::Changed => '~',
            Mark::Added => '+',
            Mark::Removed => '-',
        }
    }
}

/// Where a node sits in its frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Place {
    pub offset: usize,
    pub len: usize,
    pub hex: String,
    /// The tree line's label: name, type, value, note.
    pub label: String,
    /// Child indexes from the frame's root to the node (`Node::at_path`).
    #[serde(skip)]
    pub at: Vec<usize>,
}

/// One field path and where it is in each frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Aligned {
    pub path: String,
    /// Whether the node has no children (its bytes are its own).
    pub leaf: bool,
    pub a: Option<Place>,
    pub b: Option<Place>,
    pub mark: Mark,
}

impl Aligned {
    /// Bytes gained (positive) or lost going from `a` to `b`.
    pub fn delta(&self) -> i64 {
        self.b.as_ref().map_or(0, |p| p.len as i64) - self.a.as_ref().map_or(0, |p| p.len as i64)
    }

    /// Nesting depth of the path (0 for top-level names).
    pub fn depth(&self) -> usize {
        self.path.matches('.').count()
    }

    pub fn side(&self, side: Side) -> Option<&Place> {
        match side {
            Side::A => self.a.as_ref(),
            Side::B => self.b.as_ref(),
        }
    }
}

struct Flat {
    path: String,
    leaf: bool,
    place: Place,
}

/// Every node of a frame (decompressed data aside) with its field path.
/// Fields inside a tagged entry take their struct's path, so a field that
/// moves between tagged and untagged keeps its path.
fn flatten(frame: &Frame) -> Vec<Flat> {
    fn go(
        frame: &Frame,
        node: &Node,
        at: &mut Vec<usize>,
        path: &str,
        struct_path: &str,
        out: &mut Vec<Flat>,
    ) {
        // Elements are numbered by their place among the array's elements (after its length).
        let mut element = 0usize;
        for (i, c) in node.children.iter().enumerate() {
            let shown = c.name.text();
            let name = match (at.is_empty(), c.role, c.region) {
                (true, Role::Structure, Region::Frame) => "frame",
                (true, Role::Structure, Region::RpcHeader) => "header",
                (true, Role::Structure, _) => "body",
                _ if c.role == Role::TaggedSection => "tagged_fields",
                _ => &shown,
            };
            let base = match c.role {
                Role::TaggedSection => struct_path,
                Role::Field { .. } if matches!(node.role, Role::TaggedEntry { .. }) => struct_path,
                _ => path,
            };
            // Array elements are `Topics[0]`, not `Topics.WriteStateData[0]`.
            let in_array = c.role == Role::Element && matches!(node.value, Value::Array(_));
            let index = in_array.then(|| {
                element += 1;
                element - 1
            });
            let p = match index {
                Some(ix) => format!("{base}[{ix}]"),
                None if base.is_empty() => name.to_string(),
                None => format!("{base}.{name}"),
            };
            let inner_struct = if matches!(c.role, Role::TaggedSection | Role::TaggedEntry { .. }) {
                struct_path
            } else {
                &p
            };
            at.push(i);
            let bytes = frame.bytes.get(c.offset..c.end()).unwrap_or_default();
            let place = Place {
                offset: c.offset,
                len: c.len,
                hex: spaced(bytes),
                label: label(c),
                at: at.clone(),
            };
            out.push(Flat {
                path: p.clone(),
                leaf: c.children.is_empty(),
                place,
            });
            if c.role != Role::Decompressed {
                go(frame, c, at, &p, inner_struct, out);
            }
            at.pop();
        }
    }
    let mut out = Vec::new();
    go(frame, &frame.root, &mut Vec::new(), "", "", &mut out);
    out
}

/// Pair the nodes of `a` and `b` by path, in `b`'s order, with nodes only in
/// `a` placed after the last node before them that both frames have.
pub fn align(a: &Frame, b: &Frame) -> Vec<Aligned> {
    let (fa, fb) = (flatten(a), flatten(b));
    let index = |f: &[Flat]| -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for (i, x) in f.iter().enumerate() {
            m.entry(x.path.clone()).or_insert(i);
        }
        m
    };
    let (ia, ib) = (index(&fa), index(&fb));
    // Nodes only in `a`, grouped by the `b` index they follow (None: before all).
    let mut removed: HashMap<Option<usize>, Vec<&Flat>> = HashMap::new();
    let mut anchor = None;
    for x in &fa {
        match ib.get(&x.path) {
            Some(&j) => anchor = Some(j),
            None => removed.entry(anchor).or_default().push(x),
        }
    }
    let only_a = |x: &Flat| Aligned {
        path: x.path.clone(),
        leaf: x.leaf,
        a: Some(x.place.clone()),
        b: None,
        mark: Mark::Removed,
    };
    let mut out: Vec<Aligned> = removed
        .get(&None)
        .into_iter()
        .flatten()
        .map(|x| only_a(x))
        .collect();
    for (j, y) in fb.iter().enumerate() {
        let pa = ia.get(&y.path).map(|&i| &fa[i]);
        let mark = match pa {
            None => Mark::Added,
            Some(x) if x.place.hex == y.place.hex => Mark::Same,
            Some(_) => Mark::Changed,
        };
        out.push(Aligned {
            path: y.path.clone(),
            leaf: y.leaf && pa.is_none_or(|x| x.leaf),
            a: pa.map(|x| x.place.clone()),
            b: Some(y.place.clone()),
            mark,
        });
        out.extend(
            removed
                .get(&Some(j))
                .into_iter()
                .flatten()
                .map(|x| only_a(x)),
        );
    }
    out
}

/// One message at two versions: both frames decoded, and their alignment.
#[derive(Clone, Debug, Serialize)]
pub struct FramePair {
    pub from_size: usize,
    pub to_size: usize,
    pub from_hex: String,
    pub to_hex: String,
    pub alignment: Vec<Aligned>,
    #[serde(skip)]
    pub from: Frame,
    #[serde(skip)]
    pub to: Frame,
}

impl FramePair {
    /// Decode two encoded frames of `fs_a` and `fs_b` and align them.
    pub fn decode(
        cat: &Catalogue,
        (fs_a, a): (&FrameSpec, Vec<u8>),
        (fs_b, b): (&FrameSpec, Vec<u8>),
    ) -> FramePair {
        let decode = |fs: &FrameSpec, bytes: Vec<u8>| {
            let opts = DecodeOptions {
                direction: Some(fs.direction),
                api_key: Some(fs.api_key),
                api_version: Some(fs.version),
                release: fs.release.map(str::to_string),
                ..Default::default()
            };
            decode_frame(cat, Bytes::from(bytes), 0, &opts)
        };
        let (from, to) = (decode(fs_a, a), decode(fs_b, b));
        FramePair {
            from_size: from.bytes.len(),
            to_size: to.bytes.len(),
            from_hex: hex::encode(&from.bytes),
            to_hex: hex::encode(&to.bytes),
            alignment: align(&from, &to),
            from,
            to,
        }
    }

    /// The node an aligned place points at, with its parent.
    pub fn node(&self, side: Side, place: &Place) -> Option<(&Node, Option<&Node>)> {
        let root = match side {
            Side::A => &self.from.root,
            Side::B => &self.to.root,
        };
        let (_, parent_path) = place.at.split_last()?;
        Some((root.at_path(&place.at)?, root.at_path(parent_path)))
    }

    pub fn frame(&self, side: Side) -> &Frame {
        match side {
            Side::A => &self.from,
            Side::B => &self.to,
        }
    }
}

/// Which side of an alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// The mark of every byte of one side's frame (`len` bytes): the deepest
/// aligned node covering a byte decides.
pub fn byte_marks(aligned: &[Aligned], side: Side, len: usize) -> Vec<Mark> {
    let mut marks = vec![Mark::Same; len];
    let mut by_depth: Vec<&Aligned> = aligned.iter().collect();
    // Deeper nodes paint last, so leaves decide.
    by_depth.sort_by_key(|x| x.side(side).map_or(0, |p| p.at.len()));
    for x in by_depth {
        let Some(p) = x.side(side) else { continue };
        let end = (p.offset + p.len).min(len);
        for m in marks.iter_mut().take(end).skip(p.offset) {
            *m = x.mark;
        }
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::example::example_frame;

    fn example(version: i16) -> Frame {
        let cat = Catalogue::builtin();
        let fs = FrameSpec {
            direction: crate::decode::Direction::Request,
            api_key: 3,
            version,
            release: None,
        };
        let bytes = example_frame(cat, &fs).unwrap();
        decode_frame(cat, Bytes::from(bytes), 0, &DecodeOptions::default())
    }

    #[test]
    fn same_paths_compare_bytes() {
        let (a, b) = (example(8), example(9));
        let al = align(&a, &b);
        let find = |p: &str| {
            al.iter()
                .find(|x| x.path == p)
                .unwrap_or_else(|| panic!("{p}"))
        };
        assert_eq!(find("header.request_api_key").mark, Mark::Same);
        assert_eq!(find("header.request_api_version").mark, Mark::Changed);
        assert_eq!(find("header.tagged_fields").mark, Mark::Added);
        assert_eq!(find("body.Topics.length").mark, Mark::Changed);
        // Elements by their place in the array, whatever their nodes are named.
        let elements: Vec<&str> = al
            .iter()
            .map(|x| x.path.as_str())
            .filter(|p| p.starts_with("body.Topics["))
            .collect();
        assert!(elements.contains(&"body.Topics[0]"), "{elements:?}");
        let marks = byte_marks(&al, Side::B, b.bytes.len());
        assert_eq!(
            marks[4..6],
            [Mark::Same, Mark::Same],
            "the api key is the same"
        );
        assert_eq!(
            marks[6..8],
            [Mark::Changed, Mark::Changed],
            "00 08 → 00 09: a changed field is marked whole"
        );
    }
}
