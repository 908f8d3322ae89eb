//! `kwire report CAPTURE --out report.html`: one self-contained page that
//! leads with what is wrong (see `render::report`); this reads the capture
//! for the exchanges' facts, the inventory, the frames to embed and the
//! findings.

use super::exit;
use super::filter_args::FilterArgs;
use clap::Args;
use kwire::analysis::finding_groups::check_capture;
use kwire::analysis::inventory::{self, Inventory};
use kwire::analysis::report::collect;
use kwire::decode::DecodeOptions;
use kwire::pipeline::report::frame_views;
use kwire::render::report::{page, Title};
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use std::io::Read;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  kwire report samples/captures/confluent-kafka.pcap --out report.html\n  kwire report samples/captures/kafka-python.pcap --out fetch.html --api Fetch --min-latency 100"
)]
pub struct ReportArgs {
    /// pcap or pcapng file; `-` for standard input (read into memory: the report reads the capture three times).
    pub file: String,
    /// The HTML file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The broker's port: the side sending to it carries requests (default: found by plausibility).
    #[arg(long)]
    pub port: Option<u16>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
}

/// The capture, opened afresh for each pass.
enum Source {
    File(String),
    Memory(Vec<u8>),
}

impl Source {
    fn open(&self) -> Result<Box<dyn Read + '_>, i32> {
        match self {
            Source::File(p) => super::open_input(p).map(|r| Box::new(r) as Box<dyn Read>),
            Source::Memory(b) => Ok(Box::new(std::io::Cursor::new(b.as_slice()))),
        }
    }
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &ReportArgs) -> i32 {
    let filter = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let source = if args.file == "-" {
        let mut b = Vec::new();
        if let Err(e) = std::io::stdin().lock().read_to_end(&mut b) {
            kwire::stderr_line!("kwire: standard input: {e}");
            return exit::FAILURE;
        }
        Source::Memory(b)
    } else {
        Source::File(args.file.clone())
    };
    let opts = match args.tls.capture_options(args.port) {
        Ok(o) => o,
        Err(status) => return status,
    };
    let fail = |e: String| {
        kwire::stderr_line!("kwire: {}: {}", sanitize(&args.file), sanitize(&e));
        exit::FAILURE
    };
    // The report reads its source more than once: `finding` can always be tested.
    let filter =
        match super::filter_args::with_findings(cat, release, filter, &opts, || source.open().ok())
        {
            Ok(f) => f,
            Err(status) => return status,
        };
    let input = match source.open() {
        Ok(i) => i,
        Err(status) => return status,
    };
    let c = match collect(cat, release, input, &opts, &filter) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    if super::filter_args::no_kafka_traffic(&c.reading) {
        return exit::FAILURE;
    }
    let input = match source.open() {
        Ok(i) => i,
        Err(status) => return status,
    };
    let inv = match inventory::collect(cat, release, input, &opts, &filter) {
        Ok(i) => Inventory::new(cat, Catalogue::builtin(), &i.facts, &i.names, None),
        Err(e) => return fail(e),
    };
    // The frames of the exchanges kept, in capture order, embedded for the
    // frame viewer until the page's frame data is full.
    let mut open_failed = None;
    let open = || {
        source.open().map_err(|status| {
            open_failed = Some(status);
            String::new()
        })
    };
    let frames = match frame_views(cat, release, &c.exchanges, (open, &opts)) {
        Ok(f) => f,
        Err(_) if open_failed.is_some() => return open_failed.unwrap_or(exit::FAILURE),
        Err(e) => return fail(e),
    };
    // What went wrong leads the page: the whole capture checked, as `kwire check` does.
    let input = match source.open() {
        Ok(i) => i,
        Err(status) => return status,
    };
    let decode = DecodeOptions {
        release: release.map(str::to_string),
        ..Default::default()
    };
    let checked = match check_capture(cat, decode, input, &opts) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let embedded = frames.len();
    let filter_text = args.filter.describe();
    let title = Title {
        capture: &args.file,
        filter: &filter_text,
    };
    let text = page(cat, &title, &checked, &c, &inv, frames);
    if let Err(e) = std::fs::write(&args.out, &text) {
        kwire::stderr_line!("kwire: {}: {e}", sanitize(&args.out.display().to_string()));
        return exit::FAILURE;
    }
    kwire::stderr_line!(
        "kwire: wrote {} ({} exchanges, {} frames embedded, {} KiB)",
        sanitize(&args.out.display().to_string()),
        c.exchanges.len(),
        embedded,
        text.len() >> 10
    );
    super::filter_args::Reported {
        reading: &c.reading,
        read_for: "their facts",
        nothing_matched: (!filter.is_empty() && c.stats.frames == 0).then_some(&args.filter),
    }
    .report()
}
