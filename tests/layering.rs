//! The top-level modules under `src/` form layers: no module reaches, through
//! `crate::` paths, a module that reaches it back (ARCHITECTURE.md, "Layers").
//! Every `.rs` file belongs to its top-level module (`src/foo.rs` or
//! `src/foo/…`); its `crate::X` paths (and the binary's `kwire::X` paths), in
//! `use` lines and in code, outside comments and string literals, are its
//! edges. The command line (`src/cli`, `src/main.rs`) is the binary: it may
//! use every module, and no module may use it. Below, the same for sibling
//! files inside a module.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Module → modules it uses → where (the first `file:line` seen).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

#[test]
fn top_level_modules_have_no_cycles() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    // The reader must see the edges everyone knows are there, or it reads nothing.
    for (from, to) in [
        ("decode", "schema"),
        ("render", "decode"),
        ("cli", "decode"),
    ] {
        assert!(
            graph.get(from).is_some_and(|e| e.contains_key(to)),
            "no {from} -> {to} edge found: the reader of src/ is broken\n{}",
            describe(&graph)
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "top-level modules import each other in a cycle: {}\n\nall edges:\n{}",
            cycle_text(&graph, &cycle),
            describe(&graph)
        );
    }
}

#[test]
fn nothing_uses_the_command_line() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let users: Vec<String> = graph
        .iter()
        .filter(|(from, _)| !matches!(from.as_str(), "cli" | "main"))
        .filter_map(|(from, to)| to.get("cli").map(|at| format!("{from} ({at})")))
        .collect();
    assert!(
        users.is_empty(),
        "modules using the command line: {users:?}"
    );
}

#[test]
fn the_reader_skips_comments_and_strings_and_reads_groups() {
    let src = r##"
//! [`crate::docs`] in a doc comment
/// crate::tui in a doc comment
use crate::{decode::{Node, Value}, schema, self};
use crate::render::json;
/* crate::live in a block /* nested crate::live */ comment */
fn f<'a>(x: &'a str) -> char {
    let _ = "crate::analysis in a string \" crate::analysis";
    let _ = r#"crate::teach in a raw "string""#;
    let _ = b"crate::teach";
    let _ = crate::capture::x(); // crate::encode after code
    let _ = '"'; let _ = '\''; let _ = crate :: protocol::y;
    '{'
}
"##;
    let names: BTreeSet<String> = crate_paths(&strip_comments_and_strings(src), false)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let want: BTreeSet<String> = ["capture", "decode", "protocol", "render", "schema"]
        .map(String::from)
        .into();
    assert_eq!(names, want);
}

#[test]
fn a_cycle_is_found_and_named() {
    fn edge(g: &mut Graph, a: &str, b: &str) {
        g.entry(a.into())
            .or_default()
            .insert(b.into(), format!("src/{a}.rs:1"));
    }
    let mut g = Graph::new();
    edge(&mut g, "render", "decode");
    edge(&mut g, "decode", "schema");
    edge(&mut g, "schema", "text");
    assert_eq!(find_cycle(&g), None);
    edge(&mut g, "schema", "render");
    let cycle = find_cycle(&g).expect("a cycle");
    assert_eq!(cycle_text(&g, &cycle), "decode -> schema (src/decode.rs:1) -> render (src/schema.rs:1) -> decode (src/render.rs:1)");
}

/// The edges between top-level modules, read from every `.rs` file under `src`.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| top_module(src, f)).collect();
    let mut graph = Graph::new();
    for file in &files {
        let from = top_module(src, file);
        if from == "lib" {
            continue;
        }
        let binary = from == "cli" || from == "main";
        let text = fs::read_to_string(file).unwrap();
        let rel = file
            .strip_prefix(src.parent().unwrap())
            .unwrap()
            .display()
            .to_string();
        for (to, line) in crate_paths(&strip_comments_and_strings(&text), binary) {
            if to != from && modules.contains(&to) {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| format!("{rel}:{line}"));
            }
        }
    }
    graph
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `src/foo.rs` and `src/foo/…` are module `foo`.
fn top_module(src: &Path, file: &Path) -> String {
    let first = file.strip_prefix(src).unwrap().components().next().unwrap();
    let name = first.as_os_str().to_str().unwrap();
    name.strip_suffix(".rs").unwrap_or(name).to_string()
}

/// The source with comments (doc comments included) and the insides of
/// string and char literals blanked out; newlines kept, so lines still count.
fn strip_comments_and_strings(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        if c[i] == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (at(i + 1) == '"' || at(i + 1) == '#')
            && (i == 0 || !ident(c[i - 1]) || (c[i - 1] == 'b' && (i == 1 || !ident(c[i - 2]))))
        {
            // A raw string: r"…", r#"…"#, br"…".
            let mut j = i + 1;
            while at(j) == '#' {
                j += 1;
            }
            if at(j) != '"' {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            out.push('"');
            i = j + 1;
            while i < c.len() && !(c[i] == '"' && (1..=hashes).all(|h| at(i + h) == '#')) {
                out.push(blank(c[i]));
                i += 1;
            }
            out.push('"');
            i += 1 + hashes;
        } else if c[i] == '"' {
            out.push('"');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c[i] == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal ('x', '\'', '\u{1b}'); a lifetime has no closing quote.
            out.push('\'');
            i += 1;
            if at(i) == '\\' {
                i += 2;
            } else {
                i += 1;
            }
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            out.push_str(" '");
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The first segment of every `crate::` path (and, in the binary, `kwire::`
/// path) with its line; `crate::{a::…, b}` gives `a` and `b`.
fn crate_paths(code: &str, binary: bool) -> Vec<(String, usize)> {
    let c: Vec<char> = code.chars().collect();
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let word_at = |i: usize| -> String { c[i..].iter().take_while(|ch| ident(**ch)).collect() };
    let skip_space = |mut i: usize| {
        while i < c.len() && c[i].is_whitespace() {
            i += 1;
        }
        i
    };
    let line_of = |i: usize| c[..i].iter().filter(|ch| **ch == '\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if !ident(c[i]) || (i > 0 && (ident(c[i - 1]) || c[i - 1] == '$')) {
            i += 1;
            continue;
        }
        let word = word_at(i);
        let start = i;
        i += word.len();
        if !(word == "crate" || (binary && word == "kwire")) {
            continue;
        }
        let j = skip_space(i);
        if !(c.get(j) == Some(&':') && c.get(j + 1) == Some(&':')) {
            continue;
        }
        let j = skip_space(j + 2);
        if c.get(j) == Some(&'{') {
            // Each item of the group at depth one.
            let (mut k, mut depth, mut item_start) = (j + 1, 1, true);
            while k < c.len() && depth > 0 {
                match c[k] {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => item_start = true,
                    ch if item_start && ident(ch) => {
                        item_start = false;
                        if depth == 1 {
                            let name = word_at(k);
                            k += name.len();
                            if name != "self" {
                                found.push((name, line_of(start)));
                            }
                            continue;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            i = k;
        } else if c.get(j).is_some_and(|ch| ident(*ch)) {
            found.push((word_at(j), line_of(start)));
        }
    }
    found
}

/// A cycle as the modules on it, its first one repeated last; `None` when the
/// graph has none.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        n: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(n) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = path.iter().position(|p| p == n).unwrap();
                let mut cycle = path[from..].to_vec();
                cycle.push(n.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(n.to_string(), Mark::Open);
        path.push(n.to_string());
        for next in graph.get(n).into_iter().flat_map(|e| e.keys()) {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(n.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for n in graph.keys() {
        if let Some(cycle) = visit(n, graph, &mut marks, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}

/// `a -> b (where a uses b) -> a (where b uses a)`.
fn cycle_text(graph: &Graph, cycle: &[String]) -> String {
    let mut text = cycle[0].clone();
    for pair in cycle.windows(2) {
        text.push_str(&format!(" -> {} ({})", pair[1], graph[&pair[0]][&pair[1]]));
    }
    text
}

fn describe(graph: &Graph) -> String {
    graph
        .iter()
        .map(|(from, to)| {
            format!(
                "  {from} -> {}\n",
                to.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Files inside a module: no two siblings reach each other, directly or round
// about (ARCHITECTURE.md, "Layers"). A sibling is a file or a folder of files
// (one node at its parent's level); a module's own root file (`mod.rs`, or
// `foo.rs` beside `foo/`) is its face and may use its children and be used by
// them. A path that names an item through a module's face (`crate::decode::Node`)
// is followed to the child that defines it.

/// A module path below `src`: `["decode", "tree"]` is `src/decode/tree.rs`.
type ModPath = Vec<String>;

/// One level of the tree: the module whose children are the siblings, and
/// the edges between them (child → child → where).
type Levels = BTreeMap<String, Graph>;

#[test]
fn sibling_files_have_no_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let levels = sibling_graphs(&src);
    // The reader must see edges everyone knows are there.
    for (level, from, to) in [
        ("decode", "frame", "values"),
        ("decode", "fields", "tree"),
        ("capture", "flows", "tcp"),
    ] {
        assert!(
            levels
                .get(level)
                .and_then(|g| g.get(from))
                .is_some_and(|e| e.contains_key(to)),
            "no {level}: {from} -> {to} edge found: the reader of src/ is broken\n{}",
            levels.get(level).map(describe).unwrap_or_default()
        );
    }
    let cycles: Vec<String> = levels
        .iter()
        .filter_map(|(level, graph)| {
            find_cycle(graph).map(|c| {
                format!(
                    "in {level}: {}\n  its edges:\n{}",
                    cycle_text(graph, &c),
                    describe(graph)
                )
            })
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "sibling files import each other in a cycle:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn a_sibling_edge_is_followed_through_a_module_face() {
    let code = "use crate::decode::{Node, values::Slot};\nuse super::flows::{self, MAX};\nfn f() { tree::leaf(); crate::decode::records::tape::walk(); }\n";
    let paths: Vec<String> = full_paths(code, &vec!["decode".to_string(), "fields".to_string()])
        .into_iter()
        .map(|(p, _)| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "decode::Node",
            "decode::values::Slot",
            "decode::flows",
            "decode::flows::MAX",
            "decode::records::tape::walk"
        ]
    );
}

/// Every file's module path.
fn module_files(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    files
        .into_iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(src).unwrap();
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_str().unwrap().to_string())
                .collect();
            let last = parts.pop().unwrap();
            let stem = last.strip_suffix(".rs").unwrap().to_string();
            if stem != "mod" {
                parts.push(stem);
            }
            (!parts.is_empty() && !matches!(parts[0].as_str(), "lib" | "main"))
                .then_some((parts, f))
        })
        .collect()
}

/// The sibling edges at every level of every top-level module.
fn sibling_graphs(src: &Path) -> Levels {
    let files = module_files(src);
    let texts: BTreeMap<&ModPath, String> = files
        .iter()
        .map(|(m, f)| {
            (
                m,
                strip_comments_and_strings(&fs::read_to_string(f).unwrap()),
            )
        })
        .collect();
    let mut levels = Levels::new();
    for (from, text) in &texts {
        for (path, line) in full_paths(text, from) {
            let Some(to) = resolve(&path, &files, &texts) else {
                continue;
            };
            if to[0] != from[0] {
                continue; // between top-level modules: the other test's
            }
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            // A module's face may use its children and be used by them.
            if common == from.len() || common == to.len() {
                continue;
            }
            let level = from[..common].join("::");
            let rel = files[*from].strip_prefix(src.parent().unwrap()).unwrap();
            levels
                .entry(level)
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .entry(to[common].clone())
                .or_insert_with(|| format!("{}:{line}", rel.display()));
        }
    }
    levels
}

/// The file a full path reaches: the deepest module on it, or, when that is
/// a face that does not define the item, the child that does.
fn resolve(
    path: &[String],
    files: &BTreeMap<ModPath, PathBuf>,
    texts: &BTreeMap<&ModPath, String>,
) -> Option<ModPath> {
    let depth = (1..=path.len())
        .rev()
        .find(|n| files.contains_key(&path[..*n]))?;
    let module = path[..depth].to_vec();
    let Some(item) = path.get(depth) else {
        return Some(module);
    };
    if defines(&texts[&module], item) {
        return Some(module);
    }
    let definers: Vec<&ModPath> = texts
        .iter()
        .filter(|(m, text)| m.len() > depth && m[..depth] == module[..] && defines(text, item))
        .map(|(m, _)| *m)
        .collect();
    match definers.as_slice() {
        [one] => Some((*one).clone()),
        _ => Some(module),
    }
}

/// Whether code defines an item of that name.
fn defines(code: &str, name: &str) -> bool {
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|w| {
        w[1] == name
            && matches!(
                w[0],
                "fn" | "struct"
                    | "enum"
                    | "const"
                    | "static"
                    | "type"
                    | "trait"
                    | "union"
                    | "macro_rules!"
            )
    })
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Sep,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

/// Every path in code made absolute (`crate::`, `super::`, `self::` and the
/// file's own child modules), groups spread out, with its line. Paths inside
/// an inline `mod name { … }` are relative to that module.
fn full_paths(code: &str, file: &ModPath) -> Vec<(ModPath, usize)> {
    let mut toks: Vec<(Tok, usize)> = Vec::new();
    let (mut line, mut chars) = (1, code.chars().peekable());
    while let Some(c) = chars.next() {
        let tok = match c {
            '\n' => {
                line += 1;
                continue;
            }
            c if c.is_whitespace() => continue,
            c if c.is_alphanumeric() || c == '_' => {
                let mut w = c.to_string();
                while let Some(&n) = chars.peek() {
                    if n.is_alphanumeric() || n == '_' {
                        w.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                Tok::Word(w)
            }
            ':' if chars.peek() == Some(&':') => {
                chars.next();
                Tok::Sep
            }
            '{' => Tok::Open,
            '}' => Tok::Close,
            ',' => Tok::Comma,
            '*' => Tok::Star,
            _ => Tok::Other,
        };
        toks.push((tok, line));
    }
    let children: BTreeSet<String> = toks
        .windows(3)
        .filter_map(|w| match (&w[0].0, &w[1].0, &w[2].0) {
            (Tok::Word(m), Tok::Word(name), Tok::Other) if m == "mod" => Some(name.clone()),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    // Inline modules: (the brace depth their block opened at, their path).
    let mut inline: Vec<(usize, ModPath)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let here = inline
            .last()
            .map(|(_, m)| m.clone())
            .unwrap_or(file.clone());
        match &toks[i].0 {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth -= 1;
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Word(m) if m == "mod" => {
                if let (Some((Tok::Word(name), _)), Some((Tok::Open, _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    let mut inner = here.clone();
                    inner.push(name.clone());
                    inline.push((depth, inner));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Word(w) => {
                let after_sep = i > 0 && toks[i - 1].0 == Tok::Sep;
                let start: Option<ModPath> = match w.as_str() {
                    _ if after_sep => None,
                    "crate" => Some(Vec::new()),
                    "self" => Some(here.clone()),
                    "super" => Some(here[..here.len().saturating_sub(1)].to_vec()),
                    w if inline.is_empty() && children.contains(w) => {
                        let mut m = here.clone();
                        m.push(w.to_string());
                        Some(m)
                    }
                    _ => None,
                };
                if let Some(start) = start {
                    let line = toks[i].1;
                    let mut paths = Vec::new();
                    // A bare child module name is a path only when followed by `::`.
                    let bare_child = !matches!(w.as_str(), "crate" | "self" | "super");
                    let has_sep = toks.get(i + 1).is_some_and(|t| t.0 == Tok::Sep);
                    if bare_child && !has_sep {
                        i += 1;
                        continue;
                    }
                    i = path_rest(&toks, i + 1, start, &here, &mut paths);
                    out.extend(paths.into_iter().map(|p| (p, line)));
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads `::a::b::{c, d::e}` after a path's start; pushes each full path and
/// returns the index after it.
fn path_rest(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: ModPath,
    here: &ModPath,
    out: &mut Vec<ModPath>,
) -> usize {
    while toks.get(i).is_some_and(|t| t.0 == Tok::Sep) {
        match toks.get(i + 1).map(|t| &t.0) {
            Some(Tok::Word(w)) if w == "super" => {
                prefix.pop();
                i += 2;
            }
            Some(Tok::Word(w)) if w == "self" => i += 2,
            Some(Tok::Word(w)) => {
                prefix.push(w.clone());
                i += 2;
            }
            Some(Tok::Open) => {
                i += 2;
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Close) => return i + 1,
                        Some(Tok::Comma) => i += 1,
                        Some(Tok::Word(w)) if w == "self" => {
                            out.push(prefix.clone());
                            i += 1;
                        }
                        Some(Tok::Word(w)) if w == "as" => i += 2,
                        Some(Tok::Word(w)) => {
                            let mut inner = prefix.clone();
                            inner.push(w.clone());
                            i = path_rest(toks, i + 1, inner, here, out);
                        }
                        Some(Tok::Star) => {
                            out.push(prefix.clone());
                            i += 1;
                        }
                        None => return i,
                        _ => i += 1,
                    }
                }
            }
            _ => {
                i += 2;
                break;
            }
        }
    }
    let _ = here;
    out.push(prefix);
    i
}
