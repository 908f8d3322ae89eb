//! Styles for every highlight, in colour or (with NO_COLOR) in modifiers only.

use crate::decode::Region;
use crate::render::grid::ansi_bg;
use ratatui::style::{Color, Modifier, Style};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    pub const COLOR: Theme = Theme { color: true };
    pub const MONO: Theme = Theme { color: false };

    /// Monochrome when `NO_COLOR` is set, as for `kwire decode`.
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// A region's base style: the grid's background colours, or a modifier.
    pub fn region(&self, r: Region) -> Style {
        if self.color {
            return Style::new()
                .fg(Color::Indexed(16))
                .bg(Color::Indexed(ansi_bg(r)));
        }
        let m = match r {
            Region::Frame => Modifier::DIM,
            Region::RpcHeader => Modifier::BOLD,
            Region::RequestBody | Region::ResponseBody => Modifier::empty(),
            Region::RecordBatch | Region::Record => Modifier::ITALIC,
            Region::TaggedFields => Modifier::DIM | Modifier::ITALIC,
        };
        Style::new().add_modifier(m)
    }

    /// The selected node's bytes; reversing keeps the region visible in the text colour.
    pub fn selection(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// The cursor byte, drawn over the selection.
    pub fn cursor(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }

    pub fn hit(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        }
    }

    pub fn error(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::CROSSED_OUT)
        }
    }

    /// Error text (tree lines, status line).
    pub(crate) fn error_text(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    pub(crate) fn hit_text(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        }
    }

    /// The selected line of a list; weaker when its pane does not have focus.
    /// A list's line, highlighted when it is the selected one.
    pub(crate) fn mark_selected<'a>(
        &self,
        line: ratatui::text::Line<'a>,
        selected: bool,
    ) -> ratatui::text::Line<'a> {
        match selected {
            true => line.patch_style(self.selected_line(true)),
            false => line,
        }
    }

    pub(crate) fn selected_line(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, _) => Style::new().add_modifier(Modifier::REVERSED),
            (false, true) => Style::new()
                .bg(Color::Indexed(238))
                .add_modifier(Modifier::BOLD),
            (false, false) => Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        }
    }

    pub fn title(&self, focused: bool) -> Style {
        if focused {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    pub fn label(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Cyan)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    /// Secondary text (latencies in the frame list).
    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Green)
        } else {
            Style::new()
        }
    }
}
