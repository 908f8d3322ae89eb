//! The library's public items are the ones something outside it names: the
//! binary (`src/cli`, `src/main.rs`), the tests, examples, benchmarks, fuzz
//! targets, or a documentation comment (its examples and links). Every other
//! item is `pub(crate)`, so the public API is what commands and users call,
//! and a new public item comes with a caller or a doc that shows it.
//!
//! Items are read by their declaration line (`pub fn`, `pub struct`, `pub
//! enum`, `pub const`, `pub static`, `pub type`, `pub trait` at the start
//! of a line) and names by whole words: a name used anywhere outside counts,
//! which errs on the side of public.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const KINDS: [&str; 7] = ["fn", "struct", "enum", "const", "static", "type", "trait"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn words(text: &str, into: &mut BTreeSet<String>) {
    for w in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if !w.is_empty() {
            into.insert(w.to_string());
        }
    }
}

/// The name a line declares public (`pub fn name`, …), if it does.
fn declared_public(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("pub ")?;
    let (kind, rest) = rest.split_once(' ')?;
    if !KINDS.contains(&kind) {
        return None;
    }
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end]).filter(|n| !n.is_empty())
}

#[test]
fn every_public_item_is_named_outside_the_library() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut library, mut outside) = (Vec::new(), Vec::new());
    rust_files(&root.join("src"), &mut library);
    library.retain(|p| !p.starts_with(root.join("src/cli")) && !p.ends_with("src/main.rs"));
    rust_files(&root.join("src/cli"), &mut outside);
    outside.push(root.join("src/main.rs"));
    for dir in ["tests", "examples", "benches", "fuzz/fuzz_targets"] {
        rust_files(&root.join(dir), &mut outside);
    }
    let mut named = BTreeSet::new();
    for p in &outside {
        words(&fs::read_to_string(p).unwrap_or_default(), &mut named);
    }
    // Documentation comments name the API they show; the exported macro
    // (`stderr_line!`) names what it expands to; a `pub use` re-exports on
    // purpose; a public signature, and a public struct's or enum's body,
    // name the types a caller of them meets (the item's own name aside).
    for p in &library {
        let text = fs::read_to_string(p).unwrap_or_default();
        named.extend(named_by_the_library(&text));
    }
    let mut unnamed = Vec::new();
    let mut public = 0;
    for p in &library {
        let text = fs::read_to_string(p).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let Some(name) = declared_public(line) else {
                continue;
            };
            public += 1;
            if !named.contains(name) {
                let file = p.strip_prefix(root).unwrap_or(p).display();
                unnamed.push(format!("{file}:{}: {name}", n + 1));
            }
        }
    }
    assert!(
        public > 500,
        "only {public} public items found: the reader is broken"
    );
    assert!(
        unnamed.is_empty(),
        "{} public items nothing outside the library names; make them pub(crate), \
         or show them in a doc or a test:\n{}",
        unnamed.len(),
        unnamed.join("\n")
    );
}

/// The names the library's own text makes public: see the caller.
fn named_by_the_library(text: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut in_signature = false;
    // The indentation of the public struct or enum whose body this is.
    let mut in_body: Option<usize> = None;
    for line in text.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if t.starts_with("///") || t.starts_with("//!") || t.contains("$crate::") {
            words(t, &mut named);
            continue;
        }
        if let Some(at) = in_body {
            if indent == at && t.starts_with('}') {
                in_body = None;
            } else {
                words(t, &mut named);
            }
            continue;
        }
        let declared = declared_public(t);
        if declared.is_some() || t.starts_with("pub use ") || in_signature {
            let mut here = BTreeSet::new();
            words(t, &mut here);
            here.remove(declared.unwrap_or_default());
            named.extend(here);
            // A signature rustfmt broke over lines goes on to its body or its end.
            let open = !t.contains('{') && !t.ends_with(';');
            in_signature = (t.starts_with("pub fn") || in_signature) && open;
            let body = t.starts_with("pub struct") || t.starts_with("pub enum");
            if body && t.ends_with('{') {
                in_body = Some(indent);
            }
        } else if let Some(field) = t.strip_prefix("pub ").filter(|f| f.contains(':')) {
            // A public field: its type.
            words(field.split_once(':').map_or("", |(_, ty)| ty), &mut named);
        }
    }
    named
}

#[test]
fn a_public_item_names_the_types_its_callers_meet() {
    let text = "pub enum Value {\n    Str(Span),\n}\npub fn read(\n    at: Offset,\n) -> Width {\n    Hidden\n}\npub struct S {\n    pub field: Slot,\n}\n";
    let named = named_by_the_library(text);
    for w in ["Span", "Offset", "Width", "Slot"] {
        assert!(named.contains(w), "{w}: {named:?}");
    }
    for w in ["Value", "read", "Hidden"] {
        assert!(!named.contains(w), "{w}: {named:?}");
    }
}

#[test]
fn declarations_are_read_by_kind_and_name() {
    assert_eq!(declared_public("pub fn run(x: u8) {"), Some("run"));
    assert_eq!(declared_public("    pub struct Frame<'a> {"), Some("Frame"));
    assert_eq!(declared_public("pub const MAX: usize = 1;"), Some("MAX"));
    assert_eq!(declared_public("pub(crate) fn hidden() {"), None);
    assert_eq!(declared_public("pub mod decode;"), None);
    assert_eq!(declared_public("pub use super::x;"), None);
    assert_eq!(declared_public("    pub name: String,"), None);
}
