//! The report's frames, drawn on demand: each frame's bytes and tree lines
//! as compact JSON, gzipped in chunks and embedded as base64; the page's
//! script inflates a chunk (the browser's `DecompressionStream`) and draws
//! the frame's grid and tree when a link opens it. A static grid of every
//! frame made the 40,000-frame Produce capture's report 88 MB.
//!
//! A frame's entry: `[heading, caption, error or null, bytes as hex,
//! lines]`, a line `[prefix, text, offset, length, region, flags, title or
//! null]` with the region as its index in `Region::ALL` (the `g0`… class)
//! and flag 1 for a line whose offsets index decompressed bytes. The grid's
//! owner of a byte is the last line in pre-order covering it, as
//! `decode::regions::byte_owners` computes.

use crate::decode::Region;
use crate::docs::Figure;
use crate::render::text_tree::{line_in, tree_lines, TreeOptions, DOC_WIDTH};
use crate::text::escape::html as esc;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write as _;

/// Frames per gzipped chunk: opening a frame inflates its chunk only.
pub(crate) const CHUNK_FRAMES: usize = 64;
/// A chunk is sealed once its JSON reaches this size, however few its frames.
pub(crate) const CHUNK_BYTES: usize = 256 << 10;
/// Embedded frame data (base64 of the gzipped chunks) at most about this
/// much; later frames are listed as not embedded. A chunk may pass it by
/// its own size.
pub const MAX_FRAME_DATA: usize = 4 << 20;

/// The frames embedded so far, in chunks.
#[derive(Default)]
pub struct FrameData {
    chunks: Vec<(Vec<usize>, String)>,
    /// The chunk being filled: `"index":entry` pairs, comma-separated.
    pending: String,
    pending_frames: Vec<usize>,
    embedded: BTreeSet<usize>,
    size: usize,
    /// Frames not embedded because the data reached [`MAX_FRAME_DATA`].
    pub over_budget: usize,
    /// Frames not embedded because they are larger than the report's limit.
    pub too_large: usize,
}

impl FrameData {
    /// Whether frame `index` is in the page.
    pub fn has(&self, index: usize) -> bool {
        self.embedded.contains(&index)
    }

    pub fn len(&self) -> usize {
        self.embedded.len()
    }

    pub fn is_empty(&self) -> bool {
        self.embedded.is_empty()
    }

    /// Whether more frames may be added: the sealed chunks' size and the
    /// pending chunk's JSON (before gzip, so an over-estimate) count.
    pub fn full(&self) -> bool {
        self.size + self.pending.len() >= MAX_FRAME_DATA
    }

    /// Add frame `index` with its heading; `false` once the data is full
    /// (the caller counts what it could not add in [`Self::over_budget`]).
    pub fn add(&mut self, index: usize, heading: &str, figure: &Figure) -> bool {
        if self.full() {
            return false;
        }
        if !self.pending.is_empty() {
            self.pending.push(',');
        }
        let _ = write!(self.pending, "\"{index}\":{}", entry(heading, figure));
        self.pending_frames.push(index);
        self.embedded.insert(index);
        if self.pending_frames.len() >= CHUNK_FRAMES || self.pending.len() >= CHUNK_BYTES {
            self.seal();
        }
        true
    }

    fn seal(&mut self) {
        if self.pending_frames.is_empty() {
            return;
        }
        let json = format!("{{{}}}", std::mem::take(&mut self.pending));
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        // Writing into a Vec cannot fail.
        let _ = gz.write_all(json.as_bytes());
        let packed = crate::text::base64(&gz.finish().unwrap_or_default());
        self.size += packed.len();
        self.chunks
            .push((std::mem::take(&mut self.pending_frames), packed));
    }

    /// The chunks as hidden elements the page's script reads.
    pub fn html(mut self) -> String {
        self.seal();
        let mut out = String::with_capacity(self.size + self.chunks.len() * 64);
        for (frames, packed) in &self.chunks {
            let list: Vec<String> = frames.iter().map(usize::to_string).collect();
            let _ = writeln!(
                out,
                "<pre hidden class=fd data-frames=\"{}\">{packed}</pre>",
                list.join(",")
            );
        }
        out
    }
}

/// One frame's compact entry.
fn entry(heading: &str, f: &Figure) -> Value {
    let lines: Vec<Value> = tree_lines(&f.root)
        .iter()
        .map(|l| {
            let n = l.node;
            let title = n
                .doc()
                .filter(|doc| doc.chars().count() > DOC_WIDTH + 3)
                .map(|d| Value::String(d.to_string()));
            json!([
                l.prefix,
                line_in(n, TreeOptions::default(), l.decompressed),
                n.offset,
                n.len,
                Region::ALL.iter().position(|r| *r == n.region).unwrap_or(0),
                u8::from(l.decompressed),
                title
            ])
        })
        .collect();
    json!([heading, f.caption, f.error, hex::encode(&f.bytes), lines])
}

/// The viewer the script fills, and a note of the frames left out.
pub fn section(out: &mut String, data: &FrameData, listed: usize, file: &str) {
    out.push_str("<section id=frames><h2>Frame view</h2>");
    let _ = write!(
        out,
        "<p class=note>Open a frame from the timeline, the exchanges or the findings: its bytes (16 a row, coloured by region) and its annotated tree, \
         linked (hover a byte or a line). {} of the {} frames of the exchanges are embedded",
        data.len(),
        listed
    );
    if data.over_budget > 0 {
        let _ = write!(
            out,
            "; {} more are not (the page keeps its frame data under {} MiB)",
            data.over_budget,
            MAX_FRAME_DATA >> 20
        );
    }
    if data.too_large > 0 {
        let _ = write!(
            out,
            "; {} frames over {} KiB are not embedded",
            data.too_large,
            super::MAX_VIEW_BYTES >> 10
        );
    }
    let _ = writeln!(
        out,
        ". <code>kwire capture {} --frame N</code> shows any frame.</p>\
         <div class=viewer-bar><button type=button id=prev-frame>previous frame</button> <button type=button id=next-frame>next frame</button></div>\
         <div id=viewer data-file=\"{}\"><p class=note>No frame open.</p></div></section>",
        esc(file),
        esc(file)
    );
}
