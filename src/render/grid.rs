//! The byte layout grid: 16 bytes per row with offsets, hex and ASCII, each byte
//! coloured by its region; plain text (with a region map) when colour is off.

use crate::decode::regions::{byte_regions, region_runs};
use crate::decode::{Frame, Node, Region};

pub const ROW: usize = 16;

/// ANSI 256-colour background for each region (foreground stays black).
pub fn ansi_bg(r: Region) -> u8 {
    match r {
        Region::Frame => 250,
        Region::RpcHeader => 117,
        Region::RequestBody => 150,
        Region::ResponseBody => 158,
        Region::RecordBatch => 215,
        Region::Record => 229,
        Region::TaggedFields => 219,
    }
}

/// The region's colour as CSS `#rrggbb`: the same xterm-256 colour as the terminal grid.
pub fn css_color(r: Region) -> String {
    let [red, green, blue] = xterm_rgb(ansi_bg(r));
    format!("#{red:02x}{green:02x}{blue:02x}")
}

/// RGB of an xterm-256 colour index (16 system colours approximated by the cube).
fn xterm_rgb(i: u8) -> [u8; 3] {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match i {
        232..=255 => [8 + 10 * (i - 232); 3],
        16..=231 => {
            let c = i - 16;
            [
                LEVELS[(c / 36) as usize],
                LEVELS[(c / 6 % 6) as usize],
                LEVELS[(c % 6) as usize],
            ]
        }
        _ => [192; 3],
    }
}

fn paint(s: &str, r: Option<Region>, color: bool) -> String {
    match (r, color) {
        (Some(r), true) => format!("\x1b[38;5;16;48;5;{}m{s}\x1b[0m", ansi_bg(r)),
        _ => s.to_string(),
    }
}

fn printable(b: u8) -> char {
    if (0x20..0x7f).contains(&b) {
        b as char
    } else {
        '.'
    }
}

/// The grid's title, as on the seed pages.
pub fn layout_title(len: usize) -> String {
    format!("byte layout ({len} bytes, {ROW} bytes per row)")
}

pub fn render_grid(frame: &Frame, color: bool) -> String {
    render_layout(&frame.bytes, &frame.root, color)
}

/// The grid of any bytes whose tree is `root` (a frame, a record, a header).
pub fn render_layout(bytes: &[u8], root: &Node, color: bool) -> String {
    let regions = byte_regions(root, bytes.len());
    let mut out = layout_title(bytes.len());
    out.push('\n');
    out.push_str("      ");
    for c in 0..ROW {
        out.push_str(&format!(" {c:X} "));
        if c == 7 {
            out.push(' ');
        }
    }
    out.push('\n');
    for (row, chunk) in bytes.chunks(ROW).enumerate() {
        let base = row * ROW;
        out.push_str(&format!("{base:04x}  "));
        for (i, b) in chunk.iter().enumerate() {
            out.push_str(&paint(&format!("{b:02x}"), regions[base + i], color));
            out.push(' ');
            if i == 7 {
                out.push(' ');
            }
        }
        for i in chunk.len()..ROW {
            out.push_str("   ");
            if i == 7 {
                out.push(' ');
            }
        }
        out.push(' ');
        for (i, b) in chunk.iter().enumerate() {
            out.push_str(&paint(&printable(*b).to_string(), regions[base + i], color));
        }
        out.push('\n');
    }
    out.push_str("legend: ");
    let legend: Vec<String> = Region::ALL
        .iter()
        .map(|r| paint(&format!(" {} ", r.label()), Some(*r), color))
        .collect();
    out.push_str(&legend.join(" "));
    out.push('\n');
    if !color {
        for (r, s, e) in region_runs(&regions) {
            let name = r.map_or("(undecoded)", |r| r.label());
            out.push_str(&format!(
                "  0x{s:04x}-0x{:04x} {name} ({}B)\n",
                e - 1,
                e - s
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn css_colours_match_the_terminal_palette() {
        assert_eq!(css_color(Region::Frame), "#bcbcbc");
        assert_eq!(css_color(Region::RpcHeader), "#87d7ff");
    }
}
