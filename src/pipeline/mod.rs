//! What the commands that show frames run, as library calls over any
//! `io::Write`: a capture's frames selected, decoded and drawn in capture
//! order ([`capture::run`]), and decoded frames drawn in a format
//! ([`frames`]). The command line only turns its arguments into these
//! calls' options and their outcome into messages and an exit status.
//!
//! It sits above the layers it joins (capture, analysis, render, teach,
//! live), which is why it is not inside `capture`: the input layer must not
//! depend on what is built on it.

pub mod capture;
pub mod check;
mod decoded;
pub mod frames;
mod notes;
mod out;

pub use notes::SkipTally;
