//! `kwire tui`: the terminal explorer over the frames of a file, standard
//! input, or hex text pasted into it.

use super::exit;
use super::frame_args::{decode_options, read_frames, InputArgs};
use clap::Args;
use kwire::schema::Catalogue;
use kwire::tui::{App, Theme};
use std::io::IsTerminal;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire tui samples/write-share-group-state-v0-request.hex\n  kwire capture samples/captures/confluent-kafka.pcap --api Produce --tui\n  kwire tui   (then paste hex)"
)]
pub struct TuiArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &InputArgs) -> i32 {
    if !std::io::stdout().is_terminal() {
        kwire::stderr_line!(
            "kwire: the explorer needs a terminal; `kwire decode` prints to pipes and files"
        );
        return exit::FAILURE;
    }
    let opts = match decode_options(cat, release, args) {
        Ok(o) => o,
        Err(status) => return status,
    };
    // With no file and nothing piped in there is nothing to read: start empty
    // and let frames arrive by paste.
    let frames = if args.file == "-" && std::io::stdin().is_terminal() {
        Vec::new()
    } else {
        match read_frames(cat, args, &opts) {
            Ok(f) => f,
            Err(status) => return status,
        }
    };
    explore(cat, opts.release, frames)
}

/// Open the explorer over decoded frames (also used by `kwire capture --tui --frame N`).
pub fn explore(cat: &Catalogue, release: Option<String>, frames: Vec<kwire::decode::Frame>) -> i32 {
    if !std::io::stdout().is_terminal() {
        kwire::stderr_line!(
            "kwire: the explorer needs a terminal; `kwire decode` prints to pipes and files"
        );
        return exit::FAILURE;
    }
    let mut app = App::new(cat, release, frames, Theme::from_env());
    match kwire::tui::run(&mut app) {
        Ok(()) => exit::OK,
        Err(e) => {
            kwire::stderr_line!("kwire: terminal: {e}");
            exit::FAILURE
        }
    }
}
