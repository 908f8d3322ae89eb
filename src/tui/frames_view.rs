//! The frame list, shown when the input (or pasting) gave several frames.

use super::app::FrameView;
use super::theme::Theme;
use crate::render::text_tree::label;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// `#2  paste 1 +0x0000  DeleteShareGroupStateRequest message v0  41 B`; for
/// live traffic `#5  20:09:43.653124Z conn 0 ←  MetadataResponse message v12  80 B`.
pub fn frame_title(index: usize, fv: &FrameView) -> String {
    let f = &fv.frame;
    match fv.located {
        true => format!("#{}  {} +0x{:04x}  {}  {} B", index + 1, fv.source, f.input_offset, label(&f.root), f.bytes.len()),
        false => format!("#{}  {}  {}  {} B", index + 1, fv.source, label(&f.root), f.bytes.len()),
    }
}

pub struct FramesView<'a> {
    pub frames: &'a [FrameView],
    pub current: usize,
    pub top: usize,
    pub focused: bool,
    pub theme: Theme,
}

impl Widget for FramesView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        for (y, i) in (self.top..self.frames.len()).take(area.height as usize).enumerate() {
            let fv = &self.frames[i];
            let frame = &fv.frame;
            let mut spans = vec![Span::raw(frame_title(i, fv))];
            if let Some(e) = &frame.error {
                spans.push(Span::styled(format!("  ✗ error at 0x{:04x}", e.offset), self.theme.error_text()));
            }
            let mut line = Line::from(spans);
            let y = area.y + y as u16;
            if i == self.current {
                line = line.patch_style(self.theme.selected_line(self.focused));
                buf.set_style(Rect::new(area.x, y, area.width, 1), self.theme.selected_line(self.focused));
            }
            buf.set_line(area.x, y, &line, area.width);
        }
    }
}
