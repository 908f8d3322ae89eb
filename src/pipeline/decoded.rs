//! A captured frame decoded and drawn: its heading, its output in the
//! format asked for (with where it came from in JSON), and what it says on
//! the side (record damage, how its API was chosen).

use super::frames::{write_frames, Format, Style};
use super::out::Out;
use crate::analysis::captured::decode_captured;
use crate::budget::Budget;
use crate::capture::CapturedFrame;
use crate::decode::frame::{DEFER_ELEMENTS_OVER, DEFER_RECORDS_OVER, DRAWN_IN_TURN_OVER};
use crate::decode::records::deferred::Hold;
use crate::decode::{DecodeOptions, Frame};
use crate::render::digits::{push_socket_addr, push_uint};
use crate::render::tree_json;
use crate::schema::Catalogue;
use crate::text::escape::sanitize;
use std::io::Write;

/// How frames are drawn: the same for every frame of a run.
#[derive(Clone, Copy, Debug)]
pub(super) struct Drawing {
    pub format: Format,
    pub full_docs: bool,
    /// Add where each frame came from (`"capture"`) to JSON objects.
    pub provenance: bool,
    pub style: Style,
}

/// Where a capture's frames go: the output, the lines said beside it (what
/// a command prints on stderr), and whether any frame was malformed.
pub(super) struct Sink<'s, W: Write> {
    pub out: Out<W>,
    pub say: &'s mut dyn FnMut(&str),
    pub malformed: bool,
}

/// A captured frame decoded: the frame, how its API was chosen, and what it
/// says on the side.
pub(super) struct Decoded {
    frame: Frame,
    note: Option<String>,
    pub findings: Findings,
}

/// What a decoded frame says beside its output: lines said before its
/// output, and whether it is malformed.
pub(super) struct Findings {
    lines: Vec<String>,
    malformed: bool,
}

impl Findings {
    pub fn report<W: Write>(&self, sink: &mut Sink<'_, W>) {
        if self.malformed {
            sink.malformed = true;
        }
        if !self.lines.is_empty() {
            // Keep the lines next to their frame's output when both go to one place.
            let _ = sink.out.flush_all();
            for line in &self.lines {
                (sink.say)(line);
            }
        }
    }
}

/// Whether a frame's tree or grid is drawn in its turn, straight to the output, with
/// its records walked a batch at a time as they are drawn: a large frame's
/// (`DecodeOptions::defer_records_over`), whose whole tree would not fit in
/// memory. (Any tree JSON written in its turn streams too: [`write_drawing`].)
pub(super) fn drawn_later(f: &CapturedFrame, format: Format) -> bool {
    format != Format::Json && f.bytes.len() > DRAWN_IN_TURN_OVER
}

/// What a frame's records fields left for drawing are walked with.
pub(super) type Walking<'w> = (&'w Catalogue, &'w Budget);

/// A captured frame decoded and drawn into memory, in the format `drawing`
/// asks for, within `opts.budget`: a tree's (text or JSON) records fields
/// are left for drawing, to be walked as they are drawn.
pub(super) fn decode_drawn(
    (cat, release, guess): (&Catalogue, Option<&str>, bool),
    f: &CapturedFrame,
    opts: DecodeOptions,
    drawing: Drawing,
) -> (Decoded, Vec<u8>) {
    let budget = opts.budget.clone();
    let decoding = decoding_for(opts, drawing.format);
    let mut decoded = decode_one(cat, release, f, guess, decoding, drawing.format);
    let stdout = decoded.drawn(f, drawing, (cat, &budget));
    (decoded, stdout)
}

/// The options a frame is decoded with for `format`: a tree's (text or
/// JSON) or grid's records fields are left for drawing, to be walked as
/// they are drawn.
fn decoding_for(opts: DecodeOptions, format: Format) -> DecodeOptions {
    match format {
        Format::Tree | Format::TreeJson | Format::Grid => DecodeOptions {
            defer_records_over: Some(0),
            ..opts
        },
        _ => opts,
    }
}

/// A frame's JSON line written by `write` (streamed as it is written: a
/// tree's JSON can be far larger than its frame), with the capture's member
/// added when `provenance`: only the closing `}\n` is held back for it.
fn with_capture_member<W: Write>(
    out: &mut W,
    f: &CapturedFrame,
    provenance: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if !provenance {
        return write(out);
    }
    let mut held = HoldBack {
        inner: &mut *out,
        tail: Vec::with_capacity(HOLD_BACK),
    };
    write(&mut held)?;
    let mut tail = std::mem::take(&mut held.tail);
    if tail.last() == Some(&b'\n') {
        tail.pop();
    }
    add_capture_member(&mut tail, f);
    tail.push(b'\n');
    out.write_all(&tail)
}

/// A frame's tree (text or JSON) or grid written in its turn, straight to
/// the output, as its records are walked and drawn. A large frame's
/// records fields over [`DEFER_RECORDS_OVER`] are left for drawing and
/// walked a batch at a time (what a batch decompresses is given back once
/// it is drawn); what the walks find is said after the frame. Its arrays
/// whose elements take over [`DEFER_ELEMENTS_OVER`] are walked an element
/// at a time as they are drawn. A small
/// frame's tree JSON ([`tree_json_in_turn`]) is streamed too.
pub(super) fn write_drawing<W: Write>(
    sink: &mut Sink<'_, W>,
    (cat, release, guess): (&Catalogue, Option<&str>, bool),
    f: &CapturedFrame,
    opts: DecodeOptions,
    drawing: Drawing,
) -> std::io::Result<()> {
    if drawing.format == Format::TreeJson && !drawn_later(f, drawing.format) {
        return tree_json_in_turn(sink, (cat, release, guess), f, opts, drawing);
    }
    let opts = DecodeOptions {
        defer_records_over: Some(DEFER_RECORDS_OVER),
        defer_elements_over: Some(DEFER_ELEMENTS_OVER),
        defer_record_arrays: true,
        ..opts
    };
    let budget: Budget = opts.budget.clone();
    let mut decoded = decode_one(cat, release, f, guess, opts, drawing.format);
    let out = &mut sink.out;
    if drawing.format == Format::TreeJson {
        let frame = &mut decoded.frame;
        with_capture_member(out, f, drawing.provenance, |mut w| {
            tree_json::write_frame_tree_json_drawing(&mut w, frame, (cat, &budget))
        })?;
    } else if drawing.format == Format::Grid {
        decoded.write_heading(out, f)?;
        let color = drawing.style.color;
        crate::render::grid::write_grid_drawing(out, &mut decoded.frame, color, (cat, &budget))?;
    } else {
        decoded.write_heading(out, f)?;
        let tree = drawing.style.tree(drawing.full_docs);
        crate::render::text_tree::write_frame_drawing(
            out,
            &mut decoded.frame,
            tree,
            (cat, &budget),
        )?;
    }
    findings_of(&decoded.frame, f, None).report(sink);
    sink.out.flush()
}

/// A small frame's tree JSON written in its turn (one that asked the budget
/// on a worker, or any when there are no workers or the writing falls
/// behind), streamed: a small frame's records can decompress to megabytes
/// of hex. Every records field is left for drawing (a plain topic's
/// records are read from their slots) and walked twice: first for what
/// they hold, said before the frame as its whole decode says it, then as
/// the tree is written. What they decompress is held for the frame's life,
/// as its whole decode would hold it (the same batches decoded as in its
/// other views).
fn tree_json_in_turn<W: Write>(
    sink: &mut Sink<'_, W>,
    (cat, release, guess): (&Catalogue, Option<&str>, bool),
    f: &CapturedFrame,
    opts: DecodeOptions,
    drawing: Drawing,
) -> std::io::Result<()> {
    let budget: Budget = opts.budget.clone();
    let opts = decoding_for(opts, Format::TreeJson);
    let mut decoded = decode_one(cat, release, f, guess, opts, drawing.format);
    let walking = (cat, &budget);
    let again = tree_json::find_deferred(&mut decoded.frame, walking, Hold::ByFrame);
    findings_of(&decoded.frame, f, decoded.note.as_deref()).report(sink);
    let frame = &decoded.frame;
    with_capture_member(&mut sink.out, f, drawing.provenance, |mut w| {
        tree_json::write_frame_tree_json_found(&mut w, frame, (cat, &again), Hold::ByFrame)
    })?;
    sink.out.flush()
}

/// Decode a captured frame; record damage, and a JSON frame's note, are said
/// on the side.
pub(super) fn decode_one(
    cat: &Catalogue,
    release: Option<&str>,
    f: &CapturedFrame,
    guess: bool,
    opts: DecodeOptions,
    format: Format,
) -> Decoded {
    let (frame, note) = decode_captured(cat, release, f, guess, opts);
    // JSON stays one object per line for scripts; where it came from is said on the side.
    let json_note = note
        .as_deref()
        .filter(|_| matches!(format, Format::Json | Format::TreeJson));
    let findings = findings_of(&frame, f, json_note);
    Decoded {
        frame,
        note,
        findings,
    }
}

/// What a decoded frame says on the side (its record damage, and a note)
/// and whether it is malformed.
fn findings_of(frame: &Frame, f: &CapturedFrame, note: Option<&str>) -> Findings {
    let mut lines: Vec<String> = frame
        .record_damage
        .iter()
        .map(|e| {
            format!(
                "kwire: frame {}: record data: {}",
                f.index,
                sanitize(&e.to_string())
            )
        })
        .collect();
    if let Some(n) = note {
        lines.push(format!("kwire: frame {}: {n}", f.index));
    }
    let malformed = frame.error.is_some() || !frame.record_damage.is_empty();
    Findings { lines, malformed }
}

impl Decoded {
    /// The frame as JSON (one object per line) or as a tree or grid under a `# frame` line.
    pub fn write(
        &self,
        out: &mut impl Write,
        f: &CapturedFrame,
        drawing: Drawing,
    ) -> std::io::Result<()> {
        let frame = &self.frame;
        if drawing.format == Format::Json {
            let mut line = Vec::with_capacity(2 * frame.bytes.len() + 256);
            crate::render::json::write_contract(frame, &mut line);
            if drawing.provenance {
                add_capture_member(&mut line, f);
            }
            line.push(b'\n');
            out.write_all(&line)
        } else if drawing.format == Format::TreeJson {
            with_capture_member(out, f, drawing.provenance, |mut w| {
                tree_json::write_frame_tree_json(&mut w, frame)
            })
        } else {
            self.write_heading(out, f)?;
            write_frames(
                out,
                std::slice::from_ref(frame),
                drawing.format,
                (drawing.style, drawing.full_docs),
                None,
            )
        }
    }

    /// [`Decoded::push`] into a buffer of its own, sized for a tree of the frame.
    pub fn drawn(&mut self, f: &CapturedFrame, drawing: Drawing, walk: Walking) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 * self.frame.bytes.len() + 256);
        self.push(&mut out, f, drawing, walk);
        out
    }

    /// [`Decoded::write`] into memory, on a worker: a tree is drawn straight
    /// into the buffer, not through another, its records walked as they
    /// are drawn; what those walks find is then said on the side.
    fn push(&mut self, out: &mut Vec<u8>, f: &CapturedFrame, drawing: Drawing, walk: Walking) {
        // Writing into memory does not fail.
        if drawing.format == Format::Tree {
            self.push_heading(out, f);
            crate::render::text_tree::push_frame_drawing(
                out,
                &mut self.frame,
                drawing.style.tree(drawing.full_docs),
                walk,
            );
            self.findings = findings_of(&self.frame, f, None);
        } else if drawing.format == Format::TreeJson {
            let _ = tree_json::push_frame_tree_json_drawing(out, &mut self.frame, walk);
            if drawing.provenance {
                out.pop();
                add_capture_member(out, f);
                out.push(b'\n');
            }
            self.findings = findings_of(&self.frame, f, self.note.as_deref());
        } else if drawing.format == Format::Grid {
            self.push_heading(out, f);
            let color = drawing.style.color;
            crate::render::grid::push_grid_drawing(out, &mut self.frame, color, walk);
            self.findings = findings_of(&self.frame, f, None);
        } else {
            let _ = self.write(out, f, drawing);
        }
    }

    /// The `# frame` line above a tree or grid, and the `# note` line.
    fn write_heading(&self, out: &mut impl Write, f: &CapturedFrame) -> std::io::Result<()> {
        let mut line = Vec::with_capacity(128);
        self.push_heading(&mut line, f);
        out.write_all(&line)
    }

    /// [`Decoded::write_heading`] into memory: written piece by piece, as
    /// formatting it cost as much as decoding a small frame.
    fn push_heading(&self, line: &mut Vec<u8>, f: &CapturedFrame) {
        let arrow = f.direction.arrow();
        let (client, server) = f.client_and_server();
        line.extend_from_slice(b"# frame ");
        push_uint(line, f.index as u64, 0);
        line.extend_from_slice(b" conn ");
        push_uint(line, f.conn as u64, 0);
        line.push(b' ');
        push_socket_addr(line, client);
        line.push(b' ');
        line.extend_from_slice(arrow.as_bytes());
        line.push(b' ');
        push_socket_addr(line, server);
        line.extend_from_slice(b" at ");
        push_seconds(line, f.timestamp);
        crate::render::listing::push_marks(line, f);
        line.push(b'\n');
        if let Some(n) = &self.note {
            line.extend_from_slice(b"# ");
            line.extend_from_slice(n.as_bytes());
            line.push(b'\n');
        }
        if let Some(c) = &f.comment {
            line.extend_from_slice(b"# comment: ");
            crate::text::escape::sanitize_into(line, c);
            line.push(b'\n');
        }
    }
}

/// A capture time as every JSON output writes it (`render::json::capture_time`).
fn push_seconds(line: &mut Vec<u8>, t: f64) {
    let _ = write!(line, "{}", crate::render::json::capture_time(t));
}

fn add_capture_member(line: &mut Vec<u8>, f: &CapturedFrame) {
    if line.last() != Some(&b'}') {
        return;
    }
    line.pop();
    line.extend_from_slice(b",\"capture\":{\"frame\":");
    push_uint(line, f.index as u64, 0);
    line.extend_from_slice(b",\"time\":");
    match f.timestamp.is_finite() {
        true => push_seconds(line, f.timestamp),
        false => line.extend_from_slice(b"null"),
    }
    line.extend_from_slice(b",\"conn\":");
    push_uint(line, f.conn as u64, 0);
    // Socket addresses are digits, dots, colons and brackets: nothing to escape.
    let _ = write!(line, ",\"src\":\"{}\",\"dst\":\"{}\"", f.from, f.to);
    if let Some(c) = &f.comment {
        // serde_json escapes control characters, so none reaches a terminal.
        let text = serde_json::to_string(&**c).unwrap_or_default();
        let _ = write!(line, ",\"comment\":{text}");
    }
    if let Some(first) = f.repeats {
        line.extend_from_slice(b",\"duplicate_of\":");
        push_uint(line, first as u64, 0);
    }
    line.extend_from_slice(b"}}");
}

/// A writer passing everything on to `inner` but its last [`HOLD_BACK`] bytes,
/// which stay in `tail` (a JSON object's closing, to reopen it).
struct HoldBack<'w, W: Write> {
    inner: &'w mut W,
    tail: Vec<u8>,
}

/// The bytes a [`HoldBack`] keeps.
const HOLD_BACK: usize = 2;

impl<W: Write> Write for HoldBack<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() >= HOLD_BACK {
            let (pass, keep) = buf.split_at(buf.len() - HOLD_BACK);
            self.inner.write_all(&self.tail)?;
            self.inner.write_all(pass)?;
            self.tail.clear();
            self.tail.extend_from_slice(keep);
        } else {
            self.tail.extend_from_slice(buf);
            let over = self.tail.len().saturating_sub(HOLD_BACK);
            self.inner.write_all(&self.tail[..over])?;
            self.tail.drain(..over);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_back_passes_on_all_but_the_last_two_bytes() {
        let text = b"{\"a\":[1,2,3],\"b\":\"x\"}\n";
        for split in [1, 2, 3, 5, text.len()] {
            let mut sink = Vec::new();
            let mut held = HoldBack {
                inner: &mut sink,
                tail: Vec::new(),
            };
            for chunk in text.chunks(split) {
                held.write_all(chunk).unwrap();
            }
            let tail = std::mem::take(&mut held.tail);
            assert_eq!(
                (sink.as_slice(), tail.as_slice()),
                (&text[..text.len() - 2], &b"}\n"[..]),
                "writes of {split}"
            );
        }
    }
}
