//! `kwire completions SHELL` and `kwire man`, made from the clap definitions.

use std::process::Command;

fn kwire(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
    )
}

#[test]
fn completions_name_every_command_in_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (status, out) = kwire(&["completions", shell]);
        assert_eq!(status, 0, "{shell}");
        for command in [
            "decode",
            "capture",
            "records",
            "encode",
            "docs",
            "completions",
            "man",
        ] {
            assert!(out.contains(command), "{shell} completions lack {command}");
        }
    }
    let (status, out) = kwire(&["completions", "bash"]);
    assert_eq!(status, 0);
    assert!(out.contains("_kwire()"), "{}", &out[..out.len().min(300)]);
    // Options of a subcommand complete too.
    assert!(out.contains("--max-decompressed"));
    let (status, _) = kwire(&["completions", "tcsh"]);
    assert_eq!(status, 2, "an unknown shell is a wrong command line");
}

#[test]
fn the_man_page_is_roff_and_one_page_per_command_can_be_written() {
    let (status, out) = kwire(&["man"]);
    assert_eq!(status, 0);
    assert!(
        out.starts_with(".ie") || out.starts_with(".TH"),
        "{}",
        &out[..out.len().min(200)]
    );
    assert!(
        out.contains(".TH kwire 1"),
        "{}",
        &out[..out.len().min(400)]
    );
    assert!(out.contains("decode"));
    let dir = std::env::temp_dir().join(format!("kwire-man-{}", std::process::id()));
    let (status, _) = kwire(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(status, 0);
    for page in [
        "kwire.1",
        "kwire-decode.1",
        "kwire-capture.1",
        "kwire-records.1",
    ] {
        let text =
            std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn decode_with(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kwire"));
    cmd.args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    String::from_utf8_lossy(&cmd.output().unwrap().stdout).into()
}

#[test]
fn colour_follows_the_flag_and_the_conventions() {
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/write-share-group-state-v0-request.hex"
    );
    let plain = decode_with(&["decode", sample], &[]);
    assert!(
        !plain.contains('\x1b'),
        "piped output has no colour by default"
    );
    let always = decode_with(
        &["--color", "always", "decode", sample],
        &[("NO_COLOR", "1")],
    );
    assert!(
        always.contains("\x1b[1mWriteShareGroupStateRequest\x1b[0m"),
        "{always}"
    );
    // The same text, less the escape codes.
    let stripped: String = always
        .split('\x1b')
        .enumerate()
        .map(|(i, s)| {
            if i == 0 {
                s
            } else {
                s.split_once('m').map_or(s, |(_, rest)| rest)
            }
        })
        .collect();
    assert_eq!(stripped, plain);
    assert!(!decode_with(
        &["--color", "never", "decode", sample],
        &[("CLICOLOR_FORCE", "1")]
    )
    .contains('\x1b'));
    assert!(decode_with(&["decode", sample], &[("CLICOLOR_FORCE", "1")]).contains('\x1b'));
    assert!(!decode_with(
        &["decode", sample],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]
    )
    .contains('\x1b'));
    // Errors are red.
    let cut = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/write-share-group-state-v0-request.hex"
    );
    let text = std::fs::read_to_string(cut).unwrap();
    let short: String = text
        .split_whitespace()
        .collect::<String>()
        .chars()
        .take(40)
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["--color", "always", "decode", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(short.as_bytes())
        .unwrap();
    let out = String::from_utf8_lossy(&child.wait_with_output().unwrap().stdout).to_string();
    assert!(
        out.contains("\x1b[1;31m!!") || out.contains("\x1b[1;31merror:"),
        "{out}"
    );
}

fn status_and_stderr(args: &[&str], stdin: &[u8]) -> (i32, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_wrong_command_line_is_status_2_everywhere() {
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/write-share-group-state-v0-request.hex"
    );
    // A response without the API and version it needs.
    assert_eq!(
        status_and_stderr(&["decode", "--response", sample], b"").0,
        2
    );
    // encode without a version.
    assert_eq!(status_and_stderr(&["encode", "Metadata"], b"{}").0, 2);
    // diff with one version.
    assert_eq!(status_and_stderr(&["diff", "Metadata", "8"], b"").0, 2);
    // clap's own errors.
    assert_eq!(status_and_stderr(&["decode", "--no-such-option"], b"").0, 2);
    assert_eq!(status_and_stderr(&["no-such-command"], b"").0, 2);
    // An unknown name is the input's fault, not the command line's.
    assert_eq!(
        status_and_stderr(&["encode", "NoSuchApi", "--version", "1"], b"{}").0,
        1
    );
}

#[test]
fn hex_text_given_to_records_gets_a_hint() {
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/write-share-group-state-v0-request.hex"
    );
    let (status, err) = status_and_stderr(&["records", sample], b"");
    assert_eq!(status, 2);
    assert!(err.contains("add --hex"), "{err}");
}

#[test]
fn every_option_of_encode_is_described_and_json_is_one_line() {
    let help = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["encode", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for option in [
        "--request",
        "--response",
        "--correlation-id",
        "--client-id",
        "--version",
        "--binary",
    ] {
        // clap writes the description after the option, or on the next line when long.
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with(option))
            .unwrap_or_else(|| panic!("{option} missing:\n{text}"));
        let same_line = lines[at]
            .trim_start()
            .trim_start_matches(option)
            .trim_start_matches(|c: char| c != ' ')
            .trim();
        let next_line = lines.get(at + 1).map_or("", |l| l.trim());
        let described =
            !same_line.is_empty() || (!next_line.is_empty() && !next_line.starts_with('-'));
        assert!(described, "{option} has no description:\n{text}");
    }
    for args in [
        &["diff", "Metadata", "8", "9", "--format", "json"][..],
        &["apis", "--format", "json"][..],
    ] {
        let (status, out) = kwire(args);
        assert_eq!(status, 0);
        assert_eq!(
            out.trim_end().lines().count(),
            1,
            "{args:?}: JSON on one line, as decode --json prints it"
        );
        serde_json::from_str::<serde_json::Value>(out.trim_end()).unwrap();
    }
}

#[test]
fn listings_show_a_date_time_and_the_json_keeps_epoch_seconds() {
    let pcap = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/captures/kafka-python.pcap"
    );
    let (status, out) = kwire(&["capture", pcap, "--list"]);
    assert_eq!(status, 0);
    // The first line names the connection; its first row follows.
    let first = out.lines().nth(1).unwrap();
    let time = first.split_whitespace().nth(1).unwrap();
    assert!(
        time.len() == 27 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
        "{first}"
    );
    let (_, json) = kwire(&["capture", pcap, "--json"]);
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert!(v["capture"]["time"].as_f64().unwrap() > 1.7e9);
}

#[test]
fn every_command_shows_examples_in_its_help() {
    let (_, top) = kwire(&["--help"]);
    // The commands clap lists, between "Commands:" and "Options:".
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("Options:"))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 14, "{commands:?}");
    for command in commands {
        let (status, help) = kwire(&[&command, "--help"]);
        assert_eq!(status, 0, "{command}");
        let examples = help
            .split("Examples:")
            .nth(1)
            .unwrap_or_else(|| panic!("kwire {command} --help has no examples"));
        assert!(
            examples
                .lines()
                .filter(|l| l.trim_start().starts_with("kwire ") || l.contains("| kwire"))
                .count()
                >= 2,
            "kwire {command}: {examples}"
        );
    }
}

#[test]
fn a_listing_is_text_only() {
    let pcap = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/captures/kcat.pcap");
    for extra in ["--json", "--format=tree-json", "--full-docs"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(["capture", pcap, "--list", extra])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "--list {extra} is refused, not ignored"
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
    }
}
