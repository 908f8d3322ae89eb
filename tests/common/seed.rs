//! The seed pages (../shared/seeds, text extracted from the HTML pages kwire
//! must match): finding a page, its object trees, and parsing a tree whose
//! whitespace was collapsed by the extraction back into nodes.

use std::path::Path;

/// One node of a tree as text: rails, label without its note, range, description.
#[derive(Debug, PartialEq)]
pub struct Line {
    pub rails: usize,
    pub label: String,
    pub offset: usize,
    pub len: usize,
    pub desc: String,
}

/// Split a whitespace-collapsed tree (as the seed pages hold it) into lines.
pub fn parse_collapsed(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    let mut rails = 0;
    loop {
        // The next node starts at the next " +-- " preceded by "| " rails.
        let next = rest.find(" +-- ");
        let (seg, after) = match next {
            Some(i) => (&rest[..i], Some(&rest[i + 5..])),
            None => (rest, None),
        };
        // Trailing "| | " tokens of this segment are the next node's rails.
        let mut seg = seg.trim_end();
        let mut next_rails = 0;
        while let Some(s) = seg
            .strip_suffix(" |")
            .or_else(|| if seg == "|" { Some("") } else { None })
        {
            next_rails += 1;
            seg = s.trim_end();
        }
        out.push(parse_line(seg, rails));
        rails = next_rails;
        match after {
            Some(a) => rest = a,
            None => break,
        }
    }
    out
}

fn parse_line(seg: &str, rails: usize) -> Line {
    let open = seg
        .find(" [0x")
        .unwrap_or_else(|| panic!("no range in {seg:?}"));
    let close = seg[open..].find(']').unwrap() + open;
    let (off, len) = seg[open + 4..close].split_once(", ").unwrap();
    Line {
        rails,
        label: strip_note(&seg[..open]),
        offset: usize::from_str_radix(off, 16).unwrap(),
        len: len.trim_end_matches('B').parse().unwrap(),
        desc: seg[close + 1..].trim().to_string(),
    }
}

/// Notes are kwire's own wording: drop trailing parenthesised groups.
fn strip_note(label: &str) -> String {
    let mut s = label.trim().to_string();
    while s.ends_with(')') {
        match s.rfind(" (") {
            Some(i) => s.truncate(i),
            None => break,
        }
    }
    s
}

pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The object trees of a seed page, in order (request, response).
pub fn seed_trees(page: &str) -> Vec<String> {
    seed_parts(page).into_iter().map(|p| p.tree).collect()
}

/// A description as the seed trees show it: cut at the tree's width.
pub fn as_shown(doc: &str) -> String {
    let width = kwire::render::text_tree::DOC_WIDTH;
    if doc.chars().count() > width + 3 {
        format!("{}...", doc.chars().take(width).collect::<String>())
    } else {
        doc.to_string()
    }
}

/// The metadata list under a seed page's title: `- API key` / `- 85` pairs.
pub fn seed_facts(page: &str) -> Vec<(String, String)> {
    let items: Vec<&str> = page
        .lines()
        .skip_while(|l| !l.starts_with("- "))
        .take_while(|l| l.starts_with("- "))
        .map(|l| &l[2..])
        .collect();
    items
        .chunks(2)
        .map(|c| (c[0].to_string(), c.get(1).unwrap_or(&"").to_string()))
        .collect()
}

/// The legend line (its labels run together in the extracted text).
pub fn seed_legend(page: &str) -> String {
    page.lines()
        .skip_while(|l| !l.starts_with("- "))
        .find(|l| !l.starts_with("- "))
        .unwrap_or_default()
        .to_string()
}

/// The request or response part of a seed page.
pub struct SeedPart {
    /// `WriteShareGroupStateRequest v0, request header v2, 78 bytes on the wire`
    pub caption: String,
    /// `byte layout (78 bytes, 16 bytes per row)`
    pub layout_title: String,
    /// Column headers `0`…`F`.
    pub columns: Vec<String>,
    /// Row offsets `0000`, `0010`, …
    pub rows: Vec<String>,
    /// The object tree, whitespace collapsed.
    pub tree: String,
    /// The schema text, whitespace collapsed.
    pub schema: String,
}

pub fn seed_parts(page: &str) -> Vec<SeedPart> {
    let lines: Vec<&str> = page.lines().collect();
    let starts: Vec<usize> = (0..lines.len().saturating_sub(2))
        .filter(|&i| {
            matches!(lines[i], "Request" | "Response") && lines[i + 2].starts_with("byte layout")
        })
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            let end = starts.get(n + 1).copied().unwrap_or(lines.len());
            let part = &lines[i..end];
            let tree_at = part
                .iter()
                .position(|l| *l == "object tree")
                .expect("object tree");
            let schema_at = part
                .iter()
                .position(|l| l.starts_with("kafka message schema"))
                .unwrap_or(part.len());
            SeedPart {
                caption: part[1].to_string(),
                layout_title: part[2].to_string(),
                columns: part[3..19].iter().map(|s| s.to_string()).collect(),
                rows: part[19..tree_at].iter().map(|s| s.to_string()).collect(),
                tree: collapse(&part[tree_at + 1..schema_at].join("\n")),
                schema: collapse(&part[(schema_at + 1).min(part.len())..].join("\n")),
            }
        })
        .collect()
}

/// The seed page whose file name starts with `prefix` (`000_`).
pub fn seed_page(dir: &Path, prefix: &str) -> String {
    let entry = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no seed page {prefix}*"));
    std::fs::read_to_string(entry.path()).unwrap()
}
