//! Every text view of every shipped capture fits 120 columns: `capture`
//! (tree and `--list`), `stats` by every grouping, `check`, `records` and
//! `inventory`, and `decode` of every shipped frame. Cells are counted as a
//! terminal shows them (wide characters two, colours none).

use kwire::text::width::display_width;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shipped_captures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "pcap" || e == "pcapng")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures"),
        &mut out,
    );
    out.sort();
    out
}

/// Lines of `kwire ARGS` over `columns` cells, with `COLUMNS` set to it.
fn too_wide(args: &[&str], columns: usize) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env("COLUMNS", columns.to_string())
        .env_remove("KWIRE_DEFS")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| display_width(l.as_bytes()) > columns)
        .map(|l| format!("{} cells: {l}", display_width(l.as_bytes())))
        .collect()
}

#[test]
fn every_text_view_of_every_shipped_capture_fits_120_columns() {
    let captures = shipped_captures();
    assert!(captures.len() >= 20, "{captures:?}");
    let views: [&[&str]; 6] = [
        &["capture"],
        &["capture", "--list"],
        &["stats", "--by", "api,client,conn,broker,topic"],
        &["check"],
        &["records"],
        &["inventory"],
    ];
    let mut over = Vec::new();
    for capture in &captures {
        let file = capture.to_str().unwrap();
        for view in views {
            let mut args = view.to_vec();
            args.insert(1, file);
            for line in too_wide(&args, 120) {
                over.push(format!("kwire {}: {line}", args.join(" ")));
            }
        }
    }
    assert!(
        over.is_empty(),
        "{} lines:\n{}",
        over.len(),
        over.join("\n")
    );
}

#[test]
fn every_shipped_frame_decodes_within_80_and_120_columns() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut over = Vec::new();
    for entry in std::fs::read_dir(&samples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "hex") {
            for columns in [80, 120] {
                let args = ["decode", path.to_str().unwrap()];
                over.extend(too_wide(&args, columns));
            }
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn the_api_table_fits_120_columns() {
    let over = too_wide(&["apis"], 120);
    assert!(over.is_empty(), "{}", over.join("\n"));
}

/// `--wide` lifts the limit: a capture's tree has lines over 120 columns.
#[test]
fn wide_prints_lines_whole() {
    let capture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures/confluent-kafka.pcap");
    let file = capture.to_str().unwrap();
    assert!(!too_wide(&["capture", file, "--wide"], 120).is_empty());
    assert!(too_wide(&["capture", file], 120).is_empty());
}
