//! The explorer's keys: one table ([`KEYS`]) that key handling reads
//! ([`command_for`]), the `?` overlay draws and the README mirrors.

use super::theme::Theme;
use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

/// What a key does wherever the focus is (the panes' own keys, moving and
/// expanding, are theirs: [`Binding::commands`] is empty for them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Quit,
    Help,
    NextPane,
    PreviousPane,
    Search,
    NextMatch,
    PreviousMatch,
    JumpToOffset,
    DecodeAs,
    PreviousFrame,
    NextFrame,
    Pair,
    NextInConnection,
    PreviousInConnection,
    Filter,
    ToggleTime,
    Export,
    Records,
    CaptureRecords,
    Findings,
    ClearSearch,
    TogglePlumbing,
    ExpandAll,
    CollapseAll,
    Zoom,
    ScrollLeft,
    ScrollRight,
    GrowList,
    ShrinkList,
    Sort,
}

/// One line of the help: the keys as shown, what each does, and the words.
pub struct Binding {
    pub keys: &'static str,
    pub commands: &'static [(KeyCode, Command)],
    pub what: &'static str,
}

const fn pane_keys(keys: &'static str, what: &'static str) -> Binding {
    Binding {
        keys,
        commands: &[],
        what,
    }
}

/// Every key: the explorer's key handling looks commands up here
/// ([`command_for`]), the help overlay draws it, and the README mirrors it.
pub const KEYS: &[Binding] = &[
    pane_keys(
        "↑ ↓ ← → / h j k l",
        "move: grid byte/row; tree line, ←/→ collapse/expand",
    ),
    pane_keys(
        "PgUp PgDn Home End",
        "page up / down; start / end of the grid row",
    ),
    pane_keys("g G", "first / last byte, line or frame"),
    Binding {
        keys: "Tab Shift-Tab z",
        commands: &[
            (KeyCode::Tab, Command::NextPane),
            (KeyCode::BackTab, Command::PreviousPane),
            (KeyCode::Char('z'), Command::Zoom),
        ],
        what: "next / previous pane; z zooms the pane (again: back)",
    },
    Binding {
        keys: "+ - s",
        commands: &[
            (KeyCode::Char('+'), Command::GrowList),
            (KeyCode::Char('-'), Command::ShrinkList),
            (KeyCode::Char('s'), Command::Sort),
        ],
        what: "frame list taller / shorter (to hidden); s sorts it",
    },
    pane_keys(
        "Enter Space",
        "expand / collapse or open a batch (tree); else next pane",
    ),
    Binding {
        keys: "e c w < >",
        commands: &[
            (KeyCode::Char('e'), Command::ExpandAll),
            (KeyCode::Char('c'), Command::CollapseAll),
            (KeyCode::Char('w'), Command::TogglePlumbing),
            (KeyCode::Char('<'), Command::ScrollLeft),
            (KeyCode::Char('>'), Command::ScrollRight),
        ],
        what: "tree: expand/collapse all, w: no lengths, < > sideways",
    },
    Binding {
        keys: "/",
        commands: &[(KeyCode::Char('/'), Command::Search)],
        what: "search text, hex (`00 55`), decompressed, all frames",
    },
    Binding {
        keys: "n N",
        commands: &[
            (KeyCode::Char('n'), Command::NextMatch),
            (KeyCode::Char('N'), Command::PreviousMatch),
        ],
        what: "next / previous match, on into other frames",
    },
    Binding {
        keys: ":",
        commands: &[(KeyCode::Char(':'), Command::JumpToOffset)],
        what: "jump to an offset: 0x1a or 26",
    },
    Binding {
        keys: "v",
        commands: &[(KeyCode::Char('v'), Command::DecodeAs)],
        what: "decode again: `API VERSION` (response) or `request`",
    },
    Binding {
        keys: "[ ] { }",
        commands: &[
            (KeyCode::Char('['), Command::PreviousFrame),
            (KeyCode::Char(']'), Command::NextFrame),
            (KeyCode::Char('{'), Command::PreviousInConnection),
            (KeyCode::Char('}'), Command::NextInConnection),
        ],
        what: "previous / next frame; { } of the same connection",
    },
    Binding {
        keys: "p",
        commands: &[(KeyCode::Char('p'), Command::Pair)],
        what: "capture: from a request to its response and back",
    },
    Binding {
        keys: "f",
        commands: &[(KeyCode::Char('f'), Command::Filter)],
        what: "capture: filter, e.g. `api == Fetch and latency > 5ms`",
    },
    Binding {
        keys: "t",
        commands: &[(KeyCode::Char('t'), Command::ToggleTime)],
        what: "capture: times as dates or since the first frame",
    },
    Binding {
        keys: "r R",
        commands: &[
            (KeyCode::Char('r'), Command::Records),
            (KeyCode::Char('R'), Command::CaptureRecords),
        ],
        what: "records of the frame / of the frames listed",
    },
    Binding {
        keys: "!",
        commands: &[(KeyCode::Char('!'), Command::Findings)],
        what: "capture: findings (what went wrong); Enter: a frame",
    },
    Binding {
        keys: "x",
        commands: &[(KeyCode::Char('x'), Command::Export)],
        what: "export: `hex F` node, `json F` frame, `pcap F` list",
    },
    pane_keys(
        "paste mouse",
        "hex text opens a new frame; click selects, wheel scrolls",
    ),
    Binding {
        keys: "Esc Ctrl-U",
        commands: &[(KeyCode::Esc, Command::ClearSearch)],
        what: "close a prompt, help, search; Ctrl-U clears a prompt",
    },
    Binding {
        keys: "?",
        commands: &[(KeyCode::Char('?'), Command::Help)],
        what: "this help",
    },
    Binding {
        keys: "q Ctrl-C",
        commands: &[(KeyCode::Char('q'), Command::Quit)],
        what: "quit",
    },
];

/// The command a key runs wherever the focus is, from [`KEYS`].
pub fn command_for(code: KeyCode) -> Option<Command> {
    KEYS.iter()
        .flat_map(|b| b.commands.iter())
        .find(|(k, _)| *k == code)
        .map(|(_, c)| *c)
}

pub struct HelpOverlay {
    pub theme: Theme,
}

impl HelpOverlay {
    pub fn size() -> (u16, u16) {
        let keys = KEYS
            .iter()
            .map(|b| b.keys.chars().count())
            .max()
            .unwrap_or(0);
        let text = KEYS
            .iter()
            .map(|b| b.what.chars().count())
            .max()
            .unwrap_or(0);
        ((keys + 2 + text + 4) as u16, KEYS.len() as u16 + 2)
    }
}

impl Widget for HelpOverlay {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (w, h) = Self::size();
        let w = w.min(area.width);
        let h = h.min(area.height);
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        Clear.render(r, buf);
        let width = KEYS
            .iter()
            .map(|b| b.keys.chars().count())
            .max()
            .unwrap_or(0);
        let lines: Vec<Line> = KEYS
            .iter()
            .map(|b| {
                Line::from(vec![
                    Span::styled(format!("{:<width$}  ", b.keys), self.theme.label()),
                    Span::raw(b.what),
                ])
            })
            .collect();
        let block = Block::new()
            .borders(Borders::ALL)
            .title(" keys · Esc closes ");
        Paragraph::new(lines).block(block).render(r, buf);
    }
}
