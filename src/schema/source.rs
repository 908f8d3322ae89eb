//! Where definitions come from at run time (`--defs PATH` / `KWIRE_DEFS`): a folder
//! of definition files, a Kafka source tree, a `kafka-clients-*.jar`, or a Kafka
//! distribution's `libs/` folder (every jar in it that carries definitions).

use super::import::parse_definition;
use super::message::MessageSpec;
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Folders that never hold definitions; skipping them keeps a source-tree walk fast.
const SKIP_DIRS: &[&str] = &[
    ".git",
    "build",
    "target",
    "node_modules",
    "test",
    "tests",
    ".gradle",
    "bin",
    "out",
];
const MAX_DEPTH: usize = 12;
/// A definition file is small; anything larger is not one (and is not read whole).
const MAX_DEF_BYTES: u64 = 4 << 20;

/// Load every definition found at `path`. Files that are not definitions are
/// skipped; a definition that fails to parse is an error naming the file.
pub fn load_definitions(path: &Path) -> Result<Vec<MessageSpec>, String> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    if path.is_file() {
        if is_jar(path) {
            load_jar(path, &mut out, &mut seen)?;
        } else {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            push_spec(
                parse_definition(&text, &path.display().to_string())?,
                &mut out,
                &mut seen,
            );
        }
    } else if path.is_dir() {
        let mut files = Vec::new();
        walk(path, 0, &mut files);
        files.sort();
        for f in files {
            if is_jar(&f) {
                load_jar(&f, &mut out, &mut seen)?;
            } else if let Some(text) = read_small(&f) {
                if looks_like_definition(&text) {
                    push_spec(
                        parse_definition(&text, &f.display().to_string())?,
                        &mut out,
                        &mut seen,
                    );
                }
            }
        }
    } else {
        return Err(format!("{}: no such file or folder", path.display()));
    }
    if out.is_empty() {
        return Err(format!(
            "{}: no Kafka message definitions found",
            path.display()
        ));
    }
    Ok(out)
}

fn push_spec(spec: MessageSpec, out: &mut Vec<MessageSpec>, seen: &mut HashSet<String>) {
    // The first definition of a name wins (a tree may hold copies, e.g. in docs).
    if seen.insert(spec.name.clone()) {
        out.push(spec);
    }
}

fn is_jar(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "jar")
}

fn walk(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if !SKIP_DIRS.contains(&name.as_ref()) && !name.starts_with('.') {
                walk(&p, depth + 1, files);
            }
        } else if ft.is_file()
            && (name.ends_with(".json") || (name.ends_with(".jar") && jar_may_hold_defs(&name)))
        {
            files.push(p);
        }
    }
}

/// Only Kafka's own jars carry definitions; skip the hundreds of dependency jars in `libs/`.
fn jar_may_hold_defs(name: &str) -> bool {
    name.starts_with("kafka")
        || name.contains("coordinator")
        || name.contains("metadata")
        || name.contains("raft")
}

fn read_small(p: &Path) -> Option<String> {
    let meta = std::fs::metadata(p).ok()?;
    if meta.len() > MAX_DEF_BYTES {
        return None;
    }
    std::fs::read_to_string(p).ok()
}

/// Cheap test before parsing: a definition names one of the schema-language kinds.
fn looks_like_definition(text: &str) -> bool {
    text.contains("\"validVersions\"") && text.contains("\"type\"") && text.contains("\"name\"")
}

fn load_jar(
    path: &Path,
    out: &mut Vec<MessageSpec>,
    seen: &mut HashSet<String>,
) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .map_err(|e| format!("{}: not a readable jar: {e}", path.display()))?;
    let mut names: Vec<String> = zip
        .file_names()
        .filter(|n| {
            (n.starts_with("common/message/") || n.starts_with("common/metadata/"))
                && n.ends_with(".json")
        })
        .map(str::to_string)
        .collect();
    names.sort();
    for name in names {
        let mut entry = zip
            .by_name(&name)
            .map_err(|e| format!("{}!{name}: {e}", path.display()))?;
        if entry.size() > MAX_DEF_BYTES {
            continue;
        }
        let mut text = String::new();
        // Bounded read: the declared size is untrusted.
        (&mut entry)
            .take(MAX_DEF_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| format!("{}!{name}: {e}", path.display()))?;
        if looks_like_definition(&text) {
            push_spec(
                parse_definition(&text, &format!("{}!{name}", path.display()))?,
                out,
                seen,
            );
        }
    }
    Ok(())
}
