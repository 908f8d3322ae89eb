//! What `kwire export` runs: captures read into the tables
//! ([`crate::analysis::tables`]), several at once, each into a file of its
//! own in every table's folder, named after the capture
//! ([`file_names`]); the captures of a folder found by [`captures_in`].

use crate::analysis::filter::Filter;
use crate::analysis::tables::{export_capture, Counts, Reading};
use crate::capture::CaptureOptions;
use crate::render::tables::{Format, TableFiles};
use crate::schema::Catalogue;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A capture to export: where its bytes are, and how the tables' `capture`
/// column names it (`-` for standard input spooled to `path`).
#[derive(Clone, Debug)]
pub struct Input {
    pub path: PathBuf,
    pub shown: String,
}

/// How the captures are read and written.
pub struct Options<'a> {
    pub cat: &'a Catalogue,
    pub release: Option<&'a str>,
    pub capture: CaptureOptions,
    /// Only the exchanges it selects; an empty filter keeps everything.
    pub filter: Filter,
    pub format: Format,
    /// The folder the tables' folders go in.
    pub out: &'a Path,
    /// Captures read at once (at least one).
    pub jobs: usize,
}

/// What an export came to.
#[derive(Debug, Default)]
pub struct Exported {
    /// The rows written, over every capture exported.
    pub counts: Counts,
    /// Captures exported whole.
    pub done: usize,
    /// Captures that could not be, each reported to `failed` as it happened.
    pub failed: usize,
}

/// Export every input, `options.jobs` at a time; a capture that cannot be
/// read or written is handed to `failed` (its name as shown, and why) as
/// it happens, leaves no files, and the others go on.
pub fn export_all(
    inputs: &[Input],
    options: &Options<'_>,
    failed: &(dyn Fn(&str, &str) + Sync),
) -> Exported {
    let names = file_names(inputs);
    let next = AtomicUsize::new(0);
    let totals = Mutex::new(Exported::default());
    std::thread::scope(|s| {
        for _ in 0..options.jobs.clamp(1, inputs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let (Some(input), Some(name)) = (inputs.get(i), names.get(i)) else {
                    break;
                };
                let result = export_one(input, name, options);
                let mut t = totals.lock().unwrap_or_else(|e| e.into_inner());
                match result {
                    Ok(c) => {
                        t.counts.add(&c);
                        t.done += 1;
                    }
                    Err(e) => {
                        t.failed += 1;
                        failed(&input.shown, &e);
                    }
                }
            });
        }
    });
    totals.into_inner().unwrap_or_else(|e| e.into_inner())
}

fn export_one(input: &Input, name: &str, options: &Options<'_>) -> Result<Counts, String> {
    let mut files =
        TableFiles::create(options.out, name, options.format).map_err(|e| e.to_string())?;
    let open = || {
        std::fs::File::open(&input.path)
            .map(std::io::BufReader::new)
            .map_err(|e| e.to_string())
    };
    let reading = Reading {
        cat: options.cat,
        release: options.release,
        name: &input.shown,
        capture: options.capture.clone(),
        filter: options.filter.clone(),
    };
    match export_capture(reading, open, &mut files) {
        Ok(counts) => {
            files.finish().map_err(|e| e.to_string())?;
            Ok(counts)
        }
        Err(e) => {
            files.abandon();
            Err(e)
        }
    }
}

/// The captures in `dir` and the folders under it (`.pcap`, `.pcapng` and
/// `.cap` files), in name order.
pub fn captures_in(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    find_captures(dir, &mut found);
    found.sort();
    found
}

fn find_captures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            find_captures(&p, out);
        } else if p
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| matches!(x, "pcap" | "pcapng" | "cap"))
        {
            out.push(p);
        }
    }
}

/// Each input's file name in the tables' folders: its file name without
/// the extension (`stdin` for standard input); inputs of the same name get
/// `-2`, `-3`… in input order.
pub fn file_names(inputs: &[Input]) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::new();
    inputs
        .iter()
        .map(|i| {
            let stem = match i.shown.as_str() {
                "-" => "stdin".to_string(),
                _ => i
                    .path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "capture".into()),
            };
            // Never a hidden or partial-looking name, never empty.
            let stem = match stem.trim_start_matches('.') {
                "" => "capture".to_string(),
                s => s.to_string(),
            };
            // Unique among every name made, so no two captures share a file
            // (`x`, `x`, `x-2` become `x`, `x-2`, `x-2-2`).
            let mut name = stem.clone();
            let mut n = 1;
            while !seen.insert(name.clone()) {
                n += 1;
                name = format!("{stem}-{n}");
            }
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &str, shown: &str) -> Input {
        Input {
            path: path.into(),
            shown: shown.into(),
        }
    }

    #[test]
    fn file_names_are_unique_visible_and_never_empty() {
        let inputs = [
            input("a/x.pcap", "a/x.pcap"),
            input("b/x.pcapng", "b/x.pcapng"),
            input("c/x-2.pcap", "c/x-2.pcap"),
            input("/tmp/kwire-export-stdin-1.pcap", "-"),
            input("d/.hidden.pcap", "d/.hidden.pcap"),
            input("e/...pcap", "e/...pcap"),
        ];
        assert_eq!(
            file_names(&inputs),
            ["x", "x-2", "x-2-2", "stdin", "hidden", "capture"]
        );
    }

    #[test]
    fn a_folder_s_captures_are_found_whole_in_name_order() {
        let dir = std::env::temp_dir().join(format!("kwire-captures-in-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in [
            "b.pcapng",
            "a.pcap",
            "sub/c.cap",
            "notes.txt",
            "sub/d.pcap.gz",
        ] {
            std::fs::write(dir.join(f), b"").unwrap();
        }
        let found: Vec<String> = captures_in(&dir)
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, ["a.pcap", "b.pcapng", "sub/c.cap"]);
    }

    #[test]
    fn a_capture_that_fails_is_reported_and_the_others_are_exported() {
        let dir = std::env::temp_dir().join(format!("kwire-export-all-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let sample = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/captures/kafka-python.pcap"
        );
        let inputs = [
            input(sample, "kp.pcap"),
            input("/nonexistent.pcap", "gone.pcap"),
        ];
        let options = Options {
            cat: Catalogue::builtin(),
            release: None,
            capture: CaptureOptions::default(),
            filter: Filter::default(),
            format: Format::JsonLines,
            out: &dir,
            jobs: 2,
        };
        let said = Mutex::new(Vec::new());
        let exported = export_all(&inputs, &options, &|name, why| {
            said.lock().unwrap().push(format!("{name}: {why}"));
        });
        let exchanges = std::fs::read_to_string(dir.join("exchanges/kafka-python.jsonl"));
        let gone = dir.join("exchanges/nonexistent.jsonl").exists();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((exported.done, exported.failed), (1, 1));
        let said = said.into_inner().unwrap();
        assert_eq!(said.len(), 1);
        assert!(said[0].starts_with("gone.pcap: "), "{said:?}");
        let rows = exchanges.expect("the sample's exchanges").lines().count();
        assert!(rows > 0 && rows as u64 == exported.counts.exchanges);
        assert!(!gone, "a failed capture leaves no files");
    }
}
