//! The hex grid widget: offset column, 16 bytes per row as hex and ASCII.
//!
//! It knows nothing of the tree: callers pass highlight layers (region
//! colours, search hits, errors, the selection, the cursor), applied in order.

use super::theme::Theme;
use crate::decode::Region;
use crate::render::grid::ROW;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;
use std::ops::Range;

pub enum Layer<'a> {
    /// Each byte styled by its region (one entry per byte of the frame).
    Regions(&'a [Option<Region>]),
    /// One style patched over byte ranges.
    Ranges(Vec<Range<usize>>, Style),
}

/// Column positions of a grid over `len` bytes; shared by drawing and mouse hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridGeometry {
    pub offset_width: u16,
}

impl GridGeometry {
    pub fn new(len: usize) -> GridGeometry {
        let digits = format!("{:x}", len.saturating_sub(1)).len().max(4);
        GridGeometry {
            offset_width: digits as u16,
        }
    }

    /// Column of byte `i` (0..16) of a row in the hex part: `xx ` each, one more space after 8.
    pub fn hex_x(&self, i: usize) -> u16 {
        self.offset_width + 2 + 3 * i as u16 + u16::from(i >= ROW / 2)
    }

    pub fn ascii_x(&self, i: usize) -> u16 {
        self.hex_x(ROW - 1) + 4 + i as u16
    }

    pub fn width(&self) -> u16 {
        self.ascii_x(ROW)
    }

    /// The byte column (0..16) under column `x`, in the hex or the ASCII part.
    pub(crate) fn column_at(&self, x: u16) -> Option<usize> {
        if let Some(i) = (0..ROW).find(|&i| x >= self.hex_x(i) && x < self.hex_x(i) + 2) {
            return Some(i);
        }
        (self.ascii_x(0)..self.ascii_x(ROW))
            .contains(&x)
            .then(|| (x - self.ascii_x(0)) as usize)
    }
}

pub(crate) fn row_count(len: usize) -> usize {
    len.div_ceil(ROW)
}

pub struct HexGrid<'a> {
    pub bytes: &'a [u8],
    /// First row on screen.
    pub top_row: usize,
    pub layers: &'a [Layer<'a>],
    pub theme: Theme,
}

impl HexGrid<'_> {
    fn style_of(&self, i: usize) -> Style {
        let mut s = Style::new();
        for layer in self.layers {
            match layer {
                Layer::Regions(regions) => {
                    if let Some(Some(r)) = regions.get(i) {
                        s = s.patch(self.theme.region(*r));
                    }
                }
                Layer::Ranges(ranges, style) => {
                    if ranges.iter().any(|r| r.contains(&i)) {
                        s = s.patch(*style);
                    }
                }
            }
        }
        s
    }
}

impl Widget for HexGrid<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let geo = GridGeometry::new(self.bytes.len());
        let rows = row_count(self.bytes.len());
        for (y, row) in (self.top_row..rows).take(area.height as usize).enumerate() {
            let y = area.y + y as u16;
            let base = row * ROW;
            let put = |buf: &mut Buffer, x: u16, text: &str, style: Style| {
                if x < area.width {
                    buf.set_stringn(area.x + x, y, text, (area.width - x) as usize, style);
                }
            };
            put(
                buf,
                0,
                &format!("{base:0w$x}", w = geo.offset_width as usize),
                Style::new(),
            );
            for (i, b) in self.bytes[base..(base + ROW).min(self.bytes.len())]
                .iter()
                .enumerate()
            {
                let style = self.style_of(base + i);
                put(buf, geo.hex_x(i), &format!("{b:02x}"), style);
                put(buf, geo.ascii_x(i), &printable(*b).to_string(), style);
            }
        }
    }
}

fn printable(b: u8) -> char {
    if (0x20..0x7f).contains(&b) {
        b as char
    } else {
        '.'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_match_the_text_grid() {
        let g = GridGeometry::new(78);
        assert_eq!(g.hex_x(0), 6);
        assert_eq!(g.hex_x(7), 27);
        assert_eq!(g.hex_x(8), 31);
        assert_eq!(g.ascii_x(0), 56);
        assert_eq!(g.width(), 72);
        assert_eq!(g.column_at(6), Some(0));
        assert_eq!(g.column_at(8), None, "the gap between bytes");
        assert_eq!(g.column_at(32), Some(8));
        assert_eq!(g.column_at(57), Some(1));
        assert_eq!(GridGeometry::new(0x1_0001).offset_width, 5);
    }
}
