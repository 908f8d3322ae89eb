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

/// A records field left unwalked ([`Node::deferred_records`]), painted by
/// whoever walks it: with its node, whether it is inside decompressed data,
/// and the regions.
pub(crate) type PaintDeferred<'p> =
    dyn FnMut(&crate::decode::DeferredRecords, bool, &mut [Option<Region>]) + 'p;

/// `n`'s subtree painted into `out` ([`byte_regions`]), a deferred records
/// field by `deferred` after its own node.
pub(crate) fn paint_regions(
    n: &Node,
    inside_decompressed: bool,
    out: &mut [Option<Region>],
    deferred: &mut PaintDeferred<'_>,
) {
    let end = n.end().min(out.len());
    // Decompressed subtrees index another buffer, not these bytes.
    if !inside_decompressed && n.offset < end {
        out[n.offset..end].fill(Some(n.region));
    }
    let inside = inside_decompressed || n.role == Role::Decompressed;
    for c in &n.children {
        paint_regions(c, inside, out, deferred);
    }
    if let Some(d) = n.deferred_records() {
        deferred(d, inside, out);
    }
}

/// For every byte in `0..len`, the pre-order index (the order of
/// `render::text_tree::tree_lines`) of the deepest node covering it: what a
/// byte links to on a page.
pub fn byte_owners(root: &Node, len: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; len];
    let mut next = 0;
    fn paint(n: &Node, inside_decompressed: bool, next: &mut usize, out: &mut [Option<usize>]) {
        let index = *next;
        *next += 1;
        let end = n.end().min(out.len());
        // Decompressed subtrees index another buffer, not these bytes.
        if !inside_decompressed && n.offset < end {
            out[n.offset..end].fill(Some(index));
        }
        let inside = inside_decompressed || n.role == Role::Decompressed;
        for c in &n.children {
            paint(c, inside, next, out);
        }
    }
    paint(root, false, &mut next, &mut out);
    out
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
