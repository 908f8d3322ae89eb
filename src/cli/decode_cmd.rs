//! `kwire decode`: frames from hex or binary, shown as tree, grid or JSON; a
//! capture goes to `capture`, a log segment to `records`.
//! Its input options and reading are [`super::frame_args`], shared with `kwire tui`.

use super::exit;
use super::frame_args::{
    decode_options, frames_from, is_segment, report, segment_refused, Format, InputArgs, OutputArgs,
};
use super::frames_out::{explain_with, style, write_frames, write_frames_drawing, write_payload};
use clap::Args;
use kwire::input::{read_source, to_bytes, InputKind};
use kwire::schema::Catalogue;
use std::io::IsTerminal;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire decode samples/produce-v9-request.hex\n  kwire decode --format grid samples/join-group-v9-request.hex\n  kwire decode --json samples/produce-v9-request.hex | kwire encode\n  kwire decode --response --api Fetch --version 12 samples/fetch-v12-response.hex\n  kwire decode --explain samples/join-group-v9-request.hex"
)]
pub struct DecodeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// For a capture: decrypt TLS connections with this key log (see `kwire capture`).
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Under every node of the tree, how its bytes make its value.
    #[arg(long, conflicts_with = "json")]
    pub explain: bool,
    /// Decode the input as this record type with its log prefix (e.g. OffsetCommitValue,
    /// ShareSnapshotValue, TopicRecord) instead of as request/response frames.
    #[arg(long = "type", value_name = "RECORD_TYPE", conflicts_with = "tui")]
    pub record_type: Option<String>,
    /// Open the terminal explorer instead of printing (same as `kwire tui`).
    #[arg(long, conflicts_with_all = ["format", "json", "full_docs", "explain"])]
    pub tui: bool,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &DecodeArgs) -> i32 {
    if args.tui {
        return super::tui_cmd::run(cat, release, &args.input);
    }
    if args.input.file == "-" && std::io::stdin().is_terminal() {
        // Waiting on a terminal without a word looks like a hang.
        kwire::stderr_line!("kwire: reading frames (hex text or binary) from standard input; end with Ctrl-D, or name a file: kwire decode FILE");
    }
    if let Some(name) = &args.record_type {
        let raw = match read_source(&args.input.file) {
            Ok(r) => r,
            Err(e) => return report(e),
        };
        let kind = if args.input.binary {
            InputKind::Binary
        } else if args.input.hex {
            InputKind::Hex
        } else {
            InputKind::Auto
        };
        return match to_bytes(raw, kind) {
            Ok(b) => write_payload(
                cat,
                name,
                &b,
                args.input.version,
                Some(args.output.format()),
                args.output.full_docs,
            ),
            Err(e) => report(e),
        };
    }
    let mut opts = match decode_options(cat, release, &args.input) {
        Ok(o) => o,
        Err(status) => return status,
    };
    // The JSON contract needs values only: no annotations, records left as hex.
    opts.values_only = args.output.format() == Format::Json;
    // The text tree (explained or not), the tree JSON and the grid draw large
    // records fields a batch at a time, and large arrays an element at a time.
    let drawn = args.output.format() != Format::Json;
    if drawn {
        opts.defer_records_over = Some(kwire::decode::frame::DEFER_RECORDS_OVER);
        opts.defer_elements_over = Some(kwire::decode::frame::DEFER_ELEMENTS_OVER);
        opts.defer_record_arrays = true;
    }
    let raw = match read_source(&args.input.file) {
        Ok(r) => r,
        Err(e) => return report(e),
    };
    if kwire::capture::pcap::sniff(&raw).is_some() {
        // A capture: hand it to `kwire capture` with this command's output options.
        let cap = super::capture_cmd::CaptureArgs {
            output: OutputArgs {
                format: args.output.format(),
                json: false,
                full_docs: args.output.full_docs,
            },
            tls: args.tls.clone(),
            ..super::capture_cmd::CaptureArgs::of_file(&args.input.file, args.input.budget.clone())
        };
        return super::capture_cmd::run_on(cat, release, &cap, opts.api_key, raw);
    }
    if is_segment(&args.input, &raw) {
        return segment(cat, args, raw);
    }
    let mut frames = match frames_from(cat, &args.input, raw, (&opts, &mut |_| {})) {
        Ok(f) => f,
        Err(status) => return status,
    };
    super::frame_args::reread_as_responses(
        cat,
        release,
        &args.input,
        &mut frames,
        (&opts, &mut |_| {}),
    );
    let format = args.output.format();
    let explain = match explain_with(cat, release, args.explain, format == Format::Tree) {
        Ok(e) => e,
        Err(status) => return status,
    };
    let mut out = std::io::stdout().lock();
    let _ = match drawn {
        // Drawn as it goes: large records fields were left for drawing.
        true => write_frames_drawing(
            &mut out,
            &mut frames,
            format,
            (style(), args.output.full_docs, explain),
            (cat, &opts.budget),
        ),
        false => write_frames(
            &mut out,
            &frames,
            format,
            (style(), args.output.full_docs),
            explain,
        ),
    };
    let mut status = exit::OK;
    for f in &frames {
        if let Some(e) = &f.error {
            kwire::stderr_line!("kwire: frame at input offset {}: {e}", f.input_offset);
            status = exit::MALFORMED;
        }
        // Damaged records do not stop the frame, but the input is not what it claims.
        for e in &f.record_damage {
            kwire::stderr_line!(
                "kwire: frame at input offset {}: record data: {}",
                f.input_offset,
                kwire::text::escape::sanitize(&e.to_string())
            );
            status = exit::MALFORMED;
        }
    }
    status
}

/// A log segment or file of record batches (it starts with a whole batch
/// whose CRC-32C holds): shown as `kwire records FILE` shows it, a tree or
/// JSON; the other formats are for frames.
fn segment(cat: &Catalogue, args: &DecodeArgs, raw: Vec<u8>) -> i32 {
    use super::records_cmd::{run_segment, RecordsArgs, RecordsFormat};
    if args.explain {
        return segment_refused(&args.input.file, "--explain is for frames");
    }
    let format = match args.output.format() {
        Format::Tree => RecordsFormat::Tree,
        Format::Json => RecordsFormat::Json,
        other => {
            // The option's own spelling (`grid`, `tree-json`).
            let name = clap::ValueEnum::to_possible_value(&other)
                .map(|v| v.get_name().to_string())
                .unwrap_or_default();
            return segment_refused(&args.input.file, &format!("--format {name} is for frames"));
        }
    };
    let records = RecordsArgs {
        file: args.input.file.clone(),
        hex: false,
        topic: args.input.topic.clone(),
        partition: None,
        grep: None,
        filter: None,
        port: None,
        format: Some(format),
        budget: args.input.budget.clone(),
        tls: Default::default(),
    };
    run_segment(cat, &records, Box::new(std::io::Cursor::new(raw)))
}
