//! The frame list, shown when the input (or pasting) gave several frames. A
//! capture's frames show the line `capture --list` prints (with the time
//! relative to the first frame when `t` says so), the response's latency,
//! and error summaries in red; other frames their source, offset and label.
//! A capture's connections opened and closed are lines among its frames, as
//! in `capture --list`.

use super::app::{App, FrameView, ListLine};
use crate::render::listing::LineWriter;
use crate::render::text_tree::label;
use crate::text::escape::sanitize;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// `#2  paste 1 +0x0000  DeleteShareGroupStateRequest message v0  41 B`; for
/// live traffic `#5  20:09:43.653124Z conn 0 ←  MetadataResponse message v12  80 B`.
pub(crate) fn frame_title(index: usize, fv: &FrameView) -> String {
    let f = &fv.frame;
    match fv.located {
        true => format!(
            "#{}  {} +0x{:04x}  {}  {} B",
            index + 1,
            fv.source,
            f.input_offset,
            label(&f.root),
            f.bytes.len()
        ),
        false => format!(
            "#{}  {}  {}  {} B",
            index + 1,
            fv.source,
            label(&f.root),
            f.bytes.len()
        ),
    }
}

pub(crate) struct FramesView<'a, 'c> {
    pub app: &'a App<'c>,
    pub focused: bool,
}

impl Widget for FramesView<'_, '_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = app.theme;
        let mut lines = LineWriter::new(app.catalogue()).without_addresses();
        if app.capture.as_ref().is_some_and(|c| c.relative_time) {
            lines.relative_to = app
                .frames
                .get(0)
                .and_then(|s| s.row.as_ref())
                .map(|r| r.frame.timestamp);
        }
        let mut text = Vec::with_capacity(160);
        for (y, &l) in app
            .lines
            .iter()
            .skip(app.frames_top)
            .take(area.height as usize)
            .enumerate()
        {
            let i = match l {
                ListLine::Frame(i) => i,
                // A connection's open or close, dimmed: the frames are what is read.
                // A connection's addresses, said once before its first line.
                ListLine::ConnName { frame, at } => {
                    let Some((conn, client, broker)) = app.conn_name(frame, at) else {
                        continue;
                    };
                    let name = crate::render::listing::conn_name(conn, client, broker);
                    let line = Span::styled(sanitize(&name), theme.dim());
                    buf.set_line(area.x, area.y + y as u16, &Line::from(line), area.width);
                    continue;
                }
                ListLine::Conn(k) => {
                    let Some(r) = app.conn_rows.get(k) else {
                        continue;
                    };
                    text.clear();
                    lines.push_conn_event(&mut text, &r.event);
                    let line = Span::styled(sanitize(&String::from_utf8_lossy(&text)), theme.dim());
                    buf.set_line(area.x, area.y + y as u16, &Line::from(line), area.width);
                    continue;
                }
            };
            let slot = &app.frames[i];
            let spans = match (&slot.row, &slot.view) {
                (Some(row), _) => {
                    let Some(f) = app.listed(row) else { continue };
                    text.clear();
                    match f.kind.sasl_mechanism() {
                        Some(m) => lines.push_token(&mut text, &f, m),
                        None => lines.push_head(&mut text, &f, &row.entry),
                    }
                    let mut spans = vec![Span::raw(sanitize(&String::from_utf8_lossy(&text)))];
                    if row.frame.kind.sasl_mechanism().is_none() {
                        if let Some(us) = row.latency_us {
                            text.clear();
                            crate::render::listing::push_latency(&mut text, us);
                            let latency = String::from_utf8_lossy(&text).into_owned();
                            spans.push(Span::styled(latency, theme.dim()));
                        }
                        text.clear();
                        lines.push_summary(&mut text, &row.entry.summary);
                        let summary = sanitize(&String::from_utf8_lossy(&text));
                        spans.push(if row.entry.has_error() {
                            Span::styled(summary, theme.error_text())
                        } else {
                            Span::raw(summary)
                        });
                    }
                    spans
                }
                (None, Some(fv)) => {
                    let mut spans = vec![Span::raw(frame_title(i, fv))];
                    if let Some(e) = &fv.frame.error {
                        spans.push(Span::styled(
                            format!("  ✗ error at 0x{:04x}", e.offset),
                            theme.error_text(),
                        ));
                    }
                    spans
                }
                (None, None) => continue,
            };
            let mut line = Line::from(spans);
            let y = area.y + y as u16;
            if i == app.current {
                line = line.patch_style(theme.selected_line(self.focused));
                buf.set_style(
                    Rect::new(area.x, y, area.width, 1),
                    theme.selected_line(self.focused),
                );
            }
            buf.set_line(area.x, y, &line, area.width);
        }
    }
}
