//! The object tree as text, in the layout of the seed pages:
//! `+-- TopicId uuid = 0000… [0x0011, 16B] The topic identifier.`

use crate::text::escape::sanitize;
use super::values::value_text;
use crate::decode::{Frame, Node, Role, Value};

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
}

/// The escape codes of [`TreeOptions::color`]; all empty without colour.
struct Paint {
    name: &'static str,
    ty: &'static str,
    value: &'static str,
    dim: &'static str,
    error: &'static str,
    warning: &'static str,
    reset: &'static str,
}

impl Paint {
    fn new(color: bool) -> Paint {
        match color {
            true => Paint { name: "\x1b[1m", ty: "\x1b[36m", value: "\x1b[32m", dim: "\x1b[2m", error: "\x1b[1;31m", warning: "\x1b[33m", reset: "\x1b[0m" },
            false => Paint { name: "", ty: "", value: "", dim: "", error: "", warning: "", reset: "" },
        }
    }
}

/// The label of a node: name, type, `= value`, note.
pub fn label(node: &Node) -> String {
    let mut parts: Vec<String> = vec![sanitize(&node.name)];
    if !node.ty.is_empty() {
        parts.push(sanitize(&node.ty));
    }
    if let Some(v) = value_text(node) {
        parts.push(format!("= {v}"));
    }
    if let Some(n) = &node.note {
        parts.push(sanitize(n));
    }
    parts.join(" ")
}

/// One line without the tree prefix: label, range and description.
pub fn line(node: &Node, opts: TreeOptions) -> String {
    line_in(node, opts, false)
}

/// `decompressed` marks offsets that index a decompressed buffer (`[d:0x0000, 8B]`).
pub fn line_in(node: &Node, opts: TreeOptions, decompressed: bool) -> String {
    let space = if decompressed { "d:" } else { "" };
    let mut s = match opts.color {
        false => label(node),
        true => painted_label(node, &Paint::new(true)),
    };
    let p = Paint::new(opts.color);
    s.push_str(&format!(" {}[{space}0x{:04x}, {}B]{}", p.dim, node.offset, node.len, p.reset));
    if let Some(doc) = &node.doc {
        s.push(' ');
        s.push_str(p.dim);
        s.push_str(&cut_doc(&sanitize(doc), opts));
        s.push_str(p.reset);
    }
    if let Some(e) = node.error() {
        s.push_str(&format!(" {}!! {}{}", p.error, sanitize(e), p.reset));
    }
    s
}

/// [`label`] with each part in its colour.
fn painted_label(node: &Node, p: &Paint) -> String {
    let mut s = format!("{}{}{}", p.name, sanitize(&node.name), p.reset);
    if !node.ty.is_empty() {
        s.push_str(&format!(" {}{}{}", p.ty, sanitize(&node.ty), p.reset));
    }
    if let Some(v) = value_text(node) {
        s.push_str(&format!(" = {}{v}{}", p.value, p.reset));
    }
    if let Some(n) = &node.note {
        s.push_str(&format!(" {}{}{}", p.dim, sanitize(n), p.reset));
    }
    s
}

fn cut_doc(doc: &str, opts: TreeOptions) -> String {
    if opts.full_docs || doc.chars().count() <= DOC_WIDTH + 3 {
        doc.to_string()
    } else {
        let cut: String = doc.chars().take(DOC_WIDTH).collect();
        format!("{cut}...")
    }
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
    let mut out = vec![TreeLine { prefix: String::new(), node: root, decompressed: false }];
    push_children(root, "", false, &mut out);
    out
}

fn push_children<'a>(node: &'a Node, prefix: &str, decompressed: bool, out: &mut Vec<TreeLine<'a>>) {
    let n = node.children.len();
    let inner = decompressed || node.role == Role::Decompressed;
    for (i, c) in node.children.iter().enumerate() {
        out.push(TreeLine { prefix: format!("{prefix}+-- "), node: c, decompressed: inner });
        let rail = if i + 1 == n { "    " } else { "|   " };
        push_children(c, &format!("{prefix}{rail}"), inner, out);
    }
}

/// Extra lines under a node: gets the node, its parent, and the buffer its
/// offsets index (the frame, or a decompressed buffer below a decompressed node).
pub type Annotate<'a> = dyn Fn(&Node, Option<&Node>, &[u8]) -> Vec<String> + 'a;

/// The tree with `annotate`'s lines under each node, marked `· `.
pub fn render_tree_annotated(root: &Node, buf: &[u8], opts: TreeOptions, annotate: &Annotate) -> String {
    let mut out = line(root, opts);
    out.push('\n');
    push_notes(&annotate(root, None, buf), if root.children.is_empty() { "  " } else { "| " }, &mut out);
    let walk = Walk { opts, annotate };
    walk.children(root, buf, "", false, &mut out);
    out
}

fn push_notes(notes: &[String], prefix: &str, out: &mut String) {
    for n in notes {
        out.push_str(prefix);
        out.push_str("· ");
        out.push_str(&sanitize(n));
        out.push('\n');
    }
}

struct Walk<'a, 'b> {
    opts: TreeOptions,
    annotate: &'a Annotate<'b>,
}

impl Walk<'_, '_> {
    fn children(&self, node: &Node, buf: &[u8], prefix: &str, decompressed: bool, out: &mut String) {
        let n = node.children.len();
        let inner = decompressed || node.role == Role::Decompressed;
        // Below a decompressed node, offsets index the decompressed buffer it holds.
        let buf = match (&node.value, node.role) {
            (Value::Bytes(Some(b)), Role::Decompressed) => &b[..],
            _ => buf,
        };
        for (i, c) in node.children.iter().enumerate() {
            let last = i + 1 == n;
            out.push_str(prefix);
            out.push_str("+-- ");
            out.push_str(&line_in(c, self.opts, inner));
            out.push('\n');
            let child_prefix = format!("{prefix}{}", if last { "    " } else { "|   " });
            let rail = if c.children.is_empty() { "  " } else { "| " };
            push_notes(&(self.annotate)(c, Some(node), buf), &format!("{child_prefix}{rail}"), out);
            self.children(c, buf, &child_prefix, inner, out);
        }
    }
}

/// The whole tree as text, one line per node.
pub fn render_tree(root: &Node, opts: TreeOptions) -> String {
    let mut out = String::new();
    for l in tree_lines(root) {
        out.push_str(&l.prefix);
        out.push_str(&line_in(l.node, opts, l.decompressed));
        out.push('\n');
    }
    out
}

/// A frame as text: the tree, then its error and warnings.
pub fn render_frame(frame: &Frame, opts: TreeOptions) -> String {
    let mut out = render_tree(&frame.root, opts);
    push_findings_in(frame, opts.color, &mut out);
    out
}

/// A frame's warnings and error, after its tree.
pub fn push_findings(frame: &Frame, out: &mut String) {
    push_findings_in(frame, false, out)
}

fn push_findings_in(frame: &Frame, color: bool, out: &mut String) {
    let p = Paint::new(color);
    for w in &frame.warnings {
        out.push_str(&format!("{}warning:{} {}\n", p.warning, p.reset, sanitize(&w.text)));
    }
    if let Some(e) = &frame.error {
        out.push_str(&format!("{}error:{} {}\n", p.error, p.reset, sanitize(&e.to_string())));
    }
}
