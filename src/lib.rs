//! kwire: shows exactly what a Kafka protocol message looks like on the wire.
//!
//! Data flow: input bytes ([`input`], [`capture`]) → frames → the
//! schema-driven decoder over the catalogue ([`decode`], [`schema`]) → the
//! tape ([`decode::tape::Values`]: a slot per field, element, tag and record
//! part, each with its typed identity, value and bytes) → analyses across a
//! conversation ([`analysis`]) → views ([`render`], [`tui`], [`teach`]; tree
//! views build a frame's nodes, [`decode::Node`], from its tape when they
//! draw it). [`docs`] gathers the documentation pages that `render::page`
//! draws; [`pipeline`] holds what the commands run, over any `io::Write`.

/// A line on standard error that never panics: `eprintln!` panics when the
/// write fails, and standard error is often a pipe a reader closes early
/// (`kwire decode - 2>&1 | head -3`). What cannot be written is dropped, as
/// there is nowhere left to say it. What it says is made safe for a
/// terminal (file names, names from the input: their control characters
/// escaped, line breaks kept), and wrapped at words to the terminal when
/// standard error is one ([`text::wrap::for_stderr`]). Clippy refuses `eprintln!` in this crate
/// (`clippy.toml`).
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {
        $crate::text::wrap::write_stderr(&::std::format!($($arg)*), false)
    };
}

/// [`stderr_line!`] for a line laid out by column with the lines around it
/// (an expression and the caret under its error): made safe for a terminal,
/// never wrapped, so that the terminal cuts it where it cuts its neighbours.
#[macro_export]
macro_rules! stderr_laid_out {
    ($($arg:tt)*) => {
        $crate::text::wrap::write_stderr(&::std::format!($($arg)*), true)
    };
}

pub mod analysis;
pub mod budget;
pub mod capture;
pub mod decode;
pub mod docs;
pub mod encode;
pub mod input;
pub mod live;
pub mod pipeline;
pub mod protocol;
pub mod render;
pub mod schema;
pub mod teach;
pub mod text;
pub mod tui;
