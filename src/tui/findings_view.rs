//! `!`: what went wrong in the capture, as `kwire check` groups it: one line
//! per group (severity, rule, API, client, how many), the selected group's
//! message and frames under the list; Enter goes to the group's next frame.

use super::theme::Theme;
use crate::analysis::diagnosis::frame_ranges;
use crate::analysis::finding_groups::Group;
use crate::schema::Catalogue;
use crate::text::escape::sanitize;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget, Wrap};

/// The groups, the selection, and per group the frame Enter went to last.
#[derive(Clone, Debug, Default)]
pub struct FindingsList {
    pub groups: Vec<Group>,
    pub lines: Vec<String>,
    pub selected: usize,
    pub top: usize,
    /// Per group, how many of its frames Enter has visited.
    pub visited: Vec<usize>,
    /// The capture is still being read: more may come.
    pub partial: bool,
}

/// Two lists are the same when they show the same lines the same way (the
/// groups behind equal lines hold the same findings).
impl PartialEq for FindingsList {
    fn eq(&self, other: &Self) -> bool {
        (
            &self.lines,
            self.selected,
            self.top,
            &self.visited,
            self.partial,
        ) == (
            &other.lines,
            other.selected,
            other.top,
            &other.visited,
            other.partial,
        )
    }
}

impl Eq for FindingsList {}

impl FindingsList {
    pub fn new(cat: &Catalogue, groups: Vec<Group>, partial: bool) -> FindingsList {
        let lines = groups.iter().map(|g| line(cat, g)).collect();
        let visited = vec![0; groups.len()];
        FindingsList {
            groups,
            lines,
            selected: 0,
            top: 0,
            visited,
            partial,
        }
    }

    /// The next frame of the selected group (cycling through them).
    pub(crate) fn next_frame(&mut self) -> Option<usize> {
        let g = self.groups.get(self.selected)?;
        let frames: Vec<usize> = g.frames.iter().copied().collect();
        if frames.is_empty() {
            return None;
        }
        let k = self.visited.get_mut(self.selected)?;
        let n = frames[*k % frames.len()];
        *k += 1;
        Some(n)
    }
}

/// One group as a line of the list.
fn line(cat: &Catalogue, g: &Group) -> String {
    let api = match (g.api_key, g.api_version) {
        (Some(k), v) => {
            let name = cat
                .api_name(k)
                .map_or_else(|| format!("api {k}"), str::to_string);
            v.map_or(name.clone(), |v| format!("{name} v{v}"))
        }
        _ => "-".into(),
    };
    let client = g
        .client_id
        .as_ref()
        .map_or_else(String::new, |c| format!(" {c:?}"));
    sanitize(&format!(
        "{:<7} {:<26} {:<20} {:>5}×{client}",
        g.severity().as_str(),
        g.rule.id(),
        api,
        g.findings
    ))
}

pub(crate) struct FindingsOverlay<'a> {
    pub list: &'a FindingsList,
    pub theme: Theme,
}

impl Widget for FindingsOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let r = super::layout::overlay(area, buf);
        // The list above, the selected group's words below it.
        let detail_rows = 8u16.min(r.height / 2);
        let list_area = Rect::new(r.x, r.y, r.width, r.height.saturating_sub(detail_rows));
        let detail_area = Rect::new(r.x, r.y + list_area.height, r.width, detail_rows);
        let rows = usize::from(list_area.height.saturating_sub(2));
        let mut lines = Vec::new();
        if self.list.groups.is_empty() {
            lines.push(Line::from(if self.list.partial {
                "nothing found so far (the capture is still being read)"
            } else {
                "nothing found: no frame breaks the protocol and no conversation rule fired"
            }));
        }
        for (i, text) in self
            .list
            .lines
            .iter()
            .enumerate()
            .skip(self.list.top)
            .take(rows)
        {
            let style = match self.list.groups[i].severity() {
                crate::analysis::finding::Severity::Error => self.theme.error(),
                _ => self.theme.label(),
            };
            let line = Line::from(Span::styled(text.clone(), style));
            lines.push(self.theme.mark_selected(line, i == self.list.selected));
        }
        let title = format!(
            " findings ({}{}) · Enter goes to the next frame of one · Esc closes ",
            self.list.groups.len(),
            if self.list.partial { ", so far" } else { "" }
        );
        Paragraph::new(lines)
            .block(Block::new().borders(Borders::ALL).title(title))
            .render(list_area, buf);
        let detail: Vec<Line> = match self.list.groups.get(self.list.selected) {
            Some(g) => {
                let frames: Vec<usize> = g.frames.iter().copied().collect();
                let mut parts = vec![
                    sanitize(&g.message),
                    format!("frames {}", frame_ranges(&frames, 8)),
                ];
                parts.extend(g.rule.meaning().map(str::to_string));
                parts.into_iter().map(Line::from).collect()
            }
            None => Vec::new(),
        };
        Paragraph::new(detail)
            .wrap(Wrap { trim: true })
            .block(Block::new().borders(Borders::LEFT | Borders::RIGHT | Borders::BOTTOM))
            .render(detail_area, buf);
    }
}
