//! Captures recorded here from real clients (librdkafka's kcat, confluent-kafka
//! and kafka-python)
//! talking to a real Kafka-compatible broker (tansu) on 127.0.0.1, made by
//! scripts/record-captures.sh: every frame decodes, every response is paired,
//! and tshark's dissector agrees where it decodes (an ignored test: it needs
//! tshark, and `cargo test -- --include-ignored` fails without it).
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

mod common;

use kwire::capture::for_each_frame;
use kwire::decode::Direction;
use kwire::schema::Catalogue;
use std::path::{Path, PathBuf};

fn captures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures");
    // lone-response.pcap starts mid-connection on purpose: its first responses have no request.
    let whole = |p: &PathBuf| {
        p.extension().is_some_and(|e| e == "pcap") && !p.ends_with("lone-response.pcap")
    };
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(whole)
        .collect();
    v.sort();
    assert!(v.len() >= 3, "recorded captures present");
    v
}

#[test]
fn every_frame_of_the_real_captures_decodes_and_every_response_is_paired() {
    let cat = Catalogue::builtin();
    for path in captures() {
        let file = std::fs::File::open(&path).unwrap();
        let (mut requests, mut responses) = (0, 0);
        let mut apis = std::collections::BTreeSet::new();
        let stats = for_each_frame(cat, std::io::BufReader::new(file), None, |f| {
            let d = common::decode_captured(&f);
            assert!(
                d.error.is_none(),
                "{}: frame {}: {:?}",
                path.display(),
                f.index,
                d.error
            );
            match f.direction {
                Direction::Request => requests += 1,
                Direction::Response => {
                    assert!(
                        f.api_key.is_some(),
                        "{}: response {} unpaired",
                        path.display(),
                        f.index
                    );
                    responses += 1;
                }
            }
            apis.insert(d.api_key.unwrap_or(-1));
            true
        })
        .unwrap();
        assert!(stats.error.is_none());
        assert!(
            requests >= 4 && responses >= 4,
            "{}: {requests} requests, {responses} responses",
            path.display()
        );
        eprintln!(
            "{}: {requests} requests, {responses} responses, api keys {apis:?}",
            path.display()
        );
    }
}

#[test]
#[ignore = "needs tshark; bash .ci/run installs it and runs ignored tests"]
fn tshark_agrees_on_the_real_captures() {
    common::require_tools(
        "the comparison of the real captures with tshark",
        &[common::TSHARK, common::PYTHON3],
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/tshark-compare.py");
    for path in captures() {
        let out = std::process::Command::new("python3")
            .arg(&script)
            .arg(&path)
            .arg("19092")
            .arg(env!("CARGO_BIN_EXE_kwire"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{}:\n{text}", path.display());
        eprintln!("{}: {}", path.display(), text.lines().last().unwrap_or(""));
    }
}

/// A capture that starts mid-connection: the responses whose requests were
/// cut are kept and listed as unmatched (the broker endpoint is known from the
/// other connections), and `--guess` names them.
#[test]
fn a_connection_that_starts_with_a_response_is_listed() {
    let pcap = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures/lone-response.pcap");
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .arg("capture")
            .arg(&pcap)
            .arg("--list")
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (status, out) = run(&[]);
    assert_eq!(
        status,
        Some(0),
        "an unmatched response is no malformed frame"
    );
    let lone: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("unmatched response"))
        .collect();
    assert_eq!(lone.len(), 2, "{out}");
    assert!(lone.iter().all(|l| l.contains("conn 0 ←")), "{lone:?}");
    // The connection's addresses are said once, before its first row.
    assert!(
        out.lines()
            .any(|l| l.starts_with("conn 0 = ") && l.ends_with("→ 127.0.0.1:19092")),
        "{out}"
    );
    let (_, guessed) = run(&["--guess"]);
    assert!(
        guessed
            .lines()
            .any(|l| l.contains("Produce v") && l.contains("corr=3") && l.contains('←')),
        "{guessed}"
    );
}
