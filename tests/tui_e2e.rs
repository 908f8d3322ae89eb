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
