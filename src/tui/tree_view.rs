//! The object tree widget: the visible lines only, each the `--format tree` text.

use super::theme::Theme;
use super::tree_state::{TreeRow, TreeState};
use crate::decode::records::view::records;
use crate::decode::{Node, Role};
use crate::render::text_tree::{line_in, TreeOptions};
use crate::render::values::value_text;
use crate::text::escape::sanitize;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use std::collections::{HashMap, HashSet};

const INDENT: u16 = 2;

/// Column of a line's expand/collapse marker (mouse clicks there toggle).
pub(crate) fn marker_x(row: &TreeRow) -> u16 {
    row.depth() as u16 * INDENT
}

pub(crate) struct TreeView<'a> {
    pub root: &'a Node,
    pub state: &'a TreeState,
    /// Nodes that match the search.
    pub hits: &'a HashSet<Vec<usize>>,
    /// What stubs of a big array's elements summed up before they were
    /// emptied, by offset.
    pub stub_summaries: &'a HashMap<usize, String>,
    pub focused: bool,
    pub theme: Theme,
}

impl TreeView<'_> {
    fn line_for(&self, row: &TreeRow) -> Line<'static> {
        let Some(node) = self.root.at_path(&row.path) else {
            return Line::default();
        };
        let marker = match (row.has_children, self.state.is_expanded(&row.path)) {
            (false, _) => "  ",
            (true, true) => "▾ ",
            (true, false) => "▸ ",
        };
        let mut spans = vec![
            Span::raw(" ".repeat(marker_x(row) as usize)),
            Span::raw(marker),
        ];
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
        // Offsets under decompressed data index its buffer: `d:`, as in the text tree.
        let mut ancestor = Some(self.root);
        let inside = row.path.iter().any(|&k| {
            let here = ancestor.is_some_and(|a| a.role == Role::Decompressed);
            ancestor = ancestor.and_then(|a| a.children.get(k));
            here
        });
        spans.push(Span::styled(
            line_in(node, TreeOptions::default(), inside),
            style,
        ));
        if row.has_children && !self.state.is_expanded(&row.path) {
            let stub = || {
                node.deferred_elements()
                    .and_then(|_| self.stub_summaries.get(&node.offset).cloned())
            };
            if let Some(summary) = collapsed_summary(self.root, &row.path).or_else(stub) {
                spans.push(Span::styled(
                    format!("  ⟨{}⟩", sanitize(&summary)),
                    self.theme.dim(),
                ));
            }
        }
        Line::from(spans)
    }
}

/// The line less its first `n` characters (scrolled sideways), each span
/// keeping its style.
fn without_columns(line: Line<'static>, mut n: usize) -> Line<'static> {
    if n == 0 {
        return line;
    }
    let spans = line
        .spans
        .into_iter()
        .filter_map(|span| {
            let len = span.content.chars().count();
            if n >= len {
                n -= len;
                return None;
            }
            let kept: String = span.content.chars().skip(n).collect();
            n = 0;
            Some(Span::styled(kept, span.style))
        })
        .collect::<Vec<_>>();
    Line::from(spans).style(line.style)
}

/// Longest value shown in a summary.
const SUMMARY_VALUE: usize = 32;

/// What a collapsed node holds, in one line: a record's offset, key, value
/// and size; otherwise its first few fields with values.
pub(crate) fn collapsed_summary(root: &Node, path: &[usize]) -> Option<String> {
    let node = root.at_path(path)?;
    // A record: its batch is an ancestor (the parent, or above the decompressed data).
    for up in 1..=3.min(path.len()) {
        let Some(batch) = root.at_path(&path[..path.len() - up]) else {
            continue;
        };
        let mut found = None;
        records(std::slice::from_ref(batch), &mut |r| {
            if std::ptr::eq(r.node, node) {
                found = Some(format!(
                    "offset {} · key {} · value {} · {} B",
                    r.offset,
                    payload_text(r.key.bytes()),
                    payload_text(r.value.bytes()),
                    node.len
                ));
            }
        });
        if found.is_some() {
            return found;
        }
    }
    fields_summary(node)
}

/// A node's first few fields with values, in one line: what a collapsed
/// struct shows (and what a stub of one keeps, `FrameView::stubbed`).
pub(crate) fn fields_summary(node: &Node) -> Option<String> {
    let fields: Vec<String> = node
        .children
        .iter()
        .filter(|c| c.role != Role::Encoding && c.children.is_empty())
        .filter_map(|c| value_text(c).map(|v| format!("{}={}", c.name, shorten(&v))))
        .take(3)
        .collect();
    (!fields.is_empty())
        .then(|| fields.join(", ") + if node.children.len() > 3 { ", …" } else { "" })
}

/// Bytes as a short preview: quoted text when they are printable UTF-8, else hex.
fn payload_text(b: Option<&bytes::Bytes>) -> String {
    match b {
        None => "null".into(),
        Some(b) => match std::str::from_utf8(b) {
            Ok(t) if !t.chars().any(char::is_control) => format!("\"{}\"", shorten(t)),
            _ => shorten(&format!(
                "0x{}",
                hex::encode(&b[..b.len().min(SUMMARY_VALUE)])
            )),
        },
    }
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(SUMMARY_VALUE) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

impl Widget for TreeView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let selected = self.state.selected_row();
        for (y, i) in (self.state.top..self.state.rows().len())
            .take(area.height as usize)
            .enumerate()
        {
            let y = area.y + y as u16;
            let mut l = without_columns(self.line_for(&self.state.rows()[i]), self.state.left);
            if i == selected {
                l = l.patch_style(self.theme.selected_line(self.focused));
                buf.set_style(
                    Rect::new(area.x, y, area.width, 1),
                    self.theme.selected_line(self.focused),
                );
            }
            buf.set_line(area.x, y, &l, area.width);
        }
    }
}
