//! The terminal explorer (`kwire tui`): hex grid, object tree and details of
//! decoded frames, kept in sync.
//!
//! `app` holds the state and handles input; `ui` draws it with the widgets
//! (`grid_view`, `tree_view`, `details_view`, `frames_view`, `help`);
//! `terminal` enters and always restores the terminal.

pub mod app;
pub mod capture;
pub mod details_view;
pub mod export;
pub mod findings_view;
pub mod frames_view;
pub mod grid_view;
pub mod help;
pub mod layout;
pub mod records_view;
pub mod rows;
pub mod search;
pub mod terminal;
pub mod theme;
pub mod tree_state;
pub mod tree_view;
pub mod ui;

pub use app::App;
pub use theme::Theme;

use crossterm::event::{self, Event, MouseEventKind};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// Run the explorer over a capture being indexed: rows join the frame list
/// as the index thread reads the file; until the user quits.
pub(crate) fn run_indexing(
    app: &mut App,
    events: &Receiver<crate::analysis::index::IndexEvent>,
) -> std::io::Result<()> {
    run_receiving(app, events, |app, ev| app.on_index_event(ev))
}

/// Redraws while things arrive, at most this often (keys redraw at once).
const ARRIVALS_REDRAW: Duration = Duration::from_millis(100);

/// The explorer's loop while `items` arrive: each is handed to `take`; the
/// screen is redrawn on a key, and when items came (at most every
/// [`ARRIVALS_REDRAW`]), so keys stay answered under a flood.
fn run_receiving<T>(
    app: &mut App,
    items: &Receiver<T>,
    mut take: impl FnMut(&mut App, T),
) -> std::io::Result<()> {
    let mut guard = terminal::TerminalGuard::enter()?;
    let mut ended = false;
    let mut dirty = true;
    let mut drawn = Instant::now() - ARRIVALS_REDRAW;
    while !app.quit {
        let turn = Instant::now();
        // A bounded time a turn.
        while turn.elapsed() < Duration::from_millis(20) {
            match items.try_recv() {
                Ok(item) => {
                    take(app, item);
                    dirty = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    ended = true;
                    break;
                }
            }
        }
        if dirty && drawn.elapsed() >= ARRIVALS_REDRAW {
            guard.terminal.draw(|f| ui::draw(f, app))?;
            drawn = Instant::now();
            dirty = false;
        }
        let wait = if ended && !dirty {
            Duration::from_secs(3600)
        } else {
            Duration::from_millis(25)
        };
        if !event::poll(wait)? {
            continue;
        }
        match event::read()? {
            Event::Mouse(m) if m.kind == MouseEventKind::Moved => continue,
            Event::Key(k) => app.on_key(k),
            Event::Mouse(m) => app.on_mouse(m),
            Event::Paste(text) => app.on_paste(&text),
            _ => {}
        }
        guard.terminal.draw(|f| ui::draw(f, app))?;
        drawn = Instant::now();
        dirty = false;
    }
    Ok(())
}

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
