//! Decoded frames written in the format asked for (tree, grid, JSON,
//! tree-json), with `--explain`: what `decode`, `capture`, `example` and
//! `send` print.

use crate::budget::Budget;
use crate::decode::frame::decode_frames_then;
use crate::decode::frame::DRAWN_IN_TURN_OVER;
use crate::decode::records::deferred::Hold;
use crate::decode::{DecodeOptions, Frame};
use crate::input::framing::{as_framed, Framing};
use crate::input::{to_bytes, InputKind};
use crate::render::{grid, json, text_tree, tree_json};
use crate::schema::Catalogue;
use crate::teach::explain::{render_explained, write_explained_drawing, write_explained_held};
use std::io::Write;

/// The frames of an input's bytes (`decode`, `check` and `tui` on a file):
/// hex text or binary as `kind` says, delimited as `framing` says, decoded
/// under `opts`, each handed to `then` once decoded. What is worth saying (a size prefix added, bytes after a
/// frame whose size cannot be trusted) goes to `say`; an error is why the
/// bytes are no frames at all.
pub fn decode_input(
    cat: &Catalogue,
    raw: Vec<u8>,
    (kind, framing): (InputKind, Framing),
    (opts, then): (&DecodeOptions, &mut dyn FnMut(&mut Frame)),
    say: &mut dyn FnMut(&str),
) -> Result<Vec<Frame>, String> {
    let bytes = to_bytes(raw, kind)?;
    let bytes = as_framed(cat, bytes, framing, opts, say)?;
    let frames = decode_frames_then(cat, &bytes, opts, then);
    // Decoding stops at a frame whose size cannot be trusted: what follows is
    // said, not dropped (that frame's error already makes the status 2).
    let end = frames.last().map_or(0, |f| f.input_offset + f.bytes.len());
    if end < bytes.len() {
        say(&format!("{} bytes after input offset {end} were not decoded: the frame before them has no size to trust", bytes.len() - end));
    }
    Ok(frames)
}

/// How decoded frames are shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The object tree, as on the seed pages.
    #[default]
    Tree,
    /// The byte layout: 16 bytes per row, coloured by region.
    Grid,
    /// Values only, keyed by schema field names (the JSON contract).
    Json,
    /// Every node with offset, length, value, note and region.
    TreeJson,
}

/// What the output is shown on: colours, and the columns a line may take
/// (`None`: lines are never cut). The command line decides them from the
/// terminal, `--color` and `--wide`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
    pub columns: Option<usize>,
}

impl Style {
    /// A text tree's options in this style.
    pub fn tree(self, full_docs: bool) -> text_tree::TreeOptions {
        text_tree::TreeOptions {
            full_docs,
            color: self.color,
            // Whole descriptions are asked for whole lines.
            width: self.columns.filter(|_| !full_docs),
        }
    }

    /// A line cut to the columns, when they are set.
    pub fn fit(self, line: String) -> String {
        match self.columns {
            Some(columns) => crate::text::width::fit(&line, columns),
            None => line,
        }
    }

    /// Rows (each ending in a newline) cut to the columns, when they are set.
    pub(crate) fn fit_rows(self, rows: &mut Vec<u8>) {
        if let Some(columns) = self.columns {
            crate::text::width::fit_each_line(rows, 0, columns);
        }
    }
}

/// `--explain`: explain every node, with this catalogue and release.
pub type Explain<'c> = Option<(&'c Catalogue, Option<&'c str>)>;

/// Frames decoded whole, one after another; with `--explain`, a tree's nodes
/// each explained.
pub fn write_frames(
    out: &mut impl Write,
    frames: &[Frame],
    format: Format,
    (style, full_docs): (Style, bool),
    explain: Explain,
) -> std::io::Result<()> {
    let many = frames.len() > 1;
    for (i, f) in frames.iter().enumerate() {
        match format {
            Format::Json => {
                let mut line = Vec::with_capacity(f.bytes.len() * 2 + 256);
                json::write_contract(f, &mut line);
                line.push(b'\n');
                out.write_all(&line)?;
            }
            Format::TreeJson => tree_json::write_frame_tree_json(out, f)?,
            Format::Tree | Format::Grid => {
                heading(out, (i, many), f)?;
                let opts = style.tree(full_docs);
                if let Some((cat, release)) = explain {
                    write!(out, "{}", render_explained(cat, release, f, opts))?;
                } else if format == Format::Tree {
                    text_tree::write_frame(out, f, opts)?;
                } else {
                    write!(out, "{}", grid::render_grid(f, style.color))?;
                }
            }
        }
    }
    out.flush()
}

/// Frames whose decode left large records fields for drawing
/// (`DecodeOptions::defer_records_over`), each field walked a batch at a
/// time as it is drawn (a tree's lines, explained with `explain`, a tree
/// JSON's nodes, a grid's regions); what the walks find joins each frame's warnings and record
/// damage. The JSON contract holds no records' nodes: it is written whole.
pub fn write_frames_drawing(
    out: &mut impl Write,
    frames: &mut [Frame],
    format: Format,
    (style, full_docs, explain): (Style, bool, Explain),
    drawing: (&Catalogue, &Budget),
) -> std::io::Result<()> {
    let many = frames.len() > 1;
    for (i, f) in frames.iter_mut().enumerate() {
        if f.bytes.len() <= DRAWN_IN_TURN_OVER && format != Format::Json {
            // What its records decompress held as its whole tree holds it
            // (the same batches decoded, or over budget, as in its other views).
            if format != Format::TreeJson {
                heading(out, (i, many), f)?;
            }
            draw_held(out, f, format, (style, full_docs, explain), drawing)?;
            continue;
        }
        match format {
            Format::TreeJson => tree_json::write_frame_tree_json_drawing(out, f, drawing)?,
            Format::Json => write_frames(
                out,
                std::slice::from_ref(f),
                format,
                (style, full_docs),
                None,
            )?,
            Format::Tree => {
                heading(out, (i, many), f)?;
                let tree = style.tree(full_docs);
                match explain {
                    Some(with) => write_explained_drawing(out, with, f, tree, drawing.1)?,
                    None => text_tree::write_frame_drawing(out, f, tree, drawing)?,
                }
            }
            Format::Grid => {
                heading(out, (i, many), f)?;
                grid::write_grid_drawing(out, f, style.color, drawing)?;
            }
        }
    }
    out.flush()
}

/// A small frame drawn into `buf` as `format` says, what its records fields
/// decompress held against the budget until the frame is dropped.
fn draw_held(
    out: &mut impl Write,
    f: &mut Frame,
    format: Format,
    (style, full_docs, explain): (Style, bool, Explain),
    (cat, budget): (&Catalogue, &Budget),
) -> std::io::Result<()> {
    match format {
        Format::TreeJson => tree_json::write_frame_tree_json_held(out, f, (cat, budget)),
        Format::Tree => {
            let tree = style.tree(full_docs);
            match explain {
                Some(with) => write_explained_held(out, with, f, tree, (budget, Hold::ByFrame)),
                None => text_tree::write_frame_held(out, f, tree, (cat, budget)),
            }
        }
        Format::Grid => grid::write_grid_held(out, f, style.color, (cat, budget)),
        Format::Json => Ok(()),
    }
}

/// Before each of many frames' trees: a blank line between them, and where
/// the frame is in the input.
fn heading(out: &mut impl Write, (i, many): (usize, bool), f: &Frame) -> std::io::Result<()> {
    if !many {
        return Ok(());
    }
    if i > 0 {
        writeln!(out)?;
    }
    writeln!(
        out,
        "# frame {} at input offset 0x{:04x}",
        i + 1,
        f.input_offset
    )
}
