//! `kwire capture FILE`: every Kafka frame in a pcap/pcapng, paired and
//! decoded. The pipeline itself is the library's ([`kwire::pipeline::capture`]);
//! here are the arguments, the explorer, and the messages and exit status
//! its outcome makes.

use super::exit;
use super::frame_args::{Format, OutputArgs};
use clap::Args;
use kwire::analysis::selection::{FrameFilter, TopicNames};
use kwire::analysis::Filter as ExchangeFilter;
use kwire::capture::CaptureOptions;
use kwire::decode::DecodeOptions;
use kwire::live::frames_pcap::FramesPcap;
use kwire::pipeline::capture::{self as pipeline, Outcome, SelectedPcap, Source};
use kwire::pipeline::SkipTally;
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use kwire::tui::capture::{Explore, ExploreError, Explored};
use std::cell::RefCell;
use std::io::IsTerminal;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  kwire capture samples/captures/confluent-kafka.pcap --list\n  kwire capture samples/captures/confluent-kafka.pcap --api Fetch\n  kwire capture samples/captures/kafka-python.pcap --json --error\n  kwire capture samples/captures/lone-response.pcap --port 19092 --guess --list\n  sudo kwire capture -i lo --port 9092 --list                       # live, until Ctrl-C\n  sudo tcpdump -U -w - port 9092 | kwire capture - --format json   # each frame as it completes"
)]
pub struct CaptureArgs {
    /// pcap or pcapng file; `-` for standard input.
    #[arg(required_unless_present = "interface")]
    pub file: Option<String>,
    /// Capture live from this network interface (`lo`, `eth0`; `any` for
    /// all) instead of reading a file, printing each frame as it completes,
    /// until Ctrl-C. Needs root or CAP_NET_RAW; Linux only.
    #[arg(short = 'i', long = "interface", value_name = "IFACE", conflicts_with_all = ["file"])]
    pub interface: Option<String>,
    /// With -i: also write the packets captured to this pcapng file.
    #[arg(
        long,
        value_name = "FILE",
        requires = "interface",
        conflicts_with = "file"
    )]
    pub write_pcap: Option<String>,
    /// Also write the frames shown (those the selection keeps, or every
    /// frame) to this pcapng file, as TCP synthesized per connection, with
    /// credentials masked (`--show-secrets` writes them): a capture of only
    /// what matters, decrypted, that kwire and Wireshark read back.
    #[arg(long, value_name = "FILE", conflicts_with = "tui")]
    pub write_selected: Option<String>,
    /// One line per frame instead of decoded trees (a listing has one
    /// format: `--json` and `--format` are for decoded frames).
    #[arg(long, conflicts_with_all = ["json", "format", "full_docs"])]
    pub list: bool,
    /// Only frames with this correlation id.
    #[arg(long)]
    pub correlation_id: Option<i32>,
    // Only frames of exchanges that pass these: a request is shown once its
    // exchange is decided (with its response when that decides).
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
    /// Only the frame with this number (the first column of --list).
    #[arg(long)]
    pub frame: Option<usize>,
    /// The broker's port: the side sending to it carries requests (default:
    /// found by plausibility). With -i, only packets to or from it are captured.
    #[arg(long)]
    pub port: Option<u16>,
    /// Decode responses without a request in the capture by the best-ranked guess.
    #[arg(long)]
    pub guess: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub budget: super::frame_args::BudgetArgs,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
    /// Open the selected frames in the terminal explorer.
    #[arg(long, conflicts_with_all = ["list", "format", "json", "full_docs"])]
    pub tui: bool,
    /// Add where each frame came from (`"capture"`) to JSON objects; `kwire
    /// decode` of a capture leaves it out, so its output is the decoder's alone.
    #[arg(skip = true)]
    pub provenance: bool,
    /// The input is a stream (standard input, live traffic): each frame is
    /// written out as it completes, whatever the output is.
    #[arg(skip)]
    pub streaming: bool,
}

impl CaptureArgs {
    /// `kwire capture FILE` with nothing else given: what `decode` and `tui`
    /// start from when the file they are given is a capture.
    pub fn of_file(file: &str, budget: super::frame_args::BudgetArgs) -> Self {
        CaptureArgs {
            file: Some(file.to_string()),
            interface: None,
            write_pcap: None,
            write_selected: None,
            list: false,
            correlation_id: None,
            filter: Default::default(),
            frame: None,
            port: None,
            guess: false,
            output: OutputArgs {
                format: Format::Tree,
                json: false,
                full_docs: false,
            },
            budget,
            tls: Default::default(),
            tui: false,
            provenance: false,
            streaming: false,
        }
    }

    /// What is read, for messages: the file, `-`, or the interface.
    pub fn input_name(&self) -> String {
        match (&self.file, &self.interface) {
            (Some(f), _) => sanitize(f),
            (None, Some(i)) => format!("interface {}", sanitize(i)),
            (None, None) => "-".into(),
        }
    }

    /// Whether the input is standard input.
    fn is_stdin(&self) -> bool {
        self.file.as_deref() == Some("-")
    }
}

/// `kwire capture` on a file or standard input (`-i` is [`super::capture_live`]'s).
pub fn run(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs) -> i32 {
    let selection = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let source = match args.file.as_deref().unwrap_or("-") {
        "-" => Source::Stdin,
        path => Source::File(path.to_string()),
    };
    run_selected(cat, release, args, selection, source)
}

/// Decode a capture already read (`kwire decode` hands pcaps over here).
pub fn run_on(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    api: Option<i16>,
    capture: Vec<u8>,
) -> i32 {
    run_selected(
        cat,
        release,
        args,
        ExchangeFilter::api(cat, api),
        Source::Memory(bytes::Bytes::from(capture)),
    )
}

/// `kwire capture` on `args.file` (a path) with only `api`'s exchanges, read
/// from the file as `capture FILE` reads it.
pub fn run_on_file(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    api: Option<i16>,
) -> i32 {
    let source = Source::File(args.file.clone().unwrap_or_default());
    run_selected(cat, release, args, ExchangeFilter::api(cat, api), source)
}

/// A capture streamed from elsewhere in the process (the proxy's traffic),
/// read once as it comes.
pub fn run_on_stream(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    input: Box<dyn std::io::Read + Send>,
) -> i32 {
    let selection = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    run_selected(
        cat,
        release,
        args,
        selection,
        Source::Stream(RefCell::new(Some(input))),
    )
}

/// The source opened, or its error said (as an exit status).
fn open(source: &Source, args: &CaptureArgs) -> Result<pipeline::Input, i32> {
    source.open().map_err(|e| {
        kwire::stderr_line!("kwire: {}: {e}", args.input_name());
        exit::FAILURE
    })
}

fn run_selected(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    selection: ExchangeFilter,
    source: Source,
) -> i32 {
    let base = match args.tls.capture_options(args.port) {
        Ok(o) => o,
        Err(status) => return status,
    };
    let reopen = || source.rereadable().then(|| source.open().ok()).flatten();
    let selection = match super::filter_args::with_findings(cat, release, selection, &base, reopen)
    {
        Ok(f) => f,
        Err(status) => return status,
    };
    let filter = FrameFilter {
        correlation_id: args.correlation_id,
        frame: args.frame,
        ..FrameFilter::of(&selection)
    };
    let selected_pcap = match open_selected_pcap(args, &source) {
        Ok(w) => w,
        Err(status) => return status,
    };
    if args.tui {
        // The capture explorer learns topic names as its index thread reads
        // (a first pass would delay its first screen by a whole reading of
        // the file); with --frame or --correlation-id it decodes its few
        // frames first, and notes them.
        let decoded_first = filter.frame.is_some() || filter.correlation_id.is_some();
        let names = pipeline::topic_names(cat, release, &source, &base, decoded_first);
        let input = match open(&source, args) {
            Ok(i) => i,
            Err(status) => return status,
        };
        return explore_from_args(cat, release, args, &filter, input, &names, base);
    }
    let stdout = std::io::stdout();
    let options = pipeline::Options {
        list: args.list,
        format: args.output.format(),
        full_docs: args.output.full_docs,
        guess: args.guess,
        provenance: args.provenance,
        style: super::frames_out::style(),
        flush_each_frame: stdout.is_terminal() || args.streaming || args.is_stdin(),
        budget: args.budget.budget(),
        capture: base,
    };
    let mut say = |line: &str| kwire::stderr_line!("{line}");
    let ran = pipeline::run(
        cat,
        release,
        (&source, &filter),
        &options,
        selected_pcap,
        stdout.lock(),
        &mut say,
    );
    match ran {
        Ok(outcome) => report(args, &filter, outcome),
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {e}", args.input_name());
            exit::FAILURE
        }
    }
}

/// What a run found, said on stderr, and the exit status it makes.
fn report(args: &CaptureArgs, filter: &FrameFilter, o: Outcome) -> i32 {
    let mut status = if o.malformed {
        exit::MALFORMED
    } else {
        exit::OK
    };
    if let (Some(path), Some(written)) = (&args.write_selected, &o.selected) {
        match written {
            Ok(written) => kwire::stderr_line!("kwire: wrote {written} to {}", sanitize(path)),
            Err(e) => {
                kwire::stderr_line!("kwire: {}: {}", sanitize(path), sanitize(e));
                status = exit::FAILURE;
            }
        }
    }
    let write_failed = o.output_failed;
    match o.read {
        Ok(s) => {
            if let Some(e) = &s.error {
                kwire::stderr_line!("kwire: capture cut short after {} packets: {e}", s.packets);
                status = exit::MALFORMED;
            }
            super::filter_args::report_unrecognised(&s);
            if s.frames == 0 && s.skips == 0 && s.tls.connections == 0 && !write_failed {
                kwire::stderr_line!(
                    "kwire: no Kafka traffic found in {} packets ({} TCP segments); try --port",
                    s.packets,
                    s.tcp_segments
                );
                return exit::FAILURE;
            }
            if super::tls_args::report(&s.tls) {
                status = exit::MALFORMED;
            }
            if o.skipped.count > 0 {
                report_skipped(
                    &o.skipped,
                    if filter.names_frames() {
                        "; their notes are shown without --api, --correlation-id, --frame, --topic, --client-id, --error and --min-latency"
                    } else {
                        "; see the skipped notes"
                    },
                );
                status = exit::MALFORMED;
            }
            if filter.selects() && o.shown == 0 && !write_failed {
                kwire::stderr_line!("kwire: no frame matches {}", describe(filter, args));
                if status == exit::OK {
                    status = exit::FAILURE;
                }
            }
            status
        }
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {}", args.input_name(), sanitize(&e));
            exit::FAILURE
        }
    }
}

/// One line on stderr, so that skipped bytes never pass unremarked (the
/// exit status says so too).
fn report_skipped(skipped: &SkipTally, shown: &str) {
    kwire::stderr_line!("kwire: {}", skipped.describe(shown));
}

/// The file `--write-selected` names, created (never the input itself).
fn open_selected_pcap(args: &CaptureArgs, source: &Source) -> Result<Option<SelectedPcap>, i32> {
    let Some(path) = &args.write_selected else {
        return Ok(None);
    };
    let same = |input: &str| {
        let canonical = |p: &str| std::fs::canonicalize(p).ok();
        canonical(input).is_some_and(|i| Some(i) == canonical(path))
    };
    if let Source::File(input) = source {
        if same(input) {
            kwire::stderr_line!(
                "kwire: --write-selected {}: that is the capture being read; name another file",
                sanitize(path)
            );
            return Err(exit::USAGE);
        }
    }
    let created = std::fs::File::create(path).and_then(|f| {
        let out: Box<dyn std::io::Write> = Box::new(std::io::BufWriter::new(f));
        FramesPcap::new(out)
    });
    match created {
        Ok(w) => Ok(Some(w)),
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {e}", sanitize(path));
            Err(exit::FAILURE)
        }
    }
}

/// The selection as given on the command line, for messages.
fn describe(filter: &FrameFilter, args: &CaptureArgs) -> String {
    let mut parts = vec![args.filter.describe()];
    if let Some(c) = args.correlation_id {
        parts.push(format!("--correlation-id {c}"));
    }
    if let Some(n) = args.frame {
        parts.push(format!("--frame {n}"));
    }
    // `kwire decode --api` hands its API over as the selection's.
    if args.filter.api.is_none() && args.filter.filter.is_none() {
        if let Some(k) = filter.api {
            parts.push(format!("--api {k}"));
        }
    }
    parts.retain(|p| !p.is_empty());
    parts.join(" ")
}

/// `--tui`: the explorer over the capture's index (built as the explorer
/// runs, frames decoded when shown), the selection as its filter; with
/// `--frame` or `--correlation-id`, over the frames they name, decoded first.
fn explore_from_args(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    filter: &FrameFilter,
    input: Box<dyn std::io::Read + Send>,
    names: &TopicNames<'_>,
    opts: CaptureOptions,
) -> i32 {
    if filter.frame.is_some() || filter.correlation_id.is_some() {
        return explore_selected(cat, release, args, filter, input, names, opts);
    }
    let total = match &args.file {
        Some(path) if path != "-" => std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len()),
        _ => None,
    };
    let explore = Explore {
        total,
        guess: args.guess,
        budget: args.budget.budget(),
        // The selection as given, or the api and connection it came down to.
        filter: filter.exchanges.clone().unwrap_or_else(|| {
            let words = kwire::analysis::filter::Words {
                api: filter.api,
                conn: filter.conn,
                ..Default::default()
            };
            ExchangeFilter::from_words(cat, &words, None).unwrap_or_default()
        }),
        topic_ids: names.now(),
        opts,
    };
    explore_indexed(cat, release, (input, &args.input_name()), explore, || {})
}

/// The explorer over a capture read as it runs
/// ([`kwire::tui::capture::explore_capture`]), its outcome said and turned
/// into an exit status; `input_name` names the input in messages (the
/// file, `-`, or the live source).
pub fn explore_indexed(
    cat: &Catalogue,
    release: Option<&str>,
    (input, input_name): (Box<dyn std::io::Read + Send>, &str),
    e: Explore,
    on_quit: impl FnOnce(),
) -> i32 {
    match kwire::tui::capture::explore_capture(cat, release, input, e, on_quit) {
        Ok(Explored::Read) => exit::OK,
        Ok(Explored::Failed(err)) => {
            kwire::stderr_line!("kwire: {}: {}", sanitize(input_name), sanitize(&err));
            exit::MALFORMED
        }
        Ok(Explored::Skipped { bytes, notes }) => {
            kwire::stderr_line!("kwire: {bytes} bytes of the capture are in no frame ({notes} skip notes); `kwire capture --list` shows where");
            exit::MALFORMED
        }
        Err(ExploreError::NotATerminal) => {
            kwire::stderr_line!(
                "kwire: the explorer needs a terminal; without --tui the frames are printed"
            );
            exit::FAILURE
        }
        Err(err) => {
            kwire::stderr_line!("kwire: {err}");
            exit::FAILURE
        }
    }
}

/// `--tui` with `--frame` or `--correlation-id`: decode the selected frames, then explore them.
fn explore_selected(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    filter: &FrameFilter,
    input: Box<dyn std::io::Read + Send>,
    names: &TopicNames<'_>,
    opts: CaptureOptions,
) -> i32 {
    // The explorer holds every frame: their expanded share stays held, within one budget.
    let budget = args.budget.budget();
    // Big records fields are held as a stub per batch, big arrays as a stub
    // per element, each walked when opened.
    let decode = kwire::tui::app::stubbing(DecodeOptions {
        budget: budget.clone(),
        ..Default::default()
    });
    let selected = pipeline::decode_selected(
        cat,
        release,
        (input, &opts),
        filter,
        (names, args.guess, decode),
    );
    let (frames, skipped, stats) = (selected.frames, selected.skipped, selected.read);
    match stats {
        Ok(s) if frames.is_empty() => {
            super::filter_args::report_unrecognised(&s);
            super::tls_args::report(&s.tls);
            kwire::stderr_line!("kwire: no Kafka frames selected in {}", args.input_name());
            exit::FAILURE
        }
        Ok(s) => {
            let mut status =
                super::explorer::explore(cat, release.map(str::to_string), frames, budget);
            // After the explorer gives the terminal back.
            if super::tls_args::report(&s.tls) && status == exit::OK {
                status = exit::MALFORMED;
            }
            if skipped.count > 0 {
                report_skipped(&skipped, "; `kwire capture --list` shows where");
                if status == exit::OK {
                    return exit::MALFORMED;
                }
            }
            status
        }
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {}", args.input_name(), sanitize(&e));
            exit::FAILURE
        }
    }
}
