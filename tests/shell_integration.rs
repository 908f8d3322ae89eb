//! `kwire completions SHELL` and `kwire man`, made from the clap definitions.

use std::process::Command;

fn kwire(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into())
}

#[test]
fn completions_name_every_command_in_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (status, out) = kwire(&["completions", shell]);
        assert_eq!(status, 0, "{shell}");
        for command in ["decode", "capture", "records", "encode", "docs", "completions", "man"] {
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
    assert!(out.starts_with(".ie") || out.starts_with(".TH"), "{}", &out[..out.len().min(200)]);
    assert!(out.contains(".TH kwire 1"), "{}", &out[..out.len().min(400)]);
    assert!(out.contains("decode"));
    let dir = std::env::temp_dir().join(format!("kwire-man-{}", std::process::id()));
    let (status, _) = kwire(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(status, 0);
    for page in ["kwire.1", "kwire-decode.1", "kwire-capture.1", "kwire-records.1"] {
        let text = std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
