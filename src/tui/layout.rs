//! Where the panes go: side by side when the terminal is wide enough for the
//! grid and a useful tree, stacked otherwise (80×24 included).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Clear, Widget};

/// Columns the tree needs beside the grid before they go side by side.
const TREE_MIN_WIDTH: u16 = 50;
/// The frame list's lines: a third of the terminal, at least this many.
const FRAMES_MIN_LINES: usize = 5;

/// Outer rectangles of the panes (each starts with its title line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Panes {
    pub frames: Option<Rect>,
    pub grid: Rect,
    pub tree: Rect,
    pub details: Rect,
    pub status: Rect,
    /// The tree is a column to the right of grid and details.
    pub side_by_side: bool,
    /// The `+`/`-` resize as far as this height allows it (what the app keeps).
    pub list_resize: i16,
}

/// A pane that `z` can zoom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Frames,
    Grid,
    Tree,
}

impl Panes {
    /// `pane` over the room of all four (`z`); the others get none, the
    /// status line stays.
    pub fn zoom(self, pane: Pane) -> Panes {
        let all = [
            self.frames,
            Some(self.grid),
            Some(self.tree),
            Some(self.details),
        ]
        .into_iter()
        .flatten()
        .reduce(|a, b| a.union(b))
        .unwrap_or(self.grid);
        let none = Rect::new(all.x, all.y, 0, 0);
        let pick = |p: Pane| if p == pane { all } else { none };
        Panes {
            frames: self.frames.map(|_| pick(Pane::Frames)),
            grid: pick(Pane::Grid),
            tree: pick(Pane::Tree),
            details: none,
            status: self.status,
            side_by_side: false,
            list_resize: self.list_resize,
        }
    }
}

/// Lines `+` and `-` move the split between the frame list and the panes under it.
pub(crate) const RESIZE_STEP: i16 = 2;
/// Lines the panes under the frame list keep, however far `+` goes: at
/// 80x24 the stacked grid, tree and details, each with a line or more.
const BELOW_LIST_MIN: usize = 10;

/// `list_lines`: the frame list's lines (0 when it is not shown); `grid_rows`
/// and `grid_width` are what the whole frame's grid would take;
/// `list_resize`: lines `+`/`-` added to (or took from) the list's room, which
/// is a third of the height by default; at none the list is hidden.
pub fn panes(
    area: Rect,
    list_lines: usize,
    grid_rows: usize,
    grid_width: u16,
    list_resize: i16,
) -> Panes {
    let [top, status] = Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
    // The resize within what the height allows: down to hidden, up to the
    // panes' room below (a small terminal keeps its third, as without `+`).
    let third = (usize::from(top.height) / 3).max(FRAMES_MIN_LINES) as i16;
    let most = (usize::from(top.height).saturating_sub(BELOW_LIST_MIN + 1) as i16).max(third);
    let list_resize = list_resize.clamp(-third, most - third);
    let room = (third + list_resize) as usize;
    let (frames, rest) = if list_lines > 1 && room > 0 {
        let h = list_lines.min(room) as u16 + 1;
        let [f, r] = Layout::vertical([Constraint::Length(h), Constraint::Fill(1)]).areas(top);
        (Some(f), r)
    } else {
        (None, top)
    };
    let grid_need = grid_rows as u16 + 1;
    if area.width >= grid_width + 1 + TREE_MIN_WIDTH {
        let [left, tree] =
            Layout::horizontal([Constraint::Length(grid_width + 1), Constraint::Fill(1)])
                .areas(rest);
        let grid_h = grid_need.min(left.height * 3 / 5).max(2);
        let [grid, details] =
            Layout::vertical([Constraint::Length(grid_h), Constraint::Fill(1)]).areas(left);
        return Panes {
            frames,
            grid,
            tree,
            details,
            status,
            side_by_side: true,
            list_resize,
        };
    }
    let h = rest.height;
    let details_h = (h / 3).clamp(4, 12);
    let grid_h = grid_need.min((h * 2 / 5).max(3));
    let [grid, tree, details] = Layout::vertical([
        Constraint::Length(grid_h),
        Constraint::Fill(1),
        Constraint::Length(details_h),
    ])
    .areas(rest);
    Panes {
        frames,
        grid,
        tree,
        details,
        status,
        side_by_side: false,
        list_resize,
    }
}

/// An overlay's area: the screen less a one-cell margin, cleared.
pub fn overlay(area: Rect, buf: &mut Buffer) -> Rect {
    let r = Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    Clear.render(r, buf);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_terminals_stack_and_large_ones_split() {
        let p = panes(Rect::new(0, 0, 80, 24), 1, 5, 72, 0);
        assert!(!p.side_by_side);
        assert_eq!(p.frames, None);
        assert_eq!((p.grid.height, p.status.y), (6, 23));
        assert!(p.tree.height >= 8 && p.details.height >= 4, "{p:?}");
        assert_eq!(p.grid.height + p.tree.height + p.details.height, 23);

        let p = panes(Rect::new(0, 0, 160, 50), 3, 5, 72, 0);
        assert!(p.side_by_side);
        assert_eq!(p.frames.unwrap().height, 4);
        assert_eq!(p.tree.height, 45);
        assert_eq!(p.grid.width, 73);
    }
}
