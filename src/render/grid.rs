//! The byte layout grid: 16 bytes per row with offsets, hex and ASCII, each byte
//! coloured by its region; plain text (with a region map) when colour is off.

use crate::budget::Budget;
use crate::decode::fields::for_each_element;
use crate::decode::records::deferred::{for_each_piece, join_found, Found, Hold, Piece};
use crate::decode::regions::{byte_regions, paint_regions, region_runs};
use crate::decode::tree::Deferred;
use crate::decode::{DeferredRecords, Frame, Node, Region};
use crate::schema::Catalogue;
use crate::text::digits::{hex_pair, push_hex4, push_uint};
use std::io::{self, Write};

pub(crate) const ROW: usize = 16;

/// ANSI 256-colour background for each region (foreground stays black).
pub(crate) fn ansi_bg(r: Region) -> u8 {
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
pub(crate) fn css_color(r: Region) -> String {
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
pub(crate) fn render_layout(bytes: &[u8], root: &Node, color: bool) -> String {
    let mut out = Vec::new();
    // Writing into memory does not fail.
    let _ = write_layout(&mut out, bytes, &byte_regions(root, bytes.len()), color);
    String::from_utf8(out).unwrap_or_default()
}

/// A frame's grid written as it is drawn: its deferred records fields
/// ([`crate::decode::DecodeOptions::defer_records_over`]) walked a batch at
/// a time to paint their regions (a plain topic's records from their
/// slots' lines, with no node; other batches' nodes dropped after), rows
/// written in large writes. What it holds is the frame and a byte of region
/// a byte, not the frame's whole tree and grid (a 22 MB Fetch response of
/// 400,000 records: its grid's 100 MB of text and 1.1 GB of tree). What the
/// walks find joins the frame's warnings and record damage.
pub fn write_grid_drawing(
    w: &mut impl Write,
    frame: &mut Frame,
    color: bool,
    walking: (&Catalogue, &Budget),
) -> io::Result<()> {
    let regions = paint_drawing(frame, walking, Hold::ByItem);
    write_layout(w, &frame.bytes, &regions, color)
}

/// [`write_grid_drawing`] for a small frame, what its records decompress
/// held as [`push_grid_drawing`] holds it, the rows written as they are.
pub(crate) fn write_grid_held(
    w: &mut impl Write,
    frame: &mut Frame,
    color: bool,
    (cat, budget): (&Catalogue, &Budget),
) -> io::Result<()> {
    let before = budget.expanded();
    let regions = paint_drawing(frame, (cat, budget), Hold::ByFrame);
    frame.held.join(crate::budget::Held::since(budget, before));
    write_layout(w, &frame.bytes, &regions, color)
}

/// [`write_grid_drawing`] appended to a byte buffer, for a frame small
/// enough to hold whole (drawn on a worker): what its records decompress is
/// held against `budget` until the frame is dropped, as its whole decode
/// would hold it, so that the same batches are decoded (or over budget) as
/// in its other views.
pub(crate) fn push_grid_drawing(
    out: &mut Vec<u8>,
    frame: &mut Frame,
    color: bool,
    (cat, budget): (&Catalogue, &Budget),
) {
    let before = budget.expanded();
    let regions = paint_drawing(frame, (cat, budget), Hold::ByFrame);
    frame.held.join(crate::budget::Held::since(budget, before));
    // Writing into memory does not fail.
    let _ = write_layout(out, &frame.bytes, &regions, color);
}

/// The region of each of `frame`'s bytes, its deferred records fields
/// walked to paint theirs (what they decompress held as `hold` says), and
/// its left arrays' elements (and the records fields within them); what
/// the walks find joins the frame's warnings and record damage.
fn paint_drawing(
    frame: &mut Frame,
    (cat, budget): (&Catalogue, &Budget),
    hold: Hold,
) -> Vec<Option<Region>> {
    let mut regions = vec![None; frame.bytes.len()];
    let mut painter = Painter {
        cat,
        bytes: frame.bytes.clone(),
        held: (budget, hold),
        found: Vec::new(),
    };
    paint_regions(&frame.root, false, &mut regions, &mut |n, inside, out| {
        painter.paint_left(n, inside, out)
    });
    join_found(frame, painter.found);
    regions
}

/// What paints the parts of a frame its decode left for drawing, and what
/// walking its records fields found.
struct Painter<'p> {
    cat: &'p Catalogue,
    bytes: bytes::Bytes,
    held: (&'p Budget, Hold),
    found: Vec<(DeferredRecords, Found)>,
}

impl Painter<'_> {
    /// What node `n` left unwalked, walked and painted into `out`: an
    /// array's elements (with what they leave in turn), or a records
    /// field's batches.
    fn paint_left(&mut self, n: &Node, inside: bool, out: &mut [Option<Region>]) {
        let (cat, bytes) = (self.cat, self.bytes.clone());
        match n.deferred() {
            Some(Deferred::Elements(d)) => {
                let painted = for_each_element(cat, &bytes, d, |nodes, _| {
                    for e in nodes.iter() {
                        paint_regions(e, inside, out, &mut |n, inside, out| {
                            self.paint_left(n, inside, out)
                        });
                    }
                    Ok::<(), std::convert::Infallible>(())
                });
                let Ok(()) = painted;
            }
            Some(Deferred::Records(d)) => {
                let walked = for_each_piece(cat, &bytes, d, self.held, |piece| {
                    match piece {
                        Piece::Nodes { nodes, .. } => paint_nodes(nodes, inside, out),
                        Piece::RecordNodes { nodes, inner, .. } => {
                            paint_nodes(nodes, inside || inner, out)
                        }
                        // A line read from a batch's slots paints as its node would.
                        Piece::Line { line, .. } => {
                            let end = (line.at + line.len).min(out.len());
                            if !(inside || line.inner) && line.at < end {
                                out[line.at..end].fill(Some(line.region));
                            }
                        }
                    }
                    Ok::<(), std::convert::Infallible>(())
                });
                let Ok(f) = walked;
                self.found.push((d.clone(), f));
            }
            None => {}
        }
    }
}

/// `nodes` and their subtrees painted into `out`.
fn paint_nodes(nodes: &[Node], inside: bool, out: &mut [Option<Region>]) {
    for n in nodes {
        paint_regions(n, inside, out, &mut |_, _, _| {});
    }
}

/// [`paint_nodes`] for an array's elements, whose arrays may leave theirs
/// for drawing too (the explorer's: they hold no records).
pub(crate) fn paint_nodes_walking(
    nodes: &[Node],
    inside: bool,
    out: &mut [Option<Region>],
    (cat, bytes): (&Catalogue, &bytes::Bytes),
) {
    for n in nodes {
        paint_regions(n, inside, out, &mut |n, inside, out| {
            paint_left_elements(n, inside, out, (cat, bytes))
        });
    }
}

/// The elements `n`'s array left for drawing, each walked and painted
/// into `out` (the arrays within them too); nothing for another node.
fn paint_left_elements(
    n: &Node,
    inside: bool,
    out: &mut [Option<Region>],
    (cat, bytes): (&Catalogue, &bytes::Bytes),
) {
    let Some(d) = n.deferred_elements() else {
        return;
    };
    let painted = for_each_element(cat, bytes, d, |nodes, _| {
        paint_nodes_walking(nodes, inside, out, (cat, bytes));
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(()) = painted;
}

/// What the grid holds before it is written out.
const SPILL: usize = 64 << 10;

/// The grid of `bytes` painted by `regions`: its title, a row of 16 bytes
/// at a time (offset, hex, text), the legend, and without colour the
/// regions' byte ranges. Each byte is pushed, not formatted: formatting
/// each byte's hex and text into strings of their own was 80% of the
/// instructions of `kwire capture --format grid` (BENCHMARKS.md, "the
/// grid from the tape, and its rows").
pub(crate) fn write_layout(
    w: &mut impl Write,
    bytes: &[u8],
    regions: &[Option<Region>],
    color: bool,
) -> io::Result<()> {
    let mut out = Vec::with_capacity(SPILL + 1024);
    out.extend_from_slice(layout_title(bytes.len()).as_bytes());
    out.extend_from_slice(b"\n      ");
    for (c, digit) in HEX_DIGITS.iter().enumerate() {
        out.extend_from_slice(&[b' ', *digit, b' ']);
        if c == 7 {
            out.push(b' ');
        }
    }
    out.push(b'\n');
    for (row, chunk) in bytes.chunks(ROW).enumerate() {
        let base = row * ROW;
        push_hex4(&mut out, base);
        out.extend_from_slice(b"  ");
        for (i, b) in chunk.iter().enumerate() {
            push_painted(&mut out, &hex_pair(*b), regions[base + i], color);
            out.push(b' ');
            if i == 7 {
                out.push(b' ');
            }
        }
        for i in chunk.len()..ROW {
            out.extend_from_slice(b"   ");
            if i == 7 {
                out.push(b' ');
            }
        }
        out.push(b' ');
        for (i, b) in chunk.iter().enumerate() {
            push_painted(&mut out, &[printable(*b) as u8], regions[base + i], color);
        }
        out.push(b'\n');
        if out.len() >= SPILL {
            w.write_all(&out)?;
            out.clear();
        }
    }
    out.extend_from_slice(b"legend: ");
    // Only the regions the bytes are in, as the pages' legends name them.
    let used = regions
        .iter()
        .flatten()
        .fold(0u32, |m, r| m | 1 << (*r as u32));
    let shown = Region::ALL.iter().filter(|r| used & 1 << (**r as u32) != 0);
    for (i, r) in shown.enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        push_painted(
            &mut out,
            format!(" {} ", r.label()).as_bytes(),
            Some(*r),
            color,
        );
    }
    out.push(b'\n');
    if !color {
        for (r, s, e) in region_runs(regions) {
            let name = r.map_or("(undecoded)", |r| r.label());
            let run = format!("  0x{s:04x}-0x{:04x} {name} ({}B)\n", e - 1, e - s);
            out.extend_from_slice(run.as_bytes());
        }
    }
    w.write_all(&out)
}

/// The columns' heads: a row's 16 bytes.
const HEX_DIGITS: &[u8; ROW] = b"0123456789ABCDEF";

/// `text` on its region's background (black on it), when colour is on.
#[inline]
fn push_painted(out: &mut Vec<u8>, text: &[u8], r: Option<Region>, color: bool) {
    match (r, color) {
        (Some(r), true) => {
            out.extend_from_slice(b"\x1b[38;5;16;48;5;");
            push_uint(out, u64::from(ansi_bg(r)), 0);
            out.push(b'm');
            out.extend_from_slice(text);
            out.extend_from_slice(b"\x1b[0m");
        }
        _ => out.extend_from_slice(text),
    }
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
