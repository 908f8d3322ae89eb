//! Decoded frames written to standard output in the format asked for (tree,
//! grid, JSON, tree-json), with `--explain`; shared by `decode`, `capture`,
//! `example` and `send`.

use super::exit;
use super::frame_args::Format;
use kwire::decode::{Direction, Frame};
use kwire::render::{grid, json, text_tree};
use kwire::schema::Catalogue;
use kwire::teach::explain::render_explained;
use std::io::Write;

/// The catalogue and release that `--explain` needs (for header reasons), or
/// an exit status when `--explain` is given with a format other than the tree.
pub fn explain_with<'c>(
    cat: &'c Catalogue,
    release: Option<&'c str>,
    explain: bool,
    tree: bool,
) -> Result<Explain<'c>, i32> {
    match (explain, tree) {
        (false, _) => Ok(None),
        (true, true) => Ok(Some((cat, release))),
        (true, false) => {
            kwire::stderr_line!("kwire: --explain annotates the tree (the default format); it does not combine with other formats");
            Err(exit::MALFORMED)
        }
    }
}

/// `--explain`: explain every node, with this catalogue and release.
pub type Explain<'c> = Option<(&'c Catalogue, Option<&'c str>)>;

pub fn write_frames(
    out: &mut impl Write,
    frames: &[Frame],
    format: Format,
    full_docs: bool,
    explain: Explain,
) -> std::io::Result<()> {
    let color = super::color::stdout();
    let many = frames.len() > 1;
    for (i, f) in frames.iter().enumerate() {
        match format {
            Format::Json => {
                let mut line = Vec::with_capacity(f.bytes.len() * 2 + 256);
                json::write_contract(f, &mut line);
                line.push(b'\n');
                out.write_all(&line)?;
            }
            Format::TreeJson => kwire::render::tree_json::write_frame_tree_json(out, f)?,
            Format::Tree | Format::Grid => {
                heading(out, (i, many), f)?;
                let opts = tree_options(full_docs);
                if let Some((cat, release)) = explain {
                    write!(out, "{}", render_explained(cat, release, f, opts))?;
                } else if format == Format::Tree {
                    text_tree::write_frame(out, f, opts)?;
                } else {
                    write!(out, "{}", grid::render_grid(f, color))?;
                }
            }
        }
    }
    out.flush()
}

/// The text trees of frames whose decode left large records fields for
/// drawing (`DecodeOptions::defer_records_over`), each walked a batch at a
/// time as it is drawn; what the walks find joins each frame's warnings and
/// record damage.
pub fn write_trees_drawing(
    out: &mut impl Write,
    frames: &mut [Frame],
    full_docs: bool,
    drawing: (&Catalogue, &kwire::budget::Budget),
) -> std::io::Result<()> {
    let many = frames.len() > 1;
    for (i, f) in frames.iter_mut().enumerate() {
        heading(out, (i, many), f)?;
        text_tree::write_frame_drawing(out, f, tree_options(full_docs), drawing)?;
    }
    out.flush()
}

/// The tree JSON of frames whose decode left large records fields for
/// drawing, each walked a batch at a time as it is written
/// (`render::tree_json::write_frame_tree_json_drawing`).
pub fn write_tree_jsons_drawing(
    out: &mut impl Write,
    frames: &mut [Frame],
    drawing: (&Catalogue, &kwire::budget::Budget),
) -> std::io::Result<()> {
    for f in frames.iter_mut() {
        kwire::render::tree_json::write_frame_tree_json_drawing(out, f, drawing)?;
    }
    out.flush()
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

pub fn tree_options(full_docs: bool) -> text_tree::TreeOptions {
    text_tree::TreeOptions {
        full_docs,
        color: super::color::stdout(),
        // Whole descriptions are asked for whole lines.
        width: super::width::stdout().filter(|_| !full_docs),
    }
}

/// Decode and print a standalone record payload; `None` format prints hex.
pub fn write_payload(
    cat: &Catalogue,
    name: &str,
    bytes: &bytes::Bytes,
    version: Option<i16>,
    format: Option<Format>,
    full_docs: bool,
) -> i32 {
    use kwire::decode::payload::read_payload;
    let mut out = std::io::stdout().lock();
    let Some(format) = format else {
        let _ = writeln!(out, "{}", hex::encode(bytes));
        return exit::OK;
    };
    let decoded = read_payload(cat, name, bytes, version);
    let (root, error, warnings) = (decoded.root, decoded.error, decoded.warnings);
    let res = match format {
        Format::Tree => write!(
            out,
            "{}",
            text_tree::render_tree(
                &root,
                text_tree::TreeOptions {
                    full_docs,
                    color: super::color::stdout(),
                    width: super::width::stdout().filter(|_| !full_docs),
                }
            )
        ),
        Format::TreeJson => writeln!(out, "{}", json::tree_json(&root)),
        Format::Json => writeln!(out, "{}", json::payload_json(&root, decoded.version)),
        Format::Grid => {
            let frame = kwire::decode::Frame {
                direction: Direction::Request,
                kind: Default::default(),
                api_key: None,
                api_version: None,
                header_version: None,
                input_offset: 0,
                bytes: decoded.bytes.clone(),
                root: root.clone(),
                values: None,
                error: error.clone(),
                warnings: Vec::new(),
                record_damage: Vec::new(),
                held: Default::default(),
            };
            write!(out, "{}", grid::render_grid(&frame, super::color::stdout()))
        }
    };
    let _ = res;
    for w in warnings {
        kwire::stderr_line!("kwire: warning: {w}");
    }
    match error {
        Some(e) => {
            kwire::stderr_line!("kwire: {e}");
            exit::MALFORMED
        }
        None => exit::OK,
    }
}
