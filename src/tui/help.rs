//! The `?` overlay: every key, from the one table that the README mirrors.

use super::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

/// (keys, what they do).
pub const KEYS: &[(&str, &str)] = &[
    ("↑ ↓ ← → / h j k l", "move: grid byte/row; tree line, ←/→ collapse/expand"),
    ("PgUp PgDn", "page up / down"),
    ("Home End", "start / end of the grid row"),
    ("g G", "first / last byte, line or frame"),
    ("Tab Shift-Tab", "next / previous pane"),
    ("Enter Space", "expand / collapse (tree); elsewhere the next pane"),
    ("/", "search names, values, hex bytes (`00 55`)"),
    ("n N", "next / previous match"),
    (":", "jump to an offset: 0x1a or 26"),
    ("v", "decode again: `API VERSION` (response) or `request`"),
    ("[ ]", "previous / next frame"),
    ("paste", "hex text opens as a new frame (a request)"),
    ("mouse", "click selects a byte, line or frame; wheel scrolls"),
    ("Ctrl-U", "clear the prompt line"),
    ("Esc", "close a prompt or this help; clear the search"),
    ("?", "this help"),
    ("q Ctrl-C", "quit"),
];

pub struct HelpOverlay {
    pub theme: Theme,
}

impl HelpOverlay {
    pub fn size() -> (u16, u16) {
        let keys = KEYS.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
        let text = KEYS.iter().map(|(_, t)| t.chars().count()).max().unwrap_or(0);
        ((keys + 2 + text + 4) as u16, KEYS.len() as u16 + 2)
    }
}

impl Widget for HelpOverlay {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (w, h) = Self::size();
        let w = w.min(area.width);
        let h = h.min(area.height);
        let r = Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h);
        Clear.render(r, buf);
        let width = KEYS.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
        let lines: Vec<Line> = KEYS
            .iter()
            .map(|(k, t)| Line::from(vec![Span::styled(format!("{k:<width$}  "), self.theme.label()), Span::raw(*t)]))
            .collect();
        let block = Block::new().borders(Borders::ALL).title(" keys · Esc closes ");
        Paragraph::new(lines).block(block).render(r, buf);
    }
}
