//! `kwire check CAPTURE|FILE`: every frame (or a log segment's every batch)
//! held against the protocol, one finding per line; exit status 3 when any
//! finding is an error.

use super::exit;
use super::frame_args::{
    decode_options, frames_from, is_segment, log_dir, segment_context, InputArgs,
};
use clap::{Args, ValueEnum};
use kwire::analysis::check::{check_frames, check_log_dir, check_segment};
use kwire::analysis::filter::Filter;
use kwire::analysis::finding::{Finding, Severity};
use kwire::analysis::selection::FrameFilter;
use kwire::capture::CaptureOptions;
use kwire::decode::records::deferred::check_left_records;
use kwire::decode::records::segment::{base_offset_of_log_name, MAX_BATCH};
use kwire::decode::DecodeOptions;
use kwire::pipeline::check;
use kwire::render::findings::{self, FindingsWriter, Layout};
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use std::io::{BufRead, BufReader, Read, Write};

/// Some finding is an error: the bytes break the protocol.
pub const FOUND_ERRORS: i32 = 3;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire check samples/captures/confluent-kafka.pcap\n  kwire check capture.pcap --format json | jq 'select(.severity == \"error\")'\n  kwire check samples/produce-v9-request.hex\n  kwire check samples/00000000000000000000.log\n  kwire check --rules\n\nExit status: 3 when a finding is an error; else 2 when the input itself is damaged (bytes in no frame, a capture cut short, TLS not decrypted); else 0. 1 when the input cannot be read or holds no Kafka traffic."
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// One line per finding, or one JSON object per finding per line.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Print findings of this severity and worse (all count for the exit status).
    #[arg(long, value_enum, default_value_t = MinSeverity::Note)]
    pub min_severity: MinSeverity,
    /// The broker's port in a capture: the side sending to it carries requests.
    #[arg(long)]
    pub port: Option<u16>,
    /// A capture: only findings about frames the display filter selects
    /// (`kwire filter --help`), e.g. 'api == JoinGroup' or 'conn == 3'.
    #[arg(long, short = 'Y', value_name = "EXPR")]
    pub filter: Option<String>,
    /// List the rules with their severities and exit.
    #[arg(long)]
    pub rules: bool,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MinSeverity {
    Error,
    Warning,
    Note,
}

impl MinSeverity {
    fn severity(self) -> Severity {
        match self {
            MinSeverity::Error => Severity::Error,
            MinSeverity::Warning => Severity::Warning,
            MinSeverity::Note => Severity::Note,
        }
    }
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &CheckArgs) -> i32 {
    if args.rules {
        let text = match args.format {
            CheckFormat::Text => findings::rules_text(super::width::stdout()),
            CheckFormat::Json => kwire::render::json::to_text(&findings::rules_json()) + "\n",
        };
        let _ = std::io::stdout().write_all(text.as_bytes());
        return exit::OK;
    }
    let opts = match decode_options(cat, release, &args.input) {
        Ok(o) => o,
        Err(status) => return status,
    };
    if std::path::Path::new(&args.input.file).is_dir() {
        return run_log_dir(cat, args, &opts);
    }
    let input = match super::open_input(&args.input.file) {
        Ok(i) => i,
        Err(status) => return status,
    };
    let mut input = BufReader::new(input);
    let head = match input.fill_buf() {
        Ok(h) => h,
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {e}", sanitize(&args.input.file));
            return exit::FAILURE;
        }
    };
    let is_capture = kwire::capture::pcap::sniff(head).is_some();
    let selection = match &args.filter {
        None => None,
        Some(_) if !is_capture => {
            kwire::stderr_line!(
                "kwire: --filter selects among a capture's frames; {} is not a capture",
                sanitize(&args.input.file)
            );
            return exit::MALFORMED;
        }
        Some(text) => match Filter::parse(cat, text) {
            Ok(f) => Some(f),
            Err(e) => {
                super::filter_args::report_expression_error(text, &e);
                return exit::MALFORMED;
            }
        },
    };
    let mut printer = printer(cat, args);
    let mut found = Vec::new();
    // Input damage the findings do not count as errors (bytes in no frame,
    // a capture cut short, TLS not decrypted): status 2, as `capture` says it.
    let mut damaged = false;
    // What the summary counts: frames, or a segment's batches.
    let mut unit = ("frame", "frames");
    let checked = if is_capture {
        let capture_opts = match args.tls.capture_options(args.port) {
            Ok(o) => o,
            Err(status) => return status,
        };
        let frame_filter = match selection {
            Some(f) => {
                let file = &args.input.file;
                let reopen = || super::reopen_file(file);
                match super::filter_args::with_findings(cat, release, f, &capture_opts, reopen) {
                    Ok(f) => Some(FrameFilter::of(&f)),
                    Err(status) => return status,
                }
            }
            None => None,
        };
        let options = check::Options {
            decode: opts,
            capture: capture_opts,
            read_ahead: super::is_regular_file(&args.input.file),
            filter: frame_filter.as_ref(),
        };
        let checked = check::check_capture(cat, release, Box::new(input), options, &mut |found| {
            printer.take(found)
        });
        let checked = match checked {
            Ok(c) => c,
            Err(e) => return broken_output(e),
        };
        let stats = match checked.read {
            Ok(s) => s,
            Err(e) => {
                kwire::stderr_line!("kwire: {}: {}", sanitize(&args.input.file), sanitize(&e));
                return exit::FAILURE;
            }
        };
        // What was found is printed before any word on why little was.
        if let Err(e) = printer.write_groups() {
            return broken_output(e);
        }
        if let Some(e) = &stats.error {
            kwire::stderr_line!(
                "kwire: {}: {} (checked the packets before it)",
                sanitize(&args.input.file),
                sanitize(e)
            );
        }
        super::filter_args::report_unrecognised(&stats);
        let tls_said = super::tls_args::report(&stats.tls);
        // Traffic that was there but not decrypted is damage (status 2, with the summary), not an empty input.
        if stats.frames == 0 && stats.skips == 0 && !tls_said {
            kwire::stderr_line!(
                "kwire: {}: no Kafka traffic found ({} packets, {} TCP segments; try --port)",
                sanitize(&args.input.file),
                stats.packets,
                stats.tcp_segments
            );
            return exit::FAILURE;
        }
        if stats.skips > 0 {
            let places = if stats.skips == 1 { "place" } else { "places" };
            kwire::stderr_line!(
                "kwire: {}: {} bytes in {} {places} are in no frame (the skipped-bytes findings say where and why){}",
                sanitize(&args.input.file),
                stats.skipped_bytes,
                stats.skips,
                if stats.frames == 0 { "; no whole Kafka frame was found" } else { "" }
            );
        }
        damaged = stats.skips > 0 || stats.error.is_some() || tls_said;
        checked.frames
    } else {
        // A segment's first batch whole (to tell a segment by), then the
        // rest read a batch at a time; anything else is read whole.
        let mut raw = Vec::new();
        if let Err(e) = first_batch(&mut input, &mut raw) {
            kwire::stderr_line!("kwire: {}: {e}", sanitize(&args.input.file));
            return exit::FAILURE;
        }
        if is_segment(&args.input, &raw) {
            let ctx = segment_context(&opts, log_dir(&args.input.file));
            let rest = std::io::Cursor::new(raw).chain(input);
            let base_offset = base_offset_of_log_name(&args.input.file);
            let checked = check_segment(cat, &ctx, base_offset, rest, &mut |found| {
                printer.take(found)
            });
            let checked = match checked {
                Ok(c) => c,
                Err(e) => return broken_output(e),
            };
            // A batch cut short or too large to read: damage, as `records` says it.
            damaged = checked.unread;
            unit = ("batch", "batches");
            checked.batches
        } else {
            if let Err(e) = input.read_to_end(&mut raw) {
                kwire::stderr_line!("kwire: {}: {e}", sanitize(&args.input.file));
                return exit::FAILURE;
            }
            // Only the frames' findings are read: a large array's elements and
            // a large records field's batches are walked for theirs a piece
            // at a time, never held as nodes.
            let opts = kwire::decode::DecodeOptions {
                defer_elements_over: Some(kwire::decode::frame::DEFER_ELEMENTS_OVER),
                defer_records_over: Some(kwire::decode::frame::DEFER_RECORDS_OVER),
                defer_record_arrays: true,
                ..opts
            };
            // Each frame's left records are walked as soon as it is decoded
            // (or read again as a response), so that what they decompress is
            // spent in the order the whole trees spend it.
            let mut walk =
                |frame: &mut kwire::decode::Frame| check_left_records(cat, frame, &opts.budget);
            let mut frames = match frames_from(cat, &args.input, raw, (&opts, &mut walk)) {
                Ok(f) => f,
                Err(status) => return status,
            };
            super::frame_args::reread_as_responses(
                cat,
                release,
                &args.input,
                &mut frames,
                (&opts, &mut walk),
            );
            check_frames(&frames, &mut found);
            frames.len()
        }
    };
    finish(&mut printer, args, &mut found, (checked, unit), damaged)
}

/// Where the findings go: grouped and fitted to the terminal, or JSON lines.
fn printer<'c>(
    cat: &'c Catalogue,
    args: &CheckArgs,
) -> FindingsWriter<'c, kwire::text::width::FitLines<std::io::StdoutLock<'static>>> {
    let columns = match args.format {
        CheckFormat::Text => super::width::stdout(),
        CheckFormat::Json => None,
    };
    let layout = match args.format {
        CheckFormat::Text => Layout::Groups {
            width: columns.unwrap_or(usize::MAX),
        },
        CheckFormat::Json => Layout::Json,
    };
    let out = kwire::text::width::FitLines::new(std::io::stdout().lock(), columns);
    FindingsWriter::new(cat, out, layout, args.min_severity.severity())
}

/// The last findings and the groups written, then the summary of
/// `checked` of what `unit` names; the exit status: 3 for an error, else
/// 2 when the input was `damaged`, else 0.
fn finish(
    printer: &mut FindingsWriter<'_, impl Write>,
    args: &CheckArgs,
    found: &mut Vec<Finding>,
    (checked, unit): (usize, (&str, &str)),
    damaged: bool,
) -> i32 {
    if let Err(e) = printer.take(found).and_then(|_| printer.write_groups()) {
        return broken_output(e);
    }
    let tally = printer.tally();
    let mut line = findings::summary_of(checked, unit, &tally);
    if args.filter.is_some() {
        // The counts and the exit status are the selected findings'.
        line.push_str(" about the frames the filter selects");
    }
    match args.format {
        // JSON lines stay findings only; the summary goes where people read it.
        CheckFormat::Json => kwire::stderr_line!("kwire: {line}"),
        CheckFormat::Text => {
            if writeln!(printer.out, "{line}").is_err() {
                return exit::OK;
            }
        }
    }
    if tally.errors > 0 {
        FOUND_ERRORS
    } else if damaged {
        exit::MALFORMED
    } else {
        exit::OK
    }
}

/// A partition's directory of log segments (`kwire check orders-0/`): each
/// segment in offset order, and each against the one before.
fn run_log_dir(cat: &Catalogue, args: &CheckArgs, opts: &DecodeOptions) -> i32 {
    let dir = std::path::Path::new(&args.input.file);
    if args.filter.is_some() {
        kwire::stderr_line!(
            "kwire: --filter selects among a capture's frames; {} is a directory",
            sanitize(&args.input.file)
        );
        return exit::MALFORMED;
    }
    let ctx = segment_context(opts, Some(dir));
    let mut printer = printer(cat, args);
    let checked = check_log_dir(cat, &ctx, dir, &mut |found| printer.take(found));
    match checked {
        Ok(Some(c)) => {
            let damaged = c.unread;
            finish(
                &mut printer,
                args,
                &mut Vec::new(),
                (c.batches, ("batch", "batches")),
                damaged,
            )
        }
        Ok(None) => {
            kwire::stderr_line!(
                "kwire: {}: no log segment in it (a file named after its base offset, 00000000000000000000.log)",
                sanitize(&args.input.file)
            );
            exit::FAILURE
        }
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {e}", sanitize(&args.input.file));
            exit::FAILURE
        }
    }
}

/// Reads into `raw` what tells a segment from frames: the first 12 bytes,
/// then the bytes their batchLength declares when it is one a segment's
/// batch can have (at most `MAX_BATCH`).
fn first_batch(input: &mut impl Read, raw: &mut Vec<u8>) -> std::io::Result<()> {
    input.take(12).read_to_end(raw)?;
    let declared = raw
        .get(8..12)
        .map_or(0, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    if let Ok(n) = usize::try_from(declared) {
        if n <= MAX_BATCH {
            input.take(n as u64).read_to_end(raw)?;
        }
    }
    Ok(())
}

fn broken_output(e: std::io::Error) -> i32 {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return exit::OK;
    }
    kwire::stderr_line!("kwire: {e}");
    exit::FAILURE
}

/// Findings of live traffic (`proxy --check`), each printed the moment it
/// is decided, one line each (text) or one JSON object each; the rules that
/// judge a whole conversation speak when the stream ends.
pub fn run_on_stream(
    cat: &Catalogue,
    release: Option<&str>,
    input: Box<dyn Read + Send>,
    format: CheckFormat,
    selection: &Filter,
) -> i32 {
    let opts = DecodeOptions {
        release: release.map(str::to_string),
        ..Default::default()
    };
    // With a filter, the findings about the frames it selects, as `check --filter` keeps them.
    let frame_filter = (!selection.is_empty()).then(|| FrameFilter::of(selection));
    // A finding a line, as it happens: never cut (the message is the point,
    // and scripts read these lines); the grouped view wraps to the width.
    let out = kwire::text::width::FitLines::new(std::io::stdout().lock(), None);
    let layout = match format {
        CheckFormat::Text => Layout::Lines,
        CheckFormat::Json => Layout::Json,
    };
    let mut printer = FindingsWriter::new(cat, out, layout, Severity::Note);
    let mut write = |found: &mut Vec<Finding>| -> std::io::Result<()> {
        printer.take(found)?;
        printer.out.flush()
    };
    let options = check::Options {
        decode: opts,
        capture: CaptureOptions::default(),
        read_ahead: false,
        filter: frame_filter.as_ref(),
    };
    let checked = match check::check_capture(cat, release, input, options, &mut write) {
        Ok(c) => c,
        Err(e) => return broken_output(e),
    };
    if let Err(e) = checked.read {
        kwire::stderr_line!("kwire: {}", sanitize(&e));
        return exit::FAILURE;
    }
    let tally = printer.tally();
    kwire::stderr_line!("kwire: {}", findings::summary(checked.frames, &tally));
    if tally.errors > 0 {
        FOUND_ERRORS
    } else {
        exit::OK
    }
}
