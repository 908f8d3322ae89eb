//! What the commands that show frames run, as library calls over any
//! `io::Write`: a capture's frames selected, decoded and drawn in capture
//! order ([`capture::run`]), and decoded frames drawn in a format
//! ([`frames`]). The command line only turns its arguments into these
//! calls' options and their outcome into messages and an exit status.
//!
//! A capture listed into memory, as `kwire capture FILE --list` lists it:
//!
//! ```
//! use kwire::analysis::selection::FrameFilter;
//! use kwire::pipeline::capture::{run, Options, Source};
//! use kwire::schema::Catalogue;
//!
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/captures/confluent-kafka.pcap");
//! let options = Options { list: true, ..Default::default() };
//! let (mut listing, mut said) = (Vec::new(), Vec::new());
//! let outcome = run(
//!     Catalogue::builtin(),
//!     None,
//!     (&Source::File(file.into()), &FrameFilter::default()),
//!     &options,
//!     None,
//!     &mut listing,
//!     &mut |line: &str| said.push(line.to_string()),
//! )?;
//! let stats = outcome.read.expect("the capture reads to its end");
//! assert_eq!(outcome.shown, stats.frames);
//! assert!(!outcome.malformed && said.is_empty());
//! assert!(String::from_utf8_lossy(&listing).contains("ApiVersions v3"));
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! It sits above the layers it joins (capture, analysis, render, teach,
//! live), which is why it is not inside `capture`: the input layer must not
//! depend on what is built on it.

pub mod capture;
pub mod check;
mod decoded;
pub mod export;
pub mod frames;
mod notes;
mod out;
pub mod records;
pub mod report;

pub use notes::SkipTally;
