//! The terminal explorer (`kwire tui`): hex grid, object tree and details of
//! decoded frames, kept in sync.
//!
//! `app` holds the state and handles input; `ui` draws it with the widgets
//! (`grid_view`, `tree_view`, `details_view`, `frames_view`, `help`);
//! `terminal` enters and always restores the terminal.

pub mod app;
pub mod details_view;
pub mod frames_view;
pub mod grid_view;
pub mod help;
pub mod layout;
pub mod search;
pub mod terminal;
pub mod theme;
pub mod tree_state;
pub mod tree_view;
pub mod ui;

pub use app::App;
pub use theme::Theme;

use crossterm::event::{self, Event, MouseEventKind};

/// Run the explorer until the user quits; the terminal is restored on return.
pub fn run(app: &mut App) -> std::io::Result<()> {
    let mut guard = terminal::TerminalGuard::enter()?;
    while !app.quit {
        guard.terminal.draw(|f| ui::draw(f, app))?;
        // Mouse motion changes nothing: wait for the next event without redrawing.
        let ev = loop {
            match event::read()? {
                Event::Mouse(m) if m.kind == MouseEventKind::Moved => continue,
                ev => break ev,
            }
        };
        match ev {
            Event::Key(k) => app.on_key(k),
            Event::Mouse(m) => app.on_mouse(m),
            Event::Paste(text) => app.on_paste(&text),
            _ => {}
        }
    }
    Ok(())
}
