//! The object tree widget: the visible lines only, each the `--format tree` text.

use super::theme::Theme;
use super::tree_state::{TreeRow, TreeState};
use crate::decode::Node;
use crate::render::text_tree::{line, TreeOptions};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use std::collections::HashSet;

const INDENT: u16 = 2;

/// Column of a line's expand/collapse marker (mouse clicks there toggle).
pub fn marker_x(row: &TreeRow) -> u16 {
    row.depth() as u16 * INDENT
}

pub struct TreeView<'a> {
    pub root: &'a Node,
    pub state: &'a TreeState,
    /// Nodes that match the search.
    pub hits: &'a HashSet<Vec<usize>>,
    pub focused: bool,
    pub theme: Theme,
}

impl TreeView<'_> {
    fn line_for(&self, row: &TreeRow) -> Line<'static> {
        let Some(node) = self.root.at_path(&row.path) else { return Line::default() };
        let marker = match (row.has_children, self.state.is_expanded(&row.path)) {
            (false, _) => "  ",
            (true, true) => "▾ ",
            (true, false) => "▸ ",
        };
        let mut spans = vec![Span::raw(" ".repeat(marker_x(row) as usize)), Span::raw(marker)];
        if self.theme.color {
            spans.push(Span::styled(" ", self.theme.region(node.region)));
            spans.push(Span::raw(" "));
        }
        let style = if node.error().is_some() {
            self.theme.error_text()
        } else if self.hits.contains(&row.path) {
            self.theme.hit_text()
        } else {
            Style::new()
        };
        spans.push(Span::styled(line(node, TreeOptions::default()), style));
        Line::from(spans)
    }
}

impl Widget for TreeView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let selected = self.state.selected_row();
        for (y, i) in (self.state.top..self.state.rows().len()).take(area.height as usize).enumerate() {
            let y = area.y + y as u16;
            let mut l = self.line_for(&self.state.rows()[i]);
            if i == selected {
                l = l.patch_style(self.theme.selected_line(self.focused));
                buf.set_style(Rect::new(area.x, y, area.width, 1), self.theme.selected_line(self.focused));
            }
            buf.set_line(area.x, y, &l, area.width);
        }
    }
}
