//! Every shipped sample and capture through every view, in every format,
//! held to the bytes it printed when this list was last written: a change to
//! the decoder's representation or to a view's plumbing must not move a byte
//! of any output (issue #36, "the tape is the tree"). The list keeps each
//! command's exit status, output length and SHA-256 (stdout, stderr and a
//! written file), not the outputs themselves, which run to megabytes; the
//! snapshot tests in `tests/cli.rs` show what the outputs say.
//! `KWIRE_UPDATE_SNAPSHOTS=1` rewrites the list when a change is meant.

use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const LIST: &str = "snapshots/outputs.sha256";

/// The hex samples, each with the options that decode it.
const HEX: [(&str, &[&str]); 9] = [
    ("samples/delete-share-group-state-v0-request.hex", &[]),
    (
        "samples/delete-share-group-state-v0-response.hex",
        &[
            "--response",
            "--api",
            "DeleteShareGroupState",
            "--version",
            "0",
        ],
    ),
    (
        "samples/fetch-v12-response.hex",
        &["--response", "--api", "Fetch", "--version", "12"],
    ),
    ("samples/join-group-v9-request.hex", &[]),
    ("samples/produce-v9-consumer-offsets-request.hex", &[]),
    ("samples/produce-v9-request.hex", &[]),
    ("samples/sasl-authenticate-v2-request.hex", &[]),
    ("samples/write-share-group-state-v0-request.hex", &[]),
    (
        "samples/write-share-group-state-v0-response.hex",
        &[
            "--response",
            "--api",
            "WriteShareGroupState",
            "--version",
            "0",
        ],
    ),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every capture shipped, with its key log when one lies beside it.
fn captures() -> Vec<(String, Option<String>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "pcap" || e == "pcapng") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("samples/captures"), &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root()).unwrap().display().to_string();
            // tls13-chacha20.pcap and tls13-chacha20-dsb.pcapng share tls13-chacha20.keylog;
            // the -clear and -dsb ones need none.
            let stem = p.file_stem().unwrap().to_str().unwrap();
            let keylog = p.with_file_name(format!("{stem}.keylog"));
            let keylog = keylog
                .exists()
                .then(|| keylog.strip_prefix(root()).unwrap().display().to_string());
            (rel, keylog)
        })
        .collect()
}

/// Every command of the list: its arguments, and whether it writes `--out`.
fn commands() -> Vec<(Vec<String>, bool)> {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let mut out = Vec::new();
    for (file, opts) in HEX {
        for format in [
            &["--format", "tree"][..],
            &["--format", "grid"],
            &["--format", "json"],
            &["--format", "tree-json"],
            &["--explain"],
        ] {
            out.push(([s(&["decode", file]), s(opts), s(format)].concat(), false));
        }
        out.push(([s(&["check", file]), s(opts)].concat(), false));
    }
    for format in ["tree", "json", "dump"] {
        out.push((
            s(&[
                "records",
                "samples/00000000000000000000.log",
                "--format",
                format,
            ]),
            false,
        ));
    }
    for (file, keylog) in captures() {
        let keys: Vec<String> = keylog.map(|k| s(&["--tls-keylog", &k])).unwrap_or_default();
        let views: [&[&str]; 13] = [
            &["capture", "--list"],
            &["capture"],
            &["capture", "--format", "json"],
            &["capture", "--format", "tree-json"],
            &["capture", "--format", "grid"],
            &["stats"],
            &["stats", "--format", "json"],
            &["inventory"],
            &["inventory", "--format", "json"],
            &["check"],
            &["check", "--format", "json"],
            &["records"],
            &["records", "--format", "json"],
        ];
        for view in views {
            out.push(([s(view), s(&[&file]), keys.clone()].concat(), false));
        }
        out.push(([s(&["report", &file]), keys.clone()].concat(), true));
    }
    out
}

fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(12)
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// One line of the list: `exit stdout-length stdout-hash stderr-hash [file-length file-hash] | command`.
fn run(args: &[String], writes: bool, scratch: &Path) -> String {
    // KWIRE_BIN runs another build against the list (an older commit's, to
    // show that a redesign moved no byte).
    let bin = std::env::var("KWIRE_BIN").unwrap_or(env!("CARGO_BIN_EXE_kwire").into());
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .current_dir(root())
        .env("COLUMNS", "120")
        .env("NO_COLOR", "1")
        .env_remove("KWIRE_DEFS")
        .env_remove("CLICOLOR_FORCE");
    let written = scratch.join("out.html");
    if writes {
        let _ = std::fs::remove_file(&written);
        cmd.arg("--out").arg(&written);
    }
    let out = cmd.output().expect("kwire runs");
    // What it says of the file it wrote names the file: not part of the output.
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&*written.to_string_lossy(), "OUT");
    let mut line = format!(
        "{} {} {} {}",
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        out.stdout.len(),
        digest(&out.stdout),
        digest(stderr.as_bytes())
    );
    if writes {
        let file = std::fs::read(&written).unwrap_or_default();
        let _ = write!(line, " {} {}", file.len(), digest(&file));
    }
    format!("{line} | {}", args.join(" "))
}

#[test]
fn every_output_is_the_bytes_it_was() {
    let scratch = std::env::temp_dir().join(format!("kwire-outputs-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let lines: Vec<String> = commands()
        .iter()
        .map(|(args, writes)| run(args, *writes, &scratch))
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    let text = lines.join("\n") + "\n";
    let path = root().join(LIST);
    if std::env::var("KWIRE_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    // Each command's line against the same command's line in the list.
    let was: std::collections::HashMap<&str, &str> = old
        .lines()
        .filter_map(|o| Some((o.split_once(" | ")?.1, o)))
        .collect();
    let changed: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let cmd = l.split_once(" | ").map_or("", |(_, c)| c);
            let before = was.get(cmd).copied().unwrap_or("(not in the list)");
            (before != l).then(|| format!("  now {l}\n  was {before}"))
        })
        .collect();
    assert!(
        changed.is_empty() && old.lines().count() == lines.len(),
        "{} of {} outputs changed (rerun with KWIRE_UPDATE_SNAPSHOTS=1 if the change is meant):\n{}",
        changed.len(),
        lines.len(),
        changed.join("\n")
    );
    // The list must hold outputs worth holding: most commands succeed and
    // print, or write the file they are asked for (a report).
    let printed = lines
        .iter()
        .filter(|l| {
            let fields: Vec<&str> = l.split(" | ").next().unwrap_or("").split(' ').collect();
            fields.get(1).is_some_and(|n| *n != "0") || fields.get(4).is_some_and(|n| *n != "0")
        })
        .count();
    assert!(
        printed * 10 > lines.len() * 9,
        "{printed} of {} printed",
        lines.len()
    );
}

/// The benchmark inputs (the 100 MB mixed capture, the 22 MB Fetch frame of
/// 400,000 records, the 8.4 MB Metadata frame of 200,000 partitions) through
/// every view, held to `snapshots/big-outputs.sha256` by
/// `scripts/big-outputs.sh`: their outputs run to gigabytes, so the script
/// hashes them as they stream from a release build.
#[test]
#[ignore = "builds kwire in release and writes 170 MB of inputs; bash .ci/run runs ignored tests"]
fn the_big_inputs_print_the_bytes_they_did() {
    let out = Command::new("bash")
        .arg(root().join("scripts/big-outputs.sh"))
        .current_dir(root())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "scripts/big-outputs.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
