//! scripts/docs-e2e.sh in a test: the docs site in headless Chromium (grid
//! cells, hover selection, console errors). Skipped, with the reason printed,
//! where Chromium or Node.js is not installed.

use std::path::Path;
use std::process::Command;

fn installed(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
}

#[test]
fn docs_site_works_in_headless_chromium() {
    let missing: Vec<&str> = [("chromium", installed("chromium") || installed("chromium-browser")), ("node", installed("node")), ("npm", installed("npm"))]
        .into_iter()
        .filter(|(_, ok)| !ok)
        .map(|(name, _)| name)
        .collect();
    if !missing.is_empty() {
        eprintln!("SKIP: scripts/docs-e2e.sh needs {} (apt-get install -y chromium nodejs npm)", missing.join(", "));
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("scripts/docs-e2e.sh"))
        .env("KWIRE_BIN", env!("CARGO_BIN_EXE_kwire"))
        .env("E2E_OUT", Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-e2e"))
        .output()
        .expect("run scripts/docs-e2e.sh");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "scripts/docs-e2e.sh failed:\n{text}");
    assert!(text.contains("DOM checks passed"), "{text}");
}
