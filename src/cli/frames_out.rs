//! Decoded frames written to standard output in the format asked for (tree,
//! grid, JSON, tree-json), with `--explain`; shared by `decode`, `capture`,
//! `example` and `send`.

use super::exit;
use super::frame_args::Format;
use kwire::decode::Direction;
pub use kwire::pipeline::frames::{write_frames, write_frames_drawing, Explain, Style};
use kwire::render::{grid, json, text_tree};
use kwire::schema::Catalogue;
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

/// How output looks here: colours and columns from the terminal, `--color`
/// and `--wide`.
pub fn style() -> Style {
    Style {
        color: super::color::stdout(),
        columns: super::width::stdout(),
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
    let json = (format == Format::Json).then(|| json::payload_json(&decoded));
    let (root, error, warnings) = (decoded.root, decoded.error, decoded.warnings);
    let res = match format {
        Format::Tree => write!(
            out,
            "{}",
            text_tree::render_tree(&root, style().tree(full_docs))
        ),
        Format::TreeJson => {
            kwire::render::tree_json::write_tree_json(&mut out, &root).and_then(|()| writeln!(out))
        }
        Format::Json => writeln!(out, "{}", json::to_text(&json.unwrap_or_default())),
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
                redacted: Vec::new(),
                held: Default::default(),
                deferred: Vec::new(),
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
