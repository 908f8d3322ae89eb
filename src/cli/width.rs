//! `--wide`, and the width text output fits otherwise, decided once for
//! standard output ([`kwire::text::width::decide`]).

use kwire::text::width::{decide, FitLines};
use std::io::IsTerminal;
use std::sync::OnceLock;

static STDOUT: OnceLock<Option<usize>> = OnceLock::new();

/// Decide for this process (the first call wins).
pub fn set(wide: bool) {
    let _ = STDOUT.set(decide_here(wide));
}

fn decide_here(wide: bool) -> Option<usize> {
    let terminal = std::io::stdout()
        .is_terminal()
        .then(|| crossterm::terminal::size().ok())
        .flatten()
        .map(|(columns, _)| usize::from(columns));
    decide(wide, terminal, |k| std::env::var(k).ok())
}

/// The columns a line of text on standard output may take (`None`: any).
pub fn stdout() -> Option<usize> {
    *STDOUT.get_or_init(|| decide_here(false))
}

/// Standard output for a text view: every line cut to [`stdout`]'s width.
pub fn text_out() -> FitLines<std::io::StdoutLock<'static>> {
    FitLines::new(std::io::stdout().lock(), stdout())
}
