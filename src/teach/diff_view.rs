//! Text views of `kwire diff`: field changes, header versions, the byte
//! alignment by field path, side-by-side hex grids with changed bytes marked,
//! and the release comparison.

use super::align::{byte_marks, Aligned, FramePair, Mark, Side};
use super::explain::explain;
use super::release_diff::{DefinitionDiff, ReleaseDiff};
use super::version_diff::{DirectionDiff, VersionDiff};
use crate::decode::frame::compress_versions;
use crate::render::values::value_text;
use crate::schema::diff::Change;
use crate::schema::MessageKind;
use std::fmt::Write;

/// Bytes of a field shown in the alignment table before cutting.
const TABLE_BYTES: usize = 8;
/// Bytes per row of the side-by-side grids.
const GRID_ROW: usize = 8;

const LEGEND: &str = "~ changed, + added, - removed";

/// ANSI 256-colour background for a mark.
fn mark_bg(m: Mark) -> Option<u8> {
    match m {
        Mark::Same => None,
        Mark::Changed => Some(229),
        Mark::Added => Some(151),
        Mark::Removed => Some(217),
    }
}

fn paint(s: &str, m: Mark, color: bool) -> String {
    match (color, mark_bg(m)) {
        (true, Some(bg)) => format!("\x1b[38;5;16;48;5;{bg}m{s}\x1b[0m"),
        _ => s.to_string(),
    }
}

fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

pub fn render_version_diff(d: &VersionDiff, color: bool) -> String {
    let mut out = format!(
        "{} v{} → v{} ({})\n",
        d.api,
        d.from,
        d.to,
        d.release.as_deref().map_or(
            "the newest definition of each version".to_string(),
            |r| format!("Kafka {r} definitions")
        )
    );
    for dir in &d.directions {
        let _ = write!(out, "\n== {} ==\n", dir.kind.as_str());
        direction(&mut out, d, dir, color);
    }
    out
}

fn direction(out: &mut String, d: &VersionDiff, dir: &DirectionDiff, color: bool) {
    out.push_str("fields:\n");
    if dir.changes.is_empty() {
        out.push_str("  no field changes\n");
    }
    for c in &dir.changes {
        let _ = writeln!(out, "  {}", c.describe());
    }
    let h = &dir.header;
    if h.from == h.to && h.same_rule {
        let _ = writeln!(out, "header: v{} at both versions: {}", h.to, h.to_reason);
    } else {
        let _ = writeln!(
            out,
            "header: v{} → v{}\n  v{}: {}\n  v{}: {}",
            h.from, h.to, d.from, h.from_reason, d.to, h.to_reason
        );
    }
    let (pair, title) = match &dir.same_values {
        None => (&dir.example, "smallest instance"),
        Some(s) => (&s.pair, "the same values at both versions"),
    };
    let _ = writeln!(
        out,
        "\n{title}: {} → {} bytes ({})",
        pair.from_size,
        pair.to_size,
        signed(pair.to_size as i64 - pair.from_size as i64)
    );
    if let Some(s) = &dir.same_values {
        let _ = writeln!(out, "  values: {}", s.body);
        if !s.dropped.is_empty() {
            let _ = writeln!(
                out,
                "  left out at v{} (no such field): {}",
                d.to,
                s.dropped.join(", ")
            );
        }
    }
    let _ = writeln!(
        out,
        "bytes by field path, v{} → v{} ({LEGEND}):",
        d.from, d.to
    );
    alignment_table(out, pair, dir.same_values.is_some());
    if let Some(s) = &dir.same_values {
        out.push_str("size difference by cause:\n");
        if s.causes.is_empty() {
            out.push_str("  none\n");
        }
        for c in &s.causes {
            let _ = writeln!(out, "  {:>5}  {}", signed(c.bytes), c.what);
        }
    }
    let _ = writeln!(
        out,
        "side by side ({LEGEND}; unmarked bytes are the same in both):"
    );
    side_by_side(
        out,
        pair,
        (&format!("v{}", d.from), &format!("v{}", d.to)),
        color,
    );
}

fn cut_hex(hex: &str) -> String {
    let bytes: Vec<&str> = hex.split(' ').filter(|s| !s.is_empty()).collect();
    if bytes.len() <= TABLE_BYTES {
        bytes.join(" ")
    } else {
        format!("{} … ({}B)", bytes[..TABLE_BYTES].join(" "), bytes.len())
    }
}

/// One line per leaf: mark, path, where it is, its bytes and its value in each
/// frame, and the size change. `explain_changes` adds both sides'
/// explanations for leaves that changed size.
fn alignment_table(out: &mut String, pair: &FramePair, explain_changes: bool) {
    let rows: Vec<&Aligned> = pair.alignment.iter().filter(|x| x.leaf).collect();
    let side_text = |x: &Aligned, side: Side| -> String {
        let Some(p) = x.side(side) else {
            return String::new();
        };
        let value = pair
            .node(side, p)
            .and_then(|(n, _)| value_text(n))
            .map_or(String::new(), |v| format!(" = {}", cut_value(&v)));
        format!("0x{:04x} {}{value}", p.offset, cut_hex(&p.hex))
    };
    let width = |side: Side| {
        rows.iter()
            .map(|x| side_text(x, side).chars().count())
            .max()
            .unwrap_or(0)
    };
    let (pw, aw, bw) = (
        rows.iter()
            .map(|x| x.path.chars().count())
            .max()
            .unwrap_or(0),
        width(Side::A),
        width(Side::B),
    );
    for x in rows {
        let delta = if x.delta() == 0 {
            String::new()
        } else {
            signed(x.delta())
        };
        let line = format!(
            "{} {:<pw$}  {:<aw$}  {:<bw$}  {delta}",
            x.mark.symbol(),
            x.path,
            side_text(x, Side::A),
            side_text(x, Side::B)
        );
        let _ = writeln!(out, "  {}", line.trim_end());
        if explain_changes && x.delta() != 0 {
            for side in [Side::A, Side::B] {
                let Some((node, parent)) = x.side(side).and_then(|p| pair.node(side, p)) else {
                    continue;
                };
                let lines = explain(node, parent, &pair.frame(side).bytes);
                if !lines.is_empty() {
                    let _ = writeln!(
                        out,
                        "      v{}: {}",
                        pair.frame(side).api_version.unwrap_or_default(),
                        lines.join("; ")
                    );
                }
            }
        }
    }
}

/// Values are cut in the table; the tree shows them whole.
fn cut_value(v: &str) -> String {
    const WIDTH: usize = 24;
    if v.chars().count() <= WIDTH {
        v.to_string()
    } else {
        format!("{}…", v.chars().take(WIDTH).collect::<String>())
    }
}

/// Both frames as hex rows side by side, each byte prefixed by its mark.
fn side_by_side(out: &mut String, pair: &FramePair, (la, lb): (&str, &str), color: bool) {
    let (a, b) = (&pair.from.bytes, &pair.to.bytes);
    let (ma, mb) = (
        byte_marks(&pair.alignment, Side::A, a.len()),
        byte_marks(&pair.alignment, Side::B, b.len()),
    );
    // A byte is a space, its mark and two hex digits: marks of neighbouring
    // bytes never run together (` ~00 ~00`, not `~00~00`), coloured or not.
    let width = 4 + 4 * GRID_ROW;
    let left = format!("{la} ({} bytes)", a.len());
    let _ = writeln!(out, "  {left:<width$}    {lb} ({} bytes)", b.len());
    let row = |bytes: &[u8], marks: &[Mark], r: usize| -> (String, usize) {
        let start = r * GRID_ROW;
        if start >= bytes.len() {
            return (String::new(), 0);
        }
        let end = (start + GRID_ROW).min(bytes.len());
        let cells: String = (start..end)
            .map(|i| {
                format!(
                    " {}",
                    paint(
                        &format!("{}{:02x}", marks[i].symbol(), bytes[i]),
                        marks[i],
                        color
                    )
                )
            })
            .collect();
        (format!("{start:04x}{cells}"), 4 + 4 * (end - start))
    };
    let rows = a.len().max(b.len()).div_ceil(GRID_ROW);
    for r in 0..rows {
        let ((left, lw), (right, _)) = (row(a, &ma, r), row(b, &mb, r));
        let pad = " ".repeat(width - lw);
        let _ = writeln!(out, "  {left}{pad}    {right}");
    }
}

pub fn render_release_diff(d: &ReleaseDiff) -> String {
    let n = d.definitions.len();
    let mut out = format!(
        "Kafka {} → {}: {n} definition{} differ{}\n",
        d.from,
        d.to,
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" }
    );
    for def in &d.definitions {
        out.push('\n');
        definition(&mut out, d, def);
    }
    out
}

fn kind_text(def: &DefinitionDiff) -> String {
    let kind = def.kind_to.or(def.kind_from);
    let key = match (kind, def.api_key) {
        (Some(MessageKind::Request | MessageKind::Response), Some(k)) => format!(", api key {k}"),
        (_, Some(k)) => format!(", type {k}"),
        _ => String::new(),
    };
    match (def.kind_from, def.kind_to) {
        (Some(a), Some(b)) if a != b => format!("{} → {}{key}", a.as_str(), b.as_str()),
        _ => format!("{}{key}", kind.map_or("", |k| k.as_str())),
    }
}

fn versions_text(v: &[i16]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        compress_versions(v)
    }
}

fn definition(out: &mut String, d: &ReleaseDiff, def: &DefinitionDiff) {
    let _ = writeln!(out, "{} ({})", def.name, kind_text(def));
    let mut notes = Vec::new();
    if def.versions_from.is_empty() {
        notes.push(format!("new in {}", d.to));
    } else if def.versions_to.is_empty() {
        notes.push(format!("no versions in {}: retired", d.to));
    }
    if !def.added_versions.is_empty() && !def.versions_from.is_empty() {
        notes.push(format!("added {}", compress_versions(&def.added_versions)));
    }
    if !def.removed_versions.is_empty() && !def.versions_to.is_empty() {
        notes.push(format!(
            "removed {}",
            compress_versions(&def.removed_versions)
        ));
    }
    if !def.now_stable.is_empty() {
        notes.push(format!("{} now stable", compress_versions(&def.now_stable)));
    }
    if !def.now_unstable.is_empty() {
        notes.push(format!(
            "{} now unstable",
            compress_versions(&def.now_unstable)
        ));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    };
    let _ = writeln!(
        out,
        "  versions: {} → {}{notes}",
        versions_text(&def.versions_from),
        versions_text(&def.versions_to)
    );
    for v in &def.versions {
        let what = match (v.new, v.against) {
            (true, Some(p)) => format!("v{} (new; against v{p})", v.version),
            (true, None) => format!("v{} (new)", v.version),
            (false, _) => format!("v{} (in both)", v.version),
        };
        let size = match (v.body_size_from, v.body_size_to) {
            (Some(a), Some(b)) if !v.new => {
                let hint = if a == b
                    && v.changes
                        .iter()
                        .any(|c| matches!(c, Change::Added { field } if field.tag.is_some()))
                {
                    " (a tagged field at its default is not written)"
                } else {
                    ""
                };
                format!("smallest body {a} → {b} bytes{hint}")
            }
            (_, Some(b)) => format!("smallest body {b} bytes"),
            _ => String::new(),
        };
        let _ = writeln!(out, "  {what}: {size}");
        if v.changes.is_empty() {
            out.push_str("    no field changes\n");
        }
        for c in &v.changes {
            let _ = writeln!(out, "    {}", c.describe());
        }
    }
}
