//! `kwire tui`: the terminal explorer over the frames of a file, standard
//! input, or hex text pasted into it; a pcap or pcapng capture opens in the
//! capture explorer, as `kwire capture FILE --tui`.

use super::capture_cmd::CaptureArgs;
use super::exit;
use super::frame_args::{
    decode_options, frames_from, is_segment, log_dir, report, segment_context, InputArgs,
};
use clap::Args;
use kwire::decode::records::segment::segment_frame;
use kwire::input::read_source;
use kwire::schema::Catalogue;
use std::io::IsTerminal;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire tui samples/write-share-group-state-v0-request.hex\n  kwire tui samples/captures/confluent-kafka.pcap\n  kwire capture samples/captures/confluent-kafka.pcap --api Produce --tui\n  kwire tui   (then paste hex)"
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
    // Big records fields are held as a stub per batch, big arrays as a stub
    // per element, each walked when opened.
    let opts = kwire::tui::app::stubbing(opts);
    // With no file and nothing piped in there is nothing to read: start empty
    // and let frames arrive by paste.
    let frames = if args.file == "-" && std::io::stdin().is_terminal() {
        Vec::new()
    } else {
        // A capture file opens in the capture explorer, read as `kwire
        // capture FILE --tui` reads it, rather than whole into memory.
        let capture = CaptureArgs {
            tui: true,
            ..CaptureArgs::of_file(&args.file, args.budget.clone())
        };
        if args.file != "-" && is_capture_file(&args.file) {
            return super::capture_cmd::run_on_file(cat, release, &capture, opts.api_key);
        }
        let raw = match read_source(&args.file) {
            Ok(r) => r,
            Err(e) => return report(e),
        };
        if kwire::capture::pcap::sniff(&raw).is_some() {
            return super::capture_cmd::run_on(cat, release, &capture, opts.api_key, raw);
        }
        if is_segment(args, &raw) {
            // One frame of its batches (a big segment's opened one at a time).
            let ctx = segment_context(&opts, log_dir(&args.file));
            let walked_up_to = kwire::tui::app::STUB_RECORDS_OVER;
            let segment = segment_frame(cat, &ctx, raw.into(), walked_up_to);
            return super::explorer::explore(cat, opts.release, vec![segment], opts.budget);
        }
        match frames_from(cat, args, raw, (&opts, &mut |_| {})) {
            Ok(f) => f,
            Err(status) => return status,
        }
    };
    super::explorer::explore(cat, opts.release, frames, opts.budget)
}

/// Whether the file starts as a pcap or pcapng file does (one that cannot
/// be read is not: reading it again says why).
fn is_capture_file(path: &str) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(4);
    std::fs::File::open(path)
        .and_then(|f| f.take(4).read_to_end(&mut head))
        .is_ok_and(|_| kwire::capture::pcap::sniff(&head).is_some())
}
