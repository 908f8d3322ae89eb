//! The explorer in a real terminal: runs scripts/tui-e2e.sh under tmux.
//! Ignored by a plain `cargo test`; `cargo test -- --include-ignored` runs it
//! and fails when tmux is missing.

mod common;

use std::process::Command;

/// Set by the panic check that scripts/tui-e2e.sh runs inside tmux: this test
/// binary then panics with the terminal in the explorer's mode instead.
const PANIC_INSIDE_TERMINAL: &str = "KWIRE_E2E_PANIC_INSIDE_TERMINAL";

#[test]
#[ignore = "needs tmux; bash .ci/run installs it and runs ignored tests"]
fn explorer_in_a_real_terminal() {
    if std::env::var_os(PANIC_INSIDE_TERMINAL).is_some() {
        // Raw, alternate-screen mode: the panic hook must restore it.
        let _terminal = kwire::tui::terminal::TerminalGuard::enter().expect("a terminal");
        panic!("deliberate panic with the terminal in raw mode");
    }
    common::require_tools(
        "the terminal explorer's end-to-end test (scripts/tui-e2e.sh)",
        &[common::TMUX],
    );
    // This test binary, asked to run only this test, in its panicking role.
    let me = std::env::current_exe().expect("test binary path");
    let panic_cmd = format!(
        "{PANIC_INSIDE_TERMINAL}=1 '{}' --ignored --exact explorer_in_a_real_terminal --nocapture",
        me.display()
    );
    let out = Command::new("sh")
        .arg("scripts/tui-e2e.sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("KWIRE_BIN", env!("CARGO_BIN_EXE_kwire"))
        .env("KWIRE_PANIC_CMD", panic_cmd)
        .env_remove(PANIC_INSIDE_TERMINAL)
        .output()
        .expect("run scripts/tui-e2e.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("PASS: tui end-to-end"),
        "scripts/tui-e2e.sh failed:\n{stdout}"
    );
    assert!(
        stdout.contains("terminal restored after panic"),
        "the panic check did not run:\n{stdout}"
    );
}

/// The explorer over a real capture in a real terminal: scripts/explorer-capture-e2e.sh.
#[test]
#[ignore = "needs tmux; bash .ci/run installs it and runs ignored tests"]
fn capture_explorer_in_a_real_terminal() {
    common::require_tools(
        "the capture explorer's end-to-end test (scripts/explorer-capture-e2e.sh)",
        &[common::TMUX],
    );
    let out = Command::new("sh")
        .arg("scripts/explorer-capture-e2e.sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("KWIRE_BIN", env!("CARGO_BIN_EXE_kwire"))
        .output()
        .expect("run scripts/explorer-capture-e2e.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("PASS: capture explorer end-to-end"),
        "scripts/explorer-capture-e2e.sh failed:\n{stdout}"
    );
}

/// The explorer on one Metadata response of a topic of 200,000 partitions
/// (8.4 MB, a gigabyte as a whole tree) stays within 256 MB: its partitions
/// are held as a stub per element, and search and Enter open one
/// (scripts/explorer-big-array-e2e.sh, under /usr/bin/time).
#[test]
#[ignore = "needs tmux; bash .ci/run installs it and runs ignored tests"]
fn the_explorer_opens_an_array_of_200_000_partitions_within_256_mb() {
    const PARTITIONS: usize = 200_000;
    let response = common::metadata_response(1, PARTITIONS);
    assert!(response.len() > 8 << 20, "{} bytes", response.len());
    let script = ("explorer-big-array-e2e.sh", "big array");
    let peak = big_frame_in_the_explorer(script, response, PARTITIONS);
    assert!(peak < 256 << 10, "the explorer peaked at {peak} KiB");
}

/// The explorer on one Fetch response of 400,000 small records (22 MB, a
/// gigabyte as a whole tree) stays within 256 MB: its records field is held
/// as a stub per batch, and search and Enter open one
/// (scripts/explorer-big-frame-e2e.sh, under /usr/bin/time).
#[test]
#[ignore = "needs tmux; bash .ci/run installs it and runs ignored tests"]
fn the_explorer_opens_a_frame_of_400_000_records_within_256_mb() {
    let cat = kwire::schema::Catalogue::builtin();
    const BATCHES: usize = 4000;
    let records = common::batches::small_record_batches(BATCHES as i64);
    let response = common::batches::fetch_v4(cat, "orders", &records);
    assert!(response.len() > 20 << 20, "{} bytes", response.len());
    drop(records);
    let script = ("explorer-big-frame-e2e.sh", "big frame");
    let peak = big_frame_in_the_explorer(script, response, BATCHES);
    assert!(peak < 256 << 10, "the explorer peaked at {peak} KiB");
}

/// `scripts/SCRIPT FILE COUNT` run on `frame` written to a file: it passes
/// ("PASS: explorer on a WHAT end-to-end"), and the explorer's peak in KiB.
fn big_frame_in_the_explorer((script, what): (&str, &str), frame: Vec<u8>, count: usize) -> u64 {
    common::require_tools(
        &format!("the {what} explorer test (scripts/{script})"),
        &[common::TMUX],
    );
    assert!(
        std::path::Path::new("/usr/bin/time").exists(),
        "/usr/bin/time is missing (apt-get install time); the peak cannot be measured"
    );
    let dir = std::env::temp_dir().join(format!("kwire-{script}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("frame.bin");
    std::fs::write(&file, &frame).unwrap();
    drop(frame);
    let out = Command::new("sh")
        .arg(format!("scripts/{script}"))
        .arg(&file)
        .arg(count.to_string())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("KWIRE_BIN", env!("CARGO_BIN_EXE_kwire"))
        .output()
        .expect("run the script");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && stdout.contains(&format!("PASS: explorer on a {what} end-to-end")),
        "scripts/{script} failed:\n{stdout}"
    );
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("peak_kib="))
        .and_then(|v| v.trim().parse().ok())
        .expect("the script printed the peak")
}
