//! The terminal explorer opened over frames already decoded: `kwire tui`'s
//! frames, and `kwire capture --tui --frame N`'s.

use super::exit;
use kwire::schema::Catalogue;
use kwire::tui::{App, Theme};
use std::io::IsTerminal;

/// Open the explorer over decoded frames.
pub fn explore(
    cat: &Catalogue,
    release: Option<String>,
    frames: Vec<kwire::decode::Frame>,
    budget: kwire::budget::Budget,
) -> i32 {
    if !std::io::stdout().is_terminal() {
        kwire::stderr_line!(
            "kwire: the explorer needs a terminal; `kwire decode` prints to pipes and files"
        );
        return exit::FAILURE;
    }
    let mut app = App::with_budget(cat, release, frames, Theme::from_env(), budget);
    match kwire::tui::run(&mut app) {
        Ok(()) => exit::OK,
        Err(e) => {
            kwire::stderr_line!("kwire: terminal: {e}");
            exit::FAILURE
        }
    }
}
