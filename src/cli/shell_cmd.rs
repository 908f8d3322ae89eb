//! `kwire completions SHELL` and `kwire man`: generated from the clap
//! definitions themselves, so they never disagree with `--help`.

use super::exit;
use clap::Args;
use clap_complete::Shell;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire completions bash > ~/.local/share/bash-completion/completions/kwire\n  kwire completions zsh > \"${fpath[1]}/_kwire\""
)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: Shell,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire man | man -l -\n  kwire man --out /usr/local/share/man/man1"
)]
pub struct ManArgs {
    /// Write one page per command (kwire.1, kwire-decode.1, …) into this folder
    /// instead of printing the top-level page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn run_completions(args: &CompletionsArgs) -> i32 {
    let mut cmd = super::command();
    // Into memory first: clap_complete panics when its writer fails (`| head`).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "kwire", &mut script);
    let mut out = std::io::stdout().lock();
    match out.write_all(&script).and_then(|_| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(_) => exit::FAILURE,
    }
}

pub fn run_man(args: &ManArgs) -> i32 {
    let cmd = super::command();
    let res = match &args.out {
        Some(dir) => std::fs::create_dir_all(dir).and_then(|_| clap_mangen::generate_to(cmd, dir)),
        None => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .and_then(|_| out.flush())
        }
    };
    match res {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            kwire::stderr_line!("kwire: {}", kwire::text::escape::sanitize(&e.to_string()));
            exit::FAILURE
        }
    }
}
