//! The object tree's expansion and selection, flattened to its visible lines.
//!
//! Only expanded nodes are visited when the lines are rebuilt (after an
//! expand, collapse or reveal), and the lines hold paths, not text: the tree
//! view renders text for the lines on screen only.

use crate::decode::{Kind, Node, Role};
use std::collections::HashSet;

/// Trees up to this many nodes open fully; larger ones open to [`OPEN_DEPTH`].
const OPEN_ALL_NODES: usize = 2000;
const OPEN_DEPTH: usize = 3;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeRow {
    /// Child indexes from the root; pre-order lines are sorted by path.
    pub path: Vec<usize>,
    pub has_children: bool,
}

impl TreeRow {
    pub fn depth(&self) -> usize {
        self.path.len()
    }
}

#[derive(Clone, Debug)]
pub struct TreeState {
    expanded: HashSet<Vec<usize>>,
    rows: Vec<TreeRow>,
    /// The selected node; always on a visible line.
    selected: Vec<usize>,
    /// First line on screen.
    pub top: usize,
    /// Columns scrolled off the left of every line (`<` `>`).
    pub left: usize,
    /// The wire's plumbing hidden (`w`): length prefixes, counts, tags and
    /// their sizes, presence markers, and tagged sections with no entries.
    plain: bool,
}

/// Whether a node is the wire's plumbing rather than what the message says:
/// decided by its kind, never by its name.
pub fn is_plumbing(node: &Node) -> bool {
    match node.kind {
        Kind::CompactArrayLength
        | Kind::ArrayCount
        | Kind::TagCount
        | Kind::Tag
        | Kind::TagSize
        | Kind::PresenceMarker
        | Kind::BytesLength => true,
        // A tagged section with no entries: its count alone.
        _ => {
            node.role == Role::TaggedSection
                && node.children.iter().all(|c| c.kind == Kind::TagCount)
        }
    }
}

impl TreeState {
    pub fn new(root: &Node) -> TreeState {
        let mut count = 0;
        root.walk(&mut |_, _| count += 1);
        let max_depth = if count <= OPEN_ALL_NODES {
            usize::MAX
        } else {
            OPEN_DEPTH
        };
        let mut expanded = HashSet::new();
        let mut path = Vec::new();
        open_to_depth(root, &mut path, max_depth, &mut expanded);
        let mut t = TreeState {
            expanded,
            rows: Vec::new(),
            selected: Vec::new(),
            top: 0,
            left: 0,
            plain: false,
        };
        t.rebuild(root);
        t
    }

    pub fn rows(&self) -> &[TreeRow] {
        &self.rows
    }

    pub fn selected(&self) -> &[usize] {
        &self.selected
    }

    /// The line of the selected node.
    pub fn selected_row(&self) -> usize {
        self.row_of(&self.selected).unwrap_or(0)
    }

    pub(crate) fn row_of(&self, path: &[usize]) -> Option<usize> {
        self.rows
            .binary_search_by(|r| r.path.as_slice().cmp(path))
            .ok()
    }

    pub fn is_expanded(&self, path: &[usize]) -> bool {
        self.expanded.contains(path)
    }

    /// Select a node, expanding its ancestors so that it is on a line.
    pub fn select(&mut self, root: &Node, path: &[usize]) {
        let hidden = (0..path.len()).any(|i| !self.expanded.contains(&path[..i]));
        if hidden {
            for i in 0..path.len() {
                self.expanded.insert(path[..i].to_vec());
            }
            self.rebuild(root);
        }
        self.selected = path.to_vec();
    }

    pub(crate) fn select_row(&mut self, row: usize) {
        if let Some(r) = self.rows.get(row) {
            self.selected = r.path.clone();
        }
    }

    pub(crate) fn set_expanded(&mut self, root: &Node, path: &[usize], open: bool) {
        let changed = if open {
            self.expanded.insert(path.to_vec())
        } else {
            self.expanded.remove(path)
        };
        if !changed {
            return;
        }
        // A collapsed ancestor would hide the selection: select the ancestor instead.
        if !open && self.selected.len() > path.len() && self.selected.starts_with(path) {
            self.selected = path.to_vec();
        }
        self.rebuild(root);
    }

    pub fn toggle(&mut self, root: &Node, path: &[usize]) {
        let open = !self.is_expanded(path);
        self.set_expanded(root, path, open);
    }

    /// Hides (or shows again) the wire's plumbing ([`is_plumbing`]); a
    /// selection inside what is hidden moves to the nearest shown ancestor.
    pub(crate) fn set_plain(&mut self, root: &Node, plain: bool) {
        if self.plain == plain {
            return;
        }
        self.plain = plain;
        self.rebuild(root);
        while self.row_of(&self.selected).is_none() && !self.selected.is_empty() {
            self.selected.pop();
        }
    }

    /// Every node with children under the node at `path` opened, it too.
    /// `path` and everything under it collapsed (a stub folded back: what
    /// was open under it is gone).
    pub(crate) fn collapse_under(&mut self, root: &Node, path: &[usize]) {
        self.expanded.retain(|p| !p.starts_with(path));
        if self.selected.len() > path.len() && self.selected.starts_with(path) {
            self.selected = path.to_vec();
        }
        self.rebuild(root);
    }

    pub(crate) fn expand_under(&mut self, root: &Node, path: &[usize]) {
        let Some(node) = root.at_path(path) else {
            return;
        };
        let mut at = path.to_vec();
        open_to_depth(node, &mut at, usize::MAX, &mut self.expanded);
        self.rebuild(root);
    }

    /// Every node with children opened.
    pub(crate) fn expand_all(&mut self, root: &Node) {
        let mut path = Vec::new();
        open_to_depth(root, &mut path, usize::MAX, &mut self.expanded);
        self.rebuild(root);
    }

    /// Only the root's children shown (a frame's header and body); the
    /// selection moves up to them.
    pub(crate) fn collapse_all(&mut self, root: &Node) {
        self.expanded.clear();
        self.expanded.insert(Vec::new());
        self.selected.truncate(1);
        self.rebuild(root);
        self.top = 0;
    }

    /// Scroll so that the selected line is among `height` lines from `top`.
    /// A jump past more than the next line centres the selection; a step
    /// just past an edge scrolls by one line.
    pub(crate) fn scroll_to_selection(&mut self, height: usize) {
        let row = self.selected_row();
        let jumped = row + 1 < self.top || row > self.top + height;
        if jumped && height > 0 {
            self.top = row.saturating_sub(height / 2);
        } else if row < self.top {
            self.top = row;
        } else if height > 0 && row >= self.top + height {
            self.top = row + 1 - height;
        }
        self.clamp_top(height);
    }

    pub(crate) fn scroll_by(&mut self, delta: isize, height: usize) {
        self.top = self.top.saturating_add_signed(delta);
        self.clamp_top(height);
    }

    fn clamp_top(&mut self, height: usize) {
        self.top = self.top.min(self.rows.len().saturating_sub(height.max(1)));
    }

    fn rebuild(&mut self, root: &Node) {
        self.rows.clear();
        let mut path = Vec::new();
        self.push_rows(root, &mut path);
    }

    fn push_rows(&mut self, node: &Node, path: &mut Vec<usize>) {
        self.rows.push(TreeRow {
            path: path.clone(),
            // A stub of a big records field's batch, or of a big array's
            // element, opens into children.
            has_children: !node.children.is_empty() || node.deferred().is_some(),
        });
        if !self.expanded.contains(path.as_slice()) {
            return;
        }
        for (i, c) in node.children.iter().enumerate() {
            if self.plain && is_plumbing(c) {
                continue;
            }
            path.push(i);
            self.push_rows(c, path);
            path.pop();
        }
    }
}

fn open_to_depth(
    node: &Node,
    path: &mut Vec<usize>,
    max_depth: usize,
    out: &mut HashSet<Vec<usize>>,
) {
    if node.children.is_empty() || path.len() >= max_depth {
        return;
    }
    out.insert(path.clone());
    for (i, c) in node.children.iter().enumerate() {
        path.push(i);
        open_to_depth(c, path, max_depth, out);
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Region;

    fn sample() -> Node {
        let mut root = Node::new("root", "", 0, Region::Frame, Role::Structure);
        for i in 0..2 {
            let mut c = Node::new(format!("c{i}"), "", i, Region::Frame, Role::Structure);
            c.children.push(Node::new(
                format!("c{i}.0"),
                "",
                i,
                Region::Frame,
                Role::Structure,
            ));
            root.children.push(c);
        }
        root
    }

    #[test]
    fn lines_follow_expansion_and_selection_stays_visible() {
        let root = sample();
        let mut t = TreeState::new(&root);
        let paths: Vec<_> = t.rows().iter().map(|r| r.path.clone()).collect();
        assert_eq!(
            paths,
            vec![vec![], vec![0], vec![0, 0], vec![1], vec![1, 0]]
        );
        t.select(&root, &[1, 0]);
        assert_eq!(t.selected_row(), 4);
        t.set_expanded(&root, &[1], false);
        assert_eq!(t.rows().len(), 4);
        assert_eq!(t.selected(), &[1], "collapsing an ancestor selects it");
        t.select(&root, &[1, 0]);
        assert_eq!(t.rows().len(), 5, "selecting a hidden node reveals it");
        assert_eq!(t.row_of(&[1, 0]), Some(4));
    }

    #[test]
    fn scrolling_keeps_the_selection_on_screen() {
        let root = sample();
        let mut t = TreeState::new(&root);
        t.select(&root, &[1, 0]);
        t.scroll_to_selection(2);
        assert_eq!(t.top, 3);
        t.select(&root, &[]);
        t.scroll_to_selection(2);
        assert_eq!(t.top, 0);
        t.scroll_by(100, 2);
        assert_eq!(t.top, 3, "clamped to the last screenful");
    }
}
