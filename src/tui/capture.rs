//! The explorer over a capture read as it runs: a file, standard input, or
//! live traffic's pcapng pipe (`kwire capture --tui`, `kwire capture -i
//! --tui`, `kwire proxy --tui`). An index thread reads the input into a
//! spool file and sends its rows, which join the list as frames complete;
//! a frame is decoded when it is shown. The command line only says what
//! the outcome means.

use super::app::CaptureState;
use super::{App, Theme};
use crate::analysis::index::{index_capture, IndexReading, Progress, Spool};
use crate::analysis::Filter;
use crate::budget::Budget;
use crate::capture::CaptureOptions;
use crate::decode::topic_ids::TopicIds;
use crate::schema::Catalogue;
use std::io::IsTerminal;
use std::sync::atomic::Ordering;

/// What the capture explorer is opened with besides its input.
pub struct Explore {
    /// The input's size, when it is a file (for the progress figure).
    pub total: Option<u64>,
    /// Whether a connection's first frame may be taken for a response.
    pub guess: bool,
    pub budget: Budget,
    /// The filter it starts with (empty: every frame).
    pub filter: Filter,
    /// Topic names by id, learned before the explorer opened.
    pub topic_ids: TopicIds,
    pub opts: CaptureOptions,
}

/// How the explorer ended, once the user quit.
#[derive(Debug, PartialEq, Eq)]
pub enum Explored {
    /// The input read to its end (or to where the user quit) cleanly.
    Read,
    /// The input's read failed: what the reader said.
    Failed(String),
    /// Bytes of the capture are in no frame: how many, in how many notes.
    Skipped { bytes: u64, notes: usize },
}

/// Why the explorer could not run.
#[derive(Debug)]
pub enum ExploreError {
    /// Standard output is not a terminal.
    NotATerminal,
    /// The spool file for the frames' bytes could not be made.
    Spool(std::io::Error),
    /// The terminal failed while the explorer ran.
    Terminal(std::io::Error),
}

impl std::fmt::Display for ExploreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExploreError::NotATerminal => f.write_str("the explorer needs a terminal"),
            ExploreError::Spool(err) => write!(
                f,
                "the explorer's spool file in {}: {err}",
                std::env::temp_dir().display()
            ),
            ExploreError::Terminal(err) => write!(f, "terminal: {err}"),
        }
    }
}

/// The explorer over a capture read by an index thread as it runs, until
/// the user quits. When they do, `on_quit` ends the input (live sources
/// close their pipe) before the index thread is waited for; the input's
/// reads end then too, so that quitting never waits for input that does
/// not come (`sleep 60 | kwire capture - --tui`).
pub fn explore_capture(
    cat: &Catalogue,
    release: Option<&str>,
    input: Box<dyn std::io::Read + Send>,
    e: Explore,
    on_quit: impl FnOnce(),
) -> Result<Explored, ExploreError> {
    if !std::io::stdout().is_terminal() {
        return Err(ExploreError::NotATerminal);
    }
    let (spool, spool_writer) = Spool::create().map_err(ExploreError::Spool)?;
    let progress = Progress {
        total: e.total,
        ..Default::default()
    };
    let input = crate::input::stoppable::stoppable(input, progress.stop.clone());
    let capture = CaptureState {
        topic_ids: e.topic_ids,
        ..CaptureState::new(spool, progress.clone(), e.guess, e.budget)
    };
    let mut app = App::for_capture(cat, release.map(str::to_string), capture, Theme::from_env());
    if !e.filter.is_empty() {
        app.set_filter(e.filter.text().to_string(), e.filter);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (guess, opts) = (e.guess, e.opts);
    let shown = std::thread::scope(|s| {
        let indexer = s.spawn(|| {
            let reading = IndexReading {
                cat,
                release,
                guess,
                opts: &opts,
            };
            index_capture(reading, input, spool_writer, &progress, &tx)
        });
        let shown = super::run_indexing(&mut app, &rx);
        progress.stop.store(true, Ordering::Relaxed);
        drop(rx);
        on_quit();
        let _ = indexer.join();
        shown
    });
    shown.map_err(ExploreError::Terminal)?;
    Ok(match app.capture.as_ref() {
        Some(CaptureState {
            error: Some(err), ..
        }) => Explored::Failed(err.clone()),
        Some(c) if c.skipped > 0 => Explored::Skipped {
            bytes: c.skipped_bytes,
            notes: c.skipped,
        },
        _ => Explored::Read,
    })
}
