//! Which region each byte belongs to: the deepest node covering it decides.

use crate::decode::{Node, Region, Role};

/// Region of every byte in `0..len`; deeper nodes override their ancestors.
pub fn byte_regions(root: &Node, len: usize) -> Vec<Option<Region>> {
    let mut out = vec![None; len];
    fn paint(n: &Node, out: &mut [Option<Region>]) {
        let end = n.end().min(out.len());
        if n.offset < end {
            for slot in &mut out[n.offset..end] {
                *slot = Some(n.region);
            }
        }
        // Decompressed subtrees index another buffer, not these bytes.
        if n.role == Role::Decompressed {
            return;
        }
        for c in &n.children {
            paint(c, out);
        }
    }
    paint(root, &mut out);
    out
}

/// Contiguous runs `(region, start, end)` for summaries.
pub fn region_runs(regions: &[Option<Region>]) -> Vec<(Option<Region>, usize, usize)> {
    let mut runs: Vec<(Option<Region>, usize, usize)> = Vec::new();
    for (i, r) in regions.iter().enumerate() {
        match runs.last_mut() {
            Some(last) if last.0 == *r && last.2 == i => last.2 = i + 1,
            _ => runs.push((*r, i, i + 1)),
        }
    }
    runs
}
