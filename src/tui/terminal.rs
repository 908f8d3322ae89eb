//! Entering and leaving the terminal's raw, alternate-screen mode. Leaving
//! happens on every path out: normal exit, error (the guard's drop) and panic
//! (a hook that restores before the panic message is printed).

use crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::{stdout, Stdout};
use std::sync::Once;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// The terminal in explorer mode; dropping it restores the terminal.
pub struct TerminalGuard {
    pub terminal: Term,
}

impl TerminalGuard {
    pub fn enter() -> std::io::Result<TerminalGuard> {
        install_panic_hook();
        enable_raw_mode()?;
        // From here on a failure must still restore what was already changed.
        let guard_result = (|| {
            execute!(stdout(), EnterAlternateScreen, EnableMouseCapture, EnableBracketedPaste)?;
            Terminal::new(CrosstermBackend::new(stdout()))
        })();
        match guard_result {
            Ok(terminal) => Ok(TerminalGuard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Leave raw mode and the alternate screen; safe to call more than once.
pub fn restore() {
    let _ = execute!(stdout(), DisableBracketedPaste, DisableMouseCapture, LeaveAlternateScreen, crossterm::cursor::Show);
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
