//! Which region each byte belongs to: the deepest node covering it decides.

use crate::decode::{Node, Region, Role};

/// Region of every byte in `0..len`; deeper nodes override their ancestors.
/// The region of each byte's [`byte_owners`] node, painted in the same order
/// without the owners' table (16 bytes a byte, not 1: it matters at 100 MB).
pub fn byte_regions(root: &Node, len: usize) -> Vec<Option<Region>> {
    let mut out = vec![None; len];
    paint_regions(root, false, &mut out, &mut |_, _, _| {});
    out
}

/// A node whose records field or array's elements were left unwalked
/// ([`Node::deferred_records`], [`Node::deferred_elements`]), painted by
/// whoever walks them: with the node, whether it is inside decompressed
/// data, and the regions.
pub(crate) type PaintDeferred<'p, T = Region> = dyn FnMut(&Node, bool, &mut [Option<T>]) + 'p;

/// `n`'s subtree painted into `out` ([`byte_regions`]), what a node left
/// unwalked by `deferred` after its own node and children.
pub(crate) fn paint_regions(
    n: &Node,
    inside_decompressed: bool,
    out: &mut [Option<Region>],
    deferred: &mut PaintDeferred<'_>,
) {
    paint(n, inside_decompressed, out, &mut |n| n.region, deferred);
}

/// For every byte in `0..len`, the pre-order index (the order of
/// `render::text_tree::tree_lines`) of the deepest node covering it: what a
/// byte links to on a page.
pub fn byte_owners(root: &Node, len: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; len];
    let mut next = 0;
    let mut index = |_: &Node| {
        next += 1;
        next - 1
    };
    paint(root, false, &mut out, &mut index, &mut |_, _, _| {});
    out
}

/// The one painting of bytes by nodes: `n`'s subtree in pre-order, each
/// node's bytes filled with `mark(node)` over its ancestors' (so the deepest
/// node covering a byte decides), except inside decompressed data, whose
/// offsets index another buffer (those nodes are marked, not painted); a
/// deferred records field handed to `deferred` after its own node.
fn paint<T: Copy>(
    n: &Node,
    inside_decompressed: bool,
    out: &mut [Option<T>],
    mark: &mut dyn FnMut(&Node) -> T,
    deferred: &mut PaintDeferred<'_, T>,
) {
    let value = mark(n);
    let end = n.end().min(out.len());
    if !inside_decompressed && n.offset < end {
        out[n.offset..end].fill(Some(value));
    }
    let inside = inside_decompressed || n.role == Role::Decompressed;
    for c in &n.children {
        paint(c, inside, out, mark, deferred);
    }
    if n.deferred_records().is_some() || n.deferred_elements().is_some() {
        deferred(n, inside, out);
    }
}

/// Contiguous runs `(region, start, end)` for summaries.
pub(crate) fn region_runs(regions: &[Option<Region>]) -> Vec<(Option<Region>, usize, usize)> {
    let mut runs: Vec<(Option<Region>, usize, usize)> = Vec::new();
    for (i, r) in regions.iter().enumerate() {
        match runs.last_mut() {
            Some(last) if last.0 == *r && last.2 == i => last.2 = i + 1,
            _ => runs.push((*r, i, i + 1)),
        }
    }
    runs
}
