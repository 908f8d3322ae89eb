//! The explorer in a real terminal: runs scripts/tui-e2e.sh under tmux, when
//! tmux is installed.

use std::process::Command;

#[test]
fn explorer_in_a_real_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIP: tmux is not installed, so scripts/tui-e2e.sh cannot run (apt-get install -y tmux)");
        return;
    }
    // This test binary, asked to run only the panicking helper below.
    let me = std::env::current_exe().expect("test binary path");
    let panic_cmd = format!("'{}' --ignored --exact panic_inside_the_explorer_terminal --nocapture", me.display());
    let out = Command::new("sh")
        .arg("scripts/tui-e2e.sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("KWIRE_BIN", env!("CARGO_BIN_EXE_kwire"))
        .env("KWIRE_PANIC_CMD", panic_cmd)
        .output()
        .expect("run scripts/tui-e2e.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.contains("PASS: tui end-to-end"), "scripts/tui-e2e.sh failed:\n{stdout}");
    assert!(stdout.contains("terminal restored after panic"), "the panic check did not run:\n{stdout}");
}

/// Run by the script inside tmux: panics with the terminal in the explorer's
/// raw, alternate-screen mode; the panic hook must restore it.
#[test]
#[ignore = "run inside tmux by explorer_in_a_real_terminal"]
fn panic_inside_the_explorer_terminal() {
    let _terminal = kwire::tui::terminal::TerminalGuard::enter().expect("a terminal");
    panic!("deliberate panic with the terminal in raw mode");
}
