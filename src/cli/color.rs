//! `--color auto|always|never`, decided once for standard output: `always`
//! and `never` win; `auto` honours `NO_COLOR` (set and not empty: no colour)
//! and then `CLICOLOR_FORCE` (set and not `0`: colour, for `| less -R`), and
//! otherwise colours a terminal only.

use clap::ValueEnum;
use std::io::IsTerminal;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

static STDOUT: OnceLock<bool> = OnceLock::new();

/// Decide for this process (the first call wins; later ones are ignored).
pub fn set(choice: ColorChoice) {
    let _ = STDOUT.set(decide(
        choice,
        |k| std::env::var(k).ok(),
        std::io::stdout().is_terminal(),
    ));
}

/// Whether what goes to standard output is coloured.
pub fn stdout() -> bool {
    *STDOUT.get_or_init(|| {
        decide(
            ColorChoice::Auto,
            |k| std::env::var(k).ok(),
            std::io::stdout().is_terminal(),
        )
    })
}

/// The rule, apart from the process's environment and terminal (for tests).
pub fn decide(choice: ColorChoice, env: impl Fn(&str) -> Option<String>, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                return false;
            }
            if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                return true;
            }
            terminal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn explicit_choices_win_and_auto_follows_the_conventions() {
        assert!(decide(
            ColorChoice::Always,
            env(&[("NO_COLOR", "1")]),
            false
        ));
        assert!(!decide(
            ColorChoice::Never,
            env(&[("CLICOLOR_FORCE", "1")]),
            true
        ));
        assert!(decide(ColorChoice::Auto, env(&[]), true));
        assert!(!decide(ColorChoice::Auto, env(&[]), false));
        assert!(!decide(ColorChoice::Auto, env(&[("NO_COLOR", "1")]), true));
        // An empty NO_COLOR does not count (no-color.org).
        assert!(decide(ColorChoice::Auto, env(&[("NO_COLOR", "")]), true));
        assert!(decide(
            ColorChoice::Auto,
            env(&[("CLICOLOR_FORCE", "1")]),
            false
        ));
        assert!(!decide(
            ColorChoice::Auto,
            env(&[("CLICOLOR_FORCE", "0")]),
            false
        ));
        assert!(!decide(
            ColorChoice::Auto,
            env(&[("NO_COLOR", "x"), ("CLICOLOR_FORCE", "1")]),
            true
        ));
    }
}
