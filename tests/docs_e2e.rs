//! scripts/docs-e2e.sh in a test: the docs site in headless Chromium (grid
//! cells, hover selection, console errors). Ignored by a plain `cargo test`;
//! `cargo test -- --include-ignored` runs it and fails when Chromium, Node.js
//! or npm is missing.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs chromium, node and npm; bash .ci/run installs them and runs ignored tests"]
fn docs_site_works_in_headless_chromium() {
    common::require_tools(
        "the docs site's end-to-end test (scripts/docs-e2e.sh)",
        &[common::CHROMIUM, common::NODE, common::NPM],
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("scripts/docs-e2e.sh"))
        .env("KWIRE_BIN", env!("CARGO_BIN_EXE_kwire"))
        .env(
            "E2E_OUT",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-e2e"),
        )
        .output()
        .expect("run scripts/docs-e2e.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "scripts/docs-e2e.sh failed:\n{text}");
    assert!(text.contains("DOM checks passed"), "{text}");
}
