//! The object tree as text, in the layout of the seed pages:
//! `+-- TopicId uuid = 0000… [0x0011, 16B] The topic identifier.`

use super::digits::{hex4, push_hex4, push_uint};
use super::values::push_value_text;
use crate::analysis::finding::{Rule, Severity};
use crate::decode::fields::for_each_element;
use crate::decode::records::deferred::{for_each_item, for_each_piece, Found, Hold, Piece};
use crate::decode::tree::DeferredElements;
use crate::decode::{DeferredRecords, Frame, Node, Role, Value};
use crate::text::copy::push_bytes;
use crate::text::escape::{sanitize, sanitize_into, sanitize_text_into};
use crate::text::width::{cut_point, fit_line, measure_pieces};
use std::io::{self, Write};

/// Descriptions longer than this are cut with `...`, as on the seed pages.
pub const DOC_WIDTH: usize = 75;

#[derive(Clone, Copy, Debug, Default)]
pub struct TreeOptions {
    /// Show descriptions in full instead of cutting them at [`DOC_WIDTH`].
    pub full_docs: bool,
    /// ANSI colour for a terminal: names bold, types cyan, values green,
    /// notes, ranges and descriptions dim, errors red, warnings yellow. The
    /// text is the same, less the escape codes.
    pub color: bool,
    /// Lines fit this many columns (`fit_tree_line`); `None`: no limit.
    pub width: Option<usize>,
}

/// The escape codes of [`TreeOptions::color`]; all empty without colour.
/// Constants of the type, so that a tree without colour is drawn by code
/// with no escape codes to write (testing for them was 3% of a capture's text tree).
struct Paint<const COLOR: bool>;

impl<const COLOR: bool> Paint<COLOR> {
    const NAME: &'static str = if COLOR { "\x1b[1m" } else { "" };
    const TY: &'static str = if COLOR { "\x1b[36m" } else { "" };
    const VALUE: &'static str = if COLOR { "\x1b[32m" } else { "" };
    const DIM: &'static str = if COLOR { "\x1b[2m" } else { "" };
    const ERROR: &'static str = if COLOR { "\x1b[1;31m" } else { "" };
    const WARNING: &'static str = if COLOR { "\x1b[33m" } else { "" };
    const RESET: &'static str = if COLOR { "\x1b[0m" } else { "" };
}

/// The label of a node: name, type, `= value`, note.
pub fn label(node: &Node) -> String {
    let mut out = Vec::new();
    push_label::<false>(&mut out, node);
    into_string(out)
}

/// Text written by this module's byte writers, all from `str`s: UTF-8.
fn into_string(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// One line without the tree prefix: label, range and description.
pub fn line(node: &Node, opts: TreeOptions) -> String {
    line_in(node, opts, false)
}

/// `decompressed` marks offsets that index a decompressed buffer (`[d:0x0000, 8B]`).
pub fn line_in(node: &Node, opts: TreeOptions, decompressed: bool) -> String {
    let mut out = Vec::new();
    push_line(&mut out, node, opts, decompressed);
    into_string(out)
}

/// [`line_in`] appended to a byte buffer.
fn push_line(out: &mut Vec<u8>, node: &Node, opts: TreeOptions, decompressed: bool) {
    match opts.color {
        true => push_line_in::<true>(out, node, opts, decompressed, out.len()),
        false => push_line_in::<false>(out, node, opts, decompressed, out.len()),
    }
}

/// What one line of the tree shows of a node, however it is held: a built
/// [`Node`], or a part of a plain record read straight from the record
/// tape ([`crate::decode::records::lines::PartLine`]).
pub(crate) trait LinePieces {
    /// The name, escaped for a terminal.
    fn push_name(&self, out: &mut Vec<u8>);
    /// The type as shown, escaped; false, with nothing written, for none.
    fn push_type(&self, out: &mut Vec<u8>) -> bool;
    /// The value's text; false, with nothing written, for none.
    fn push_value(&self, out: &mut Vec<u8>) -> bool;
    /// The note after the value, after a space and `code`; false, with
    /// nothing written, for none.
    fn push_note(&self, out: &mut Vec<u8>, code: &str) -> bool;
    /// Where its bytes are: offset and length.
    fn range(&self) -> (usize, usize);
    fn has_doc(&self) -> bool;
    /// The description, escaped.
    fn push_doc(&self, out: &mut Vec<u8>);
    fn error(&self) -> Option<&str>;
}

impl LinePieces for Node {
    #[inline(always)]
    fn push_name(&self, out: &mut Vec<u8>) {
        self.name.push_sanitized(out)
    }
    #[inline(always)]
    fn push_type(&self, out: &mut Vec<u8>) -> bool {
        if self.ty.is_empty() {
            return false;
        }
        sanitize_text_into(out, &self.ty);
        true
    }
    #[inline(always)]
    fn push_value(&self, out: &mut Vec<u8>) -> bool {
        push_value_text(out, self)
    }
    #[inline(always)]
    fn push_note(&self, out: &mut Vec<u8>, code: &str) -> bool {
        super::notes::push_note(out, self, code)
    }
    #[inline(always)]
    fn range(&self) -> (usize, usize) {
        (self.offset, self.len)
    }
    #[inline(always)]
    fn has_doc(&self) -> bool {
        Node::has_doc(self)
    }
    #[inline(always)]
    fn push_doc(&self, out: &mut Vec<u8>) {
        Node::push_doc(self, out)
    }
    #[inline(always)]
    fn error(&self) -> Option<&str> {
        Node::error(self)
    }
}

#[inline(always)]
fn push_line_in<const COLOR: bool>(
    out: &mut Vec<u8>,
    node: &impl LinePieces,
    opts: TreeOptions,
    decompressed: bool,
    line_start: usize,
) {
    type P<const C: bool> = Paint<C>;
    let (value_start, value_end) = push_label::<COLOR>(out, node);
    let range_start = out.len();
    let (offset, len) = node.range();
    match u16::try_from(offset) {
        // The usual range's start, ` [0x0079, `, in one piece.
        Ok(at) if !COLOR && !decompressed => {
            let [a, b, c, d] = hex4(at);
            out.extend_from_slice(&[b' ', b'[', b'0', b'x', a, b, c, d, b',', b' ']);
        }
        _ => {
            out.push(b' ');
            code(out, P::<COLOR>::DIM);
            match decompressed {
                true => out.extend_from_slice(b"[d:0x"),
                false => out.extend_from_slice(b"[0x"),
            }
            push_hex4(out, offset);
            out.extend_from_slice(b", ");
        }
    }
    push_uint(out, len as u64, 0);
    out.extend_from_slice(b"B]");
    code(out, P::<COLOR>::RESET);
    let doc_start = out.len();
    if node.has_doc() {
        out.push(b' ');
        code(out, P::<COLOR>::DIM);
        let start = out.len();
        node.push_doc(out);
        if !opts.full_docs {
            cut_doc(out, start);
        }
        code(out, P::<COLOR>::RESET);
    }
    let doc_end = out.len();
    if let Some(e) = node.error() {
        out.push(b' ');
        code(out, P::<COLOR>::ERROR);
        out.extend_from_slice(b"!! ");
        sanitize_into(out, e);
        code(out, P::<COLOR>::RESET);
    }
    if let Some(columns) = opts.width {
        // A cell takes a byte at least: a line no longer in bytes fits.
        if out.len() - line_start > columns {
            let marks = [
                line_start,
                value_start,
                value_end,
                range_start,
                doc_start,
                doc_end,
            ];
            fit_tree_line(out, marks, columns);
        }
    }
}

/// Cuts a tree line to `columns`, giving up what says least first: the
/// description (as the seed pages cut theirs), then the value's text down
/// to [`VALUE_KEPT`] cells (the range says its size), then the end of the label; the range
/// `[0x0010, 4B]` and an error stay whole when the line has room for them.
/// `marks`: where the line, the value, the value's end, the range, the
/// description and the error start.
///
/// Each piece is measured once and its cut found from its measure: a
/// fifth of the Produce capture's text tree was spent measuring and
/// cutting its long lines (the records' values) when each cut measured its
/// text again.
fn fit_tree_line(out: &mut Vec<u8>, marks: [usize; 6], columns: usize) {
    let [start, value, value_end, range, doc, error] = marks;
    let bounds = [start, value, value_end, range, doc, error, out.len()];
    let piece = |i: usize| bounds[i]..bounds[i + 1];
    let measured = measure_pieces(&out[start..], [1, 2, 3, 4, 5, 6].map(|i| bounds[i] - start));
    let (cells, coloured) = (measured.cells, measured.coloured);
    let Some((keep, over)) = pieces_kept(cells, columns) else {
        return;
    };
    // The line as kept is written after the line as drawn, then moved over
    // it: no buffer of its own (one a long line was 1% of the Produce
    // capture's text tree).
    let line = out.len();
    out.reserve(line - start + 8);
    // The label's pieces as kept: where each starts in `out`, its cells,
    // whether it is plain.
    let mut label = [(0, 0, false); 3];
    let mut width = 0;
    for i in 0..6 {
        let (whole, plain) = (cells[i], measured.plain[i]);
        let at = out.len();
        let kept = match keep[i] {
            Some(0) => 0,
            // Fewer cells than it has, so a cut (as `fit_line` makes it).
            Some(n) => {
                let (cut, used) = cut_point(&out[piece(i)], plain, n - 1);
                out.extend_from_within(bounds[i]..bounds[i] + cut);
                end_at(out, at, at + cut, coloured);
                used + 1
            }
            None => {
                out.extend_from_within(piece(i));
                whole
            }
        };
        width += kept;
        if i < 3 {
            label[i] = (at, kept, plain && keep[i].is_none());
        }
        if i == 2 && over > 0 {
            // The label (name, type, value, note) gives up its end before
            // the range and the error do.
            let cells: usize = label.iter().map(|l| l.1).sum();
            let target = cells.saturating_sub(over).max(columns / 2);
            if cells > target {
                let kept = cut_label(out, line, label, target.saturating_sub(1), coloured);
                width = width - cells + kept;
            }
        }
    }
    out.copy_within(line.., start);
    out.truncate(start + (out.len() - line));
    // What the cuts above left over (an error longer than the line): cut at the end.
    if width > columns {
        fit_line(out, start, columns);
    }
}

/// Cells each piece of a tree line keeps (`None`: all of it) when the line
/// is over `columns`, and how many cells the label must still give up;
/// `None` when it fits (longer in bytes than the width, yet not in cells:
/// `…`, `→`).
fn pieces_kept(cells: [usize; 6], columns: usize) -> Option<([Option<usize>; 6], usize)> {
    let mut over = cells.iter().sum::<usize>().saturating_sub(columns);
    if over == 0 {
        return None;
    }
    let mut keep: [Option<usize>; 6] = [None; 6];
    if cells[4] > 0 {
        // Room for a description's start and its cut mark, or none of it.
        let room = cells[4].saturating_sub(over);
        keep[4] = Some(if room >= 12 { room } else { 0 });
        over = over.saturating_sub(cells[4] - keep[4].unwrap_or(0));
    }
    if over > 0 && cells[1] > VALUE_KEPT {
        let cut = over.min(cells[1] - VALUE_KEPT);
        keep[1] = Some(cells[1] - cut);
        over -= cut;
    }
    Some((keep, over))
}

/// `line` cut at `cut` and ended with `…`, and a reset when what it keeps
/// from `from` on holds a colour (as [`crate::text::width::fit_line`] ends a
/// cut); `coloured`: whether the line holds any colour to look for.
fn end_at(line: &mut Vec<u8>, from: usize, cut: usize, coloured: bool) {
    let reset = coloured && line[from..cut].contains(&0x1b);
    line.truncate(cut);
    line.extend_from_slice("…".as_bytes());
    if reset {
        line.extend_from_slice(b"\x1b[0m");
    }
}

/// The label at `from` in `line`, at its end (its pieces: start, cells,
/// plain), cut to keep `room` cells before its `…`, in the piece where the
/// cut falls (`coloured` as for [`end_at`]); the cells it keeps.
fn cut_label(
    line: &mut Vec<u8>,
    from: usize,
    pieces: [(usize, usize, bool); 3],
    room: usize,
    coloured: bool,
) -> usize {
    let ends = [pieces[1].0, pieces[2].0, line.len()];
    let mut before = 0;
    for (k, &(at, cells, plain)) in pieces.iter().enumerate() {
        if before + cells > room {
            let (cut, used) = cut_point(&line[at..ends[k]], plain, room - before);
            end_at(line, from, at + cut, coloured);
            return before + used + 1;
        }
        before += cells;
    }
    before
}

/// Cells of a value's text a line too long keeps (`0x0000000000000000…`).
const VALUE_KEPT: usize = 20;

/// An escape code of [`Paint`] (none without colour).
#[inline]
fn code(out: &mut Vec<u8>, c: &str) {
    if !c.is_empty() {
        out.extend_from_slice(c.as_bytes());
    }
}

/// The label with each part in its colour (none without colour).
#[inline(always)]
/// Returns where the value's text starts and ends (both at the label's end
/// when it has none).
fn push_label<const COLOR: bool>(out: &mut Vec<u8>, node: &impl LinePieces) -> (usize, usize) {
    type P<const C: bool> = Paint<C>;
    code(out, P::<COLOR>::NAME);
    node.push_name(out);
    code(out, P::<COLOR>::RESET);
    let mark = out.len();
    out.push(b' ');
    code(out, P::<COLOR>::TY);
    if node.push_type(out) {
        code(out, P::<COLOR>::RESET);
    } else {
        out.truncate(mark);
    }
    let mark = out.len();
    out.extend_from_slice(b" = ");
    code(out, P::<COLOR>::VALUE);
    let value_start = out.len();
    if node.push_value(out) {
        let value_end = out.len();
        code(out, P::<COLOR>::RESET);
        if node.push_note(out, P::<COLOR>::DIM) {
            code(out, P::<COLOR>::RESET);
        }
        return (value_start, value_end);
    }
    out.truncate(mark);
    let end = out.len();
    if node.push_note(out, P::<COLOR>::DIM) {
        code(out, P::<COLOR>::RESET);
    }
    (end, end)
}

/// The description written from `start` on, cut to [`DOC_WIDTH`] characters
/// and `...` when longer than `DOC_WIDTH + 3`.
fn cut_doc(out: &mut Vec<u8>, start: usize) {
    let doc = &out[start..];
    if doc.len() <= DOC_WIDTH + 3 {
        return;
    }
    // Characters are the bytes that do not continue one.
    let starts = doc.iter().enumerate().filter(|(_, b)| (**b & 0xc0) != 0x80);
    if starts.clone().count() <= DOC_WIDTH + 3 {
        return;
    }
    let cut = starts.map(|(i, _)| i).nth(DOC_WIDTH).unwrap_or(doc.len());
    out.truncate(start + cut);
    out.extend_from_slice(b"...");
}

/// One line of the drawn tree: the `|   +-- ` prefix and the node it shows.
pub struct TreeLine<'a> {
    pub prefix: String,
    pub node: &'a Node,
    /// The node's offsets index a decompressed buffer, not the frame.
    pub decompressed: bool,
}

/// The tree's lines in pre-order: root first, then `+-- ` children with `| ` rails.
pub fn tree_lines(root: &Node) -> Vec<TreeLine<'_>> {
    let mut out = vec![TreeLine {
        prefix: String::new(),
        node: root,
        decompressed: false,
    }];
    push_children(root, "", false, &mut out);
    out
}

fn push_children<'a>(
    node: &'a Node,
    prefix: &str,
    decompressed: bool,
    out: &mut Vec<TreeLine<'a>>,
) {
    let n = node.children.len();
    let inner = decompressed || node.role == Role::Decompressed;
    for (i, c) in node.children.iter().enumerate() {
        out.push(TreeLine {
            prefix: format!("{prefix}+-- "),
            node: c,
            decompressed: inner,
        });
        let rail = if i + 1 == n { "    " } else { "|   " };
        push_children(c, &format!("{prefix}{rail}"), inner, out);
    }
}

/// Extra lines under a node: gets the node, its parent, and the buffer its
/// offsets index (the frame, or a decompressed buffer below a decompressed node).
pub(crate) type Annotate<'a> = dyn Fn(&Node, Option<&Node>, &[u8]) -> Vec<String> + 'a;

/// The tree with `annotate`'s lines under each node, marked `· `.
pub fn render_tree_annotated(
    root: &Node,
    buf: &[u8],
    opts: TreeOptions,
    annotate: &Annotate,
) -> String {
    let mut out = Vec::new();
    // Writing into memory does not fail; nothing is left for drawing.
    let _ = write_tree_annotated(&mut out, root, buf, (opts, annotate), None);
    into_string(out)
}

/// [`render_tree_annotated`] written to `w` as it is drawn, in large writes;
/// with `drawing`, a deferred records field is walked a batch at a time as
/// it is drawn (each batch's nodes annotated, drawn and dropped), and what
/// the walks found is returned for the frame's lists
/// ([`crate::decode::records::deferred::join_found`]).
pub(crate) fn write_tree_annotated(
    w: &mut dyn Write,
    root: &Node,
    buf: &[u8],
    (opts, annotate): (TreeOptions, &Annotate),
    drawing: Option<(
        &crate::schema::Catalogue,
        &crate::budget::Budget,
        &bytes::Bytes,
        Hold,
    )>,
) -> io::Result<Vec<(DeferredRecords, Found)>> {
    let mut out = Gathered {
        text: line(root, opts),
        w,
        fit: opts.width,
    };
    out.text.push('\n');
    push_notes(
        &annotate(root, None, buf),
        if root.children.is_empty() { "  " } else { "| " },
        opts.width,
        &mut out.text,
    );
    // Tree lines are fitted as they are drawn, rails included (`Walk::tree_line`);
    // notes are prose, wrapped to the width instead.
    let mut walk = Walk {
        opts: TreeOptions {
            width: None,
            ..opts
        },
        width: opts.width,
        annotate,
        drawer: drawing.map(|(cat, budget, frame, hold)| Drawer {
            cat,
            budget,
            hold,
            frame: frame.clone(),
            found: Vec::new(),
        }),
    };
    walk.node_children(root, buf, "", false, &mut out)?;
    out.pass_on()?;
    Ok(walk.drawer.map(|d| d.found).unwrap_or_default())
}

/// Whole lines of text on their way to a writer, each fitted to the width
/// when it is set, passed on whenever [`SPILL`] bytes gather.
struct Gathered<'w> {
    text: String,
    w: &'w mut dyn Write,
    fit: Option<usize>,
}

impl Gathered<'_> {
    fn spill_when_full(&mut self) -> io::Result<()> {
        match self.text.len() >= SPILL {
            true => self.pass_on(),
            false => Ok(()),
        }
    }

    fn pass_on(&mut self) -> io::Result<()> {
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        if let Some(columns) = self.fit {
            crate::text::width::fit_each_line(&mut bytes, 0, columns);
        }
        self.w.write_all(&bytes)?;
        bytes.clear();
        self.text = into_string(bytes);
        Ok(())
    }
}

/// Notes under a node, `· ` after the rails; wrapped at spaces to `width`
/// (continuation lines indented under the text).
fn push_notes(notes: &[String], prefix: &str, width: Option<usize>, out: &mut String) {
    for n in notes {
        let text = sanitize(n);
        let room = width.map_or(usize::MAX, |w| {
            w.saturating_sub(crate::text::width::display_width(prefix.as_bytes()) + 2)
                .max(20)
        });
        let mut line = String::new();
        let mut lead = "· ";
        for word in text.split(' ') {
            let cells = |s: &str| crate::text::width::display_width(s.as_bytes());
            if !line.is_empty() && cells(&line) + 1 + cells(word) > room {
                out.push_str(prefix);
                out.push_str(lead);
                out.push_str(&line);
                out.push('\n');
                line.clear();
                lead = "  ";
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(prefix);
        out.push_str(lead);
        out.push_str(&line);
        out.push('\n');
    }
}

struct Walk<'a, 'b, 'd> {
    opts: TreeOptions,
    /// The width notes wrap at (`opts` draws the tree lines whole).
    width: Option<usize>,
    annotate: &'a Annotate<'b>,
    /// Walks deferred records fields as they are drawn (taken while it does).
    drawer: Option<Drawer<'d>>,
}

impl Walk<'_, '_, '_> {
    /// `node`'s children with their subtrees and notes; a deferred records
    /// field's batches walked and drawn one at a time, as its children.
    fn node_children(
        &mut self,
        node: &Node,
        buf: &[u8],
        prefix: &str,
        decompressed: bool,
        out: &mut Gathered<'_>,
    ) -> io::Result<()> {
        let inner = decompressed || node.role == Role::Decompressed;
        // Below a decompressed node, offsets index the decompressed buffer it holds.
        let buf = match (&node.value, node.role) {
            (Value::Bytes(Some(b)), Role::Decompressed) => &b[..],
            _ => buf,
        };
        let deferred = node.deferred_records().filter(|_| self.drawer.is_some());
        let elements = node.deferred_elements().filter(|_| self.drawer.is_some());
        self.draw(
            (node, &node.children),
            deferred.is_none() && elements.is_none_or(|d| d.count == 0),
            buf,
            (prefix, inner),
            out,
        )?;
        if let Some((d, drawer)) = elements.zip(self.drawer.as_ref()) {
            let (cat, frame) = (drawer.cat, drawer.frame.clone());
            return for_each_element(cat, &frame, d, |nodes, last| {
                self.draw((node, nodes), last, buf, (prefix, inner), out)
            });
        }
        let Some(d) = deferred else {
            return Ok(());
        };
        let Some(drawer) = self.drawer.take() else {
            return Ok(());
        };
        let mut held: Vec<Node> = Vec::new();
        let hold = (drawer.budget, drawer.hold);
        let walked = for_each_item(drawer.cat, &drawer.frame, d, hold, |nodes, _| {
            self.draw((node, &held), false, buf, (prefix, inner), out)?;
            held.clear();
            held.append(nodes);
            Ok::<(), io::Error>(())
        });
        let mut drawer = drawer;
        let drawn = walked.and_then(|found| {
            self.draw((node, &held), true, buf, (prefix, inner), out)?;
            drawer.found.push((d.clone(), found));
            Ok(())
        });
        self.drawer = Some(drawer);
        drawn
    }

    /// A node's line after the rails, fitted to the width as the text tree
    /// fits it: what says least is cut first, the range kept.
    fn tree_line(&self, prefix: &str, node: &Node, inner: bool) -> String {
        let mut line = Vec::with_capacity(prefix.len() + 128);
        line.extend_from_slice(prefix.as_bytes());
        line.extend_from_slice(b"+-- ");
        let opts = TreeOptions {
            width: self.width,
            ..self.opts
        };
        match opts.color {
            true => push_line_in::<true>(&mut line, node, opts, inner, 0),
            false => push_line_in::<false>(&mut line, node, opts, inner, 0),
        }
        into_string(line)
    }

    /// `nodes` (children of `parent`; the last of them its last child when
    /// `ends`) with their notes and subtrees.
    fn draw(
        &mut self,
        (parent, nodes): (&Node, &[Node]),
        ends: bool,
        buf: &[u8],
        (prefix, inner): (&str, bool),
        out: &mut Gathered<'_>,
    ) -> io::Result<()> {
        let n = nodes.len();
        for (i, c) in nodes.iter().enumerate() {
            let last = ends && i + 1 == n;
            out.text.push_str(&self.tree_line(prefix, c, inner));
            out.text.push('\n');
            let child_prefix = format!("{prefix}{}", if last { "    " } else { "|   " });
            // A deferred records field or array has the children its walk will draw.
            let walked_later = self.drawer.is_some() && c.walked_later();
            let rail = if c.children.is_empty() && !walked_later {
                "  "
            } else {
                "| "
            };
            push_notes(
                &(self.annotate)(c, Some(parent), buf),
                &format!("{child_prefix}{rail}"),
                self.width,
                &mut out.text,
            );
            out.spill_when_full()?;
            self.node_children(c, buf, &child_prefix, inner, out)?;
        }
        Ok(())
    }
}

/// The whole tree as text, one line per node.
pub fn render_tree(root: &Node, opts: TreeOptions) -> String {
    let mut out = Vec::new();
    let _ = write_tree_to(&mut out, &mut std::io::sink(), root, opts, (NO_SPILL, None));
    into_string(out)
}

/// Lines gather in a buffer that goes to the writer when it holds this much.
const SPILL: usize = 1 << 16;
/// The buffer is the output: it is never passed on.
const NO_SPILL: usize = usize::MAX;

/// The tree into `buf`, passed on to `w` whenever `spill` bytes gather (the
/// rest stays in `buf`).
fn write_tree_to(
    buf: &mut Vec<u8>,
    w: &mut impl Write,
    root: &Node,
    opts: TreeOptions,
    (spill, drawer): (usize, Option<&mut Drawer>),
) -> io::Result<()> {
    push_line(buf, root, opts, false);
    buf.push(b'\n');
    // Room for the rails of a deep tree: growing it was a reallocation a level.
    let mut prefix = Vec::with_capacity(128);
    let mut to = Out {
        buf,
        w,
        spill,
        drawer,
    };
    let inner = root.role == Role::Decompressed;
    match opts.color {
        true => tree_children::<true, _>(&mut to, &root.children, true, &mut prefix, inner, opts),
        false => tree_children::<false, _>(&mut to, &root.children, true, &mut prefix, inner, opts),
    }
}

/// Where a tree's lines go: a buffer written out to `w` whenever it holds
/// `spill` bytes, and what draws deferred records fields, when there are any.
struct Out<'o, 'd, W: Write> {
    buf: &'o mut Vec<u8>,
    w: &'o mut W,
    spill: usize,
    drawer: Option<&'o mut Drawer<'d>>,
}

/// Draws the records fields a frame's decode left for drawing
/// ([`crate::decode::DecodeOptions::defer_records_over`]), a batch at a
/// time, and keeps what their walks found for the frame's lists.
struct Drawer<'d> {
    cat: &'d crate::schema::Catalogue,
    budget: &'d crate::budget::Budget,
    /// How long what the walks decompress is held against the budget.
    hold: Hold,
    frame: bytes::Bytes,
    found: Vec<(DeferredRecords, Found)>,
}

/// `nodes` (children of one node; the last of them its last child when
/// `ends`) with their subtrees; `inner`: they are in decompressed data.
fn tree_children<const COLOR: bool, W: Write>(
    to: &mut Out<'_, '_, W>,
    nodes: &[Node],
    ends: bool,
    prefix: &mut Vec<u8>,
    inner: bool,
    opts: TreeOptions,
) -> io::Result<()> {
    let n = nodes.len();
    for (i, c) in nodes.iter().enumerate() {
        let last = ends && i + 1 == n;
        node_line::<COLOR, W>(to, c, prefix, inner, opts)?;
        let deferred = c.deferred_records().filter(|_| to.drawer.is_some());
        let elements = c.deferred_elements().filter(|_| to.drawer.is_some());
        if !c.children.is_empty() || deferred.is_some() {
            let at = prefix.len();
            prefix.extend_from_slice(if last { b"    " } else { b"|   " });
            let inner = inner || c.role == Role::Decompressed;
            let ends = deferred.is_none() && elements.is_none_or(|d| d.count == 0);
            tree_children::<COLOR, W>(to, &c.children, ends, prefix, inner, opts)?;
            if let Some(d) = deferred {
                deferred_children::<COLOR, W>(to, d, prefix, inner, opts)?;
            }
            if let Some(d) = elements {
                deferred_elements::<COLOR, W>(to, d, prefix, inner, opts)?;
            }
            prefix.truncate(at);
        }
    }
    Ok(())
}

/// A deferred array's elements, walked and drawn one at a time.
fn deferred_elements<const COLOR: bool, W: Write>(
    to: &mut Out<'_, '_, W>,
    d: &DeferredElements,
    prefix: &mut Vec<u8>,
    inner: bool,
    opts: TreeOptions,
) -> io::Result<()> {
    let Some((cat, frame)) = to.drawer.as_deref().map(|d| (d.cat, d.frame.clone())) else {
        return Ok(());
    };
    let at = prefix.len();
    for_each_element(cat, &frame, d, |nodes, last| {
        prefix.truncate(at);
        tree_children::<COLOR, W>(to, nodes, last, prefix, inner, opts)
    })
}

/// A deferred records field's batches, walked and drawn one at a time: a
/// plain topic's records straight from their slots, the rest from nodes
/// built for the batch or record ([`for_each_piece`]).
fn deferred_children<const COLOR: bool, W: Write>(
    to: &mut Out<'_, '_, W>,
    d: &DeferredRecords,
    prefix: &mut Vec<u8>,
    inner: bool,
    opts: TreeOptions,
) -> io::Result<()> {
    let Some(drawer) = to.drawer.take() else {
        return Ok(());
    };
    let at = prefix.len();
    // Whether the last line drawn at each depth under a batch ends its
    // parent's children: the rails of the lines under it.
    let mut ends = [false; 8];
    let walked = for_each_piece(
        drawer.cat,
        &drawer.frame,
        d,
        (drawer.budget, drawer.hold),
        |piece| match piece {
            Piece::Nodes { nodes, last } => {
                prefix.truncate(at);
                tree_children::<COLOR, W>(to, nodes, last, prefix, inner, opts)
            }
            Piece::Line {
                line,
                at: (depth, e),
            } => {
                let depth = usize::from(depth).min(ends.len() - 1);
                prefix.truncate(at + 4 * depth);
                while prefix.len() < at + 4 * depth {
                    prefix.extend_from_slice(rail(ends[(prefix.len() - at) / 4]));
                }
                ends[depth] = e;
                node_line::<COLOR, W>(to, line, prefix, inner || line.inner, opts)
            }
            Piece::RecordNodes {
                nodes,
                last,
                depth,
                inner: within,
            } => {
                let depth = usize::from(depth).min(ends.len() - 1);
                prefix.truncate(at);
                while prefix.len() < at + 4 * depth {
                    prefix.extend_from_slice(rail(ends[(prefix.len() - at) / 4]));
                }
                tree_children::<COLOR, W>(to, nodes, last, prefix, inner || within, opts)
            }
        },
    );
    prefix.truncate(at);
    let drawn = walked.map(|found| drawer.found.push((d.clone(), found)));
    to.drawer = Some(drawer);
    drawn
}

/// The rails under a node for its children: `last` when it ends its parent's.
fn rail(last: bool) -> &'static [u8] {
    if last {
        b"    "
    } else {
        b"|   "
    }
}

/// One node's line under `prefix`, without its children.
#[inline(always)]
fn node_line<const COLOR: bool, W: Write>(
    to: &mut Out<'_, '_, W>,
    node: &impl LinePieces,
    prefix: &[u8],
    inner: bool,
    opts: TreeOptions,
) -> io::Result<()> {
    let line_start = to.buf.len();
    push_bytes(to.buf, prefix);
    to.buf.extend_from_slice(b"+-- ");
    push_line_in::<COLOR>(to.buf, node, opts, inner, line_start);
    to.buf.push(b'\n');
    if to.buf.len() >= to.spill {
        to.w.write_all(to.buf)?;
        to.buf.clear();
    }
    Ok(())
}

/// A frame as text: the tree, then its error and warnings.
pub fn render_frame(frame: &Frame, opts: TreeOptions) -> String {
    let mut out = render_tree(&frame.root, opts);
    push_findings_in(frame, opts.color, &mut out);
    out
}

/// [`render_frame`] written to `w`, in large writes.
pub fn write_frame(w: &mut impl Write, frame: &Frame, opts: TreeOptions) -> io::Result<()> {
    let mut buf = Vec::with_capacity(SPILL + 4096);
    write_tree_to(&mut buf, w, &frame.root, opts, (SPILL, None))?;
    push_findings_fitted(frame, opts, &mut buf);
    w.write_all(&buf)
}

/// [`write_frame`] for a frame whose decode left records fields for drawing
/// ([`crate::decode::DecodeOptions::defer_records_over`]): each is walked a
/// batch at a time as it is drawn, with `cat` and within `budget`, and what
/// the walks found joins the frame's warnings and record damage where the
/// decode would have put them, before they are written after the tree.
pub fn write_frame_drawing(
    w: &mut impl Write,
    frame: &mut Frame,
    opts: TreeOptions,
    walking: (&crate::schema::Catalogue, &crate::budget::Budget),
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(SPILL + 4096);
    draw_frame(&mut buf, w, frame, opts, (walking, Hold::ByItem, SPILL))?;
    w.write_all(&buf)
}

/// [`write_frame_drawing`] for a small frame: what its records decompress
/// is held against the budget until the frame is dropped, as its whole
/// decode would hold it (the same batches decoded, or over budget, as in
/// its other views); the tree is written as it is drawn.
pub(crate) fn write_frame_held(
    w: &mut impl Write,
    frame: &mut Frame,
    opts: TreeOptions,
    (cat, budget): (&crate::schema::Catalogue, &crate::budget::Budget),
) -> io::Result<()> {
    let before = budget.expanded();
    let mut buf = Vec::with_capacity(SPILL + 4096);
    let drawn = draw_frame(
        &mut buf,
        w,
        frame,
        opts,
        ((cat, budget), Hold::ByFrame, SPILL),
    );
    frame.held.join(crate::budget::Held::since(budget, before));
    drawn?;
    w.write_all(&buf)
}

/// [`write_frame_drawing`] appended to a byte buffer (no copy through
/// another), for a frame small enough to hold whole: what its records
/// decompress is held against `budget` until the frame is dropped, as its
/// whole decode would hold it, so that the same batches are decoded (or
/// over budget) as in its other views.
pub(crate) fn push_frame_drawing(
    out: &mut Vec<u8>,
    frame: &mut Frame,
    opts: TreeOptions,
    (cat, budget): (&crate::schema::Catalogue, &crate::budget::Budget),
) {
    let before = budget.expanded();
    let sink = &mut io::sink();
    let _ = draw_frame(
        out,
        sink,
        frame,
        opts,
        ((cat, budget), Hold::ByFrame, NO_SPILL),
    );
    frame.held.join(crate::budget::Held::since(budget, before));
}

/// A frame whose records fields are walked as they are drawn, into `buf`
/// (passed on to `w` at `spill` bytes), then its findings, those of the
/// walks among them.
fn draw_frame(
    buf: &mut Vec<u8>,
    w: &mut impl Write,
    frame: &mut Frame,
    opts: TreeOptions,
    ((cat, budget), hold, spill): (Walking, Hold, usize),
) -> io::Result<()> {
    let mut drawer = Drawer {
        cat,
        budget,
        hold,
        frame: frame.bytes.clone(),
        found: Vec::new(),
    };
    write_tree_to(buf, w, &frame.root, opts, (spill, Some(&mut drawer)))?;
    crate::decode::records::deferred::join_found(frame, drawer.found);
    push_findings_fitted(frame, opts, buf);
    Ok(())
}

/// What records fields left for drawing are walked with.
type Walking<'w> = (&'w crate::schema::Catalogue, &'w crate::budget::Budget);

/// The frame's warnings and error after its tree, each line fitted to the width.
fn push_findings_fitted(frame: &Frame, opts: TreeOptions, out: &mut Vec<u8>) {
    let mut findings = String::new();
    push_findings_in(frame, opts.color, &mut findings);
    let start = out.len();
    out.extend_from_slice(findings.as_bytes());
    if let Some(columns) = opts.width {
        crate::text::width::fit_each_line(out, start, columns);
    }
}

/// A frame's warnings and error, after its tree.
pub(crate) fn push_findings(frame: &Frame, out: &mut String) {
    push_findings_in(frame, false, out)
}

fn push_findings_in(frame: &Frame, color: bool, out: &mut String) {
    let (warning, error, reset) = match color {
        true => (
            Paint::<true>::WARNING,
            Paint::<true>::ERROR,
            Paint::<true>::RESET,
        ),
        false => (
            Paint::<false>::WARNING,
            Paint::<false>::ERROR,
            Paint::<false>::RESET,
        ),
    };
    // Each labelled as `check` rates it: one word for one fault in every view.
    for w in &frame.warnings {
        let severity = Rule::severity_of(w);
        let paint = match severity {
            Severity::Error => error,
            Severity::Warning | Severity::Note => warning,
        };
        out.push_str(&format!(
            "{paint}{}:{reset} {}\n",
            severity.as_str(),
            sanitize(&w.text)
        ));
    }
    if let Some(e) = &frame.error {
        out.push_str(&format!(
            "{error}error:{reset} {}\n",
            sanitize(&e.to_string())
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Region, Value};

    /// The cut of a tree line as it was made before each piece was measured
    /// once: every piece measured, every cut measuring its text again (what
    /// each piece keeps decided as [`fit_tree_line`] decides it). What
    /// [`fit_tree_line`] must agree with.
    fn fit_by_whole_measures(out: &mut Vec<u8>, marks: [usize; 6], columns: usize) {
        use crate::text::width::display_width;
        let [start, value, value_end, range, doc, error] = marks;
        let pieces = [
            start..value,
            value..value_end,
            value_end..range,
            range..doc,
            doc..error,
            error..out.len(),
        ];
        let cells = pieces.clone().map(|p| display_width(&out[p]));
        let Some((keep, over)) = pieces_kept(cells, columns) else {
            return;
        };
        let mut line = Vec::new();
        for (i, p) in pieces.iter().enumerate() {
            let at = line.len();
            match keep[i] {
                Some(0) => {}
                Some(n) => {
                    line.extend_from_slice(&out[p.clone()]);
                    fit_line(&mut line, at, n);
                }
                None => line.extend_from_slice(&out[p.clone()]),
            }
            if i == 2 && over > 0 {
                let label = display_width(&line);
                fit_line(&mut line, 0, label.saturating_sub(over).max(columns / 2));
            }
        }
        out.truncate(start);
        out.extend_from_slice(&line);
        if over > 0 {
            fit_line(out, start, columns);
        }
    }

    proptest::proptest! {
        #[test]
        fn a_line_is_cut_as_when_each_cut_measured_again(
            parts in proptest::collection::vec(proptest::collection::vec(0usize..11, 0..24), 6),
            columns in 20usize..130,
        ) {
            let mut line = b"|   +-- ".to_vec();
            let mut marks = [0; 6];
            for (k, piece) in parts.iter().enumerate() {
                marks[k] = line.len();
                for p in piece {
                    match p {
                        0 => line.extend_from_slice(b"0x0123456789abcdef"),
                        1 => line.extend_from_slice("…".as_bytes()),
                        2 => line.extend_from_slice("→".as_bytes()),
                        3 => line.extend_from_slice("日本".as_bytes()),
                        4 => line.extend_from_slice(b"\x1b[32m"),
                        5 => line.extend_from_slice(b"\x1b[0m"),
                        6 => line.extend_from_slice("\u{200b}".as_bytes()),
                        // Bytes no valid text has: invalid UTF-8, a lone escape.
                        7 => line.push(0xff),
                        8 => line.push(0xc3),
                        9 => line.push(0x1b),
                        _ => line.extend_from_slice(b" a"),
                    }
                }
            }
            marks[0] = 0;
            let mut want = line.clone();
            fit_by_whole_measures(&mut want, marks, columns);
            fit_tree_line(&mut line, marks, columns);
            proptest::prop_assert_eq!(
                String::from_utf8_lossy(&line),
                String::from_utf8_lossy(&want)
            );
        }
    }

    /// A tree whose text is far over [`SPILL`]: 3,000 elements of one field each.
    fn big_tree() -> Node {
        let mut root = Node::new(
            "Records",
            "[]Record",
            0,
            Region::RequestBody,
            Role::Structure,
        );
        for i in 0..3000 {
            let mut e = Node::new(
                format!("Record[{i}]"),
                "Record",
                i * 4,
                Region::Record,
                Role::Element,
            );
            let mut v = Node::new(
                "value",
                "int32",
                i * 4,
                Region::Record,
                Role::Field { decl: 0 },
            );
            v.len = 4;
            v.value = Value::Int(i as i64);
            e.children.push(v);
            root.children.push(e);
        }
        root
    }

    /// A bytes field under a struct, with a description and maybe an error.
    fn long_line(error: Option<&str>) -> Node {
        let mut root = Node::new("Body", "struct", 0, Region::RequestBody, Role::Structure);
        let mut v = Node::new(
            "value",
            "bytes",
            0x20,
            Region::Record,
            Role::Field { decl: 0 },
        );
        v.len = 24;
        v.value = Value::Bytes(Some(bytes::Bytes::from(vec![0xab; 24])));
        v.doc = Some(crate::text::Text::from_static(
            "the record's value, as the producer sent it",
        ));
        if let Some(e) = error {
            v.set_error(e);
        }
        root.children.push(v);
        root
    }

    fn drawn(root: &Node, width: usize) -> String {
        let opts = TreeOptions {
            width: Some(width),
            ..TreeOptions::default()
        };
        render_tree(root, opts).lines().nth(1).unwrap().to_string()
    }

    #[test]
    fn a_line_too_long_gives_up_its_description_then_its_value_and_keeps_its_range() {
        let root = long_line(None);
        let hex = "ab".repeat(24);
        assert_eq!(
            drawn(&root, 500),
            format!("+-- value bytes = 0x{hex} [0x0020, 24B] the record's value, as the producer sent it")
        );
        // The description first: cut with its mark while 12 cells are left, else gone.
        assert_eq!(
            drawn(&root, 110),
            format!("+-- value bytes = 0x{hex} [0x0020, 24B] the record's value, as the…")
        );
        assert_eq!(
            drawn(&root, 90),
            format!("+-- value bytes = 0x{hex} [0x0020, 24B]")
        );
        // Then the value's text, down to 20 cells.
        assert_eq!(
            drawn(&root, 60),
            format!("+-- value bytes = 0x{}a… [0x0020, 24B]", "ab".repeat(12))
        );
        // Then the label's end; the range stays.
        assert_eq!(drawn(&root, 40), "+-- value bytes = 0xababa… [0x0020, 24B]");
        for width in [40, 60, 90, 110, 500] {
            assert!(drawn(&root, width).chars().count() <= width);
        }
    }

    #[test]
    fn a_line_too_long_keeps_its_error_whole_while_it_can() {
        let root = long_line(Some("value: 24 bytes, but only 3 remain"));
        let line = drawn(&root, 100);
        assert!(
            line.ends_with("[0x0020, 24B] !! value: 24 bytes, but only 3 remain"),
            "{line}"
        );
        assert!(line.chars().count() <= 100, "{line}");
    }

    #[test]
    fn a_tree_drawn_into_memory_keeps_every_line_past_the_spill_size() {
        let root = big_tree();
        let text = render_tree(&root, TreeOptions::default());
        assert!(text.len() > 2 * SPILL, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 2 * 3000);
        assert_eq!(lines[0], "Records []Record [0x0000, 0B]");
        assert_eq!(lines[1], "+-- Record[0] Record [0x0000, 0B]");
        assert_eq!(lines[2], "|   +-- value int32 = 0 [0x0000, 4B]");
        assert_eq!(lines[6000], "    +-- value int32 = 2999 [0x2edc, 4B]");
        // Written through a writer in spills, the same bytes.
        let (mut buf, mut written) = (Vec::new(), Vec::new());
        write_tree_to(
            &mut buf,
            &mut written,
            &root,
            TreeOptions::default(),
            (SPILL, None),
        )
        .unwrap();
        written.extend_from_slice(&buf);
        assert_eq!(String::from_utf8(written).unwrap(), text);
    }
}
