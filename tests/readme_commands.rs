//! Every `kwire` command in README.md's shell blocks runs as written against
//! the shipped samples: exit status 0 and some output. The commands run in a
//! scratch folder that sees the repository's `samples/` and `../shared`, with
//! the test binary first on PATH as `kwire`, so what they write stays there.
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Lines that cannot run unattended, and why (each is covered elsewhere).
const NOT_HERE: &[(&str, &str)] = &[
    ("cargo install", "installs into ~/.cargo (what it builds is what the tests use)"),
    ("completions bash >", "writes into the user's home (tests/shell_integration.rs checks completions)"),
    ("man -l", "needs man (tests/shell_integration.rs checks the page)"),
    ("--tui", "needs a terminal (tests/tui_e2e.rs drives the explorer in tmux)"),
    ("kwire tui", "needs a terminal (tests/tui_e2e.rs drives the explorer in tmux)"),
    ("capture -i", "needs root and runs until Ctrl-C (tests/live_capture.rs captures a Kafka exchange on loopback)"),
    ("tcpdump -U", "needs root and traffic (tests/live_capture.rs streams a pcap through standard input)"),
    ("--broker ", "needs a running Kafka broker (tests/proxy_e2e.rs runs proxy, send and probe against tansu)"),
    ("/var/lib/kafka", "needs a broker's data directory (tests/check.rs checks a partition's directory of segments)"),
];

/// Commands whose documented exit status is not 0 (a command starting so).
const EXPECTED_STATUS: &[(&str, i32)] = &[
    // librdkafka against tansu: JoinGroup v0 answered an error v0 cannot get; check exits 3 on errors.
    (
        "kwire check samples/captures/diagnosis/old-librdkafka.pcap",
        3,
    ),
    // kafka-python against tansu, whose Fetch v12 answers carry a tag of v16: exit 3.
    (
        "kwire check samples/captures/diagnosis/short-timeout.pcap",
        3,
    ),
    (
        "kwire check samples/captures/diagnosis/short-timeout-no-group.pcap",
        3,
    ),
    // Without its key log, a TLS capture's connections are not decrypted: exit 2.
    (
        "kwire capture samples/captures/tls/tls13-aes128gcm.pcap --list",
        2,
    ),
];

fn readme_commands() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        let line = line.trim();
        if in_sh && line.contains("kwire ") && !line.starts_with('#') {
            // A comment starts after two spaces and a `#`.
            let command = line.split("  #").next().unwrap_or(line).trim();
            out.push(command.to_string());
        }
    }
    out
}

/// A scratch folder `work/` with `samples` linked in, `shared` beside it, and `bin/kwire`.
fn scratch() -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("kwire-readme-{}", std::process::id()));
    let work = root.join("work");
    let bin = root.join("bin");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let link = |from: &Path, to: &Path| {
        let _ = std::fs::remove_file(to);
        std::os::unix::fs::symlink(from, to).unwrap();
    };
    link(&repo.join("samples"), &work.join("samples"));
    link(&repo.join("../shared"), &root.join("shared"));
    link(Path::new(env!("CARGO_BIN_EXE_kwire")), &bin.join("kwire"));
    (work, bin)
}

#[test]
fn every_readme_command_runs_as_written() {
    let commands = readme_commands();
    assert!(
        commands.len() > 30,
        "README commands found: {}",
        commands.len()
    );
    let (work, bin) = scratch();
    let shared = common::shared_dir("kafka-defs/4.0").is_some();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for command in &commands {
        if let Some((_, why)) = NOT_HERE.iter().find(|(marker, _)| command.contains(marker)) {
            eprintln!("not run here ({why}): {command}");
            continue;
        }
        if command.contains("../shared") && !shared {
            eprintln!("not run here (../shared is absent): {command}");
            continue;
        }
        // bash, for pipefail: a failing kwire early in a pipe fails the line.
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", command])
            .current_dir(&work)
            .env("PATH", &path)
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let expected = EXPECTED_STATUS
            .iter()
            .find(|(start, _)| command.starts_with(start))
            .map_or(0, |(_, status)| *status);
        assert_eq!(
            out.status.code(),
            Some(expected),
            "README command exited otherwise than documented: {command}\n{stderr}"
        );
        assert!(
            !(stdout.trim().is_empty() && stderr.trim().is_empty()),
            "README command printed nothing: {command}"
        );
        ran += 1;
    }
    eprintln!("{ran} of {} README commands ran", commands.len());
    let _ = std::fs::remove_dir_all(work.parent().unwrap());
}
